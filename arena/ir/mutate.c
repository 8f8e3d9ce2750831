/* mutate.c: changing the structure of IR through handles: insert, move, detach, erase, clone,
 * operands and uses, and revalidation after changes made through the raw C API.
 *
 * Invariant: ownership moves with the IR, so every change keeps tree.c's invariants: an operation
 * or block inserted into another tree is merged into it (or its handles moved), one taken out
 * becomes the root of a new tree with its handles, and every use that comes to cross trees is
 * recorded as a dependency before the call returns. Nothing is destroyed except what erase was
 * asked to, and not while anything outside it uses it (TETHER_EBUSY).
 */
#include "../core/internal.h"
#include "../guards/guards.h"

#include <stdlib.h>

/* ---- structural mutation --------------------------------------------------------------------- */

/* The two handles of a call that changes IR, checked (tether__check) and of one arena
 * (TETHER_ECONTEXT); that arena's IR counts as changed. */
static int check_pair(const void *p, int pkind, tether__handle **ph, tether__tree **pt,
                      const void *q, int qkind, tether__handle **qh, tether__tree **qt) {
  int rc = tether__check(p, pkind, ph, pt);
  if (rc == TETHER_OK) rc = tether__check(q, qkind, qh, qt);
  if (rc != TETHER_OK) return rc;
  tether__touch((*pt)->arena);
  return (*pt)->arena == (*qt)->arena ? TETHER_OK : TETHER_ECONTEXT;
}

#define CHECK_PAIR(p, pkind, ph, pt, q, qkind, qh, qt)                                             \
  do {                                                                                             \
    int rc_ = check_pair((p), (pkind), &(ph), &(pt), (q), (qkind), &(qh), &(qt));                  \
    if (rc_ != TETHER_OK) return rc_;                                                              \
  } while (0)

static int insert_op(tether_block *b, intptr_t pos, tether_op *op, int append) {
  tether__handle *bh, *oh;
  tether__tree *bt, *ot;
  CHECK_PAIR(b, TETHER_KIND_BLOCK, bh, bt, op, TETHER_KIND_OP, oh, ot);
  if (!tether__is_root_op(oh, ot)) return TETHER_ESTATE;
  if (bt == ot) return TETHER_EARG; /* the block is inside the operation */
  if (tether__nesting_exceeded(BLK(bh), 0, OP(oh))) return TETHER_EDEPTH;
  int rc = tether__scope_removal(ot, OP(oh), (MlirBlock){NULL});
  if (rc != TETHER_OK) return rc;
  if (append) {
    mlirBlockAppendOwnedOperation(BLK(bh), OP(oh));
  } else {
    if (pos < 0 || pos > tether__count_ops(BLK(bh))) return TETHER_ERANGE;
    mlirBlockInsertOwnedOperation(BLK(bh), pos, OP(oh));
  }
  tether__merge(ot, bt);
  return TETHER_OK;
}

int tether_block_insert_op(tether_block *b, intptr_t pos, tether_op *op) {
  return insert_op(b, pos, op, 0);
}
int tether_block_append_op(tether_block *b, tether_op *op) { return insert_op(b, 0, op, 1); }

static int move_op(tether_op *op, tether_op *ref, int after) {
  tether__handle *oh, *rh;
  tether__tree *ot, *rt;
  CHECK_PAIR(op, TETHER_KIND_OP, oh, ot, ref, TETHER_KIND_OP, rh, rt);
  if (oh == rh || tether__op_is_inside(OP(rh), OP(oh))) return TETHER_EARG;
  MlirBlock b = mlirOperationGetBlock(OP(rh));
  if (mlirBlockIsNull(b)) return TETHER_ESTATE; /* ref is in no block */
  if (tether__nesting_exceeded(b, 0, OP(oh))) return TETHER_EDEPTH;
  int rc = tether__scope_removal(ot, OP(oh), (MlirBlock){NULL});
  if (rc != TETHER_OK) return rc;
  if (tether__is_root_op(oh, ot)) {
    if (after)
      mlirBlockInsertOwnedOperationAfter(b, OP(rh), OP(oh));
    else
      mlirBlockInsertOwnedOperationBefore(b, OP(rh), OP(oh));
    tether__merge(ot, rt);
    return TETHER_OK;
  }
  if (after)
    mlirOperationMoveAfter(OP(oh), OP(rh));
  else
    mlirOperationMoveBefore(OP(oh), OP(rh));
  return ot == rt ? TETHER_OK : tether__move_subtree(ot, rt, OP(oh));
}

