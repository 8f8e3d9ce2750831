/* ir.c: the public IR API: parsing and creating roots, guarded access, navigation, mutation.
 *
 * Invariant: every function checks its handles before touching MLIR (NULL -> TETHER_EARG, invalid
 * -> TETHER_EINVALID), and every raw object it hands to MLIR comes from a valid handle or from
 * navigation inside a tree that a valid handle keeps alive. Structural changes keep the tree
 * invariants of tree.c: handles move with ownership, and cross-tree uses are recorded as deps.
 */
#include "tether_internal.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Interfaces.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new root tree for raw op, and its handle. On failure the op is destroyed. */
static int new_root_op(tether_arena *a, MlirOperation op, tether_op **out) {
  tether__tree *t = tether__tree_new(a, TETHER_KIND_OP, op.ptr);
  if (!t) {
    mlirOperationDestroy(op);
    return TETHER_ENOMEM;
  }
  return tether__give(t, TETHER_KIND_OP, op.ptr, (void **)out);
}

/* ---- roots ----------------------------------------------------------------------------------- */

/* MLIR's parser verifies what it parsed: the new tree is known to verify. */
static int parsed_root(tether_arena *a, MlirOperation op, tether_op **out) {
  int rc = new_root_op(a, op, out);
  if (rc == TETHER_OK) tether__tree_of(TETHER__H(*out))->verified_epoch = a->epoch;
  return rc;
}

int tether_module_parse(tether_arena *a, const char *text, size_t len, tether_op **out) {
  if (!a || !text || !out) return TETHER_EARG;
  tether__ir_pressure(len);
  tether__enter(a);
  tether__diag_begin(a);
  if (tether_parse_check(a->ctx, TETHER_PARSE_MODULE, text, len) != TETHER_OK) {
    tether__diag_end(a);
    return TETHER_EPARSE;
  }
  MlirModule m = mlirModuleCreateParse(a->ctx, (MlirStringRef){text, len});
  tether__diag_end(a);
  if (mlirModuleIsNull(m)) return TETHER_EPARSE;
  return parsed_root(a, mlirModuleGetOperation(m), out);
}

int tether_op_parse(tether_arena *a, const char *text, size_t len, tether_op **out) {
  return tether_op_parse_named(a, text, len, "<tether>", out);
}

int tether_op_parse_named(tether_arena *a, const char *text, size_t len, const char *source_name,
                          tether_op **out) {
  if (!a || !text || !out || !source_name) return TETHER_EARG;
  tether__ir_pressure(len);
  tether__enter(a);
  tether__diag_begin(a);
  if (tether_parse_check(a->ctx, TETHER_PARSE_OPERATION, text, len) != TETHER_OK) {
    tether__diag_end(a);
    return TETHER_EPARSE;
  }
  MlirOperation op = mlirOperationCreateParse(a->ctx, (MlirStringRef){text, len},
                                              mlirStringRefCreateFromCString(source_name));
  tether__diag_end(a);
  if (mlirOperationIsNull(op)) return TETHER_EPARSE;
  return parsed_root(a, op, out);
}

int tether_module_create(tether_arena *a, tether_loc *loc, tether_op **out) {
  if (!a || !out) return TETHER_EARG;
  tether__enter(a);
  MlirLocation l = mlirLocationUnknownGet(a->ctx);
  if (loc) {
    tether_loc_get(loc, &l);
    if (tether__check_ctx(a, mlirLocationGetContext(l)) != TETHER_OK) return TETHER_ECONTEXT;
  }
  return new_root_op(a, mlirModuleGetOperation(mlirModuleCreateEmpty(l)), out);
}

int tether_region_create(tether_arena *a, tether_region **out) {
  if (!a || !out) return TETHER_EARG;
  tether__enter(a);
  MlirRegion r = mlirRegionCreate();
  tether__tree *t = tether__tree_new(a, TETHER_KIND_REGION, r.ptr);
  if (!t) {
    mlirRegionDestroy(r);
    return TETHER_ENOMEM;
  }
  return tether__give(t, TETHER_KIND_REGION, r.ptr, (void **)out);
}

