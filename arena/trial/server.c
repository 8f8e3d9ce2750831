/* server.c: the trial helper, the process `tether-trial` runs (main.c): it serves the requests of
 * client.c, one at a time, on a socket: it parses what it is sent, makes the call asked for, and
 * answers what it saw (protocol.h). Dying is an answer too ("crashes"); the client then starts a
 * fresh helper for the next request.
 *
 * Invariant: the helper is single-threaded and holds nothing of a request after answering it but
 * the context it reuses (renewed every REQUESTS_PER_CONTEXT requests); what may corrupt its heap
 * (a read of bytecode from outside) is made in a forked child of its own (guards/child.c), so
 * that its next verdicts stay sound; text it sends back is held to the caller's rules first
 * (guards' tether__text_refusal).
 */
#define _GNU_SOURCE /* close_range */
#include "protocol.h"
#include "../guards/guards.h"

#include <mlir-c/Interfaces.h>
#include <mlir-c/RegisterEverything.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* Where each operation of the parsed text starts (its location), by pre-order index: the helper's
 * diagnostics are sent with the index of the operation they are at, which the caller maps back to
 * its own operation and location. */
typedef struct {
  unsigned line, col;
  int64_t index;
} op_start;

static op_start *starts;
static size_t n_starts, cap_starts;
static text_buf report; /* the diagnostics of the request being served */
static int collecting;

static int cmp_start(const void *a, const void *b) {
  const op_start *x = a, *y = b;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  return (x->col > y->col) - (x->col < y->col);
}

static MlirWalkResult start_cb(MlirOperation op, void *ud) {
  int64_t *index = ud;
  unsigned line, col;
  if (tether__file_line_col(mlirOperationGetLocation(op), &line, &col)) {
    if (n_starts == cap_starts) {
      size_t ncap = cap_starts ? cap_starts * 2 : 256;
      op_start *n = realloc(starts, ncap * sizeof *n);
      if (!n) return MlirWalkResultInterrupt;
      starts = n;
      cap_starts = ncap;
    }
    starts[n_starts++] = (op_start){line, col, *index};
  }
  ++*index;
  return MlirWalkResultAdvance;
}

static int64_t index_at(MlirLocation loc) {
  unsigned line, col;
  if (!n_starts || !tether__file_line_col(loc, &line, &col)) return -1; /* bsearch: no NULL */
  op_start key = {line, col, 0};
  op_start *hit = bsearch(&key, starts, n_starts, sizeof key, cmp_start);
  return hit ? hit->index : -1;
}

static void put_u32(text_buf *b, uint32_t v) { text_add(b, (const char *)&v, sizeof v); }

static void put_record(uint32_t kind, MlirDiagnostic d) {
  put_u32(&report, kind);
  put_u32(&report, (uint32_t)mlirDiagnosticGetSeverity(d));
  int64_t index = index_at(mlirDiagnosticGetLocation(d));
  text_add(&report, (const char *)&index, sizeof index);
  size_t at = report.len;
  put_u32(&report, 0);
  size_t before = report.len;
  mlirDiagnosticPrint(d, text_add_ref, &report);
  if (report.oom) return;
  uint32_t len = (uint32_t)(report.len - before);
  memcpy(report.p + at, &len, sizeof len);
}

/* Records: kind (0 a diagnostic, 1 a note of the one before), severity, operation index (-1 when
 * at no operation), length, message. */
MlirLogicalResult tether__trial_collect(MlirDiagnostic d, void *ud) {
  (void)ud;
  if (!collecting || report.len > MAX_REPORT) return mlirLogicalResultSuccess();
  put_record(0, d);
  for (intptr_t i = 0, n = mlirDiagnosticGetNumNotes(d); i < n; i++)
    put_record(1, mlirDiagnosticGetNote(d, i));
  return mlirLogicalResultSuccess();
}

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static MlirContext helper_context(void) {
  MlirDialectRegistry reg = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(reg);
  MlirContext ctx = mlirContextCreateWithRegistry(reg, false);
  mlirDialectRegistryDestroy(reg);
  mlirContextAttachDiagnosticHandler(ctx, tether__trial_collect, NULL, NULL);
  return ctx;
}

/* Whether line is one of the lines of list[0..n). */
static bool listed(const char *list, size_t n, MlirStringRef line) {
  for (const char *p = list, *end = list + n; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (l == line.length && memcmp(p, line.data, l) == 0) return true;
    p += l + 1;
  }
  return false;
}

