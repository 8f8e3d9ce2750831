"""tether.dialects.transform.nvgpu: the `nvgpu_transform` extension's transform operations (generated from MLIR's ODS)."""

from .._nvgpu_transform_ops_gen import *  # noqa: F401,F403
