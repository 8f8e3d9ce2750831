/* Small containers and file helpers for tether-lint.
 *
 * Invariant: every function leaves its container valid on failure (out of memory leaves the
 * previous contents untouched), and a tether__buf that was written to is NUL-terminated. */
#include "lint/lint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *tether__strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

int tether__strlist_push(tether__strlist *l, const char *s) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 8;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
  }
  char *c = tether__strdup(s);
  if (!c) return -1;
  l->v[l->n++] = c;
  return 0;
}

int tether__strlist_has(const tether__strlist *l, const char *s) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i], s) == 0) return 1;
  return 0;
}

int tether__strlist_add_unique(tether__strlist *l, const char *s) {
  return tether__strlist_has(l, s) ? 0 : tether__strlist_push(l, s);
}

void tether__strlist_free(tether__strlist *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

static int buf_reserve(tether__buf *b, size_t extra) {
  if (b->n + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

int tether__buf_put(tether__buf *b, const char *s, size_t n) {
  if (buf_reserve(b, n) != 0) return -1;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
  return 0;
}

int tether__buf_puts(tether__buf *b, const char *s) { return tether__buf_put(b, s, strlen(s)); }

int tether__buf_printf(tether__buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || buf_reserve(b, (size_t)n) != 0) return -1;
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
  return 0;
}

void tether__buf_free(tether__buf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

int tether__read_file(const char *path, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return errno ? errno : EIO;
  tether__buf b = {0};
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (tether__buf_put(&b, chunk, got) != 0) {
      fclose(f);
      tether__buf_free(&b);
      return ENOMEM;
    }
  }
  int failed = ferror(f);
  int e = errno;
  fclose(f);
  if (failed) {
    tether__buf_free(&b);
    return e ? e : EIO;
  }
  if (!b.p && tether__buf_put(&b, "", 0) != 0) return ENOMEM;
  *out = b.p;
  *len = b.n;
  return 0;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid. */
static size_t utf8_seq(const unsigned char *s) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return n;
}

char *tether__utf8_clean(const char *s) {
  tether__buf b = {0};
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t n = utf8_seq(p);
    if (n == 0) {
      if (tether__buf_puts(&b, "\xEF\xBF\xBD") != 0) goto oom;
      p++;
    } else {
      if (tether__buf_put(&b, (const char *)p, n) != 0) goto oom;
      p += n;
    }
  }
  if (!b.p && tether__buf_put(&b, "", 0) != 0) goto oom;
  return b.p;
oom:
  tether__buf_free(&b);
  return NULL;
}
