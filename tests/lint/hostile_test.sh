#!/usr/bin/env bash
# A hostile repository, as a CI that lints pull requests meets it: tether-lint writes nothing
# outside its own output and cache whatever flags the repository carries, reads no FIFO, device or
# /proc file and nothing over the size limit, survives sources that overflow libclang's stack or
# never finish, and prints no line a file name or message could forge. Exit codes as docs/lint.md
# promises: 0 clean, 1 findings, 2 the tool could not do its job.
set -u
lint=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fx=$PWD/tests/lint/fixtures
t=$TEST_TMPDIR
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; sed 's/^/    /' $t/err | head -20; fi; }
# Every run is bounded: a hang is a failure (exit 124), not a stuck test.
run() { timeout 120 "$lint" --config /dev/null "$@" >"$t/out" 2>"$t/err"; rc=$?; }
runc() { timeout 120 "$lint" "$@" >"$t/out" 2>"$t/err"; rc=$?; }
errors() { grep -c 'tether-lint: error:' $t/err; }
asan=0
[ "${TETHER_SANITIZER:-}" = asan ] && asan=1

# ==== 1. Nothing is written outside the linter's output and cache ============================
W=$t/watch/repo
mkdir -p $W/src $W/include $W/bin $t/watch/home $t/watch/tmp
cp $fx/rawop/py_bindings.h $W/include/
printf '#include "py_bindings.h"\n#ifdef WANT_BUG\nvoid f(PyBlock &b) { mlirBlockDump(b.get()); }\n#endif\n' >$W/src/a.cpp
for d in decoy.d decoy2.d decoy3.json out.o diag.dia wp.d a.ii a.s a.json x.json rsp.d; do
  echo precious >$W/$d
done
printf -- '-MD -MF rsp.d -Iinclude\n' >$W/flags.rsp
cat >$W/compile_commands.json <<EOF
[{"directory": "$W", "file": "src/a.cpp",
  "arguments": ["c++", "-DWANT_BUG", "@flags.rsp", "-MD", "-MF", "decoy.d", "-MJ", "x.json",
    "-o", "out.o", "--serialize-diagnostics", "diag.dia", "-ftime-trace", "-ftime-trace=a.json",
    "-save-temps", "-save-temps=cwd", "-fprofile-generate", "-fprofile-instr-generate",
    "-fmodules", "-fmodules-cache-path=$W/mcache", "-fcrash-diagnostics-dir=$W/crash",
    "-Xclang", "-load", "-Xclang", "$W/evil.so", "-fplugin=$W/evil.so", "-Wp,-MD,$W/wp.d",
    "-B", "$W/bin", "--config", "$W/evil.cfg", "-Xclang", "-dependency-file",
    "-Xclang", "$W/decoy.d", "-c", "src/a.cpp"]}]
