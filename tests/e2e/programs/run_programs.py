#!/usr/bin/env python3
"""Runs the programs of this folder, each written against upstream's `mlir` package, on tether
(`python3 -m tether.run PROG`) and, given upstream's package, on upstream too
(`PYTHONPATH=DIR python3 PROG`); compares what they print.

    run_programs.py --tether-py bazel-bin/bindings/python [--upstream-py DIR] [PROG.py ...]
    run_programs.py ... --upstream-py DIR --update-expected   # PROG.expected from upstream's run
    run_programs.py ... --check-expected                      # tether against PROG.expected

Each program runs in a fresh interpreter. Its record is its standard output, then its exit status
(`=== exit: 0`, `=== exit: 1`, `=== signal: 11` for a crash, `=== timeout`), then, when it failed,
the last line of its standard error (the exception), or, when it succeeded, its standard error if
any. Records are normalized only where the two packages legitimately differ (see NORMALIZE):
object addresses and other hex pointer values, `mlir.`/`tether.` module paths in reprs, and the
deliberate differences of docs/python.md ("What differs") that show in printed text. Tracebacks
are not compared (their frames differ: tether.run, the packages' paths), only their last line.

A program whose first lines hold `# e2e-mlir: 19 -- REASON` uses upstream API of those MLIR versions
only (upstream's own package of another version fails on it too): with --mlir-version of another
version it is skipped (SKIP, with the reason).

A program whose first lines hold `# e2e-xfail: REASON` is expected to differ from upstream (a gap
of tether the reason names): a difference is XFAIL, a match is XPASS (remove the marker). A crash
or timeout of tether fails whatever the marker says.

Per program it prints one line: the verdict and tether's (and upstream's) exit status. It exits 1
when tether crashed, timed out, exited non-zero, or differed (from upstream, or with
--check-expected from PROG.expected), for a program not marked xfail; and on any XPASS.
"""

import argparse
import concurrent.futures
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (pattern, replacement), applied in order to stdout and stderr of both packages.
NORMALIZE = [
    # Object addresses in reprs, JIT'd function and buffer pointers printed in hex.
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    # Module paths in reprs (docs/python.md, "What differs": `mlir.` vs `tether.`). Upstream's
    # classes live in its native modules; tether's in tether.ir / tether.dialects. Map both onto
    # the public `mlir.` names.
    (re.compile(r"(?<![\w.])mlir\._mlir_libs\._site_initialize\.<locals>\."), "mlir.ir."),
    (re.compile(r"(?<![\w.])mlir\._mlir_libs\._mlir\."), "mlir."),
    (re.compile(r"(?<![\w.])mlir\._mlir_libs\._mlir\w+\."), "mlir.ir."),
    (re.compile(r"(?<![\w.])tether\."), "mlir."),
    # transform.interpreter failures: upstream raises ValueError; tether's
    # TransformInterpreterError is both a ValueError and an MLIRError (docs/python.md, "The
    # transform interpreter"), so its class name differs where a program prints it.
    (re.compile(r"\bTransformInterpreterError\b"), "ValueError"),
    # Use of invalidated IR: upstream raises RuntimeError("the operation has been invalidated");
    # tether's InvalidatedError is a RuntimeError with that wording plus the reason after a colon
    # (docs/python.md, "What differs": "invalid object").
    (re.compile(r"\bInvalidatedError\b"), "RuntimeError"),
    (re.compile(r"(has been invalidated): [^\n]*"), r"\1"),
]


def normalize(text):
    for pattern, repl in NORMALIZE:
        text = pattern.sub(repl, text)
    return text


def programs_in(folder):
    return sorted(p for p in glob.glob(os.path.join(folder, "*.py"))
                  if os.path.basename(p) != os.path.basename(__file__))


def xfail_reason(path):
    with open(path, encoding="utf-8") as f:
        for _, line in zip(range(10), f):
            m = re.match(r"#\s*e2e-xfail:\s*(.*)", line)
            if m:
                return m.group(1).strip() or "marked xfail"
    return None


