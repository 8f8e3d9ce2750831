/* client.c: the trial helper as libtether uses it: a process of its own that tries the calls MLIR
 * may crash on (the helper itself is server.c; what goes over the socket, protocol.h).
 *
 * Some guards (guards/) must make a call to learn whether MLIR survives it: the
 * verification of IR built by hand, a parse of text MLIR's parser is known to crash on. A forked
 * child of the caller can make that call, but a fork costs in proportion to the memory the process
 * holds (about 15 ms per GB) and the child of a multithreaded process inherits locks held by
 * threads it does not have. So those calls go first to the helper: the executable `tether-trial`
 * next to libtether_capi.so (or named by TETHER_TRIAL_HELPER), started once (guards/child.c: a
 * vfork whose cost does not grow with the caller), single-threaded, in a process group of its own
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
 * helper cannot be found or started, the caller falls back to a forked child (guards/child.c,
 * tether__in_child). docs/ownership.md, "Verifiers and parsers that crash".
 *
 * Return-type inference of a new call shape goes there too (tether_infer): the operands' types and
 * the attribute dictionary travel as the text of a wrapper operation whose entry block has one
 * argument per operand; the helper calls the same inference on those block arguments. It declines
 * calls with regions (their contents would have to travel too), and operations it does not
 * register or that do not implement the interface there.
 *
 * Bytecode from outside is read there and never in the caller (guards/text_guards.c,
 * tether__read_bytecode): the helper holds what it read to the caller's rules for text (nesting,
 * resource alignment) and answers BYTES followed by it written again by MLIR's writer, which the
 * caller reads.
 */
#define _GNU_SOURCE /* dladdr */
#include "protocol.h"
#include "../guards/guards.h"

#include <dlfcn.h>
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
  if (helper_pid > 0) tether__child_reap(helper_pid, true);
  helper_pid = 0;
}

static int start_helper(void) {
  pthread_once(&atfork_once, register_atfork);
  if (!helper_path && !helper_unavailable) find_helper();
  if (helper_unavailable) return -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  char *argv[] = {helper_path, "--serve", NULL};
  pid_t pid = tether__child_spawn(helper_path, argv, sv[1]);
  close(sv[1]);
  if (pid < 0) {
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
  pid_t pid = tether__child_fork(TETHER__CHILD_QUIET);
  if (pid == 0) {
    close(sv[0]);
    mlirContextAttachDiagnosticHandler(ctx, tether__trial_collect, NULL,
                                       NULL); /* before the silencer */
    mlirContextSetAllowUnregisteredDialects(ctx, q->flags & FLAG_ALLOW_UNREGISTERED);
    _exit(tether__trial_send_answer(sv[1], (char)tether__trial_serve_read(ctx, q, bytecode)) ? 0
                                                                                             : 1);
  }
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    return -1;
  }
  int r = tether__child_poll(sv[0], timeout_ms);
  int answer = r == 0 ? TETHER__TRIAL_HUNG : read_answer(sv[0], got);
  close(sv[0]);
  tether__child_reap(pid, answer < 0 || answer == TETHER__TRIAL_HUNG);
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
