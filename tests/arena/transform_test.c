/* The transform interpreter and symbol merging through the arena (tether_op_apply_transform,
 * tether_op_merge_symbols): the guarantees of tether_op_run_passes (refusals, revalidation,
 * identity), a script held in the payload's own tree, and a payload root the transforms replace. */
#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>

#include "check.h"

/* A function with a dead multiplication (canonicalization erases it) and a live addition. */
static const char *kPayload = "func.func @f(%x: i32) -> i32 {\n"
                              "  %0 = arith.addi %x, %x : i32\n"
                              "  %1 = arith.muli %0, %0 : i32\n"
                              "  return %0 : i32\n"
                              "}\n";

static const char *kCanonicalize =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n"
    "    %f = transform.structured.match ops{[\"func.func\"]} in %root\n"
    "      : (!transform.any_op) -> !transform.any_op\n"
    "    transform.apply_patterns to %f {\n"
    "      transform.apply_patterns.canonicalization\n"
    "    } : !transform.any_op\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

/* Replaces every operation named NAME (given as the first format argument) with test.dummy. */
static const char *kReplace =
    "module attributes {transform.with_named_sequence} {\n"
    "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n"
    "    %y = transform.structured.match ops{[\"%s\"]} in %root\n"
    "      : (!transform.any_op) -> !transform.any_op\n"
    "    %r = transform.structured.replace %y {\n"
    "      \"test.dummy\"() : () -> ()\n"
    "    } : (!transform.any_op) -> !transform.any_op\n"
    "    transform.yield\n"
    "  }\n"
    "}\n";

static tether_op *replace_script(tether_arena *a, const char *name) {
  char buf[1024];
  snprintf(buf, sizeof buf, kReplace, name);
  return parse(a, buf);
}

/* Canonicalization through the interpreter erases the dead muli: its handle is invalid (removed),
 * the function and the addi keep their handles and identity. */
static void transform_invalidates_what_it_removed(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *payload = parse(a, kPayload), *script = parse(a, kCanonicalize);
  tether_op *func = body_op(payload, 0);
  tether_op *add = body_op(func, 0), *mul = body_op(func, 1);
  OK(tether_op_apply_transform(payload, body_op(script, 0), script, NULL, 0));
  CHECK(!tether_handle_is_valid(mul));
  CHECK(tether_handle_reason(mul) == TETHER_REASON_REMOVED);
  CHECK(tether_handle_is_valid(func) && tether_handle_is_valid(add));
  CHECK(body_op(payload, 0) == func && body_op(func, 0) == add);
  CHECK(!prints_containing(payload, "arith.muli"));
  CHECK(prints_containing(payload, "arith.addi"));
  /* The script, in another tree, did not change. */
  CHECK(prints_containing(script, "transform.apply_patterns.canonicalization"));
  /* The options are passed on: with MLIR's checks off the result is the same. */
  tether_op *again = parse(a, kPayload);
  tether_transform_options o = {false, false};
  OK(tether_op_apply_transform(again, body_op(script, 0), script, &o, 0));
  CHECK(!prints_containing(again, "arith.muli"));
}

/* What the arena refuses before MLIR sees it, and MLIR's own refusals, as statuses with
 * diagnostics; nothing changes. */
