#!/usr/bin/env bash
# docs/python-api.md is generated from the package's docstrings (tools/gen_python_reference.py):
# fails when the checked-in file differs from what the built package gives.
set -euo pipefail
python=$(realpath "$1")
root="${TEST_SRCDIR:-$PWD/..}/tether"
export PYTHONPATH="$root/bindings/python"
export PYTHONDONTWRITEBYTECODE=1
out="${TEST_TMPDIR:-/tmp}/python-api.md"
"$python" "$root/tools/gen_python_reference.py" > "$out"
if ! diff -u "$root/docs/python-api.md" "$out" > "${TEST_TMPDIR:-/tmp}/api.diff"; then
  head -60 "${TEST_TMPDIR:-/tmp}/api.diff"
  echo "api_reference_test: docs/python-api.md is out of date; regenerate it:" >&2
  echo "  PYTHONPATH=bazel-bin/bindings/python python3 tools/gen_python_reference.py > docs/python-api.md" >&2
  exit 1
fi
echo "api_reference_test: docs/python-api.md matches the package"
