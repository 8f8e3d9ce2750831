/* tether_internal.h: private declarations of libtether, shared by its files. One subsystem per
 * file (tether.h is the whole public API; each section below names the file it declares):
 *   core.c          collector setup, thread registration, pins, safe points, finalizers, counters
 *   table.c         the per-tree intern table and the per-arena table of roots
 *   tree.c          trees (one per root): interning, merging, moving handles, dependencies,
 *                   invalidating, destroying, revalidating; who uses what (ops and trees)
 *   weak.c          which handles a table keeps alive (held ones); the others' entries become
 *                   tombstones when the collector takes them
 *   context.c       arenas, diagnostics, and context-owned objects (types, attributes, locations)
 *   create.c        new IR: parsing, empty modules, detached regions and blocks, operations
 *   navigate.c      guarded access, handle queries, raw-pointer wrapping, navigation, walks
 *   mutate.c        structural mutation: insert, move, detach, erase, clone, operands, revalidate
 *   passes.c        MLIR's verifier, printer and pass manager on a tree
 *   transform.c     the transform dialect interpreter and symbol merging
 *   rewrite.c       PDL pattern sets and greedy pattern application
 *   callbacks.c     callbacks of the binding while MLIR runs (scopes), what they may not change,
 *                   and the pattern rewriter's erase and replace
 *   crash_guards.c  what keeps MLIR from crashing on input it cannot check: every trial in a
 *                   forked child (inference, probes, parsers, verifiers, PDL), and the checks made
 *                   before MLIR verifies or runs passes (tether.h, "Crash guards")
 *   mlir_ext.cc     (C++, mlir_ext.h; its own target) what the C API cannot do: inference with
 *                   properties, creation without copies, terminators, op shapes, block uses
 *
 * The object graph the collector sees (-> is a pointer it traces):
 *   user's handle -> tree -> arena          every IR handle keeps its tree and its arena alive
 *   tree -> intern table => held handles    a tree keeps the handles into it that are held (or
 *                                           have a user pointer) alive; the others live while
 *                                           anything else reaches them, and their entries become
 *                                           tombstones before the collector reclaims them
 *                                           (weak.c), so the table never holds a pointer to freed
 *                                           memory
 *   tree -> deps (other trees)              a tree whose IR uses values or blocks of another tree
 *   arena -> pending trees                  queued by finalizers, destroyed at safe points
 * Trees and arenas are finalizable without order (GC_register_finalizer_no_order, with Java-style
 * marking so everything they reach survives until the finalizer ran); the cycle tree -> table ->
 * handle -> tree is therefore harmless, and tether orders destruction itself (users of a tree's
 * values first, the context last). The only pointers to GC objects the collector does not see are
 * the arena's table of roots (an index, emptied when a tree dies) and core.c's registry of arenas
 * (emptied when an arena is destroyed); MLIR's own memory holds none.
 */
#ifndef TETHER_INTERNAL_H
#define TETHER_INTERNAL_H

#include "mlir_compat.h"
#include "mlir_ext.h"
#include "tether.h"

#include <gc/gc.h>
#include <mlir-c/Diagnostics.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* ---- handles -------------------------------------------------------------------------------- */

/* bits: tree pointer | kind (bits 0-1) | SEEN (bit 2) | INVALID (bit 3). An invalid handle keeps
 * its tree only while it is held (tether_handle_hold: it stays in that tree's table, see below);
 * otherwise its tree pointer is 0. */
#define TETHER__KIND_MASK ((uintptr_t)3)
#define TETHER__SEEN ((uintptr_t)4)
#define TETHER__INVALID ((uintptr_t)8)
#define TETHER__LOW_MASK ((uintptr_t)15)

typedef struct tether__tree tether__tree;

/* The MLIR and binding pointers are stored complemented, so the collector, which scans every word
 * of a handle, rejects them at once instead of looking them up in its heap map: they never point
 * into the GC heap. 28 bytes are allocated (TETHER__HANDLE_BYTES, not sizeof, which pads to 32):
 * the collector serves them from its 32-byte size class (it adds one byte to every object).
 *
 * Holds (tether_handle_hold) keep a handle alive without a pin of its own: they are counted on the
 * handle and on its tree, and a tree takes one pin while any of its handles is held, so the table
 * that reaches the handle stays. A held handle that is invalidated stays in its tree's table,
 * keyed by its own address (tether__table_key), until its last release. */
