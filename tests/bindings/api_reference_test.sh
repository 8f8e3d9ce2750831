#!/usr/bin/env bash
# docs/python-api.md (MLIR 22; docs/python-api-19.md for MLIR 19) is generated from the package's
# docstrings (tools/gen_python_reference.py): fails when the checked-in file of the MLIR version
# built differs from what the built package gives.
#   api_reference_test.sh PYTHON REFERENCE
set -euo pipefail
python=$(realpath "$1")
reference=$2
root="${TEST_SRCDIR:-$PWD/..}/tether"
export PYTHONPATH="$root/bindings/python"
export PYTHONDONTWRITEBYTECODE=1
out="${TEST_TMPDIR:-/tmp}/python-api.md"
"$python" "$root/tools/gen_python_reference.py" > "$out"
if ! diff -u "$reference" "$out" > "${TEST_TMPDIR:-/tmp}/api.diff"; then
  head -60 "${TEST_TMPDIR:-/tmp}/api.diff"
  echo "api_reference_test: $reference is out of date; regenerate it:" >&2
  echo "  PYTHONPATH=bazel-bin/bindings/python python3 tools/gen_python_reference.py > $reference" >&2
  exit 1
fi
echo "api_reference_test: $reference matches the package"
