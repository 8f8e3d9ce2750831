#!/usr/bin/env bash
# Runs tests/bench/python_bench.py with the interpreter the extension was built for and the
# `tether` package from the runfiles on PYTHONPATH. Usage: run_python_bench.sh PYTHON [ARGS...]
set -euo pipefail
python=$1
shift
if [[ -n "${RUNFILES_DIR:-}" && -d "$RUNFILES_DIR/tether" ]]; then
  root="$RUNFILES_DIR/tether"
elif [[ -d "$0.runfiles/tether" ]]; then
  root="$0.runfiles/tether"
else
  root="$PWD"
fi
case "$python" in /*) ;; *) python="$root/$python" ;; esac
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec "$python" "$root/tests/bench/python_bench.py" "$@"
