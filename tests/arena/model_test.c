/* Model-based randomized test of the arena.
 *
 * Thousands of random sequences of create / parse / navigate / insert / move / detach / erase /
 * raw erase + revalidate / clone / drop handle / collect / cross-tree users (a detached op
 * branching into an op's block: erase and passes refused while it lives) / pass pipelines, each on
 * a fresh arena, checked after
 * every step against a reference model: which handles are valid (and why not), every operation's
 * parent, identity (one handle per operation for as long as the handle lives: the model holds it
 * weakly, so a handle nothing reaches any more may be taken by the collector, and the operation's
 * next handle is a new one), and the number of live roots.
 *
 * Usage: model_test [SEED [SEQUENCES [STEPS]]]; defaults 1, 1000, 100 (100,000 steps). Seeded and
 * reproducible: a failure prints the seed, sequence and step.
 *
 * Every operation is `"t.n"() ({^bb0: ...}) {id = N : i64} : () -> ()`: one region, one block, and
 * an id attribute that names it in the model. */
#include <gc/gc.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Transforms.h>
#include <stdint.h>

#include "check.h"

enum { ALIVE, ERASED, PARENT_ERASED, REMOVED, GONE };

typedef struct {
  int parent; /* -1: root */
  int state;
  int *kids;
  int nkids, capkids;
  /* The one handle seen for this op while it lives: a cell (malloc, never moved) that is a
   * disappearing link, cleared by the collector when it takes the handle. Compared, never
   * dereferenced. */
  tether_op **handle;
} mop;

static mop *ops;
static int nops, capops;
static tether_op **slots; /* GC-visible (uncollectable) */
static int *slot_id;
enum { MAXSLOTS = 48 };
static int nslots;
/* Cross-tree users: detached "t.use" ops whose successor is the block of op user_target[u]. */
static tether_op **users; /* GC-visible (uncollectable) */
static int *user_target;
enum { MAXUSERS = 6 };
static int nusers;
static MlirPassManager pm; /* canonicalize, anchored on "t.n", per arena */
static uint64_t rng;
static unsigned long seed, seq, step;
/* How often each kind of step succeeded or was refused as the model predicted. */
enum {
  C_PARSE,
  C_INSERT,
  C_INSERT_REFUSED,
  C_MOVE,
  C_MOVE_REFUSED,
  C_DETACH,
  C_ERASE,
  C_REVALIDATE,
  C_CLONE,
  C_PARENT,
  C_CHILD,
  C_DROP,
  C_COLLECT,
  C_USER,
  C_ERASE_BUSY,
  C_PASSES,
  C_PASSES_BUSY,
  C_N
};
static const char *const counter_names[C_N] = {"parse",
                                               "insert",
                                               "insert refused",
                                               "move",
                                               "move refused",
                                               "detach",
                                               "erase",
                                               "raw erase + revalidate",
                                               "clone",
                                               "to parent",
                                               "to child",
                                               "drop",
                                               "collect",
                                               "cross-tree user",
                                               "erase refused (used)",
                                               "passes",
                                               "passes refused (used)"};
static unsigned long counters[C_N];

static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static int rnd(int n) { return n <= 0 ? 0 : (int)(next_rand() % (uint64_t)n); }

