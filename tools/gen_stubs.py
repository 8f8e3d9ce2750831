#!/usr/bin/env python3
"""Writes type stubs (.pyi) of tether's Python package, from the built package and an annotation
table.

    PYTHONPATH=bazel-bin/bindings/python python3 tools/gen_stubs.py OUTDIR

OUTDIR gets a package tree to lay over the package's own files: OUTDIR/tether/py.typed,
OUTDIR/tether/ir.pyi, OUTDIR/tether/passmanager.pyi, OUTDIR/tether/dialects/arith.pyi,
OUTDIR/tether/dialects/transform/__init__.pyi, ... (tether.ir, .passmanager, .rewrite,
.execution_engine and the other modules of docs/python-api.md that this build has, every
tether.dialects module, and the packages above them).

The built package is the table of what exists: every module, class, function, method, property
and constant comes from introspecting it. The extension's members (written in C) are typed where
they are defined: the package publishes each one's signature spec, `_tether._signatures`
(`get_signless(width: int, context: Context | None = None) -> IntegerType`, a getter's
`width -> int`; bindings/python/core/sig.c), and the stubs take their parameters, kinds, defaults
and types from it. Members written in Python give their parameters through inspect.signature,
their types through annotations or bindings/python/gen/stub_types.py (docs/python.md, "Type
stubs"); what neither types is `Any`. The generator fails (exit status 1, one line per entry)
when the table names a module, member or parameter that this build does not have, or types a
member the extension types itself, unless the entry is marked for the other MLIR version (`@19`,
`@22`): stale entries cannot accumulate; and when a member of the extension has no signature.

    --types FILE    the annotation table (default: bindings/python/gen/stub_types.py)
    --report        prints to stderr how many members are typed
"""

import argparse
import ast
import builtins
import dis
import enum
import functools
import importlib
import inspect
import os
import pkgutil
import re
import sys
import types
import typing

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The modules of the reference, and the reader of the extension's signatures.
from gen_python_reference import MODULES, OPTIONAL, CSignatures  # noqa: E402

# The private names the reference documents too (upstream's stubs have them).
PRIVATE_NAMES = ("_OperationBase", "_GlobalDebug")
# Dunder methods that are API (protocols); the other dunders (comparisons, repr, ...) are object's.
DUNDERS = ("__init__", "__call__", "__getitem__", "__setitem__", "__delitem__", "__len__",
           "__iter__", "__next__", "__contains__", "__enter__", "__exit__", "__int__", "__float__",
           "__bool__", "__index__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
           "__rmul__", "__mod__", "__rmod__", "__getattr__", "__class_getitem__")
# Private members that are API (capsule interop, as upstream's).
PRIVATE_MEMBERS = ("_CAPIPtr", "_CAPICreate")
# Dialect subtrees that are not dialect modules (the OpDSL implementation: plain Python source).
SKIP_SUBTREES = ("tether.dialects.linalg.opdsl",)
TYPING_NAMES = ("Any", "Callable", "ClassVar", "ContextManager", "Iterable", "Iterator", "Literal",
                "Mapping", "NoReturn", "Sequence", "overload")
SIMPLE_BUILTIN_TYPES = (bool, int, float, str, bytes, list, dict, tuple, set, type(None), object,
                        type, slice)
MARKER = re.compile(r"^(.*)@(\d+)$")


# ---- the annotation table -----------------------------------------------------------------------


def load_table(path):
    ns = {"__file__": path, "__name__": "stub_types"}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    return ns


def current_entries(d, version, where, errors):
    """The entries of one dict of the table that apply to this MLIR version, by unmarked key:
    `key@V` applies only to version V. Returns {key: (value, marked_key)}."""
    out = {}
    for k, v in d.items():
        m = MARKER.match(k)
        if m:
            if int(m.group(2)) != version:
                continue
            key = m.group(1)
        else:
            key = k
        if key in out:
            errors.append(f"{where}: '{k}' and '{out[key][1]}' both apply to MLIR {version}")
            continue
        out[key] = (v, k)
    return out


# ---- introspection helpers ----------------------------------------------------------------------


NO_DEFAULT = object()


class Param:
    __slots__ = ("name", "kind", "default")

    def __init__(self, name, kind, default=NO_DEFAULT):
        self.name, self.kind, self.default = name, kind, default  # default: source text

    def __repr__(self):
        return f"Param({self.name!r}, {self.kind}, {self.default!r})"


P = inspect.Parameter


def params_of_ast(args):
    out = []
    pos = args.posonlyargs + args.args
    defaults = [None] * (len(pos) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(pos, defaults)):
        kind = P.POSITIONAL_ONLY if i < len(args.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        out.append(Param(a.arg, kind, NO_DEFAULT if d is None else ast.unparse(d)))
    if args.vararg:
        out.append(Param(args.vararg.arg, P.VAR_POSITIONAL))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(a.arg, P.KEYWORD_ONLY, NO_DEFAULT if d is None else ast.unparse(d)))
    if args.kwarg:
        out.append(Param(args.kwarg.arg, P.VAR_KEYWORD))
    return out


def parse_param_list(text):
    try:
        fn = ast.parse(f"def _f({text}): pass").body[0]
    except SyntaxError:
        return None
    return params_of_ast(fn.args)


def default_source(value):
    if value is P.empty:
        return NO_DEFAULT
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return repr(value)
    if isinstance(value, tuple) and not value:
        return "()"
    return "..."


def params_of_signature(sig):
    return [Param(p.name, p.kind, default_source(p.default)) for p in sig.parameters.values()]


def defines(cls, name):
    """Whether a class defines a member itself (not by inheritance); a module's function: yes."""
    if cls is None:
        return True
    return name in vars(cls) or (name == "__init__" and "__new__" in vars(cls))


def unwrap(o):
    return o.__func__ if isinstance(o, (staticmethod, classmethod)) else o


def is_c_callable(f):
    return type(f).__name__ in ("method_descriptor", "classmethod_descriptor",
                                "builtin_function_or_method")


ROUTINE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
                 types.ClassMethodDescriptorType, types.WrapperDescriptorType, types.MethodType)


def is_ods_builder(o):
    """An op class's builder run in C (issue 37): tether.ir._OdsBuilder, whose signature
    (__signature__) is the generated function's, or arith.ConstantOp's _ConstantInit, whose
    signature is its Python __init__'s (__wrapped__)."""
    return type(o).__name__ in ("_OdsBuilder", "_ConstantInit")


