#!/usr/bin/env bash
# Runs tests/fuzz/fuzz.py against the built package: `--test` under bazel test (the corpus, then
# 500 programs of a fixed seed, failing on any signal, abort or hang), any arguments under bazel
# run (a campaign, `--replay ENTRY...`, `--program ENTRY`; paths relative to where bazel ran).
# Under --config=asan the programs run with the sanitizer runtimes preloaded, as the Python suites.
set -euo pipefail
python=$(realpath "$1")
shift
root="${TEST_SRCDIR:-$(cd "$(dirname "$0")" && pwd)/${0##*/}.runfiles}/tether"
[ -d "$root" ] || root="$(cd "$(dirname "$0")/../.." && pwd)"
export PYTHONDONTWRITEBYTECODE=1
if [ "${TETHER_SANITIZER:-}" = asan ]; then
  asan=$(gcc -print-file-name=libasan.so)
  ubsan=$(gcc -print-file-name=libubsan.so)
  export LD_PRELOAD="$asan:$ubsan${LD_PRELOAD:+:$LD_PRELOAD}"
  export PYTHONMALLOC=malloc
fi
cd "${BUILD_WORKING_DIRECTORY:-$PWD}"
exec "$python" "$root/tests/fuzz/fuzz.py" --tether-py "$root/bindings/python" "$@"
