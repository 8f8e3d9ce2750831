"""The trial helper: verification of hand-built IR and risky parses are tried in a process of their
own (`tether-trial`, next to libtether_capi.so), not in a fork of the caller; docs/ownership.md,
"Verifiers and parsers that crash". What a user sees: the same answers as before (valid IR prints
in the custom form, invalid IR raises MLIRError with MLIR's diagnostics, IR MLIR's verifier crashes
on raises instead of crashing), whatever the process's threads and forks, and whatever the helper
does (dies, is killed, is missing or is not a helper).

Each program runs in a fresh interpreter (`run_checks`): the counters of `_global_stats` say where
the trials ran ("trial_requests" to the helper, "children" forked).
"""

import pytest

SETUP = """
from tether import _tether
from tether.dialects import arith, func, linalg, tensor

def stats():
    return _tether._global_stats()

def hand_built(width, bad=False):
    # A module built by hand: its first print or verify is a trial (a new integer width is not a
    # new shape; a new kind of op is).
    m = ir.Module.create()
    t = ir.IntegerType.get_signless(width)
    with ir.InsertionPoint(m.body):
        a = ir.Operation.create("test.src", results=[t]).result
        ir.Operation.create("arith.muli", results=[ir.IntegerType.get_signless(width + bad)],
                            operands=[a, a])
    return m

def new_shape(n):
    # A function with n arguments: each n a shape not seen before, so each verification a trial.
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        f = func.FuncOp("f", ir.FunctionType.get([i32] * n, []))
        with ir.InsertionPoint(f.add_entry_block()):
            func.ReturnOp([])
    return m

def crashing_verifier():
    # MLIR's LinalgOp verifier crashes on a linalg.round built with no outputs.
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        t = tensor.EmptyOp([4], ir.F32Type.get()).result
        linalg.RoundOp([], [t], [])
    return m
"""


def checks(run_checks, body, env_setup=""):
    from conftest import IR_SETUP
    run_checks(body, setup="import os\n" + env_setup + IR_SETUP + SETUP)


def test_hand_built_ir_is_tried_in_the_helper(run_checks):
    checks(run_checks, """
    s0 = stats()
    m = hand_built(8)
    assert "arith.muli %0, %0 : i8" in str(m)          # verified: the custom form
    bad = hand_built(16, bad=True)
    e = raises(ir.MLIRError, bad.operation.verify)
    assert "requires the same type for all operands and results" in str(e), e
    s1 = stats()
    assert s1["children"] == s0["children"], (s0, s1)  # no fork of this process
    assert s1["trial_requests"] > s0["trial_requests"], (s0, s1)
    assert s1["trial_starts"] == 1, s1
    """)


def test_a_verifier_crash_kills_only_the_helper(run_checks):
    checks(run_checks, """
    m = crashing_verifier()
    e = raises(ir.MLIRError, m.operation.verify)
    assert "verifier crashes" in str(e), e
    assert '"linalg.round"' in str(m)                   # printed unverified, generic form
    starts = stats()["trial_starts"]
    # A fresh helper for the next trial, with right answers.
    assert "arith.muli" in str(hand_built(4))
    raises(ir.MLIRError, hand_built(5, bad=True).operation.verify)
    assert stats()["trial_starts"] == starts + 1, stats()
    assert stats()["children"] == 0, stats()
    """)


def test_risky_parses_are_tried_in_the_helper(run_checks):
    checks(run_checks, """
    s0 = stats()
    for i in range(3):
        a = ir.Attribute.parse(
            "#sparse_tensor.encoding<{map = (i, j) -> (i floordiv 2 : dense, j floordiv %d "
            ": compressed, i mod 2 : dense, j mod %d : dense)}>" % (2 + i, 2 + i))
        assert "sparse_tensor.encoding" in str(a)
    s1 = stats()
    assert s1["children"] == s0["children"] and s1["trial_requests"] == s0["trial_requests"] + 3
    """)


def test_inference_of_new_shapes_is_tried_in_the_helper(run_checks):
    # Result-type inference of a call shape not seen before: the helper makes the same call on
    # block arguments of the same types; no fork. An inference that crashes kills only the helper
    # and is refused here; calls with regions still go to a child.
    checks(run_checks, """
    m = ir.Module.parse("func.func @f(%a: i32, %b: f32, %i: index) { return }")
    a, b, i = m.body.operations[0].regions[0].blocks[0].arguments
    s0 = stats()
    with ir.InsertionPoint(m.body):
        r = ir.Operation.create("arith.addi", operands=[a, a], infer_type=True)
        assert str(r.results[0].type) == "i32"
        r = ir.Operation.create("arith.addf", operands=[b, b], infer_type=True)
        assert str(r.results[0].type) == "f32"
        r = ir.Operation.create("arith.cmpi", operands=[a, a], infer_type=True,
                                attributes={"predicate": ir.IntegerAttr.get(
                                    ir.IntegerType.get_signless(64), 0)})
        assert str(r.results[0].type) == "i1"
        s1 = stats()
        assert s1["children"] == s0["children"], (s0, s1)
        assert s1["trial_requests"] == s0["trial_requests"] + 3, (s0, s1)
        e = raises(ir.MLIRError, ir.Operation.create, "shape.shape_of", operands=[i],
                   infer_type=True)
        assert "inferring the result types" in str(e.error_diagnostics[0]), e
        s2 = stats()
        assert s2["children"] == s1["children"], (s1, s2)
        # The helper died of it: the next request starts a new one.
        r = ir.Operation.create("arith.muli", operands=[a, a], infer_type=True)
        assert str(r.results[0].type) == "i32"
        assert stats()["trial_starts"] == s2["trial_starts"] + 1
    """)


