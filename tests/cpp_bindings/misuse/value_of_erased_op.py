"""A result of an erased operation: its type, its text."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
v = b.create_constant(7)
v.defining_op().erase()
attempt(lambda: (str(v.type()), str(v), v.num_uses()))
