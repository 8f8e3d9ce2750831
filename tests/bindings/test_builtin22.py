"""MLIR 22's additions to the builtin types, attributes, locations and Context (upstream 22's
`mlir.ir`): new float types, IntegerType.get(signedness), ShapedType.is_static_*, get_unchecked,
type_name / attr_name, IntegerSetAttr, no static isinstance; each with hostile arguments and values
of another context."""

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION

pytestmark = pytest.mark.skipif(MLIR_VERSION < 22, reason="MLIR 22's mlir.ir surface")

NEW_FLOATS = [
    ("Float4E2M1FNType", "f4E2M1FN"),
    ("Float6E2M3FNType", "f6E2M3FN"),
    ("Float6E3M2FNType", "f6E3M2FN"),
    ("Float8E3M4Type", "f8E3M4"),
    ("Float8E8M0FNUType", "f8E8M0FNU"),
]


@pytest.mark.parametrize("name,text", NEW_FLOATS)
def test_new_float_types(ctx, name, text):
    cls = getattr(ir, name)
    t = cls.get()
    assert str(t) == text and type(t) is cls and isinstance(t, ir.FloatType)
    assert repr(t) == f"{name}({text})"
    parsed = ir.Type.parse(text)
    assert type(parsed) is cls and parsed == t
    assert cls.static_typeid == t.typeid
    assert t.width in (4, 6, 8)
    assert cls.type_name == "builtin." + text
    with pytest.raises(ValueError, match=f"Cannot cast type to {name}"):
        cls(ir.F32Type.get())
    with pytest.raises(TypeError):
        cls.get(context="not a context")
    other = ir.Context()
    assert cls.get(context=other).context is other


def test_dense_elements_of_bools(ctx):
    # Upstream 22 packs numpy bools into i1 elements (8 to a byte) and unpacks them again.
    import numpy as np  # tools/setup.sh installs it: a missing numpy fails, never skips
    for shape in [(1,), (2, 3), (9,), (3, 5, 7), (0,)]:
        values = np.random.default_rng(len(shape)).random(shape) < 0.5
        attr = ir.DenseElementsAttr.get(values)
        assert str(attr.type) == "tensor<" + "x".join(map(str, shape)) + "xi1>"
        back = np.array(attr)
        assert back.dtype == np.bool_ and back.shape == shape and (back == values).all()
        assert len(attr) == values.size
    splat = ir.DenseElementsAttr.get(np.ones((4, 4), dtype=np.bool_))
    assert str(splat) == "dense<true> : tensor<4x4xi1>" and np.array(splat).all()
    # A strided view (not C-contiguous) is refused by the buffer request, not misread.
    with pytest.raises((ValueError, BufferError, TypeError)):
        ir.DenseElementsAttr.get(np.ones((4, 4), dtype=np.bool_)[:, ::2])


def test_integer_type_signedness(ctx):
    S = ir.IntegerType.Signedness
    assert [m.name for m in S] == ["SIGNLESS", "SIGNED", "UNSIGNED"]
    assert ir.IntegerType.SIGNED is S.SIGNED
    assert str(ir.IntegerType.get(8)) == "i8"
    assert str(ir.IntegerType.get(16, ir.IntegerType.SIGNED)) == "si16"
    assert str(ir.IntegerType.get(64, signedness=S.UNSIGNED)) == "ui64"
    assert ir.IntegerType.get(8).signedness is S.SIGNLESS
    assert ir.IntegerType.get_signed(8).signedness is S.SIGNED
    assert ir.IntegerType.get_unsigned(8).signedness is S.UNSIGNED
    assert "SIGNLESS" in str(ir.IntegerType.get(1).signedness)
    other = ir.Context()
    assert ir.IntegerType.get(3, S.SIGNED, other).context is other
    for bad in (1, "SIGNED", None, 1.0):
        with pytest.raises(TypeError):
            ir.IntegerType.get(8, bad)
    for width in (-1, 2**64, 2**24):
        with pytest.raises((OverflowError, ValueError)):
            ir.IntegerType.get(width)
    with pytest.raises(TypeError):
        ir.IntegerType.get("8")


