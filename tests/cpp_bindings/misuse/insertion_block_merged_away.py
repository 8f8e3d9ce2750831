"""The builder's insertion point is in a block that a merge erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
src = b.create_block_in(f.operation().region(0), [])
b.create_index(3)
src.merge_block_before(f.body())
attempt(lambda: [str(b.create_constant(i)) for i in range(50)])
