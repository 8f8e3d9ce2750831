"""tether.dialects.tosa: the `tosa` dialect's operations (generated from MLIR's ODS)."""

from ._tosa_ops_gen import *  # noqa: F401,F403
from ._tosa_ops_gen import _Dialect  # noqa: F401
