/* The serialized result of analysing one translation unit: what a worker process sends back and
 * what the cache stores.
 *
 * Invariant: a result is only ever taken whole, after tether_lint__result_parse checked every
 * length and count in it against its size, every rule id against the rule table and every
 * message for NUL bytes; a malformed result (a worker killed mid-write, a corrupt cache entry)
 * is rejected, never half applied. Layout (util.c's little-endian integers and length-prefixed
 * strings): magic "TLR1", analysed, errors, compile errors, cacheable, suppressed, messages,
 * findings (line, column, rule, message), the facts for the cross-file passes, the headers read
 * (path, SHA-256) and the includes that were not found. */
#include "lint/driver/engine.h"

#include <stdlib.h>
#include <string.h>

static const char result_magic[4] = {'T', 'L', 'R', '1'};

/* Writes what analysing `w` produced. */
int tether_lint__result_serialize(const tether_lint_file *w, tether_lint__buf *out) {
  int rc = tether_lint__buf_put(out, result_magic, 4);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->analysed);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->errors);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->compile_errors);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->cacheable);
  rc |= tether_lint__buf_put_u64(out, w->suppressed);
  rc |= tether_lint__buf_put_bytes(out, w->msgs.p, w->msgs.n);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->n);
  for (size_t i = 0; i < w->n && rc == 0; i++) {
    rc |= tether_lint__buf_put_u32(out, w->v[i].line);
    rc |= tether_lint__buf_put_u32(out, w->v[i].col);
    rc |= tether_lint__buf_put_str(out, w->v[i].rule);
    rc |= tether_lint__buf_put_str(out, w->v[i].message);
  }
  rc |= tether_lint__buf_put_bytes(out, w->facts.p, w->facts.n);
  rc |= tether_lint__buf_put_u32(out, w->nincl);
  rc |= tether_lint__buf_put(out, w->incl.p ? w->incl.p : "", w->incl.n);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->missing.n);
  for (size_t i = 0; i < w->missing.n; i++) rc |= tether_lint__buf_put_str(out, w->missing.v[i]);
  return rc ? -1 : 0;
}

/* Checks the whole result and records where its parts are. 0, or -1 when malformed. */
int tether_lint__result_parse(const char *data, size_t len, tether_lint_result_view *v) {
  memset(v, 0, sizeof *v);
  tether_lint__rd r = {(const unsigned char *)data, len, 0, 0};
  if (len < 4 || memcmp(data, result_magic, 4) != 0) return -1;
  r.off = 4;
  v->analysed = tether_lint__rd_u32(&r);
  v->errors = tether_lint__rd_u32(&r);
  v->compile_errors = tether_lint__rd_u32(&r);
  v->cacheable = tether_lint__rd_u32(&r);
  v->suppressed = tether_lint__rd_u64(&r);
  v->msgs = tether_lint__rd_bytes(&r, &v->msgs_len);
  if (v->msgs && memchr(v->msgs, '\0', v->msgs_len)) return -1;
  v->nfindings = tether_lint__rd_u32(&r);
  v->findings_off = r.off;
  for (uint32_t i = 0; i < v->nfindings && !r.bad; i++) {
    size_t n;
    tether_lint__rd_u32(&r);
    tether_lint__rd_u32(&r);
    const char *rule = tether_lint__rd_bytes(&r, &n);
    char id[64];
    if (!rule || n >= sizeof id) return -1;
    memcpy(id, rule, n);
    id[n] = '\0';
    if (!tether_lint__rule_find(id, NULL)) return -1;
    tether_lint__rd_bytes(&r, &n);
  }
  v->facts = tether_lint__rd_bytes(&r, &v->facts_len);
  v->nincl = tether_lint__rd_u32(&r);
  v->incl_off = r.off;
  for (uint32_t i = 0; i < v->nincl && !r.bad; i++) {
    size_t n;
    tether_lint__rd_bytes(&r, &n);
    tether_lint__rd_bytes(&r, &n);
    if (n != 32) r.bad = 1;
  }
  v->nmissing = tether_lint__rd_u32(&r);
  v->missing_off = r.off;
  for (uint32_t i = 0; i < v->nmissing && !r.bad; i++) {
    size_t n;
    tether_lint__rd_bytes(&r, &n);
  }
  return r.bad || r.off != len ? -1 : 0;
}

/* Adds a checked result to the input's record. */
void tether_lint__result_apply(tether_lint_file *f, const char *data, size_t len,
                               const tether_lint_result_view *v) {
  tether_lint__rd r = {(const unsigned char *)data, len, v->findings_off, 0};
  f->analysed |= (int)v->analysed;
  f->errors += (int)v->errors;
  f->compile_errors += (int)v->compile_errors;
  f->suppressed += v->suppressed;
  if (v->msgs_len) tether_lint__buf_put(&f->msgs, v->msgs, v->msgs_len);
  for (uint32_t i = 0; i < v->nfindings; i++) {
    unsigned line = tether_lint__rd_u32(&r);
    unsigned col = tether_lint__rd_u32(&r);
    char *rule = tether_lint__rd_str(&r);
    char *msg = tether_lint__rd_str(&r);
    if (!rule || !msg ||
        tether_lint__push_finding(&f->v, &f->n, &f->cap, f->path, line, col, rule, msg) != 0)
      f->errors++;
    free(rule);
    free(msg);
  }
  if (v->facts_len) tether_lint__buf_put(&f->facts, v->facts, v->facts_len);
}