def test_right_answers_in_a_multithreaded_process(run_checks):
    # A forked trial child inherits locks held by threads it does not have: after a parallel pass,
    # or beside a busy Python thread, it could hang and then report a false error. The helper
    # is not a fork of this process.
    checks(run_checks, """
    import threading
    m = ir.Module.parse("func.func @f() { return }\\nfunc.func @g() { return }")
    PassManager.parse("builtin.module(func.func(canonicalize))").run(m.operation)
    stop = []
    def spin():
        x = 0
        while not stop:
            x += 1
    th = threading.Thread(target=spin)
    th.start()
    try:
        # Built first: on MLIR 19, result-type inference of a new shape may still fork.
        good = [new_shape(n) for n in range(1, 11)]
        bad = [hand_built(n + 100, bad=True) for n in range(1, 11)]
        crashing = crashing_verifier()
        s0 = stats()
        for n in range(10):
            assert "func.func @f(" in str(good[n]), n
            raises(ir.MLIRError, bad[n].operation.verify)
        e = raises(ir.MLIRError, crashing.operation.verify)
        assert "verifier crashes" in str(e), e
        s1 = stats()
        assert s1["trial_requests"] >= s0["trial_requests"] + 21, (s0, s1)
        assert s1["children"] == s0["children"], (s0, s1)
    finally:
        stop.append(1)
        th.join()
    """)


@pytest.mark.parametrize("setting", ["off", "", "/nonexistent/tether-trial", "/bin/true",
                                     "/bin/cat", "/bin/sh"])
def test_no_helper_or_not_a_helper(setting, run_checks):
    # Without a usable helper the trials fork, with the same answers; what TETHER_TRIAL_HELPER
    # names is asked only when it greets as a helper of this protocol and MLIR version.
    checks(run_checks, """
    assert "arith.muli %0, %0 : i8" in str(hand_built(8))
    raises(ir.MLIRError, hand_built(9, bad=True).operation.verify)
    e = raises(ir.MLIRError, crashing_verifier().operation.verify)
    assert "verifier crashes" in str(e), (str(e), stats())
    assert stats()["trial_requests"] == 0 and stats()["children"] > 0, stats()
    """, env_setup="os.environ['TETHER_TRIAL_HELPER'] = %r\n" % setting)


def test_a_helper_killed_from_outside_is_not_a_crash(run_checks):
    checks(run_checks, """
    import signal
    assert "arith.muli" in str(hand_built(8))
    pid = int(open("/proc/self/task/%d/children" % os.getpid()).read().split()[0])
    for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
        os.kill(pid, sig)
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped
        # The next trial restarts it; valid IR is not reported as crashing.
        requests = stats()["trial_requests"]
        assert "func.func @f(" in str(new_shape(sig)), sig
        assert stats()["trial_requests"] > requests, stats()
        pid = int(open("/proc/self/task/%d/children" % os.getpid()).read().split()[0])
    assert stats()["children"] == 0 and stats()["trial_starts"] == 4, stats()
    """)


def test_forked_children_use_a_helper_of_their_own(run_checks):
    checks(run_checks, """
    assert "arith.muli" in str(hand_built(8))
    starts = stats()["trial_starts"]
    pid = os.fork()
    if pid == 0:
        ok = "func.func @f(" in str(new_shape(3)) and stats()["trial_starts"] == starts + 1
        try:
            crashing_verifier().operation.verify()
            ok = False
        except ir.MLIRError as e:
            ok = ok and "verifier crashes" in str(e) and stats()["children"] == 0
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    # The parent's helper is still the parent's, and still answers.
    requests = stats()["trial_requests"]
    assert "func.func @f(" in str(new_shape(4))
    raises(ir.MLIRError, hand_built(32, bad=True).operation.verify)
    assert stats()["trial_starts"] == starts and stats()["trial_requests"] == requests + 1, stats()
    """)


def test_large_hand_built_ir(run_checks):
    checks(run_checks, """
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        f = func.FuncOp("big", ir.FunctionType.get([i32], [i32]))
        b = f.add_entry_block()
        with ir.InsertionPoint(b):
            x = b.arguments[0]
            for _ in range(20000):
                x = arith.AddIOp(x, x).result
            func.ReturnOp([x])
    s0 = stats()
    m.operation.verify()
    assert str(m).count("arith.addi") == 20000
    s1 = stats()
    assert s1["children"] == s0["children"] and s1["trial_requests"] == s0["trial_requests"] + 1, (
        s0, s1)
    """)


