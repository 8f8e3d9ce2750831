"""tether._mlir_libs: where upstream's package keeps its native modules, and extensions put theirs.

An extension built against upstream's adaptor headers for the package prefix ``mlir.`` installs its
module here (``mlir/_mlir_libs/_myExtension.so`` in upstream's layout; ``tether/_mlir_libs/`` with
tether: docs/linking.md, "Bringing your extension"); its Python files import it as
``from .._mlir_libs import _myExtension``. ``get_dialect_registry`` is upstream's.
"""

from ..ir import get_dialect_registry

__all__ = ["get_dialect_registry"]
