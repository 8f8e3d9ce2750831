"""Invalidation: erasing, passes and detaching never leave a wrapper that can crash.

Using an erased or invalidated object raises `ir.InvalidatedError` (a RuntimeError) whose message
says what happened: "erased", "parent ... erased", or "removed by a pass".
"""

import pytest

import tether
from tether import ir
from tether.passmanager import PassManager

NESTED = r"""module @m {
  func.func @f(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    %1 = arith.muli %0, %b : i32
    return %1 : i32
  }
  func.func @g() {
    return
  }
}"""


def _assert_invalid(fn, *fragments):
    with pytest.raises(ir.InvalidatedError) as e:
        fn()
    msg = str(e.value)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    return msg


def test_invalidated_error_is_a_runtime_error():
    assert issubclass(ir.InvalidatedError, RuntimeError)
    assert issubclass(ir.MLIRError, Exception)


# ---------------------------------------------------------------------------------------------
# Erase a parent while holding children.


def test_erase_parent_while_holding_children(ctx):
    m = ir.Module.parse(NESTED)
    f = m.body.operations[0]
    g = m.body.operations[1]
    region = f.regions[0]
    block = region.blocks[0]
    add, mul, ret = list(block.operations)
    arg = block.arguments[0]
    res = add.result
    operands = mul.operands
    results = add.results
    attrs = f.attributes

    f.erase()

    # The op itself: "erased" (and not the parent phrase).
    msg = _assert_invalid(lambda: f.name, "erased")
    assert "parent" not in msg
    _assert_invalid(lambda: len(f.regions), "erased")
    _assert_invalid(lambda: f.get_asm(), "erased")
    _assert_invalid(lambda: str(f), "erased")
    _assert_invalid(lambda: f.verify(), "erased")
    _assert_invalid(lambda: f.erase(), "erased")
    _assert_invalid(lambda: f.parent, "erased")
    _assert_invalid(lambda: f.clone(), "erased")
    _assert_invalid(lambda: f.attributes["sym_name"], "erased")

    # Everything inside it: "parent ... erased".
    for op in (add, mul, ret):
        _assert_invalid(lambda: op.name, "parent", "erased")
        _assert_invalid(lambda: len(op.operands), "parent", "erased")
        _assert_invalid(lambda: len(op.results), "parent", "erased")
        _assert_invalid(lambda: str(op), "parent", "erased")
        _assert_invalid(lambda: op.parent, "parent", "erased")
        _assert_invalid(lambda: op.erase(), "parent", "erased")
        _assert_invalid(lambda: op.walk(lambda o: None), "parent", "erased")
    _assert_invalid(lambda: len(block.operations), "parent", "erased")
    _assert_invalid(lambda: list(block.operations), "parent", "erased")
    _assert_invalid(lambda: len(block.arguments), "parent", "erased")
    _assert_invalid(lambda: block.owner, "parent", "erased")
    _assert_invalid(lambda: len(region.blocks), "parent", "erased")
    _assert_invalid(lambda: region.owner, "parent", "erased")
    _assert_invalid(lambda: arg.type, "parent", "erased")
    _assert_invalid(lambda: res.type, "parent", "erased")
    _assert_invalid(lambda: res.owner, "parent", "erased")
    # Sequences and mappings taken before the erase are invalid too.
    _assert_invalid(lambda: len(operands))
    _assert_invalid(lambda: operands[0])
    _assert_invalid(lambda: len(results))
    _assert_invalid(lambda: attrs["sym_name"])

    # The rest of the module is untouched, identities included.
    assert len(m.body.operations) == 1
    assert m.body.operations[0] is g
    assert g.operation.name == "func.func"
    assert "@f" not in str(m)
    assert m.operation.verify()
    tether.collect()
    _assert_invalid(lambda: add.name, "parent", "erased")


