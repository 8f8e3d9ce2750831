"""tether.dialects.tensor: EmptyOp(sizes, element_type) with mixed static/dynamic sizes, and the
`generate` region decorator; on MLIR 22 EmptyOp takes an `encoding` and `empty(sizes,
element_type, *, encoding=None)` builds it."""

from typing import Optional, Sequence, Union

from .._mlir_version import MLIR_VERSION as _MLIR_VERSION

from ._tensor_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._tensor_ops_gen import _Dialect
from ._tensor_ops_gen import EmptyOp as _GeneratedEmptyOp
from ._tensor_ops_gen import GenerateOp, YieldOp
from ._ods_common import _cext as _ods_cext
from ._ods_common import get_op_result_or_op_results as _get_op_result_or_op_results
from ..extras.meta import region_op
from ..ir import Attribute, RankedTensorType, ShapedType, Type, Value


def _sizes(sizes):
    """(static sizes with the dynamic marker where a Value is, the dynamic sizes)."""
    dynamic, static = [], []
    for s in sizes:
        if isinstance(s, int):
            static.append(s)
        else:
            static.append(ShapedType.get_dynamic_size())
            dynamic.append(s)
    return static, dynamic


@_ods_cext.register_operation(_Dialect, replace=True)
class EmptyOp(_GeneratedEmptyOp):
    """`tensor.empty` of the given sizes (ints are static, Values dynamic)."""
    __slots__ = ()

    if _MLIR_VERSION >= 22:
        def __init__(self, sizes: Sequence[Union[int, Value]], element_type: Type, *,
                     encoding: Optional[Attribute] = None, loc=None, ip=None):
            static, dynamic = _sizes(sizes)
            super().__init__(RankedTensorType.get(static, element_type, encoding), dynamic,
                             loc=loc, ip=ip)
    else:
        def __init__(self, sizes: Sequence[Union[int, Value]], element_type: Type, *, loc=None,
                     ip=None):
            static, dynamic = _sizes(sizes)
            super().__init__(RankedTensorType.get(static, element_type), dynamic, loc=loc, ip=ip)


if _MLIR_VERSION >= 22:
    def empty(sizes: Sequence[Union[int, Value]], element_type: Type, *,
              encoding: Optional[Attribute] = None, loc=None, ip=None) -> Value:
        """The result of a `tensor.empty` (EmptyOp)."""
        return _get_op_result_or_op_results(
            EmptyOp(sizes=sizes, element_type=element_type, encoding=encoding, loc=loc, ip=ip))


generate = region_op(lambda result, dynamic_extents: GenerateOp(result, dynamic_extents),
                     terminator=lambda args: YieldOp(args[0]))
