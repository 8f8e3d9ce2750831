"""tether.dialects.transform.pdl: the `transform_pdl_extension` extension's transform operations (generated from MLIR 19's ODS)."""

from .._transform_pdl_extension_ops_gen import *  # noqa: F401,F403
