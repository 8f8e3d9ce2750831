/* tree.c: trees, one per root: interning handles, moving them between trees, the dependencies
 * between trees, invalidation and destruction, and the questions of who uses what.
 *
 * Invariants:
 *  - Every MLIR object alive in an arena belongs to exactly one tree: the one whose root it is
 *    nested in. A valid handle is in the intern table of that tree and points to it; an invalid
 *    handle is in no table and points to no tree.
 *  - A live tree's root is in its arena's roots table; a merged, pending-then-destroyed or dead
 *    tree's is not.
 *  - If IR of tree T uses a value or a block of tree D (D != T), then D is in T's deps (after
 *    resolving merges), so D cannot become unreachable before T.
 */
#include "internal.h"

#include <stdlib.h>

/* ---- walking the IR ---------------------------------------------------------------------------
 *
 * visit_*: every object (operation, region, block, value) of an operation or a tree, each once.
 * mlirOperationWalk descends into nested operations itself, so visit_op_cb visits only an
 * operation's own results, regions and blocks (visit_block_contents with ops == 0). */

typedef void (*visit_fn)(void *raw, int kind, void *ud);

typedef struct {
  visit_fn fn;
  void *ud;
} visit_ctx;

static void visit_block_contents(MlirBlock b, visit_ctx *v, int ops);

static MlirWalkResult visit_op_cb(MlirOperation op, void *ud) {
  visit_ctx *v = ud;
  v->fn(op.ptr, TETHER_KIND_OP, v->ud);
  intptr_t n = mlirOperationGetNumResults(op);
  for (intptr_t i = 0; i < n; i++)
    v->fn((void *)mlirOperationGetResult(op, i).ptr, TETHER_KIND_VALUE, v->ud);
  intptr_t nr = mlirOperationGetNumRegions(op);
  for (intptr_t i = 0; i < nr; i++) {
    MlirRegion r = mlirOperationGetRegion(op, i);
    v->fn(r.ptr, TETHER_KIND_REGION, v->ud);
    for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b);
         b = mlirBlockGetNextInRegion(b))
      visit_block_contents(b, v, 0);
  }
  return MlirWalkResultAdvance;
}

/* Visits a block and its arguments; with ops, also every operation in it (recursively). */
static void visit_block_contents(MlirBlock b, visit_ctx *v, int ops) {
  v->fn(b.ptr, TETHER_KIND_BLOCK, v->ud);
  intptr_t na = mlirBlockGetNumArguments(b);
  for (intptr_t i = 0; i < na; i++)
    v->fn((void *)mlirBlockGetArgument(b, i).ptr, TETHER_KIND_VALUE, v->ud);
  if (ops)
    for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
         o = mlirOperationGetNextInBlock(o))
      mlirOperationWalk(o, visit_op_cb, v, MlirWalkPreOrder);
}

static void visit_op(MlirOperation op, visit_fn fn, void *ud) {
  visit_ctx v = {fn, ud};
  mlirOperationWalk(op, visit_op_cb, &v, MlirWalkPreOrder);
}

static void visit_tree(tether__tree *t, visit_fn fn, void *ud) {
  visit_ctx v = {fn, ud};
  switch (t->root_kind) {
  case TETHER_KIND_OP:
    mlirOperationWalk((MlirOperation){t->root}, visit_op_cb, &v, MlirWalkPreOrder);
    break;
  case TETHER_KIND_REGION: {
    MlirRegion r = {t->root};
    fn(r.ptr, TETHER_KIND_REGION, ud);
    for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b);
         b = mlirBlockGetNextInRegion(b))
      visit_block_contents(b, &v, 1);
    break;
  }
  case TETHER_KIND_BLOCK:
    visit_block_contents((MlirBlock){t->root}, &v, 1);
    break;
  }
}

/* Calls fn on every operation of tree u (its root and everything nested). */
void tether__tree_walk_ops(tether__tree *u, MlirOperationWalkCallback fn, void *ud) {
  if (!u->root) return;
  if (u->root_kind == TETHER_KIND_OP) {
    mlirOperationWalk((MlirOperation){u->root}, fn, ud, MlirWalkPreOrder);
    return;
  }
  MlirBlock first = u->root_kind == TETHER_KIND_BLOCK
                        ? (MlirBlock){u->root}
                        : mlirRegionGetFirstBlock((MlirRegion){u->root});
  for (MlirBlock b = first; !mlirBlockIsNull(b);
       b = u->root_kind == TETHER_KIND_BLOCK ? (MlirBlock){NULL} : mlirBlockGetNextInRegion(b))
    for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
         o = mlirOperationGetNextInBlock(o))
      mlirOperationWalk(o, fn, ud, MlirWalkPreOrder);
}

/* ---- roots ----------------------------------------------------------------------------------- */

typedef struct {
  int kind;
  void *ptr;
} rootref;

/* The C API cannot give a region's parent operation, so climbing goes through blocks. */
static rootref climb_block(MlirBlock b) {
  for (;;) {
    MlirOperation p = mlirBlockGetParentOperation(b);
    if (mlirOperationIsNull(p)) {
      MlirRegion r = mlirBlockGetParentRegion(b);
      return mlirRegionIsNull(r) ? (rootref){TETHER_KIND_BLOCK, b.ptr}
                                 : (rootref){TETHER_KIND_REGION, r.ptr};
    }
    b = mlirOperationGetBlock(p);
    if (mlirBlockIsNull(b)) return (rootref){TETHER_KIND_OP, p.ptr};
  }
}

