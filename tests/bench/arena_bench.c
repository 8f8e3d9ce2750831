/* Benchmark of the arena against the raw C API and a malloc + refcount + hash-map handle layer.
 *
 *   bazel run -c opt //tests/bench:arena -- --ops 1000000
 *
 * Prints one table. "cold" figures are the first round in a fresh process (the heap grows, pages
 * are touched for the first time); "warm" repeats the same work on a clone of the module after
 * the first round's handles were freed, so the memory is already mapped. The arena's own speed is
 * the warm figure (docs/benchmarks.md). */
#include <gc/gc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tether.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static __attribute__((noreturn)) void die(const char *what, int rc) {
  fprintf(stderr, "arena_bench: %s: %s\n", what, tether_strerror(rc));
  exit(2);
}

#define OK(e)                                                                                      \
  do {                                                                                             \
    int rc_ = (e);                                                                                 \
    if (rc_ != TETHER_OK) die(#e, rc_);                                                            \
  } while (0)

/* ---- the baseline a binding author would otherwise write ------------------------------------- */

typedef struct base_handle {
  void *raw;
  long refcount;
  struct base_handle *parent; /* counted reference */
} base_handle;

typedef struct {
  void **keys;
  base_handle **vals;
  size_t cap, used;
} base_map;

static size_t mix(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static base_handle *base_find(base_map *m, void *raw) {
  size_t mask = m->cap - 1;
  for (size_t i = mix(raw) & mask; m->keys[i]; i = (i + 1) & mask)
    if (m->keys[i] == raw) return m->vals[i];
  return NULL;
}

static void base_put(base_map *m, void *raw, base_handle *h);
static void base_grow(base_map *m) {
  base_map n = {calloc(m->cap * 2, sizeof(void *)), calloc(m->cap * 2, sizeof(void *)), m->cap * 2,
                0};
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) base_put(&n, m->keys[i], m->vals[i]);
  free(m->keys);
  free(m->vals);
  *m = n;
}

static void base_put(base_map *m, void *raw, base_handle *h) {
  if ((m->used + 1) * 8 > m->cap * 7) base_grow(m);
  size_t mask = m->cap - 1, i = mix(raw) & mask;
  while (m->keys[i]) i = (i + 1) & mask;
  m->keys[i] = raw;
  m->vals[i] = h;
  m->used++;
}

static base_handle *base_wrap(base_map *m, void *raw, base_handle *parent) {
  base_handle *h = base_find(m, raw);
  if (h) {
    h->refcount++;
    return h;
  }
  h = malloc(sizeof *h);
  h->raw = raw;
  h->refcount = 1;
  h->parent = parent;
  parent->refcount++;
  base_put(m, raw, h);
  return h;
}

/* ---- measurements ---------------------------------------------------------------------------- */

static intptr_t n_ops;

static MlirBlock body_of(MlirOperation module) {
  return mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
}

static MlirWalkResult count_cb(MlirOperation op, void *ud) {
  (void)op;
  ++*(intptr_t *)ud;
  return MlirWalkResultAdvance;
}

static double raw_walk(MlirOperation module) {
  intptr_t n = 0;
  double t0 = now_ns();
  mlirOperationWalk(module, count_cb, &n, MlirWalkPreOrder);
  return (now_ns() - t0) / (double)n;
}

static double raw_next(MlirOperation module) {
  intptr_t n = 0;
  double t0 = now_ns();
  for (MlirOperation o = mlirBlockGetFirstOperation(body_of(module)); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o)) {
    n += mlirOperationIsNull(mlirOperationGetParentOperation(o)) ? 0 : 1;
  }
  return (now_ns() - t0) / (double)n;
}

/* Wraps every op of the module's body through tether_op_next; returns ns/op. */
static double tether_iter(tether_op *module) {
  tether_region *r;
  tether_block *b;
  tether_op *o;
  OK(tether_op_region(module, 0, &r));
  OK(tether_region_first_block(r, &b));
  intptr_t n = 0;
  double t0 = now_ns();
  OK(tether_block_first_op(b, &o));
  while (o) {
    n++;
    OK(tether_op_next(o, &o));
  }
  double dt = now_ns() - t0;
  if (n != n_ops) die("wrong op count", TETHER_EARG);
  return dt / (double)n;
}

static double tether_nav(tether_op *module) {
  tether_region *r;
  tether_block *b;
  tether_op *o, *p;
  OK(tether_op_region(module, 0, &r));
  OK(tether_region_first_block(r, &b));
  OK(tether_block_first_op(b, &o));
  intptr_t n = 0;
  double t0 = now_ns();
  while (o) {
    OK(tether_op_parent(o, &p));
    if (p != module) die("wrong parent", TETHER_EARG);
    OK(tether_op_next(o, &o));
    n++;
  }
  return (now_ns() - t0) / (double)n;
}

