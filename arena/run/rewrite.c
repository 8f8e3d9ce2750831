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
 * in a forked child, and only then for real (rewrite_trials.c, tether__patterns_crash): what
 * crashes the child is refused with a diagnostic; and the tree is then treated as holding
 * operations built by hand (its next verification is tried in a child first). And compiling the
 * patterns crashes MLIR on modules MLIR's PDL lowering does not expect (no pattern at all; calls of
 * native constraint or rewrite functions, which nobody can register through the C API), so those
 * are refused here, and the compilation itself is tried in a child first, once per module text
 * (tether__pdl_compile_crashes); the dialects of the operations the patterns name are loaded
 * first (MLIR frees a name the set holds when its dialect loads later).
 *
 * The C API's mlirPDLPatternModuleFromModule takes ownership of the module it is given: the
 * arena gives it a clone, so the caller's module stays the caller's.
 */
#include "run.h"
#include "../guards/guards.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/PDL.h>

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

/* ---- native functions (MLIR 22) ------------------------------------------------------------- */

#if TETHER_MLIR_VERSION >= 22
enum { MAX_RESULTS = 16 };

/* What a call of a native function needs: the binding's function and the results its call sites
 * expect (nres -1: no call site seen yet). */
typedef struct {
  tether_pdl_callback fn;
  void *user;
  bool rewrite;
  int nres;
  uint8_t kinds[MAX_RESULTS];
} fn_state;

typedef struct {
  intptr_t n;
  fn_state fns[];
} pdl_state;

struct tether_pdl_results {
  MlirPDLResultList list;
  const fn_state *f;
  intptr_t given;
};

/* The first of the call's values of a kind (a Value or an Operation), or NULL. */
static const void *first_of(size_t n, MlirPDLValue *values, int kind) {
  for (size_t i = 0; i < n; i++) {
    const void *p = kind == TETHER_PDL_VALUE ? (const void *)mlirPDLValueAsValue(values[i]).ptr
                                             : (const void *)mlirPDLValueAsOperation(values[i]).ptr;
    if (p) return p;
  }
  return NULL;
}

/* What MLIR calls: the binding's function, which gives its results through
 * tether_pdl_results_push. A constraint that succeeds with fewer results than expected fails
 * instead (MLIR would read the missing ones). A rewrite function must not fail: MLIR's greedy and
 * walk drivers abort the process when one does ("the pattern rewriter doesn't support recovery").
 * So a rewrite that fails, or gives fewer results, succeeds with the missing results made up (a
 * unit attribute, the none type, the first value or operation among its arguments); the binding
 * reports its failure itself. Only when no argument can stand for a missing value or operation
 * does it fail (and MLIR abort). */
