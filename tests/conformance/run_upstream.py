#!/usr/bin/env python3
"""Runs upstream MLIR's own Python test suite (`mlir/test/python` of LLVM 19 or 22) unchanged, against
tether through the `mlir` -> `tether` alias (or against upstream's own package, for comparison),
and prints a per-file table of test verdicts.

Each test file runs in a fresh interpreter. Its top-level statements that run tests (calls such
as `run(testX)` and decorated definitions such as `@run def testX`) are wrapped so that one
failing test prints its traceback and the file goes on with the next; a test that kills the
interpreter (a signal) is reported, and the file is started again after it. The output is split
at the file's `CHECK-LABEL:` lines and every label's checks are run with FileCheck on its own
slice of the output: one verdict per label. A file without labels is one test that passes when
the interpreter exits with 0 (and FileCheck passes, if it has CHECK lines).

    run_upstream.py --tests DIR [--package tether|upstream] [--upstream-py DIR] [FILE...]

DIR is upstream's `mlir/test/python` (tools/fetch_upstream_tests.sh --version V); FILEs are
paths relative to it or globs (default: `ir/*.py`). Nothing of upstream's is copied here.
Exit status: 0 when the run happened (whatever the verdicts), 2 on bad arguments; with
`--expect-min N` it is 1 when fewer than N tests pass.
"""

import argparse
import ast
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The program each test file is turned into: statements that run tests are wrapped in try/except,
# and before each one the number of the statement is written to a side file, so that after a
# crash the next run can start after it.
_WRAPPER = r'''
import os as _tc_os, sys as _tc_sys, traceback as _tc_tb
_tc_skip = int(_tc_os.environ.get("TETHER_CONF_SKIP", "-1"))
_tc_mark = _tc_os.environ.get("TETHER_CONF_MARK")
def _tc_enter(k):
    if _tc_mark:
        with open(_tc_mark, "w") as f:
            f.write(str(k))
    _tc_sys.stdout.flush()
    return k > _tc_skip
def _tc_fail(k):
    _tc_sys.stdout.flush()
    print("TETHER-CONFORMANCE: statement %d raised:" % k, file=_tc_sys.stderr)
    _tc_tb.print_exc()
    _tc_sys.stderr.flush()
'''


def _is_test_statement(node):
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return True
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.decorator_list:
        return True
    return False


def transform(source, filename):
    """The file's program with every test statement guarded (see _WRAPPER)."""
    tree = ast.parse(source, filename)
    body = []
    k = 0
    for node in tree.body:
        if not _is_test_statement(node):
            body.append(node)
            continue
        guard = ast.parse(
            f"if _tc_enter({k}):\n"
            f"    try:\n        pass\n"
            f"    except BaseException as _tc_e:\n"
            f"        if isinstance(_tc_e, SystemExit): raise\n"
            f"        _tc_fail({k})\n"
        ).body[0]
        guard.body[0].body = [node]
        body.append(guard)
        k += 1
    prelude = ast.parse(_WRAPPER).body
    # `from __future__` imports must stay first.
    future = [n for n in body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    rest = [n for n in body if n not in future]
    tree.body = future + prelude + rest
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), k


def run_line(source):
    """The file's RUN line: the program itself (`%PYTHON %s`) or a module run on it
    (`%PYTHON -m MODULE ARGS`, %s standing for the file), the variables an `env K=V ...` prefix
    sets, and how its output is checked."""
    m = re.search(r"RUN:\s*(?:env((?:\s+\w+=\S+)+)\s+)?%PYTHON (%s|-m \S+[^|]*)(.*)$", source, re.M)
    if not m:
        return None
    head, tail = m.group(2).strip(), m.group(3)
    module = None
    if head.startswith("-m "):
        module = head.split()[1:]
    env = dict(kv.split("=", 1) for kv in (m.group(1) or "").split())
    return {
        "env": env,
        "module": module,
        "stderr_to_stdout": "2>&1" in tail,
        "filecheck": "FileCheck" in tail,
        "filecheck_args": re.findall(r"(--[\w-]+=\S+)", tail),
    }


