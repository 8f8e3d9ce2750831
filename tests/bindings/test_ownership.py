"""The ownership model, one test per rule, plus detached region/block creation and the ownership
transfer on attachment.

Rules (numbered here as below; docs/ARCHITECTURE.md's rules 1 and 2):
1. any context-owned object (type, attribute, location) keeps its context alive;
2. any object created from scratch (parsed/created module, detached op/region/block) keeps the
   context it was created in alive;
3. any child object keeps its parent alive, transitively up to the root;
and nothing else keeps IR alive.
"""

import gc

import pytest

import tether
from tether import ir

NESTED = r"""module @m {
  func.func @f(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    return %0 : i32
  }
}"""

# Upstream's program: a child op outliving its module crashes there.
MY_MODULE = r"""module @my_module {
  func.func @my_func() {
    return
  }
}"""


# ---------------------------------------------------------------------------------------------
# Rule 1: context-owned objects keep the context alive.


def _type_from_dead_context():
    ctx = ir.Context()
    t = ir.Type.parse("tensor<4x?xf32>", context=ctx)
    return t


def test_rule1_type_outlives_its_context():
    t = _type_from_dead_context()
    gc.collect()
    for _ in range(3):
        tether.collect()
    assert str(t) == "tensor<4x?xf32>"
    assert isinstance(t, ir.RankedTensorType)
    assert len(t.shape) == 2 and t.shape[0] == 4
    assert t.element_type == ir.Type.parse("f32", context=t.context)
    # The context is still usable through the type.
    with t.context:
        i32 = ir.IntegerType.get_signless(32)
        assert str(ir.FunctionType.get([t], [i32])) == "(tensor<4x?xf32>) -> i32"
        m = ir.Module.parse("module {}")
        assert m.context == t.context


def _attr_and_loc_from_dead_context():
    ctx = ir.Context()
    a = ir.Attribute.parse('{x = 1 : i64, y = "s"}', context=ctx)
    loc = ir.Location.file("f.mlir", 3, 7, context=ctx)
    return a, loc


def test_rule1_attribute_and_location_outlive_their_context():
    a, loc = _attr_and_loc_from_dead_context()
    tether.collect()
    tether.collect()
    assert str(a) == '{x = 1 : i64, y = "s"}'
    assert "f.mlir" in str(loc) and "3" in str(loc) and "7" in str(loc)
    # Build IR with the location after the context lost its last Python reference.
    with loc:
        m = ir.Module.create()
        assert "f.mlir" in str(m.operation.location)
    assert str(a) == '{x = 1 : i64, y = "s"}'


def test_rule1_capsules_keep_their_owner_alive(run_checks):
    # A capsule of a type from a context nobody holds: in a fresh interpreter (a crash before).
    run_checks("""
    def make():
        c = ir.Context()
        return ir.IntegerType.get_signless(32, context=c)._CAPIPtr
    cap = make()
    gc.collect(); tether.collect()
    t = ir.Type._CAPICreate(cap)
    assert str(t) == "i32"
    """)


# ---------------------------------------------------------------------------------------------
# Rule 2: objects created from scratch keep the context alive.


def test_rule2_module_keeps_temporary_context_alive():
    m = ir.Module.parse(NESTED, ir.Context())
    gc.collect()
    tether.collect()
    tether.collect()
    assert "func.func @f" in str(m)
    assert m.context._get_live_root_count() >= 1
    # The context can still parse and build.
    m2 = ir.Module.parse("module {}", m.context)
    assert m2.context == m.context
    assert m.operation.verify()


def _detached_from_dead_context():
    ctx = ir.Context()
    with ctx, ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        op = ir.Operation.create("arith.constant", results=[i32],
                                 attributes={"value": ir.IntegerAttr.get(i32, 7)})
        region = ir.Region()
        block = ir.Block(arg_types=[i32])
    return op, region, block


def test_rule2_detached_objects_keep_context_alive():
    op, region, block = _detached_from_dead_context()
    gc.collect()
    tether.collect()
    tether.collect()
    assert op.name == "arith.constant"
    assert "7" in str(op)
    with pytest.raises(ValueError, match="Detached"):
        op.parent
    assert region.owner is None
    assert len(region.blocks) == 0
    assert block.owner is None
    assert len(block.arguments) == 1
    assert str(block.arguments[0].type) == "i32"
    # Still usable together after the collections.
    region.blocks.append(block)
    assert region.blocks[0] is block
    block.append(op)
    assert op.block is block


# ---------------------------------------------------------------------------------------------
# Rule 3: a child keeps its parent alive, transitively, up to the root (and the context).


def _grandchild(kind):
    ctx = ir.Context()
    m = ir.Module.parse(NESTED, ctx)
    func = m.body.operations[0]
    block = func.regions[0].blocks[0]
    if kind == "op":
        obj = block.operations[0]  # arith.addi
    elif kind == "result":
        obj = block.operations[0].result
    elif kind == "block":
        obj = block
    elif kind == "region":
        obj = func.regions[0]
    elif kind == "argument":
        obj = block.arguments[1]
    elif kind == "operands":
        obj = block.operations[0].operands
    else:
        raise AssertionError(kind)
    return obj


