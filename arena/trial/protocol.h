/* protocol.h: what goes between the trial helper's client (client.c) and the helper (server.c).
 *
 * The protocol (one machine, native byte order): a request is a header (magic, kind, flags,
 * index, and the lengths of three sections) followed by the sections: the dialect
 * namespaces, one per line; the registered operation names, one per line (INFER: the operation
 * inferred); the text. The answer is one byte.
 */
#ifndef TETHER_TRIAL_PROTOCOL_H
#define TETHER_TRIAL_PROTOCOL_H

#include "trial.h"

#include <stdlib.h>

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

static inline void text_add(text_buf *b, const char *s, size_t n) {
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

static inline void text_add_ref(MlirStringRef s, void *ud) { text_add(ud, s.data, s.length); }

static inline void add_line(MlirStringRef s, void *ud) {
  text_add(ud, s.data, s.length);
  text_add(ud, "\n", 1);
}

/* server.c's side, which the client also runs in a forked child of its own when there is no
 * helper (a read of bytecode): the diagnostics collected while a request is served
 * (tether__trial_collect, a diagnostic handler), the read of bytecode and the answer sent. */
MlirLogicalResult tether__trial_collect(MlirDiagnostic d, void *ud);
int tether__trial_serve_read(MlirContext ctx, const request *q, MlirStringRef bytes);
int tether__trial_send_answer(int out, char answer);

#endif
