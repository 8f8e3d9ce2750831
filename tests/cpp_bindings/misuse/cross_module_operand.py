"""An operation of one module uses a value of another; Python lets go of the other module."""
# tether: worked 2
# raw: signal
from misuse_common import attempt, churn, collect, demo, function_module

ctx = demo.context()
b1, m1, f1 = function_module(ctx)
c = b1.create_constant(11)
b2, m2, f2 = function_module(ctx)
b2.create_add(c, c)
del b1, m1, f1, c
collect()
churn()
attempt(lambda: str(m2).count("arith.addi"))
