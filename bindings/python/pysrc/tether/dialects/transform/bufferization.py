"""tether.dialects.transform.bufferization: the `bufferization_transform` extension's transform operations (generated from MLIR 19's ODS)."""

from .._bufferization_transform_ops_gen import *  # noqa: F401,F403
