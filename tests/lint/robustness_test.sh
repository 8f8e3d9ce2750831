#!/usr/bin/env bash
# Robustness: hostile inputs give a clear message and the documented exit code, never a crash.
# Exit codes: 0 no findings, 1 findings, 2 the tool could not do its job.
set -u
lint=$1
here=$PWD
fx=$here/tests/lint/fixtures
t=$TEST_TMPDIR
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }
run() { "$lint" --config /dev/null "$@" >"$t/out" 2>"$t/err"; rc=$?; }
no_crash() { [ $rc -lt 128 ]; }

# compile_commands.json: malformed, wrong shape, incomplete entries.
mkdir -p $t/db1 $t/db2 $t/db3 $t/db4
printf '[{"directory": "/tmp", "file": ' >$t/db1/compile_commands.json
run -p $t/db1 $fx/compdb/flags.cc
check "malformed compile_commands.json: exit 2" "[ $rc -eq 2 ]"
check "malformed compile_commands.json: says invalid JSON and where" "grep -q 'malformed compilation database .*db1/compile_commands.json: invalid JSON near byte' $t/err"
printf '{"file": "x.cc"}' >$t/db2/compile_commands.json
run -p $t/db2 $fx/compdb/flags.cc
check "compile_commands.json not an array: exit 2 with message" "[ $rc -eq 2 ] && grep -q 'expected a JSON array' $t/err"
printf '[{"directory": "/", "command": "cc x.cc"}]' >$t/db3/compile_commands.json
run -p $t/db3 $fx/compdb/flags.cc
check "entry without file: exit 2 with message" "[ $rc -eq 2 ] && grep -q 'entry 0 has no \"file\" string' $t/err"
# A good database: its flags are used (the define removes the finding).
cp -r $fx/compdb $fx/rawop/py_bindings.h $t/db4/
cat >$t/db4/compile_commands.json <<JSON
[{"directory": "$t/db4", "file": "compdb/flags.cc",
  "arguments": ["c++", "-xc++", "-std=c++17", "-DTETHER_SKIP_USE", "-I.", "-c", "compdb/flags.cc", "-o", "flags.o"]}]
JSON
cp $t/db4/py_bindings.h $t/db4/compdb/
run $t/db4/compdb/flags.cc
check "without a database the default flags apply: exit 1" "[ $rc -eq 1 ]"
run -p $t/db4 $t/db4/compdb/flags.cc
check "-p DIR: the file's flags come from the database: exit 0" "[ $rc -eq 0 ] && grep -q '1 file(s) analysed, 0 finding' $t/out"
cp $t/db4/compile_commands.json $t/db4/other-name.json
run --compile-commands $t/db4/other-name.json $t/db4/compdb/flags.cc
check "--compile-commands FILE with any name works: exit 0" "[ $rc -eq 0 ] && grep -q '1 file(s) analysed, 0 finding' $t/out"

# Missing files.
run $t/nope.cc
check "missing file: exit 2, named with the reason" "[ $rc -eq 2 ] && grep -q \"$t/nope.cc: No such file or directory\" $t/err"
run $t/nope.cc $fx/rawop/escape.cc
check "missing file next to a good one: the good one is still analysed, exit 2" "[ $rc -eq 2 ] && grep -q 'escape.cc:.*raw-op-escape' $t/out"

# Binary and non-UTF-8 files.
head -c 4096 /dev/urandom >$t/blob.cc; printf '\0\0\0' >>$t/blob.cc
run $t/blob.cc
check "binary .cc file: exit 2 with message" "[ $rc -eq 2 ] && grep -q 'blob.cc: binary file (contains NUL bytes)' $t/err"
run $lint
check "the linter binary itself as input (an executable, typeid-elf reads it): exit 0, no crash" "[ $rc -eq 0 ] && no_crash"
mkdir -p $t/latin1
cp $fx/rawop/py_bindings.h $t/latin1/
printf '// Caf\xe9 \xff\xfe: Latin-1 bytes in a comment\n#include "py_bindings.h"\nconst char *s = "\xe9t\xe9";\nvoid f(PyBlock &b) { mlirBlockDump(b.get()); }\n' >$t/latin1/l\xe9.cc
run --format json $t/latin1
check "non-UTF-8 source and file name: analysed, exit 1" "[ $rc -eq 1 ]"
check "non-UTF-8: the JSON output is valid UTF-8 JSON with the finding" "python3 -c 'import json,sys; d=json.load(open(sys.argv[1],encoding=\"utf-8\")); assert d[0][\"line\"]==4 and d[0][\"rule\"]==\"raw-op-unguarded\"' $t/out"

