/* crash_guards.c: what keeps MLIR from crashing on input its C API gives no way to check.
 *
 * Invariant: libtether hands MLIR nothing a guard here knows to crash it. Where only the call
 * itself can tell (MLIR 19 aborts, or reads operands, regions or parents that are not there, and
 * no API says what a call needs), the call is first made in a forked child (in_child: no output,
 * no core file, a time limit), and made for real only when the child returned. A verdict is
 * cached under a key that determines it: process-wide for inference, probes, parsers and orphan
 * verifiers (keys of TypeIDs, names and texts, which outlive contexts), per arena for the shapes
 * of operations a child verified. Every fork of libtether is in this file.
 *
 * The guards, and what each protects against (tether.h, "Crash guards"; docs/ownership.md,
 * "Inference" and "Verifiers and parsers that crash"):
 *   inference        tether_infer: ODS-generated inferReturnTypes reading operands, attributes or
 *                    regions the operation does not have (arith.addi with no operand).
 *   probes           tether_probe: any other call a binding names by a key.
 *   parsers          tether_parse_check: texts MLIR 19's own parser crashes on, texts
 *                    nested deeper than the calling thread's stack holds (MLIR's parser,
 *                    printer and verifier recurse once per level), and resource blobs asking
 *                    for gigabytes of alignment (LLVM's "out of memory" abort).
 *   bytecode reader  tether__read_bytecode: every read of MLIR bytecode is made by the trial
 *                    helper, which sends back text (malformed bytecode aborts, crashes, hangs
 *                    or silently corrupts MLIR's reader); check_bytecode for tether_parse_check.
 *   orphan verifiers tether__orphan_verify_crashes: verifiers that cast their parent operation
 *                    (func.return), run on an operation that has none.
 *   suspect trees    tether__verifier_crashes: IR built or edited by hand (a linalg op without its
 *                    region), verified in a child first; the shapes a child survived remembered.
 *   foreign uses     tether__unsafe_for_mlir: nested IR using a value or block of another tree,
 *                    where MLIR's dominance checks climb to a parent that does not exist.
 *   the inliner      tether__inliner_unsafe: MLIR 19's inline pass on an unregistered operation
 *                    with regions.
 *   PDL              tether__pdl_compile_crashes, tether__patterns_crash: compiling patterns
 *                    (once per module text) and applying them (every time), in a child first.
 *   bytecode         tether_op_check_self_contained: the writer meeting what it did not number.
 *   verifier gaps    tether__verifier_gap (verifier_gaps.c): IR MLIR's verifiers accept and its
 *                    passes crash on (affine loops whose operands do not match their maps).
 */
#define _GNU_SOURCE /* memmem, pthread_getattr_np */
#include "tether_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Interfaces.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Time limits of the children: a cached trial (inference, probes, parsers, orphan verifiers), the
 * verification of a suspect tree, an application of patterns. */
#define PROBE_TIMEOUT_MS 5000
#define VERIFY_TIMEOUT_MS 30000
#define PATTERNS_TIMEOUT_MS 120000

/* ---- the child ------------------------------------------------------------------------------- */

atomic_long tether__children; /* tether_get_global_stats */
int tether__trial_child;

bool tether_in_trial_child(void) { return tether__trial_child != 0; }

/* In the child: what it answers when fn returns (child_answer may change it). */
static int child_answer_value;
static void child_answer(int answer) { child_answer_value = answer; }

/* Runs fn(ud) in a forked child (output discarded, no core): 1 it returned (or the answer it gave
 * through child_answer, >= 1), 0 it died, 2 it hung past timeout_ms (killed), -1 no child could be
 * made. */