DIAGNOSTICS_PROGRAM = """
import json
from tether import _tether
from tether.dialects import arith, func, scf
out = []
def record(fn):
    try:
        fn()
        out.append("ok")
    except ir.MLIRError as e:
        out.append([str(e)] + [[str(d.location), d.message, [[str(n.location), n.message]
                                                          for n in d.notes]]
                               for d in e.error_diagnostics])
def build(kind):
    m = ir.Module.create(ir.Location.file("m.py", 1, 1))
    with ir.InsertionPoint(m.body), ir.Location.name("outer", ir.Location.file("f.py", 3, 4)):
        f = func.FuncOp("f", ir.FunctionType.get([i32], [i32]))
        b = f.add_entry_block()
        with ir.InsertionPoint(b):
            x = b.arguments[0]
            with ir.Location.file("g.py", 7, 8):
                y = arith.AddIOp(x, x).result
            with ir.Location.callsite(ir.Location.file("h.py", 9, 1), [ir.Location.file("k.py", 2, 2)]):
                if kind == 0:
                    ir.Operation.create("arith.muli", results=[ir.IntegerType.get_signless(64)],
                                        operands=[y, y])
                elif kind == 1:
                    ir.Operation.create("scf.yield", operands=[y])
                elif kind == 2:
                    ir.Operation.create("arith.constant", results=[i32],
                                        attributes={"value": ir.StringAttr.get("x")})
            if kind in (0, 2):
                func.ReturnOp([y])
    return m, f
for kind in range(4):
    m, f = build(kind)
    record(m.operation.verify)
    m, f = build(kind)
    record(f.verify)                       # an operation inside the tree
    m, f = build(kind)
    out.append(str(m))                     # printed: the generic form when it does not verify
print("RESULT" + json.dumps(out))
print("TRIALS", json.dumps(_tether._global_stats()))
"""


def test_the_helpers_diagnostics_are_mlirs_own(run_snippet, snippet_helpers):
    # A hand-built tree that does not verify is not verified in this process after the helper
    # said so (its verifier may read past what the IR has): the helper's diagnostics are emitted
    # here instead, at this process's operations and locations, with their notes. They are the
    # diagnostics MLIR gives when verifying here (a forked child's trial, which lets this process
    # verify, is the reference).
    from conftest import IR_SETUP
    import json
    results = {}
    for setting in ("default", "off"):
        env = "import os\n" + ("os.environ['TETHER_TRIAL_HELPER'] = 'off'\n" if setting == "off"
                               else "")
        proc = run_snippet(snippet_helpers + env + IR_SETUP + DIAGNOSTICS_PROGRAM)
        lines = proc.stdout.splitlines()
        results[setting] = json.loads([x for x in lines if x.startswith("RESULT")][0][6:])
        stats = json.loads([x for x in lines if x.startswith("TRIALS")][0][6:])
        if setting == "off":
            assert stats["trial_requests"] == 0 and stats["children"] > 0, stats
        else:
            assert stats["trial_requests"] > 0, stats
    assert results["default"] == results["off"]
    errors = [r for r in results["default"] if isinstance(r, list)]
    assert len(errors) >= 6, results["default"]
    assert any("h.py" in json.dumps(r) for r in errors), errors     # the caller's locations
    assert any("see current operation" in json.dumps(r) for r in errors), errors  # notes


def test_forked_trials_beside_threads_and_python_handlers(run_checks):
    # Found by tests/fuzz (diagnostics with thread steps): IR the helper cannot carry as text (a
    # use of a value out of its scope prints as <<UNKNOWN SSA VALUE>>) is tried in a forked child;
    # its verifier's diagnostics reached the program's Python diagnostic handler in the child,
    # whose interpreter then waited for ever for a thread of the parent that had asked for the GIL:
    # 30 s, then a false "verifier crashes". Diagnostics in a trial's child go nowhere now.
    checks(run_checks, """
    import threading
    seen = []
    handler = ctx.attach_diagnostic_handler(lambda d: seen.append(d.message) or False)
    stop = []
    def spin():
        x = 0
        while not stop:
            x += 1
    th = threading.Thread(target=spin)
    th.start()
    try:
        for n in range(3):
            m = ir.Module.create()
            with ir.InsertionPoint(m.body):
                f = func.FuncOp("f", ir.FunctionType.get([i32] * (n + 1), []))
                b = f.add_entry_block()
                with ir.InsertionPoint(b):
                    inner = arith.AddIOp(b.arguments[0], b.arguments[0]).result
                    func.ReturnOp([])
                ir.Operation.create("arith.addi", results=[i32], operands=[inner, inner])
            before = stats()["children"]
            e = raises(ir.MLIRError, m.operation.verify)
            assert "verifier crashes" not in str(e) and "dominate" in str(e), e
            assert stats()["children"] > before, stats()
    finally:
        stop.append(1)
        th.join()
    handler.detach()
    assert seen == [], seen     # the error went to the MLIRError, not to the handler
    """)
