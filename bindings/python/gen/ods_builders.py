"""Turns the builders mlir-tblgen generates into specs a C builder runs (issue 37).

    ods_builders.py FILE     # a -gen-python-op-bindings output (after fix_ods_gen.py), in place

Every op class's generated `__init__` is a page of Python made from a handful of templates
(mlir/tools/mlir-tblgen/OpPythonBindingGen.cpp, MLIR 22): collect the operands, convert the
attributes, derive or collect the result types, the successors and the region count, then call
`OpView.__init__` with them. This script reads each `__init__` (with the ast module, statement by
statement), and when every statement is one of those templates, replaces the function by

    __init__ = _ods_cext.ods_builder(PARAMS, NPOS, ACTIONS)

PARAMS: the parameter names after self, NPOS of them positional (the rest keyword-only, default
None), ACTIONS: what the statements did, in their order, each a tuple whose first item names the
template (the parameters by index):

    ("operand", i)          operands.append(p)
    ("operand?", i)         if p is not None: operands.append(p)
    ("operands", i)         operands.extend(_get_op_results_or_values(p))
    ("operand_group", i)    operands.append(_get_op_results_or_values(p))   (attribute-sized groups)
    ("context",)            _ods_context = _ods_get_default_loc_context(loc)
    ("attr", i, name, kind)     attributes[name] = p, or AttrBuilder.get(kind)(p, context=...)
    ("attr?", i, name, kind)    the same if p is not None
    ("unit", i, name)       if bool(p): attributes[name] = UnitAttr.get(context)
    ("same_type", n)        if results is None: results = [operands[0].type] * n
    ("attr_type", name, n)  if results is None: results = [type of attributes[name]] * n
    ("results",)            results = []
    ("result", i)           results.append(p)
    ("result?", i)          if p is not None: results.append(p)
    ("result_list", i)      results.extend(p)
    ("successors",)         _ods_successors = []
    ("successor", i)        _ods_successors.append(p)
    ("successor_list", i)   _ods_successors.extend(p)
    ("regions", i, k)       regions = k + p

which the C builder (bindings/python/ir/ods_builder.c) runs with the same semantics, without a
Python frame or intermediate lists. The builder is a method descriptor: `super().__init__(...)`
from a subclass (upstream's extras, tether's dialect modules, a user's class) calls it as it
called the Python function, with the same parameters. A builder with a statement the script does
not know (another MLIR version's generator) stays Python; the file's last line counts both kinds.
"""

import ast
import re
import sys

_IDENT = r"[A-Za-z_][A-Za-z_0-9]*"

# Statements of the templates, as ast.unparse writes them (one line each); groups: the parameter,
# then names.
_SIMPLE = [
    ("operand", rf"operands\.append\(({_IDENT})\)"),
    ("operand?", rf"if ({_IDENT}) is not None:\n    operands\.append\(\1\)"),
    ("operands", rf"operands\.extend\(_get_op_results_or_values\(({_IDENT})\)\)"),
    ("operand_group", rf"operands\.append\(_get_op_results_or_values\(({_IDENT})\)\)"),
    ("result", rf"results\.append\(({_IDENT})\)"),
    ("result?", rf"if ({_IDENT}) is not None:\n    results\.append\(\1\)"),
    ("result_list", rf"results\.extend\(({_IDENT})\)"),
    ("successor", rf"_ods_successors\.append\(({_IDENT})\)"),
    ("successor_list", rf"_ods_successors\.extend\(({_IDENT})\)"),
]
_ATTR = re.compile(
    rf"(if ({_IDENT}) is not None:\n    )?attributes\['([^']*)'\] = (?:\2|({_IDENT})) if "
    rf"isinstance\((?:\2|\4), _ods_ir\.Attribute\) or not _ods_ir\.AttrBuilder\.contains\('([^']*)'\)"
    rf" else _ods_ir\.AttrBuilder\.get\('\5'\)\((?:\2|\4), context=_ods_context\)$")
_UNIT = re.compile(rf"if bool\(({_IDENT})\):\n    attributes\['([^']*)'\] = "
                   rf"_ods_ir\.UnitAttr\.get\(_ods_get_default_loc_context\(loc\)\)$")
