#!/usr/bin/env bash
# Compilation databases in every form real tools write them: "command" and "arguments", relative
# and absolute "file", "directory" and source arguments, several entries per file, response files,
# compiler names and wrappers, headers without an entry, very long entries; and databases written
# by CMake and Bear themselves, and in the shapes of compdb and of Bazel's extractors.
#
# The project under test has its one finding (src/a.cpp:4) only when the file is parsed with the
# database's flags: the header is found through the database's -I, and the buggy function exists
# only with the database's -DWANT_BUG. So "exit 1 with a.cpp:4" proves the flags were used.
set -u
lint=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$PWD
fx=$here/tests/lint/fixtures
t=$TEST_TMPDIR
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; sed 's/^/    /' $t/err | head -20; fi; }
run() { "$lint" --no-cache --config /dev/null "$@" >"$t/out" 2>"$t/err"; rc=$?; }
found() { [ $rc -eq 1 ] && grep -q "$1:$2:[0-9]*: warning: .*raw-op-unguarded" $t/out; }
clean() { [ $rc -eq 0 ] && grep -q ' 0 finding(s)' $t/out; }
no_ast_error() { ! grep -q 'AST read error\|could not parse' $t/err; }

P=$t/p
mkdir -p $P/src $P/include $P/build
cp $fx/rawop/py_bindings.h $P/include/
cat >$P/src/a.cpp <<'EOF'
#include "py_bindings.h"
#ifdef WANT_BUG
void f(PyBlock &b) {
  mlirBlockDump(b.get());
}
#endif
EOF
cat >$P/src/a.h <<'EOF'
#pragma once
#include "py_bindings.h"
#ifdef WANT_BUG
inline void g(PyBlock &b) { mlirBlockDump(b.get()); }
#endif
EOF
cp $P/src/a.h $P/include/api.h
db() { cat >"$1/compile_commands.json"; }

# ---- the forms of an entry ----
run $P/src/a.cpp
# The defaults do not find the header: the file does not compile, and the raw-op rules fall back to
# their token mode, with a note naming the missing header (not a silent zero).
check "without a database: the defaults (the header is not on their path: degraded mode, note names it)" "grep -q \"degraded mode: the file does not compile (missing header 'py_bindings.h')\" $t/err"

db $P <<EOF
[{"directory": "$P", "file": "$P/src/a.cpp",
  "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "$P/src/a.cpp", "-o", "a.o"]}]
EOF
run -p $P $P/src/a.cpp
check "arguments, absolute file, directory and source argument" "found src/a.cpp 4"

db $P <<EOF
[{"directory": "$P/src", "file": "$P/src/a.cpp",
  "arguments": ["c++", "-std=c++17", "-I../include", "-DWANT_BUG", "-c", "a.cpp"]}]
EOF
run -p $P $P/src/a.cpp
check "Bear's form: absolute file, source argument relative to the directory" "found src/a.cpp 4 && no_ast_error"

db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp",
  "command": "c++ -I'include' \"-DWANT_BUG\" '-DSPACED=a b' -DQ=\\\\\"x\\\\\" -c src/a.cpp -o a.o"}]
EOF
run -p $P $P/src/a.cpp
check "command string with single, double and backslash quoting; relative file" "found src/a.cpp 4"

