#!/usr/bin/env python3
"""Generates, at build time, linalg's named ops written in tether's OpDSL
(tether/dialects/linalg/opdsl/ops/core_named_ops.py) and the C table of ops whose region MLIR
builds (linalg_region_ops.h), from the definitions the installed MLIR ships:

  LinalgNamedStructuredOps.yamlgen.td       name, C++ class, documentation, interfaces and
                                            attributes (index attributes with their defaults,
                                            function attributes with their defaults)
  LinalgNamedStructuredOps.yamlgen.cpp.inc  iterator types, indexing maps (with the symbols bound
                                            to index attributes) and the region builder, the body
                                            as a sequence of typed function applications
  LinalgStructuredOps.h.inc                 every op with a builtin region builder

MLIR generates the last two from the OpDSL's YAML; this script reads them back into DSL source,
so the Python definitions are exactly the installed MLIR's. What the C++ does not keep is
synthesized: operand names (in0.., out0..), one type variable per operand (T_in0..), dims d0..
and shape symbols named after the dims they size (a tensor's shape is its indexing map with each
dim replaced by the symbol sizing it, which gives the shape maps upstream's definitions have).

    gen_linalg_named_ops.py TD CPP_INC STRUCTURED_H_INC OUT_PY OUT_H

Any construct it does not know fails the build with the op and the line; nothing is guessed.
"""

import re
import sys


class GenError(Exception):
    pass


# ---- the .td: metadata and attributes ---------------------------------------------------------

def parse_td(text):
    ops = {}
    for m in re.finditer(r'^def (\w+) : LinalgStructuredBase_Op<"(\w+)"', text, re.M):
        cls, name = m.group(1), m.group(2)
        end = text.find("\ndef ", m.end())
        body = text[m.start():end if end >= 0 else len(text)]
        interfaces = re.search(r"extraInterfaces=\*/\[([\w, ]*)\]", body)
        summary = re.search(r"let summary = \[\{(.*?)\}\];", body, re.S)
        description = re.search(r"let description = \[\{(.*?)\}\];", body, re.S)
        doc = summary.group(1).strip() if summary else ""
        if description and description.group(1).strip():
            doc += "\n\n" + description.group(1).strip()
        attrs = []
        args = re.search(r"let arguments = \(ins(.*?)\n    \);", body, re.S)
        if not args:
            raise GenError(f"{cls}: no arguments in the .td")
        for a in re.finditer(r'DefaultValuedOptionalAttr<(.*?), "(.*?)">:\$(\w+)', args.group(1)):
            kind, default, aname = a.group(1), a.group(2), a.group(3)
            if kind.startswith("RankedI64ElementsAttr"):
                values = [int(v) for v in re.findall(r"static_cast<int64_t>\((-?\d+)\)", default)]
                attrs.append(("index", aname, values))
            else:
                fm = re.fullmatch(r"(Unary|Binary|Ternary|Type)FnAttr", kind)
                dm = re.fullmatch(r"(\w+)Fn::(\w+)", default)
                if not fm or not dm or dm.group(1) != fm.group(1):
                    raise GenError(f"{cls}: unknown attribute {kind} {default} ${aname}")
                attrs.append((fm.group(1).lower(), aname, dm.group(2)))
        ops[cls] = {
            "name": name, "doc": doc, "attrs": attrs,
            "interfaces": [i.strip() for i in interfaces.group(1).split(",") if i.strip()]
            if interfaces else [],
            "canonicalizer": "let hasCanonicalizer = 1;" in body,
        }
    return ops


# ---- the .cpp.inc: maps, iterators, body -----------------------------------------------------