#define MCHECK(c)                                                                                  \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "seed %lu sequence %lu step %lu: %s:%d: CHECK failed: %s\n", seed, seq,      \
              step, __FILE__, __LINE__, #c);                                                       \
      printf("0 passed, 1 failed\n");                                                              \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define MOK(expr)                                                                                  \
  do {                                                                                             \
    int rc_ = (expr);                                                                              \
    if (rc_ != TETHER_OK) {                                                                        \
      fprintf(stderr, "seed %lu sequence %lu step %lu: %s:%d: %s -> %s\n", seed, seq, step,        \
              __FILE__, __LINE__, #expr, tether_status_name(rc_));                                 \
      printf("0 passed, 1 failed\n");                                                              \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static int new_op(int parent) {
  if (nops == capops) {
    capops = capops ? capops * 2 : 256;
    ops = realloc(ops, (size_t)capops * sizeof *ops);
  }
  ops[nops] = (mop){parent, ALIVE, NULL, 0, 0, NULL};
  return nops++;
}

static void kid_insert(int p, int pos, int k) {
  mop *m = &ops[p];
  if (m->nkids == m->capkids) {
    m->capkids = m->capkids ? m->capkids * 2 : 4;
    m->kids = realloc(m->kids, (size_t)m->capkids * sizeof(int));
  }
  memmove(m->kids + pos + 1, m->kids + pos, (size_t)(m->nkids - pos) * sizeof(int));
  m->kids[pos] = k;
  m->nkids++;
  ops[k].parent = p;
}

static int kid_index(int p, int k) {
  for (int i = 0; i < ops[p].nkids; i++)
    if (ops[p].kids[i] == k) return i;
  return -1;
}

static void kid_remove(int k) {
  int p = ops[k].parent;
  if (p < 0) return;
  int i = kid_index(p, k);
  memmove(ops[p].kids + i, ops[p].kids + i + 1, (size_t)(ops[p].nkids - i - 1) * sizeof(int));
  ops[p].nkids--;
  ops[k].parent = -1;
}

static int root_of(int k) {
  while (ops[k].parent >= 0) k = ops[k].parent;
  return k;
}

static int is_inside(int x, int anc) {
  for (; x >= 0; x = ops[x].parent)
    if (x == anc) return 1;
  return 0;
}

static void mark_subtree(int k, int self_state, int kid_state) {
  ops[k].state = self_state;
  for (int i = 0; i < ops[k].nkids; i++) mark_subtree(ops[k].kids[i], kid_state, kid_state);
}

static int64_t id_of(tether_op *h) {
  MlirOperation raw;
  MOK(tether_op_get(h, &raw));
  MlirAttribute a = mlirOperationGetAttributeByName(raw, mlirStringRefCreateFromCString("id"));
  MCHECK(!mlirAttributeIsNull(a) && mlirAttributeIsAInteger(a));
  return mlirIntegerAttrGetValueInt(a);
}

static void set_id(MlirOperation raw, int id) {
  MlirContext ctx = mlirOperationGetContext(raw);
  mlirOperationSetAttributeByName(raw, mlirStringRefCreateFromCString("id"),
                                  mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), id));
}

/* Records (or checks) the one handle of model op k: while the handle seen before lives, h must
 * be it. */
static void see(int k, tether_op *h) {
  MCHECK(h != NULL);
  MCHECK(id_of(h) == k);
  tether_op **cell = ops[k].handle;
  if (!cell) {
    cell = ops[k].handle = malloc(sizeof *cell);
    MCHECK(cell != NULL);
    *cell = NULL;
  }
  if (*cell) {
    MCHECK(*cell == h);
    return;
  }
  *cell = h;
  MCHECK(GC_general_register_disappearing_link((void **)cell, h) == GC_SUCCESS);
}

static void add_slot(int k, tether_op *h) {
  if (nslots == MAXSLOTS) {
    int victim = rnd(nslots);
    slots[victim] = slots[nslots - 1];
    slot_id[victim] = slot_id[nslots - 1];
    nslots--;
  }
  slots[nslots] = h;
  slot_id[nslots] = k;
  nslots++;
}

/* Model ops of trees no slot reaches can no longer be observed: forget them. */
static void forget_unreached(void) {
  char *reached = calloc((size_t)nops + 1, 1);
  for (int s = 0; s < nslots; s++)
    if (ops[slot_id[s]].state == ALIVE) reached[root_of(slot_id[s])] = 1;
  for (int u = 0; u < nusers; u++) /* a user keeps its target's tree alive */
    if (ops[user_target[u]].state == ALIVE) reached[root_of(user_target[u])] = 1;
  for (int k = 0; k < nops; k++)
    if (ops[k].state == ALIVE && !reached[root_of(k)]) ops[k].state = GONE;
  /* Erased and removed ops are detached from the model tree, so root_of above only sees live
   * structure. */
  free(reached);
}

static int live_roots(void) {
  int n = 0;
  for (int k = 0; k < nops; k++)
    if (ops[k].state == ALIVE && ops[k].parent < 0) n++;
  return n;
}

static void check_all(tether_arena *a) {
  for (int s = 0; s < nslots; s++) {
    int k = slot_id[s];
    tether_op *h = slots[s];
    switch (ops[k].state) {
    case ALIVE: {
      MCHECK(tether_handle_is_valid(h));
      see(k, h);
      tether_op *p;
      MOK(tether_op_parent(h, &p));
      if (ops[k].parent < 0) {
        MCHECK(p == NULL);
      } else {
        see(ops[k].parent, p);
        intptr_t n;
        tether_region *r;
        tether_block *b;
        MOK(tether_op_region(p, 0, &r));
        MOK(tether_region_first_block(r, &b));
        MOK(tether_block_num_ops(b, &n));
        MCHECK(n == ops[ops[k].parent].nkids);
        tether_op *at;
        MOK(tether_block_op(b, kid_index(ops[k].parent, k), &at));
        MCHECK(at == h);
      }
      break;
    }
    case ERASED:
      MCHECK(tether_handle_reason(h) == TETHER_REASON_ERASED);
      break;
    case PARENT_ERASED:
      MCHECK(tether_handle_reason(h) == TETHER_REASON_PARENT_ERASED);
      break;
    case REMOVED:
      MCHECK(tether_handle_reason(h) == TETHER_REASON_REMOVED);
      break;
    }
    if (ops[k].state != ALIVE) {
      MlirOperation raw;
      MCHECK(tether_op_get(h, &raw) == TETHER_EINVALID);
      tether_op *p;
      MCHECK(tether_op_parent(h, &p) == TETHER_EINVALID);
    }
  }
  tether_arena_stats st;
  MOK(tether_arena_get_stats(a, &st));
  MCHECK(st.roots >= live_roots()); /* never fewer than the model needs */
}

static tether_op *parse_new(tether_arena *a, int nested) {
  char buf[256];
  int k = new_op(-1);
  if (nested) {
    int c = new_op(-1);
    kid_insert(k, 0, c);
    snprintf(buf, sizeof buf,
             "\"t.n\"() ({\n^bb0:\n  \"t.n\"() ({\n  ^bb0:\n  }) {id = %d : i64} : () -> ()\n}) "
             "{id = %d : i64} : () -> ()",
             c, k);
  } else {
    snprintf(buf, sizeof buf, "\"t.n\"() ({\n^bb0:\n}) {id = %d : i64} : () -> ()", k);
  }
  tether_op *h;
  MOK(tether_op_parse(a, buf, strlen(buf), &h));
  see(k, h);
  add_slot(k, h);
  return h;
}

static tether_block *block_of(tether_op *h) {
  tether_region *r;
  tether_block *b;
  MOK(tether_op_region(h, 0, &r));
  MOK(tether_region_first_block(r, &b));
  return b;
}

/* Gives fresh ids to a cloned subtree in pre-order, mirroring the model copy. */
static int clone_model(int k, int parent) {
  int c = new_op(-1);
  if (parent >= 0) kid_insert(parent, ops[parent].nkids, c);
  for (int i = 0; i < ops[k].nkids; i++) clone_model(ops[k].kids[i], c);
  return c;
}

static void renumber(MlirOperation raw, int c) {
  set_id(raw, c);
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(raw, 0));
  int i = 0;
  for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o), i++)
    renumber(o, ops[c].kids[i]);
}

