/* trial.c: the trial helper, a process of its own that tries the calls MLIR may crash on.
 *
 * Some guards of crash_guards.c must make a call to learn whether MLIR survives it: the
 * verification of IR built by hand, a parse of text MLIR's parser is known to crash on. A forked
 * child of the caller can make that call, but a fork costs in proportion to the memory the process
 * holds (about 15 ms per GB) and the child of a multithreaded process inherits locks held by
 * threads it does not have. So those calls go first to the helper: the executable `tether-trial`
 * next to libtether_capi.so (or named by TETHER_TRIAL_HELPER), started once with posix_spawn (a
 * vfork: its cost does not grow with the caller), single-threaded, in a process group of its own
 * (a terminal's ^C does not reach it), fed text over a socket: the IR printed in MLIR's generic
 * form, which it parses without verifying, then verifies. It answers what it saw; dying is the
 * answer "crashes", and a fresh helper is started for the next request. When the IR verified
 * there, the caller verifies it itself (a verifier that passes read only what the operations
 * have); when it did not, the caller does not (a verifier of IR built by hand may read past what
 * an operation has, and what lies there differs between two processes) and emits the helper's
 * diagnostics instead (tether__trial_report_emit). A parse the helper survived is made here.
 *
 * A verdict is only as good as the copy. The helper has every upstream dialect; a request names
 * the dialects loaded in the caller's context and the registered operations it prints, and the
 * helper declines (no verdict) when it cannot load one of those dialects, when its registrations
 * differ (an operation a downstream extension registered), or when the text does not parse back
 * (IR the generic form cannot carry, such as a required property removed). Then, and when the
 * helper cannot be found or started, the caller falls back to a forked child (crash_guards.c,
 * in_child). docs/ownership.md, "Verifiers and parsers that crash".
 *
 * Return-type inference of a new call shape goes there too (tether_infer): the operands' types and
 * the attribute dictionary travel as the text of a wrapper operation whose entry block has one
 * argument per operand; the helper calls the same inference on those block arguments. It declines
 * calls with regions (their contents would have to travel too), and operations it does not
 * register or that do not implement the interface there.
 *
 * Bytecode from outside is read there and never in the caller (crash_guards.c,
 * tether__read_bytecode): the helper holds what it read to the caller's rules for text (nesting,
 * resource alignment) and answers BYTES followed by it written again by MLIR's writer, which the
 * caller reads.
 *
 * The protocol (one machine, native byte order): a request is a header (magic, kind, flags,
 * index, and the lengths of three sections) followed by the sections: the dialect
 * namespaces, one per line; the registered operation names, one per line (INFER: the operation
 * inferred); the text. The answer is one byte.
 */
#define _GNU_SOURCE /* dladdr, close_range */
#include "tether_internal.h"

#include <dlfcn.h>
#include <mlir-c/Interfaces.h>
#include <mlir-c/RegisterEverything.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlir_ext.h"

extern char **environ;

enum { TRIAL_MAGIC = 0x74726932 /* "tri2" */ };
enum { TRIAL_VERIFY = 1, TRIAL_PARSE = 2, TRIAL_INFER = 3 };
enum { FLAG_ALLOW_UNREGISTERED = 1, FLAG_SHAPED = 2, FLAG_READ = 4 };

typedef struct {
  uint32_t magic, kind, flags;
  uint32_t limit; /* PARSE with FLAG_READ: the nesting the caller's stack holds */
  uint64_t index; /* VERIFY: the operation to verify, in pre-order (0: the root); PARSE: the kind */
  uint64_t len[3];
} request;

/* How long a helper may take to start (load MLIR) and greet. */
#define HELLO_TIMEOUT_MS 10000

/* Diagnostics past this many bytes are not reported (MLIR stops a verification at its first
 * error; this bounds a verifier that reports without end). */
#define MAX_REPORT ((size_t)1 << 20)

/* Sections above this are not sent (the caller falls back to a child). */
#define MAX_SECTION ((uint64_t)1 << 31)

/* A growing buffer of bytes. */
typedef struct {
  char *p;
  size_t len, cap;
  int oom;
} text_buf;