static void transform_refusals(void) {
  tether_arena *a, *b;
  OK(tether_arena_create(&a));
  OK(tether_arena_create(&b));
  OK(tether_arena_allow_unregistered(a, true));
  tether_op *payload = parse(a, kPayload), *script = parse(a, kCanonicalize);
  tether_op *root = body_op(script, 0);
  CHECK_RC(tether_op_apply_transform(NULL, root, script, NULL, 0), TETHER_EARG);
  CHECK_RC(tether_op_apply_transform(payload, NULL, script, NULL, 0), TETHER_EARG);
  /* Another context's script. */
  tether_op *foreign = parse(b, kCanonicalize);
  CHECK_RC(tether_op_apply_transform(payload, body_op(foreign, 0), foreign, NULL, 0),
           TETHER_ECONTEXT);
  /* The root is no transform operation: MLIR's message. */
  CHECK_RC(tether_op_apply_transform(payload, payload, payload, NULL, 0), TETHER_EPASS);
  CHECK(error_mentions(a, "must implement TransformOpInterface to be used as transform root"));
  /* The module is no builtin.module. */
  CHECK_RC(tether_op_apply_transform(payload, root, root, NULL, 0), TETHER_EPASS);
  CHECK(error_mentions(a, "must be a builtin.module"));
  /* A detached transform root (MLIR would merge into a missing symbol table). */
  tether_op *lone = parse(a, kCanonicalize);
  tether_op *detached = body_op(lone, 0);
  OK(tether_op_detach(detached));
  CHECK_RC(tether_op_apply_transform(payload, detached, script, NULL, 0), TETHER_EPASS);
  CHECK(error_mentions(a, "must be nested in an operation"));
  /* Another tree uses a value of the payload's tree: a transform may erase it. */
  tether_op *add = body_op(body_op(payload, 0), 0);
  MlirValue sum = raw_result(add, 0);
  tether_op *user = create_op(a, "test.user", 1, &sum, 0, NULL);
  CHECK_RC(tether_op_apply_transform(payload, root, script, NULL, 0), TETHER_EBUSY);
  CHECK(prints_containing(payload, "arith.muli"));
  OK(tether_op_erase(user));
  /* A payload that does not verify (an arith.constant without its value). */
  MlirType i32 = mlirTypeParseGet(tether_arena_context(a), mlirStringRefCreateFromCString("i32"));
  tether_op *bad = create_op(a, "arith.constant", 0, NULL, 1, &i32);
  CHECK_RC(tether_op_apply_transform(bad, root, script, NULL, 0), TETHER_EVERIFY);
  /* A script that fails at run time: its diagnostics, and the payload is still usable. */
  const char *failing = "module attributes {transform.with_named_sequence} {\n"
                        "  transform.named_sequence @__transform_main(%r: !transform.any_op) {\n"
                        "    %f = transform.structured.match ops{[\"func.func\"]} in %r\n"
                        "      : (!transform.any_op) -> !transform.any_op\n"
                        "    %c = transform.cast %f : !transform.any_op to !transform.op<\"x.y\">\n"
                        "    transform.yield\n"
                        "  }\n"
                        "}\n";
  tether_op *fs = parse(a, failing);
  CHECK_RC(tether_op_apply_transform(payload, body_op(fs, 0), fs, NULL, 0), TETHER_EPASS);
  CHECK(error_mentions(a, "incompatible payload operation name"));
  CHECK(prints_containing(payload, "arith.muli"));
  /* Invalid handles. */
  tether_op *gone = parse(a, kPayload);
  tether_op *gone_func = body_op(gone, 0);
  OK(tether_op_erase(gone_func));
  CHECK_RC(tether_op_apply_transform(gone_func, root, script, NULL, 0), TETHER_EINVALID);
  OK(tether_op_apply_transform(payload, root, script, NULL, 0));
}

/* The script lives in the payload's module and replaces its own named_sequence: upstream's
 * bindings crash (MLIR interprets freed IR); here the script runs as a copy. The original
 * sequence is replaced in the payload and its handle is invalid. */
