/* The ownership rules (docs/ARCHITECTURE.md, docs/ownership.md), one test each, and the structural
 * operations that move ownership. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Pass.h>
#include <mlir-c/Transforms.h>

#include "check.h"

#include <sys/resource.h>
#include <unistd.h>

static const char *kModule = "func.func @f(%x: i32) -> i32 {\n"
                             "  %0 = arith.addi %x, %x : i32\n"
                             "  %1 = arith.muli %0, %0 : i32\n"
                             "  return %0 : i32\n"
                             "}\n";

static __attribute__((noinline)) tether_type *type_only(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_type *t;
  OK(tether_type_parse(a, "tensor<4xf32>", 13, &t));
  return t;
}

/* Rule 1: a type handle keeps its context alive. */
static void type_outlives_arena_handle(void) {
  tether_type *t = type_only();
  tether_collect(NULL);
  MlirType raw;
  OK(tether_type_get(t, &raw));
  CHECK(mlirTypeIsARankedTensor(raw));
  CHECK(mlirShapedTypeGetDimSize(raw, 0) == 4);
  tether_arena *a = tether_type_arena(t);
  CHECK(a && !mlirContextIsNull(tether_arena_context(a)));
  CHECK(mlirContextEqual(mlirTypeGetContext(raw), tether_arena_context(a)));
  tether_keep_alive(t);
}

static __attribute__((noinline)) void make_and_drop_arena(void) {
  tether_type *t = type_only();
  CHECK(t);
}

static void dropped_arenas_are_destroyed(void) {
  tether_global_stats before, after;
  tether_collect(NULL);
  tether_get_global_stats(&before);
  for (int i = 0; i < 30; i++) make_and_drop_arena();
  tether_collect(NULL);
  tether_get_global_stats(&after);
  printf("  arenas: %ld before, %ld after creating and dropping 30\n", (long)before.arenas,
         (long)after.arenas);
  CHECK(after.arenas <= before.arenas + 3);
}

static __attribute__((noinline)) tether_op *grandchild_only(tether_arena *a) {
  tether_op *m = parse(a, kModule);
  return body_op(body_op(m, 0), 1); /* arith.muli inside func inside module */
}

/* Rule 2: a child keeps its grandparent alive. */
static void grandchild_keeps_module_alive(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *mul = grandchild_only(a);
  tether_collect(a);
  CHECK(stats(a).roots == 1);
  tether_op *func, *module, *none;
  OK(tether_op_parent(mul, &func));
  OK(tether_op_parent(func, &module));
  OK(tether_op_parent(module, &none));
  CHECK(none == NULL);
  CHECK(prints_containing(module, "arith.muli"));
  CHECK(prints_containing(func, "func.func @f"));
}

/* Returns only the func handle: the module handle dies with this frame. */
static __attribute__((noinline)) tether_op *parse_and_keep_func(tether_arena *a) {
  tether_op *m = parse(a, kModule);
  return body_op(m, 0);
}

/* Rule 2: a child keeps its module alive through collections. */
static void child_keeps_module_alive(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *func = parse_and_keep_func(a);
  for (int i = 0; i < 3; i++) tether_collect(a);
  /* The module cannot have been destroyed: func reaches it. */
  CHECK(stats(a).roots == 1);
  CHECK(stats(a).destroyed == 0);
  CHECK(prints_containing(func, "func.func @f(%arg0: i32) -> i32"));
  tether_op *parent;
  OK(tether_op_parent(func, &parent));
  CHECK(parent != NULL);
  CHECK(prints_containing(parent, "module {"));
  bool root;
  OK(tether_op_is_root(parent, &root));
  CHECK(root);
  tether_keep_alive(func);
}

/* Rule 2, the other way: dropping the child too destroys the module. Robust against conservative
 * retention: repeat many times and require that at most a few modules survive. */
static __attribute__((noinline)) void parse_drop_one(tether_arena *a) {
  tether_op *func = parse_and_keep_func(a);
  CHECK(prints_containing(func, "arith.addi"));
}

static void dropping_child_destroys_module(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  enum { N = 200 };
  for (int i = 0; i < N; i++) parse_drop_one(a);
  tether_collect(a);
  tether_arena_stats s = stats(a);
  printf("  after %d dropped modules: %ld live roots, %ld destroyed\n", N, (long)s.roots,
         (long)s.destroyed);
  CHECK(s.roots <= 4);
  CHECK(s.destroyed >= N - 4);
  CHECK(s.handles[TETHER_KIND_OP] <= 4 * 4);
}

