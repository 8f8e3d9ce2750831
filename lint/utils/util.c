/* Small containers, hashing, escaping and serialization helpers for tether-lint.
 *
 * Invariant: every function leaves its container valid on failure (out of memory leaves the
 * previous contents untouched), and a tether_lint__buf that was written to is NUL-terminated. Files
 * are read in safe_read.c, never here. */
#include "lint/lint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tether_lint__strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

int tether_lint__grow(void *array, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 8;
  if (nc > SIZE_MAX / size) return -1;
  void *old;
  memcpy(&old, array, sizeof old);
  void *v = realloc(old, nc * size);
  if (!v) return -1;
  memcpy(array, &v, sizeof v);
  *cap = nc;
  return 0;
}

int tether_lint__strlist_push(tether_lint__strlist *l, const char *s) {
  if (tether_lint__grow(&l->v, &l->cap, l->n, sizeof *l->v) != 0) return -1;
  char *c = tether_lint__strdup(s);
  if (!c) return -1;
  l->v[l->n++] = c;
  return 0;
}

int tether_lint__strlist_has(const tether_lint__strlist *l, const char *s) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i], s) == 0) return 1;
  return 0;
}

int tether_lint__strlist_add_unique(tether_lint__strlist *l, const char *s) {
  return tether_lint__strlist_has(l, s) ? 0 : tether_lint__strlist_push(l, s);
}

void tether_lint__strlist_free(tether_lint__strlist *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

int tether_lint__ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void tether_lint__strlist_sort(tether_lint__strlist *l) {
  if (l->n > 1) qsort(l->v, l->n, sizeof *l->v, str_cmp);
}

static int buf_reserve(tether_lint__buf *b, size_t extra) {
  if (b->n + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

int tether_lint__buf_put(tether_lint__buf *b, const char *s, size_t n) {
  if (buf_reserve(b, n) != 0) return -1;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
  return 0;
}

int tether_lint__buf_puts(tether_lint__buf *b, const char *s) {
  return tether_lint__buf_put(b, s, strlen(s));
}

int tether_lint__buf_printf(tether_lint__buf *b, const char *fmt, ...) {
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

void tether_lint__buf_free(tether_lint__buf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
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

char *tether_lint__utf8_clean(const char *s) {
  tether_lint__buf b = {0};
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    size_t n = utf8_seq(p);
    if (n == 0) {
      if (tether_lint__buf_puts(&b, "\xEF\xBF\xBD") != 0) goto oom;
      p++;
    } else {
      if (tether_lint__buf_put(&b, (const char *)p, n) != 0) goto oom;
      p += n;
    }
  }
  if (!b.p && tether_lint__buf_put(&b, "", 0) != 0) goto oom;
  return b.p;
oom:
  tether_lint__buf_free(&b);
  return NULL;
}

/* ---- escaping for line-oriented output ------------------------------------------------------ */

int tether_lint__buf_put_escaped(tether_lint__buf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    /* Copy the longest stretch that needs no escaping in one call. */
    const unsigned char *run = p;
    for (;;) {
      if (*p >= 0x20 && *p < 0x7f) {
        p++;
        continue;
      }
      if (*p < 0x80) break; /* NUL, C0 or DEL */
      size_t n = utf8_seq(p);
      if (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f) break; /* C1 control, U+0080..U+009F */
      if (n == 0 && *p <= 0x9f) break;                   /* a lone byte a terminal reads as C1 */
      p += n ? n : 1;
    }
    if (p > run && tether_lint__buf_put(b, (const char *)run, (size_t)(p - run)) != 0) return -1;
    if (!*p) break;
    char esc[8];
    size_t n = 2;
    esc[0] = '\\';
    if (*p == 0xc2) {
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex[p[1] >> 4];
      esc[5] = hex[p[1] & 15];
      n = 6;
      p += 2;
    } else {
      switch (*p) {
      case '\n':
        esc[1] = 'n';
        break;
      case '\r':
        esc[1] = 'r';
        break;
      case '\t':
        esc[1] = 't';
        break;
      default:
        esc[1] = 'x';
        esc[2] = hex[*p >> 4];
        esc[3] = hex[*p & 15];
        n = 4;
      }
      p++;
    }
    if (tether_lint__buf_put(b, esc, n) != 0) return -1;
  }
  if (!b->p && tether_lint__buf_put(b, "", 0) != 0) return -1;
  return 0;
}

int tether_lint__fputs_escaped(const char *s, FILE *out) {
  tether_lint__buf b = {0};
  if (tether_lint__buf_put_escaped(&b, s) != 0) return -1;
  int rc = fputs(b.p, out) < 0 ? -1 : 0;
  tether_lint__buf_free(&b);
  return rc;
}

/* ---- SHA-256 (FIPS 180-4) ------------------------------------------------------------------- */

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 =
        k + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
    uint32_t t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

void tether_lint__sha256_init(tether_lint__sha256 *s) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, h0, sizeof h0);
  s->len = 0;
  s->nbuf = 0;
}

void tether_lint__sha256_update(tether_lint__sha256 *s, const void *data, size_t n) {
  const unsigned char *p = data;
  s->len += n;
  if (s->nbuf && n) {
    size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
    memcpy(s->buf + s->nbuf, p, take);
    s->nbuf += take;
    p += take;
    n -= take;
    if (s->nbuf < 64) return;
    sha_block(s->h, s->buf);
    s->nbuf = 0;
  }
  for (; n >= 64; n -= 64, p += 64) sha_block(s->h, p);
  if (n) memcpy(s->buf, p, n);
  s->nbuf = n;
}

void tether_lint__sha256_final(tether_lint__sha256 *s, unsigned char out[32]) {
  uint64_t bits = s->len * 8;
  unsigned char pad[72] = {0x80};
  size_t padn = (s->nbuf < 56 ? 56 : 120) - s->nbuf;
  for (int i = 0; i < 8; i++) pad[padn + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
  uint64_t keep = s->len;
  tether_lint__sha256_update(s, pad, padn + 8);
  s->len = keep;
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (unsigned char)(s->h[i] >> 24);
    out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
    out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
    out[4 * i + 3] = (unsigned char)s->h[i];
  }
}

void tether_lint__sha256_of(const void *data, size_t n, unsigned char out[32]) {
  tether_lint__sha256 s;
  tether_lint__sha256_init(&s);
  tether_lint__sha256_update(&s, data, n);
  tether_lint__sha256_final(&s, out);
}

void tether_lint__hex(const unsigned char *d, size_t n, char *out) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  out[2 * n] = '\0';
}

