"""The C parts of dialects on MLIR 22 (upstream 22's _mlirDialects* extensions): smt types and
export_smtlib, amdgpu TDM types, irdl.load_dialects, llvm.translate_module_to_llvmir and
StructType.get_literal_unchecked, gpu.ObjectAttr kernels, quant's sub-channel type and casters,
casters of the pdl and llvm types; with hostile arguments, invalid handles and values of another
context (what could crash runs in a fresh interpreter)."""

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION

pytestmark = pytest.mark.skipif(MLIR_VERSION < 22, reason="MLIR 22's dialect extensions")

if MLIR_VERSION >= 22:
    from tether.dialects import amdgpu, gpu, irdl, llvm, pdl, quant, smt


# ---- smt ------------------------------------------------------------------------------------


def test_smt_types(ctx):
    b, bv, i = smt.BoolType.get(), smt.BitVectorType.get(5), smt.IntType.get()
    assert (str(b), str(bv), str(i)) == ("!smt.bool", "!smt.bv<5>", "!smt.int")
    assert (type(b), type(bv), type(i)) == (smt.BoolType, smt.BitVectorType, smt.IntType)
    assert smt.bool_t() == b and smt.bv_t(5) == bv
    assert (smt.BoolType.type_name, smt.BitVectorType.type_name) == ("smt.bool", "smt.bv")
    assert smt.BitVectorType(ir.Type.parse("!smt.bv<3>")).context is ctx
    with pytest.raises(ValueError, match="Cannot cast type to BoolType"):
        smt.BoolType(bv)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="width of one"):
            smt.BitVectorType.get(bad)
    for bad in (2**31, 2**64, "5", None):
        with pytest.raises(TypeError):
            smt.BitVectorType.get(bad)
    other = ir.Context()
    assert smt.IntType.get(context=other).context is other


def test_export_smtlib(ctx):
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        @smt.solver
        def body():
            smt.assert_(smt.constant(True))
    text = smt.export_smtlib(m.operation)
    assert "(assert true)" in text and "; solver scope 0" in text
    assert smt.export_smtlib(m, inline_single_use_values=True, indent_let_body=True) == \
        smt.export_smtlib(m.operation, True, True)
    # What the export refuses is a ValueError with MLIR's message.
    bad = ir.Module.parse("smt.solver() : () -> () { %0 = arith.constant 1 : i32  smt.yield }")
    with pytest.raises(ValueError, match="Failed to export smtlib.\nDiagnostic message solver "
                                         "must not contain any non-SMT operations"):
        smt.export_smtlib(bad)
    with pytest.raises(TypeError):
        smt.export_smtlib(ir.IntegerType.get_signless(1))
    op = m.body.operations[0]
    op.operation.erase()
    with pytest.raises(ir.InvalidatedError):
        smt.export_smtlib(op)


def test_export_smtlib_of_ir_that_does_not_verify(run_checks):
    run_checks("""
from tether.dialects import smt
m = ir.Module.create()
with ir.InsertionPoint(m.body):
    ir.Operation.create("smt.assert", operands=[])   # no operand: does not verify
expect(ir.MLIRError, smt.export_smtlib, m)
""")


# ---- amdgpu ---------------------------------------------------------------------------------


def test_amdgpu_tdm_types(ctx):
    f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)
    base = amdgpu.TDMBaseType.get(f32)
    desc = amdgpu.TDMDescriptorType.get()
    gather = amdgpu.TDMGatherBaseType.get(f32, i32)
    assert (str(base), str(desc), str(gather)) == (
        "!amdgpu.tdm_base<f32>", "!amdgpu.tdm_descriptor", "!amdgpu.tdm_gather_base<f32, i32>")
    for t, cls in ((base, amdgpu.TDMBaseType), (desc, amdgpu.TDMDescriptorType),
                   (gather, amdgpu.TDMGatherBaseType)):
        assert type(t) is cls and type(ir.Type.parse(str(t))) is cls
        assert cls.static_typeid == t.typeid and cls.type_name.startswith("amdgpu.")
    # The gather type's verifier runs (the C API's getter would not).
    with pytest.raises(ir.MLIRError, match="Invalid type"):
        amdgpu.TDMGatherBaseType.get(f32, f32)
    other = ir.Context()
    with pytest.raises(ValueError, match="another context"):
        amdgpu.TDMBaseType.get(ir.F32Type.get(context=other))
    with pytest.raises(ValueError, match="another context"):
        amdgpu.TDMGatherBaseType.get(f32, i32, context=other)
    with pytest.raises(TypeError):
        amdgpu.TDMBaseType.get("f32")


# ---- irdl -----------------------------------------------------------------------------------

IRDL = """
irdl.dialect @{name} {{
  irdl.operation @test_op {{
    %0 = irdl.is f32
    irdl.operands(input: %0)
  }}
}}
"""


