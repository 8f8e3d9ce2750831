/* Fact sets of the raw-op walk, and the log of what the walk removed.
 *
 * Invariant: a fact set holds each fact (rawop.h: a wrapper known valid, or a status variable
 * holding a wrapper's status) at most once, in the order facts were established; adding never
 * duplicates, intersecting keeps the order of the left side, and removing a wrapper removes
 * everything derived from it ("op" takes "op.x", "op->x" and the status facts about them). Every
 * removal during a function is logged in the context (rawop_ctx.kills), so that what a loop,
 * switch or try body removed on any path can be removed after it too. */
#include "lint/rawop/rawop.h"

#include <stdlib.h>
#include <string.h>

/* ---- sets ---------------------------------------------------------------------------------- */

static int fact_eq(const rawop_fact *a, const rawop_fact *b) {
  return a->status_var == b->status_var && strcmp(a->wrapper, b->wrapper) == 0;
}

static int facts_find(const rawop_facts *a, const rawop_fact *f) {
  for (size_t i = 0; i < a->n; i++)
    if (fact_eq(&a->v[i], f)) return 1;
  return 0;
}

/* Appends a copy of `f` unless an equal fact is present. */
static void facts_put(rawop_facts *a, const rawop_fact *f) {
  if (facts_find(a, f)) return;
  if (tether_lint__grow(&a->v, &a->cap, a->n, sizeof *a->v) != 0) return;
  char *w = tether_lint__strdup(f->wrapper);
  if (!w) return;
  a->v[a->n].wrapper = w;
  a->v[a->n].status_var = f->status_var;
  a->n++;
}

/* Keeps the facts for which `keep` is true (in order) and frees the others. */
static void facts_filter(rawop_facts *a, int (*keep)(const rawop_fact *, const void *),
                         const void *arg) {
  size_t k = 0;
  for (size_t i = 0; i < a->n; i++) {
    if (keep(&a->v[i], arg))
      a->v[k++] = a->v[i];
    else
      free(a->v[i].wrapper);
  }
  a->n = k;
}

rawop_facts rawop_facts_copy(const rawop_facts *a) {
  rawop_facts r = {0};
  for (size_t i = 0; i < a->n; i++) facts_put(&r, &a->v[i]);
  return r;
}

void rawop_facts_free(rawop_facts *a) {
  for (size_t i = 0; i < a->n; i++) free(a->v[i].wrapper);
  free(a->v);
  memset(a, 0, sizeof *a);
}

void rawop_facts_add(rawop_facts *a, const char *w) {
  if (!w || !*w) return;
  rawop_fact f = {(char *)w, RAWOP_NO_STATUS_VAR};
  facts_put(a, &f);
}

int rawop_facts_has(const rawop_facts *a, const char *w) {
  rawop_fact f = {(char *)w, RAWOP_NO_STATUS_VAR};
  return facts_find(a, &f);
}

void rawop_facts_union(rawop_facts *a, const rawop_facts *b) {
  for (size_t i = 0; i < b->n; i++) facts_put(a, &b->v[i]);
}

static int in_set(const rawop_fact *f, const void *set) { return facts_find(set, f); }

void rawop_facts_intersect(rawop_facts *a, const rawop_facts *b) { facts_filter(a, in_set, b); }

void rawop_facts_replace(rawop_facts *dst, rawop_facts *src) {
  rawop_facts_free(dst);
  *dst = *src;
  memset(src, 0, sizeof *src);
}

/* ---- removals, and their log ---------------------------------------------------------------- */

/* Removing "op" also removes "op.x" and "op->x": they were derived from the old object. A status
 * fact about "op" (or "op.x") goes with it: the status was about the old object. */
static int not_derived(const rawop_fact *f, const void *wrapper) {
  const char *w = wrapper;
  size_t wl = strlen(w);
  const char *s = f->wrapper;
  return !(strncmp(s, w, wl) == 0 && (s[wl] == '\0' || s[wl] == '.' || s[wl] == '-'));
}

static int not_of_var(const rawop_fact *f, const void *var) {
  return f->status_var != *(const size_t *)var;
}

static void log_kill(rawop_ctx *c, int kind, const char *wrapper, size_t var) {
  rawop_kills *k = &c->kills;
  if (tether_lint__grow(&k->v, &k->cap, k->n, sizeof *k->v) != 0) return;
  char *w = NULL;
  if (wrapper && !(w = tether_lint__strdup(wrapper))) return;
  k->v[k->n].kind = kind;
  k->v[k->n].wrapper = w;
  k->v[k->n].status_var = var;
  k->n++;
}

