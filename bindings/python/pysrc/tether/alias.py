"""tether.alias: run programs written for upstream ``mlir`` on tether, unchanged.

    import tether.alias
    tether.alias.install()
    from mlir.ir import *           # tether.ir
    from mlir.dialects import arith  # tether.dialects.arith

``install()`` adds an import hook that resolves ``mlir`` and every ``mlir.<name>`` to
``tether`` and ``tether.<name>``: the very same module objects, so ``mlir.ir.Context is
tether.ir.Context``. No file named ``mlir`` is involved; uninstall() removes the hook (modules
already imported stay imported). ``python3 -m tether.run PROGRAM.py [args]`` does the same for a
whole program. Every lifetime bug in such a program becomes a Python exception instead of a crash.
"""

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install", "uninstall", "installed"]

_PREFIX = "mlir"
_TARGET = "tether"


def _target_name(fullname):
    if fullname == _PREFIX:
        return _TARGET
    if fullname.startswith(_PREFIX + "."):
        return _TARGET + fullname[len(_PREFIX):]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self._target = target

    def create_module(self, spec):
        module = importlib.import_module(self._target)
        self._spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module):
        # The module is tether's own, already executed: nothing to run again. The import system
        # replaced its __spec__ with the alias's: give it back its own.
        if self._spec is not None:
            module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        name = _target_name(fullname)
        if name is None:
            return None
        if importlib.util.find_spec(name) is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, _AliasLoader(name), is_package=True)
        return spec


_finder = _AliasFinder()


def install():
    """Makes ``import mlir...`` resolve to tether. Idempotent."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall():
    """Removes the import hook; modules already imported under ``mlir`` stay in sys.modules."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)


def installed():
    return _finder in sys.meta_path