static rootref climb_op(MlirOperation op) {
  MlirBlock b = mlirOperationGetBlock(op);
  if (mlirBlockIsNull(b)) return (rootref){TETHER_KIND_OP, op.ptr};
  return climb_block(b);
}

/* A region's root, known only through one of its blocks: an empty region attached to an operation
 * cannot be climbed from (it is then taken for a detached root, and not found). */
static rootref climb_region(MlirRegion r) {
  MlirBlock b = mlirRegionGetFirstBlock(r);
  if (mlirBlockIsNull(b)) return (rootref){TETHER_KIND_REGION, r.ptr};
  return climb_block(b);
}

static rootref climb(int kind, void *raw) {
  switch (kind) {
  case TETHER_KIND_OP:
    return climb_op((MlirOperation){raw});
  case TETHER_KIND_REGION:
    return climb_region((MlirRegion){raw});
  case TETHER_KIND_BLOCK:
    return climb_block((MlirBlock){raw});
  default: {
    MlirValue v = {raw};
    if (mlirValueIsAOpResult(v)) return climb_op(mlirOpResultGetOwner(v));
    return climb_block(mlirBlockArgumentGetOwner(v));
  }
  }
}

tether__tree *tether__tree_resolve(tether__tree *t) {
  while (t && t->state == TETHER__TREE_MERGED) t = t->merged_into;
  return t;
}

tether__tree *tether__find_tree(tether_arena *a, int kind, void *raw) {
  /* A tree the collector found unreachable but whose finalizer has not run yet must be seen as
   * pending (and resurrected), not handed out as live. */
  if (GC_should_invoke_finalizers()) GC_invoke_finalizers();
  rootref r = climb(kind, raw);
  tether__tree *t = tether__roots_get(a, r.ptr);
  if (!t || t->root_kind != r.kind) return NULL;
  if (t->state == TETHER__TREE_PENDING) tether__tree_resurrect(t);
  return t;
}

static int unlink_from(tether__tree **list, tether__tree *t) {
  for (tether__tree **p = list; *p; p = &(*p)->next)
    if (*p == t) {
      *p = t->next;
      t->next = NULL;
      return 1;
    }
  return 0;
}

void tether__tree_resurrect(tether__tree *t) {
  tether_arena *a = t->arena;
  pthread_mutex_lock(&a->lock);
  if (unlink_from(&a->pending, t))
    a->stats.pending--;
  else if (unlink_from(&a->stuck, t))
    a->stats.stuck--;
  t->state = TETHER__TREE_LIVE;
  pthread_mutex_unlock(&a->lock);
  GC_register_finalizer_no_order(t, tether__tree_finalizer, NULL, NULL, NULL);
}

tether__tree *tether__tree_new(tether_arena *a, int root_kind, void *root) {
  tether__tree *t = tether__alloc(sizeof *t);
  if (!t) return NULL;
  t->arena = a;
  t->root = root;
  t->root_kind = (uint8_t)root_kind;
  t->state = TETHER__TREE_LIVE;
  if (tether__weak_register(t) != TETHER_OK) return NULL;
  if (tether__roots_put(a, root, t) != TETHER_OK) {
    tether__weak_unregister(t);
    return NULL;
  }
  GC_register_finalizer_no_order(t, tether__tree_finalizer, NULL, NULL, NULL);
  a->stats.roots++;
  return t;
}

/* ---- handles --------------------------------------------------------------------------------- */

static inline void set_tree(tether__handle *h, tether__tree *t) {
  h->bits = (uintptr_t)t | (h->bits & (TETHER__KIND_MASK | TETHER__SEEN | TETHER__INVALID));
}

/* ---- holds ----------------------------------------------------------------------------------- */

/* A tree is pinned while its table holds a held handle (tether__tree.held > 0). */
static int hold_pin(tether__tree *t) {
  if (t->hold_pin) return TETHER_OK;
  intptr_t slot = tether_pin(t);
  if (slot < 0) return TETHER_ENOMEM;
  if (slot >= INT32_MAX) {
    tether_unpin(slot);
    return TETHER_ENOMEM;
  }
  t->hold_pin = (int32_t)(slot + 1);
  return TETHER_OK;
}

static void held_settle(tether__tree *t) {
  if (!t->held && t->hold_pin) {
    tether_unpin(t->hold_pin - 1);
    t->hold_pin = 0;
  }
  /* A dead tree's table holds only held handles: with the last released, it goes. */
  if (!t->held && t->state == TETHER__TREE_DEAD && t->slots) {
    tether__weak_unregister(t);
    tether__table_free(t->slots);
    t->slots = NULL;
    t->cap = t->used = 0;
  }
}

