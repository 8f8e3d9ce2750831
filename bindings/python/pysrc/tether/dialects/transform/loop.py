"""tether.dialects.transform.loop: the `loop_transform` extension's transform operations (generated from MLIR 19's ODS)."""

from .._loop_transform_ops_gen import *  # noqa: F401,F403