EOF
cat >$W/.tether-lint <<'EOF'
[lint]
flags = -xc++ -std=c++17 -Iinclude -DWANT_BUG -MD -MF decoy2.d
extra-flags = -MJ decoy3.json -Xclang -load -Xclang evil.so
EOF
printf '#include "py_bindings.h"\n#ifdef WANT_BUG\nvoid g(PyBlock &b) { mlirBlockDump(b.get()); }\n#endif\n' >$W/src/nodb.cpp
snapshot() { (cd $t/watch && find . -printf '%p %s %T@ %m %y\n' | sort && cat repo/*.d repo/*.json repo/*.o repo/*.dia repo/*.ii repo/*.s | md5sum); }
# The watch itself must see a write: the compiler given the same flags writes the decoy.
before=$(snapshot)
(cd $W && c++ -fsyntax-only -Iinclude -MD -MF decoy.d src/a.cpp 2>/dev/null)
check "control: the file-system watch sees what a compiler with -MD -MF writes" "[ \"\$(snapshot)\" != \"$before\" ]"
echo precious >$W/decoy.d
before=$(snapshot)
(cd $W && HOME=$t/watch/home TMPDIR=$t/watch/tmp timeout 120 "$lint" --cache-dir $t/cache -p . src/a.cpp src/nodb.cpp >$t/out 2>$t/err); rc=$?
after=$(snapshot)
check "hostile flags in a database, a response file and .tether-lint: the findings still come (the allowed flags apply)" "[ $rc -eq 1 ] && grep -q 'src/a.cpp:3:.*raw-op-unguarded' $t/out && grep -q 'src/nodb.cpp:3:.*raw-op-unguarded' $t/out"
check "nothing was written, created or touched in the repository, HOME or TMPDIR" "[ \"$after\" = \"$before\" ]"
check "the decoy an -MF would truncate still holds its contents" "[ \"\$(cat $W/decoy.d)\" = precious ]"
check "a note names the dropped flags of the database entry, once" "[ \$(grep -c 'src/a.cpp: note: compile flags dropped' $t/err) -eq 1 ] && grep -q -- '-MF decoy.d' $t/err && grep -q -- '-Xclang -load' $t/err && grep -q -- '-fplugin=' $t/err"
check "a note names the dropped flags of the response file" "grep -q -- '-MF rsp.d' $t/err"
check "a note names the dropped flags of .tether-lint, once per run" "[ \$(grep -c 'tether-lint: note: .*\.tether-lint: flags: compile flags dropped' $t/err) -eq 1 ] && grep -q 'extra-flags: compile flags dropped.*-MJ decoy3.json' $t/err"
(cd $W && HOME=$t/watch/home TMPDIR=$t/watch/tmp timeout 120 "$lint" --no-cache -p . src >$t/out 2>$t/err); rc=$?
check "the same with --no-cache and a directory walk: still nothing written" "[ $rc -eq 1 ] && [ \"\$(snapshot)\" = \"$before\" ]"
check "--no-cache: no cache folder appears in HOME" "[ ! -e $t/watch/home/.cache ]"

# ==== 2. Nothing is read that is not a regular file, or that is too large ====================
R=$t/reads
mkdir -p $R
cp $fx/rawop/py_bindings.h $fx/rawop/escape.cc $R/
mkfifo $R/fifo.cc $R/fifo.tether-lint $R/fifo.json
run -p /dev/zero $R/escape.cc
check "-p /dev/zero: one error line, exit 2" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q '/dev/zero: not a directory' $t/err"
run --compile-commands /dev/zero $R/escape.cc
check "--compile-commands /dev/zero: one error line, exit 2, not read" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'cannot read compilation database /dev/zero: not a regular file (a character device)' $t/err"
runc --config /dev/zero $R/escape.cc
check "--config /dev/zero: one error line, exit 2" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'cannot read config file /dev/zero: not a regular file (a character device)' $t/err"
runc --config $R/fifo.tether-lint $R/escape.cc
check "--config FIFO: one error line, exit 2, no hang" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'fifo.tether-lint: not a regular file (a FIFO)' $t/err"
runc --config /proc/self/environ $R/escape.cc
check "--config /proc/self/environ: one error line, exit 2" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'pseudo file system' $t/err"
mkdir -p $R/dbfifo && mkfifo $R/dbfifo/compile_commands.json
run -p $R/dbfifo $R/escape.cc
check "-p DIR whose compile_commands.json is a FIFO: exit 2, no hang" "[ $rc -eq 2 ] && grep -q 'compile_commands.json: not a regular file (a FIFO)' $t/err"
mkdir -p $R/cfgfifo && mkfifo $R/cfgfifo/.tether-lint && cp $R/escape.cc $R/py_bindings.h $R/cfgfifo/
runc $R/cfgfifo/escape.cc
check "a .tether-lint that is a FIFO, found upward: exit 2, no hang" "[ $rc -eq 2 ] && grep -q '.tether-lint: not a regular file (a FIFO)' $t/err"
run $R/fifo.cc
check "a FIFO named on the command line: one error line, exit 2, no hang" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'fifo.cc: not a regular file (a FIFO)' $t/err"
ln -s /proc/self/status $R/proc.cc
ln -s /proc/self/environ $R/CMakeLists.txt
ln -s /dev/zero $R/zero.cc
ln -s /dev/zero $R/libzero.so
ln -s /dev/urandom $R/BUILD
run $R
check "a walked folder with a FIFO, symlinks into /proc and to devices: the real files analysed (exit 1)" "[ $rc -eq 1 ] && grep -q 'escape.cc:.*raw-op-escape' $t/out"
check "... each special file skipped with a warning naming it" "grep -q 'warning: .*fifo.cc: not a regular file (a FIFO), not read' $t/err && grep -q 'warning: .*proc.cc: a file of a kernel pseudo file system' $t/err && grep -q 'warning: .*CMakeLists.txt: a file of a kernel pseudo' $t/err && grep -q 'warning: .*zero.cc: not a regular file (a character device)' $t/err && grep -q 'warning: .*libzero.so: not a regular' $t/err && grep -q 'warning: .*BUILD: not a regular' $t/err"
run $R/proc.cc
check "a symlink to /proc/self/status named: one error line, exit 2" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ]"
run $R/CMakeLists.txt
check "a build file that links to /proc/self/environ, named: one error line, exit 2" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ]"
python3 -c "print('// ' + 'x' * 20000)" >$R/big.cc
run --max-file-size 16K $R/big.cc $R/escape.cc
check "a source over --max-file-size: one error line naming the limit, the rest analysed" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'big.cc: cannot read: larger than the size limit of 16384 bytes' $t/err && grep -q 'escape.cc:.*raw-op-escape' $t/out"
printf '[lint]\nmax-file-size = 16K\n' >$R/limit.ini
runc --config $R/limit.ini $R/big.cc
check "[lint] max-file-size applies" "[ $rc -eq 2 ] && grep -q 'size limit of 16384 bytes' $t/err"
runc --config $R/limit.ini --max-file-size 1M $R/big.cc
check "--max-file-size overrides the config's" "[ $rc -eq 0 ]"
python3 -c "print('[lint]\n' + '# ' + 'x' * 3000)" >$R/bigcfg.ini
runc --config $R/bigcfg.ini --max-file-size 1K $R/escape.cc
check "a config file over the limit: exit 2" "[ $rc -eq 2 ] && grep -q 'cannot read config file .*size limit' $t/err"
printf '[lint]\nmax-file-size = lots\n' >$R/badsize.ini
runc --config $R/badsize.ini $R/escape.cc
check "a malformed max-file-size: exit 2 with the line" "[ $rc -eq 2 ] && grep -q 'badsize.ini:2: max-file-size: expected a size' $t/err"
run --max-file-size 12Q $R/escape.cc
check "a malformed --max-file-size: exit 2" "[ $rc -eq 2 ] && grep -q -- '--max-file-size: expected a size' $t/err"
# Headers libclang opens itself: a FIFO never finishes, /dev/zero never ends.
printf '#include "fifo.cc"\nint x;\n' >$R/incfifo.cc
run --timeout 3 $R/incfifo.cc $R/escape.cc
check "#include of a FIFO: the file times out (one error line), the others are reported" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'incfifo.cc: timed out after 3 s' $t/err && grep -q 'escape.cc:.*raw-op-escape' $t/out"
if [ $asan -eq 0 ]; then
  # Without ASan the worker's address space is limited; under ASan it is not, and this would
  # only end at the timeout after eating memory, so it runs here only.
  printf '#include "/dev/zero"\nint x;\n' >$R/inczero.cc
  run --worker-memory 2G $R/inczero.cc $R/escape.cc
  check "#include \"/dev/zero\": one error line for that file (memory limit), the others reported" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'inczero.cc' $t/err && grep -q 'escape.cc:.*raw-op-escape' $t/out"
fi
cat >$R/compile_commands.json <<EOF
[{"directory": "$R", "file": "escape.cc", "arguments": ["c++", "-include", "fifo.cc", "-include", "/dev/zero", "-c", "escape.cc"]}]
EOF
run -p $R $R/escape.cc
check "-include of a FIFO or a device from a database: dropped with a note, no hang" "[ $rc -eq 1 ] && grep -q -- '-include fifo.cc: not a regular file (a FIFO), not read; dropped' $t/err && grep -q -- '-include /dev/zero: not a regular file (a character device), not read; dropped' $t/err"

# ==== 3. A source that overflows the parser's stack costs one error line, not the run ========
H=$t/crash
mkdir -p $H
cp $fx/rawop/py_bindings.h $fx/rawop/escape.cc $H/
# Under AddressSanitizer every frame is several times larger, so the sizes shrink by 5 there:
# the 1G default stack must still hold them; the 256K runs below must still overflow.
python3 - $H "${TETHER_SANITIZER:-}" <<'PY'
import sys
d = sys.argv[1]
k = 5 if sys.argv[2] else 1
open(d + "/expr.cc", "w").write("int f(int a) { return " + " + ".join(["a"] * (100000 // k)) + "; }\n")
s = "int g(int x) {\n  if (x == 0) return 0;\n"
s += "".join("  else if (x == %d) return %d;\n" % (i, i) for i in range(1, 20000 // k))
open(d + "/elif.cc", "w").write(s + "  return -1;\n}\n")
open(d + "/tmpl.cc", "w").write("template <class T> struct W {};\n" + "W<" * (3000 // k) + "int" + ">" * (3000 // k) + " w;\n")
PY
run -j 2 $H
check "100,000-term expression, 20,000-branch else-if chain, 3,000 nested template arguments: analysed (exit 1 for escape.cc's findings)" "[ $rc -eq 1 ] && grep -q '5 file(s) analysed, 17 finding(s), 0 suppressed, 0 error(s)' $t/out"
cp $t/out $t/ok.out
for f in expr elif tmpl; do
  run --worker-stack 256K $H/$f.cc $H/escape.cc
  check "$f.cc with a stack too small: one error line naming it, the other file reported" "[ $rc -eq 2 ] && [ \$(errors) -eq 1 ] && grep -q 'error: .*$f.cc: the analysis \(crashed\|failed\)' $t/err && grep -q '1 file(s) analysed, 17 finding(s)' $t/out"
done
run -j 1 --worker-stack 256K $H
cp $t/out $t/j1.out
cp $t/err $t/j1.err
run -j 2 --worker-stack 256K $H
check "-j 2 with crashing files: the same report and messages as -j 1" "[ $rc -eq 2 ] && cmp -s $t/out $t/j1.out && cmp -s $t/err $t/j1.err"
run --in-process $H/escape.cc
check "--in-process gives the same findings" "[ $rc -eq 1 ] && grep -q '1 file(s) analysed, 17 finding(s)' $t/out"
run --timeout 0 $H/escape.cc
check "--timeout 0: no limit" "[ $rc -eq 1 ]"
run --timeout -1 $H/escape.cc
check "--timeout -1: exit 2" "[ $rc -eq 2 ] && grep -q -- '--timeout: expected seconds' $t/err"
run --worker-memory 1M $H/escape.cc
check "--worker-memory below 64M: exit 2" "[ $rc -eq 2 ] && grep -q -- '--worker-memory: expected a size of at least 64M' $t/err"

# ==== 4. No forged output =======================================================================
F=$t/forge
mkdir -p "$F"
cp $fx/rawop/py_bindings.h "$F/"
evil=$(printf 'evil\netc-passwd:1:1: warning: forged [raw-op-unguarded]\n\033[2Jx\r\177.cc')
printf '#include "py_bindings.h"\nvoid f(PyBlock &b) { mlirBlockDump(b.get()); }\nint broken = ;\n' >"$F/$evil"
run "$F"
check "a file name with newlines, ESC, CR and DEL: one finding, exit 1" "[ $rc -eq 1 ] && grep -q ' 1 finding(s)' $t/out"
check "text: no line of the report starts where the name has a newline" "! grep -q '^etc-passwd' $t/out && ! grep -q '^etc-passwd' $t/err"
check "text: the name is escaped (\\n, \\x1b, \\r, \\x7f)" "grep -qF 'evil\\netc-passwd:1:1: warning: forged [raw-op-unguarded]\\n\\x1b[2Jx\\r\\x7f.cc:2:' $t/out"
check "text: the report has exactly 3 lines (finding, hint, summary)" "[ \$(wc -l <$t/out) -eq 3 ]"
check "stderr: the compile-error note names the file escaped, on one line" "[ \$(grep -c 'compile error' $t/err) -eq 1 ] && grep -qF 'evil\\netc-passwd' $t/err && ! grep -q \$'\\033' $t/err"
run --format json "$F"
check "json: the name round-trips exactly" "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0][\"file\"].endswith(sys.argv[2]), d' $t/out \"$evil\""
run --format sarif "$F"
check "sarif: the name is percent-encoded in the URI" "python3 -c 'import json,sys; u=json.load(open(sys.argv[1]))[\"runs\"][0][\"results\"][0][\"locations\"][0][\"physicalLocation\"][\"artifactLocation\"][\"uri\"]; assert \"%0A\" in u and \"%1B\" in u and \"\\n\" not in u, u' $t/out"

# ==== 5. Cost linear in the findings of one file ==============================================
L=$t/linear
mkdir -p $L
cp $fx/rawop/py_bindings.h $L/
python3 - $L <<'PY'
import sys
d = sys.argv[1]
body = "".join("  mlirBlockDump(b.get());\n" for _ in range(20000))
open(d + "/many.cc", "w").write('#include "py_bindings.h"\nvoid f(PyBlock &b) {\n' + body + "}\n")
body = "".join("  mlirBlockDump(b.get()); // NOLINT(tether-raw-op-unguarded)\n" for _ in range(20000))
open(d + "/sup.cc", "w").write('#include "py_bindings.h"\nvoid f(PyBlock &b) {\n' + body + "}\n")
PY
run --format json $L/many.cc
check "20,000 findings in one file: every one reported" "[ $rc -eq 1 ] && [ \$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' $t/out) -eq 20000 ]"
run $L/sup.cc
check "20,000 NOLINT suppressions in one file: every one counted" "[ $rc -eq 0 ] && grep -q ' 0 finding(s), 20000 suppressed' $t/out"

[ $fail -eq 0 ] && echo "hostile_test: passed" || echo "hostile_test: FAILED"
exit $fail