def test_shaped_type_is_static(ctx):
    v = ir.VectorType(ir.Type.parse("vector<2x3xf32>"))
    t = ir.RankedTensorType(ir.Type.parse("tensor<?x3xf32>"))
    dyn = ir.ShapedType.get_dynamic_size()
    assert v.is_static_dim(0) and not t.is_static_dim(0) and t.is_static_dim(1)
    assert ir.ShapedType.is_static_size(3) and not ir.ShapedType.is_static_size(dyn)
    assert v.is_static_stride_or_offset(1)
    assert not v.is_static_stride_or_offset(ir.ShapedType.get_dynamic_stride_or_offset())
    for bad in (-1, 2, 2**70):
        with pytest.raises((ValueError, OverflowError)):
            v.is_static_dim(bad)
    with pytest.raises(TypeError):
        v.is_static_dim("0")
    with pytest.raises(OverflowError):
        ir.ShapedType.is_static_size(2**64)
    unranked = ir.UnrankedTensorType(ir.Type.parse("tensor<*xf32>"))
    with pytest.raises(ValueError, match="requires that the type has a rank"):
        unranked.is_static_dim(0)
    with pytest.raises(ValueError, match="requires that the type has a rank"):
        unranked.is_static_stride_or_offset(0)


def test_get_unchecked(ctx):
    f32 = ir.F32Type.get()
    assert str(ir.VectorType.get_unchecked([2, 3], f32)) == "vector<2x3xf32>"
    assert str(ir.VectorType.get_unchecked([2, 3], f32, scalable=[False, True])) == \
        "vector<2x[3]xf32>"
    assert str(ir.RankedTensorType.get_unchecked([2], f32)) == "tensor<2xf32>"
    assert str(ir.UnrankedTensorType.get_unchecked(f32)) == "tensor<*xf32>"
    assert str(ir.MemRefType.get_unchecked([4], f32)) == "memref<4xf32>"
    two = ir.Attribute.parse("2")
    assert str(ir.UnrankedMemRefType.get_unchecked(f32, two)) == "memref<*xf32, 2>"
    assert str(ir.FloatAttr.get_unchecked(f32, 1.5)) == "1.500000e+00 : f32"
    # What MLIR would refuse (or assert on) raises, as the checked getters do.
    none = ir.NoneType.get()
    with pytest.raises(ir.MLIRError, match="Invalid type"):
        ir.VectorType.get_unchecked([2], none)
    with pytest.raises(ir.MLIRError, match="Invalid type"):
        ir.RankedTensorType.get_unchecked([-5], f32)
    with pytest.raises(ir.MLIRError, match="Invalid type"):
        ir.MemRefType.get_unchecked([2], ir.FunctionType.get([], []))
    with pytest.raises(ir.MLIRError, match="Invalid attribute"):
        ir.FloatAttr.get_unchecked(ir.IntegerType.get_signless(32), 1.0)
    with pytest.raises(TypeError):
        ir.VectorType.get_unchecked([2], f32, loc=ir.Location.unknown())
    with pytest.raises(OverflowError):
        ir.VectorType.get_unchecked([2**64], f32)


def test_values_of_another_context_are_refused(ctx):
    other = ir.Context()
    f32_other = ir.F32Type.get(context=other)
    f32 = ir.F32Type.get()
    loc = ir.Location.unknown()
    with pytest.raises(ValueError, match="another context"):
        ir.VectorType.get([2], f32_other, loc=loc)
    with pytest.raises(ValueError, match="another context"):
        ir.VectorType.get_unchecked([2], f32_other)
    with pytest.raises(ValueError, match="another context"):
        ir.RankedTensorType.get([2], f32, encoding=ir.Attribute.parse("1", other))
    with pytest.raises(ValueError, match="another context"):
        ir.MemRefType.get([2], f32, memory_space=ir.Attribute.parse("1", other))
    with pytest.raises(ValueError, match="another context"):
        ir.UnrankedMemRefType.get_unchecked(f32_other, None)
    with pytest.raises(ValueError, match="another context"):
        ir.FloatAttr.get(f32_other, 1.0, loc=loc)
    with pytest.raises(ValueError, match="another context"):
        ir.FloatAttr.get_unchecked(f32, 1.0, context=other)
    assert ir.VectorType.get_unchecked([2], f32_other, context=other).context is other


TYPE_NAMES = {
    "IntegerType": "builtin.integer", "IndexType": "builtin.index", "F32Type": "builtin.f32",
    "BF16Type": "builtin.bf16", "NoneType": "builtin.none", "ComplexType": "builtin.complex",
    "VectorType": "builtin.vector", "RankedTensorType": "builtin.tensor",
    "UnrankedTensorType": "builtin.unranked_tensor", "MemRefType": "builtin.memref",
    "UnrankedMemRefType": "builtin.unranked_memref", "TupleType": "builtin.tuple",
    "FunctionType": "builtin.function", "OpaqueType": "builtin.opaque",
}

