"""tether_dialect_library on its own (bindings/python/dialects.bzl).

GenTest.td defines the gentest dialect in ODS only; the rule generated its op classes
(gentest_pkg/gentest/_gentest_ops_gen.py) and enums (_gentest_enum_gen.py). There is no C++ for it:
every op is built through OpView.build_generic as an unregistered operation. Each test checks what
a user of the generated classes sees: the operands in the right order and the segment sizes, the
attributes made from Python values by the attribute builders (ir.AttrBuilder) or given as
Attribute objects, optional and default-valued attributes, the enums, the accessors of each group,
regions, successors, and a clear Python exception for wrong input.
"""

import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gentest_pkg"))

from tether import ir  # noqa: E402
from tether._mlir_version import MLIR_VERSION  # noqa: E402

import gentest  # noqa: E402
from gentest import _gentest_enum_gen, _gentest_ops_gen  # noqa: E402


class Env:
    """A context allowing unregistered dialects, an unknown location, and an insertion point at
    the end of a fresh module's body (all entered); common types; `value(type)` makes a value
    (a gentest.const result)."""

    def __init__(self):
        self.ctx = ir.Context()
        self.ctx.allow_unregistered_dialects = True
        self.loc = ir.Location.unknown(self.ctx)
        self.module = ir.Module.create(self.loc)
        self.i32 = ir.IntegerType.get_signless(32, self.ctx)
        self.i64 = ir.IntegerType.get_signless(64, self.ctx)
        self.f32 = ir.F32Type.get(self.ctx)
        self.index = ir.IndexType.get(self.ctx)

    def value(self, type, n=0):
        return gentest.const(type, n)

    def ops(self):
        return list(self.module.body.operations)


@pytest.fixture
def env():
    e = Env()
    with e.ctx, e.loc, ir.InsertionPoint(e.module.body):
        yield e


def text(op):
    """One op's generic form, without a trailing newline."""
    return str(op).strip()


def segment_sizes(op, name):
    return list(ir.DenseI32ArrayAttr(op.operation.attributes[name]))


def same(a, b):
    """The same IR values, in order."""
    return len(a) == len(b) and all(x == y for x, y in zip(a, b))


# ---- the generated modules ----------------------------------------------------------------------


def test_generated_modules_are_the_packages_own():
    # out_dir put both files in this package; they import its _ods_common (tether's names) and
    # register the enum builders with tether.ir's AttrBuilder.
    folder = os.path.join(HERE, "gentest_pkg", "gentest")
    assert os.path.dirname(os.path.abspath(_gentest_ops_gen.__file__)) == folder
    assert os.path.dirname(os.path.abspath(_gentest_enum_gen.__file__)) == folder
    assert _gentest_ops_gen._Dialect.DIALECT_NAMESPACE == "gentest"
    assert issubclass(_gentest_ops_gen._Dialect, ir.Dialect)
    assert _gentest_enum_gen.register_attribute_builder is ir.register_attribute_builder
    for kind in ("GenTest_Color", "GenTest_Flags", "GenTest_ShapeKind", "GenTest_ShapeAttr"):
        assert ir.AttrBuilder.contains(kind)
    names = {
        cls.OPERATION_NAME
        for cls in vars(gentest).values()
        if isinstance(cls, type) and issubclass(cls, ir.OpView) and cls is not ir.OpView
    }
    assert names == {
        "gentest.attrs", "gentest.branch", "gentest.const", "gentest.fixed", "gentest.keywords",
        "gentest.pack", "gentest.regions", "gentest.same_size", "gentest.segments",
        "gentest.triples",
    }
    # The rule's own touch: op classes without an instance dict.
    assert gentest.ConstOp.__slots__ == ()


def test_navigation_returns_the_generated_class(env):
    c = gentest.ConstOp(env.i64, 7)
    gentest.fixed(env.i32, env.f32, c)
    first, second = env.ops()
    assert type(first) is gentest.ConstOp and type(second) is gentest.FixedOp
    assert first.value == ir.IntegerAttr.get(env.i64, 7)


