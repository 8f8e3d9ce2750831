"""tether.dialects.linalg.opdsl: upstream's Python DSL for linalg structured ops (``lang``), the
named ops of the installed MLIR written in it (``ops.core_named_ops``, generated at build time
from MLIR's own definitions), and ``dump_oplib``. See docs/python.md, "linalg and its OpDSL"."""
