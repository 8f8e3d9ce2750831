"""tether.dialects.shard: the `shard` dialect's operations and enums (generated from MLIR's ODS;
MLIR 22, where it replaced `mesh`)."""

from . import _require_mlir

_require_mlir(22, __name__)

from ._shard_ops_gen import *  # noqa: F401,F403,E402
from ._shard_ops_gen import _Dialect  # noqa: F401,E402
from ._shard_enum_gen import *  # noqa: F401,F403,E402