/* Rule 4: a region and a block created off the context, filled, attached; ownership moves. */
static void detached_region_and_block_attach(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  MlirContext ctx = tether_arena_context(a);
  MlirType i32 = mlirIntegerTypeGet(ctx, 32);
  MlirLocation loc = mlirLocationUnknownGet(ctx);

  tether_region *region;
  tether_block *block;
  OK(tether_region_create(a, &region));
  OK(tether_block_create(a, 1, &i32, NULL, &block));
  CHECK(stats(a).roots == 2);
  tether_region *none_r;
  OK(tether_block_parent(block, &none_r));
  CHECK(none_r == NULL);

  /* return %arg0, created as a root, appended to the detached block. */
  tether_value *arg;
  OK(tether_block_arg(block, 0, &arg));
  MlirValue argv;
  OK(tether_value_get(arg, &argv));
  MlirOperationState rs = mlirOperationStateGet(mlirStringRefCreateFromCString("func.return"), loc);
  rs.nOperands = 1;
  rs.operands = &argv;
  tether_op *ret;
  OK(tether_op_create(a, &rs, &ret));
  CHECK(stats(a).roots == 3);
  OK(tether_block_append_op(block, ret));
  CHECK(stats(a).roots == 2);
  CHECK_RC(tether_block_append_op(block, ret), TETHER_ESTATE); /* no longer a root */

  OK(tether_region_append_block(region, block));
  CHECK(stats(a).roots == 1);
  tether_region *parent_r;
  OK(tether_block_parent(block, &parent_r));
  CHECK(parent_r == region);

  /* func.func @g(%arg0: i32) -> i32 owning the region. */
  MlirType fty = mlirFunctionTypeGet(ctx, 1, &i32, 1, &i32);
  MlirNamedAttribute attrs[2] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, mlirStringRefCreateFromCString("sym_name")),
                            mlirStringAttrGet(ctx, mlirStringRefCreateFromCString("g"))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, mlirStringRefCreateFromCString("function_type")),
                            mlirTypeAttrGet(fty)),
  };
  MlirRegion rraw;
  OK(tether_region_get(region, &rraw));
  MlirOperationState fs = mlirOperationStateGet(mlirStringRefCreateFromCString("func.func"), loc);
  fs.nAttributes = 2;
  fs.attributes = attrs;
  fs.nRegions = 1;
  fs.regions = &rraw;
  tether_op *func;
  OK(tether_op_create(a, &fs, &func));
  CHECK(stats(a).roots == 1); /* the region's tree merged into the func's */

  /* The region handle now stands for the func's region; the block and op keep their identity. */
  tether_region *r0;
  OK(tether_op_region(func, 0, &r0));
  CHECK(r0 == region);
  tether_op *owner;
  OK(tether_region_parent(region, &owner));
  CHECK(owner == func);
  tether_block *b0;
  OK(tether_region_first_block(region, &b0));
  CHECK(b0 == block);
  tether_op *first;
  OK(tether_block_first_op(block, &first));
  CHECK(first == ret);
  tether_op *pr;
  OK(tether_op_parent(ret, &pr));
  CHECK(pr == func);

  /* Into a module. */
  tether_op *m;
  OK(tether_module_create(a, NULL, &m));
  tether_region *mr;
  tether_block *mb;
  OK(tether_op_region(m, 0, &mr));
  OK(tether_region_first_block(mr, &mb));
  OK(tether_block_append_op(mb, func));
  CHECK(stats(a).roots == 1);
  OK(tether_op_verify(m));
  CHECK(prints_containing(m, "func.func @g(%arg0: i32) -> i32"));
  CHECK(prints_containing(m, "return %arg0 : i32"));

  /* Attaching twice, or into itself, is refused. */
  CHECK_RC(tether_region_append_block(region, block), TETHER_ESTATE);
  CHECK_RC(tether_block_append_op(mb, m), TETHER_EARG);      /* into itself */
  CHECK_RC(tether_block_append_op(mb, func), TETHER_ESTATE); /* not a root */
}

/* Rule 6: erasing a parent while holding a child. */
static void erase_parent_invalidates_child(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  tether_op *func = body_op(m, 0);
  tether_op *add = body_op(func, 0);
  tether_value *v;
  OK(tether_op_result(add, 0, &v));
  tether_region *r;
  OK(tether_op_region(func, 0, &r));
  OK(tether_op_erase(func));
  CHECK(tether_handle_reason(func) == TETHER_REASON_ERASED);
  CHECK(tether_handle_reason(add) == TETHER_REASON_PARENT_ERASED);
  CHECK(tether_handle_reason(v) == TETHER_REASON_PARENT_ERASED);
  CHECK(tether_handle_reason(r) == TETHER_REASON_PARENT_ERASED);
  MlirOperation raw;
  CHECK_RC(tether_op_get(add, &raw), TETHER_EINVALID);
  tether_op *o;
  CHECK_RC(tether_op_parent(add, &o), TETHER_EINVALID);
  CHECK_RC(tether_op_erase(add), TETHER_EINVALID);
  CHECK_RC(tether_op_detach(func), TETHER_EINVALID);
  CHECK(print_op(add) == NULL);
  CHECK(tether_handle_arena(add) == NULL);
  /* The module lives on, empty. */
  intptr_t n;
  tether_block *b;
  tether_region *mr;
  OK(tether_op_region(m, 0, &mr));
  OK(tether_region_first_block(mr, &b));
  OK(tether_block_num_ops(b, &n));
  CHECK(n == 0);
  /* Erasing the root erases everything. */
  OK(tether_op_erase(m));
  CHECK(tether_handle_reason(m) == TETHER_REASON_ERASED);
  CHECK(tether_handle_reason(b) == TETHER_REASON_PARENT_ERASED);
  CHECK(stats(a).roots == 0);
}

static void erase_refused_while_results_used(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  tether_op *func = body_op(m, 0);
  tether_op *add = body_op(func, 0);
  CHECK_RC(tether_op_erase(add), TETHER_EBUSY);
  CHECK(tether_handle_is_valid(add));
  OK(tether_op_verify(m));
  tether_op *mul = body_op(func, 1);
  OK(tether_op_erase(mul)); /* unused */
  CHECK(!prints_containing(m, "muli"));
}

static __attribute__((noinline)) tether_op *detach_second(tether_arena *a) {
  tether_op *m = parse(a, kModule);
  tether_op *func = body_op(m, 0);
  tether_op *mul = body_op(func, 1);
  OK(tether_op_detach(mul));
  bool root;
  OK(tether_op_is_root(mul, &root));
  CHECK(root);
  tether_op *p;
  OK(tether_op_parent(mul, &p));
  CHECK(p == NULL);
  return mul;
}

/* A detached op is a root of its own; it uses a value of the module, so it keeps it alive. */
static void detached_op_is_a_root(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *mul = detach_second(a);
  tether_collect(a);
  CHECK(stats(a).roots == 2);
  CHECK(prints_containing(mul, "arith.muli"));
  tether_value *opnd;
  OK(tether_op_operand(mul, 0, &opnd));
  tether_op *def;
  OK(tether_value_owner_op(opnd, &def));
  CHECK(prints_containing(def, "arith.addi"));
  tether_keep_alive(mul);
}

static __attribute__((noinline)) tether_op *detach_unused_return(tether_arena *a) {
  tether_op *m = parse(a, "func.func private @a()\nfunc.func private @b()\n");
  tether_op *b = body_op(m, 1);
  OK(tether_op_detach(b));
  return b;
}

