"""Passes written in Python (MLIR 22: PassManager.add(callable), ExternalPass) and the rest of
upstream 22's PassManager (enable_timing, enable_statistics, run(operation)).

While a Python pass runs, MLIR is suspended inside its pass manager: the callable sees IR whose
objects a previous pass removed already invalid, changes IR through tether (trees stay
consistent), cannot erase or move the operation the pass runs on or what encloses it, nor run its
own pass manager again; what it leaves must verify, or the pass fails before MLIR goes on; its
exception fails the pass and comes out of run(). Hostile programs run in a fresh interpreter
(run_checks): a crash fails one test.
"""

import gc
import sys
import weakref

import pytest

import tether
from tether import ir
from tether._mlir_version import MLIR_VERSION

pytestmark = pytest.mark.skipif(MLIR_VERSION < 22, reason="passes written in Python are MLIR 22's")

if MLIR_VERSION >= 22:
    from tether.passmanager import ExternalPass, PassDisplayMode, PassManager

PAYLOAD = """
func.func @f(%a: i64, %b: i64) -> i64 {
  %0 = arith.addi %a, %b : i64
  %1 = arith.constant 0 : i64
  %2 = arith.addi %0, %1 : i64
  return %2 : i64
}"""


def body(m):
    f = m.body.operations[0]
    return f, list(f.regions[0].blocks[0].operations)


def test_pass_gets_the_interned_operation_and_an_external_pass(ctx):
    m = ir.Module.parse(PAYLOAD)
    f, ops = body(m)
    seen = []

    def my_pass(op, pass_):
        seen.append((op, type(pass_), op.regions[0].blocks[0].operations[0] is f))

    pm = PassManager("any")
    pm.add(my_pass)
    pm.add("canonicalize")
    assert str(pm).startswith("any(unknown<my_pass>,canonicalize")
    pm.run(m)
    assert seen == [(m.operation, ExternalPass, True)]
    # canonicalize removed `%2 = addi %0, 0` and the constant; the others keep their identity.
    assert not ops[2].is_valid and not ops[1].is_valid
    assert ops[0].is_valid and body(m)[1][0] is ops[0]


def test_name_argument_description_op_name(ctx, capfd):
    m = ir.Module.parse(PAYLOAD)

    class Callable:
        def __call__(self, op, pass_):
            print("called", file=sys.stderr)

    pm = PassManager("any")
    with pytest.raises(AttributeError):
        pm.add(Callable())  # no __name__: upstream's AttributeError
    pm.add(Callable(), "MyPass", argument="my-pass", description="d", op_name="builtin.module")
    pm.add(Callable(), name=None.__class__.__name__)
    assert "my-pass" in str(pm)
    pm.enable_ir_printing()
    pm.run(m)
    err = capfd.readouterr().err
    assert err.count("called") == 2 and "IR Dump After MyPass" in err


def test_signal_pass_failure_and_late_use(ctx):
    m = ir.Module.parse(PAYLOAD)
    kept = []
    ran = []

    def fails(op, pass_):
        kept.append(pass_)
        pass_.signal_pass_failure()

    pm = PassManager("any")
    pm.add(fails)
    pm.add(lambda op, p: ran.append(1), "After")
    with pytest.raises(ir.MLIRError, match="Failure while executing pass pipeline"):
        pm.run(m)
    assert ran == []  # the pipeline stopped
    with pytest.raises(RuntimeError, match="only valid while the pass"):
        kept[0].signal_pass_failure()
    with pytest.raises(TypeError):
        ExternalPass()
    assert m.operation.verify()


def test_exception_fails_the_pass_and_comes_out_of_run(ctx):
    m = ir.Module.parse(PAYLOAD)
    ran = []

    def raises(op, pass_):
        raise KeyError("boom")

    pm = PassManager("any")
    pm.add(raises)
    pm.add(lambda op, p: ran.append(1), "After")
    with pytest.raises(KeyError, match="boom"):
        pm.run(m)
    assert ran == []
    # The pass manager and the IR stay usable.
    with pytest.raises(KeyError):
        pm.run(m)
    PassManager.parse("builtin.module(canonicalize)").run(m)