static int in_child(void (*fn)(void *), void *ud, int timeout_ms) {
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
    tether__trial_child = 1;
    tether__silence_diagnostics();
    child_answer_value = 1;
    fn(ud);
    char ok = (char)child_answer_value;
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

/* ---- keys and the process-wide cache of verdicts --------------------------------------------- */

/* A key: words, each trial's own key space first. In its own storage while it fits (an inference's
 * key is a dozen words), else malloc. */
enum { KEY_SMALL = 32 };
typedef struct {
  uintptr_t *w;
  size_t n, cap;
  int oom;
  uintptr_t small[KEY_SMALL];
} key_buf;

#define KEY_BUF_INIT(k) ((k).w = (k).small, (k).n = 0, (k).cap = KEY_SMALL, (k).oom = 0)

static void key_free(key_buf *k) {
  if (k->w != k->small) free(k->w);
}

static void put(key_buf *k, uintptr_t x) {
  if (k->oom) return;
  if (k->n == k->cap) {
    size_t ncap = k->cap * 2;
    uintptr_t *p = malloc(ncap * sizeof *p);
    if (!p) {
      k->oom = 1;
      return;
    }
    memcpy(p, k->w, k->n * sizeof *p);
    key_free(k);
    k->w = p;
    k->cap = ncap;
  }
  k->w[k->n++] = x;
}

/* The length, then the bytes a word at a time (the last one zero-padded). */
static void put_str(key_buf *k, MlirStringRef s) {
  put(k, s.length);
  size_t i = 0;
  for (; i + sizeof(uintptr_t) <= s.length; i += sizeof(uintptr_t)) {
    uintptr_t x;
    memcpy(&x, s.data + i, sizeof x);
    put(k, x);
  }
  uintptr_t x = 0;
  memcpy(&x, s.data + i, s.length - i);
  put(k, x);
}

/* Open addressing, keys owned, never shrinks. */
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

/* The verdict for key k (freed here): cached, else the trial helper's (helper(ud), when given and
 * it has one), else in_child's answer for fn(ud). The answers 0 (died) and 1 (returned) are
 * cached; 2 (hung) and -1 (no child, or no memory for the key) are not. */
static int cached_verdict(key_buf *k, int (*helper)(void *), void (*fn)(void *), void *ud) {
  if (k->oom) {
    key_free(k);
    return -1;
  }
  uint64_t h = hash_key(k->w, k->n);
  int r = cache_get(h, k->w, k->n);
  if (r < 0) {
    r = helper ? helper(ud) : -1;
    if (r < 0) r = in_child(fn, ud, PROBE_TIMEOUT_MS);
    if (r == TETHER__TRIAL_FAILED) r = TETHER__TRIAL_RETURNED; /* a verifier that returned */
    if (r == 0 || r == 1) cache_put(h, k->w, k->n, r);
  }
  key_free(k);
  return r;
}

static int cached_trial(key_buf *k, void (*fn)(void *), void *ud) {
  return cached_verdict(k, NULL, fn, ud);
}

/* ---- inference ------------------------------------------------------------------------------- */

/* MLIR's ODS-generated inferReturnTypes reads its operands, attributes and regions without
 * checking they exist: arith.addi with no operand reads operands[0], scf.if with an empty region
 * reads its first block. The C API cannot tell how many operands an op needs, so the call is made
 * once in a child. The answer is cached by the call's shape (operation name, the TypeIDs of the
 * operands' types, the names and TypeIDs of the attributes, the regions' outline), so a program
 * that creates a million arith.addi pays one fork. Limits (docs/ownership.md, "Inference"): a
 * crash that depends on an attribute's or a type's value rather than its kind is not in the key; a
 * child that hangs is killed and the call refused (not cached); if fork fails the call is made
 * untried. */

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

static void make_infer_key(key_buf *k, const tether_infer_call *c) {
  put(k, (uintptr_t)c->shaped);
  put_str(k, c->name);
  put(k, (uintptr_t)c->n_operands);
  for (intptr_t i = 0; i < c->n_operands; i++)
    put(k, (uintptr_t)mlirTypeGetTypeID(mlirValueGetType(c->operands[i])).ptr);
  intptr_t na =
      mlirAttributeIsNull(c->attributes) ? 0 : mlirDictionaryAttrGetNumElements(c->attributes);
  put(k, (uintptr_t)na);
  if (na) {
    /* A dictionary's elements are sorted by name already; sorted again all the same (what the key
     * holds must not depend on it), in place when few. */
    MlirNamedAttribute few[8];
    MlirNamedAttribute *v = na <= 8 ? few : malloc((size_t)na * sizeof *v);
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
    if (v != few) free(v);
  }
  put(k, (uintptr_t)c->n_regions);
  for (intptr_t i = 0; i < c->n_regions; i++) put_region(k, c->regions[i]);
}

/* What a trial does with the inferred types: reads each one's context. Generated inference casts
 * an operand's type to what the op expects without checking it (async.runtime.load's result is
 * `cast<ValueType>(storage's type).getValueType()`): given another type, it returns no crash but a
 * garbage type, which crashes whatever reads it later. Reading it here crashes the trial instead
 * (or, when the garbage happens to point to readable memory, finds another context: abort), and
 * the call is refused. */
static void check_type(MlirContext ctx, MlirType t) {
  if (!mlirTypeIsNull(t) && !mlirContextEqual(mlirTypeGetContext(t), ctx)) abort();
}

static void check_types(intptr_t n, MlirType *t, void *ud) {
  const tether_infer_call *c = ud;
  for (intptr_t i = 0; i < n; i++) check_type(c->ctx, t[i]);
}

static void check_components(bool has_rank, intptr_t rank, const int64_t *shape, MlirType element,
                             MlirAttribute attr, void *ud) {
  (void)has_rank;
  (void)rank;
  (void)shape;
  (void)attr;
  check_type(((const tether_infer_call *)ud)->ctx, element);
}

/* The call, made deterministic: generated inference that reads past the operands it was given
 * reads what lies after them in tether__infer_call's copies, which are padded with nulls, so such a
 * read finds a null and crashes the same way in the trial's process and here, instead of depending
 * on what an earlier call left there. (The copies are the only arrays it reads: the C API's own,
 * whose inline storage kept what earlier calls left, is not used; an 8 KiB memset of the stack
 * below made up for it before, 40% of an inferred creation's time.) */
static MlirLogicalResult infer(const tether_infer_call *c, void *opname, MlirTypesCallback types,
                               MlirShapedTypeComponentsCallback comps, void *ud) {
  return tether__infer_call(c, opname, types, comps, ud);
}

void tether__infer_try(const tether_infer_call *c) {
  infer(c, NULL, check_types, check_components, (void *)c);
}

static void infer_in_child(void *c) { tether__infer_try(c); }

static int infer_by_helper(void *c) { return tether__trial_infer(c, PROBE_TIMEOUT_MS); }

static bool infer_is_safe(const tether_infer_call *c) {
  static int no_probe = -1; /* read once */
  if (no_probe < 0) no_probe = getenv("TETHER_NO_INFER_PROBE") != NULL;
  if (no_probe) return true;
  key_buf k;
  KEY_BUF_INIT(k);
  make_infer_key(&k, c);
  if (k.oom) {
    key_free(&k);
    return false;
  }
  int r = cached_verdict(&k, infer_by_helper, infer_in_child, (void *)c);
  return r == 1 || r < 0; /* no child: made untried */
}

int tether__infer(const tether_infer_call *c, void *opname, MlirTypesCallback types,
                  MlirShapedTypeComponentsCallback components, void *user) {
  if (!c || !c->name.data || mlirContextIsNull(c->ctx) || mlirLocationIsNull(c->location) ||
      (c->n_operands && !c->operands) || (c->n_regions && !c->regions) || c->n_operands < 0 ||
      c->n_regions < 0 || (c->shaped ? !components : !types))
    return TETHER_EARG;
  if (!infer_is_safe(c)) {
    mlirEmitError(c->location, "tether: inferring the result types of this operation crashes with "
                               "these operands, attributes and regions (too few operands, an "
                               "operand of a type it does not take, or a missing attribute or "
                               "region?)");
    return TETHER_EARG;
  }
  return mlirLogicalResultIsSuccess(infer(c, opname, types, components, user)) ? TETHER_OK
                                                                               : TETHER_EVERIFY;
}

int tether_infer(const tether_infer_call *c, MlirTypesCallback types,
                 MlirShapedTypeComponentsCallback components, void *user) {
  return tether__infer(c, NULL, types, components, user);
}

/* ---- probes ---------------------------------------------------------------------------------- */

int tether_probe(const void *key, size_t key_len, void (*fn)(void *), void *user) {
  if ((!key && key_len) || !fn) return -1;
  key_buf k;
  KEY_BUF_INIT(k);
  put(&k, 0x70726f6265ull); /* "probe": its own key space */
  put_str(&k, (MlirStringRef){(const char *)key, key_len});
  int r = cached_trial(&k, fn, user);
  return r == 2 ? 0 : r;
}

/* ---- parsers MLIR crashes in ------------------------------------------------------------------
 *
 * Text whose parsing crashes MLIR itself (mlir-opt too): recognised by what it mentions, and then
 * parsed in a child first, once per text. The known cases: a sparse_tensor encoding whose map has
 * block sparsity (floordiv) that MLIR 19 cannot invert (inverseBlockSparsity reads past its data);
 * on MLIR 19,
 * a value name left undefined and a value name defined twice in the same text (its parser's error
 * path writes into operations it freed: ssa_names.c). Everything else is parsed directly. */

static const char *const risky_text[][3] = {
    {"sparse_tensor.encoding", "floordiv",
     "a sparse_tensor encoding whose block sparsity MLIR cannot invert"},
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

void tether__heap_shake(void) {
  /* Every small size class, deeper than the per-thread cache holds (7 a size): a free list whose
   * links a stray write replaced hands out (or fails on) a chunk that is not one, and the write
   * into it crashes here. */
  enum { SIZES = 128, DEPTH = 16 };
  static void *p[SIZES * DEPTH];
  for (int i = 0; i < SIZES * DEPTH; i++) {
    size_t n = (size_t)(i % SIZES + 1) * 16;
    p[i] = malloc(n);
    if (p[i]) memset(p[i], 0x5a, n);
  }
  for (int i = 0; i < SIZES * DEPTH; i++) free(p[i]);
}

static void parse_in_child(void *ud) {
  parse_call *c = ud;
  switch (c->kind) {
  case TETHER_PARSE_TYPE:
    mlirTypeParseGet(c->ctx, c->text);
    break;
  case TETHER_PARSE_ATTRIBUTE:
    mlirAttributeParseGet(c->ctx, c->text);
    break;
  case TETHER_PARSE_MODULE: {
    MlirModule m = mlirModuleCreateParse(c->ctx, c->text);
    if (!mlirModuleIsNull(m)) mlirModuleDestroy(m);
    break;
  }
  case TETHER_PARSE_OPERATION: {
    MlirOperation op =
        mlirOperationCreateParse(c->ctx, c->text, mlirStringRefCreateFromCString("<tether>"));
    if (!mlirOperationIsNull(op)) mlirOperationDestroy(op);
    break;
  }
  }
  tether__heap_shake(); /* a parser that corrupted the heap without crashing dies here */
}

static int parse_by_helper(void *ud) {
  parse_call *c = ud;
  return tether__trial_parse(c->ctx, c->kind, c->text, PROBE_TIMEOUT_MS);
}

/* ---- nesting deeper than the stack -------------------------------------------------------------
 *
 * MLIR's parser, printer, verifier and walks recurse once per nesting level (a region in an
 * operation in a region, an array attribute in an array attribute, tuple<tuple<...>>): text nested
 * thousands deep overflows the stack (nested generic regions: about 4 KB a level, a crash past
 * 2,000 levels on an 8 MB stack). The text's brackets are counted before MLIR sees it, and what
 * nests deeper than the calling thread's free stack allows at STACK_PER_LEVEL is refused. */

enum { STACK_PER_LEVEL = 8192 };

/* Bytes of stack left below the caller (the stack grows down on every platform tether builds
 * for); 8 MB when the thread's stack cannot be found. The bottom is looked up once per thread:
 * for the main thread glibc's pthread_getattr_np reads /proc/self/maps, about 0.5 ms in a process
 * that has MLIR loaded, which every parse paid before. (A program that lowers RLIMIT_STACK after
 * its first parse keeps the budget of the old limit.) */
static _Thread_local uintptr_t stack_bottom; /* 0: not looked up yet */
static _Thread_local int stack_unknown;

static size_t stack_left(void) {
  if (!stack_bottom && !stack_unknown) {
    pthread_attr_t attr;
    void *lo;
    size_t size;
    int rc = pthread_getattr_np(pthread_self(), &attr);
    if (rc == 0) {
      rc = pthread_attr_getstack(&attr, &lo, &size);
      pthread_attr_destroy(&attr);
    }
    if (rc == 0 && lo)
      stack_bottom = (uintptr_t)lo;
    else
      stack_unknown = 1;
  }
  if (stack_unknown) return (size_t)8 << 20;
  char here;
  uintptr_t sp = (uintptr_t)&here;
  return sp > stack_bottom ? (size_t)(sp - stack_bottom) : 0;
}

/* The deepest nesting of ( [ { and < in text, outside string literals and // comments, or any
 * value over limit as soon as it is exceeded. A '>' without an open '<' (the arrow of a function
 * type) counts nothing. */
enum { NEST_OPEN = 1, NEST_CLOSE, NEST_ANGLE_OPEN, NEST_ANGLE_CLOSE, NEST_QUOTE, NEST_SLASH };

/* What each byte is to the scan (0: nothing): most of a text is skipped by one load per byte. */
static const unsigned char nest_class[256] = {
    ['('] = NEST_OPEN,  ['['] = NEST_OPEN,  ['{'] = NEST_OPEN,       [')'] = NEST_CLOSE,
    [']'] = NEST_CLOSE, ['}'] = NEST_CLOSE, ['<'] = NEST_ANGLE_OPEN, ['>'] = NEST_ANGLE_CLOSE,
    ['"'] = NEST_QUOTE, ['/'] = NEST_SLASH,
};

static size_t nesting_depth(const char *t, size_t n, size_t limit) {
  size_t depth = 0, angle = 0, deepest = 0;
  const unsigned char *u = (const unsigned char *)t;
  for (size_t i = 0; i < n; i++) {
    switch (nest_class[u[i]]) {
    case 0:
      continue;
    case NEST_QUOTE:
      for (i++; i < n && t[i] != '"'; i++)
        if (t[i] == '\\') i++;
      continue;
    case NEST_SLASH:
      if (i + 1 < n && t[i + 1] == '/') {
        const char *nl = memchr(t + i, '\n', n - i);
        i = nl ? (size_t)(nl - t) : n;
      }
      continue;
    case NEST_OPEN:
      depth++;
      break;
    case NEST_CLOSE:
      if (depth) depth--;
      continue;
    case NEST_ANGLE_OPEN:
      angle++;
      break;
    default: /* NEST_ANGLE_CLOSE */
      if (angle) angle--;
      continue;
    }
    if (depth + angle > deepest && (deepest = depth + angle) > limit) return deepest;
  }
  return deepest;
}

/* ---- resource blobs with an alignment MLIR cannot honour ---------------------------------------
 *
 * A blob in the file metadata (`{-# dialect_resources: { builtin: { key: "0x<align><data>" } }
 * #-}`) begins with its alignment, 4 bytes little-endian. MLIR copies the data into a buffer
 * allocated at that alignment, and its bytecode writer pads to it, trusting the value: a 2 GB
 * alignment costs 2-4 GB, and under a memory limit LLVM reports "out of memory" and aborts; an
 * alignment of 0, which MLIR's parser does not check (it does check for powers of two), makes the
 * allocation's size computation ask for all of memory: "out of memory" at once. The hex strings of
 * the metadata are read before MLIR sees them; the first one whose alignment is 0 or above
 * TETHER_MAX_RESOURCE_ALIGNMENT is named in the error. */

static int hex_digit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* MLIR reports an alignment that is not a power of two itself (its parser's "power-of-2"
 * error); 0 it does not check. */
static bool alignment_ok(uint64_t align) { return align && align <= TETHER_MAX_RESOURCE_ALIGNMENT; }

/* 1 when a blob in text[0..n) has an alignment MLIR cannot honour, the first such in *align. */
static int bad_blob_alignment(const char *t, size_t n, uint64_t *align) {
  const char *meta = memmem(t, n, "{-#", 3);
  if (!meta) return 0;
  for (const char *p = meta, *end = t + n; (p = memmem(p, (size_t)(end - p), "\"0x", 3)); p += 3) {
    if (end - p < 11) break;
    uint64_t a = 0;
    int ok = 1;
    for (int byte = 0; byte < 4 && ok; byte++) {
      int hi = hex_digit(p[3 + 2 * byte]), lo = hex_digit(p[4 + 2 * byte]);
      ok = hi >= 0 && lo >= 0;
      a |= (uint64_t)(ok ? hi << 4 | lo : 0) << (8 * byte);
    }
    if (ok && !alignment_ok(a)) {
      *align = a;
      return 1;
    }
  }
  return 0;
}

/* ---- bytecode --------------------------------------------------------------------------------
 *
 * MLIR's bytecode reader trusts its input: a flipped byte of a valid file makes it abort, crash,
 * loop for ever, or write past its buffers and return an error (the heap corrupted: a later,
 * unrelated call crashes). mlir-opt-22 alike. So tether's own parses (tether_module_parse,
 * tether_op_parse) never give bytecode from outside to MLIR in this process: the trial helper
 * reads it, holds what it read to the rules text is held to (its printed form's nesting against
 * this thread's stack, its resource blobs' alignment), and writes it again: MLIR's writer's
 * bytecode of IR that was read is what is read here. With no helper, a forked child of this
 * process does the helper's part. tether_parse_check, which cannot hand
 * back text, tries the read in the helper (or a child). A time limit grows with the size; nothing
 * is cached: each read is tried. */

/* 5 s, and 1 s more per 8 MiB. */
static int bytecode_timeout_ms(size_t len) {
  size_t ms = PROBE_TIMEOUT_MS + len / (8u << 20) * 1000u;
  return ms > 600000 ? 600000 : (int)ms;
}

int tether__text_refusal(const char *text, size_t len, size_t limit, uint64_t *align) {
  if (nesting_depth(text, len, limit) > limit) return 1;
  uint64_t a = 0;
  if (!bad_blob_alignment(text, len, &a)) return 0;
  if (align) *align = a;
  return 2;
}

/* The error for a refusal of tether__text_refusal (what: "text" or "bytecode"; align: the blob's
 * alignment, or UINT64_MAX when the refusal does not say). */
static void text_refusal_error(MlirContext ctx, int refusal, size_t limit, uint64_t align,
                               const char *what) {
  char msg[320];
  if (refusal == 1)
    snprintf(msg, sizeof msg,
             "tether: this %s nests deeper than %zu levels (brackets, parentheses, braces and "
             "angle brackets together), more than this thread's stack holds for MLIR's recursive "
             "parser and printer; it was not parsed",
             what, limit);
  else if (align == 0)
    snprintf(msg, sizeof msg,
             "tether: a resource blob of this %s has alignment 0; an alignment must be a power of "
             "two (MLIR would try to allocate all of memory for its data); it was not parsed",
             what);
  else if (align != UINT64_MAX)
    snprintf(msg, sizeof msg,
             "tether: a resource blob of this %s asks for alignment %llu, more than the %d "
             "tether allows (MLIR would allocate and pad its data to that alignment); it was "
             "not parsed",
             what, (unsigned long long)align, TETHER_MAX_RESOURCE_ALIGNMENT);
  else
    snprintf(msg, sizeof msg,
             "tether: a resource blob of this %s asks for an alignment above the %d tether "
             "allows (MLIR would allocate and pad its data to that alignment); it was not parsed",
             what, TETHER_MAX_RESOURCE_ALIGNMENT);
  mlirEmitError(mlirLocationUnknownGet(ctx), msg);
}

/* The error for a trial's verdict r on bytecode (not TETHER__TRIAL_RETURNED; -1: no process to
 * read it could be started). */
static void bytecode_error(MlirContext ctx, int r, int timeout) {
  char msg[320];
  if (r < 0)
    snprintf(msg, sizeof msg,
             "tether: no separate process could be started to read this bytecode first (it "
             "may be malformed, and MLIR's reader trusts it); it was not read");
  else if (r == TETHER__TRIAL_HUNG)
    snprintf(msg, sizeof msg,
             "tether: MLIR's bytecode reader did not finish reading this input within %d s (tried "
             "in a separate process first: malformed bytecode can make it loop); it was not read",
             timeout / 1000);
  else
    snprintf(msg, sizeof msg,
             "tether: MLIR's bytecode reader crashes on this input (tried in a separate process "
             "first: the bytecode is malformed or truncated); it was not read");
  mlirEmitError(mlirLocationUnknownGet(ctx), msg);
}

int tether__read_bytecode(MlirContext ctx, tether_parse_kind kind, const char *bytecode, size_t len,
                          const char *source_name, char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  int timeout = bytecode_timeout_ms(len);
  size_t limit = stack_left() / STACK_PER_LEVEL;
  tether__trial_report report = {NULL, 0, {NULL}, {NULL}, {NULL}};
  int r = tether__trial_read(ctx, kind, (MlirStringRef){bytecode, len}, limit, timeout, out,
                             out_len, &report);
  if (r == TETHER__TRIAL_BYTES) return TETHER_OK;
  if (r == TETHER__TRIAL_TOO_DEEP || r == TETHER__TRIAL_TOO_ALIGNED) {
    text_refusal_error(ctx, r == TETHER__TRIAL_TOO_DEEP ? 1 : 2, limit, UINT64_MAX, "bytecode");
    return TETHER_EPARSE;
  }
  if (r == TETHER__TRIAL_FAILED) {
    /* MLIR's reader reports at the buffer's name, line 0, column 0. */
    report.at = mlirLocationFileLineColGet(ctx, mlirStringRefCreateFromCString(source_name), 0, 0);
    tether__trial_report_emit(&report);
    tether__trial_report_free(&report);
    return TETHER_EPARSE;
  }
  bytecode_error(ctx, r, timeout);
  return TETHER_EPARSE;
}

static int check_bytecode(MlirContext ctx, tether_parse_kind kind, const char *text, size_t len) {
  if (kind != TETHER_PARSE_MODULE && kind != TETHER_PARSE_OPERATION) return TETHER_OK;
  parse_call c = {ctx, {text, len}, kind};
  int timeout = bytecode_timeout_ms(len);
  int r = tether__trial_parse(ctx, kind, c.text, timeout);
  if (r < 0) r = in_child(parse_in_child, &c, timeout);
  if (r < 0 || r == TETHER__TRIAL_RETURNED) return TETHER_OK; /* no child: read untried */
  bytecode_error(ctx, r, timeout);
  return TETHER_EPARSE;
}

int tether_parse_check(MlirContext ctx, tether_parse_kind kind, const char *text, size_t len) {
  if (mlirContextIsNull(ctx) || (!text && len) || kind < TETHER_PARSE_TYPE ||
      kind > TETHER_PARSE_OPERATION)
    return TETHER_EARG;
  if (tether__is_bytecode(text, len)) return check_bytecode(ctx, kind, text, len);
  size_t limit = stack_left() / STACK_PER_LEVEL;
  uint64_t align = 0;
  int refusal = tether__text_refusal(text, len, limit, &align);
  if (refusal) {
    text_refusal_error(ctx, refusal, limit, align, "text");
    return TETHER_EPARSE;
  }
  const char *risky = NULL;
  for (size_t i = 0; i < sizeof risky_text / sizeof risky_text[0] && !risky; i++)
    if (mentions(text, len, risky_text[i][0]) && mentions(text, len, risky_text[i][1]))
      risky = risky_text[i][2];
#if TETHER_MLIR_VERSION < 20
  if (!risky && (kind == TETHER_PARSE_MODULE || kind == TETHER_PARSE_OPERATION) &&
      tether__ssa_forward_ref_and_redefinition(text, len))
    risky = "a value name used where nothing defines it and a value name defined twice, on which "
            "MLIR 19's parser corrupts its heap";
#endif
  if (!risky) return TETHER_OK;
  size_t klen = len + 1;
  char *key = malloc(klen);
  if (!key) return TETHER_ENOMEM;
  key[0] = (char)('0' + kind);
  if (len) memcpy(key + 1, text, len);
  parse_call c = {ctx, {text, len}, kind};
  key_buf k;
  KEY_BUF_INIT(k);
  put(&k, 0x70726f6265ull); /* tether_probe's key space: the same verdicts */
  put_str(&k, (MlirStringRef){key, klen});
  free(key);
  int safe = cached_verdict(&k, parse_by_helper, parse_in_child, &c);
  safe = safe == 2 ? 0 : safe;
  if (safe == 0) {
    char msg[240];
    snprintf(msg, sizeof msg,
             "tether: MLIR's parser crashes on this text (it holds %s, or something else MLIR "
             "cannot read); it was not parsed",
             risky);
    mlirEmitError(mlirLocationUnknownGet(ctx), msg);
    return TETHER_EPARSE;
  }
  return TETHER_OK;
}

/* ---- IR nested deeper than MLIR's recursion ---------------------------------------------------
 *
 * IR built operation by operation can nest as deep as a program likes; MLIR then overflows the
 * stack printing, verifying, walking or destroying it (once per level, about 4 KB). Whatever would
 * nest past TETHER_MAX_NESTING is refused where it is attached (insertion, move, creation with
 * regions); the checks below recurse at most TETHER_MAX_NESTING deep themselves. */

int tether__ops_above(MlirBlock b) {
  int d = 0;
  MlirOperation op = mlirBlockIsNull(b) ? (MlirOperation){NULL} : mlirBlockGetParentOperation(b);
  for (; !mlirOperationIsNull(op) && d <= TETHER_MAX_NESTING; d++)
    op = mlirOperationGetParentOperation(op);
  return d;
}

static int op_exceeds(MlirOperation op, int budget);

/* Whether the operations of r nest deeper than budget levels (each counts one). */
static int region_exceeds(MlirRegion r, int budget) {
  for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b);
       b = mlirBlockGetNextInRegion(b))
    for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
         o = mlirOperationGetNextInBlock(o))
      if (op_exceeds(o, budget)) return 1;
  return 0;
}

