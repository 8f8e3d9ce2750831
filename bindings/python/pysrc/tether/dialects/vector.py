"""tether.dialects.vector: the `vector` dialect's operations (generated from MLIR's ODS)."""

from ._vector_ops_gen import *  # noqa: F401,F403
from ._vector_ops_gen import _Dialect  # noqa: F401
from ._vector_enum_gen import *  # noqa: F401,F403
