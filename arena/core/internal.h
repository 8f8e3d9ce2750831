/* internal.h: the private declarations of core/ and the helpers every IR entry point uses (checked
 * access to a handle, interning what a call returns). core/model.h has the map of arena/.
 */
#ifndef TETHER_CORE_INTERNAL_H
#define TETHER_CORE_INTERNAL_H

#include "model.h"

/* ---- core.c --------------------------------------------------------------------------------- */

/* Internal, even inside libtether_capi.so's dynamic symbol table. */
#define TETHER__HIDDEN __attribute__((visibility("hidden")))
/* Thread-locals read on every entry point: the initial-exec model is a plain %fs-relative load,
 * where the default model for a shared library calls __tls_get_addr. The few bytes come from the
 * static TLS surplus glibc keeps for libraries loaded later (dlopen, as Python does). */
#define TETHER__TLS _Thread_local __attribute__((tls_model("initial-exec")))

extern TETHER__HIDDEN TETHER__TLS int tether__thread_ready;
extern TETHER__HIDDEN atomic_int tether__finalizers_queued;
extern TETHER__HIDDEN atomic_int tether__is_shutdown;

void tether__thread_setup(void);
void tether__safepoint_slow(tether_arena *a);
void *tether__alloc(size_t size);
/* The memory of a new (not region) handle of arena a, uninitialized. */
void *tether__handle_alloc(tether_arena *a);
/* Points tether_pin's slot at another object (a tree's hold moving to the tree it merged into). */
void tether__repin(intptr_t slot, void *obj);
/* IR of about `bytes` made behind few handles (parse, clone): may collect (core.c). Call before
 * the call's tether__enter, so that its safe point destroys what the collection found. */
void tether__ir_pressure(size_t bytes); /* GC_MALLOC, counting for the GC-stress mode */
void tether__tree_finalizer(void *obj, void *cd);
void tether__arena_finalizer(void *obj, void *cd);
void tether__arena_registered(tether_arena *a);   /* counts a new arena, enters the registry */
void tether__arena_unregistered(tether_arena *a); /* leaves the registry (destroyed) */

/* Every public entry point that takes an arena or IR handle starts here: registers the thread on
 * first use, then runs queued finalizations and destructions for arena a (a may be NULL). */
static inline void tether__enter(tether_arena *a) {
  if (!tether__thread_ready) tether__thread_setup();
  if (atomic_load_explicit(&tether__finalizers_queued, memory_order_relaxed) ||
      (a && __atomic_load_n(&a->pending, __ATOMIC_ACQUIRE)))
    tether__safepoint_slow(a);
}

/* ---- weak.c --------------------------------------------------------------------------------- */

void tether__weak_init(void);
/* An intern table of nslots slots (zeroed; malloc memory, read by the collector while its tree is
 * registered), and its free. */
void *tether__table_alloc(size_t nslots);
void tether__table_free(void *slots);
/* A tree is registered while it has a table (weak.c). */
int tether__weak_register(tether__tree *t);
/* Shrinks the tables of a's trees the last collection found idle (weak.c; at a safe point). */
void tether__shrink_tables(tether_arena *a);
void tether__weak_unregister(tether__tree *t);

/* ---- table.c -------------------------------------------------------------------------------- */

tether__handle *tether__table_find(tether__tree *t, void *raw, int kind);
int tether__table_insert(tether__tree *t, tether__handle *h);
/* With room reserved for one more entry: the handle of (raw, kind), or NULL and the empty slot
 * where it belongs, to be filled by tether__table_fill before the table changes. */
tether__handle *tether__table_probe(tether__tree *t, void *raw, int kind, uint32_t *slot);
void tether__table_fill(tether__tree *t, uint32_t slot, tether__handle *h);
/* Makes room for `extra` more entries, so the inserts that follow cannot fail. */
int tether__table_reserve(tether__tree *t, uint32_t extra);
/* Rehashes t's table to the size its live entries need (tether__table_shrink; table.c). */
int tether__table_shrink(tether__tree *t);
void tether__table_remove(tether__tree *t, tether__handle *h);
/* Puts h back under its current key (tether__table_key) into a table it was just removed from:
 * the room is there, nothing is allocated. */
