"""tether: MLIR from Python on a garbage-collected arena of handles."""

from tether import _tether  # noqa: F401