static void script_in_payload_runs_as_copy(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  OK(tether_arena_allow_unregistered(a, true));
  char buf[1200];
  snprintf(buf, sizeof buf,
           "module attributes {transform.with_named_sequence} {\n"
           "  func.func @f() { return }\n"
           "  transform.named_sequence @__transform_main(%%root: !transform.any_op) {\n"
           "    %%y = transform.structured.match ops{[\"transform.named_sequence\"]} in %%root\n"
           "      : (!transform.any_op) -> !transform.any_op\n"
           "    %%r = transform.structured.replace %%y {\n"
           "      \"test.dummy\"() : () -> ()\n"
           "    } : (!transform.any_op) -> !transform.any_op\n"
           "    transform.yield\n"
           "  }\n"
           "}\n");
  tether_op *m = parse(a, buf);
  tether_op *func = body_op(m, 0), *seq = body_op(m, 1);
  OK(tether_op_apply_transform(m, seq, m, NULL, 0));
  CHECK(!tether_handle_is_valid(seq));
  CHECK(tether_handle_is_valid(func) && body_op(m, 0) == func);
  CHECK(prints_containing(m, "test.dummy"));
  CHECK(!prints_containing(m, "transform.named_sequence"));
}

/* A transform replaces the payload's root operation, which MLIR frees: the handle is invalid,
 * nothing reads freed memory. */
static void replaced_payload_root(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  OK(tether_arena_allow_unregistered(a, true));
  tether_op *payload = parse(a, kPayload), *script = replace_script(a, "builtin.module");
  tether_op *func = body_op(payload, 0);
  OK(tether_op_apply_transform(payload, body_op(script, 0), script, NULL, 0));
  CHECK(tether_handle_reason(payload) == TETHER_REASON_REMOVED);
  CHECK(tether_handle_reason(func) == TETHER_REASON_REMOVED);
  tether_collect(a);
  /* A root that survives is a root again, with its identity. */
  tether_op *p2 = parse(a, kPayload);
  tether_op *f2 = body_op(p2, 0);
  tether_op *s2 = replace_script(a, "func.func");
  OK(tether_op_apply_transform(p2, body_op(s2, 0), s2, NULL, 0));
  bool is_root = false;
  OK(tether_op_is_root(p2, &is_root));
  CHECK(is_root && tether_handle_is_valid(p2));
  CHECK(tether_handle_reason(f2) == TETHER_REASON_REMOVED);
  CHECK(prints_containing(p2, "test.dummy"));
}

static const char *kMain = "module attributes {transform.with_named_sequence} {\n"
                           "  transform.named_sequence private @callee(%r: !transform.any_op "
                           "{transform.readonly})\n"
                           "  transform.named_sequence @__transform_main(%r: !transform.any_op) {\n"
                           "    transform.include @callee failures(propagate) (%r)\n"
                           "      : (!transform.any_op) -> ()\n"
                           "    transform.yield\n"
                           "  }\n"
                           "}\n";

static const char *kCallee = "module attributes {transform.with_named_sequence} {\n"
                             "  transform.named_sequence @callee(%r: !transform.any_op "
                             "{transform.readonly}) {\n"
                             "    transform.yield\n"
                             "  }\n"
                             "}\n";

/* Merging replaces the declaration by the definition: the declaration's handle is invalid, the
 * other keeps its identity; other does not change; a second merge is refused by MLIR. */
static void merge_symbols(void) {
  tether_arena *a, *b;
  OK(tether_arena_create(&a));
  OK(tether_arena_create(&b));
  tether_op *main = parse(a, kMain), *callee = parse(a, kCallee);
  tether_op *decl = body_op(main, 0), *entry = body_op(main, 1);
  OK(tether_op_merge_symbols(main, callee));
  CHECK(tether_handle_reason(decl) == TETHER_REASON_REMOVED);
  CHECK(tether_handle_is_valid(entry) && body_op(main, 0) == entry);
  CHECK(prints_containing(main, "transform.named_sequence @callee("));
  CHECK(prints_containing(callee, "@callee"));
  CHECK_RC(tether_op_merge_symbols(main, callee), TETHER_EPASS);
  CHECK(error_mentions(a, "doubly defined symbol @callee"));
  /* The merged script runs. */
  tether_op *payload = parse(a, kPayload);
  OK(tether_op_apply_transform(payload, entry, main, NULL, 0));
  /* Not symbol tables; another context; invalid and missing handles. */
  CHECK_RC(tether_op_merge_symbols(main, entry), TETHER_EPASS);
  CHECK(error_mentions(a, "SymbolTable trait"));
  CHECK_RC(tether_op_merge_symbols(entry, main), TETHER_EPASS);
  CHECK_RC(tether_op_merge_symbols(main, parse(b, kCallee)), TETHER_ECONTEXT);
  CHECK_RC(tether_op_merge_symbols(main, decl), TETHER_EINVALID);
  CHECK_RC(tether_op_merge_symbols(NULL, main), TETHER_EARG);
}

