/* core.c: the collector, threads, pins, safe points and counters.
 *
 * Invariant: no MLIR object is destroyed except inside a safe point (tether__safepoint_slow,
 * tether_collect) or an explicit erase, on the thread that called into the arena. Finalizers only
 * queue: the collector runs them on demand (GC_set_finalize_on_demand), and they do nothing but
 * link a tree into its arena's pending list, or an arena into the global list of dead arenas.
 */
#include "tether_internal.h"

#include <stdlib.h>
#include <string.h>

TETHER__TLS int tether__thread_ready;
atomic_int tether__finalizers_queued;
atomic_int tether__is_shutdown;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static void (*user_notifier)(void);
static long gc_stress_every; /* TETHER_GC_STRESS=N: a full collection every N allocations */
static atomic_long alloc_count;
static atomic_long threads_registered;
static TETHER__TLS int in_safepoint;
static TETHER__TLS int initialized_here;

/* Dead arenas (GC-visible through this static). Guarded by dead_lock. */
static pthread_mutex_t dead_lock = PTHREAD_MUTEX_INITIALIZER;
static tether_arena *dead_arenas;
static atomic_long arenas_live;
static atomic_long arenas_pending;

const char *tether_strerror(int status) {
  switch (status) {
#define TETHER__CASE(name, value, text)                                                            \
  case value:                                                                                      \
    return text;
    TETHER_STATUS_LIST(TETHER__CASE)
#undef TETHER__CASE
  }
  return "unknown status";
}

const char *tether_status_name(int status) {
  switch (status) {
#define TETHER__CASE(name, value, text)                                                            \
  case value:                                                                                      \
    return #name;
    TETHER_STATUS_LIST(TETHER__CASE)
#undef TETHER__CASE
  }
  return "TETHER_E?";
}

const char *tether_reason_text(tether_reason reason) {
  switch (reason) {
#define TETHER__CASE(name, value, text)                                                            \
  case value:                                                                                      \
    return text;
    TETHER_REASON_LIST(TETHER__CASE)
#undef TETHER__CASE
  }
  return "unknown reason";
}

static void notify(void) {
  atomic_store(&tether__finalizers_queued, 1);
  void (*fn)(void) = user_notifier;
  if (fn) fn();
}

static void thread_exit(void *arg) {
  (void)arg;
  GC_unregister_my_thread();
  atomic_fetch_sub(&threads_registered, 1);
}

static void at_exit(void) { tether_shutdown(); }

static void init(void) {
  initialized_here = 1;
  GC_INIT();
  GC_allow_register_threads();
  GC_set_finalize_on_demand(1);
  GC_set_java_finalization(1);
  GC_set_finalizer_notifier(notify);
  /* Handles tag their tree pointer with 4 low bits. */
  for (int i = 1; i < 16; i++) GC_register_displacement(i);
  pthread_key_create(&thread_key, thread_exit);
  const char *s = getenv("TETHER_GC_STRESS");
  if (s && *s) gc_stress_every = strtol(s, NULL, 10);
  atexit(at_exit);
}

void tether__thread_setup(void) {
  pthread_once(&init_once, init);
  if (!GC_thread_is_registered()) {
    struct GC_stack_base sb;
    if (GC_get_stack_base(&sb) == GC_SUCCESS && GC_register_my_thread(&sb) == GC_SUCCESS) {
      pthread_setspecific(thread_key, (void *)1);
      atomic_fetch_add(&threads_registered, 1);
    }
  } else if (initialized_here) {
    /* GC_INIT registered this thread. If it is not the process's main thread it will exit, and a
     * registered thread that exits makes every later collection fail: unregister it then too.
     * (The main thread's key destructor never runs: exit() does not run them.) */
    pthread_setspecific(thread_key, (void *)1);
    atomic_fetch_add(&threads_registered, 1);
  }
  tether__thread_ready = 1;
}

void *tether__alloc(size_t size) {
  if (gc_stress_every > 0 && atomic_fetch_add(&alloc_count, 1) % gc_stress_every == 0)
    GC_gcollect();
  return GC_MALLOC(size);
}

void tether__keep_alive(const void *handle) { GC_reachable_here(handle); }

void tether_set_notifier(void (*fn)(void)) {
  if (!tether__thread_ready) tether__thread_setup();
  user_notifier = fn;
}

/* ---- finalizers: queue only ------------------------------------------------------------------ */

void tether__tree_finalizer(void *obj, void *cd) {
  (void)cd;
  tether__tree *t = obj;
  tether_arena *a = t->arena;
  pthread_mutex_lock(&a->lock);
  if (t->state == TETHER__TREE_LIVE) {
    t->state = TETHER__TREE_PENDING;
    t->next = a->pending;
    __atomic_store_n(&a->pending, t, __ATOMIC_RELEASE);
    a->stats.pending++;
  }
  pthread_mutex_unlock(&a->lock);
}

