"""A block argument of a module Python let go of."""
# tether: worked ('i32', 1)
# raw: signal
from misuse_common import TEXT, attempt, churn, collect, demo

ctx = demo.context()
mod = demo.parse_module(ctx, TEXT)
a = mod.body().first_op().region(0).front().arg(0)
del mod
collect()
churn()
attempt(lambda: (str(a.type()), a.num_uses()))
