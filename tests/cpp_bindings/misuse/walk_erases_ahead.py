"""A walk callback erases operations the walk has not reached yet."""
# tether: worked ['arith.constant', 'arith.constant', 'func.return', 'func.func']
# raw: signal
from misuse_common import attempt, demo

ctx = demo.context()
b = demo.builder(ctx)
mod = b.create_module()
b.set_insertion_point_to_start(mod.body())
f = b.create_func("f", [], [])
b.set_insertion_point_to_start(f.body())
first, doomed = b.create_constant(1).defining_op(), [b.create_constant(i).defining_op() for i in range(2, 6)]
last = b.create_constant(6).defining_op()
b.create_return([])
seen = []


def visit(op):
    seen.append(op.name())
    if op is first:
        for d in doomed:
            d.erase()


def go():
    f.operation().walk(visit)
    return seen


attempt(go)
