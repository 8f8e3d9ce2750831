"""An operation that the canonicalizer removed (unused), used after the pass."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
dead = b.create_constant(99).defining_op()
pm = demo.pass_manager(ctx)
pm.add_canonicalizer()
pm.run(mod.operation())
attempt(lambda: (dead.name(), str(dead)))
