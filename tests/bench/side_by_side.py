"""Side-by-side benchmark: the same workloads on tether and on upstream's own `mlir` package.

Each workload is written once against upstream's names (`from mlir import ir`); on tether it runs
through the `mlir` -> `tether` alias. Every (package, workload) measurement is a fresh process,
and the packages are interleaved (tether, upstream, tether, ...), so a noisy shared machine
affects both alike. A child measures the CPU time of its workload loop only (not imports or
setup). The table gives medians (ns per call), and the ratio tether / upstream (< 1: tether is
faster).

    side_by_side.py [--upstream-py DIR] [--tether-py DIR] [--runs 5] [--n 20000]
                    [--floor CREATE_FLOOR] [--interpreter-floor DIR] [WORKLOAD...]

Without --upstream-py (the folder holding upstream's built `mlir`, e.g. from
../shared/tools/build_upstream_mlir_py.sh) only tether is measured. Results go in
docs/benchmarks.md.

Two floors say what no binding can go below. --floor (//tests/bench:create_floor) times the bare
C-API calls of a row in C: MLIR's own work. --interpreter-floor (the folder holding
//tests/bench:_callfloor.so) runs a row's Python against one object that every name resolves to
and that does nothing (tests/bench/callfloor.c): the interpreter's own work for the loop, the
argument lists and dicts, the lookups and the calls. Their sum is the least a row can cost; what a
package spends above it is its binding's overhead, printed for both packages.
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

# ---- workloads (run in the child) ---------------------------------------------------------------


def _module_with_constants(ir, n):
    lines = ["func.func @f() -> i32 {"]
    for i in range(n):
        lines.append(f"  %c{i} = arith.constant {i} : i32")
    lines.append("  return %c0 : i32")
    lines.append("}")
    return ir.Module.parse("\n".join(lines))


def w_op_create_constant(ir, n):
    i32 = ir.IntegerType.get_signless(32)
    attrs = [ir.IntegerAttr.get(i32, k) for k in range(64)]
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)
    # One call before the clock starts, as in every other row: the first operation of a dialect
    # costs more (timed on its own in the next row).
    ir.Operation.create("arith.constant", results=[i32], attributes={"value": attrs[0]}, ip=ip)

    def run():
        for k in range(n):
            ir.Operation.create("arith.constant", results=[i32],
                                attributes={"value": attrs[k & 63]}, ip=ip)
    return run, m


def w_first_op_create(ir, n):
    # MLIR 22's Operation.create imports no Python module in either package. Tether loads a
    # dialect when it is first used, upstream every available dialect in Context(): most of this
    # row is MLIR loading the arith dialect on tether's side, paid in the next row's Context() on
    # upstream's. (With the dialect loaded first, the call measured 60 us against upstream's 53.)
    i32 = ir.IntegerType.get_signless(32)
    attr = ir.IntegerAttr.get(i32, 1)
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)

    def run():
        ir.Operation.create("arith.constant", results=[i32], attributes={"value": attr}, ip=ip)
    return run, m


def w_context_first_create(ir, n):
    # What a program pays once: a Context, then its first operation of a dialect. Upstream loads
    # the dialects when the Context is made, tether when they are first used: the row above
    # alone moves that cost from one side to the other.
    def run():
        with ir.Context(), ir.Location.unknown():
            i32 = ir.IntegerType.get_signless(32)
            m = ir.Module.create()
            ir.Operation.create("arith.constant", results=[i32],
                                attributes={"value": ir.IntegerAttr.get(i32, 1)},
                                ip=ir.InsertionPoint(m.body))
    return run, None


def w_op_create_addi(ir, n):
    i32 = ir.IntegerType.get_signless(32)
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)
    c = ir.Operation.create("arith.constant", results=[i32],
                            attributes={"value": ir.IntegerAttr.get(i32, 1)}, ip=ip)
    v = c.results[0]

    def run():
        for _ in range(n):
            ir.Operation.create("arith.addi", results=[i32], operands=[v, v], ip=ip)
    return run, m


def w_dialect_builders(ir, n):
    from mlir.dialects import arith
    i32 = ir.IntegerType.get_signless(32)
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)

    def run():
        with ip:
            a = arith.ConstantOp(i32, 1)
            for _ in range(n):
                arith.AddIOp(a, a)
    return run, m


def w_build_and_print(ir, n):
    # The everyday frontend loop: build a function of 100 ops through the dialect classes, print
    # the module; again (n / 100 modules). Per op.
    from mlir.dialects import arith, func
    i32 = ir.IntegerType.get_signless(32)
    keep = []

    def run():
        for _ in range(max(1, n // 100)):
            m = ir.Module.create()
            with ir.InsertionPoint(m.body):
                f = func.FuncOp("f", ir.FunctionType.get([i32], [i32]))
                b = f.add_entry_block()
                with ir.InsertionPoint(b):
                    x = b.arguments[0]
                    for _ in range(100):
                        x = arith.AddIOp(x, x).result
                    func.ReturnOp([x])
            str(m)
            keep.append(m)
    return run, keep


def w_integer_type_get(ir, n):
    def run():
        f = ir.IntegerType.get_signless
        for _ in range(n):
            f(32)
    return run, None


def w_integer_attr_get(ir, n):
    i32 = ir.IntegerType.get_signless(32)

    def run():
        f = ir.IntegerAttr.get
        for k in range(n):
            f(i32, k)
    return run, None


def w_float_attr_get(ir, n):
    f32 = ir.F32Type.get()

    def run():
        f = ir.FloatAttr.get
        for _ in range(n):
            f(f32, 1.5)
    return run, None


def w_type_parse(ir, n):
    def run():
        for _ in range(n):
            ir.Type.parse("tensor<4x?xf32>")
    return run, None


def w_attribute_parse(ir, n):
    def run():
        for _ in range(n):
            ir.Attribute.parse("dense<[1, 2, 3, 4]> : tensor<4xi32>")
    return run, None


def w_op_attribute_get(ir, n):
    m = _module_with_constants(ir, 1)
    op = m.body.operations[0].regions[0].blocks[0].operations[0]

    def run():
        for _ in range(n):
            op.attributes["value"]
    return run, m


def w_result_type(ir, n):
    m = _module_with_constants(ir, 1)
    op = m.body.operations[0].regions[0].blocks[0].operations[0]

    def run():
        for _ in range(n):
            op.results[0].type
    return run, m


def w_walk(ir, n):
    m = _module_with_constants(ir, n)
    count = [0]

    def cb(op):
        count[0] += 1
        return ir.WalkResult.ADVANCE

    def run():
        m.operation.walk(cb)
    return run, m


def w_iterate_names(ir, n):
    m = _module_with_constants(ir, n)
    block = m.body.operations[0].regions[0].blocks[0]

    def run():
        for op in block.operations:
            op.name
    return run, m


def w_print_module(ir, n):
    m = _module_with_constants(ir, n)
    str(m)  # warmed up as the other rows: a process's first print is slower (MLIR's own set-up)

    def run():
        str(m)
    return run, m


def w_pass_pipeline(ir, n):
    # Steady state: three pipelines on modules of n/3 operations, after one untimed. (A single
    # call right after the setup measured 1.26x upstream, the loop 0.9x. One difference: tether
    # destroys what the setup dropped at its next safe point, inside a single timed call, where
    # upstream destroys it at once; in the loop each package destroys a module per iteration.)
    from mlir.passmanager import PassManager
    reps = 3
    asm = str(_module_with_constants(ir, max(1, n // reps)))

    def once():
        m = ir.Module.parse(asm)
        PassManager.parse("builtin.module(canonicalize,cse)").run(m.operation)

    once()

    def run():
        for _ in range(reps):
            once()
    return run, None


def w_build_loop(ir, n):
    # Issue 37's build loop: generic Operation.create of constants (an attribute dict) and of
    # arith.addi chained on the previous result, `.results[0]` of each (per op).
    i32 = ir.IntegerType.get_signless(32)
    attrs = [ir.IntegerAttr.get(i32, k) for k in range(64)]
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)
    create = ir.Operation.create
    first = create("arith.constant", results=[i32], attributes={"value": attrs[0]},
                   ip=ip).results[0]

    def run():
        prev = first
        for k in range(n // 2):
            c = create("arith.constant", results=[i32], attributes={"value": attrs[k & 63]},
                       ip=ip).results[0]
            prev = create("arith.addi", results=[i32], operands=[prev, c], ip=ip).results[0]
    return run, m


def w_ods_constant(ir, n):
    from mlir.dialects import arith
    i32 = ir.IntegerType.get_signless(32)
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)
    with ip:
        arith.ConstantOp(i32, 0)

    def run():
        with ip:
            for k in range(n):
                arith.ConstantOp(i32, k & 63)
    return run, m


def w_ods_addi_result(ir, n):
    from mlir.dialects import arith
    i32 = ir.IntegerType.get_signless(32)
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)
    with ip:
        a = arith.ConstantOp(i32, 1).result
        b = arith.ConstantOp(i32, 2).result
        arith.AddIOp(a, b).result

    def run():
        with ip:
            for _ in range(n):
                arith.AddIOp(a, b).result
    return run, m


def w_ods_func(ir, n):
    from mlir.dialects import func
    i32 = ir.IntegerType.get_signless(32)
    ftype = ir.FunctionType.get([i32, i32], [i32])
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)
    with ip:
        func.FuncOp("f", ftype)

    def run():
        with ip:
            for _ in range(n):
                func.FuncOp("f", ftype)
    return run, m


def w_ods_for(ir, n):
    from mlir.dialects import arith, scf
    m = ir.Module.create()
    ip = ir.InsertionPoint(m.body)
    with ip:
        idx = ir.IndexType.get()
        lb = arith.ConstantOp(idx, 0).result
        ub = arith.ConstantOp(idx, 10).result
        st = arith.ConstantOp(idx, 1).result
        scf.ForOp(lb, ub, st)

    def run():
        with ip:
            for _ in range(n):
                scf.ForOp(lb, ub, st)
    return run, m


WORKLOADS = {
    "Operation.create (arith.constant)": (w_op_create_constant, None),
    "first Operation.create of a dialect (one call; tether loads the dialect there)":
        (w_first_op_create, 1),
    "Context() + its first Operation.create (one call)": (w_context_first_create, 1),
    "Operation.create (arith.addi, operands)": (w_op_create_addi, None),
    "build loop: Operation.create constant + addi chained, .results[0] (per op)":
        (w_build_loop, None),
    "dialect builders (arith.AddIOp)": (w_dialect_builders, None),
    "arith.ConstantOp(i32, v)": (w_ods_constant, None),
    "arith.AddIOp(a, b).result": (w_ods_addi_result, None),
    "func.FuncOp(name, type)": (w_ods_func, None),
    "scf.ForOp(lb, ub, step) (with its body block)": (w_ods_for, None),
    "build 100 ops with dialect classes + print (per op)": (w_build_and_print, None),
    "IntegerType.get_signless": (w_integer_type_get, None),
    "IntegerAttr.get": (w_integer_attr_get, None),
    "FloatAttr.get": (w_float_attr_get, None),
    "Type.parse": (w_type_parse, None),
    "Attribute.parse": (w_attribute_parse, None),
    "op.attributes[name]": (w_op_attribute_get, None),
    "op.results[0].type": (w_result_type, None),
    "walk (per op)": (w_walk, None),
    "iterate block.operations + op.name (per op)": (w_iterate_names, None),
    "str(module) (per op)": (w_print_module, None),
    "canonicalize,cse pipeline incl. parse (per op)": (w_pass_pipeline, None),
}


# The rows whose Python does the same work on the interpreter floor's object (straight-line
# calls, lookups and indexing; not iteration, callbacks or printing, which it cannot stand for).
INTERPRETER_FLOOR_ROWS = (
    "Operation.create (arith.constant)",
    "Operation.create (arith.addi, operands)",
    "build loop: Operation.create constant + addi chained, .results[0] (per op)",
    "dialect builders (arith.AddIOp)",
    "arith.ConstantOp(i32, v)",
    "arith.AddIOp(a, b).result",
    "func.FuncOp(name, type)",
    "scf.ForOp(lb, ub, step) (with its body block)",
    "IntegerType.get_signless",
    "IntegerAttr.get",
    "FloatAttr.get",
    "Type.parse",
    "Attribute.parse",
    "op.attributes[name]",
    "op.results[0].type",
)


def _install_interpreter_floor():
    """`mlir`, `mlir.ir`, `mlir.dialects.*` and `mlir.passmanager` as the floor's object."""
    import types
    import _callfloor
    anything = _callfloor.anything
    mlir = types.ModuleType("mlir")
    mlir.ir = mlir.dialects = mlir.passmanager = anything
    sys.modules["mlir"] = mlir
    for name in ("ir", "dialects", "dialects.arith", "dialects.func", "dialects.scf",
                 "passmanager"):
        sys.modules["mlir." + name] = anything


