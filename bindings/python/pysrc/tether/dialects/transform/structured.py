"""tether.dialects.transform.structured: the `structured_transform` extension's transform operations (generated from MLIR 19's ODS)."""

from .._structured_transform_ops_gen import *  # noqa: F401,F403
from .._structured_transform_enum_gen import *  # noqa: F401,F403
