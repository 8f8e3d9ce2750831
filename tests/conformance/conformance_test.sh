#!/usr/bin/env bash
# The conformance test: upstream MLIR's own Python test suite (LLVM 19) run unchanged against
# tether through the `mlir` alias, compared with the floor in expected.txt. Upstream's tests are
# read where tools/fetch_upstream_tests.sh put them ($TETHER_UPSTREAM_TESTS, else
# /var/cache/tether/upstream-mlir-tests/python); when they are absent the test says so and passes.
set -euo pipefail
python=$(realpath "$1")
root="${TEST_SRCDIR:-$PWD/..}/tether"
tests=${TETHER_UPSTREAM_TESTS:-/var/cache/tether/upstream-mlir-tests/python}
if [ ! -f "$tests/ir/module.py" ]; then
  echo "conformance_test: upstream's mlir/test/python not found at $tests: skipped" \
       "(tools/fetch_upstream_tests.sh fetches it; tools/setup.sh runs it)"
  exit 0
fi
if ! command -v FileCheck-19 >/dev/null; then
  echo "conformance_test: FileCheck-19 is missing (Debian package llvm-19-tools)" >&2
  exit 1
fi
# Under --config=asan the extension is instrumented and the interpreter is not: every Python the
# runner starts gets the sanitizer runtimes first (as tests/bindings/run_pytest.sh does), so a
# memory error in any test program is a crash the runner reports.
if [ "${TETHER_SANITIZER:-}" = asan ]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  export PYTHONMALLOC=malloc
fi
exec "$python" "$root/tests/conformance/run_upstream.py" --tests "$tests" \
  --python "$python" --tether-py "$root/bindings/python" \
  --expect-file "$root/tests/conformance/expected.txt" \
  'ir/*.py' 'dialects/*.py' 'dialects/*/*.py' 'dialects/*/*/*.py' pass_manager.py \
  execution_engine.py live_operations.py
