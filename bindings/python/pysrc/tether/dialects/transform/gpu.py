"""tether.dialects.transform.gpu: the `gpu_transform` extension's transform operations (generated from MLIR's ODS)."""

from .._gpu_transform_ops_gen import *  # noqa: F401,F403
from ...ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)

from .._gpu_transform_ops_gen import _Dialect
from . import AnyOpType, OperationType, _with_default_result_types
from .. import _gpu_transform_ops_gen as _gen

MapForallToBlocks = _with_default_result_types(_gen.MapForallToBlocks, _Dialect, AnyOpType.get)
MapNestedForallToThreads = _with_default_result_types(_gen.MapNestedForallToThreads, _Dialect, AnyOpType.get)
