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

``install(prefix)`` does the same for a downstream package prefix (``MLIR_PYTHON_PACKAGE_PREFIX``
of an extension: ``mlir_standalone``, ``jaxlib.mlir``): ``prefix.<name>`` is ``tether.<name>``.
A prefix package's ``__init__.py`` calls it with its own name (docs/linking.md).
"""

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install", "uninstall", "installed"]

_PREFIX = "mlir"
_TARGET = "tether"
_prefixes = []  # installed prefixes, longest first


def _target_name(fullname):
    for prefix in _prefixes:
        if fullname == prefix:
            # A prefix that is a package of its own (its __init__ installed it) stays itself.
            return None if prefix in _own_packages else _TARGET
        if fullname.startswith(prefix + "."):
            return _TARGET + fullname[len(prefix):]
    return None


_own_packages = set()


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


def install(prefix=_PREFIX):
    """Makes ``import <prefix>...`` resolve to tether (prefix ``mlir`` by default). Idempotent."""
    if not isinstance(prefix, str) or not prefix or not all(p.isidentifier() for p in prefix.split(".")):
        raise ValueError(f"tether.alias.install: a package prefix such as 'mlir', not {prefix!r}")
    if prefix == _TARGET or prefix.startswith(_TARGET + "."):
        raise ValueError(f"tether.alias.install: {prefix!r} is tether's own name")
    if prefix in sys.modules and getattr(sys.modules[prefix], "__path__", None) is not None \
            and sys.modules[prefix] is not sys.modules.get(_TARGET):
        _own_packages.add(prefix)
    if prefix != _PREFIX:
        # Extensions compiled for this prefix read capsules named after it
        # ("mlir_standalone.ir.Context._CAPIPtr"): tether's are named so from now on (one capsule
        # prefix per process; capsules of every installed prefix are read).
        from . import _tether

        _tether._capsule_prefix(prefix)
    if prefix not in _prefixes:
        _prefixes.append(prefix)
        _prefixes.sort(key=len, reverse=True)
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall():
    """Removes the import hook; modules already imported under ``mlir`` stay in sys.modules."""
    while _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _prefixes.clear()
    _own_packages.clear()


def installed(prefix=_PREFIX):
    return _finder in sys.meta_path and prefix in _prefixes
