"""The same operation erased twice."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
op = b.create_constant(7).defining_op()
op.erase()
attempt(lambda: op.erase())
