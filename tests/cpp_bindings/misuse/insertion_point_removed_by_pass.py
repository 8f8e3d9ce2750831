"""The builder's insertion point is in a function that symbol-dce removed."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
b.set_insertion_point_to_end(mod.body())
unused = b.create_func("unused", [], [], private=True)
b.set_insertion_point_to_end(unused.body())
b.set_insertion_point(b.create_return([]))
del unused
pm = demo.pass_manager(ctx)
pm.add_symbol_dce()
pm.run(mod.operation())
attempt(lambda: [str(b.create_constant(i)) for i in range(50)])
