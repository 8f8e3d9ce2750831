"""What tether's child-process trials cost as the process grows (issue 24, item 3).

tether runs some calls in a trial first (docs/ownership.md, "Inference", "Verifiers and parsers
that crash", "Where the trials run"): result-type inference of a call shape not seen before, the
verification of a hand-built tree with an operation shape not seen before, a parse of text MLIR
crashes on. A trial in a forked child copies the process's page tables, so its cost grows with the
memory the process has touched; a trial in the trial helper (a process of its own) does not. This
prints, per call, the time of each kind of trial with no other memory and with GB of other memory
touched (a bytearray, not in huge pages), and the count of forks and of helper requests, as a
Markdown table. TETHER_TRIAL_HELPER=off in the environment measures the forks alone.

    PYTHONPATH=bazel-bin/bindings/python python3 tests/bench/trial_bench.py [--gb 8] [--n 100]

A program that prints a table, never a timed test.
"""

import argparse
import time

from tether import _tether, ir


def children():
    return _tether._global_stats()["children"]


def helper_requests():
    return _tether._global_stats()["trial_requests"]


def new_inference_shapes(n, salt):
    """arith.addi with inferred result types, each call a new shape: the shape is the op name, the
    kinds of the operands' types and the attributes' names and kinds (not an integer's width), so
    each call carries a discardable attribute of a new name."""
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.create()
        t = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(m.body):
            a = ir.Operation.create("test.src", results=[t]).result
            for i in range(n):
                ir.Operation.create("arith.addi", operands=[a, a], infer_type=True,
                                    attributes={"bench.k%d_%d" % (salt, i): ir.UnitAttr.get()})


def hand_built_prints(n, salt):
    """A module built by hand with a registered op of a new shape (a new integer width), printed:
    the first print verifies it in a child."""
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        for i in range(n):
            m = ir.Module.create()
            t = ir.IntegerType.get_signless(1 + (salt * n + i) % 4000)
            with ir.InsertionPoint(m.body):
                a = ir.Operation.create("test.src", results=[t]).result
                ir.Operation.create("arith.muli", results=[t], operands=[a, a])
            str(m)


def risky_parses(n, salt):
    """Text that mentions what MLIR 19's parser crashed on (a sparse encoding with block
    sparsity), each text new: parsed in a child first."""
    with ir.Context():
        for i in range(n):
            ir.Attribute.parse(
                "#sparse_tensor.encoding<{map = (i, j) -> (i floordiv 2 : dense, j floordiv %d "
                ": compressed, i mod 2 : dense, j mod %d : dense)}>" % (2 + salt * n + i,
                                                                      2 + salt * n + i))


KINDS = [("new inference shape (Operation.create, infer_type)", new_inference_shapes),
         ("hand-built module of a new shape, printed", hand_built_prints),
         ("risky parse (sparse encoding with floordiv), new text", risky_parses)]


def measure(fn, n, salt):
    before, asked = children(), helper_requests()
    t0 = time.perf_counter()
    fn(n, salt)
    dt = time.perf_counter() - t0
    return dt / n * 1e6, children() - before, helper_requests() - asked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=8.0, help="other memory in the second run")
    ap.add_argument("--n", type=int, default=100, help="calls per row")
    args = ap.parse_args()
    rows = []
    for kind, fn in KINDS:
        fn(2, 10_000)  # warm: imports, the first child's setup
    results = {}
    for gb_label, gb in (("0 GB", 0.0), ("%g GB" % args.gb, args.gb)):
        ballast = None
        if gb:
            ballast = bytearray(int(gb * (1 << 30)))
            for off in range(0, len(ballast), 4096):  # touch every page
                ballast[off] = 1
        for salt, (kind, fn) in enumerate(KINDS):
            results[(kind, gb_label)] = measure(fn, args.n, salt + (7 if gb else 1))
        del ballast
    labels = ["0 GB", "%g GB" % args.gb]
    print("| trial (per call) | %s: us (forks, helper) | %s: us (forks, helper) | ratio |"
          % tuple(labels))
    print("|---|---|---|---|")
    for kind, _ in KINDS:
        (a, ca, ha), (b, cb, hb) = results[(kind, labels[0])], results[(kind, labels[1])]
        rows.append("| %s | %.0f (%d, %d) | %.0f (%d, %d) | %.1fx |"
                    % (kind, a, ca, ha, b, cb, hb, b / a))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