int tether_block_create(tether_arena *a, intptr_t n, const MlirType *types,
                        const MlirLocation *locs, tether_block **out) {
  if (!a || !out || n < 0 || (n > 0 && !types)) return TETHER_EARG;
  tether__enter(a);
  MlirLocation *l = malloc((size_t)(n ? n : 1) * sizeof *l);
  if (!l) return TETHER_ENOMEM;
  for (intptr_t i = 0; i < n; i++) {
    if (mlirTypeIsNull(types[i]) || tether__check_ctx(a, mlirTypeGetContext(types[i])) ||
        (locs &&
         (mlirLocationIsNull(locs[i]) || tether__check_ctx(a, mlirLocationGetContext(locs[i]))))) {
      free(l);
      return mlirTypeIsNull(types[i]) ? TETHER_EARG : TETHER_ECONTEXT;
    }
    l[i] = locs ? locs[i] : mlirLocationUnknownGet(a->ctx);
  }
  MlirBlock b = mlirBlockCreate(n, types, l);
  free(l);
  tether__tree *t = tether__tree_new(a, TETHER_KIND_BLOCK, b.ptr);
  if (!t) {
    mlirBlockDestroy(b);
    return TETHER_ENOMEM;
  }
  return tether__give(t, TETHER_KIND_BLOCK, b.ptr, (void **)out);
}

static void collect_types(intptr_t n, MlirType *types, void *ud) {
  MlirOperationState *st = ud;
  st->results = malloc((size_t)(n ? n : 1) * sizeof(MlirType));
  if (!st->results) return;
  memcpy(st->results, types, (size_t)n * sizeof(MlirType));
  st->nResults = n;
}

/* Creates the operation; `into` NULL: as a new root; else inserted into blk (a block of tree
 * `into`) before ref (null: at the end), its handle interned in `into` directly. */
/* hv: NULL, or the handles of the state's operands then successors (their trees are known:
 * no search). */
