"""A block argument used after the binding erased it."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [b.i32(), b.index()])
arg = extra.arg(0)
extra.erase_arg(0)
attempt(lambda: (str(arg.type()), arg.num_uses(), str(arg)))
