"""tether.dialects.transform.tune: the transform dialect's tune extension (generated from MLIR's
ODS; MLIR 22), with upstream's KnobOp / knob (options and selection as Python values or
attributes) and AlternativesOp / alternatives (one empty block per alternative)."""

from .. import _require_mlir

_require_mlir(22, __name__)

from collections.abc import Sequence  # noqa: E402

from .._transform_tune_extension_ops_gen import *  # noqa: F401,F403,E402
from .._transform_tune_extension_ops_gen import _Dialect  # noqa: E402
from .. import _transform_tune_extension_ops_gen as _gen  # noqa: E402
from .._ods_common import _cext as _ods_cext  # noqa: E402
from .._ods_common import get_op_result_or_value as _value  # noqa: E402
from ...ir import (ArrayAttr, Attribute, BoolAttr, F64Type, FloatAttr, IntegerAttr,  # noqa: E402
                   IntegerType, Operation, OpView, StringAttr, Value)


def _str_attr(name):
    return StringAttr.get(name) if isinstance(name, str) else name


def _option_attr(value):
    """A knob option as an attribute: bool, int (i64), float (f64), str, or an Attribute."""
    if isinstance(value, bool):
        return BoolAttr.get(value)
    if isinstance(value, int):
        return IntegerAttr.get(IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return FloatAttr.get(F64Type.get(), value)
    if isinstance(value, str):
        return StringAttr.get(value)
    if not isinstance(value, Attribute):
        raise TypeError(f"a knob option is a bool, int, float, str or Attribute, not {value!r}")
    return value


@_ods_cext.register_operation(_Dialect, replace=True)
class KnobOp(_gen.KnobOp):
    """KnobOp(result, name, options, *, selected=None)."""
    __slots__ = ()

    def __init__(self, result, name, options, *, selected=None, loc=None, ip=None):
        if isinstance(options, Sequence) and not isinstance(options, ArrayAttr):
            options = ArrayAttr.get([_option_attr(o) for o in options])
        super().__init__(result, _str_attr(name), options,
                         selected=selected and _option_attr(selected), loc=loc, ip=ip)


def knob(result, name, options, *, selected=None, loc=None, ip=None):
    return KnobOp(result, name, options, selected=selected, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class AlternativesOp(_gen.AlternativesOp):
    """AlternativesOp(results, name, num_alternatives, *, selected_region=None): the selected
    region as an int or IntegerAttr (an attribute) or a handle (a parameter)."""
    __slots__ = ()

    def __init__(self, results, name, num_alternatives, *, selected_region=None, loc=None,
                 ip=None):
        attr = param = None
        if isinstance(selected_region, IntegerAttr):
            attr = selected_region
        elif isinstance(selected_region, int):
            attr = IntegerAttr.get(IntegerType.get_signless(32), selected_region)
        elif isinstance(selected_region, (Value, Operation, OpView)):
            param = _value(selected_region)
        super().__init__(results, _str_attr(name), num_alternatives,
                         selected_region_attr=attr, selected_region_param=param, loc=loc, ip=ip)
        for region in self.regions:
            region.blocks.append()


def alternatives(results, name, num_alternatives, *, selected_region=None, loc=None, ip=None):
    return AlternativesOp(results, name, num_alternatives, selected_region=selected_region,
                          loc=loc, ip=ip)
