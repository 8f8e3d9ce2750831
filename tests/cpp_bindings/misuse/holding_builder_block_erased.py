"""A builder class that holds its OpBuilder (instead of being one) creates at an insertion point
whose block was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [])
hb = demo.holding_builder(ctx)
hb.set_insertion_point_to_end(extra)
hb.create_constant(1)
extra.erase()
attempt(lambda: [str(hb.create_constant(i)) for i in range(50)])