ATTR_NAMES = {
    "AffineMapAttr": "builtin.affine_map", "IntegerSetAttr": "builtin.integer_set",
    "ArrayAttr": "builtin.array", "IntegerAttr": "builtin.integer",
    "SymbolRefAttr": "builtin.symbol_ref", "OpaqueAttr": "builtin.opaque",
    "DictAttr": "builtin.dictionary", "TypeAttr": "builtin.type", "UnitAttr": "builtin.unit",
    "StridedLayoutAttr": "builtin.strided_layout",
    "DenseResourceElementsAttr": "builtin.dense_resource_elements",
    "StringAttr": "builtin.string", "FloatAttr": "builtin.float",
}


def test_type_and_attr_names():
    for cls, name in TYPE_NAMES.items():
        assert getattr(ir, cls).type_name == name, cls
    for cls, name in ATTR_NAMES.items():
        assert getattr(ir, cls).attr_name == name, cls
    with ir.Context():
        assert ir.IntegerType.get_signless(4).type_name == "builtin.integer"


def test_no_static_isinstance():
    # Upstream 22 removed X.isinstance(value): Python's isinstance does it (values come out of
    # MLIR as their class).
    for cls in (ir.IntegerType, ir.F32Type, ir.ShapedType, ir.StringAttr, ir.ArrayAttr,
                ir.AffineMapAttr, ir.IntegerSetAttr, ir.AffineAddExpr, ir.DenseElementsAttr):
        assert not hasattr(cls, "isinstance"), cls


def test_integer_set_attr(ctx):
    d0, d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)
    s0 = ir.AffineSymbolExpr.get(0)
    s = ir.IntegerSet.get(2, 1, [d0 - d1, s0 - ir.AffineConstantExpr.get(42)], [True, False])
    a = ir.IntegerSetAttr.get(s)
    assert type(a) is ir.IntegerSetAttr
    assert str(a) == "affine_set<(d0, d1)[s0] : (d0 - d1 == 0, s0 - 42 >= 0)>"
    parsed = ir.Attribute.parse(str(a))
    assert type(parsed) is ir.IntegerSetAttr and parsed == a
    assert ir.IntegerSetAttr.get(integer_set=s) == a
    assert ir.IntegerSetAttr.static_typeid == a.typeid
    assert repr(a) == f"IntegerSetAttr({a})"
    with pytest.raises(ValueError, match="Cannot cast attribute to IntegerSetAttr"):
        ir.IntegerSetAttr(ir.UnitAttr.get())
    for bad in (None, 1, ir.AffineMap.get_identity(2), a):
        with pytest.raises(TypeError):
            ir.IntegerSetAttr.get(bad)
    # The attribute keeps its context alive.
    other = ir.Context()
    a2 = ir.IntegerSetAttr.get(ir.IntegerSet.get_empty(1, 0, other))
    del other
    import gc
    gc.collect()
    assert str(a2) == "affine_set<(d0) : (1 == 0)>"


# ---- Location --------------------------------------------------------------------------------


def test_location_file_range_and_parts(ctx):
    loc = ir.Location.file("foo1.txt", 123, 56)
    rng = ir.Location.file("foo2.txt", 123, 56, 124, 100)
    assert str(loc) == 'loc("foo1.txt":123:56)'
    assert str(rng) == 'loc("foo2.txt":123:56 to 124:100)'
    assert ir.Location.file(filename="f", start_line=1, start_col=2, end_line=3, end_col=4) == \
        ir.Location.file("f", 1, 2, 3, 4)
    assert ir.Location.file("f", 1, 2, context=ctx) == ir.Location.file("f", line=1, col=2)
    assert loc.is_a_file() and not loc.is_a_name() and not loc.is_a_callsite()
    assert not loc.is_a_fused()
    assert (loc.filename, loc.start_line, loc.start_col, loc.end_line, loc.end_col) == \
        ("foo1.txt", 123, 56, 123, 56)
    assert (rng.filename, rng.start_line, rng.start_col, rng.end_line, rng.end_col) == \
        ("foo2.txt", 123, 56, 124, 100)
    other = ir.Context()
    assert ir.Location.file("f", 1, 2, 3, 4, other).context is other
    for bad in [("f", -1, 2, 3, 4), ("f", 1, 2, 3, 2**40), ("f", 1, 2, 3, "4"), (1, 1, 2, 3, 4)]:
        with pytest.raises((TypeError, OverflowError)):
            ir.Location.file(*bad)
    with pytest.raises(TypeError):
        ir.Location.file("f", 1, 2, 3)  # end_col missing
    with pytest.raises(TypeError):
        ir.Location.file("f", 1, 2, 3, 4, 5)
    assert ir.Location.file("a\0b", 1, 2).filename == "a\0b"  # a NUL is kept


