/* callbacks.c: code of the binding that MLIR calls while it runs on IR of an arena (passes,
 * rewrite patterns, PDL native functions written in the binding's language), and what that code
 * may not do meanwhile (tether.h, "Callbacks").
 *
 * Invariant: while MLIR is suspended in a callback, nothing the suspended MLIR still holds is freed
 * or moved through tether: for a pass, the operation it runs on and everything enclosing it (the
 * pass manager's iteration stands on them); for a rewrite pattern, the whole tree being rewritten
 * (the driver's worklist holds its operations), which only the pattern rewriter changes
 * structurally (it tells the driver); and no IR of another tree comes to use values or blocks of a
 * tree being rewritten (MLIR's drivers drop uses they do not know of, leaving that IR with null
 * operands). Entering a callback revalidates the tree MLIR runs on, so no handle into what MLIR
 * removed so far stays valid while the binding's code runs; leaving a pass checks what the pass
 * left, so that the rest of the pipeline only meets IR it can run on.
 */
#include "run.h"
#include "../guards/guards.h"

#include <stdlib.h>

void tether__run_push(tether_arena *a, tether__run *r, tether__tree *t, MlirOperation root,
                      int patterns) {
  r->outer = a->run;
  r->t = t;
  r->root = root;
  r->patterns = patterns;
  r->thread = pthread_self();
  r->running = a->running;
  a->run = r;
}

void tether__run_pop(tether_arena *a, tether__run *r) { a->run = r->outer; }

/* ---- what callbacks forbid ------------------------------------------------------------------- */

static tether__tree *scope_tree(const tether_scope *s) {
  return tether__tree_resolve(((tether__run *)s->run)->t);
}

static int is_rewrite(const tether_scope *s) { return s->kind != TETHER_SCOPE_PASS; }

/* Whether block b holds op, directly or nested. */
static int block_holds(MlirBlock b, MlirOperation op) {
  for (; !mlirOperationIsNull(op); op = mlirOperationGetParentOperation(op))
    if (mlirBlockEqual(mlirOperationGetBlock(op), b)) return 1;
  return 0;
}

int tether__scope_removal_slow(tether__tree *t, MlirOperation op, MlirBlock b) {
  t = tether__tree_resolve(t);
  for (tether_scope *s = t->arena->scopes; s; s = s->outer) {
    int hit = is_rewrite(s)              ? scope_tree(s) == t
              : !mlirOperationIsNull(op) ? tether__op_is_inside(s->op, op)
              : !mlirBlockIsNull(b)      ? block_holds(b, s->op)
                                         : scope_tree(s) == t;
    if (hit) return TETHER_ESUSPENDED;
  }
  return TETHER_OK;
}

int tether__scope_rewrite_slow(tether__tree *t, MlirOperation op) {
  t = tether__tree_resolve(t);
  for (tether_scope *s = t->arena->scopes; s; s = s->outer) {
    int hit = is_rewrite(s) ? scope_tree(s) == t
                            : !mlirOperationEqual(s->op, op) && tether__op_is_inside(s->op, op);
    if (hit) return TETHER_ESUSPENDED;
  }
  return TETHER_OK;
}

int tether__scope_use_slow(tether__tree *user, tether__tree *used) {
  user = tether__tree_resolve(user);
  used = tether__tree_resolve(used);
  if (!used || user == used) return TETHER_OK;
  for (tether_scope *s = used->arena->scopes; s; s = s->outer)
    if (is_rewrite(s) && scope_tree(s) == used) return TETHER_ESUSPENDED;
  return TETHER_OK;
}

/* Operands and successors of the operations in op that lie outside op, in a tree a rewrite scope
 * locks: a copy of op would use them from a new tree. */
typedef struct {
  MlirOperation op;
  tether_arena *a;
  int rc;
} clone_ctx;

static MlirWalkResult clone_cb(MlirOperation o, void *ud) {
  clone_ctx *c = ud;
  intptr_t n = mlirOperationGetNumOperands(o), ns = mlirOperationGetNumSuccessors(o);
  for (intptr_t i = 0; i < n + ns && c->rc == TETHER_OK; i++) {
    MlirOperation owner;
    int kind;
    void *raw;
    if (i < n) {
      MlirValue v = mlirOperationGetOperand(o, i);
      owner = mlirValueIsAOpResult(v) ? mlirOpResultGetOwner(v)
                                      : mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
      kind = TETHER_KIND_VALUE;
      raw = (void *)v.ptr;
    } else {
      MlirBlock b = mlirOperationGetSuccessor(o, i - n);
      owner = mlirBlockGetParentOperation(b);
      kind = TETHER_KIND_BLOCK;
      raw = b.ptr;
    }
    if (!mlirOperationIsNull(owner) && tether__op_is_inside(owner, c->op)) continue;
    c->rc = tether__scope_use(NULL, tether__find_tree(c->a, kind, raw));
  }
  return c->rc == TETHER_OK ? MlirWalkResultAdvance : MlirWalkResultInterrupt;
}

