"""tether.dialects.quant (the quantized types) and tether.dialects.sparse_tensor (EncodingAttr,
LevelFormat, LevelProperty): values, printed forms and exceptions as a program observes them.

MLIR's C APIs for both create types and attributes without running MLIR's verifier, and what the
verifier would reject crashes later (in the printer, in a pass). tether checks first: the
differential tests below build the same values through the constructors and through MLIR's parser
(which verifies) and expect the same verdict, the same value and the same message; the bad-input
tests run in a fresh interpreter, where a crash fails the test instead of the run."""

import itertools
import re

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION
from tether.dialects import quant
from tether.dialects import sparse_tensor as st

DENSE, BATCH, COMPRESSED, SINGLETON, LOOSE = 0x10000, 0x20000, 0x40000, 0x80000, 0x100000
NU, NO, SOA = 0x1, 0x2, 0x4


def n_out_of_m(n, m):
    return 0x200000 | (n << 32) | (m << 40)


@pytest.fixture
def types(ctx):
    return ir.IntegerType.get_signless(8), ir.F32Type.get()


# ---- quant --------------------------------------------------------------------------------------


def test_parsed_quantized_types_cast_to_their_classes(ctx):
    parsed = {
        quant.AnyQuantizedType: ir.Type.parse("!quant.any<i8<-8:7>:f32>"),
        quant.UniformQuantizedType: ir.Type.parse("!quant.uniform<i8<-8:7>:f32, 0.99872:127>"),
        quant.UniformQuantizedPerAxisType: ir.Type.parse("!quant.uniform<i8:f32:1, {2.0e+2,0.99872:120}>"),
        quant.CalibratedQuantizedType: ir.Type.parse("!quant.calibrated<f32<-0.998:1.2321>>"),
    }
    for cls, t in parsed.items():
        if MLIR_VERSION >= 22:
            # As upstream 22: casters (the C API has TypeIDs), and no static isinstance.
            assert type(t) is cls and cls.static_typeid == t.typeid
            assert not hasattr(cls, "isinstance")
            assert cls.type_name.startswith("quant.")
        else:
            # As upstream 19: no caster (the C API has no TypeIDs), the class casts.
            assert type(t) is ir.Type
            assert quant.QuantizedType.isinstance(t) and cls.isinstance(t)
            assert [c.isinstance(t) for c in parsed] == [c is cls for c in parsed]
            assert not hasattr(cls, "static_typeid")
            assert type(t.maybe_downcast()) is ir.Type
        cast = cls(t)
        assert type(cast) is cls and isinstance(cast, quant.QuantizedType) and cast == t
        assert repr(cast) == f"{cls.__name__}({t})"
        assert type(cast.maybe_downcast()) is cls
    if MLIR_VERSION < 22:
        assert not quant.QuantizedType.isinstance(ir.IntegerType.get_signless(8))
    with pytest.raises(ValueError, match="Cannot cast type to UniformQuantizedType"):
        quant.UniformQuantizedType(parsed[quant.AnyQuantizedType])
    with pytest.raises(ValueError, match="Cannot cast type to QuantizedType"):
        quant.QuantizedType(ir.F32Type.get())


def test_any_quantized_type(types):
    i8, f32 = types
    t = quant.AnyQuantizedType.get(quant.QuantizedType.FLAG_SIGNED, i8, f32, -8, 7)
    assert type(t) is quant.AnyQuantizedType
    assert quant.QuantizedType.FLAG_SIGNED == quant.AnyQuantizedType.FLAG_SIGNED == 1
    assert (t.flags, t.is_signed, t.storage_type_min, t.storage_type_max) == (1, True, -8, 7)
    assert t.storage_type == i8 and type(t.storage_type) is ir.IntegerType
    assert t.expressed_type == f32 and type(t.expressed_type) is ir.F32Type
    assert t.storage_type_integral_width == 8
    assert str(t) == "!quant.any<i8<-8:7>:f32>" == str(t.quantized_element_type)
    assert t == ir.Type.parse("!quant.any<i8<-8:7>:f32>")
    u = quant.AnyQuantizedType.get(0, i8, f32, 0, 255)
    assert (str(u), u.is_signed) == ("!quant.any<u8:f32>", False)
    # An expressed type is optional in MLIR (not through get(), as upstream).
    bare = quant.AnyQuantizedType(ir.Type.parse("!quant.any<i8>"))
    assert bare.expressed_type is None


def test_uniform_quantized_type(types):
    i8, f32 = types
    t = quant.UniformQuantizedType.get(1, i8, f32, 0.99872, 127, -8, 7)
    assert (t.scale, t.zero_point, t.is_fixed_point) == (0.99872, 127, False)
    assert str(t) == "!quant.uniform<i8<-8:7>:f32, 9.987200e-01:127>"
    assert t == ir.Type.parse("!quant.uniform<i8<-8:7>:f32, 0.99872:127>")
    fixed = quant.UniformQuantizedType.get(flags=1, storage_type=i8, expressed_type=f32, scale=2,
                                           zero_point=0, storage_type_min=-128,
                                           storage_type_max=127)
    assert str(fixed) == "!quant.uniform<i8:f32, 2.000000e+00>"
    assert (fixed.is_fixed_point, fixed.scale) == (True, 2.0)


