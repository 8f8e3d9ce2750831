"""Identity (seed 003): while a wrapper is alive, getting the same IR object again returns the same
Python object; `==` and `hash` follow the identity of the IR object; the intern table never hands
out a wrapper for IR that was freed.
"""

import gc

import tether
import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION

ASM = r"""module {
  func.func @f(%a: i32) -> i32 {
    %0 = arith.addi %a, %a : i32
    %1 = arith.muli %0, %a : i32
    return %1 : i32
  }
  func.func @g() {
    return
  }
}"""


def test_same_op_same_object(ctx):
    m = ir.Module.parse(ASM)
    assert m.body.operations[0] is m.body.operations[0]
    assert m.body.operations[-1] is m.body.operations[1]
    op = m.body.operations[0]
    assert op.parent is op.parent.operation
    assert op.parent is m.operation
    assert m.operation is m.operation
    assert list(m.body.operations)[0] is op
    assert op.regions[0].blocks[0].operations[0].parent is op.operation


def test_identity_through_every_path(ctx):
    m = ir.Module.parse(ASM)
    f = m.body.operations[0]
    block = f.regions[0].blocks[0]
    add, mul, ret = list(block.operations)
    # Through use-def chains: a result's owner is its operation's OpView on MLIR 22, its Operation
    # on 19 (as upstream's).
    def owner(op):
        return op if MLIR_VERSION >= 22 else op.operation

    assert mul.operands[0].owner is owner(add)
    assert ret.operands[0].owner is owner(mul)
    assert add.result.owner is owner(add)
    # Through the block.
    assert add.block is block
    assert block.owner is f
    assert add.parent is f.operation
    # Through a walk.
    walked = []
    m.operation.walk(lambda o: walked.append(o), walk_order=ir.WalkOrder.PRE_ORDER)
    assert walked[0] is m.operation
    assert walked[1] is f.operation  # walk gives Operation objects, as upstream
    assert walked[2] is add.operation and walked[3] is mul.operation and walked[4] is ret.operation


def test_block_and_region_identity(ctx):
    m = ir.Module.parse(ASM)
    f = m.body.operations[0]
    assert m.body is m.body
    assert f.regions[0] is f.regions[0]
    assert f.regions[0].blocks[0] is f.regions[0].blocks[0]
    block = f.regions[0].blocks[0]
    assert block.region is f.regions[0]
    assert f.regions[0].owner is f
    assert block.operations[0].block is block


def test_eq_and_hash_follow_ir_identity(ctx):
    m = ir.Module.parse(ASM)
    f, g = list(m.body.operations)
    assert f == m.body.operations[0]
    assert hash(f) == hash(m.body.operations[0])
    assert f != g
    assert not (f == g)
    assert f != "func.func"
    assert f != None  # noqa: E711
    d = {f: "f", g: "g"}
    assert d[m.body.operations[0]] == "f"
    assert d[m.body.operations[1]] == "g"
    assert len({f, g, m.body.operations[0], m.body.operations[1]}) == 2


def test_values_compare_by_ir_identity(ctx):
    m = ir.Module.parse(ASM)
    block = m.body.operations[0].regions[0].blocks[0]
    add, mul, ret = list(block.operations)
    assert mul.operands[0] == add.result
    assert hash(mul.operands[0]) == hash(add.result)
    assert mul.operands[1] == block.arguments[0]
    assert add.result != mul.result
    assert block.arguments[0] != add.result


def test_types_and_attributes_compare_by_value(ctx):
    a = ir.IntegerType.get_signless(32)
    b = ir.Type.parse("i32")
    assert a == b and hash(a) == hash(b)
    assert a != ir.IntegerType.get_signless(64)
    x = ir.IntegerAttr.get(a, 5)
    y = ir.Attribute.parse("5 : i32")
    assert x == y and hash(x) == hash(y)
    assert x != ir.IntegerAttr.get(a, 6)


def test_identity_survives_collections_while_wrapper_alive(ctx):
    m = ir.Module.parse(ASM)
    f = m.body.operations[0]
    add = f.regions[0].blocks[0].operations[0]
    block = add.block
    value = add.result
    fid, aid = id(f), id(add)
    for _ in range(5):
        gc.collect()
        tether.collect()
        assert m.body.operations[0] is f
        assert f.regions[0].blocks[0].operations[0] is add
        assert add.block is block
        assert add.result is value or add.result == value
        assert id(m.body.operations[0]) == fid
        assert id(add.parent.regions[0].blocks[0].operations[0]) == aid


def test_identity_survives_module_drop_while_child_held(ctx):
    m = ir.Module.parse(ASM)
    f = m.body.operations[0]
    add = f.regions[0].blocks[0].operations[0]
    m = None
    for _ in range(3):
        tether.collect()
    assert add.parent is f.operation
    assert f.regions[0].blocks[0].operations[0] is add
    root = f.parent
    assert root.regions[0].blocks[0].operations[0] is f


def test_identity_kept_across_mutation(ctx):
    m = ir.Module.parse(ASM)
    f, g = list(m.body.operations)
    g.move_before(f)
    assert m.body.operations[0] is g
    assert m.body.operations[1] is f
    g.detach_from_parent()
    with pytest.raises(ValueError, match="Detached"):
        g.parent
    m.body.append(g)
    assert m.body.operations[1] is g
    assert g.parent is m.operation


def test_clone_is_a_new_object(ctx):
    m = ir.Module.parse(ASM)
    f = m.body.operations[0]
    c = f.clone()
    assert c is not f
    assert c != f
    assert c.name == f.name
    assert c.regions[0].blocks[0].operations[0] is not f.regions[0].blocks[0].operations[0]