void tether__arena_finalizer(void *obj, void *cd) {
  (void)cd;
  tether_arena *a = obj;
  pthread_mutex_lock(&dead_lock);
  if (a->state == TETHER__ARENA_LIVE) {
    a->state = TETHER__ARENA_PENDING;
    a->next_dead = dead_arenas;
    dead_arenas = a;
    atomic_fetch_add(&arenas_pending, 1);
  }
  pthread_mutex_unlock(&dead_lock);
}

/* Registry of arenas not yet destroyed, for tether_safepoint_all. malloc memory: it must not keep
 * arenas alive. An arena leaves it when destroyed, so every entry points to allocated memory
 * (a finalized arena stays allocated on the dead list until destroyed). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static tether_arena **registry;
static intptr_t registry_len, registry_cap;

void tether__arena_registered(tether_arena *a) {
  atomic_fetch_add(&arenas_live, 1);
  pthread_mutex_lock(&registry_lock);
  if (registry_len == registry_cap) {
    intptr_t ncap = registry_cap ? registry_cap * 2 : 16;
    tether_arena **n = realloc(registry, (size_t)ncap * sizeof *n);
    if (n) {
      registry = n;
      registry_cap = ncap;
    }
  }
  if (registry_len < registry_cap) {
    a->registry_slot = registry_len;
    registry[registry_len++] = a;
  } else {
    a->registry_slot = -1; /* out of memory: only tether_safepoint_all misses it */
  }
  pthread_mutex_unlock(&registry_lock);
}

void tether__arena_unregistered(tether_arena *a) {
  pthread_mutex_lock(&registry_lock);
  intptr_t i = a->registry_slot;
  if (i >= 0 && i < registry_len && registry[i] == a) {
    registry[i] = registry[--registry_len];
    registry[i]->registry_slot = i;
  }
  a->registry_slot = -1;
  pthread_mutex_unlock(&registry_lock);
}

/* ---- safe points ----------------------------------------------------------------------------- */

static intptr_t drain_dead_arenas(void) {
  pthread_mutex_lock(&dead_lock);
  tether_arena *list = dead_arenas;
  dead_arenas = NULL;
  pthread_mutex_unlock(&dead_lock);
  intptr_t done = 0;
  while (list) {
    tether_arena *a = list;
    list = a->next_dead;
    a->next_dead = NULL;
    tether__drain_pending(a);
    if (tether__arena_destroy(a)) {
      done++;
      atomic_fetch_sub(&arenas_pending, 1);
      atomic_fetch_sub(&arenas_live, 1);
    } else {
      pthread_mutex_lock(&dead_lock);
      a->next_dead = dead_arenas;
      dead_arenas = a;
      pthread_mutex_unlock(&dead_lock);
    }
  }
  return done;
}

static intptr_t safepoint_work(tether_arena *a) {
  intptr_t done = 0;
  if (atomic_exchange(&tether__finalizers_queued, 0)) GC_invoke_finalizers();
  if (atomic_load(&tether__is_shutdown)) return 0;
  if (a && a->state == TETHER__ARENA_LIVE) done += tether__drain_pending(a);
  if (__atomic_load_n(&dead_arenas, __ATOMIC_ACQUIRE)) done += drain_dead_arenas();
  return done;
}

void tether__safepoint_slow(tether_arena *a) {
  if (in_safepoint) return;
  in_safepoint = 1;
  safepoint_work(a);
  in_safepoint = 0;
}

void tether_safepoint(tether_arena *a) {
  if (!tether__thread_ready) tether__thread_setup();
  tether__safepoint_slow(a);
}

tether_arena *tether_arena_of_context(MlirContext ctx) {
  tether_arena *found = NULL;
  pthread_mutex_lock(&registry_lock);
  for (intptr_t i = 0; i < registry_len && !found; i++)
    if (registry[i]->state == TETHER__ARENA_LIVE && registry[i]->ctx.ptr == ctx.ptr)
      found = registry[i];
  pthread_mutex_unlock(&registry_lock);
  return found;
}

/* Drains the pending trees of every live arena (the caller serializes all arenas). */
static intptr_t drain_all(void) {
  intptr_t done = 0;
  pthread_mutex_lock(&registry_lock);
  intptr_t n = registry_len;
  tether_arena **copy = n ? malloc((size_t)n * sizeof *copy) : NULL;
  if (copy) memcpy(copy, registry, (size_t)n * sizeof *copy);
  pthread_mutex_unlock(&registry_lock);
  /* The copy is malloc memory: keep the arenas reachable while we work on them. */
  tether_arena **pinned = copy ? GC_MALLOC((size_t)n * sizeof *pinned) : NULL;
  if (pinned) memcpy(pinned, copy, (size_t)n * sizeof *pinned);
  free(copy);
  for (intptr_t i = 0; pinned && i < n; i++)
    if (pinned[i]->state == TETHER__ARENA_LIVE &&
        __atomic_load_n(&pinned[i]->pending, __ATOMIC_ACQUIRE))
      done += tether__drain_pending(pinned[i]);
  GC_reachable_here(pinned);
  return done;
}