int tether_op_move_before(tether_op *op, tether_op *ref) { return move_op(op, ref, 0); }
int tether_op_move_after(tether_op *op, tether_op *ref) { return move_op(op, ref, 1); }

int tether_op_detach(tether_op *op) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  tether__touch(t->arena);
  if (mlirBlockIsNull(mlirOperationGetBlock(OP(h)))) return TETHER_OK;
  int rc = tether__scope_removal(t, OP(h), (MlirBlock){NULL});
  if (rc != TETHER_OK) return rc;
  tether__tree *nt = tether__tree_new(t->arena, TETHER_KIND_OP, tether__raw(h));
  if (!nt) return TETHER_ENOMEM;
  mlirOperationRemoveFromParent(OP(h));
  return tether__move_subtree(t, nt, OP(h));
}

int tether_block_detach(tether_block *b) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(b, TETHER_KIND_BLOCK, h, t);
  if (mlirRegionIsNull(mlirBlockGetParentRegion(BLK(h)))) return TETHER_OK; /* already a root */
  int rc = tether__scope_removal(t, (MlirOperation){NULL}, BLK(h));
  if (rc != TETHER_OK) return rc;
  tether__touch(t->arena);
  tether__tree *nt = tether__tree_new(t->arena, TETHER_KIND_BLOCK, tether__raw(h));
  if (!nt) return TETHER_ENOMEM;
  mlirBlockDetach(BLK(h));
  return tether__move_block(t, nt, BLK(h));
}

static int insert_block(tether_region *r, intptr_t pos, tether_block *b, int append) {
  tether__handle *rh, *bh;
  tether__tree *rt, *bt;
  CHECK_PAIR(r, TETHER_KIND_REGION, rh, rt, b, TETHER_KIND_BLOCK, bh, bt);
  if (!(bt->root_kind == TETHER_KIND_BLOCK && bt->root == tether__raw(bh))) return TETHER_ESTATE;
  if (rt == bt) return TETHER_EARG; /* the region is inside the block */
  MlirOperation parent = {tether__region_parent(rh)};
  if (!mlirOperationIsNull(parent) &&
      tether__block_nesting_exceeded(BLK(bh), 1 + tether__ops_above(mlirOperationGetBlock(parent))))
    return TETHER_EDEPTH;
  int rc = tether__scope_removal(bt, (MlirOperation){NULL}, BLK(bh));
  if (rc != TETHER_OK) return rc;
  if (append) {
    mlirRegionAppendOwnedBlock(REG(rh), BLK(bh));
  } else {
    if (pos < 0 || pos > tether__count_blocks(REG(rh))) return TETHER_ERANGE;
    mlirRegionInsertOwnedBlock(REG(rh), pos, BLK(bh));
  }
  tether__merge(bt, rt);
  return TETHER_OK;
}

int tether_region_append_block(tether_region *r, tether_block *b) {
  return insert_block(r, 0, b, 1);
}
int tether_region_insert_block(tether_region *r, intptr_t pos, tether_block *b) {
  return insert_block(r, pos, b, 0);
}