def test_new_ir_never_reuses_a_live_stale_wrapper(ctx):
    """Erase many ops while keeping their wrappers, then build many more: every new wrapper is a
    fresh object, never one of the erased ones (whose IR addresses MLIR is free to reuse)."""
    stale = []
    with ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        m = ir.Module.create()
        for round_ in range(30):
            with ir.InsertionPoint(m.body):
                ops = [
                    ir.Operation.create("arith.constant", results=[i32],
                                        attributes={"value": ir.IntegerAttr.get(i32, k)})
                    for k in range(20)
                ]
            for op in ops:
                for s in stale:
                    assert op is not s
            for op in ops:
                op.erase()
            stale.extend(ops)
            ops = None
    stale_ids = {id(s) for s in stale}
    assert len(stale_ids) == len(stale)
    for s in stale:
        try:
            s.name
        except ir.InvalidatedError as e:
            assert "erased" in str(e)
        else:
            raise AssertionError("stale wrapper still answers")
    assert len(m.body.operations) == 0


def test_interned_wrapper_released_when_unreferenced(ctx, collect_until):
    """Interning does not keep wrappers alive on its own: fetching many ops and dropping them
    leaves the live-operation count bounded by the IR, not by the number of fetches."""
    m = ir.Module.parse(ASM)
    for _ in range(2000):
        m.body.operations[0].regions[0].blocks[0].operations[1].name
    # 7 ops in the module (module, f, addi, muli, return, g, return) at most.
    assert collect_until(lambda: ctx._get_live_operation_count() <= 7)


def test_upstream_live_operation_counting(ctx, collect_until):
    # The shape of upstream's own test of the live-operation map: counts follow references, and
    # after the last one goes (plain del / gc.collect(), no tether call) no operation object is
    # counted. The module itself is freed by the arena's conservative collector: a stale word can
    # keep it through one collection, so that is collected for repeatedly (as everywhere).
    import gc
    module = ir.Module.parse("module @successfulParse {}", ctx)
    assert ctx._get_live_root_count() == 1
    op1 = module.operation
    assert ctx._get_live_operation_count() == 1
    op2 = module.operation
    assert ctx._get_live_operation_count() == 1
    assert op1 is op2
    module = None
    gc.collect()
    assert "module @successfulParse" in str(op1)
    assert ctx._get_live_root_count() == 1  # op1 keeps it alive
    op1 = op2 = None
    gc.collect()
    assert ctx._get_live_operation_count() == 0
    assert collect_until(lambda: ctx._get_live_root_count() == 0)


def test_live_operations_are_the_handles_live_objects(ctx):
    # One count per operation with a live object, however many views of it live; an erased
    # operation's object is no longer counted (upstream drops it from its live map on erase);
    # _get_live_operation_objects gives the Operation objects; after _clear_live_operations the
    # objects live on, valid, but are not counted and navigation makes new ones.
    import gc
    m = ir.Module.parse(ASM)
    gc.collect()
    base = ctx._get_live_operation_count()
    block = m.body.operations[0].regions[0].blocks[0]
    ops = list(block.operations)
    assert ctx._get_live_operation_count() == base + len(ops)
    views = [o.operation for o in ops]  # each op gets its Operation object too: still one each
    assert ctx._get_live_operation_count() == base + len(ops)
    objs = ctx._get_live_operation_objects()
    assert all(any(v is o for o in objs) for v in views)
    ops[-1].operation.erase()  # the return: nothing uses it
    assert ctx._get_live_operation_count() == base + len(ops) - 1
    assert ctx._clear_live_operations() == base + len(ops) - 1
    assert ctx._get_live_operation_count() == 0
    assert ops[1].name  # still valid
    again = block.operations[1]
    assert again is not ops[1] and again == ops[1]


def test_many_operation_and_opview_pairs_keep_identity(ctx):
    """An OpView and its Operation object, both held, for thousands of operations at once, released
    in random order, some views re-initialized on another operation: every pair keeps both ways of
    identity, and what is released lets go (the pairs live in a table of their own that grows,
    shrinks and reorders; a lost or stale entry shows here)."""
    import random

    rng = random.Random(7)
    n = 3000
    body = "\n".join('%%c%d = arith.constant %d : i32' % (i, i) for i in range(n))
    m = ir.Module.parse("func.func @f() {\n%s\nreturn\n}" % body)
    ops = list(m.body.operations[0].regions[0].blocks[0].operations)[:n]
    pairs = [(v, v.operation) for v in ops]
    del ops
    for v, o in pairs:
        assert v.operation is o and o.opview is v
    rng.shuffle(pairs)
    keep = pairs[: n // 3]
    # A second view of an operation (OpView(operation)) becomes the Operation's latest view; the
    # first still holds the same Operation.
    extra = [ir.OpView(o) for _, o in keep[:200]]
    for x, (v, o) in zip(extra, keep):
        assert x.operation is o and v.operation is o and o.opview is x
    del pairs, extra
    gc.collect()
    for v, o in keep:
        assert v.operation is o
        assert o.opview.operation is o
        assert v.opview is v
    # Re-initialized on another operation: it leaves the first pair.
    a, b = keep[0][0], keep[1][1]
    ir.OpView.__init__(a, b)
    assert a.operation is b and b.opview is a
    assert keep[0][1].opview is not a
    before = ctx._get_live_operation_count()
    del keep, a, b
    gc.collect()
    assert ctx._get_live_operation_count() < before
    # Fresh navigation after all that: identity as for any operation.
    ops = list(m.body.operations[0].regions[0].blocks[0].operations)
    assert ops[5].operation.opview is ops[5] and ops[5].operation is ops[5].operation
