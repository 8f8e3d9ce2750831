/* rewrite.c: PDL pattern sets and greedy pattern application (MLIR's mlir-c/Rewrite.h), on the
 * arena.
 *
 * Invariant: as for passes (passes.c, tether_op_run_passes), MLIR changes IR here behind tether's
 * back, so patterns are applied only to IR MLIR can handle (it verifies, uses no value or block
 * of another tree, has no verifier known to crash), never while another tree uses IR they may
 * erase, and the tree is revalidated afterwards: handles of removed objects become invalid, the
 * others keep their identity.
 *
 * Unlike a pass pipeline, a PDL rewrite builds operations from whatever the pattern says (an
 * arith.muli with one operand, an arith.constant without its value, result types inferred from
 * operands that are not there), erases operations whose results are still used, and MLIR's
 * folders and inference then run on that IR in the same call, without any verification between:
 * MLIR 19 crashes there (in a release build, nothing asserts). So the application is made first
 * in a forked child, and only then for real (crash_guards.c, tether__patterns_crash): what crashes
 * the child is refused with a diagnostic; and the tree is then treated as holding operations built
 * by hand (its next verification is tried in a child first). And compiling the patterns crashes
 * MLIR on modules MLIR's PDL lowering does not expect (no pattern at all; calls of native
 * constraint or rewrite functions, which nobody can register through the C API), so those are
 * refused here, and the compilation itself is tried in a child first, once per module text
 * (tether__pdl_compile_crashes); the dialects of the operations the patterns name are loaded
 * first (MLIR frees a name the set holds when its dialect loads later).
 *
 * The C API's mlirPDLPatternModuleFromModule takes ownership of the module it is given: the
 * arena gives it a clone, so the caller's module stays the caller's.
 */
#include "tether_internal.h"

#include <mlir-c/BuiltinAttributes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- compiling PDL patterns ----------------------------------------------------------------- */

/* What MLIR 19 compiles to a pattern set for a module holding no pdl.pattern: its PDL lowering
 * skips such a module, and its bytecode generator then dereferences the matcher function it
 * expects (a null operation). This is the lowering's own output for no pattern. */
static const char kNoPatterns[] = "module {\n"
                                  "  pdl_interp.func @matcher(%arg0: !pdl.operation) {\n"
                                  "    pdl_interp.finalize\n"
                                  "  }\n"
                                  "  module @rewriters {\n"
                                  "  }\n"
                                  "}\n";

/* The first operation in module that a pattern module must not hold (else null): anything but
 * pdl.pattern at its top; inside patterns, calls of native functions, which MLIR 19 compiles to
 * a call through index 0 of an empty table (no function can be registered through the C API). */
typedef struct {
  MlirOperation bad;
  const char *why;
} content_check;

static MlirWalkResult native_call_cb(MlirOperation op, void *ud) {
  content_check *c = ud;
  const char *why = NULL;
  if (tether__op_named(op, "pdl.apply_native_constraint"))
    why = "calls a native constraint function";
  else if (tether__op_named(op, "pdl.apply_native_rewrite"))
    why = "calls a native rewrite function";
  else if (tether__op_named(op, "pdl.rewrite") &&
           !mlirAttributeIsNull(
               mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("name"))))
    why = "names an external rewrite function";
  if (!why) return MlirWalkResultAdvance;
  c->bad = op;
  c->why = why;
  return MlirWalkResultInterrupt;
}

/* 1 and a diagnostic when module holds what a pattern module must not; *patterns counts the
 * patterns. */
static int bad_content(MlirOperation module, intptr_t *patterns) {
  content_check c = {{NULL}, NULL};
  *patterns = 0;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
  for (MlirOperation o = mlirBlockIsNull(body) ? (MlirOperation){NULL}
                                               : mlirBlockGetFirstOperation(body);
       !mlirOperationIsNull(o) && !c.why; o = mlirOperationGetNextInBlock(o)) {
    if (!tether__op_named(o, "pdl.pattern")) {
      c.bad = o;
      c.why = "is not a pdl.pattern";
      break;
    }
    ++*patterns;
    mlirOperationWalk(o, native_call_cb, &c, MlirWalkPreOrder);
  }
  if (!c.why) return 0;
  char msg[300];
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(c.bad));
  snprintf(msg, sizeof msg,
           "a PDL pattern module holds only pdl.pattern operations, which call no native "
           "function (none can be registered through this API); this '%.*s' %s",
           (int)(name.length > 60 ? 60 : name.length), name.data, c.why);
  mlirEmitError(mlirOperationGetLocation(c.bad), msg);
  return 1;
}

/* MLIR compiles the operation names the patterns mention into the set (OperationName). A name
 * whose dialect is registered but not loaded yet (the arena loads dialects on demand) is made an
 * unregistered name; when the dialect loads later, MLIR 19 replaces that name's storage and frees
 * the old one (RegisteredOperationName::insert), and the set would match against freed memory:
 * the dialects of every name the patterns mention are loaded first. */
