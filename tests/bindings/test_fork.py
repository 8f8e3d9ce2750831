"""fork() after MLIR ran multithreaded (issue 21, class 3): MLIR's worker threads do not exist in
the child, and a pass there waited for them forever. libtether stops them before a fork and starts
multithreading again after it (pthread_atfork: os.fork, multiprocessing's fork, tether's own trial
children). Each program runs in a child process with a timeout: a hang is a failure, not a stuck
test run.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from tether._mlir_version import MLIR_VERSION

PRELUDE = """
import os, sys, faulthandler
# A hang prints every thread's stack (and the process exits) before the test's own timeout, so
# that it says where it waits.
faulthandler.dump_traceback_later(40, exit=True)
from tether import ir
from tether.passmanager import PassManager
SRC = "\\n".join(f"func.func @f{i}(%a: i32) -> i32 {{ %b = arith.addi %a, %a : i32\\n"
                 f"return %b : i32 }}" for i in range(64))
PIPE = "builtin.module(func.func(canonicalize,cse))"
def run(ctx):
    with ctx:
        m = ir.Module.parse(SRC)
        PassManager.parse(PIPE).run(m.operation)
        return m
def in_child(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
            os._exit(0)
        except BaseException as e:
            print("child:", e, flush=True)
            os._exit(3)
    return os.waitpid(pid, 0)[1]
"""


def go(code):
    p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=50)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    return p.stdout


def test_a_child_runs_passes_after_the_parent_ran_them_multithreaded():
    out = go("""
    ctx = ir.Context()
    ctx.enable_multithreading(True)
    m = run(ctx)
    for _ in range(3):
        print("status", in_child(lambda: run(ctx)), flush=True)
    run(ctx)  # and the parent goes on, multithreaded
    # The child keeps the parent's IR too.
    print("status", in_child(lambda: print(str(m).count("func.func"), flush=True)), flush=True)
    """)
    assert out.split().count("status") == 4 and "status 0" in out and "64" in out, out
    assert all(line == "status 0" or line == "64" for line in out.split("\n") if line), out


def test_a_child_of_a_child_runs_passes():
    go("""
    ctx = ir.Context()
    ctx.enable_multithreading(True)
    run(ctx)
    def grandchild():
        run(ctx)
        assert in_child(lambda: run(ctx)) == 0
    assert in_child(grandchild) == 0
    """)


@pytest.mark.skipif(MLIR_VERSION < 22, reason="ThreadPool is MLIR 22's")
@pytest.mark.skipif(os.environ.get("TETHER_SANITIZER") == "asan", reason=(
    "a pool given from outside keeps its workers across the fork, and gcc 12's AddressSanitizer "
    "takes no lock around fork: a worker still freeing a finished task holds the sanitizer "
    "allocator's lock in the child, whose first allocation then waits for ever (seen twice in "
    "about 120 runs; the child's stack was in SizeClassAllocator64::GetFromAllocator). glibc's "
    "malloc, which the other configurations use, locks its arenas around fork."))
def test_a_context_with_a_pool_of_its_own_runs_single_threaded_in_a_child():
    go("""
    ctx = ir.Context()
    pool = ir.ThreadPool()
    ctx.enable_multithreading(False)
    ctx.set_thread_pool(pool)
    run(ctx)
    assert in_child(lambda: run(ctx)) == 0
    run(ctx)
    assert ctx.get_num_threads() == pool.get_max_concurrency()
    """)


def test_forking_from_a_python_pass_does_not_hang():
    # A pass written in Python runs with the context's threads suspended; a fork from inside it
    # leaves that context as it is, and the child can still use a context of its own.
    if MLIR_VERSION < 22:
        pytest.skip("passes written in Python are MLIR 22's")
    go("""
    ctx = ir.Context()
    ctx.enable_multithreading(True)
    seen = []
    def mypass(op, pass_):
        seen.append(in_child(lambda: run(ir.Context())))
    with ctx:
        m = ir.Module.parse(SRC)
        pm = PassManager("any")
        pm.add(mypass)
        pm.run(m.operation)
    assert seen == [0], seen
    run(ctx)
    """)


def test_tethers_own_trial_child_verifies_after_multithreaded_runs():
    # IR built by hand is verified in a forked child before its first pass (docs/ownership.md,
    # "Verifiers and parsers that crash"); with the context's workers started by an earlier run,
    # that child waited for them until the trial's timeout, and the run was refused.
    out = go("""
    ctx = ir.Context()
    ctx.enable_multithreading(True)
    run(ctx)
    from tether.dialects import func, arith
    with ctx, ir.Location.unknown():
        m = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(m.body):
            for k in range(8):
                f = func.FuncOp(f"g{k}", ([i32], [i32]))
                with ir.InsertionPoint(f.add_entry_block()):
                    a = f.arguments[0]
                    func.ReturnOp([arith.AddIOp(a, a).result])
        PassManager.parse(PIPE).run(m.operation)
        print("ran", str(m).count("arith.addi"))
    """)
    assert "ran 8" in out, out