def test_uniform_quantized_per_axis_type(types):
    i8, f32 = types
    t = quant.UniformQuantizedPerAxisType.get(
        quant.QuantizedType.FLAG_SIGNED, i8, f32, [200, 0.99872], (0, 120), quantized_dimension=1,
        storage_type_min=quant.QuantizedType.default_minimum_for_integer(is_signed=True, integral_width=8),
        storage_type_max=quant.QuantizedType.default_maximum_for_integer(is_signed=True, integral_width=8))
    assert str(t) == "!quant.uniform<i8:f32:1, {2.000000e+02,9.987200e-01:120}>"
    assert t == ir.Type.parse("!quant.uniform<i8:f32:1, {2.0e+2,0.99872:120}>")
    assert (t.quantized_dimension, t.is_fixed_point) == (1, False)
    if MLIR_VERSION >= 22:
        assert (t.scales, t.zero_points) == ([200.0, 0.99872], [0, 120])
    else:
        # Upstream 19's properties return None (its bindings drop the list they build).
        assert t.scales is None and t.zero_points is None
    nonzero = quant.UniformQuantizedPerAxisType.get(1, i8, f32, [1.0], [3], 0, -128, 127)
    assert nonzero.is_fixed_point is True


def test_calibrated_quantized_type(types):
    i8, f32 = types
    t = quant.CalibratedQuantizedType.get(f32, -0.998, 1.2321)
    assert (t.min, t.max, t.expressed_type) == (-0.998, 1.2321, f32)
    assert str(t) == "!quant.calibrated<f32<-0.998:1.232100e+00>>"
    assert t == ir.Type.parse("!quant.calibrated<f32<-0.998:1.2321>>")


@pytest.mark.parametrize("signed,width,lo,hi", [
    (True, 8, -128, 127), (False, 8, 0, 255), (True, 1, -1, 0), (False, 32, 0, 2**32 - 1),
    (True, 64, -2**63, 2**63 - 1), (1, 4, -8, 7), (False, 0, 0, 0)])
def test_default_storage_bounds(signed, width, lo, hi):
    assert quant.QuantizedType.default_minimum_for_integer(signed, width) == lo
    assert quant.QuantizedType.default_maximum_for_integer(is_signed=signed, integral_width=width) == hi


def test_quantized_casts(types):
    i8, f32 = types
    q = quant.UniformQuantizedType.get(1, i8, f32, 0.5, 3, -8, 7)
    Q = quant.QuantizedType
    tensor = lambda e: ir.RankedTensorType.get([4], e)  # noqa: E731
    assert type(Q.cast_to_storage_type(q)) is ir.IntegerType and Q.cast_to_storage_type(q) == i8
    assert Q.cast_to_storage_type(tensor(q)) == tensor(i8)
    assert Q.cast_to_expressed_type(tensor(q)) == tensor(f32)
    assert Q.cast_to_expressed_type(type=q) == f32
    assert q.cast_from_storage_type(i8) == q
    assert str(q.cast_from_expressed_type(tensor(f32))) == f"tensor<4x{q}>"
    assert str(q.cast_from_expressed_type(ir.UnrankedTensorType.get(f32))) == f"tensor<*x{q}>"
    assert q.cast_expressed_to_storage_type(tensor(f32)) == tensor(i8)
    assert q.is_compatible_expressed_type(tensor(f32)) and q.is_compatible_expressed_type(f32)
    assert not q.is_compatible_expressed_type(i8)
    for bad in [lambda: Q.cast_to_storage_type(f32), lambda: Q.cast_to_expressed_type(tensor(f32)),
                lambda: q.cast_from_storage_type(f32), lambda: q.cast_from_expressed_type(i8),
                lambda: q.cast_expressed_to_storage_type(tensor(i8)),
                lambda: Q.cast_to_storage_type(tensor(f32))]:
        with pytest.raises(TypeError, match=r"^Invalid cast\.$"):
            bad()
    # A container of a quantized type without expressed type has no expressed form (MLIR would
    # build a tensor of a null element type).
    bare = ir.Type.parse("!quant.any<i8>")
    with pytest.raises(TypeError, match="Invalid cast"):
        Q.cast_to_expressed_type(tensor(bare))
    with pytest.raises(TypeError, match="Invalid cast"):
        Q.cast_to_expressed_type(bare)


def _quant_cases():
    """(text for MLIR's parser, constructor call) pairs over valid and invalid parameters."""
    for name, signed in [("i8", 1), ("u8", 0), ("i4", 1), ("u16", 0), ("i32", 1), ("u1", 0)]:
        width = int(name[1:])
        lo = quant.QuantizedType.default_minimum_for_integer(signed, width)
        hi = quant.QuantizedType.default_maximum_for_integer(signed, width)
        for mn, mx in [(lo, hi), (lo - 1, hi), (lo, hi + 1), (0, 0), (1, 0), (lo + 1, hi - 1)]:
            for ex in ["f32", "bf16", "i8"]:
                for scale in [0.5, 0.0, -1.0]:
                    rng = f"<{mn}:{mx}>"
                    yield (f"!quant.any<{name}{rng}:{ex}>", quant.AnyQuantizedType.get,
                           (signed, width, ex, mn, mx))
                    yield (f"!quant.uniform<{name}{rng}:{ex}, {scale!r}:3>",
                           quant.UniformQuantizedType.get, (signed, width, ex, scale, 3, mn, mx))
                    yield (f"!quant.uniform<{name}{rng}:{ex}:1, {{2.0:1,{scale!r}:3}}>",
                           quant.UniformQuantizedPerAxisType.get,
                           (signed, width, ex, [2.0, scale], [1, 3], 1, mn, mx))
            for ex in ["f32", "i8"]:
                yield (f"!quant.calibrated<{ex}<{mn}.0:{mx}.0>>", quant.CalibratedQuantizedType.get,
                       (ex, float(mn), float(mx)))


