/* weak.c: what a tree's intern table keeps alive. A handle that is held (tether_handle_hold) or
 * carries a binding's user pointer is kept by its table; any other handle only while something
 * else reaches it (a stack, a register, a pin, GC memory). When nothing does, the collector takes
 * it, and its table entry becomes TETHER__TOMB: IR that nobody holds a handle to costs no handle
 * memory (a module built op by op from Python, whose wrappers are dropped as it goes, kept a
 * handle per operation and per result taken before: half of the memory per built operation).
 *
 * Invariant: every entry of a registered tree's table is NULL, TETHER__TOMB, or a handle whose
 * memory the collector has not reclaimed. Tables are malloc memory, which the collector does not
 * scan: push_tables marks the strong entries (held, or with a user pointer) of every registered
 * table as roots of each collection, and at the end of the marking, with the world stopped,
 * on_event replaces every entry the marking did not reach by TETHER__TOMB before the sweep
 * reclaims anything; so no thread ever reads a reclaimed handle from a table. (Tables outside the
 * collector's heap: its heap is sized by what it finds in use, and a table, the size of
 * everything made between two collections, would grow the heap with every collection.) A tree is
 * registered while its table is not freed: from its creation until it is merged, or destroyed
 * without held handles, or its last held handle after its destruction is released.
 * Registrations change under the collector's allocation lock, so no collection sees half of one.
 *
 * Tombstones keep the probe runs of a table intact (they are entries no key matches); a thread
 * stopped in the middle of a table operation finds a tombstone where it reads an entry next, never
 * an empty slot it did not make. Rehashing drops them (table.c); the table being filled then is
 * swept too (tether__tree.next_slots), so that entries copied into it before it is published
 * cannot be taken unseen. The handle counts (tether__tree.counts, the arena's stats) count a
 * tombstone's handle until then.
 */
#include "internal.h"

#include <gc/gc_mark.h>
#include <stdlib.h>

/* hraw 0 stands for the raw pointer ~0, which no lookup asks for; invalid, no tree, no holds, no
 * user pointer (huser = ~NULL). */
tether__handle tether__tomb = {0, TETHER__INVALID, ~(uintptr_t)0, 0, 0};

static inline int strong(const tether__handle *h) { return h->holds || h->huser != ~(uintptr_t)0; }

/* ---- tables ---------------------------------------------------------------------------------- */

/* A table is malloc'ed with its capacity in the word before its first slot: the collector reads a
 * table whose tree it may have stopped halfway through publishing a new one (slots set, cap not
 * yet), so the capacity must come with the slots. */
static inline size_t table_cap(tether__handle **slots) { return ((size_t *)slots)[-1]; }

void *tether__table_alloc(size_t nslots) {
  size_t *base = calloc(nslots + 1, sizeof(void *));
  if (!base) return NULL;
  base[0] = nslots;
  return base + 1;
}

void tether__table_free(void *slots) {
  if (slots) free((size_t *)slots - 1);
}

/* ---- the registry of trees whose tables the collector reads ---------------------------------- */

/* malloc memory: it must not keep trees alive. Changed only under the allocation lock. */
static tether__tree **reg;
static uint32_t reg_n, reg_cap;

static void *reg_add(void *p) {
  tether__tree *t = p;
  if (reg_n == reg_cap) {
    uint32_t ncap = reg_cap ? reg_cap * 2 : 256;
    tether__tree **n = realloc(reg, (size_t)ncap * sizeof *n);
    if (!n) return NULL;
    reg = n;
    reg_cap = ncap;
  }
  reg[reg_n++] = t;
  t->weak_slot = reg_n;
  return t;
}

static void *reg_remove(void *p) {
  tether__tree *t = p;
  uint32_t i = t->weak_slot - 1;
  if (t->weak_slot && i < reg_n && reg[i] == t) {
    reg[i] = reg[--reg_n];
    reg[i]->weak_slot = i + 1;
  }
  t->weak_slot = 0;
  return NULL;
}

int tether__weak_register(tether__tree *t) {
  return GC_call_with_alloc_lock(reg_add, t) ? TETHER_OK : TETHER_ENOMEM;
}

void tether__weak_unregister(tether__tree *t) {
  if (t->weak_slot) GC_call_with_alloc_lock(reg_remove, t);
}

/* ---- what the collector does with them ------------------------------------------------------- */

