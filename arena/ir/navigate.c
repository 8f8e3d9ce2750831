/* navigate.c: reading IR through handles: guarded access to the raw object, handle queries,
 * wrapping raw pointers, navigation, walks.
 *
 * Invariant: every function checks its handles before touching MLIR (NULL -> TETHER_EARG,
 * invalid -> TETHER_EINVALID, MLIR running on the arena's IR -> TETHER_ERUNNING), and every
 * object it hands out is the interned handle of its tree (tether__give): reading IR never changes
 * which tree owns what, and the same object always gives the same handle.
 */
#include "../core/internal.h"
#include "../guards/guards.h"

#include <stdlib.h>

/* ---- guarded access and handle queries ------------------------------------------------------- */

static int get_raw(const void *p, int kind, void **out) {
  if (!p || !out) return TETHER_EARG;
  const tether__handle *h = TETHER__H(p);
  if (tether__kind(h) != kind) return TETHER_EARG;
  if (!tether__valid(h)) return TETHER_EINVALID;
  if (tether__tree_of(h)->arena->running) return TETHER_ERUNNING;
  *out = tether__raw(h);
  return TETHER_OK;
}

int tether_op_get(tether_op *op, MlirOperation *out) {
  return get_raw(op, TETHER_KIND_OP, out ? (void **)&out->ptr : NULL);
}
int tether_region_get(tether_region *r, MlirRegion *out) {
  return get_raw(r, TETHER_KIND_REGION, out ? (void **)&out->ptr : NULL);
}
int tether_block_get(tether_block *b, MlirBlock *out) {
  return get_raw(b, TETHER_KIND_BLOCK, out ? (void **)&out->ptr : NULL);
}
int tether_value_get(tether_value *v, MlirValue *out) {
  return get_raw(v, TETHER_KIND_VALUE, out ? (void **)&out->ptr : NULL);
}

tether_reason tether_handle_reason(const void *handle) {
  if (!handle) return TETHER_REASON_NONE;
  const tether__handle *h = TETHER__H(handle);
  return tether__valid(h) ? TETHER_REASON_NONE : (tether_reason)h->reason;
}

bool tether_handle_is_valid(const void *handle) {
  return handle && tether__valid(TETHER__H(handle));
}

tether_kind tether_handle_kind(const void *handle) {
  return handle ? (tether_kind)tether__kind(TETHER__H(handle)) : TETHER_KIND_OP;
}

tether_arena *tether_handle_arena(const void *handle) {
  if (!handle || !tether__valid(TETHER__H(handle))) return NULL;
  return tether__tree_of(TETHER__H(handle))->arena;
}

void tether_handle_set_user(void *handle, void *user) {
  if (handle) TETHER__H(handle)->huser = ~(uintptr_t)user;
}

void *tether_handle_get_user(const void *handle) {
  return handle ? (void *)~TETHER__H(handle)->huser : NULL;
}

static int wrap(tether_arena *a, int kind, void *raw, void **out) {
  if (!a || !raw || !out) return TETHER_EARG;
  if (a->running) return TETHER_ERUNNING;
  tether__enter(a);
  tether__tree *t = tether__find_tree(a, kind, raw);
  if (!t) return TETHER_EARG;
  return tether__give(t, kind, raw, out);
}

int tether_op_wrap(tether_arena *a, MlirOperation raw, tether_op **out) {
  return wrap(a, TETHER_KIND_OP, raw.ptr, (void **)out);
}
int tether_block_wrap(tether_arena *a, MlirBlock raw, tether_block **out) {
  return wrap(a, TETHER_KIND_BLOCK, raw.ptr, (void **)out);
}
int tether_region_wrap(tether_arena *a, MlirRegion raw, tether_region **out) {
  return wrap(a, TETHER_KIND_REGION, raw.ptr, (void **)out);
}
int tether_value_wrap(tether_arena *a, MlirValue raw, tether_value **out) {
  return wrap(a, TETHER_KIND_VALUE, (void *)raw.ptr, (void **)out);
}

/* ---- navigation ------------------------------------------------------------------------------ */