def test_stale_handles_rejected_as_arguments(ctx):
    m = ir.Module.parse(NESTED)
    f, g = list(m.body.operations)
    block = f.regions[0].blocks[0]
    add = block.operations[0]
    res = add.result
    g_ret = g.regions[0].blocks[0].operations[0]
    f.erase()
    with ir.Location.unknown():
        with pytest.raises(ir.InvalidatedError):
            ir.Operation.create("arith.addi", results=[ir.IntegerType.get_signless(32)],
                                operands=[res, res])
        with pytest.raises(ir.InvalidatedError):
            g_ret.move_before(add)
        with pytest.raises(ir.InvalidatedError):
            add.move_after(g_ret)
        with pytest.raises(ir.InvalidatedError):
            m.body.append(add)
        with pytest.raises(ir.InvalidatedError):
            with ir.InsertionPoint(add):
                ir.Operation.create("func.return")
        with pytest.raises(ir.InvalidatedError):
            with ir.InsertionPoint(block):
                ir.Operation.create("func.return")
    assert g_ret.parent is g.operation
    assert len(m.body.operations) == 1


def test_erase_child_then_parent(ctx):
    m = ir.Module.parse(NESTED)
    f = m.body.operations[1]
    ret = f.regions[0].blocks[0].operations[0]
    ret.erase()
    _assert_invalid(lambda: ret.name, "erased")
    f.erase()
    # Already erased on its own: still reported as erased (not silently revived).
    _assert_invalid(lambda: ret.name, "erased")
    _assert_invalid(lambda: f.name, "erased")


def test_erase_module_operation_invalidates_everything(ctx):
    m = ir.Module.parse(NESTED)
    f = m.body.operations[0]
    add = f.regions[0].blocks[0].operations[0]
    m.operation.erase()
    _assert_invalid(lambda: m.operation.name, "erased")
    _assert_invalid(lambda: f.name, "parent", "erased")
    _assert_invalid(lambda: add.name, "parent", "erased")
    _assert_invalid(lambda: str(m))
    _assert_invalid(lambda: len(m.body.operations))
    tether.collect()
    assert ctx._get_live_root_count() == 0


def test_walk_that_erases(ctx):
    m = ir.Module.parse(NESTED)
    f = m.body.operations[0]
    seen = []

    def cb(op):
        seen.append(op.name)
        if op.name == "arith.muli":
            ret = op.parent.regions[0].blocks[0].operations[-1]
            # Make the result unused, then erase the op in the middle of the walk.
            ret.operands[0] = op.operands[0]
            op.erase()
        return ir.WalkResult.ADVANCE

    m.operation.walk(cb)
    assert "arith.muli" in seen
    assert [o.name for o in f.regions[0].blocks[0].operations] == ["arith.addi", "func.return"]
    assert m.operation.verify()


# ---------------------------------------------------------------------------------------------
# A pass removes an op we hold.

DEAD = r"""module {
  func.func @f(%a: i32, %b: i32) -> i32 {
    %dead = arith.addi %a, %b : i32
    %live = arith.muli %a, %b : i32
    return %live : i32
  }
  func.func private @unused() {
    return
  }
}"""


def test_canonicalize_removes_held_op(ctx):
    m = ir.Module.parse(DEAD)
    f = m.body.operations[0]
    block = f.regions[0].blocks[0]
    dead, live, ret = list(block.operations)
    dead_result = dead.result
    assert dead.name == "arith.addi"

    PassManager.parse("builtin.module(canonicalize)").run(m.operation)

    _assert_invalid(lambda: dead.name, "removed by a pass")
    _assert_invalid(lambda: str(dead), "removed by a pass")
    _assert_invalid(lambda: dead.erase(), "removed by a pass")
    with pytest.raises(ir.InvalidatedError):
        dead_result.type
    # Survivors keep their identity.
    assert m.body.operations[0] is f
    assert f.regions[0].blocks[0] is block
    ops = list(block.operations)
    assert len(ops) == 2
    assert ops[0] is live
    assert ops[1] is ret
    assert ret.operands[0] == live.result
    assert live.name == "arith.muli"
    assert "arith.addi" not in str(m)
    assert m.operation.verify()


def test_symbol_dce_removes_held_function(ctx, collect_until):
    m = ir.Module.parse(DEAD)
    f, unused = list(m.body.operations)
    unused_ret = unused.regions[0].blocks[0].operations[0]
    pm = PassManager.parse("builtin.module(symbol-dce)", context=ctx)
    pm.run(m.operation)
    _assert_invalid(lambda: unused.name, "removed by a pass")
    with pytest.raises(ir.InvalidatedError):
        unused_ret.name
    assert len(m.body.operations) == 1
    assert m.body.operations[0] is f
    # Running again (nothing to remove) keeps everything valid.
    pm.run(m.operation)
    assert m.body.operations[0] is f
    assert f.operation.name == "func.func"


