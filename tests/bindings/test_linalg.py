"""tether.dialects.linalg and its OpDSL: named ops generated from the installed MLIR, ops defined
in the DSL, both forms of emission, YAML dumps, and fill_builtin_region refusing what would
crash MLIR. Upstream's own OpDSL tests run through tests/conformance; these check what tether
adds (named ops read from MLIR's headers, the guards) and the DSL's errors."""

import os
import subprocess
import sys
import textwrap

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION
from tether.dialects import arith, func, linalg, tensor
from tether.dialects.linalg.opdsl.lang import *  # noqa: F401,F403
from tether.dialects.linalg.opdsl.lang.config import LinalgOpConfig
from tether.dialects.linalg.opdsl.ops import core_named_ops
from tether.passmanager import PassManager


def _operand_types(name, config):
    """Types for every tensor/scalar operand of a named op: the shapes its shape maps give with
    every size 2 and index attributes at their defaults; f32 elements except where the op's
    functions need others."""
    op = config.structured_op
    values = [2] * op.affine_state.symbol_count
    for o in op.ordered_operands:
        if o.index_attr_map is not None:
            for e, v in zip(o.index_attr_map.results, o.operand_def.default_indices):
                values[ir.AffineSymbolExpr(e).position] = v
    f32, f64, i1, i32 = (ir.F32Type.get(), ir.F64Type.get(), ir.IntegerType.get_signless(1),
                         ir.IntegerType.get_signless(32))
    special = {"div_unsigned": {}, "select": {0: i1}, "fill_rng_2d": {0: f64, 1: f64, 2: i32}}
    elements = special.get(name, {})
    # Unsigned functions on integers (MLIR 22's region builder has no unsigned max/min of floats).
    default = i32 if "unsigned" in name else f32
    types = []
    for i, o in enumerate(d for d in op.ordered_operands if not d.operand_def.is_attribute()):
        elt = elements.get(i, default)
        if o.shape_map is None:
            types.append(elt)
            continue
        shape = []
        for e in o.shape_map.results:
            m = ir.AffineMap.get(0, len(values), [e])
            for pos, v in enumerate(values):
                m = m.replace(ir.AffineSymbolExpr.get(pos), ir.AffineConstantExpr.get(v), 0,
                              len(values))
            shape.append(ir.AffineConstantExpr(m.results[0]).value)
        types.append(ir.RankedTensorType.get(shape, elt))
    outs = [d.operand_def.kind == OperandKind.OUTPUT_TENSOR
            for d in op.ordered_operands if not d.operand_def.is_attribute()]
    return [t for t, o in zip(types, outs) if not o], [t for t, o in zip(types, outs) if o]


def _build(name, generic):
    op = getattr(core_named_ops, name)
    with ir.Context() as c, ir.Location.unknown():
        ins, outs = _operand_types(name, LinalgOpConfig.from_linalg_op_def(op.op_def, c)[0])
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            @func.FuncOp.from_py_func(*ins, *outs)
            def f(*a):
                return op(*a[:len(ins)], outs=list(a[len(ins):]), emit_generic=generic)
        text = str(m)
        # Both forms through the same pipeline: the named one generalized by MLIR itself.
        PassManager.parse("builtin.module(func.func(linalg-generalize-named-ops))").run(
            m.operation)
        m.operation.verify()
        return text, str(m)


def test_named_ops_come_from_the_installed_mlir():
    assert len(core_named_ops.__all__) >= 80
    # MLIR 22 defines matmul and the elementwise ops in ODS instead of the OpDSL.
    mlir19 = ("matmul", "elemwise_binary") if MLIR_VERSION == 19 else ()
    for name in ("fill", "conv_2d_nhwc_hwcf", "pooling_nhwc_max", "copy") + mlir19:
        assert name in core_named_ops.__all__
        assert getattr(linalg, name) is getattr(core_named_ops, name)


@pytest.mark.parametrize("name", sorted(core_named_ops.__all__))
def test_generic_form_is_what_mlir_generalizes_the_named_op_to(name):
    named_text, generalized = _build(name, generic=False)
    generic_text, generic_after = _build(name, generic=True)
    assert f"linalg.{name} " in named_text or f"linalg.{name}\n" in named_text
    assert "linalg.generic" in generic_text
    assert generalized == generic_after


