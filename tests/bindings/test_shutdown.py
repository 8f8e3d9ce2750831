"""Shutdown: exiting the interpreter in every live-object state never crashes and never hangs.

Each scenario runs in a fresh interpreter (sys.executable, same PYTHONPATH) and must exit with
status 0, print its completion marker, and write NOTHING to stderr. A timeout catches hangs.
"""

import pytest

PRELUDE = r"""
import gc, sys, threading, time
import tether
from tether import ir
ASM = '''module {
  func.func @f(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    return %0 : i32
  }
  func.func @g() {
    return
  }
}'''
"""

SCENARIOS = {
    "live_modules": r"""
ctx = ir.Context()
modules = [ir.Module.parse(ASM, ctx) for _ in range(50)]
m = modules[0]
f = m.body.operations[0]
print("done")
""",
    "live_module_no_python_context_ref": r"""
m = ir.Module.parse(ASM, ir.Context())
print("done")
""",
    "lone_child_ops_module_dropped_and_collected": r"""
ctx = ir.Context()
def child():
    m = ir.Module.parse(ASM, ctx)
    return m.body.operations[0].regions[0].blocks[0].operations[0]
kids = [child() for _ in range(20)]
tether.collect()
assert ctx._get_live_root_count() == 20
print("done")
""",
    "lone_child_module_pending_destruction": r"""
# Modules that became unreachable (gc ran, no tether safe point yet) at exit.
ctx = ir.Context()
for _ in range(100):
    ir.Module.parse(ASM, ctx)
kid = ir.Module.parse(ASM, ctx).body.operations[1]
gc.collect()
print("done")
""",
    "contexts_in_globals": r"""
contexts = [ir.Context() for _ in range(10)]
c = contexts[0]
t = ir.Type.parse("tensor<2xf32>", context=c)
a = ir.Attribute.parse("[1, 2]", context=c)
loc = ir.Location.file("x.mlir", 1, 1, context=c)
ctx_entered = ir.Context()
ctx_entered.__enter__()      # still the current context at exit
ir.Location.unknown().__enter__()
print("done")
""",
    "detached_op": r"""
with ir.Context(), ir.Location.unknown():
    i32 = ir.IntegerType.get_signless(32)
    op = ir.Operation.create("arith.constant", results=[i32],
                             attributes={"value": ir.IntegerAttr.get(i32, 1)})
    m = ir.Module.parse(ASM)
    g = m.body.operations[1].detach_from_parent()
    region = ir.Region()
    block = ir.Block(arg_types=[i32])
m = None
print("done")
""",
    "erased_op": r"""
ctx = ir.Context()
m = ir.Module.parse(ASM, ctx)
f = m.body.operations[0]
add = f.regions[0].blocks[0].operations[0]
f.erase()
try:
    add.name
except ir.InvalidatedError:
    pass
print("done")
""",
    "erased_op_module_dropped": r"""
ctx = ir.Context()
m = ir.Module.parse(ASM, ctx)
g = m.body.operations[1]
ret = g.regions[0].blocks[0].operations[0]
g.erase()
m = None
tether.collect()
print("done")
""",
    "daemon_threads_running": r"""
started = threading.Barrier(4)
def spin():
    ctx = ir.Context()
    started.wait()
    while True:
        m = ir.Module.parse(ASM, ctx)
        m.operation.walk(lambda o: None)
        kid = m.body.operations[0]
        m = None
        str(kid)
        tether.collect()
for _ in range(3):
    threading.Thread(target=spin, daemon=True).start()
started.wait()
keep = ir.Module.parse(ASM, ir.Context())
print("done")
""",
    "daemon_threads_shared_context": r"""
ctx = ir.Context()
started = threading.Barrier(3)
def spin():
    started.wait()
    while True:
        m = ir.Module.parse(ASM, ctx)
        f = m.body.operations[0]
        m = None
        f.clone()
for _ in range(2):
    threading.Thread(target=spin, daemon=True).start()
started.wait()
print("done")
""",
    "non_daemon_threads_running": r"""
started = threading.Barrier(4)
def work():
    ctx = ir.Context()
    started.wait()
    deadline = time.monotonic() + 1.0
    n = 0
    while n < 3000 and time.monotonic() < deadline:
        m = ir.Module.parse(ASM, ctx)
        m.operation.walk(lambda o: None)
        kid = m.body.operations[0].regions[0].blocks[0].operations[0]
        m = None
        kid.name
        n += 1
        if n % 100 == 0:
            tether.collect()
for _ in range(3):
    threading.Thread(target=work).start()
started.wait()
print("done")
# the main thread ends here while the workers still run; the interpreter waits for them
""",
    "sys_exit_inside_with": r"""
ctx = ir.Context()
with ctx, ir.Location.unknown():
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        i32 = ir.IntegerType.get_signless(32)
        ir.Operation.create("arith.constant", results=[i32],
                            attributes={"value": ir.IntegerAttr.get(i32, 1)})
        print("done")
        sys.stdout.flush()
        sys.exit(0)
""",
    "del_during_finalization": r"""
class Holder:
    def __init__(self, op):
        self.op = op
    def __del__(self):
        # Runs during interpreter finalization: must not crash (an exception is swallowed here
        # so that stderr stays empty).
        try:
            self.op.name
            str(self.op)
        except BaseException:
            pass
ctx = ir.Context()
h1 = Holder(ir.Module.parse(ASM, ctx).body.operations[0])
h2 = Holder(ir.Module.parse(ASM, ctx).operation)
cycle = [Holder(ir.Module.parse(ASM, ctx).body.operations[1])]
cycle.append(cycle)
print("done")
""",
    "atexit_uses_tether": r"""
import atexit
ctx = ir.Context()
kid = ir.Module.parse(ASM, ctx).body.operations[0]
def at_exit():
    print("atexit", kid.operation.name)
    m = ir.Module.parse(ASM, ctx)
    print("atexit parse", m.body.operations[1].operation.name)
    tether.collect()
atexit.register(at_exit)
print("done")
""",
    "everything_at_once": r"""
ctx = ir.Context()
ctx.allow_unregistered_dialects = True
live = ir.Module.parse(ASM, ctx)
lone = ir.Module.parse(ASM, ctx).body.operations[0].regions[0].blocks[0]
with ir.Location.unknown(context=ctx):
    detached = ir.Operation.create("x.y")
erased_parent = ir.Module.parse(ASM, ctx)
erased = erased_parent.body.operations[0]
erased.erase()
other = ir.Context()
other_t = ir.Type.parse("i8", context=other)
barrier = threading.Barrier(2)
def spin():
    c = ir.Context()
    barrier.wait()
    while True:
        ir.Module.parse(ASM, c).body.operations[0].name
threading.Thread(target=spin, daemon=True).start()
barrier.wait()
print("done")
""",
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_exit_is_clean(name, run_snippet):
    proc = run_snippet(PRELUDE + SCENARIOS[name], timeout=90)
    assert "done" in proc.stdout, proc.stdout
    assert proc.stderr == ""
    if name == "atexit_uses_tether":
        assert "atexit func.func" in proc.stdout
        assert "atexit parse func.func" in proc.stdout


def test_exit_after_exception_in_main_is_still_clean(run_snippet):
    """An uncaught exception, with live IR about (a lone child, a module, a detached op), exits
    with status 1 and its traceback, and nothing after it: no crash report, no hang."""
    code = PRELUDE + r"""
ctx = ir.Context()
ctx.allow_unregistered_dialects = True
kid = ir.Module.parse(ASM, ctx).body.operations[0]
live = ir.Module.parse(ASM, ctx)
with ir.Location.unknown(context=ctx):
    detached = ir.Operation.create("x.y")
print("done", flush=True)
raise RuntimeError("uncaught, on purpose")
"""
    proc = run_snippet(code, timeout=90, check=False)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "done\n"
    lines = proc.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):", proc.stderr
    assert lines[-1] == "RuntimeError: uncaught, on purpose", proc.stderr
    assert sum(line.startswith("Traceback") for line in lines) == 1, proc.stderr


def test_exit_by_system_exit_is_clean(run_snippet):
    """sys.exit (SystemExit) with live IR: its status, and nothing on stderr."""
    code = PRELUDE + r"""
ctx = ir.Context()
kid = ir.Module.parse(ASM, ctx).body.operations[0]
raise SystemExit(3)
"""
    proc = run_snippet(code, timeout=90, check=False)
    assert proc.returncode == 3
    assert proc.stderr == ""
