"""tether.dialects: op classes generated from MLIR's ODS, downcasting by namespace, upstream's
conveniences, dialect types, and the `mlir` alias. Upstream's own dialect tests run through
tests/conformance; these are tether's own checks of what a program observes."""

import subprocess
import sys
import textwrap

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION
from tether.dialects import arith, builtin, func, scf, tensor, transform, pdl, llvm


def test_build_with_dialect_classes(ctx):
    i32 = ir.IntegerType.get_signless(32)
    m = builtin.ModuleOp()
    with ir.InsertionPoint(m.body):
        # MLIR 22's generated classes read the first operand's type to infer the result's: as
        # upstream's, an op there is no operand of arith.addi (19's converts it).
        def v(op):
            return op.result if MLIR_VERSION >= 22 else op

        @func.FuncOp.from_py_func(i32, i32)
        def add3(a, b):
            return arith.AddIOp(v(arith.AddIOp(a, b)), v(arith.ConstantOp(i32, 3)))

        @func.FuncOp.from_py_func(i32)
        def caller(x):
            return add3(x, x)
    text = str(m)
    assert "func.func @add3(%arg0: i32, %arg1: i32) -> i32" in text
    assert "%c3_i32 = arith.constant 3 : i32" in text
    assert "call @add3(%arg0, %arg0) : (i32, i32) -> i32" in text
    m.operation.verify()
    assert add3.func_op.type == ir.FunctionType.get([i32, i32], [i32])


def test_navigation_returns_the_registered_class_and_keeps_identity(ctx):
    m = ir.Module.parse("func.func @f() -> index { %c = arith.constant 7 : index\n"
                        "return %c : index }")
    f = m.body.operations[0]
    assert isinstance(f, func.FuncOp) and f.name.value == "f"
    c = f.entry_block.operations[0]
    assert isinstance(c, arith.ConstantOp) and c.literal_value == 7
    assert m.body.operations[0] is f               # the same object while referenced
    assert f.operation.opview is f
    assert isinstance(f.operation, ir.Operation) and not isinstance(f.operation, ir.OpView)


