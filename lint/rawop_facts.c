/* Fact sets of the raw-op walk, and the log of what the walk removed.
 *
 * Invariant: a fact set holds wrapper spellings known valid and status facts (rawop.h), each at
 * most once; adding never duplicates, intersecting keeps the order of the left side, and removing a
 * wrapper removes everything derived from it ("op" takes "op.x", "op->x" and the status facts
 * about them). Every removal during a function is logged in the context, so that what a loop,
 * switch or try body removed on any path can be removed after it too. */
#include "lint/rawop.h"

#include <stdlib.h>
#include <string.h>

rawop_facts rawop_facts_copy(const rawop_facts *a) {
  rawop_facts r = {0};
  for (size_t i = 0; i < a->n; i++) tether_lint__strlist_push(&r, a->v[i]);
  return r;
}

void rawop_facts_add(rawop_facts *a, const char *w) {
  if (w && *w) tether_lint__strlist_add_unique(a, w);
}

void rawop_facts_union(rawop_facts *a, const rawop_facts *b) {
  for (size_t i = 0; i < b->n; i++) rawop_facts_add(a, b->v[i]);
}

/* The wrapper part of a status fact, or NULL for a wrapper fact. */
static const char *status_fact_wrapper(const char *s) {
  if (s[0] != RAWOP_STATUS_TAG) return NULL;
  const char *w = strchr(s + 1, RAWOP_STATUS_TAG);
  return w ? w + 1 : NULL;
}

static void facts_remove(rawop_facts *a, const char *w) {
  size_t k = 0;
  size_t wl = strlen(w);
  for (size_t i = 0; i < a->n; i++) {
    /* Removing "op" also removes "op.x" and "op->x": they were derived from the old object. A
     * status fact about "op" (or "op.x") goes with it: the status was about the old object. */
    const char *s = a->v[i];
    const char *sw = status_fact_wrapper(s);
    if (sw) s = sw;
    int derived = strncmp(s, w, wl) == 0 && (s[wl] == '\0' || s[wl] == '.' || s[wl] == '-');
    if (derived) {
      free(a->v[i]);
    } else {
      a->v[k++] = a->v[i];
    }
  }
  a->n = k;
}

/* a := a ∩ b */
void rawop_facts_intersect(rawop_facts *a, const rawop_facts *b) {
  size_t k = 0;
  for (size_t i = 0; i < a->n; i++) {
    if (tether_lint__strlist_has(b, a->v[i])) {
      a->v[k++] = a->v[i];
    } else {
      free(a->v[i]);
    }
  }
  a->n = k;
}

void rawop_facts_replace(rawop_facts *dst, rawop_facts *src) {
  tether_lint__strlist_free(dst);
  *dst = *src;
  memset(src, 0, sizeof *src);
}

void rawop_log_kill(rawop_ctx *c, char kind, const char *what) {
  tether_lint__buf b = {0};
  char k[2] = {kind, '\0'};
  tether_lint__buf_puts(&b, k);
  tether_lint__buf_puts(&b, what);
  if (b.p) tether_lint__strlist_push(&c->kills, b.p);
  tether_lint__buf_free(&b);
}

/* The wrapper `w` was written or invalidated: forget what was known about it. */
void rawop_kill_wrapper(rawop_ctx *c, rawop_facts *st, const char *w) {
  rawop_log_kill(c, 'w', w);
  facts_remove(st, w);
}

/* Removes from `st` whatever was removed anywhere since kill number `from`. */
void rawop_apply_kills(rawop_ctx *c, rawop_facts *st, size_t from) {
  for (size_t i = from; i < c->kills.n; i++) {
    const char *k = c->kills.v[i];
    if (k[0] == 'w') {
      facts_remove(st, k + 1);
    } else if (k[0] == '*') {
      tether_lint__strlist_free(st);
    } else if (k[0] == 's') {
      size_t pl = strlen(k + 1), n = 0;
      for (size_t j = 0; j < st->n; j++) {
        if (strncmp(st->v[j], k + 1, pl) == 0)
          free(st->v[j]);
        else
          st->v[n++] = st->v[j];
      }
      st->n = n;
    }
  }
}