#define NAV_PROLOGUE(p, kind)                                                                      \
  tether__handle *h;                                                                               \
  tether__tree *t;                                                                                 \
  TETHER__OUT(out);                                                                                \
  TETHER__CHECK(p, kind, h, t)

int tether_op_parent(tether_op *op, tether_op **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  return tether__give(t, TETHER_KIND_OP, mlirOperationGetParentOperation(OP(h)).ptr, (void **)out);
}

int tether_op_block(tether_op *op, tether_block **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  return tether__give(t, TETHER_KIND_BLOCK, mlirOperationGetBlock(OP(h)).ptr, (void **)out);
}

int tether_op_is_root(tether_op *op, bool *out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  *out = t->root == tether__raw(h);
  return TETHER_OK;
}

int tether_op_num_regions(tether_op *op, intptr_t *out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  *out = mlirOperationGetNumRegions(OP(h));
  return TETHER_OK;
}

int tether_op_region(tether_op *op, intptr_t i, tether_region **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  if (i < 0 || i >= mlirOperationGetNumRegions(OP(h))) return TETHER_ERANGE;
  tether__handle *r = tether__intern_with(t, TETHER_KIND_REGION,
                                          mlirOperationGetRegion(OP(h), i).ptr, tether__raw(h));
  if (!r) return TETHER_ENOMEM;
  *out = (tether_region *)r;
  return TETHER_OK;
}

int tether_op_num_operands(tether_op *op, intptr_t *out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  *out = mlirOperationGetNumOperands(OP(h));
  return TETHER_OK;
}

int tether_op_operand(tether_op *op, intptr_t i, tether_value **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  if (i < 0 || i >= mlirOperationGetNumOperands(OP(h))) return TETHER_ERANGE;
  return tether__give_any(t, TETHER_KIND_VALUE, (void *)mlirOperationGetOperand(OP(h), i).ptr,
                          (void **)out);
}

int tether_op_num_results(tether_op *op, intptr_t *out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  *out = mlirOperationGetNumResults(OP(h));
  return TETHER_OK;
}

int tether_op_result(tether_op *op, intptr_t i, tether_value **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  if (i < 0 || i >= mlirOperationGetNumResults(OP(h))) return TETHER_ERANGE;
  return tether__give(t, TETHER_KIND_VALUE, (void *)mlirOperationGetResult(OP(h), i).ptr,
                      (void **)out);
}

int tether_op_num_successors(tether_op *op, intptr_t *out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  *out = mlirOperationGetNumSuccessors(OP(h));
  return TETHER_OK;
}

int tether_op_successor(tether_op *op, intptr_t i, tether_block **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  if (i < 0 || i >= mlirOperationGetNumSuccessors(OP(h))) return TETHER_ERANGE;
  return tether__give_any(t, TETHER_KIND_BLOCK, mlirOperationGetSuccessor(OP(h), i).ptr,
                          (void **)out);
}

int tether_op_next(tether_op *op, tether_op **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  if (mlirBlockIsNull(mlirOperationGetBlock(OP(h)))) {
    *out = NULL;
    return TETHER_OK;
  }
  return tether__give(t, TETHER_KIND_OP, mlirOperationGetNextInBlock(OP(h)).ptr, (void **)out);
}

int tether_op_prev(tether_op *op, tether_op **out) {
  NAV_PROLOGUE(op, TETHER_KIND_OP);
  MlirBlock b = mlirOperationGetBlock(OP(h));
  if (mlirBlockIsNull(b)) {
    *out = NULL;
    return TETHER_OK;
  }
  MlirOperation prev = {NULL};
  for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationEqual(o, OP(h));
       o = mlirOperationGetNextInBlock(o))
    prev = o;
  return tether__give(t, TETHER_KIND_OP, prev.ptr, (void **)out);
}

int tether_region_parent(tether_region *r, tether_op **out) {
  NAV_PROLOGUE(r, TETHER_KIND_REGION);
  void *parent = tether__region_parent(h);
  if (!parent) {
    MlirBlock b = mlirRegionGetFirstBlock(REG(h));
    parent = mlirBlockIsNull(b) ? NULL : mlirBlockGetParentOperation(b).ptr;
  }
  return tether__give(t, TETHER_KIND_OP, parent, (void **)out);
}

