#!/usr/bin/env bash
# weak-typeid beyond the fixture markers: the degraded-mode note, the hint, NOLINT on a cross-file
# finding, the system-headers setting, and --list-rules/--disable.
# usage: typeid_test.sh TETHER_LINT
lint=$1
fx=tests/lint/fixtures/typeid
t=${TEST_TMPDIR:-$(mktemp -d)}
fail=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
run() {
  "$lint" "$@" >"$t/out" 2>"$t/err"
  rc=$?
}

run --config /dev/null "$fx/degraded"
check "degraded: exit 1" "[ $rc -eq 1 ]"
check "degraded: the note names the file, the mode and the missing header" \
  "grep -q \"broken.cpp: weak-typeid: degraded mode: the file does not compile (missing header 'not/installed/mlir/Support/TypeID.h'), [0-9]* TypeID macro use(s) recognised from tokens only\" $t/err"
check "degraded: classes deriving from a pass base are counted in the note" \
  "grep -q \"passes.cpp: weak-typeid: degraded mode: the file does not compile (missing header 'my/Transforms/Passes.h.inc'), 0 TypeID macro use(s) .*, 4 class(es) deriving from a TableGen pass base judged by the base's name\" $t/err"
check "degraded: token findings say so" "grep -q 'recognised from tokens: the file does not compile' $t/out"

run --config /dev/null "$fx/basic"
check "compiling files get no degraded note" "! grep -q 'degraded mode' $t/err"
check "suppressed findings are counted" "grep -q ', 2 suppressed' $t/out"

run --config /dev/null --whole-program --format json "$fx/cross"
check "json: every finding carries the DECLARE/DEFINE fix in its hint" \
  "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d and all(\"MLIR_DECLARE_EXPLICIT_TYPE_ID\" in f[\"hint\"] and \"MLIR_DEFINE_EXPLICIT_TYPE_ID\" in f[\"hint\"] and \"exactly one .cpp\" in f[\"hint\"] for f in d)' $t/out"

# NOLINT on a cross-file finding (reported from the run's last pass).
mkdir -p "$t/nolint"
cp "$fx/stub/mlir_typeid.h" "$t/nolint/"
printf '#include "mlir_typeid.h"\nnamespace n { struct A {}; struct B {}; }\nMLIR_DECLARE_EXPLICIT_TYPE_ID(n::A) // NOLINT(tether-weak-typeid)\nMLIR_DECLARE_EXPLICIT_TYPE_ID(n::B)\n' >"$t/nolint/a.cpp"
run --config /dev/null --whole-program "$t/nolint/a.cpp"
check "cross-file NOLINT: one finding left, one suppressed" \
  "[ $rc -eq 1 ] && grep -q 'a.cpp:4:1: .*n::B' $t/out && ! grep -q 'a.cpp:3:' $t/out && grep -q '1 finding(s), 1 suppressed' $t/out"

# Whole program or not: "declared, defined nowhere" only when the run has the whole program.
run --config /dev/null "$t/nolint/a.cpp"
check "partial run (files named, no database): no declared-but-undefined finding" "[ $rc -eq 0 ]"
mkdir -p "$t/wp/src" "$t/wp/inc"
cp "$fx/stub/mlir_typeid.h" "$t/wp/inc/"
printf '#include "mlir_typeid.h"\nnamespace w { struct A {}; }\nMLIR_DECLARE_EXPLICIT_TYPE_ID(w::A)\n' >"$t/wp/src/a.cpp"
printf '[{"directory": "%s/wp/src", "file": "a.cpp", "arguments": ["c++", "-std=c++17", "-I../inc", "-c", "a.cpp"]}]\n' "$t" \
  >"$t/wp/compile_commands.json"
run --config /dev/null -p "$t/wp" "$t/wp/src/a.cpp"
check "partial run (-p, a file named, as pre-commit does): no declared-but-undefined finding" "[ $rc -eq 0 ]"
run --config /dev/null -p "$t/wp" "$t/wp/src"
check "-p with a directory walk is the whole program: the finding" \
  "[ $rc -eq 1 ] && grep -q \"a.cpp:3:1: .*declares TypeID storage for 'w::A' that no translation unit of this run defines\" $t/out"
run --config /dev/null --whole-program -p "$t/wp" "$t/wp/src/a.cpp"
check "--whole-program with a file named: the finding" "[ $rc -eq 1 ] && grep -q 'a.cpp:3:1:' $t/out"

