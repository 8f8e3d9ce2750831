"""The source block of merge_block_before, used after the merge erased it; the operations it
held moved and stay usable."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
src = b.create_block_in(f.operation().region(0), [])
moved = b.create_index(42).defining_op()
src.merge_block_before(f.body())
assert moved.name() == "arith.constant" and moved.block().num_ops() == 5
attempt(lambda: (src.num_ops(), src.first_op()))