/* Whether a live cross-tree user branches into x or into an op inside x. */
static int used_inside(int x) {
  for (int u = 0; u < nusers; u++)
    if (user_target[u] == x || is_inside(user_target[u], x)) return 1;
  return 0;
}

static int pick_valid(void) {
  int cand[MAXSLOTS], n = 0;
  for (int s = 0; s < nslots; s++)
    if (ops[slot_id[s]].state == ALIVE) cand[n++] = s;
  return n ? cand[rnd(n)] : -1;
}

/* The steps of one_step that take more than a few lines. Each checks the arena's answer against
 * the model, updates the model and counts itself. */

/* Inserts root x into y's block (refused when x has a parent or y is inside x). */
static void insert_into(int x, tether_op *hx, int y, tether_op *hy) {
  tether_block *b = block_of(hy);
  int pos = rnd(ops[y].nkids + 1);
  int rc = tether_block_insert_op(b, pos, hx);
  if (ops[x].parent >= 0) {
    MCHECK(rc == TETHER_ESTATE);
    counters[C_INSERT_REFUSED]++;
  } else if (is_inside(y, x)) {
    MCHECK(rc == TETHER_EARG);
    counters[C_INSERT_REFUSED]++;
  } else {
    MCHECK(rc == TETHER_OK);
    kid_insert(y, pos, x);
    counters[C_INSERT]++;
  }
}

/* Moves x before or after y; y is picked again (up to 4 times) while it is a root. */
static void move_next_to(int x, tether_op *hx, int y, tether_op *hy) {
  for (int tries = 0; tries < 4 && ops[y].parent < 0; tries++) {
    int t = pick_valid();
    y = slot_id[t];
    hy = slots[t];
  }
  int after = rnd(2);
  int rc = after ? tether_op_move_after(hx, hy) : tether_op_move_before(hx, hy);
  if (x == y || is_inside(y, x)) {
    MCHECK(rc == TETHER_EARG);
    counters[C_MOVE_REFUSED]++;
  } else if (ops[y].parent < 0) {
    MCHECK(rc == TETHER_ESTATE);
    counters[C_MOVE_REFUSED]++;
  } else {
    counters[C_MOVE]++;
    MCHECK(rc == TETHER_OK);
    kid_remove(x);
    int p = ops[y].parent;
    kid_insert(p, kid_index(p, y) + after, x);
  }
}

