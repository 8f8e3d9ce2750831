"""The builder's insertion point is before an operation that was then erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
anchor = b.create_index(5).defining_op()
b.set_insertion_point(anchor)
anchor.erase()
attempt(lambda: [str(b.create_constant(i)) for i in range(50)])
