#!/usr/bin/env bash
# The conformance test: upstream MLIR's own Python test suite, of the MLIR version built (19 or
# 22), run unchanged against tether through the `mlir` alias, compared with the floor in
# expected_<version>.txt. Upstream's tests are read where tools/fetch_upstream_tests.sh put them
# ($TETHER_UPSTREAM_TESTS, else /var/cache/tether/upstream-mlir-tests/python for 19 and
# /var/cache/tether/upstream-mlir22/python for 22); when they are absent the test says so and passes.
#   conformance_test.sh PYTHON MLIR_VERSION FILECHECK MLIR_LIB_DIR PACKAGE_DIR
# PACKAGE_DIR (workspace-relative) holds tether/: bindings/python, or on 19 the folder with
# upstream's adaptor fixtures (tests/adaptors:upstream_fixtures), where python_test.py runs.
set -euo pipefail
python=$(realpath "$1")
version=$2
filecheck=$(realpath "$3")
mlir_lib=$4
root="${TEST_SRCDIR:-$PWD/..}/tether"
package="$root/${5:-bindings/python}"
case $version in
  19) default_tests=/var/cache/tether/upstream-mlir-tests/python
      files=() ;;
  # 22's suite has tests at its root that 19's had not.
  22) default_tests=/var/cache/tether/upstream-mlir22/python
      files=(python_pass.py rewrite.py global_constructors.py multithreaded_tests.py) ;;
esac
tests=${TETHER_UPSTREAM_TESTS:-$default_tests}
if [ ! -f "$tests/ir/module.py" ]; then
  echo "conformance_test: upstream's $version mlir/test/python not found at $tests: skipped" \
       "(tools/fetch_upstream_tests.sh --version $version fetches it; tools/setup.sh runs it)"
  exit 0
fi
# Under --config=asan the extension is instrumented and the interpreter is not: every Python the
# runner starts gets the sanitizer runtimes first (as tests/bindings/run_pytest.sh does), so a
# memory error in any test program is a crash the runner reports.
if [ "${TETHER_SANITIZER:-}" = asan ]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  export PYTHONMALLOC=malloc
fi
exec "$python" "$root/tests/conformance/run_upstream.py" --tests "$tests" \
  --python "$python" --tether-py "$package" --filecheck "$filecheck" \
  --mlir-lib "$mlir_lib" --expect-file "$root/tests/conformance/expected_$version.txt" \
  'ir/*.py' 'dialects/*.py' 'dialects/*/*.py' 'dialects/*/*/*.py' pass_manager.py \
  execution_engine.py live_operations.py "${files[@]}"