/* Erases x (refused while a cross-tree user branches inside it). */
static void erase_op(int x, tether_op *hx) {
  int rc = tether_op_erase(hx);
  if (used_inside(x)) {
    MCHECK(rc == TETHER_EBUSY); /* a branch from another tree points inside */
    counters[C_ERASE_BUSY]++;
    return;
  }
  MCHECK(rc == TETHER_OK);
  kid_remove(x);
  mark_subtree(x, ERASED, PARENT_ERASED);
  counters[C_ERASE]++;
}

/* Destroys non-root x through the raw C API, then revalidates its parent. */
static void raw_erase_and_revalidate(int x, tether_op *hx) {
  if (ops[x].parent < 0 || used_inside(x)) return; /* raw MLIR would leave the branch dangling */
  int p = ops[x].parent;
  MlirOperation raw;
  MOK(tether_op_get(hx, &raw));
  tether_op *hp;
  MOK(tether_op_parent(hx, &hp));
  see(p, hp);
  mlirOperationDestroy(raw);
  MOK(tether_revalidate(hp));
  kid_remove(x);
  mark_subtree(x, REMOVED, REMOVED);
  counters[C_REVALIDATE]++;
}

static void clone_op(int x, tether_op *hx) {
  tether_op *c;
  MOK(tether_op_clone(hx, &c));
  int k = clone_model(x, -1);
  MlirOperation raw;
  MOK(tether_op_get(c, &raw));
  renumber(raw, k);
  see(k, c);
  add_slot(k, c);
  counters[C_CLONE]++;
}

/* A cross-tree user: a detached op branching into x's block (at most MAXUSERS; past that, the
 * newest user goes). */
static void add_user(tether_arena *a, int x, tether_op *hx) {
  if (nusers == MAXUSERS) {
    MOK(tether_op_erase(users[--nusers])); /* the oldest stays; the newest goes */
    users[nusers] = NULL;
    return;
  }
  MlirBlock b;
  MOK(tether_block_get(block_of(hx), &b));
  MlirContext ctx = tether_arena_context(a);
  MlirOperationState st =
      mlirOperationStateGet(mlirStringRefCreateFromCString("t.use"), mlirLocationUnknownGet(ctx));
  mlirOperationStateAddSuccessors(&st, 1, &b);
  tether_op *u;
  MOK(tether_op_create(a, &st, &u));
  users[nusers] = u;
  user_target[nusers++] = x;
  counters[C_USER]++;
}

/* Runs a pass pipeline on root x's tree. */
static void run_passes(tether_arena *a, int x, tether_op *hx) {
  if (ops[x].parent >= 0) return;
  if (!pm.ptr) {
    pm = mlirPassManagerCreateOnOperation(tether_arena_context(a),
                                          mlirStringRefCreateFromCString("t.n"));
    mlirPassManagerAddOwnedPass(pm, mlirCreateTransformsCanonicalizer());
  }
  int rc = tether_op_run_passes(hx, pm);
  int busy = 0;
  for (int u = 0; u < nusers; u++) busy |= root_of(user_target[u]) == x;
  /* MLIR refuses to schedule passes on an unregistered op ("t.n"): the pipeline fails, the
   * tree is revalidated and unchanged; while another tree branches into it, it is refused
   * before that. */
  MCHECK(rc == (busy ? TETHER_EBUSY : TETHER_EPASS));
  counters[busy ? C_PASSES_BUSY : C_PASSES]++;
}

/* Collects, then bounds the arena's live roots by the model's. */
static void collect_and_count_roots(tether_arena *a) {
  forget_unreached();
  tether_collect(a);
  tether_arena_stats st;
  MOK(tether_arena_get_stats(a, &st));
  MCHECK(st.roots >= live_roots());
  MCHECK(st.roots <= live_roots() + 16); /* conservative slack */
  MCHECK(st.stuck == 0);
  counters[C_COLLECT]++;
}