/* Detach, then drop the old parent: the parent is destroyed, the detached op lives. */
static void detach_then_drop_parent(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *b = detach_unused_return(a);
  COLLECT_UNTIL(a, stats(a).roots == 1);
  CHECK(stats(a).roots == 1);
  CHECK(stats(a).destroyed == 1);
  CHECK(prints_containing(b, "func.func private @b()"));
  tether_keep_alive(b);
}

static void move_between_trees(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m1 = parse(a, "func.func private @a()\nfunc.func private @b()\n");
  tether_op *m2 = parse(a, "func.func private @c()\n");
  tether_op *fa = body_op(m1, 0), *fc = body_op(m2, 0);
  OK(tether_op_move_after(fa, fc));
  tether_op *p;
  OK(tether_op_parent(fa, &p));
  CHECK(p == m2);
  CHECK(body_op(m2, 1) == fa);
  CHECK(prints_containing(m2, "@a"));
  CHECK(!prints_containing(m1, "@a"));
  CHECK_RC(tether_op_move_before(m2, fc), TETHER_EARG); /* into itself */
  CHECK_RC(tether_op_move_before(fa, fa), TETHER_EARG);
  /* A root moved in becomes part of the tree. */
  tether_op *m3 = parse(a, "func.func private @d()\n");
  CHECK(stats(a).roots == 3);
  tether_op *fd = body_op(m3, 0);
  OK(tether_op_detach(fd));
  OK(tether_op_move_before(fd, fc));
  CHECK(body_op(m2, 0) == fd);
  OK(tether_op_verify(m2));
}

static void clone_is_independent(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  tether_op *c;
  OK(tether_op_clone(m, &c));
  CHECK(c != m);
  CHECK(stats(a).roots == 2);
  OK(tether_op_erase(m));
  CHECK(prints_containing(c, "arith.muli"));
  OK(tether_op_verify(c));
}

static void passes_invalidate_removed_ops(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  tether_op *func = body_op(m, 0);
  tether_op *add = body_op(func, 0);
  tether_op *mul = body_op(func, 1); /* dead: canonicalize removes it */
  tether_value *mulres;
  OK(tether_op_result(mul, 0, &mulres));
  MlirPassManager pm = mlirPassManagerCreate(tether_arena_context(a));
  CHECK(mlirLogicalResultIsSuccess(
      mlirParsePassPipeline(mlirPassManagerGetAsOpPassManager(pm),
                            mlirStringRefCreateFromCString("builtin.module(canonicalize)"),
                            strbuf_append, &(strbuf){NULL, 0, 0})));
  OK(tether_op_run_passes(m, pm));
  CHECK(tether_handle_reason(mul) == TETHER_REASON_REMOVED);
  CHECK(tether_handle_reason(mulres) == TETHER_REASON_REMOVED);
  CHECK(tether_handle_is_valid(add));
  CHECK(body_op(func, 0) == add); /* identity kept */
  CHECK(!prints_containing(m, "muli"));
  /* A pipeline that fails reports it and revalidates anyway. */
  MlirPassManager bad = mlirPassManagerCreateOnOperation(
      tether_arena_context(a), mlirStringRefCreateFromCString("func.func"));
  CHECK_RC(tether_op_run_passes(m, bad), TETHER_EPASS);
  CHECK(strlen(tether_arena_last_error(a)) > 0);
  mlirPassManagerDestroy(pm);
  mlirPassManagerDestroy(bad);
}

static __attribute__((noinline)) tether_op *op_using_value_of_dropped_module(tether_arena *a) {
  tether_op *m = parse(a, kModule);
  tether_op *add = body_op(body_op(m, 0), 0);
  tether_value *v;
  OK(tether_op_result(add, 0, &v));
  MlirValue raw;
  OK(tether_value_get(v, &raw));
  MlirOperationState s = mlirOperationStateGet(mlirStringRefCreateFromCString("arith.addi"),
                                               mlirLocationUnknownGet(tether_arena_context(a)));
  MlirValue ops[2] = {raw, raw};
  s.nOperands = 2;
  s.operands = ops;
  s.enableResultTypeInference = true;
  tether_op *n;
  OK(tether_op_create(a, &s, &n));
  return n;
}

/* An op whose operands live in another root keeps that root alive (else destroying it would
 * leave the op with dangling operands). */
static void cross_root_operands_keep_root_alive(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *n = op_using_value_of_dropped_module(a);
  tether_collect(a);
  CHECK(stats(a).roots == 2);
  CHECK(prints_containing(n, "arith.addi"));
  tether_value *r;
  OK(tether_op_result(n, 0, &r));
  MlirValue rv;
  OK(tether_value_get(r, &rv));
  CHECK(mlirTypeEqual(mlirValueGetType(rv), mlirIntegerTypeGet(tether_arena_context(a), 32)));
  tether_keep_alive(n);
}

/* Many roots that use values of other roots, all dropped at once: the arena destroys users before
 * the roots they use (else destroying an operation would touch freed use-lists), then all of them.
 */
static __attribute__((noinline)) void make_dependent_pairs(tether_arena *a, int n) {
  for (int i = 0; i < n; i++) {
    tether_op *user = op_using_value_of_dropped_module(a);
    CHECK(user != NULL);
  }
}

static void dependent_roots_are_destroyed_users_first(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  enum { N = 50 };
  make_dependent_pairs(a, N);
  COLLECT_UNTIL(a, stats(a).roots <= 2);
  tether_arena_stats s = stats(a);
  printf("  %d users of %d other roots dropped: %ld roots left, %ld destroyed, %ld stuck\n", N, N,
         (long)s.roots, (long)s.destroyed, (long)s.stuck);
  CHECK(s.roots <= 2);
  CHECK(s.destroyed >= 2 * N - 2);
  CHECK(s.stuck == 0);
}

