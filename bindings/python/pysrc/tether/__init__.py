"""tether: MLIR from Python on a garbage-collected arena of handles.

    from tether import ir
    with ir.Context():
        module = ir.Module.parse("func.func @f() { return }")

Objects never dangle: any object keeps its ancestors and its context alive, and one whose IR was
erased raises ``ir.InvalidatedError``. See docs/python.md.
"""

import atexit as _atexit

from tether import _tether


def collect():
    """Runs Python's garbage collection, then the arena's, destroying IR nothing reaches."""
    _tether.collect()


# At interpreter exit no MLIR destructor may run on a runtime that is going away.
_atexit.register(_tether._shutdown)

from tether import ir  # noqa: E402,F401