static double base_iter(base_map *m, MlirOperation module, base_handle *root,
                        base_handle **out_last) {
  intptr_t n = 0;
  double t0 = now_ns();
  base_handle *h = NULL;
  for (MlirOperation o = mlirBlockGetFirstOperation(body_of(module)); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o)) {
    h = base_wrap(m, o.ptr, root);
    n++;
  }
  *out_last = h;
  return (now_ns() - t0) / (double)n;
}

static void base_free_all(base_map *m) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) free(m->vals[i]);
  free(m->keys);
  free(m->vals);
}

static size_t gc_used(void) {
  GC_word heap, fr, unmapped, since, total;
  GC_get_heap_usage_safe(&heap, &fr, &unmapped, &since, &total);
  return (size_t)(heap - fr - unmapped);
}

static double pause_ms(void) {
  double best = 1e30;
  for (int i = 0; i < 3; i++) {
    double t0 = now_ns();
    GC_gcollect();
    double dt = (now_ns() - t0) / 1e6;
    if (dt < best) best = dt;
  }
  return best;
}

static char *make_module(intptr_t n) {
  const char *line = "\"t.o\"() : () -> ()\n";
  size_t len = strlen(line);
  char *s = malloc((size_t)n * len + 1);
  for (intptr_t i = 0; i < n; i++) memcpy(s + (size_t)i * len, line, len);
  s[(size_t)n * len] = 0;
  return s;
}

static __attribute__((noinline)) void cold_round(tether_arena *a, tether_op *m, double *cold_new) {
  *cold_new = tether_iter(m);
  (void)a;
}

int main(int argc, char **argv) {
  n_ops = 1000000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ops") && i + 1 < argc)
      n_ops = strtol(argv[++i], NULL, 10);
    else {
      fprintf(stderr, "usage: arena_bench [--ops N]\n");
      return 2;
    }
  }
  if (n_ops < 1000) n_ops = 1000;
  tether_arena *a;
  OK(tether_arena_create(&a));
  OK(tether_arena_allow_unregistered(a, true));
  char *text = make_module(n_ops);
  double t0 = now_ns();
  tether_op *m1;
  OK(tether_module_parse(a, text, strlen(text), &m1));
  double parse_s = (now_ns() - t0) / 1e9;
  free(text);
  tether_op *m2, *m3;
  OK(tether_op_clone(m1, &m2));
  OK(tether_op_clone(m1, &m3));
  MlirOperation raw1, raw3;
  OK(tether_op_get(m1, &raw1));
  OK(tether_op_get(m3, &raw3));

  double walk = raw_walk(raw1), next = raw_next(raw1);

  /* tether: cold round on m1, then drop m1's handles by erasing it; warm round on m2. */
  tether_collect(a);
  size_t used0 = gc_used();
  double cold_new;
  cold_round(a, m1, &cold_new);
  tether_collect(a); /* clears the stack first: no stale pointer keeps an old table */
  size_t used1 = gc_used();
  double bytes = (double)(used1 - used0) / (double)n_ops;
  double pause = pause_ms();
  OK(tether_op_erase(m1));
  tether_collect(a);
  double warm_new = tether_iter(m2);
  double lookup = tether_iter(m2);
  double nav = tether_nav(m2);

  /* baseline: cold round on m3, free everything, warm round on m3 again (fresh map). */
  base_handle root = {raw3.ptr, 1, NULL};
  base_map bm = {calloc(1024, sizeof(void *)), calloc(1024, sizeof(void *)), 1024, 0};
  base_handle *last;
  double base_cold = base_iter(&bm, raw3, &root, &last);
  base_free_all(&bm);
  bm = (base_map){calloc(1024, sizeof(void *)), calloc(1024, sizeof(void *)), 1024, 0};
  double base_warm = base_iter(&bm, raw3, &root, &last);
  double base_lookup = base_iter(&bm, raw3, &root, &last);
  base_free_all(&bm);

  printf("arena benchmark: %ld operations in one block (parse %.2f s)\n", (long)n_ops, parse_s);
  printf("| measurement | tether | malloc+refcount+map baseline | target |\n");
  printf("|---|---|---|---|\n");
  printf("| raw C-API walk (mlirOperationWalk), ns/op | %.1f | | floor |\n", walk);
  printf("| raw next-in-block + parent, ns/op | %.1f | | floor |\n", next);
  printf("| first wrap of every op, cold, ns/op | %.1f | %.1f | |\n", cold_new, base_cold);
  printf("| first wrap of every op, warm, ns/op | %.1f | %.1f | <= 60, < baseline |\n", warm_new,
         base_warm);
  printf("| second wrap (interned lookup), ns/op | %.1f | %.1f | <= 25, < baseline |\n", lookup,
         base_lookup);
  printf("| navigation parent + next via handles, ns/op | %.1f | | |\n", nav);
  printf("| bytes per handle (GC heap, incl. intern table) | %.1f | | <= 48 |\n", bytes);
  printf("| full collection pause, %ld live handles, ms | %.1f | | <= 30 |\n", (long)n_ops, pause);
  tether_keep_alive(m2);
  tether_keep_alive(m3);
  return 0;
}
