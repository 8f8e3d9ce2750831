/* table.c: the intern table of a tree and the table of roots of an arena.
 *
 * Intern table: open addressing with linear probing over handle pointers, keyed by the handle's
 * (raw, kind); deletion shifts entries back. It lives in GC memory (malloc: weak.c keeps the held
 * handles alive, the others are the collector's to take); every entry is a valid handle of
 * that tree, an invalid one still held (tether_handle_hold), keyed by its own address, which no
 * lookup by raw pointer finds, or TETHER__TOMB, where the collector took a handle (it counts as an
 * entry: probe runs stay intact; rehashing drops them). Capacity is a power of two, load (entries
 * and tombstones) at most 7/8 after an insert.
 *
 * Roots table: the same scheme over (raw root -> tree) pairs in malloc memory. It is an index the
 * collector must not see (it would keep every tree alive); entries are removed when a tree is
 * destroyed or merged, before the tree can be reclaimed.
 */
#include "internal.h"

#include <stdlib.h>

/* Keeps locality: MLIR allocates neighbouring IR at neighbouring addresses, and walks visit it in
 * that order, so neighbouring slots are probed one after the other. Bits above 2^24 are folded in
 * so that distant allocations do not pile up on the same slots. */
static inline size_t hash_ptr(const void *p, int kind, size_t mask) {
  uintptr_t x = (uintptr_t)p >> 4;
  return (size_t)(x + (x >> __builtin_ctzll((unsigned long long)mask + 1)) * 0x9E3779B97F4A7C15ull +
                  ((uintptr_t)kind << 2)) &
         mask;
}