static void bad_input_is_an_error(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = NULL;
  CHECK_RC(tether_module_parse(a, "func.func @", 11, &m), TETHER_EPARSE);
  CHECK(m == NULL);
  CHECK(strstr(tether_arena_last_error(a), "error") != NULL);
  CHECK_RC(tether_module_parse(NULL, "x", 1, &m), TETHER_EARG);
  CHECK_RC(tether_module_parse(a, NULL, 1, &m), TETHER_EARG);
  CHECK_RC(tether_module_parse(a, "x", 1, NULL), TETHER_EARG);
  tether_op *o;
  CHECK_RC(tether_op_parent(NULL, &o), TETHER_EARG);
  CHECK_RC(tether_op_erase(NULL), TETHER_EARG);
  MlirOperation raw;
  CHECK_RC(tether_op_get(NULL, &raw), TETHER_EARG);
  tether_type *t;
  CHECK_RC(tether_type_parse(a, "i33x", 4, &t), TETHER_EPARSE);
  m = parse(a, kModule);
  CHECK_RC(tether_op_region(m, 5, &(tether_region *){0}), TETHER_ERANGE);
  CHECK_RC(tether_op_result(m, 0, &(tether_value *){0}), TETHER_ERANGE);
  tether_block *b;
  CHECK_RC(tether_region_block(NULL, 0, &b), TETHER_EARG);
  /* Values from another context are refused. */
  tether_arena *other;
  OK(tether_arena_create(&other));
  MlirOperationState s = mlirOperationStateGet(mlirStringRefCreateFromCString("test.op"),
                                               mlirLocationUnknownGet(tether_arena_context(other)));
  CHECK_RC(tether_op_create(a, &s, &o), TETHER_ECONTEXT);
  tether_op *om = parse(other, kModule);
  CHECK_RC(tether_op_move_before(body_op(om, 0), body_op(m, 0)), TETHER_ECONTEXT);
  /* Inference on an op without the interface fails cleanly. */
  MlirOperationState s2 = mlirOperationStateGet(mlirStringRefCreateFromCString("test.unknown"),
                                                mlirLocationUnknownGet(tether_arena_context(a)));
  s2.enableResultTypeInference = true;
  CHECK_RC(tether_op_create(a, &s2, &o), TETHER_EARG);
  /* A region handed over twice is refused before anything is consumed. */
  tether_region *r;
  OK(tether_region_create(a, &r));
  MlirRegion rr[2];
  OK(tether_region_get(r, &rr[0]));
  rr[1] = rr[0];
  MlirOperationState s3 = mlirOperationStateGet(mlirStringRefCreateFromCString("test.two"),
                                                mlirLocationUnknownGet(tether_arena_context(a)));
  s3.nRegions = 2;
  s3.regions = rr;
  CHECK_RC(tether_op_create(a, &s3, &o), TETHER_EARG);
  CHECK(tether_handle_is_valid(r));
}

static int count_cb(tether_op *op, void *ud) {
  (void)op;
  ++*(int *)ud;
  return 0;
}

static int erase_muli_cb(tether_op *op, void *ud) {
  (void)ud;
  MlirOperation raw;
  if (tether_op_get(op, &raw) != TETHER_OK) return 1;
  if (mlirStringRefEqual(mlirIdentifierStr(mlirOperationGetName(raw)),
                         mlirStringRefCreateFromCString("arith.muli")))
    return tether_op_erase(op);
  return 0;
}

static void walk_visits_and_tolerates_mutation(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  int n = 0;
  OK(tether_op_walk(m, TETHER_WALK_PRE_ORDER, count_cb, &n));
  CHECK(n == 5); /* module, func, addi, muli, return */
  OK(tether_op_walk(m, TETHER_WALK_POST_ORDER, erase_muli_cb, NULL));
  CHECK(!prints_containing(m, "muli"));
  n = 0;
  OK(tether_op_walk(m, TETHER_WALK_PRE_ORDER, count_cb, &n));
  CHECK(n == 4);
}

static void wrap_raw_pointers(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  tether_op *func = body_op(m, 0);
  MlirOperation raw;
  OK(tether_op_get(func, &raw));
  tether_op *w;
  OK(tether_op_wrap(a, raw, &w));
  CHECK(w == func);
  MlirOperation add =
      mlirBlockGetFirstOperation(mlirRegionGetFirstBlock(mlirOperationGetRegion(raw, 0)));
  OK(tether_op_wrap(a, add, &w));
  CHECK(w == body_op(func, 0));
  tether_arena *other;
  OK(tether_arena_create(&other));
  CHECK_RC(tether_op_wrap(other, add, &w), TETHER_EARG);
}

/* tether_probe: a call that crashes in the child is refused, one that returns is allowed; the
 * verdict is cached per key (the second call does not run fn at all: the counter of a call made in
 * this process would move, a child's cannot). */
static int probe_calls;
static void probe_returns(void *ud) { ++*(int *)ud; }
static void probe_crashes(void *ud) {
  (void)ud;
  abort();
}

static void probe_hangs(void *ud) {
  (void)ud;
  for (;;) pause();
}

/* In a trial's child, data may grow by what the process had (at least 1 GiB) and no more: an
 * allocation of the whole limit fails, as MLIR's would fail out of memory (a verdict), instead of
 * taking the machine's memory (a trial of a tosa op with a garbage rank held 11 GB). */
#if !defined(__SANITIZE_ADDRESS__) /* its shadow memory is data: no limit there */
static void probe_allocates_past_its_limit(void *ud) {
  (void)ud;
  struct rlimit r;
  if (getrlimit(RLIMIT_DATA, &r) != 0 || r.rlim_cur == RLIM_INFINITY) abort();
  void *p = malloc((size_t)r.rlim_cur);
  if (p) abort();
}
#endif

static void trials_have_bounded_memory(void) {
#if !defined(__SANITIZE_ADDRESS__) /* its shadow memory is data: no limit there */
  CHECK(tether_probe("alloc", 5, probe_allocates_past_its_limit, NULL) == 1);
  struct rlimit before, after;
  CHECK(getrlimit(RLIMIT_DATA, &before) == 0);
  CHECK(tether_probe("alloc2", 6, probe_returns, &probe_calls) == 1);
  CHECK(getrlimit(RLIMIT_DATA, &after) == 0 && after.rlim_cur == before.rlim_cur);
#endif
}

