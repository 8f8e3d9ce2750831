#!/usr/bin/env python3
"""Runs upstream MLIR's own Python test suite (`mlir/test/python` of LLVM 19 or 22) unchanged, against
tether through the `mlir` -> `tether` alias (or against upstream's own package, for comparison),
judges every test by its own outcome, and compares the verdicts with a list of expectations.

Each test file runs in a fresh interpreter. Its top-level statements that run tests (calls such
as `run(testX)` and decorated definitions such as `@run def testX`) are wrapped so that one
failing test prints its traceback and the file goes on with the next; a test that kills the
interpreter (a signal, a hang) is reported, and the file is started again after it. Each
statement's output on stdout and stderr is framed by marker lines, so that what a statement
printed, raised or died of is known to be its own. The tests of a file are:
- each CHECK-LABEL group: its checks run with FileCheck on its slice of the output (from its
  label's line to the next label's), and it fails when the statement that printed its label
  raised, wrote a traceback on stderr (merged into stdout by the RUN line or not), or killed the
  interpreter;
- `(the program)`: the file as a whole, failing on a non-zero exit status, a traceback outside the
  test statements (a failing import, a top-level `assert`), and a statement failing with no label
  of its own. A file without CHECK lines is this test alone.

    run_upstream.py --tests DIR [--package tether|upstream] [--expect-file F] [--record F] [FILE...]

DIR is upstream's `mlir/test/python` (tools/fetch_upstream_tests.sh --version V); FILEs are
paths relative to it or globs (default: `ir/*.py`). Nothing of upstream's is copied here.
`--expect-file` (tests/conformance/expected_<version>.txt) lists every test: `pass FILE :: TEST`,
or `fail FILE :: TEST :: REASON` for one that cannot pass here. Exit status: 0 when every test
listed as passing passed (tests listed as failing that pass are reported as newly passing); 1
when one of them failed, a test ran that is not listed, or a listed test did not run; 2 on bad
arguments or a malformed expectation file. Without `--expect-file`: 0 when the run happened.
`--record F` writes this run's expectations (keeping the reasons already written).
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
# crash the next run can start after it. Each statement's output, on stdout and on stderr, is
# framed by marker lines (MARK_START / MARK_END), so that a label printed, a traceback written or
# a crash that happened while a statement ran is that statement's; the markers are removed before
# FileCheck reads the output.
MARK_START = "@@tether-conformance: start of statement "
MARK_END = "@@tether-conformance: end of statement "
RAISED = "TETHER-CONFORMANCE: statement %d raised:"

_WRAPPER = r'''
import os as _tc_os, sys as _tc_sys, traceback as _tc_tb
_tc_skip = int(_tc_os.environ.get("TETHER_CONF_SKIP", "-1"))
_tc_mark = _tc_os.environ.get("TETHER_CONF_MARK")
def _tc_say(text):
    for _tc_f in (_tc_sys.stdout, _tc_sys.stderr):
        _tc_f.flush()
        _tc_f.write(text + "\n")
        _tc_f.flush()
def _tc_enter(k):
    if k <= _tc_skip:
        return False
    if _tc_mark:
        with open(_tc_mark, "w") as f:
            f.write(str(k))
    _tc_say("%s" + str(k))
    return True
def _tc_leave(k):
    _tc_say("%s" + str(k))
def _tc_fail(k):
    _tc_sys.stdout.flush()
    print("%s" %% k, file=_tc_sys.stderr)
    _tc_tb.print_exc()
    _tc_sys.stderr.flush()
''' % (MARK_START, MARK_END, RAISED)


def _is_test_statement(node):
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return True
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.decorator_list:
        return True
    return False


def transform(source, filename):
    """The file's program with every test statement guarded (see _WRAPPER), and the source line
    of each guarded statement (by its number)."""
    tree = ast.parse(source, filename)
    body = []
    lines = []
    for node in tree.body:
        if not _is_test_statement(node):
            body.append(node)
            continue
        k = len(lines)
        guard = ast.parse(
            f"if _tc_enter({k}):\n"
            f"    try:\n        pass\n"
            f"    except BaseException as _tc_e:\n"
            f"        if isinstance(_tc_e, SystemExit): raise\n"
            f"        _tc_fail({k})\n"
            f"    _tc_leave({k})\n"
        ).body[0]
        guard.body[0].body = [node]
        body.append(guard)
        lines.append(node.decorator_list[0].lineno if getattr(node, "decorator_list", None)
                     else node.lineno)
    # The file runs from a copy: it sees its own path and folder as where it lies upstream (some
    # files read files next to themselves).
    prelude = ast.parse(_WRAPPER + f"__file__ = {os.path.abspath(filename)!r}\n"
                        f"_tc_sys.path[0] = {os.path.dirname(os.path.abspath(filename))!r}\n").body
    # `from __future__` imports must stay first.
    future = [n for n in body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    rest = [n for n in body if n not in future]
    tree.body = future + prelude + rest
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), lines


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
    # too, and is checked on the output from its start (marked by a True third element). So does
    # a group using a global variable an earlier group defines (FileCheck keeps `$` variables
    # across labels): it gets the defining lines.
    pre = groups[0][1] if groups and groups[0][0] is None else []
    pre_globals = set(re.findall(r"\[\[(\$\w+):", "\n".join(pre)))
    defined = {}  # a global variable defined after the first label -> its defining check line
    marked = []
    for label, checks in groups:
        used = set(re.findall(r"\[\[(\$\w+)\]\]", "\n".join(checks)))
        own = set(re.findall(r"\[\[(\$\w+):", "\n".join(checks)))
        later = [defined[v] for v in sorted(used - own - pre_globals) if v in defined]
        if label is not None and (used & pre_globals or later):
            extra = list(pre) if used & pre_globals else []
            extra += [line for line in dict.fromkeys(later) if line not in extra]
            marked.append((label, extra + list(checks), True))
        else:
            marked.append((label, checks, False))
        if label is not None:
            for line in checks:
                for v in re.findall(r"\[\[(\$\w+):", line):
                    defined.setdefault(v, line)
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
    line before the next label's match; None when the label never appears), and the character
    offsets in the output where each slice's own part starts (its label's line) and ends."""
    lines = output.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
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
    slices, spans = [], []
    for gi, start in enumerate(starts):
        if start is None:
            slices.append(None)
            spans.append(None)
            continue
        end = len(lines)
        for later in starts[gi + 1:]:
            if later is not None and later > start:
                end = later
                break
        whole = len(groups[gi]) > 2 and groups[gi][2]
        slices.append("".join(lines[0 if whole else start:end]))
        spans.append((offsets[start], offsets[end]))
    return slices, spans


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