int tether_handle_hold(void *handle) {
  tether__handle *h = TETHER__H(handle);
  if (!h) return TETHER_EARG;
  if (h->holds == UINT32_MAX || (tether__holder_of(h) && tether__holder_of(h)->held == UINT32_MAX))
    return TETHER_ENOMEM;
  tether__tree *t = tether__holder_of(h);
  if (!t) {
    /* Invalid and not held: in no table. A tree of its own (no arena, no IR) holds it. */
    t = tether__alloc(sizeof *t);
    tether__handle **slots = t ? tether__table_alloc(1) : NULL;
    if (!slots) return TETHER_ENOMEM;
    t->state = TETHER__TREE_DEAD;
    t->slots = slots;
    t->cap = t->used = 1;
    slots[0] = h;
    if (tether__weak_register(t) != TETHER_OK) {
      tether__table_free(slots);
      return TETHER_ENOMEM;
    }
    set_tree(h, t);
  }
  if (hold_pin(t) != TETHER_OK) return TETHER_ENOMEM;
  t->held++;
  h->holds++;
  return TETHER_OK;
}

void tether_handle_release(void *handle) {
  tether__handle *h = TETHER__H(handle);
  if (!h || !h->holds) return;
  tether__tree *t = tether__holder_of(h);
  h->holds--;
  t->held--;
  if (!h->holds && !tether__valid(h)) {
    /* Nothing keeps it now: out of its tree's table. A dead tree's is a plain array of its held
     * handles (tether__tree_destroy), of weak.c's kind, which must not point to a handle the
     * collector may take. */
    if (t->state == TETHER__TREE_LIVE) {
      tether__table_remove(t, h);
    } else if (t->state == TETHER__TREE_DEAD) {
      for (uint32_t i = 0; i < t->used; i++)
        if (t->slots[i] == h) {
          t->slots[i] = t->slots[--t->used];
          t->slots[t->used] = NULL;
          break;
        }
    }
    h->bits &= TETHER__KIND_MASK | TETHER__INVALID;
  }
  held_settle(t);
}

tether__handle *tether__intern(tether__tree *t, int kind, void *raw) {
  return tether__intern_with(t, kind, raw, NULL);
}

tether__handle *tether__intern_with(tether__tree *t, int kind, void *raw, void *parent) {
  /* One probe: room first, then either the existing handle or the slot for a new one. */
  if (tether__table_reserve(t, 1) != TETHER_OK) return NULL;
  uint32_t slot;
  tether__handle *h = tether__table_probe(t, raw, kind, &slot);
  if (h) {
    if (kind == TETHER_KIND_REGION && parent) tether__set_region_parent(h, parent);
    return h;
  }
  /* The allocation may collect, which may turn entries into tombstones but never fills an empty
   * slot (weak.c): the slot stays right. */
  h = kind == TETHER_KIND_REGION ? tether__alloc(sizeof(tether__region_handle))
                                 : tether__handle_alloc(t->arena);
  if (!h) return NULL;
  tether__set_raw(h, raw);
  h->bits = (uintptr_t)t | (uintptr_t)kind;
  h->huser = ~(uintptr_t)0;
  h->holds = 0;
  h->reason = 0;
  if (kind == TETHER_KIND_REGION) tether__set_region_parent(h, parent);
  tether__table_fill(t, slot, h);
  t->counts[kind]++;
  t->arena->stats.handles[kind]++;
  return h;
}

tether__handle *tether__intern_any(tether__tree *t, int kind, void *raw) {
  tether__handle *h = tether__table_find(t, raw, kind);
  if (h) return h;
  tether__tree *owner = tether__find_tree(t->arena, kind, raw);
  return owner ? tether__intern(owner, kind, raw) : NULL;
}

void tether__handle_invalidate(tether__handle *h, int reason) {
  tether__set_raw(h, NULL);
  h->reason = (uint16_t)reason;
  /* A held handle stays in its tree's table (the caller puts it back under its new key). */
  uintptr_t tree = h->holds ? h->bits & ~TETHER__LOW_MASK : 0;
  h->bits = tree | (h->bits & TETHER__KIND_MASK) | TETHER__INVALID;
}

/* ---- inside and outside ---------------------------------------------------------------------- */

int tether__op_is_inside(MlirOperation x, MlirOperation anc) {
  for (; !mlirOperationIsNull(x); x = mlirOperationGetParentOperation(x))
    if (mlirOperationEqual(x, anc)) return 1;
  return 0;
}

/* Whether block b is in a region of anc or of an operation nested in it. */
static int block_is_inside(MlirBlock b, MlirOperation anc) {
  MlirOperation p = mlirBlockGetParentOperation(b);
  return !mlirOperationIsNull(p) && tether__op_is_inside(p, anc);
}

/* Whether value v is defined by anc or inside it. */
static int value_is_inside(MlirValue v, MlirOperation anc) {
  if (mlirValueIsAOpResult(v)) return tether__op_is_inside(mlirOpResultGetOwner(v), anc);
  return block_is_inside(mlirBlockArgumentGetOwner(v), anc);
}

/* Whether the value or block raw (kind) belongs to tree t. */
static int belongs(tether__tree *t, int kind, void *raw) {
  return tether__tree_resolve(tether__find_tree(t->arena, kind, raw)) == t;
}

/* Whether live tree u records a dependency on t. */
static int depends_on(tether__tree *u, tether__tree *t) {
  for (uint32_t k = 0; k < u->ndeps; k++)
    if (tether__tree_resolve(u->deps[k]) == t) return 1;
  return 0;
}

/* The live trees of t's arena, t excepted, that record a dependency on t, one per call: *i starts
 * at 0; NULL after the last. */