def test_navigation_class_in_fresh_contexts():
    # Regression: the class lookup cached by the name's identifier (bindings/python/opview.c) returned
    # the class of another op name once a destroyed context's identifier memory was reused by a
    # new context (about 4 rounds in 10 here before the fix).
    import tether

    wrong = []
    for i in range(60):
        cls = (gentest.PackOp, gentest.TriplesOp)[i % 2]
        ctx = ir.Context()
        ctx.allow_unregistered_dialects = True
        with ctx, ir.Location.unknown():
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                cls(*[[]] * (2 if cls is gentest.PackOp else 3))
            if type(module.body.operations[0]) is not cls:
                wrong.append(i)
        del ctx, module
        for _ in range(3):
            tether.collect()
    assert wrong == []


# ---- fixed numbers of results and operands ------------------------------------------------------


def test_one_result_op_function_returns_the_value(env):
    v = gentest.const(env.i64, 42)
    assert isinstance(v, ir.Value)
    assert v.type == env.i64
    assert text(v.owner) == '%0 = "gentest.const"() {value = 42 : i64} : () -> i64'
    op = v.owner.opview
    assert isinstance(op, gentest.ConstOp)
    assert op.out == v
    assert op.value == ir.IntegerAttr.get(env.i64, 42)


def test_two_result_op(env):
    c = env.value(env.i64)
    low, high = gentest.fixed(env.i32, env.f32, c)  # the function: a list of the two results
    assert (low.type, high.type) == (env.i32, env.f32)
    op = gentest.FixedOp(env.i32, env.f32, c.owner)  # an op with one result works as an operand
    assert op.input == c
    assert (op.low.type, op.high.type) == (env.i32, env.f32)
    assert (op.low.result_number, op.high.result_number) == (0, 1)
    assert text(op) == '%2:2 = "gentest.fixed"(%0) : (i64) -> (i32, f32)'
    assert len(op.operation.results) == 2


def test_no_result_op_function_returns_the_op(env):
    op = gentest.attrs(1, 1.0, "l", [], env.i32, [], [], True, "f", 0, 0, 0)
    # The op class's object on MLIR 22 (its function returns the op built), the Operation on 19.
    assert isinstance(op, gentest.AttrsOp if MLIR_VERSION >= 22 else ir.Operation)
    assert len(op.results) == 0
    assert op.name == "gentest.attrs"


def test_keyword_and_builder_parameter_names(env):
    # ODS names that are Python keywords or the builder's own parameters get a trailing "_".
    a, b = env.value(env.i32, 1), env.value(env.i64, 2)
    r = gentest.keywords(env.f32, a, b, "here", ip_=3, loc=ir.Location.name("kw"))
    op = r.owner.opview
    assert op.from_ == a and op.in_ == b and op.results_ == r
    assert op.loc_ == ir.StringAttr.get("here")
    assert op.ip_ == ir.IntegerAttr.get(env.i32, 3)
    assert str(op.location) == 'loc("kw")'
    assert gentest.KeywordsOp(env.f32, a, b, "x").ip_ is None


def test_ip_and_loc(env):
    first = env.value(env.i64, 1)
    v = gentest.const(env.i64, 2, ip=ir.InsertionPoint.at_block_begin(env.module.body),
                      loc=ir.Location.name("start"))
    assert env.ops()[0] == v.owner and env.ops()[1] == first.owner
    assert str(v.owner.location) == 'loc("start")'


# ---- variadic groups with segment attributes ----------------------------------------------------


def test_segments_operands_results_and_sizes(env):
    i32, i64, f32 = env.i32, env.i64, env.f32
    a, b, c, d, e = (env.value(t, n) for n, t in enumerate([i32, i64, f32, i32, i64]))
    op = gentest.SegmentsOp(
        i32, [f32, f32], i64, [i32], a, [b, c], [d, e, a], b, maybe=c)
    # Operand order: first, lhs..., maybe, rhs..., last.
    assert same(op.operation.operands, [a, b, c, c, d, e, a, b])
    assert segment_sizes(op, "operandSegmentSizes") == [1, 2, 1, 3, 1]
    assert segment_sizes(op, "resultSegmentSizes") == [1, 2, 1, 1]
    assert op.first == a
    assert same(op.lhs, [b, c])
    assert op.maybe == c
    assert same(op.rhs, [d, e, a])
    assert op.last == b
    results = list(op.operation.results)
    assert [r.type for r in results] == [i32, f32, f32, i64, i32]
    assert op.main == results[0]
    assert same(op.extras, results[1:3])
    assert op.flag == results[3]
    assert same(op.tail, results[4:])
    assert text(op) == (
        '%5:5 = "gentest.segments"(%0, %1, %2, %2, %3, %4, %0, %1) '
        '{operandSegmentSizes = array<i32: 1, 2, 1, 3, 1>, '
        'resultSegmentSizes = array<i32: 1, 2, 1, 1>} '
        ': (i32, i64, f32, f32, i32, i64, i32, i64) -> (i32, f32, f32, i64, i32)')


