"""A detached block moved before a block of a function, used after the function was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [])
loose = b.new_block([b.i32()])
loose.move_before(extra)
assert loose.region().parent_op().name() == "func.func"
f.operation().erase()
attempt(lambda: (loose.num_args(), str(loose.arg(0).type())))