def test_location_name_callsite_fused(ctx):
    n = ir.Location.name("nombre")
    child = ir.Location.name("naam", n)
    assert n.is_a_name() and n.name_str == "nombre" and str(n.child_loc) == "loc(unknown)"
    assert child.name_str == "naam" and child.child_loc == n
    cs = ir.Location.callsite(ir.Location.file("foo.text", 123, 45),
                              [ir.Location.file("util.foo", 379, 21),
                               ir.Location.file("main.foo", 100, 63)])
    assert cs.is_a_callsite() and str(cs.callee) == 'loc("foo.text":123:45)'
    assert str(cs.caller) == 'loc(callsite("util.foo":379:21 at "main.foo":100:63))'
    fused = ir.Location.fused([ir.Location.name("apple"), ir.Location.name("banana")])
    assert fused.is_a_fused() and [str(x) for x in fused.locations] == \
        ['loc("apple")', 'loc("banana")']
    assert ir.Location.unknown().locations == [] and n.locations == []
    assert [str(x) for x in ir.Location.fused([], ir.Attribute.parse('"m"')).locations] == \
        ["loc(unknown)"]
    # The parts of another kind of location raise (MLIR's C API would crash on them); the line
    # and column numbers are -1, as the C API answers.
    unknown = ir.Location.unknown()
    for loc, attrs in [(unknown, ["filename", "callee", "caller", "name_str", "child_loc"]),
                       (n, ["filename", "callee", "caller"]),
                       (cs, ["filename", "name_str", "child_loc"]),
                       (fused, ["filename", "callee", "name_str"])]:
        for a in attrs:
            with pytest.raises(ValueError, match="the location is not a"):
                getattr(loc, a)
    assert (unknown.start_line, unknown.end_col) == (-1, -1)


def test_location_current_is_none_outside():
    assert ir.Location.current is None
    with ir.Context(), ir.Location.unknown() as loc:
        assert ir.Location.current is loc
    assert ir.Location.current is None


def test_location_parts_keep_the_context_alive():
    import gc
    c = ir.Context()
    cs = ir.Location.callsite(ir.Location.name("a", context=c), [ir.Location.file("f", 1, 2,
                                                                                  context=c)])
    del c
    gc.collect()
    callee, caller = cs.callee, cs.caller
    del cs
    gc.collect()
    assert (callee.name_str, caller.filename) == ("a", "f")


# ---- Context, ThreadPool ---------------------------------------------------------------------


def test_thread_pool_and_context():
    tp = ir.ThreadPool()
    n = tp.get_max_concurrency()
    assert n > 0 and tp.get_max_concurrency() == n
    c5 = ir.Context()
    c5.set_thread_pool(tp)
    assert c5.get_num_threads() == n
    assert c5._mlir_thread_pool_ptr() == tp._mlir_thread_pool_ptr()
    assert tp._mlir_thread_pool_ptr().startswith("0x")
    c7 = ir.Context(thread_pool=tp)
    assert c7.get_num_threads() == n and c7._mlir_thread_pool_ptr() == tp._mlir_thread_pool_ptr()
    plain = ir.Context()
    plain.enable_multithreading(False)
    assert plain.get_num_threads() == 1
    for bad in (None, 1, "pool", plain):
        with pytest.raises(TypeError):
            plain.set_thread_pool(bad)
    with pytest.raises(TypeError):
        ir.Context(thread_pool=1)
    with pytest.raises(TypeError):
        ir.ThreadPool(4)
    with pytest.raises(TypeError):
        ir.Context(None, None, None)


def test_thread_pool_outlives_its_object(run_snippet):
    # The pool a context uses stays valid when the ThreadPool object goes (MLIR would run the
    # context's parallel work on freed threads): a pass pipeline runs multithreaded afterwards.
    run_snippet("""
import gc
from tether import ir
from tether.passmanager import PassManager
ctx = ir.Context(thread_pool=ir.ThreadPool())
gc.collect()
m = ir.Module.parse("\\n".join(
    "func.func @f%d(%%a: i32) -> i32 { %%0 = arith.addi %%a, %%a : i32 return %%0 : i32 }" % i
    for i in range(64)), ctx)
del ctx
gc.collect()
for _ in range(3):
    PassManager.parse("builtin.module(func.func(canonicalize,cse))", m.context).run(m.operation)
assert m.context.get_num_threads() >= 1
print(str(m).count("func.func"))
""")


