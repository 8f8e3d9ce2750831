#!/usr/bin/env bash
# The programs of tests/e2e/programs, each written for upstream's `mlir` package, run on tether
# through the alias (python3 -m tether.run PROG); each one's normalized output is compared with
# PROG.expected (PROG.V.expected where upstream's output on MLIR V differs), recorded from
# upstream's own package (run_programs.py --upstream-py DIR --mlir-version V --update-expected).
# Fails on a crash, a non-zero exit or a difference (docs/testing.md).
#   programs_test.sh PYTHON MLIR_VERSION
set -euo pipefail
python=$(realpath "$1")
root="${TEST_SRCDIR:-$PWD/..}/tether"
exec "$python" "$root/tests/e2e/programs/run_programs.py" --python "$python" --mlir-version "$2" \
  --tether-py "$root/bindings/python" --check-expected --timeout 60