int tether_op_erase(tether_op *op) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  tether__touch(t->arena);
  /* Values used, or blocks branched to, from outside op (in its tree or another one): erasing
   * would leave those uses pointing to freed IR. */
  if (tether__op_used_from_outside(OP(h))) return TETHER_EBUSY;
  int rc = tether__scope_removal(t, OP(h), (MlirBlock){NULL});
  if (rc != TETHER_OK) return rc;
  if (tether__is_root_op(h, t)) {
    tether__tree_destroy(t, TETHER_REASON_ERASED);
    return TETHER_OK;
  }
  MlirOperation raw = OP(h);
  tether__invalidate_subtree(t, raw, TETHER_REASON_ERASED);
  mlirOperationDestroy(raw);
  return TETHER_OK;
}

static MlirWalkResult count_cb(MlirOperation op, void *ud) {
  (void)op;
  ++*(size_t *)ud;
  return MlirWalkResultAdvance;
}

int tether_op_clone(tether_op *op, tether_op **out) {
  tether__handle *h;
  tether__tree *t;
  TETHER__OUT(out);
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  int src = tether__scope_clone(t, OP(h));
  if (src != TETHER_OK) return src;
  /* The copy's size counts as IR pressure; a collection it triggers is drained right away (op is
   * held: its tree is reachable). */
  size_t n = 0;
  mlirOperationWalk(OP(h), count_cb, &n, MlirWalkPreOrder);
  tether__ir_pressure(n * 128);
  tether__enter(t->arena);
  MlirOperation c = mlirOperationClone(OP(h));
  tether__tree *nt = tether__tree_new(t->arena, TETHER_KIND_OP, c.ptr);
  if (!nt) {
    mlirOperationDestroy(c);
    return TETHER_ENOMEM;
  }
  nt->suspect = t->suspect; /* a copy of IR that may crash the verifier may too */
  tether__handle *ch = tether__intern(nt, TETHER_KIND_OP, c.ptr);
  if (!ch) return TETHER_ENOMEM;
  int rc = tether__record_operand_deps(nt, c);
  if (rc != TETHER_OK) return rc;
  *out = (tether_op *)ch;
  return TETHER_OK;
}

int tether_op_set_operand(tether_op *op, intptr_t i, tether_value *v) {
  tether__handle *oh, *vh;
  tether__tree *ot, *vt;
  CHECK_PAIR(op, TETHER_KIND_OP, oh, ot, v, TETHER_KIND_VALUE, vh, vt);
  if (i < 0 || i >= mlirOperationGetNumOperands(OP(oh))) return TETHER_ERANGE;
  int rc = tether__scope_use(ot, vt);
  if (rc == TETHER_OK) rc = tether__add_dep(ot, vt);
  if (rc != TETHER_OK) return rc;
  mlirOperationSetOperand(OP(oh), i, VAL(vh));
  return TETHER_OK;
}

int tether_value_replace_all_uses(tether_value *of, tether_value *with) {
  tether__handle *oh, *wh;
  tether__tree *ot, *wt;
  CHECK_PAIR(of, TETHER_KIND_VALUE, oh, ot, with, TETHER_KIND_VALUE, wh, wt);
  for (MlirOpOperand u = mlirValueGetFirstUse(VAL(oh)); !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u)) {
    tether__tree *ut = tether__find_tree(ot->arena, TETHER_KIND_OP, mlirOpOperandGetOwner(u).ptr);
    if (ut && tether__scope_use(ut, wt) != TETHER_OK) return TETHER_ESUSPENDED;
    if (ut && tether__add_dep(ut, wt) != TETHER_OK) return TETHER_ENOMEM;
  }
  mlirValueReplaceAllUsesOfWith(VAL(oh), VAL(wh));
  return TETHER_OK;
}

/* Whether operation `owner` is one of the n operations of `ops` (checked handles). */
static bool op_among(MlirOperation owner, tether__handle *const *ops, intptr_t n) {
  for (intptr_t i = 0; i < n; i++)
    if (OP(ops[i]).ptr == owner.ptr) return true;
  return false;
}

