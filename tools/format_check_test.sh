#!/usr/bin/env bash
# The project's own C/C++ sources are formatted as .clang-format says (lint fixtures excepted:
# their layout is part of what they test).
set -u
files=("$@")
if ! command -v clang-format >/dev/null; then
  echo "format_check_test: clang-format is not installed (tools/setup.sh installs it)"
  exit 1
fi
out=$(clang-format --style=file --dry-run -Werror "${files[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  echo "$out" | head -40
  echo "format_check_test: FAILED: run clang-format -i on the files above"
  exit 1
fi
echo "format_check_test: ${#files[@]} files formatted; 1 passed, 0 failed"
