"""A thread builds at an insertion point whose block the main thread erases meanwhile."""
# tether: raised InvalidatedError
# raw: signal
import threading

from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
extra = b.create_block_in(f.operation().region(0), [])
b.create_index(0)
built, erased = threading.Event(), threading.Event()


def worker():
    def build():
        b.create_constant(1)
        built.set()
        erased.wait()
        return [str(b.create_constant(i)) for i in range(50)]

    attempt(build)


t = threading.Thread(target=worker)
t.start()
built.wait()
extra.erase()
erased.set()
t.join()
