"""Fixture runner: every `// expect: RULE[, RULE]` marker must be reported on its line, and
nothing else may be reported. Fails on any missing or extra finding.

usage: run_fixtures.py LINT MIN_POSITIVE MIN_NEGATIVE DIR...

Each DIR is linted in one run (with -j 2); DIR/.tether-lint is found by the linter's own config
discovery when present, otherwise the built-in profiles are used (--config /dev/null). Negative
cases are the `// case:` markers; the run fails when there are fewer markers than the minimums,
so the fixture set cannot silently shrink.

A directory may hold a file `.fixture-args` whose words are added to the command line (e.g.
`--whole-program` for the cross-file TypeID fixtures).

Build files carry the markers in their own comment syntax: `# expect: RULE` and `# case:` (CMake,
Bazel, Make, Meson, Python, TOML; also `#[[ case:` for a CMake bracket comment), and in JSON a
string on the line, `"comment": "expect: RULE"`. A fixture named `X.fixture` (e.g. BUILD.fixture)
is linted as `X`: DIR is copied to a temporary directory with the suffix removed, so the fixture
does not turn its directory into a Bazel package of this workspace.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXPECT = re.compile(r"(?://|#|\")\s*expect:\s*([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)")
CASE = re.compile(r"(?://|#|\"|#\[\[)\s*case:")
SOURCES = (".c", ".cc", ".cpp", ".h")
BUILD_FILES = ("CMakeLists.txt", "BUILD", "BUILD.bazel", "Makefile", "meson.build", "setup.py",
               "pyproject.toml", "compile_commands.json")
BUILD_SUFFIXES = (".cmake", ".bzl", ".mk", ".py")


def fixture_file(name):
    if name.endswith(".fixture"):
        name = name[: -len(".fixture")]
    return name.endswith(SOURCES) or name in BUILD_FILES or name.endswith(BUILD_SUFFIXES)


def materialise(directory):
    """DIR itself, or a temporary copy with `.fixture` suffixes removed (and a map back)."""
    renamed = [
        os.path.join(root, n)
        for root, _d, files in os.walk(directory)
        for n in files
        if n.endswith(".fixture")
    ]
    if not renamed:
        return directory, lambda p: p
    tmp = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")), "fx")
    shutil.copytree(directory, tmp)
    for path in renamed:
        rel = os.path.relpath(path, directory)
        os.rename(os.path.join(tmp, rel), os.path.join(tmp, rel[: -len(".fixture")]))

    def back(p):
        p = os.path.normpath(p)
        if p.startswith(os.path.normpath(tmp) + os.sep):
            rel = os.path.relpath(p, tmp)
            orig = os.path.join(directory, rel)
            if os.path.exists(orig + ".fixture"):
                orig += ".fixture"
            return os.path.normpath(orig)
        return p

    return tmp, back


def expected_in(directory):
    want = collections.Counter()
    cases = 0
    for root, _dirs, files in os.walk(directory):
        for name in sorted(files):
            if not fixture_file(name):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = EXPECT.search(line)
                    if m:
                        for rule in m.group(1).split(","):
                            want[(os.path.normpath(path), lineno, rule.strip())] += 1
                    if CASE.search(line):
                        cases += 1
    return want, cases


def main():
    lint, min_pos, min_neg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    failures = 0
    total_pos = total_neg = 0
    for directory in sys.argv[4:]:
        want, cases = expected_in(directory)
        total_pos += sum(want.values())
        total_neg += cases
        target, back = materialise(directory)
        cmd = [lint, "--format", "json", "-j", "2", target]
        if not os.path.exists(os.path.join(directory, ".tether-lint")):
            cmd[1:1] = ["--config", "/dev/null"]
        extra = os.path.join(directory, ".fixture-args")
        if os.path.exists(extra):
            with open(extra, encoding="utf-8") as f:
                cmd[1:1] = f.read().split()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            print(f"FAIL {directory}: exit {proc.returncode}\n{proc.stderr}")
            failures += 1
            continue
        findings = json.loads(proc.stdout)
        for f in findings:
            f["file"] = back(f["file"])
        got = collections.Counter(
            (os.path.normpath(f["file"]), f["line"], f["rule"]) for f in findings
        )
        want_rc = 1 if want else 0
        if proc.returncode != want_rc:
            print(f"FAIL {directory}: exit {proc.returncode}, expected {want_rc}")
            failures += 1
        for key in sorted(set(want) | set(got)):
            if want[key] > got[key]:
                print("MISSING %s:%d: %s" % key)
                failures += 1
            elif got[key] > want[key]:
                msg = next(
                    f["message"]
                    for f in findings
                    if (os.path.normpath(f["file"]), f["line"], f["rule"]) == key
                )
                print("EXTRA   %s:%d: %s  (%s)" % (key + (msg,)))
                failures += 1
        print(f"{directory}: {sum(want.values())} expected finding(s), {cases} clean case(s), "
              f"{len(findings)} reported")
    if total_pos < min_pos or total_neg < min_neg:
        print(f"FAIL: {total_pos} positive / {total_neg} negative cases; "
              f"need at least {min_pos} / {min_neg}")
        failures += 1
    print("fixtures: %s" % ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