static tether__tree *next_dependent(tether__tree *t, uint32_t *i) {
  tether_arena *a = t->arena;
  while (*i < a->rcap) {
    uint32_t j = (*i)++;
    tether__tree *u = a->roots[j].key ? a->roots[j].tree : NULL;
    if (u && u != t && u->state == TETHER__TREE_LIVE && depends_on(u, t)) return u;
  }
  return NULL;
}

/* ---- dependencies ---------------------------------------------------------------------------- */

int tether__add_dep(tether__tree *t, tether__tree *d) {
  t = tether__tree_resolve(t);
  d = tether__tree_resolve(d);
  if (!t || !d || t == d) return TETHER_OK;
  for (uint32_t i = 0; i < t->ndeps; i++)
    if (tether__tree_resolve(t->deps[i]) == d) return TETHER_OK;
  if (t->ndeps == t->capdeps) {
    uint32_t ncap = t->capdeps ? t->capdeps * 2 : 4;
    tether__tree **n = tether__alloc(ncap * sizeof *n);
    if (!n) return TETHER_ENOMEM;
    for (uint32_t i = 0; i < t->ndeps; i++) n[i] = t->deps[i];
    t->deps = n;
    t->capdeps = ncap;
  }
  t->deps[t->ndeps++] = d;
  return TETHER_OK;
}

typedef struct {
  MlirOperation anc;
  tether__tree *t; /* deps target (operand deps) or dep (use deps); NULL: only find a use */
  int found;
  int rc;
  int inner; /* uses_cb: not the uses of anc's own results */
} dep_ctx;

static MlirWalkResult operand_deps_cb(MlirOperation op, void *ud) {
  dep_ctx *c = ud;
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n; i++) {
    MlirValue v = mlirOperationGetOperand(op, i);
    if (value_is_inside(v, c->anc)) continue;
    tether__tree *d = tether__find_tree(c->t->arena, TETHER_KIND_VALUE, (void *)v.ptr);
    if (d && tether__add_dep(c->t, d) != TETHER_OK) c->rc = TETHER_ENOMEM;
  }
  intptr_t ns = mlirOperationGetNumSuccessors(op);
  for (intptr_t i = 0; i < ns; i++) {
    MlirBlock b = mlirOperationGetSuccessor(op, i);
    if (block_is_inside(b, c->anc)) continue;
    tether__tree *d = tether__find_tree(c->t->arena, TETHER_KIND_BLOCK, b.ptr);
    if (d && tether__add_dep(c->t, d) != TETHER_OK) c->rc = TETHER_ENOMEM;
  }
  return MlirWalkResultAdvance;
}

int tether__record_operand_deps(tether__tree *t, MlirOperation op) {
  dep_ctx c = {op, t, 0, TETHER_OK, 0};
  mlirOperationWalk(op, operand_deps_cb, &c, MlirWalkPreOrder);
  return c.rc;
}

/* For every use of v outside c->anc: with c->t set, records that the user's tree depends on c->t;
 * without, just notes that one exists. */
static void uses_outside(MlirValue v, dep_ctx *c) {
  for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u)) {
    MlirOperation user = mlirOpOperandGetOwner(u);
    if (tether__op_is_inside(user, c->anc)) continue;
    c->found = 1;
    if (!c->t) return;
    tether__tree *ut = tether__find_tree(c->t->arena, TETHER_KIND_OP, user.ptr);
    if (ut && tether__add_dep(ut, c->t) != TETHER_OK) c->rc = TETHER_ENOMEM;
  }
}

/* The uses from outside c->anc of the values defined inside it (with c->t, recorded as deps of the
 * users' trees; without, stops at the first, counting branches into its blocks too). */
static MlirWalkResult uses_cb(MlirOperation op, void *ud) {
  dep_ctx *c = ud;
  intptr_t n = c->inner && mlirOperationEqual(op, c->anc) ? 0 : mlirOperationGetNumResults(op);
  for (intptr_t i = 0; i < n && !(c->found && !c->t); i++)
    uses_outside(mlirOperationGetResult(op, i), c);
  intptr_t nr = mlirOperationGetNumRegions(op);
  for (intptr_t i = 0; i < nr; i++)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, i)); !mlirBlockIsNull(b);
         b = mlirBlockGetNextInRegion(b)) {
      intptr_t na = mlirBlockGetNumArguments(b);
      for (intptr_t j = 0; j < na; j++) uses_outside(mlirBlockGetArgument(b, j), c);
      /* A branch from outside into the block counts as a use (erase would leave it dangling);
       * its tree's dependency is recorded where successors are (record_successor_deps). */
      if (!c->t && tether__block_used_from_outside(b, c->anc)) c->found = 1;
    }
  return (c->found && !c->t) ? MlirWalkResultInterrupt : MlirWalkResultAdvance;
}

/* Records deps of the trees of every user outside op of a value defined inside op on tree t. */
static int record_use_deps(tether__tree *t, MlirOperation op) {
  dep_ctx c = {op, t, 0, TETHER_OK, 0};
  mlirOperationWalk(op, uses_cb, &c, MlirWalkPreOrder);
  return c.rc;
}

