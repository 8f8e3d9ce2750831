#!/usr/bin/env bash
# libtether_capi.so exports the MLIR C API and tether's API, and nothing else: no C++ symbol of
# the C-API glue, no internal tether__ symbol (but tether__keep_alive, which a public macro calls).
set -u
lib=$1
fail=0
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ {print $3}')
n=$(echo "$syms" | wc -l)
echo "$n exported symbols"
bad=$(echo "$syms" | grep -v -E '^(mlir[A-Z][A-Za-z0-9_]*|tether_[a-z][a-z0-9_]*|tether__keep_alive)$' || true)
if [ -n "$bad" ]; then
  echo "FAIL: unexpected exports:"; echo "$bad" | head -20; fail=1
fi
for want in mlirContextCreate mlirOperationCreate mlirMemRefTypeGet mlirRegisterAllDialects \
            mlirPassManagerRunOnOp mlirTransformApplyNamedSequence tether_arena_create tether_op_get \
            tether_pin tether_collect tether_op_apply_transform tether_op_merge_symbols; do
  echo "$syms" | grep -qx "$want" || { echo "FAIL: $want is not exported"; fail=1; }
done
for hidden in tether__alloc tether__intern tether__table_find tether__drain_pending; do
  echo "$syms" | grep -qx "$hidden" && { echo "FAIL: internal $hidden is exported"; fail=1; }
done
# It resolves MLIR's C++ side against the system's one libMLIR.so.
readelf -d "$lib" | grep -q 'NEEDED.*libMLIR.so' || { echo "FAIL: not linked against libMLIR.so"; fail=1; }
[ $fail -eq 0 ] && echo "capi_exports_test: 1 passed, 0 failed"
exit $fail