def sections(text):
    parts = re.split(r"^// Implementation of (\w+)\n", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def parse_impl(cls, src):
    it = re.search(r"getIteratorTypesArray\(\) \{\s*return SmallVector<utils::IteratorType>\{(.*?)\};",
                   src, re.S)
    polymorphic = re.search(r"getIteratorTypesArray\(\) \{\s*int64_t rank = getRank\(getDpsInitOperand\(0\)\);"
                            r"\s*return SmallVector<utils::IteratorType>\(rank, utils::IteratorType::parallel\);",
                            src)
    if not it and not polymorphic:
        raise GenError(f"{cls}: no iterator types")
    # A rank-polymorphic op (elementwise at its output's rank): no dims in the definition.
    iterators = re.findall(r"utils::IteratorType::(\w+)", it.group(1)) if it else []
    bindings = []  # per symbol position: None (kept) or (attr, element)
    sb = re.search(r"getSymbolBindings\(\w+ self\) \{(.*?)return exprs;", src, re.S)
    if sb:
        csts = {m.group(1): (m.group(2), int(m.group(3))) for m in re.finditer(
            r"int64_t (cst\d+) = self\.get(\w+)\(\)\.getValues<int64_t>\(\)\[(\d+)\];", sb.group(1))}
        for m in re.finditer(r"exprs\.push_back\(getAffine(Symbol|Constant)Expr\((\w+), context\)\);",
                             sb.group(1)):
            if m.group(1) == "Symbol":
                bindings.append(None)
            else:
                attr, k = csts[m.group(2)]
                bindings.append((attr[0].lower() + attr[1:], k))
    maps = re.findall(r'parseAttribute\("affine_map<\(([^)]*)\)(?:\[[^\]]*\])? -> \((.*?)\)>"', src)
    nargs = re.search(r"getNumRegionArgs\(\) \{ return (\d+); \}", src)
    if not nargs:
        raise GenError(f"{cls}: no getNumRegionArgs")
    rb = re.search(r"::regionBuilder\(.*?\{(.*?)\n\}", src, re.S)
    if not rb:
        raise GenError(f"{cls}: no region builder")
    return {"iterators": iterators, "polymorphic": bool(polymorphic), "bindings": bindings,
            "nargs": int(nargs.group(1)),
            "maps": [(dims, results) for dims, results in maps], "builder": rb.group(1)}


# Affine expressions of the maps: + and * over dims, symbols, integers and parentheses.
_TOKEN = re.compile(r"\s*(?:(d\d+)|(s\d+)|(-?\d+)|([+*()]))")


def parse_affine(text, where):
    toks, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise GenError(f"{where}: cannot read affine expression '{text}' at {pos}")
        toks.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
    toks.append(None)
    i = 0

    def atom():
        nonlocal i
        t = toks[i]
        i += 1
        if t == "(":
            e = add()
            if toks[i] != ")":
                raise GenError(f"{where}: unbalanced '{text}'")
            i += 1
            return e
        if t is None or t in "+*)":
            raise GenError(f"{where}: unexpected '{t}' in '{text}'")
        return ("d", int(t[1:])) if t[0] == "d" else ("s", int(t[1:])) if t[0] == "s" \
            else ("c", int(t))

    def mul():
        nonlocal i
        e = atom()
        while toks[i] == "*":
            i += 1
            e = ("*", e, atom())
        return e

    def add():
        nonlocal i
        e = mul()
        while toks[i] == "+":
            i += 1
            e = ("+", e, mul())
        return e

    e = add()
    if toks[i] is not None:
        raise GenError(f"{where}: trailing tokens in '{text}'")
    return e


def split_results(results):
    out, depth, cur = [], 0, ""
    for ch in results:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur)
    return [r.strip() for r in out]


# ---- region builder -> expression tree --------------------------------------------------------

_BUILD = re.compile(r"Value (value\d+) = helper\.(\w+)\((.*)\);$")


def split_args(s):
    out, depth, cur, quoted = [], 0, "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        if not quoted:
            if ch == "," and depth == 0:
                out.append(cur.strip())
                cur = ""
                continue
            depth += ch == "("
            depth -= ch == ")"
        cur += ch
    out.append(cur.strip())
    return out