void rawop_kill_wrapper(rawop_ctx *c, rawop_facts *st, const char *w) {
  log_kill(c, RAWOP_KILL_WRAPPER, w, RAWOP_NO_STATUS_VAR);
  facts_filter(st, not_derived, w);
}

void rawop_kill_all(rawop_ctx *c, rawop_facts *st) {
  log_kill(c, RAWOP_KILL_ALL, NULL, RAWOP_NO_STATUS_VAR);
  rawop_facts_free(st);
}

void rawop_apply_kills(rawop_ctx *c, rawop_facts *st, size_t from) {
  for (size_t i = from; i < c->kills.n; i++) {
    const rawop_kill *k = &c->kills.v[i];
    if (k->kind == RAWOP_KILL_WRAPPER)
      facts_filter(st, not_derived, k->wrapper);
    else if (k->kind == RAWOP_KILL_ALL)
      rawop_facts_free(st);
    else
      facts_filter(st, not_of_var, &k->status_var);
  }
}

void rawop_kills_truncate(rawop_kills *k, size_t from) {
  while (k->n > from) free(k->v[--k->n].wrapper);
}

void rawop_kills_free(rawop_kills *k) {
  rawop_kills_truncate(k, 0);
  free(k->v);
  memset(k, 0, sizeof *k);
}

/* ---- status facts --------------------------------------------------------------------------- */

CXCursor rawop_status_var_of(CXCursor e) {
  CXCursor s = rawop_strip(e);
  if (clang_getCursorKind(s) != CXCursor_DeclRefExpr) return clang_getNullCursor();
  CXCursor var = clang_getCursorReferenced(s);
  if (clang_getCursorKind(var) != CXCursor_VarDecl || !rawop_var_is_local_automatic(var))
    return clang_getNullCursor();
  CXType t = clang_getCanonicalType(clang_getCursorType(var));
  int scalar = (t.kind >= CXType_Bool && t.kind <= CXType_Int128) || t.kind == CXType_Enum;
  return scalar ? var : clang_getNullCursor();
}

/* The number of `var` in c->svars, added when `add`; RAWOP_NO_STATUS_VAR when absent or out of
 * memory. */
static size_t status_var_index(rawop_ctx *c, CXCursor var, int add) {
  for (size_t i = 0; i < c->nsv; i++)
    if (clang_equalCursors(c->svars[i], var)) return i;
  if (!add) return RAWOP_NO_STATUS_VAR;
  size_t cap = c->capsv, cap_escaped = c->capsv;
  if (tether_lint__grow(&c->svars, &cap, c->nsv, sizeof *c->svars) != 0 ||
      tether_lint__grow(&c->sv_escaped, &cap_escaped, c->nsv, sizeof *c->sv_escaped) != 0)
    return RAWOP_NO_STATUS_VAR;
  c->capsv = cap;
  c->svars[c->nsv] = var;
  c->sv_escaped[c->nsv] = 0;
  return c->nsv++;
}

void rawop_status_kill(rawop_ctx *c, rawop_facts *st, CXCursor var) {
  size_t idx = status_var_index(c, var, 0);
  if (idx == RAWOP_NO_STATUS_VAR) return;
  log_kill(c, RAWOP_KILL_STATUS_VAR, NULL, idx);
  facts_filter(st, not_of_var, &idx);
}

void rawop_status_set(rawop_ctx *c, rawop_facts *st, CXCursor var, const char *wrapper) {
  rawop_status_kill(c, st, var);
  size_t idx = status_var_index(c, var, 1);
  if (idx == RAWOP_NO_STATUS_VAR || c->sv_escaped[idx] || !wrapper || !*wrapper) return;
  rawop_fact f = {(char *)wrapper, idx};
  facts_put(st, &f);
}

char *rawop_status_get(rawop_ctx *c, const rawop_facts *st, CXCursor var) {
  size_t idx = status_var_index(c, var, 0);
  if (idx == RAWOP_NO_STATUS_VAR || c->sv_escaped[idx]) return NULL;
  for (size_t i = 0; i < st->n; i++)
    if (st->v[i].status_var == idx) return tether_lint__strdup(st->v[i].wrapper);
  return NULL;
}

void rawop_status_escape(rawop_ctx *c, rawop_facts *st, CXCursor var) {
  rawop_status_kill(c, st, var);
  size_t idx = status_var_index(c, var, 1);
  if (idx != RAWOP_NO_STATUS_VAR) c->sv_escaped[idx] = 1;
}