db $P/build <<EOF
[{"directory": "..", "file": "src/a.cpp", "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]}]
EOF
run -p $P/build $P/src/a.cpp
check "relative directory: relative to the database's own folder" "found src/a.cpp 4"

db $P <<EOF
[{"directory": ".", "file": "src/a.cpp", "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]}]
EOF
run -p $P $P/src/a.cpp
check "a fully relative database (directory \".\")" "found src/a.cpp 4"
(cd $t && "$lint" --no-cache --config /dev/null -p p p/src/a.cpp >$t/out 2>$t/err); rc=$?
check "relative -p and a relative path from another directory" "found p/src/a.cpp 4"
(cd $P/src && "$lint" --no-cache --config /dev/null -p .. a.cpp >$t/out 2>$t/err); rc=$?
check "run from inside the source folder" "found a.cpp 4"
mkdir -p $t/dbs
cat >$t/dbs/other-name.json <<EOF
[{"directory": "../p", "file": "src/a.cpp", "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]}]
EOF
run --compile-commands $t/dbs/other-name.json $P/src/a.cpp
check "--compile-commands FILE (any name): a relative directory is relative to FILE's folder" "found src/a.cpp 4"

# ---- compiler names and wrappers ----
for cc in c++ g++ clang++-19 /usr/bin/cc gcc x86_64-linux-gnu-g++-12 /usr/lib/ccache/c++; do
  db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp", "arguments": ["$cc", "-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]}]
EOF
  run -p $P $P/src/a.cpp
  check "compiler written as $cc" "found src/a.cpp 4"
done
cp $P/src/a.cpp $P/src/cxx_in.c
for cc in "c++" "g++" "clang++-19" "ccache g++" "sccache clang++" "distcc c++" "/usr/bin/ccache /usr/bin/c++" "icecc x86_64-linux-gnu-g++-12"; do
  args=$(printf '"%s", ' $cc)
  db $P <<EOF
[{"directory": "$P", "file": "src/cxx_in.c", "arguments": [$args "-Iinclude", "-DWANT_BUG", "-c", "src/cxx_in.c"]}]
EOF
  run -p $P $P/src/cxx_in.c
  check "a .c file compiled by '$cc' is C++" "found src/cxx_in.c 4"
done
for cc in "cc" "gcc" "ccache gcc" "/usr/bin/clang-19"; do
  args=$(printf '"%s", ' $cc)
  db $P <<EOF
[{"directory": "$P", "file": "src/cxx_in.c", "arguments": [$args "-Iinclude", "-DWANT_BUG", "-c", "src/cxx_in.c"]}]
EOF
  run -p $P $P/src/cxx_in.c
  check "a .c file compiled by '$cc' is C (C++ there does not parse)" "grep -q \"unknown type name 'template'\" $t/err"
done

# ---- several entries for one file: the first, with a note ----
db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp", "arguments": ["c++", "-Iinclude", "-c", "src/a.cpp"]},
 {"directory": "$P", "file": "$P/src/a.cpp", "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]}]
EOF
run -p $P $P/src/a.cpp
check "two entries: the first is used" "clean"
check "two entries: a note says which" "grep -q 'a.cpp: note: 2 entries in the compilation database; using the first (entry 0' $t/err"
db $P <<EOF
[{"directory": "$P", "file": "$P/src/a.cpp", "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]},
 {"directory": "$P", "file": "src/./a.cpp", "arguments": ["c++", "-Iinclude", "-c", "src/a.cpp"]}]
EOF
run -p $P $P/src/a.cpp
check "two entries (spelled differently), the other order: the first is used" "found src/a.cpp 4"

# ---- response files ----
printf -- '-Iinclude "-DWANT_BUG"\n' >$P/flags.rsp
db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp", "arguments": ["c++", "@flags.rsp", "-c", "src/a.cpp"]}]
EOF
run -p $P $P/src/a.cpp
check "@rsp relative to the entry's directory" "found src/a.cpp 4"
printf -- '-Iinclude @more.rsp\n' >$P/outer.rsp
printf -- "'-DWANT_BUG'\n" >$P/more.rsp
db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp", "command": "c++ @outer.rsp -c src/a.cpp"}]
EOF
run -p $P $P/src/a.cpp
check "nested @rsp in a command string" "found src/a.cpp 4"
printf -- '@loop.rsp -Iinclude -DWANT_BUG\n' >$P/loop.rsp
db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp", "arguments": ["c++", "@loop.rsp", "-c", "src/a.cpp"]}]
EOF
run -p $P $P/src/a.cpp
check "a response file that includes itself: a note, no hang, the flags it has are used" "found src/a.cpp 4 && grep -q 'loop.rsp: nested deeper than 16 levels' $t/err"
db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp", "arguments": ["c++", "@missing.rsp", "-c", "src/a.cpp"]}]
EOF
run -p $P $P/src/a.cpp
check "a missing response file: a note naming it" "grep -q 'response file $P/missing.rsp: No such file or directory; its arguments dropped' $t/err"

# ---- headers without an entry (clangd-style), and files with none anywhere ----
db $P <<EOF
[{"directory": "$P", "file": "src/a.cpp", "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]}]
EOF
run -p $P $P/src/a.h
check "a header without an entry gets the flags of the source in its folder" "found src/a.h 4 && no_ast_error"
check "... with a note saying whose" "grep -q 'a.h: note: no entry in the compilation database; using the flags of $P/src/a.cpp' $t/err"
run -p $P $P/include/api.h
check "a header in another folder: the nearest folder upward with a source" "found include/api.h 4 && no_ast_error"
cp $P/src/a.h $P/src/b.h
db $P <<EOF
[{"directory": "$P", "file": "src/x.c", "arguments": ["cc", "-Iinclude", "-DWANT_BUG", "-c", "src/x.c"]},
 {"directory": "$P", "file": "src/b.cpp", "arguments": ["c++", "-Iinclude", "-DWANT_BUG", "-c", "src/b.cpp"]}]
EOF
run -p $P $P/src/b.h
check "a header borrows from the source with its stem (b.h -> b.cpp, C++)" "found src/b.h 4 && grep -q 'using the flags of $P/src/b.cpp' $t/err"
db $P <<EOF
[{"directory": "/nonexistent-tether-dir", "file": "src/a.cpp", "arguments": ["c++", "-DWANT_BUG", "-c", "src/a.cpp"]}]
EOF
mkdir -p $t/elsewhere && cp $fx/rawop/py_bindings.h $t/elsewhere/ && cp $P/src/a.h $t/elsewhere/x.h
run -p $P $t/elsewhere/x.h
check "a header with no source in any folder above it: the defaults, never 'AST read error'" "clean && no_ast_error"
printf '#include "py_bindings.h"\nvoid f(PyBlock &b) { mlirBlockDump(b.get()); }\n' >$t/elsewhere/y.cpp
run -p $P $t/elsewhere/y.cpp
check "a source with no entry: the defaults" "found elsewhere/y.cpp 2 && no_ast_error"

# ---- no fixed-size argument arrays ----
for n in 600 20000; do
  python3 - "$P" $n >$P/compile_commands.json <<'PY'
import json, sys
p, n = sys.argv[1], int(sys.argv[2])
args = ["c++"] + ["-DPAD_%d=%d" % (i, i) for i in range(n)] + ["-Iinclude", "-DWANT_BUG", "-c", "src/a.cpp"]
json.dump([{"directory": p, "file": "src/a.cpp", "arguments": args}], sys.stdout)
PY
  run -p $P $P/src/a.cpp
  check "an entry with $n arguments: the last ones are used too" "found src/a.cpp 4"
done

# ---- malformed entries ----
printf '[{"directory": "/", "file": "a.cpp", "arguments": ["c++", 1]}]' >$P/compile_commands.json
run -p $P $P/src/a.cpp
check "an argument that is not a string: exit 2 with the entry named" "[ $rc -eq 2 ] && grep -q 'entry 0 has an \"arguments\" element that is not a string' $t/err"
printf '[{"directory": "%s", "file": "src/a.cpp", "command": "c++ -Iinclude -DWANT_BUG -c src/a.cpp \\"unterminated"}]' $P >$P/compile_commands.json
run -p $P $P/src/a.cpp
check "an unterminated quote in a command: read to its end, no crash" "found src/a.cpp 4"

# ---- the shapes real tools write ----
# compdb (compdb -p build list) adds entries for headers, as "command" strings.
cat >$P/compile_commands.json <<EOF
[{"directory": "$P", "command": "/usr/bin/c++ -Iinclude -DWANT_BUG -o x.o -c $P/include/api.h", "file": "$P/include/api.h"},
 {"directory": "$P", "command": "/usr/bin/c++ -Iinclude -o x.o -c $P/src/a.cpp", "file": "$P/src/a.cpp"}]
EOF
run -p $P $P/include/api.h
check "compdb: a header with an entry of its own uses it (no note)" "found include/api.h 4 && ! grep -q 'note: no entry' $t/err"
# Bazel extractors (hedron's compile_commands extractor, tether's own aspect): the execution root as
# directory, relative file, -iquote/-isystem, dependency files, and Bazel's redactions.
cat >$P/compile_commands.json <<EOF
[{"file": "src/a.cpp", "directory": "$P",
  "arguments": ["/usr/bin/gcc", "-xc++", "-U_FORTIFY_SOURCE", "-fstack-protector", "-Wall",
    "-fno-omit-frame-pointer", "-MD", "-MF", "bazel-out/k8-fastbuild/bin/_objs/a/a.pic.d",
    "-frandom-seed=bazel-out/k8-fastbuild/bin/_objs/a/a.pic.o", "-fPIC", "-iquote", ".",
    "-iquote", "bazel-out/k8-fastbuild/bin", "-isystem", "include", "-DWANT_BUG",
    "-fno-canonical-system-headers", "-Wno-builtin-macro-redefined",
    "-D__DATE__=\"redacted\"", "-D__TIMESTAMP__=\"redacted\"", "-D__TIME__=\"redacted\"",
    "-c", "src/a.cpp", "-o", "bazel-out/k8-fastbuild/bin/_objs/a/a.pic.o"]}]
EOF
run -p $P $P/src/a.cpp
check "Bazel extractor shape (hedron): relative file, -iquote/-isystem, -MD -MF dropped" "found src/a.cpp 4 && grep -q 'dropped (they write files.*-MD -MF bazel-out' $t/err"

# CMake itself.
if command -v cmake >/dev/null; then
  C=$t/cmake
  mkdir -p $C/src $C/include && cp $P/src/a.cpp $C/src/ && cp $fx/rawop/py_bindings.h $C/include/
  cat >$C/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(x CXX)
add_library(x OBJECT src/a.cpp)
target_include_directories(x PRIVATE include)
target_compile_definitions(x PRIVATE WANT_BUG)
EOF
  (cd $C && cmake -S . -B build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >$t/cmake.log 2>&1)
  check "cmake wrote a database" "[ -s $C/build/compile_commands.json ]"
  run -p $C/build $C/src/a.cpp
  check "CMake's database (absolute paths, \"command\")" "found src/a.cpp 4"
  (cd $C && "$lint" --no-cache --config /dev/null -p build src >$t/out 2>$t/err); rc=$?
  check "CMake's database, relative paths on the command line" "found src/a.cpp 4"
else
  echo "FAIL: cmake is not installed (tools/setup.sh installs it)"; fail=1
fi

# Bear itself (it records the real compiler calls, dependency-file flags included).
if command -v bear >/dev/null && command -v make >/dev/null; then
  B=$t/bear
  mkdir -p $B/src $B/include && cp $P/src/a.cpp $B/src/ && cp $fx/rawop/py_bindings.h $B/include/
  printf 'a.o: src/a.cpp\n\tc++ -std=c++17 -Iinclude -DWANT_BUG -MD -MF a.d -c src/a.cpp -o a.o\n' >$B/Makefile
  (cd $B && bear -- make >$t/bear.log 2>&1)
  check "bear wrote a database" "[ -s $B/compile_commands.json ] && grep -q 'a.cpp' $B/compile_commands.json"
  before=$(stat -c '%Y %s' $B/a.d)
  run -p $B $B/src/a.cpp
  check "Bear's database" "found src/a.cpp 4"
  check "Bear's database: absolute file, relative source argument (the form that failed before)" "grep -q '\"src/a.cpp\"' $B/compile_commands.json && grep -q '\"file\": \"$B/src/a.cpp\"' $B/compile_commands.json"
  check "Bear's database: the build's dependency file a.d untouched" "[ \"\$(stat -c '%Y %s' $B/a.d)\" = \"$before\" ]"
else
  echo "FAIL: bear or make is not installed (tools/setup.sh installs them)"; fail=1
fi

[ $fail -eq 0 ] && echo "compdb_test: passed" || echo "compdb_test: FAILED"
exit $fail