/* Branches into moved IR. Blocks have no use list in the C API, so after IR moved from tree
 * `from` to tree `to`, the operations of `from` (and of the trees that depend on `from`) are
 * searched for successors inside the moved IR: their trees now depend on `to`, which must outlive
 * them (destroying a block before its predecessors' branches unlinks them from freed memory). */
typedef struct {
  MlirOperation op;   /* the moved operation, or null */
  MlirBlock block;    /* the moved block, or null */
  tether__tree *user; /* the tree being searched */
  tether__tree *to;
  int rc;
} succ_ctx;

static int block_in_moved(MlirBlock b, succ_ctx *c) {
  if (!mlirBlockIsNull(c->block) && mlirBlockEqual(b, c->block)) return 1;
  for (MlirOperation p = mlirBlockGetParentOperation(b); !mlirOperationIsNull(p);
       p = mlirOperationGetParentOperation(p)) {
    if (!mlirOperationIsNull(c->op) && mlirOperationEqual(p, c->op)) return 1;
    if (!mlirBlockIsNull(c->block) && mlirBlockEqual(mlirOperationGetBlock(p), c->block)) return 1;
  }
  return 0;
}

static MlirWalkResult succ_deps_cb(MlirOperation op, void *ud) {
  succ_ctx *c = ud;
  intptr_t n = mlirOperationGetNumSuccessors(op);
  for (intptr_t i = 0; i < n; i++)
    if (block_in_moved(mlirOperationGetSuccessor(op, i), c) &&
        tether__add_dep(c->user, c->to) != TETHER_OK)
      c->rc = TETHER_ENOMEM;
  return MlirWalkResultAdvance;
}

static int has_blocks(MlirOperation op) {
  intptr_t n = mlirOperationGetNumRegions(op);
  for (intptr_t i = 0; i < n; i++)
    if (!mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(op, i)))) return 1;
  return 0;
}

static int record_successor_deps(tether__tree *from, tether__tree *to, MlirOperation op,
                                 MlirBlock block) {
  if (!mlirOperationIsNull(op) && !has_blocks(op)) return TETHER_OK; /* nothing to branch to */
  succ_ctx c = {op, block, from, to, TETHER_OK};
  tether__tree_walk_ops(from, succ_deps_cb, &c);
  uint32_t i = 0;
  for (tether__tree *u; (u = next_dependent(from, &i));) {
    if (u == to) continue;
    c.user = u;
    tether__tree_walk_ops(u, succ_deps_cb, &c);
  }
  return c.rc;
}

/* ---- who uses what (docs/ownership.md, "Cross-tree references") -------------------------------
 *
 * A use is an operand (a value) or a successor (a block branched to). Six questions on one grid:
 * does the subject use something outside it, or is something of it used from outside?
 *
 *                          uses something ...                is used from ...
 *   op, vs the rest        tether__op_uses_outside           tether__op_used_from_outside
 *   op, vs other trees     tether__op_uses_other_trees       tether__op_used_from_other_trees
 *   tree, vs other trees   tether__tree_uses_other_trees     tether__tree_used_from_other_trees
 *
 * "Outside op": neither op nor nested in it, in any tree. "Other trees": IR of another live tree
 * of the arena; only trees that record a dependency are searched (the deps invariant above). */

static MlirWalkResult uses_outside_cb(MlirOperation op, void *ud) {
  dep_ctx *c = ud;
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n; i++)
    if (!value_is_inside(mlirOperationGetOperand(op, i), c->anc)) {
      c->found = 1;
      return MlirWalkResultInterrupt;
    }
  intptr_t ns = mlirOperationGetNumSuccessors(op);
  for (intptr_t i = 0; i < ns; i++)
    if (!block_is_inside(mlirOperationGetSuccessor(op, i), c->anc)) {
      c->found = 1;
      return MlirWalkResultInterrupt;
    }
  return MlirWalkResultAdvance;
}

int tether__op_uses_outside(MlirOperation op) {
  dep_ctx c = {op, NULL, 0, TETHER_OK, 0};
  mlirOperationWalk(op, uses_outside_cb, &c, MlirWalkPreOrder);
  return c.found;
}

int tether__op_used_from_outside(MlirOperation op) {
  dep_ctx c = {op, NULL, 0, TETHER_OK, 0};
  mlirOperationWalk(op, uses_cb, &c, MlirWalkPreOrder);
  return c.found;
}

int tether__op_inner_used_from_outside(MlirOperation op) {
  dep_ctx c = {op, NULL, 0, TETHER_OK, 1};
  mlirOperationWalk(op, uses_cb, &c, MlirWalkPreOrder);
  return c.found;
}

/* Only uses inside nested regions count: MLIR's verifier and printer never look at where the
 * operands of the operation they start from (or of a tree's top-level operations) are defined, but
 * their dominance and isolation checks of nested operations climb the operand's region tree, which
 * ends without a parent operation in a detached region or block and is dereferenced. */
typedef struct {
  tether__tree *t;
  MlirOperation root; /* the operation the walk starts from (null: a whole tree) */
  MlirOperation user; /* found: the first user, its operand (or successor) index */
  intptr_t index;
  int succ, found;
} foreign_ctx;

