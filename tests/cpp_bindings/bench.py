"""The costs of tether's holders in the demo binding (demo.cc): each workload run on the raw build
and on the tether build, in a fresh interpreter each, and printed side by side.

    bench.py RAW_DEMO_SO TETHER_DEMO_SO [--n N]

Rows (N = 100,000 unless --n says otherwise; times are the best of 3 runs):
  builder loop      N arith.addi built through the builder class, each result handed to Python
  read back         the function body's N operations listed (N Python objects made) and named
  values            each operation's result and its type read (2N conversions from Python)
  erase             the N operations erased one by one, last first
  block erase       100 empty blocks erased from a function of N operations (tether: a walk of
                    the tree per erase, see docs/cpp-bindings.md)
  merge             100 blocks of 10 operations each merged into the function body
  canonicalize      one canonicalizer run on the module (tether: verified first, revalidated after)
"""
import json
import os
import subprocess
import sys
import time


def workloads(demo, n):
    out = {}

    def timed(name, setup, fn, reps=3):
        best = None
        for _ in range(reps):
            state = setup()
            t0 = time.perf_counter()
            fn(state)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
            del state
            demo.collect()
        out[name] = best

    ctx = demo.context()

    def function(k):
        b = demo.builder(ctx)
        mod = b.create_module()
        b.set_insertion_point_to_start(mod.body())
        f = b.create_func("f", [b.i32()], [b.i32()])
        b.set_insertion_point_to_start(f.body())
        c = b.create_constant(1)
        v = f.arg(0)
        for _ in range(k):
            v = b.create_add(v, c)
        b.create_return([v])
        return b, mod, f

    def fresh():
        b = demo.builder(ctx)
        mod = b.create_module()
        b.set_insertion_point_to_start(mod.body())
        f = b.create_func("f", [b.i32()], [b.i32()])
        b.set_insertion_point_to_start(f.body())
        return b, mod, f, b.create_constant(1), f.arg(0)

    def build(state):
        b, mod, f, c, v = state
        for _ in range(n):
            v = b.create_add(v, c)

    timed("builder loop", fresh, build)

    def read(state):
        b, mod, f = state
        for op in f.body().ops():
            op.name()

    timed("read back", lambda: function(n), read)

    def values(state):
        b, mod, f = state
        for op in f.body().ops():
            if op.num_results():
                op.result(0).type()

    timed("values", lambda: function(n), values)

    def erase(state):
        b, mod, f = state
        ops = f.body().ops()
        ops[-1].erase()  # the return
        for op in reversed(ops[:-1]):
            op.erase()

    timed("erase", lambda: function(n), erase)

    def with_blocks(k, ops_each):
        b, mod, f = function(n)
        blocks = []
        for _ in range(k):
            blk = b.create_block_in(f.operation().region(0), [])
            for i in range(ops_each):
                b.create_constant(i)
            blocks.append(blk)
        return b, mod, f, blocks

    def block_erase(state):
        for blk in state[3]:
            blk.erase()

    timed("block erase", lambda: with_blocks(100, 0), block_erase)

    def merge(state):
        b, mod, f, blocks = state
        body = f.body()
        for blk in blocks:
            blk.merge_block_before(body)

    timed("merge", lambda: with_blocks(100, 10), merge)

    def canon(state):
        b, mod, f = state
        pm = demo.pass_manager(ctx)
        pm.add_canonicalizer()
        pm.run(mod.operation())

    timed("canonicalize", lambda: function(n), canon)
    return out


ROWS = ["builder loop", "read back", "values", "erase", "block erase", "merge", "canonicalize"]
PER = {"builder loop": "op", "read back": "op", "values": "op", "erase": "op", "block erase": "block", "merge": "block"}


def main():
    args = sys.argv[1:]
    n = 100_000
    if "--n" in args:
        i = args.index("--n")
        n = int(args[i + 1])
        del args[i : i + 2]
    if args and args[0] == "--worker":
        import demo

        print(json.dumps(workloads(demo, n)))
        return
    raw, tether = (os.path.dirname(os.path.abspath(p)) for p in args[:2])
    results = {}
    for name, path in [("raw", raw), ("tether", tether)]:
        env = dict(os.environ, PYTHONPATH=path)
        r = subprocess.run([sys.executable, __file__, "--worker", "--n", str(n)], env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"{name}: {r.stderr}")
        results[name] = json.loads(r.stdout)
    print(f"demo binding, N = {n:,} (best of 3; Python {sys.version.split()[0]})")
    print(f"{'workload':<16} {'raw':>12} {'tether':>12} {'ratio':>7}   per item (raw / tether)")
    for row in ROWS:
        a, b = results["raw"][row], results["tether"][row]
        unit = PER.get(row)
        k = n if unit == "op" else 100 if unit == "block" else 1
        per = f"{a / k * 1e6:.2f} / {b / k * 1e6:.2f} us per {unit}" if unit else ""
        print(f"{row:<16} {a * 1e3:>9.1f} ms {b * 1e3:>9.1f} ms {b / a:>6.2f}x   {per}")


if __name__ == "__main__":
    main()
