"""tether.ir: MLIR IR from Python, with upstream ``mlir.ir`` names, on tether's arena.

Every object here stands for MLIR IR through a handle of the arena: it keeps its ancestors and its
context alive, and raises ``InvalidatedError`` once its IR was erased or removed by a pass, instead
of crashing. The classes are defined in C (``tether._tether``); this module adds upstream's
Python-level pieces (MLIRError, the enums, the caster and attribute-builder decorators, dialect
lookup) and re-exports everything. See docs/python.md.
"""

import contextlib as _contextlib
import enum as _enum
import importlib as _importlib
import importlib.util  # noqa: F401  (_importlib.util)

from tether import _tether
from tether._mlir_version import MLIR_VERSION as _MLIR_VERSION
from tether._tether import *  # noqa: F401,F403  (the classes of the C extension)
from tether._tether import InvalidatedError, _OperationBase  # noqa: F401


class MLIRError(Exception):
    """An exception with diagnostic information: ``message`` (str) and ``error_diagnostics``
    (a list of DiagnosticInfo)."""

    def __init__(self, message, error_diagnostics=()):
        self.message = message
        self.error_diagnostics = list(error_diagnostics)
        super().__init__(message, self.error_diagnostics)

    def __str__(self):
        s = self.message
        if self.error_diagnostics:
            s += ":"
        for diag in self.error_diagnostics:
            s += "\nerror: " + str(diag.location)[4:-1] + ": " + diag.message.replace("\n", "\n  ")
            for note in diag.notes:
                s += ("\n note: " + str(note.location)[4:-1] + ": "
                      + note.message.replace("\n", "\n  "))
        return s


class _EnumType(type(_enum.IntEnum)):
    """The enums' metaclass: reading ``WalkResult.ADVANCE`` costs what any class attribute does.
    CPython 3.11's EnumType defines ``__getattr__`` (for members missing from the class dict), and
    that alone sends every class attribute read through a slow hook: 4x a plain read, most of a
    walk callback's cost. Every member of these enums is in its class dict (checked here), so the
    plain read finds them all."""

    def __new__(mcls, name, bases, ns, **kw):
        cls = super().__new__(mcls, name, bases, ns, **kw)
        for member_name, member in cls._member_map_.items():
            if cls.__dict__.get(member_name) is not member:
                raise TypeError(f"{name}.{member_name} is not in the class dict")
        return cls


_tether._plain_class_getattr(_EnumType)


class _Enum(_enum.IntEnum, metaclass=_EnumType):
    """Enums print as upstream's: ``str`` and f-strings give ``Class.NAME``."""

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, spec):
        return format(str(self), spec)


class DiagnosticSeverity(_Enum):
    ERROR = 0
    WARNING = 1
    NOTE = 2
    REMARK = 3


class WalkResult(_Enum):
    ADVANCE = 0
    INTERRUPT = 1
    SKIP = 2


class WalkOrder(_Enum):
    PRE_ORDER = 0
    POST_ORDER = 1


class _GlobalDebugMeta(type):
    @property
    def flag(cls):
        return _tether._debug_flag()

    @flag.setter
    def flag(cls, value):
        _tether._debug_flag(bool(value))


class _GlobalDebug(metaclass=_GlobalDebugMeta):
    """MLIR's global debug flag (``-debug``) and debug types (``-debug-only``)."""

    @staticmethod
    def set_types(types):
        _tether._debug_set_types(types)


_tether._set_hooks(MLIRError, DiagnosticSeverity)


# ---- casters ------------------------------------------------------------------------------------


def register_type_caster(typeid, *, replace=False):
    """Decorator: ``@register_type_caster(MyType.static_typeid)`` registers the function that casts
    types of that TypeID (e.g. to a user class) whenever they come out of MLIR."""

    def decorator(caster):
        return _tether._register_caster(0, typeid, caster, replace)

    return decorator


def register_value_caster(typeid, *, replace=False):
    """Decorator: casts values whose type has this TypeID (e.g. to a user Value subclass)."""

    def decorator(caster):
        return _tether._register_caster(2, typeid, caster, replace)

    return decorator


