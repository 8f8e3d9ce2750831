/* create.c: new IR: parsing, empty modules, detached regions and blocks, and operations
 * (tether_op_create, _at, _from).
 *
 * Invariant: every object made here is owned by a tree the moment it exists: a new root gets its
 * own tree (and the caller its handle), an operation created into a block is interned straight in
 * that block's tree. What a new operation takes (detached regions) merges into its tree, what it
 * uses (operands, successors of other trees) is recorded as its tree's deps; nothing the caller
 * passed is consumed unless creation succeeds.
 */
#include "../core/internal.h"
#include "../guards/guards.h"

#include <mlir-c/BuiltinAttributes.h>
#include <stdlib.h>
#include <string.h>

/* ---- new roots ------------------------------------------------------------------------------- */

static void destroy_raw(int kind, void *raw) {
  switch (kind) {
  case TETHER_KIND_OP:
    mlirOperationDestroy((MlirOperation){raw});
    break;
  case TETHER_KIND_REGION:
    mlirRegionDestroy((MlirRegion){raw});
    break;
  case TETHER_KIND_BLOCK:
    mlirBlockDestroy((MlirBlock){raw});
    break;
  }
}

/* A new tree for raw (an operation, region or block made here), and its handle. On failure raw
 * is destroyed. */
static int new_root(tether_arena *a, int kind, void *raw, void **out) {
  tether__tree *t = tether__tree_new(a, kind, raw);
  if (!t) {
    destroy_raw(kind, raw);
    return TETHER_ENOMEM;
  }
  return tether__give(t, kind, raw, out);
}

/* Parses a module (kind TETHER_PARSE_MODULE) or one operation named source_name into a new root.
 * MLIR's parser verifies what it parsed, and this the verifier gaps: the new tree is known to
 * verify. */
static int parse_root(tether_arena *a, tether_parse_kind kind, const char *text, size_t len,
                      const char *source_name, tether_op **out) {
  tether__ir_pressure(len);
  tether__enter(a);
  tether__diag_begin(a);
  MlirOperation op = {NULL};
  /* Bytecode is read by the trial helper first, and what it read, written again, read here. */
  char *read = NULL;
  size_t read_len = 0;
  int rc = tether__is_bytecode(text, len)
               ? tether__read_bytecode(a->ctx, kind, text, len, source_name ? source_name : "-",
                                       &read, &read_len)
               : tether_parse_check(a->ctx, kind, text, len);
  if (read) {
    text = read;
    len = read_len;
  }
  if (rc == TETHER_OK) {
    MlirStringRef s = {text, len};
    if (tether__verifier_gap_mentioned(text, len)) {
      /* Text with operations whose verifier may read what is not there (verifier_gaps.c): parsed
       * unverified, held to the gaps, then verified. */
      op = kind == TETHER_PARSE_MODULE ? tether__parse_module_unverified(a->ctx, s)
                                       : tether__parse_unverified(a->ctx, s);
      if (!mlirOperationIsNull(op) &&
          (tether__verifier_gap(op, true) || !mlirOperationVerify(op))) {
        mlirOperationDestroy(op);
        op = (MlirOperation){NULL};
      }
    } else if (kind == TETHER_PARSE_MODULE) {
      MlirModule m = mlirModuleCreateParse(a->ctx, s);
      if (!mlirModuleIsNull(m)) op = mlirModuleGetOperation(m);
    } else {
      op = mlirOperationCreateParse(a->ctx, s, mlirStringRefCreateFromCString(source_name));
    }
  }
  free(read);
  /* MLIR's parser verifies what it parsed; what its verifiers leave out is checked here, as if they
   * had not (verifier_gaps.c). */
  if (!mlirOperationIsNull(op) && tether__verifier_gap(op, true)) {
    mlirOperationDestroy(op);
    op = (MlirOperation){NULL};
  }
  tether__diag_end(a);
  if (mlirOperationIsNull(op)) return TETHER_EPARSE;
  rc = new_root(a, TETHER_KIND_OP, op.ptr, (void **)out);
  if (rc == TETHER_OK) tether__tree_of(TETHER__H(*out))->verified_epoch = a->epoch;
  return rc;
}

