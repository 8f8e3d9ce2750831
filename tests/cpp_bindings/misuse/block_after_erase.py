"""A block used after it was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [b.i32(), b.i32()])
extra.erase()
attempt(lambda: (extra.num_args(), str(extra.arg(1).type())))
