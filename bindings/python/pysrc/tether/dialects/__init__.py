"""tether.dialects: one module per MLIR dialect, with upstream `mlir.dialects` names.

The op classes are generated from the installed MLIR's ODS at build time
(bindings/python/dialects.bzl), with the generator of that MLIR version; a module is imported the
first time an operation of its namespace is seen (docs/python.md). The modules of dialects whose
Python bindings are newer than the MLIR tether is built for raise ImportError saying so.
"""

from .._mlir_version import MLIR_VERSION as _MLIR_VERSION


def _require_mlir(version, module):
    """Raises ImportError (naming module) unless tether is built for MLIR `version` or newer: the
    first statement of a dialect module upstream added in that version."""
    if _MLIR_VERSION < version:
        raise ImportError(
            f"{module} needs MLIR {version} or newer: this tether is built for MLIR "
            f"{_MLIR_VERSION}, whose Python bindings have no such dialect module",
            name=module)