def test_quant_constructors_agree_with_the_parser(ctx):
    seen = {True: 0, False: 0}
    for text, get, args in _quant_cases():
        if get == quant.CalibratedQuantizedType.get:
            args = (ir.Type.parse(args[0]),) + args[1:]
        else:
            args = (args[0], ir.IntegerType.get_signless(args[1]), ir.Type.parse(args[2])) + args[3:]
        try:
            parsed = ir.Type.parse(text)
        except ir.MLIRError:
            parsed = None
        try:
            built = get(*args)
        except ValueError:
            built = None
        assert (parsed is None) == (built is None), text
        assert parsed is None or parsed == built, text
        seen[built is None] += 1
    assert seen[True] > 100 and seen[False] > 100


QT = quant.QuantizedType
AnyQ, Uni = quant.AnyQuantizedType.get, quant.UniformQuantizedType.get
Axis, Cal = quant.UniformQuantizedPerAxisType.get, quant.CalibratedQuantizedType.get
ANY_OP, I33 = "!transform.any_op", "i33"


@pytest.mark.parametrize("call,message", [
    (lambda i8, f32: Uni(1, f32, f32, 1.0, 0, -8, 7), "storage type must be integral"),
    (lambda i8, f32: Uni(1, ir.Type.parse(ANY_OP), f32, 1.0, 0, -8, 7),
     "storage type must be integral"),
    (lambda i8, f32: Uni(1, i8, ir.Type.parse(ANY_OP), 1.0, 0, -8, 7),
     "expressed type must be floating point"),
    (lambda i8, f32: AnyQ(1, ir.Type.parse(I33), f32, -8, 7),
     "illegal storage type size: 33"),
    (lambda i8, f32: AnyQ(1, i8, f32, 0, 255), r"illegal storage min and storage max: \(0:255\)"),
    (lambda i8, f32: AnyQ(0, i8, f32, 7, 7), r"illegal storage min and storage max: \(7:7\)"),
    (lambda i8, f32: Uni(1, i8, f32, 0.0, 0, -8, 7), r"illegal scale: 0\.000000e\+00"),
    (lambda i8, f32: Uni(1, i8, f32, float("nan"), 0, -8, 7), "illegal scale: nan"),
    (lambda i8, f32: Uni(1, i8, f32, float("inf"), 0, -8, 7), "illegal scale: inf"),
    (lambda i8, f32: Axis(1, i8, f32, [1.0, -2.0], [0, 0], 0, -8, 7),
     r"illegal scale: -2\.000000e\+00"),
    (lambda i8, f32: Axis(1, i8, f32, [1.0, 2.0], [0], 0, -8, 7),
     r"^Mismatching number of scales and zero points\.$"),
    (lambda i8, f32: Cal(i8, 0, 1), "expressed type must be floating point"),
    (lambda i8, f32: Cal(f32, 1, 1), r"illegal min and max: \(1\.000000e\+00:1\.000000e\+00\)"),
    (lambda i8, f32: QT.default_minimum_for_integer(True, 65), "integral_width must be at most 64"),
])
def test_quant_values_mlir_rejects_raise_value_error(types, call, message):
    with pytest.raises(ValueError, match=message):
        call(*types)


@pytest.mark.parametrize("call,message", [
    (lambda i8, f32: Uni(1, None, f32, 1.0, 0, -8, 7), "storage_type must be a Type, not None"),
    (lambda i8, f32: Uni(1, i8, "f32", 1.0, 0, -8, 7), "expressed_type must be a Type"),
    (lambda i8, f32: Uni(-1, i8, f32, 1.0, 0, -8, 7), "flags must be an int in"),
    (lambda i8, f32: Uni(2**32, i8, f32, 1.0, 0, -8, 7), "flags must be an int in"),
    (lambda i8, f32: Uni(1, i8, f32, "x", 0, -8, 7), "scale must be a float"),
    (lambda i8, f32: Uni(1, i8, f32, 1.0, 0.5, -8, 7), "zero_point must be an int"),
    (lambda i8, f32: Uni(1, i8, f32, 1.0, 2**64, -8, 7), "zero_point must be an int in"),
    (lambda i8, f32: Uni(1, i8, f32, 1.0, 0, -8), "missing required argument 'storage_type_max'"),
    (lambda i8, f32: Axis(1, i8, f32, 1.0, [0], 0, -8, 7), "scales must be a sequence"),
    (lambda i8, f32: Axis(1, i8, f32, [1.0, None], [0, 0], 0, -8, 7),
     r"scales\[1\] must be a float, not None"),
    (lambda i8, f32: Axis(1, i8, f32, [1.0], ["0"], 0, -8, 7), r"zero_points\[0\] must be an int"),
    (lambda i8, f32: Axis(1, i8, f32, [1.0], [0], 2**31, -8, 7),
     "quantized_dimension must be an int in"),
    (lambda i8, f32: Cal(None, 0.0, 1.0), "expressed_type must be a Type"),
    (lambda i8, f32: QT.default_maximum_for_integer(True, -1), "integral_width must be an int in"),
    (lambda i8, f32: QT.default_maximum_for_integer("yes", 8), "is_signed must be a bool"),
    (lambda i8, f32: QT.cast_to_storage_type(None), "type must be a Type"),
    (lambda i8, f32: Uni(1, i8, f32, 0.5, 0, -8, 7).cast_from_storage_type(1),
     "candidate must be a Type"),
])
def test_quant_wrong_arguments_raise_type_error(types, call, message):
    with pytest.raises(TypeError, match=message):
        call(*types)


