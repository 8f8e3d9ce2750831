"""A thread keeps a value while the main thread lets go of its module and collects."""
# tether: worked ('index', 'func.func')
# raw: signal
import threading

from misuse_common import attempt, churn, collect, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
arg = f.arg(0)
ready, dropped = threading.Event(), threading.Event()


def worker():
    ready.set()
    dropped.wait()
    attempt(lambda: (str(arg.type()), arg.owner_block().parent_op().name()))


t = threading.Thread(target=worker)
t.start()
ready.wait()
del b, mod, f
collect()
churn()
dropped.set()
t.join()
