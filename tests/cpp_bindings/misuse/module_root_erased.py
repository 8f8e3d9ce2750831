"""The module's own operation erased through an operation object, its function used after."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, churn, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
mod.operation().erase()
churn()
attempt(lambda: (f.operation().name(), str(mod)))
