"""tether.dialects.arith: generated op classes and enums, and `ConstantOp(type, value)`."""

from array import array as _array
from typing import Union

from .._mlir_version import MLIR_VERSION as _MLIR_VERSION
from ._arith_ops_gen import *  # noqa: F401,F403
from ._arith_ops_gen import _Dialect
from ._arith_ops_gen import ConstantOp as _GeneratedConstantOp
from ._arith_enum_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._ods_common import _cext as _ods_cext
from .._tether import _arith as _arith_cext
from ._ods_common import get_default_loc_context as _get_default_loc_context
from ._ods_common import get_op_result_or_op_results as _get_op_result_or_op_results
from ..ir import (Attribute, BF16Type, DenseFPElementsAttr, DenseIntElementsAttr, F16Type,
                  F32Type, F64Type, FloatAttr, FloatType, IndexType, IntegerAttr, IntegerType,
                  Type)

if _MLIR_VERSION >= 22:
    # Types come back as their class (and the classes have no static isinstance).
    def _is_integer_like_type(t):
        return isinstance(t, (IntegerType, IndexType))

    def _is_float_type(t):
        return isinstance(t, FloatType)
else:
    def _is_integer_like_type(t):
        return IntegerType.isinstance(t) or IndexType.isinstance(t)

    def _is_float_type(t):
        return any(c.isinstance(t) for c in (BF16Type, F16Type, F32Type, F64Type))


@_ods_cext.register_operation(_Dialect, replace=True)
class ConstantOp(_GeneratedConstantOp):
    """`arith.constant`: `ConstantOp(value_attr)` or `ConstantOp(type, int | float | array)`."""
    __slots__ = ()


    def __init__(self, result, value=None, *, loc=None, ip=None):
        if value is None:
            if not isinstance(result, Attribute):
                raise TypeError("ConstantOp(value) expects an Attribute")
            super().__init__(result, loc=loc, ip=ip)
            return
        kind = type(value)
        if kind is int:  # the common cases first, without isinstance
            attr = IntegerAttr.get(result, value)
        elif kind is float:
            attr = FloatAttr.get(result, value)
        elif isinstance(value, bool) or isinstance(value, int):
            attr = IntegerAttr.get(result, int(value))
        elif isinstance(value, float):
            attr = FloatAttr.get(result, value)
        elif isinstance(value, _array):
            width = result.element_type.width
            if 8 * value.itemsize != width:
                raise ValueError(f"Mismatching array element ({8 * value.itemsize}) and type "
                                 f"({width}) width.")
            if value.typecode in ("i", "l", "q"):
                attr = DenseIntElementsAttr.get(value, type=result)
            elif value.typecode in ("f", "d"):
                attr = DenseFPElementsAttr.get(value, type=result)
            else:
                raise ValueError(f'Unsupported typecode: "{value.typecode}".')
        else:
            attr = value
        if loc is None and ip is None and type(self) is ConstantOp:
            # The class's own builder, as super() would find it (no subclass can put another
            # class between them), called without a super object or keyword arguments.
            _GeneratedConstantOp.__init__(self, attr)
        else:
            super().__init__(attr, loc=loc, ip=ip)

    # `ConstantOp(type, int | float)` on this class runs in C (bindings/python/dialects/arith.c);
    # every other call runs the __init__ above.
    __init__ = _arith_cext._constant_init(_GeneratedConstantOp.__init__, __init__, IntegerAttr.get,
                                          FloatAttr.get)

    @classmethod
    def create_index(cls, value: int, *, loc=None, ip=None):
        """An index-typed constant."""
        return cls(IndexType.get(context=_get_default_loc_context(loc)), value, loc=loc, ip=ip)

    @property
    def type(self):
        return self.results[0].type

    @property
    def value(self):
        """The value attribute (MLIR 19: as a plain Attribute; 22: as its class)."""
        if _MLIR_VERSION >= 22:
            return self.operation.attributes["value"]
        return Attribute(self.operation.attributes["value"])

    @property
    def literal_value(self) -> Union[int, float]:
        if _is_integer_like_type(self.type):
            return IntegerAttr(self.value).value
        if _is_float_type(self.type):
            return FloatAttr(self.value).value
        raise ValueError("only integer and float constants have literal values")


def constant(result: Type, value, *, loc=None, ip=None):
    """The result of a new `arith.constant`."""
    return _get_op_result_or_op_results(ConstantOp(result, value, loc=loc, ip=ip))
