"""A pass manager run after Python let go of the context it was made for."""
# tether: worked 0
# raw: signal
from misuse_common import attempt, churn, collect, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
b.create_constant(5)
pm = demo.pass_manager(ctx)
pm.add_canonicalizer()
del ctx, b, f
collect()
churn()


def run():
    pm.run(mod.operation())
    return str(mod).count("arith.constant 5")


attempt(run)