def test_irdl_load_dialects(run_checks):
    run_checks("""
from tether.dialects import irdl
m = ir.Module.parse('''%s''')
irdl.load_dialects(m)
ctx.allow_unregistered_dialects = False
p = ir.Module.parse('''
  %%a = arith.constant 1.0 : f32
  "irdl_a.test_op"(%%a) : (f32) -> ()
''')
assert p.operation.verify()
# A second load of the same dialect, a dialect the context knows, and one defined twice are
# refused (MLIR aborts on two dialects of one name).
expect(RuntimeError, irdl.load_dialects, m)
expect(RuntimeError, irdl.load_dialects, ir.Module.parse('''%s'''))
expect(RuntimeError, irdl.load_dialects, ir.Module.parse('''%s'''))
expect(RuntimeError, irdl.load_dialects, ir.Module.parse('''module { %s } module { %s }'''))
expect(TypeError, irdl.load_dialects, m.operation)
expect(TypeError, irdl.load_dialects, None)
bad = ir.Module.create()
with ir.InsertionPoint(bad.body):
    ir.Operation.create("irdl.dialect", regions=1)   # no sym_name: does not verify
expect(ir.MLIRError, irdl.load_dialects, bad)
bad.operation.erase()
expect(ir.InvalidatedError, irdl.load_dialects, bad)
""" % (IRDL.format(name="irdl_a"), IRDL.format(name="arith"), IRDL.format(name="func"),
       IRDL.format(name="irdl_b"), IRDL.format(name="irdl_b")))


# ---- llvm -----------------------------------------------------------------------------------


def test_llvm_translate_module_to_llvmir(ctx):
    m = ir.Module.parse("""
      llvm.func @add(%arg0: i64, %arg1: i64) -> i64 {
        %0 = llvm.add %arg0, %arg1 : i64
        llvm.return %0 : i64
      }""")
    before = str(m)
    text = llvm.translate_module_to_llvmir(m.operation)
    assert "define i64 @add(i64 %0, i64 %1)" in text and "add i64 %0, %1" in text
    assert str(m) == before  # MLIR translated a copy
    assert llvm.translate_module_to_llvmir(module=m) == text
    # What MLIR cannot translate raises.
    with pytest.raises(ir.MLIRError):
        llvm.translate_module_to_llvmir(ir.Module.parse("func.func @f() { return }"))
    with pytest.raises(ir.MLIRError):
        llvm.translate_module_to_llvmir(m.body.operations[0])
    with pytest.raises(TypeError):
        llvm.translate_module_to_llvmir("module")
    m.operation.erase()
    with pytest.raises(ir.InvalidatedError):
        llvm.translate_module_to_llvmir(m)


def test_llvm_types_are_cast(ctx):
    i32 = ir.IntegerType.get_signless(32)
    s = llvm.StructType.get_literal([i32])
    assert type(ir.Type.parse("!llvm.struct<(i32)>")) is llvm.StructType
    assert type(ir.Type.parse("!llvm.ptr")) is llvm.PointerType
    assert llvm.StructType.type_name == "llvm.struct" and llvm.PointerType.type_name == "llvm.ptr"
    assert llvm.StructType.get_literal_unchecked([i32]) == s
    assert llvm.StructType.get_literal_unchecked([i32], packed=True) == \
        llvm.StructType.get_literal([i32], packed=True)
    assert llvm.StructType.get_literal([i32], context=ctx) == s
    with pytest.raises(ValueError):
        llvm.StructType.get_literal_unchecked([ir.Type.parse("!llvm.void")])
    other = ir.Context()
    with pytest.raises(ValueError):
        llvm.StructType.get_literal_unchecked([i32], context=other)
    with pytest.raises(ValueError):
        llvm.StructType.get_literal([i32], context=other)


# ---- gpu, pdl -------------------------------------------------------------------------------


def test_gpu_object_attr_kernels(ctx):
    target = ir.Attribute.parse("#nvvm.target")
    table = ir.Attribute.parse('#gpu.kernel_table<[#gpu.kernel_metadata<"kernel", () -> ()>]>')
    o = gpu.ObjectAttr.get(target, gpu.CompilationTarget.Fatbin, b"BC", kernels=table)
    assert o.kernels == table and "kernels = <[" in str(o)
    assert gpu.ObjectAttr.get(target, 4, b"x").kernels is None
    assert gpu.ObjectAttr.attr_name == "gpu.object"
    with pytest.raises(TypeError, match="kernel_table"):
        gpu.ObjectAttr.get(target, 4, b"x", kernels=ir.UnitAttr.get())
    other = ir.Context()
    with pytest.raises(ValueError):
        gpu.ObjectAttr.get(target, 4, b"x", kernels=ir.Attribute.parse(str(table), other))
    with pytest.raises(ValueError):
        gpu.ObjectAttr.get(target, 4, b"x", context=other)