static MlirLogicalResult trampoline(MlirPatternRewriter rewriter, MlirPDLResultList list, size_t n,
                                    MlirPDLValue *values, void *ud) {
  const fn_state *f = ud;
  tether_pdl_results r = {list, f, 0};
  MlirLogicalResult res = f->fn(rewriter, &r, n, values, f->user);
  int nres = f->nres < 0 ? 0 : f->nres;
  if (!f->rewrite)
    return mlirLogicalResultIsSuccess(res) && r.given != nres ? mlirLogicalResultFailure() : res;
  MlirContext ctx = mlirRewriterBaseGetContext(mlirPatternRewriterAsBase(rewriter));
  while (r.given < nres) {
    int kind = f->kinds[r.given];
    const void *raw = kind == TETHER_PDL_ATTRIBUTE ? mlirUnitAttrGet(ctx).ptr
                      : kind == TETHER_PDL_TYPE    ? mlirNoneTypeGet(ctx).ptr
                                                   : first_of(n, values, kind);
    if (!raw || tether_pdl_results_push(&r, (tether_pdl_kind)kind, raw) != TETHER_OK)
      return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}

int tether_pdl_results_push(tether_pdl_results *r, tether_pdl_kind kind, const void *raw) {
  if (!r || !raw) return TETHER_EARG;
  if (r->given >= r->f->nres) return TETHER_ERANGE;
  if ((int)kind != r->f->kinds[r->given]) return TETHER_EARG;
  switch (kind) {
  case TETHER_PDL_ATTRIBUTE:
    mlirPDLResultListPushBackAttribute(r->list, (MlirAttribute){raw});
    break;
  case TETHER_PDL_OPERATION:
    mlirPDLResultListPushBackOperation(r->list, (MlirOperation){(void *)raw});
    break;
  case TETHER_PDL_TYPE:
    mlirPDLResultListPushBackType(r->list, (MlirType){raw});
    break;
  case TETHER_PDL_VALUE:
    mlirPDLResultListPushBackValue(r->list, (MlirValue){raw});
    break;
  default:
    return TETHER_EARG;
  }
  r->given++;
  return TETHER_OK;
}

intptr_t tether_pdl_results_expected(const tether_pdl_results *r) {
  return r && r->f->nres > 0 ? r->f->nres : 0;
}

intptr_t tether_pdl_results_given(const tether_pdl_results *r) { return r ? r->given : 0; }

tether_pdl_kind tether_pdl_results_kind(const tether_pdl_results *r, intptr_t i) {
  return r && i >= 0 && i < r->f->nres ? (tether_pdl_kind)r->f->kinds[i] : TETHER_PDL_VALUE;
}

void tether_pdl_state_free(void *state) { free(state); }

/* The kind of a PDL handle type, or -1 (a range, or not a PDL type). */
static int kind_of(MlirType t) {
  if (mlirTypeIsAPDLAttributeType(t)) return TETHER_PDL_ATTRIBUTE;
  if (mlirTypeIsAPDLOperationType(t)) return TETHER_PDL_OPERATION;
  if (mlirTypeIsAPDLTypeType(t)) return TETHER_PDL_TYPE;
  if (mlirTypeIsAPDLValueType(t)) return TETHER_PDL_VALUE;
  return -1;
}
#endif

/* The first operation in module that a pattern module must not hold (else null): anything but
 * pdl.pattern at its top; inside patterns, calls of native functions that are not registered
 * (fns, n of them: MLIR 22's tether_pdl_function), which MLIR compiles to a call through index 0
 * of a table that does not hold them (MLIR 19's C API registers none), or whose results MLIR
 * could not take from the C API. The results each call site expects go to state (MLIR 22). */
typedef struct {
  MlirOperation bad;
  const char *why;
  const void *fns;
  intptr_t n;
  void *state;
} content_check;

/* Records the results a call of `name` (a function of that kind) expects: 0 when they conflict
 * with another call's or cannot be given. */
static int expect_results(content_check *c, MlirOperation call, MlirAttribute name, bool rewrite) {
#if TETHER_MLIR_VERSION >= 22
  MlirStringRef s = mlirStringAttrGetValue(name);
  const tether_pdl_function *f = c->fns;
  pdl_state *st = c->state;
  intptr_t nres = mlirOperationGetNumResults(call);
  if (nres > MAX_RESULTS) return 0;
  uint8_t kinds[MAX_RESULTS];
  for (intptr_t i = 0; i < nres; i++) {
    int k = kind_of(mlirValueGetType(mlirOperationGetResult(call, i)));
    if (k < 0) return 0;
    kinds[i] = (uint8_t)k;
  }
  for (intptr_t i = 0; i < c->n; i++) {
    if (f[i].rewrite != rewrite || f[i].name.length != s.length ||
        (s.length && memcmp(f[i].name.data, s.data, s.length)))
      continue;
    fn_state *x = &st->fns[i];
    if (x->nres < 0) {
      x->nres = (int)nres;
      memcpy(x->kinds, kinds, (size_t)nres);
    } else if (x->nres != nres || memcmp(x->kinds, kinds, (size_t)nres)) {
      return 0;
    }
  }
#else
  (void)c;
  (void)call;
  (void)name;
  (void)rewrite;
#endif
  return 1;
}

/* Whether fns registers `name` as a function of that kind. */
static int registered(const content_check *c, MlirAttribute name, bool rewrite) {
#if TETHER_MLIR_VERSION >= 22
  if (mlirAttributeIsNull(name) || !mlirAttributeIsAString(name)) return 0;
  MlirStringRef s = mlirStringAttrGetValue(name);
  const tether_pdl_function *f = c->fns;
  for (intptr_t i = 0; i < c->n; i++)
    if (f[i].rewrite == rewrite && f[i].name.length == s.length &&
        (!s.length || !memcmp(f[i].name.data, s.data, s.length)))
      return 1;
#else
  (void)c;
  (void)name;
  (void)rewrite;
#endif
  return 0;
}

static MlirWalkResult native_call_cb(MlirOperation op, void *ud) {
  content_check *c = ud;
  const char *why = NULL;
  MlirAttribute name = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("name"));
  bool constraint = tether__op_named(op, "pdl.apply_native_constraint");
  bool rewrite = tether__op_named(op, "pdl.apply_native_rewrite");
  if ((constraint || rewrite) && !registered(c, name, rewrite))
    why = rewrite ? "calls a native rewrite function that is not registered"
                  : "calls a native constraint function that is not registered";
  else if ((constraint || rewrite) && !expect_results(c, op, name, rewrite))
    why = "expects results of the native function that other calls of it do not, or that it "
          "cannot give (a range, or more than 16)";
  else if (tether__op_named(op, "pdl.rewrite") && !mlirAttributeIsNull(name) &&
           !registered(c, name, true))
    why = "names an external rewrite function that is not registered";
  if (!why) return MlirWalkResultAdvance;
  c->bad = op;
  c->why = why;
  return MlirWalkResultInterrupt;
}

