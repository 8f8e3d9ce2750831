"""An operation erased while its result is still used; the module printed afterwards."""
# tether: raised RuntimeError
# raw: signal
from misuse_common import attempt, churn, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
c = b.create_constant(4)
b.create_add(c, c)


def go():
    c.defining_op().erase()
    churn()
    return str(mod)


attempt(go)
