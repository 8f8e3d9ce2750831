"""A saved insertion point restored after its block was erased."""
# tether: raised InvalidatedError
# raw: signal
from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [])
b.create_index(1)
saved = b.get_insertion_point()
b.set_insertion_point_to_end(f.body())
extra.erase()


def use():
    b.restore_insertion_point(saved)
    return [str(b.create_constant(i)) for i in range(50)]


attempt(use)
