"""An argument of a block merged into another (merge_into replaced it by a value)."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
src = b.create_block_in(f.operation().region(0), [b.index()])
arg = src.arg(0)
b.create_add(arg, arg)
src.merge_into(f.body(), [f.arg(0)])
attempt(lambda: (str(arg.type()), arg.num_uses(), str(arg.owner_block())))
