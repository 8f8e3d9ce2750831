"""A type used after Python let go of its context and of the builder that made it."""
# tether: worked ('i32', 32)
# raw: signal
from misuse_common import attempt, churn, collect, demo

ctx = demo.context()
b = demo.builder(ctx)
t = b.i32()
del b, ctx
collect()
churn()
attempt(lambda: (str(t), t.width()))