static int create_impl(tether_arena *a, const MlirOperationState *state, tether__handle *const *hv,
                       tether__tree *into, MlirBlock blk, MlirOperation ref, tether_op **out) {
  MlirContext ctx = a->ctx;
  if (a->running) return TETHER_ERUNNING;
  tether__touch(a);
  if (mlirLocationIsNull(state->location)) return TETHER_EARG;
  if (tether__check_ctx(a, mlirLocationGetContext(state->location))) return TETHER_ECONTEXT;
  if ((state->nResults && !state->results) || (state->nOperands && !state->operands) ||
      (state->nRegions && !state->regions) || (state->nSuccessors && !state->successors) ||
      (state->nAttributes && !state->attributes) || state->nResults < 0 || state->nOperands < 0 ||
      state->nRegions < 0 || state->nSuccessors < 0 || state->nAttributes < 0)
    return TETHER_EARG;
  for (intptr_t i = 0; i < state->nResults; i++) {
    if (mlirTypeIsNull(state->results[i])) return TETHER_EARG;
    if (tether__check_ctx(a, mlirTypeGetContext(state->results[i]))) return TETHER_ECONTEXT;
  }
  for (intptr_t i = 0; i < state->nAttributes; i++) {
    if (mlirAttributeIsNull(state->attributes[i].attribute) || !state->attributes[i].name.ptr)
      return TETHER_EARG;
    if (tether__check_ctx(a, mlirAttributeGetContext(state->attributes[i].attribute)))
      return TETHER_ECONTEXT;
  }
  /* Trees this op will use or absorb, kept in GC memory so none can be finalized meanwhile. */
  intptr_t ntrees = state->nOperands + state->nSuccessors + state->nRegions;
  tether__tree *few[16]; /* on the stack, which the collector scans, for the common case */
  tether__tree **trees =
      ntrees <= 16 ? few : tether__alloc((size_t)(ntrees ? ntrees : 1) * sizeof *trees);
  if (!trees) return TETHER_ENOMEM;
  intptr_t k = 0;
  for (intptr_t i = 0; i < state->nOperands; i++, k++) {
    MlirValue v = state->operands[i];
    if (mlirValueIsNull(v)) return TETHER_EARG;
    /* The common cases without a climb: the operand's handle is given, or a value defined in the
     * block the op goes into, or the same value as the previous operand. */
    if (hv)
      trees[k] = tether__tree_of(hv[k]);
    else if (into &&
             mlirBlockEqual(mlirValueIsAOpResult(v) ? mlirOperationGetBlock(mlirOpResultGetOwner(v))
                                                    : mlirBlockArgumentGetOwner(v),
                            blk))
      trees[k] = into;
    else if (i > 0 && mlirValueEqual(v, state->operands[i - 1]))
      trees[k] = trees[k - 1];
    else
      trees[k] = tether__find_tree(a, TETHER_KIND_VALUE, (void *)v.ptr);
    if (!trees[k]) return TETHER_EARG;
  }
  for (intptr_t i = 0; i < state->nSuccessors; i++, k++) {
    if (mlirBlockIsNull(state->successors[i])) return TETHER_EARG;
    trees[k] = hv ? tether__tree_of(hv[k])
                  : tether__find_tree(a, TETHER_KIND_BLOCK, (void *)state->successors[i].ptr);
    if (!trees[k]) return TETHER_EARG;
  }
  for (intptr_t i = 0; i < state->nRegions; i++, k++) {
    tether__tree *rt = tether__roots_get(a, (void *)state->regions[i].ptr);
    if (!rt || rt->root_kind != TETHER_KIND_REGION) return TETHER_EARG; /* not a detached region */
    for (intptr_t j = state->nOperands + state->nSuccessors; j < k; j++)
      if (trees[j] == rt) return TETHER_EARG; /* the same region twice */
    if (rt->state == TETHER__TREE_PENDING) tether__tree_resurrect(rt);
    trees[k] = rt;
  }

  /* The state as given, or a copy with the inferred result types (a copy only then: this is the
   * path of every Operation.create). */
  const MlirOperationState *use = state;
  MlirOperationState st;
  MlirType *inferred = NULL;
  if (state->enableResultTypeInference) {
    memcpy(&st, state, sizeof st);
    st.enableResultTypeInference = false;
    use = &st;
    /* Infer here, before anything is consumed: a failure must not lose the caller's regions. The
     * dialect is loaded first, so that a registered op is not taken for an unregistered one. */
    const char *dot = memchr(state->name.data, '.', state->name.length);
    if (dot)
      mlirContextGetOrLoadDialect(
          ctx, (MlirStringRef){state->name.data, (size_t)(dot - state->name.data)});
    tether__diag_begin(a);
    if (!mlirContextIsRegisteredOperation(ctx, state->name) ||
        !mlirOperationImplementsInterfaceStatic(state->name, ctx,
                                                mlirInferTypeOpInterfaceTypeID())) {
      tether__diag_end(a);
      return TETHER_EARG;
    }
    MlirAttribute dict = mlirDictionaryAttrGet(ctx, state->nAttributes, state->attributes);
    tether_infer_call call = {ctx,
                              state->name,
                              state->location,
                              state->nOperands,
                              state->operands,
                              dict,
                              state->nRegions,
                              state->regions,
                              false};
    st.results = NULL;
    st.nResults = 0;
    int irc = tether_infer(&call, collect_types, NULL, &st);
    tether__diag_end(a);
    inferred = st.results;
    if (irc != TETHER_OK || (st.nResults && !st.results)) {
      free(inferred);
      return irc != TETHER_OK ? TETHER_EARG : TETHER_ENOMEM;
    }
  }
  /* Creating an operation emits no diagnostics: no handler is attached for it. */
  MlirOperation op = tether__operation_create(use, &a->opname);
  free(inferred);
  if (mlirOperationIsNull(op)) return TETHER_EARG;

  if (into) {
    /* Straight into the block's tree: no intermediate root, finalizer or merge. */
    if (mlirOperationIsNull(ref))
      mlirBlockAppendOwnedOperation(blk, op);
    else
      mlirBlockInsertOwnedOperationBefore(blk, ref, op);
  }
  tether__tree *t = into ? into : tether__tree_new(a, TETHER_KIND_OP, op.ptr);
  tether__handle *h = t ? tether__intern(t, TETHER_KIND_OP, op.ptr) : NULL;
  if (!h && into) {
    /* Out of memory with the op in the block: it stays there, reachable by navigation (the region
     * trees are merged below as usual); only no handle is given. */
    for (intptr_t i = 0; i < state->nRegions; i++)
      tether__merge(trees[state->nOperands + state->nSuccessors + i], t);
    for (intptr_t i = 0; i < state->nOperands + state->nSuccessors; i++)
      tether__add_dep(t, trees[i]);
    tether_keep_alive(trees);
    return TETHER_ENOMEM;
  }
  if (!h) {
    /* Out of memory: the regions are inside op now. Destroy op, and forget the region trees. */
    for (intptr_t i = 0; i < state->nRegions; i++) {
      tether__tree *rt = trees[state->nOperands + state->nSuccessors + i];
      tether__roots_remove(a, rt->root);
      rt->root = NULL; /* tether__tree_destroy then destroys no IR */
      tether__tree_destroy(rt, TETHER_REASON_DESTROYED);
    }
    if (t)
      tether__tree_destroy(t, TETHER_REASON_DESTROYED);
    else
      mlirOperationDestroy(op);
    return TETHER_ENOMEM;
  }
  for (intptr_t i = 0; i < state->nRegions; i++) {
    tether__tree *rt = trees[state->nOperands + state->nSuccessors + i];
    /* MLIR moved the region's blocks into the op's region i and freed the detached region: the
     * region's handle now stands for the op's region. */
    tether__handle *rh = tether__table_find(rt, rt->root, TETHER_KIND_REGION);
    if (rh) {
      tether__table_remove(rt, rh);
      tether__set_raw(rh, mlirOperationGetRegion(op, i).ptr);
      tether__set_region_parent(rh, op.ptr);
      tether__table_insert(rt, rh);
    }
    tether__merge(rt, t);
  }
  for (intptr_t i = 0; i < state->nOperands + state->nSuccessors; i++)
    if (trees[i] != t) tether__add_dep(t, trees[i]);
  /* A registered op built by hand: its verifier (and its traits' and interfaces') may assume
   * operands, regions or blocks it does not have (a linalg named op with no outputs or an empty
   * region crashes MLIR's LinalgOp verifier). Until the tree verifies, verifying or printing it
   * is tried in a child first (tether__verifier_crashes). builtin.module's verifier assumes
   * nothing. */
  if (!t->suspect && tether__op_is_registered(op) &&
      !(state->name.length == 14 && !memcmp(state->name.data, "builtin.module", 14)))
    t->suspect = 1;
  tether_keep_alive(trees);
  *out = (tether_op *)h;
  return TETHER_OK;
}