# Empty directory.
mkdir -p $t/empty
run $t/empty
check "empty directory: exit 0, nothing analysed" "[ $rc -eq 0 ] && grep -q '0 file(s) analysed, 0 finding(s)' $t/out"

# A 5 MB generated source: 1 in 4 functions unguarded.
python3 - "$t/big.cc" <<'PY'
import sys
out = open(sys.argv[1], "w")
out.write('#include "py_bindings.h"\n')
i = 0
while out.tell() < 5 * 1024 * 1024:
    if i % 4 == 0:
        out.write(f"void f{i}(PyBlock &self) {{\n  int pad{i}[4] = {{1, 2, 3, 4}};\n  (void)pad{i};\n  mlirBlockDump(self.get());\n}}\n")
    else:
        out.write(f"void f{i}(PyBlock &self) {{\n  self.checkValid();\n  int pad{i}[4] = {{1, 2, 3, 4}};\n  (void)pad{i};\n  mlirBlockDump(self.get());\n}}\n")
    i += 1
print(i // 4 + (1 if i % 4 else 0), file=open(sys.argv[1] + ".count", "w"))
PY
cp $fx/rawop/py_bindings.h $t/
want=$(cat $t/big.cc.count)
run --format json $t/big.cc
check "5 MB source: exit 1" "[ $rc -eq 1 ]"
check "5 MB source: every unguarded function found ($want)" "[ \$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' $t/out) -eq $want ]"

# A symlink loop in a walked directory, and a dangling link.
mkdir -p $t/loop/sub
cp $fx/rawop/py_bindings.h $fx/rawop/escape.cc $t/loop/sub/
ln -s .. $t/loop/sub/back
ln -s ../../loop $t/loop/sub/again
ln -s $t/loop/sub/nowhere.cc $t/loop/dangling.cc
run $t/loop
check "symlink loop: reported, not fatal: exit 1 for the findings" "[ $rc -eq 1 ] && grep -q 'symlink loop' $t/err"
check "symlink loop: each file analysed once (escape.cc and the header)" "grep -q '2 file(s) analysed, 17 finding(s)' $t/out"
check "dangling symlink in a walked directory: a warning" "grep -q 'dangling.cc: dangling symlink, skipped' $t/err"
ln -s self-loop $t/self-loop.cc 2>/dev/null; ln -sf self-loop.cc $t/self-loop 2>/dev/null
run $t/self-loop.cc
check "a named symlink that loops: exit 2 with message" "[ $rc -eq 2 ] && grep -q 'self-loop.cc: symlink loop' $t/err"

# An unreadable file. Root (as here and in CI) reads any file whatever its mode, by the
# capabilities CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: as root, tether-lint runs without them
# (setpriv, util-linux), so that the file's mode 000 stops it as it stops any user.
cp $fx/rawop/escape.cc $t/secret.cc; chmod 000 $t/secret.cc
as_user=()
if [ "$(id -u)" -eq 0 ]; then as_user=(setpriv --bounding-set -dac_override,-dac_read_search); fi
check "the file cannot be read by a process run the way the linter is" \
  "${as_user[*]} true && ! ${as_user[*]} cat $t/secret.cc >/dev/null 2>&1"
"${as_user[@]}" "$lint" --config /dev/null $t/secret.cc >"$t/out" 2>"$t/err"; rc=$?
check "unreadable file: exit 2 with message" "[ $rc -eq 2 ] && grep -q 'secret.cc: cannot read: Permission denied' $t/err"
chmod 644 $t/secret.cc

# Deep nesting and garbage: libclang's limits, never a crash.
python3 -c 'print("void f() {" + "{" * 3000 + "}" * 3000 + "}")' >$t/deep.cc
run $t/deep.cc
check "3000 nested blocks: no crash, compile error reported once" "no_crash && [ \$(grep -c 'compile error' $t/err) -eq 1 ]"
python3 -c 'print("int x = " + "(" * 5000 + "1" + ")" * 5000 + ";")' >$t/parens.cc
run $t/parens.cc
check "5000 nested parentheses: no crash" "no_crash && [ $rc -le 1 ]"
printf 'template <class T> struct S { S<S<T>> s; }; S<int> x; #pragma\n\x01\x02 }}}} ))) class' >$t/garbage.cc
run $t/garbage.cc
check "garbage C++: no crash, exit 0, errors reported" "[ $rc -eq 0 ] && grep -q 'compile error(s), analysed as far as the AST goes' $t/err"

[ $fail -eq 0 ] && echo "robustness_test: passed" || echo "robustness_test: FAILED"
exit $fail