def test_segments_empty_groups_and_absent_optionals(env):
    a, b = env.value(env.i32, 1), env.value(env.i64, 2)
    # maybe omitted (an optional operand), flag=None (an optional result): empty segments.
    op = gentest.SegmentsOp(env.i32, [], None, [], a, [], [], b)
    assert segment_sizes(op, "operandSegmentSizes") == [1, 0, 0, 0, 1]
    assert segment_sizes(op, "resultSegmentSizes") == [1, 0, 0, 0]
    assert same(op.operation.operands, [a, b])
    assert op.maybe is None and op.flag is None
    assert len(op.lhs) == 0 and len(op.rhs) == 0 and len(op.extras) == 0 and len(op.tail) == 0
    assert op.first == a and op.last == b
    assert op.main.type == env.i32
    # The op function: several results, so a list of them.
    results = gentest.segments(env.i32, [env.f32], None, [], a, [a], [], b, maybe=None)
    assert [r.type for r in results] == [env.i32, env.f32]
    assert segment_sizes(results[0].owner.opview, "resultSegmentSizes") == [1, 1, 0, 0]


def test_segments_take_ops_and_result_lists(env):
    fixed = gentest.FixedOp(env.i32, env.f32, env.value(env.i64))
    one = gentest.ConstOp(env.i64, 3)
    # A variadic group given an op takes all its results; a single operand, an op with one result.
    op = gentest.SegmentsOp(env.i32, [], env.i64, [], one, fixed, fixed.operation.results, one)
    assert same(op.lhs, list(fixed.operation.results))
    assert same(op.rhs, list(fixed.operation.results))
    assert op.first == one.out and op.last == one.out


# ---- variadic groups of the same size (no segment attributes) -----------------------------------


def test_same_size_groups(env):
    i32, i64, f32 = env.i32, env.i64, env.f32
    h, x1, x2, y1, y2 = (env.value(i64, n) for n in range(5))
    op = gentest.SameSizeOp(i32, [f32, f32], i64, [i32, i64], h, [x1, x2], [y1, y2])
    assert "operandSegmentSizes" not in op.operation.attributes
    assert same(op.operation.operands, [h, x1, x2, y1, y2])
    assert op.head == h
    assert same(op.xs, [x1, x2]) and same(op.ys, [y1, y2])
    # Results: base, sizes..., offset, strides...: two single results among the groups.
    results = list(op.operation.results)
    assert [r.type for r in results] == [i32, f32, f32, i64, i32, i64]
    assert op.base == results[0]
    assert same(op.sizes, results[1:3])
    assert op.offset == results[3]
    assert same(op.strides, results[4:])

    empty = gentest.SameSizeOp(i32, [], i64, [], h, [], [])
    assert empty.head == h and len(empty.xs) == 0 and len(empty.ys) == 0
    assert empty.base.type == i32 and empty.offset.type == i64
    assert len(empty.sizes) == 0 and len(empty.strides) == 0


def test_same_size_groups_without_single_elements(env):
    vs = [env.value(env.index, n) for n in range(6)]
    op = gentest.TriplesOp(vs[0:2], vs[2:4], vs[4:6])
    assert same(op.lo, vs[0:2]) and same(op.hi, vs[2:4]) and same(op.step, vs[4:6])
    one = gentest.TriplesOp([vs[0]], [vs[1]], [vs[2]])
    assert same(one.lo, [vs[0]]) and same(one.hi, [vs[1]]) and same(one.step, [vs[2]])


