"""Corrects, in place, the Python mlir-tblgen generates (tether_dialect_library, dialects.bzl).

    fix_ods_gen.py ops FILE     # -gen-python-op-bindings output
    fix_ods_gen.py enums FILE   # -gen-python-enum-bindings output

The generators of the MLIR versions tether builds against (19, 22) emit things that cannot work
(upstream's package has them too). Each fix matches only the code that needs it, so one script
serves both versions:

1. ops, MLIR 19 only: an accessor of an op with the SameVariadicOperandSize /
   SameVariadicResultSize trait reads `operation.operands` (a NameError: `self.` is missing), and
   the call does not say how many single (non-variadic) elements the op has, which the group
   size depends on. The accessor gets `self.operation` and `n_simple=`, the count of single
   elements of that kind (counted from the op's accessors and builder lines;
   _ods_common.equally_sized_accessor). MLIR 22 fixed this upstream: its accessors read
   `self.operation` and pass n_simple first, which the pattern does not match.
2. ops, MLIR 19 and 22: the builder of an op with AttrSizedResultSegments appends an optional
   result only when it is not None, so omitting it leaves one segment short ("requires N result
   segments but was provided N-1"). It appends None instead, which op construction reads as an
   empty segment (as it does for optional operands).
3. enums, MLIR 19 and 22: `from ..ir import register_attribute_builder` needs a module `ir` next
   to the package the file is in: true for tether.dialects, not for a downstream package
   (`out_dir`). It imports tether.ir, the same module either way.
"""

import re
import sys

_OP_START = re.compile(r"^@_ods_cext\.register_operation\(", re.M)
_EQUAL_CALL = re.compile(
    r"_ods_equally_sized_accessor\(operation\.(operand|result)s, (\d+), (\d+), (\d+)\)"
    r"(\n    return self\.operation\.(?:operand|result)s\[start(\]|:))")
_OPTIONAL_RESULT = re.compile(r"^(\s+)if (\w+) is not None: results\.append\(\2\)$", re.M)


def _n_simple(op, kind):
    """Single elements of kind ("operand" or "result") in one op class's source: the larger of
    what its equally-sized accessors imply (unnamed elements have none) and its builder's lines
    (none for inferred results)."""
    n = 0
    for m in _EQUAL_CALL.finditer(op):
        if m.group(1) == kind:
            n = max(n, int(m.group(3)) + (1 if m.group(6) == "]" else 0))
    if kind == "operand":
        single = r"^    operands\.append\(_get_op_result_or_value\(\w+\)\)$"
    else:
        single = r"^    results\.append\(\w+\)$"
    return max(n, len(re.findall(single, op, re.M)))


def _fix_op(op):
    if "_ods_equally_sized_accessor(operation." in op:  # fix 1 (MLIR 19's code only)
        counts = {kind: _n_simple(op, kind) for kind in ("operand", "result")}
        op = _EQUAL_CALL.sub(
            lambda m: "_ods_equally_sized_accessor(self.operation.%ss, %s, %s, %s, n_simple=%d)%s"
            % (m.group(1), m.group(2), m.group(3), m.group(4), counts[m.group(1)], m.group(5)),
            op)
    if "\n  _ODS_RESULT_SEGMENTS = " in op:  # fix 2
        op = _OPTIONAL_RESULT.sub(r"\1results.append(\2)", op)
    return op


def fix_ops(text):
    starts = [m.start() for m in _OP_START.finditer(text)]
    if not starts:
        return text
    bounds = starts + [len(text)]
    return text[:starts[0]] + "".join(
        _fix_op(text[a:b]) for a, b in zip(bounds, bounds[1:]))


def fix_enums(text):
    return re.sub(r"^from \.\.ir import ", "from tether.ir import ", text, flags=re.M)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("ops", "enums"):
        sys.exit("usage: fix_ods_gen.py ops|enums FILE")
    with open(argv[2]) as f:
        text = f.read()
    text = fix_ops(text) if argv[1] == "ops" else fix_enums(text)
    with open(argv[2], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv)
