"""Memory: parse-and-drop in a loop keeps live counts and RSS bounded.

Each measurement runs in a fresh interpreter (so other tests' memory does not count) that prints
one JSON line of measurements; the bounds are checked here.

Stated bounds (100,000 parse-and-drop iterations of a small module, after a 5,000-iteration
warm-up):
- without any explicit collection in the loop (collection must happen on its own): at every
  sample, at most 10,000 live modules (10% of the iterations) and 30,000 live operations;
- after one `tether.collect()` at the end: at most 2 live modules and 10 live operations (a
  conservative-GC margin; the loop's IR is all unreachable);
- RSS growth (VmRSS from /proc/self/status) over the 100,000 iterations: under 64 MiB.
"""

import json

ITERATIONS = 100_000
WARMUP = 5_000
SAMPLE_EVERY = 2_000
MAX_LIVE_MODULES = 10_000
MAX_LIVE_OPS = 30_000
MAX_RSS_GROWTH_KIB = 64 * 1024

COMMON = r"""
import json, sys
import tether
from tether import ir

def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")
"""

PARSE_AND_DROP = COMMON + r"""
ITER, WARMUP, EVERY = {iters}, {warmup}, {every}
ASM = '''module {{
  func.func private @f(i32) -> i32
  func.func @g(%a: i32) -> i32 {{
    %0 = arith.addi %a, %a : i32
    return %0 : i32
  }}
}}'''
ctx = ir.Context()

def one():
    m = ir.Module.parse(ASM, ctx)
    f = m.body.operations[1]
    assert f.operation.name == "func.func"
    assert f.regions[0].blocks[0].operations[0].name == "arith.addi"

for _ in range(WARMUP):
    one()
tether.collect()
rss0 = rss_kib()
max_mod = max_ops = 0
samples = []
for i in range(1, ITER + 1):
    one()
    if i % EVERY == 0:
        mods = ctx._get_live_module_count()
        ops = ctx._get_live_operation_count()
        max_mod = max(max_mod, mods)
        max_ops = max(max_ops, ops)
        samples.append((i, mods, ops, rss_kib()))
tether.collect()
print(json.dumps(dict(
    rss0=rss0, rss1=rss_kib(), max_mod=max_mod, max_ops=max_ops,
    end_mod=ctx._get_live_module_count(), end_ops=ctx._get_live_operation_count(),
    samples=samples)))
"""


def _measure(run_snippet, code):
    proc = run_snippet(code, timeout=900)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    assert lines, proc.stdout
    return json.loads(lines[-1])


def test_parse_and_drop_100k_modules_is_bounded(run_snippet):
    r = _measure(run_snippet, PARSE_AND_DROP.format(iters=ITERATIONS, warmup=WARMUP,
                                                    every=SAMPLE_EVERY))
    detail = f"\nsamples (iteration, live modules, live ops, rss KiB): {r['samples']}"
    assert r["max_mod"] <= MAX_LIVE_MODULES, f"live modules reached {r['max_mod']}" + detail
    assert r["max_ops"] <= MAX_LIVE_OPS, f"live operations reached {r['max_ops']}" + detail
    assert r["end_mod"] <= 2, f"{r['end_mod']} modules alive after collect" + detail
    assert r["end_ops"] <= 10, f"{r['end_ops']} operations alive after collect" + detail
    growth = r["rss1"] - r["rss0"]
    assert growth < MAX_RSS_GROWTH_KIB, f"RSS grew by {growth} KiB" + detail


EXPLICIT_COLLECT = COMMON + r"""
ctx = ir.Context()
after = []
for i in range(1, 20_001):
    m = ir.Module.parse("module { func.func private @f() }", ctx)
    m.body.operations[0].name
    m = None
    if i % 1000 == 0:
        tether.collect()
        after.append((ctx._get_live_module_count(), ctx._get_live_operation_count()))
print(json.dumps(dict(after=after)))
"""


def test_explicit_collect_frees_dropped_modules(run_snippet):
    """With `tether.collect()` every 1,000 iterations, what is left right after each collect is at
    most a conservative margin (5 modules, 10 operations)."""
    r = _measure(run_snippet, EXPLICIT_COLLECT)
    assert len(r["after"]) == 20
    for mods, ops in r["after"]:
        assert mods <= 5, r["after"]
        assert ops <= 10, r["after"]