static int op_exceeds(MlirOperation op, int budget) {
  if (budget < 1) return 1;
  intptr_t n = mlirOperationGetNumRegions(op);
  for (intptr_t i = 0; i < n; i++)
    if (region_exceeds(mlirOperationGetRegion(op, i), budget - 1)) return 1;
  return 0;
}

int tether__nesting_exceeded(MlirBlock dest, int extra_above, MlirOperation op) {
  if (mlirOperationGetNumRegions(op) == 0) return 0;
  return op_exceeds(op, TETHER_MAX_NESTING - tether__ops_above(dest) - extra_above);
}

int tether__region_nesting_exceeded(MlirRegion r, int above) {
  return region_exceeds(r, TETHER_MAX_NESTING - above);
}

int tether__block_nesting_exceeded(MlirBlock b, int above) {
  for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o))
    if (op_exceeds(o, TETHER_MAX_NESTING - above)) return 1;
  return 0;
}

/* ---- verifiers that need a parent ------------------------------------------------------------ */

/* Some verifiers assume their operation's parent (func.return casts its parent to func.func):
 * verifying such an operation with no parent operation (detached, or at the top of a detached
 * region or block) crashes MLIR, and so does printing it (printing verifies first). Tried once per
 * operation name in a child, cached for the process. */
