"""An op class (FuncOp, through OpState) of a module Python let go of."""
# tether: worked (4, 'func.func')
# raw: signal
from misuse_common import attempt, churn, collect, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
del b, mod
collect()
churn()
attempt(lambda: (f.body().num_ops(), f.operation().name()))
