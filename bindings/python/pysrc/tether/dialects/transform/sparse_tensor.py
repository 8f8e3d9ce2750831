"""tether.dialects.transform.sparse_tensor: the `sparse_tensor_transform` extension's transform operations (generated from MLIR's ODS)."""

from .._sparse_tensor_transform_ops_gen import *  # noqa: F401,F403