static void verify_in_child(void *op) { mlirOperationVerify(*(MlirOperation *)op); }

/* An operation with no parent block prints alone; one at the top of a detached block or region
 * may use its block's arguments, which its text cannot carry: a child tries that one. */
static int orphan_by_helper(void *op) {
  MlirOperation o = *(MlirOperation *)op;
  if (!mlirBlockIsNull(mlirOperationGetBlock(o))) return -1;
  return tether__trial_verify(o, o, PROBE_TIMEOUT_MS, NULL);
}

int tether__orphan_verify_crashes(MlirOperation op) {
  if (!mlirOperationIsNull(mlirOperationGetParentOperation(op))) return 0;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if ((name.length == 14 && !memcmp(name.data, "builtin.module", 14)) ||
      !mlirContextIsRegisteredOperation(mlirOperationGetContext(op), name))
    return 0;
  key_buf k;
  KEY_BUF_INIT(k);
  put(&k, 0x6f727068616eull); /* "orphan": another key space than inference's */
  put_str(&k, name);
  int r = cached_verdict(&k, orphan_by_helper, verify_in_child, &op);
  return r == 0 || r == 2; /* died or hung; no child: trusted */
}

/* ---- suspect trees ----------------------------------------------------------------------------
 *
 * A tree is suspect (tether__tree.suspect) when it may hold IR that MLIR's verifier crashes on: a
 * registered operation built by hand (create.c), an inherent attribute removed or replaced by one
 * of another kind, a value's type changed (tether_handle_mark_suspect), what PDL rewrites built
 * (rewrite.c). Its verification is tried in a child first. When the child returns, the shape of
 * every registered operation it verified (tether__op_shape: name, operand and result counts and
 * kinds of types, attribute names and kinds, regions' blocks) is remembered for the arena, and a
 * later suspect tree made only of remembered shapes is verified without a child. A frontend that
 * builds and prints module after module of the same kinds of operations pays one child, not one
 * per print. A tree stops being suspect once it verifies as a whole (passes.c, transform.c). */

