"""The builder creates at its insertion point after the block of that point was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [])
b.create_index(1)
b.set_insertion_point_to_end(extra)
extra.erase()
attempt(lambda: [str(b.create_constant(i)) for i in range(50)])
