/* PDL pattern sets and greedy pattern application through the arena (tether_pdl_freeze,
 * tether_op_apply_patterns): the guarantees of tether_op_run_passes (refusals, revalidation,
 * identity), the caller's pattern module left alone, and the rewrites MLIR 19 crashes on refused
 * instead of run. */
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <mlir-c/Rewrite.h>

#include "check.h"
#include "mlir_compat.h" /* TETHER_MLIR_VERSION, also where the build does not define it */

static const char *kPayload = "func.func @f(%a: index, %b: index) -> index {\n"
                              "  %0 = arith.addi %a, %b : index\n"
                              "  %1 = arith.muli %0, %a : index\n"
                              "  return %1 : index\n"
                              "}\n";

/* arith.addi on index values becomes arith.muli; REWRITE is the rewrite region's body, given the
 * matched operation %3 and its operands %1, %2 of type %0. */
static const char *kPattern = "pdl.pattern @addi_to_muli : benefit(1) {\n"
                              "  %%0 = type : index\n"
                              "  %%1 = operand : %%0\n"
                              "  %%2 = operand : %%0\n"
                              "  %%3 = operation \"arith.addi\"(%%1, %%2 : !pdl.value, !pdl.value)"
                              " -> (%%0 : !pdl.type)\n"
                              "  rewrite %%3 {\n"
                              "%s"
                              "  }\n"
                              "}\n";

static const char *kToMuli =
    "    %4 = operation \"arith.muli\"(%1, %2 : !pdl.value, !pdl.value) -> (%0 : !pdl.type)\n"
    "    replace %3 with %4\n";

static tether_op *patterns(tether_arena *a, const char *rewrite) {
  char buf[2048];
  snprintf(buf, sizeof buf, kPattern, rewrite);
  return parse(a, buf);
}

static MlirFrozenRewritePatternSet freeze(tether_op *module) {
  MlirFrozenRewritePatternSet set = {NULL};
  int rc = tether_pdl_freeze(module, &set);
  if (rc != TETHER_OK)
    fprintf(stderr, "%s\n", tether_arena_last_error(tether_handle_arena(module)));
  OK(rc);
  CHECK(set.ptr != NULL);
  return set;
}

static int apply(tether_op *module, MlirFrozenRewritePatternSet set, bool *converged) {
  return tether_op_apply_patterns(module, set, tether_arena_context(tether_handle_arena(module)), 0,
                                  converged);
}

/* The addi is replaced: its handle is invalid (removed), the function, the muli and the return
 * keep their handles and identity; the pattern module does not change. */
static void apply_invalidates_what_it_replaced(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *payload = parse(a, kPayload), *pdl = patterns(a, kToMuli);
  char *before = print_op(pdl);
  MlirFrozenRewritePatternSet set = freeze(pdl);
  char *after = print_op(pdl);
  CHECK(before && after && !strcmp(before, after));
  free(before);
  free(after);
  tether_op *func = body_op(payload, 0);
  tether_op *add = body_op(func, 0), *mul = body_op(func, 1), *ret = body_op(func, 2);
  bool converged = false;
  OK(apply(payload, set, &converged));
  CHECK(converged);
  CHECK(tether_handle_reason(add) == TETHER_REASON_REMOVED);
  CHECK(tether_handle_is_valid(func) && tether_handle_is_valid(mul) && tether_handle_is_valid(ret));
  CHECK(body_op(payload, 0) == func && body_op(func, 1) == mul && body_op(func, 2) == ret);
  CHECK(tether_handle_is_valid(payload));
  CHECK(!prints_containing(payload, "arith.addi"));
  CHECK(prints_containing(payload, "%0 = arith.muli %arg0, %arg1 : index"));
  OK(tether_op_verify(payload));
  /* The set applies again (nothing left to rewrite), and after its pattern module is gone. */
  OK(tether_op_erase(pdl));
  tether_collect(a);
  tether_op *again = parse(a, kPayload);
  OK(apply(again, set, NULL));
  CHECK(!prints_containing(again, "arith.addi"));
  OK(apply(payload, set, &converged));
  CHECK(converged && body_op(func, 1) == mul);
  /* NULL converged is fine; flags: trusted input, no trial (the tree then counts as suspect). */
  tether_op *third = parse(a, kPayload);
  OK(tether_op_apply_patterns(third, set, tether_arena_context(a),
                              TETHER_PASSES_TRUSTED_INPUT | TETHER_PATTERNS_NO_TRIAL, NULL));
  CHECK(prints_containing(third, "arith.muli %arg0, %arg1"));
  OK(tether_op_verify(third));
  mlirFrozenRewritePatternSetDestroy(set);
}