/* The children's answer when some operation failed to verify (TETHER__TRIAL_FAILED): then MLIR
 * stopped before verifying the rest, whose shapes are not known to be safe. */

static MlirWalkResult verify_top_cb(MlirOperation op, void *ud) {
  (void)ud;
  if (mlirOperationIsNull(mlirOperationGetParentOperation(op)) && !mlirOperationVerify(op))
    child_answer(TETHER__TRIAL_FAILED);
  return MlirWalkResultAdvance;
}

static void verify_tree_in_child(void *t) { tether__tree_walk_ops(t, verify_top_cb, NULL); }

static void verify_op_in_child(void *op) {
  if (!mlirOperationVerify(*(MlirOperation *)op)) child_answer(TETHER__TRIAL_FAILED);
}

static MlirWalkResult orphan_cb(MlirOperation op, void *ud) {
  if (tether__orphan_verify_crashes(op) || tether__verifier_gap(op, false)) {
    *(int *)ud = 1;
    return MlirWalkResultInterrupt;
  }
  return MlirWalkResultSkip;
}

/* The arena's set of safe shapes: open addressing over nonzero hashes, 0 = empty. */
static size_t shape_home(uint64_t s, size_t mask) { return (size_t)(s ^ s >> 29) & mask; }

static int shape_known(const tether_arena *a, uint64_t s) {
  if (!a->safe_cap) return 0;
  size_t mask = a->safe_cap - 1;
  for (size_t i = shape_home(s, mask);; i = (i + 1) & mask) {
    if (a->safe_shapes[i] == s) return 1;
    if (!a->safe_shapes[i]) return 0;
  }
}

