#!/usr/bin/env bash
# Runs a Python test script with the interpreter Bazel resolved: py_test.sh PYTHON SCRIPT ARGS...
py=$1
shift
exec "$py" "$@"