def test_same_size_groups_of_different_sizes_raise(env):
    h = env.value(env.i64)
    # The builder does not check (MLIR's verifier would, for a registered op); the accessors say so.
    op = gentest.SameSizeOp(env.i32, [], env.i64, [], h, [h], [h, h])
    with pytest.raises(ValueError, match="cannot form 2 equally sized variadic groups"):
        op.xs
    with pytest.raises(ValueError, match="cannot form 3 equally sized"):
        gentest.TriplesOp([h], [h], [h, h]).lo


def test_one_variadic_group(env):
    a, b = env.value(env.i32), env.value(env.i64)
    values = gentest.pack([env.f32, env.i32], [a, b])
    op = values[0].owner.opview
    assert same(op.items, [a, b]) and same(op.values, values)
    assert not any(n.name.endswith("SegmentSizes") for n in op.operation.attributes)
    empty = gentest.PackOp([], [])
    assert len(empty.items) == 0 and len(empty.values) == 0
    assert text(empty) == '"gentest.pack"() : () -> ()'


# ---- attributes ---------------------------------------------------------------------------------

ATTRS_TEXT = (
    '"gentest.attrs"() {callee = @fn, color = 5 : i32, count = 3 : i32, dims = [1, 2], '
    'elem = f32, flag = true, flags = 5 : i32, items = [unit, "s"], label = "lbl", '
    'scale = 1.500000e+00 : f32, shape = #gentest<shape square>, sizes = array<i64: 3, 4>} '
    ': () -> ()')


def test_attributes_from_python_values(env):
    op = gentest.AttrsOp(
        3, 1.5, "lbl", [ir.UnitAttr.get(), ir.StringAttr.get("s")], env.f32, [1, 2], [3, 4],
        True, "fn", gentest.Color.Blue, gentest.Flags.Read | gentest.Flags.Exec,
        gentest.ShapeKind.Square)
    assert text(op) == ATTRS_TEXT
    assert ir.IntegerAttr(op.count).value == 3 and op.count.type == env.i32
    assert ir.FloatAttr(op.scale).value == 1.5 and op.scale.type == env.f32
    assert ir.StringAttr(op.label).value == "lbl"
    assert len(ir.ArrayAttr(op.items)) == 2
    assert ir.TypeAttr(op.elem).value == env.f32
    dims = ir.ArrayAttr(op.dims)
    assert [ir.IntegerAttr(d).value for d in dims] == [1, 2]
    assert all(ir.IntegerAttr(d).type == env.i64 for d in dims)
    assert list(ir.DenseI64ArrayAttr(op.sizes)) == [3, 4]
    assert ir.BoolAttr(op.flag).value is True
    assert ir.FlatSymbolRefAttr(op.callee).value == "fn"


def test_attributes_from_attribute_objects(env):
    # Attributes pass through as given (not rebuilt by the builders).
    op = gentest.AttrsOp(
        ir.IntegerAttr.get(env.i32, 3), ir.FloatAttr.get(env.f32, 1.5), ir.StringAttr.get("lbl"),
        ir.ArrayAttr.get([ir.UnitAttr.get(), ir.StringAttr.get("s")]), ir.TypeAttr.get(env.f32),
        ir.ArrayAttr.get([ir.IntegerAttr.get(env.i64, 1), ir.IntegerAttr.get(env.i64, 2)]),
        ir.DenseI64ArrayAttr.get([3, 4]), ir.BoolAttr.get(True), ir.FlatSymbolRefAttr.get("fn"),
        ir.IntegerAttr.get(env.i32, 5), ir.IntegerAttr.get(env.i32, 5),
        ir.Attribute.parse("#gentest<shape square>"))
    assert text(op) == ATTRS_TEXT
    # Any attribute is taken as it is (an unregistered op has no verifier to object).
    v = gentest.const(env.i64, ir.StringAttr.get("seven"))
    assert text(v.owner) == '%0 = "gentest.const"() {value = "seven"} : () -> i64'


