#!/usr/bin/env bash
# tether_lint_aspect lints each target with its own flags: the bad binding has one finding, the
# good one none, and neither has compile errors (the header and the define only exist through
# the targets' own include path and local_defines).
set -u
dir=tests/lint/bazel
bad=$dir/bad_binding.tether_lint.txt
good=$dir/good_binding.tether_lint.txt
fail=0
for r in "$bad" "$good"; do
  [ -f "$r" ] || { echo "FAIL: no report $r"; fail=1; continue; }
  echo "== $r"; cat "$r"
  if grep -q "compile error" "$r"; then echo "FAIL: $r: the target's flags were not used"; fail=1; fi
done
grep -q "bad_binding.c:6:.*\[raw-op-unguarded\]" "$bad" || { echo "FAIL: the finding in bad_binding.c is missing"; fail=1; }
grep -qx "tether-lint exit status: 1" "$bad" || { echo "FAIL: bad_binding should exit 1"; fail=1; }
grep -qx "tether-lint exit status: 0" "$good" || { echo "FAIL: good_binding should exit 0"; fail=1; }
[ $fail -eq 0 ] && echo "aspect_test: 1 passed, 0 failed"
exit $fail