int tether__scope_clone_slow(tether_arena *a, MlirOperation op) {
  clone_ctx c = {op, a, TETHER_OK};
  mlirOperationWalk(op, clone_cb, &c, MlirWalkPreOrder);
  return c.rc;
}

/* ---- entering and leaving -------------------------------------------------------------------- */

int tether_scope_enter(tether_arena *a, tether_scope_kind kind, MlirOperation op,
                       MlirRewriterBase rewriter, tether_scope *s) {
  if (!a || !s || kind < TETHER_SCOPE_PASS || kind > TETHER_SCOPE_PDL) return TETHER_EARG;
  s->left = 1; /* not entered */
  tether__run *r = a->run;
  /* The innermost MLIR call in progress on the arena must be a run tether started on this thread,
   * of the callback's kind, holding op. */
  if (!r || a->running != r->running || !pthread_equal(r->thread, pthread_self()) ||
      r->patterns != (kind != TETHER_SCOPE_PASS))
    return TETHER_ESTATE;
  if (mlirOperationIsNull(op)) {
    if (kind != TETHER_SCOPE_PDL) return TETHER_EARG;
    op = r->root;
  }
  if (!tether__op_is_inside(op, r->root)) return TETHER_ESTATE;
  tether__enter(a);
  /* MLIR changed the tree: handles of what it removed become invalid before any code sees them. */
  tether__tree_revalidate(tether__tree_resolve(r->t));
  tether__touch(a);
  s->outer = a->scopes;
  s->run = r;
  s->arena = a;
  s->op = op;
  s->rewriter = rewriter;
  s->kind = kind;
  s->running = a->running;
  s->left = 0;
  a->scopes = s;
  a->running = 0;
  s->epoch = a->epoch;
  return TETHER_OK;
}

/* What a pass left for the rest of the pipeline, checked as tether_op_run_passes checks its input
 * (the arena is running again: diagnostic handlers cannot reach the IR). */
static int check_pass_result(tether_scope *s) {
  tether__tree *t = scope_tree(s);
  if (tether__op_used_from_other_trees(t, s->op)) {
    mlirEmitError(mlirOperationGetLocation(s->op),
                  "the pass left values or blocks of this operation used by IR of another tree (a "
                  "detached operation, region or block, or another module), which the rest of the "
                  "pipeline may erase; the pipeline stops here");
    return TETHER_EBUSY;
  }
  int rc = tether__unsafe_for_mlir(t, s->op, false);
  if (rc) return rc;
  return mlirOperationVerify(s->op) ? TETHER_OK : TETHER_EVERIFY;
}

int tether_scope_leave(tether_scope *s) {
  if (!s || s->left || !s->arena || s->arena->scopes != s) return TETHER_EARG;
  tether_arena *a = s->arena;
  a->scopes = s->outer;
  a->running = s->running;
  s->left = 1;
  if (s->kind == TETHER_SCOPE_PASS && a->epoch != s->epoch) return check_pass_result(s);
  return TETHER_OK;
}

int tether_scope_check(const tether_scope *s) {
  return s && !s->left && s->arena && s->arena->scopes == s ? TETHER_OK : TETHER_ESTATE;
}

/* ---- the pattern rewriter -------------------------------------------------------------------- */

/* The operation a pattern scope's rewriter may erase or replace: checked (tether__check), of the
 * tree being rewritten, strictly inside the operation the patterns apply to, and under the walk
 * driver the matched operation itself (the walk holds the next one). */
static int rewrite_target(tether_scope *s, tether_op *op, tether__handle **h, tether__tree **t) {
  int rc = tether_scope_check(s);
  if (rc != TETHER_OK) return rc;
  if (s->kind != TETHER_SCOPE_PATTERN && s->kind != TETHER_SCOPE_WALK) return TETHER_ESTATE;
  rc = tether__check(op, TETHER_KIND_OP, h, t);
  if (rc != TETHER_OK) return rc;
  if ((*t)->arena != s->arena) return TETHER_ECONTEXT;
  tether__run *r = s->run;
  MlirOperation raw = OP(*h);
  if (tether__tree_resolve(*t) != scope_tree(s) || mlirOperationEqual(raw, r->root) ||
      !tether__op_is_inside(raw, r->root))
    return TETHER_EARG;
  if (s->kind == TETHER_SCOPE_WALK && !mlirOperationEqual(raw, s->op)) return TETHER_EARG;
  return TETHER_OK;
}

