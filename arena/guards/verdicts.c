/* verdicts.c, with text_guards.c and ir_guards.c: what keeps MLIR from crashing on input its C API
 * gives no way to check. This file: the keys and the process-wide cache of verdicts, inference and
 * probes; text_guards.c: texts and bytecode before MLIR parses them; ir_guards.c: IR before MLIR
 * verifies, prints or runs passes on it.
 *
 * Invariant: libtether hands MLIR nothing a guard here knows to crash it. Where only the call
 * itself can tell (MLIR 19 aborts, or reads operands, regions or parents that are not there, and
 * no API says what a call needs), the call is first made in a forked child (in_child: no output,
 * no core file, a time limit), and made for real only when the child returned. A verdict is
 * cached under a key that determines it: process-wide for inference, probes, parsers and orphan
 * verifiers (keys of TypeIDs, names and texts, which outlive contexts), per arena for the shapes
 * of operations a child verified. The children are child.c's (the one file that forks).
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
#include "guards.h"
#include "../trial/trial.h"

#include <errno.h>
#include <fcntl.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Interfaces.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- keys and the process-wide cache of verdicts --------------------------------------------- */

void tether__key_free(tether__key *k) {
  if (k->w != k->small) free(k->w);
}

void tether__key_put(tether__key *k, uintptr_t x) {
  if (k->oom) return;
  if (k->n == k->cap) {
    size_t ncap = k->cap * 2;
    uintptr_t *p = malloc(ncap * sizeof *p);
    if (!p) {
      k->oom = 1;
      return;
    }
    memcpy(p, k->w, k->n * sizeof *p);
    tether__key_free(k);
    k->w = p;
    k->cap = ncap;
  }
  k->w[k->n++] = x;
}

/* The length, then the bytes a word at a time (the last one zero-padded). */
void tether__key_put_str(tether__key *k, MlirStringRef s) {
  tether__key_put(k, s.length);
  size_t i = 0;
  for (; i + sizeof(uintptr_t) <= s.length; i += sizeof(uintptr_t)) {
    uintptr_t x;
    memcpy(&x, s.data + i, sizeof x);
    tether__key_put(k, x);
  }
  uintptr_t x = 0;
  if (s.length > i) memcpy(&x, s.data + i, s.length - i);
  tether__key_put(k, x);
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
 * cached, 2 (hung) as 0; -1 (no child, or no memory for the key) is not. */
int tether__cached_verdict(tether__key *k, int (*helper)(void *), void (*fn)(void *), void *ud) {
  if (k->oom) {
    tether__key_free(k);
    return -1;
  }
  uint64_t h = hash_key(k->w, k->n);
  int r = cache_get(h, k->w, k->n);
  if (r < 0) {
    r = helper ? helper(ud) : -1;
    if (r < 0) r = tether__in_child(fn, ud, TETHER__PROBE_TIMEOUT_MS);
    if (r == TETHER__TRIAL_FAILED) r = TETHER__TRIAL_RETURNED; /* a verifier that returned */
    /* A hang is cached as a death (every caller refuses both): the same call gets the same
     * answer for the rest of the process, where a retry could find the next trial finishing in
     * time on a less loaded machine (inference that reads a garbage rank builds a type of
     * millions of dimensions: refused or made depending on the load). */
    if (r == 0 || r == 1 || r == 2) cache_put(h, k->w, k->n, r == 2 ? 0 : r);
  }
  tether__key_free(k);
  return r;
}

int tether__cached_trial(tether__key *k, void (*fn)(void *), void *ud) {
  return tether__cached_verdict(k, NULL, fn, ud);
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

static void put_region(tether__key *k, MlirRegion r) {
  intptr_t nblocks = 0;
  MlirBlock first = mlirRegionGetFirstBlock(r);
  for (MlirBlock b = first; !mlirBlockIsNull(b) && nblocks < 2; b = mlirBlockGetNextInRegion(b))
    nblocks++;
  tether__key_put(k, (uintptr_t)nblocks);
  if (mlirBlockIsNull(first)) return;
  tether__key_put(k, (uintptr_t)mlirBlockGetNumArguments(first));
  MlirOperation term = mlirBlockGetTerminator(first);
  if (mlirOperationIsNull(term)) {
    tether__key_put(k, 0);
    return;
  }
  tether__key_put_str(k, mlirIdentifierStr(mlirOperationGetName(term)));
  intptr_t n = mlirOperationGetNumOperands(term);
  tether__key_put(k, (uintptr_t)n);
  for (intptr_t i = 0; i < n; i++)
    tether__key_put(
        k, (uintptr_t)mlirTypeGetTypeID(mlirValueGetType(mlirOperationGetOperand(term, i))).ptr);
}

static void make_infer_key(tether__key *k, const tether_infer_call *c) {
  tether__key_put(k, (uintptr_t)c->shaped);
  tether__key_put_str(k, c->name);
  tether__key_put(k, (uintptr_t)c->n_operands);
  for (intptr_t i = 0; i < c->n_operands; i++)
    tether__key_put(k, (uintptr_t)mlirTypeGetTypeID(mlirValueGetType(c->operands[i])).ptr);
  intptr_t na =
      mlirAttributeIsNull(c->attributes) ? 0 : mlirDictionaryAttrGetNumElements(c->attributes);
  tether__key_put(k, (uintptr_t)na);
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
      tether__key_put_str(k, mlirIdentifierStr(v[i].name));
      tether__key_put(k, (uintptr_t)mlirAttributeGetTypeID(v[i].attribute).ptr);
    }
    if (v != few) free(v);
  }
  tether__key_put(k, (uintptr_t)c->n_regions);
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

static int infer_by_helper(void *c) { return tether__trial_infer(c, TETHER__PROBE_TIMEOUT_MS); }

static bool infer_is_safe(const tether_infer_call *c) {
  static int no_probe = -1; /* read once */
  if (no_probe < 0) no_probe = getenv("TETHER_NO_INFER_PROBE") != NULL;
  if (no_probe) return true;
  tether__key k;
  TETHER__KEY_INIT(k);
  make_infer_key(&k, c);
  if (k.oom) {
    tether__key_free(&k);
    return false;
  }
  int r = tether__cached_verdict(&k, infer_by_helper, infer_in_child, (void *)c);
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
  tether__key k;
  TETHER__KEY_INIT(k);
  tether__key_put(&k, 0x70726f6265ull); /* "probe": its own key space */
  tether__key_put_str(&k, (MlirStringRef){(const char *)key, key_len});
  int r = tether__cached_trial(&k, fn, user);
  return r == 2 ? 0 : r;
}
