"""tether.dialects.sparse_tensor: the `sparse_tensor` dialect's operations (generated from MLIR 19's ODS)."""

from ._sparse_tensor_ops_gen import *  # noqa: F401,F403
from ._sparse_tensor_ops_gen import _Dialect  # noqa: F401
from ._sparse_tensor_enum_gen import *  # noqa: F401,F403