def test_attribute_builders_are_the_registered_ones(env):
    # The generated code asks ir.AttrBuilder for the ODS kind: a builder registered with
    # replace=True is what it uses from then on.
    original = ir.AttrBuilder.get("I64Attr")
    seen = []

    def spy(x, context):
        seen.append(x)
        return original(x * 10, context)

    ir.register_attribute_builder("I64Attr", replace=True)(spy)
    try:
        v = gentest.const(env.i64, 4)
    finally:
        ir.AttrBuilder.insert("I64Attr", original, replace=True)
    assert seen == [4]
    assert v.owner.opview.value == ir.IntegerAttr.get(env.i64, 40)
    assert gentest.const(env.i64, 4).owner.opview.value == ir.IntegerAttr.get(env.i64, 4)


def _attrs(env, **kw):
    return gentest.AttrsOp(1, 2.0, "l", [], env.i32, [], [], False, "f", 0, 0, 0, **kw)


def test_optional_attributes(env):
    op = _attrs(env)
    for name in ("opt_int", "opt_str", "opt_color"):
        assert getattr(op, name) is None
        assert name not in op.operation.attributes
    assert op.fast is False and "fast" not in op.operation.attributes

    op = _attrs(env, opt_int=9, opt_str="s", opt_color=gentest.Color.None_, fast=True)
    assert op.opt_int == ir.IntegerAttr.get(env.i64, 9)
    assert op.opt_str == ir.StringAttr.get("s")
    assert op.opt_color == ir.IntegerAttr.get(env.i32, 6)
    assert op.fast is True
    assert "fast" in text(op) and "opt_int = 9 : i64" in text(op)

    # Setters: an Attribute sets, None removes; the deleter removes.
    op.opt_int = None
    assert op.opt_int is None and "opt_int" not in op.operation.attributes
    op.opt_int = ir.IntegerAttr.get(env.i64, 1)
    assert op.opt_int == ir.IntegerAttr.get(env.i64, 1)
    del op.opt_str
    assert op.opt_str is None
    op.fast = False
    assert op.fast is False and "fast" not in text(op)
    op.fast = True
    assert op.fast is True
    with pytest.raises(KeyError):
        del op.opt_str  # already absent


def test_unit_attribute_given_false_is_absent(env):
    assert "fast" not in text(_attrs(env, fast=False))
    assert "fast" not in text(_attrs(env, fast=None))


def test_default_valued_attributes(env):
    # Not given: absent (MLIR fills defaults in its C++ builders, which an unregistered op does
    # not have; upstream's generated classes do the same). The accessor then raises KeyError.
    op = _attrs(env)
    assert "dflt_int" not in op.operation.attributes
    assert "dflt_str" not in op.operation.attributes
    with pytest.raises(KeyError):
        op.dflt_int
    # Given: built like any other attribute, from a Python value or an Attribute.
    op = _attrs(env, dflt_int=9, dflt_str=ir.StringAttr.get("bye"))
    assert op.dflt_int == ir.IntegerAttr.get(env.i32, 9)
    assert op.dflt_str == ir.StringAttr.get("bye")
    op.dflt_int = ir.IntegerAttr.get(env.i32, 1)
    assert op.dflt_int == ir.IntegerAttr.get(env.i32, 1)


def test_mandatory_attribute_setters(env):
    op = _attrs(env)
    op.count = ir.IntegerAttr.get(env.i32, 8)
    assert op.count == ir.IntegerAttr.get(env.i32, 8)
    with pytest.raises(ValueError, match="'None' not allowed as value for mandatory attributes"):
        op.count = None
    with pytest.raises(TypeError, match="Attribute"):
        op.count = 5  # setters take Attributes (no builder)
    assert op.count == ir.IntegerAttr.get(env.i32, 8)


# ---- enums --------------------------------------------------------------------------------------


def test_enum_classes():
    Color, Flags, ShapeKind = gentest.Color, gentest.Flags, gentest.ShapeKind
    assert [(c.name, c.value) for c in Color] == [
        ("Red", 0), ("Green", 1), ("Blue", 5), ("None_", 6)]
    assert str(Color.Blue) == "blue" and str(Color.None_) == "none"
    assert Color.__doc__ == "a color"
    assert [(name, int(f)) for name, f in Flags.__members__.items()] == [
        ("none", 0), ("Read", 1), ("Write", 2), ("Exec", 4)]
    assert str(Flags.none) == "none"
    both = Flags.Read | Flags.Exec
    assert str(both) == "read|exec" and len(both) == 2
    assert list(both) == [Flags.Read, Flags.Exec]
    assert str(Flags.Write) == "write"
    assert [str(s) for s in ShapeKind] == ["round", "square"]


