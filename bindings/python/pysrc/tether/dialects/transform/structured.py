"""tether.dialects.transform.structured: the Linalg structured transform ops (generated from MLIR
19's ODS) and builders with upstream's signatures for MatchOp (`match_op_names`) and the
single-handle ops (DecomposeOp, GeneralizeOp, ScalarizeOp, InterchangeOp). The other builders
upstream writes by hand (tiling, padding, splitting, vectorizing, fusion) keep their generated
signatures for now (docs/python.md)."""

from typing import Optional, Sequence, Union

from .._structured_transform_ops_gen import *  # noqa: F401,F403
from .._structured_transform_ops_gen import _Dialect
from .._structured_transform_ops_gen import DecomposeOp as _DecomposeOp
from .._structured_transform_ops_gen import GeneralizeOp as _GeneralizeOp
from .._structured_transform_ops_gen import InterchangeOp as _InterchangeOp
from .._structured_transform_ops_gen import MatchOp as _MatchOp
from .._structured_transform_ops_gen import ScalarizeOp as _ScalarizeOp
from .._structured_transform_enum_gen import *  # noqa: F401,F403
from .._ods_common import _cext as _ods_cext
from .._ods_common import get_op_result_or_value as _value
from ...ir import ArrayAttr, Operation, StringAttr, Type, Value
from tether._tether import _transform as _types


def _any_op():
    return _types.AnyOpType.get()


@_ods_cext.register_operation(_Dialect, replace=True)
class MatchOp(_MatchOp):
    __slots__ = ()

    @classmethod
    def match_op_names(cls, result_type_or_target: Union[Type, Operation, Value],
                       target_or_names, names_or_none=None, *, loc=None, ip=None):
        """MatchOp([result_type,] target, names): payload ops named `names` (a str or a list)."""
        if isinstance(result_type_or_target, Type):
            result_type, target, names = result_type_or_target, target_or_names, names_or_none
        else:
            result_type, target, names = _any_op(), result_type_or_target, target_or_names
        if isinstance(names, str):
            names = [names]
        return cls(result_type, _value(target),
                   ops=ArrayAttr.get([StringAttr.get(n) for n in names]), loc=loc, ip=ip)


def _single_handle(generated):
    @_ods_cext.register_operation(_Dialect, replace=True)
    class Op(generated):
        __slots__ = ()

        def __init__(self, target: Union[Operation, Value], *, loc=None, ip=None):
            super().__init__(_any_op(), _value(target), loc=loc, ip=ip)

    Op.__name__ = Op.__qualname__ = generated.__name__
    return Op


DecomposeOp = _single_handle(_DecomposeOp)
GeneralizeOp = _single_handle(_GeneralizeOp)
ScalarizeOp = _single_handle(_ScalarizeOp)


@_ods_cext.register_operation(_Dialect, replace=True)
class InterchangeOp(_InterchangeOp):
    __slots__ = ()

    def __init__(self, target: Union[Operation, Value], *,
                 iterator_interchange: Optional[Sequence[int]] = None, loc=None, ip=None):
        super().__init__(_any_op(), _value(target), iterator_interchange=iterator_interchange,
                         loc=loc, ip=ip)
