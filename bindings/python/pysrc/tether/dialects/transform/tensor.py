"""tether.dialects.transform.tensor: the `tensor_transform` extension's transform operations (generated from MLIR 19's ODS)."""

from .._tensor_transform_ops_gen import *  # noqa: F401,F403