CREATE_AND_DROP = COMMON + r"""
ctx = ir.Context()
maxima = []
with ctx, ir.Location.unknown():
    i32 = ir.IntegerType.get_signless(32)
    attr = ir.IntegerAttr.get(i32, 1)
    m = ir.Module.create()
    for i in range(1, 50_001):
        # A detached root, dropped at once.
        ir.Operation.create("arith.constant", results=[i32], attributes={"value": attr})
        # An op inserted into a live module and erased.
        with ir.InsertionPoint(m.body):
            op = ir.Operation.create("arith.constant", results=[i32], attributes={"value": attr})
        op.erase()
        if i % 5000 == 0:
            maxima.append(ctx._get_live_operation_count())
    tether.collect()
    end_ops = ctx._get_live_operation_count()
    n_body = len(m.body.operations)
print(json.dumps(dict(maxima=maxima, end_ops=end_ops, n_body=n_body)))
"""


def test_create_and_erase_50k_ops_is_bounded(run_snippet):
    """Detached ops dropped and inserted ops erased: live operations stay under 10,000 at every
    sample and at most 10 after a collect (the module itself plus margin)."""
    r = _measure(run_snippet, CREATE_AND_DROP)
    assert r["n_body"] == 0
    assert max(r["maxima"]) <= 10_000, r["maxima"]
    assert r["end_ops"] <= 10, r


LARGE_PARSE_AND_DROP = COMMON + r"""
ctx = ir.Context()
text = "func.func @f() {\n" + "".join(f"  %c{i} = arith.constant {i} : i32\n" for i in range(10000)) + "  return\n}\n"
live = []
for i in range(40):
    m = ir.Module.parse(text, ctx)
    m = None
    live.append(ctx._arena_stats()["roots"])
print(json.dumps(dict(text=len(text), live=live)))
"""


def test_parse_and_drop_large_modules_collects_on_its_own(run_snippet):
    """Parsing makes much IR behind one handle, which the collector's own heap does not see grow:
    parsing counts its text as IR pressure and collects past 1 MiB of it (docs/ownership.md). 40
    dropped modules of ~330 KB of text each: without that rule all 40 stay alive until something
    else collects; with it, the live roots stay around a dozen (the bound leaves a conservative
    margin)."""
    r = _measure(run_snippet, LARGE_PARSE_AND_DROP)
    assert r["text"] > 300_000
    assert max(r["live"]) <= 20, r["live"]
    assert r["live"][-1] <= 20, r["live"]


KEPT_MODULES = COMMON + r"""
ctx = ir.Context()
slots = []
with ctx, ir.Location.unknown():
    i32 = ir.IntegerType.get_signless(32)
    attr = ir.IntegerAttr.get(i32, 1)
    kept = []
    for k in range(10):
        m = ir.Module.create()
        ip = ir.InsertionPoint(m.body)
        prev = ir.Operation.create("arith.constant", results=[i32], attributes={"value": attr},
                                   ip=ip).results[0]
        for _ in range(20_000):
            prev = ir.Operation.create("arith.addi", results=[i32], operands=[prev, prev],
                                       ip=ip).results[0]
        kept.append(m)
        prev = None
        slots.append(ctx._arena_stats()["table_slots"])
    tether.collect()
    slots.append(ctx._arena_stats()["table_slots"])
    ops = [len(m.body.operations) for m in kept]
print(json.dumps(dict(slots=slots, ops=ops)))
"""


def test_kept_modules_do_not_keep_their_build_tables(run_snippet):
    """Ten modules of 20,001 operations each, built with `Operation.create` (every wrapper dropped
    as it goes) and kept: a module's intern table grows with the handles made between two
    collections (thousands of slots), and once its tree stays idle for a collection cycle it
    shrinks to what is live (a few handles). After a collect, the arena's tables hold at most a
    few slots per kept module, where ten full build tables would hold more than 100,000; without
    the shrinking they grow with every module kept (docs/ownership.md)."""
    r = _measure(run_snippet, KEPT_MODULES)
    assert r["ops"] == [20_001] * 10
    assert max(r["slots"][:-1]) >= 8192, r["slots"]  # a build table is large
    assert r["slots"][-1] <= 10 * 64 + 1024, r["slots"]


GC_COLLECT_FREES = COMMON + r"""
import gc
ctx = ir.Context()
mods = [ir.Module.parse("func.func @f() { return }", ctx) for _ in range(200)]
made = ctx._arena_stats()["roots"]
del mods
gc.collect()
for _ in range(1000):  # the interpreter's next pending-call check runs tether's collection
    pass
after = ctx._arena_stats()["roots"]
print(json.dumps(dict(made=made, after=after)))
"""


def test_gc_collect_frees_dropped_modules(run_snippet):
    """`gc.collect()` (a full Python collection) schedules the arena's collection at the next
    pending-call check, as upstream's bindings free a module whose last reference went: 200
    dropped modules (too little IR for a collection of its own) are destroyed without
    `tether.collect()`; at most a conservative margin stays."""
    r = _measure(run_snippet, GC_COLLECT_FREES)
    assert r["made"] >= 200, r
    assert r["after"] <= 20, r
