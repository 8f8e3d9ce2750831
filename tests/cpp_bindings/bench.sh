#!/usr/bin/env bash
# bazel run -c opt //tests/cpp_bindings:bench [-- --n N]: bench.py with the two builds of the demo.
set -euo pipefail
python=$1
shift
exec "$python" "$@"
