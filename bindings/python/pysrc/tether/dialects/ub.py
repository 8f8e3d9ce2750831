"""tether.dialects.ub: the `ub` dialect's operations (generated from MLIR's ODS; MLIR 22)."""

from . import _require_mlir

_require_mlir(22, __name__)

from ._ub_ops_gen import *  # noqa: F401,F403,E402
from ._ub_ops_gen import _Dialect  # noqa: F401,E402
