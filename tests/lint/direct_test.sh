#!/usr/bin/env bash
# The direct-binding rules beyond the fixture markers: the degraded mode's note (what was read from
# tokens, what could not be judged), direct-raw-return off by default (--list-rules, SARIF, --enable
# and the config's `enable`), the fix named in every finding, NOLINT on token findings, no finding on
# upstream-style bindings, and inputs that are garbage.
# usage: direct_test.sh TETHER_LINT
lint=$1
fx=tests/lint/fixtures/direct
t=${TEST_TMPDIR:-$(mktemp -d)}
fail=0
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
run() {
  "$lint" --no-cache "$@" >"$t/out" 2>"$t/err"
  rc=$?
}
only_direct="--disable all --enable direct-ir-class,direct-context-owned,direct-frees-ir"

run --config /dev/null "$fx/nanobind_missing.cc"
check "degraded: exit 1 (findings)" "[ $rc -eq 1 ]"
check "degraded: one note naming the missing header, with what came from tokens" \
  "[ \$(grep -c 'direct: degraded mode' $t/err) -eq 1 ] && grep -q \"nanobind_missing.cc: direct: degraded mode: the file does not compile (missing header 'nanobind/nanobind.h'); from tokens: 15 registration(s), 25 bound callable(s) (1 class(es) known by their base)\" $t/err"
check "degraded: the note names the class the parse does not declare" \
  "grep -q 'not judged: 1 registration(s) of classes the parse does not declare (myproject::Options)' $t/err"
check "degraded: direct-raw-return off: the note does not count what it did not check" \
  "! grep -q 'not checked by direct-raw-return' $t/err"
run --config /dev/null --enable direct-raw-return "$fx/nanobind_missing.cc"
check "degraded with direct-raw-return: the note counts the lambdas it could not judge" \
  "grep -q 'not checked by direct-raw-return: 2 bound lambda(s) whose return type is neither resolved nor written' $t/err"

run --config /dev/null "$fx/not_mlir.cc"
check "a binding that is not MLIR's (a game's nb::class_<Block>): no finding, no direct note" \
  "[ $rc -eq 0 ] && ! grep -q 'direct: degraded' $t/err"

run --config /dev/null "$fx/returns.cc"
check "direct-raw-return is off by default" "! grep -q 'direct-raw-return' $t/out && grep -q 'direct-ir-class' $t/out"
run --config /dev/null --list-rules
check "--list-rules: direct-raw-return disabled, the other three enabled" \
  "grep -Eq '^direct-raw-return +disabled ' $t/out && grep -Eq '^direct-ir-class +enabled ' $t/out && grep -Eq '^direct-frees-ir +enabled ' $t/out && grep -Eq '^direct-context-owned +enabled ' $t/out"
run --config /dev/null --enable direct-raw-return --list-rules
check "--enable direct-raw-return turns it on" "grep -Eq '^direct-raw-return +enabled ' $t/out"
mkdir -p "$t/cfg"
cp "$fx/returns.cc" "$t/cfg/" && cp -r "$fx/stub" "$t/cfg/"
printf '[lint]\nenable = direct-raw-return\n' >"$t/cfg/.tether-lint"
run "$t/cfg/returns.cc"
check "... so does the config's enable" "grep -q 'direct-raw-return' $t/out"
printf '[lint]\nenable = all\n' >"$t/cfg/.tether-lint"
run "$t/cfg/returns.cc"
check "... and enable = all" "grep -q 'direct-raw-return' $t/out"
run --config /dev/null --format sarif "$fx/returns.cc"
check "SARIF: direct-raw-return's defaultConfiguration says enabled: false" \
  "python3 -c \"import json,sys; r={x['id']:x for x in json.load(open('$t/out'))['runs'][0]['tool']['driver']['rules']}; sys.exit(0 if r['direct-raw-return']['defaultConfiguration'].get('enabled') is False and 'enabled' not in r['direct-ir-class']['defaultConfiguration'] else 1)\""