def test_quant_types_of_another_context_are_refused(types):
    i8, f32 = types
    with ir.Context():
        other_f32 = ir.F32Type.get()
        other_i8 = ir.IntegerType.get_signless(8)
    with pytest.raises(ValueError, match="expressed_type: a Type of another context"):
        quant.UniformQuantizedType.get(1, i8, other_f32, 1.0, 0, -8, 7)
    q = quant.UniformQuantizedType.get(1, i8, f32, 1.0, 0, -8, 7)
    with pytest.raises(ValueError, match="candidate: a Type of another context"):
        q.cast_from_storage_type(other_i8)
    # In its own context, a type of another context is fine: the result belongs to it.
    other = quant.AnyQuantizedType.get(1, other_i8, other_f32, -8, 7)
    assert other.context is not q.context and str(other) == "!quant.any<i8<-8:7>:f32>"


def test_python_subclass_get_returns_the_subclass(types):
    class MyUniform(quant.UniformQuantizedType):
        pass

    t = MyUniform.get(1, *types, 0.5, 3, -8, 7)
    assert type(t) is MyUniform and t.scale == 0.5


# ---- sparse_tensor ------------------------------------------------------------------------------


def test_level_enums_are_upstreams():
    assert list(st.LevelFormat.__members__) == ["dense", "n_out_of_m", "compressed", "singleton",
                                                "loose_compressed"]
    assert list(st.LevelProperty.__members__) == ["non_ordered", "non_unique"] + (
        ["soa"] if MLIR_VERSION >= 22 else [])
    assert [f.value for f in st.LevelFormat] == [DENSE, 0x200000, COMPRESSED, SINGLETON, LOOSE]
    assert (st.LevelProperty.non_ordered.value, st.LevelProperty.non_unique.value) == (NO, NU)
    f = st.LevelFormat.n_out_of_m
    if MLIR_VERSION == 19:
        assert (repr(f), str(f), f"{f}") == ("<LevelFormat.n_out_of_m: 2097152>",
                                             "LevelFormat.n_out_of_m", "LevelFormat.n_out_of_m")
    else:  # upstream 22's is an IntFlag that prints as its value
        assert (repr(f), str(f), f"{f}") == ("2097152", "2097152", "2097152")
    assert st.LevelFormat(DENSE) is st.LevelFormat.dense and st.LevelFormat.dense == DENSE
    assert int(st.LevelProperty.non_unique) == 1


def test_build_level_type():
    b = st.EncodingAttr.build_level_type
    assert b(st.LevelFormat.dense) == DENSE
    assert b(st.LevelFormat.compressed, [st.LevelProperty.non_unique]) == COMPRESSED | NU
    assert b(lvl_fmt=st.LevelFormat.singleton,
             properties=[st.LevelProperty.non_ordered, st.LevelProperty.non_unique]) == SINGLETON | NU | NO
    assert b(st.LevelFormat.n_out_of_m, [], 2, 4) == n_out_of_m(2, 4) == 4406638542848
    assert b(st.LevelFormat.loose_compressed, m=0, n=0) == LOOSE
    # Where MLIR dereferences an empty optional or mixes n and m into other bits: ValueError.
    dense = "<LevelFormat.dense" if MLIR_VERSION == 19 else "65536"
    with pytest.raises(ValueError, match=f"properties do not apply to level format {dense}"):
        b(st.LevelFormat.dense, [st.LevelProperty.non_unique])
    with pytest.raises(ValueError, match="properties do not apply"):
        b(st.LevelFormat.n_out_of_m, [st.LevelProperty.non_ordered], 2, 4)
    with pytest.raises(ValueError, match=r"n and m must be in \[0, 255\]"):
        b(st.LevelFormat.n_out_of_m, [], 300, 4)
    with pytest.raises(ValueError, match="lvl_fmt must be a LevelFormat"):
        b(3)
    with pytest.raises(ValueError, match="properties must be LevelProperty values"):
        b(st.LevelFormat.compressed, [8 if MLIR_VERSION >= 22 else 4])  # 22: 4 is soa
    with pytest.raises(TypeError, match=r"properties\[0\] must be an int"):
        b(st.LevelFormat.compressed, ["non_unique"])
    with pytest.raises(TypeError, match="lvl_fmt must be an int"):
        b("dense")