static inline size_t hash_root(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

tether__handle *tether__table_find(tether__tree *t, void *raw, int kind) {
  if (!t->cap) return NULL;
  size_t mask = t->cap - 1;
  uintptr_t hraw = ~(uintptr_t)raw;
  for (size_t i = hash_ptr(raw, kind, mask);; i = (i + 1) & mask) {
    tether__handle *h = t->slots[i];
    if (!h) return NULL;
    if (h->hraw == hraw && tether__kind(h) == kind) return h;
  }
}

void tether__table_fill(tether__tree *t, uint32_t slot, tether__handle *h) {
  t->slots[slot] = h;
  t->used++;
  t->fresh = 1;
}

static void place(tether__handle **slots, size_t mask, tether__handle *h) {
  size_t i = hash_ptr(tether__table_key(h), tether__kind(h), mask);
  while (slots[i]) i = (i + 1) & mask;
  slots[i] = h;
}

/* Drops t's tombstones without a new table (the steady state of a tree built op by op: the table
 * fills with the handles made between two collections, which then become tombstones): a new
 * table each time would be fresh memory for the kernel to fault in and zero, a third of the page
 * faults of a long build loop. Tombstones become empty slots, then every entry is re-placed in
 * the order of the slots, starting after a slot that was empty before: no probe run crosses that
 * one, so each entry's home is between it and the entry, a re-placed entry moves back towards its
 * home, and a hole left behind only breaks runs of entries not re-placed yet. Nothing here
 * allocates; a collection from another thread meanwhile finds every entry in the table but the
 * one being moved, which is in this thread's registers or stack (scanned), and may turn entries
 * into tombstones (they count as taken slots, as always). */
static int rehash_in_place(tether__tree *t) {
  tether__handle **slots = t->slots;
  size_t mask = t->cap - 1, start = t->cap;
  for (size_t i = 0; i < t->cap; i++) {
    if (!slots[i] && start == t->cap) start = i;
    if (slots[i] == TETHER__TOMB) slots[i] = NULL;
  }
  if (start == t->cap) start = 0; /* no empty slot: cannot happen at a load of at most 7/8 */
  for (size_t k = 1; k <= mask + 1; k++) {
    size_t i = (start + k) & mask;
    tether__handle *h = slots[i];
    if (!h || h == TETHER__TOMB) continue;
    size_t home = hash_ptr(tether__table_key(h), tether__kind(h), mask);
    if (home == i) continue;
    slots[i] = NULL;
    place(slots, mask, h);
  }
  uint32_t counts[TETHER_KIND_COUNT] = {0}, used = 0;
  for (size_t i = 0; i < t->cap; i++) {
    tether__handle *h = slots[i];
    if (!h) continue;
    used++;
    if (h != TETHER__TOMB && tether__valid(h)) counts[tether__kind(h)]++;
  }
  t->used = used;
  for (int k = 0; k < TETHER_KIND_COUNT; k++) {
    if (t->arena) t->arena->stats.handles[k] -= (intptr_t)t->counts[k] - (intptr_t)counts[k];
    t->counts[k] = counts[k];
  }
  return TETHER_OK;
}

/* Rehashes t without its tombstones, with room for `extra` more entries at a load of at most 1/2.
 * A table never shrinks here (only tether__table_shrink, once its tree is idle): it fills with the
 * handles made between two collections, which become tombstones, again and again, and what is live
 * right after a collection says nothing of what the next cycle needs (halving when a quarter would
 * do, a build loop's table went up and down between two sizes every few thousand operations, each
 * time in new memory for the kernel to fault in). At its size, the tombstones are dropped in place
 * (rehash_in_place). A table goes with its tree (merged or destroyed). The new table is swept while
 * the entries are copied into it (tether__tree.next_slots): a collection meanwhile, from any
 * thread, would otherwise take the handles copied so far unseen. */
static int rehash(tether__tree *t, int long_run, uint32_t extra, int shrink) {
  uint32_t live = 0;
  for (uint32_t i = 0; i < t->cap; i++)
    if (t->slots[i] && t->slots[i] != TETHER__TOMB) live++;
  /* A long run (tether__table_probe) in a table a quarter full of handles doubles it; runs of
   * tombstones only need them dropped. */
  uint32_t min_cap = long_run && (size_t)live * 4 > t->cap ? t->cap * 2 : 0;
  uint32_t ncap = 8;
  while ((size_t)(live + extra) * 2 > ncap && ncap < ((uint32_t)1 << 31)) ncap *= 2;
  if (ncap < t->cap && !shrink) ncap = t->cap;
  if (ncap < min_cap) ncap = min_cap;
  if (ncap == t->cap) return rehash_in_place(t);
  tether__handle **n = tether__table_alloc(ncap); /* may collect: entries become tombstones */
  if (!n) return TETHER_ENOMEM;
  __atomic_store_n(&t->next_slots, n, __ATOMIC_RELAXED);
  tether__handle **old = t->slots;
  uint32_t counts[TETHER_KIND_COUNT] = {0}, used = 0;
  for (uint32_t i = 0; i < t->cap; i++) {
    tether__handle *h = old[i];
    if (!h || h == TETHER__TOMB) continue;
    place(n, ncap - 1, h);
    used++;
    if (tether__valid(h)) counts[tether__kind(h)]++;
  }
  __atomic_store_n(&t->slots, n, __ATOMIC_RELAXED);
  if (t->arena) t->arena->stats.table_slots += (intptr_t)ncap - (intptr_t)t->cap;
  t->cap = ncap;
  t->used = used;
  __atomic_store_n(&t->next_slots, NULL, __ATOMIC_RELAXED);
  /* The handles the collector took leave the counts now. */
  for (int k = 0; k < TETHER_KIND_COUNT; k++) {
    if (t->arena) t->arena->stats.handles[k] -= (intptr_t)t->counts[k] - (intptr_t)counts[k];
    t->counts[k] = counts[k];
  }
  tether__table_free(old); /* nothing else holds it: every reader goes through t->slots */
  return TETHER_OK;
}

int tether__table_reserve(tether__tree *t, uint32_t extra) {
  if ((size_t)(t->used + extra) * 8 <= (size_t)t->cap * 7) return TETHER_OK;
  return rehash(t, 0, extra, 0);
}

/* An insert that had to walk this far, in a table at least a quarter full, rehashes the table:
 * doubled when a quarter of it is handles (not tombstones, weak.c).
 * IR that spans more address space than the table has slots wraps around it, and MLIR's
 * allocation stride then sends the wraps to the same residues: runs merge into clusters. Measured
 * while a tree grows to 1M operations: 40-300 slots per insert at 2^17-2^20 slots before this
 * rule, a few after it. */
#define LONG_RUN 24

tether__handle *tether__table_probe(tether__tree *t, void *raw, int kind, uint32_t *slot) {
  uintptr_t hraw = ~(uintptr_t)raw;
  for (;;) {
    size_t mask = t->cap - 1, home = hash_ptr(raw, kind, mask);
    for (size_t i = home;; i = (i + 1) & mask) {
      tether__handle *h = t->slots[i];
      if (!h) {
        if (((i - home) & mask) > LONG_RUN && (size_t)t->used * 4 > t->cap &&
            t->cap < ((uint32_t)1 << 31) && rehash(t, 1, 1, 0) == TETHER_OK)
          break; /* probe again in the rehashed table */
        *slot = (uint32_t)i;
        return NULL;
      }
      if (h->hraw == hraw && tether__kind(h) == kind) return h;
    }
  }
}

/* A table its tree stopped filling (weak.c found it idle for a whole collection cycle with few
 * live entries: a module built op by op, then kept) goes down to what it holds: without this,
 * every kept module would keep a table sized for the garbage of the cycle it was built in (256
 * KiB for a module built from Python in one go, measured: 15% more memory per kept operation). */
int tether__table_shrink(tether__tree *t) {
  if (!t->slots || t->next_slots) return TETHER_OK;
  return rehash(t, 0, 0, 1);
}

void tether__table_keep(tether__tree *t, tether__handle *h) {
  place(t->slots, t->cap - 1, h);
  t->used++;
}

int tether__table_insert(tether__tree *t, tether__handle *h) {
  int rc = tether__table_reserve(t, 1);
  if (rc != TETHER_OK) return rc;
  place(t->slots, t->cap - 1, h);
  t->used++;
  t->fresh = 1;
  return TETHER_OK;
}

void tether__table_remove(tether__tree *t, tether__handle *h) {
  if (!t->cap) return;
  size_t mask = t->cap - 1;
  size_t i = hash_ptr(tether__table_key(h), tether__kind(h), mask);
  while (t->slots[i] != h) {
    if (!t->slots[i]) return;
    i = (i + 1) & mask;
  }
  /* Backward-shift deletion: move later entries of the probe run into the hole when their home
   * slot is not between the hole and their position. */
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    tether__handle *e = t->slots[j];
    if (!e) break;
    size_t k = hash_ptr(tether__table_key(e), tether__kind(e), mask);
    int between = (i <= j) ? (i < k && k <= j) : (i < k || k <= j);
    if (!between) {
      t->slots[i] = e;
      i = j;
    }
  }
  t->slots[i] = NULL;
  t->used--;
}

