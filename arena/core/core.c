/* core.c: the collector, threads, pins, safe points and counters.
 *
 * Invariant: no MLIR object is destroyed except inside a safe point (tether__safepoint_slow,
 * tether_collect) or an explicit erase, on the thread that called into the arena. Finalizers only
 * queue: the collector runs them on demand (GC_set_finalize_on_demand), and they do nothing but
 * link a tree into its arena's pending list, or an arena into the global list of dead arenas.
 */
#define _GNU_SOURCE /* dl_iterate_phdr, dladdr */
#include "internal.h"

#include <dlfcn.h>
#include <gc/gc_mark.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

TETHER__TLS int tether__thread_ready;
atomic_int tether__finalizers_queued;
atomic_int tether__is_shutdown;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static void (*user_notifier)(void);
static size_t pressure_limit = (size_t)1 << 20; /* IR pressure (below) */
static void pressure_reset(void);
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

/* Static roots. bdwgc scans the writable data of every loaded library at every collection: with
 * LLVM and MLIR loaded that is over a megabyte of words, each looked up in the heap map, about a
 * millisecond per collection however small the heap (most of the cost of a collection while a
 * module is being built). Those libraries never hold a pointer into the GC heap (they do not call
 * tether, and what they allocate is not scanned anyway), so their data is skipped; every other
 * library, the main program and tether itself are scanned as before. A host that keeps no handle
 * in the main program's static data says so (tether_skip_program_data: the Python binding, whose
 * interpreter's 1.4 MB of data hold only pointers to malloc memory). */
static atomic_int skip_program_data;

/* Libraries a binding said keep no handle in their static data (tether_skip_library_data): their
 * paths, as dl_iterate_phdr names them. Written before any collection reads them (a slot is
 * published by the count). */
enum { MAX_SKIPPED_LIBS = 8 };
static const char *skipped_libs[MAX_SKIPPED_LIBS];
static atomic_int skipped_count;

static int scan_static_data(const char *path, void *start, size_t size) {
  (void)start;
  (void)size;
  if (path && !*path) return !atomic_load_explicit(&skip_program_data, memory_order_relaxed);
  int n = atomic_load_explicit(&skipped_count, memory_order_acquire);
  for (int i = 0; path && i < n; i++)
    if (!strcmp(path, skipped_libs[i])) return 0;
  static const char *const skip[] = {"libLLVM", "libMLIR", "libclang", "libz3.",
                                     "libicu",  "libxml2", "libstdc++"};
  const char *base = path ? strrchr(path, '/') : NULL;
  base = base ? base + 1 : path;
  if (!base) return 1;
  for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
    if (!strncmp(base, skip[i], strlen(skip[i]))) return 0;
  return 1;
}

/* Whether the main program holds tether itself (linked in statically: its own static data is in
 * the program's) or links libtether_capi.so (a C host that may keep handles in its globals): then
 * its data stays scanned whatever the binding asks. The main program is dl_iterate_phdr's first
 * object. */
static int program_uses_tether_cb(struct dl_phdr_info *info, size_t size, void *ud) {
  (void)size;
  int *uses = ud;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, self = (uintptr_t)&skip_program_data;
    if (ph->p_type == PT_LOAD && self >= lo && self < lo + ph->p_memsz) *uses = 1;
    if (ph->p_type != PT_DYNAMIC) continue;
    const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
    uintptr_t strtab = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
      if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    if (!strtab) {
      *uses = 1; /* cannot tell: keep scanning */
      continue;
    }
    if (strtab < info->dlpi_addr) strtab += info->dlpi_addr; /* not relocated in place */
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
      if (d->d_tag != DT_NEEDED) continue;
      const char *name = (const char *)strtab + d->d_un.d_val;
      const char *base = strrchr(name, '/');
      if (!strcmp(base ? base + 1 : name, "libtether_capi.so")) *uses = 1;
    }
  }
  return 1; /* the first object only */
}