/* ---- serialization: little-endian integers and length-prefixed strings --------------------- */

int tether_lint__buf_put_u32(tether_lint__buf *b, uint32_t v) {
  unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  return tether_lint__buf_put(b, (const char *)c, 4);
}

int tether_lint__buf_put_u64(tether_lint__buf *b, uint64_t v) {
  return tether_lint__buf_put_u32(b, (uint32_t)v) ||
                 tether_lint__buf_put_u32(b, (uint32_t)(v >> 32))
             ? -1
             : 0;
}

int tether_lint__buf_put_bytes(tether_lint__buf *b, const void *p, size_t n) {
  if (n > UINT32_MAX) return -1;
  if (tether_lint__buf_put_u32(b, (uint32_t)n) != 0) return -1;
  return tether_lint__buf_put(b, p ? (const char *)p : "", n);
}

int tether_lint__buf_put_str(tether_lint__buf *b, const char *s) {
  return tether_lint__buf_put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

int tether_lint__write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

uint32_t tether_lint__rd_u32(tether_lint__rd *r) {
  if (r->bad || r->n - r->off < 4) {
    r->bad = 1;
    return 0;
  }
  const unsigned char *c = r->p + r->off;
  r->off += 4;
  return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

uint64_t tether_lint__rd_u64(tether_lint__rd *r) {
  uint64_t lo = tether_lint__rd_u32(r);
  uint64_t hi = tether_lint__rd_u32(r);
  return lo | hi << 32;
}

const char *tether_lint__rd_bytes(tether_lint__rd *r, size_t *len) {
  uint32_t n = tether_lint__rd_u32(r);
  if (r->bad || r->n - r->off < n) {
    r->bad = 1;
    *len = 0;
    return NULL;
  }
  const char *s = (const char *)r->p + r->off;
  r->off += n;
  *len = n;
  return s;
}

char *tether_lint__rd_str(tether_lint__rd *r) {
  size_t n = 0;
  const char *s = tether_lint__rd_bytes(r, &n);
  if (!s) return NULL;
  if (memchr(s, '\0', n)) {
    r->bad = 1;
    return NULL;
  }
  char *c = malloc(n + 1);
  if (!c) {
    r->bad = 1;
    return NULL;
  }
  memcpy(c, s, n);
  c[n] = '\0';
  return c;
}

/* ---- a string-keyed hash map (open addressing, linear probing) ------------------------------ */

static uint64_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void **tether_lint__strmap_get(tether_lint__strmap *m, const char *key) {
  if (!m->cap) return NULL;
  for (size_t i = str_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return NULL;
    if (strcmp(m->keys[i], key) == 0) return &m->vals[i];
  }
}

void **tether_lint__strmap_put(tether_lint__strmap *m, const char *key) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    char **keys = calloc(cap, sizeof *keys);
    void **vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
      free(keys);
      free(vals);
      return NULL;
    }
    for (size_t j = 0; j < m->cap; j++) {
      if (!m->keys[j]) continue;
      size_t i = str_hash(m->keys[j]) & (cap - 1);
      while (keys[i]) i = (i + 1) & (cap - 1);
      keys[i] = m->keys[j];
      vals[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
  }
  size_t i = str_hash(key) & (m->cap - 1);
  for (; m->keys[i]; i = (i + 1) & (m->cap - 1))
    if (strcmp(m->keys[i], key) == 0) return &m->vals[i];
  char *k = tether_lint__strdup(key);
  if (!k) return NULL;
  m->keys[i] = k;
  m->vals[i] = NULL;
  m->n++;
  return &m->vals[i];
}

void tether_lint__strmap_free(tether_lint__strmap *m, void (*free_val)(void *)) {
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      free(m->keys[i]);
      if (free_val) free_val(m->vals[i]);
    }
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ---- line index ----------------------------------------------------------------------------- */

int tether_lint__lines_build(tether_lint__lines *li, const char *text, size_t len) {
  tether_lint__lines_free(li);
  size_t cap = 64, n = 0;
  size_t *v = malloc(cap * sizeof *v);
  if (!v) return -1;
  v[n++] = 0;
  for (const char *p = text, *end = text + len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL;) {
    p++;
    if (n == cap) {
      size_t *nv = realloc(v, cap * 2 * sizeof *nv);
      if (!nv) {
        free(v);
        return -1;
      }
      v = nv;
      cap *= 2;
    }
    v[n++] = (size_t)(p - text);
  }
  li->mark = calloc(n, 1);
  if (!li->mark) {
    free(v);
    return -1;
  }
  li->text = text;
  li->len = len;
  li->start = v;
  li->n = n;
  return 0;
}

int tether_lint__lines_get(const tether_lint__lines *li, unsigned line, const char **s,
                           size_t *len) {
  if (line == 0 || line > li->n) return -1;
  size_t b = li->start[line - 1];
  size_t e = line < li->n ? li->start[line] - 1 : li->len;
  *s = li->text + b;
  *len = e - b;
  return 0;
}

void tether_lint__lines_free(tether_lint__lines *li) {
  free(li->start);
  free(li->mark);
  memset(li, 0, sizeof *li);
}

int tether_lint__parse_size(const char *s, size_t *out) {
  if (!s || *s < '0' || *s > '9') return -1;
  uint64_t v = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  unsigned shift = 0;
  if (*s == 'K' || *s == 'k')
    shift = 10;
  else if (*s == 'M' || *s == 'm')
    shift = 20;
  else if (*s == 'G' || *s == 'g')
    shift = 30;
  if (shift) {
    s++;
    if (*s == 'i') s++;
    if (*s == 'B') s++;
  } else if (*s == 'B') {
    s++;
  }
  if (*s || v == 0 || v > (UINT64_MAX >> shift) || (v << shift) > SIZE_MAX / 2) return -1;
  *out = (size_t)(v << shift);
  return 0;
}