def written_for(path):
    """(versions, reason) of a program whose first lines hold `# e2e-mlir: V[,V...] -- REASON`:
    it uses upstream API of those MLIR versions only (upstream's own package of another version
    cannot run it either), and is skipped on the others. (None, None) without the marker."""
    with open(path, encoding="utf-8") as f:
        for _, line in zip(range(10), f):
            m = re.match(r"#\s*e2e-mlir:\s*([0-9, ]+?)\s*(?:--\s*(.*))?$", line)
            if m:
                return {v.strip() for v in m.group(1).split(",") if v.strip()}, m.group(2) or ""
    return None, None


def run(python, path, pythonpath, via_tether, timeout):
    """Runs one program; returns (status, stdout, stderr): status is ('exit', code),
    ('signal', n) or ('timeout', None)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=pythonpath, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0",
               PYTHONIOENCODING="utf-8")
    if via_tether and os.environ.get("TETHER_SANITIZER") == "asan":
        # As tests/bindings/run_pytest.sh: the extension is instrumented, the interpreter not.
        libs = [subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True,
                               text=True).stdout.strip() for lib in ("libasan.so", "libubsan.so")]
        env["LD_PRELOAD"] = ":".join(libs + [os.environ.get("LD_PRELOAD", "")]).rstrip(":")
        env["PYTHONMALLOC"] = "malloc"
    argv = [python, "-m", "tether.run", path] if via_tether else [python, path]
    with tempfile.TemporaryDirectory() as cwd:
        try:
            p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return ("timeout", None), (e.stdout or b"").decode("utf-8", "replace"), \
                (e.stderr or b"").decode("utf-8", "replace")
    status = ("signal", -p.returncode) if p.returncode < 0 else ("exit", p.returncode)
    return status, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def record(status, stdout, stderr):
    """The normalized text compared between packages (and kept in PROG.expected)."""
    out = normalize(stdout)
    if out and not out.endswith("\n"):
        out += "\n"
    kind, value = status
    out += f"=== {kind}: {value}\n" if value is not None else f"=== {kind}\n"
    err = normalize(stderr).rstrip("\n")
    if status == ("exit", 0):
        if err:
            out += "=== stderr:\n" + err + "\n"
    elif err:
        out += "=== error: " + err.splitlines()[-1] + "\n"
    return out


def describe(status):
    kind, value = status
    return "timeout" if kind == "timeout" else f"signal {value}" if kind == "signal" \
        else f"exit {value}"


def diff(a, b, name_a, name_b, limit):
    lines = list(difflib.unified_diff(a.splitlines(), b.splitlines(), name_a, name_b,
                                      lineterm="", n=2))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


def check_one(args, path):
    name = os.path.basename(path)
    res = {"name": name, "path": path, "xfail": xfail_reason(path), "notes": []}
    t_status, t_out, t_err = run(args.python, path, args.tether_py, True, args.timeout)
    res["tether"] = t_status
    res["tether_record"] = record(t_status, t_out, t_err)
    if args.upstream_py:
        u_status, u_out, u_err = run(args.python, path, args.upstream_py, False, args.timeout)
        res["upstream"] = u_status
        res["upstream_record"] = record(u_status, u_out, u_err)
    return res


def verdict(args, res):
    """Sets res['verdict'] (PASS, FAIL, CRASH, XFAIL, XPASS) and res['why']; returns whether the
    program counts as failed."""
    path = res["path"]
    why = []
    crashed = res["tether"][0] != "exit"
    differs = False
    if res["tether"] != ("exit", 0):
        error = [l for l in res["tether_record"].splitlines() if l.startswith("=== error: ")]
        why.append(f"tether: {describe(res['tether'])}" + (f" ({error[-1][11:]})" if error else ""))
        differs = True
    if "upstream" in res:
        if res["upstream_record"] != res["tether_record"]:
            why.append("differs from upstream")
            differs = True
            res["notes"].append(diff(res["upstream_record"], res["tether_record"], "upstream",
                                     "tether", args.diff_lines))
    if args.check_expected:
        exp_path = expected_path(path, args.mlir_version)
        if not os.path.exists(exp_path):
            why.append(f"no {os.path.basename(exp_path)}")
            differs = True
        else:
            with open(exp_path, encoding="utf-8") as f:
                expected = f.read()
            if expected != res["tether_record"]:
                why.append("differs from the expected output")
                differs = True
                res["notes"].append(diff(expected, res["tether_record"], "expected", "tether",
                                         args.diff_lines))
    if crashed:
        res["verdict"] = "CRASH"
    elif res["xfail"]:
        res["verdict"] = "XFAIL" if differs else "XPASS"
        if differs:
            why.insert(0, res["xfail"])
        else:
            why.append("marked xfail but matches: remove the marker")
    else:
        res["verdict"] = "FAIL" if differs else "PASS"
    res["why"] = why
    return res["verdict"] in ("CRASH", "FAIL", "XPASS")


def expected_path(path, version, for_writing=False, record=None):
    """PROG.V.expected where upstream's output of MLIR V differs from PROG.expected (printed IR
    changes between MLIR versions), else PROG.expected. Writing: PROG.expected when there is none
    or it says the same; else PROG.V.expected (None: nothing to write)."""
    base, versioned = path[:-3] + ".expected", f"{path[:-3]}.{version}.expected"
    if not for_writing:
        return versioned if version and os.path.exists(versioned) else base
    if not os.path.exists(base) or not version:
        return base
    with open(base, encoding="utf-8") as f:
        if f.read() == record:
            if os.path.exists(versioned):
                os.remove(versioned)
            return None
    return versioned


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tether-py", default=os.environ.get("TETHER_PY"),
                    help="folder holding the tether package (bazel-bin/bindings/python)")
    ap.add_argument("--upstream-py", default=os.environ.get("TETHER_UPSTREAM_PY"),
                    help="folder holding upstream's built mlir package")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per program run")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--mlir-version", default="",
                    help="the MLIR version of the packages: PROG.V.expected is used where it exists")
    ap.add_argument("--check-expected", action="store_true",
                    help="compare tether's record with PROG.expected")
    ap.add_argument("--update-expected", action="store_true",
                    help="write upstream's record to PROG.expected (needs --upstream-py)")
    ap.add_argument("--diff-lines", type=int, default=60, help="diff lines shown per program")
    ap.add_argument("programs", nargs="*", help="programs to run (default: all of this folder)")
    args = ap.parse_args(argv)
    if not args.tether_py:
        print("run_programs.py: --tether-py (or $TETHER_PY) is required", file=sys.stderr)
        return 2
    if args.update_expected and not args.upstream_py:
        print("run_programs.py: --update-expected needs --upstream-py", file=sys.stderr)
        return 2
    args.tether_py = os.path.abspath(args.tether_py)
    if args.upstream_py:
        args.upstream_py = os.path.abspath(args.upstream_py)
    paths = [os.path.abspath(p) for p in args.programs] or programs_in(HERE)
    skipped = []
    if args.mlir_version:
        for p in list(paths):
            versions, reason = written_for(p)
            if versions is not None and args.mlir_version not in versions:
                paths.remove(p)
                skipped.append(f"SKIP   {os.path.basename(p):34} written for upstream MLIR "
                               f"{', '.join(sorted(versions))} only" + (f": {reason}" if reason else ""))
    for line in skipped:
        print(line)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda p: check_one(args, p), paths))

    failed = 0
    counts = {}
    for res in results:
        if verdict(args, res):
            failed += 1
        counts[res["verdict"]] = counts.get(res["verdict"], 0) + 1
        status = f"tether {describe(res['tether'])}"
        if "upstream" in res:
            status += f", upstream {describe(res['upstream'])}"
        line = f"{res['verdict']:5}  {res['name']:34} {status}"
        if res["why"]:
            line += "  -- " + "; ".join(res["why"])
        print(line)
        if res["verdict"] in ("CRASH", "FAIL", "XPASS"):
            for note in res["notes"]:
                print("    " + note.replace("\n", "\n    "))
        if args.update_expected:
            if res["upstream"][0] != "exit":
                print(f"    not writing {res['name'][:-3]}.expected: upstream "
                      f"{describe(res['upstream'])}")
            else:
                out = expected_path(res["path"], args.mlir_version, for_writing=True,
                                    record=res["upstream_record"])
                if out:
                    with open(out, "w", encoding="utf-8") as f:
                        f.write(res["upstream_record"])
    if skipped:
        counts["SKIP"] = len(skipped)
    print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())) +
          f" of {len(results) + len(skipped)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
