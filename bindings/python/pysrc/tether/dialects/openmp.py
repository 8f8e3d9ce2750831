"""tether.dialects.openmp: the `omp` dialect's operations (generated from MLIR's ODS)."""

from ._omp_ops_gen import *  # noqa: F401,F403
from ._omp_ops_gen import _Dialect  # noqa: F401