# project-roots: a header outside the project is not the user's to fix.
mkdir -p "$t/pr/proj/src" "$t/pr/third_party/dep"
cp "$fx/stub/mlir_typeid.h" "$t/pr/third_party/dep/"
printf '#include "mlir_typeid.h"\nnamespace d { struct Dep {}; }\nMLIR_DECLARE_EXPLICIT_TYPE_ID(d::Dep)\n' >"$t/pr/third_party/dep/dep.h"
printf '#include "dep.h"\nint user;\n' >"$t/pr/proj/src/user.cpp"
printf '[lint]\nflags = -xc++ -std=c++17 -I%s/pr/third_party/dep\n' "$t" >"$t/pr/proj/.tether-lint"
run --whole-program "$t/pr/proj/src"
check "project-roots (default: the config file's folder): a third-party header is not reported" "[ $rc -eq 0 ]"
printf '[lint]\nflags = -xc++ -std=c++17 -I%s/pr/third_party/dep\nproject-roots = ., ../third_party\n' "$t" >"$t/pr/proj/.tether-lint"
run --whole-program "$t/pr/proj/src"
check "project-roots = ., ../third_party: the header is the user's" \
  "[ $rc -eq 1 ] && grep -q \"dep.h:3:1: .*'d::Dep'\" $t/out"
printf '[lint]\nproject-roots =\n' >"$t/pr/bad.ini"
run --config "$t/pr/bad.ini" "$t/pr/proj/src"
check "project-roots: an empty value is a config error" "[ $rc -eq 2 ] && grep -q 'bad.ini:2: missing value' $t/err"

# MLIR's own headers are never the user's, even through -I in the project's flags:
# mlir/Support/TypeID.h declares MLIR_DECLARE_EXPLICIT_TYPE_ID(void).
mlir_inc=$(ls -d /usr/lib/llvm-*/include/mlir/Support/TypeID.h 2>/dev/null | sort -V | tail -1)
mlir_inc=${mlir_inc%/mlir/Support/TypeID.h}
if [ -n "$mlir_inc" ]; then
  mkdir -p "$t/own"
  printf '#include "mlir/Support/TypeID.h"\nint user;\n' >"$t/own/user.cpp"
  printf '[{"directory": "%s/own", "file": "user.cpp", "arguments": ["c++", "-std=c++17", "-I%s", "-c", "user.cpp"]}]\n' "$t" "$mlir_inc" \
    >"$t/own/compile_commands.json"
  printf '[lint]\nproject-roots = /\n' >"$t/own/.tether-lint"
  run -p "$t/own" "$t/own"
  check "MLIR's own TypeID.h through -I, project-roots = /: DECLARE(void) not reported" \
    "[ $rc -eq 0 ] && ! grep -q 'TypeID.h' $t/out"
fi

# system-headers: the same header reached through -isystem is skipped unless asked.
mkdir -p "$t/sys/inc" "$t/sys/src"
cp "$fx/stub/mlir_typeid.h" "$t/sys/inc/"
printf '#include "mlir_typeid.h"\nnamespace v { struct Vendored {}; }\nMLIR_DECLARE_EXPLICIT_TYPE_ID(v::Vendored)\n' >"$t/sys/inc/vendored.h"
printf '#include "vendored.h"\nint user;\n' >"$t/sys/src/user.cpp"
printf '[lint]\nflags = -xc++ -std=c++17 -isystem %s/sys/inc\n' "$t" >"$t/sys/off.ini"
printf '[lint]\nflags = -xc++ -std=c++17 -isystem %s/sys/inc\nsystem-headers = true\n' "$t" >"$t/sys/on.ini"
printf '[lint]\nflags = -xc++ -std=c++17 -I%s/sys/inc\n' "$t" >"$t/sys/user.ini"
run --config "$t/sys/off.ini" --whole-program "$t/sys/src/user.cpp"
check "system header: skipped by default" "[ $rc -eq 0 ]"
run --config "$t/sys/on.ini" --whole-program "$t/sys/src/user.cpp"
check "system-headers = true: its DECLARE takes part" "[ $rc -eq 1 ] && grep -q 'vendored.h:3:1: .*v::Vendored' $t/out"
run --config "$t/sys/user.ini" --whole-program "$t/sys/src/user.cpp"
check "a header through -I is the project's own: its DECLARE takes part" "[ $rc -eq 1 ] && grep -q 'vendored.h:3:1:' $t/out"
printf '[lint]\nsystem-headers = maybe\n' >"$t/bad.ini"
run --config "$t/bad.ini" "$fx/basic"
check "system-headers: bad value is a config error" "[ $rc -eq 2 ] && grep -q \"bad.ini:2: system-headers: expected true or false, not 'maybe'\" $t/err"

run --list-rules
check "--list-rules lists weak-typeid" "grep -q '^weak-typeid *enabled' $t/out"
run --config /dev/null --disable weak-typeid "$fx/basic"
check "--disable weak-typeid: clean" "[ $rc -eq 0 ]"
run --config /dev/null --format sarif "$fx/real"
check "sarif: weak-typeid in the rule list" "grep -q '\"id\":[[:space:]]*\"weak-typeid\"' $t/out"

exit $fail