int tether_value_replace_uses_except(tether_value *of, tether_value *with, tether_op *const *except,
                                     intptr_t n_except) {
  tether__handle *oh, *wh;
  tether__tree *ot, *wt;
  CHECK_PAIR(of, TETHER_KIND_VALUE, oh, ot, with, TETHER_KIND_VALUE, wh, wt);
  if (n_except < 0 || (n_except && !except)) return TETHER_EARG;
  tether__handle **ex = n_except ? malloc((size_t)n_except * sizeof *ex) : NULL;
  if (n_except && !ex) return TETHER_ENOMEM;
  int rc = TETHER_OK;
  for (intptr_t i = 0; i < n_except && rc == TETHER_OK; i++) {
    tether__tree *et;
    rc = tether__check(except[i], TETHER_KIND_OP, &ex[i], &et);
    if (rc == TETHER_OK && et->arena != ot->arena) rc = TETHER_ECONTEXT;
  }
  /* The uses to change, read before any changes (changing one unlinks it from the list). */
  intptr_t n = 0, cap = 0;
  MlirOpOperand *uses = NULL;
  for (MlirOpOperand u = mlirValueGetFirstUse(VAL(oh)); rc == TETHER_OK && !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u)) {
    MlirOperation owner = mlirOpOperandGetOwner(u);
    if (op_among(owner, ex, n_except)) continue;
    tether__tree *ut = tether__find_tree(ot->arena, TETHER_KIND_OP, owner.ptr);
    if (ut) rc = tether__scope_use(ut, wt);
    if (ut && rc == TETHER_OK && tether__add_dep(ut, wt) != TETHER_OK) rc = TETHER_ENOMEM;
    if (n == cap) {
      MlirOpOperand *grown = realloc(uses, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *uses);
      if (!grown)
        rc = TETHER_ENOMEM;
      else
        uses = grown;
    }
    if (rc == TETHER_OK) uses[n++] = u;
  }
  for (intptr_t i = 0; rc == TETHER_OK && i < n; i++)
    mlirOperationSetOperand(mlirOpOperandGetOwner(uses[i]),
                            (intptr_t)mlirOpOperandGetOperandNumber(uses[i]), VAL(wh));
  free(uses);
  free(ex);
  return rc;
}

int tether_op_replace_uses_of(tether_op *op, tether_value *of, tether_value *with) {
  tether__handle *oh, *fh, *wh;
  tether__tree *ot, *ft, *wt;
  CHECK_PAIR(op, TETHER_KIND_OP, oh, ot, with, TETHER_KIND_VALUE, wh, wt);
  int rc = tether__check(of, TETHER_KIND_VALUE, &fh, &ft);
  if (rc != TETHER_OK) return rc;
  if (ft->arena != ot->arena) return TETHER_ECONTEXT;
  intptr_t n = mlirOperationGetNumOperands(OP(oh));
  for (intptr_t i = 0; i < n; i++) {
    if (!mlirValueEqual(mlirOperationGetOperand(OP(oh), i), VAL(fh))) continue;
    if ((rc = tether__scope_use(ot, wt)) != TETHER_OK) return rc;
    if ((rc = tether__add_dep(ot, wt)) != TETHER_OK) return rc;
    mlirOperationSetOperand(OP(oh), i, VAL(wh));
  }
  return TETHER_OK;
}

/* ---- changes made through the raw C API ----------------------------------------------------- */

int tether_revalidate(void *handle) {
  if (!handle) return TETHER_EARG;
  tether__handle *h = TETHER__H(handle);
  if (!tether__valid(h)) return TETHER_EINVALID;
  tether__tree *t = tether__tree_of(h);
  if (t->arena->running) return TETHER_ERUNNING;
  tether__enter(t->arena);
  tether__touch(t->arena);
  tether__tree_revalidate(t);
  tether_keep_alive(h);
  return TETHER_OK;
}

void tether_arena_touch(tether_arena *a) {
  if (a) tether__touch(a);
}