void tether_safepoint_all(void) {
  if (!tether__thread_ready) tether__thread_setup();
  if (in_safepoint) return;
  in_safepoint = 1;
  safepoint_work(NULL);
  if (!atomic_load(&tether__is_shutdown)) drain_all();
  in_safepoint = 0;
}

/* Overwrites a stretch of this thread's stack below the caller, so stale copies of pointers
 * left there by earlier calls do not keep objects alive. */
static __attribute__((noinline)) void clear_stack(void) {
  volatile char buf[16384];
  memset((char *)buf, 0, sizeof buf);
  GC_reachable_here((void *)buf);
}

void tether_collect(tether_arena *a) {
  if (!tether__thread_ready) tether__thread_setup();
  if (in_safepoint) return;
  in_safepoint = 1;
  /* A chain of dependent roots frees one link per round; stop after two rounds with no progress. */
  int idle = 0;
  for (int round = 0; round < 64 && idle < 2; round++) {
    clear_stack();
    GC_gcollect();
    atomic_store(&tether__finalizers_queued, 1);
    idle = safepoint_work(a) ? 0 : idle + 1;
  }
  in_safepoint = 0;
}

void tether_collect_all(void) {
  if (!tether__thread_ready) tether__thread_setup();
  if (in_safepoint) return;
  in_safepoint = 1;
  int idle = 0;
  for (int round = 0; round < 64 && idle < 2; round++) {
    clear_stack();
    GC_gcollect();
    atomic_store(&tether__finalizers_queued, 1);
    intptr_t done = safepoint_work(NULL);
    if (!atomic_load(&tether__is_shutdown)) done += drain_all();
    idle = done ? 0 : idle + 1;
  }
  in_safepoint = 0;
}

void tether_shutdown(void) { atomic_store(&tether__is_shutdown, 1); }

/* ---- pins ------------------------------------------------------------------------------------ */

/* One uncollectable array of pinned objects; a free slot holds ((next free + 1) << 1) | 1, so it
 * is odd (objects are aligned) and 0 + 1 ends the free list. */
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *pin_slots;
static intptr_t pin_cap, pin_free = -1, pin_live;

intptr_t tether_pin(void *obj) {
  if (!obj) return TETHER_EARG;
  if (!tether__thread_ready) tether__thread_setup();
  pthread_mutex_lock(&pin_lock);
  if (pin_free < 0) {
    intptr_t ncap = pin_cap ? pin_cap * 2 : 1024;
    uintptr_t *n = GC_MALLOC_UNCOLLECTABLE((size_t)ncap * sizeof *n);
    if (!n) {
      pthread_mutex_unlock(&pin_lock);
      return TETHER_ENOMEM;
    }
    if (pin_slots) memcpy(n, pin_slots, (size_t)pin_cap * sizeof *n);
    for (intptr_t i = ncap - 1; i >= pin_cap; i--) {
      n[i] = ((uintptr_t)(pin_free + 1) << 1) | 1;
      pin_free = i;
    }
    uintptr_t *old = pin_slots;
    pin_slots = n;
    pin_cap = ncap;
    if (old) GC_FREE(old);
  }
  intptr_t slot = pin_free;
  pin_free = (intptr_t)(pin_slots[slot] >> 1) - 1;
  pin_slots[slot] = (uintptr_t)obj;
  pin_live++;
  pthread_mutex_unlock(&pin_lock);
  return slot;
}

void tether_unpin(intptr_t slot) {
  pthread_mutex_lock(&pin_lock);
  if (slot >= 0 && slot < pin_cap && !(pin_slots[slot] & 1)) {
    pin_slots[slot] = ((uintptr_t)(pin_free + 1) << 1) | 1;
    pin_free = slot;
    pin_live--;
  }
  pthread_mutex_unlock(&pin_lock);
}

/* ---- counters -------------------------------------------------------------------------------- */

int tether_arena_get_stats(tether_arena *a, tether_arena_stats *out) {
  if (!a || !out) return TETHER_EARG;
  pthread_mutex_lock(&a->lock);
  *out = a->stats;
  pthread_mutex_unlock(&a->lock);
  return TETHER_OK;
}

void tether_get_global_stats(tether_global_stats *out) {
  if (!out) return;
  out->arenas = atomic_load(&arenas_live);
  out->arenas_pending = atomic_load(&arenas_pending);
  pthread_mutex_lock(&pin_lock);
  out->pins = pin_live;
  pthread_mutex_unlock(&pin_lock);
  out->threads = atomic_load(&threads_registered);
}