static void probe_runs_calls_in_a_child_once_per_key(void) {
  CHECK(tether_probe("ok", 2, probe_returns, &probe_calls) == 1);
  CHECK(probe_calls == 0); /* it ran in the child */
  CHECK(tether_probe("crash", 5, probe_crashes, NULL) == 0);
  CHECK(tether_probe("crash", 5, probe_returns, &probe_calls) == 0); /* cached: not run again */
  CHECK(tether_probe("ok", 2, probe_crashes, NULL) == 1);
  /* A call that hangs is killed (after 5 s) and refused, and so is every later call of its key:
   * the answer does not change with the machine's load. */
  CHECK(tether_probe("hang", 4, probe_hangs, NULL) == 0);
  CHECK(tether_probe("hang", 4, probe_returns, &probe_calls) == 0);
  CHECK(tether_probe(NULL, 3, probe_returns, NULL) == -1);
  CHECK(tether_probe("x", 1, NULL, NULL) == -1);
}

/* tether_op_create_from: operands and successors as handles, at a block or as a root. */
static __attribute__((noinline)) tether_op *root_from_handles_of_dropped_module(tether_arena *a) {
  tether_op *m = parse(a, kModule);
  tether_value *v;
  OK(tether_op_result(body_op(body_op(m, 0), 0), 0, &v));
  MlirOperationState s = mlirOperationStateGet(mlirStringRefCreateFromCString("arith.addi"),
                                               mlirLocationUnknownGet(tether_arena_context(a)));
  s.nOperands = 2; /* s.operands stays NULL: the handles are the operands */
  s.enableResultTypeInference = true;
  tether_value *ops[2] = {v, v};
  tether_op *n;
  OK(tether_op_create_from(a, &s, ops, NULL, NULL, NULL, &n));
  return n;
}

static void create_from_handles(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  /* A root whose operands live in another root keeps that root alive, as tether_op_create. */
  tether_op *n = root_from_handles_of_dropped_module(a);
  tether_collect(a);
  CHECK(stats(a).roots == 2);
  CHECK(prints_containing(n, "arith.addi"));

  /* At a block, before an operation: the new op uses a block argument and an earlier result. */
  tether_op *m = parse(a, kModule);
  tether_op *func = body_op(m, 0), *ret = body_op(func, 2), *mul = body_op(func, 1);
  tether_block *entry;
  OK(tether_op_block(ret, &entry));
  tether_value *x, *add0, *mul0;
  OK(tether_block_arg(entry, 0, &x));
  OK(tether_op_result(body_op(func, 0), 0, &add0));
  OK(tether_op_result(mul, 0, &mul0));
  MlirContext ctx = tether_arena_context(a);
  MlirType i32 = mlirIntegerTypeGet(ctx, 32);
  MlirOperationState s = mlirOperationStateGet(mlirStringRefCreateFromCString("arith.subi"),
                                               mlirLocationUnknownGet(ctx));
  s.nOperands = 2;
  s.nResults = 1;
  s.results = &i32;
  tether_value *ops[2] = {x, add0};
  tether_op *sub;
  OK(tether_op_create_from(a, &s, ops, NULL, entry, ret, &sub));
  CHECK(body_op(func, 2) == sub);
  CHECK(prints_containing(m, "arith.subi %arg0, %0 : i32"));

  /* Bad input: an invalid operand, a handle of the wrong kind, another arena's value, missing
   * arrays. Nothing is created. */
  OK(tether_op_erase(mul)); /* %1 had no users */
  CHECK(!tether_handle_is_valid(mul0));
  ops[1] = mul0;
  CHECK_RC(tether_op_create_from(a, &s, ops, NULL, entry, ret, &sub), TETHER_EINVALID);
  ops[1] = (tether_value *)func;
  CHECK_RC(tether_op_create_from(a, &s, ops, NULL, entry, ret, &sub), TETHER_EARG);
  ops[1] = NULL;
  CHECK_RC(tether_op_create_from(a, &s, ops, NULL, entry, ret, &sub), TETHER_EARG);
  tether_arena *other;
  OK(tether_arena_create(&other));
  tether_op *om = parse(other, kModule);
  tether_value *ox;
  tether_block *oentry;
  OK(tether_op_block(body_op(body_op(om, 0), 0), &oentry));
  OK(tether_block_arg(oentry, 0, &ox));
  ops[1] = ox;
  CHECK_RC(tether_op_create_from(a, &s, ops, NULL, entry, ret, &sub), TETHER_ECONTEXT);
  CHECK_RC(tether_op_create_from(a, &s, NULL, NULL, entry, ret, &sub), TETHER_EARG);
  s.nSuccessors = 1;
  ops[1] = add0;
  CHECK_RC(tether_op_create_from(a, &s, ops, NULL, entry, ret, &sub), TETHER_EARG);
  tether_block *succ[1] = {(tether_block *)add0}; /* a value where a block belongs */
  CHECK_RC(tether_op_create_from(a, &s, ops, succ, entry, ret, &sub), TETHER_EARG);
  CHECK(prints_containing(m, "arith.subi"));
  tether_keep_alive(om);
  tether_keep_alive(n);
}

/* A handle reachable only from malloc memory through a pin pool stays alive; unpinned, it is
 * counted out. */
static __attribute__((noinline)) uintptr_t hidden_module(tether_arena *a, tether_pin_pool *pool,
                                                         intptr_t *slot) {
  tether_op *m = parse(a, kModule);
  *slot = tether_pool_pin(pool, m);
  return ~(uintptr_t)m; /* not a pointer the collector recognizes */
}