def is_routine(o):
    return isinstance(o, ROUTINE_TYPES) or is_ods_builder(o)


def instance_attributes(cls):
    """The public attributes the __init__ of a Python class assigns on self (`self.x = ...`),
    in order: the STORE_ATTRs on its first argument."""
    init = vars(cls).get("__init__")
    if not isinstance(init, types.FunctionType) or not init.__code__.co_argcount:
        return []
    if dis.opmap["STORE_ATTR"] not in init.__code__.co_code[::2]:
        return []
    this = init.__code__.co_varnames[0]
    out, prev = [], None
    for ins in dis.get_instructions(init):
        if ins.opname == "STORE_ATTR" and prev is not None and prev.opname == "LOAD_FAST" and \
                prev.argval == this and not ins.argval.startswith("_") and ins.argval not in out:
            out.append(ins.argval)
        prev = ins
    return out


def is_enum_class(c):
    return isinstance(c, type) and issubclass(c, enum.Enum)


# ---- names and homes ----------------------------------------------------------------------------


def public_names(mod):
    """The public names of a module: __all__, or its names without a leading underscore; with the
    private names the reference documents. Modules (except the module's own submodules) and the
    classes and functions of other packages (imports such as `typing.Union`) are not its API."""
    names = list(getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")])
    names += [n for n in PRIVATE_NAMES if n in vars(mod)]
    out = []
    for n in sorted(set(names)):
        if n not in vars(mod):
            continue
        o = vars(mod)[n]
        if isinstance(o, types.ModuleType):
            if o.__name__ == f"{mod.__name__}.{n}":
                out.append(n)
            continue
        if is_foreign(o) and n not in (getattr(mod, "__all__", None) or ()):
            continue
        out.append(n)
    return out


def is_foreign(o):
    """A class or function (or typing construct) of another package than tether."""
    if isinstance(o, type) or is_routine(o):
        m = getattr(o, "__module__", None)
        if m is None and isinstance(o, types.BuiltinFunctionType):
            return False  # a C static method of tether's taken out of its class
        return not (m == "tether" or m.startswith("tether."))
    return getattr(type(o), "__module__", "") == "typing"  # Union, Optional, a typing.TypeVar


class Build:
    def __init__(self):
        from tether._mlir_version import MLIR_VERSION
        self.version = MLIR_VERSION
        self.errors = []
        self.modules = {}      # stubbed module name -> module
        self.snapshots = {}    # module name -> its names right after its import
        self.homes = {}        # id(class or function) -> (module name, name)
        self.counts = {"typed": 0, "partly": 0, "any": 0}
        self.core_counts = {"typed": 0, "partly": 0, "any": 0}
        self.module_counts = {}
        self.csigs = CSignatures()
        self.member_types = {}  # (module, class, member) -> what incompatible() compares
        self.pending = []       # (PendingLine, record, base member, ModuleStub)
        self.used_param_names = set()
        self.used_property_names = set()

    def import_module(self, name):
        if name in sys.modules:
            mod = sys.modules[name]
            self.snapshots.setdefault(name, set(vars(mod)))
            return mod
        mod = importlib.import_module(name)
        self.snapshots.setdefault(name, set(vars(mod)))
        return mod

    def collect_modules(self):
        wanted = ["tether"] + MODULES
        for name in wanted:
            self.modules[name] = self.import_module(name)
        for name in OPTIONAL:
            try:
                self.modules[name] = self.import_module(name)
            except ImportError:
                continue
        self.walk_dialects("tether.dialects")
        for name in list(self.modules):  # the packages above each module
            parts = name.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent not in self.modules:
                    self.modules[parent] = self.import_module(parent)

    def walk_dialects(self, pkgname):
        try:
            pkg = self.import_module(pkgname)
        except ImportError as e:
            if e.name == pkgname:  # a dialect module of a newer MLIR (_require_mlir)
                return
            raise
        self.modules[pkgname] = pkg
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            if info.name.startswith("_"):
                continue
            full = f"{pkgname}.{info.name}"
            if full.startswith(SKIP_SUBTREES):
                continue
            if info.ispkg:
                self.walk_dialects(full)
                continue
            try:
                self.modules[full] = self.import_module(full)
            except ImportError as e:
                if e.name == full:
                    continue
                raise

    def order(self):
        core = ["tether"] + MODULES + OPTIONAL
        return sorted(self.modules, key=lambda m: (m not in core, core.index(m) if m in core
                                                   else 0, m.count("."), m))

    def compute_homes(self):
        """Each class and function is defined in one stub (its home) and imported by the
        others: the module it says it is from if that one is stubbed and has it, else the first
        module (core first, then by depth and name) that has it under its own name, else the
        first that has it."""
        found = {}
        for mname in self.order():
            mod = self.modules[mname]
            for n in public_names(mod):
                o = vars(mod)[n]
                if isinstance(o, type) or is_routine(o):
                    found.setdefault(id(o), []).append((mname, n, o))
        for key, places in found.items():
            o = places[0][2]
            own = getattr(o, "__name__", None)
            home = None
            m = getattr(o, "__module__", None) or ""
            if m.startswith(SKIP_SUBTREES) and getattr(sys.modules.get(m), own or "", None) is o:
                home = (m, own)  # its own module's source (not stubbed) says its types
            for m2, n, _ in places:
                if home is None and m2 == m and n == own:
                    home = (m2, n)
            if home is None:
                for m, n, _ in places:
                    if n == own:
                        home = (m, n)
                        break
            self.homes[key] = home or places[0][:2]

    def home(self, o):
        return self.homes.get(id(o))


# ---- annotations --------------------------------------------------------------------------------


class Imports:
    """The names a stub refers to, with their local spellings (aliased when the stub defines the
    same name)."""

    def __init__(self, modname, local_names, star_ir, reexports=()):
        self.modname = modname
        self.reexported = {h: n for n, h in reexports if h}
        self.local = set(local_names)
        self.star_ir = star_ir
        self.froms = {}  # (module, name) -> local spelling
        self.need_builtins = False

    def ref(self, module, name):
        if module == self.modname:
            return name
        if module == "tether.ir" and name in self.star_ir and name not in self.local:
            return name  # from tether.ir import *
        if (module, name) in self.reexported:
            return self.reexported[(module, name)]
        if module == "builtins":
            if name in self.local:
                self.need_builtins = True
                return f"_builtins.{name}"
            return name
        key = (module, name)
        if key not in self.froms:
            spelling = name
            if name in self.local or name in self.froms.values():
                spelling = f"_{module.rsplit('.', 1)[-1]}_{name}"
            self.froms[key] = spelling
        return self.froms[key]

    def canonical(self, text, local_names):
        """A type in this stub's spelling with every name fully qualified (to compare types
        across stubs)."""
        inverse = {s: f"{m}.{n}" for (m, n), s in self.froms.items()}
        inverse.update({s: f"{m}.{n}" for (m, n), s in self.reexported.items()})
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            return text
        modname, star = self.modname, self.star_ir

        class Q(ast.NodeTransformer):
            def visit_Name(self, node):
                n = node.id
                if n in inverse:
                    q = inverse[n]
                elif n in local_names:
                    q = f"{modname}.{n}"
                elif n in star:
                    q = f"tether.ir.{n}"
                else:
                    q = n
                return ast.copy_location(ast.Name(id=q, ctx=node.ctx), node)

        return ast.unparse(Q().visit(tree.body))

    def canonical_sig(self, forms, local_names):
        """canonical() of a method's forms, [(params_text, return_text)], as one str."""
        out = []
        for params, ret in forms:
            try:
                fn = ast.parse(f"def f({params}) -> {ret}: ...").body[0]
            except SyntaxError:
                return None
            for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs + \
                    [x for x in (fn.args.vararg, fn.args.kwarg) if x]:
                if a.annotation is not None:
                    a.annotation = ast.parse(self.canonical(ast.unparse(a.annotation),
                                                            local_names), mode="eval").body
            fn.returns = ast.parse(self.canonical(ret, local_names), mode="eval").body
            out.append(ast.unparse(fn.args) + " -> " + ast.unparse(fn.returns))
        return " | ".join(out)

    def spelling(self, module, name):
        """The spelling a name has if it is imported (without importing it)."""
        return self.froms.get((module, name), name)

    def lines(self):
        out = []
        if self.need_builtins:
            out.append("import builtins as _builtins")
        bymod = {}
        for (m, n), s in self.froms.items():
            bymod.setdefault(m, []).append(n if s == n else f"{n} as {s}")
        for m in sorted(bymod, key=lambda x: (x.startswith("tether"), x)):
            out.append(f"from {m} import {', '.join(sorted(bymod[m]))}")
        return out


class Resolver:
    """Turns the table's type expressions (names of the stubbed modules, typing's, builtins) and
    Python annotations into the stub's spelling."""

    def __init__(self, build, modname, imports, local_classes):
        self.build = build
        self.modname = modname
        self.imports = imports
        self.local_classes = local_classes  # name -> class, defined in this stub
        self.index = build.type_index
        self.class_stack = []

    def name_target(self, name):
        if name in self.local_classes:
            return (self.modname, name)
        if name in TYPING_NAMES:
            return ("typing", name)
        if name in ("None",):
            return None
        if isinstance(getattr(builtins, name, None), type):
            return ("builtins", name)
        if name in self.index:
            return self.index[name]
        return False

    def table_type(self, text, where, self_name=None):
        """A type expression of the table in this stub's spelling; a drift error if it names a
        type that does not exist."""
        if self_name:
            text = re.sub(r"\bSelf\b", self_name, text)
        names = type_names(text)
        if names is None:
            self.build.errors.append(f"{where}: not a type expression: {text!r}")
            return self.any()
        spelled = {}
        for n in names:
            t = self.name_target(n)
            if t is False:
                self.build.errors.append(f"{where}: type '{n}' does not exist in this build (MLIR "
                                         f"{self.build.version})")
                spelled[n] = self.any()
            elif t is not None:
                spelled[n] = self.imports.ref(*t)
        if all(k == v for k, v in spelled.items()):
            return text
        return re.sub(r"(?<![\w.])[A-Za-z_]\w*", lambda m: spelled.get(m.group(0), m.group(0)),
                      text)

    def any(self):
        return self.imports.ref("typing", "Any")

    def typing(self, name):
        return self.imports.ref("typing", name)

    def class_ref(self, c):
        """The stub's spelling of a class, or None."""
        if c is type(None):
            return "None"
        if c in SIMPLE_BUILTIN_TYPES or getattr(builtins, c.__name__, None) is c:
            return self.imports.ref("builtins", c.__name__)
        for outer in self.class_stack:  # a class nested in the one being written
            if getattr(c, "__qualname__", "") == f"{outer.__qualname__}.{c.__name__}" and \
                    getattr(outer, c.__name__, None) is c:
                return c.__name__
        if self.modname in self.build.modules and c in self.local_classes.values():
            for n, lc in self.local_classes.items():
                if lc is c:
                    return n
        h = self.build.home(c)
        if h:
            return self.imports.ref(*h)
        qual = getattr(c, "__qualname__", "")
        if "." in qual and "<" not in qual:
            outer_name, rest = qual.split(".", 1)
            outer = getattr(sys.modules.get(c.__module__), outer_name, None)
            if isinstance(outer, type):
                ref = self.class_ref(outer)
                if ref:
                    return f"{ref}.{rest}"
        m = c.__module__ or ""
        if m.partition(".")[0].lstrip("_") in sys.stdlib_module_names:
            for public in (m.lstrip("_"), m):  # ctypes.Structure rather than _ctypes'
                if getattr(sys.modules.get(public), c.__name__, None) is c:
                    return self.imports.ref(public, c.__name__)  # enum.IntEnum, ...
        return None

    def py_annotation(self, a, globs):
        """A Python annotation (an object, or a str to evaluate) in the stub's spelling, or
        None when it cannot say more than Any."""
        if a is P.empty or a is inspect.Signature.empty:
            return None
        if isinstance(a, str):
            try:
                a = eval(a, dict(globs or {}))  # noqa: S307  (the package's own annotations)
            except Exception:
                return None
        if a is None or a is type(None):
            return "None"
        if a in (list, set, frozenset):
            return f"{a.__name__}[{self.any()}]"
        if a is dict:
            return f"dict[{self.any()}, {self.any()}]"
        if a is tuple:
            return f"tuple[{self.any()}, ...]"
        if isinstance(a, type) and not typing.get_args(a):
            return self.class_ref(a)
        origin, args = typing.get_origin(a), typing.get_args(a)
        if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
            parts = [self.py_annotation(x, globs) for x in args]
            if any(p is None for p in parts):
                return None
            return " | ".join(dict.fromkeys(parts))
        import collections.abc as abc
        generic = {list: "list", tuple: "tuple", dict: "dict", abc.Sequence: "Sequence",
                   abc.Iterable: "Iterable", abc.Iterator: "Iterator", abc.Mapping: "Mapping"}
        if origin in generic:
            name = generic[origin]
            name = self.typing(name) if name[0].isupper() else name
            if not args:
                return f"{name}[{self.any()}, ...]" if origin is tuple else \
                    f"{name}[{self.any()}, {self.any()}]" if origin in (dict, abc.Mapping) else \
                    f"{name}[{self.any()}]"
            parts = [self.py_annotation(x, globs) or self.any() for x in args if x is not ...]
            if origin is tuple and ... in args:
                parts.append("...")
            return f"{name}[{', '.join(parts)}]"
        return None


# ---- stubs --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def type_names(text):
    """The names a type expression uses (first parts of dotted names), or None if it is not
    one."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    return tuple(sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}))


def is_simple_default(src):
    if src is NO_DEFAULT or src == "...":
        return False
    try:
        v = ast.literal_eval(src)
    except (ValueError, SyntaxError):
        return False
    return v is None or isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) < 40)


def with_none(t, anyname):
    if t == anyname or re.search(r"\bNone\b", t) or re.search(r"\b(Any|_typing_Any)\b", t):
        return t
    return f"{t} | None"


class PendingLine(str):
    """A line of a stub that may get a `# type: ignore[override]` once all stubs are written."""

    suffix = ""

    def __str__(self):
        return str.__str__(self) + self.suffix


class ModuleStub:
    def __init__(self, build, modname):
        self.build = build
        self.modname = modname
        self.mod = build.modules[modname]
        self.is_core = modname in ["tether"] + MODULES + OPTIONAL
        self.short = "tether" if modname == "tether" else modname[len("tether."):]
        self.entries = build.table_members.get(self.short, {})  # key -> (value, marked key)
        self.used = set()

    # -- table lookups --

    def entry(self, key):
        e = self.entries.get(key)
        if e is not None:
            self.used.add(key)
            return e[0]
        return None

    def member_entry(self, cls_name, name):
        return self.entry(f"{cls_name}.{name}" if cls_name else name)

    def count(self, annotations):
        anyname = self.imports.spelling("typing", "Any")
        real = [a for a in annotations if a is not None]
        n_any = sum(1 for a in real if a == anyname or re.search(r"\bAny\b", a))
        kind = "typed" if not n_any else ("any" if n_any == len(real) else "partly")
        if not real:
            kind = "typed"
        self.build.counts[kind] += 1
        if self.is_core:
            self.build.core_counts[kind] += 1
        per = self.build.module_counts.setdefault(self.modname, {"typed": 0, "partly": 0,
                                                                 "any": 0})
        per[kind] += 1

    # -- signatures --

    def package_forms(self, where, name, f, kind="method"):
        """(forms, source): the parameter lists the package gives for a callable written in
        Python (or a slot wrapper), without self/cls; source: 'inspect', or None (nothing known:
        the extension's members are typed by their signatures, signature() takes them)."""
        if name == "__init__":
            if isinstance(f, types.FunctionType) or is_ods_builder(f):
                return [params_of_signature(inspect.signature(f))[1:]], "inspect"
            return None, None
        if isinstance(f, types.FunctionType) or (
                callable(f) and not is_c_callable(f) and type(f).__name__ != "wrapper_descriptor"):
            try:
                sig = inspect.signature(f)
            except (TypeError, ValueError):
                return None, None
            ps = params_of_signature(sig)
            if kind in ("method", "classmethod") and ps:
                ps = ps[1:]
            return [ps], "inspect"
        if type(f).__name__ == "wrapper_descriptor":
            try:
                ps = params_of_signature(inspect.signature(f))
            except (TypeError, ValueError):
                return None, None
            return [ps[1:]], "inspect"
        return None, None

    def typed_entry_forms(self, where, value):
        """The table entry of a callable as a list of forms, each (params | None, types, ret):
        params from a typed signature, types by parameter name."""
        vals = value if isinstance(value, list) else [value]
        out = []
        for v in vals:
            if isinstance(v, dict):
                types_ = {k: t for k, t in v.items() if k != "return"}
                out.append((None, types_, v.get("return")))
            elif isinstance(v, str) and v.startswith("("):
                try:
                    fn = ast.parse(f"def _f{v}: pass").body[0]
                except SyntaxError:
                    self.build.errors.append(f"{where}: not a signature: {v!r}")
                    continue
                ps = params_of_ast(fn.args)
                args = fn.args
                allargs = args.posonlyargs + args.args + args.kwonlyargs + \
                    ([args.vararg] if args.vararg else []) + ([args.kwarg] if args.kwarg else [])
                types_ = {a.arg: ast.unparse(a.annotation) for a in allargs if a.annotation}
                ret = ast.unparse(fn.returns) if fn.returns else None
                out.append((ps, types_, ret))
            elif isinstance(v, str):
                out.append((None, {}, v))
            else:
                self.build.errors.append(f"{where}: entry of an unknown form: {v!r}")
        return out

    def signature(self, where, qual, cls, name, f, kind, default_return=None, self_name=None,
                  o=None):
        """The def lines of a callable: [(params_text, return_text)], one per overload; [] for a
        constructor the package says nothing of. o: the member as the class has it (f
        unwrapped)."""
        forms, source = self.package_forms(where, name, f, kind=kind)
        entry = self.member_entry(qual, name)
        ctexts = self.build.csigs.forms(o if o is not None else f)
        if ctexts is not None:  # the extension's member: its signature spec types it
            if entry is not None:
                self.build.errors.append(f"{where}: the extension types this member (its "
                                         f"signature spec); the table's entry is stale")
            entry = ctexts
        elif forms is None and is_c_callable(f) and name != "__init__":
            self.build.errors.append(f"{where}: a member of the extension without a signature "
                                     f"spec (_tether._signatures)")
        mforms = self.typed_entry_forms(where, entry) if entry is not None else []
        msigs = [tf[0] for tf in mforms if tf[0] is not None]
        if forms is None:  # the package gives no parameters: the signature's, if any
            if msigs:
                forms = msigs
            elif name == "__init__":
                return []
            else:
                forms = [[Param("args", P.VAR_POSITIONAL), Param("kwargs", P.VAR_KEYWORD)]]
        else:
            # A signature of the table must be the package's own, with types.
            def shape(form):
                return [(p.name, P.POSITIONAL_OR_KEYWORD if p.kind == P.POSITIONAL_ONLY
                         else p.kind, p.default) for p in form]
            for ps in msigs:
                if not any(shape(ps) == shape(form) for form in forms):
                    self.build.errors.append(
                        f"{where}: the table's signature {entry!r} is not the package's "
                        f"({'; '.join(render_plain(form) for form in forms)})")
        # The parameters the table types must be the package's.
        names = {p.name for form in forms for p in form}
        for tf in mforms:
            for pn in tf[1]:
                if pn not in names:
                    self.build.errors.append(
                        f"{where}: the table types parameter '{pn}', which the package's "
                        f"member does not have (it has: {', '.join(sorted(names)) or 'none'})")
        if len(mforms) > 1 and len(mforms) != len(forms):
            if all(tf[0] is None for tf in mforms) and len(forms) == 1:
                forms = forms * len(mforms)  # one signature typed several ways: overloads
            else:
                self.build.errors.append(
                    f"{where}: the table gives {len(mforms)} forms, the package {len(forms)}")
                mforms = mforms[:1]

        def pick(tforms, i):
            if len(tforms) == len(forms):
                return tforms[i]
            return tforms[0] if len(tforms) == 1 else (None, {}, None)

        pytypes = self.python_param_types(f)
        out = []
        annotations = []
        for i, form in enumerate(forms):
            mt = pick(mforms, i)
            ptexts = []
            if kind == "method":
                ptexts.append("self")
            elif kind == "classmethod":
                ptexts.append("cls")
            seen_kwonly = False
            posonly_done = not any(p.kind == P.POSITIONAL_ONLY for p in form)
            all_defaults = False
            for p in form:
                if not posonly_done and p.kind != P.POSITIONAL_ONLY:
                    ptexts.append("/")
                    posonly_done = True
                if p.name in mt[1]:
                    t = self.res.table_type(mt[1][p.name], f"{where}({p.name})", self_name)
                elif p.name in self.build.param_types:
                    self.build.used_param_names.add(p.name)
                    t = self.res.table_type(self.build.param_types[p.name][0],
                                            f"PARAMS[{p.name!r}]", self_name)
                else:
                    t = pytypes.get(p.name) or self.res.any()
                annotations.append(t)
                default = p.default
                if default == "None":
                    t = with_none(t, self.imports.spelling("typing", "Any"))
                elif default is not NO_DEFAULT and t.startswith(
                        self.imports.spelling("typing", "Literal") + "["):
                    # An overload for the values other than the default: the argument is needed
                    # (when nothing before it has a default).
                    try:
                        values = ast.literal_eval(t[t.index("["):])
                        values = values if isinstance(values, list) else [values]
                        if ast.literal_eval(default) not in values:
                            default = NO_DEFAULT if not all_defaults and p.kind in (
                                P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY, P.POSITIONAL_ONLY) \
                                else "..."
                    except (ValueError, SyntaxError):
                        pass
                prefix = ""
                if p.kind == P.VAR_POSITIONAL:
                    prefix = "*"
                    seen_kwonly = True
                elif p.kind == P.VAR_KEYWORD:
                    prefix = "**"
                elif p.kind == P.KEYWORD_ONLY and not seen_kwonly:
                    ptexts.append("*")
                    seen_kwonly = True
                text = f"{prefix}{p.name}: {t}"
                if default is not NO_DEFAULT:
                    text += " = " + (default if is_simple_default(default) else "...")
                    if p.kind != P.KEYWORD_ONLY:
                        all_defaults = True
                ptexts.append(text)
            if not posonly_done:
                ptexts.append("/")
            if name == "__init__":
                ret = "None"
            elif mt[2] is not None:
                ret = self.res.table_type(mt[2], f"{where}(return)", self_name)
            else:
                ret = self.python_return_type(f) or default_return or self.res.any()
            if name != "__init__":
                annotations.append(ret)
            out.append((", ".join(ptexts), ret))
        self.count(annotations)
        return out

    def python_param_types(self, f):
        if isinstance(f, types.MethodType):
            f = f.__func__
        if not isinstance(f, types.FunctionType):
            return {}
        try:
            sig = inspect.signature(f)
        except (TypeError, ValueError):
            return {}
        out = {}
        for p in sig.parameters.values():
            t = self.res.py_annotation(p.annotation, f.__globals__)
            if t is not None:
                out[p.name] = t
        return out

    def python_return_type(self, f):
        if isinstance(f, types.MethodType):
            f = f.__func__
        if not isinstance(f, types.FunctionType):
            return None
        a = f.__annotations__.get("return", P.empty)
        return self.res.py_annotation(a, f.__globals__)

    # -- classes --

    def emitted(self, c):
        """Whether a class is defined by some stub (or is importable from elsewhere)."""
        return self.build.home(c) is not None or not (c.__module__ or "").startswith("tether")

    def stub_bases(self, cls):
        """The bases a class's stub names, and the private classes whose members it takes in
        (tether classes no stub defines: _IRSequence, _Enum, generated classes a wrapper
        shadows, C bases)."""
        bases, absorbed = [], []

        def visit(c):
            for b in c.__bases__:
                if b is object:
                    continue
                if self.emitted(b) and self.res.class_ref(b):
                    if b not in bases:
                        bases.append(b)
                else:
                    if b not in absorbed:
                        absorbed.append(b)
                    visit(b)

        visit(cls)
        # Keep the MRO consistent: drop a base another base derives from.
        bases = [b for b in bases if not any(o is not b and issubclass(o, b) for o in bases)]
        return bases, absorbed

    def class_members(self, cls, absorbed):
        """name -> (object, defining class) of the members the stub shows: the class's own and
        those of the private classes it takes in, where the MRO finds them there (not in a base
        the stub names). A C class's constructor is its __new__ (shown as __init__, with the class
        docstring's signature)."""
        mine = [cls] + absorbed

        def provider(n):
            for c in cls.__mro__:
                if n in vars(c) or (n == "__init__" and "__new__" in vars(c)):
                    return c
            return None

        out = {}
        for c in mine:
            d = vars(c)
            for n, o in d.items():
                if n in ("__new__", "__init__"):
                    if is_enum_class(cls):
                        continue
                    if isinstance(d.get("__init__"), types.FunctionType):
                        if n == "__new__":
                            continue
                    elif n == "__init__" and "__new__" in d:
                        continue
                    n = "__init__"
                if n in out or provider(n) is not c:
                    continue
                if n.startswith("__") and n.endswith("__"):
                    if n not in DUNDERS:
                        continue
                elif n.startswith("_") and n not in PRIVATE_MEMBERS:
                    continue
                out[n] = (o, c)
        return out

    def emit_class(self, name, cls, indent=""):
        self.res.class_stack.append(cls)
        try:
            return self._emit_class(name, cls, indent)
        finally:
            self.res.class_stack.pop()

    def _emit_class(self, name, cls, indent):
        lines = []
        bases, absorbed = self.stub_bases(cls)
        base_refs = [self.res.class_ref(b) for b in bases]
        meta = type(cls)
        header = f"{indent}class {name}"
        if base_refs:
            header += f"({', '.join(base_refs)})"
        header += ":"
        if not self.is_core and len(bases) > 1 and self.bases_conflict(bases):
            header += "  # type: ignore[misc]"  # e.g. FunctionLike.name and OpView.name
        lines.append(header)
        body = []
        ind = indent + "    "
        members = self.class_members(cls, absorbed)
        qual = f"{self.outer_cls_name}.{name}" if self.outer_cls_name else name
        # Members the table types that the class only inherits (e.g. a sequence's items).
        for key in list(self.entries):
            if key.startswith(qual + ".") and key.count(".") == qual.count(".") + 1:
                m = key.rsplit(".", 1)[1]
                if m not in members and hasattr(cls, m):
                    for c in cls.__mro__:
                        if m in vars(c):
                            members[m] = (vars(c)[m], c)
                            break
        if is_enum_class(cls):
            for mname, member in cls.__members__.items():
                v = member.value
                body.append(f"{ind}{mname} = {v!r}" if isinstance(v, (int, str)) and not
                            isinstance(v, bool) else f"{ind}{mname} = ...")
                members.pop(mname, None)
            self.count([])
        for mname in sorted(members):
            o, owner = members[mname]
            if is_enum_class(cls) and mname in cls.__members__:
                continue
            body += self.emit_member(cls, qual, mname, o, ind)
        # Attributes a Python class's __init__ sets on the instance (MLIRError.message).
        for mname in instance_attributes(cls):
            if mname in members or any(mname in vars(c) for c in cls.__mro__):
                continue
            t = self.attr_type(qual, mname, None, cls) or self.res.any()
            self.count([t])
            body.append(f"{ind}{mname}: {t}")
        # Properties of a tether metaclass are class attributes (_GlobalDebug.flag).
        if meta is not type and not issubclass(meta, enum.EnumMeta) and \
                (meta.__module__ or "").startswith("tether"):
            for mname, o in sorted(vars(meta).items()):
                if isinstance(o, property) and not mname.startswith("_"):
                    t = self.attr_type(qual, mname, o, cls)
                    t = t or self.res.any()
                    body.append(f"{ind}{mname}: {self.res.typing('ClassVar')}[{t}]")
        if not body:
            body.append(f"{ind}...")
        return lines + body

    def attr_type(self, qual, mname, o, cls):
        """The type of a property or attribute: the table's entry, the table's by-name default,
        the Python annotation, the value's class; else Any."""
        where = f"{self.short}.{qual}.{mname}"
        e = self.entry(f"{qual}.{mname}")
        if e is not None:
            if not isinstance(e, str) or e.startswith("("):
                self.build.errors.append(f"{where}: a property or attribute takes a type, not "
                                         f"{e!r}")
                return self.res.any()
            return self.res.table_type(e, where, qual.split(".")[-1])
        if mname in self.build.property_types:
            self.build.used_property_names.add(mname)
            return self.res.table_type(self.build.property_types[mname][0],
                                       f"PROPERTIES[{mname!r}]", qual.split(".")[-1])
        fget = getattr(o, "fget", None)
        if fget is not None:
            t = self.python_return_type(fget)
            if t:
                return t
        return None

    def bases_conflict(self, bases):
        """Whether two bases of a class define a member of the same name (tether's classes)."""
        seen = {}
        for b in bases:
            names = set()
            for c in b.__mro__:
                if (c.__module__ or "").startswith("tether"):
                    names |= {n for n in vars(c) if not n.startswith("__")}
            for n in names:
                if n in seen and seen[n] is not b:
                    return True
                seen[n] = b
        return False

    def overridden(self, cls, mname):
        """(module, class, member) of the base class member a dialect module's class member
        redefines (generated op classes' `name`, `result`, ... accessors), or None."""
        if self.is_core or mname.startswith("__"):
            return None
        for b in cls.__mro__[1:]:
            h = self.build.home(b)
            if h and (b.__module__ or "").startswith("tether") and mname in vars(b):
                return (h[0], h[1], mname)
        return None

    def incompatible(self, mine, base):
        """Whether a member (its record: imports, local names, type or (kind, forms)) is an
        incompatible override of the base's for mypy: not the same signature, not the same or a
        narrower type."""
        def canon(rec):
            imports, local, t, sig = rec
            if sig is not None:
                c = imports.canonical_sig(sig[1], local)
                return None if c is None else f"def {sig[0]} {c}"
            return None if t is None else imports.canonical(t, local)

        a, b = canon(mine), (canon(base) if base else None)
        if a is None or b is None:
            return True
        if a.startswith("def ") or b.startswith("def "):
            return a != b
        return not self.narrower(a, b)

    def narrower(self, sub, base):
        """Whether type `sub` is `base` or narrower: unions of classes (and None)."""
        if sub == base or "typing.Any" in (sub, base):
            return True

        def parts(t):
            return [x.strip() for x in t.split("|")]

        def resolve(q):
            if q == "None":
                return type(None)
            mod, _, name = q.rpartition(".")
            return getattr(sys.modules.get(mod), name, None) if mod else \
                getattr(builtins, name, None)

        subs, bases = [resolve(x) for x in parts(sub)], [resolve(x) for x in parts(base)]
        if not all(isinstance(x, type) for x in subs + bases):
            return False
        return all(any(issubclass(x, y) for y in bases) for x in subs)

    def emit_member(self, cls, qual, mname, o, ind):
        self.last_type = self.last_sig = None
        out = self._emit_member(cls, qual, mname, o, ind)
        record = (self.imports, self.local_names, self.last_type, self.last_sig)
        if self.outer_cls_name is None:
            self.build.member_types[(self.modname, qual, mname)] = record
        base = self.overridden(cls, mname)
        if out and base:
            # Decided once every stub is written (the base's may come later): mypy reports an
            # incompatible override at the member's first line.
            out[0] = PendingLine(out[0])
            self.build.pending.append((out[0], record, base, self))
        return out

    def _emit_member(self, cls, qual, mname, o, ind):
        where = f"{self.short}.{qual}.{mname}"
        cls_name = qual.split(".")[-1]
        out = []
        f = unwrap(o)
        tname = type(o).__name__
        if isinstance(o, type):
            if getattr(o, "__qualname__", "") == f"{cls.__qualname__}.{mname}":
                saved = self.outer_cls_name
                self.outer_cls_name = qual
                out += self.emit_class(mname, o, ind)
                self.outer_cls_name = saved
                return out
            ref = self.res.class_ref(o)
            out.append(f"{ind}{mname}: {self.res.typing('ClassVar')}[type[{ref}]]" if ref else
                       f"{ind}{mname}: {self.res.typing('ClassVar')}[{self.res.any()}]")
            self.count([ref])
            return out
        if isinstance(o, property) or tname in ("getset_descriptor", "member_descriptor"):
            cprop = self.build.csigs.prop(o) if tname == "getset_descriptor" else None
            if cprop is not None and cprop[0] == "object" and not defines(cls, mname) and \
                    self.entries.get(f"{qual}.{mname}") is not None:
                # The table narrows a getter the class inherits (a sequence's owner).
                t = self.attr_type(qual, mname, o, cls)
            elif cprop is not None:  # the extension's getter: its signature spec types it
                if self.entry(f"{qual}.{mname}") is not None:
                    self.build.errors.append(f"{where}: the extension types this member (its "
                                             f"signature spec); the table's entry is stale")
                t = self.res.table_type(cprop[0], where, cls_name)
            else:
                if tname == "getset_descriptor":
                    self.build.errors.append(f"{where}: a getter of the extension without a "
                                             f"signature spec (_tether._signatures)")
                t = self.attr_type(qual, mname, o, cls)
            if t is None:
                t = self.res.any()
            self.count([t])
            self.last_type = t
            settable = (o.fset is not None) if isinstance(o, property) else (
                cprop[1] if cprop is not None else True)
            out.append(f"{ind}@property")
            out.append(f"{ind}def {mname}(self) -> {t}: ...")
            if settable:
                out.append(f"{ind}@{mname}.setter")
                out.append(f"{ind}def {mname}(self, value: {t}) -> None: ...")
            return out
        if tname == "_ClassProperty":
            t = self.attr_type(qual, mname, o, cls) or self.res.any()
            self.last_type = t
            self.count([t])
            out.append(f"{ind}{mname}: {self.res.typing('ClassVar')}[{t}]")
            return out
        if isinstance(o, (staticmethod, classmethod)) or is_routine(f):
            if mname == "__init__":
                kind = "method"
            elif isinstance(o, staticmethod) or (is_c_callable(f) and tname ==
                                                 "builtin_function_or_method"):
                kind = "static"
            elif isinstance(o, classmethod) or tname == "classmethod_descriptor":
                kind = "classmethod"
            else:
                kind = "method"
            default_ret = None
            e = self.build.member_returns.get(mname)
            if e is not None and self.build.csigs.forms(o) is None:  # for Python's members
                self.build.used_member_returns.add(mname)
                default_ret = self.res.table_type(e[0], f"RETURNS[{mname!r}]", cls_name)
            forms = self.signature(where, qual, cls, mname, f, kind, default_ret, cls_name, o)
            self.last_sig = (kind, forms)
            for params, ret in forms:
                if len(forms) > 1:
                    out.append(f"{ind}@{self.res.typing('overload')}")
                if kind == "static":
                    out.append(f"{ind}@staticmethod")
                elif kind == "classmethod":
                    out.append(f"{ind}@classmethod")
                out.append(f"{ind}def {mname}({params}) -> {ret}: ...")
            return out
        # A class-level value (constant, enum member of another class, descriptor object).
        t = self.attr_type(qual, mname, o, cls)
        if t is None:
            t = self.value_type(o)
        self.last_type = t
        self.count([t])
        out.append(f"{ind}{mname}: {self.res.typing('ClassVar')}[{t}]")
        return out

    def value_type(self, v):
        c = type(v)
        if c in (bool, int, float, str, bytes):
            return c.__name__
        if c is tuple:
            return "tuple[" + self.res.any() + ", ...]"
        if c in (list, dict):
            return c.__name__ + "[" + ", ".join([self.res.any()] * (1 if c is list else 2)) + "]"
        if v is None:
            return "None"
        return self.res.class_ref(c) or self.res.any()

    # -- the module --

    def render(self):
        b = self.build
        mod = self.mod
        names = [n for n in public_names(mod)]
        snapshot = b.snapshots.get(self.modname, set(vars(mod)))
        ir = b.modules.get("tether.ir")
        star_ir = False
        if ir is not None and self.modname != "tether.ir":
            ir_all = getattr(ir, "__all__", [])
            star_ir = bool(ir_all) and all(vars(mod).get(n, None) is getattr(ir, n)
                                           for n in ir_all if hasattr(ir, n))
        defs, reexports, submodules, constants = [], [], [], []
        local_classes = {}
        for n in names:
            o = vars(mod)[n]
            if star_ir and n in getattr(ir, "__all__", ()) and getattr(ir, n) is o:
                continue
            if isinstance(o, types.ModuleType):
                if n in snapshot:
                    submodules.append(n)
                continue
            if isinstance(o, type) or is_routine(o):
                h = b.home(o)
                if h == (self.modname, n):
                    defs.append(n)
                    if isinstance(o, type):
                        local_classes[n] = o
                else:
                    reexports.append((n, h))
                continue
            constants.append(n)
        star_names = set(getattr(ir, "__all__", ())) if star_ir else set()
        own = set(defs) | {n for n, _ in reexports} | set(submodules) | set(constants)
        self.imports = Imports(self.modname, own, star_names, reexports)
        self.local_names = own
        self.res = Resolver(b, self.modname, self.imports, local_classes)
        self.outer_cls_name = None
        body = []
        for n in defs:
            o = vars(mod)[n]
            body.append("")
            if isinstance(o, type):
                body += self.emit_class(n, o)
            else:
                body += self.emit_function(n, o)
        const_lines = []
        for n in constants:
            o = vars(mod)[n]
            where = f"{self.short}.{n}"
            e = self.entry(n)
            if e is not None:
                t = self.res.table_type(e, where)
            else:
                t = self.value_type(o)
            self.count([t])
            const_lines.append(f"{n}: {t}")
        head = []
        for n, h in sorted(reexports, key=lambda x: x[0]):
            if h is None:
                continue
            if h[0] == self.modname:  # another name of a class of this stub
                const_lines.append(f"{n} = {h[1]}")
            elif h[1] == n:
                head.append(f"from {h[0]} import {n} as {n}")
            else:  # `import X as Y` re-exports nothing in a stub: an assignment does
                const_lines.append(f"{n} = {self.imports.ref(*h)}")
        for n in sorted(submodules):
            head.append(f"from {self.modname} import {n} as {n}")
        out = [f'"""Type stubs of {self.modname} (MLIR {b.version} build), generated by '
               'tools/gen_stubs.py: do not edit."""', ""]
        imports = self.imports.lines()
        if star_ir:
            imports.append("from tether.ir import *")
        out += imports
        if head:
            out += [""] + head
        all_ = getattr(mod, "__all__", None)
        if all_ is not None:
            out += ["", "__all__ = ["]
            line = "   "
            for n in sorted(set(all_)):
                if len(line) + len(repr(n)) + 2 > 100:
                    out.append(line)
                    line = "   "
                line += f" {n!r},"
            out += [line, "]"]
        if const_lines:
            out += [""] + const_lines
        out += body
        # Entries of the table this module did not use: drift.
        for key, (v, marked) in sorted(self.entries.items()):
            if key not in self.used:
                b.errors.append(f"MEMBERS[{self.short!r}][{marked!r}]: {self.modname} has no "
                                f"such member in this build (MLIR {b.version}); mark it "
                                f"'@<version>' if it is version specific")
        return out

    def emit_function(self, n, o):
        where = f"{self.short}.{n}"
        forms = self.signature(where, None, None, n, o, "function")
        out = []
        for params, ret in forms:
            if len(forms) > 1:
                out.append(f"@{self.res.typing('overload')}")
            out.append(f"def {n}({params}) -> {ret}: ...")
        return out


def render_plain(form):
    parts = []
    for p in form:
        s = ("*" if p.kind == P.VAR_POSITIONAL else "**" if p.kind == P.VAR_KEYWORD else "") + \
            p.name
        if p.default is not NO_DEFAULT:
            s += "=" + p.default
        parts.append(s)
    return "(" + ", ".join(parts) + ")"


def module_path(outdir, modname, mod):
    parts = modname.split(".")
    if hasattr(mod, "__path__"):
        return os.path.join(outdir, *parts, "__init__.pyi")
    return os.path.join(outdir, *parts[:-1], parts[-1] + ".pyi")


def build_type_index(b):
    """Type name -> (home module, name) for the names the table may use: the classes of the
    stubbed modules, by name (the first module in order() wins: tether.ir's first)."""
    index = {}
    for mname in b.order():
        for n in public_names(b.modules[mname]):
            o = vars(b.modules[mname])[n]
            if isinstance(o, type):
                h = b.home(o)
                if h and h[1] == n and n not in index:
                    index[n] = h
    return index


def generate(outdir, table_path, report=False):
    table = load_table(table_path)
    b = Build()
    b.collect_modules()
    b.compute_homes()
    b.type_index = build_type_index(b)
    v = b.version
    b.param_types = current_entries(table.get("PARAMS", {}), v, "PARAMS", b.errors)
    b.property_types = current_entries(table.get("PROPERTIES", {}), v, "PROPERTIES", b.errors)
    b.member_returns = current_entries(table.get("RETURNS", {}), v, "RETURNS", b.errors)
    b.used_member_returns = set()
    members = current_entries(table.get("MEMBERS", {}), v, "MEMBERS", b.errors)
    b.table_members = {k: current_entries(val, v, f"MEMBERS[{k!r}]", b.errors)
                       for k, (val, mk) in members.items()}
    shorts = {("tether" if m == "tether" else m[len("tether."):]) for m in b.modules}
    for k, (val, mk) in members.items():
        if k not in shorts:
            b.errors.append(f"MEMBERS[{mk!r}]: no module tether.{k} in this build (MLIR {v})")
    files = {}
    for mname in b.order():
        stub = ModuleStub(b, mname)
        files[module_path(outdir, mname, b.modules[mname])] = stub.render()
    for line, record, base, stub in b.pending:
        if stub.incompatible(record, b.member_types.get(base)):
            line.suffix = "  # type: ignore[override]"
    files = {path: "\n".join(str(x) for x in lines).rstrip() + "\n"
             for path, lines in files.items()}
    for name, (t, mk) in b.param_types.items():
        if name not in b.used_param_names:
            b.errors.append(f"PARAMS[{mk!r}]: no function or method of this build (MLIR {v}) has "
                            f"a parameter '{name}'")
    for name, (t, mk) in b.property_types.items():
        if name not in b.used_property_names:
            b.errors.append(f"PROPERTIES[{mk!r}]: no property of this build (MLIR {v}) is named "
                            f"'{name}'")
    for name, (t, mk) in b.member_returns.items():
        if name not in b.used_member_returns:
            b.errors.append(f"RETURNS[{mk!r}]: no method of this build (MLIR {v}) is named "
                            f"'{name}'")
    if b.errors:
        for e in sorted(set(b.errors)):
            print(f"gen_stubs.py: {e}", file=sys.stderr)
        print(f"gen_stubs.py: {len(set(b.errors))} entries of {table_path} do not match the "
              f"built package (MLIR {v}); nothing written", file=sys.stderr)
        return 1
    for path, text in sorted(files.items()):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    with open(os.path.join(outdir, "tether", "py.typed"), "w") as f:
        f.write("")
    if report:
        c, cc = b.counts, b.core_counts
        print(f"gen_stubs.py: MLIR {v}: {len(files)} stubs; members typed / partly / Any: "
              f"core modules {cc['typed']} / {cc['partly']} / {cc['any']}, all "
              f"{c['typed']} / {c['partly']} / {c['any']}", file=sys.stderr)
        for m in ["tether"] + MODULES + OPTIONAL:
            if m in b.module_counts:
                c = b.module_counts[m]
                print(f"gen_stubs.py:   {m}: typed {c['typed']}, partly {c['partly']}, Any "
                      f"{c['any']}", file=sys.stderr)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--types", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "bindings", "python", "gen",
                                                    "stub_types.py"))
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args(argv)
    return generate(args.outdir, args.types, args.report)


if __name__ == "__main__":
    sys.exit(main())