typedef struct {
  const char *ops;
  size_t ops_len;
  uint64_t want, seen;
  MlirOperation target;
  bool differs;
} check_walk;

static MlirWalkResult check_cb(MlirOperation op, void *ud) {
  check_walk *c = ud;
  if (c->seen++ == c->want) c->target = op;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (tether__op_is_registered(op) != listed(c->ops, c->ops_len, name)) {
    c->differs = true;
    return MlirWalkResultInterrupt;
  }
  return MlirWalkResultAdvance;
}

/* The answer to one request (TETHER__TRIAL_*). */
/* INFER: the text is the wrapper operation (tether__trial_infer); the inference is called on its
 * entry block's arguments and its `tether.attrs` dictionary, as tether_infer's child would. */
static int serve_infer(MlirContext ctx, const request *q, const char *name, MlirStringRef text) {
  MlirStringRef n = {name, (size_t)q->len[1]};
  bool shaped = q->flags & FLAG_SHAPED;
  MlirTypeID iface =
      shaped ? mlirInferShapedTypeOpInterfaceTypeID() : mlirInferTypeOpInterfaceTypeID();
  if (!n.length || !mlirContextIsRegisteredOperation(ctx, n) ||
      !mlirOperationImplementsInterfaceStatic(n, ctx, iface))
    return TETHER__TRIAL_DECLINED;
  MlirOperation root = tether__parse_unverified(ctx, text);
  if (mlirOperationIsNull(root)) return TETHER__TRIAL_DECLINED;
  int answer = TETHER__TRIAL_DECLINED;
  MlirBlock b = mlirOperationGetNumRegions(root) == 1
                    ? mlirRegionGetFirstBlock(mlirOperationGetRegion(root, 0))
                    : (MlirBlock){NULL};
  intptr_t na = mlirBlockIsNull(b) ? -1 : mlirBlockGetNumArguments(b);
  MlirValue *vals = na >= 0 ? calloc((size_t)na + 1, sizeof *vals) : NULL;
  if (vals) {
    for (intptr_t i = 0; i < na; i++) vals[i] = mlirBlockGetArgument(b, i);
    tether_infer_call c = {
        ctx,
        n,
        mlirLocationUnknownGet(ctx),
        na,
        vals,
        mlirOperationGetAttributeByName(root, mlirStringRefCreateFromCString("tether.attrs")),
        0,
        NULL,
        shaped};
    tether__infer_try(&c);
    answer = TETHER__TRIAL_RETURNED;
  }
  free(vals);
  mlirOperationDestroy(root);
  return answer;
}

/* Loads the dialects the request names (its first section): false when one cannot be. */
static bool load_dialects(MlirContext ctx, const request *q, const char *dialects) {
  for (const char *p = dialects, *end = dialects + q->len[0]; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (l && mlirDialectIsNull(mlirContextGetOrLoadDialect(ctx, (MlirStringRef){p, l})))
      return false;
    p += l + 1;
  }
  return true;
}

static text_buf back; /* BYTES: what a read of bytecode gave, written again */

/* PARSE with FLAG_READ: the bytecode is read here; what it gave is printed and held to the rules
 * text is held to in the caller (tether__text_refusal, against the caller's nesting limit), then
 * written again by MLIR's writer and sent back: the caller never reads bytecode from outside. A
 * read that fails answers FAILED with the reader's diagnostics. */