typedef struct tether__handle {
  uintptr_t hraw;  /* ~(MLIR object) while valid; ~0 (NULL) once invalid */
  uintptr_t bits;  /* see above */
  uintptr_t huser; /* ~(binding back-pointer): not traced, it points outside the GC heap */
  uint32_t holds;  /* tether_handle_hold minus tether_handle_release */
  uint16_t reason; /* tether_reason once invalid */
} tether__handle;
#define TETHER__HANDLE_BYTES (offsetof(tether__handle, reason) + sizeof(uint16_t))
_Static_assert(TETHER__HANDLE_BYTES < 32, "a handle and the collector's extra byte fit 32 bytes");

/* A table entry that stands for a handle the collector took (weak.c): no key matches it, it is
 * invalid and has no holds and no user pointer. */
extern tether__handle tether__tomb;
#define TETHER__TOMB (&tether__tomb)

/* Region handles also remember their parent operation: the C API cannot ask a region for it. */
typedef struct tether__region_handle {
  tether__handle h;
  uintptr_t hparent; /* ~(parent operation), ~0 (NULL) when detached */
} tether__region_handle;

static inline void *tether__raw(const tether__handle *h) { return (void *)~h->hraw; }
static inline void tether__set_raw(tether__handle *h, const void *raw) {
  h->hraw = ~(uintptr_t)raw;
}
static inline void *tether__region_parent(const tether__handle *h) {
  return (void *)~((const tether__region_handle *)h)->hparent;
}
static inline void tether__set_region_parent(tether__handle *h, const void *op) {
  ((tether__region_handle *)h)->hparent = ~(uintptr_t)op;
}

#define TETHER__H(p) ((tether__handle *)(p))

static inline int tether__kind(const tether__handle *h) {
  return (int)(h->bits & TETHER__KIND_MASK);
}
static inline int tether__valid(const tether__handle *h) { return !(h->bits & TETHER__INVALID); }
static inline tether__tree *tether__tree_of(const tether__handle *h) {
  return (h->bits & TETHER__INVALID) ? NULL : (tether__tree *)(h->bits & ~TETHER__LOW_MASK);
}
/* The tree whose table holds h: a valid handle's, or a held invalid handle's (else NULL). */
static inline tether__tree *tether__holder_of(const tether__handle *h) {
  return (tether__tree *)(h->bits & ~TETHER__LOW_MASK);
}
/* What a table entry is keyed by: the MLIR object while valid, the handle itself once invalid. */
static inline const void *tether__table_key(const tether__handle *h) {
  return tether__valid(h) ? tether__raw(h) : (const void *)h;
}

/* ---- trees ---------------------------------------------------------------------------------- */

enum { TETHER__TREE_LIVE, TETHER__TREE_PENDING, TETHER__TREE_MERGED, TETHER__TREE_DEAD };

struct tether__tree {
  tether_arena *arena;
  void *root;                  /* raw root object: an MlirOperation, MlirRegion or MlirBlock */
  tether__handle **slots;      /* intern table (malloc; weak.c keeps its held handles alive) */
  tether__handle **next_slots; /* the table being filled while slots is rehashed, else NULL */
  tether__tree **deps;         /* trees whose IR this tree uses (GC memory) */
  tether__tree *merged_into;   /* state MERGED: the tree that absorbed this one */
  tether__tree *next;          /* link in the arena's pending or stuck list */
  uint32_t cap, used;          /* intern table capacity (power of two) and entries */
  uint32_t ndeps, capdeps;
  uint32_t counts[TETHER_KIND_COUNT]; /* valid handles by kind (those taken too, until rehash) */
  uint64_t verified_epoch; /* the arena's epoch when this tree was last known to verify */
  uint32_t held;           /* the holds of the handles in its table (tether_handle_hold) */
  int32_t hold_pin;        /* 1 + its pin slot while held > 0, else 0 */
  uint32_t weak_slot;      /* 1 + its index in weak.c's registry, or 0 */
  uint8_t suspect;         /* an edit that may crash MLIR's verifier (tether__verifier_crashes) */
  uint8_t root_kind;       /* TETHER_KIND_OP / REGION / BLOCK */
  uint8_t state;
  uint8_t mark; /* scratch while draining */
};
/* bdwgc serves 113-128 bytes (its extra byte included) from one size class: trees stay in it. */
_Static_assert(sizeof(struct tether__tree) < 128, "a tree fits the collector's 128-byte class");

/* ---- arenas --------------------------------------------------------------------------------- */

/* A run of MLIR on a tree that may call back into the binding (tether_op_run_passes,
 * tether_op_apply_patterns_ex), on the stack of the call that started it; the innermost first. */
