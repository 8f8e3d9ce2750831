"""tether.dialects.smt: the `smt` dialect's operations and enums (generated from MLIR's ODS;
MLIR 22), its types (BoolType, BitVectorType, IntType), `export_smtlib`, and upstream's
conveniences `bool_t()`, `bv_t(width)` and the `@solver` region decorator."""

from . import _require_mlir

_require_mlir(22, __name__)

from ._smt_ops_gen import *  # noqa: F401,F403,E402
from ._smt_ops_gen import _Dialect  # noqa: F401,E402
from ._smt_enum_gen import *  # noqa: F401,F403,E402
from tether import _tether  # noqa: E402
from ..extras.meta import region_op  # noqa: E402

# The types and export_smtlib(module, inline_single_use_values=False, indent_let_body=False) are
# the C extension's (upstream's _mlirDialectsSMT).
_types = getattr(_tether, "_smt", None)
if _types is not None:
    globals().update({k: v for k, v in vars(_types).items() if not k.startswith("_")})


def bool_t():
    """!smt.bool."""
    return BoolType.get()  # noqa: F405


def bv_t(width):
    """!smt.bv<width>."""
    return BitVectorType.get(width)  # noqa: F405


def _solver(inputs=None, results=None, loc=None, ip=None):
    return SolverOp(results or [], inputs or [], loc=loc, ip=ip)  # noqa: F405


solver = region_op(_solver, terminator=YieldOp)  # noqa: F405
