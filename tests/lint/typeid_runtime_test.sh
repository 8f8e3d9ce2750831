#!/usr/bin/env bash
# The runtime proof behind typeid-elf: two shared objects loaded into one process with
# dlopen(RTLD_NOW | RTLD_LOCAL), as Python loads extensions. When each carries its own copy of a
# TypeID, the TypeIDs differ and typeid-elf flags the pair; when both use the one definition in a
# shared library they link against, the TypeIDs are equal and typeid-elf passes the pair.
#
# usage: typeid_runtime_test.sh LINT TYPEID_DLOPEN DIR_OF_THE_OBJECTS
set -u
lint=$1
dl=$2
d=$3
t=$TEST_TMPDIR
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }
lint_rc() { "$lint" --config /dev/null "$@" >"$t/out" 2>"$t/err"; echo $?; }

# Each pair: expectation at run time, symbol, objects, then what typeid-elf must say.
pair() {
  local title=$1 want=$2 sym=$3 a=$4 b=$5 want_rc=$6
  "$dl" "$want" "$sym" "$d/$a" "$d/$b" >"$t/dl" 2>&1
  local rc=$?
  cat "$t/dl"
  check "$title: the TypeIDs are $( [ "$want" = same ] && echo equal || echo different ) at run time" "[ $rc -eq 0 ]"
  local lrc
  lrc=$(lint_rc "$d/$a" "$d/$b")
  check "$title: typeid-elf exits $want_rc" "[ $lrc -eq $want_rc ]"
  [ "$lrc" -eq "$want_rc" ] || cat "$t/out" "$t/err"
}

pair "--exclude-libs,ALL pair (each links the archive)" differ tether_test_foo_typeid \
  libelf_excl_a.so libelf_excl_b.so 1
check "  ... and the finding names the TypeID, demangled" \
  "grep -q \"libelf_excl_b.so:0:0: warning: TypeID storage 'mlir::detail::TypeIDResolver<tether_test::Foo, void>::id' is also defined in\" $t/out"
pair "static copies, exported (no flag)" differ tether_test_foo_typeid \
  libelf_copy_a.so libelf_copy_b.so 1
pair "right: both link the one exported definition in libelf_good_core.so" same \
  tether_test_foo_typeid libelf_good_a.so libelf_good_b.so 0
rc=$(lint_rc "$d/libelf_good_core.so" "$d/libelf_good_a.so" "$d/libelf_good_b.so")
check "right: typeid-elf passes the pair with the core library too" "[ $rc -eq 0 ]"
pair "inline TypeID, STB_GNU_UNIQUE (glibc unifies it)" same tether_test_bar_typeid \
  libelf_inline_unique_a.so libelf_inline_unique_b.so 0
pair "inline TypeID, -fno-gnu-unique (WEAK copies)" differ tether_test_bar_typeid \
  libelf_inline_weak_a.so libelf_inline_weak_b.so 1

if [ $fail -ne 0 ]; then
  echo "typeid_runtime_test: FAILED"
  exit 1
fi
echo "typeid_runtime_test: passed"
