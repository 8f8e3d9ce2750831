"""The mlir.ir surface beyond the core (types, attributes, dense elements, affine, blocks), as
upstream's names and behaviour define it. Upstream's own suite runs too (tests/conformance); these
are tether's own checks, including the bad-input side upstream does not test.
"""

import array
import subprocess
import sys
import textwrap

import pytest

from tether import ir


@pytest.fixture
def ctx():
    with ir.Context() as c, ir.Location.unknown():
        c.allow_unregistered_dialects = True
        yield c


# ---- types ------------------------------------------------------------------------------------


def test_types_print_and_downcast(ctx):
    i32 = ir.IntegerType.get_signless(32)
    assert str(ir.IntegerType.get_unsigned(8)) == "ui8"
    assert ir.IntegerType(ir.Type.parse("si16")).is_signed
    t = ir.Type.parse("tensor<2x?xf32>")
    assert isinstance(t, ir.RankedTensorType)  # parsed types come back as their class
    assert t.shape == [2, ir.ShapedType.get_dynamic_size()]
    assert t.is_dynamic_dim(1) and not t.is_dynamic_dim(0)
    assert t.element_type == ir.F32Type.get()
    m = ir.MemRefType.get([4, 4], i32, memory_space=ir.Attribute.parse("1"))
    assert str(m) == "memref<4x4xi32, 1>"
    assert str(m.layout) == "affine_map<(d0, d1) -> (d0, d1)>"
    assert str(ir.ComplexType.get(ir.F64Type.get())) == "complex<f64>"
    assert str(ir.TupleType.get_tuple([i32, ir.IndexType.get()])) == "tuple<i32, index>"
    assert str(ir.FunctionType.get([i32], [i32, i32])) == "(i32) -> (i32, i32)"
    assert str(ir.Float8E4M3FNType.get()) == "f8E4M3FN"
    assert ir.IntegerType.static_typeid == i32.typeid
    assert ir.Type(i32).maybe_downcast().__class__ is ir.IntegerType


def test_type_errors(ctx):
    with pytest.raises(ir.MLIRError):
        ir.Type.parse("tensor<2x")
    with pytest.raises(ValueError):
        ir.IntegerType(ir.F32Type.get())  # a cast to the wrong class
    with pytest.raises(OverflowError):
        ir.IntegerType.get_signless(1 << 70)
    with pytest.raises(TypeError):
        ir.RankedTensorType.get(["a"], ir.F32Type.get())
    with pytest.raises(ir.MLIRError):
        ir.RankedTensorType.get([-5], ir.F32Type.get())  # verified by MLIR, reported


def test_types_of_another_context_are_refused(ctx):
    other = ir.Context()
    t = ir.IntegerType.get_signless(8, context=other)
    with pytest.raises(ValueError):
        ir.FunctionType.get([t], [ir.IntegerType.get_signless(8)])  # one type of each


# ---- attributes -------------------------------------------------------------------------------


def test_attributes_print_and_downcast(ctx):
    i32 = ir.IntegerType.get_signless(32)
    a = ir.IntegerAttr.get(i32, 7)
    assert str(a) == "7 : i32" and int(a) == 7 and a.value == 7
    assert float(ir.FloatAttr.get_f64(2.5)) == 2.5
    assert str(ir.StringAttr.get("x\ny")) == '"x\\0Ay"'
    assert ir.StringAttr.get("ab").value_bytes == b"ab"
    p = ir.Attribute.parse("array<i64: 1, 2, 3>")
    assert isinstance(p, ir.DenseI64ArrayAttr)
    assert list(p) == [1, 2, 3] and len(p) == 3
    s = ir.Attribute.parse("@a::@b")
    assert isinstance(s, ir.SymbolRefAttr)
    assert isinstance(ir.Attribute.parse("@f"), ir.FlatSymbolRefAttr)
    assert isinstance(ir.Attribute.parse("true"), ir.BoolAttr)
    d = ir.DictAttr.get({"k": ir.UnitAttr.get()})
    assert "k" in d and isinstance(d["k"], ir.UnitAttr)
    with pytest.raises(KeyError):
        d["missing"]


def test_dense_elements_from_buffers(ctx):
    f32 = ir.F32Type.get()
    buf = array.array("f", [1.0, 2.0, 3.0, 4.0])
    a = ir.DenseElementsAttr.get(buf, type=f32, shape=[2, 2])
    assert str(a) == "dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>"
    # As upstream: DenseElementsAttr.get gives a DenseElementsAttr; the cast or a parse gives the
    # specific class.
    assert type(a) is ir.DenseElementsAttr
    a = ir.DenseFPElementsAttr(a)
    assert a.is_splat is False and len(a) == 4
    s = ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([3], f32), ir.FloatAttr.get(f32, 1.5))
    assert s.is_splat and float(s.get_splat_value()) == 1.5
    with pytest.raises(ValueError):
        ir.DenseElementsAttr.get(array.array("f", [1.0, 2.0, 3.0]), type=f32, shape=[2, 2])