def test_op_defined_in_the_dsl(ctx):
    @linalg_structured_op
    def scaled_add(A=TensorDef(T, S.M, S.N), B=TensorDef(T, S.M, S.N),
                   O=TensorDef(U, S.M, S.N, output=True),
                   fun=BinaryFnAttrDef(default=BinaryFn.add)):
        domain(D.m, D.n)
        O[D.m, D.n] = fun(TypeFn.cast_signed(U, A[D.m, D.n]),
                          TypeFn.cast_signed(U, B[D.n, D.m])) * TypeFn.cast_signed(U, const(2.0))

    f16, f32 = ir.F16Type.get(), ir.F32Type.get()
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        @func.FuncOp.from_py_func(ir.RankedTensorType.get([3, 3], f16),
                                  ir.RankedTensorType.get([3, 3], f16),
                                  ir.RankedTensorType.get([3, 3], f32))
        def f(a, b, o):
            return scaled_add(a, b, outs=[o], fun=BinaryFn.max_signed)
    m.operation.verify()
    text = str(m)
    assert "affine_map<(d0, d1) -> (d1, d0)>" in text
    assert 'iterator_types = ["parallel", "parallel"]' in text
    body = text[text.index("^bb0"):]
    order = ["arith.extf", "arith.extf", "arith.maximumf", "arith.constant", "arith.truncf",
             "arith.mulf", "linalg.yield"]
    pos = [body.index(x, body.index(order[i - 1]) + 1 if i else 0) for i, x in enumerate(order)]
    assert pos == sorted(pos)
    # A name MLIR does not know is emitted in the generic form even when asked for the named one.
    assert "linalg.scaled_add" not in text


def test_named_form_sets_index_and_function_attributes(ctx):
    f32 = ir.F32Type.get()
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        @func.FuncOp.from_py_func(ir.RankedTensorType.get([1, 9, 9, 2], f32),
                                  ir.RankedTensorType.get([3, 3, 2, 4], f32),
                                  ir.RankedTensorType.get([1, 4, 4, 4], f32))
        def conv(i, k, o):
            return linalg.conv_2d_nhwc_hwcf(i, k, outs=[o], strides=[2, 2], dilations=[1, 1])

        if MLIR_VERSION == 19:  # MLIR 22 has no elemwise_unary (linalg.elementwise, in ODS)
            @func.FuncOp.from_py_func(ir.RankedTensorType.get([4, 4], f32),
                                      ir.RankedTensorType.get([4, 4], f32))
            def unary(x, o):
                return linalg.elemwise_unary(x, outs=[o], fun=UnaryFn.log)
    m.operation.verify()
    text = str(m)
    assert "strides = dense<2> : tensor<2xi64>" in text
    assert "linalg.conv_2d_nhwc_hwcf" in text
    assert MLIR_VERSION != 19 or "fun = #linalg.unary_fn<log>" in text


def test_emission_errors_are_python_errors(ctx):
    f32 = ir.F32Type.get()
    t = ir.RankedTensorType.get([4, 4], f32)
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        @func.FuncOp.from_py_func(t, t, t)
        def f(a, b, o):
            # An op of the OpDSL with two inputs (MLIR 22 defines matmul in ODS, without these
            # checks: its builder is upstream's linalg.matmul).
            binary = linalg.matmul if MLIR_VERSION == 19 else linalg.mul
            with pytest.raises(ValueError, match="Expected 2 inputs but got 1"):
                binary(a, outs=[o])
            with pytest.raises(NotImplementedError, match="Output tensor inference"):
                binary(a, b, outs=[])
            with pytest.raises(TypeError):
                binary(a, b)                       # outs is required
            if MLIR_VERSION == 19:
                with pytest.raises(ValueError, match="needs to be of type TypeFnType"):
                    linalg.matmul(a, b, outs=[o], cast=BinaryFn.add)
            with pytest.raises(TypeError, match="unexpected keyword argument"):
                binary(a, b, outs=[o], strides=[1, 1])
            with pytest.raises(ValueError, match="Sequence\\[int\\]"):
                linalg.pooling_nhwc_max(a, b, outs=[o], strides="ab")
            with pytest.raises(ValueError, match="emit_generic"):
                binary(a, b, outs=[o], emit_generic="yes")
            with pytest.raises(ValueError, match="Expected ShapedType"):
                binary(arith.ConstantOp(f32, 1.0), b, outs=[o], emit_generic=True)
            return linalg.matmul(a, b, outs=[o])
    m.operation.verify()


def test_definition_errors():
    with pytest.raises(ValueError, match="must be defaulted"):
        @linalg_structured_op
        def bad(A=TensorDef(T, S.M), n=3):
            pass
    with pytest.raises(ValueError, match="registered after an output"):
        @linalg_structured_op
        def bad2(O=TensorDef(T, S.M, output=True), A=TensorDef(T, S.M)):
            O[D.m] = A[D.m]
    with pytest.raises(ValueError, match="expects 2 default values"):
        IndexAttrDef(S.A, S.B, default=[1])
    with pytest.raises(ValueError, match="const requires int or float"):
        const("1")
    with pytest.raises(TypeError):
        TypeFn.cast_signed("U", const(1))
    with pytest.raises(ValueError, match="none is set"):
        domain(D.m)