def test_parsed_encoding_cast_and_properties(ctx):
    parsed = ir.Attribute.parse("#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, "
                                "d1 floordiv 4 : dense, d1 mod 4 : structured[2, 4]), posWidth = 16, "
                                "crdWidth = 32, explicitVal = 1.0 : f64 }>")
    assert type(parsed) is ir.Attribute and not hasattr(st.EncodingAttr, "static_typeid")
    if MLIR_VERSION < 22:  # upstream 22 has no static isinstance
        assert st.EncodingAttr.isinstance(parsed)
    e = st.EncodingAttr(parsed)
    assert type(e) is st.EncodingAttr and e == parsed
    assert e.lvl_types == [DENSE, DENSE, n_out_of_m(2, 4)]
    assert e.lvl_formats_enum == [st.LevelFormat.dense, st.LevelFormat.dense, st.LevelFormat.n_out_of_m]
    assert all(type(f) is st.LevelFormat for f in e.lvl_formats_enum)
    assert (e.structured_n, e.structured_m, e.pos_width, e.crd_width) == (2, 4, 16, 32)
    assert str(e.dim_to_lvl) == "(d0, d1) -> (d0, d1 floordiv 4, d1 mod 4)"
    assert str(e.lvl_to_dim) == "(d0, d1, d2) -> (d0, d1 * 4 + d2)"
    assert type(e.explicit_val) is ir.FloatAttr and e.explicit_val.value == 1.0
    assert e.implicit_val is None
    # No caster: maybe_downcast keeps the class (upstream's), the base stays the base.
    assert type(e.maybe_downcast()) is st.EncodingAttr and e.maybe_downcast() == e
    assert type(parsed.maybe_downcast()) is ir.Attribute
    assert repr(e).startswith("EncodingAttr(#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense")
    with pytest.raises(ValueError, match="Cannot cast attribute to EncodingAttr"):
        st.EncodingAttr(ir.Attribute.parse("1 : i32"))
    with pytest.raises(TypeError, match="must be an Attribute"):
        st.EncodingAttr(ir.F32Type.get())


def test_encoding_get(ctx):
    csr = st.EncodingAttr.get([DENSE, COMPRESSED], None, None, 0, 0)
    assert type(csr) is st.EncodingAttr
    assert str(csr) == "#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>"
    assert str(csr.dim_to_lvl) == "(d0, d1) -> (d0, d1)" and (csr.pos_width, csr.structured_n) == (0, 0)
    csc = st.EncodingAttr.get((DENSE, COMPRESSED), ir.AffineMap.get_permutation([1, 0]), None, 8, 32,
                              ir.FloatAttr.get_f64(1.0), ir.FloatAttr.get_f64(0.0))
    assert str(csc) == ("#sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : dense, d0 : compressed), "
                        "posWidth = 8, crdWidth = 32, explicitVal = 1.000000e+00 : f64, "
                        "implicitVal = 0.000000e+00 : f64 }>")
    assert csc == ir.Attribute.parse(str(csc))
    assert str(csc.lvl_to_dim) == "(d0, d1) -> (d1, d0)"
    # An explicit lvl_to_dim equal to the inferred one gives the same attribute.
    again = st.EncodingAttr.get(csc.lvl_types, csc.dim_to_lvl, csc.lvl_to_dim, 8, 32,
                                explicit_val=csc.explicit_val, implicit_val=csc.implicit_val,
                                context=ctx)
    assert again == csc
    blocked = ir.AffineMap.get(2, 0, [ir.AffineExpr.get_dim(0),
                                      ir.AffineExpr.get_floor_div(ir.AffineExpr.get_dim(1), 4),
                                      ir.AffineExpr.get_mod(ir.AffineExpr.get_dim(1), 4)])
    b24 = st.EncodingAttr.get([DENSE, DENSE, n_out_of_m(2, 4)], blocked, None, 0, 0)
    assert (b24.structured_n, b24.structured_m) == (2, 4)
    assert str(b24.lvl_to_dim) == "(d0, d1, d2) -> (d0, d1 * 4 + d2)"
    # Formats the enum does not name (upstream's has no batch) stay ints on 19; 22's flag enum
    # keeps them as values of the flag.
    batched = st.EncodingAttr.get([BATCH, COMPRESSED], None, None, 0, 0)
    assert batched.lvl_formats_enum == [BATCH, st.LevelFormat.compressed]
    assert type(batched.lvl_formats_enum[0]) is (int if MLIR_VERSION == 19 else st.LevelFormat)

    class MyEncoding(st.EncodingAttr):
        pass

    assert type(MyEncoding.get([COMPRESSED], None, None, 0, 0)) is MyEncoding


def test_encoding_on_a_tensor_type_in_a_verified_module(ctx):
    enc = st.EncodingAttr.get([DENSE, COMPRESSED], None, None, 64, 32)
    tt = ir.RankedTensorType.get((8, 1024), ir.F32Type.get(), encoding=enc)
    assert str(tt) == ("tensor<8x1024xf32, #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, "
                       "d1 : compressed), posWidth = 64, crdWidth = 32 }>>")
    assert tt.encoding == enc and st.EncodingAttr(tt.encoding).pos_width == 64
    m = ir.Module.parse(f"func.func @f(%a: {tt}) -> {tt} {{ return %a : {tt} }}")
    assert m.operation.verify()