def test_pdl_types_are_cast(ctx):
    for text, cls in [("!pdl.attribute", pdl.AttributeType), ("!pdl.operation", pdl.OperationType),
                      ("!pdl.range<type>", pdl.RangeType), ("!pdl.type", pdl.TypeType),
                      ("!pdl.value", pdl.ValueType)]:
        t = ir.Type.parse(text)
        assert type(t) is cls and cls.static_typeid == t.typeid
        assert cls.type_name == "pdl." + text[5:].split("<")[0]
    r = pdl.RangeType.get(pdl.TypeType.get(), context=ctx)
    assert type(r.element_type) is pdl.TypeType
    with pytest.raises(ValueError):
        pdl.RangeType.get(pdl.TypeType.get(), context=ir.Context())


# ---- quant ----------------------------------------------------------------------------------


def test_quant_sub_channel_type(ctx):
    import numpy as np  # tools/setup.sh installs it: a missing numpy fails, never skips
    i8, f32 = ir.IntegerType.get_signless(8), ir.F32Type.get()
    scales = ir.DenseElementsAttr.get(np.asarray([2.0, 3.0, 4.0, 5.0], np.float32).reshape(2, 2))
    zeros = ir.DenseElementsAttr.get(np.asarray([10, 20, 30, 40], np.int8).reshape(2, 2))
    t = quant.UniformQuantizedSubChannelType.get(1, i8, f32, scales, zeros, [0, 1], [1, 2],
                                                 -128, 127)
    assert (t.quantized_dimensions, t.block_sizes) == ([0, 1], [1, 2])
    assert type(t.scales) is ir.DenseElementsAttr and t.scales == scales
    assert np.asarray(t.zero_points).tolist() == [[10, 20], [30, 40]]
    assert str(t) == ("!quant.uniform<i8:f32:{0:1, 1:2}, {{2.000000e+00:10, 3.000000e+00:20}, "
                      "{4.000000e+00:30, 5.000000e+00:40}}>")
    assert type(ir.Type.parse(str(t))) is quant.UniformQuantizedSubChannelType
    assert quant.UniformQuantizedSubChannelType.type_name == "quant.uniform_sub_channel"
    get = quant.UniformQuantizedSubChannelType.get
    scalar_scales = ir.DenseElementsAttr.get(np.asarray(2.0, np.float32))
    scalar_zeros = ir.DenseElementsAttr.get(np.asarray(1, np.int8))
    f64_scales = ir.DenseElementsAttr.get(np.asarray([[2.0, 3.0], [4.0, 5.0]], np.float64))
    row = ir.DenseElementsAttr.get(np.asarray([1, 2], np.int8))
    for args in [
        (1, i8, f32, zeros, zeros, [0], [1], -128, 127),          # int scales
        (1, i8, f32, f64_scales, zeros, [0], [1], -128, 127),     # scale type is not f32
        (1, i8, f32, scales, row, [0], [1], -128, 127),           # shapes differ
        (1, i8, f32, scalar_scales, scalar_zeros, [], [], -128, 127),  # rank 0
        (1, i8, f32, scales, zeros, [0, 1], [1], -128, 127),      # counts differ
        (1, i8, f32, scales, zeros, [-1], [1], -128, 127),
        (1, i8, f32, scales, zeros, [0], [0], -128, 127),
        (1, i8, f32, scales, zeros, [0], [1], -129, 127),
        (1, f32, f32, scales, zeros, [0], [1], -128, 127),
    ]:
        with pytest.raises(ValueError):
            get(*args)
    for args in [(1, i8, f32, scales, zeros, [2**40], [1], -128, 127),
                 (1, i8, f32, scales, zeros, ["0"], [1], -128, 127),
                 (1, i8, f32, scales, zeros, [0], [2**70], -128, 127),
                 (1, i8, f32, "scales", zeros, [0], [1], -128, 127)]:
        with pytest.raises(TypeError):
            get(*args)
    other = ir.Context()
    with pytest.raises(ValueError, match="another context"):
        get(1, i8, f32, ir.DenseElementsAttr.get(np.asarray([[2.0]], np.float32), context=other),
            zeros, [0], [1], -128, 127)
    with pytest.raises(ValueError, match="context"):
        get(1, i8, f32, scales, zeros, [0], [1], -128, 127, context=other)
    assert get(1, i8, f32, scales, zeros, [0], [1], -128, 127, context=ctx).block_sizes == [1]


