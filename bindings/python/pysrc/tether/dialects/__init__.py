"""tether.dialects: one module per MLIR dialect, with upstream `mlir.dialects` names.

The op classes are generated from MLIR 19's ODS at build time (bindings/python/dialects.bzl);
a module is imported the first time an operation of its namespace is seen (docs/python.md).
"""
