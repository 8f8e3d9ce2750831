"""Shared fixtures and helpers for the tether.ir test suite (issue 4).

Helpers are exposed as fixtures so test files need no import path tricks:

- `ctx`: a fresh `ir.Context`, entered (so `ir.Context.current` is it) for the test's duration.
- `collect_until(pred, tries=10)`: calls `tether.collect()` until `pred()` holds, at most `tries`
  times; returns the final value of `pred()`. The collector is conservative, so tests never assume
  that one collection frees one object.
- `run_snippet(code, timeout=120)`: runs `code` in a fresh interpreter (`sys.executable`, same
  environment incl. PYTHONPATH) and asserts that it did not crash: exit code 0, and no
  "Segmentation fault" / "Fatal Python error" / "Assertion" / "Traceback" on stderr. Returns the
  CompletedProcess (stdout/stderr as text).
- `snippet_helpers`: the text of SNIPPET_HELPERS, for a snippet to start with: `expect(E, fn, ...)`
  records a wrong or missing exception (`report_failures()` then exits 1 listing them all),
  `survive(fn, ...)` accepts any Exception or success, `raises(E, fn, ..., match="")` asserts the
  exception and returns it.
- `run_checks(body, setup=IR_SETUP, timeout=120)`: `run_snippet` of SNIPPET_HELPERS + setup + body,
  asserting that the body ran to its end (every `expect` held). IR_SETUP enters a context that
  allows unregistered dialects and an unknown location, with `i32` at hand.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import tether
from tether import ir

CRASH_MARKERS = (
    "Segmentation fault",
    "Fatal Python error",
    "Assertion",
    "Aborted",
    "core dumped",
    "LLVM ERROR",
    "Traceback",
)

SNIPPET_HELPERS = r"""
import gc, sys

FAILURES = []

def expect(excs, fn, *a, **k):
    # Records (does not raise) a wrong or missing exception, so one run reports all of them.
    where = sys._getframe(1).f_lineno
    try:
        fn(*a, **k)
    except excs:
        return
    except Exception as e:
        FAILURES.append(f"line {where}: {getattr(fn, '__qualname__', fn)}{a}{k} raised "
                        f"{type(e).__name__}: {e}; expected {excs}")
        return
    FAILURES.append(f"line {where}: {getattr(fn, '__qualname__', fn)}{a}{k} did not raise {excs}")

def survive(fn, *a, **k):
    try:
        fn(*a, **k)
    except Exception:
        pass

def raises(exc, fn, *a, match="", **k):
    try:
        fn(*a, **k)
    except exc as e:
        assert match in str(e), str(e)
        return e
    raise AssertionError(f"{fn} did not raise {exc}")

def report_failures():
    if FAILURES:
        sys.stdout.flush()
        sys.stderr.write("wrong exceptions:\n" + "\n".join(FAILURES) + "\n")
        sys.exit(1)
"""

IR_SETUP = """
import tether
from tether import ir
from tether.passmanager import PassManager
ctx = ir.Context()
ctx.__enter__()
ir.Location.unknown().__enter__()
ctx.allow_unregistered_dialects = True
i32 = ir.IntegerType.get_signless(32)
"""


def _collect_until(pred, tries=10):
    result = pred()
    for _ in range(tries):
        if result:
            return result
        tether.collect()
        result = pred()
    return result


def _snippet_env():
    env = dict(os.environ)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    # Faulthandler turns a crash into a "Fatal Python error" report on stderr, so a crash is
    # visible even if the exit status were swallowed.
    env["PYTHONFAULTHANDLER"] = "1"
    # Freed memory is overwritten (and the per-thread cache that would hand it back at once is
    # off), so a program that reads freed IR crashes instead of reading stale bytes silently.
    if "LD_PRELOAD" not in env:  # not under the sanitizers, which poison freed memory themselves
        env.setdefault("MALLOC_PERTURB_", "165")
        env.setdefault("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")
    return env


def _dead_code(code):
    """The line of the first statement that follows a return, raise, break or continue in the
    same block (code that never runs: a test body appended to a helper function's text ends up
    inside it, after its return), or None."""
    import ast

    for node in ast.walk(ast.parse(code)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for stmt, after in zip(block, block[1:]):
                if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
                    return after.lineno
    return None


def _run_snippet(code, timeout=120, check=True, allow_stderr=False):
    code = textwrap.dedent(code)
    dead = _dead_code(code)
    if dead is not None:
        numbered = "\n".join(f"{i + 1:4d} {line}" for i, line in enumerate(code.splitlines()))
        pytest.fail(f"the snippet's line {dead} follows a return or raise and never runs (a "
                    f"test body appended to a function's text?):\n{numbered}")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            env=_snippet_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"snippet hung (>{timeout}s):\n{code}\nstdout: {e.stdout!r}\nstderr: {e.stderr!r}")
    if check:
        numbered = "\n".join(f"{i + 1:4d} {line}" for i, line in enumerate(code.splitlines()))
        detail = (f"\n--- rc={proc.returncode} ---\n--- stderr ---\n{proc.stderr[-6000:]}"
                  f"\n--- stdout ---\n{proc.stdout[-3000:]}\n--- code ---\n{numbered}")
        assert proc.returncode == 0, "snippet failed" + detail
        for marker in CRASH_MARKERS:
            if allow_stderr and marker == "Traceback":
                continue
            assert marker not in proc.stderr, f"snippet crashed ({marker})" + detail
        if not allow_stderr:
            assert proc.stderr == "", "snippet wrote to stderr" + detail
    return proc


def _run_checks(body, setup=IR_SETUP, timeout=120, allow_stderr=False):
    code = (SNIPPET_HELPERS + textwrap.dedent(setup) + textwrap.dedent(body) +
            "\nreport_failures()\nprint('END')\n")
    proc = _run_snippet(code, timeout=timeout, allow_stderr=allow_stderr)
    assert proc.stdout.rstrip().endswith("END"), proc.stdout
    return proc


@pytest.fixture
def ctx():
    with ir.Context() as c, ir.Location.unknown():
        yield c


@pytest.fixture
def collect_until():
    return _collect_until


@pytest.fixture
def run_snippet():
    return _run_snippet


@pytest.fixture
def snippet_helpers():
    return SNIPPET_HELPERS


@pytest.fixture
def run_checks():
    return _run_checks


# A run in which every test was skipped checked nothing, yet pytest exits 0 and Bazel reports the
# target PASSED. Such a run fails with pytest's "no tests ran" status (5) instead: a file whose
# tests do not apply to a build is not run there (tests/bindings/BUILD: the MLIR 22 files are
# incompatible with --config=mlir19, reported SKIPPED), so all-skipped means something is wrong.
_RAN = []


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.failed):
        _RAN.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and session.testscollected and not _RAN:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(
                f"conftest.py: all {session.testscollected} tests were skipped, none ran: "
                "failing (exit status 5)", red=True)
