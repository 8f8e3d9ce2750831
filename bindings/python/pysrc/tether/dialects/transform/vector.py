"""tether.dialects.transform.vector: the `vector_transform` extension's transform operations (generated from MLIR's ODS)."""

from .._vector_transform_ops_gen import *  # noqa: F401,F403
from .._vector_transform_enum_gen import *  # noqa: F401,F403