def test_enum_attribute_builders(env):
    attr = ir.AttrBuilder.get("GenTest_Color")(gentest.Color.Green, env.ctx)
    assert attr == ir.IntegerAttr.get(env.i32, 1)
    assert ir.AttrBuilder.get("GenTest_Flags")(gentest.Flags.Read | gentest.Flags.Write,
                                               env.ctx) == ir.IntegerAttr.get(env.i32, 3)
    shape = ir.AttrBuilder.get("GenTest_ShapeAttr")(gentest.ShapeKind.Round, env.ctx)
    assert str(shape) == "#gentest<shape round>"


def test_enum_attributes_of_an_op(env):
    op = _attrs(env, opt_color=gentest.Color.Blue)
    op2 = gentest.AttrsOp(1, 2.0, "l", [], env.i32, [], [], False, "f", gentest.Color.Green,
                          gentest.Flags.Write, gentest.ShapeKind.Round)
    # The accessor returns the attribute; the enum class turns its value back into the member.
    assert gentest.Color(ir.IntegerAttr(op2.color).value) is gentest.Color.Green
    assert gentest.Flags(ir.IntegerAttr(op2.flags).value) is gentest.Flags.Write
    assert str(op2.shape) == "#gentest<shape round>"
    assert gentest.Color(ir.IntegerAttr(op.opt_color).value) is gentest.Color.Blue
    # A plain int is an enum value too (the builder takes int(x)).
    assert gentest.Color(ir.IntegerAttr(op.color).value) is gentest.Color.Red


# ---- regions and successors ---------------------------------------------------------------------


def test_regions(env):
    a = env.value(env.i32)
    op = gentest.RegionsOp([env.i32], [a], 0)
    assert len(op.regions) == 2
    assert op.body == op.regions[0] and op.other == op.regions[1]
    assert len(op.rest) == 0
    op3 = gentest.RegionsOp([], [], 3)
    assert len(op3.regions) == 5 and len(op3.rest) == 3
    assert op3.rest[0] == op3.regions[2]
    assert all(len(r.blocks) == 0 for r in op3.regions)
    # The regions are the op's: fill them.
    block = op.body.blocks.append(env.i32)
    with ir.InsertionPoint(block):
        gentest.PackOp([], [block.arguments[0]])
    assert text(op) == (
        '%1 = "gentest.regions"(%0) ({\n'
        '^bb0(%arg0: i32):\n'
        '  "gentest.pack"(%arg0) : (i32) -> ()\n'
        '}, {\n'
        '}) : (i32) -> i32')
    v = gentest.regions_([env.f32], [], 1)  # the op function ("regions" clashes: "_")
    assert v.type == env.f32 and len(v.owner.regions) == 3


def test_successors(env):
    holder = gentest.RegionsOp([], [], 0)
    entry = holder.body.blocks.append(env.i32)
    second = holder.other.blocks.append()
    third = second.create_after(env.i64)
    a = env.value(env.i64)
    with ir.InsertionPoint(entry):
        op = gentest.BranchOp([entry.arguments[0], a], second, [third, second])
    assert len(op.successors) == 3
    assert [s == b for s, b in zip(op.successors, [second, third, second])] == [True] * 3
    assert same(op.args, [entry.arguments[0], a])
    assert text(op) == '"gentest.branch"(%arg0, %0)[^bb0, ^bb1, ^bb0] : (i32, i64) -> ()'
    with ir.InsertionPoint(third):
        only = gentest.branch([], third, [])
    assert len(only.successors) == 1 and only.successors[0] == third


# ---- what the rule corrects, in MLIR's own dialects (generated by the same rule) -----------------