void tether__table_keep(tether__tree *t, tether__handle *h);

tether__tree *tether__roots_get(tether_arena *a, void *key);
int tether__roots_put(tether_arena *a, void *key, tether__tree *t);
void tether__roots_remove(tether_arena *a, void *key);
void tether__roots_free(tether_arena *a);

/* ---- tree.c --------------------------------------------------------------------------------- */

/* A new live tree for a raw root; registers its finalizer and its entry in the roots table. */
tether__tree *tether__tree_new(tether_arena *a, int root_kind, void *root);
/* The interned handle of raw (kind) in tree t, created if needed; NULL only when out of memory. */
tether__handle *tether__intern(tether__tree *t, int kind, void *raw);
/* The same; for a region, `parent` is its parent operation (NULL: detached or unknown). */
tether__handle *tether__intern_with(tether__tree *t, int kind, void *raw, void *parent);
/* The tree containing a raw IR object of the arena (walking up to its root), or NULL. */
tether__tree *tether__find_tree(tether_arena *a, int kind, void *raw);
/* The handle of raw: looked up in t first, else in the tree that contains it. NULL if none. */
tether__handle *tether__intern_any(tether__tree *t, int kind, void *raw);
/* Follows merges. */
tether__tree *tether__tree_resolve(tether__tree *t);
/* Calls fn on every operation of tree t (its root and everything nested), pre-order. */
void tether__tree_walk_ops(tether__tree *t, MlirOperationWalkCallback fn, void *ud);
/* Records that t uses IR of d. */
int tether__add_dep(tether__tree *t, tether__tree *d);
/* Absorbs tree `from` into `into` (its root was attached inside `into`). */
void tether__merge(tether__tree *from, tether__tree *into);
/* Moves the handles of the op subtree `op` from tree `from` to tree `to`, and records deps for
 * uses that cross between the subtree and the rest. */
int tether__move_subtree(tether__tree *from, tether__tree *to, MlirOperation op);
/* Moves the handles of block b (and of everything in it) from one tree to another, with the
 * dependencies its uses make. */
int tether__move_block(tether__tree *from, tether__tree *to, MlirBlock b);
/* Records deps of tree t on the trees of every value used inside op but defined outside it. */
int tether__record_operand_deps(tether__tree *t, MlirOperation op);
/* Invalidates every handle of t inside op (op's own handle gets `self_reason`). */
void tether__invalidate_subtree(tether__tree *t, MlirOperation op, int self_reason);
/* Invalidates all handles of t and destroys its IR (t must be live, pending or stuck). */
void tether__tree_destroy(tether__tree *t, int reason);
/* Revalidates t after outside mutation. */
void tether__tree_revalidate(tether__tree *t);
/* Makes root (an operation, which now holds t's old root operation or what replaced it) the root
 * of t; the old root pointer is only a key here, never read. */
void tether__tree_set_root(tether__tree *t, void *root);
/* Sets a handle invalid with a reason (removing it from its tree's table first is the caller's). */
void tether__handle_invalidate(tether__handle *h, int reason);
/* Drains a's pending trees in dependency order; returns how many were destroyed. */
intptr_t tether__drain_pending(tether_arena *a);
/* Cancels a pending destruction (an object of the tree was reached through a raw pointer). */
void tether__tree_resurrect(tether__tree *t);

/* Who uses what (tree.c, "who uses what"). A use is an operand (a value) or a successor (a block
 * branched to); "outside op" is neither op nor nested in it; "other trees" is IR of another live
 * tree of the arena. */
/* True if op x is `anc` or nested inside it. */
int tether__op_is_inside(MlirOperation x, MlirOperation anc);
/* Whether op or anything inside it uses a value, or branches to a block, defined outside op. */
int tether__op_uses_outside(MlirOperation op);
/* Whether a value defined inside op (a result, a block argument) is used, or a block inside op
 * branched to, from outside op. */