typedef struct tether__run {
  struct tether__run *outer;
  tether__tree *t;    /* the tree MLIR runs on */
  MlirOperation root; /* the operation MLIR runs on */
  int patterns;       /* 1: patterns (their tree is locked in callbacks), 0: passes */
  int running;        /* the arena's running count while MLIR runs it (no other call inside) */
  pthread_t thread;
} tether__run;

typedef struct {
  void *key;
  tether__tree *tree;
} tether__rootent;

enum { TETHER__ARENA_LIVE, TETHER__ARENA_PENDING, TETHER__ARENA_DEAD };

struct tether_arena {
  MlirContext ctx;
  pthread_mutex_t lock;    /* guards pending and the diagnostics buffer */
  tether__tree *pending;   /* queued by finalizers (any thread), drained at safe points */
  tether__tree *stuck;     /* unreachable trees in a cycle of uses: kept, counted */
  tether_arena *next_dead; /* link in the global list of unreachable arenas */
  tether__rootent *roots;  /* malloc: raw root -> tree (not traced: an index only) */
  uint32_t rcap, rused;
  char *diag; /* malloc: diagnostics text of the current call */
  size_t diag_len, diag_cap;
  MlirDiagnosticHandlerID diag_id;
  int capturing;
  void *user;             /* binding back-pointer (not traced) */
  intptr_t registry_slot; /* index in core.c's registry of live arenas */
  tether_arena_stats stats;
  uint64_t epoch; /* bumped by every change to IR of the arena (tether__touch) */
  int running;    /* > 0 while MLIR verifies, runs passes or a transform script on IR of the arena:
                   * its IR handles are refused (TETHER_ERUNNING; tether__run_begin) */
  tether__run *run;     /* the innermost run that may call back (callbacks.c), or NULL */
  tether_scope *scopes; /* the callbacks MLIR is suspended in, innermost first (callbacks.c) */
  uint8_t owns_ctx;
  uint8_t state;
  pthread_t run_thread; /* the thread that made running > 0 */
  uint8_t fork_mt; /* its threads were stopped for a fork in progress (core.c, fork handlers) */
  void *fork_pool; /* the thread pool it had then */
  tether__opname_cache opname;         /* registered operation names created (mlir_ext.cc) */
  tether__terminator_cache terminator; /* names asked whether they are terminators */
  /* Shapes of operations (tether__op_shape) verified in a child without crashing: a suspect tree
   * made only of such shapes needs no child (crash_guards.c). malloc, open addressing, 0 = empty.
   */
  uint64_t *safe_shapes;
  uint32_t safe_cap, safe_used;
  void *handle_pool; /* free handle-sized objects (tether__handle_alloc) */
};

typedef struct tether__ctxobj {
  void *raw;
  tether_arena *arena;
} tether__ctxobj;

/* Around a call into MLIR that walks or changes IR of the arena and may emit diagnostics (passes,
 * the transform interpreter, the verifier): a diagnostic handler may run code of the binding's
 * language, which must not reach that IR meanwhile (it may be half rewritten, and handles to what
 * was removed are invalidated only after the call). */
static inline void tether__run_begin(tether_arena *a) {
  if (a->running++ == 0) a->run_thread = pthread_self();
}
static inline void tether__run_end(tether_arena *a) { a->running--; }

/* Any change to the arena's IR: what was known to verify is no longer known. */
static inline void tether__touch(tether_arena *a) { a->epoch++; }

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

/* ---- rewrite.c: the two PDL calls crash_guards.c makes in a child first ---------------------- */

/* Compiles a PDL module MLIR takes (it destroys it) into a frozen pattern set, with the native
 * functions fns (n of them: MLIR 22's tether_pdl_function, state what their calls need: rewrite.c;
 * none on MLIR 19). */
MlirFrozenRewritePatternSet tether__pdl_compile(MlirOperation module, const void *fns, intptr_t n,
                                                void *state);
/* An application of patterns: set to the regions of op, by driver, with config (null: defaults). */
typedef struct {
  MlirOperation op;
  MlirFrozenRewritePatternSet set;
  tether_driver driver;
  MlirGreedyRewriteDriverConfig config;
} tether__apply;
/* Makes the application (the walk driver's is always a success). */
MlirLogicalResult tether__patterns_apply(const tether__apply *x);

/* ---- trial.c --------------------------------------------------------------------------------- */

