#!/usr/bin/env python3
"""Writes docs/python-api.md: the reference of tether's Python modules, by class, from the
docstrings of the built package, and the signatures of the extension's members (each one's
signature spec, which the package publishes as _tether._signatures).

    PYTHONPATH=bazel-bin/bindings/python python3 tools/gen_python_reference.py > docs/python-api.md
    (a --config=mlir19 build, bazel-out/k8-fastbuildmlir19/bin/...: > docs/python-api-19.md)

//tests/bindings:api_reference_test regenerates it and fails when the checked-in file differs, so
the reference follows every change of the API.
"""

import ast
import importlib
import inspect
import re
import sys
import types

MODULES = ["tether.ir", "tether.passmanager", "tether.alias", "tether.run"]
OPTIONAL = ["tether.rewrite", "tether.execution_engine", "tether.runtime", "tether.extras.types",
            "tether.extras.meta", "tether.dialects", "tether.dialects.transform.interpreter"]


def unwrap(o):
    return o.__func__ if isinstance(o, (staticmethod, classmethod)) else o


def is_c_callable(f):
    return type(f).__name__ in ("method_descriptor", "classmethod_descriptor",
                                "builtin_function_or_method")


class CSignatures:
    """The typed signatures the extension publishes (_tether._signatures: core/sig.c writes one
    per member from its signature spec, keyed by the module that holds the class or function and
    its name: "tether._tether.IntegerType.get_signless", "_quant.QuantizedType.flags"), found for
    a member by its object, wherever the member is reached from."""

    def __init__(self):
        from tether import _tether
        self.texts = dict(_tether._signatures)
        self.keys = {}  # id(member object) -> its key, as core/sig.c names it
        self.objects = []  # keeps the objects whose ids are keys
        self.seen = set()
        self._visit_module(_tether, True)

    def _add(self, o, key):
        self.objects.append(o)
        self.keys.setdefault(id(o), key)

    def _visit_module(self, mod, top):
        for k, v in list(vars(mod).items()):
            if isinstance(v, types.ModuleType):
                if top:
                    self._visit_module(v, False)
            elif isinstance(v, type):
                self._visit_class(v, f"{mod.__name__}.{k}")
            elif is_c_callable(v):
                self._add(v, f"{mod.__name__}.{k}")

    def _visit_class(self, c, prefix):
        if id(c) in self.seen:
            return
        self.seen.add(id(c))
        self._add(c, f"{prefix}.__init__")  # the class: its constructor
        for k, v in list(vars(c).items()):
            if isinstance(v, type):
                if v.__qualname__ == f"{c.__qualname__}.{k}":
                    self._visit_class(v, f"{prefix}.{k}")
            else:
                # A class's constructor is its __new__ (shown as __init__).
                self._add(unwrap(v), f"{prefix}.{'__init__' if k == '__new__' else k}")

    def text(self, o):
        """The typed text of a member (a callable's forms one a line; a getter's "name: T", or
        "name -> T" without a setter; a class's constructor's), or None."""
        key = self.keys.get(id(unwrap(o)))
        return self.texts.get(key) if key else None

    def forms(self, o):
        """A callable's forms as typed signatures, ["(a: T, /) -> R", ...], or None."""
        text = self.text(o) if isinstance(o, type) or is_c_callable(unwrap(o)) else None
        if text is None:
            return None
        return [line[line.index("("):] for line in text.split("\n")]

    def prop(self, o):
        """A getter's (type, settable), or None."""
        text = self.text(o) if type(o).__name__ == "getset_descriptor" else None
        m = re.match(r"\w+(: | -> )(.*)$", text, re.S) if text else None
        return (m.group(2), m.group(1) == ": ") if m else None


def plain(name, form):
    """A typed signature "(a: T, b: U = None) -> R" as name(a, b=None)."""
    fn = ast.parse(f"def {name}{form}: pass").body[0]
    a = fn.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
        arg.annotation = None
    return f"{name}({ast.unparse(a)})"


def signature_line(name, forms, doc):
    """name's forms (a | b when several) and the first paragraph of its docstring."""
    line = " | ".join(plain(name, f) for f in forms)
    return f"{line}: {doc}" if doc else line


_csigs = None


