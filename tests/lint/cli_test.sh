#!/usr/bin/env bash
# Command line and configuration errors: each gives a clear message and the documented exit code.
set -u
lint=$1
fx=tests/lint/fixtures/rawop
t=$TEST_TMPDIR
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }
run() { "$lint" "$@" >"$t/out" 2>"$t/err"; rc=$?; }

run --help;                            check "--help exits 0 and shows usage" "[ $rc -eq 0 ] && grep -q '^usage: tether-lint' $t/out"
run --list-rules
check "--list-rules exits 0" "[ $rc -eq 0 ]"
check "--list-rules lists raw-op-unguarded" "grep -q '^raw-op-unguarded *enabled' $t/out"
check "--list-rules lists raw-op-escape" "grep -q '^raw-op-escape *enabled' $t/out"
check "--list-rules lists keep-alive-ignored" "grep -q '^keep-alive-ignored *enabled' $t/out"
check "--list-rules lists reference-internal-by-value" "grep -q '^reference-internal-by-value *enabled' $t/out"
run --list-rules --disable raw-op-escape
check "--disable shows in --list-rules" "grep -q '^raw-op-escape *disabled' $t/out"
run --config /dev/null --list-profiles
check "--list-profiles shows both built-in profiles" "[ $rc -eq 0 ] && grep -q '^\[profile mlir-python\]' $t/out && grep -q '^\[profile tether\]' $t/out"
check "mlir-python: PyOperation::get is guarded" "grep -q '^guarded-accessor = PyOperation::get, PyOperation::operator MlirOperation' $t/out"
check "mlir-python: PyBlock::get is raw" "grep -q '^raw-accessor = PyBlock::get' $t/out"
check "tether: tether_op_get is a status accessor" "grep -q '^status-accessor = tether_op_get(0, 1)' $t/out"

run --no-such-option $fx;              check "unknown option: exit 2" "[ $rc -eq 2 ]"
check "unknown option: named" "grep -q \"unknown option '--no-such-option'\" $t/err"
run;                                   check "no PATH: exit 2 with message" "[ $rc -eq 2 ] && grep -q 'no PATH given' $t/err"
run --format xml $fx;                  check "bad --format: exit 2" "[ $rc -eq 2 ] && grep -q \"unknown format 'xml'\" $t/err"
run -j 0 $fx;                          check "-j 0: exit 2" "[ $rc -eq 2 ] && grep -q 'expected a number from 1 to 256' $t/err"
run -j;                                check "-j without value: exit 2" "[ $rc -eq 2 ] && grep -q \"option '-j' needs a value\" $t/err"
run --enable no-such-rule $fx;         check "--enable unknown rule: exit 2" "[ $rc -eq 2 ] && grep -q \"unknown rule 'no-such-rule'\" $t/err"
run -p $t/nowhere $fx;                 check "-p missing dir: exit 2" "[ $rc -eq 2 ] && grep -q 'not a directory' $t/err"
run -p $t --compile-commands x.json $fx; check "-p with --compile-commands: exit 2" "[ $rc -eq 2 ]"
run --config $t/missing.ini $fx;       check "--config missing: exit 2" "[ $rc -eq 2 ] && grep -q 'cannot read config file' $t/err"

printf '[lint]\nenable = raw-op-unguarded\nbogus line\n' >$t/bad1
run --config $t/bad1 $fx;              check "config syntax error: exit 2 with file:line" "[ $rc -eq 2 ] && grep -q \"bad config: $t/bad1:3: expected 'key = value'\" $t/err"
printf '[lint]\ndisable = raw-op-nope\n' >$t/bad2
run --config $t/bad2 $fx;              check "config unknown rule: exit 2" "[ $rc -eq 2 ] && grep -q \"bad2:2: unknown rule 'raw-op-nope'\" $t/err"
printf '[profile p]\nwrapper = A\nguard = B::check\n' >$t/bad3
run --config $t/bad3 $fx;              check "config member of a non-wrapper: exit 2" "[ $rc -eq 2 ] && grep -q \"names class 'B', which is not a wrapper\" $t/err"
printf '[lint]\nprofiles = mlir-python, nope\n' >$t/bad4
run --config $t/bad4 $fx;              check "config unknown profile: exit 2" "[ $rc -eq 2 ] && grep -q \"unknown profile 'nope'\" $t/err"
printf '[weird]\n' >$t/bad5
run --config $t/bad5 $fx;              check "config unknown section: exit 2" "[ $rc -eq 2 ] && grep -q 'unknown section \[weird\]' $t/err"
printf '[profile p]\nstatus-accessor = get(0, 0)\n' >$t/bad6
run --config $t/bad6 $fx;              check "config bad status-accessor: exit 2" "[ $rc -eq 2 ] && grep -q 'must be distinct' $t/err"

# Rules on and off.
run --config /dev/null --disable raw-op-unguarded $fx/unguarded.cc
check "--disable raw-op-unguarded silences the file: exit 0" "[ $rc -eq 0 ] && grep -q ' 0 finding(s)' $t/out"
printf '[lint]\ndisable = all\n' >$t/off
run --config $t/off $fx/unguarded.cc;  check "config disable = all: exit 0" "[ $rc -eq 0 ]"
run --config $t/off --enable raw-op-unguarded $fx/unguarded.cc
check "--enable overrides the config's disable: exit 1" "[ $rc -eq 1 ]"
printf '[lint]\nprofiles = tether\n' >$t/tonly
run --config $t/tonly $fx/unguarded.cc; check "profiles = tether turns mlir-python off: exit 0" "[ $rc -eq 0 ]"

# Suppressions are counted.
run --config /dev/null $fx/clean.cc
check "NOLINT suppressions counted in the summary" "[ $rc -eq 0 ] && grep -q ' 2 suppressed' $t/out"

[ $fail -eq 0 ] && echo "cli_test: passed" || echo "cli_test: FAILED"
exit $fail