class _NoTypeID:
    """`static_typeid` of classes that have none (ShapedType, the Type and Attribute bases)."""

    def __get__(self, obj, owner):
        if owner.__module__.partition(".")[0] == "tether":
            raise AttributeError(f"{owner.__name__} has no typeid.")
        # A class made elsewhere (an extension's mlir_type_subclass): upstream's bases have no
        # static_typeid at all.
        if obj is None:
            raise AttributeError(f"type object '{owner.__name__}' has no attribute 'static_typeid'")
        raise AttributeError(f"'{owner.__name__}' object has no attribute 'static_typeid'")


Type.static_typeid = _NoTypeID()
Attribute.static_typeid = _NoTypeID()

if _MLIR_VERSION >= 22:
    class _Signedness(_enum.Enum):
        """IntegerType.Signedness: IntegerType.get(width, signedness) and `.signedness`."""
        SIGNLESS = 0
        SIGNED = 1
        UNSIGNED = 2

    _Signedness.__name__ = "Signedness"
    _Signedness.__qualname__ = "IntegerType.Signedness"
    IntegerType.Signedness = _Signedness
    IntegerType.SIGNLESS, IntegerType.SIGNED, IntegerType.UNSIGNED = _Signedness


# ---- attribute builders (used by generated dialect classes) -------------------------------------


class AttrBuilder:
    """The builders that turn Python values into attributes, by attribute kind (ODS name)."""

    _builders = {}

    @staticmethod
    def contains(attribute_kind):
        return attribute_kind in AttrBuilder._builders

    @staticmethod
    def get(attribute_kind):
        try:
            return AttrBuilder._builders[attribute_kind]
        except KeyError:
            raise KeyError(f"Attribute builder for '{attribute_kind}' is not registered") from None

    @staticmethod
    def insert(attribute_kind, attr_builder, replace=False):
        if not callable(attr_builder):
            raise TypeError("attr_builder must be callable")
        if attribute_kind in AttrBuilder._builders and not replace:
            raise RuntimeError(
                f"Attribute builder for '{attribute_kind}' is already registered with func: "
                f"{AttrBuilder._builders[attribute_kind]}")
        AttrBuilder._builders[attribute_kind] = attr_builder


if _MLIR_VERSION >= 22:
    _tether._set_attr_builders(AttrBuilder._builders)  # op classes' builders convert with them


def register_attribute_builder(kind, replace=False):
    """Decorator: registers a builder ``f(value, context) -> Attribute`` for an attribute kind."""

    def decorator_builder(func):
        AttrBuilder.insert(kind, func, replace=replace)
        return func

    return decorator_builder


# ---- dialects -----------------------------------------------------------------------------------


class Dialect:
    """Base class of dialect classes (``DIALECT_NAMESPACE``); ``Dialect(descriptor)``."""

    def __init__(self, descriptor):
        if not isinstance(descriptor, DialectDescriptor):
            raise TypeError(f"descriptor must be a DialectDescriptor, not {type(descriptor).__name__}")
        self._descriptor = descriptor

    @property
    def descriptor(self):
        return self._descriptor

    def __repr__(self):
        return (f"<Dialect {self._descriptor.namespace} (class "
                f"{type(self).__module__}.{type(self).__name__})>")


_dialect_classes = {}


def _register_dialect_class(cls):
    _dialect_classes[cls.DIALECT_NAMESPACE] = cls
    return cls


class Dialects:
    """``ctx.dialects``: the context's dialects by namespace, as attribute or item."""

    def __init__(self, context):
        self._context = context

    def _create(self, name):
        descriptor = self._context.get_dialect_descriptor(name)
        _load_dialect_module(name)
        cls = _dialect_classes.get(name, Dialect)
        return cls(descriptor)

    def __getitem__(self, name):
        try:
            return self._create(name)
        except ValueError:
            raise IndexError(f"Dialect '{name}' not found") from None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._create(name)
        except ValueError:
            raise AttributeError(f"Dialect '{name}' not found") from None


Context.dialects = property(lambda self: Dialects(self),
                            doc="The context's dialects: ctx.dialects.arith, ctx.dialects['arith'].")
Context.d = property(lambda self: Dialects(self), doc="Alias of Context.dialects.")