static void shape_place(uint64_t *set, size_t mask, uint64_t s) {
  size_t i = shape_home(s, mask);
  while (set[i]) i = (i + 1) & mask;
  set[i] = s;
}

static void shape_add(tether_arena *a, uint64_t s) {
  if (shape_known(a, s)) return;
  if ((size_t)(a->safe_used + 1) * 2 > a->safe_cap) {
    uint32_t ncap = a->safe_cap ? a->safe_cap * 2 : 64;
    uint64_t *n = calloc(ncap, sizeof *n);
    if (!n) return; /* not remembered: the next tree of this shape is tried in a child again */
    for (uint32_t i = 0; i < a->safe_cap; i++)
      if (a->safe_shapes[i]) shape_place(n, ncap - 1, a->safe_shapes[i]);
    free(a->safe_shapes);
    a->safe_shapes = n;
    a->safe_cap = ncap;
  }
  shape_place(a->safe_shapes, a->safe_cap - 1, s);
  a->safe_used++;
}

/* The shapes of a walk not known to be safe. */
typedef struct {
  tether_arena *a;
  uint64_t *v;
  size_t n, cap;
  int unknown; /* some shape is not known to be safe */
  int oom;
} shape_list;

static MlirWalkResult shape_cb(MlirOperation op, void *ud) {
  shape_list *l = ud;
  if (!tether__op_is_registered(op)) return MlirWalkResultAdvance;
  uint64_t s = tether__op_shape(op);
  if (shape_known(l->a, s)) return MlirWalkResultAdvance;
  l->unknown = 1;
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 64;
    uint64_t *n = realloc(l->v, ncap * sizeof *n);
    if (!n) {
      l->oom = 1;
      return MlirWalkResultInterrupt;
    }
    l->v = n;
    l->cap = ncap;
  }
  l->v[l->n++] = s;
  return MlirWalkResultAdvance;
}

/* 0 when safe (known shapes, or the trial returned: then the shapes of what it verified are
 * remembered); 1 when the trial found a crash (or a hang); 2 when the trial helper found that the
 * IR does not verify: then MLIR's verifier must not run on it here (a verifier of IR built by hand
 * may read past what the operation has, and what lies there differs between two processes), and
 * *report (when given) holds the helper's diagnostics. A forked child's answer needs no such care:
 * it ran on this process's own memory. The whole tree's shapes are checked even to verify one
 * operation inside it: a verifier reads its parents (func.return reads its function's type) and
 * what defines its operands, and none of those may have changed shape. */
