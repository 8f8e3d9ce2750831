"""An operation of a module Python let go of."""
# tether: worked ('arith.addi', 2)
# raw: signal
from misuse_common import TEXT, attempt, churn, collect, demo

ctx = demo.context()
mod = demo.parse_module(ctx, TEXT)
g = mod.body().first_op()
add = g.region(0).front().first_op()
del mod, g
collect()
churn()
attempt(lambda: (add.name(), add.num_operands()))
