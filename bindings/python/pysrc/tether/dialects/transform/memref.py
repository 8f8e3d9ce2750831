"""tether.dialects.transform.memref: the `memref_transform` extension's transform operations (generated from MLIR 19's ODS)."""

from .._memref_transform_ops_gen import *  # noqa: F401,F403