def label_groups(source):
    """[(label_text, check_lines)] in file order; checks before the first label form a group
    with label None."""
    groups = []
    current = (None, [])
    for line in source.splitlines():
        m = re.search(r"\b(CHECK(?:-[A-Z]+)?):(.*)$", line)
        if not m:
            continue
        directive, text = m.group(1), m.group(2)
        if directive == "CHECK-LABEL":
            if current[0] is not None or current[1]:
                groups.append(current)
            current = (text.strip(), [line.strip()])
        else:
            current[1].append(line.strip())
    if current[0] is not None or current[1]:
        groups.append(current)
    # A label whose checks use a FileCheck variable defined only before it (a label nested in a
    # test, as in value.py) belongs to the group before it.
    def uses_defs(checks):
        text = "\n".join(checks)
        return set(re.findall(r"\[\[(\w+)\]\]", text)), set(re.findall(r"\[\[(\w+):", text))

    # A group using global variables ([[$X]]) defined before the first label gets those checks
    # too, and is checked on the output from its start (marked by a True third element).
    pre = groups[0][1] if groups and groups[0][0] is None else []
    pre_globals = set(re.findall(r"\[\[(\$\w+):", "\n".join(pre)))
    marked = []
    for label, checks in groups:
        used = set(re.findall(r"\[\[(\$\w+)\]\]", "\n".join(checks)))
        if label is not None and used & pre_globals:
            marked.append((label, list(pre) + list(checks), True))
        else:
            marked.append((label, checks, False))
    groups = marked

    merged = []
    for label, checks, *_ in groups:
        checks = list(checks)
        uses, defs = uses_defs(checks)
        while merged and uses - defs:
            plabel, pchecks = merged.pop()
            label, checks = plabel, pchecks + checks
            uses, defs = uses_defs(checks)
        merged.append((label, checks))
    flags = {label: whole for label, _, whole in groups}
    return [(label, checks, flags.get(label, False)) for label, checks in merged]


def _label_regex(text):
    """FileCheck pattern syntax to a Python regex: {{re}} as regex, the rest literal."""
    out = []
    pos = 0
    for m in re.finditer(r"\{\{(.*?)\}\}", text):
        out.append(re.escape(text[pos:m.start()]))
        out.append(m.group(1))
        pos = m.end()
    out.append(re.escape(text[pos:]))
    return re.compile("".join(out))


def slice_output(output, groups):
    """For each label group, its slice of the output (from the line the label matches to the
    line before the next label's match); None when the label never appears."""
    lines = output.splitlines(keepends=True)
    starts = []
    pos = 0
    for label, *_ in groups:
        if label is None:
            starts.append(0)
            continue
        rx = _label_regex(label)
        found = None
        for i in range(pos, len(lines)):
            if rx.search(lines[i]):
                found = i
                break
        starts.append(found)
        if found is not None:
            pos = found + 1
    slices = []
    for gi, start in enumerate(starts):
        if start is None:
            slices.append(None)
            continue
        end = len(lines)
        for later in starts[gi + 1:]:
            if later is not None and later > start:
                end = later
                break
        whole = len(groups[gi]) > 2 and groups[gi][2]
        slices.append("".join(lines[0 if whole else start:end]))
    return slices


def filecheck(filecheck_bin, checks, text, extra_args):
    with tempfile.NamedTemporaryFile("w", suffix=".check", delete=False) as f:
        f.write("\n".join(checks) + "\n")
        path = f.name
    try:
        p = subprocess.run([filecheck_bin, path, "--dump-input=never", *extra_args],
                           input=text, capture_output=True, text=True, timeout=60)
        return p.returncode == 0, p.stderr
    finally:
        os.unlink(path)