static void pin_pools_keep_handles_alive(void) {
  tether_pin_pool *pool = tether_pin_pool_new();
  CHECK(pool);
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_global_stats before, after;
  tether_get_global_stats(&before);
  intptr_t slots[3000];
  uintptr_t hidden = hidden_module(a, pool, &slots[0]);
  CHECK(slots[0] >= 0);
  /* Enough pins that the pool's table grows (it starts at 1024) while one is held. */
  for (int i = 1; i < 3000; i++) {
    slots[i] = tether_pool_pin(pool, a);
    CHECK(slots[i] >= 0);
  }
  tether_collect(a);
  tether_op *m = (tether_op *)~hidden;
  CHECK(tether_handle_is_valid(m));
  CHECK(prints_containing(m, "arith.muli"));
  tether_get_global_stats(&after);
  CHECK(after.pins == before.pins + 3000);
  for (int i = 0; i < 3000; i++) tether_pool_unpin(pool, slots[i]);
  tether_pool_unpin(pool, slots[0]); /* twice: ignored */
  tether_pool_unpin(pool, 1 << 20);  /* unknown: ignored */
  tether_pool_unpin(NULL, 0);
  tether_get_global_stats(&after);
  CHECK(after.pins == before.pins);
  CHECK(tether_pool_pin(pool, NULL) == TETHER_EARG);
  CHECK(tether_pool_pin(NULL, a) == TETHER_EARG);
}

/* Holds (tether_handle_hold): what the Python binding's wrappers use instead of a pin each. The
 * handles below are kept only as complemented words the collector does not recognize, so only
 * their holds keep them, through their trees, which the holds follow when IR moves. */
static uintptr_t hide(tether_op *op) {
  OK(tether_handle_hold(op));
  return ~(uintptr_t)op;
}
#define UNHIDE(x) ((tether_op *)~(x))

enum { H_MOVED, H_MERGED, H_ERASED_CHILD, H_ROOT, H_ROOT_CHILD, H_COUNT };

static __attribute__((noinline)) void make_held(tether_arena *a, uintptr_t hidden[H_COUNT]) {
  tether_op *m1 = parse(a, "func.func private @a()\nfunc.func private @b()\n");
  tether_op *m2 = parse(a, "func.func private @c()\n");
  tether_op *m3 = parse(a, "func.func private @d()\n");
  tether_op *m4 = parse(a, kModule);
  tether_op *m5 = parse(a, kModule);
  tether_op *fa = body_op(m1, 0), *fc = body_op(m2, 0), *fd = body_op(m3, 0);
  hidden[H_MOVED] = hide(fa);
  OK(tether_op_move_after(fa, fc)); /* fa's hold moves to m2's tree: it keeps m2 */
  OK(tether_op_detach(fd));         /* fd: a root of its own, held, then merged into m2's tree */
  hidden[H_MERGED] = hide(fd);
  OK(tether_op_move_before(fd, fc));
  tether_op *func = body_op(m4, 0);
  hidden[H_ERASED_CHILD] = hide(body_op(func, 1));
  OK(tether_op_erase(func)); /* the held muli: invalid, kept */
  hidden[H_ROOT] = hide(m5);
  hidden[H_ROOT_CHILD] = hide(body_op(body_op(m5, 0), 0));
  OK(tether_op_erase(m5)); /* a root erased: its tree is destroyed, the held handles are kept */
}

static __attribute__((noinline)) void churn(tether_arena *a) {
  for (int i = 0; i < 50; i++) CHECK(parse(a, kModule));
}

static void holds_keep_handles_alive_and_follow_moves(void) {
  tether_global_stats before, after;
  tether_get_global_stats(&before);
  tether_arena *a;
  OK(tether_arena_create(&a));
  uintptr_t hidden[H_COUNT];
  make_held(a, hidden);
  for (int i = 0; i < 3; i++) {
    churn(a);
    tether_collect(a);
  }
  tether_op *moved = UNHIDE(hidden[H_MOVED]), *merged = UNHIDE(hidden[H_MERGED]), *p, *q;
  CHECK(tether_handle_is_valid(moved) && tether_handle_is_valid(merged));
  OK(tether_op_parent(moved, &p));
  OK(tether_op_parent(merged, &q));
  CHECK(p == q);
  CHECK(prints_containing(p, "@c") && prints_containing(p, "@a") && prints_containing(p, "@d"));
  CHECK(!prints_containing(p, "@b"));
  CHECK(tether_handle_reason(UNHIDE(hidden[H_ERASED_CHILD])) == TETHER_REASON_PARENT_ERASED);
  CHECK(tether_handle_reason(UNHIDE(hidden[H_ROOT])) == TETHER_REASON_ERASED);
  CHECK(tether_handle_reason(UNHIDE(hidden[H_ROOT_CHILD])) == TETHER_REASON_PARENT_ERASED);
  MlirOperation raw;
  CHECK_RC(tether_op_get(UNHIDE(hidden[H_ROOT]), &raw), TETHER_EINVALID);
  /* Held twice, released once: still held. An invalid handle no longer held, held again. */
  tether_op *child = UNHIDE(hidden[H_ROOT_CHILD]);
  OK(tether_handle_hold(child));
  tether_handle_release(child);
  tether_handle_release(child);
  OK(tether_handle_hold(child));
  churn(a);
  tether_collect(a);
  CHECK(tether_handle_reason(child) == TETHER_REASON_PARENT_ERASED);
  tether_get_global_stats(&after);
  CHECK(after.pins > before.pins); /* the held trees */
  for (int i = 0; i < H_COUNT; i++) tether_handle_release(UNHIDE(hidden[i]));
  tether_handle_release(child); /* released more often than held: ignored */
  tether_get_global_stats(&after);
  CHECK(after.pins == before.pins);
  CHECK(tether_handle_hold(NULL) == TETHER_EARG);
  tether_handle_release(NULL);
}

/* A handle kept only in a global of the main program survives collections after
 * tether_skip_program_data() and tether_skip_library_data() on it: this program links tether, so
 * its data stays scanned. */
static tether_op *global_module;
static __attribute__((noinline)) void keep_module_in_global(tether_arena *a) {
  global_module = parse(a, kModule);
}

static void program_data_of_a_tether_program_stays_scanned(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  keep_module_in_global(a);
  tether_skip_program_data();
  tether_skip_library_data(&global_module); /* tether's own object: ignored as well */
  for (int i = 0; i < 3; i++) tether_collect(a);
  CHECK(stats(a).roots == 1);
  CHECK(prints_containing(global_module, "arith.muli"));
  global_module = NULL;
}

