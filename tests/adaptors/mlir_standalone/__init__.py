"""mlir_standalone: the package prefix of upstream's standalone example, on tether.

The example's extension is compiled with ``MLIR_PYTHON_PACKAGE_PREFIX=mlir_standalone.``: it
imports ``mlir_standalone.ir`` and hands its objects to it. This one file makes every
``mlir_standalone.X`` tether's own ``tether.X`` (the same module objects), so the extension, its
Python files (in ``tether/dialects`` and ``tether/_mlir_libs``) and tether share one ``ir``
(docs/linking.md, "Bringing your extension").
"""

import tether.alias

tether.alias.install(__name__)