def test_pass_on_lone_child_after_module_dropped(ctx, collect_until):
    m = ir.Module.parse(DEAD)
    f = m.body.operations[0]
    dead = f.regions[0].blocks[0].operations[0]
    m = None
    tether.collect()
    PassManager.parse("func.func(canonicalize)").run(f)
    _assert_invalid(lambda: dead.name, "removed by a pass")
    assert [o.name for o in f.regions[0].blocks[0].operations] == ["arith.muli", "func.return"]
    assert f.parent.name == "builtin.module"


def test_failing_pass_run_raises_mlir_error_and_keeps_handles_valid(ctx):
    m = ir.Module.parse(DEAD)
    f = m.body.operations[0]
    ops = list(f.regions[0].blocks[0].operations)
    pm = PassManager.parse("builtin.module(canonicalize)")
    # Anchored on builtin.module but run on a func.func: MLIR refuses.
    with pytest.raises(ir.MLIRError):
        pm.run(f)
    assert [o.name for o in ops] == ["arith.addi", "arith.muli", "func.return"]
    assert list(f.regions[0].blocks[0].operations) == ops


def test_bad_pipeline_raises(ctx):
    with pytest.raises((ir.MLIRError, ValueError)):
        PassManager.parse("builtin.module(no-such-pass-anywhere)")
    with pytest.raises((ir.MLIRError, ValueError)):
        PassManager.parse("builtin.module(")


# ---------------------------------------------------------------------------------------------
# Detach, then drop the old parent.


def test_detach_then_drop_old_parent(ctx, collect_until):
    m = ir.Module.parse(NESTED)
    g = m.body.operations[1]
    g_ret = g.regions[0].blocks[0].operations[0]
    assert ctx._get_live_root_count() == 1

    same = g.detach_from_parent()
    assert same is g
    with pytest.raises(ValueError, match="Detached"):
        g.parent
    assert g.block is None
    assert len(m.body.operations) == 1
    assert "@g" not in str(m)
    assert g_ret.parent is g.operation

    m = None
    # The old module goes away; the detached op (a root of its own, not a module) stays.
    assert collect_until(lambda: ctx._get_live_root_count() == 1)
    assert g.operation.name == "func.func"
    assert "func.func @g()" in str(g)
    assert g.verify()
    assert g_ret.parent is g.operation
    seen = []
    g.walk(lambda o: seen.append(o), walk_order=ir.WalkOrder.PRE_ORDER)
    # walk hands out Operation objects, as upstream's walk does.
    assert seen[0] is g.operation and seen[1] is g_ret.operation

    # And it can be given a new home.
    m2 = ir.Module.create(loc=ir.Location.unknown())
    m2.body.append(g)
    assert g.parent is m2.operation
    assert m2.body.operations[0] is g
    assert m2.operation.verify()
    assert ctx._get_live_root_count() == 1


def test_detach_nested_unused_op_then_drop_module(ctx, collect_until):
    m = ir.Module.parse(r"""module {
      func.func @h() -> i32 {
        %c = arith.constant 42 : i32
        %d = arith.constant 7 : i32
        return %d : i32
      }
    }""")
    c = m.body.operations[0].regions[0].blocks[0].operations[0]
    assert c.detach_from_parent() is c
    with pytest.raises(ValueError, match="Detached"):
        c.parent
    m = None
    assert collect_until(lambda: ctx._get_live_root_count() == 1)
    assert c.name == "arith.constant"
    assert "42" in str(c)
    assert str(c.result.type) == "i32"
    assert c.clone().name == "arith.constant"


def test_detach_root_is_harmless(ctx):
    """Detaching a root: tether treats it as a no-op (upstream raises ValueError); either way the
    op stays valid and keeps its contents."""
    m = ir.Module.parse(NESTED)
    op = m.operation
    try:
        assert op.detach_from_parent() is op
    except ValueError:
        pass
    assert op.parent is None
    assert len(m.body.operations) == 2