/* A transform module that does not hold the root is merged into the root's symbol table first,
 * as MLIR does; the root's tree is revalidated (the declaration is replaced). */
static void transform_module_merged_into_root_table(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *main = parse(a, kMain), *callee = parse(a, kCallee), *payload = parse(a, kPayload);
  tether_op *decl = body_op(main, 0), *entry = body_op(main, 1);
  OK(tether_op_apply_transform(payload, entry, callee, NULL, 0));
  CHECK(tether_handle_reason(decl) == TETHER_REASON_REMOVED);
  CHECK(tether_handle_is_valid(entry));
  CHECK(prints_containing(main, "transform.named_sequence @callee("));
  /* The same with the script in the payload's own tree (it then runs as a copy). */
  tether_op *main2 = parse(a, kMain), *callee2 = parse(a, kCallee);
  tether_op *decl2 = body_op(main2, 0);
  OK(tether_op_apply_transform(main2, body_op(main2, 1), callee2, NULL, 0));
  CHECK(tether_handle_reason(decl2) == TETHER_REASON_REMOVED);
  CHECK(prints_containing(main2, "transform.named_sequence @callee("));
}

typedef struct {
  tether_op *op;
  int get_rc, erase_rc, calls;
} reentry;

static MlirLogicalResult reenter(MlirDiagnostic d, void *ud) {
  (void)d;
  reentry *r = ud;
  MlirOperation raw;
  r->get_rc = tether_op_get(r->op, &raw);
  r->erase_rc = tether_op_erase(r->op);
  r->calls++;
  return mlirLogicalResultSuccess();
}

/* A diagnostic handler runs while the interpreter runs (a remark here): the IR it could reach is
 * refused (TETHER_ERUNNING), so it cannot free what MLIR is using; afterwards all is usable. */
static void handles_refused_while_running(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *payload = parse(a, kPayload);
  const char *remark = "module attributes {transform.with_named_sequence} {\n"
                       "  transform.named_sequence @__transform_main(%r: !transform.any_op) {\n"
                       "    %f = transform.structured.match ops{[\"func.func\"]} in %r\n"
                       "      : (!transform.any_op) -> !transform.any_op\n"
                       "    transform.debug.emit_remark_at %f, \"here\" : !transform.any_op\n"
                       "    transform.print %f : !transform.any_op\n"
                       "    transform.yield\n"
                       "  }\n"
                       "}\n";
  tether_op *script = parse(a, remark);
  reentry r = {body_op(payload, 0), 0, 0, 0};
  MlirDiagnosticHandlerID id =
      mlirContextAttachDiagnosticHandler(tether_arena_context(a), reenter, &r, NULL);
  OK(tether_op_apply_transform(payload, body_op(script, 0), script, NULL, 0));
  mlirContextDetachDiagnosticHandler(tether_arena_context(a), id);
  CHECK(r.calls == 1);
  CHECK(r.get_rc == TETHER_ERUNNING && r.erase_rc == TETHER_ERUNNING);
  CHECK(tether_handle_is_valid(r.op));
  OK(tether_op_erase(r.op));
  CHECK(!prints_containing(payload, "func.func"));
}

int main(void) {
  RUN(transform_invalidates_what_it_removed);
  RUN(transform_refusals);
  RUN(script_in_payload_runs_as_copy);
  RUN(replaced_payload_root);
  RUN(merge_symbols);
  RUN(transform_module_merged_into_root_table);
  RUN(handles_refused_while_running);
  DONE();
}