int tether_region_num_blocks(tether_region *r, intptr_t *out) {
  NAV_PROLOGUE(r, TETHER_KIND_REGION);
  *out = tether__count_blocks(REG(h));
  return TETHER_OK;
}

int tether_region_block(tether_region *r, intptr_t i, tether_block **out) {
  NAV_PROLOGUE(r, TETHER_KIND_REGION);
  if (i < 0) return TETHER_ERANGE;
  MlirBlock b = mlirRegionGetFirstBlock(REG(h));
  for (intptr_t k = 0; k < i && !mlirBlockIsNull(b); k++) b = mlirBlockGetNextInRegion(b);
  if (mlirBlockIsNull(b)) return TETHER_ERANGE;
  return tether__give(t, TETHER_KIND_BLOCK, b.ptr, (void **)out);
}

int tether_region_first_block(tether_region *r, tether_block **out) {
  NAV_PROLOGUE(r, TETHER_KIND_REGION);
  return tether__give(t, TETHER_KIND_BLOCK, mlirRegionGetFirstBlock(REG(h)).ptr, (void **)out);
}

int tether_block_parent(tether_block *b, tether_region **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  MlirRegion r = mlirBlockGetParentRegion(BLK(h));
  if (mlirRegionIsNull(r)) {
    *out = NULL;
    return TETHER_OK;
  }
  tether__handle *rh =
      tether__intern_with(t, TETHER_KIND_REGION, r.ptr, mlirBlockGetParentOperation(BLK(h)).ptr);
  if (!rh) return TETHER_ENOMEM;
  *out = (tether_region *)rh;
  return TETHER_OK;
}

int tether_block_parent_op(tether_block *b, tether_op **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  return tether__give(t, TETHER_KIND_OP, mlirBlockGetParentOperation(BLK(h)).ptr, (void **)out);
}

int tether_block_next(tether_block *b, tether_block **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  if (mlirRegionIsNull(mlirBlockGetParentRegion(BLK(h)))) {
    *out = NULL;
    return TETHER_OK;
  }
  return tether__give(t, TETHER_KIND_BLOCK, mlirBlockGetNextInRegion(BLK(h)).ptr, (void **)out);
}

int tether_block_num_ops(tether_block *b, intptr_t *out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  *out = tether__count_ops(BLK(h));
  return TETHER_OK;
}

int tether_block_op(tether_block *b, intptr_t i, tether_op **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  if (i < 0) return TETHER_ERANGE;
  MlirOperation o = mlirBlockGetFirstOperation(BLK(h));
  for (intptr_t k = 0; k < i && !mlirOperationIsNull(o); k++) o = mlirOperationGetNextInBlock(o);
  if (mlirOperationIsNull(o)) return TETHER_ERANGE;
  return tether__give(t, TETHER_KIND_OP, o.ptr, (void **)out);
}

int tether_block_first_op(tether_block *b, tether_op **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  return tether__give(t, TETHER_KIND_OP, mlirBlockGetFirstOperation(BLK(h)).ptr, (void **)out);
}

int tether_block_terminator(tether_block *b, tether_op **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  return tether__give(t, TETHER_KIND_OP, mlirBlockGetTerminator(BLK(h)).ptr, (void **)out);
}

int tether_block_has_terminator(tether_block *b, bool *out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  *out = tether__block_has_terminator(BLK(h), &t->arena->terminator);
  return TETHER_OK;
}

int tether_block_num_args(tether_block *b, intptr_t *out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  *out = mlirBlockGetNumArguments(BLK(h));
  return TETHER_OK;
}

int tether_block_arg(tether_block *b, intptr_t i, tether_value **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  if (i < 0 || i >= mlirBlockGetNumArguments(BLK(h))) return TETHER_ERANGE;
  return tether__give(t, TETHER_KIND_VALUE, (void *)mlirBlockGetArgument(BLK(h), i).ptr,
                      (void **)out);
}