static MlirWalkResult load_dialect_cb(MlirOperation op, void *ud) {
  (void)ud;
  if (!tether__op_named(op, "pdl.operation")) return MlirWalkResultAdvance;
  MlirAttribute name =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("opName"));
  if (mlirAttributeIsNull(name) || !mlirAttributeIsAString(name)) return MlirWalkResultAdvance;
  MlirStringRef s = mlirStringAttrGetValue(name);
  const char *dot = memchr(s.data, '.', s.length);
  if (dot)
    mlirContextGetOrLoadDialect(mlirOperationGetContext(op),
                                mlirStringRefCreate(s.data, (size_t)(dot - s.data)));
  return MlirWalkResultAdvance;
}

/* The frozen set of a module MLIR takes (it destroys it). The RewritePatternSet in between is
 * leaked, as the C API leaves no way to free it (upstream's bindings leak it the same way); it
 * holds the lowered module. */
MlirFrozenRewritePatternSet tether__pdl_compile(MlirOperation module) {
  MlirPDLPatternModule pm = mlirPDLPatternModuleFromModule(mlirModuleFromOperation(module));
  MlirFrozenRewritePatternSet set =
      mlirFreezeRewritePattern(mlirRewritePatternSetFromPDLPatternModule(pm));
  mlirPDLPatternModuleDestroy(pm); /* emptied by the move into the pattern set */
  return set;
}

/* Compiles module (a clone nobody else owns; consumed) into *out, unless it crashes MLIR (tried in
 * a child first): TETHER_EPASS with a diagnostic then. */
static int compile(MlirOperation module, MlirFrozenRewritePatternSet *out) {
  if (tether__pdl_compile_crashes(module)) {
    mlirOperationDestroy(module);
    return TETHER_EPASS;
  }
  *out = tether__pdl_compile(module);
  return TETHER_OK;
}

int tether_pdl_freeze(tether_op *module, MlirFrozenRewritePatternSet *out) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(module, TETHER_KIND_OP, h, t);
  if (!out || !tether__op_named(OP(h), "builtin.module")) return TETHER_EARG;
  /* The arena's verification, with its guards against verifiers that crash. */
  int rc = tether_op_verify(module);
  if (rc != TETHER_OK) return rc;
  tether_arena *a = t->arena;
  tether__diag_begin(a);
  intptr_t patterns;
  if (bad_content(OP(h), &patterns)) {
    rc = TETHER_EARG;
  } else {
    MlirOperation m;
    if (patterns) {
      mlirOperationWalk(OP(h), load_dialect_cb, NULL, MlirWalkPreOrder);
      m = mlirOperationClone(OP(h));
    } else {
      MlirModule empty =
          mlirModuleCreateParse(a->ctx, mlirStringRefCreate(kNoPatterns, sizeof kNoPatterns - 1));
      m = mlirModuleGetOperation(empty);
    }
    /* A null parse: a context without the pdl_interp dialect (adopted), diagnostics emitted. */
    rc = !mlirOperationIsNull(m) ? compile(m, out) : patterns ? TETHER_ENOMEM : TETHER_EPASS;
  }
  tether__diag_end(a);
  tether_keep_alive(h);
  return rc;
}

/* ---- applying patterns ---------------------------------------------------------------------- */

MlirLogicalResult tether__patterns_apply(MlirModule m, MlirFrozenRewritePatternSet set) {
  return tether_mlir_apply_greedily(m, set);
}

static int apply_checked(tether__tree *t, MlirOperation op, MlirFrozenRewritePatternSet set,
                         unsigned flags, bool *converged) {
  if (tether__unsafe_for_mlir(t, op)) return TETHER_EPASS;
  /* MLIR's patterns and folders assume valid IR. */
  if (!(flags & TETHER_PASSES_TRUSTED_INPUT) && t->verified_epoch != t->arena->epoch &&
      !mlirOperationVerify(op))
    return TETHER_EVERIFY;
  if (!(flags & TETHER_PATTERNS_NO_TRIAL) && tether__patterns_crash(op, set)) return TETHER_EPASS;
  tether__touch(t->arena);
  MlirLogicalResult r = tether__patterns_apply(mlirModuleFromOperation(op), set);
  tether__tree_revalidate(t);
  /* Operations the rewrites built may crash MLIR's verifier (a linalg op without its region): as
   * for operations built by hand, the tree's next verification (by tether_op_verify, a print or a
   * pass) is tried in a child first. (Not in the trial's child: a context with multithreading
   * enabled verifies on its thread pool, whose threads a forked child does not have.) */
  t->suspect = 1;
  if (converged) *converged = mlirLogicalResultIsSuccess(r);
  return TETHER_OK;
}

int tether_op_apply_patterns(tether_op *module_op, MlirFrozenRewritePatternSet set,
                             MlirContext set_context, unsigned flags, bool *converged) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(module_op, TETHER_KIND_OP, h, t);
  if (!set.ptr || mlirContextIsNull(set_context) || !tether__op_named(OP(h), "builtin.module"))
    return TETHER_EARG;
  tether_arena *a = t->arena;
  if (!mlirContextEqual(set_context, a->ctx)) return TETHER_ECONTEXT;
  /* A rewrite may erase any operation inside the module: refused while other trees use some. */
  if (tether__op_used_from_other_trees(t, OP(h))) return TETHER_EBUSY;
  tether__diag_begin(a);
  tether__run_begin(a);
  int rc = apply_checked(t, OP(h), set, flags, converged);
  tether__run_end(a);
  tether__diag_end(a);
  tether_keep_alive(h);
  return rc;
}