static void text_add(text_buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t ncap = (b->len + n + 1) * 2;
    char *q = realloc(b->p, ncap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = ncap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
}

static void text_add_ref(MlirStringRef s, void *ud) { text_add(ud, s.data, s.length); }

static void add_line(MlirStringRef s, void *ud) {
  text_add(ud, s.data, s.length);
  text_add(ud, "\n", 1);
}

/* ---- the helper ------------------------------------------------------------------------------ */

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
static MlirLogicalResult collect(MlirDiagnostic d, void *ud) {
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
  mlirContextAttachDiagnosticHandler(ctx, collect, NULL, NULL);
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
static int serve_read(MlirContext ctx, const request *q, MlirStringRef bytes) {
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
static int send_answer(int out, char answer) {
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
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a helper killed for a hung read takes the read along */
    if (!load_dialects(ctx, q, dialects)) _exit(send_answer(out, TETHER__TRIAL_DECLINED) ? 0 : 1);
    mlirContextSetAllowUnregisteredDialects(ctx, q->flags & FLAG_ALLOW_UNREGISTERED);
    _exit(send_answer(out, (char)serve_read(ctx, q, bytes)) ? 0 : 1);
  }
  if (pid < 0) return send_answer(out, TETHER__TRIAL_DECLINED);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  /* A child that died said nothing: its death is the answer. */
  if (WIFSIGNALED(status)) return send_answer(out, TETHER__TRIAL_DIED);
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
                 : send_answer(out, (char)serve_one(ctx, &q, body, body + q.len[0], text.data));
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

/* ---- the client ------------------------------------------------------------------------------ */

atomic_long tether__trial_requests, tether__trial_starts; /* tether_get_global_stats */

static pthread_mutex_t helper_lock = PTHREAD_MUTEX_INITIALIZER;
static int helper_fd = -1;
static pid_t helper_pid;
static atomic_int helper_unavailable; /* no executable, or it cannot be started */
static char *helper_path;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* In a forked child the helper is the parent's: forgotten (the child starts its own). */
static void forget_in_child(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  helper_lock = fresh;
  if (helper_fd >= 0) close(helper_fd);
  helper_fd = -1;
  helper_pid = 0;
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, forget_in_child); }

/* dir/tether-trial, when dir (up to its last slash) holds an executable of that name. */
static char *helper_beside(const char *file) {
  const char *slash = file ? strrchr(file, '/') : NULL;
  size_t dir = slash ? (size_t)(slash - file) + 1 : 0;
  char *path = malloc(dir + sizeof "tether-trial");
  if (!path) return NULL;
  memcpy(path, file, dir);
  memcpy(path + dir, "tether-trial", sizeof "tether-trial");
  if (access(path, X_OK) == 0) return path;
  free(path);
  return NULL;
}

/* TETHER_TRIAL_HELPER (empty, 0 or off: none), else next to libtether_capi.so as the loader found
 * it (an installed package), else next to the file it is (a build tree reached by a link). */
static void find_helper(void) {
  const char *env = getenv("TETHER_TRIAL_HELPER");
  Dl_info info;
  if (env) {
    if (*env && strcmp(env, "0") && strcmp(env, "off") && access(env, X_OK) == 0)
      helper_path = strdup(env);
  } else if (dladdr((void *)tether_trial_serve, &info) && info.dli_fname) {
    helper_path = helper_beside(info.dli_fname);
    char *real = helper_path ? NULL : realpath(info.dli_fname, NULL);
    if (real) helper_path = helper_beside(real);
    free(real);
  }
  if (!helper_path) helper_unavailable = 1;
}

static void reap(void) {
  if (helper_fd >= 0) close(helper_fd);
  helper_fd = -1;
  if (helper_pid > 0) {
    kill(helper_pid, SIGKILL);
    while (waitpid(helper_pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  helper_pid = 0;
}

static int start_helper(void) {
  pthread_once(&atfork_once, register_atfork);
  if (!helper_path && !helper_unavailable) find_helper();
  if (helper_unavailable) return -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_init(&attr);
  sigset_t none, dflt;
  sigemptyset(&none);
  sigemptyset(&dflt);
  sigaddset(&dflt, SIGPIPE);
  sigaddset(&dflt, SIGSEGV);
  sigaddset(&dflt, SIGABRT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dflt);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  char *argv[] = {helper_path, "--serve", NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, helper_path, &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    helper_unavailable = 1;
    return -1;
  }
  atomic_fetch_add(&tether__trial_starts, 1);
  helper_fd = sv[0];
  helper_pid = pid;
  /* Its first words say it is a helper of this protocol and MLIR version: anything else named
   * by TETHER_TRIAL_HELPER (or a helper that cannot start) is not asked again. */
  uint32_t hello[2] = {0, 0};
  struct pollfd p = {helper_fd, POLLIN, 0};
  int r;
  do r = poll(&p, 1, HELLO_TIMEOUT_MS);
  while (r < 0 && errno == EINTR);
  if (r <= 0 || recv(helper_fd, hello, sizeof hello, MSG_WAITALL) != (ssize_t)sizeof hello ||
      hello[0] != TRIAL_MAGIC || hello[1] != TETHER_MLIR_VERSION) {
    reap();
    helper_unavailable = 1;
    return -1;
  }
  return 0;
}

static int send_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* How the helper ended, once its socket closed: TETHER__TRIAL_DIED when it died of the request
 * (a signal MLIR raises, or an exit: LLVM's fatal errors exit), -1 when something else ended it
 * (killed from outside, or reaped by someone else). */
static int helper_ending(void) {
  int status = 0;
  pid_t r;
  while ((r = waitpid(helper_pid, &status, 0)) < 0 && errno == EINTR) {
  }
  helper_pid = 0;
  close(helper_fd);
  helper_fd = -1;
  if (r < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) return -1;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT)
      return -1;
  }
  return TETHER__TRIAL_DIED;
}

/* One request to a running helper: its answer, TETHER__TRIAL_DIED, TETHER__TRIAL_HUNG, or -1 (it
 * could not be asked, or was ended from outside). */
static int recv_all(int fd, void *buf, size_t n) {
  return n == 0 || recv(fd, buf, n, MSG_WAITALL) == (ssize_t)n ? 0 : -1;
}

enum { ANSWER_EOF = -1, ANSWER_BAD = -2 };

/* Reads an answer (send_answer's) from fd, the diagnostics after FAILED and the bytecode after
 * BYTES into *report_out (when given; the bytecode needs it): the answer, ANSWER_EOF when nothing
 * came, ANSWER_BAD when what came is not an answer of this protocol or was cut short. */
static int read_answer(int fd, text_buf *report_out) {
  char got;
  ssize_t n;
  do n = read(fd, &got, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) return ANSWER_EOF;
  if (got < TETHER__TRIAL_DIED || got > TETHER__TRIAL_TOO_ALIGNED) return ANSWER_BAD;
  if (got == TETHER__TRIAL_BYTES) {
    /* The bytecode follows at once, into a buffer aligned as MLIR's reader wants it. */
    uint64_t len;
    void *data = NULL;
    if (!report_out || recv_all(fd, &len, sizeof len) != 0 || len > MAX_SECTION * 8 ||
        posix_memalign(&data, TETHER_MAX_RESOURCE_ALIGNMENT, (size_t)len + 1) != 0 ||
        recv_all(fd, data, (size_t)len) != 0) {
      free(data);
      return ANSWER_BAD;
    }
    report_out->p = data;
    report_out->len = (size_t)len;
    return got;
  }
  if (got != TETHER__TRIAL_FAILED) return got;
  /* The diagnostics follow at once. */
  uint32_t len;
  char *data = NULL;
  if (recv_all(fd, &len, sizeof len) != 0 || len > MAX_REPORT + 4096 ||
      (len && !(data = malloc(len))) || recv_all(fd, data, len) != 0) {
    free(data);
    return ANSWER_BAD;
  }
  if (report_out) {
    report_out->p = data;
    report_out->len = len;
  } else {
    free(data);
  }
  return got;
}

static int ask(const request *q, const char *const sections[3], int timeout_ms,
               text_buf *report_out) {
  /* A send fails only when the helper was gone before the request (it reads a whole request
   * before it works on it): -2, start another. */
  int sent = send_all(helper_fd, q, sizeof *q) == 0;
  for (int i = 0; i < 3 && sent; i++)
    sent = !q->len[i] || send_all(helper_fd, sections[i], (size_t)q->len[i]) == 0;
  if (!sent) {
    helper_ending();
    return -2;
  }
  struct pollfd p = {helper_fd, POLLIN, 0};
  int r;
  do r = poll(&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  if (r == 0) {
    reap();
    return TETHER__TRIAL_HUNG;
  }
  int got = read_answer(helper_fd, report_out);
  if (got == ANSWER_EOF) return helper_ending();
  if (got == ANSWER_BAD) {
    reap(); /* not an answer of this protocol, or cut short */
    helper_unavailable = 1;
    return -1;
  }
  return got;
}

/* A request; a helper that was gone before it (-2: the send failed) is restarted once. */
static int trial_request(uint32_t kind, uint32_t flags, uint32_t limit, uint64_t index,
                         const char *const sections[3], const size_t lens[3], int timeout_ms,
                         text_buf *report_out) {
  request q = {TRIAL_MAGIC, kind, flags, limit, index, {lens[0], lens[1], lens[2]}};
  for (int i = 0; i < 3; i++)
    if (lens[i] > MAX_SECTION) return -1;
  pthread_mutex_lock(&helper_lock);
  int r = -1;
  for (int attempt = 0; attempt < 2; attempt++) {
    if (helper_fd < 0 && start_helper() != 0) break;
    atomic_fetch_add(&tether__trial_requests, 1);
    r = ask(&q, sections, timeout_ms, report_out);
    if (r != -2) break;
    r = -1;
  }
  pthread_mutex_unlock(&helper_lock);
  return r;
}

/* ---- what a request says about the caller ---------------------------------------------------- */

/* The registered operation names of a walk, each once (names are uniqued: compared by pointer),
 * and the pre-order index of the target. */
typedef struct {
  text_buf names;
  const void **seen;
  size_t n_seen, cap_seen;
  MlirOperation target;
  uint64_t index, count;
  int found;
} name_walk;

static MlirWalkResult name_cb(MlirOperation op, void *ud) {
  name_walk *w = ud;
  if (!w->found && op.ptr == w->target.ptr) {
    w->index = w->count;
    w->found = 1;
  }
  w->count++;
  if (!tether__op_is_registered(op)) return MlirWalkResultAdvance;
  const void *id = mlirOperationGetName(op).ptr;
  for (size_t i = 0; i < w->n_seen; i++)
    if (w->seen[i] == id) return MlirWalkResultAdvance;
  if (w->n_seen == w->cap_seen) {
    size_t ncap = w->cap_seen ? w->cap_seen * 2 : 16;
    const void **n = realloc(w->seen, ncap * sizeof *n);
    if (!n) {
      w->names.oom = 1;
      return MlirWalkResultInterrupt;
    }
    w->seen = n;
    w->cap_seen = ncap;
  }
  w->seen[w->n_seen++] = id;
  add_line(mlirIdentifierStr(mlirOperationGetName(op)), &w->names);
  return MlirWalkResultAdvance;
}

int tether__trial_verify(MlirOperation root, MlirOperation target, int timeout_ms,
                         tether__trial_report *report) {
  if (helper_unavailable) return -1;
  MlirContext ctx = mlirOperationGetContext(root);
  text_buf dialects = {NULL, 0, 0, 0}, text = {NULL, 0, 0, 0};
  name_walk w = {{NULL, 0, 0, 0}, NULL, 0, 0, target, 0, 0, 0};
  tether__loaded_dialects(ctx, add_line, &dialects);
  mlirOperationWalk(root, name_cb, &w, MlirWalkPreOrder);
  free(w.seen);
  int r = -1;
  if (w.found) {
    /* The generic form, as MLIR prints IR it was told not to verify: no custom printer runs. */
    MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsPrintGenericOpForm(f);
    mlirOpPrintingFlagsAssumeVerified(f);
    mlirOperationPrintWithFlags(root, f, text_add_ref, &text);
    mlirOpPrintingFlagsDestroy(f);
    if (!dialects.oom && !w.names.oom && !text.oom) {
      const char *sections[3] = {dialects.p, w.names.p, text.p};
      size_t lens[3] = {dialects.len, w.names.len, text.len};
      uint32_t flags = mlirContextGetAllowUnregisteredDialects(ctx) ? FLAG_ALLOW_UNREGISTERED : 0;
      text_buf got = {NULL, 0, 0, 0};
      r = trial_request(TRIAL_VERIFY, flags, 0, w.index, sections, lens, timeout_ms, &got);
      if (report)
        *report = (tether__trial_report){got.p, got.len, root, target, {NULL}};
      else
        free(got.p);
    }
  }
  free(dialects.p);
  free(w.names.p);
  free(text.p);
  return r == TETHER__TRIAL_DECLINED ? -1 : r;
}

int tether__trial_parse(MlirContext ctx, tether_parse_kind kind, MlirStringRef text,
                        int timeout_ms) {
  if (helper_unavailable) return -1;
  text_buf dialects = {NULL, 0, 0, 0};
  tether__loaded_dialects(ctx, add_line, &dialects);
  int r = -1;
  if (!dialects.oom) {
    const char *sections[3] = {dialects.p, "", text.data};
    size_t lens[3] = {dialects.len, 0, text.length};
    uint32_t flags = mlirContextGetAllowUnregisteredDialects(ctx) ? FLAG_ALLOW_UNREGISTERED : 0;
    r = trial_request(TRIAL_PARSE, flags, 0, (uint64_t)kind, sections, lens, timeout_ms, NULL);
  }
  free(dialects.p);
  return r == TETHER__TRIAL_DECLINED ? -1 : r;
}

/* With no helper: the read the helper makes, in a forked child of this process that answers as
 * the helper would over a socket (its diagnostics collected, the bytecode written again); this
 * process still never reads the bytecode from outside. */
static int read_in_forked_child(MlirContext ctx, const request *q, MlirStringRef bytecode,
                                int timeout_ms, text_buf *got) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    /* As crash_guards.c's children: no core file, no output (a crash report, diagnostics). */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    close(sv[0]);
    tether__trial_child = 1;
    tether__silence_diagnostics();
    mlirContextAttachDiagnosticHandler(ctx, collect, NULL, NULL); /* before the silencer */
    mlirContextSetAllowUnregisteredDialects(ctx, q->flags & FLAG_ALLOW_UNREGISTERED);
    _exit(send_answer(sv[1], (char)serve_read(ctx, q, bytecode)) ? 0 : 1);
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return -1;
  }
  atomic_fetch_add(&tether__children, 1);
  struct pollfd p = {sv[0], POLLIN, 0};
  int r;
  do r = poll(&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  int answer = r == 0 ? TETHER__TRIAL_HUNG : read_answer(sv[0], got);
  close(sv[0]);
  if (answer < 0 || answer == TETHER__TRIAL_HUNG) kill(pid, SIGKILL);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return answer == ANSWER_EOF ? TETHER__TRIAL_DIED : answer == ANSWER_BAD ? -1 : answer;
}

int tether__trial_read(MlirContext ctx, tether_parse_kind kind, MlirStringRef bytecode,
                       size_t limit, int timeout_ms, char **out, size_t *out_len,
                       tether__trial_report *report) {
  text_buf got = {NULL, 0, 0, 0};
  uint32_t lim = limit > UINT32_MAX ? UINT32_MAX : (uint32_t)limit;
  uint32_t flags =
      FLAG_READ | (mlirContextGetAllowUnregisteredDialects(ctx) ? FLAG_ALLOW_UNREGISTERED : 0);
  int r = -1;
  if (!helper_unavailable) {
    text_buf dialects = {NULL, 0, 0, 0};
    tether__loaded_dialects(ctx, add_line, &dialects);
    if (!dialects.oom) {
      const char *sections[3] = {dialects.p, "", bytecode.data};
      size_t lens[3] = {dialects.len, 0, bytecode.length};
      r = trial_request(TRIAL_PARSE, flags, lim, (uint64_t)kind, sections, lens, timeout_ms, &got);
    }
    free(dialects.p);
  }
  if (r < 0 || r == TETHER__TRIAL_DECLINED) {
    free(got.p);
    got = (text_buf){NULL, 0, 0, 0};
    request q = {TRIAL_MAGIC, TRIAL_PARSE, flags, lim, (uint64_t)kind, {0, 0, bytecode.length}};
    r = read_in_forked_child(ctx, &q, bytecode, timeout_ms, &got);
  }
  if (r == TETHER__TRIAL_BYTES) {
    *out = got.p;
    *out_len = got.len;
  } else if (r == TETHER__TRIAL_FAILED) {
    *report = (tether__trial_report){got.p, got.len, {NULL}, {NULL}, {NULL}};
  } else {
    free(got.p);
  }
  return r == TETHER__TRIAL_DECLINED || r == TETHER__TRIAL_RETURNED ? -1 : r;
}

static void print_to(MlirStringRef s, void *ud) { text_add(ud, s.data, s.length); }

int tether__trial_infer(const tether_infer_call *c, int timeout_ms) {
  if (helper_unavailable || c->n_regions > 0) return -1;
  text_buf dialects = {NULL, 0, 0, 0}, text = {NULL, 0, 0, 0};
  tether__loaded_dialects(c->ctx, add_line, &dialects);
  static const char head[] = "\"tether_trial.infer\"() ({\n";
  text_add(&text, head, sizeof head - 1);
  if (c->n_operands > 0) {
    text_add(&text, "^bb0(", 5);
    for (intptr_t i = 0; i < c->n_operands; i++) {
      char arg[32];
      int l = snprintf(arg, sizeof arg, "%s%%a%ld: ", i ? ", " : "", (long)i);
      text_add(&text, arg, (size_t)l);
      mlirTypePrint(mlirValueGetType(c->operands[i]), print_to, &text);
    }
    text_add(&text, "):\n", 3);
  }
  static const char end[] = "  \"tether_trial.end\"() : () -> ()\n})";
  text_add(&text, end, sizeof end - 1);
  if (!mlirAttributeIsNull(c->attributes)) {
    text_add(&text, " {tether.attrs = ", 17);
    mlirAttributePrint(c->attributes, print_to, &text);
    text_add(&text, "}", 1);
  }
  text_add(&text, " : () -> ()\n", 12);
  int r = -1;
  if (!dialects.oom && !text.oom) {
    const char *sections[3] = {dialects.p, c->name.data, text.p};
    size_t lens[3] = {dialects.len, c->name.length, text.len};
    uint32_t flags = FLAG_ALLOW_UNREGISTERED | (c->shaped ? FLAG_SHAPED : 0);
    r = trial_request(TRIAL_INFER, flags, 0, 0, sections, lens, timeout_ms, NULL);
  }
  free(dialects.p);
  free(text.p);
  return r == TETHER__TRIAL_DECLINED ? -1 : r;
}

/* ---- the helper's diagnostics, in the caller ------------------------------------------------- */

typedef struct {
  MlirOperation *ops;
  size_t n, cap;
} op_list;

static MlirWalkResult list_cb(MlirOperation op, void *ud) {
  op_list *l = ud;
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 256;
    MlirOperation *n = realloc(l->ops, ncap * sizeof *n);
    if (!n) return MlirWalkResultInterrupt;
    l->ops = n;
    l->cap = ncap;
  }
  l->ops[l->n++] = op;
  return MlirWalkResultAdvance;
}

typedef struct {
  uint32_t kind, severity;
  int64_t index;
  MlirStringRef text;
} record;

/* The record at *at of r, advancing *at; false at the end or on a malformed record. */
static bool next_record(const tether__trial_report *r, size_t *at, record *out) {
  enum { HEAD = 3 * sizeof(uint32_t) + sizeof(int64_t) };
  if (r->len - *at < HEAD) return false;
  const char *p = r->data + *at;
  uint32_t len;
  memcpy(&out->kind, p, 4);
  memcpy(&out->severity, p + 4, 4);
  memcpy(&out->index, p + 8, 8);
  memcpy(&len, p + 16, 4);
  if (r->len - *at - HEAD < len) return false;
  out->text = (MlirStringRef){p + HEAD, len};
  *at += HEAD + len;
  return true;
}

void tether__trial_report_emit(tether__trial_report *r) {
  op_list l = {NULL, 0, 0};
  if (!mlirOperationIsNull(r->root)) mlirOperationWalk(r->root, list_cb, &l, MlirWalkPreOrder);
  MlirLocation fallback =
      mlirOperationIsNull(r->root) ? r->at : mlirOperationGetLocation(r->target);
  size_t at = 0;
  record rec;
  bool more = next_record(r, &at, &rec);
  int emitted = 0;
  while (more) {
    record head = rec;
    /* Its notes: the records of kind 1 after it. */
    MlirLocation note_locs[16];
    MlirStringRef notes[16];
    intptr_t n = 0;
    while ((more = next_record(r, &at, &rec)) && rec.kind == 1)
      if (n < 16) {
        note_locs[n] = rec.index >= 0 && (size_t)rec.index < l.n
                           ? mlirOperationGetLocation(l.ops[rec.index])
                           : fallback;
        notes[n++] = rec.text;
      }
    MlirLocation loc = head.index >= 0 && (size_t)head.index < l.n
                           ? mlirOperationGetLocation(l.ops[head.index])
                           : fallback;
    tether__emit_diagnostic(loc, (int)head.severity, head.text, n, note_locs, notes);
    emitted += head.severity == MlirDiagnosticError;
  }
  if (!emitted) /* the helper's report was lost (no memory): still an error */
    mlirEmitError(fallback, mlirOperationIsNull(r->root)
                                ? "the bytecode could not be read (in tether's trial helper)"
                                : "this operation does not verify (in tether's trial helper)");
  free(l.ops);
}

void tether__trial_report_free(tether__trial_report *r) {
  free(r->data);
  r->data = NULL;
  r->len = 0;
}