def run_program(python, program_path, env, cwd, timeout, merge_stderr):
    """Runs the transformed program, restarting after statements that kill it. Returns
    (stdout, stderr, crashes) where crashes is a list of (statement, description)."""
    out, err = [], []
    crashes = []
    skip = -1
    mark = tempfile.NamedTemporaryFile(delete=False)
    mark.close()
    try:
        for _ in range(200):
            e = dict(env, TETHER_CONF_SKIP=str(skip), TETHER_CONF_MARK=mark.name)
            try:
                p = subprocess.run([python, program_path], cwd=cwd, env=e, timeout=timeout,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE)
                rc = p.returncode
                so, se = p.stdout, p.stderr or b""
                timed_out = False
            except subprocess.TimeoutExpired as t:
                rc, so, se, timed_out = None, t.stdout or b"", t.stderr or b"", True
            out.append(so.decode("utf-8", "replace"))
            err.append(se.decode("utf-8", "replace"))
            if not timed_out and rc >= 0:
                break
            with open(mark.name) as f:
                text = f.read().strip()
            stmt = int(text) if text else -1
            what = "timeout" if timed_out else f"signal {-rc}"
            crashes.append((stmt, what))
            if stmt <= skip:
                break
            skip = stmt
        return "".join(out), "".join(err), crashes
    finally:
        os.unlink(mark.name)


def run_file(args, rel):
    path = os.path.join(args.tests, rel)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    rl = run_line(source)
    if rl is None:
        return {"file": rel, "tests": [], "note": "no RUN line"}
    program, _ = transform(source, path)
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, os.path.basename(rel))
        with open(prog, "w", encoding="utf-8") as f:
            f.write(program)
        env = dict(os.environ)
        for k, v in rl["env"].items():
            # lit's substitutions of MLIR's runtime libraries (`%mlir_runner_utils`, ...).
            env[k] = re.sub(r"%(mlir_\w+)", lambda m: os.path.join(args.mlir_lib, f"lib{m.group(1)}.so"), v)
        if rl["module"]:
            # A module run on the (unchanged) file: tether runs modules through tether.run.
            argv = [a if a != "%s" else path for a in rl["module"]]
            pre = ["-m", "tether.run", "-m"] if args.package == "tether" else ["-m"]
            env["PYTHONPATH"] = args.tether_py if args.package == "tether" else args.upstream_py
            try:
                p = subprocess.run([args.python, *pre, *argv], env=env, cwd=os.path.dirname(path),
                                   capture_output=True, text=True, timeout=args.timeout)
                stdout, stderr = p.stdout, p.stderr
                crashes = [(0, f"signal {-p.returncode}")] if p.returncode < 0 else []
                if p.returncode > 0:
                    stderr += "\nTETHER-CONFORMANCE: the module run failed"
            except subprocess.TimeoutExpired:
                stdout, stderr, crashes = "", "", [(0, "timeout")]
            if rl["stderr_to_stdout"]:
                stdout += stderr
            return finish(args, rel, source, stdout, stderr, crashes)
        if args.package == "tether":
            sitedir = os.path.join(tmp, "site")
            os.makedirs(sitedir)
            with open(os.path.join(sitedir, "sitecustomize.py"), "w") as f:
                f.write("import tether.alias\ntether.alias.install()\n")
            paths = [sitedir, args.tether_py]
        else:
            paths = [args.upstream_py]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        # Some files read inputs next to themselves.
        stdout, stderr, crashes = run_program(args.python, prog, env, os.path.dirname(path),
                                              args.timeout, rl["stderr_to_stdout"])
    return finish(args, rel, source, stdout, stderr, crashes)