int tether_block_add_arg(tether_block *b, MlirType type, MlirLocation loc, tether_value **out) {
  NAV_PROLOGUE(b, TETHER_KIND_BLOCK);
  if (mlirTypeIsNull(type) || mlirLocationIsNull(loc)) return TETHER_EARG;
  if (tether__check_ctx(t->arena, mlirTypeGetContext(type)) ||
      tether__check_ctx(t->arena, mlirLocationGetContext(loc)))
    return TETHER_ECONTEXT;
  tether__touch(t->arena);
  return tether__give(t, TETHER_KIND_VALUE, (void *)mlirBlockAddArgument(BLK(h), type, loc).ptr,
                      (void **)out);
}

int tether_value_is_result(tether_value *v, bool *out) {
  NAV_PROLOGUE(v, TETHER_KIND_VALUE);
  *out = mlirValueIsAOpResult(VAL(h));
  return TETHER_OK;
}

int tether_value_owner_op(tether_value *v, tether_op **out) {
  NAV_PROLOGUE(v, TETHER_KIND_VALUE);
  void *raw = mlirValueIsAOpResult(VAL(h)) ? mlirOpResultGetOwner(VAL(h)).ptr : NULL;
  return tether__give(t, TETHER_KIND_OP, raw, (void **)out);
}

int tether_value_owner_block(tether_value *v, tether_block **out) {
  NAV_PROLOGUE(v, TETHER_KIND_VALUE);
  void *raw = mlirValueIsABlockArgument(VAL(h)) ? mlirBlockArgumentGetOwner(VAL(h)).ptr : NULL;
  return tether__give(t, TETHER_KIND_BLOCK, raw, (void **)out);
}

int tether_value_index(tether_value *v, intptr_t *out) {
  NAV_PROLOGUE(v, TETHER_KIND_VALUE);
  *out = mlirValueIsAOpResult(VAL(h)) ? mlirOpResultGetResultNumber(VAL(h))
                                      : mlirBlockArgumentGetArgNumber(VAL(h));
  return TETHER_OK;
}

/* ---- walks ----------------------------------------------------------------------------------- */

typedef struct {
  MlirOperation *ops;
  size_t n, cap;
  int oom;
} oplist;

static MlirWalkResult collect_op(MlirOperation op, void *ud) {
  oplist *l = ud;
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 64;
    MlirOperation *p = realloc(l->ops, ncap * sizeof *p);
    if (!p) {
      l->oom = 1;
      return MlirWalkResultInterrupt;
    }
    l->ops = p;
    l->cap = ncap;
  }
  l->ops[l->n++] = op;
  return MlirWalkResultAdvance;
}

int tether_op_walk(tether_op *op, tether_walk_order order, int (*cb)(tether_op *, void *),
                   void *user) {
  tether__handle *h;
  tether__tree *t;
  if (!cb) return TETHER_EARG;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  oplist l = {0};
  mlirOperationWalk(OP(h), collect_op, &l,
                    order == TETHER_WALK_POST_ORDER ? MlirWalkPostOrder : MlirWalkPreOrder);
  if (l.oom) {
    free(l.ops);
    return TETHER_ENOMEM;
  }
  /* Handles first: the callback may erase or move operations, which invalidates their handles
   * but would leave raw pointers dangling. */
  tether__handle **hs = tether__alloc((l.n ? l.n : 1) * sizeof *hs);
  if (!hs) {
    free(l.ops);
    return TETHER_ENOMEM;
  }
  for (size_t i = 0; i < l.n; i++) {
    hs[i] = tether__intern(t, TETHER_KIND_OP, l.ops[i].ptr);
    if (!hs[i]) {
      free(l.ops);
      return TETHER_ENOMEM;
    }
  }
  free(l.ops);
  int ret = TETHER_OK;
  for (size_t i = 0; i < l.n && ret == TETHER_OK; i++)
    if (tether__valid(hs[i])) ret = cb((tether_op *)hs[i], user);
  tether_keep_alive(hs);
  tether_keep_alive(h);
  return ret;
}
