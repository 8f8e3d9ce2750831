#!/usr/bin/env bash
# The conformance test: upstream MLIR's own Python test suite, of the MLIR version built (19 or
# 22), run unchanged against tether through the `mlir` alias, each test judged by its own outcome
# and compared with the expectations in expected_<version>.txt (run_upstream.py). Upstream's tests
# are read where tools/fetch_upstream_tests.sh put them ($TETHER_UPSTREAM_TESTS, else
# /var/cache/tether/upstream-mlir-tests/python for 19 and /var/cache/tether/upstream-mlir22/python
# for 22). When they are absent the test FAILS (tools/setup.sh fetches them), unless the user
# asked to go without them: TETHER_CONFORMANCE_SKIP=1 (`bazel test --test_env=
# TETHER_CONFORMANCE_SKIP=1`, docs/testing.md), which makes it say it was skipped and pass.
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
  if [ "${TETHER_CONFORMANCE_SKIP:-}" = 1 ]; then
    echo "conformance_test: SKIPPED at the user's request (TETHER_CONFORMANCE_SKIP=1): upstream's" \
         "$version mlir/test/python is not at $tests; nothing of upstream's suite ran"
    exit 0
  fi
  echo "conformance_test: FAILED: upstream's $version mlir/test/python is not at $tests, so no" \
       "conformance test can run. tools/fetch_upstream_tests.sh --version $version fetches it" \
       "(tools/setup.sh runs it); to go without it, say so: --test_env=TETHER_CONFORMANCE_SKIP=1" >&2
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
  --python "$python" --tether-py "$package" --filecheck "$filecheck" \
  --mlir-lib "$mlir_lib" --expect-file "$root/tests/conformance/expected_$version.txt" \
  'ir/*.py' 'dialects/*.py' 'dialects/*/*.py' 'dialects/*/*/*.py' pass_manager.py \
  execution_engine.py live_operations.py "${files[@]}"
