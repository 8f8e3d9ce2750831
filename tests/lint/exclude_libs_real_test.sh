#!/usr/bin/env bash
# exclude-libs on the real AddMLIRPython.cmake that libmlir-N-dev installs (the newest installed MLIR,
# the one tether-lint's helper check reads by default): upstream MLIR links
# every Python extension with LINKER:--exclude-libs,ALL. Exactly that line is reported, and the
# fixture excerpt (tests/lint/fixtures/exclude_libs/cmake/AddMLIRPython_excerpt.cmake) still
# matches it.
set -u
lint=$1
real=${2:-$(ls /usr/lib/llvm-*/lib/cmake/mlir/AddMLIRPython.cmake 2>/dev/null | sort -V | tail -1)}
excerpt=tests/lint/fixtures/exclude_libs/cmake/AddMLIRPython_excerpt.cmake
t=$TEST_TMPDIR
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }

if [ ! -r "$real" ]; then
  echo "FAIL: no AddMLIRPython.cmake is installed (libmlir-22-dev)"
  exit 1
fi
want=$(grep -n -- '--exclude-libs' "$real" | grep -v '^[0-9]*: *#' | cut -d: -f1)
"$lint" --config /dev/null --format json "$real" >"$t/out" 2>"$t/err"
rc=$?
check "the real file: exit 1" "[ $rc -eq 1 ]"
check "the real file: one finding, at line $want, rule exclude-libs" \
  "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [(f[\"line\"], f[\"rule\"]) for f in d] == [(int(sys.argv[2]), \"exclude-libs\")], d' $t/out $want"
flag_real=$(sed -n "${want}p" "$real" | sed 's/^ *//')
flag_excerpt=$(grep -- '--exclude-libs' "$excerpt" | grep -v '^#' | sed 's/ *# expect:.*//; s/^ *//')
check "the excerpt's flag line is the real file's ($flag_real)" "[ \"$flag_real\" = \"$flag_excerpt\" ]"
"$lint" --config /dev/null --format sarif "$real" >"$t/sarif" 2>/dev/null
check "SARIF: the result has region.startLine $want" \
  "python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[\"runs\"][0][\"results\"]; assert r[0][\"ruleId\"]==\"exclude-libs\" and r[0][\"locations\"][0][\"physicalLocation\"][\"region\"][\"startLine\"]==int(sys.argv[2])' $t/sarif $want"
# MLIR's helpers: a project calling them gets the flag without writing it; the finding names the
# installed helper file and the line of the flag as the reason.
mkdir -p "$t/proj"
printf 'declare_mlir_python_extension(P.Ext MODULE_NAME _p SOURCES p.cpp)\nadd_mlir_python_modules(PModules DECLARED_SOURCES P)\nadd_mlir_python_common_capi_library(PCAPI)\n' >"$t/proj/CMakeLists.txt"
"$lint" --config /dev/null --format json "$t/proj" >"$t/hout" 2>"$t/herr"
rc=$?
check "helpers: exit 1" "[ $rc -eq 1 ]"
check "helpers: declare_mlir_python_extension and add_mlir_python_modules reported, with the helper's line" \
  "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [(f[\"line\"], f[\"column\"]) for f in d] == [(1, 1), (2, 1)], d; assert all(sys.argv[2] + \":\" + sys.argv[3] in f[\"message\"] for f in d), d' $t/hout $real $want"
printf '[lint]\nmlir-cmake-dir = nowhere\n' >"$t/proj/.tether-lint"
"$lint" "$t/proj" >"$t/hout" 2>"$t/herr"
rc=$?
check "mlir-cmake-dir without an AddMLIRPython.cmake: exit 2, said so" \
  "[ $rc -eq 2 ] && grep -q 'mlir-cmake-dir: nowhere has no readable AddMLIRPython.cmake' $t/herr"

if [ $fail -ne 0 ]; then
  cat "$t/out" "$t/err"
  echo "exclude_libs_real_test: FAILED"
  exit 1
fi
echo "exclude_libs_real_test: passed"
