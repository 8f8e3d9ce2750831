"""tether.dialects.shape: the `shape` dialect's operations (generated from MLIR's ODS)."""

from ._shape_ops_gen import *  # noqa: F401,F403
from ._shape_ops_gen import _Dialect  # noqa: F401
