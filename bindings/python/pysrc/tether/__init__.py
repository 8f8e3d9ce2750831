"""tether: MLIR from Python on a garbage-collected arena of handles.

    from tether import ir
    with ir.Context():
        module = ir.Module.parse("func.func @f() { return }")

Objects never dangle: any object keeps its ancestors and its context alive, and one whose IR was
erased raises ``ir.InvalidatedError``. See docs/python.md.
"""

import atexit as _atexit

from tether import _tether
from tether._mlir_version import MLIR_VERSION as _MLIR_VERSION, TETHER_VERSION as _TETHER_VERSION

# As the wheel's: 0.3.0+mlir22 (the local label says which MLIR the package is built for).
__version__ = "%s+mlir%s" % (_TETHER_VERSION, _MLIR_VERSION)


def collect():
    """Runs Python's garbage collection, then the arena's, destroying IR nothing reaches."""
    _tether.collect()


# At interpreter exit no MLIR destructor may run on a runtime that is going away.
_atexit.register(_tether._shutdown)

from tether import ir  # noqa: E402,F401