def test_dense_elements_without_numpy():
    # numpy is optional: the buffer protocol path works in an interpreter where it cannot import.
    code = textwrap.dedent("""
        import sys, array
        sys.modules["numpy"] = None
        from tether import ir
        with ir.Context(), ir.Location.unknown():
            a = ir.DenseElementsAttr.get(array.array("i", [1, 2]), type=ir.IntegerType.get_signless(32))
            assert str(a) == "dense<[1, 2]> : tensor<2xi32>", str(a)
            assert [int(x) for x in ir.DenseIntElementsAttr(a)] == [1, 2]
        print("ok")
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


# ---- affine -----------------------------------------------------------------------------------


def test_affine_expressions_and_maps(ctx):
    d0, d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)
    s0 = ir.AffineSymbolExpr.get(0)
    e = d0 * 2 + d1 - s0
    assert str(e) == "d0 * 2 + d1 - s0"
    assert isinstance(d0 % 4, ir.AffineModExpr)
    m = ir.AffineMap.get(2, 1, [e, ir.AffineExpr.get_floor_div(d1, 3)])
    assert str(m) == "(d0, d1)[s0] -> (d0 * 2 + d1 - s0, d1 floordiv 3)"
    assert m.n_dims == 2 and m.n_symbols == 1 and len(m.results) == 2
    assert str(ir.AffineMap.get_permutation([1, 0])) == "(d0, d1) -> (d1, d0)"
    with pytest.raises(RuntimeError):  # upstream's cast_error
        ir.AffineMap.get_permutation([0, 0])
    with pytest.raises(ZeroDivisionError):  # MLIR would fold 4 floordiv 0 and crash
        ir.AffineExpr.get_floor_div(ir.AffineConstantExpr.get(4), 0)
    with pytest.raises(ValueError):
        m.get_submap([5])
    iset = ir.IntegerSet.get(1, 0, [d0 - 1], [False])
    assert str(iset) == "(d0) : (d0 - 1 >= 0)"
    assert iset.n_inequalities == 1


# ---- blocks -----------------------------------------------------------------------------------


def test_block_append_to_moves_an_attached_block(ctx):
    m = ir.Module.parse(
        '"t.a"() ({\n^bb0(%x: i32):\n  "t.u"(%x) : (i32) -> ()\n}, {\n}) : () -> ()')
    a = m.body.operations[0]
    b = a.regions[0].blocks[0]
    user = b.operations[0]
    b.append_to(a.regions[1])
    assert len(a.regions[0].blocks) == 0 and len(a.regions[1].blocks) == 1
    assert a.regions[1].blocks[0] == b and b.operations[0] == user
    assert user.operands[0] == b.arguments[0]
    m.operation.verify()


def test_block_append_to_a_region_inside_it_is_refused(ctx):
    m = ir.Module.parse('"t.o"() ({\n^bb0:\n  "t.i"() ({\n  ^bb1:\n    "t.z"() : () -> ()\n  }) : () -> ()\n}) : () -> ()')
    outer = m.body.operations[0].regions[0].blocks[0]
    with pytest.raises(ValueError):
        outer.append_to(outer.operations[0].regions[0])
    assert len(m.body.operations[0].regions[0].blocks) == 1


def test_detached_block_values_keep_their_users_alive(ctx):
    # A block moved out and dropped while a user elsewhere still uses its argument: the block's
    # tree stays alive (the user's tree depends on it), printing never touches freed memory.
    code = textwrap.dedent("""
        import gc, tether
        from tether import ir
        with ir.Context() as c, ir.Location.unknown():
            c.allow_unregistered_dialects = True
            m = ir.Module.parse('"t.a"() ({\\n^bb0(%x: i32):\\n  "t.u"(%x) : (i32) -> ()\\n}) : () -> ()')
            blk = m.body.operations[0].regions[0].blocks[0]
            user = blk.operations[0]
            user.move_before(m.body.operations[0])
            r = ir.Region()
            blk.append_to(r)
            del blk, r
            gc.collect(); tether.collect(); tether.collect()
            s = str(m)
            assert '"t.u"' in s, s
        print("ok")
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", (p.returncode, p.stderr)