def test_context_load_on_create_dialects():
    ctx = ir.Context(load_on_create_dialects=["func", "arith"])
    assert ctx.dialects.func.descriptor.namespace == "func"
    with pytest.raises(IndexError):
        ir.Context(load_on_create_dialects=["no_such_dialect"])
    with pytest.raises(TypeError):
        ir.Context(load_on_create_dialects=[1])
    with pytest.raises(TypeError):
        ir.Context(load_on_create_dialects=5)
    lst = ir.get_load_on_create_dialects()
    assert isinstance(lst, list)
    ir.append_load_on_create_dialect("func")
    assert ir.get_load_on_create_dialects()[-1] == "func"
    lst.pop()


# ---- OpAttributeMap, AffineExpr --------------------------------------------------------------


def test_op_attribute_map_views(ctx):
    import collections.abc
    ctx.allow_unregistered_dialects = True
    op = ir.Operation.create("custom.op", attributes={
        "some.attribute": ir.IntegerAttr.get(ir.IntegerType.get_signless(8), 1),
        "other.attribute": ir.StringAttr.get("x"), "dependent": ir.UnitAttr.get()})
    attrs = op.attributes
    assert sorted(attrs.keys()) == ["dependent", "other.attribute", "some.attribute"]
    assert sorted(attrs) == sorted(attrs.keys())
    assert [type(v) for v in attrs.values()] == [type(attrs[k]) for k in attrs.keys()]
    assert dict(attrs.items())["other.attribute"] == ir.StringAttr.get("x")
    assert attrs.get("dependent") == ir.UnitAttr.get()
    assert attrs.get("missing") is None and attrs.get("missing", 7) == 7
    assert attrs.get(key="missing", default="d") == "d"
    assert isinstance(attrs, collections.abc.Mapping)
    with pytest.raises(TypeError):
        attrs.get(0)
    with pytest.raises(TypeError):
        attrs.get()
    op.erase()
    for f in (attrs.keys, attrs.values, attrs.items, lambda: list(attrs),
              lambda: attrs.get("dependent")):
        with pytest.raises(ir.InvalidatedError):
            f()


def test_affine_expr_shift_and_simplify(ctx):
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    s = [ir.AffineSymbolExpr.get(i) for i in range(4)]
    assert (d[2] + d[3]) == (d[0] + d[1]).shift_dims(2, 2)
    assert (s[2] + s[3]) == (s[0] + s[1]).shift_symbols(2, 2, 0)
    assert (d[0] + d[3]) == (d[0] + d[1]).shift_dims(num_dims=2, shift=2, offset=1)
    # Huge counts are the same shift (positions the expression does not use change nothing).
    assert (d[0] + d[1]).shift_dims(2**32 - 1, 2) == (d[0] + d[1]).shift_dims(2, 2)
    assert (d[0] + d[1]).shift_dims(2, 2, 2**32 - 1) == d[0] + d[1]
    e = d[0] * 2 + d[0] * 3
    simple = ir.AffineExpr.simplify_affine_expr(e, 1, 0)
    assert str(simple) == "d0 * 5" and type(simple) is ir.AffineMulExpr
    assert ir.AffineExpr.simplify_affine_expr(expr=d[0] + s[0], num_dims=1, num_symbols=1) == \
        d[0] + s[0]
    with pytest.raises(ValueError, match="uses dimension 3"):
        ir.AffineExpr.simplify_affine_expr(d[3], 1, 0)
    with pytest.raises(ValueError, match="uses symbol 2"):
        ir.AffineExpr.simplify_affine_expr(s[2] + d[0], 1, 1)
    with pytest.raises(ValueError, match="2\\*\\*16"):
        ir.AffineExpr.simplify_affine_expr(d[0], 2**20, 0)
    # Division by zero stays (MLIR leaves undefined expressions alone).
    z = ir.AffineExpr.get_floor_div(d[0], ir.AffineConstantExpr.get(0))
    assert ir.AffineExpr.simplify_affine_expr(z, 1, 0) == z
    for bad in (-1, 2**32, "1", None):
        with pytest.raises(TypeError):
            d[0].shift_dims(bad, 1)
        with pytest.raises(TypeError):
            ir.AffineExpr.simplify_affine_expr(d[0], bad, 0)
    with pytest.raises(TypeError):
        ir.AffineExpr.simplify_affine_expr("d0", 1, 0)
    assert type(ir.AffineAddExpr(d[0] + d[1]).maybe_downcast()) is ir.AffineAddExpr
    assert type((d[0] + 1).maybe_downcast()) is ir.AffineAddExpr
