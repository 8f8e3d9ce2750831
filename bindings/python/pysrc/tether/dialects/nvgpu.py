"""tether.dialects.nvgpu: the `nvgpu` dialect's operations (generated from MLIR 19's ODS)."""

from ._nvgpu_ops_gen import *  # noqa: F401,F403
from ._nvgpu_ops_gen import _Dialect  # noqa: F401
from ._nvgpu_enum_gen import *  # noqa: F401,F403
from tether._tether import _nvgpu as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith('_')})