def _encoding_cases():
    """(level-type names, map dims, map results) over valid and invalid encodings."""
    lts = {"dense": DENSE, "batch": BATCH, "compressed": COMPRESSED,
           "compressed(nonunique)": COMPRESSED | NU, "singleton": SINGLETON,
           "singleton(soa)": SINGLETON | SOA, "loose_compressed": LOOSE,
           "structured[2, 4]": n_out_of_m(2, 4), "structured[1, 2]": n_out_of_m(1, 2)}
    for rank in (1, 2):
        for names in itertools.product(lts, repeat=rank):
            for perm in itertools.permutations(range(rank)):
                yield lts, names, [f"d{i}" for i in range(rank)], [f"d{i}" for i in perm]
    for names in itertools.product(lts, repeat=3):
        yield lts, names, ["d0", "d1"], ["d0", "d1 floordiv 4", "d1 mod 4"]
        yield lts, names, ["d0", "d1"], ["d1", "d0 floordiv 2", "d0 mod 2"]
    for names in itertools.product(["dense", "compressed"], repeat=2):
        yield lts, names, ["d0", "d1", "d2"], ["d0", "d1"]
        yield lts, names, ["d0"], ["d0", "d0"]
        yield lts, names, ["d0", "d1"], ["d0 + d1", "d1"]


def test_encoding_get_agrees_with_the_parser(ctx):
    """Every verdict of MLIR's verifier (through the parser), with its message; every accepted
    encoding equal to the parsed one."""
    seen = {True: 0, False: 0}
    for lts, names, dims, results in _encoding_cases():
        for pos in (0, 16, 7):
            dims_s = f"({', '.join(dims)})"
            text = ("#sparse_tensor.encoding<{ map = " + dims_s + " -> (" +
                    ", ".join(f"{r} : {n}" for r, n in zip(results, names)) + f"), posWidth = {pos} }}>")
            try:
                parsed, error = ir.Attribute.parse(text), None
            except ir.MLIRError as e:
                parsed, error = None, re.split(r":\d+:\d+: ", str(e))[-1]
            dim_to_lvl = ir.Attribute.parse(f"affine_map<{dims_s} -> ({', '.join(results)})>").value
            try:
                levels = [lts[n] for n in names]
                built, message = st.EncodingAttr.get(levels, dim_to_lvl, None, pos, 0), None
            except ValueError as e:
                built, message = None, str(e)
            assert (parsed is None) == (built is None), (text, error, message)
            if built is not None:
                assert built == parsed, text
            else:
                assert message == error.strip(), text
            seen[built is None] += 1
    assert seen[True] > 1000 and seen[False] > 500


@pytest.mark.parametrize("args,message", [
    (([], None, None, 0, 0), "expected a non-empty array for lvlTypes"),
    (([DENSE], None, None, 7, 0), "unexpected position bitwidth: 7"),
    (([DENSE], None, None, 0, -8), "unexpected coordinate bitwidth: -8"),
    (([DENSE], None, None, 0, 2**80), "unexpected coordinate bitwidth: 1208925819614629174706176"),
    (([DENSE, SINGLETON], None, None, 0, 0),
     "expected compressed or loose_compressed level before singleton level"),
    (([COMPRESSED, SINGLETON | SOA, SINGLETON], None, None, 0, 0), r"same memory layout \(SoA vs AoS\)"),
    (([COMPRESSED | SOA], None, None, 0, 0), "SoA is only applicable to singleton lvlTypes"),
    (([BATCH, DENSE, BATCH], None, None, 0, 0), "Batch lvlType can only be leading levels"),
    (([n_out_of_m(2, 4), DENSE], None, None, 0, 0), "expected n_out_of_m to be the last level type"),
    (([DENSE], "perm10", None, 0, 0), "level-rank mismatch between dimToLvl and lvlTypes: 2 != 1"),
    (([DENSE, DENSE], None, "perm10", 0, 0), "expected lvlToDim to be an inverse of dimToLvl"),
    (([DENSE, DENSE], "d0d0", None, 0, 0), "failed to infer lvlToDim from dimToLvl"),
    (([DENSE, DENSE, COMPRESSED], "floordiv_no_mod", None, 0, 0),
     "failed to infer lvlToDim from dimToLvl: a dimension has a floordiv level and no mod level"),
    (([DENSE, 3], None, None, 0, 0), r"lvl_types\[1\] is not a level type: 3"),
    (([DENSE | NU], None, None, 0, 0), r"lvl_types\[0\] is not a level type: 65537"),
    (([0], None, None, 0, 0), r"lvl_types\[0\] is not a level type: 0"),  # MLIR's internal Undef
    (([DENSE], None, None, 0, 0, "string"), r"explicit_val must be a numeric attribute .*StringAttr"),
    (([DENSE], None, None, 0, 0, None, "unit"), "implicit_val must be a numeric attribute"),
])
def test_encodings_mlir_rejects_raise_value_error(ctx, args, message):
    d = ir.AffineExpr.get_dim
    maps = {"perm10": ir.AffineMap.get_permutation([1, 0]),
            "d0d0": ir.AffineMap.get(2, 0, [d(0), d(0)]),
            "floordiv_no_mod": ir.AffineMap.get(2, 0, [ir.AffineExpr.get_floor_div(d(0), 2),
                                                       ir.AffineExpr.get_floor_div(d(1), 2),
                                                       ir.AffineExpr.get_mod(d(1), 2)])}
    attrs = {"string": ir.StringAttr.get("x"), "unit": ir.UnitAttr.get()}
    named = {**maps, **attrs}
    args = [named[a] if isinstance(a, str) else a for a in args]
    with pytest.raises(ValueError, match=message):
        st.EncodingAttr.get(*args)


