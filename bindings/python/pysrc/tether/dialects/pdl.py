"""tether.dialects.pdl: the `pdl` dialect's operations (generated from MLIR 19's ODS)."""

from ._pdl_ops_gen import *  # noqa: F401,F403
from ._pdl_ops_gen import _Dialect  # noqa: F401
from tether._tether import _pdl as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith('_')})