/* Patterns compiled before the dialect of the operations they name is loaded (the arena loads
 * dialects on demand): MLIR 19 frees the unregistered name the set holds when the dialect loads,
 * so tether_pdl_freeze loads it first, and the set matches what is parsed afterwards. */
static void patterns_compiled_before_their_dialect_loads(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  MlirContext ctx = tether_arena_context(a);
  CHECK(!mlirContextIsNull(ctx));
  tether_op *pdl = patterns(a, kToMuli);
  MlirFrozenRewritePatternSet set = freeze(pdl);
  tether_op *payload = parse(a, kPayload);
  bool converged = false;
  OK(apply(payload, set, &converged));
  CHECK(converged);
  CHECK(prints_containing(payload, "%0 = arith.muli %arg0, %arg1 : index"));
  mlirFrozenRewritePatternSetDestroy(set);
}

/* A nested builtin.module is a payload too; the operations around it do not change. */
static void nested_module_payload(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *outer = parse(a, "module {\n"
                              "  module @inner {\n"
                              "    func.func @f(%a: index) -> index {\n"
                              "      %0 = arith.addi %a, %a : index\n"
                              "      return %0 : index\n"
                              "    }\n"
                              "  }\n"
                              "  func.func @g(%a: index) -> index {\n"
                              "    %0 = arith.addi %a, %a : index\n"
                              "    return %0 : index\n"
                              "  }\n"
                              "}\n");
  tether_op *inner = body_op(outer, 0), *g = body_op(outer, 1);
  tether_op *g_add = body_op(g, 0);
  MlirFrozenRewritePatternSet set = freeze(patterns(a, kToMuli));
  OK(apply(inner, set, NULL));
  CHECK(tether_handle_is_valid(g_add) && body_op(g, 0) == g_add);
  CHECK(prints_containing(inner, "arith.muli"));
  CHECK(prints_containing(g, "arith.addi"));
  mlirFrozenRewritePatternSetDestroy(set);
}