def parse_builder(cls, src):
    fn_vars = {}
    for m in re.finditer(r"(\w+)Fn (\w+) = \w+Fn::(\w+);.*?attr\.getName\(\) == \"(\w+)\"", src, re.S):
        fn_vars[m.group(2)] = (m.group(1).lower(), m.group(4))
    values, yields = {}, []

    def arg(a):
        m = re.fullmatch(r"block\.getArgument\((\d+)\)", a)
        if m:
            return ("arg", int(m.group(1)))
        if a in values:
            return values[a]
        raise GenError(f"{cls}: unknown operand '{a}'")

    def fn(f, kind):
        m = re.fullmatch(r"(\w+)Fn::(\w+)", f)
        if m:
            if m.group(1).lower() != kind:
                raise GenError(f"{cls}: {f} used as a {kind} function")
            return ("fn", m.group(2))
        if f in fn_vars and fn_vars[f][0] == kind:
            return ("attr", fn_vars[f][1])
        raise GenError(f"{cls}: unknown {kind} function '{f}'")

    def typ(t):
        m = re.fullmatch(r"block\.getArgument\((\d+)\)\.getType\(\)", t)
        if m:
            return ("argtype", int(m.group(1)))
        fixed = {"helper.getFloat32Type()": "F32", "helper.getFloat64Type()": "F64",
                 "helper.getIntegerType(32)": "I32", "helper.getIntegerType(64)": "I64"}
        if t in fixed:
            return ("fixed", fixed[t])
        raise GenError(f"{cls}: unknown type '{t}'")

    for line in src.splitlines():
        line = line.strip()
        m = _BUILD.match(line)
        if m:
            name, what, args = m.group(1), m.group(2), split_args(m.group(3))
            if args and args[-1] == "emitError":
                # MLIR 22: helpers take the diagnostic callback last (and the builder returns
                # when one fails); it is no operand.
                args = args[:-1]
            if what == "buildTypeFn":
                values[name] = ("type", fn(args[0], "type"), typ(args[1]), arg(args[2]))
            elif what in ("buildUnaryFn", "buildBinaryFn", "buildTernaryFn"):
                kind = what[len("build"):-len("Fn")].lower()
                values[name] = (kind, fn(args[0], kind), *[arg(a) for a in args[1:]])
            elif what == "constant":
                cm = re.fullmatch(r'"(.*) : (i64|f64)"', args[0])
                if not cm:
                    raise GenError(f"{cls}: constant {args[0]} is not an i64 or f64")
                values[name] = ("const", cm.group(1), cm.group(2))
            elif what == "index":
                values[name] = ("index", int(args[0]))
            else:
                raise GenError(f"{cls}: unknown helper call {what}")
            continue
        # A value, or (MLIR 22's fill) a block argument yielded as it is.
        m = re.match(r"yields\.push_back\((\w+|block\.getArgument\(\d+\))\);$", line)
        if m:
            yields.append(arg(m.group(1)))
    return yields


# ---- DSL source -------------------------------------------------------------------------------

def affine_dsl(e, symbol_name):
    k = e[0]
    if k == "d":
        return f"D.d{e[1]}"
    if k == "s":
        return symbol_name(e[1])
    if k == "c":
        return str(e[1])
    return f"{affine_dsl(e[1], symbol_name)} {k} {affine_dsl(e[2], symbol_name)}"


def shape_dsl(e, symbol_name):
    """The shape an indexing expression implies: each dim replaced by the symbol sizing it."""
    k = e[0]
    if k == "d":
        return f"S.size_d{e[1]}"
    if k == "s":
        return symbol_name(e[1])
    if k == "c":
        return str(e[1])
    return f"{shape_dsl(e[1], symbol_name)} {k} {shape_dsl(e[2], symbol_name)}"


