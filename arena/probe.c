/* probe.c: return-type inference tried in a child process before it runs in this one.
 *
 * MLIR's ODS-generated inferReturnTypes reads its operands, attributes and regions without
 * checking they exist: arith.addi with no operand reads operands[0], scf.if with an empty region
 * reads its first block. The C API cannot tell how many operands an op needs, so tether asks
 * the only reliable judge: the call itself, made once in a forked child. The answer is cached
 * for the process by the call's shape (operation name, the TypeIDs of the operands' types, the
 * names and TypeIDs of the attributes, the regions' outline), so a program that creates a
 * million arith.addi pays one fork. TypeIDs and identifiers are stable for the process, so the
 * cache outlives contexts.
 *
 * Limits (docs/ownership.md, "Inference"): a crash that depends on an attribute's or a type's
 * value rather than its kind is not in the key; a child that hangs for PROBE_TIMEOUT_MS is killed
 * and the call refused (not cached); if fork fails the call is made unprobed.
 */
#define _GNU_SOURCE /* memmem */
#include "tether_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Interfaces.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_TIMEOUT_MS 5000

/* ---- the key --------------------------------------------------------------------------------- */

typedef struct {
  uintptr_t *w;
  size_t n, cap;
  int oom;
} key_buf;

static void put(key_buf *k, uintptr_t x) {
  if (k->oom) return;
  if (k->n == k->cap) {
    size_t ncap = k->cap ? k->cap * 2 : 32;
    uintptr_t *p = realloc(k->w, ncap * sizeof *p);
    if (!p) {
      k->oom = 1;
      return;
    }
    k->w = p;
    k->cap = ncap;
  }
  k->w[k->n++] = x;
}

static void put_str(key_buf *k, MlirStringRef s) {
  put(k, s.length);
  uintptr_t x = 0;
  for (size_t i = 0; i < s.length; i++) {
    x = (x << 8) | (unsigned char)s.data[i];
    if (i % sizeof x == sizeof x - 1) {
      put(k, x);
      x = 0;
    }
  }
  put(k, x);
}

static int cmp_named(const void *a, const void *b) {
  const MlirNamedAttribute *x = a, *y = b;
  MlirStringRef p = mlirIdentifierStr(x->name), q = mlirIdentifierStr(y->name);
  size_t n = p.length < q.length ? p.length : q.length;
  int c = memcmp(p.data, q.data, n);
  return c ? c : (p.length > q.length) - (p.length < q.length);
}

static void put_region(key_buf *k, MlirRegion r) {
  intptr_t nblocks = 0;
  MlirBlock first = mlirRegionGetFirstBlock(r);
  for (MlirBlock b = first; !mlirBlockIsNull(b) && nblocks < 2; b = mlirBlockGetNextInRegion(b))
    nblocks++;
  put(k, (uintptr_t)nblocks);
  if (mlirBlockIsNull(first)) return;
  put(k, (uintptr_t)mlirBlockGetNumArguments(first));
  MlirOperation term = mlirBlockGetTerminator(first);
  if (mlirOperationIsNull(term)) {
    put(k, 0);
    return;
  }
  put_str(k, mlirIdentifierStr(mlirOperationGetName(term)));
  intptr_t n = mlirOperationGetNumOperands(term);
  put(k, (uintptr_t)n);
  for (intptr_t i = 0; i < n; i++)
    put(k, (uintptr_t)mlirTypeGetTypeID(mlirValueGetType(mlirOperationGetOperand(term, i))).ptr);
}

static void make_key(key_buf *k, const tether_infer_call *c) {
  put(k, (uintptr_t)c->shaped);
  put_str(k, c->name);
  put(k, (uintptr_t)c->n_operands);
  for (intptr_t i = 0; i < c->n_operands; i++)
    put(k, (uintptr_t)mlirTypeGetTypeID(mlirValueGetType(c->operands[i])).ptr);
  intptr_t na =
      mlirAttributeIsNull(c->attributes) ? 0 : mlirDictionaryAttrGetNumElements(c->attributes);
  put(k, (uintptr_t)na);
  if (na) {
    MlirNamedAttribute *v = malloc((size_t)na * sizeof *v);
    if (!v) {
      k->oom = 1;
      return;
    }
    for (intptr_t i = 0; i < na; i++) v[i] = mlirDictionaryAttrGetElement(c->attributes, i);
    qsort(v, (size_t)na, sizeof *v, cmp_named);
    for (intptr_t i = 0; i < na; i++) {
      put_str(k, mlirIdentifierStr(v[i].name));
      put(k, (uintptr_t)mlirAttributeGetTypeID(v[i].attribute).ptr);
    }
    free(v);
  }
  put(k, (uintptr_t)c->n_regions);
  for (intptr_t i = 0; i < c->n_regions; i++) put_region(k, c->regions[i]);
}