def csigs():
    global _csigs
    if _csigs is None:
        _csigs = CSignatures()
    return _csigs


def first_para(doc):
    if not doc:
        return ""
    return inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ")


def member_line(name, obj):
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    doc = first_para(getattr(obj, "__doc__", None))
    kind = "property" if isinstance(obj, (property,)) or type(obj).__name__ == "getset_descriptor" \
        else "class property" if type(obj).__name__ == "_ClassProperty" else ""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if type(obj).__name__ in ("builtin_function_or_method", "method_descriptor",
                              "classmethod_descriptor", "function", "wrapper_descriptor"):
        kind = "method"
    if isinstance(obj, type):
        return None
    if type(obj).__name__ in ("int", "str", "tuple", "NoneType", "TypeID"):
        kind = "attribute"
    tag = f" ({kind})" if kind and kind != "method" else ""
    text = f"- `{name}`{tag}"
    forms = csigs().forms(obj) if kind == "method" and name != "__init__" else None
    if forms:  # a member of the extension: its signature, then its docstring
        return f"{text}: {signature_line(name, forms, doc)}"
    if doc and not doc.startswith(("Return ", "Implement ", "Helper for", "staticmethod(",
                                   "classmethod(")):
        text += f": {doc}"
    return text


def describe_class(name, cls):
    out = [f"### `{name}`", ""]
    bases = [b.__name__ for b in cls.__mro__[1:] if b is not object]
    if bases:
        out.append(f"Bases: {', '.join('`' + b + '`' for b in bases[:3])}.")
        out.append("")
    doc = first_para(cls.__doc__)
    forms = csigs().forms(cls) if cls.__module__ in ("tether.ir", "tether._tether") or \
        "__new__" in vars(cls) else None
    if forms:  # a class of the extension: its constructor's signature, then its docstring
        doc = signature_line(name, forms, doc)
    if doc:
        out += [doc, ""]
    lines = []
    for m in sorted(cls.__dict__):
        if m.startswith("__") and m not in ("__init__", "__getitem__", "__len__", "__iter__",
                                             "__contains__", "__enter__", "__exit__", "__int__",
                                             "__float__", "__bool__", "__add__", "__str__",
                                             "__repr__", "__eq__", "__hash__"):
            continue
        if m.startswith("_") and not m.startswith("__") and m not in ("_CAPIPtr", "_CAPICreate"):
            continue
        line = member_line(m, cls.__dict__[m])
        if line:
            lines.append(line)
    return out + lines + [""]


def describe_module(modname):
    mod = importlib.import_module(modname)
    out = [f"## `{modname}`", ""]
    doc = first_para(mod.__doc__)
    if doc:
        out += [doc, ""]
    names = list(getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")])
    names += [n for n in ("_OperationBase", "_GlobalDebug") if hasattr(mod, n)]
    classes = [(n, getattr(mod, n)) for n in sorted(set(names)) if isinstance(getattr(mod, n, None), type)]
    funcs = [(n, getattr(mod, n)) for n in sorted(set(names))
             if callable(getattr(mod, n, None)) and not isinstance(getattr(mod, n), type)]
    if funcs:
        out += ["Functions:", ""]
        for n, f in funcs:
            forms = csigs().forms(f)
            doc = first_para(f.__doc__)
            out.append(f"- `{n}`: {signature_line(n, forms, doc) if forms else doc}")
        out.append("")
    for n, c in classes:
        if c.__module__ not in (modname, "tether._tether") and not c.__module__.startswith("tether"):
            continue
        out += describe_class(n, c)
    return out


def main():
    from tether._mlir_version import MLIR_VERSION
    other = "docs/python-api-19.md" if MLIR_VERSION == 22 else "docs/python-api.md"
    out = [f"# tether Python API reference (MLIR {MLIR_VERSION} build)", "",
           "Generated from the docstrings by tools/gen_python_reference.py (do not edit). The "
           f"behaviour is upstream `mlir`'s of LLVM {MLIR_VERSION} unless docs/python.md lists a "
           f"difference; {other} is the reference of the other MLIR version tether builds.", ""]
    for m in MODULES:
        out += describe_module(m)
    for m in OPTIONAL:
        try:
            importlib.import_module(m)
        except ImportError:
            continue
        out += describe_module(m)
    sys.stdout.write("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