_MARK_RX = re.compile("(%s|%s)(\\d+)\n" % (re.escape(MARK_START), re.escape(MARK_END)))
TRACEBACK = "Traceback (most recent call last)"


def split_statements(stream):
    """A program's output stream without the statement markers, and [(offset, statement)]: from
    each offset of the text returned on, the statement whose output it is (None: outside any
    test statement)."""
    text, owners, pos, current = [], [(0, None)], 0, None
    size = 0
    for m in _MARK_RX.finditer(stream):
        text.append(stream[pos:m.start()])
        size += m.start() - pos
        current = int(m.group(2)) if m.group(1) == MARK_START else None
        owners.append((size, current))
        pos = m.end()
    text.append(stream[pos:])
    return "".join(text), owners


def owner_at(owners, offset):
    """The statement whose output is at offset (see split_statements)."""
    who = None
    for start, stmt in owners:
        if start > offset:
            break
        who = stmt
    return who


def owners_between(owners, start, end):
    """The statements (None: outside any) whose output lies in [start, end)."""
    bounds = owners + [(float("inf"), None)]
    return {stmt for (a, stmt), (b, _) in zip(bounds, bounds[1:]) if a < end and b > start}


def pieces_by_statement(text, owners):
    """{statement (or None): the text it wrote}."""
    out = {}
    bounds = owners + [(len(text), None)]
    for (start, stmt), (end, _) in zip(bounds, bounds[1:]):
        out[stmt] = out.get(stmt, "") + text[start:end]
    return out


def _last_line(text, marker=None):
    """The last non-empty line of text (of its last traceback when marker is given)."""
    if marker and marker in text:
        text = text[text.rindex(marker):]
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else ""


def run_program(python, program_path, env, cwd, timeout, merge_stderr):
    """Runs the transformed program, restarting after statements that kill it. Returns
    (stdout, stderr, crashes, status): crashes is a list of (statement, description) (statement
    -1: before the first test statement), status the exit status of the run that ended (None
    when the runs never ended: the same place crashed twice, or 200 restarts)."""
    out, err = [], []
    crashes = []
    status = None
    skip = -1
    mark = tempfile.NamedTemporaryFile(delete=False)
    mark.close()
    try:
        for _ in range(200):
            with open(mark.name, "w"):
                pass
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
                status = rc
                break
            with open(mark.name) as f:
                text = f.read().strip()
            stmt = int(text) if text else -1
            what = "timeout" if timed_out else f"signal {-rc}"
            crashes.append((stmt, what))
            if stmt <= skip:
                break
            skip = stmt
        return "".join(out), "".join(err), crashes, status
    finally:
        os.unlink(mark.name)


