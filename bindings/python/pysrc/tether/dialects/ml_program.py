"""tether.dialects.ml_program: the `ml_program` dialect's operations (generated from MLIR 19's ODS)."""

from ._ml_program_ops_gen import *  # noqa: F401,F403
from ._ml_program_ops_gen import _Dialect  # noqa: F401