/* ---- roots ----------------------------------------------------------------------------------- */

tether__tree *tether__roots_get(tether_arena *a, void *key) {
  if (!a->rcap) return NULL;
  size_t mask = a->rcap - 1;
  for (size_t i = hash_root(key) & mask;; i = (i + 1) & mask) {
    if (!a->roots[i].key) return NULL;
    if (a->roots[i].key == key) return a->roots[i].tree;
  }
}

static void root_place(tether__rootent *r, size_t mask, tether__rootent e) {
  size_t i = hash_root(e.key) & mask;
  while (r[i].key) i = (i + 1) & mask;
  r[i] = e;
}

int tether__roots_put(tether_arena *a, void *key, tether__tree *t) {
  if ((size_t)(a->rused + 1) * 4 > (size_t)a->rcap * 3) {
    uint32_t ncap = a->rcap ? a->rcap * 2 : 16;
    tether__rootent *n = calloc(ncap, sizeof *n);
    if (!n) return TETHER_ENOMEM;
    for (uint32_t i = 0; i < a->rcap; i++)
      if (a->roots[i].key) root_place(n, ncap - 1, a->roots[i]);
    free(a->roots);
    a->roots = n;
    a->rcap = ncap;
  }
  root_place(a->roots, a->rcap - 1, (tether__rootent){key, t});
  a->rused++;
  return TETHER_OK;
}

void tether__roots_remove(tether_arena *a, void *key) {
  if (!a->rcap || !key) return;
  size_t mask = a->rcap - 1;
  size_t i = hash_root(key) & mask;
  while (a->roots[i].key != key) {
    if (!a->roots[i].key) return;
    i = (i + 1) & mask;
  }
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!a->roots[j].key) break;
    size_t k = hash_root(a->roots[j].key) & mask;
    int between = (i <= j) ? (i < k && k <= j) : (i < k || k <= j);
    if (!between) {
      a->roots[i] = a->roots[j];
      i = j;
    }
  }
  a->roots[i] = (tether__rootent){NULL, NULL};
  a->rused--;
}

void tether__roots_free(tether_arena *a) {
  free(a->roots);
  a->roots = NULL;
  a->rcap = a->rused = 0;
}
