"""tether.dialects.amdgpu: the `amdgpu` dialect's operations (generated from MLIR's ODS)."""

from ._amdgpu_ops_gen import *  # noqa: F401,F403
from ._amdgpu_ops_gen import _Dialect  # noqa: F401
from ._amdgpu_enum_gen import *  # noqa: F401,F403