int tether_module_parse(tether_arena *a, const char *text, size_t len, tether_op **out) {
  if (!a || !text || !out) return TETHER_EARG;
  return parse_root(a, TETHER_PARSE_MODULE, text, len, NULL, out);
}

int tether_op_parse(tether_arena *a, const char *text, size_t len, tether_op **out) {
  return tether_op_parse_named(a, text, len, "<tether>", out);
}

int tether_op_parse_named(tether_arena *a, const char *text, size_t len, const char *source_name,
                          tether_op **out) {
  if (!a || !text || !out || !source_name) return TETHER_EARG;
  return parse_root(a, TETHER_PARSE_OPERATION, text, len, source_name, out);
}

int tether_op_adopt(tether_arena *a, MlirOperation raw, tether_op **out) {
  if (!a || mlirOperationIsNull(raw) || !out) return TETHER_EARG;
  if (a->running) return TETHER_ERUNNING;
  tether__enter(a);
  if (tether__check_ctx(a, mlirOperationGetContext(raw)) != TETHER_OK) return TETHER_ECONTEXT;
  tether__tree *t = tether__find_tree(a, TETHER_KIND_OP, raw.ptr);
  if (t) return tether__give(t, TETHER_KIND_OP, raw.ptr, (void **)out);
  if (!mlirBlockIsNull(mlirOperationGetBlock(raw))) return TETHER_EARG;
  /* Made elsewhere: IR nothing told tether about, so nothing is known to verify, and a binding
   * may edit it again through the raw C API. */
  tether__touch(a);
  return new_root(a, TETHER_KIND_OP, raw.ptr, (void **)out);
}

int tether_module_create(tether_arena *a, tether_loc *loc, tether_op **out) {
  if (!a || !out) return TETHER_EARG;
  tether__enter(a);
  MlirLocation l = mlirLocationUnknownGet(a->ctx);
  if (loc) {
    tether_loc_get(loc, &l);
    if (tether__check_ctx(a, mlirLocationGetContext(l)) != TETHER_OK) return TETHER_ECONTEXT;
  }
  MlirOperation m = mlirModuleGetOperation(mlirModuleCreateEmpty(l));
  return new_root(a, TETHER_KIND_OP, m.ptr, (void **)out);
}

int tether_region_create(tether_arena *a, tether_region **out) {
  if (!a || !out) return TETHER_EARG;
  tether__enter(a);
  return new_root(a, TETHER_KIND_REGION, mlirRegionCreate().ptr, (void **)out);
}

/* A new block of n arguments of the given types and locations (locs NULL: unknown), all of a's
 * context. */
static int make_block(tether_arena *a, intptr_t n, const MlirType *types, const MlirLocation *locs,
                      MlirBlock *out) {
  if (n < 0 || (n > 0 && !types)) return TETHER_EARG;
  MlirLocation few[8];
  MlirLocation *l = n <= 8 ? few : malloc((size_t)n * sizeof *l);
  if (!l) return TETHER_ENOMEM;
  int rc = TETHER_OK;
  for (intptr_t i = 0; rc == TETHER_OK && i < n; i++) {
    if (mlirTypeIsNull(types[i]) || (locs && mlirLocationIsNull(locs[i])))
      rc = TETHER_EARG;
    else if (tether__check_ctx(a, mlirTypeGetContext(types[i])) ||
             (locs && tether__check_ctx(a, mlirLocationGetContext(locs[i]))))
      rc = TETHER_ECONTEXT;
    else
      l[i] = locs ? locs[i] : mlirLocationUnknownGet(a->ctx);
  }
  if (rc == TETHER_OK) *out = mlirBlockCreate(n, types, l);
  if (l != few) free(l);
  return rc;
}

int tether_block_create(tether_arena *a, intptr_t n, const MlirType *types,
                        const MlirLocation *locs, tether_block **out) {
  if (!a || !out) return TETHER_EARG;
  tether__enter(a);
  MlirBlock b;
  int rc = make_block(a, n, types, locs, &b);
  if (rc != TETHER_OK) return rc;
  return new_root(a, TETHER_KIND_BLOCK, b.ptr, (void **)out);
}