@pytest.mark.parametrize("args,kwargs,message", [
    (("ab", None, None, 0, 0), {}, "lvl_types must be a sequence, not str"),
    ((None, None, None, 0, 0), {}, "lvl_types must be a sequence, not None"),
    (([DENSE, "x"], None, None, 0, 0), {}, r"lvl_types\[1\] must be an int, not str"),
    (([-1], None, None, 0, 0), {}, r"lvl_types\[0\] must be an int in \[0, 2\*\*64\)"),
    (([DENSE], "map", None, 0, 0), {}, "dim_to_lvl must be an AffineMap or None"),
    (([DENSE], None, None, 0.0, 0), {}, "pos_width must be an int"),
    (([DENSE], None, None, 0, 0, 1.0), {}, "explicit_val must be an Attribute or None"),
    (([DENSE], None, None, 0, 0), {"context": 5}, "context must be a Context"),
    (([DENSE], None, None, 0), {}, "missing required argument 'crd_width'"),
    (([DENSE], None, None, 0, 0), {"nope": 1}, "unexpected keyword argument 'nope'"),
])
def test_encoding_wrong_arguments_raise_type_error(ctx, args, kwargs, message):
    with pytest.raises(TypeError, match=message):
        st.EncodingAttr.get(*args, **kwargs)


def test_encoding_parts_of_another_context_are_refused(ctx):
    with ir.Context() as other:
        other_map = ir.AffineMap.get_identity(1)
        other_val = ir.FloatAttr.get_f64(1.0)
        # context= picks the context the attribute is made in.
        made_in_other = st.EncodingAttr.get([DENSE], None, None, 0, 0, context=ctx)
    assert made_in_other.context is ctx
    with pytest.raises(ValueError, match="dim_to_lvl: an AffineMap of another context"):
        st.EncodingAttr.get([DENSE], other_map, None, 0, 0)
    with pytest.raises(ValueError, match="explicit_val: an Attribute of another context"):
        st.EncodingAttr.get([DENSE], None, None, 0, 0, other_val)
    assert st.EncodingAttr.get([DENSE], other_map, None, 0, 0, context=other).context is other


def test_no_context_is_upstreams_runtime_error():
    with pytest.raises(RuntimeError, match="requires a Context"):
        st.EncodingAttr.get([DENSE], None, None, 0, 0)


def test_a_registered_caster_applies(run_snippet):
    # In a fresh interpreter: a caster is registered for the whole process.
    proc = run_snippet(r"""
from tether import ir
from tether.dialects import quant
class Mine(quant.UniformQuantizedType):
    pass
with ir.Context():
    u = quant.UniformQuantizedType.get(1, ir.IntegerType.get_signless(8), ir.F32Type.get(), 0.5, 0, -8, 7)
    before = type(quant.QuantizedType(u).maybe_downcast()).__name__
    # MLIR 22: the class is the caster already (replace it, as upstream 22's).
    ir.register_type_caster(u.typeid, replace=hasattr(quant.UniformQuantizedType, "type_name"))(Mine)
    parsed = ir.Type.parse("!quant.uniform<i8:f32, 2.0>")
    print(before, type(parsed).__name__, type(quant.QuantizedType(parsed).maybe_downcast()).__name__)
""")
    first = "UniformQuantizedType" if MLIR_VERSION >= 22 else "QuantizedType"
    assert proc.stdout.split() == [first, "Mine", "Mine"]


def test_a_concrete_constructor_returns_its_class_whatever_the_caster(run_snippet):
    # Upstream's IntegerType.get_signless returns IntegerType even with a caster registered for
    # the TypeID (the caster applies where a Type is cast: parsing, results, maybe_downcast).
    proc = run_snippet(r"""
from tether import ir
with ir.Context():
    class Mine(ir.IntegerType):
        pass
    ir.register_type_caster(ir.IntegerType.static_typeid, replace=True)(lambda t: Mine(t))
    print(type(ir.IntegerType.get_signless(32)).__name__, type(ir.IntegerType.get_signed(8)).__name__,
          type(ir.Type.parse("i32")).__name__)
""")
    assert proc.stdout.split() == ["IntegerType", "IntegerType", "Mine"]


# ---- bad input in a fresh interpreter -----------------------------------------------------------