/* What tether_pdl_freeze refuses, and the module with no pattern. */
static void freeze_refusals(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  OK(tether_arena_allow_unregistered(a, true));
  MlirFrozenRewritePatternSet set = {NULL};
  CHECK_RC(tether_pdl_freeze(NULL, &set), TETHER_EARG);
  tether_op *pdl = patterns(a, kToMuli);
  CHECK_RC(tether_pdl_freeze(pdl, NULL), TETHER_EARG);
  /* Not a builtin.module. */
  CHECK_RC(tether_pdl_freeze(body_op(pdl, 0), &set), TETHER_EARG);
  /* Does not verify: the pattern's benefit removed through the raw C API (MLIR's message). */
  tether_op *bad = patterns(a, kToMuli);
  MlirOperation raw_pattern;
  OK(tether_op_get(body_op(bad, 0), &raw_pattern));
  CHECK(mlirOperationRemoveAttributeByName(raw_pattern, mlirStringRefCreateFromCString("benefit")));
  OK(tether_handle_mark_suspect(bad));
  CHECK_RC(tether_pdl_freeze(bad, &set), TETHER_EVERIFY);
  CHECK(error_mentions(a, "benefit"));
  /* Anything but pdl.pattern at the top. */
  tether_op *mixed = parse(a, "func.func private @f()\n");
  CHECK_RC(tether_pdl_freeze(mixed, &set), TETHER_EARG);
  CHECK(error_mentions(a, "'func.func' is not a pdl.pattern"));
  /* Native functions: constraints, rewrites, an external rewrite. */
  tether_op *native = patterns(a, "    apply_native_rewrite \"nope\"(%3 : !pdl.operation)\n");
  CHECK_RC(tether_pdl_freeze(native, &set), TETHER_EARG);
  CHECK(error_mentions(a, "calls a native rewrite function"));
  tether_op *constraint = parse(a, "pdl.pattern : benefit(1) {\n"
                                   "  %0 = operation \"arith.addi\"\n"
                                   "  apply_native_constraint \"nope\"(%0 : !pdl.operation)\n"
                                   "  rewrite %0 {\n"
                                   "    erase %0\n"
                                   "  }\n"
                                   "}\n");
  CHECK_RC(tether_pdl_freeze(constraint, &set), TETHER_EARG);
  CHECK(error_mentions(a, "calls a native constraint function"));
  tether_op *external = parse(a, "pdl.pattern : benefit(1) {\n"
                                 "  %0 = operation \"arith.addi\"\n"
                                 "  rewrite %0 with \"nope\"\n"
                                 "}\n");
  CHECK_RC(tether_pdl_freeze(external, &set), TETHER_EARG);
  CHECK(error_mentions(a, "names an external rewrite function"));
  CHECK(set.ptr == NULL);
  /* No pattern at all (MLIR 19 crashes compiling it): a set that matches nothing. */
  tether_op *empty;
  OK(tether_module_create(a, NULL, &empty));
  MlirFrozenRewritePatternSet none = freeze(empty);
  tether_op *payload = parse(a, kPayload);
  tether_op *add = body_op(body_op(payload, 0), 0);
  bool converged = false;
  OK(apply(payload, none, &converged));
  CHECK(converged && tether_handle_is_valid(add));
  CHECK(prints_containing(payload, "arith.addi"));
  mlirFrozenRewritePatternSetDestroy(none);
  /* An invalid handle. */
  tether_op *gone = patterns(a, kToMuli);
  OK(tether_op_erase(gone));
  CHECK_RC(tether_pdl_freeze(gone, &set), TETHER_EINVALID);
}

/* What tether_op_apply_patterns refuses before MLIR sees anything; nothing changes. */
static void apply_refusals(void) {
  tether_arena *a, *b;
  OK(tether_arena_create(&a));
  OK(tether_arena_create(&b));
  OK(tether_arena_allow_unregistered(a, true));
  tether_op *payload = parse(a, kPayload);
  MlirFrozenRewritePatternSet set = freeze(patterns(a, kToMuli));
  MlirFrozenRewritePatternSet other = freeze(patterns(b, kToMuli));
  MlirContext ctx = tether_arena_context(a);
  CHECK_RC(tether_op_apply_patterns(NULL, set, ctx, 0, NULL), TETHER_EARG);
  CHECK_RC(tether_op_apply_patterns(payload, (MlirFrozenRewritePatternSet){NULL}, ctx, 0, NULL),
           TETHER_EARG);
  CHECK_RC(tether_op_apply_patterns(payload, set, (MlirContext){NULL}, 0, NULL), TETHER_EARG);
  /* Not a builtin.module. */
  CHECK_RC(apply(body_op(payload, 0), set, NULL), TETHER_EARG);
  /* A set of another context. */
  CHECK_RC(tether_op_apply_patterns(payload, other, tether_arena_context(b), 0, NULL),
           TETHER_ECONTEXT);
  CHECK_RC(tether_op_apply_patterns(payload, set, tether_arena_context(b), 0, NULL),
           TETHER_ECONTEXT);
  CHECK(prints_containing(payload, "arith.addi"));
  /* Another tree uses a value inside the payload: a rewrite may erase it. */
  tether_op *add = body_op(body_op(payload, 0), 0);
  MlirValue sum = raw_result(add, 0);
  tether_op *user = create_op(a, "test.user", 1, &sum, 0, NULL);
  CHECK_RC(apply(payload, set, NULL), TETHER_EBUSY);
  CHECK(tether_handle_is_valid(add) && prints_containing(payload, "arith.addi"));
  OK(tether_op_erase(user));
  /* A payload that does not verify (an arith.constant without its value). */
  tether_op *bad = parse(a, "module {}\n");
  MlirType index = mlirIndexTypeGet(ctx);
  append_to_body(bad, create_op(a, "arith.constant", 0, NULL, 1, &index));
  CHECK_RC(apply(bad, set, NULL), TETHER_EVERIFY);
  CHECK(error_mentions(a, "value"));
  /* Invalid handles. */
  tether_op *gone = parse(a, kPayload);
  OK(tether_op_erase(gone));
  CHECK_RC(apply(gone, set, NULL), TETHER_EINVALID);
  /* Everything refused above changed nothing: the set still applies. */
  OK(apply(payload, set, NULL));
  CHECK(tether_handle_reason(add) == TETHER_REASON_REMOVED);
  mlirFrozenRewritePatternSetDestroy(set);
  mlirFrozenRewritePatternSetDestroy(other);
}

