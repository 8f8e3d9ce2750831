"""A detached block pushed into a region, used after the region's operation was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
block = b.new_block([b.i32()])
f.operation().region(0).push_back(block)
f.operation().erase()
attempt(lambda: (block.num_args(), str(block.add_arg(b.i32()).type())))
