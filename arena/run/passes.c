/* passes.c: MLIR's verifier, printer and pass manager on IR of the arena.
 *
 * Invariant: MLIR gets a tree only when no guard (guards/) says it would crash on it, and
 * runs with the arena marked running (tether__run_begin: handles refused meanwhile) and its
 * diagnostics captured. What passes change behind tether's back is revalidated before the call
 * returns: handles of removed objects become invalid, the others keep their identity. A tree
 * remembers the arena's epoch when it last verified as a whole (verified_epoch), and is not
 * verified again until something of the arena changes.
 */
#include "run.h"
#include "../guards/guards.h"

int tether_op_verify(tether_op *op) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  /* Nothing of the arena changed since the whole tree verified: so does anything inside it. */
  if (t->verified_epoch == t->arena->epoch) return TETHER_OK;
  tether__diag_begin(t->arena);
  tether__run_begin(t->arena);
  bool ok = !tether__unsafe_for_mlir(t, OP(h), false) && mlirOperationVerify(OP(h));
  tether__run_end(t->arena);
  tether__diag_end(t->arena);
  if (ok && tether__is_root_op(h, t)) {
    t->verified_epoch = t->arena->epoch;
    t->suspect = 0; /* the whole tree verifies: no verifier in it will crash */
  }
  return ok ? TETHER_OK : TETHER_EVERIFY;
}

int tether_op_print(tether_op *op, MlirOpPrintingFlags flags, MlirStringCallback cb, void *user) {
  tether__handle *h;
  tether__tree *t;
  if (!cb) return TETHER_EARG;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  bool was_suspect = t->suspect;
  MlirOperation own_user;
  intptr_t own_index;
  if (tether__tree_uses_other_trees(t) || tether__root_uses_own_results(t, &own_user, &own_index) ||
      tether__verifier_crashes(t, (MlirOperation){NULL})) {
    /* MLIR verifies before printing and its verifier crashes on such IR: print it unverified, in
     * the generic form (as MLIR does for IR that fails to verify). */
    MlirOpPrintingFlags own = flags.ptr ? flags : mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsAssumeVerified(own);
    mlirOpPrintingFlagsPrintGenericOpForm(own);
    mlirOperationPrintWithFlags(OP(h), own, cb, user);
    if (!flags.ptr) mlirOpPrintingFlagsDestroy(own);
  } else {
    if (was_suspect && t->root_kind == TETHER_KIND_OP) {
      /* The child verified the tree without crashing: verify it here once, so that it stops
       * being suspect (later prints and verifications need no child). */
      /* Marked running: a diagnostic handler of the binding's language must not erase or edit
       * the IR the verifier, then the printer, are reading (found by tests/fuzz: a handler
       * erased the very operation being printed). */
      tether__diag_begin(t->arena);
      tether__run_begin(t->arena);
      bool ok = mlirOperationVerify((MlirOperation){t->root});
      tether__run_end(t->arena);
      tether__diag_end(t->arena);
      if (ok) {
        t->suspect = 0;
        t->verified_epoch = t->arena->epoch;
      } else if (flags.ptr) {
        /* It does not verify: the custom printers may read what is missing (arith.addi built
         * without operands), and the caller's flags may say "assume verified". Printed in the
         * generic form, as MLIR prints IR that fails its verification. */
        mlirOpPrintingFlagsPrintGenericOpForm(flags);
      }
    }
    if (flags.ptr)
      mlirOperationPrintWithFlags(OP(h), flags, cb, user);
    else
      mlirOperationPrint(OP(h), cb, user);
  }
  tether_keep_alive(h);
  return TETHER_OK;
}

int tether_op_run_passes(tether_op *op, MlirPassManager pm) {
  return tether_op_run_passes_ex(op, pm, 0);
}

int tether_op_run_passes_ex(tether_op *op, MlirPassManager pm, unsigned flags) {
  tether__handle *h;
  tether__tree *t;
  if (!pm.ptr) return TETHER_EARG;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  /* A pass may free any IR of the tree: refused while other trees use some of it, or while a
   * callback of an enclosing run forbids it (callbacks.c). */
  if (tether__op_used_from_other_trees(t, OP(h))) return TETHER_EBUSY;
  int src = tether__scope_rewrite(t, OP(h));
  if (src != TETHER_OK) return src;
  tether__diag_begin(t->arena);
  tether__run_begin(t->arena);
  tether__run run; /* passes written in the binding's language call back (callbacks.c) */
  tether__run_push(t->arena, &run, t, OP(h), 0);
  int rc = tether__unsafe_for_mlir(t, OP(h), flags & TETHER_PASSES_TRUSTED_INPUT);
  if (!rc && tether__inliner_unsafe(pm, OP(h))) rc = TETHER_EPASS;
  if (!rc && !(flags & TETHER_PASSES_TRUSTED_INPUT)) rc = tether__fold_cycle_error(OP(h));
  if (!rc && !(flags & TETHER_PASSES_TRUSTED_INPUT) && t->verified_epoch != t->arena->epoch &&
      !mlirOperationVerify(OP(h))) {
    /* MLIR's passes assume valid IR (canonicalize crashes on an arith.constant without a value):
     * the input is verified first, unless it is known to verify (nothing changed since). */
    rc = TETHER_EVERIFY;
  } else if (!rc) {
    tether__touch(t->arena);
    MlirLogicalResult r = mlirPassManagerRunOnOp(pm, OP(h));
    tether__tree_revalidate(tether__tree_resolve(t));
    rc = mlirLogicalResultIsSuccess(r) ? TETHER_OK : TETHER_EPASS;
  }
  tether__run_pop(t->arena, &run);
  tether__run_end(t->arena);
  tether__diag_end(t->arena);
  tether_keep_alive(h);
  return rc;
}