int tether_op_create(tether_arena *a, const MlirOperationState *state, tether_op **out) {
  if (!a || !state || !out || !state->name.data || state->name.length == 0) return TETHER_EARG;
  tether__enter(a);
  return create_impl(a, state, NULL, NULL, (MlirBlock){NULL}, (MlirOperation){NULL}, out);
}

static int create_at(tether_arena *a, const MlirOperationState *state, tether__handle *const *hv,
                     tether_block *block, tether_op *before, tether_op **out) {
  if (!block) return create_impl(a, state, hv, NULL, (MlirBlock){NULL}, (MlirOperation){NULL}, out);
  tether__handle *bh, *rh = NULL;
  tether__tree *bt, *rt;
  TETHER__CHECK(block, TETHER_KIND_BLOCK, bh, bt);
  if (bt->arena != a) return TETHER_ECONTEXT;
  MlirOperation ref = {NULL};
  if (before) {
    TETHER__CHECK(before, TETHER_KIND_OP, rh, rt);
    ref = OP(rh);
    if (!mlirBlockEqual(mlirOperationGetBlock(ref), BLK(bh))) return TETHER_EARG;
  }
  /* A region given to the op must not be the one holding the block (the op would contain itself).
   */
  for (intptr_t i = 0; i < state->nRegions; i++) {
    if (!state->regions || mlirRegionIsNull(state->regions[i])) return TETHER_EARG;
    if (tether__tree_resolve(tether__roots_get(a, (void *)state->regions[i].ptr)) == bt)
      return TETHER_EARG;
  }
  return create_impl(a, state, hv, bt, BLK(bh), ref, out);
}

int tether_op_create_at(tether_arena *a, const MlirOperationState *state, tether_block *block,
                        tether_op *before, tether_op **out) {
  if (!a || !state || !out || !state->name.data || state->name.length == 0 || !block)
    return TETHER_EARG;
  tether__enter(a);
  return create_at(a, state, NULL, block, before, out);
}

