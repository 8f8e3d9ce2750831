"""A value whose operation CSE folded into an equal one."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
x = b.create_constant(3)
y = b.create_constant(3)
b.create_add(x, y)
b.create_add(y, y)
pm = demo.pass_manager(ctx)
pm.add_cse()
pm.run(mod.operation())
attempt(lambda: (y.defining_op().name(), str(y)))
