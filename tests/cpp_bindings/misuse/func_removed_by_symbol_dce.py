"""A private function that symbol-dce removed, used through its op class."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
b.set_insertion_point_to_end(mod.body())
unused = b.create_func("unused", [b.i32()], [], private=True)
b.set_insertion_point_to_end(unused.body())
b.create_return([])
pm = demo.pass_manager(ctx)
pm.add_symbol_dce()
pm.run(mod.operation())
attempt(lambda: (unused.body().num_args(), str(unused.arg(0).type())))