void tether_skip_library_data(const void *addr) {
  Dl_info info;
  if (!addr || !dladdr(addr, &info) || !info.dli_fname || !*info.dli_fname) return;
  /* Never tether's own data: its statics hold the dead arenas. */
  Dl_info self;
  if (dladdr((const void *)tether_skip_library_data, &self) && self.dli_fbase == info.dli_fbase)
    return;
  pthread_mutex_lock(&dead_lock);
  int n = atomic_load(&skipped_count);
  int known = 0;
  for (int i = 0; i < n; i++) known |= !strcmp(skipped_libs[i], info.dli_fname);
  char *copy = !known && n < MAX_SKIPPED_LIBS ? strdup(info.dli_fname) : NULL;
  if (copy) {
    skipped_libs[n] = copy;
    atomic_store_explicit(&skipped_count, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&dead_lock);
}

void tether_skip_program_data(void) {
  int uses = 0;
  dl_iterate_phdr(program_uses_tether_cb, &uses);
  if (!uses) atomic_store(&skip_program_data, 1);
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void init(void) {
  initialized_here = 1;
  GC_register_has_static_roots_callback(scan_static_data);
  GC_INIT();
  GC_allow_register_threads();
  GC_set_finalize_on_demand(1);
  GC_set_java_finalization(1);
  GC_set_finalizer_notifier(notify);
  /* The collector's heap: what is allocated between two collections, and what is live. Most of
   * what the arena allocates is handles that nothing holds a moment later (one per operation made
   * and per result taken: weak.c lets the collector take them), so the heap is sized by how often
   * it collects. bdwgc collects when its heap is full and it has allocated a third of what it had
   * to scan since the last collection (often well under 100 KiB here: the roots are small); a
   * collection costs about 50 us however little is live, so at least 512 KiB between two (every
   * 8,000 operations of a build loop, 6 ns each) for a heap of about a MiB. (The heap started at 4
   * MiB before the tables were weak, when building a module kept every handle alive: a larger
   * heap only touches more pages now.) */
  GC_set_min_bytes_allocd((size_t)512 << 10);
  /* Handles tag their tree pointer with 4 low bits. */
  for (int i = 1; i < 16; i++) GC_register_displacement(i);
  tether__weak_init();
  pthread_key_create(&thread_key, thread_exit);
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  /* Any collection (the collector's own too) starts the IR pressure count again. */
  GC_set_start_callback(pressure_reset);
  const char *mb = getenv("TETHER_IR_PRESSURE_MB");
  if (mb && *mb && strtol(mb, NULL, 10) > 0) pressure_limit = (size_t)strtol(mb, NULL, 10) << 20;
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

/* ---- IR pressure ----------------------------------------------------------------------------- */

/* MLIR's memory is not the collector's: a program that parses a large module and drops it, again
 * and again, allocates a handle or two per module in the GC heap, so the collector (which runs
 * when its own heap has grown) would not run for thousands of modules, and the dropped IR would
 * stay (measured: 2.7 MB per dropped 20,000-op module, growing without bound). Calls that make
 * much IR behind few handles (parsing: the text's length; cloning: 128 bytes per operation)
 * count it; past TETHER_IR_PRESSURE_MB (default 1) and a quarter of the GC heap since the last
 * collection, they collect first, and the same call's safe point destroys what became unreachable.
 * Measured (parse and drop 20,000-op modules): RSS levels off at 105 MB (119 MB with 4, 145 MB
 * with 8; upstream's bindings, which free at once: 131 MB). A collection of a small heap takes
 * 0.1-0.5 ms, parsing 1 MB of text about 75 ms; a large heap waits for proportionally more text. */
static atomic_size_t pressure;

static void pressure_reset(void) { atomic_store_explicit(&pressure, 0, memory_order_relaxed); }

void tether__ir_pressure(size_t bytes) {
  size_t was = atomic_fetch_add_explicit(&pressure, bytes, memory_order_relaxed);
  if (was + bytes < pressure_limit) return;
  /* A collection costs in proportion to the live heap: with many live handles, wait for more. */
  if (was + bytes < GC_get_heap_size() / 4) return;
  pressure_reset();
  if (!tether__thread_ready) tether__thread_setup();
  GC_gcollect();
  atomic_store(&tether__finalizers_queued, 1);
}

static inline void stress_point(void) {
  if (gc_stress_every > 0 && atomic_fetch_add(&alloc_count, 1) % gc_stress_every == 0)
    GC_gcollect();
}

void *tether__alloc(size_t size) {
  stress_point();
  return GC_MALLOC(size);
}

/* Handles are most of what the arena allocates (one per operation made, one per result taken):
 * each arena keeps a list of free handle-sized objects (GC_malloc_many, linked through their first
 * word), refilled a heap block's worth at a time; popping one is a few instructions where
 * GC_malloc's thread-local path is about a hundred. The list hangs from the arena (GC memory), so
 * its objects stay allocated. Under TETHER_GC_STRESS every handle goes through tether__alloc, which
 * collects. */
void *tether__handle_alloc(tether_arena *a) {
  if (gc_stress_every > 0) return tether__alloc(TETHER__HANDLE_BYTES);
  void *h = a->handle_pool;
  if (!h) {
    h = GC_malloc_many(TETHER__HANDLE_BYTES);
    if (!h) return NULL;
  }
  a->handle_pool = GC_NEXT(h);
  GC_NEXT(h) = NULL;
  return h;
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

/* ---- fork ------------------------------------------------------------------------------------ */

/* Around fork() (pthread_atfork, so os.fork and tether's own trial children too): every live
 * arena's context has its worker threads stopped before, and multithreading back after
 * (mlir/mlir_ext.cc). The registry stays locked across the fork, so no arena comes or goes. An
 * arena MLIR may be working on at that moment is left as it is: one inside a callback of MLIR (its
 * work is suspended mid-way, perhaps in a parallel loop), or one another thread is running MLIR
 * on. Tether's own checks before a run (the forking thread's, MLIR not started) are not such. */
static void fork_prepare(void) {
  pthread_mutex_lock(&registry_lock);
  for (intptr_t i = 0; i < registry_len; i++) {
    tether_arena *a = registry[i];
    int busy = a->scopes != NULL || (a->running && !pthread_equal(a->run_thread, pthread_self()));
    a->fork_mt = a->state == TETHER__ARENA_LIVE && !busy && !mlirContextIsNull(a->ctx) &&
                 tether__fork_quiesce(a->ctx, &a->fork_pool);
  }
}

static void fork_after(bool child) {
  for (intptr_t i = 0; i < registry_len; i++) {
    tether_arena *a = registry[i];
    if (a->fork_mt) tether__fork_restore(a->ctx, a->fork_pool, child);
    a->fork_mt = 0;
  }
  pthread_mutex_unlock(&registry_lock);
}

static MlirLogicalResult swallow_diagnostic(MlirDiagnostic d, void *ud) {
  (void)d;
  (void)ud;
  return mlirLogicalResultSuccess();
}

/* In a trial's forked child (guards/child.c): every live arena's context gets a handler that takes
 * every diagnostic first, so that none reaches a binding's handler. A Python handler run in the
 * child of a multithreaded process waits for ever: the interpreter hands the GIL to a thread that
 * asked for it before the fork and does not exist in the child. What the child reports is
 * discarded anyway. */
void tether__silence_diagnostics(void) {
  pthread_mutex_lock(&registry_lock);
  for (intptr_t i = 0; i < registry_len; i++) {
    tether_arena *a = registry[i];
    if (a->state == TETHER__ARENA_LIVE && !mlirContextIsNull(a->ctx))
      mlirContextAttachDiagnosticHandler(a->ctx, swallow_diagnostic, NULL, NULL);
  }
  pthread_mutex_unlock(&registry_lock);
}

static void fork_parent(void) { fork_after(false); }
static void fork_child(void) { fork_after(true); }

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

/* The tables the last collection found idle (weak.c), not while MLIR runs on the arena's IR or is
 * suspended in a callback: a caller up the stack may be walking a table. */
static void shrink_tables(tether_arena *a) {
  if (a->shrink && a->state == TETHER__ARENA_LIVE && !a->running && !a->scopes)
    tether__shrink_tables(a);
}

static intptr_t safepoint_work(tether_arena *a) {
  intptr_t done = 0;
  if (atomic_exchange(&tether__finalizers_queued, 0)) GC_invoke_finalizers();
  if (atomic_load(&tether__is_shutdown)) return 0;
  if (a && a->state == TETHER__ARENA_LIVE) done += tether__drain_pending(a);
  if (a) shrink_tables(a);
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
  for (intptr_t i = 0; pinned && i < n; i++) {
    if (pinned[i]->state == TETHER__ARENA_LIVE &&
        __atomic_load_n(&pinned[i]->pending, __ATOMIC_ACQUIRE))
      done += tether__drain_pending(pinned[i]);
    shrink_tables(pinned[i]);
  }
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

/* A pin table: one uncollectable array of pinned objects; a free slot holds
 * ((next free + 1) << 1) | 1, so it is odd (objects are aligned) and 0 + 1 ends the free list.
 * The callers serialize (pin_lock for tether_pin, the pool's owner for a pool). */
typedef struct {
  uintptr_t *slots;
  intptr_t cap, free, live;
} pin_table;

static intptr_t table_pin(pin_table *t, void *obj) {
  if (t->free < 0) {
    if (!tether__thread_ready) tether__thread_setup(); /* allocating: a registered thread */
    intptr_t ncap = t->cap ? t->cap * 2 : 1024;
    uintptr_t *n = GC_MALLOC_UNCOLLECTABLE((size_t)ncap * sizeof *n);
    if (!n) return TETHER_ENOMEM;
    if (t->slots) memcpy(n, t->slots, (size_t)t->cap * sizeof *n);
    for (intptr_t i = ncap - 1; i >= t->cap; i--) {
      n[i] = ((uintptr_t)(t->free + 1) << 1) | 1;
      t->free = i;
    }
    uintptr_t *old = t->slots;
    t->slots = n;
    t->cap = ncap;
    if (old) GC_FREE(old);
  }
  intptr_t slot = t->free;
  t->free = (intptr_t)(t->slots[slot] >> 1) - 1;
  t->slots[slot] = (uintptr_t)obj;
  __atomic_store_n(&t->live, t->live + 1, __ATOMIC_RELAXED); /* read by the counters */
  return slot;
}

static void table_unpin(pin_table *t, intptr_t slot) {
  if (slot >= 0 && slot < t->cap && !(t->slots[slot] & 1)) {
    t->slots[slot] = ((uintptr_t)(t->free + 1) << 1) | 1;
    t->free = slot;
    __atomic_store_n(&t->live, t->live - 1, __ATOMIC_RELAXED);
  }
}

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static pin_table pins = {NULL, 0, -1, 0};

intptr_t tether_pin(void *obj) {
  if (!obj) return TETHER_EARG;
  if (!tether__thread_ready) tether__thread_setup();
  pthread_mutex_lock(&pin_lock);
  intptr_t slot = table_pin(&pins, obj);
  pthread_mutex_unlock(&pin_lock);
  return slot;
}

void tether_unpin(intptr_t slot) {
  pthread_mutex_lock(&pin_lock);
  table_unpin(&pins, slot);
  pthread_mutex_unlock(&pin_lock);
}

void tether__repin(intptr_t slot, void *obj) {
  pthread_mutex_lock(&pin_lock);
  if (slot >= 0 && slot < pins.cap && !(pins.slots[slot] & 1)) pins.slots[slot] = (uintptr_t)obj;
  pthread_mutex_unlock(&pin_lock);
}

struct tether_pin_pool {
  pin_table t;
  tether_pin_pool *next; /* in the list of pools (pin_lock), for the counters */
};
static tether_pin_pool *pools;

tether_pin_pool *tether_pin_pool_new(void) {
  if (!tether__thread_ready) tether__thread_setup();
  tether_pin_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->t.free = -1;
  pthread_mutex_lock(&pin_lock);
  p->next = pools;
  pools = p;
  pthread_mutex_unlock(&pin_lock);
  return p;
}

intptr_t tether_pool_pin(tether_pin_pool *p, void *obj) {
  if (!p || !obj) return TETHER_EARG;
  return table_pin(&p->t, obj);
}

void tether_pool_unpin(tether_pin_pool *p, intptr_t slot) {
  if (p) table_unpin(&p->t, slot);
}

/* ---- counters -------------------------------------------------------------------------------- */

atomic_long tether__children, tether__trial_requests, tether__trial_starts;
int tether__trial_child;

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
  out->pins = pins.live;
  for (tether_pin_pool *p = pools; p; p = p->next)
    out->pins += __atomic_load_n(&p->t.live, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&pin_lock);
  out->threads = atomic_load(&threads_registered);
  out->children = atomic_load(&tether__children);
  out->trial_requests = atomic_load(&tether__trial_requests);
  out->trial_starts = atomic_load(&tether__trial_starts);
}