/* 1 and a diagnostic when module holds what a pattern module must not; *patterns counts the
 * patterns. */
static int bad_content(MlirOperation module, const void *fns, intptr_t nfns, void *state,
                       intptr_t *patterns) {
  content_check c = {{NULL}, NULL, fns, nfns, state};
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
           "a PDL pattern module holds only pdl.pattern operations, which call only native "
           "functions registered with it; this '%.*s' %s",
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

/* The frozen set of a module MLIR takes (it destroys it), with the native functions fns. On MLIR
 * 19 the RewritePatternSet in between is leaked, as its C API leaves no way to free it
 * (upstream's bindings leak it the same way); MLIR 22 frees it. */
MlirFrozenRewritePatternSet tether__pdl_compile(MlirOperation module, const void *fns, intptr_t n,
                                                void *state) {
  MlirPDLPatternModule pm = mlirPDLPatternModuleFromModule(mlirModuleFromOperation(module));
#if TETHER_MLIR_VERSION >= 22
  const tether_pdl_function *f = fns;
  pdl_state *st = state;
  for (intptr_t i = 0; i < n; i++) {
    if (f[i].rewrite)
      mlirPDLPatternModuleRegisterRewriteFunction(pm, f[i].name, trampoline, &st->fns[i]);
    else
      mlirPDLPatternModuleRegisterConstraintFunction(pm, f[i].name, trampoline, &st->fns[i]);
  }
#else
  (void)state;
  (void)fns;
  (void)n;
#endif
  MlirRewritePatternSet rs = mlirRewritePatternSetFromPDLPatternModule(pm);
  MlirFrozenRewritePatternSet set = mlirFreezeRewritePattern(rs);
#if TETHER_MLIR_VERSION >= 22
  mlirRewritePatternSetDestroy(rs); /* emptied by the move into the frozen set */
#endif
  mlirPDLPatternModuleDestroy(pm); /* emptied by the move into the pattern set */
  return set;
}

/* Compiles module (a clone nobody else owns; consumed) into *out, unless it crashes MLIR (tried in
 * a child first): TETHER_EPASS with a diagnostic then. */
static int compile(MlirOperation module, const void *fns, intptr_t n, void *state,
                   MlirFrozenRewritePatternSet *out) {
  if (tether__pdl_compile_crashes(module, fns, n, state)) {
    mlirOperationDestroy(module);
    return TETHER_EPASS;
  }
  *out = tether__pdl_compile(module, fns, n, state);
  return TETHER_OK;
}

static int pdl_freeze(tether_op *module, const void *fns, intptr_t nfns, void *state,
                      MlirFrozenRewritePatternSet *out) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(module, TETHER_KIND_OP, h, t);
  if (!out || nfns < 0 || (nfns && !fns) || !tether__op_named(OP(h), "builtin.module"))
    return TETHER_EARG;
  /* The arena's verification, with its guards against verifiers that crash. */
  int rc = tether_op_verify(module);
  if (rc != TETHER_OK) return rc;
  tether_arena *a = t->arena;
  tether__diag_begin(a);
  intptr_t patterns;
  if (bad_content(OP(h), fns, nfns, state, &patterns)) {
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
    rc = !mlirOperationIsNull(m) ? compile(m, fns, nfns, state, out)
         : patterns              ? TETHER_ENOMEM
                                 : TETHER_EPASS;
  }
  tether__diag_end(a);
  tether_keep_alive(h);
  return rc;
}

