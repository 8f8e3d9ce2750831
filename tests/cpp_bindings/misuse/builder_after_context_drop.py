"""A builder used after Python let go of its context."""
# tether: worked 'i32'
# raw: signal
from misuse_common import attempt, churn, collect, demo

ctx = demo.context()
b = demo.builder(ctx)
del ctx
collect()
churn()


def use():
    mod = b.create_module()
    b.set_insertion_point_to_start(mod.body())
    return str(b.create_constant(1).type())


attempt(use)