/* Uses replaced with exceptions, and within one operation only. */
static void replace_uses_except_and_within_one_op(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  tether_op *f = body_op(m, 0), *add = body_op(f, 0), *mul = body_op(f, 1);
  tether_value *x, *sum;
  tether_region *body;
  tether_block *entry;
  OK(tether_op_region(f, 0, &body));
  OK(tether_region_block(body, 0, &entry));
  OK(tether_block_arg(entry, 0, &x));
  OK(tether_op_result(add, 0, &sum));
  /* %0 is used by muli (twice) and return: keep muli's, replace return's. */
  tether_op *keep[] = {mul};
  OK(tether_value_replace_uses_except(sum, x, keep, 1));
  CHECK(prints_containing(m, "arith.muli %0, %0"));
  CHECK(prints_containing(m, "return %arg0"));
  /* Within muli only. */
  OK(tether_op_replace_uses_of(mul, sum, x));
  CHECK(prints_containing(m, "arith.muli %arg0, %arg0"));
  CHECK_RC(tether_value_replace_uses_except(sum, x, NULL, 1), TETHER_EARG);
  CHECK_RC(tether_value_replace_uses_except(sum, x, keep, -1), TETHER_EARG);
  tether_op *bad[] = {(tether_op *)x};
  CHECK(tether_value_replace_uses_except(sum, x, bad, 1) != TETHER_OK);
}

/* tether_region_append_new_block: a block made in a region's tree directly (no root of its own),
 * its arguments as given, invalidated with the op that owns the region; bad input refused. */
static void new_block_appended_in_place(void) {
  tether_arena *a, *other;
  OK(tether_arena_create(&a));
  OK(tether_arena_create(&other));
  MlirContext ctx = tether_arena_context(a);
  MlirType ts[2] = {mlirIntegerTypeGet(ctx, 32), mlirIndexTypeGet(ctx)};
  tether_op *m = parse(a, kModule);
  tether_op *f = body_op(m, 0);
  tether_region *body;
  OK(tether_op_region(f, 0, &body));
  intptr_t roots = stats(a).roots;
  tether_block *b;
  OK(tether_region_append_new_block(body, 2, ts, NULL, &b));
  CHECK(stats(a).roots == roots); /* no tree of its own */
  tether_region *parent;
  OK(tether_block_parent(b, &parent));
  CHECK(parent == body);
  intptr_t nargs;
  OK(tether_block_num_args(b, &nargs));
  CHECK(nargs == 2);
  tether_value *arg;
  OK(tether_block_arg(b, 1, &arg));
  MlirValue raw;
  OK(tether_value_get(arg, &raw));
  CHECK(mlirTypeEqual(mlirValueGetType(raw), ts[1]));
  MlirBlock braw;
  OK(tether_block_get(b, &braw));
  MlirRegion rraw;
  OK(tether_region_get(body, &rraw));
  CHECK(mlirBlockEqual(mlirRegionGetFirstBlock(rraw), braw) == 0); /* at the end: second */
  CHECK(mlirBlockEqual(mlirBlockGetNextInRegion(mlirRegionGetFirstBlock(rraw)), braw));
  /* Bad input: nothing appended. */
  MlirType foreign = mlirIntegerTypeGet(tether_arena_context(other), 8);
  CHECK_RC(tether_region_append_new_block(body, 1, &foreign, NULL, &b), TETHER_ECONTEXT);
  CHECK_RC(tether_region_append_new_block(body, 1, NULL, NULL, &b), TETHER_EARG);
  CHECK_RC(tether_region_append_new_block(body, -1, ts, NULL, &b), TETHER_EARG);
  CHECK_RC(tether_region_append_new_block(body, 0, NULL, NULL, NULL), TETHER_EARG);
  CHECK_RC(tether_region_append_new_block(NULL, 0, NULL, NULL, &b), TETHER_EARG);
  CHECK(mlirBlockIsNull(mlirBlockGetNextInRegion(braw)));
  /* Erasing the function invalidates the block and what came from it. */
  OK(tether_op_erase(f));
  CHECK_RC(tether_block_get(b, &braw), TETHER_EINVALID);
  CHECK_RC(tether_value_get(arg, &raw), TETHER_EINVALID);
  CHECK_RC(tether_region_append_new_block(body, 0, NULL, NULL, &b), TETHER_EINVALID);
}

/* A tree built op by op, most handles dropped as it goes (a build loop): its table fills with
 * handles the collector takes, again and again, and drops the tombstones in place at its size;
 * idle afterwards, it shrinks to its live entries. Every held handle stays the one handle of its
 * operation throughout (navigation finds it), and every operation is there. */
enum { BUILT = 60000, HELD_EVERY = 97 };

/* Under TETHER_GC_STRESS every handle collects: fewer operations. */
static int built_count(void) { return getenv("TETHER_GC_STRESS") ? 3000 : BUILT; }

static __attribute__((noinline)) void build_holding_some(tether_arena *a, tether_block *body,
                                                         uintptr_t *held, int *nheld) {
  MlirContext ctx = tether_arena_context(a);
  MlirType i32 = mlirIntegerTypeGet(ctx, 32);
  MlirIdentifier value = mlirIdentifierGet(ctx, mlirStringRefCreateFromCString("value"));
  MlirNamedAttribute na = mlirNamedAttributeGet(value, mlirIntegerAttrGet(i32, 7));
  for (int i = 0; i < built_count(); i++) {
    MlirOperationState s = mlirOperationStateGet(mlirStringRefCreateFromCString("arith.constant"),
                                                 mlirLocationUnknownGet(ctx));
    s.nResults = 1;
    s.results = &i32;
    s.nAttributes = 1;
    s.attributes = &na;
    tether_op *op;
    OK(tether_op_create_from(a, &s, NULL, NULL, body, NULL, &op));
    tether_value *r;
    OK(tether_op_result(op, 0, &r)); /* a second handle per op, dropped at once */
    if (i % HELD_EVERY == 0) {
      OK(tether_handle_hold(op));
      held[(*nheld)++] = ~(uintptr_t)op; /* hidden: only the hold keeps it */
    }
    if (i % 5000 == 4999) tether_collect(a);
  }
}