def _root_of(obj, kind):
    if kind == "op":
        return obj.parent.parent
    if kind == "result":
        return obj.owner.parent.parent
    if kind == "block":
        return obj.owner.parent
    if kind == "region":
        return obj.owner.parent
    if kind == "argument":
        return obj.owner.owner.parent
    if kind == "operands":
        return obj[0].owner.owner.parent
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["op", "result", "block", "region", "argument", "operands"])
def test_rule3_child_keeps_grandparent_alive(kind, collect_until):
    obj = _grandchild(kind)
    gc.collect()
    for _ in range(3):
        tether.collect()
    root = _root_of(obj, kind)
    ctx = root.context
    root = None
    # Only `obj` reaches the module; it must still be alive after any number of collections.
    for _ in range(3):
        tether.collect()
        assert ctx._get_live_root_count() == 1
    root = _root_of(obj, kind)
    assert root.name == "builtin.module"
    assert "arith.addi" in str(root)
    assert root.verify()
    root = None
    # Dropping the child lets the module go (eventually).
    obj = None
    assert collect_until(lambda: ctx._get_live_root_count() == 0)


def test_rule3_child_keeps_context_alive():
    obj = _grandchild("op")
    tether.collect()
    tether.collect()
    assert obj.context._get_live_root_count() == 1
    with obj.context:
        t = ir.Type.parse("i32")
        assert obj.result.type == t


def test_rule3_drop_module_keep_func_then_print(capfd, collect_until):
    ctx = ir.Context()
    module = ir.Module.parse(MY_MODULE, ctx)
    func = module.body.operations[0]
    # Upstream's own assertions (it counts live Python objects).
    assert ctx._get_live_module_count() == 1
    assert ctx._get_live_operation_count() == 1

    module = None
    gc.collect()
    assert ctx._get_live_module_count() == 0
    assert ctx._get_live_operation_count() == 1
    tether.collect()

    # `func` keeps its root (the module's IR) alive: rule 2 of ARCHITECTURE.md's ownership model. Collection
    # can't free it, however many times it runs.
    for _ in range(3):
        tether.collect()
        assert ctx._get_live_root_count() == 1
    assert ctx._get_live_operation_count() >= 1

    print(func)
    out = capfd.readouterr().out
    assert "func.func @my_func()" in out
    assert "return" in out

    func.print()
    out = capfd.readouterr().out
    assert "func.func @my_func()" in out

    assert func.operation.name == "func.func"
    assert "@my_func" in func.get_asm()
    assert func.verify() is True
    # The module is still reachable through the child, with its name and body intact.
    parent = func.parent
    assert parent is not None
    assert parent.name == "builtin.module"
    assert "module @my_module" in str(parent)
    assert parent.regions[0].blocks[0].operations[0] is func
    parent = None

    # Dropping the last reference frees the module eventually (bounded number of collections).
    func = None
    assert collect_until(lambda: ctx._get_live_root_count() == 0)
    assert collect_until(lambda: ctx._get_live_operation_count() == 0)


def test_rule3_drop_module_keep_nested_return_op(capfd, collect_until):
    ctx = ir.Context()
    module = ir.Module.parse(MY_MODULE, ctx)
    ret = module.body.operations[0].regions[0].blocks[0].operations[0]
    assert ret.name == "func.return"
    module = None
    tether.collect()
    assert ctx._get_live_module_count() == 0
    assert ctx._get_live_root_count() == 1
    print(ret)
    assert "return" in capfd.readouterr().out
    assert ret.parent.name == "func.func"
    assert ret.parent.parent.name == "builtin.module"
    ret = None
    assert collect_until(lambda: ctx._get_live_root_count() == 0)


def test_nothing_else_keeps_ir_alive(collect_until):
    """A held context, type or attribute does not keep a dropped module alive."""
    ctx = ir.Context()
    t = ir.Type.parse("i32", context=ctx)
    a = ir.Attribute.parse("3 : i32", context=ctx)
    m = ir.Module.parse(NESTED, ctx)
    assert ctx._get_live_root_count() == 1
    m = None
    assert collect_until(lambda: ctx._get_live_root_count() == 0)
    assert collect_until(lambda: ctx._get_live_operation_count() == 0)
    assert str(t) == "i32" and str(a) == "3 : i32"


def test_sibling_handle_does_not_keep_other_modules_alive(collect_until):
    ctx = ir.Context()
    keep = ir.Module.parse(NESTED, ctx)
    child = keep.body.operations[0]
    for _ in range(50):
        ir.Module.parse(NESTED, ctx)
    assert collect_until(lambda: ctx._get_live_root_count() == 1)
    assert child.operation.name == "func.func"


# ---------------------------------------------------------------------------------------------
# Detached regions and blocks: creation, filling, attachment; ownership moves to the parent.


