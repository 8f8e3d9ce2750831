#!/usr/bin/env bash
# Runs pytest on the given test files with the interpreter the extension was built for, with the
# `tether` package from the runfiles on PYTHONPATH. Usage: run_pytest.sh PYTHON TEST.py...
set -euo pipefail
python=$1
shift
root="${TEST_SRCDIR:-$PWD/..}/tether"
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
# Under --config=asan the extension is instrumented but the interpreter is not: load the
# sanitizer runtimes first, and let Python use malloc so ASan sees its memory too.
if [ "${TETHER_SANITIZER:-}" = asan ]; then
  asan=$(gcc -print-file-name=libasan.so)
  ubsan=$(gcc -print-file-name=libubsan.so)
  export LD_PRELOAD="$asan:$ubsan${LD_PRELOAD:+:$LD_PRELOAD}"
  export PYTHONMALLOC=malloc
fi
if ! "$python" -c 'import pytest' 2>/dev/null; then
  echo "run_pytest.sh: pytest is not installed for $("$python" -c 'import sys; print(sys.executable)'); install the Debian package 'python3-pytest' (tools/setup.sh does)" >&2
  exit 1
fi
tests=()
for t in "$@"; do tests+=("$root/$t"); done
exec "$python" -m pytest -q -p no:cacheprovider "${tests[@]}"
