"""tether.dialects.transform.tensor: the `tensor_transform` extension's transform operations (generated from MLIR's ODS)."""

from .._tensor_transform_ops_gen import *  # noqa: F401,F403
from ...ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)

from .._tensor_transform_ops_gen import _Dialect
from . import AnyOpType, OperationType, _with_default_result_types
from .. import _tensor_transform_ops_gen as _gen

MakeLoopIndependentOp = _with_default_result_types(_gen.MakeLoopIndependentOp, _Dialect, AnyOpType.get)
