"""tether.dialects.transform.gpu: the `gpu_transform` extension's transform operations (generated from MLIR 19's ODS)."""

from .._gpu_transform_ops_gen import *  # noqa: F401,F403