/* The local variable `e` names, when it can hold a status fact: an automatic variable of the
 * function of integer, bool or enum type (not a reference: writing through a reference writes
 * somewhere else). */
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

/* The index of `var` in c->svars, added when `add`; (size_t)-1 when absent or out of memory. */
static size_t status_var_index(rawop_ctx *c, CXCursor var, int add) {
  for (size_t i = 0; i < c->nsv; i++)
    if (clang_equalCursors(c->svars[i], var)) return i;
  if (!add) return (size_t)-1;
  if (c->nsv == c->capsv) {
    size_t cap = c->capsv ? c->capsv * 2 : 16;
    CXCursor *v = realloc(c->svars, cap * sizeof *v);
    if (!v) return (size_t)-1;
    c->svars = v;
    unsigned char *e = realloc(c->sv_escaped, cap);
    if (!e) return (size_t)-1;
    c->sv_escaped = e;
    c->capsv = cap;
  }
  c->svars[c->nsv] = var;
  c->sv_escaped[c->nsv] = 0;
  return c->nsv++;
}

/* The prefix every status fact about variable `idx` starts with. */
static void status_prefix(char *buf, size_t len, size_t idx) {
  snprintf(buf, len, "%cv%zu%c", RAWOP_STATUS_TAG, idx, RAWOP_STATUS_TAG);
}

/* `var` was written (or may have been): what it held no longer holds. */
void rawop_status_kill(rawop_ctx *c, rawop_facts *st, CXCursor var) {
  size_t idx = status_var_index(c, var, 0);
  if (idx == (size_t)-1) return;
  char pre[48];
  status_prefix(pre, sizeof pre, idx);
  rawop_log_kill(c, 's', pre);
  size_t pl = strlen(pre), k = 0;
  for (size_t i = 0; i < st->n; i++) {
    if (strncmp(st->v[i], pre, pl) == 0) {
      free(st->v[i]);
    } else {
      st->v[k++] = st->v[i];
    }
  }
  st->n = k;
}

/* `var` now holds the status of an accessor called on `wrapper`. */
void rawop_status_set(rawop_ctx *c, rawop_facts *st, CXCursor var, const char *wrapper) {
  rawop_status_kill(c, st, var);
  size_t idx = status_var_index(c, var, 1);
  if (idx == (size_t)-1 || c->sv_escaped[idx] || !wrapper || !*wrapper) return;
  tether_lint__buf b = {0};
  char pre[48];
  status_prefix(pre, sizeof pre, idx);
  tether_lint__buf_puts(&b, pre);
  tether_lint__buf_puts(&b, wrapper);
  if (b.p) rawop_facts_add(st, b.p);
  tether_lint__buf_free(&b);
}

/* The wrapper whose status `var` holds on every path to here, or NULL. */
char *rawop_status_get(rawop_ctx *c, const rawop_facts *st, CXCursor var) {
  size_t idx = status_var_index(c, var, 0);
  if (idx == (size_t)-1 || c->sv_escaped[idx]) return NULL;
  char pre[48];
  status_prefix(pre, sizeof pre, idx);
  size_t pl = strlen(pre);
  for (size_t i = 0; i < st->n; i++)
    if (strncmp(st->v[i], pre, pl) == 0) return tether_lint__strdup(st->v[i] + pl);
  return NULL;
}

/* The address of `var` was taken: it may be written behind the walk's back from now on. */
void rawop_status_escape(rawop_ctx *c, rawop_facts *st, CXCursor var) {
  rawop_status_kill(c, st, var);
  size_t idx = status_var_index(c, var, 1);
  if (idx != (size_t)-1) c->sv_escaped[idx] = 1;
}