static void one_step(tether_arena *a) {
  int what = rnd(100);
  int s = pick_valid();
  if (s < 0 || what < 8) {
    parse_new(a, rnd(2));
    counters[C_PARSE]++;
    return;
  }
  int x = slot_id[s];
  tether_op *hx = slots[s];
  int t = pick_valid();
  int y = slot_id[t];
  tether_op *hy = slots[t];
  if (what < 20) { /* insert a root into y's block */
    insert_into(x, hx, y, hy);
  } else if (what < 32) { /* move before / after y */
    move_next_to(x, hx, y, hy);
  } else if (what < 40) { /* detach */
    MOK(tether_op_detach(hx));
    kid_remove(x);
    counters[C_DETACH]++;
  } else if (what < 47) { /* erase */
    erase_op(x, hx);
  } else if (what < 52) { /* raw erase of a non-root, then revalidate */
    raw_erase_and_revalidate(x, hx);
  } else if (what < 57) { /* clone */
    clone_op(x, hx);
  } else if (what < 61) { /* a cross-tree user: a detached op branching into x's block */
    add_user(a, x, hx);
  } else if (what < 63) { /* drop a user */
    if (!nusers) return;
    int u = rnd(nusers);
    MOK(tether_op_erase(users[u]));
    users[u] = users[nusers - 1];
    user_target[u] = user_target[nusers - 1];
    users[--nusers] = NULL;
  } else if (what < 66) { /* a pass pipeline on a root's tree */
    run_passes(a, x, hx);
  } else if (what < 70) { /* navigate to the parent */
    tether_op *p;
    MOK(tether_op_parent(hx, &p));
    if (ops[x].parent < 0) {
      MCHECK(p == NULL);
    } else {
      see(ops[x].parent, p);
      add_slot(ops[x].parent, p);
    }
    counters[C_PARENT]++;
  } else if (what < 82) { /* navigate to a child */
    if (!ops[x].nkids) return;
    int i = rnd(ops[x].nkids);
    tether_op *c;
    MOK(tether_block_op(block_of(hx), i, &c));
    see(ops[x].kids[i], c);
    add_slot(ops[x].kids[i], c);
    counters[C_CHILD]++;
  } else if (what < 97) { /* drop a handle */
    int d = rnd(nslots);
    slots[d] = slots[nslots - 1];
    slot_id[d] = slot_id[nslots - 1];
    slots[--nslots] = NULL;
    counters[C_DROP]++;
  } else { /* collect */
    collect_and_count_roots(a);
  }
}

static void reset_model(void) {
  for (int k = 0; k < nops; k++) {
    free(ops[k].kids);
    if (ops[k].handle) {
      GC_unregister_disappearing_link((void **)ops[k].handle);
      free(ops[k].handle);
    }
  }
  nops = 0;
  for (int u = 0; u < MAXUSERS; u++) users[u] = NULL;
  nusers = 0;
  if (pm.ptr) mlirPassManagerDestroy(pm);
  pm.ptr = NULL;
  for (int s = 0; s < MAXSLOTS; s++) slots[s] = NULL;
  nslots = 0;
}

int main(int argc, char **argv) {
  seed = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
  unsigned long sequences = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
  unsigned long steps = argc > 3 ? strtoul(argv[3], NULL, 10) : 100;
  const char *env = getenv("TETHER_MODEL_SEQUENCES");
  if (env && *env) sequences = strtoul(env, NULL, 10);
  slots = GC_MALLOC_UNCOLLECTABLE(MAXSLOTS * sizeof *slots);
  slot_id = calloc(MAXSLOTS, sizeof *slot_id);
  users = GC_MALLOC_UNCOLLECTABLE(MAXUSERS * sizeof *users);
  user_target = calloc(MAXUSERS, sizeof *user_target);
  unsigned long total = 0;
  for (seq = 0; seq < sequences; seq++) {
    rng = (seed * 0x9E3779B97F4A7C15ULL) ^ (seq + 1) * 0xBF58476D1CE4E5B9ULL;
    if (!rng) rng = 1;
    tether_arena *a;
    MOK(tether_arena_create(&a));
    MOK(tether_arena_allow_unregistered(a, true));
    for (step = 0; step < steps; step++) {
      one_step(a);
      forget_unreached();
      check_all(a);
      total++;
    }
    reset_model();
    if (seq % 100 == 99) tether_collect(NULL);
  }
  tether_collect(NULL);
  tether_global_stats g;
  tether_get_global_stats(&g);
  printf("seed %lu: %lu sequences, %lu steps checked; %ld arenas still alive\n", seed, sequences,
         total, (long)g.arenas);
  MCHECK(g.arenas <= 4);
  for (int i = 0; i < C_N; i++) {
    printf("  %-24s %lu\n", counter_names[i], counters[i]);
    if (sequences * steps >= 10000) MCHECK(counters[i] > 0); /* every kind of step happened */
  }
  printf("%lu passed, 0 failed\n", sequences);
  return 0;
}
