"""tether.dialects.cf: the `cf` dialect's operations (generated from MLIR's ODS)."""

from ._cf_ops_gen import *  # noqa: F401,F403
from ._cf_ops_gen import _Dialect  # noqa: F401
