"""A module printed after Python let go of its context."""
# tether: worked 2
# raw: signal
from misuse_common import TEXT, attempt, churn, collect, demo

ctx = demo.context()
mod = demo.parse_module(ctx, TEXT)
del ctx
collect()
churn()
attempt(lambda: str(mod).count("arith."))
