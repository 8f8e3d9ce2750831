#!/usr/bin/env bash
# tether-lint starts, reports the libclang it loaded, parses a file, and uses its exit codes.
set -u
lint=$1
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

out=$("$lint" --version); rc=$?
check "--version exits 0" "[ $rc -eq 0 ]"
check "--version names the tool" "[[ \"\$out\" == tether-lint\ * ]]"
check "--version names libclang 19" "[[ \"\$out\" == *'libclang: '*'clang version 19.'* ]]"

out=$("$lint" tests/lint/fixtures/smoke/ok.cc); rc=$?
check "a clean file exits 0" "[ $rc -eq 0 ]"
check "a clean file is analysed" "[[ \"\$out\" == *'1 file(s) analysed'* ]]"

"$lint" "$TEST_TMPDIR/does-not-exist.cc" 2>"$TEST_TMPDIR/err"; rc=$?
check "a missing input exits 2" "[ $rc -eq 2 ]"
check "a missing input is named" "grep -q 'does-not-exist.cc' '$TEST_TMPDIR/err'"

"$lint" --no-such-option 2>/dev/null; rc=$?
check "an unknown option exits 2" "[ $rc -eq 2 ]"

[ $fail -eq 0 ] && echo "version_test: passed" || echo "version_test: FAILED"
exit $fail