int tether_region_append_new_block(tether_region *r, intptr_t n, const MlirType *types,
                                   const MlirLocation *locs, tether_block **out) {
  tether__handle *rh;
  tether__tree *rt;
  TETHER__OUT(out);
  TETHER__CHECK(r, TETHER_KIND_REGION, rh, rt);
  tether_arena *a = rt->arena;
  MlirBlock b;
  int rc = make_block(a, n, types, locs, &b);
  if (rc != TETHER_OK) return rc;
  /* Straight into the region's tree: no root, finalizer or merge for the block (an empty block
   * adds no nesting). Out of memory for its handle leaves it in the region, reachable by
   * navigation. */
  tether__touch(a);
  mlirRegionAppendOwnedBlock(REG(rh), b);
  tether__handle *h = tether__intern(rt, TETHER_KIND_BLOCK, b.ptr);
  if (!h) return TETHER_ENOMEM;
  *out = (tether_block *)h;
  return TETHER_OK;
}

/* ---- operations: the steps of create_impl ---------------------------------------------------- */

/* The state's arrays are there and its result types and attributes are of the arena's context. */
static int check_state(tether_arena *a, const MlirOperationState *state) {
  if (mlirLocationIsNull(state->location)) return TETHER_EARG;
  if (tether__check_ctx(a, mlirLocationGetContext(state->location))) return TETHER_ECONTEXT;
  if ((state->nResults && !state->results) || (state->nOperands && !state->operands) ||
      (state->nSuccessors && !state->successors) || (state->nAttributes && !state->attributes) ||
      state->nResults < 0 || state->nOperands < 0 || state->nRegions < 0 ||
      state->nSuccessors < 0 || state->nAttributes < 0)
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
  return TETHER_OK;
}

/* The regions a state gives (none when its regions are new ones: state->regions NULL). */
static inline intptr_t given_regions(const MlirOperationState *state) {
  return state->regions ? state->nRegions : 0;
}

/* The trees of the state's operands, successors and given regions, in that order, into trees[]:
 * each alive in the arena (TETHER_EARG otherwise), each region a detached one of its own. */
static int find_trees(tether_arena *a, const MlirOperationState *state, tether__handle *const *hv,
                      tether__tree *into, MlirBlock blk, tether__tree **trees) {
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
  for (intptr_t i = 0; i < given_regions(state); i++, k++) {
    tether__tree *rt = tether__roots_get(a, (void *)state->regions[i].ptr);
    if (!rt || rt->root_kind != TETHER_KIND_REGION) return TETHER_EARG; /* not a detached region */
    for (intptr_t j = state->nOperands + state->nSuccessors; j < k; j++)
      if (trees[j] == rt) return TETHER_EARG; /* the same region twice */
    if (rt->state == TETHER__TREE_PENDING) tether__tree_resurrect(rt);
    trees[k] = rt;
  }
  return TETHER_OK;
}

static void collect_types(intptr_t n, MlirType *types, void *ud) {
  MlirOperationState *st = ud;
  st->results = malloc((size_t)(n ? n : 1) * sizeof(MlirType));
  if (!st->results) return;
  memcpy(st->results, types, (size_t)n * sizeof(MlirType));
  st->nResults = n;
}

/* Infers st's result types (st->results: malloc, the caller's to free), before anything is
 * consumed: a failure must not lose the caller's regions. The dialect is loaded first, so that a
 * registered op is not taken for an unregistered one. */