def test_pass_changes_ir_through_tether(ctx):
    m = ir.Module.parse(PAYLOAD)
    f, (add0, cst, add1, ret) = body(m)

    def to_muli(op, pass_):
        blk = op.regions[0].blocks[0].operations[0].regions[0].blocks[0]
        add = blk.operations[0]
        with ir.InsertionPoint(add):
            mul = ir.Operation.create("arith.muli", results=[add.results[0].type],
                                      operands=list(add.operands))
        add.results[0].replace_all_uses_with(mul.results[0])
        add.erase()
        gc.collect()
        tether.collect()

    pm = PassManager("any")
    pm.add(to_muli)
    pm.add("canonicalize")
    pm.run(m)
    assert not add0.is_valid and f.is_valid and ret.is_valid
    text = str(m)
    assert "arith.muli %arg0, %arg1" in text and "arith.addi" not in text
    assert body(m)[1][0].name == "arith.muli"


def test_pass_leaving_ir_that_does_not_verify_stops_the_pipeline(ctx):
    m = ir.Module.parse(PAYLOAD)
    f, (add0, cst, add1, ret) = body(m)
    ran = []

    def bad(op, pass_):
        with ir.InsertionPoint(ret):
            ir.Operation.create("arith.addi", results=[ir.IntegerType.get_signless(64)])

    pm = PassManager("any")
    pm.add(bad)
    pm.add(lambda op, p: ran.append(1), "After")
    pm.add("canonicalize")
    with pytest.raises(ir.MLIRError) as e:
        pm.run(m)
    assert any("expected 2 operands" in d.message for d in e.value.error_diagnostics), e.value
    assert ran == []
    # The IR is as the pass left it, its objects consistent.
    with pytest.raises(ir.MLIRError):
        m.operation.verify()
    _, ops = body(m)
    assert ops[3].name == "arith.addi" and ops[4] is ret
    ops[3].erase()
    assert m.operation.verify()


def test_pass_leaving_its_values_used_by_other_ir_stops_the_pipeline(ctx):
    ctx.allow_unregistered_dialects = True
    m = ir.Module.parse(PAYLOAD)
    f, (add0, _, _, _) = body(m)
    users = []

    def leak(op, pass_):
        if not users:
            users.append(ir.Operation.create("test.user", operands=[add0.results[0]]))

    pm = PassManager("any")
    pm.add(leak)
    pm.add("canonicalize")
    with pytest.raises(ir.MLIRError) as e:
        pm.run(m)
    assert any("used by IR of another tree" in d.message for d in e.value.error_diagnostics)
    assert add0.is_valid and users[0].operands[0].owner == add0.operation
    users[0].erase()
    pm.run(m)


def test_what_a_pass_cannot_do(run_checks):
    run_checks("""
    from tether.rewrite import RewritePatternSet, apply_patterns_and_fold_greedily
    m = ir.Module.parse('''
    module @outer {
      module @inner {
        func.func @f(%a: i64) -> i64 { return %a : i64 }
      }
      func.func @g() { return }
    }''')
    outer = m.operation
    inner = m.body.operations[0].operation
    g = m.body.operations[1].operation
    f = inner.regions[0].blocks[0].operations[0].operation
    box = []

    def inside(op, pass_):
        assert op == inner
        box.append(op)
        # The operation the pass runs on and what encloses it stay where they are.
        expect(RuntimeError, op.erase)
        expect(RuntimeError, op.detach_from_parent)
        expect(RuntimeError, op.move_before, g)
        expect(RuntimeError, outer.erase)
        expect(RuntimeError, inner.parent.regions[0].blocks[0].append_to, ir.Region())
        # Not its own pass manager again, nor changes to it.
        expect(RuntimeError, pm.run, op)
        expect(RuntimeError, pm.add, "cse")
        expect(RuntimeError, pm.enable_verifier, False)
        expect(RuntimeError, pm.enable_timing)
        expect(RuntimeError, pm.enable_statistics)
        expect(RuntimeError, pm.enable_ir_printing)
        # No other pipeline or patterns on what encloses it; on it and inside it they run.
        expect(RuntimeError, PassManager.parse("builtin.module(canonicalize)").run, outer)
        PassManager.parse("builtin.module(canonicalize)").run(op)
        frozen = RewritePatternSet().freeze()
        expect(RuntimeError, apply_patterns_and_fold_greedily, outer, frozen)
        apply_patterns_and_fold_greedily(op, frozen)
        # Elsewhere the IR is free.
        if len(box) == 1:
            PassManager("func.func").run(f)
            g.move_before(op)
            g.erase()
            f.erase()
        # A collection meanwhile.
        gc.collect(); tether.collect()

    pm = PassManager("builtin.module")
    pm.add(inside, op_name="builtin.module")
    pm.run(inner)
    assert box[0] is inner
    assert not g.is_valid and not f.is_valid and inner.is_valid
    expect(ValueError, PassManager("builtin.module").add, inside, op_name="func.func")
    pm.run(inner)  # runs again once idle
    print(outer)
    """)


