"""tether.runtime: ctypes views of MLIR's memref descriptors and numpy conversions (upstream's
`mlir.runtime`), to pass arrays to and from code run by tether.execution_engine. Needs numpy."""

from .np_to_memref import *  # noqa: F401,F403