static int infer_result_types(tether_arena *a, MlirOperationState *st) {
  MlirContext ctx = a->ctx;
  tether__diag_begin(a);
  /* Registered and implementing InferTypeOpInterface (its dialect loaded first), known from the
   * cache of operation names after the first time. */
  void *opname = tether__opname_infers(ctx, st->name, &a->opname);
  if (!opname) {
    tether__diag_end(a);
    return TETHER_EARG;
  }
  MlirAttribute dict = mlirDictionaryAttrGet(ctx, st->nAttributes, st->attributes);
  tether_infer_call call = {ctx,  st->name,     st->location, st->nOperands, st->operands,
                            dict, st->nRegions, st->regions,  false};
  st->results = NULL;
  st->nResults = 0;
  int irc = tether__infer(&call, opname, collect_types, NULL, st);
  tether__diag_end(a);
  if (irc != TETHER_OK || (st->nResults && !st->results)) {
    free(st->results);
    st->results = NULL;
    return irc != TETHER_OK ? TETHER_EARG : TETHER_ENOMEM;
  }
  return TETHER_OK;
}

/* The operation the state describes, its result types inferred first when the state asks (a copy
 * of the state only then: this is the path of every Operation.create). Creating an operation
 * emits no diagnostics: no handler is attached for it. New regions (state->regions NULL) are made
 * by the creation; inference, which reads regions, is given new empty ones, which the operation
 * then takes. */
static int make_op(tether_arena *a, const MlirOperationState *state, MlirOperation *op) {
  const MlirOperationState *use = state;
  MlirOperationState st;
  MlirType *inferred = NULL;
  MlirRegion *fresh = NULL;
  if (state->enableResultTypeInference) {
    st = *state;
    st.enableResultTypeInference = false;
    if (!st.regions && st.nRegions) {
      fresh = malloc((size_t)st.nRegions * sizeof *fresh);
      if (!fresh) return TETHER_ENOMEM;
      for (intptr_t i = 0; i < st.nRegions; i++) fresh[i] = mlirRegionCreate();
      st.regions = fresh;
    }
    int rc = infer_result_types(a, &st);
    if (rc != TETHER_OK) {
      for (intptr_t i = 0; fresh && i < st.nRegions; i++) mlirRegionDestroy(fresh[i]);
      free(fresh);
      return rc;
    }
    inferred = st.results;
    use = &st;
  }
  *op = tether__operation_create(use, &a->opname); /* takes the regions given */
  free(inferred);
  free(fresh);
  return mlirOperationIsNull(*op) ? TETHER_EARG : TETHER_OK;
}

/* The new operation op of tree t took the state's regions: MLIR moved each region's blocks into
 * op's region i and freed the detached region, so the region's handle now stands for op's region
 * and its tree merges into t. t depends on the trees of the operands and successors. */
static void absorb_trees(tether__tree *t, MlirOperation op, const MlirOperationState *state,
                         tether__tree **trees) {
  intptr_t nuses = state->nOperands + state->nSuccessors;
  for (intptr_t i = 0; i < given_regions(state); i++) {
    tether__tree *rt = trees[nuses + i];
    tether__handle *rh = tether__table_find(rt, rt->root, TETHER_KIND_REGION);
    if (rh) {
      tether__table_remove(rt, rh);
      tether__set_raw(rh, mlirOperationGetRegion(op, i).ptr);
      tether__set_region_parent(rh, op.ptr);
      tether__table_insert(rt, rh);
    }
    tether__merge(rt, t);
  }
  for (intptr_t i = 0; i < nuses; i++)
    if (trees[i] != t) tether__add_dep(t, trees[i]);
}

/* A registered op built by hand: its verifier (and its traits' and interfaces') may assume
 * operands, regions or blocks it does not have (a linalg named op with no outputs or an empty
 * region crashes MLIR's LinalgOp verifier). Until the tree verifies, verifying or printing it is
 * tried in a child first (guards/ir_guards.c, suspect trees). builtin.module's verifier assumes
 * nothing. */
static void mark_built_by_hand(tether__tree *t, MlirOperation op, MlirStringRef name) {
  if (!t->suspect && tether__op_is_registered(op) &&
      !(name.length == 14 && !memcmp(name.data, "builtin.module", 14)))
    t->suspect = 1;
}

/* Out of memory for the new operation's tree or handle (t: its tree, NULL if none could be
 * made). In a block, op stays there, reachable by navigation, with its regions' trees absorbed as
 * usual; only no handle is given. As a root, op is destroyed and the regions' trees forgotten. */
