"""A region of an erased operation."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
loop = f.body().ops()[2]
region = loop.region(0)
loop.erase()
attempt(lambda: (region.num_blocks(), region.front().num_ops()))
