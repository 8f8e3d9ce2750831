#!/usr/bin/env bash
# raw-op rules beyond the fixture markers: the degraded token mode's note (it names the missing
# header: MLIR 22's IRCore.h, or nanobind's own when MLIR 22's binding headers are installed), the nanobind-era profile and the `parent` key in --list-profiles, and config errors for
# `parent`.
# usage: rawop_test.sh TETHER_LINT
lint=$1
fx=tests/lint/fixtures/rawop
t=${TEST_TMPDIR:-$(mktemp -d)}
fail=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
run() {
  "$lint" "$@" >"$t/out" 2>"$t/err"
  rc=$?
}

run --config /dev/null "$fx/nanobind_missing_header.cc"
check "degraded: exit 1 (findings)" "[ $rc -eq 1 ]"
check "degraded: the note names the missing header and counts the raw accesses" \
  "grep -Eq \"nanobind_missing_header.cc: raw-op: degraded mode: the file does not compile \\(missing header '(mlir/Bindings/Python/IRCore.h|nanobind/nanobind.h)'\\); [0-9]* wrapper\\(s\\) of a type the compiler does not know, 5 raw access\\(es\\) recognised from tokens only\" $t/err"
check "degraded: findings say they come from tokens" \
  "[ \$(grep -c 'recognised from tokens: the wrapper' $t/out) -eq 5 ]"

run --config /dev/null "$fx/broken.cc"
check "a file with errors whose wrappers resolve gets no raw-op degraded note" \
  "[ $rc -eq 1 ] && ! grep -q 'raw-op: degraded mode' $t/err"

run --config /dev/null --disable raw-op-unguarded "$fx/nanobind_missing_header.cc"
check "degraded: --disable raw-op-unguarded turns it off" "[ $rc -eq 0 ] && ! grep -q 'raw-op: degraded' $t/err"

run --config /dev/null "$fx/misses.cc" "$fx/guard_shapes.cc"
check "a raw access inside assert() is reported where its expression starts" \
  "grep -q 'misses.cc:11:18: warning' $t/out && grep -q 'guard_shapes.cc:236:32: warning' $t/out"

run --list-profiles --config /dev/null
check "--list-profiles: the nanobind-era profile" "grep -q '^\[profile mlir-python-nanobind\]' $t/out"
check "--list-profiles: parent entries" "grep -q '^parent = PyBlock::getParentOperation, PyBlock::parentOperation' $t/out"
check "--list-profiles: isValid is a predicate" "grep -q '^valid-predicate = PyOperation::valid, PyOperation::isValid' $t/out"
check "--list-profiles: the collections' raw fields" "grep -q 'PyBlockList::region' $t/out"

printf '[profile mine]\nwrapper = MyOp\nparent = Other::owner\n' >"$t/bad.ini"
run --config "$t/bad.ini" "$fx/clean.cc"
check "parent naming a class that is not a wrapper: config error" \
  "[ $rc -eq 2 ] && grep -q \"parent 'Other::owner' names class 'Other', which is not a wrapper of the profile\" $t/err"

# A user profile with a parent: a guard on the owner guards the wrapper.
mkdir -p "$t/own"
cat >"$t/own/own.cc" <<'CC'
struct Raw { void *p; };
void use(Raw r);
struct Owner { void ensureAlive(); };
struct Child {
  Raw raw();
  Owner &owner();
};
void ok(Child &c) {
  c.owner().ensureAlive();
  use(c.raw());
}
void bad(Child &c) { use(c.raw()); }
CC
printf '[lint]\nprofiles = mine\n[profile mine]\nwrapper = Child, Owner\nraw-accessor = Child::raw\nguard = Owner::ensureAlive\nparent = Child::owner\n' >"$t/own/.tether-lint"
run "$t/own/own.cc"
check "a user profile's parent: the owner's guard guards the child" \
  "[ $rc -eq 1 ] && [ \$(grep -c 'raw-op-unguarded' $t/out) -eq 1 ] && grep -q 'own.cc:12:' $t/out"

exit $fail