def test_hostile_arguments(run_checks):
    run_checks("""
    from tether.passmanager import PassDisplayMode
    pm = PassManager("any")
    f = lambda op, p: None
    expect(TypeError, pm.add, 3)
    expect(TypeError, pm.add, None)
    expect(TypeError, pm.add)
    expect(TypeError, pm.add, f, 3)
    expect(TypeError, pm.add, f, "n", 3)
    expect(TypeError, pm.add, f, "n", "a", object())
    expect(TypeError, pm.add, f, "n", "a", "d", 3)
    expect(TypeError, pm.add, f, bogus=1)
    expect(TypeError, pm.add, pipeline=f)
    expect(ValueError, pm.add, "not-a-pass")
    pm.add(f, "nul\\x00name", "arg\\x00", "d\\x00", "")
    odd = PassManager("any")
    odd.add(f, "x" * 10, op_name="func.\\x00func")  # no such operation: scheduling fails
    expect(ir.MLIRError, odd.run, ir.Module.parse("module {}"))
    expect(TypeError, pm.enable_statistics, 1)
    expect(TypeError, pm.enable_statistics, "LIST")
    pm.enable_statistics(PassDisplayMode.LIST)
    pm.enable_statistics(displayMode=PassDisplayMode.PIPELINE)
    expect(TypeError, pm.enable_timing, 1)
    expect(TypeError, pm.run)
    expect(TypeError, pm.run, 3)
    expect(TypeError, pm.run, ir.Module.parse("module {}"), True)  # no invalidate_ops on 22
    m = ir.Module.parse("module {}")
    pm.run(m)
    pm.run(m, verify_input=False)
    erased = ir.Module.parse("module {}")
    op = erased.operation
    op.erase()
    expect(ir.InvalidatedError, pm.run, op)
    # A pipeline with Python passes does not go to another context.
    with ir.Context():
        other = ir.Module.parse("module {}")
    expect(ValueError, pm.run, other)
    pm._testing_release()
    expect(RuntimeError, pm.add, f)
    expect(RuntimeError, pm.enable_timing)
    """, allow_stderr=True)


def test_pass_reentering_through_a_second_pass_manager(ctx):
    m = ir.Module.parse(PAYLOAD)
    order = []

    def outer_pass(op, pass_):
        order.append("outer")
        inner_pm.run(op)

    def inner_pass(op, pass_):
        order.append("inner")
        assert op == m.operation

    inner_pm = PassManager("any")
    inner_pm.add(inner_pass)
    inner_pm.add("canonicalize")
    pm = PassManager("any")
    pm.add(outer_pass)
    pm.run(m)
    assert order == ["outer", "inner"]
    assert "arith.constant" not in str(m)


def test_objects_removed_by_earlier_passes_are_invalid_inside_a_later_one(ctx):
    m = ir.Module.parse(PAYLOAD)
    _, (add0, cst, add1, ret) = body(m)
    states = []
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.add(lambda op, p: states.append((cst.is_valid, add1.is_valid, add0.is_valid)), "Check")
    pm.run(m)
    assert states == [(False, False, True)]


def test_callable_released_with_the_pass_manager(ctx, collect_until):
    class Pass:
        def __call__(self, op, pass_):
            pass

    p = Pass()
    ref = weakref.ref(p)
    pm = PassManager("any")
    pm.add(p, "P")
    del p
    assert ref() is not None
    del pm
    assert collect_until(lambda: ref() is None)


def test_timing_and_statistics(ctx, capfd):
    m = ir.Module.parse(PAYLOAD)
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_statistics()
    pm.enable_timing()
    pm.run(m)
    del pm
    gc.collect()
    err = capfd.readouterr().err
    assert "Pass statistics report" in err and "Execution time report" in err
    assert [e.name for e in PassDisplayMode] == ["LIST", "PIPELINE"]
    assert str(PassDisplayMode.LIST) == "PassDisplayMode.LIST"
