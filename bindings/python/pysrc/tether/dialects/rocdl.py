"""tether.dialects.rocdl: the `rocdl` dialect's operations (generated from MLIR's ODS)."""

from ._rocdl_ops_gen import *  # noqa: F401,F403
from ._rocdl_ops_gen import _Dialect  # noqa: F401
