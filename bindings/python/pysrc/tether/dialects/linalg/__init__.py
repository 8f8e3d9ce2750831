"""tether.dialects.linalg: the `linalg` dialect's operations (generated from MLIR 19's ODS)."""

from .._linalg_ops_gen import *  # noqa: F401,F403
from .._linalg_ops_gen import _Dialect  # noqa: F401
from .._linalg_enum_gen import *  # noqa: F401,F403
