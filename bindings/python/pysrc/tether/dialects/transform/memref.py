"""tether.dialects.transform.memref: the `memref_transform` extension's transform operations (generated from MLIR's ODS)."""

from .._memref_transform_ops_gen import *  # noqa: F401,F403
from ...ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)

from .._memref_transform_ops_gen import _Dialect
from . import AnyOpType, OperationType, _with_default_result_types
from .. import _memref_transform_ops_gen as _gen

MemRefAllocaToGlobalOp = _with_default_result_types(_gen.MemRefAllocaToGlobalOp, _Dialect, AnyOpType.get, AnyOpType.get)
MemRefMultiBufferOp = _with_default_result_types(_gen.MemRefMultiBufferOp, _Dialect, AnyOpType.get)