def _build_func_body(i32):
    """A detached region holding one block `^bb0(%x: i32): func.return %x`."""
    region = ir.Region()
    assert region.owner is None
    block = ir.Block(arg_types=[i32])
    assert block.owner is None
    assert len(block.operations) == 0
    with ir.InsertionPoint(block):
        ret = ir.Operation.create("func.return", operands=[block.arguments[0]])
    assert ret.block is block
    assert len(block.operations) == 1
    region.blocks.append(block)
    assert len(region.blocks) == 1
    assert region.blocks[0] is block
    assert block.owner is None  # the region is still detached
    return region, block, ret


def test_detached_region_and_block_attach_to_new_op(ctx, collect_until):
    with ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        region, block, ret = _build_func_body(i32)
        fty = ir.FunctionType.get([i32], [i32])
        func = ir.Operation.create(
            "func.func",
            attributes={
                "sym_name": ir.StringAttr.get("ident"),
                "function_type": ir.TypeAttr.get(fty),
            },
            regions=[region],
        )
    # Ownership moved: the region is now the op's, with identity preserved all the way down.
    assert region.owner is func.opview  # Operation.create gives the Operation on MLIR 22
    assert func.regions[0] is region
    assert func.regions[0].blocks[0] is block
    assert block.owner is func.opview
    assert block.region is region
    assert ret.parent is func.operation
    assert func.verify()
    assert "func.func @ident(%arg0: i32) -> i32" in str(func)

    # Put it in a module; drop every reference except the innermost op: the module stays alive.
    module = ir.Module.create(loc=ir.Location.unknown())
    module.body.append(func)
    assert func.parent is module.operation
    assert ctx._get_live_root_count() == 1
    module = func = region = block = None
    for _ in range(3):
        tether.collect()
        assert ctx._get_live_root_count() == 1
    assert ret.parent.parent.name == "builtin.module"
    assert "@ident" in str(ret.parent.parent)
    ret = None
    assert collect_until(lambda: ctx._get_live_root_count() == 0)


def test_detached_block_appended_to_attached_region(ctx):
    with ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        op = ir.Operation.create("scf.execute_region", results=[i32], regions=1)
        assert len(op.regions[0].blocks) == 0
        block = ir.Block(arg_types=())
        with ir.InsertionPoint(block):
            c = ir.Operation.create("arith.constant", results=[i32],
                                    attributes={"value": ir.IntegerAttr.get(i32, 5)})
            ir.Operation.create("scf.yield", operands=[c.result])
        op.regions[0].blocks.append(block)
    assert op.regions[0].blocks[0] is block
    assert block.owner is op.opview  # Operation.create gives the Operation on MLIR 22
    assert block.region is op.regions[0]
    assert c.parent is op.operation
    assert op.verify()
    assert "scf.yield" in str(op)


def test_detached_block_keeps_its_ops_alive_until_attached(ctx, collect_until):
    with ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        block = ir.Block(arg_types=[i32, i32])
        with ir.InsertionPoint(block):
            add = ir.Operation.create("arith.addi", results=[i32],
                                      operands=[block.arguments[0], block.arguments[1]])
        add = None
        for _ in range(3):
            tether.collect()
        assert len(block.operations) == 1
        assert block.operations[0].name == "arith.addi"
        assert block.operations[0].operands[1] == block.arguments[1]


def test_detached_region_dropped_unattached_is_freed(ctx, collect_until):
    with ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        before = ctx._get_live_operation_count()
        for _ in range(100):
            region = ir.Region()
            block = region.blocks.append(i32)
            with ir.InsertionPoint(block):
                ir.Operation.create("func.return", operands=[block.arguments[0]])
        region = block = None
    assert collect_until(lambda: ctx._get_live_operation_count() <= before + 2)


def test_create_at_start_on_detached_region(ctx):
    with ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        f32 = ir.F32Type.get()
        region = ir.Region()
        b1 = region.blocks.append(i32)
        b0 = ir.Block.create_at_start(region, [f32])
        assert len(region.blocks) == 2
        assert region.blocks[0] is b0
        assert region.blocks[1] is b1
        assert str(b0.arguments[0].type) == "f32"
        assert b0.region is region


def test_attached_region_cannot_be_reused(ctx):
    """A region that already belongs to an op cannot be given to another one."""
    with ir.Location.unknown():
        region = ir.Region()
        op = ir.Operation.create("scf.execute_region", regions=[region])
        with pytest.raises((ValueError, RuntimeError, TypeError)):
            ir.Operation.create("scf.execute_region", regions=[region])
        with pytest.raises((ValueError, RuntimeError, TypeError)):
            ir.Operation.create("scf.execute_region", regions=[op.regions[0]])
        assert region.owner is op.opview  # Operation.create gives the Operation on MLIR 22


def test_attached_block_cannot_be_appended_again(ctx):
    with ir.Location.unknown():
        r1 = ir.Region()
        r2 = ir.Region()
        b = ir.Block()
        r1.blocks.append(b)
        with pytest.raises((ValueError, RuntimeError)):
            r2.blocks.append(b)
        assert b.region is r1
        assert len(r2.blocks) == 0