int tether__op_used_from_outside(MlirOperation op);
/* Whether an operation nested in op (of tree t; not op itself, nor one without a parent) uses a
 * value or block of another tree; the first such user and its operand (or successor, *succ = 1)
 * index. */
int tether__op_uses_other_trees(tether__tree *t, MlirOperation op, MlirOperation *user,
                                intptr_t *index, int *succ);
/* Whether a value or block defined inside op (not op's own results) is used, or a block inside op
 * branched to, from outside op. */
int tether__op_inner_used_from_outside(MlirOperation op);
/* Whether IR of another live tree uses a value or a block inside op (op in tree t). */
int tether__op_used_from_other_trees(tether__tree *t, MlirOperation op);
/* Whether an operation of tree t that has a parent uses a value or block of another tree. */
int tether__tree_uses_other_trees(tether__tree *t);
/* Whether t's root is an operation without a block whose results it or an operation nested in it
 * uses (IR built op by op): MLIR's dominance check asks the root's missing block for its parent.
 * The first such user and its operand index. */
int tether__root_uses_own_results(tether__tree *t, MlirOperation *user, intptr_t *index);
/* Whether IR of another live tree uses a value or a block anywhere in tree t. */
int tether__tree_used_from_other_trees(tether__tree *t);

/* ---- IR entry points (create.c, navigate.c, mutate.c, passes.c, transform.c, rewrite.c) ------ */

/* The handle p checked as an IR handle of `kind`: TETHER_EARG (NULL or another kind),
 * TETHER_EINVALID, or TETHER_ERUNNING (MLIR runs on its arena's IR); else *h and its tree *t are
 * set and the call's safe point runs (tether__enter). */
static inline int tether__check(const void *p, int kind, tether__handle **h, tether__tree **t) {
  if (!p) return TETHER_EARG;
  tether__handle *x = TETHER__H(p);
  if (tether__kind(x) != kind) return TETHER_EARG;
  if (!tether__valid(x)) return TETHER_EINVALID;
  *h = x;
  *t = tether__tree_of(x);
  if ((*t)->arena->running) return TETHER_ERUNNING;
  tether__enter((*t)->arena);
  return TETHER_OK;
}

/* tether__check, returning its error from the calling function. */
#define TETHER__CHECK(p, kind, h, t)                                                               \
  do {                                                                                             \
    int rc_ = tether__check((p), (kind), &(h), &(t));                                              \
    if (rc_ != TETHER_OK) return rc_;                                                              \
  } while (0)

/* A NULL out-parameter is TETHER_EARG. */
#define TETHER__OUT(o)                                                                             \
  do {                                                                                             \
    if (!(o)) return TETHER_EARG;                                                                  \
  } while (0)

/* The raw object of a valid handle, typed. */
static inline MlirOperation OP(tether__handle *h) { return (MlirOperation){tether__raw(h)}; }
static inline MlirRegion REG(tether__handle *h) { return (MlirRegion){tether__raw(h)}; }
static inline MlirBlock BLK(tether__handle *h) { return (MlirBlock){tether__raw(h)}; }
static inline MlirValue VAL(tether__handle *h) { return (MlirValue){tether__raw(h)}; }

/* Interns a possibly-null raw object of tree t into *out (NULL stays NULL). */
static inline int tether__give(tether__tree *t, int kind, void *raw, void **out) {
  tether__handle *h = raw ? tether__intern(t, kind, raw) : NULL;
  if (raw && !h) return TETHER_ENOMEM;
  *out = h;
  return TETHER_OK;
}

/* The same for an object that may be in another tree than t (an operand, a successor). */
static inline int tether__give_any(tether__tree *t, int kind, void *raw, void **out) {
  tether__handle *h = raw ? tether__intern_any(t, kind, raw) : NULL;
  if (raw && !h) return TETHER_ENOMEM;
  *out = h;
  return TETHER_OK;
}

