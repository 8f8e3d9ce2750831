"""Another thread erases an operation; this one uses it after."""
# tether: raised InvalidatedError
# raw: signal
import threading

from misuse_common import attempt, demo, function_module

ctx = demo.context()
b, mod, f = function_module(ctx)
op = b.create_constant(8).defining_op()
t = threading.Thread(target=op.erase)
t.start()
t.join()
attempt(lambda: (op.name(), str(op)))