int tether__trial_serve_read(MlirContext ctx, const request *q, MlirStringRef bytes) {
  /* The reader wants its buffer aligned as the sections it holds (resource blobs: up to
   * TETHER_MAX_RESOURCE_ALIGNMENT, which text is held to); the request's sections are not. */
  void *copy = NULL;
  if (posix_memalign(&copy, TETHER_MAX_RESOURCE_ALIGNMENT, bytes.length + 1) != 0)
    return TETHER__TRIAL_DECLINED;
  memcpy(copy, bytes.data, bytes.length);
  ((char *)copy)[bytes.length] = 0;
  MlirStringRef t = {copy, bytes.length};
  n_starts = 0; /* no operations: the diagnostics are at none */
  collecting = 1;
  MlirOperation op = {NULL};
  if (q->index == TETHER_PARSE_MODULE) {
    MlirModule m = mlirModuleCreateParse(ctx, t);
    if (!mlirModuleIsNull(m)) op = mlirModuleGetOperation(m);
  } else {
    op = mlirOperationCreateParse(ctx, t, mlirStringRefCreateFromCString("-"));
  }
  collecting = 0;
  int answer = TETHER__TRIAL_FAILED;
  if (!mlirOperationIsNull(op)) {
    text_buf printed = {NULL, 0, 0, 0};
    MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsPrintGenericOpForm(f);
    mlirOpPrintingFlagsAssumeVerified(f);
    mlirOperationPrintWithFlags(op, f, text_add_ref, &printed);
    mlirOpPrintingFlagsDestroy(f);
    int refusal = printed.oom ? -1 : tether__text_refusal(printed.p, printed.len, q->limit, NULL);
    free(printed.p);
    if (refusal == 0) mlirOperationWriteBytecode(op, text_add_ref, &back);
    answer = refusal < 0 || back.oom ? TETHER__TRIAL_DECLINED
             : refusal == 1          ? TETHER__TRIAL_TOO_DEEP
             : refusal == 2          ? TETHER__TRIAL_TOO_ALIGNED
                                     : TETHER__TRIAL_BYTES;
    mlirOperationDestroy(op);
  }
  free(copy); /* after the IR read from it: blobs may point into it */
  return answer;
}

static int serve_one(MlirContext ctx, const request *q, const char *dialects, const char *ops,
                     const char *text) {
  mlirContextSetAllowUnregisteredDialects(ctx, q->flags & FLAG_ALLOW_UNREGISTERED);
  if (!load_dialects(ctx, q, dialects)) return TETHER__TRIAL_DECLINED;
  MlirStringRef t = {text, (size_t)q->len[2]};
  if (q->kind == TRIAL_PARSE) {
    switch (q->index) {
    case TETHER_PARSE_TYPE:
      mlirTypeParseGet(ctx, t);
      break;
    case TETHER_PARSE_ATTRIBUTE:
      mlirAttributeParseGet(ctx, t);
      break;
    case TETHER_PARSE_MODULE: {
      MlirModule m = mlirModuleCreateParse(ctx, t);
      if (!mlirModuleIsNull(m)) mlirModuleDestroy(m);
      break;
    }
    default: {
      MlirOperation op = mlirOperationCreateParse(ctx, t, mlirStringRefCreateFromCString("<t>"));
      if (!mlirOperationIsNull(op)) mlirOperationDestroy(op);
      break;
    }
    }
    tether__heap_shake(); /* a parser that corrupted the heap without crashing dies here */
    return TETHER__TRIAL_RETURNED;
  }
  if (q->kind == TRIAL_INFER) return serve_infer(ctx, q, ops, t);
  MlirOperation root = tether__parse_unverified(ctx, t);
  if (mlirOperationIsNull(root)) return TETHER__TRIAL_DECLINED;
  check_walk c = {ops, (size_t)q->len[1], q->index, 0, {NULL}, false};
  mlirOperationWalk(root, check_cb, &c, MlirWalkPreOrder);
  int answer = TETHER__TRIAL_DECLINED;
  if (!c.differs && !mlirOperationIsNull(c.target)) {
    int64_t index = 0;
    n_starts = 0;
    mlirOperationWalk(root, start_cb, &index, MlirWalkPreOrder);
    qsort(starts, n_starts, sizeof *starts, cmp_start);
    collecting = 1;
    answer = mlirOperationVerify(c.target) ? TETHER__TRIAL_RETURNED : TETHER__TRIAL_FAILED;
    collecting = 0;
  }
  mlirOperationDestroy(root);
  return answer;
}

/* A fresh context every so many requests: what the requests uniqued does not pile up. */
enum { REQUESTS_PER_CONTEXT = 500 };

/* Sends the answer; after FAILED, the length of the diagnostics and the diagnostics; after BYTES,
 * their length (8 bytes) and the bytes, sent from where they are. 1 when it was sent. */
int tether__trial_send_answer(int out, char answer) {
  text_buf reply = {NULL, 0, 0, 0};
  text_add(&reply, &answer, 1);
  if (answer == TETHER__TRIAL_FAILED) {
    uint32_t len = report.oom ? 0 : (uint32_t)report.len;
    put_u32(&reply, len);
    text_add(&reply, report.p, len);
  }
  uint64_t blen = back.len;
  if (answer == TETHER__TRIAL_BYTES) text_add(&reply, (const char *)&blen, sizeof blen);
  int ok = !reply.oom && write_all(out, reply.p, reply.len) == 0 &&
           (answer != TETHER__TRIAL_BYTES || write_all(out, back.p, back.len) == 0);
  free(reply.p);
  return ok;
}