BAD_INPUT = r"""
from tether import ir
from tether.dialects import quant, sparse_tensor as st

ctx = ir.Context()
ctx.__enter__()
ir.Location.unknown().__enter__()
i8, f32 = ir.IntegerType.get_signless(8), ir.F32Type.get()
d = ir.AffineExpr.get_dim
DENSE, COMPRESSED = 0x10000, 0x40000

# Encodings MLIR's unchecked builder would make and later crash on (printing, a tensor type, a
# pass): inference past its data, level ranks that disagree, non-numeric values.
floordiv_no_mod = ir.AffineMap.get(2, 0, [ir.AffineExpr.get_floor_div(d(0), 2),
                                          ir.AffineExpr.get_floor_div(d(1), 2),
                                          ir.AffineExpr.get_mod(d(1), 2)])
expect(ValueError, st.EncodingAttr.get, [DENSE, DENSE, COMPRESSED], floordiv_no_mod, None, 0, 0)
expect(ValueError, st.EncodingAttr.get, [], None, None, 0, 0)
expect(ValueError, st.EncodingAttr.get, [DENSE, DENSE], ir.AffineMap.get_identity(3), None, 0, 0)
expect(ValueError, st.EncodingAttr.get, [DENSE, DENSE], ir.AffineMap.get(1, 0, [d(0), d(0)]), None, 0, 0)
expect(ValueError, st.EncodingAttr.get, [DENSE], None, ir.AffineMap.get_identity(2), 0, 0)
expect(ValueError, st.EncodingAttr.get, [DENSE], None, None, 0, 0, ir.StringAttr.get("x"))
expect(ValueError, st.EncodingAttr.get, [DENSE], None, None, 0, 0, ir.ArrayAttr.get([]))
expect(ValueError, st.EncodingAttr.get, [0xFFFFFFFFFFFFFFFF], None, None, 0, 0)
expect(ValueError, st.EncodingAttr.build_level_type, st.LevelFormat.dense, [st.LevelProperty.non_unique])
expect(ValueError, st.EncodingAttr.build_level_type, st.LevelFormat.n_out_of_m, [], 2**20, 2**20)
expect(TypeError, st.EncodingAttr.build_level_type, st.LevelFormat.n_out_of_m, [], -1, 4)
with ir.Context():
    foreign_map = ir.AffineMap.get_identity(1)
    foreign_attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0)
    foreign_i8 = ir.IntegerType.get_signless(8)
expect(ValueError, st.EncodingAttr.get, [DENSE], foreign_map, None, 0, 0)
expect(ValueError, st.EncodingAttr.get, [DENSE], None, foreign_map, 0, 0)
expect(ValueError, st.EncodingAttr.get, [DENSE], None, None, 0, 0, None, foreign_attr)

# A level type whose __index__ leaves the `with` of a context only the context stack holds:
# get() keeps the context it resolved alive.
class Leaving:
    def __index__(self):
        ir.Context.current.__exit__(None, None, None)
        return DENSE
ir.Context().__enter__()
e = st.EncodingAttr.get([Leaving()], None, None, 0, 0)
assert ir.Context.current is ctx
import tether
tether.collect()
assert str(e) == "#sparse_tensor.encoding<{ map = (d0) -> (d0 : dense) }>", str(e)
assert e.context is not ctx

# Quantized types MLIR's unchecked getters would make: no integer storage, a storage range
# beyond the storage type, no float expressed type, bad scales.
expect(ValueError, quant.UniformQuantizedType.get, 1, f32, f32, 1.0, 0, -8, 7)
expect(ValueError, quant.UniformQuantizedType.get, 1, ir.Type.parse("!transform.any_op"), f32, 1.0, 0, -8, 7)
expect(ValueError, quant.UniformQuantizedType.get, 1, i8, ir.IndexType.get(), 1.0, 0, -8, 7)
expect(ValueError, quant.UniformQuantizedType.get, 1, ir.IntegerType.get_signless(64), f32, 1.0, 0, -8, 7)
expect(ValueError, quant.UniformQuantizedType.get, 1, i8, f32, 1.0, 0, -2**63, 2**63 - 1)
expect(ValueError, quant.UniformQuantizedType.get, 0, i8, f32, 1.0, 0, 5, -5)
expect(ValueError, quant.UniformQuantizedType.get, 1, i8, f32, -0.0, 0, -8, 7)
expect(ValueError, quant.UniformQuantizedPerAxisType.get, 1, i8, f32, [1.0, 2.0], [0], 0, -8, 7)
expect(ValueError, quant.UniformQuantizedPerAxisType.get, 1, i8, f32, [1.0, float("nan")], [0, 0], 0, -8, 7)
expect(ValueError, quant.AnyQuantizedType.get, 1, i8, i8, -8, 7)
expect(ValueError, quant.CalibratedQuantizedType.get, ir.Type.parse("!transform.any_op"), 0.0, 1.0)
expect(ValueError, quant.CalibratedQuantizedType.get, f32, 1.0, -1.0)
expect(ValueError, quant.UniformQuantizedType.get, 1, i8, foreign_i8, 1.0, 0, -8, 7)
expect(ValueError, quant.QuantizedType.default_minimum_for_integer, True, 2**31)
expect(TypeError, quant.QuantizedType.cast_to_expressed_type,
       ir.RankedTensorType.get([2], ir.Type.parse("!quant.any<i8>")))
expect(TypeError, quant.UniformQuantizedType.get, 1, i8, None, 1.0, 0, -8, 7)
expect(TypeError, quant.UniformQuantizedType.get, None, i8, f32, 1.0, 0, -8, 7)
for obj in [None, 1, "x", i8, ir.Attribute.parse("0 : i8")]:
    for cls in [quant.QuantizedType, quant.UniformQuantizedType, st.EncodingAttr]:
        expect((TypeError, ValueError), cls, obj)

# What was accepted prints, parses back and verifies on a tensor.
q = quant.UniformQuantizedPerAxisType.get(0, i8, f32, [0.5, 0.25], [1, 2], 0, 0, 255)
assert ir.Type.parse(str(q)) == q, str(q)
enc = st.EncodingAttr.get([COMPRESSED, 0x80000], None, None, 32, 32, ir.FloatAttr.get_f64(2.0))
tensor = ir.RankedTensorType.get([4, 4], ir.F64Type.get(), encoding=enc)
m = ir.Module.parse(f"func.func @f(%a: {tensor}) -> {tensor} {{ return %a : {tensor} }}")
assert m.operation.verify()

report_failures()
print("done")
"""


def test_bad_input_never_crashes(run_snippet, snippet_helpers):
    # `expect` and `report_failures` come from conftest.py's snippet helpers.
    proc = run_snippet(snippet_helpers + BAD_INPUT, timeout=120)
    assert proc.stdout.strip() == "done"