static int verify_in_child_unless_known(tether__tree *t, MlirOperation op,
                                        tether__trial_report *report) {
  shape_list l = {t->arena, NULL, 0, 0, 0, 0};
  tether__tree_walk_ops(t, shape_cb, &l);
  if (!l.unknown && !l.oom) {
    free(l.v);
    return 0;
  }
  if (!mlirOperationIsNull(op) && !l.oom) {
    /* Only what the trial verifies is remembered: op and what it holds. */
    l.n = 0;
    l.unknown = 0;
    mlirOperationWalk(op, shape_cb, &l, MlirWalkPreOrder);
  }
  /* The trial helper when the tree prints as one operation (a tree rooted at a region or block
   * may use its arguments); a forked child when it gives no verdict. */
  int r = -1;
  if (t->root_kind == TETHER_KIND_OP && !mlirOperationIsNull(op))
    r = tether__trial_verify((MlirOperation){t->root}, op, VERIFY_TIMEOUT_MS, report);
  if (r == TETHER__TRIAL_FAILED) {
    free(l.v);
    return 2;
  }
  if (r < 0)
    r = mlirOperationIsNull(op) ? in_child(verify_tree_in_child, t, VERIFY_TIMEOUT_MS)
                                : in_child(verify_op_in_child, &op, VERIFY_TIMEOUT_MS);
  /* Remembered only when everything verified (a failure stops MLIR's verifier early). */
  if (r == 1 && !l.oom)
    for (size_t i = 0; i < l.n; i++) shape_add(t->arena, l.v[i]);
  free(l.v);
  return r == 0 ||
         r == 2; /* died or hung; -1 (no child): trusted; TETHER__TRIAL_FAILED: no crash */
}

/* tether__verifier_crashes with its three answers (0, 1, 2 as above). */
static int verifier_verdict(tether__tree *t, MlirOperation op, tether__trial_report *report) {
  if (mlirOperationIsNull(op)) {
    /* The whole tree, as printing verifies it: its top-level operations. */
    if (t->root_kind == TETHER_KIND_OP) {
      op = (MlirOperation){t->root};
    } else {
      int bad = 0;
      tether__tree_walk_ops(t, orphan_cb, &bad);
      if (bad) return 1;
      if (!t->suspect) return 0;
      return verify_in_child_unless_known(t, (MlirOperation){NULL}, report);
    }
  }
  if (tether__orphan_verify_crashes(op) || tether__verifier_gap(op, false)) return 1;
  if (!t->suspect) return 0;
  return verify_in_child_unless_known(t, op, report);
}

int tether__verifier_crashes(tether__tree *t, MlirOperation op) {
  return verifier_verdict(t, op, NULL) != 0;
}

int tether_handle_mark_suspect(void *handle) {
  if (!handle || !tether__valid(TETHER__H(handle))) return TETHER_EINVALID;
  tether__tree *t = tether__tree_of(TETHER__H(handle));
  t->suspect = 1;
  tether__touch(t->arena);
  return TETHER_OK;
}

/* ---- before MLIR verifies, prints or runs passes --------------------------------------------- */

/* IR that uses values or blocks of another tree (a detached operation, region or block, another
 * module) is invalid, and MLIR's verifier and passes assume it cannot happen (dominance is computed
 * from the region tree and dereferences a missing parent): report it as a verification error
 * instead. Emitted as an MLIR diagnostic at the user's location. */
static int foreign_uses_error(tether__tree *t, MlirOperation op) {
  MlirOperation user;
  intptr_t index;
  int succ;
  if (!tether__op_uses_other_trees(t, op, &user, &index, &succ)) return 0;
  char msg[200];
  snprintf(msg, sizeof msg,
           "%s #%ld of this operation is %s outside the IR it is in (in a detached operation, "
           "region or block, or another module)",
           succ ? "successor" : "operand", (long)index, succ ? "a block" : "defined");
  mlirEmitError(mlirOperationGetLocation(user), msg);
  return 1;
}

/* A tree MLIR's verifier crashes on (tether__verifier_crashes): TETHER_EPASS, with a diagnostic;
 * one the trial helper found not to verify: TETHER_EVERIFY with the helper's diagnostics, or 0
 * when the caller trusts its input (it asked MLIR to run without verifying it). */
static int unverifiable_error(tether__tree *t, MlirOperation op, bool trusted) {
  tether__trial_report report = {NULL, 0, {NULL}, {NULL}, {NULL}};
  int verdict = verifier_verdict(t, op, trusted ? NULL : &report);
  if (verdict == 2 && !trusted) tether__trial_report_emit(&report);
  tether__trial_report_free(&report);
  if (verdict == 2) return trusted ? 0 : TETHER_EVERIFY;
  if (!verdict) return 0;
  mlirEmitError(
      mlirOperationGetLocation(op),
      "MLIR's verifier crashes on this operation (it needs a parent operation it does not have, "
      "or an inherent attribute was removed or replaced by one of another kind, or a value's "
      "type changed)");
  return TETHER_EPASS;
}

/* A detached root whose own results it or its nested operations use: invalid (nothing dominates
 * the use), and MLIR's dominance check crashes on it (the root has no block to ask for its
 * parent). Reported as a verification error, at the user. */
static int own_results_error(tether__tree *t) {
  MlirOperation user;
  intptr_t index;
  if (!tether__root_uses_own_results(t, &user, &index)) return 0;
  char msg[200];
  snprintf(msg, sizeof msg,
           "operand #%ld of this operation is a result of an operation that contains it (an "
           "operation without a parent cannot define what its own regions use)",
           (long)index);
  mlirEmitError(mlirOperationGetLocation(user), msg);
  return 1;
}

int tether__unsafe_for_mlir(tether__tree *t, MlirOperation op, bool trusted) {
  /* Uses of other trees first: a cheap and final answer, and IR whose text cannot carry them
   * (an operand printed as <<UNKNOWN SSA VALUE>>) would only send the trial to a fork. */
  if (foreign_uses_error(t, op)) return TETHER_EPASS;
  if (own_results_error(t)) return TETHER_EPASS;
  if (tether__verifier_gap(op, true)) return TETHER_EVERIFY;
  return unverifiable_error(t, op, trusted);
}

bool tether_handle_has_foreign_uses(const void *handle) {
  if (!handle || !tether__valid(TETHER__H(handle))) return false;
  tether__tree *t = tether__tree_of(TETHER__H(handle));
  MlirOperation user;
  intptr_t index;
  return tether__tree_uses_other_trees(t) || tether__root_uses_own_results(t, &user, &index) ||
         tether__verifier_crashes(t, (MlirOperation){NULL});
}

/* MLIR 19's inliner dereferences a null interface on an operation of an unregistered dialect that
 * has regions (mlir-opt-19 --allow-unregistered-dialect --inline crashes the same way): a pipeline
 * with `inline` is refused on such IR, with a diagnostic saying why. */
