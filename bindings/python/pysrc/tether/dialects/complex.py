"""tether.dialects.complex: the `complex` dialect's operations (generated from MLIR's ODS)."""

from ._complex_ops_gen import *  # noqa: F401,F403
from ._complex_ops_gen import _Dialect  # noqa: F401