/* What a trial says, in a forked child (crash_guards.c) or in the trial helper (trial.c). */
enum {
  TETHER__TRIAL_DIED = 0,        /* the call crashed, aborted or exited */
  TETHER__TRIAL_RETURNED = 1,    /* it returned (verification: the IR verified) */
  TETHER__TRIAL_HUNG = 2,        /* it did not return within the time limit (killed) */
  TETHER__TRIAL_FAILED = 3,      /* verification returned, and the IR does not verify */
  TETHER__TRIAL_DECLINED = 4,    /* the helper could not make the same call (trial.c) */
  TETHER__TRIAL_BYTES = 5,       /* a read of bytecode returned: its bytecode follows (trial.c) */
  TETHER__TRIAL_TOO_DEEP = 6,    /* ... and what it read nests deeper than the request's limit */
  TETHER__TRIAL_TOO_ALIGNED = 7, /* ... or holds resource blobs aligned beyond tether's maximum */
};
/* Requests to the trial helper and helpers started so far (tether_get_global_stats). */
extern atomic_long tether__trial_requests, tether__trial_starts;
/* What the helper reported when the IR failed to verify: its diagnostics, to be emitted here. */
typedef struct {
  char *data;
  size_t len;
  MlirOperation root, target; /* null root: every diagnostic at `at` (a read of bytecode) */
  MlirLocation at;
} tether__trial_report;
/* Verification of target (root or an operation inside it) tried in the trial helper, root sent in
 * the generic form: what it says, or -1 for no verdict (no helper, or it cannot reproduce the IR:
 * then try in a forked child). On TETHER__TRIAL_FAILED, *report (when given) holds the helper's
 * diagnostics (free with tether__trial_report_free). */
int tether__trial_verify(MlirOperation root, MlirOperation target, int timeout_ms,
                         tether__trial_report *report);
/* Emits the diagnostics of a report in the caller's context, at the caller's operations (the same
 * text as MLIR's verifier gives here); an error at the target when none came through. */
void tether__trial_report_emit(tether__trial_report *r);
void tether__trial_report_free(tether__trial_report *r);
/* A parse of text as kind in ctx tried in the trial helper: TETHER__TRIAL_RETURNED, DIED, HUNG,
 * or -1 for no verdict. */
int tether__trial_parse(MlirContext ctx, tether_parse_kind kind, MlirStringRef text,
                        int timeout_ms);
/* Bytecode read by the trial helper (or, without one, a forked child doing its part), which
 * sends back what it read written again by MLIR's own writer: TETHER__TRIAL_BYTES with *out that
 * bytecode (malloc'ed, aligned to TETHER_MAX_RESOURCE_ALIGNMENT), TOO_DEEP or TOO_ALIGNED
 * (tether__text_refusal of what it read, printed, against limit), FAILED with *report the reader's
 * diagnostics (report->at unset), DIED, HUNG, or -1 when no process could read it. */
int tether__trial_read(MlirContext ctx, tether_parse_kind kind, MlirStringRef bytecode,
                       size_t limit, int timeout_ms, char **out, size_t *out_len,
                       tether__trial_report *report);
/* crash_guards.c: why text must not be parsed: 1 it nests deeper than limit, 2 a resource blob's
 * alignment is 0 or more than TETHER_MAX_RESOURCE_ALIGNMENT (*align, when
 * given, says which), 0 none. */
int tether__text_refusal(const char *text, size_t len, size_t limit, uint64_t *align);
/* crash_guards.c: allocates, writes and frees a block of every small size, twice: in a trial
 * process, after a call that may have corrupted the heap without crashing (MLIR 19's parser on
 * some text it rejects), so that the trial dies instead of answering "returned". */
void tether__heap_shake(void);
/* ssa_names.c: true when text may use a value name nothing defines before it (a forward
 * reference) and define a value name twice (also when out of memory: the answer is "maybe"). */
bool tether__ssa_forward_ref_and_redefinition(const char *text, size_t len);
/* verifier_gaps.c: true when op or an operation inside it is IR MLIR's verifier accepts and its
 * passes crash on (verifier_gaps.c has the list); with emit, a diagnostic at that operation says
 * why. */
bool tether__verifier_gap(MlirOperation op, bool emit);
/* verifier_gaps.c: true when text writes an operation of the list in the generic form (the only
 * form that can disagree with itself): tether's parses then parse it unverified and check first. */
bool tether__verifier_gap_mentioned(const char *text, size_t len);
/* Return-type inference of c tried in the trial helper (calls with regions are declined):
 * TETHER__TRIAL_RETURNED, DIED, HUNG, or -1 for no verdict. */
int tether__trial_infer(const tether_infer_call *c, int timeout_ms);
/* crash_guards.c: the inference tether_infer tries, made deterministically, the types it gives
 * read (a garbage type crashes the trial; in a trial child or the helper). */
