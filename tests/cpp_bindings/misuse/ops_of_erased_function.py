"""A list of the operations of a function, taken before the function was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
ops = f.body().ops()
f.operation().erase()
attempt(lambda: [op.name() for op in ops])
