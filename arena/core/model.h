/* model.h: libtether's object model: handles, trees and arenas, as the collector sees them. The
 * first of libtether's layers (each folder of arena/ is one; tether.h, the whole public API, and
 * tether.hpp, the C++ bindings' header, are above them at arena/'s root):
 *   core/     the object model and its life: collector set-up, threads, pins, safe points,
 *             finalizers (core.c), intern tables and the table of roots (table.c), which handles
 *             a table keeps alive (weak.c: held ones; the others' entries become tombstones
 *             when the collector takes them), trees:
 *             interning, merging, moving, dependencies, invalidating, destroying, revalidating
 *             (tree.c), arenas, diagnostics and context-owned objects (context.c), the binding's
 *             callbacks while MLIR runs (callbacks.c); core/internal.h declares them
 *   ir/       the IR entry points of tether.h: new IR (create.c), guarded access, queries and
 *             navigation (navigate.c), structural mutation (mutate.c)
 *   run/      MLIR running over a tree: verifier, printer, passes (passes.c), PDL patterns and
 *             greedy rewrites (rewrite.c), the transform interpreter (transform.c); run/run.h
 *   guards/   what keeps MLIR from crashing on input it cannot check (verdicts.c: inference,
 *             probes, parsers, verifiers, PDL; verifier_gaps.c; ssa_names.c), and child.c, the
 *             one file that starts processes (every fork, and the trial helper's spawn);
 *             guards/guards.h
 *   trial/    the trial helper: its protocol (protocol.h), the client libtether uses
 *             (client.c), the server the helper runs (server.c, main.c), the helper's diagnostics
 *             replayed in the caller (report.c); trial/trial.h
 *   mlir/     mlir_ext.cc (C++, its own target): what the C API cannot do (inference with
 *             properties, creation without copies, terminators, op shapes, block uses)
 * guards/ and trial/ use each other: the guards try calls in the helper, and the helper holds the
 * text it reads to the guards' rules.
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
#ifndef TETHER_MODEL_H
#define TETHER_MODEL_H

#include "../mlir/mlir_ext.h"
#include "../mlir_compat.h"
#include "../tether.h"

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
  uint8_t mark;   /* scratch while draining */
  uint8_t fresh;  /* an entry was added since the last collection (weak.c clears it) */
  uint8_t shrink; /* idle for a whole collection cycle with few live entries: its table is
                   * rehashed to its size at the arena's next safe point (weak.c) */
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
  tether__opname_cache opname;         /* registered operation names created (mlir/mlir_ext.cc) */
  tether__terminator_cache terminator; /* names asked whether they are terminators */
  /* Shapes of operations (tether__op_shape) verified in a child without crashing: a suspect tree
   * made only of such shapes needs no child (guards/ir_guards.c). malloc, open addressing, 0 =
   * empty.
   */
  uint64_t *safe_shapes;
  uint32_t safe_cap, safe_used;
  void *handle_pool; /* free handle-sized objects (tether__handle_alloc) */
  uint8_t shrink;    /* trees of it have shrink set (weak.c; tether__shrink_tables) */
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

#endif
