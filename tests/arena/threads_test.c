/* Threads: several threads each owning an arena; an arena handed from one thread to another (the
 * documented rule: one thread at a time); handles held only on another thread's stack survive a
 * collection run elsewhere; threads that start, use handles and exit, many times. None of these
 * threads is created through bdwgc: tether registers them on first use. */
#include <pthread.h>

#include "check.h"

static const char *kModule = "func.func @f(%x: i32) -> i32 {\n"
                             "  %0 = arith.addi %x, %x : i32\n"
                             "  return %0 : i32\n"
                             "}\n";

static void *own_arena(void *arg) {
  int iters = *(int *)arg;
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *keep = parse(a, kModule);
  for (int i = 0; i < iters; i++) {
    tether_op *m = parse(a, kModule);
    tether_op *add = body_op(body_op(m, 0), 0);
    CHECK(prints_containing(add, "arith.addi"));
    if (i % 3 == 0) OK(tether_op_erase(body_op(m, 0)));
    if (i % 25 == 0) tether_collect(a);
  }
  tether_collect(a);
  CHECK(prints_containing(keep, "func.func @f"));
  tether_arena_stats s = stats(a);
  CHECK(s.roots <= 6);
  CHECK(s.destroyed >= iters - 6);
  return NULL;
}

static void threads_with_their_own_arenas(void) {
  enum { T = 4 };
  pthread_t th[T];
  int iters = 300;
  for (int i = 0; i < T; i++) CHECK(pthread_create(&th[i], NULL, own_arena, &iters) == 0);
  for (int i = 0; i < T; i++) CHECK(pthread_join(th[i], NULL) == 0);
}

typedef struct {
  tether_arena *a;
  tether_op *func;
  intptr_t pins[2];
} handoff;

static void *create_side(void *arg) {
  handoff *h = arg;
  /* The handoff struct is malloc memory, which the collector does not see: what it will hold is
   * pinned first, from locals kept alive until then (stored there first, the function's handle
   * was, for the collection the first pin can run, in no place the collector scans: in about one
   * run in 150 its entry was gone and erasing its module left it valid). */
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  tether_op *func = body_op(m, 0); /* the module handle dies with this thread's stack */
  h->pins[0] = tether_pin(a);
  h->pins[1] = tether_pin(func);
  CHECK(h->pins[0] >= 0 && h->pins[1] >= 0);
  h->a = a;
  h->func = func;
  tether_keep_alive(a);
  tether_keep_alive(func);
  return NULL;
}

static void *use_side(void *arg) {
  handoff *h = arg;
  tether_collect(h->a);
  CHECK(prints_containing(h->func, "arith.addi"));
  tether_op *m;
  OK(tether_op_parent(h->func, &m));
  OK(tether_op_erase(m));
  CHECK(tether_handle_reason(h->func) == TETHER_REASON_PARENT_ERASED);
  return NULL;
}

/* Created on one thread, used on another after it finished (join orders them). */
static void arena_handed_between_threads(void) {
  handoff *h = calloc(1, sizeof *h);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, create_side, h) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  tether_collect(NULL);
  CHECK(pthread_create(&t, NULL, use_side, h) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  tether_unpin(h->pins[0]);
  tether_unpin(h->pins[1]);
  free(h);
}

static pthread_barrier_t barrier;

static __attribute__((noinline)) tether_op *func_only(tether_arena *a) {
  return body_op(parse(a, kModule), 0);
}

static void *hold_on_stack(void *arg) {
  (void)arg;
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *func = func_only(a); /* only this thread's stack knows it */
  pthread_barrier_wait(&barrier); /* main collects now */
  pthread_barrier_wait(&barrier);
  CHECK(prints_containing(func, "func.func @f"));
  tether_collect(a);
  CHECK(stats(a).roots == 1);
  tether_keep_alive(func);
  return NULL;
}

static void stack_of_another_thread_is_a_root(void) {
  pthread_barrier_init(&barrier, NULL, 2);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, hold_on_stack, NULL) == 0);
  pthread_barrier_wait(&barrier);
  for (int i = 0; i < 5; i++) tether_collect(NULL);
  pthread_barrier_wait(&barrier);
  CHECK(pthread_join(t, NULL) == 0);
  pthread_barrier_destroy(&barrier);
}

static void *short_lived(void *arg) {
  (void)arg;
  tether_arena *a;
  OK(tether_arena_create(&a));
  tether_op *m = parse(a, kModule);
  CHECK(prints_containing(body_op(m, 0), "func.func"));
  return NULL;
}

static void threads_come_and_go(void) {
  tether_global_stats before, after;
  tether_get_global_stats(&before);
  for (int round = 0; round < 100; round++) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, short_lived, NULL) == 0);
    for (int i = 0; i < 2; i++) CHECK(pthread_join(t[i], NULL) == 0);
    if (round % 20 == 0) tether_collect(NULL);
  }
  tether_collect(NULL);
  tether_get_global_stats(&after);
  printf("  registered threads before %ld, after 200 came and went %ld; arenas %ld -> %ld\n",
         (long)before.threads, (long)after.threads, (long)before.arenas, (long)after.arenas);
  CHECK(after.threads == before.threads); /* every thread was unregistered when it exited */
  CHECK(after.arenas <= before.arenas + 4);
}

int main(void) {
  RUN(threads_with_their_own_arenas);
  RUN(arena_handed_between_threads);
  RUN(stack_of_another_thread_is_a_root);
  RUN(threads_come_and_go);
  DONE();
}
