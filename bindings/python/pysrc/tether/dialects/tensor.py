"""tether.dialects.tensor: EmptyOp(sizes, element_type) with mixed static/dynamic sizes, and the
`generate` region decorator."""

from typing import Sequence, Union

from ._tensor_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._tensor_ops_gen import _Dialect
from ._tensor_ops_gen import EmptyOp as _GeneratedEmptyOp
from ._tensor_ops_gen import GenerateOp, YieldOp
from ._ods_common import _cext as _ods_cext
from ..extras.meta import region_op
from ..ir import RankedTensorType, ShapedType, Type, Value


@_ods_cext.register_operation(_Dialect, replace=True)
class EmptyOp(_GeneratedEmptyOp):
    """`tensor.empty` of the given sizes (ints are static, Values dynamic)."""
    __slots__ = ()


    def __init__(self, sizes: Sequence[Union[int, Value]], element_type: Type, *, loc=None,
                 ip=None):
        dynamic, static = [], []
        for s in sizes:
            if isinstance(s, int):
                static.append(s)
            else:
                static.append(ShapedType.get_dynamic_size())
                dynamic.append(s)
        super().__init__(RankedTensorType.get(static, element_type), dynamic, loc=loc, ip=ip)


generate = region_op(lambda result, dynamic_extents: GenerateOp(result, dynamic_extents),
                     terminator=lambda args: YieldOp(args[0]))
