#!/usr/bin/env python3
"""Writes docs/python-api.md: the reference of tether's Python modules, by class, from the
docstrings of the built package.

    PYTHONPATH=bazel-bin/bindings/python python3 tools/gen_python_reference.py > docs/python-api.md
    (a --config=mlir19 build, bazel-out/k8-fastbuildmlir19/bin/...: > docs/python-api-19.md)

//tests/bindings:api_reference_test regenerates it and fails when the checked-in file differs, so
the reference follows every change of the API.
"""

import importlib
import inspect
import sys

MODULES = ["tether.ir", "tether.passmanager", "tether.alias", "tether.run"]
OPTIONAL = ["tether.rewrite", "tether.execution_engine", "tether.runtime", "tether.extras.types",
            "tether.extras.meta", "tether.dialects", "tether.dialects.transform.interpreter"]


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
            out.append(f"- `{n}`: {first_para(f.__doc__)}")
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
