"""Fixture runner: every `// expect: RULE[, RULE]` marker must be reported on its line, and
nothing else may be reported. Fails on any missing or extra finding.

usage: run_fixtures.py LINT MIN_POSITIVE MIN_NEGATIVE DIR...

Each DIR is linted in one run (with -j 2); DIR/.tether-lint is found by the linter's own config
discovery when present, otherwise the built-in profiles are used (--config /dev/null). Negative
cases are the `// case:` markers; the run fails when there are fewer markers than the minimums,
so the fixture set cannot silently shrink.
"""
import collections
import json
import os
import re
import subprocess
import sys

EXPECT = re.compile(r"//\s*expect:\s*([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)")
CASE = re.compile(r"//\s*case:")
SOURCES = (".c", ".cc", ".cpp", ".h")


def expected_in(directory):
    want = collections.Counter()
    cases = 0
    for root, _dirs, files in os.walk(directory):
        for name in sorted(files):
            if not name.endswith(SOURCES):
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
        cmd = [lint, "--format", "json", "-j", "2", directory]
        if not os.path.exists(os.path.join(directory, ".tether-lint")):
            cmd[1:1] = ["--config", "/dev/null"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            print(f"FAIL {directory}: exit {proc.returncode}\n{proc.stderr}")
            failures += 1
            continue
        findings = json.loads(proc.stdout)
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
