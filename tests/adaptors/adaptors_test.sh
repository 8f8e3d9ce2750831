#!/usr/bin/env bash
# Upstream's adaptor extensions on tether (test_adaptors.py): pytest with the package folder of
# //tests/adaptors:upstream_fixtures, upstream's sources and FileCheck.
#   adaptors_test.sh PYTHON FIXTURES_DIR UPSTREAM_MLIR_SOURCE FILECHECK
set -euo pipefail
root="${TEST_SRCDIR:-$PWD/..}/tether"
python=$(realpath "$1")
export TETHER_FIXTURES="$root/$2" TETHER_UPSTREAM_SRC="$3" TETHER_FILECHECK=$(realpath "$4")
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$TETHER_FIXTURES"
if [ "${TETHER_SANITIZER:-}" = asan ]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  export PYTHONMALLOC=malloc
fi
exec "$python" -m pytest -q -p no:cacheprovider "$root/tests/adaptors/test_adaptors.py"