def run_file(args, rel):
    path = os.path.join(args.tests, rel)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    rl = run_line(source)
    if rl is None:
        return {"file": rel, "tests": [], "note": "no RUN line"}
    program, lines = transform(source, path)
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
                crashes = [(-1, f"signal {-p.returncode}")] if p.returncode < 0 else []
                status = p.returncode if p.returncode >= 0 else None
            except subprocess.TimeoutExpired:
                stdout, stderr, crashes, status = "", "", [(-1, "timeout")], None
            if rl["stderr_to_stdout"]:
                stdout += stderr
                stderr = ""
            return finish(args, rel, source, stdout, stderr, crashes, status, [])
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
        stdout, stderr, crashes, status = run_program(args.python, prog, env,
                                                      os.path.dirname(path), args.timeout,
                                                      rl["stderr_to_stdout"])
    return finish(args, rel, source, stdout, stderr, crashes, status, lines)


PROGRAM = "(the program)"


def finish(args, rel, source, stdout, stderr, crashes, status, lines):
    """The verdicts of one file's output: one test per label group (FileCheck on its slice, and
    the outcome of the statement that printed the label: raised, wrote a traceback on stderr or
    killed the interpreter), and PROGRAM, the file as a whole: its exit status, tracebacks outside
    the test statements, and failures of statements no label claims."""
    rl = run_line(source)
    groups = label_groups(source)
    clean, out_owners = split_statements(stdout)
    clean_err, err_owners = split_statements(stderr)
    out_by = pieces_by_statement(clean, out_owners)
    err_by = pieces_by_statement(clean_err, err_owners)

    def where(k):
        return f"statement at line {lines[k]}" if 0 <= k < len(lines) else "the file's own code"

    # What went wrong in each test statement (by number), and outside them (None).
    failed = {}
    for k, what in crashes:
        failed.setdefault(k if k >= 0 else None, []).append(f"killed the interpreter ({what})")
    for by in (err_by, out_by):  # stderr; stdout holds stderr too when the RUN line merges them
        for k, text in by.items():
            if k is None:
                continue
            if RAISED % k in text or TRACEBACK in text:
                why = _last_line(text, TRACEBACK) or "raised"
                failed.setdefault(k, []).append(f"raised: {why}")
    top = err_by.get(None, "") + (out_by.get(None, "") if rl["stderr_to_stdout"] else "")
    if TRACEBACK in top:
        failed.setdefault(None, []).append(
            f"a traceback outside the tests: {_last_line(top, TRACEBACK)}")
    if status is None and not crashes:
        failed.setdefault(None, []).append("did not end")
    elif status not in (0, None):
        failed.setdefault(None, []).append(
            f"exited with status {status}: {_last_line(clean_err or clean, TRACEBACK)}")

    tests, claimed, seen = [], set(), {}

    def add(name, ok, why=""):
        n = seen[name] = seen.get(name, 0) + 1
        tests.append({"name": name if n == 1 else f"{name} #{n}", "ok": ok, "why": why})

    slices, spans = slice_output(clean, groups) if groups else ([], [])
    for (label, checks, _), text, span in zip(groups, slices, spans):
        name = label or "(checks before the first label)"
        mine = set()
        if span and label is None:
            # Checks before the first label: every statement that wrote into their slice, and
            # in a file of no other label, everything the program did.
            mine = owners_between(out_owners, span[0], span[1])
            if len(groups) == 1:
                mine |= set(failed)
        elif span:
            # The statement that printed the label line (the offset of its last character).
            first = clean[span[0]:span[1]].split("\n", 1)[0]
            mine = {owner_at(out_owners, span[0] + max(len(first) - 1, 0))}
        bad = [f"{where(k)} {w}" for k in sorted(mine - {None}) for w in failed.get(k, [])]
        if None in mine and len(groups) == 1:
            bad += failed.get(None, [])
        claimed |= mine - {None}
        if text is None:
            why = "label not in the output"
            add(name, False, why + ("; " + bad[0] if bad else ""))
            continue
        if bad:
            add(name, False, bad[0])
            continue
        ok, why = filecheck(args.filecheck, checks, text, rl["filecheck_args"])
        add(name, ok, "" if ok else " | ".join(why.strip().splitlines()[0:3]))
    rest = list(failed.get(None, []))
    rest += [f"{where(k)} {w}" for k in sorted(k for k in failed if k is not None and k not in claimed)
             for w in failed[k]]
    add(PROGRAM, not rest, "; ".join(rest))
    return {"file": rel, "tests": tests, "crashes": crashes, "status": status,
            "stderr_tail": clean_err[-4000:], "stdout": clean if args.keep_output else None}


