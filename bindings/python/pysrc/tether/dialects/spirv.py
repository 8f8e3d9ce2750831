"""tether.dialects.spirv: the `spirv` dialect's operations (generated from MLIR's ODS)."""

from ._spirv_ops_gen import *  # noqa: F401,F403
from ._spirv_ops_gen import _Dialect  # noqa: F401