typedef struct {
  char *text;
  size_t len, cap;
} pipe_text;

static void pipe_append(MlirStringRef s, void *ud) {
  pipe_text *p = ud;
  if (p->len + s.length + 1 > p->cap) {
    size_t ncap = (p->len + s.length + 1) * 2;
    char *n = realloc(p->text, ncap);
    if (!n) return;
    p->text = n;
    p->cap = ncap;
  }
  memcpy(p->text + p->len, s.data, s.length);
  p->len += s.length;
  p->text[p->len] = 0;
}

static MlirWalkResult unregistered_region_cb(MlirOperation op, void *ud) {
  if (mlirOperationGetNumRegions(op) == 0) return MlirWalkResultAdvance;
  MlirContext ctx = mlirOperationGetContext(op);
  if (mlirContextIsRegisteredOperation(ctx, mlirIdentifierStr(mlirOperationGetName(op))))
    return MlirWalkResultAdvance;
  *(MlirOperation *)ud = op;
  return MlirWalkResultInterrupt;
}

int tether__inliner_unsafe(MlirPassManager pm, MlirOperation root) {
  pipe_text p = {NULL, 0, 0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), pipe_append, &p);
  int has_inline = 0;
  for (const char *s = p.text; s && (s = strstr(s, "inline")); s += 6) {
    char before = s == p.text ? ',' : s[-1], after = s[6];
    if ((before == ',' || before == '(' || before == ' ') &&
        (after == 0 || after == ',' || after == ')' || after == '{' || after == ' '))
      has_inline = 1;
  }
  free(p.text);
  if (!has_inline) return 0;
  MlirOperation bad = {NULL};
  mlirOperationWalk(root, unregistered_region_cb, &bad, MlirWalkPreOrder);
  if (mlirOperationIsNull(bad)) return 0;
  mlirEmitError(mlirOperationGetLocation(bad),
                "the inline pass cannot run on IR holding an operation of an unregistered dialect "
                "with regions (MLIR 19's inliner crashes on it)");
  return 1;
}

/* ---- PDL patterns (rewrite.c) ---------------------------------------------------------------- */

/* Compiling crashes MLIR on modules its PDL lowering does not expect: tried in a child, once per
 * text of the module (its generic form), through tether_probe. */
typedef struct {
  char *text;
  size_t len, cap;
  int oom;
} key_text;

static void key_append(MlirStringRef s, void *ud) {
  key_text *k = ud;
  if (k->oom) return;
  if (k->len + s.length > k->cap) {
    size_t ncap = (k->len + s.length) * 2;
    char *p = realloc(k->text, ncap);
    if (!p) {
      k->oom = 1;
      return;
    }
    k->text = p;
    k->cap = ncap;
  }
  memcpy(k->text + k->len, s.data, s.length);
  k->len += s.length;
}

typedef struct {
  MlirOperation module;
  const void *fns;
  intptr_t n;
  void *state;
} compile_call;

static void compile_in_child(void *ud) {
  compile_call *c = ud;
  tether__pdl_compile(c->module, c->fns, c->n, c->state);
}

int tether__pdl_compile_crashes(MlirOperation module, const void *fns, intptr_t n, void *state) {
  key_text k = {NULL, 0, 0, 0};
  key_append(mlirStringRefCreateFromCString("tether_pdl_freeze\n"), &k);
#if TETHER_MLIR_VERSION >= 22
  /* The names registered decide what MLIR compiles. */
  const tether_pdl_function *fn = fns;
  for (intptr_t i = 0; i < n; i++) {
    key_append(mlirStringRefCreateFromCString(fn[i].rewrite ? "rewrite " : "constraint "), &k);
    key_append(fn[i].name, &k);
    key_append(mlirStringRefCreateFromCString("\n"), &k);
  }
#endif
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsPrintGenericOpForm(f);
  mlirOpPrintingFlagsAssumeVerified(f);
  mlirOperationPrintWithFlags(module, f, key_append, &k);
  mlirOpPrintingFlagsDestroy(f);
  compile_call c = {module, fns, n, state};
  int safe = k.oom ? -1 : tether_probe(k.text, k.len, compile_in_child, &c);
  free(k.text);
  if (safe != 0) return 0;
  mlirEmitError(mlirOperationGetLocation(module),
                "MLIR crashes compiling these PDL patterns (tether compiled them in a child "
                "process first); they were not compiled");
  return 1;
}

/* A PDL rewrite builds operations from whatever the pattern says (an arith.muli with one operand,
 * an arith.constant without its value) and erases operations whose results are still used, and
 * MLIR's folders and inference then run on that IR in the same call, unverified: each application
 * is made in a child first (not cached: it depends on the whole IR). */
static void apply_in_child(void *ud) {
  const tether__apply *x = ud;
  tether__patterns_apply(x);
  /* MLIR 22's rewriter drops the uses of an operation erased while still used: the users are left
   * with null operands, which MLIR's printer and verifier then dereference. */
  if (tether__dropped_uses(x->op, 0)) child_answer(3);
}

int tether__patterns_crash(const tether__apply *x) {
  int r = in_child(apply_in_child, (void *)x, PATTERNS_TIMEOUT_MS);
  if (r == -1 || r == 1) return 0; /* -1: no child could be made; applied untried, as probes are */
  mlirEmitError(mlirOperationGetLocation(x->op),
                r == 3   ? "these patterns erase an operation whose results are still used (tether "
                           "applied them in a child process first): MLIR would leave its users "
                           "with operands that are gone; nothing was changed"
                : r == 0 ? "MLIR crashes applying these patterns to this IR (tether applied "
                           "them in a child process first): a rewrite builds an operation "
                           "MLIR's folders or inference cannot handle (operands or attributes "
                           "missing), or erases an operation whose results are still used; "
                           "nothing was changed"
                         : "applying these patterns to this IR did not finish within 120 s "
                           "in a trial run (tether applies them in a child process first; a "
                           "pattern that undoes another's rewrite never stops); nothing was "
                           "changed");
  return 1;
}

/* ---- bytecode -------------------------------------------------------------------------------- */

int tether_op_check_self_contained(tether_op *op) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  /* Both ways: the writer numbers what op uses, and records the order of each value's uses. */
  return tether__op_uses_outside(OP(h)) || tether__op_used_from_outside(OP(h)) ? TETHER_ESTATE
                                                                               : TETHER_OK;
}
