/* table.c: the intern table of a tree and the table of roots of an arena.
 *
 * Intern table: open addressing with linear probing over handle pointers, keyed by the handle's
 * (raw, kind); deletion shifts entries back, so there are no tombstones. It lives in GC memory and
 * is what keeps a tree's handles alive; every entry is a valid handle of that tree, or an invalid
 * one still held (tether_handle_hold), keyed by its own address, which no lookup by raw pointer
 * finds. Capacity is a power of two, load at most 7/8 after an insert.
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
}

static void place(tether__handle **slots, size_t mask, tether__handle *h) {
  size_t i = hash_ptr(tether__table_key(h), tether__kind(h), mask);
  while (slots[i]) i = (i + 1) & mask;
  slots[i] = h;
}

/* Rehashes t into a table of ncap slots (a power of two, larger than used). */
static int grow_to(tether__tree *t, uint32_t ncap) {
  /* A table that doubles will soon hold that many more handles. If the heap has no room for them,
   * grow it now: otherwise the allocations that fill the table trigger collection after
   * collection, each marking every handle made so far. */
  size_t need = (size_t)(ncap - t->cap) * (32 + sizeof(tether__handle *));
  if (ncap >= 65536 && GC_get_free_bytes() < need) GC_expand_hp(need - GC_get_free_bytes());
  tether__handle **n = tether__alloc((size_t)ncap * sizeof *n);
  if (!n) return TETHER_ENOMEM;
  tether__handle **old = t->slots;
  for (uint32_t i = 0; i < t->cap; i++)
    if (old[i]) place(n, ncap - 1, old[i]);
  t->slots = n;
  t->cap = ncap;
  /* Nothing else holds the old table (every reader goes through t->slots): freed now, its pages
   * serve the handles that fill the new one instead of waiting for a collection. */
  if (old) GC_FREE(old);
  return TETHER_OK;
}

int tether__table_reserve(tether__tree *t, uint32_t extra) {
  if ((size_t)(t->used + extra) * 8 <= (size_t)t->cap * 7) return TETHER_OK;
  uint32_t ncap = t->cap ? t->cap : 8;
  while ((size_t)(t->used + extra) * 8 > (size_t)ncap * 7) ncap *= 2;
  return grow_to(t, ncap);
}

/* An insert that had to walk this far, in a table at least a quarter full, doubles the table.
 * IR that spans more address space than the table has slots wraps around it, and MLIR's
 * allocation stride then sends the wraps to the same residues: runs merge into clusters. Measured
 * while a tree grows to 1M operations: 40-300 slots per insert at 2^17-2^20 slots before this
 * rule, a few after it. The memory bound stays: a table is never less than a quarter full. */
#define LONG_RUN 24

tether__handle *tether__table_probe(tether__tree *t, void *raw, int kind, uint32_t *slot) {
  uintptr_t hraw = ~(uintptr_t)raw;
  for (;;) {
    size_t mask = t->cap - 1, home = hash_ptr(raw, kind, mask);
    for (size_t i = home;; i = (i + 1) & mask) {
      tether__handle *h = t->slots[i];
      if (!h) {
        if (((i - home) & mask) > LONG_RUN && (size_t)t->used * 4 > t->cap &&
            t->cap < ((uint32_t)1 << 31) && grow_to(t, t->cap * 2) == TETHER_OK)
          break; /* probe again in the larger table */
        *slot = (uint32_t)i;
        return NULL;
      }
      if (h->hraw == hraw && tether__kind(h) == kind) return h;
    }
  }
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
