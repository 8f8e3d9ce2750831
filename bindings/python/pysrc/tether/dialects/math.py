"""tether.dialects.math: the `math` dialect's operations (generated from MLIR's ODS)."""

from ._math_ops_gen import *  # noqa: F401,F403
from ._math_ops_gen import _Dialect  # noqa: F401