int tether_op_create_from(tether_arena *a, const MlirOperationState *state,
                          tether_value *const *operands, tether_block *const *successors,
                          tether_block *block, tether_op *before, tether_op **out) {
  if (!a || !state || !out || !state->name.data || state->name.length == 0 ||
      state->nOperands < 0 || state->nSuccessors < 0 || (state->nOperands && !operands) ||
      (state->nSuccessors && !successors))
    return TETHER_EARG;
  tether__enter(a);
  /* The raw operands and successors, read from their handles; the handles, kept beside them,
   * give their trees. On the stack for the common case (the collector scans it). */
  intptr_t n = state->nOperands + state->nSuccessors;
  tether__handle *hs[16];
  MlirValue vs[16];
  MlirBlock bs[16];
  tether__handle **hv = n <= 16 ? hs : tether__alloc((size_t)n * sizeof *hv);
  MlirValue *ov = state->nOperands <= 16 ? vs : malloc((size_t)state->nOperands * sizeof *ov);
  MlirBlock *sb = state->nSuccessors <= 16 ? bs : malloc((size_t)state->nSuccessors * sizeof *sb);
  int rc = hv && ov && sb ? TETHER_OK : TETHER_ENOMEM;
  for (intptr_t i = 0; rc == TETHER_OK && i < n; i++) {
    int kind = i < state->nOperands ? TETHER_KIND_VALUE : TETHER_KIND_BLOCK;
    void *p = i < state->nOperands ? (void *)operands[i] : (void *)successors[i - state->nOperands];
    tether__handle *h = TETHER__H(p);
    if (!p || tether__kind(h) != kind)
      rc = TETHER_EARG;
    else if (!tether__valid(h))
      rc = TETHER_EINVALID;
    else if (tether__tree_of(h)->arena != a)
      rc = TETHER_ECONTEXT;
    else {
      hv[i] = h;
      if (kind == TETHER_KIND_VALUE)
        ov[i] = (MlirValue){tether__raw(h)};
      else
        sb[i - state->nOperands] = (MlirBlock){tether__raw(h)};
    }
  }
  if (rc == TETHER_OK) {
    MlirOperationState st = *state;
    st.operands = ov;
    st.successors = sb;
    rc = create_at(a, &st, hv, block, before, out);
  }
  if (ov != vs) free(ov);
  if (sb != bs) free(sb);
  tether_keep_alive(hv);
  return rc;
}

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
  return tether__valid(h) ? TETHER_REASON_NONE : (tether_reason)(h->bits >> 4);
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

/* ---- structural mutation --------------------------------------------------------------------- */

int tether_block_insert_op(tether_block *b, intptr_t pos, tether_op *op) {
  tether__handle *bh, *oh;
  tether__tree *bt, *ot;
  TETHER__CHECK(b, TETHER_KIND_BLOCK, bh, bt);
  TETHER__CHECK(op, TETHER_KIND_OP, oh, ot);
  tether__touch(bt->arena);
  if (bt->arena != ot->arena) return TETHER_ECONTEXT;
  if (!tether__is_root_op(oh, ot)) return TETHER_ESTATE;
  if (bt == ot) return TETHER_EARG; /* the block is inside the operation */
  if (pos < 0 || pos > tether__count_ops(BLK(bh))) return TETHER_ERANGE;
  mlirBlockInsertOwnedOperation(BLK(bh), pos, OP(oh));
  tether__merge(ot, bt);
  return TETHER_OK;
}

int tether_block_append_op(tether_block *b, tether_op *op) {
  tether__handle *bh, *oh;
  tether__tree *bt, *ot;
  TETHER__CHECK(b, TETHER_KIND_BLOCK, bh, bt);
  TETHER__CHECK(op, TETHER_KIND_OP, oh, ot);
  tether__touch(bt->arena);
  if (bt->arena != ot->arena) return TETHER_ECONTEXT;
  if (!tether__is_root_op(oh, ot)) return TETHER_ESTATE;
  if (bt == ot) return TETHER_EARG;
  mlirBlockAppendOwnedOperation(BLK(bh), OP(oh));
  tether__merge(ot, bt);
  return TETHER_OK;
}

static int move_op(tether_op *op, tether_op *ref, int after) {
  tether__handle *oh, *rh;
  tether__tree *ot, *rt;
  TETHER__CHECK(op, TETHER_KIND_OP, oh, ot);
  TETHER__CHECK(ref, TETHER_KIND_OP, rh, rt);
  tether__touch(ot->arena);
  if (ot->arena != rt->arena) return TETHER_ECONTEXT;
  if (oh == rh || tether__op_is_inside(OP(rh), OP(oh))) return TETHER_EARG;
  MlirBlock b = mlirOperationGetBlock(OP(rh));
  if (mlirBlockIsNull(b)) return TETHER_ESTATE; /* ref is in no block */
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
  tether__touch(t->arena);
  tether__tree *nt = tether__tree_new(t->arena, TETHER_KIND_BLOCK, tether__raw(h));
  if (!nt) return TETHER_ENOMEM;
  mlirBlockDetach(BLK(h));
  return tether__move_block(t, nt, BLK(h));
}