static GC_push_other_roots_proc next_push;

static void push_table(tether__handle **slots) {
  if (!slots) return;
  size_t n = table_cap(slots);
  for (size_t j = 0; j < n; j++) {
    tether__handle *h = slots[j];
    if (h && h != TETHER__TOMB && strong(h)) GC_push_all_eager(&slots[j], &slots[j + 1]);
  }
}

/* Roots of every collection (the allocation lock held, the world stopped): the strong entries. A
 * tree's own object is not marked by this: a live tree is reached from its handles and pins, or
 * finalized. */
static void GC_CALLBACK push_tables(void) {
  if (next_push) next_push();
  for (uint32_t i = 0; i < reg_n; i++) {
    push_table(__atomic_load_n(&reg[i]->slots, __ATOMIC_RELAXED));
    push_table(__atomic_load_n(&reg[i]->next_slots, __ATOMIC_RELAXED)); /* rehashing */
  }
}

/* Turns the entries nothing reached into tombstones; returns the entries left. */
static size_t sweep_table(tether__handle **slots) {
  if (!slots) return 0;
  size_t n = table_cap(slots), live = 0;
  for (size_t j = 0; j < n; j++) {
    tether__handle *h = slots[j];
    if (!h || h == TETHER__TOMB) continue;
    if (GC_is_marked(h))
      live++;
    else
      slots[j] = TETHER__TOMB;
  }
  return live;
}

/* A table of at least this many slots whose tree took no new entry for a whole collection cycle
 * is rehashed to its size when an eighth of it or less is live (tether__table_shrink). */
#define SHRINK_MIN_CAP 64

/* With the world stopped, after marking (the allocation lock held): every entry nothing reached
 * becomes a tombstone. The table of a tree found unreachable (to be finalized) is swept too: its
 * handles are as unreachable as it is. A live tree idle since the last collection with few live
 * entries is marked for shrinking, and its arena told (the rehash allocates: it is done at the
 * arena's next safe point, tether__shrink_tables). */
static void GC_CALLBACK on_event(GC_EventType e) {
  if (e != GC_EVENT_MARK_END) return;
  int any = 0;
  for (uint32_t i = 0; i < reg_n; i++) {
    tether__tree *t = reg[i];
    tether__handle **slots = __atomic_load_n(&t->slots, __ATOMIC_RELAXED);
    tether__handle **next = __atomic_load_n(&t->next_slots, __ATOMIC_RELAXED); /* rehashing */
    size_t live = sweep_table(slots);
    sweep_table(next);
    if (!t->fresh && !next && slots && t->state == TETHER__TREE_LIVE && t->arena &&
        table_cap(slots) >= SHRINK_MIN_CAP && live * 8 <= table_cap(slots)) {
      t->shrink = 1;
      t->arena->shrink = 1;
      any = 1;
    }
    t->fresh = 0;
  }
  if (any) atomic_store(&tether__finalizers_queued, 1); /* a safe point soon */
}

/* ---- shrinking ------------------------------------------------------------------------------ */

typedef struct {
  tether_arena *a;
  uint32_t from;
  tether__tree *found;
} shrink_scan;

/* Under the allocation lock: the next tree of arena a marked for shrinking, its mark cleared. */
static void *next_to_shrink(void *p) {
  shrink_scan *s = p;
  s->found = NULL;
  for (; s->from < reg_n; s->from++) {
    tether__tree *t = reg[s->from];
    if (t->arena == s->a && t->shrink) {
      t->shrink = 0;
      s->found = t;
      break;
    }
  }
  return NULL;
}

void tether__shrink_tables(tether_arena *a) {
  a->shrink = 0;
  /* The scan restarts where it stopped: a tree registered or unregistered meanwhile moves the
   * others, so some may be left for the next time (their mark stays set). */
  shrink_scan s = {a, 0, NULL};
  for (;;) {
    GC_call_with_alloc_lock(next_to_shrink, &s);
    tether__tree *t = s.found; /* on the stack: kept alive */
    if (!t) break;
    if (t->state == TETHER__TREE_LIVE) tether__table_shrink(t);
    s.from++;
  }
}

void tether__weak_init(void) {
  next_push = GC_get_push_other_roots();
  GC_set_push_other_roots(push_tables);
  GC_set_on_collection_event(on_event);
}
