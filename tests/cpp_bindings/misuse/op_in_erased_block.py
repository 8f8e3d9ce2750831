"""An operation and a value of a block that was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [b.i32()])
s = b.create_add(extra.arg(0), extra.arg(0))
op = s.defining_op()
extra.erase()
attempt(lambda: (op.name(), str(s.type())))