def test_corrections_reach_mlirs_own_dialects():
    # LLVM 19's generated accessors of equally sized groups raise NameError (upstream's package
    # too), and an optional result of an op with result segments could not be omitted.
    from tether.dialects import func, gpu, memref

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        f32, index = ir.F32Type.get(), ir.IndexType.get()
        memref_type = ir.MemRefType.get([4, 8], f32)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("f", ([memref_type], []))
            with ir.InsertionPoint(fn.add_entry_block()):
                arg = fn.arguments[0]
                op = memref.ExtractStridedMetadataOp(arg)
                # base_buffer, offset, sizes (2), strides (2): two single results, two groups.
                assert op.base_buffer.result_number == 0
                assert op.offset.result_number == 1
                assert [r.result_number for r in op.sizes] == [2, 3]
                assert [r.result_number for r in op.strides] == [4, 5]
                size = gpu.SpMMBufferSizeOp([index], None, [], arg, arg, arg, f32)
                assert segment_sizes(size, "resultSegmentSizes") == [1, 0]
                assert [r.type for r in size.operation.results] == [index]


# ---- wrong input: Python exceptions, never a crash ----------------------------------------------


def _other_context_things():
    other = ir.Context()
    other.allow_unregistered_dialects = True
    with ir.Location.unknown(other) as loc:
        return other, loc, ir.IntegerType.get_signless(64), ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 1)


def _not_a_value(pattern19, message22):
    """What an operand that is no value raises: on MLIR 22 OpView.__init__'s ValueError (upstream
    22's message), on 19 the generated code's TypeError."""
    if MLIR_VERSION >= 22:
        return ValueError, re.escape(message22)
    return TypeError, pattern19


WRONG = [
    # (id, build(env, a) where a is an i32 value, exception, message pattern)
    ("none-operand", lambda e, a: gentest.FixedOp(e.i32, e.f32, None),
     *_not_a_value("expected a Value",
                   'Operand 0 of operation "gentest.fixed" must be a Value (contained a None '
                   'item)')),
    ("none-segmented-operand",
     lambda e, a: gentest.SegmentsOp(e.i32, [], None, [], None, [], [], a),
     *_not_a_value("expected a Value",
                   'Operand 0 of operation "gentest.segments" must be a Value (was None and '
                   'operand is not optional)')),
    ("none-in-group", lambda e, a: gentest.PackOp([], [a, None]),
     *_not_a_value("expected a Value",
                   'Operand 1 of operation "gentest.pack" must be a Value (contained a None '
                   'item)')),
    ("str-operand", lambda e, a: gentest.FixedOp(e.i32, e.f32, "a"),
     *_not_a_value("not str",
                   'Operand 0 of operation "gentest.fixed" must be a Value (is not a Value)')),
    ("type-as-operand", lambda e, a: gentest.FixedOp(e.i32, e.f32, e.i32),
     *_not_a_value("expected a Value",
                   'Operand 0 of operation "gentest.fixed" must be a Value (is not a Value)')),
    ("value-for-group", lambda e, a: gentest.PackOp([], a), TypeError, "not iterable"),
    ("missing-operand", lambda e, a: gentest.FixedOp(e.i32, e.f32), TypeError,
     "missing 1 required positional argument: 'input'"),
    ("missing-attribute", lambda e, a: gentest.ConstOp(e.i64), TypeError,
     "missing 1 required positional argument: 'value'"),
    ("none-attribute", lambda e, a: gentest.const(e.i64, None), TypeError, "not None"),
    ("none-result", lambda e, a: gentest.const(None, 1), ValueError,
     'Result 0 of operation "gentest.const" must be a Type'),
    ("str-result", lambda e, a: gentest.const("i64", 1), ValueError,
     'Result 0 of operation "gentest.const" must be a Type'),
    ("none-segmented-result", lambda e, a: gentest.SegmentsOp(None, [], None, [], a, [], [], a),
     ValueError, "was None and result is not optional"),
    ("none-in-result-group", lambda e, a: gentest.SegmentsOp(e.i32, [None], None, [], a, [], [], a),
     ValueError, "contained a None item"),
    ("type-for-result-group", lambda e, a: gentest.PackOp(e.i32, []), TypeError, "not iterable"),
    ("i64-str", lambda e, a: gentest.const(e.i64, "five"), TypeError, "int"),
    ("i64-float", lambda e, a: gentest.const(e.i64, 1.5), TypeError, "int"),
    ("i64-too-big", lambda e, a: gentest.const(e.i64, 2 ** 70), OverflowError, "64 bits"),
    ("i32-str", lambda e, a: gentest.AttrsOp("x", 1.0, "l", [], e.i32, [], [], True, "f", 0, 0, 0),
     TypeError, "int"),
    ("f32-str", lambda e, a: gentest.AttrsOp(1, "x", "l", [], e.i32, [], [], True, "f", 0, 0, 0),
     TypeError, "float"),
    ("str-int", lambda e, a: gentest.AttrsOp(1, 1.0, 5, [], e.i32, [], [], True, "f", 0, 0, 0),
     TypeError, "str"),
    ("array-of-ints", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [1], e.i32, [], [], True, "f", 0,
                                                   0, 0), TypeError, "not an Attribute"),
    ("type-str", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [], "i32", [], [], True, "f", 0, 0, 0),
     TypeError, "Type"),
    ("i64-array-str", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [], e.i32, ["x"], [], True, "f",
                                                   0, 0, 0), TypeError, "int"),
    ("dense-str", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [], e.i32, [], ["x"], True, "f", 0, 0,
                                               0), TypeError, "DenseI64ArrayAttr"),
    ("dense-int", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [], e.i32, [], 5, True, "f", 0, 0, 0),
     TypeError, "sequence"),
    ("bool-str", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [], e.i32, [], [], "yes", "f", 0, 0, 0),
     TypeError, "bool"),
    ("symbol-int", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [], e.i32, [], [], True, 3, 0, 0, 0),
     TypeError, "str"),
    ("enum-str", lambda e, a: gentest.AttrsOp(1, 1.0, "l", [], e.i32, [], [], True, "f", "red", 0,
                                              0), ValueError, "invalid literal for int"),
    ("object-attribute", lambda e, a: gentest.const(e.i64, object()), TypeError, "int"),
    ("regions-too-few", lambda e, a: gentest.RegionsOp([], [], -1), ValueError,
     'Operation "gentest.regions" requires a minimum of 2 regions but was built with regions=1'),
    ("regions-str", lambda e, a: gentest.RegionsOp([], [], "1"), TypeError, "unsupported operand"),
    ("successor-none", lambda e, a: gentest.BranchOp([], None, []), ValueError,
     "successor block cannot be None"),
    ("successor-value", lambda e, a: gentest.BranchOp([], a, []), TypeError, "Block"),
    ("attribute-of-other-context", lambda e, a: gentest.const(e.i64, _other_context_things()[3]),
     ValueError, "another context"),
    ("type-of-other-context", lambda e, a: gentest.const(_other_context_things()[2], 1),
     ValueError, "another context"),
    ("location-of-other-context", lambda e, a: gentest.const(e.i64, 1,
                                                             loc=_other_context_things()[1]),
     ValueError, "another context"),
]


