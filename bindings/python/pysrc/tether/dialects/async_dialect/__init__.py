"""tether.dialects.async_dialect: the `async` dialect's operations (generated from MLIR's ODS)."""

from .._async_ops_gen import *  # noqa: F401,F403
from .._async_ops_gen import _Dialect  # noqa: F401
