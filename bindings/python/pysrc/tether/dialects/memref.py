"""tether.dialects.memref: the generated op classes."""

from ._memref_ops_gen import *  # noqa: F401,F403
from ._memref_ops_gen import _Dialect  # noqa: F401