def finish(args, rel, source, stdout, stderr, crashes):
    """The verdicts of one file's output."""
    rl = run_line(source)
    groups = label_groups(source)
    tests = []
    if not groups:
        ok = not crashes and "TETHER-CONFORMANCE" not in stderr + stdout
        tests.append({"name": os.path.basename(rel), "ok": ok,
                      "why": "" if ok else "the program failed"})
    else:
        slices = slice_output(stdout, groups)
        for (label, checks, _), text in zip(groups, slices):
            name = label or "(checks before the first label)"
            if text is None:
                tests.append({"name": name, "ok": False, "why": "label not in the output"})
                continue
            ok, why = filecheck(args.filecheck, checks, text, rl["filecheck_args"])
            if ok and "TETHER-CONFORMANCE: statement" in text:
                ok, why = False, "raised (traceback in the output)"
            tests.append({"name": name, "ok": ok, "why": why.strip().splitlines()[0:3] if not ok else ""})
    return {"file": rel, "tests": tests, "crashes": crashes,
            "stderr_tail": stderr[-4000:], "stdout": stdout if args.keep_output else None}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", default=os.environ.get("TETHER_UPSTREAM_TESTS"),
                    help="upstream's mlir/test/python (or $TETHER_UPSTREAM_TESTS)")
    ap.add_argument("--package", choices=["tether", "upstream"], default="tether")
    ap.add_argument("--tether-py", default=os.environ.get("TETHER_PY"),
                    help="folder holding the tether package (bazel-bin/bindings/python)")
    ap.add_argument("--upstream-py", default=os.environ.get("TETHER_UPSTREAM_PY"),
                    help="folder holding upstream's built mlir package")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--filecheck", default=shutil.which("FileCheck") or "FileCheck",
                    help="FileCheck of the MLIR version tested (llvm-V-tools)")
    ap.add_argument("--mlir-lib", default="/usr/lib/llvm-22/lib",
                    help="where MLIR's runtime libraries are, for %%mlir_runner_utils & co.")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--json", help="write the verdicts here")
    ap.add_argument("--verbose", "-v", action="store_true", help="list every failing test")
    ap.add_argument("--keep-output", action="store_true")
    ap.add_argument("--expect-min", type=int, default=None)
    ap.add_argument("--expect-file",
                    help="a file of 'FILE PASSES' lines: fail (exit 1) when a file passes fewer")
    ap.add_argument("--record", help="write the per-file pass counts to this file")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    if not args.tests or not os.path.isdir(args.tests):
        print("run_upstream.py: upstream's mlir/test/python is not given (--tests or "
              "$TETHER_UPSTREAM_TESTS): nothing to run", file=sys.stderr)
        return 2
    if args.package == "upstream" and not args.upstream_py:
        print("run_upstream.py: --upstream-py is required with --package upstream", file=sys.stderr)
        return 2
    if not shutil.which(args.filecheck):
        print(f"run_upstream.py: {args.filecheck} not found (Debian package llvm-V-tools)",
              file=sys.stderr)
        return 2
    for attr in ("tests", "tether_py", "upstream_py"):
        if getattr(args, attr):
            setattr(args, attr, os.path.abspath(getattr(args, attr)))
    patterns = args.files or ["ir/*.py"]
    files = []
    for p in patterns:
        hits = sorted(glob.glob(os.path.join(args.tests, p)))
        files += [os.path.relpath(h, args.tests) for h in hits if h.endswith(".py")]
    if not files:
        print("run_upstream.py: no test files match", file=sys.stderr)
        return 2
    results = [run_file(args, f) for f in files]
    total = passed = 0
    print(f"{'file':40} {'pass':>5} {'tests':>5}  crashes")
    for r in results:
        n = len(r["tests"])
        k = sum(1 for t in r["tests"] if t["ok"])
        total += n
        passed += k
        crash = ", ".join(f"stmt {s}: {w}" for s, w in r.get("crashes", []))
        print(f"{r['file']:40} {k:5} {n:5}  {crash}")
        if args.verbose:
            for t in r["tests"]:
                if not t["ok"]:
                    print(f"    FAIL {t['name']}: {t['why']}")
    print(f"{'total':40} {passed:5} {total:5}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    counts = {r["file"]: sum(1 for t in r["tests"] if t["ok"]) for r in results}
    if args.record:
        with open(args.record, "w") as f:
            f.write("# Conformance floor: tests of upstream's mlir/test/python passing on tether, per "
                    "file.\n# tests/conformance/conformance_test fails when a file passes fewer.\n")
            for name in sorted(counts):
                f.write(f"{name} {counts[name]}\n")
    status = 0
    if args.expect_file:
        with open(args.expect_file) as f:
            for line in f:
                line = line.split("#", 1)[0].split()
                if len(line) != 2:
                    continue
                name, want = line[0], int(line[1])
                got = counts.get(name)
                if got is None:
                    print(f"REGRESSION {name}: not run (expected {want} passing)")
                    status = 1
                elif got < want:
                    print(f"REGRESSION {name}: {got} passing, the floor is {want}")
                    status = 1
    if args.expect_min is not None and passed < args.expect_min:
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
