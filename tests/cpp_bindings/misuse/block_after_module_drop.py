"""The body block of a function whose module Python let go of."""
# tether: worked (3, 'arith.addi')
# raw: signal
from misuse_common import TEXT, attempt, churn, collect, demo

ctx = demo.context()
mod = demo.parse_module(ctx, TEXT)
body = mod.body().first_op().region(0).front()
del mod
collect()
churn()
attempt(lambda: (body.num_ops(), body.first_op().name()))
