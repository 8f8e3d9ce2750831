"""tether.dialects.transform.bufferization: the `bufferization_transform` extension's transform operations (generated from MLIR's ODS)."""

from .._bufferization_transform_ops_gen import *  # noqa: F401,F403
from ...ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)

from .._bufferization_transform_ops_gen import _Dialect
from . import AnyOpType, OperationType, _with_default_result_types
from .. import _bufferization_transform_ops_gen as _gen

EmptyTensorToAllocTensorOp = _with_default_result_types(_gen.EmptyTensorToAllocTensorOp, _Dialect, lambda: OperationType.get("bufferization.alloc_tensor"))
OneShotBufferizeOp = _with_default_result_types(_gen.OneShotBufferizeOp, _Dialect, AnyOpType.get)
