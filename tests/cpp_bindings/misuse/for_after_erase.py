"""An op class (scf.for, through OpState) after its operation was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
b.set_insertion_point_to_start(f.body())
lb, ub, one = b.create_index(0), b.create_index(8), b.create_index(1)
loop = b.create_for(lb, ub, one)
loop.operation().erase()
attempt(lambda: (loop.body().num_ops(), str(loop.induction_var())))