def generate_op(cls, meta, impl):
    n = impl["nargs"]
    yields = parse_builder(cls, impl["builder"])
    n_out = len(yields)
    if n_out != 1:
        raise GenError(f"{cls}: {n_out} outputs (the DSL emits one comprehension)")
    if impl["polymorphic"]:
        impl = dict(impl, maps=[("", "")] * n)
    if len(impl["maps"]) != n:
        raise GenError(f"{cls}: {len(impl['maps'])} maps for {n} operands")
    n_in = n - n_out
    names = [f"in{i}" for i in range(n_in)] + [f"out{i}" for i in range(n_out)]
    bindings = impl["bindings"]

    def symbol_name(pos):
        if pos >= len(bindings) or bindings[pos] is None:
            raise GenError(f"{cls}: map uses s{pos}, which no index attribute binds")
        attr, k = bindings[pos]
        return f"S.{attr}_{k}"

    ndims = len(impl["iterators"])
    results = []
    for i, (dims, res) in enumerate(impl["maps"]):
        if len([d for d in dims.split(",") if d.strip()]) != ndims:
            raise GenError(f"{cls}: map {i} does not range over the {ndims} dims")
        results.append([parse_affine(r, f"{cls} map {i}") for r in split_results(res)])

    used = set()

    def mark(e):
        if isinstance(e, tuple):
            if e[0] == "arg":
                used.add(e[1])
            for x in e[1:]:
                mark(x)

    mark(yields[0])
    # Inputs without dims are scalars, except in a rank-polymorphic op, where they are tensors
    # of any rank: there only a fill's value (FillOpInterface) is a scalar.
    if impl["polymorphic"]:
        fill = "LinalgFillOpInterface" in meta["interfaces"]
        scalar = [fill and i == 0 for i in range(n)]
    else:
        scalar = [i < n_in and not results[i] for i in range(n)]

    def use(i):
        if scalar[i]:
            return names[i]
        if not results[i]:
            return f"{names[i]}[None]"
        return f"{names[i]}[{', '.join(affine_dsl(r, symbol_name) for r in results[i])}]"

    def tv(t):
        return f"TV.T_{names[t[1]]}" if t[0] == "argtype" else t[1]

    def expr(e):
        k = e[0]
        if k == "arg":
            return use(e[1])
        if k == "const":
            return f"const({e[1]})" if e[2] == "i64" else f"const({float(e[1])!r})"
        if k == "index":
            return f"index(D.d{e[1]})"
        f = e[1]
        callee = f[1] if f[0] == "attr" else \
            {"type": "TypeFn", "unary": "UnaryFn", "binary": "BinaryFn",
             "ternary": "TernaryFn"}[k] + "." + f[1]
        if k == "type":
            return f"{callee}({tv(e[2])}, {expr(e[3])})"
        return f"{callee}({', '.join(expr(a) for a in e[2:])})"

    out = n_in
    reductions = [i for i, t in enumerate(impl["iterators"]) if t == "reduction"]
    top = yields[0]
    if reductions:
        if not (top[0] == "binary" and top[2] == ("arg", out)):
            raise GenError(f"{cls}: a reduction whose body is not <fn>(output, value)")
        dims = ", ".join(f"D.d{d}" for d in reductions)
        f = top[1]
        reducer = f"{f[1]}[{dims}]" if f[0] == "attr" else f"ReduceFn.{f[1]}[{dims}]"
        if f[0] == "fn" and f[1] not in ("add", "mul", "max_signed", "min_signed", "max_unsigned",
                                         "min_unsigned"):
            raise GenError(f"{cls}: no ReduceFn.{f[1]}")
        rhs = f"{reducer}({expr(top[3])})"
    else:
        rhs = expr(top)

    params = []
    for i in range(n):
        t = f"TV.T_{names[i]}"
        if scalar[i]:
            params.append(f"{names[i]}=ScalarDef({t})")
            continue
        shape = [shape_dsl(r, symbol_name) for r in results[i]]
        extra = ""
        if i < n_in and i not in used:
            if any(r[0] != "d" for r in results[i]):
                raise GenError(f"{cls}: unused operand {i} with a non-trivial map")
            extra = f", index_dims=[{', '.join(f'D.d{r[1]}' for r in results[i])}]"
        if i >= n_in:
            extra += ", output=True"
        params.append(f"{names[i]}=TensorDef({', '.join([t] + shape)}{extra})")
    for kind, aname, default in meta["attrs"]:
        if kind == "index":
            syms = ", ".join(f"S.{aname}_{k}" for k in range(len(default)))
            params.append(f"{aname}=IndexAttrDef({syms}, default={default})")
        else:
            cap = kind.capitalize()
            params.append(f"{aname}={cap}FnAttrDef(default={cap}Fn.{default})")

    iface_names = {"LinalgContractionOpInterface": "ContractionOpInterface",
                   "LinalgConvolutionOpInterface": "ConvolutionOpInterface",
                   "LinalgFillOpInterface": "FillOpInterface"}
    lines = [f'@linalg_structured_op(op_name="{meta["name"]}", op_class_name="{cls}")',
             f"def {meta['name']}(", *[f"    {p}," for p in params], "):",
             f"    {meta['doc']!r}"]
    for i in meta["interfaces"]:
        if i not in iface_names:
            raise GenError(f"{cls}: unknown interface {i}")
        lines.append(f"    implements({iface_names[i]})")
    if meta["canonicalizer"]:
        lines.append("    defines(Canonicalizer)")
    if ndims:
        lines.append(f"    domain({', '.join(f'D.d{d}' for d in range(ndims))})")
    lhs = f"{names[out]}[None]" if not results[out] else \
        f"{names[out]}[{', '.join(affine_dsl(r, symbol_name) for r in results[out])}]"
    lines.append(f"    {lhs} = {rhs}")
    return "\n".join(lines)