/* ---- the cache: open addressing, keys owned, process-wide ------------------------------------ */

typedef struct {
  uint64_t hash;
  uintptr_t *key;
  size_t n;
  int safe;
} entry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *cache;
static size_t cache_cap, cache_used;

static uint64_t hash_key(const uintptr_t *w, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint64_t)w[i]) * 1099511628211ull;
  return h ? h : 1;
}

static entry *slot(uint64_t h, const uintptr_t *w, size_t n) {
  for (size_t i = h & (cache_cap - 1);; i = (i + 1) & (cache_cap - 1)) {
    entry *e = &cache[i];
    if (!e->hash) return e;
    if (e->hash == h && e->n == n && memcmp(e->key, w, n * sizeof *w) == 0) return e;
  }
}

/* -1 unknown, else the cached answer. */
static int cache_get(uint64_t h, const uintptr_t *w, size_t n) {
  pthread_mutex_lock(&cache_lock);
  int r = -1;
  if (cache_cap) {
    entry *e = slot(h, w, n);
    if (e->hash) r = e->safe;
  }
  pthread_mutex_unlock(&cache_lock);
  return r;
}

static void cache_put(uint64_t h, const uintptr_t *w, size_t n, int safe) {
  pthread_mutex_lock(&cache_lock);
  if ((cache_used + 1) * 2 > cache_cap) {
    size_t ncap = cache_cap ? cache_cap * 2 : 64;
    entry *nc = calloc(ncap, sizeof *nc);
    if (!nc) goto out;
    entry *old = cache;
    size_t ocap = cache_cap;
    cache = nc;
    cache_cap = ncap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i].hash) *slot(old[i].hash, old[i].key, old[i].n) = old[i];
    free(old);
  }
  entry *e = slot(h, w, n);
  if (!e->hash) {
    uintptr_t *copy = malloc(n * sizeof *w);
    if (!copy) goto out;
    memcpy(copy, w, n * sizeof *w);
    *e = (entry){h, copy, n, safe};
    cache_used++;
  }
out:
  pthread_mutex_unlock(&cache_lock);
}

/* ---- the call and the child ------------------------------------------------------------------ */

static void ignore_types(intptr_t n, MlirType *t, void *ud) {
  (void)n;
  (void)t;
  (void)ud;
}

static void ignore_components(bool has_rank, intptr_t rank, const int64_t *shape, MlirType element,
                              MlirAttribute attr, void *ud) {
  (void)has_rank;
  (void)rank;
  (void)shape;
  (void)element;
  (void)attr;
  (void)ud;
}

/* The call, made deterministic. Generated inference that reads past the operands it was given
 * reads what lies after them: in our arrays (padded with nulls) or in the C API's own copy on the
 * stack (a SmallVector's inline storage: whatever an earlier call left there). Both are zeroed
 * first, so such a read finds a null and crashes the same way in the child and here, instead of
 * depending on leftovers that differ between the two. */
#define PAD 16

/* Not instrumented: AddressSanitizer would put redzones around the array, left unzeroed. 8 KiB
 * cover the C API's frame and the generated inference's below it; memset with a compiler barrier
 * (about 0.2 us, where a volatile byte loop over 32 KiB took 15 us per call). */
__attribute__((noinline, no_sanitize_address)) static void scrub_stack(void) {
  char below[8192];
  memset(below, 0, sizeof below);
  __asm__ volatile("" : : "r"(below) : "memory");
}