static void tables_keep_held_handles_through_cycles(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, "");
  tether_region *r;
  OK(tether_op_region(m, 0, &r));
  tether_block *body;
  OK(tether_region_block(r, 0, &body));
  static uintptr_t held[BUILT / HELD_EVERY + 1];
  int nheld = 0;
  build_holding_some(a, body, held, &nheld);
  /* The table holds the handles made since the last collection (thousands); once the tree stays
   * idle for a whole cycle, it goes down to what is live: the held handles and a few more. */
  intptr_t slots_built = stats(a).table_slots;
  tether_collect(a);
  intptr_t slots_idle = stats(a).table_slots;
  CHECK(slots_idle <= slots_built);
  /* Under TETHER_GC_STRESS the table never grows large: nothing to shrink. */
  if (slots_built >= 8192) {
    CHECK(slots_idle * 4 <= slots_built);
    CHECK(slots_idle <= 4 * (nheld + 16) + 64);
  }
  intptr_t n;
  OK(tether_block_num_ops(body, &n));
  CHECK(n == built_count());
  for (int k = 0; k < nheld; k++) {
    tether_op *op = UNHIDE(held[k]), *prev, *again;
    CHECK(tether_handle_is_valid(op));
    OK(tether_op_prev(op, &prev));
    if (!prev) continue; /* the first */
    OK(tether_op_next(prev, &again));
    CHECK(again == op);
  }
  for (int k = 0; k < nheld; k++) tether_handle_release(UNHIDE(held[k]));
  tether_keep_alive(m);
}

/* "test.nest" holding inner (NULL: nothing) in the one block of its one region: a detached
 * operation made through tether_op_create with a detached tether region, or the status. */
static int nest(tether_arena *a, tether_op *inner, tether_region **region, tether_op **out) {
  tether_block *b;
  OK(tether_region_create(a, region));
  OK(tether_block_create(a, 0, NULL, NULL, &b));
  OK(tether_region_append_block(*region, b));
  if (inner) OK(tether_block_append_op(b, inner));
  MlirRegion raw;
  OK(tether_region_get(*region, &raw));
  MlirOperationState st = mlirOperationStateGet(mlirStringRefCreateFromCString("test.nest"),
                                                mlirLocationUnknownGet(tether_arena_context(a)));
  mlirOperationStateAddOwnedRegions(&st, 1, &raw);
  return tether_op_create(a, &st, out);
}

static void nesting_is_bounded(void) {
  tether_arena *a;
  OK(tether_arena_create(&a));
  OK(tether_arena_allow_unregistered(a, true));
  tether_op *top = NULL;
  tether_region *region;
  for (int i = 0; i < TETHER_MAX_NESTING; i++) OK(nest(a, top, &region, &top));
  /* Into a module (which counts as a level): refused, the chain stays a root. */
  tether_op *module = parse(a, "module {}");
  tether_region *mr;
  tether_block *mb;
  OK(tether_op_region(module, 0, &mr));
  OK(tether_region_first_block(mr, &mb));
  CHECK_RC(tether_block_append_op(mb, top), TETHER_EDEPTH);
  CHECK(!prints_containing(module, "test.nest"));
  tether_op *parent;
  OK(tether_op_parent(top, &parent));
  CHECK(parent == NULL);
  /* One level more around it: refused; nothing is created. */
  tether_op *deeper = NULL;
  CHECK_RC(nest(a, top, &region, &deeper), TETHER_EDEPTH);
  CHECK(deeper == NULL);
  /* A chain one shorter fits in the module, and a leaf fits at its bottom; an operation with a
   * region does not. */
  tether_op *shorter = NULL;
  for (int i = 0; i < TETHER_MAX_NESTING - 1; i++) OK(nest(a, shorter, &region, &shorter));
  OK(tether_block_append_op(mb, shorter));
  tether_op *bottom = shorter;
  for (int i = 0; i < TETHER_MAX_NESTING - 2; i++) bottom = body_op(bottom, 0);
  tether_region *br;
  tether_block *bb;
  OK(tether_op_region(bottom, 0, &br));
  OK(tether_region_first_block(br, &bb));
  OK(tether_block_append_op(bb, create_op(a, "test.leaf", 0, NULL, 0, NULL)));
  tether_op *boxed = NULL;
  OK(nest(a, NULL, &region, &boxed));
  CHECK_RC(tether_block_append_op(bb, boxed), TETHER_EDEPTH);
  OK(tether_op_verify(module));
}

int main(void) {
  RUN(type_outlives_arena_handle);
  RUN(dropped_arenas_are_destroyed);
  RUN(grandchild_keeps_module_alive);
  RUN(child_keeps_module_alive);
  RUN(dropping_child_destroys_module);
  RUN(detached_region_and_block_attach);
  RUN(erase_parent_invalidates_child);
  RUN(erase_refused_while_results_used);
  RUN(detached_op_is_a_root);
  RUN(detach_then_drop_parent);
  RUN(move_between_trees);
  RUN(clone_is_independent);
  RUN(passes_invalidate_removed_ops);
  RUN(cross_root_operands_keep_root_alive);
  RUN(dependent_roots_are_destroyed_users_first);
  RUN(bad_input_is_an_error);
  RUN(walk_visits_and_tolerates_mutation);
  RUN(wrap_raw_pointers);
  RUN(probe_runs_calls_in_a_child_once_per_key);
  RUN(trials_have_bounded_memory);
  RUN(nesting_is_bounded);
  RUN(create_from_handles);
  RUN(pin_pools_keep_handles_alive);
  RUN(holds_keep_handles_alive_and_follow_moves);
  RUN(program_data_of_a_tether_program_stays_scanned);
  RUN(replace_uses_except_and_within_one_op);
  RUN(new_block_appended_in_place);
  RUN(tables_keep_held_handles_through_cycles);
  DONE();
}