@pytest.mark.parametrize("build,exc,pattern", [w[1:] for w in WRONG], ids=[w[0] for w in WRONG])
def test_wrong_input_raises(env, build, exc, pattern):
    a = env.value(env.i32)
    before = len(env.ops())
    with pytest.raises(exc, match=pattern):
        build(env, a)
    assert len(env.ops()) == before  # nothing was inserted
    env.module.operation.verify()


def test_no_location_raises():
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        # As upstream's: on MLIR 22 OpView.__init__ asks for the location (RuntimeError), on 19
        # the generated code reads Location.current (ValueError).
        if MLIR_VERSION >= 22:
            expected = RuntimeError, "requires a Location but none was provided"
        else:
            expected = ValueError, "No current Location"
        with pytest.raises(expected[0], match=expected[1]):
            gentest.const(ir.IntegerType.get_signless(64), 1)


def test_accessors_of_an_erased_op_raise(env):
    a = env.value(env.i32)
    op = gentest.SegmentsOp(env.i32, [env.f32], None, [], a, [a], [], a)
    same_size = gentest.SameSizeOp(env.i32, [], env.i64, [], a, [], [])
    attrs = _attrs(env, opt_int=1)
    for o in (op, same_size, attrs):
        o.operation.erase()
    for get in (lambda: op.lhs, lambda: op.first, lambda: op.flag, lambda: same_size.xs,
                lambda: same_size.offset, lambda: attrs.count, lambda: attrs.opt_int):
        with pytest.raises(ir.InvalidatedError):
            get()