/* Whether h is the handle of tree t's root operation. */
static inline int tether__is_root_op(const tether__handle *h, const tether__tree *t) {
  return t->root_kind == TETHER_KIND_OP && t->root == tether__raw(h);
}

/* Positions in MLIR's linked lists (O(n)). */
static inline intptr_t tether__count_blocks(MlirRegion r) {
  intptr_t n = 0;
  for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b);
       b = mlirBlockGetNextInRegion(b))
    n++;
  return n;
}

static inline intptr_t tether__count_ops(MlirBlock b) {
  intptr_t n = 0;
  for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o))
    n++;
  return n;
}

/* Whether op is named `name`. */
static inline int tether__op_named(MlirOperation op, const char *name) {
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  size_t n = strlen(name);
  return s.length == n && !memcmp(s.data, name, n);
}

/* ---- callbacks.c ---------------------------------------------------------------------------- */

/* Around a run that may call back: records it on the arena (r on the caller's stack). */
void tether__run_push(tether_arena *a, tether__run *r, tether__tree *t, MlirOperation root,
                      int patterns);
void tether__run_pop(tether_arena *a, tether__run *r);
/* What callbacks forbid while MLIR is suspended in them (tether_scope_enter); each is
 * TETHER_ESUSPENDED or TETHER_OK, and TETHER_OK at once when no callback runs. Removing: erasing,
 * detaching or moving op (a block b when op is null; the whole tree t, absorbed into another, when
 * both are null) of tree t. Rewriting: MLIR running on op of tree t. Using: IR of tree `user`
 * coming to use values or blocks of tree `used`. */
int tether__scope_removal_slow(tether__tree *t, MlirOperation op, MlirBlock b);
int tether__scope_rewrite_slow(tether__tree *t, MlirOperation op);
int tether__scope_use_slow(tether__tree *user, tether__tree *used);
static inline int tether__scope_removal(tether__tree *t, MlirOperation op, MlirBlock b) {
  return t->arena->scopes ? tether__scope_removal_slow(t, op, b) : TETHER_OK;
}
static inline int tether__scope_rewrite(tether__tree *t, MlirOperation op) {
  return t->arena->scopes ? tether__scope_rewrite_slow(t, op) : TETHER_OK;
}
/* user NULL: a new tree. */
static inline int tether__scope_use(tether__tree *user, tether__tree *used) {
  return used && used->arena->scopes ? tether__scope_use_slow(user, used) : TETHER_OK;
}
/* A copy of op (tree t) would use what op uses outside itself. */
int tether__scope_clone_slow(tether_arena *a, MlirOperation op);
static inline int tether__scope_clone(tether__tree *t, MlirOperation op) {
  return t->arena->scopes ? tether__scope_clone_slow(t->arena, op) : TETHER_OK;
}

/* ---- context.c ------------------------------------------------------------------------------ */

void tether__diag_begin(tether_arena *a);
void tether__diag_end(tether_arena *a);
/* Destroys an unreachable arena whose trees are all gone; returns 0 if it must wait. */
int tether__arena_destroy(tether_arena *a);
/* TETHER_OK when c is a's context, else TETHER_ECONTEXT. */
static inline int tether__check_ctx(tether_arena *a, MlirContext c) {
  return a->ctx.ptr == c.ptr ? TETHER_OK : TETHER_ECONTEXT;
}

/* ---- process counters and trial children (core.c) ------------------------------------------- */

/* Trial calls made in a forked child, requests to the trial helper, helpers started
 * (tether_get_global_stats); guards/child.c and trial/client.c count them. */
extern atomic_long tether__children, tether__trial_requests, tether__trial_starts;
/* Whether this process is a trial's forked child (tether_in_trial_child). */
extern int tether__trial_child;
/* In a trial's forked child: no diagnostic reaches a binding's handler any more. */
void tether__silence_diagnostics(void);

#endif