def test_dump_oplib_as_upstream_spells_it(tmp_path):
    lib = tmp_path / "ops.py"
    lib.write_text(textwrap.dedent("""
        from mlir.dialects.linalg.opdsl.lang import *

        @linalg_structured_op
        def strided_copy(I=TensorDef(T, S.IH, S.IW), O=TensorDef(T, S.OH, S.OW, output=True),
                         strides=IndexAttrDef(S.SH, S.SW, default=[1, 2])):
            O[D.oh, D.ow] = I[D.oh * S.SH, D.ow * S.SW]
    """))
    p = subprocess.run([sys.executable, "-m", "tether.run", "-m",
                        "mlir.dialects.linalg.opdsl.dump_oplib", "--file", str(lib)],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("--- !LinalgOpConfig")
    assert "name: strided_copy" in out and "cpp_class_name: StridedCopyOp" in out
    assert "index_attr_map: affine_map<()[s0, s1, s2, s3, s4, s5] -> (s4, s5)>" in out
    assert "- affine_map<(d0, d1)[s0, s1, s2, s3, s4, s5] -> (d0 * s4, d1 * s5)>" in out


# `raises` comes from conftest.py's snippet helpers.
FILL_SETUP = """
from tether import ir
from tether.dialects import linalg, tensor, arith
ctx = ir.Context(); ctx.__enter__(); ir.Location.unknown().__enter__()
m = ir.Module.create()
ip = ir.InsertionPoint(m.body); ip.__enter__()
def empty(shape, elt):
    return tensor.EmptyOp(shape, elt).result
"""


def test_fill_builtin_region_refuses_what_would_crash_mlir(run_checks):
    run_checks(setup=FILL_SETUP, body="""
    from tether._mlir_version import MLIR_VERSION
    f32, idx = ir.F32Type.get(), ir.IndexType.get()
    a = empty([4, 4], f32)
    # Not a named linalg op: MLIR would cast it to one.
    c = arith.ConstantOp(f32, 1.0)
    raises(ValueError, linalg.fill_builtin_region, c.operation, match="not a named linalg op")
    raises(TypeError, linalg.fill_builtin_region, 42)
    # Too few operands: MLIR would read block arguments that are not there.
    short = linalg.MatmulOp([a.type], [a], [a])
    # (MLIR 22's ODS-defined matmul is not in the table of operand counts: tried in a child.)
    raises(ValueError, linalg.fill_builtin_region, short.operation,
           match="takes 3 operands" if MLIR_VERSION == 19 else "crashes on these")
    # Element types MLIR's region builder does not handle (llvm_unreachable in MLIR, tried in a
    # child first): with Debian's release MLIR they make some IR, which may not verify.
    i = empty([4, 4], idx)
    mm = linalg.MatmulOp([i.type], [i, i], [i])
    if MLIR_VERSION == 19:
        linalg.fill_builtin_region(mm.operation)
        try:
            mm.operation.verify()
        except ir.MLIRError:
            pass
    else:  # MLIR 22's builder reaches its llvm_unreachable on index elements
        raises(ValueError, linalg.fill_builtin_region, mm.operation, match="crashes on these")
    if MLIR_VERSION == 19:
        du = linalg.div_unsigned(a, a, outs=[a])
        raises(ir.MLIRError, du.owner.verify)
    else:  # MLIR 22's builder reaches its llvm_unreachable on unsigned division of floats
        raises(ValueError, linalg.div_unsigned, a, a, outs=[a], match="crashes on these")
    # Twice: the region already has a body.
    ok = linalg.MatmulOp([a.type], [a, a], [a])
    linalg.fill_builtin_region(ok.operation)
    raises(ValueError, linalg.fill_builtin_region, ok.operation, match="already has a body")
    assert "arith.mulf" in str(ok)
    ok.operation.verify()
    # An erased op: the handle says so.
    x = linalg.MatmulOp([a.type], [a, a], [a]).operation
    x.erase()
    raises(ir.InvalidatedError, linalg.fill_builtin_region, x, match="erased")
    """)


def test_transpose_and_broadcast_helpers(ctx):
    f32 = ir.F32Type.get()
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        src = tensor.EmptyOp([2, 3], f32)
        dst = tensor.EmptyOp([3, 2], f32)
        t = linalg.transpose(src, outs=[dst], permutation=[1, 0])
        b = linalg.broadcast(tensor.EmptyOp([3], f32), outs=[dst], dimensions=[1])
        with pytest.raises(ValueError, match="must have length 1"):
            linalg.transpose(src, outs=[dst, dst], permutation=[1, 0])
    m.operation.verify()
    assert "permutation = [1, 0]" in str(t)
    assert "dimensions = [1]" in str(b)
