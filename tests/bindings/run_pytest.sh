#!/usr/bin/env bash
# Runs pytest on the given test files with the interpreter the extension was built for, with the
# `tether` package from the runfiles on PYTHONPATH. Usage: run_pytest.sh PYTHON TEST.py...
set -euo pipefail
python=$1
shift
root="${TEST_SRCDIR:-$PWD/..}/tether"
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
if ! "$python" -c 'import pytest' 2>/dev/null; then
  echo "run_pytest.sh: pytest is not installed for $("$python" -c 'import sys; print(sys.executable)'); install the Debian package 'python3-pytest' (tools/setup.sh does)" >&2
  exit 1
fi
tests=()
for t in "$@"; do tests+=("$root/$t"); done
exec "$python" -m pytest -q -p no:cacheprovider "${tests[@]}"