static int insert_block(tether_region *r, intptr_t pos, tether_block *b, int append) {
  tether__handle *rh, *bh;
  tether__tree *rt, *bt;
  TETHER__CHECK(r, TETHER_KIND_REGION, rh, rt);
  TETHER__CHECK(b, TETHER_KIND_BLOCK, bh, bt);
  tether__touch(rt->arena);
  if (rt->arena != bt->arena) return TETHER_ECONTEXT;
  if (!(bt->root_kind == TETHER_KIND_BLOCK && bt->root == tether__raw(bh))) return TETHER_ESTATE;
  if (rt == bt) return TETHER_EARG; /* the region is inside the block */
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
  NAV_PROLOGUE(op, TETHER_KIND_OP);
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
  TETHER__CHECK(op, TETHER_KIND_OP, oh, ot);
  TETHER__CHECK(v, TETHER_KIND_VALUE, vh, vt);
  tether__touch(ot->arena);
  if (ot->arena != vt->arena) return TETHER_ECONTEXT;
  if (i < 0 || i >= mlirOperationGetNumOperands(OP(oh))) return TETHER_ERANGE;
  int rc = tether__add_dep(ot, vt);
  if (rc != TETHER_OK) return rc;
  mlirOperationSetOperand(OP(oh), i, VAL(vh));
  return TETHER_OK;
}

int tether_value_replace_all_uses(tether_value *of, tether_value *with) {
  tether__handle *oh, *wh;
  tether__tree *ot, *wt;
  TETHER__CHECK(of, TETHER_KIND_VALUE, oh, ot);
  TETHER__CHECK(with, TETHER_KIND_VALUE, wh, wt);
  tether__touch(ot->arena);
  if (ot->arena != wt->arena) return TETHER_ECONTEXT;
  for (MlirOpOperand u = mlirValueGetFirstUse(VAL(oh)); !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u)) {
    tether__tree *ut = tether__find_tree(ot->arena, TETHER_KIND_OP, mlirOpOperandGetOwner(u).ptr);
    if (ut && tether__add_dep(ut, wt) != TETHER_OK) return TETHER_ENOMEM;
  }
  mlirValueReplaceAllUsesOfWith(VAL(oh), VAL(wh));
  return TETHER_OK;
}

int tether_op_verify(tether_op *op) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  /* Nothing of the arena changed since the whole tree verified: so does anything inside it. */
  if (t->verified_epoch == t->arena->epoch) return TETHER_OK;
  tether__diag_begin(t->arena);
  tether__run_begin(t->arena);
  bool ok = !tether__unsafe_for_mlir(t, OP(h)) && mlirOperationVerify(OP(h));
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
  if (tether__tree_uses_other_trees(t) || tether__verifier_crashes(t, (MlirOperation){NULL})) {
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
      tether__diag_begin(t->arena);
      bool ok = mlirOperationVerify((MlirOperation){t->root});
      tether__diag_end(t->arena);
      if (ok) {
        t->suspect = 0;
        t->verified_epoch = t->arena->epoch;
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

int tether_op_run_passes(tether_op *op, MlirPassManager pm) {
  return tether_op_run_passes_ex(op, pm, 0);
}

int tether_op_run_passes_ex(tether_op *op, MlirPassManager pm, unsigned flags) {
  tether__handle *h;
  tether__tree *t;
  if (!pm.ptr) return TETHER_EARG;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  /* A pass may free any IR of the tree: refused while other trees use some of it. */
  if (tether__op_used_from_other_trees(t, OP(h))) return TETHER_EBUSY;
  tether__diag_begin(t->arena);
  tether__run_begin(t->arena);
  int rc;
  if (tether__unsafe_for_mlir(t, OP(h)) || tether__inliner_unsafe(pm, OP(h))) {
    rc = TETHER_EPASS;
  } else if (!(flags & TETHER_PASSES_TRUSTED_INPUT) && t->verified_epoch != t->arena->epoch &&
             !mlirOperationVerify(OP(h))) {
    /* MLIR's passes assume valid IR (canonicalize crashes on an arith.constant without a value):
     * the input is verified first, unless it is known to verify (nothing changed since). */
    rc = TETHER_EVERIFY;
  } else {
    tether__touch(t->arena);
    MlirLogicalResult r = mlirPassManagerRunOnOp(pm, OP(h));
    tether__tree_revalidate(t);
    rc = mlirLogicalResultIsSuccess(r) ? TETHER_OK : TETHER_EPASS;
  }
  tether__run_end(t->arena);
  tether__diag_end(t->arena);
  tether_keep_alive(h);
  return rc;
}

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
