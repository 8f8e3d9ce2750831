"""Output formats: text lines, JSON fields, SARIF 2.1.0 fields GitHub code scanning requires,
and output that does not depend on -j.

usage: output_test.py LINT FIXTURE_DIR
"""
import json
import os
import re
import subprocess
import sys

lint, fixtures = sys.argv[1], sys.argv[2]
failures = []


def check(name, cond):
    print(("ok:   " if cond else "FAIL: ") + name)
    if not cond:
        failures.append(name)


def run(*args):
    return subprocess.run([lint, "--config", "/dev/null", *args], capture_output=True, text=True)


escape = os.path.join(fixtures, "escape.cc")
clean = os.path.join(fixtures, "clean.cc")

# Text.
p = run(escape)
check("text: exit 1 with findings", p.returncode == 1)
lines = p.stdout.splitlines()
finding = re.compile(r"^(.+):(\d+):(\d+): warning: (.+) \[(raw-op-[a-z]+)\]$")
heads = [l for l in lines if finding.match(l)]
check("text: findings in file:line:col: warning: message [rule-id] form", len(heads) >= 10)
check("text: every finding is followed by a hint line",
      all(lines[i + 1].startswith("    hint: ") for i, l in enumerate(lines) if finding.match(l)))
check("text: summary line", re.search(r"tether-lint: 1 file\(s\) analysed, \d+ finding\(s\)", p.stdout) is not None)

# JSON.
p = run("--format", "json", escape)
check("json: exit 1 with findings", p.returncode == 1)
data = json.loads(p.stdout)
check("json: an array of objects", isinstance(data, list) and all(isinstance(o, dict) for o in data))
types = {"file": str, "line": int, "column": int, "rule": str, "severity": str, "message": str, "hint": str}
check("json: every object has file, line, column, rule, severity, message, hint",
      all(all(isinstance(o.get(k), t) for k, t in types.items()) for o in data))
check("json: severity is warning", all(o["severity"] == "warning" for o in data))
check("json: the file is the path as given", all(o["file"] == escape for o in data))
check("json: summary goes to stderr", "finding(s)" in p.stderr and "finding(s)" not in p.stdout)
p = run("--format", "json", clean)
check("json: clean file gives [] and exit 0", p.returncode == 0 and json.loads(p.stdout) == [])

# SARIF.
p = run("--format", "sarif", "--root", fixtures, escape)
check("sarif: exit 1 with findings", p.returncode == 1)
s = json.loads(p.stdout)
check("sarif: $schema", "sarif" in s.get("$schema", "") and "2.1.0" in s["$schema"])
check("sarif: version 2.1.0", s.get("version") == "2.1.0")
run0 = s["runs"][0]
driver = run0["tool"]["driver"]
check("sarif: driver name", driver.get("name") == "tether-lint")
rules = driver.get("rules", [])
ids = [r.get("id") for r in rules]
check("sarif: rules list both raw-op rules", {"raw-op-unguarded", "raw-op-escape"} <= set(ids))
check("sarif: every rule has id, shortDescription, fullDescription, help texts",
      all(isinstance(r[k]["text"], str) and r[k]["text"] for r in rules
          for k in ("shortDescription", "fullDescription", "help")))
results = run0.get("results", [])
check("sarif: one result per finding", len(results) == len(data))
ok = True
for r in results:
    loc = r["locations"][0]["physicalLocation"]
    art = loc["artifactLocation"]
    ok &= r["ruleId"] in ids and ids[r["ruleIndex"]] == r["ruleId"]
    ok &= isinstance(r["message"]["text"], str) and r["message"]["text"] != ""
    ok &= art["uri"] == "escape.cc" and art.get("uriBaseId") == "%SRCROOT%"
    ok &= loc["region"]["startLine"] >= 1 and loc["region"]["startColumn"] >= 1
check("sarif: results have ruleId, ruleIndex, message.text, relative uri, region", ok)
base = run0["originalUriBaseIds"]["%SRCROOT%"]["uri"]
check("sarif: %SRCROOT% is the root as a file:// URI ending in /",
      base.startswith("file:///") and base.endswith("/") and base.rstrip("/").endswith("rawop"))

# A file outside --root gets an absolute file:// URI.
p = run("--format", "sarif", "--root", os.path.join(fixtures, "..", "custom"), escape)
uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(p.stdout)["runs"][0]["results"]}
check("sarif: a file outside the root has an absolute file:// URI",
      all(u.startswith("file:///") and u.endswith("/escape.cc") for u in uris))

# Determinism: -j 1 and -j 2 give byte-identical reports.
a = run("--format", "json", "-j", "1", fixtures)
b = run("--format", "json", "-j", "2", fixtures)
check("-j 1 and -j 2 give the same report", a.stdout == b.stdout and a.returncode == b.returncode)
keys = [(o["file"], o["line"], o["column"], o["rule"]) for o in json.loads(a.stdout)]
check("findings are sorted by file, line, column, rule", keys == sorted(keys))

print("output_test: " + ("FAILED" if failures else "passed"))
sys.exit(1 if failures else 0)
