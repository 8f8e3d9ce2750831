"""tether.dialects.amdgpu: the `amdgpu` dialect's operations (generated from MLIR's ODS); on MLIR 22
also the TDM types (TDMBaseType, TDMDescriptorType, TDMGatherBaseType)."""

from ._amdgpu_ops_gen import *  # noqa: F401,F403
from ._amdgpu_ops_gen import _Dialect  # noqa: F401
from ._amdgpu_enum_gen import *  # noqa: F401,F403
from tether import _tether

# The TDM types: the C extension's (upstream 22's _mlirDialectsAMDGPU).
_types = getattr(_tether, "_amdgpu", None)
if _types is not None:
    globals().update({k: v for k, v in vars(_types).items() if not k.startswith("_")})
