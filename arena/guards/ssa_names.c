/* ssa_names.c: what a text's SSA value names say before MLIR parses it, for tether_parse_check.
 *
 * MLIR 19's parser corrupts the heap on some text it rejects: a value name used where nothing
 * defines it (a forward reference left open) and a value name defined twice (a redefinition
 * error) in the same text. The error path frees the operations that use the open reference, then
 * drops the reference's uses, writing into the freed operations (an abort later, or an unrelated
 * crash). MLIR 22 does not. Valid text never has a redefinition, so only text with both is
 * parsed in a separate process first (text_guards.c).
 *
 * Invariant: the scan reads text[0..len) once, never past it, and answers "maybe" whenever it
 * cannot tell: a use it mistakes for a definition could only hide a forward reference, so a name
 * is a definition only where MLIR's syntax makes it one (`%a, %b:2 = ...`, `%a: type` in argument
 * lists), and anything else is a use. Strings and comments are skipped.
 */
#include "guards.h"
#include "../run/run.h"
#include "../trial/trial.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name; /* NULL: an empty slot */
  size_t len;
  uint32_t defs; /* definitions so far */
} ssa_slot;

typedef struct {
  ssa_slot *v;
  size_t cap, used; /* cap: a power of two */
  bool oom;
} ssa_table;

static bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.' || c == '-';
}

static size_t name_hash(const char *s, size_t n) {
  size_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* The slot of name (inserted with 0 definitions when new), or NULL when out of memory. */
static ssa_slot *slot_of(ssa_table *t, const char *name, size_t len) {
  if ((t->used + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    ssa_slot *v = calloc(cap, sizeof *v);
    if (!v) {
      t->oom = true;
      return NULL;
    }
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->v[i].name) continue;
      size_t j = name_hash(t->v[i].name, t->v[i].len) & (cap - 1);
      while (v[j].name) j = (j + 1) & (cap - 1);
      v[j] = t->v[i];
    }
    free(t->v);
    t->v = v;
    t->cap = cap;
  }
  size_t j = name_hash(name, len) & (t->cap - 1);
  for (; t->v[j].name; j = (j + 1) & (t->cap - 1))
    if (t->v[j].len == len && !memcmp(t->v[j].name, name, len)) return &t->v[j];
  t->v[j] = (ssa_slot){name, len, 0};
  t->used++;
  return &t->v[j];
}

static size_t skip_blanks(const char *t, size_t i, size_t n) {
  while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
  return i;
}

/* After a name that ends at i: `:digits` (a result group), then `,` (another name of the list)
 * or `=` (the list is defined). 1 definition list, 0 not, -1 the list goes on at *next. */
static int after_name(const char *t, size_t i, size_t n, size_t *next) {
  if (i < n && t[i] == ':') {
    size_t j = i + 1;
    if (j < n && t[j] >= '0' && t[j] <= '9') {
      while (j < n && t[j] >= '0' && t[j] <= '9') j++;
      i = j;
    } else if (j < n && t[j] != ':') {
      return 2; /* `%a: type`: an argument */
    }
  }
  i = skip_blanks(t, i, n);
  if (i < n && t[i] == '=' && (i + 1 >= n || t[i + 1] != '=')) return 1;
  if (i < n && t[i] == ',') {
    i = skip_blanks(t, i + 1, n);
    if (i < n && t[i] == '%') {
      *next = i;
      return -1;
    }
  }
  return 0;
}

bool tether__ssa_forward_ref_and_redefinition(const char *t, size_t n) {
  ssa_table tab = {NULL, 0, 0, false};
  bool forward = false, redefined = false;
  /* The names of a result list not yet known to be defined (`%a, %b` before its `=`). */
  enum { LIST = 64 };
  const char *list[LIST];
  size_t list_len[LIST], nlist = 0;
  for (size_t i = 0; i < n && !tab.oom && !(forward && redefined); i++) {
    char c = t[i];
    if (c == '"') { /* a string: to its closing quote */
      for (i++; i < n && t[i] != '"'; i++)
        if (t[i] == '\\') i++;
      continue;
    }
    if (c == '/' && i + 1 < n && t[i + 1] == '/') {
      while (i < n && t[i] != '\n') i++;
      continue;
    }
    if (c != '%' || i + 1 >= n || !name_char(t[i + 1])) continue;
    size_t s = i + 1, e = s;
    while (e < n && name_char(t[e])) e++;
    size_t next = 0;
    int kind = after_name(t, e, n, &next);
    if (kind == -1 && nlist < LIST) { /* more names of a result list follow */
      list[nlist] = t + s;
      list_len[nlist++] = e - s;
      i = next - 1;
      continue;
    }
    if (kind == -1) kind = 0; /* a list too long to follow: its names count as uses */
    list[nlist] = t + s;
    list_len[nlist++] = e - s;
    for (size_t k = 0; k < nlist; k++) {
      ssa_slot *slot = slot_of(&tab, list[k], list_len[k]);
      if (!slot) break;
      if (kind) {
        if (++slot->defs > 1) redefined = true;
      } else if (slot->defs == 0) {
        forward = true;
      }
    }
    nlist = 0;
    i = e - 1;
  }
  free(tab.v);
  return tab.oom || (forward && redefined);
}