run --config /dev/null --enable direct-raw-return "$fx/registrations.cc" "$fx/frees.cc" "$fx/returns.cc"
check "every finding names the fix (the arena's C++ holder)" \
  "[ \$(grep -c 'warning:' $t/out) -gt 50 ] && [ \$(grep 'warning:' $t/out | grep -vc 'arena/tether.hpp') -eq 0 ]"
check "... and so does every hint" "[ \$(grep 'hint:' $t/out | grep -c 'arena/tether.hpp') -eq \$(grep -c 'hint:' $t/out) ]"

# NOLINT on a finding read from tokens (the file does not compile).
cat >"$t/nolint.cc" <<'CC'
#include <nanobind/nanobind.h>
#include "mlir/IR/Block.h"
namespace nb = nanobind;
void f(nb::module_ &m) {
  nb::class_<mlir::Block>(m, "Block") // NOLINT(tether-direct-ir-class)
      .def("erase", [](mlir::Block &b) { b.erase(); }); // NOLINT(tether-*)
  // NOLINTNEXTLINE(tether-direct-ir-class)
  nb::class_<mlir::Region>(m, "Region");
  nb::class_<mlir::Operation>(m, "Operation");
}
CC
run --config /dev/null "$t/nolint.cc"
check "NOLINT and NOLINTNEXTLINE on token findings: 3 suppressed, 1 reported" \
  "grep -q '1 finding(s), 3 suppressed' $t/out && grep -q 'nolint.cc:9:3:.*direct-ir-class' $t/out"

run --config /dev/null $only_direct tests/lint/fixtures/rawop tests/lint/fixtures/lifetime
check "upstream-style bindings (the raw-op and lifetime fixtures): no direct finding" \
  "[ $rc -eq 0 ] && grep -q ' 0 finding(s)' $t/out"

# Garbage: token soup full of the family's words, unbalanced brackets, deep nesting.
python3 - "$t" <<'PY'
import random, sys
d = sys.argv[1]
random.seed(33)
words = ['py', 'nb', '::', 'class_', '<', '>', '>>', '(', ')', '[', ']', '{', '}', '.', 'def',
         '"x"', ',', ';', 'Operation', '&', '*', '->', 'erase', 'run', 'Value', 'OpState', '#',
         'define', 'return', 'std', 'function', 'void', 'self', 'template', 'typename', ':']
for n in range(4):
    with open(f"{d}/soup{n}.cc", "w") as f:
        f.write('#include <nanobind/nanobind.h>\nnamespace nb = nanobind;\n')
        f.write(' '.join(random.choice(words) for _ in range(20000)))
with open(f"{d}/deep.cc", "w") as f:
    f.write('#include <nanobind/nanobind.h>\nvoid f(){ nb::class_<' + 'A<' * 3000 + 'B' + '>' * 3000
            + '>(m,"x").def("y", ' + '[' * 2000 + ']' * 2000 + ');}\n')
with open(f"{d}/unbalanced.cc", "w") as f:
    f.write('#include <nanobind/nanobind.h>\nvoid f(){ nb::class_<mlir::Operation(m, "x").def('
            '"y", [](mlir::Block &b) { b.erase(); ; nb::class_<mlir::Value>>(m,"v").def( \n')
PY
run --config /dev/null --enable direct-raw-return "$t/soup0.cc" "$t/soup1.cc" "$t/soup2.cc" "$t/soup3.cc" "$t/deep.cc" "$t/unbalanced.cc"
check "garbage, deep nesting, unbalanced brackets: analysed, no error (exit 0 or 1)" \
  "[ $rc -le 1 ] && grep -q '6 file(s) analysed' $t/out && grep -q ' 0 error(s)' $t/out"

[ $fail -eq 0 ] && echo "direct_test: passed" || echo "direct_test: FAILED"
exit $fail
