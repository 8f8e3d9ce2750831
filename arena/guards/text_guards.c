/* text_guards.c: texts and bytecode before MLIR parses them (verdicts.c has the map of the guards):
 * parsers MLIR crashes in, text nested deeper than the stack holds, resource blobs with an
 * alignment MLIR cannot honour, bytecode read by the trial helper.
 *
 * Invariant: no text reaches MLIR's parser (through tether's parses or tether_parse_check) that a
 * check here refuses; bytecode from outside is never read in this process, only what MLIR's own
 * writer made of what the helper (or a child) read.
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

/* Where needle occurs in text[0..len), or NULL. glibc's memmem (two-way, vectorized) for long
 * texts: a module's whole text is scanned on every parse; its set-up costs more than the whole
 * search in a type's or attribute's text (about 200 instructions a call), which memchr on the
 * first byte does instead. */
static const char *find(const char *text, size_t len, const char *needle, size_t nlen) {
  if (len >= 256) return memmem(text, len, needle, nlen);
  if (!nlen) return text;
  for (const char *p = text, *end = text + len; (size_t)(end - p) >= nlen; p++) {
    if (!(p = memchr(p, needle[0], (size_t)(end - p) - nlen + 1))) return NULL;
    if (!memcmp(p, needle, nlen)) return p;
  }
  return NULL;
}

static bool mentions(const char *text, size_t len, const char *needle) {
  return find(text, len, needle, strlen(needle)) != NULL;
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
  return tether__trial_parse(c->ctx, c->kind, c->text, TETHER__PROBE_TIMEOUT_MS);
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
  const char *meta = find(t, n, "{-#", 3);
  if (!meta) return 0;
  for (const char *p = meta, *end = t + n; (p = find(p, (size_t)(end - p), "\"0x", 3)); p += 3) {
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
  size_t ms = TETHER__PROBE_TIMEOUT_MS + len / (8u << 20) * 1000u;
  return ms > 600000 ? 600000 : (int)ms;
}

int tether__text_refusal(const char *text, size_t len, size_t limit, uint64_t *align) {
  /* Each level opens with a byte of its own: a text no longer than the limit cannot exceed it. */
  if (len > limit && nesting_depth(text, len, limit) > limit) return 1;
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
  if (r < 0) r = tether__in_child(parse_in_child, &c, timeout);
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
  tether__key k;
  TETHER__KEY_INIT(k);
  tether__key_put(&k, 0x70726f6265ull); /* tether_probe's key space: the same verdicts */
  tether__key_put_str(&k, (MlirStringRef){key, klen});
  free(key);
  int safe = tether__cached_verdict(&k, parse_by_helper, parse_in_child, &c);
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
