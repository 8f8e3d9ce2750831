#!/usr/bin/env bash
# tether-lint on this repository's own C sources (arena and Python bindings), with the repository's
# .tether-lint: no findings, no errors.
set -u
lint=$1
shift
out=$("$lint" --config .tether-lint "$@" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then
  echo "self_lint_test: FAILED (exit $rc)"
  exit 1
fi
case "$out" in
*" 0 finding(s)"*" 0 error(s)"*) echo "self_lint_test: 1 passed, 0 failed" ;;
*) echo "self_lint_test: FAILED (unexpected summary)"; exit 1 ;;
esac