int tether_pdl_freeze(tether_op *module, MlirFrozenRewritePatternSet *out) {
  return pdl_freeze(module, NULL, 0, NULL, out);
}

#if TETHER_MLIR_VERSION >= 22
int tether_pdl_freeze_ex(tether_op *module, const tether_pdl_function *fns, intptr_t n,
                         MlirFrozenRewritePatternSet *out, void **state) {
  if (!state || n < 0 || (n && !fns)) return TETHER_EARG;
  for (intptr_t i = 0; i < n; i++)
    if (!fns[i].fn || (fns[i].name.length && !fns[i].name.data)) return TETHER_EARG;
  pdl_state *st = malloc(sizeof *st + (size_t)n * sizeof st->fns[0]);
  if (!st) return TETHER_ENOMEM;
  st->n = n;
  for (intptr_t i = 0; i < n; i++) {
    st->fns[i].fn = fns[i].fn;
    st->fns[i].user = fns[i].user;
    st->fns[i].rewrite = fns[i].rewrite;
    st->fns[i].nres = -1;
  }
  int rc = pdl_freeze(module, fns, n, st, out);
  if (rc != TETHER_OK) {
    free(st);
    return rc;
  }
  *state = st;
  return TETHER_OK;
}
#endif

/* ---- applying patterns ---------------------------------------------------------------------- */

typedef struct {
  int repair, found;
} dropped_ctx;

static MlirWalkResult dropped_cb(MlirOperation op, void *ud) {
  dropped_ctx *c = ud;
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n; i++) {
    if (!mlirValueIsNull(mlirOperationGetOperand(op, i))) continue;
    c->found = 1;
    if (!c->repair) return MlirWalkResultInterrupt;
    MlirContext ctx = mlirOperationGetContext(op);
    MlirOperationState st = mlirOperationStateGet(
        mlirStringRefCreateFromCString("tether.dropped_use"), mlirOperationGetLocation(op));
    MlirType none = mlirNoneTypeGet(ctx);
    mlirOperationStateAddResults(&st, 1, &none);
    MlirOperation stub = mlirOperationCreate(&st);
    mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(op), op, stub);
    mlirOperationSetOperand(op, i, mlirOperationGetResult(stub, 0));
  }
  return MlirWalkResultAdvance;
}

int tether__dropped_uses(MlirOperation op, int repair) {
  dropped_ctx c = {repair, 0};
  mlirOperationWalk(op, dropped_cb, &c, MlirWalkPreOrder);
  return c.found;
}

MlirLogicalResult tether__patterns_apply(const tether__apply *x) {
  if (x->driver == TETHER_DRIVER_WALK) {
    tether_mlir_walk_and_apply(x->op, x->set);
    return mlirLogicalResultSuccess();
  }
  return tether_mlir_apply_greedily(x->op, x->set, x->config);
}