def test_quant_context_keyword(ctx):
    i8, f32 = ir.IntegerType.get_signless(8), ir.F32Type.get()
    assert quant.AnyQuantizedType.get(1, i8, f32, -8, 7, context=ctx) == \
        quant.AnyQuantizedType.get(1, i8, f32, -8, 7)
    assert quant.CalibratedQuantizedType.get(f32, -1.0, 1.0, context=None).min == -1.0
    with pytest.raises(ValueError):
        quant.UniformQuantizedType.get(1, i8, f32, 0.5, 0, -8, 7, context=ir.Context())


# ---- linalg ---------------------------------------------------------------------------------

MATMUL = """
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
"""


def test_linalg_contraction_and_maps(ctx):
    from tether.dialects import linalg
    m = ir.Module.parse(MATMUL)
    func = m.body.operations[0]
    mm, ret = func.regions[0].blocks[0].operations
    assert linalg.isa_contraction_op(mm) and not linalg.isa_contraction_op(ret)
    assert not linalg.isa_convolution_op(mm) and not linalg.isa_convolution_op(op=func)
    dims = linalg.infer_contraction_dimensions(mm)
    assert type(dims) is linalg.ContractionDimensions
    assert (list(dims.batch), list(dims.m), list(dims.n), list(dims.k)) == ([], [0], [1], [2])
    assert type(dims.m) is ir.DenseI32ArrayAttr
    assert linalg.infer_contraction_dimensions(ret) is None
    assert linalg.infer_convolution_dimensions(mm) is None
    maps = linalg.get_indexing_maps(mm)
    assert type(maps) is ir.ArrayAttr and len(maps) == 3
    assert linalg.get_indexing_maps(ret) is None
    from_maps = linalg.infer_contraction_dimensions_from_maps([a.value for a in maps])
    assert list(from_maps.k) == [2]
    assert linalg.infer_contraction_dimensions_from_maps([]) is None
    assert linalg.infer_contraction_dimensions_from_maps([maps[0].value, maps[1].value]) is None
    # Maps of different dimension counts (MLIR would index past one of them): None.
    d0, d1 = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)
    mixed = [ir.AffineMap.get(3, 0, [d0]), ir.AffineMap.get(2, 0, [d1]),
             ir.AffineMap.get(1, 0, [d0])]
    assert linalg.infer_contraction_dimensions_from_maps(mixed) is None
    with pytest.raises(ValueError, match="different contexts"):
        linalg.infer_contraction_dimensions_from_maps(
            [maps[0].value, maps[1].value, ir.AffineMap.get_identity(2, ir.Context())])
    for bad in ([1, 2, 3], "maps", None):
        with pytest.raises(TypeError):
            linalg.infer_contraction_dimensions_from_maps(bad)
    with pytest.raises(TypeError):
        linalg.isa_contraction_op(maps)
    with pytest.raises(TypeError):
        linalg.ContractionDimensions()
    m.operation.erase()
    for f in (linalg.isa_contraction_op, linalg.infer_contraction_dimensions,
              linalg.get_indexing_maps, linalg.infer_convolution_dimensions):
        with pytest.raises(ir.InvalidatedError):
            f(mm)


def test_linalg_queries_on_ops_that_do_not_verify(run_checks):
    # MLIR reads a linalg op's maps and region as its verifier guarantees them: a linalg op that
    # does not verify raises instead.
    run_checks("""
from tether.dialects import linalg
f32 = ir.F32Type.get()
t = ir.RankedTensorType.get([4], f32)
m = ir.Module.create()
with ir.InsertionPoint(m.body):
    g = ir.Operation.create("linalg.generic", results=[t], regions=1)
    mm = ir.Operation.create("linalg.matmul", results=[t], regions=1)
for op in (g, mm):
    for fn in (linalg.isa_contraction_op, linalg.isa_convolution_op,
               linalg.infer_contraction_dimensions, linalg.infer_convolution_dimensions,
               linalg.get_indexing_maps):
        expect(ir.MLIRError, fn, op)
""")


def test_sparse_tensor_soa_property(ctx):
    from tether.dialects import sparse_tensor as st
    assert st.LevelProperty.soa.value == 4
    singleton = st.EncodingAttr.build_level_type(st.LevelFormat.singleton, [st.LevelProperty.soa])
    compressed = st.EncodingAttr.build_level_type(st.LevelFormat.compressed,
                                                  [st.LevelProperty.non_unique])
    e = st.EncodingAttr.get([compressed, singleton], None, None, 0, 0)
    assert "singleton(soa)" in str(e)
    with pytest.raises(ValueError, match="SoA is only applicable to singleton"):
        st.EncodingAttr.get([st.EncodingAttr.build_level_type(
            st.LevelFormat.compressed, [st.LevelProperty.soa]), singleton], None, None, 0, 0)
    with pytest.raises(ValueError):
        st.EncodingAttr.build_level_type(st.LevelFormat.dense, [st.LevelProperty.soa])
    with pytest.raises(ValueError):
        st.EncodingAttr.build_level_type(st.LevelFormat.singleton, [8])
