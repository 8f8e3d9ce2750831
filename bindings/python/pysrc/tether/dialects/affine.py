"""tether.dialects.affine: the `affine` dialect's operations (generated from MLIR 19's ODS)."""

from ._affine_ops_gen import *  # noqa: F401,F403
from ._affine_ops_gen import _Dialect  # noqa: F401