_SAME_TYPE = re.compile(r"if results is None:\n    results = \[operands\[0\]\.type\] \* (\d+)$")
_ATTR_TYPE = re.compile(
    r"if results is None:\n"
    r"    _ods_result_type_source_attr = attributes\['([^']*)'\]\n"
    r"    _ods_derived_result_type = _ods_ir\.TypeAttr\(_ods_result_type_source_attr\)\.value "
    r"if isinstance\(_ods_result_type_source_attr, _ods_ir\.TypeAttr\) else "
    r"_ods_result_type_source_attr\.type\n"
    r"    results = \[_ods_derived_result_type\] \* (\d+)$")
_REGIONS = re.compile(rf"regions = (\d+) \+ ({_IDENT})$")
_FIXED = {
    "operands = []": None,
    "attributes = {}": None,
    "regions = None": None,
    "_ods_successors = None": None,
    "_ods_context = _ods_get_default_loc_context(loc)": ("context",),
    "results = []": ("results",),
    "_ods_successors = []": ("successors",),
}
_SUPER = ("super().__init__(self.OPERATION_NAME, self._ODS_REGIONS, self._ODS_OPERAND_SEGMENTS, "
          "self._ODS_RESULT_SEGMENTS, attributes=attributes, results=results, operands=operands, "
          "successors=_ods_successors, regions=regions, loc=loc, ip=ip)")


def _signature(fn):
    """(names, npos) of a generated __init__'s parameters after self, or None if its signature is
    not the generator's (positional without defaults, then keyword-only ones defaulting to None,
    ending in loc and ip)."""
    a = fn.args
    if a.posonlyargs or a.vararg or a.kwarg or a.defaults or not a.args or a.args[0].arg != "self":
        return None
    if any(not (isinstance(d, ast.Constant) and d.value is None) for d in a.kw_defaults):
        return None
    pos = [x.arg for x in a.args[1:]]
    kw = [x.arg for x in a.kwonlyargs]
    if kw[-2:] != ["loc", "ip"]:
        return None
    return pos + kw, len(pos)


def _action(text, index):
    """The action of one statement (ast.unparse text), or None when it is none of the templates;
    () for the statements that only initialize."""
    if text in _FIXED:
        return _FIXED[text] or ()
    for name, pattern in _SIMPLE:
        m = re.fullmatch(pattern, text)
        if m:
            return (name, index[m.group(1)]) if m.group(1) in index else None
    m = _ATTR.fullmatch(text)
    if m:
        param = m.group(2) or m.group(4)
        if param not in index:
            return None
        return ("attr?" if m.group(1) else "attr", index[param], m.group(3), m.group(5))
    m = _UNIT.fullmatch(text)
    if m and m.group(1) in index:
        return ("unit", index[m.group(1)], m.group(2))
    m = _SAME_TYPE.fullmatch(text)
    if m:
        return ("same_type", int(m.group(1)))
    m = _ATTR_TYPE.fullmatch(text)
    if m:
        return ("attr_type", m.group(1), int(m.group(2)))
    m = _REGIONS.fullmatch(text)
    if m and m.group(2) in index:
        return ("regions", index[m.group(2)], int(m.group(1)))
    return None


def builder_spec(fn):
    """(names, npos, actions) of a generated __init__, or None when it is not made only of the
    templates."""
    sig = _signature(fn)
    if not sig:
        return None
    names, npos = sig
    index = {n: i for i, n in enumerate(names)}
    body = fn.body
    if not body or ast.unparse(body[-1]) != _SUPER:
        return None
    actions = []
    for stmt in body[:-1]:
        act = _action(ast.unparse(stmt), index)
        if act is None:
            return None
        if act:
            actions.append(act)
    # The generator's order: the context comes before the attributes (and only once).
    if sum(1 for a in actions if a == ("context",)) != 1:
        return None
    return tuple(names), npos, tuple(actions)