static MlirWalkResult foreign_cb(MlirOperation op, void *ud) {
  foreign_ctx *c = ud;
  if (mlirOperationEqual(op, c->root) || mlirOperationIsNull(mlirOperationGetParentOperation(op)))
    return MlirWalkResultAdvance;
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n; i++)
    if (!belongs(c->t, TETHER_KIND_VALUE, (void *)mlirOperationGetOperand(op, i).ptr)) {
      *c = (foreign_ctx){c->t, c->root, op, i, 0, 1};
      return MlirWalkResultInterrupt;
    }
  intptr_t ns = mlirOperationGetNumSuccessors(op);
  for (intptr_t i = 0; i < ns; i++)
    if (!belongs(c->t, TETHER_KIND_BLOCK, mlirOperationGetSuccessor(op, i).ptr)) {
      *c = (foreign_ctx){c->t, c->root, op, i, 1, 1};
      return MlirWalkResultInterrupt;
    }
  return MlirWalkResultAdvance;
}

int tether__op_uses_other_trees(tether__tree *t, MlirOperation op, MlirOperation *user,
                                intptr_t *index, int *succ) {
  /* A tree that records no dependency uses nothing of another tree. */
  if (t->ndeps == 0) return 0;
  foreign_ctx c = {t, op, {NULL}, 0, 0, 0};
  mlirOperationWalk(op, foreign_cb, &c, MlirWalkPreOrder);
  if (!c.found) return 0;
  *user = c.user;
  *index = c.index;
  *succ = c.succ;
  return 1;
}

int tether__root_uses_own_results(tether__tree *t, MlirOperation *user, intptr_t *index) {
  if (t->root_kind != TETHER_KIND_OP) return 0;
  MlirOperation root = {t->root};
  if (!mlirBlockIsNull(mlirOperationGetBlock(root))) return 0;
  intptr_t n = mlirOperationGetNumResults(root);
  for (intptr_t i = 0; i < n; i++)
    for (MlirOpOperand u = mlirValueGetFirstUse(mlirOperationGetResult(root, i));
         !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
      MlirOperation owner = mlirOpOperandGetOwner(u);
      if (tether__op_is_inside(owner, root)) {
        *user = owner;
        *index = (intptr_t)mlirOpOperandGetOperandNumber(u);
        return 1;
      }
    }
  return 0;
}

int tether__tree_uses_other_trees(tether__tree *t) {
  if (t->ndeps == 0) return 0;
  foreign_ctx c = {t, {NULL}, {NULL}, 0, 0, 0};
  tether__tree_walk_ops(t, foreign_cb, &c);
  return c.found;
}

/* Whether an operation uses a value or block inside c->anc, or, when c->anc is null, of tree
 * c->t. */
typedef struct {
  tether__tree *t;
  MlirOperation anc;
  int found;
} into_ctx;

static int into(into_ctx *c, int kind, void *raw) {
  if (mlirOperationIsNull(c->anc)) return belongs(c->t, kind, raw);
  return kind == TETHER_KIND_VALUE ? value_is_inside((MlirValue){raw}, c->anc)
                                   : block_is_inside((MlirBlock){raw}, c->anc);
}

static MlirWalkResult uses_into_cb(MlirOperation op, void *ud) {
  into_ctx *c = ud;
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n && !c->found; i++)
    if (into(c, TETHER_KIND_VALUE, (void *)mlirOperationGetOperand(op, i).ptr)) c->found = 1;
  intptr_t ns = mlirOperationGetNumSuccessors(op);
  for (intptr_t i = 0; i < ns && !c->found; i++)
    if (into(c, TETHER_KIND_BLOCK, mlirOperationGetSuccessor(op, i).ptr)) c->found = 1;
  return c->found ? MlirWalkResultInterrupt : MlirWalkResultAdvance;
}

static int used_from_other_trees(tether__tree *t, MlirOperation anc) {
  uint32_t i = 0;
  for (tether__tree *u; (u = next_dependent(t, &i));) {
    into_ctx c = {t, anc, 0};
    tether__tree_walk_ops(u, uses_into_cb, &c);
    if (c.found) return 1;
  }
  return 0;
}

int tether__op_used_from_other_trees(tether__tree *t, MlirOperation op) {
  return used_from_other_trees(t, op);
}

int tether__tree_used_from_other_trees(tether__tree *t) {
  return used_from_other_trees(t, (MlirOperation){NULL});
}

/* ---- moving handles between trees ------------------------------------------------------------ */

void tether__merge(tether__tree *from, tether__tree *into) {
  tether_arena *a = from->arena;
  into->suspect |= from->suspect;
  /* Room first, so no insert below can fail half-way. Out of memory here leaves `from` a tree of
   * its own whose root now sits inside `into`: its handles stay valid and alive, only the
   * accounting of roots is off by one. */
  if (tether__table_reserve(into, from->used) != TETHER_OK) return;
  for (uint32_t i = 0; i < from->cap; i++) {
    tether__handle *h = from->slots[i];
    if (!h || h == TETHER__TOMB) continue;
    set_tree(h, into);
    tether__table_insert(into, h);
  }
  for (int k = 0; k < TETHER_KIND_COUNT; k++) into->counts[k] += from->counts[k];
  for (uint32_t i = 0; i < from->ndeps; i++) tether__add_dep(into, from->deps[i]);
  /* The holds move with the handles: from's pin becomes into's, or goes. */
  into->held += from->held;
  if (from->hold_pin && !into->hold_pin) {
    tether__repin(from->hold_pin - 1, into);
    into->hold_pin = from->hold_pin;
  } else if (from->hold_pin) {
    tether_unpin(from->hold_pin - 1);
  }
  from->held = 0;
  from->hold_pin = 0;
  GC_register_finalizer_no_order(from, 0, 0, 0, 0);
  tether__roots_remove(a, from->root);
  from->state = TETHER__TREE_MERGED;
  from->merged_into = into;
  tether__weak_unregister(from);   /* before its table goes: nothing reads freed memory */
  tether__table_free(from->slots); /* every handle in it is in into's table now */
  a->stats.table_slots -= from->cap;
  from->slots = NULL;
  from->deps = NULL;
  from->cap = from->used = from->ndeps = from->capdeps = 0;
  a->stats.roots--;
}