# ---- expectations -----------------------------------------------------------------------------
# expected_<version>.txt names every test of the suite: `pass FILE :: TEST` (expected to pass),
# or `fail FILE :: TEST :: REASON` (cannot pass here, and why). The run fails when a test listed
# as passing does not pass, when a test is not listed, when a listed test did not run, or when a
# line has no reason; tests listed as failing that pass are reported as newly passing.

SEP = " :: "


def read_expectations(path):
    """{(file, test): (verdict, reason)}; ValueError naming a malformed line."""
    want = {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            verdict, _, rest = line.partition(" ")
            parts = rest.split(SEP, 2)
            ok = (verdict == "pass" and len(parts) == 2) or \
                 (verdict == "fail" and len(parts) == 3 and parts[2].strip() and
                  not parts[2].startswith("FIXME"))
            if not ok:
                raise ValueError(f"{path}:{number}: expected 'pass FILE{SEP}TEST' or "
                                 f"'fail FILE{SEP}TEST{SEP}REASON' (a reason, not FIXME): "
                                 f"{line!r}")
            key = (parts[0], parts[1])
            if key in want:
                raise ValueError(f"{path}:{number}: listed twice: {parts[0]}{SEP}{parts[1]}")
            want[key] = (verdict, parts[2].strip() if verdict == "fail" else "")
    return want


def compare(results, want):
    """(problems, newly_passing): lines saying what differs from the expectations."""
    got = {(r["file"], t["name"]): t for r in results for t in r["tests"]}
    problems, newly = [], []
    for key, t in got.items():
        if key not in want:
            problems.append(f"NOT LISTED {key[0]}{SEP}{key[1]}: "
                            f"{'passes' if t['ok'] else 'fails: ' + str(t['why'])} "
                            "(list it as pass, or as fail with its reason)")
        elif want[key][0] == "pass" and not t["ok"]:
            problems.append(f"REGRESSION {key[0]}{SEP}{key[1]}: {t['why']}")
        elif want[key][0] == "fail" and t["ok"]:
            newly.append(f"NEWLY PASSING {key[0]}{SEP}{key[1]} (listed as failing: "
                         f"{want[key][1]})")
    for key, (verdict, _) in want.items():
        if key not in got:
            problems.append(f"NOT RUN {key[0]}{SEP}{key[1]} (listed as {verdict})")
    return problems, newly


def record(path, results, want, header):
    """Writes the expectations of this run: passes as pass, failures as fail with the reason
    already written for them (a failure with none gets the runner's verdict, to be replaced by a
    reason)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(header)
        for r in sorted(results, key=lambda r: r["file"]):
            for t in r["tests"]:
                key = (r["file"], t["name"])
                if t["ok"]:
                    f.write(f"pass {key[0]}{SEP}{key[1]}\n")
                else:
                    old = want.get(key)
                    reason = old[1] if old and old[0] == "fail" else f"FIXME {t['why']}"
                    f.write(f"fail {key[0]}{SEP}{key[1]}{SEP}{reason}\n")


HEADER = """\
# Upstream's mlir/test/python run against tether (tests/conformance/run_upstream.py), one line a
# test: `pass FILE :: TEST` is expected to pass; `fail FILE :: TEST :: REASON` cannot pass here,
# for that reason. A test is a CHECK-LABEL group, judged by FileCheck and by the statement that
# printed its label (raised, traceback on stderr, killed the interpreter); `(the program)` is the
# file as a whole (exit status, tracebacks outside the tests). conformance_test fails when a
# `pass` test fails, a test is not listed or a listed one did not run.
"""


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
    ap.add_argument("--expect-file",
                    help="the expectations (expected_<version>.txt): exit 1 when a test listed "
                         "as passing fails, or a test is not listed, or a listed one did not run")
    ap.add_argument("--record", help="write this run's expectations here (reasons of failing "
                                     "tests kept from --expect-file)")
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
    want = {}
    if args.expect_file:
        try:
            want = read_expectations(args.expect_file)
        except (OSError, ValueError) as e:
            print(f"run_upstream.py: {e}", file=sys.stderr)
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
    if args.record:
        record(args.record, results, want, HEADER)
    if not args.expect_file:
        return 0
    problems, newly = compare(results, want)
    for line in newly:
        print(line)
    for line in problems:
        print(line)
    if newly:
        print(f"{len(newly)} test(s) listed as failing now pass: list them as pass "
              f"(--record FILE writes the expectations of this run)")
    if problems:
        print(f"FAILED: {len(problems)} test(s) differ from {args.expect_file}")
        return 1
    print(f"OK: every test listed as passing in {args.expect_file} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
