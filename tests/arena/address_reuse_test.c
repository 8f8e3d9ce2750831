/* MLIR reuses the addresses of freed operations while stale handles are held: the intern table
 * never hands out a stale handle for new IR at a reused address, stale handles stay invalid, and
 * new handles name the IR they stand for (rule 5 of docs/ARCHITECTURE.md). */
#include "check.h"

static const char *kModule = "func.func @f(%x: i32) -> i32 {\n"
                             "  %0 = arith.addi %x, %x : i32\n"
                             "  return %0 : i32\n"
                             "}\n";

/* Erase operations (freeing their memory now), keep the stale handles, parse again in the same
 * context so MLIR reuses the addresses. Stale handles must stay invalid and never be
 * returned for the new IR; new handles must name the IR they stand for. */
static void address_reuse_never_meets_stale_handles(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  enum { ROUNDS = 500 };
  tether_op **stale = calloc(ROUNDS, sizeof *stale);
  const void **stale_addr = calloc(ROUNDS, sizeof *stale_addr);
  tether_op *keep = parse(a, "func.func private @keep()");
  int reused = 0;
  for (int r = 0; r < ROUNDS; r++) {
    tether_op *m = parse(a, kModule);
    tether_op *func = body_op(m, 0);
    /* A new handle is never a stale one, and stands for the IR it came from. */
    for (int k = 0; k < r; k++) CHECK(func != stale[k]);
    MlirOperation raw;
    OK(tether_op_get(func, &raw));
    for (int k = 0; k < r; k++)
      if (raw.ptr == stale_addr[k]) {
        reused++;
        break;
      }
    CHECK(mlirStringRefEqual(mlirIdentifierStr(mlirOperationGetName(raw)),
                             mlirStringRefCreateFromCString("func.func")));
    /* Identity: navigating again gives the same handle. */
    CHECK(body_op(m, 0) == func);
    tether_op *parent;
    OK(tether_op_parent(func, &parent));
    CHECK(parent == m);
    /* Erase: the handle stays, invalid, and the memory goes back to the allocator. */
    stale[r] = func; /* malloc memory: pin the handle so the collector knows it is held */
    CHECK(tether_pin(func) >= 0);
    stale_addr[r] = raw.ptr;
    OK(tether_op_erase(func));
    CHECK(tether_handle_reason(func) == TETHER_REASON_ERASED);
    if (r % 50 == 0) tether_collect(a);
  }
  for (int k = 0; k < ROUNDS; k++) {
    MlirOperation raw;
    CHECK_RC(tether_op_get(stale[k], &raw), TETHER_EINVALID);
    CHECK(tether_handle_reason(stale[k]) == TETHER_REASON_ERASED);
    CHECK(!prints_containing(stale[k], "func"));
  }
  printf("  in %d of %d rounds the new func.func got the address of an erased one\n", reused,
         ROUNDS);
#ifndef __SANITIZE_ADDRESS__
  /* The scenario really happened (ASan's quarantine delays reuse on purpose, so not there). */
  CHECK(reused > 0);
#endif
  CHECK(prints_containing(keep, "@keep"));
  free(stale);
  free(stale_addr);
}

/* Modules dropped (not erased) and parsed again: the intern table never hands out a handle of a
 * destroyed module for new IR at the same address. */
static void dropped_modules_never_alias_new_ones(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  for (int r = 0; r < 300; r++) {
    tether_op *m = parse(a, kModule);
    tether_op *func = body_op(m, 0);
    tether_op *add = body_op(func, 0);
    MlirOperation raw;
    OK(tether_op_get(add, &raw));
    CHECK(mlirStringRefEqual(mlirIdentifierStr(mlirOperationGetName(raw)),
                             mlirStringRefCreateFromCString("arith.addi")));
    tether_value *res, *operand;
    OK(tether_op_result(add, 0, &res));
    tether_op *ret = body_op(func, 1);
    OK(tether_op_operand(ret, 0, &operand));
    CHECK(res == operand);
    tether_op *owner;
    OK(tether_value_owner_op(res, &owner));
    CHECK(owner == add);
    if (r % 20 == 0) tether_collect(a);
  }
  tether_collect(a);
  CHECK(stats(a).roots <= 4);
}

int main(void) {
  RUN(address_reuse_never_meets_stale_handles);
  RUN(dropped_modules_never_alias_new_ones);
  DONE();
}
