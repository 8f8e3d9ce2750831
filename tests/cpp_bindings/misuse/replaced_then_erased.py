"""A value whose uses were replaced, its operation erased, the value used."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
old, new = b.create_constant(1), b.create_constant(2)
b.create_add(old, old)
old.replace_all_uses_with(new)
old.defining_op().erase()
attempt(lambda: (str(old.type()), old.num_uses()))