# The generated statement of each action (the templates of OpPythonBindingGen.cpp, as
# ast.unparse writes them), for python_of_spec.
_TEXT = {
    "operand": "operands.append({p})",
    "operand?": "if {p} is not None:\n    operands.append({p})",
    "operands": "operands.extend(_get_op_results_or_values({p}))",
    "operand_group": "operands.append(_get_op_results_or_values({p}))",
    "context": "_ods_context = _ods_get_default_loc_context(loc)",
    "attr": "attributes[{n!r}] = {p} if isinstance({p}, _ods_ir.Attribute) or not "
            "_ods_ir.AttrBuilder.contains({k!r}) else _ods_ir.AttrBuilder.get({k!r})({p}, "
            "context=_ods_context)",
    "unit": "if bool({p}):\n    attributes[{n!r}] = _ods_ir.UnitAttr.get("
            "_ods_get_default_loc_context(loc))",
    "same_type": "if results is None:\n    results = [operands[0].type] * {c}",
    "attr_type": "if results is None:\n    _ods_result_type_source_attr = attributes[{n!r}]\n"
                 "    _ods_derived_result_type = _ods_ir.TypeAttr(_ods_result_type_source_attr)"
                 ".value if isinstance(_ods_result_type_source_attr, _ods_ir.TypeAttr) else "
                 "_ods_result_type_source_attr.type\n    results = [_ods_derived_result_type] * {c}",
    "results": "results = []",
    "result": "results.append({p})",
    "result?": "if {p} is not None:\n    results.append({p})",
    "result_list": "results.extend({p})",
    "successors": "_ods_successors = []",
    "successor": "_ods_successors.append({p})",
    "successor_list": "_ods_successors.extend({p})",
    "regions": "regions = {c} + {p}",
}


def python_of_spec(spec):
    """The __init__ a spec stands for, as Python source: the generator's statements for its
    actions (the initializations it always writes first, and `_ods_successors = None` when there
    are no successors), then its call of OpView.__init__. convert() checks that this gives back
    the function it read (so a spec says nothing the function did not); the tests run it beside
    the C builder."""
    names, npos, actions = spec
    params = list(names[:npos]) + ["*"] + [f"{n}=None" for n in names[npos:]]
    lines = [f"def __init__(self, {', '.join(params)}):",
             "    operands = []", "    attributes = {}", "    regions = None"]
    body = []
    for a in actions:
        kind = a[0]
        fields = {}
        if kind in ("operand", "operand?", "operands", "operand_group", "result", "result?",
                    "result_list", "successor", "successor_list"):
            fields["p"] = names[a[1]]
        elif kind in ("attr", "attr?"):
            fields.update(p=names[a[1]], n=a[2], k=a[3])
        elif kind == "unit":
            fields.update(p=names[a[1]], n=a[2])
        elif kind == "same_type":
            fields["c"] = a[1]
        elif kind == "attr_type":
            fields.update(n=a[1], c=a[2])
        elif kind == "regions":
            fields.update(p=names[a[1]], c=a[2])
        text = _TEXT["attr" if kind == "attr?" else kind].format(**fields)
        if kind == "attr?":
            text = f"if {fields['p']} is not None:\n    " + text
        body += text.split("\n")
    if ("successors",) not in actions:
        # The generator writes it where the successors go: after the results.
        body.append("_ods_successors = None")
    lines += ["    " + b for b in body]
    lines.append("    " + _SUPER)
    return "\n".join(lines) + "\n"


def _same_function(fn, spec):
    """Whether python_of_spec(spec) is fn, statement for statement (in fn's order)."""
    made = ast.parse(python_of_spec(spec)).body[0]
    want = [ast.unparse(s) for s in fn.body]
    got = [ast.unparse(s) for s in made.body]
    # `_ods_successors = None` sits where the generator put it: compare without it.
    want = [w for w in want if w != "_ods_successors = None"]
    got = [g for g in got if g != "_ods_successors = None"]
    return want == got and ast.unparse(fn.args) == ast.unparse(made.args)


def _format(spec, indent):
    names, npos, actions = spec
    lines = [f"{indent}__init__ = _ods_cext.ods_builder(",
             f"{indent}    {names!r}, {npos},",
             f"{indent}    ("]
    lines += [f"{indent}        {a!r}," for a in actions]
    lines.append(f"{indent}    ))")
    return "\n".join(lines) + "\n"


def convert(text):
    """The module's text with every recognized builder replaced; (text, converted, kept)."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits = []
    kept = 0
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                spec = builder_spec(fn)
                if spec is None or not _same_function(fn, spec):
                    kept += 1
                    continue
                first = fn.lineno - 1 - len(fn.decorator_list)
                indent = re.match(r"\s*", lines[fn.lineno - 1]).group(0)
                edits.append((first, fn.end_lineno, _format(spec, indent)))
    for first, end, new in reversed(edits):
        lines[first:end] = [new]
    return "".join(lines), len(edits), kept


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: ods_builders.py FILE")
    with open(argv[1]) as f:
        text = f.read()
    new, converted, kept = convert(text)
    new += f"\n# ods_builders.py: {converted} builders in C, {kept} in Python\n"
    with open(argv[1], "w") as f:
        f.write(new)


if __name__ == "__main__":
    main(sys.argv)