/* Invalidates the handles into op (erased by MLIR's rewriter next), then lets the rewriter run with
 * the arena marked running (it tells the driver, which calls no binding code). */
static void erase_through(tether_scope *s, tether__tree *t, MlirOperation raw) {
  tether_arena *a = s->arena;
  tether__touch(a);
  tether__invalidate_subtree(t, raw, TETHER_REASON_ERASED);
  a->running = s->running;
}

int tether_rewriter_erase_op(tether_scope *s, tether_op *op) {
  tether__handle *h;
  tether__tree *t;
  int rc = rewrite_target(s, op, &h, &t);
  if (rc != TETHER_OK) return rc;
  MlirOperation raw = OP(h);
  if (tether__op_used_from_outside(raw)) return TETHER_EBUSY;
  erase_through(s, t, raw);
  mlirRewriterBaseEraseOp(s->rewriter, raw);
  s->arena->running = 0;
  return TETHER_OK;
}

/* Whether value v is op or defined inside op. */
static int value_inside(MlirValue v, MlirOperation op) {
  MlirOperation owner = mlirValueIsAOpResult(v)
                            ? mlirOpResultGetOwner(v)
                            : mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
  return !mlirOperationIsNull(owner) && tether__op_is_inside(owner, op);
}

int tether_rewriter_replace_op(tether_scope *s, tether_op *op, tether_value *const *values,
                               intptr_t n) {
  tether__handle *h;
  tether__tree *t;
  int rc = rewrite_target(s, op, &h, &t);
  if (rc != TETHER_OK) return rc;
  MlirOperation raw = OP(h);
  if (n != mlirOperationGetNumResults(raw) || (n && !values)) return TETHER_EARG;
  MlirValue *vals = n ? malloc((size_t)n * sizeof *vals) : NULL;
  if (n && !vals) return TETHER_ENOMEM;
  for (intptr_t i = 0; i < n && rc == TETHER_OK; i++) {
    tether__handle *vh;
    tether__tree *vt;
    rc = tether__check(values[i], TETHER_KIND_VALUE, &vh, &vt);
    if (rc != TETHER_OK) break;
    if (vt->arena != s->arena)
      rc = TETHER_ECONTEXT;
    else if (tether__tree_resolve(vt) != scope_tree(s))
      rc = TETHER_ESUSPENDED;
    else if (value_inside(VAL(vh), raw))
      rc = TETHER_EARG;
    else
      vals[i] = VAL(vh);
  }
  if (rc == TETHER_OK && tether__op_inner_used_from_outside(raw)) rc = TETHER_EBUSY;
  if (rc == TETHER_OK) {
    erase_through(s, t, raw);
    mlirRewriterBaseReplaceOpWithValues(s->rewriter, raw, n, vals);
    s->arena->running = 0;
  }
  free(vals);
  return rc;
}

int tether_rewriter_replace_op_with(tether_scope *s, tether_op *op, tether_op *with) {
  tether__handle *h, *wh;
  tether__tree *t, *wt;
  int rc = rewrite_target(s, op, &h, &t);
  if (rc != TETHER_OK) return rc;
  rc = tether__check(with, TETHER_KIND_OP, &wh, &wt);
  if (rc != TETHER_OK) return rc;
  MlirOperation raw = OP(h), repl = OP(wh);
  if (wt->arena != s->arena) return TETHER_ECONTEXT;
  if (tether__tree_resolve(wt) != scope_tree(s)) return TETHER_ESUSPENDED;
  if (tether__op_is_inside(repl, raw) ||
      mlirOperationGetNumResults(repl) != mlirOperationGetNumResults(raw))
    return TETHER_EARG;
  if (tether__op_inner_used_from_outside(raw)) return TETHER_EBUSY;
  erase_through(s, t, raw);
  mlirRewriterBaseReplaceOpWithOperation(s->rewriter, raw, repl);
  s->arena->running = 0;
  return TETHER_OK;
}

int tether_scope_check_result(const tether_scope *s, const void *handle) {
  int rc = tether_scope_check(s);
  if (rc != TETHER_OK) return rc;
  if (!handle) return TETHER_EARG;
  tether__handle *h;
  tether__tree *t;
  rc = tether__check(handle, tether_handle_kind(handle), &h, &t);
  if (rc != TETHER_OK) return rc;
  if (t->arena != s->arena) return TETHER_ECONTEXT;
  return tether__tree_resolve(t) == scope_tree(s) ? TETHER_OK : TETHER_ESUSPENDED;
}