static MlirLogicalResult call(const tether_infer_call *c, MlirTypesCallback types,
                              MlirShapedTypeComponentsCallback comps, void *ud) {
  MlirValue *vals = calloc((size_t)c->n_operands + PAD, sizeof *vals);
  MlirRegion *regs = calloc((size_t)c->n_regions + PAD, sizeof *regs);
  MlirLogicalResult r = mlirLogicalResultFailure();
  if (vals && regs) {
    if (c->n_operands) memcpy(vals, c->operands, (size_t)c->n_operands * sizeof *vals);
    if (c->n_regions) memcpy(regs, c->regions, (size_t)c->n_regions * sizeof *regs);
    scrub_stack();
    r = tether__infer_call(c, vals, regs, types, comps, ud);
  }
  free(vals);
  free(regs);
  return r;
}

atomic_long tether__children; /* tether_get_global_stats */

/* In the child: what it answers when fn returns (tether__child_answer may change it). */
static int child_answer;
void tether__child_answer(int answer) { child_answer = answer; }

/* 1 the call returned in the child (or the answer it gave, >= 1), 0 the child died, 2 it hung
 * (killed), -1 no child. */
int tether__in_child(void (*fn)(void *), void *ud, int timeout_ms) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid > 0) atomic_fetch_add(&tether__children, 1);
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    /* The child: no core file, no output (diagnostics, a sanitizer's report), the call, a byte. */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    close(fds[0]);
    child_answer = 1;
    fn(ud);
    char ok = (char)child_answer;
    ssize_t w = write(fds[1], &ok, 1);
    _exit(w == 1 ? 0 : 1);
  }
  close(fds[1]);
  char got = 0;
  struct pollfd p = {fds[0], POLLIN, 0};
  int r;
  do r = poll(&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  int answered = r > 0 && read(fds[0], &got, 1) == 1 && got >= 1;
  close(fds[0]);
  if (r == 0) kill(pid, SIGKILL);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r == 0) return 2;
  return answered ? got : 0;
}

static void infer_in_child(void *c) { call(c, ignore_types, ignore_components, NULL); }

static int try_in_child(const tether_infer_call *c) {
  return tether__in_child(infer_in_child, (void *)c, PROBE_TIMEOUT_MS);
}

static bool is_safe(const tether_infer_call *c) {
  static int no_probe = -1; /* read once */
  if (no_probe < 0) no_probe = getenv("TETHER_NO_INFER_PROBE") != NULL;
  if (no_probe) return true;
  key_buf k = {NULL, 0, 0, 0};
  make_key(&k, c);
  if (k.oom) {
    free(k.w);
    return false;
  }
  uint64_t h = hash_key(k.w, k.n);
  int known = cache_get(h, k.w, k.n);
  if (known >= 0) {
    free(k.w);
    return known;
  }
  int r = try_in_child(c);
  if (r < 0) {
    free(k.w);
    return true; /* no child: made unprobed */
  }
  if (r != 2) cache_put(h, k.w, k.n, r); /* a hang is refused but not cached */
  free(k.w);
  return r == 1;
}

int tether_infer(const tether_infer_call *c, MlirTypesCallback types,
                 MlirShapedTypeComponentsCallback components, void *user) {
  if (!c || !c->name.data || mlirContextIsNull(c->ctx) || mlirLocationIsNull(c->location) ||
      (c->n_operands && !c->operands) || (c->n_regions && !c->regions) || c->n_operands < 0 ||
      c->n_regions < 0 || (c->shaped ? !components : !types))
    return TETHER_EARG;
  if (!is_safe(c)) {
    mlirEmitError(c->location, "tether: inferring the result types of this operation crashes with "
                               "these operands, attributes and regions (too few operands, or a "
                               "missing attribute or region?)");
    return TETHER_EARG;
  }
  return mlirLogicalResultIsSuccess(call(c, types, components, user)) ? TETHER_OK : TETHER_EVERIFY;
}

/* ---- probes for the bindings ----------------------------------------------------------------
 */

int tether_probe(const void *key, size_t key_len, void (*fn)(void *), void *user) {
  if ((!key && key_len) || !fn) return -1;
  key_buf k = {NULL, 0, 0, 0};
  put(&k, 0x70726f6265ull); /* "probe": its own key space */
  put_str(&k, (MlirStringRef){(const char *)key, key_len});
  if (k.oom) {
    free(k.w);
    return -1;
  }
  uint64_t h = hash_key(k.w, k.n);
  int known = cache_get(h, k.w, k.n);
  if (known < 0) {
    int r = tether__in_child(fn, user, PROBE_TIMEOUT_MS);
    if (r == 0 || r == 1) cache_put(h, k.w, k.n, r);
    known = r == 2 ? 0 : r;
  }
  free(k.w);
  return known;
}