/* Rewrites MLIR 19 crashes on in the same call (upstream's bindings die with SIGSEGV): tried in a
 * child, refused with a diagnostic; the payload does not change. */
static void crashing_rewrites_refused(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  const char *crashing[] = {
      /* arith.muli with one operand: its folder reads the second. */
      "    %4 = operation \"arith.muli\"(%1 : !pdl.value) -> (%0 : !pdl.type)\n"
      "    replace %3 with %4\n",
      /* The result type inferred from operands that are not there. */
      "    %4 = operation \"arith.muli\"(%1 : !pdl.value)\n"
      "    replace %3 with %4\n",
      /* The addi erased while the muli still uses its result. */
      "    erase %3\n",
      /* arith.constant without its value. */
      "    %4 = operation \"arith.constant\" -> (%0 : !pdl.type)\n"
      "    replace %3 with %4\n",
  };
  for (size_t i = 0; i < sizeof crashing / sizeof *crashing; i++) {
    tether_op *payload = parse(a, kPayload);
    tether_op *add = body_op(body_op(payload, 0), 0);
    MlirFrozenRewritePatternSet set = freeze(patterns(a, crashing[i]));
    CHECK_RC(apply(payload, set, NULL), TETHER_EPASS);
    /* MLIR 22's rewriter survives the erase of a used operation but drops its uses: refused
     * for what it leaves behind. */
    CHECK(error_mentions(a, TETHER_MLIR_VERSION >= 22 && i == 2
                                ? "erase an operation whose results are still used"
                                : "MLIR crashes applying these patterns"));
    CHECK(tether_handle_is_valid(add));
    CHECK(prints_containing(payload, "arith.addi %arg0, %arg1"));
    OK(tether_op_verify(payload));
    mlirFrozenRewritePatternSetDestroy(set);
  }
}

typedef struct {
  tether_op *op;
  int get_rc, calls;
} reentry;

static MlirLogicalResult reenter(MlirDiagnostic d, void *ud) {
  (void)d;
  reentry *r = ud;
  MlirOperation raw;
  r->get_rc = tether_op_get(r->op, &raw);
  r->calls++;
  return mlirLogicalResultFailure(); /* the arena's capture sees it too */
}

/* A diagnostic handler that runs meanwhile (here: the input's verification fails) cannot reach
 * the IR (TETHER_ERUNNING); afterwards it is usable. */
static void handles_refused_while_running(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *payload = parse(a, "module {}\n");
  MlirContext ctx = tether_arena_context(a);
  MlirType index = mlirIndexTypeGet(ctx);
  tether_op *c = create_op(a, "arith.constant", 0, NULL, 1, &index);
  append_to_body(payload, c);
  MlirFrozenRewritePatternSet set = freeze(patterns(a, kToMuli));
  reentry re = {c, 0, 0};
  MlirDiagnosticHandlerID id = mlirContextAttachDiagnosticHandler(ctx, reenter, &re, NULL);
  CHECK_RC(apply(payload, set, NULL), TETHER_EVERIFY);
  mlirContextDetachDiagnosticHandler(ctx, id);
  CHECK(re.calls >= 1 && re.get_rc == TETHER_ERUNNING);
  OK(tether_op_erase(c));
  OK(apply(payload, set, NULL));
  mlirFrozenRewritePatternSetDestroy(set);
}

int main(void) {
  RUN(apply_invalidates_what_it_replaced);
  RUN(patterns_compiled_before_their_dialect_loads);
  RUN(nested_module_payload);
  RUN(freeze_refusals);
  RUN(apply_refusals);
  RUN(crashing_rewrites_refused);
  RUN(handles_refused_while_running);
  DONE();
}