def test_dialect_module_loads_on_first_use():
    # A fresh interpreter: parsing scf IR imports tether.dialects.scf, so navigation downcasts.
    code = textwrap.dedent("""
        import sys
        from tether import ir
        with ir.Context(), ir.Location.unknown():
            m = ir.Module.parse('''func.func @f(%n: index) {
              %c0 = arith.constant 0 : index
              %c1 = arith.constant 1 : index
              scf.for %i = %c0 to %n step %c1 { }
              return }''')
            assert "tether.dialects.scf" not in sys.modules
            loop = m.body.operations[0].regions[0].blocks[0].operations[2]
            assert type(loop).__name__ == "ForOp", type(loop)
            assert "tether.dialects.scf" in sys.modules
            assert loop.induction_variable.owner == loop.body
        print("ok")
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_scf_for_generator_and_if(ctx):
    i1 = ir.IntegerType.get_signless(1)
    f = func.FuncOp("loops", ([i1], []))
    with ir.InsertionPoint(f.add_entry_block()):
        for iv in scf.for_(0, 8, 2):
            arith.addi(iv, iv)
            scf.YieldOp([])
        has_else = {"has_else" if MLIR_VERSION >= 22 else "hasElse": True}  # upstream's spelling
        branch = scf.IfOp(f.arguments[0], **has_else)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([])
        func.ReturnOp([])
    f.verify()
    text = str(f)
    assert "scf.for %arg1 = %c0 to %c8 step %c2" in text
    assert "} else {" in text


def test_tensor_empty_with_mixed_sizes(ctx):
    f32 = ir.F32Type.get()
    f = func.FuncOp("t", ([ir.IndexType.get()], []))
    with ir.InsertionPoint(f.add_entry_block()):
        e = tensor.EmptyOp([4, f.arguments[0]], f32)
        func.ReturnOp([])
    assert str(e.result.type) == "tensor<4x?xf32>"


def test_result_inference_sees_properties(ctx):
    # shape.const_shape infers its result from its `shape` property: inference must build the
    # op's properties from the attributes, as MLIR's own op creation does.
    from tether.dialects import shape
    m = builtin.ModuleOp()
    with ir.InsertionPoint(m.body):
        c = shape.ConstShapeOp([1, 2, 3])
        iface = ir.InferTypeOpInterface(shape.ConstShapeOp)
        inferred = iface.inferReturnTypes(attributes=ir.DictAttr.get({"shape": c.shape}))
    assert str(c.result.type) == "tensor<3xindex>"
    assert [str(t) for t in inferred] == ["tensor<3xindex>"]
    # A wrong attribute kind for the property: an MLIRError, not a crash.
    with ir.InsertionPoint(m.body), pytest.raises(ir.MLIRError):
        shape.ConstShapeOp(ir.IntegerAttr.get(ir.IndexType.get(), 3))


def test_generated_builder_errors_are_python_errors(ctx):
    i32 = ir.IntegerType.get_signless(32)
    # not values (22's generated code reads `.type` of the first: AttributeError, as upstream's)
    with pytest.raises(AttributeError if MLIR_VERSION >= 22 else TypeError):
        arith.AddIOp(1, 2)
    c = arith.ConstantOp(i32, 1)
    with pytest.raises(TypeError):
        arith.AddIOp(c)               # a missing operand
    with pytest.raises(TypeError):
        c.operation.attributes["value"] = None


def test_dialect_types(ctx):
    assert str(transform.AnyOpType.get()) == "!transform.any_op"
    op_t = transform.OperationType.get("func.func")
    assert op_t.operation_name == "func.func"
    parsed = ir.Type.parse('!transform.op<"func.func">')
    assert isinstance(parsed, transform.OperationType) and parsed == op_t
    assert str(transform.ParamType.get(ir.IntegerType.get_signless(8))) == "!transform.param<i8>"
    r = pdl.RangeType.get(pdl.TypeType.get())
    assert str(r) == "!pdl.range<type>" and str(r.element_type) == "!pdl.type"
    with pytest.raises(ValueError):
        pdl.RangeType.get(ir.IntegerType.get_signless(8))
    assert str(llvm.PointerType.get(address_space=3)) == "!llvm.ptr<3>"


def test_transform_sequence_builder(ctx):
    m = builtin.ModuleOp()
    with ir.InsertionPoint(m.body):
        seq = transform.SequenceOp(transform.FailurePropagationMode.Propagate, [],
                                   transform.AnyOpType.get())
        with ir.InsertionPoint(seq.body):
            transform.YieldOp()
    assert isinstance(seq.bodyTarget.type, transform.AnyOpType)
    m.operation.verify()
    assert "transform.sequence  failures(propagate)" in str(m)


def test_upstream_program_through_the_alias(tmp_path):
    # An upstream-style program, unchanged, run with python3 -m tether.run.
    code = textwrap.dedent("""
        from mlir.ir import Context, Location, InsertionPoint, Module, IntegerType
        from mlir.dialects import arith, func
        from mlir.dialects._ods_common import get_op_result_or_value
        with Context(), Location.unknown():
            m = Module.create()
            with InsertionPoint(m.body):
                @func.FuncOp.from_py_func(IntegerType.get_signless(32))
                def double(x):
                    return arith.AddIOp(x, x)
            print(m)
    """)
    program = tmp_path / "upstream_program.py"
    program.write_text(code)
    p = subprocess.run([sys.executable, "-m", "tether.run", str(program)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "arith.addi %arg0, %arg0 : i32" in p.stdout


def test_op_objects_without_own_state_skip_the_cyclic_collector(ctx):
    # Generated op classes add no instance state (__slots__ = ()): their objects are made without
    # the cyclic collector's header (cheaper to make and free while iterating). A subclass that
    # adds a __dict__ keeps it, and its objects can hold anything.
    import gc
    i32 = ir.IntegerType.get_signless(32)
    m = builtin.ModuleOp()
    with ir.InsertionPoint(m.body):
        c = arith.ConstantOp(i32, 1)
        assert not gc.is_tracked(c)

        class Noted(arith.ConstantOp):
            pass

        n = Noted(i32, 2)
        n.note = [n]                      # a cycle through the instance dict
        assert gc.is_tracked(n)
    del n
    gc.collect()
    ops = list(m.body.operations)
    assert [o.name for o in ops] == ["arith.constant", "arith.constant"]
    assert ops[0] is c
    for _ in range(3):                   # wrappers made and freed again and again stay sound
        assert [str(o.result.type) for o in m.body.operations] == ["i32", "i32"]


def test_maybe_downcast_keeps_a_class_without_caster(ctx):
    # As upstream: a dialect type or attribute whose class registered no caster for its TypeID
    # stays what it is; the base class gives the registered class when there is one.
    t = pdl.AttributeType.get()
    assert type(t.maybe_downcast()) is pdl.AttributeType
    i = ir.Type(ir.IntegerType.get_signless(8))
    assert type(i.maybe_downcast()) is ir.IntegerType
    a = ir.Attribute(ir.StringAttr.get("x"))
    assert type(a.maybe_downcast()) is ir.StringAttr


def test_constant_op_in_c_is_its_python_init(ctx):
    """`arith.ConstantOp(type, int | float)` runs in C (bindings/python/dialects/arith.c): for
    values of every size and kind, on every type, it builds what the Python __init__ (its
    __wrapped__) builds and raises what that raises; other calls run the Python __init__."""
    import math
    py = arith.ConstantOp.__init__.__wrapped__
    types = [ir.IntegerType.get_signless(w) for w in (1, 8, 32, 64)] + [
        ir.IntegerType.get_signed(16), ir.IntegerType.get_unsigned(8), ir.IndexType.get(),
        ir.F16Type.get(), ir.F32Type.get(), ir.F64Type.get(), ir.BF16Type.get(),
        ir.VectorType.get([2], ir.IntegerType.get_signless(32))]
    values = [0, 1, -1, 127, 255, 2**31 - 1, 2**63 - 1, -2**63, 2**63, 2**64, 10**30, 1.5, -0.0,
              math.inf, math.nan, 1e300, True]

    def by_python(t, v):
        op = arith.ConstantOp.__new__(arith.ConstantOp)
        py(op, t, v)
        return op

    def outcome(make):
        try:
            op = make().operation
            return ("built", op.name, str(op.attributes["value"]), str(op.results[0].type))
        except Exception as e:  # noqa: BLE001 - compared, not swallowed
            return ("raised", type(e).__name__, str(e))

    with ir.Location.unknown():
        m = ir.Module.create()
        built = 0
        for t in types:
            for v in values:
                with ir.InsertionPoint(m.body):
                    fast = outcome(lambda: arith.ConstantOp(t, v))
                    slow = outcome(lambda: by_python(t, v))
                assert fast == slow, (t, v, fast, slow)
                built += fast[0] == "built"
        assert built > 40

        # Which calls run Python: not ConstantOp(t, 1); keywords, attributes, subclasses do.
        entered = []

        def profile(frame, event, arg):
            if event == "call" and frame.f_code is py.__code__:
                entered.append(frame.f_locals.get("value"))

        i32 = ir.IntegerType.get_signless(32)

        class Sub(arith.ConstantOp):
            pass

        with ir.InsertionPoint(m.body):
            sys.setprofile(profile)
            try:
                arith.ConstantOp(i32, 1)
                arith.ConstantOp(ir.F32Type.get(), 2.5)
                arith.ConstantOp(i32, 3, loc=ir.Location.unknown())
                arith.ConstantOp(ir.IntegerAttr.get(i32, 4))
                Sub(i32, 5)
            finally:
                sys.setprofile(None)
        assert entered == [3, None, 5], entered