static int creation_failed(tether_arena *a, tether__tree *t, tether__tree *into, MlirOperation op,
                           const MlirOperationState *state, tether__tree **trees) {
  if (into) {
    absorb_trees(into, op, state, trees);
    mark_built_by_hand(into, op, state->name);
    return TETHER_ENOMEM;
  }
  for (intptr_t i = 0; i < given_regions(state); i++) {
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

/* Creates the operation: as a new root (into NULL), or inserted into blk, a block of tree `into`,
 * before ref (null: at the end), its handle interned in `into` directly (no intermediate root,
 * finalizer or merge). hv: NULL, or the handles of the state's operands then successors (their
 * trees are known: no search). */
static int create_impl(tether_arena *a, const MlirOperationState *state, tether__handle *const *hv,
                       tether__tree *into, MlirBlock blk, MlirOperation ref, tether_op **out) {
  if (a->running) return TETHER_ERUNNING;
  tether__touch(a);
  int rc = check_state(a, state);
  if (rc != TETHER_OK) return rc;
  /* Trees this op will use or absorb, kept in GC memory so none can be finalized meanwhile. */
  intptr_t ntrees = state->nOperands + state->nSuccessors + given_regions(state);
  tether__tree *few[16]; /* on the stack, which the collector scans, for the common case */
  tether__tree **trees =
      ntrees <= 16 ? few : tether__alloc((size_t)(ntrees ? ntrees : 1) * sizeof *trees);
  if (!trees) return TETHER_ENOMEM;
  rc = find_trees(a, state, hv, into, blk, trees);
  /* While MLIR is suspended in a callback: no new uses of a tree being rewritten from another one,
   * no tree MLIR runs on absorbed as a region. */
  for (intptr_t i = 0; rc == TETHER_OK && a->scopes && i < ntrees; i++)
    rc = i < state->nOperands + state->nSuccessors
             ? tether__scope_use(into, trees[i])
             : tether__scope_removal(trees[i], (MlirOperation){NULL}, (MlirBlock){NULL});
  /* An operation with regions is a level others nest in; its regions' contents nest below it, as
   * deep as they already are. */
  int above = state->nRegions ? 1 + (into ? tether__ops_above(blk) : 0) : 0;
  if (above > TETHER_MAX_NESTING) rc = TETHER_EDEPTH;
  for (intptr_t i = 0; rc == TETHER_OK && i < given_regions(state); i++)
    if (tether__region_nesting_exceeded(state->regions[i], above)) rc = TETHER_EDEPTH;
  MlirOperation op = {NULL};
  if (rc == TETHER_OK) rc = make_op(a, state, &op);
  if (rc != TETHER_OK) return rc;

  if (into) {
    if (mlirOperationIsNull(ref))
      mlirBlockAppendOwnedOperation(blk, op);
    else
      mlirBlockInsertOwnedOperationBefore(blk, ref, op);
  }
  tether__tree *t = into ? into : tether__tree_new(a, TETHER_KIND_OP, op.ptr);
  tether__handle *h = t ? tether__intern(t, TETHER_KIND_OP, op.ptr) : NULL;
  if (!h) {
    rc = creation_failed(a, t, into, op, state, trees);
  } else {
    absorb_trees(t, op, state, trees);
    mark_built_by_hand(t, op, state->name);
    *out = (tether_op *)h;
  }
  tether_keep_alive(trees);
  return rc;
}

/* ---- operations: the entry points ------------------------------------------------------------ */

int tether_op_create(tether_arena *a, const MlirOperationState *state, tether_op **out) {
  if (!a || !state || !out || !state->name.data || state->name.length == 0) return TETHER_EARG;
  tether__enter(a);
  return create_impl(a, state, NULL, NULL, (MlirBlock){NULL}, (MlirOperation){NULL}, out);
}

/* block NULL: a new root. Else block (and before) are checked, and the state's regions must not
 * hold block. */
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
  /* A region given to the op must not be the one holding the block (the op would contain
   * itself). */
  for (intptr_t i = 0; i < given_regions(state); i++) {
    if (mlirRegionIsNull(state->regions[i])) return TETHER_EARG;
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
