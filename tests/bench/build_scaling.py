"""Building IR at scale (issue 37): time and memory per built operation, tether and upstream.

For each size (10^3 .. 10^6 operations) and shape, a fresh process builds the IR and reports the
CPU time per operation and the growth of its resident set per operation (RSS after the build minus
before it, over the operations built). Shapes, both through the generic `Operation.create` with
`.results[0]` (the issue's loop: every wrapper is dropped as the loop goes on, as a frontend
does) and through the dialect classes:

  chain     a func.func whose body is an arith.constant, then arith.addi chained on the previous
            result (every op but the first uses its predecessor);
  wide      a func.func whose body is a wide block of scf.for loops (three index constants
            first), each with a body block holding an arith.addi of its induction variable and an
            scf.yield: regions, blocks and block arguments as well as operations.
  chain_kept  ten chains of a tenth of the operations each, each in a module of its own, all
            kept (not in the default set: --shapes chain_kept).

Before the measured build, each process builds (and keeps) a module of 10,000 operations of the
same shape, so that both packages' allocators are in their steady state. The packages are
interleaved per size (tether, upstream, tether, ...) and each cell is the median of --runs fresh
processes. The module is kept alive until the RSS is read (both packages alike);
the sizes are operations built (the func and the constants included).

    build_scaling.py [--upstream-py DIR] [--tether-py DIR] [--runs 3] [--sizes 1000,...]
                     [--shapes chain,wide,chain_ods,wide_ods]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _generic_func(ir):
    """A module holding an empty func.func @f made with Operation.create, and its body block."""
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        f = ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": ir.StringAttr.get("f"),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))})
    return m, f.regions[0].blocks.append()


def _chain_generic(ir, n):
    i32 = ir.IntegerType.get_signless(32)
    attr = ir.IntegerAttr.get(i32, 1)
    create = ir.Operation.create
    m, body = _generic_func(ir)
    ip = ir.InsertionPoint(body)
    prev = create("arith.constant", results=[i32], attributes={"value": attr}, ip=ip).results[0]
    for _ in range(n - 2):
        prev = create("arith.addi", results=[i32], operands=[prev, prev], ip=ip).results[0]
    return m


def _chain_ods(ir, n):
    from mlir.dialects import arith, func
    i32 = ir.IntegerType.get_signless(32)
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        f = func.FuncOp("f", ir.FunctionType.get([], []))
    with ir.InsertionPoint(f.add_entry_block()):
        prev = arith.ConstantOp(i32, 1).result
        for _ in range(n - 2):
            prev = arith.AddIOp(prev, prev).result
    return m


def _wide_generic(ir, n):
    index = ir.IndexType.get()
    create = ir.Operation.create
    m, body = _generic_func(ir)
    ip = ir.InsertionPoint(body)
    bounds = [create("arith.constant", results=[index],
                     attributes={"value": ir.IntegerAttr.get(index, k)}, ip=ip).results[0]
              for k in (0, 10, 1)]
    for _ in range((n - 4) // 3):
        loop = create("scf.for", operands=bounds, regions=1, ip=ip)
        b = loop.regions[0].blocks.append(index)
        iv = b.arguments[0]
        inner = ir.InsertionPoint(b)
        create("arith.addi", results=[index], operands=[iv, iv], ip=inner)
        create("scf.yield", ip=inner)
    return m


def _wide_ods(ir, n):
    from mlir.dialects import arith, func, scf
    index = ir.IndexType.get()
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        f = func.FuncOp("f", ir.FunctionType.get([], []))
    with ir.InsertionPoint(f.add_entry_block()):
        lb, ub, st = (arith.ConstantOp(index, k).result for k in (0, 10, 1))
        for _ in range((n - 4) // 3):
            loop = scf.ForOp(lb, ub, st)
            with ir.InsertionPoint(loop.body):
                iv = loop.induction_variable
                arith.AddIOp(iv, iv)
                scf.YieldOp([])
    return m


def _chain_kept(ir, n):
    """Ten chains of n/10 operations, each in its own module, all kept (a compiler that keeps
    what it built: memory per kept operation, the modules' build-time tables included)."""
    return [_chain_generic(ir, n // 10) for _ in range(10)]


WARMUP = 10000

SHAPES = {"chain": _chain_generic, "wide": _wide_generic, "chain_ods": _chain_ods,
          "wide_ods": _wide_ods, "chain_kept": _chain_kept}


def child(package, shape, n):
    if package == "tether":
        import tether.alias
        tether.alias.install()
    from mlir import ir
    import gc
    with ir.Context(), ir.Location.unknown():
        # Warm up, in a module of WARMUP operations of the same shape that is kept: imports, the
        # first creation of each name, and each package's allocators in their steady state (the
        # collector's heap of tether, whose size follows the garbage made between collections;
        # malloc's arenas), so that the measurement is what one more built operation costs. (A
        # dropped warm-up module would be freed at once by upstream and at tether's next
        # collection: memory one package reuses and the other not yet.)
        warm = SHAPES[shape](ir, WARMUP)  # noqa: F841
        gc.collect()
        # A full collection schedules tether's own as a pending call (docs/ownership.md): it runs
        # at the interpreter's next check, which this loop reaches, so that it is not inside the
        # measurement (for upstream the loop does nothing).
        for _ in range(1000):
            pass
        before = _rss()
        t0 = time.process_time_ns()
        m = SHAPES[shape](ir, n)
        dt = time.process_time_ns() - t0
        after = _rss()
        ops = 0

        def count(op):
            nonlocal ops
            ops += 1
            return ir.WalkResult.ADVANCE
        for one in m if isinstance(m, list) else [m]:
            one.operation.walk(count)
            ops -= 1  # the module itself
        return {"ns": dt / ops, "rss": (after - before) / ops, "ops": ops}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream-py", default=os.environ.get("TETHER_UPSTREAM_PY"))
    ap.add_argument("--tether-py", default=None)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--shapes", default="chain,wide,chain_ods,wide_ods")
    ap.add_argument("--child", nargs=3, metavar=("PACKAGE", "SHAPE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], int(args.child[2]))))
        return 0
    packages = ["tether"] + (["upstream"] if args.upstream_py else [])
    paths = {"tether": args.tether_py, "upstream": args.upstream_py}
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    results = {}
    for shape in shapes:
        for n in sizes:
            for _ in range(args.runs):
                for p in packages:
                    env = dict(os.environ)
                    if paths[p]:
                        env["PYTHONPATH"] = os.path.abspath(paths[p])
                    proc = subprocess.run([args.python, os.path.abspath(__file__), "--child", p,
                                           shape, str(n)], capture_output=True, text=True,
                                          env=env)
                    if proc.returncode != 0:
                        err = proc.stderr.strip().splitlines()
                        print(f"# {p} {shape} {n}: failed: {err[-1] if err else proc.returncode}",
                              file=sys.stderr)
                        continue
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                    results.setdefault((shape, n, p), []).append(r)
    version = subprocess.run([args.python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.strip()
    print(f"runs={args.runs}, python {version} ({args.python}); medians of fresh processes")
    head = "| shape | ops | " + " | ".join(
        f"{p} ns/op | {p} RSS B/op" for p in packages)
    if len(packages) > 1:
        head += " | time tether/upstream | RSS tether/upstream"
    print(head + " |")
    print("|---" * (head.count("|") + 1 - 1) + "|")
    for shape in shapes:
        for n in sizes:
            cells, med = [], {}
            ops = None
            for p in packages:
                rs = results.get((shape, n, p), [])
                if not rs:
                    cells += ["n/a", "n/a"]
                    continue
                ops = rs[0]["ops"]
                med[p] = (statistics.median(r["ns"] for r in rs),
                          statistics.median(r["rss"] for r in rs))
                cells += [f"{med[p][0]:.0f}", f"{med[p][1]:.0f}"]
            if len(packages) > 1 and len(med) == 2:
                cells.append(f"{med['tether'][0] / med['upstream'][0]:.2f}")
                cells.append(f"{med['tether'][1] / med['upstream'][1]:.2f}"
                             if med["upstream"][1] > 0 else "n/a")
            print(f"| {shape} | {ops} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
