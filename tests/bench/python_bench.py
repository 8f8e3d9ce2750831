"""Benchmark of the tether.ir Python bindings (issue 4).

Builds a module with a 100,000-op block and prints, as a Markdown table, ns/op for:
- iterating `block.operations` and reading `op.name` (wrappers created on the fly and dropped);
- `op.parent` lookups (on held wrappers);
- re-iterating `block.operations` while every wrapper is alive (interned re-access) and reading
  `op.name`;
- creating 100,000 ops with `Operation.create` at an insertion point.
Plus two reference rows: the same loop over a plain Python list (the interpreter's floor) and
parsing the 100,000-op module.

Run: bazel run -c opt //tests/bench:python [-- --ops N --repeat R]
Compare with the raw C-API floor: bazel run -c opt //tests/bench:arena. Record results in
docs/benchmarks.md. Targets (issue 4): <= 150 ns/op for iteration with op.name, <= 80 ns/op for
interned re-access.
"""

import argparse
import gc
import platform
import sys
import time

import tether
from tether import ir


def build_asm(n):
    lines = ["module {", "  func.func @big() -> i32 {"]
    # n - 1 constants and the return: exactly n ops in the function's block.
    for i in range(n - 1):
        lines.append(f"    %c{i} = arith.constant {i} : i32")
    lines.append("    return %c0 : i32")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines)


def timed(fn, repeat):
    """Best wall time of `repeat` runs, in ns (the GC is collected before, not during, each)."""
    best = None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter_ns()
        fn()
        dt = time.perf_counter_ns() - t0
        best = dt if best is None else min(best, dt)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    n, repeat = args.ops, args.repeat

    rows = []  # (what, ops, total ns, target or "")
    ctx = ir.Context()
    asm = build_asm(n)

    holder = {}

    def parse():
        holder["m"] = ir.Module.parse(asm, ctx)

    rows.append(("parse the module (reference)", n, timed(parse, 1), ""))
    module = holder.pop("m")
    block = module.body.operations[0].regions[0].blocks[0]
    count = len(block.operations)
    assert count == n, count

    # 1. Iterate block.operations reading op.name; no wrapper is kept between runs.
    def iterate_names():
        for op in block.operations:
            op.name

    # The first pass also creates the arena's handles (they then live as long as the module).
    rows.append(("first iteration: new handles + wrappers, read `op.name`", n,
                 timed(iterate_names, 1), ""))
    rows.append(("iterate `block.operations`, read `op.name`", n,
                 timed(iterate_names, repeat), "<= 150"))

    # 2./3. Hold every wrapper: op.parent lookups and interned re-iteration.
    held = list(block.operations)
    func = held[0].parent

    def parents():
        for op in held:
            op.parent

    rows.append(("`op.parent` (held wrappers)", n, timed(parents, repeat), ""))

    def reiterate():
        for op in block.operations:
            op.name

    rows.append(("re-iterate (interned, wrappers alive), read `op.name`", n,
                 timed(reiterate, repeat), "<= 80"))

    def reiterate_only():
        for op in block.operations:
            pass

    rows.append(("re-iterate (interned), no attribute read", n, timed(reiterate_only, repeat),
                 ""))

    # Sanity: interning really holds while the wrappers are alive.
    for a, b in zip(held[:1000], block.operations):
        assert a is b
    assert held[-1].parent is func

    # Reference: the interpreter's own floor for the same loop shape.
    names = [op.name for op in held]

    class _Plain:
        __slots__ = ("name",)

    plain = [_Plain() for _ in range(n)]
    for p, s in zip(plain, names):
        p.name = s

    def python_floor():
        for p in plain:
            p.name

    rows.append(("plain Python list, read `.name` (floor)", n, timed(python_floor, repeat), ""))
    del held, names, plain
    tether.collect()

    # 4. Operation.create: n ops appended to an empty block.
    with ctx, ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        attr = ir.IntegerAttr.get(i32, 7)
        results = [i32]
        best = None
        for _ in range(max(1, repeat // 2)):
            target = ir.Module.create()
            gc.collect()
            t0 = time.perf_counter_ns()
            with ir.InsertionPoint(target.body):
                for _ in range(n):
                    ir.Operation.create("arith.constant", results=results,
                                        attributes={"value": attr})
            dt = time.perf_counter_ns() - t0
            assert len(target.body.operations) == n
            best = dt if best is None else min(best, dt)
            target = None
            tether.collect()
    rows.append(("`Operation.create` (arith.constant, at an insertion point)", n, best, ""))

    print(f"tether.ir Python benchmark: {n} ops, best of {repeat} runs "
          f"(Python {platform.python_version()}, {platform.machine()})")
    print()
    print("| measurement | ops | total (ms) | ns/op | target ns/op |")
    print("|---|---:|---:|---:|---|")
    for what, ops, total, target in rows:
        print(f"| {what} | {ops} | {total / 1e6:.1f} | {total / ops:.1f} | {target} |")
    print()
    print("Raw C-API floor: `bazel run -c opt //tests/bench:arena`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