typedef struct {
  tether__tree *from, *to;
} move_ctx;

static void move_one(void *raw, int kind, void *ud) {
  move_ctx *m = ud;
  tether__handle *h = tether__table_find(m->from, raw, kind);
  if (!h) return;
  tether__table_remove(m->from, h);
  set_tree(h, m->to);
  tether__table_insert(m->to, h);
  m->from->counts[kind]--;
  m->to->counts[kind]++;
  m->from->held -= h->holds;
  m->to->held += h->holds;
}

/* Before handles move from `from` to `to`: to is pinned if any of from's handles is held (held
 * counts move one by one; held_settle after). */
static int move_begin(tether__tree *from, tether__tree *to) {
  int rc = tether__table_reserve(to, from->used);
  return rc == TETHER_OK && from->held ? hold_pin(to) : rc;
}

int tether__move_subtree(tether__tree *from, tether__tree *to, MlirOperation op) {
  to->suspect |= from->suspect;
  int rc = move_begin(from, to);
  if (rc != TETHER_OK) return rc;
  move_ctx m = {from, to};
  visit_op(op, move_one, &m);
  held_settle(from);
  held_settle(to);
  rc = tether__record_operand_deps(to, op);
  int ru = record_use_deps(to, op);
  int rs = record_successor_deps(from, to, op, (MlirBlock){NULL});
  return rc != TETHER_OK ? rc : ru != TETHER_OK ? ru : rs;
}

int tether__move_block(tether__tree *from, tether__tree *to, MlirBlock b) {
  to->suspect |= from->suspect;
  int rc = move_begin(from, to);
  if (rc != TETHER_OK) return rc;
  move_ctx m = {from, to};
  visit_ctx v = {move_one, &m};
  visit_block_contents(b, &v, 1);
  held_settle(from);
  held_settle(to);
  /* Dependencies both ways: the block's operations using values outside it, and users outside
   * it of the block's arguments and of its operations' results. */
  for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o) && rc == TETHER_OK;
       o = mlirOperationGetNextInBlock(o)) {
    rc = tether__record_operand_deps(to, o);
    int ru = record_use_deps(to, o);
    if (rc == TETHER_OK) rc = ru;
  }
  intptr_t na = mlirBlockGetNumArguments(b);
  for (intptr_t i = 0; i < na && rc == TETHER_OK; i++)
    for (MlirOpOperand u = mlirValueGetFirstUse(mlirBlockGetArgument(b, i));
         !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
      tether__tree *ut = tether__find_tree(to->arena, TETHER_KIND_OP, mlirOpOperandGetOwner(u).ptr);
      if (ut && tether__add_dep(ut, to) != TETHER_OK) rc = TETHER_ENOMEM;
    }
  if (rc == TETHER_OK) rc = record_successor_deps(from, to, (MlirOperation){NULL}, b);
  return rc;
}

/* ---- invalidation and destruction ------------------------------------------------------------ */

typedef struct {
  tether__tree *t;
  void *self;
  int self_reason;
} inval_ctx;

static void invalidate_one(void *raw, int kind, void *ud) {
  inval_ctx *c = ud;
  tether__handle *h = tether__table_find(c->t, raw, kind);
  if (!h) return;
  tether__table_remove(c->t, h);
  c->t->counts[kind]--;
  c->t->arena->stats.handles[kind]--;
  tether__handle_invalidate(h, raw == c->self ? c->self_reason : TETHER_REASON_PARENT_ERASED);
  if (h->holds) tether__table_keep(c->t, h);
}

void tether__invalidate_subtree(tether__tree *t, MlirOperation op, int self_reason) {
  inval_ctx c = {t, op.ptr, self_reason};
  visit_op(op, invalidate_one, &c);
}