# The rows the floor binary (tests/bench/create_floor.c) times in C: its key, the row.
FLOOR_ROWS = (
    ("constant", "Operation.create (arith.constant)"),
    ("addi", "Operation.create (arith.addi, operands)"),
    ("buildloop", "build loop: Operation.create constant + addi chained, .results[0] (per op)"),
    ("odsconstant", "arith.ConstantOp(i32, v)"),
    ("odsaddi", "arith.AddIOp(a, b).result"),
    ("funcop", "func.FuncOp(name, type)"),
    ("forop", "scf.ForOp(lb, ub, step) (with its body block)"),
    ("inttype", "IntegerType.get_signless"),
    ("intattr", "IntegerAttr.get"),
    ("floatattr", "FloatAttr.get"),
    ("typeparse", "Type.parse"),
    ("attrparse", "Attribute.parse"),
    ("print", "str(module) (per op)"),
    ("pipeline", "canonicalize,cse pipeline incl. parse (per op)"),
)


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(package, name, n):
    if package == "tether":
        import tether.alias
        tether.alias.install()
    elif package == "floor":
        _install_interpreter_floor()
    from mlir import ir
    with ir.Context(), ir.Location.unknown():
        if name == "bytes per wrapper":
            # What one more held wrapper costs in a process that already holds some: the wrappers
            # of a first module are made and kept before the measured ones (of a second module).
            # Without it the row measured the interpreter's first use of its allocator too:
            # Debian's Python 3.11.2 grew by 72 B per 32-byte object held at first, 40 B after
            # (pyenv's 3.11.7: 40 B both times), whichever package made them.
            import gc
            modules = [_module_with_constants(ir, n) for _ in range(2)]
            blocks = [m.body.operations[0].regions[0].blocks[0] for m in modules]
            warm = list(blocks[0].operations)
            gc.collect()
            before = _rss()
            held = list(blocks[1].operations)
            after = _rss()
            del warm
            return {"value": (after - before) / len(held), "unit": "B"}
        make, calls = WORKLOADS[name]
        run, keep = make(ir, n)
        t0 = time.process_time_ns()
        run()
        dt = time.process_time_ns() - t0
        return {"value": dt / (calls or n), "unit": "ns"}


