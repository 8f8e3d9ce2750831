"""tether.dialects.pdl: the pdl dialect's operations (generated from MLIR's ODS), its types
(AttributeType, OperationType, RangeType, TypeType, ValueType), and builders with upstream's
signatures: each op's result type is implied (AttributeOp, OperandOp, OperandsOp, OperationOp,
ResultOp, TypeOp, TypesOp), PatternOp/RewriteOp make their body, `pattern`/`rewrite` region
builders, `op_t()`."""

from typing import Mapping, NewType, Optional, Sequence, Union

from ._pdl_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._pdl_ops_gen import _Dialect
from . import _pdl_ops_gen as _gen
from ._ods_common import _cext as _ods_cext
from ._ods_common import get_op_result_or_value as _value
from ._ods_common import get_op_results_or_values as _values
from ..extras.meta import region_op
from ..ir import ArrayAttr, Attribute, IntegerAttr, Operation, OpView, StringAttr, Type, Value
from tether._tether import _pdl as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith("_")})
AttributeType, OperationType, RangeType = _types.AttributeType, _types.OperationType, \
    _types.RangeType
TypeType, ValueType = _types.TypeType, _types.ValueType

_Handle = Union[OpView, Operation, Value]


def _opt(v):
    return None if v is None else _value(v)


@_ods_cext.register_operation(_Dialect, replace=True)
class AttributeOp(_gen.AttributeOp):
    __slots__ = ()

    def __init__(self, valueType: Optional[_Handle] = None, value: Optional[Attribute] = None, *,
                 loc=None, ip=None):
        super().__init__(AttributeType.get(), valueType=_opt(valueType), value=value, loc=loc,
                         ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class OperandOp(_gen.OperandOp):
    __slots__ = ()

    def __init__(self, type: Optional[_Handle] = None, *, loc=None, ip=None):
        super().__init__(ValueType.get(), valueType=_opt(type), loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class OperandsOp(_gen.OperandsOp):
    __slots__ = ()

    def __init__(self, types: Optional[_Handle] = None, *, loc=None, ip=None):
        super().__init__(RangeType.get(ValueType.get()), valueType=_opt(types), loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class OperationOp(_gen.OperationOp):
    __slots__ = ()

    def __init__(self, name: Optional[Union[str, StringAttr]] = None,
                 args: Optional[Sequence[_Handle]] = None,
                 attributes: Optional[Mapping[str, _Handle]] = None,
                 types: Optional[Sequence[_Handle]] = None, *, loc=None, ip=None):
        attributes = attributes or {}
        names = ArrayAttr.get([StringAttr.get(k) for k in attributes])
        values = [_value(v) for v in attributes.values()]
        super().__init__(OperationType.get(), _values(args or []), values, names,
                         _values(types or []), opName=name, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class PatternOp(_gen.PatternOp):
    __slots__ = ()

    def __init__(self, benefit: Union[IntegerAttr, int],
                 name: Optional[Union[StringAttr, str]] = None, *, loc=None, ip=None):
        super().__init__(benefit, sym_name=name, loc=loc, ip=ip)
        self.regions[0].blocks.append()

    @property
    def body(self):
        return self.regions[0].blocks[0]


pattern = region_op(_gen.PatternOp)


@_ods_cext.register_operation(_Dialect, replace=True)
class ReplaceOp(_gen.ReplaceOp):
    __slots__ = ()

    def __init__(self, op: _Handle, *, with_op: Optional[_Handle] = None,
                 with_values: Optional[Sequence[_Handle]] = None, loc=None, ip=None):
        super().__init__(_value(op), _values(with_values or []), replOperation=_opt(with_op),
                         loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class ResultOp(_gen.ResultOp):
    __slots__ = ()

    def __init__(self, parent: _Handle, index: Union[IntegerAttr, int], *, loc=None, ip=None):
        super().__init__(ValueType.get(), _value(parent), index, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class RewriteOp(_gen.RewriteOp):
    __slots__ = ()

    def __init__(self, root: Optional[_Handle] = None,
                 name: Optional[Union[StringAttr, str]] = None,
                 args: Optional[Sequence[_Handle]] = None, *, loc=None, ip=None):
        super().__init__(_values(args or []), root=_opt(root), name=name, loc=loc, ip=ip)

    def add_body(self):
        """Adds the body block; returns it."""
        self.regions[0].blocks.append()
        return self.body

    @property
    def body(self):
        return self.regions[0].blocks[0]


rewrite = region_op(RewriteOp)


@_ods_cext.register_operation(_Dialect, replace=True)
class TypeOp(_gen.TypeOp):
    __slots__ = ()

    def __init__(self, constantType=None, *, loc=None, ip=None):
        super().__init__(TypeType.get(), constantType=constantType, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class TypesOp(_gen.TypesOp):
    __slots__ = ()

    def __init__(self, constantTypes=None, *, loc=None, ip=None):
        super().__init__(RangeType.get(TypeType.get()), constantTypes=list(constantTypes or []),
                         loc=loc, ip=ip)


OperationTypeT = NewType("OperationType", OperationType)


def op_t() -> OperationTypeT:
    return OperationTypeT(OperationType.get())