void tether__tree_destroy(tether__tree *t, int reason) {
  tether_arena *a = t->arena;
  for (uint32_t i = 0; i < t->cap; i++) {
    tether__handle *h = t->slots[i];
    if (!h || !tether__valid(h)) continue;
    int r = reason;
    if (reason == TETHER_REASON_ERASED && tether__raw(h) != t->root)
      r = TETHER_REASON_PARENT_ERASED;
    tether__handle_invalidate(h, r);
  }
  for (int k = 0; k < TETHER_KIND_COUNT; k++) a->stats.handles[k] -= t->counts[k];
  GC_register_finalizer_no_order(t, 0, 0, 0, 0);
  if (t->root) tether__roots_remove(a, t->root);
  if (t->root && !atomic_load(&tether__is_shutdown)) {
    switch (t->root_kind) {
    case TETHER_KIND_OP:
      mlirOperationDestroy((MlirOperation){t->root});
      break;
    case TETHER_KIND_REGION:
      mlirRegionDestroy((MlirRegion){t->root});
      break;
    case TETHER_KIND_BLOCK:
      mlirBlockDestroy((MlirBlock){t->root});
      break;
    }
  }
  t->state = TETHER__TREE_DEAD;
  t->root = NULL;
  t->deps = NULL;
  t->ndeps = t->capdeps = 0;
  a->stats.table_slots -= t->cap; /* a table kept for held handles is no longer the arena's */
  if (t->held) {
    /* Its held handles stay in the table, no longer a hash table: only what keeps them alive
     * while the tree is pinned (tether_handle_release lets go of it). The others go. */
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->cap; i++)
      if (t->slots[i] && t->slots[i]->holds) t->slots[n++] = t->slots[i];
    memset(t->slots + n, 0, (size_t)(t->cap - n) * sizeof *t->slots);
    t->used = n;
    t->arena = NULL; /* nothing reads it now: the arena is not kept for them */
    /* It stays registered (weak.c marks the held handles) until the last is released, which
     * frees it (held_settle); a released one leaves it (tether_handle_release). */
  } else {
    tether__weak_unregister(t);
    tether__table_free(t->slots);
    t->slots = NULL;
    t->cap = t->used = 0;
  }
  for (int k = 0; k < TETHER_KIND_COUNT; k++) t->counts[k] = 0;
  a->stats.roots--;
  a->stats.destroyed++;
}

intptr_t tether__drain_pending(tether_arena *a) {
  pthread_mutex_lock(&a->lock);
  tether__tree *list = a->pending;
  a->pending = NULL;
  /* Stuck trees get another chance: a cycle may have been broken by a resurrection. */
  tether__tree **tail = &list;
  while (*tail) tail = &(*tail)->next;
  *tail = a->stuck;
  a->stuck = NULL;
  a->stats.pending = 0;
  a->stats.stuck = 0;
  pthread_mutex_unlock(&a->lock);

  intptr_t destroyed = 0;
  for (;;) {
    /* A pending tree used by another pending tree waits for that one. */
    for (tether__tree *t = list; t; t = t->next) t->mark = 0;
    for (tether__tree *t = list; t; t = t->next)
      for (uint32_t i = 0; i < t->ndeps; i++) {
        tether__tree *d = tether__tree_resolve(t->deps[i]);
        if (d && d != t && d->state == TETHER__TREE_PENDING) d->mark = 1;
      }
    int progress = 0;
    for (tether__tree **p = &list; *p;) {
      tether__tree *t = *p;
      if (t->mark) {
        p = &t->next;
        continue;
      }
      *p = t->next;
      t->next = NULL;
      tether__tree_destroy(t, TETHER_REASON_DESTROYED);
      destroyed++;
      progress = 1;
    }
    if (!progress || !list) break;
  }
  if (list) {
    pthread_mutex_lock(&a->lock);
    intptr_t n = 0;
    tether__tree *last = list;
    for (tether__tree *t = list; t; t = t->next) {
      n++;
      last = t;
    }
    last->next = a->stuck;
    a->stuck = list;
    a->stats.stuck += n;
    pthread_mutex_unlock(&a->lock);
  }
  return destroyed;
}

/* ---- revalidation ---------------------------------------------------------------------------- */

static void mark_seen(void *raw, int kind, void *ud) {
  tether__tree *t = ud;
  tether__handle *h = tether__table_find(t, raw, kind);
  if (h) h->bits |= TETHER__SEEN;
}

void tether__tree_revalidate(tether__tree *t) {
  visit_tree(t, mark_seen, t);
  tether__handle **gone = NULL;
  uint32_t ngone = 0;
  for (uint32_t i = 0; i < t->cap; i++) {
    tether__handle *h = t->slots[i];
    if (!h || !tether__valid(h)) continue; /* an invalid one is there while it is held */
    if (h->bits & TETHER__SEEN) {
      h->bits &= ~TETHER__SEEN;
      continue;
    }
    /* In GC memory: the handles listed stay alive (a collection meanwhile would take those that
     * nothing else reaches, weak.c). */
    if (!gone) gone = tether__alloc((size_t)t->used * sizeof *gone);
    if (!gone) return; /* out of memory: the handles stay; the next revalidation retries */
    gone[ngone++] = h;
  }
  for (uint32_t i = 0; i < ngone; i++) {
    tether__handle *h = gone[i];
    int kind = tether__kind(h);
    tether__table_remove(t, h);
    t->counts[kind]--;
    t->arena->stats.handles[kind]--;
    tether__handle_invalidate(h, TETHER_REASON_REMOVED);
    if (h->holds) tether__table_keep(t, h);
  }
  tether_keep_alive(gone);
}

void tether__tree_set_root(tether__tree *t, void *root) {
  tether__roots_remove(t->arena, t->root);
  t->root = root;
  /* Out of memory: the tree cannot be found from raw pointers into it (wrapping them fails); its
   * handles still reach it. */
  (void)tether__roots_put(t->arena, root, t);
}