/* A read of bytecode from outside is made in a child of the helper (a fork of this small,
 * single-threaded process), which answers itself: a reader that writes past its buffers and
 * returns corrupts the child's heap, not the helper's, whose next verdicts stay sound. */
static int read_in_child(MlirContext ctx, const request *q, const char *dialects,
                         MlirStringRef bytes, int out) {
  /* A helper killed for a hung read takes the read along. */
  pid_t pid = tether__child_fork(TETHER__CHILD_DIE_WITH_PARENT);
  if (pid == 0) {
    if (!load_dialects(ctx, q, dialects))
      _exit(tether__trial_send_answer(out, TETHER__TRIAL_DECLINED) ? 0 : 1);
    mlirContextSetAllowUnregisteredDialects(ctx, q->flags & FLAG_ALLOW_UNREGISTERED);
    _exit(tether__trial_send_answer(out, (char)tether__trial_serve_read(ctx, q, bytes)) ? 0 : 1);
  }
  if (pid < 0) return tether__trial_send_answer(out, TETHER__TRIAL_DECLINED);
  int status = tether__child_reap(pid, false);
  /* A child that died said nothing: its death is the answer. */
  if (WIFSIGNALED(status)) return tether__trial_send_answer(out, TETHER__TRIAL_DIED);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void *serve_loop(void *fds) {
  int in = ((int *)fds)[0], out = ((int *)fds)[1];
  MlirContext ctx = {NULL};
  const uint32_t hello[2] = {TRIAL_MAGIC, TETHER_MLIR_VERSION};
  if (write(out, hello, sizeof hello) != (ssize_t)sizeof hello) return NULL;
  for (unsigned served = 0;; served++) {
    request q;
    if (read_all(in, &q, sizeof q) != 0) break;
    if (q.magic != TRIAL_MAGIC || q.len[0] > MAX_SECTION || q.len[1] > MAX_SECTION ||
        q.len[2] > MAX_SECTION ||
        (q.kind != TRIAL_VERIFY && q.kind != TRIAL_PARSE && q.kind != TRIAL_INFER))
      break;
    size_t total = (size_t)(q.len[0] + q.len[1] + q.len[2]);
    char *body = malloc(total + 1);
    if (!body || read_all(in, body, total) != 0) {
      free(body);
      break;
    }
    body[total] = 0; /* MLIR's lexer reads the text up to a NUL, as a file's buffer has one */
    /* What this request may allocate: 64 bytes per byte it brought (IR read from text takes about
     * ten), at least TETHER__TRIAL_ROOM. */
    tether__child_limit_memory(total > TETHER__TRIAL_ROOM / 64 ? total * 64 : TETHER__TRIAL_ROOM);
    if (mlirContextIsNull(ctx) || served % REQUESTS_PER_CONTEXT == 0) {
      if (!mlirContextIsNull(ctx)) mlirContextDestroy(ctx);
      ctx = helper_context();
    }
    report.len = 0;
    report.oom = 0;
    back.len = 0;
    back.oom = 0;
    MlirStringRef text = {body + q.len[0] + q.len[1], (size_t)q.len[2]};
    int ok = q.kind == TRIAL_PARSE && (q.flags & FLAG_READ)
                 ? read_in_child(ctx, &q, body, text, out)
                 : tether__trial_send_answer(
                       out, (char)serve_one(ctx, &q, body, body + q.len[0], text.data));
    free(body);
    if (!ok) break;
  }
  if (!mlirContextIsNull(ctx)) mlirContextDestroy(ctx);
  return NULL;
}

/* MLIR's parser and verifier recurse once per nesting level: the helper works on a stack as large
 * as the deepest IR the arena lets a program build needs. */
#define HELPER_STACK ((size_t)256 << 20)

int tether_trial_serve(int in_fd, int out_fd) {
  signal(SIGPIPE, SIG_IGN);
  int fds[2] = {in_fd, out_fd};
  pthread_attr_t attr;
  pthread_t th;
  if (pthread_attr_init(&attr) != 0) return 1;
  pthread_attr_setstacksize(&attr, HELPER_STACK);
  int rc = pthread_create(&th, &attr, serve_loop, fds);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    serve_loop(fds);
    return 0;
  }
  pthread_join(th, NULL);
  return 0;
}