HEADER = '''"""linalg's named ops, in tether's OpDSL: generated at build time by
bindings/python/gen/gen_linalg_named_ops.py from the definitions of the installed MLIR
(LinalgNamedStructuredOps.yamlgen.td and .cpp.inc). Do not edit.

Operand names (in0.., out0..), type variables (T_<operand>), dims (d0..) and shape symbols
(size_d<k>) are synthesized: MLIR's generated C++ does not keep upstream's names."""

from ..lang import *  # noqa: F401,F403

__all__ = [{names}]
'''


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    td, inc, h_inc, out_py, out_h = argv[1:]
    try:
        metas = parse_td(open(td).read())
        impls = sections(open(inc).read())
        defs = []
        for cls, meta in metas.items():
            if cls not in impls:
                raise GenError(f"{cls}: no implementation in {inc}")
            defs.append((meta["name"], cls, parse_impl(cls, impls[cls]), meta))
        if not defs:
            raise GenError(f"no ops found in {td}")
        py = HEADER.format(names=", ".join(repr(d[0]) for d in defs))
        py += "\n" + "\n\n\n".join(generate_op(cls, meta, impl) for _, cls, impl, meta in defs)
        # Every op with a builtin region builder, and how many operands its region takes
        # (0: not known here, e.g. linalg.transpose's builder is in MLIR's C++ sources).
        h = open(h_inc).read()
        nargs = {name: impl["nargs"] for name, _, impl, _ in defs}
        region_ops = []
        for m in re.finditer(r"^class (\w+) : public ::mlir::Op<(.*?)^\};", h, re.M | re.S):
            body = m.group(2)
            if "static void regionBuilder(" not in body:
                continue
            nm = re.search(r'return ::llvm::StringLiteral\("linalg\.(\w+)"\);', body)
            if not nm:
                raise GenError(f"{m.group(1)}: no operation name in {h_inc}")
            region_ops.append((nm.group(1), nargs.get(nm.group(1), 0)))
        if not region_ops:
            raise GenError(f"no op with a region builder in {h_inc}")
    except (GenError, OSError) as e:
        print(f"gen_linalg_named_ops: {e}", file=sys.stderr)
        return 1
    with open(out_py, "w") as f:
        f.write(py + "\n")
    with open(out_h, "w") as f:
        f.write("/* Generated by bindings/python/gen/gen_linalg_named_ops.py from MLIR's "
                "LinalgStructuredOps.h.inc:\n * linalg ops whose region MLIR builds, and the "
                "operands their region takes (0: unknown). */\n")
        for name, k in region_ops:
            f.write(f'TPY_LINALG_REGION_OP("linalg.{name}", {k})\n')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