static int apply_checked(tether__tree *t, const tether__apply *x, unsigned flags, bool *converged) {
  int unsafe = tether__unsafe_for_mlir(t, x->op, flags & TETHER_PASSES_TRUSTED_INPUT);
  if (!unsafe && !(flags & TETHER_PASSES_TRUSTED_INPUT)) unsafe = tether__fold_cycle_error(x->op);
  if (unsafe) return unsafe;
  /* MLIR's patterns and folders assume valid IR. */
  if (!(flags & TETHER_PASSES_TRUSTED_INPUT) && t->verified_epoch != t->arena->epoch &&
      !mlirOperationVerify(x->op))
    return TETHER_EVERIFY;
  /* Patterns written in the binding's language call back (callbacks.c), in the trial's child
   * too. */
  tether__run run;
  tether__run_push(t->arena, &run, t, x->op, 1);
  if (!(flags & TETHER_PATTERNS_NO_TRIAL) && tether__patterns_crash(x)) {
    tether__run_pop(t->arena, &run);
    return TETHER_EPASS;
  }
  tether__touch(t->arena);
  MlirLogicalResult r = tether__patterns_apply(x);
  tether__run_pop(t->arena, &run);
  /* The trial saw no dropped uses; callbacks that behave differently now might leave some. */
  tether__dropped_uses(x->op, 1);
  tether__tree_revalidate(tether__tree_resolve(t));
  /* Operations the rewrites built may crash MLIR's verifier (a linalg op without its region): as
   * for operations built by hand, the tree's next verification (by tether_op_verify, a print or a
   * pass) is tried in a child first. (Not in the trial's child: a context with multithreading
   * enabled verifies on its thread pool, whose threads a forked child does not have.) */
  t->suspect = 1;
  if (converged) *converged = mlirLogicalResultIsSuccess(r);
  return TETHER_OK;
}

int tether_op_apply_patterns_ex(tether_op *op, MlirFrozenRewritePatternSet set,
                                MlirContext set_context, tether_driver driver,
                                MlirGreedyRewriteDriverConfig config, unsigned flags,
                                bool *converged) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  if (!set.ptr || mlirContextIsNull(set_context) ||
      (driver != TETHER_DRIVER_GREEDY && driver != TETHER_DRIVER_WALK))
    return TETHER_EARG;
#if TETHER_MLIR_VERSION < 22
  if (driver != TETHER_DRIVER_GREEDY || config.ptr || !tether__op_named(OP(h), "builtin.module"))
    return TETHER_EARG;
#endif
  tether_arena *a = t->arena;
  if (!mlirContextEqual(set_context, a->ctx)) return TETHER_ECONTEXT;
  /* A rewrite may erase any operation inside op: refused while other trees use some, or while a
   * callback of an enclosing run forbids it (callbacks.c). */
  if (tether__op_used_from_other_trees(t, OP(h))) return TETHER_EBUSY;
  int rc = tether__scope_rewrite(t, OP(h));
  if (rc != TETHER_OK) return rc;
  tether__apply x = {OP(h), set, driver, config};
  tether__diag_begin(a);
  tether__run_begin(a);
  rc = apply_checked(t, &x, flags, converged);
  tether__run_end(a);
  tether__diag_end(a);
  tether_keep_alive(h);
  return rc;
}

int tether_op_apply_patterns(tether_op *module_op, MlirFrozenRewritePatternSet set,
                             MlirContext set_context, unsigned flags, bool *converged) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(module_op, TETHER_KIND_OP, h, t);
  if (!tether__op_named(OP(h), "builtin.module")) return TETHER_EARG;
  return tether_op_apply_patterns_ex(module_op, set, set_context, TETHER_DRIVER_GREEDY,
                                     (MlirGreedyRewriteDriverConfig){NULL}, flags, converged);
}