/* ---- parsers MLIR 19 crashes in --------------------------------------------------------------
 *
 * Text whose parsing crashes MLIR 19 itself (mlir-opt-19 too): recognised by what it mentions, and
 * then parsed in a child first, once per text. One known case: a sparse_tensor encoding whose map
 * has block sparsity (floordiv) that MLIR cannot invert (inverseBlockSparsity reads past its
 * data). Everything else is parsed directly. */

static const char *const risky_text[][2] = {
    {"sparse_tensor.encoding", "floordiv"},
};

static bool mentions(const char *text, size_t len, const char *needle) {
  /* glibc's memmem (two-way, vectorized): a module's whole text is scanned on every parse. */
  return memmem(text, len, needle, strlen(needle)) != NULL;
}

typedef struct {
  MlirContext ctx;
  MlirStringRef text;
  tether_parse_kind kind;
} parse_call;

static void parse_in_child(void *ud) {
  parse_call *c = ud;
  switch (c->kind) {
  case TETHER_PARSE_TYPE:
    mlirTypeParseGet(c->ctx, c->text);
    break;
  case TETHER_PARSE_ATTRIBUTE:
    mlirAttributeParseGet(c->ctx, c->text);
    break;
  case TETHER_PARSE_MODULE:
    mlirModuleCreateParse(c->ctx, c->text);
    break;
  case TETHER_PARSE_OPERATION:
    mlirOperationCreateParse(c->ctx, c->text, mlirStringRefCreateFromCString("<tether>"));
    break;
  }
}

int tether_parse_check(MlirContext ctx, tether_parse_kind kind, const char *text, size_t len) {
  if (mlirContextIsNull(ctx) || (!text && len) || kind < TETHER_PARSE_TYPE ||
      kind > TETHER_PARSE_OPERATION)
    return TETHER_EARG;
  bool risky = false;
  for (size_t i = 0; i < sizeof risky_text / sizeof risky_text[0] && !risky; i++)
    risky = mentions(text, len, risky_text[i][0]) && mentions(text, len, risky_text[i][1]);
  if (!risky) return TETHER_OK;
  size_t klen = len + 1;
  char *key = malloc(klen);
  if (!key) return TETHER_ENOMEM;
  key[0] = (char)('0' + kind);
  if (len) memcpy(key + 1, text, len);
  parse_call c = {ctx, {text, len}, kind};
  int safe = tether_probe(key, klen, parse_in_child, &c);
  free(key);
  if (safe == 0) {
    mlirEmitError(mlirLocationUnknownGet(ctx),
                  "tether: MLIR's parser crashes on this text (a sparse_tensor encoding whose "
                  "block sparsity MLIR cannot invert); it was not parsed");
    return TETHER_EPARSE;
  }
  return TETHER_OK;
}

/* ---- verifiers that need a parent -------------------------------------------------------------
 */

/* Some verifiers assume their operation's parent (func.return casts its parent to func.func):
 * verifying such an operation with no parent operation (detached, or at the top of a detached
 * region or block) crashes MLIR, and so does printing it (printing verifies first). Tried once per
 * operation name in a child, cached for the process. */
static void verify_in_child(void *op) { mlirOperationVerify(*(MlirOperation *)op); }

int tether__orphan_verify_crashes(MlirOperation op) {
  if (!mlirOperationIsNull(mlirOperationGetParentOperation(op))) return 0;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if ((name.length == 14 && !memcmp(name.data, "builtin.module", 14)) ||
      !mlirContextIsRegisteredOperation(mlirOperationGetContext(op), name))
    return 0;
  key_buf k = {NULL, 0, 0, 0};
  put(&k, 0x6f727068616eull); /* "orphan": another key space than inference's */
  put_str(&k, name);
  if (k.oom) {
    free(k.w);
    return 0;
  }
  uint64_t h = hash_key(k.w, k.n);
  int known = cache_get(h, k.w, k.n);
  if (known < 0) {
    int r = tether__in_child(verify_in_child, &op, PROBE_TIMEOUT_MS);
    known = r == 0 ? 0 : 1; /* 0: died; stored as "safe" = 0 */
    if (r != 2) cache_put(h, k.w, k.n, known);
    if (r == 2) known = 0;
  }
  free(k.w);
  return !known;
}