void tether__infer_try(const tether_infer_call *c);
/* crash_guards.c: tether_infer, with the operation's OperationName (opaque pointer) when the caller
 * has it (NULL: looked up by c->name). */
int tether__infer(const tether_infer_call *c, void *opname, MlirTypesCallback types,
                  MlirShapedTypeComponentsCallback components, void *user);

/* ---- crash_guards.c ------------------------------------------------------------------------- */

/* Whether text is MLIR bytecode (its magic number). */
static inline bool tether__is_bytecode(const char *text, size_t len) {
  return len >= 4 && memcmp(text, "ML\xefR", 4) == 0;
}
/* Reads bytecode (kind TETHER_PARSE_MODULE or TETHER_PARSE_OPERATION) where a malformed input
 * cannot crash this process: TETHER_OK with *out the bytecode to parse instead, MLIR's own writing
 * of what was read (malloc'ed, aligned; it needs no tether_parse_check), or
 * TETHER_EPARSE with diagnostics emitted (at source_name:0:0, as MLIR's reader reports). */
int tether__read_bytecode(MlirContext ctx, tether_parse_kind kind, const char *bytecode, size_t len,
                          const char *source_name, char **out, size_t *out_len);

/* core.c, in a trial's forked child: no diagnostic reaches a binding's handler any more. */
void tether__silence_diagnostics(void);
/* Whether this process is a trial's forked child (tether_in_trial_child). */
extern int tether__trial_child;
/* Trial calls made in a forked child so far (tether_get_global_stats). */
extern atomic_long tether__children;
/* Whether op, put into dest (a block; null: as a root), would nest operations deeper than
 * TETHER_MAX_NESTING; extra_above: operations above dest that are not there yet (1 for a region
 * of an operation being created). Operations without regions add no nesting anyone builds on and
 * are always accepted. */
int tether__nesting_exceeded(MlirBlock dest, int extra_above, MlirOperation op);
/* The same for the operations of region r, or of block b, put where `above` operations are
 * above them. */
int tether__region_nesting_exceeded(MlirRegion r, int above);
int tether__block_nesting_exceeded(MlirBlock b, int above);
/* Operations above block b: its parent operation and theirs (0 for a detached block). */
int tether__ops_above(MlirBlock b);
/* Whether verifying op, which has no parent operation, crashes MLIR (a verifier that needs its
 * parent); per operation name, in a child, cached. */
int tether__orphan_verify_crashes(MlirOperation op);
/* Whether MLIR's verifier must not run on op of tree t here (null op: the tree's top-level
 * operations, as printing verifies them): an op without a parent whose verifier needs one
 * (cached per name), or, in trees marked suspect (an inherent attribute removed or replaced by
 * one of another kind; a value's type changed; a registered operation built by hand), a trial
 * verification (the trial helper, else a forked child) that crashed, hung, or, in the helper,
 * found that the IR does not verify. */
int tether__verifier_crashes(tether__tree *t, MlirOperation op);
/* Emits a diagnostic and returns 1 when MLIR's verifier would crash on op of tree t, or IR inside
 * op uses values or blocks of another tree (what tether_op_verify and tether_op_run_passes refuse
 * before calling MLIR); 0 otherwise. */
int tether__unsafe_for_mlir(tether__tree *t, MlirOperation op, bool trusted);
/* Emits a diagnostic and returns 1 when pm holds the inline pass and IR inside root an operation
 * of an unregistered dialect with regions (MLIR 19's inliner crashes on it). */
int tether__inliner_unsafe(MlirPassManager pm, MlirOperation root);
/* Emits a diagnostic and returns 1 when compiling the PDL module (tether__pdl_compile) crashes
 * MLIR: tried in a child once per text of the module. */
int tether__pdl_compile_crashes(MlirOperation module, const void *fns, intptr_t n, void *state);
/* Whether operations in op (op itself included) have null operands, as MLIR 22's rewriter leaves
 * the users of an operation it erased while still used; with repair, each such operand is set to
 * the result of a new "tether.dropped_use" operation of type none inserted before its user (IR
 * that does not verify, but that MLIR's printer and verifier can read). */
int tether__dropped_uses(MlirOperation op, int repair);
/* Emits a diagnostic and returns 1 when the application (tether__patterns_apply) crashes MLIR,
 * runs 120 s or leaves null operands (tether__dropped_uses): tried in a child every time; nothing
 * changed then. */
int tether__patterns_crash(const tether__apply *x);

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

#endif /* TETHER_INTERNAL_H */