_dialect_search_prefixes = ["tether.dialects"]
# Namespaces whose module has another name (upstream's module names).
_namespace_modules = {"omp": "openmp", "async": "async_dialect", "acc": "openacc"}
_tried_dialect_modules = {}


def _load_dialect_module(namespace):
    """Imports tether.dialects.<namespace> (or another search prefix's) once, so its op classes
    register. Returns whether one was found."""
    if namespace in _tried_dialect_modules:
        return _tried_dialect_modules[namespace]
    _tried_dialect_modules[namespace] = False
    module = _namespace_modules.get(namespace, namespace)
    for prefix in _dialect_search_prefixes:
        name = f"{prefix}.{module}"
        try:
            spec = _importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        try:
            _importlib.import_module(name)
        except ImportError as e:
            if e.name != name:
                raise
            continue  # a module this MLIR version has not (tether.dialects._require_mlir)
        _tried_dialect_modules[namespace] = True
        return True
    return False


_tether._set_dialect_loader(_load_dialect_module)


def _register_operation(dialect_class, *, replace=False):
    """Class decorator for generated op classes: registers the class for its OPERATION_NAME, so
    navigation returns it, and makes it an attribute of the dialect class."""

    def decorator(op_class):
        _tether._register_operation_class(op_class.OPERATION_NAME, op_class, replace)
        setattr(dialect_class, op_class.__name__, op_class)
        return op_class

    return decorator


_global_registry = None


def get_dialect_registry():
    """The process's DialectRegistry, appended to every Context created afterwards.

    As upstream's: extensions register their dialects in it
    (``ext.register_dialect(get_dialect_registry())``). Every Context already registers all
    upstream dialects, so it starts empty (docs/python.md)."""
    global _global_registry
    if _global_registry is None:
        reg = DialectRegistry()
        reg._make_global()
        _global_registry = reg
    return _global_registry


if _MLIR_VERSION >= 22:
    import collections.abc as _abc

    _abc.Mapping.register(OpAttributeMap)  # as upstream 22 (for `match`)

    _load_on_create_dialects = []

    def append_load_on_create_dialect(dialect):
        """Adds a dialect to the process's list of dialects to load on creation (upstream 22's;
        tether's contexts load dialects when first needed, Context(load_on_create_dialects=...)
        loads those named)."""
        _load_on_create_dialects.append(dialect)

    def get_load_on_create_dialects():
        """The list append_load_on_create_dialect adds to (the list itself, as upstream's)."""
        return _load_on_create_dialects

    @_contextlib.contextmanager
    def loc_tracebacks(*, max_depth=None):
        """Within it, operations created without a location get one from the Python call stack
        (at most max_depth frames; None: the current limit), as upstream 22's."""
        from tether.dialects._ods_common import _cext  # its globals hold the settings

        settings = _cext.globals
        was_enabled = settings.loc_tracebacks_enabled()
        old_limit = settings.loc_tracebacks_frame_limit()
        try:
            settings.set_loc_tracebacks_frame_limit(old_limit if max_depth is None else max_depth)
            if not was_enabled:
                settings.set_loc_tracebacks_enabled(True)
            yield
        finally:
            if not was_enabled:
                settings.set_loc_tracebacks_enabled(False)
            settings.set_loc_tracebacks_frame_limit(old_limit)

    # As upstream 22: the IR sequences are Sequences, so `match` takes them apart.
    import collections.abc as _abc

    for _seq in (BlockArgumentList, BlockList, BlockSuccessors, BlockPredecessors,  # noqa: F405
                 OperationList, OpOperandList, OpResultList, OpSuccessors,  # noqa: F405
                 RegionSequence):  # noqa: F405
        _abc.Sequence.register(_seq)
    del _seq


from tether._attr_builders import *  # noqa: F401,F403,E402  (the builders register themselves)

__all__ = [n for n in dir(_tether) if not n.startswith("__") and n[0].isupper()] + [
    "MLIRError", "DiagnosticSeverity", "WalkResult", "WalkOrder", "register_type_caster",
    "register_value_caster", "register_attribute_builder", "AttrBuilder", "Dialect", "Dialects",
    "get_dialect_registry",
] + (["loc_tracebacks", "append_load_on_create_dialect", "get_load_on_create_dialects"]
     if _MLIR_VERSION >= 22 else [])