# ---- the parent ---------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream-py", default=os.environ.get("TETHER_UPSTREAM_PY"))
    ap.add_argument("--tether-py", default=None)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--floor", help="the create_floor binary (//tests/bench:create_floor): adds "
                    "the bare C-API cost of the Operation.create rows")
    ap.add_argument("--interpreter-floor", metavar="DIR",
                    help="the folder holding //tests/bench:_callfloor.so: adds the interpreter's "
                    "own cost of the rows it can stand for, and each package's cost above both "
                    "floors")
    ap.add_argument("--child", nargs=3, metavar=("PACKAGE", "WORKLOAD", "N"), help=argparse.SUPPRESS)
    ap.add_argument("workloads", nargs="*")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], int(args.child[2]))))
        return 0
    names = args.workloads or list(WORKLOADS) + ["bytes per wrapper"]
    packages = ["tether"] + (["upstream"] if args.upstream_py else [])
    paths = {"tether": args.tether_py, "upstream": args.upstream_py,
             "floor": args.interpreter_floor}
    results = {(p, w): [] for p in packages + ["floor"] for w in names}
    for _ in range(args.runs):
        for w in names:
            measured = packages + (["floor"] if args.interpreter_floor and
                                   w in INTERPRETER_FLOOR_ROWS else [])
            for p in measured:
                env = dict(os.environ)
                if paths[p]:
                    env["PYTHONPATH"] = os.path.abspath(paths[p])
                proc = subprocess.run([args.python, os.path.abspath(__file__), "--child", p, w,
                                       str(args.n)], capture_output=True, text=True, env=env)
                if proc.returncode != 0:
                    results[(p, w)].append(None)
                    err = proc.stderr.strip().splitlines()
                    print(f"# {p} {w}: failed: {err[-1] if err else proc.returncode}",
                          file=sys.stderr)
                    continue
                results[(p, w)].append(json.loads(proc.stdout.strip().splitlines()[-1])["value"])
    floor = {}
    if args.floor:
        samples = collections.defaultdict(list)
        for _ in range(args.runs):
            proc = subprocess.run([args.floor, str(args.n)], capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"side_by_side: {args.floor} failed: {proc.stderr.strip()}")
            for line in proc.stdout.splitlines():
                k, v = line.split()
                samples[k].append(float(v))
        floor = {k: statistics.median(v) for k, v in samples.items() if v}
    version = subprocess.run([args.python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.strip()
    print(f"n={args.n}, runs={args.runs}, python {version} ({args.python})")
    head = "| workload | tether | upstream | tether/upstream |" if len(packages) > 1 else \
        "| workload | tether |"
    print(head)
    print("|" + "---|" * head.count("|")[:-1] if False else "|---" * (head.count("|") - 1) + "|")
    for w in names:
        unit = "B" if w == "bytes per wrapper" else "ns"
        cells = []
        med = {}
        for p in packages:
            vals = [v for v in results[(p, w)] if v is not None]
            med[p] = statistics.median(vals) if vals else None
            cells.append(f"{med[p]:.0f} {unit}" if med[p] is not None else "n/a")
        if len(packages) > 1:
            ratio = (f"{med['tether'] / med['upstream']:.2f}"
                     if med["tether"] is not None and med["upstream"] else "n/a")
            cells.append(ratio)
        print(f"| {w} | " + " | ".join(cells) + " |")
    for k, w in FLOOR_ROWS:
        if k not in floor:
            continue
        mult = []
        for p in packages:
            vals = [v for v in results.get((p, w), []) if v is not None]
            if vals:
                mult.append(f"{p} = {statistics.median(vals) / floor[k]:.1f}x")
        if "upstream" in packages and results.get(("upstream", w)):
            up = [v for v in results[("upstream", w)] if v is not None]
            if up and floor[k] > 0.5 * statistics.median(up):
                mult.append("0.5x upstream is below the floor")
        print(f"| C-API floor of {w} | {floor[k]:.0f} ns | | {', '.join(mult)} |")
    if args.interpreter_floor:
        floor_of = {w: floor[k] for k, w in FLOOR_ROWS if k in floor}
        for w in names:
            vals = [v for v in results.get(("floor", w), []) if v is not None]
            if not vals:
                continue
            interp = statistics.median(vals)
            notes = []
            if w in floor_of:
                least = interp + floor_of[w]
                above = {}
                for p in packages:
                    pv = [v for v in results.get((p, w), []) if v is not None]
                    if pv:
                        above[p] = statistics.median(pv) - least
                        notes.append(f"{p} {above[p]:.0f} ns above both floors")
                if above.get("upstream", 0) > 0 and "tether" in above:
                    notes.append(f"overhead tether/upstream = "
                                 f"{above['tether'] / above['upstream']:.2f}")
            print(f"| interpreter floor of {w} | {interp:.0f} ns | | {', '.join(notes)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
