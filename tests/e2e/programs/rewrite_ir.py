# A hand-written rewriter over parsed IR, as optimizing frontends do without PDL: walk the module,
# fold x*1 / x+0, replace_all_uses_with, erase dead ops, hoist constants with move_before, clone a
# function body, insert at block begin / before the terminator, Block.create_at_start.
from mlir.ir import *
from mlir.dialects import arith, func

SRC = """
func.func @f(%x: i32, %y: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %a = arith.addi %x, %c0 : i32
  %c1 = arith.constant 1 : i32
  %m = arith.muli %a, %c1 : i32
  %s = arith.subi %m, %y : i32
  %dead = arith.muli %s, %s : i32
  %c2 = arith.constant 2 : i32
  %r = arith.addi %s, %c2 : i32
  return %r : i32
}
func.func @g(%x: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %0 = arith.addi %x, %c3 : i32
  %c3b = arith.constant 3 : i32
  %1 = arith.muli %0, %c3b : i32
  return %1 : i32
}
"""


def const_value(v):
    owner = v.owner
    if isinstance(owner, Block):
        return None
    if owner.name == "arith.constant":
        return IntegerAttr(owner.attributes["value"]).value
    return None


def fold_identities(module):
    changed = []

    def visit(op):
        if op.name in ("arith.addi", "arith.muli"):
            neutral = 0 if op.name == "arith.addi" else 1
            rhs = op.operands[1]
            if const_value(rhs) == neutral:
                changed.append(op)
        return WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in changed:
        # read the operand now: an earlier fold may have replaced it
        op.result.replace_all_uses_with(op.operands[0])
        op.erase()
    return len(changed)


def erase_dead(module):
    dead = []

    def visit(op):
        if op.name.startswith("arith.") and len(op.results) == 1 and not list(op.result.uses):
            dead.append(op)
        return WalkResult.ADVANCE

    n = 0
    while True:
        dead.clear()
        module.operation.walk(visit)
        if not dead:
            return n
        for op in dead:
            op.erase()
            n += 1


def hoist_constants(fn):
    entry = fn.regions[0].blocks[0]
    ops = list(entry.operations)
    first = ops[0]
    consts = [o for o in ops if o.name == "arith.constant"]
    for c in consts:
        if c != first:
            c.move_before(first)
    return len(consts)


with Context(), Location.unknown():
    module = Module.parse(SRC)
    print("folded:", fold_identities(module))
    print("dead removed:", erase_dead(module))
    print(module)

    g = module.body.operations[1]
    print("hoisted:", hoist_constants(g))
    # CSE by hand: two equal constants
    consts = [o for o in g.entry_block.operations if o.name == "arith.constant"]
    if consts[0].attributes["value"] == consts[1].attributes["value"]:
        consts[1].result.replace_all_uses_with(consts[0].result)
        consts[1].erase()
    print(g)

    # clone @g into @g_clone with an extra op at the start and before the terminator
    with InsertionPoint(module.body):
        cl = g.clone()
    cl.attributes["sym_name"] = StringAttr.get("g_clone")
    print("clone type:", type(cl).__name__, cl.sym_name)
    body = cl.regions[0].blocks[0]
    i32 = IntegerType.get_signless(32)
    with InsertionPoint.at_block_begin(body):
        marker = arith.ConstantOp(i32, 42)
    with InsertionPoint.at_block_terminator(body):
        last = arith.addi(body.operations[len(body.operations) - 2].result, marker.result)
    term = body.operations[len(body.operations) - 1]
    term.operands[0] = last
    print(cl)

    # move an op after another, detach and re-insert elsewhere
    f = module.body.operations[0]
    fb = f.regions[0].blocks[0]
    print("before move:", [o.name for o in fb.operations])
    sub = [o for o in fb.operations if o.name == "arith.subi"][0]
    c2 = [o for o in fb.operations if o.name == "arith.constant"][0]
    c2.move_after(sub)
    print("after move:", [o.name for o in fb.operations])
    c2.move_before(sub)
    print("moved back:", [o.name for o in fb.operations])
    det = c2.detach_from_parent()
    print("detached:", det.name, det.result.type)
    InsertionPoint.at_block_begin(fb).insert(det)
    print("reinserted:", [o.name for o in fb.operations])

    # a new function whose body is built with Block.create_at_start
    with InsertionPoint(module.body):
        h = func.FuncOp("h", ([i32], [i32]))
    blk = Block.create_at_start(h.regions[0], [i32])
    with InsertionPoint(blk):
        d = arith.muli(blk.arguments[0], blk.arguments[0])
        func.ReturnOp([d])
    print(h)

    # operand/user navigation
    for use in blk.arguments[0].uses:
        print("use:", use.owner.name, use.operand_number)
    print("verify:", module.operation.verify())
    # walk in pre-order with interruption
    seen = []

    def pre(op):
        seen.append(op.name)
        if op.name == "func.return":
            return WalkResult.INTERRUPT
        return WalkResult.ADVANCE

    module.operation.walk(pre, WalkOrder.PRE_ORDER)
    print("pre-order until first return:", seen)
    skipped = []

    def skip(op):
        skipped.append(op.name)
        return WalkResult.SKIP if op.name == "func.func" else WalkResult.ADVANCE

    module.operation.walk(skip, WalkOrder.PRE_ORDER)
    print("skip:", skipped)

    # an erased op's object raises instead of reading freed IR
    dead = arith.ConstantOp(i32, 5, ip=InsertionPoint.at_block_begin(fb))
    dead.operation.erase()
    try:
        dead.operation.name
    except RuntimeError as e:
        print("after erase:", type(e).__name__, e)
    print(module)
