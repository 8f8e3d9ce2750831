/* Where raw handles go: local variables bound to them, lambdas kept in local variables, local
 * containers, and the stores that outlive the function (fields, globals, references, returns).
 *
 * Invariant: a raw handle kept only in the function (a local variable, a lambda called on the spot
 * or kept locally and only called, a local container) is remembered with its holder and reported
 * as an escape only when the holder itself leaves the function; one stored anywhere else is an
 * escape where it is stored. */
#include "lint/rawop/rawop.h"

#include <stdlib.h>
#include <string.h>

rawop_binding *rawop_find_binding(rawop_ctx *c, CXCursor declref) {
  CXCursor ref = clang_getCursorReferenced(declref);
  if (clang_Cursor_isNull(ref)) return NULL;
  for (size_t i = c->nb; i-- > 0;)
    if (clang_equalCursors(c->b[i].var, ref)) return &c->b[i];
  return NULL;
}

void rawop_add_binding(rawop_ctx *c, CXCursor var, const char *wrapper, const char *via,
                       CXSourceLocation access, int kind) {
  if (tether_lint__grow(&c->b, &c->cap, c->nb, sizeof *c->b) != 0) return;
  rawop_binding *b = &c->b[c->nb++];
  b->var = var;
  b->wrapper = tether_lint__strdup(wrapper);
  b->via = tether_lint__strdup(via);
  b->access = access;
  b->kind = kind;
  b->reported = 0;
}

void rawop_drop_bindings(rawop_ctx *c, size_t from) {
  for (size_t i = from; i < c->nb; i++) {
    free(c->b[i].wrapper);
    free(c->b[i].via);
  }
  if (c->nb > from) c->nb = from;
}

void rawop_drop_lambda_vars(rawop_ctx *c, size_t from) {
  for (size_t i = from; i < c->nlv; i++) {
    free(c->lv[i].wrapper);
    free(c->lv[i].via);
  }
  if (c->nlv > from) c->nlv = from;
}

void rawop_drop_container_pushes(rawop_ctx *c, size_t from) {
  for (size_t i = from; i < c->ncp; i++) {
    free(c->cp[i].wrapper);
    free(c->cp[i].via);
  }
  if (c->ncp > from) c->ncp = from;
}

/* Where does an assignment to `lhs` store? NULL: a local (no escape); else a description. */
char *rawop_store_target(rawop_ctx *c, CXCursor lhs, int *is_local_var, CXCursor *local) {
  CXCursor s = rawop_strip(lhs);
  *is_local_var = 0;
  enum CXCursorKind k = clang_getCursorKind(s);
  tether_lint__buf b = {0};
  if (k == CXCursor_DeclRefExpr) {
    CXCursor var = clang_getCursorReferenced(s);
    CXString n = clang_getCursorSpelling(var);
    if (rawop_var_is_local_automatic(var)) {
      CXType t = clang_getCursorType(var);
      if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
          clang_getCursorKind(var) == CXCursor_ParmDecl) {
        /* Writing through a reference parameter or reference: the caller's storage. */
        if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
          tether_lint__buf_printf(&b, "is stored through reference '%s'", clang_getCString(n));
        else
          *is_local_var = 1, *local = var;
      } else {
        *is_local_var = 1;
        *local = var;
      }
    } else if (clang_getCursorKind(var) == CXCursor_VarDecl) {
      tether_lint__buf_printf(&b, "is stored in %s variable '%s'",
                              clang_Cursor_getStorageClass(var) == CX_SC_Static ? "static"
                                                                                : "global",
                              clang_getCString(n));
    }
    clang_disposeString(n);
    return b.p;
  }
  if (k == CXCursor_MemberRefExpr) {
    CXCursor field = clang_getCursorReferenced(s);
    if (clang_getCursorKind(field) == CXCursor_VarDecl) { /* static data member */
      CXString n = clang_getCursorSpelling(field);
      tether_lint__buf_printf(&b, "is stored in static member '%s'", clang_getCString(n));
      clang_disposeString(n);
      return b.p;
    }
    if (clang_getCursorKind(field) != CXCursor_FieldDecl) return NULL;
    /* A field of a local object (s.f with s a local by value) dies with the function. */
    rawop_kids ks = rawop_children(s);
    CXCursor base = ks.n ? rawop_strip(ks.v[0]) : clang_getNullCursor();
    free(ks.v);
    char *base_sp = rawop_member_base(c, s);
    int arrow = 0;
    {
      char *full = rawop_spelling(c, s);
      size_t bl = strlen(base_sp);
      arrow = strncmp(full, base_sp, bl) == 0 && strncmp(full + bl, "->", 2) == 0;
      free(full);
    }
    if (!clang_Cursor_isNull(base) && clang_getCursorKind(base) == CXCursor_DeclRefExpr && !arrow) {
      CXCursor var = clang_getCursorReferenced(base);
      CXType t = clang_getCursorType(var);
      if (rawop_var_is_local_automatic(var) && clang_getCursorKind(var) == CXCursor_VarDecl &&
          t.kind != CXType_LValueReference && t.kind != CXType_RValueReference) {
        free(base_sp);
        return NULL;
      }
    }
    CXString n = clang_getCursorSpelling(field);
    tether_lint__buf_printf(&b, "is stored in field '%s' of '%s'", clang_getCString(n), base_sp);
    clang_disposeString(n);
    free(base_sp);
    return b.p;
  }
  if (k == CXCursor_UnaryOperator) { /* *out = raw: the caller's storage */
    char *sp = rawop_spelling(c, s);
    tether_lint__buf_printf(&b, "is stored through '%s'", sp);
    free(sp);
    return b.p;
  }
  return NULL;
}

rawop_lambda_var *rawop_find_lambda_var(rawop_ctx *c, CXCursor var) {
  for (size_t i = c->nlv; i-- > 0;)
    if (clang_equalCursors(c->lv[i].var, var)) return &c->lv[i];
  return NULL;
}

rawop_lambda_var *rawop_lambda_var_for(rawop_ctx *c, CXCursor lam) {
  for (size_t i = c->nlv; i-- > 0;)
    if (clang_equalCursors(c->lv[i].lambda, lam)) return &c->lv[i];
  return NULL;
}

void rawop_add_lambda_var(rawop_ctx *c, CXCursor var, CXCursor lam) {
  if (tether_lint__grow(&c->lv, &c->caplv, c->nlv, sizeof *c->lv) != 0) return;
  rawop_lambda_var *l = &c->lv[c->nlv++];
  memset(l, 0, sizeof *l);
  l->var = var;
  l->lambda = lam;
}

/* A raw handle captured by a lambda: an escape, unless the lambda stays in the function (called
 * on the spot, passed to a function that only calls it, or kept in a local variable that is only
 * called), in which case it is remembered with the variable until the variable itself escapes. */
void rawop_lambda_capture(rawop_ctx *c, CXCursor lam, int local, const char *wrapper,
                          const char *via, CXSourceLocation at) {
  rawop_lambda_var *l = rawop_lambda_var_for(c, lam);
  if (l) {
    if (!l->wrapper) {
      l->wrapper = tether_lint__strdup(wrapper);
      l->via = tether_lint__strdup(via);
      l->at = at;
    }
    return;
  }
  if (local) return;
  rawop_report_escape(c, at, wrapper, via, "is captured by a lambda");
}

/* The local container a push or subscript writes to, or a description of the longer-lived one
 * (NULL and a null cursor: not a container store we understand). */
char *rawop_container_target(rawop_ctx *c, CXCursor obj, CXCursor *local) {
  *local = clang_getNullCursor();
  int is_local = 0;
  char *where = rawop_store_target(c, obj, &is_local, local);
  if (is_local) {
    free(where);
    return NULL;
  }
  *local = clang_getNullCursor();
  if (!where) {
    /* `(*p).push_back`, `get().push_back`: not a local, not a store we can name: skip. */
    CXCursor s = rawop_strip(obj);
    if (clang_getCursorKind(s) != CXCursor_UnaryOperator) return NULL;
  }
  free(where);
  char *sp = rawop_spelling(c, obj);
  tether_lint__buf b = {0};
  tether_lint__buf_printf(&b, "is put into container '%s', which outlives the function", sp);
  free(sp);
  return b.p;
}

void rawop_add_container_push(rawop_ctx *c, CXCursor var, const struct rawop_value *rv,
                              CXSourceLocation at) {
  if (tether_lint__grow(&c->cp, &c->capcp, c->ncp, sizeof *c->cp) != 0) return;
  rawop_container_push *p = &c->cp[c->ncp++];
  p->var = var;
  p->wrapper = tether_lint__strdup(rv->wrapper);
  p->via = tether_lint__strdup(rv->via);
  p->at = at;
  p->reported = 0;
}

/* The local container `var` leaves the function: every raw handle put into it escapes. */
void rawop_container_escapes(rawop_ctx *c, CXCursor var, const char *how) {
  for (size_t i = 0; i < c->ncp; i++) {
    rawop_container_push *p = &c->cp[i];
    if (p->reported || !clang_equalCursors(p->var, var)) continue;
    p->reported = 1;
    CXString n = clang_getCursorSpelling(var);
    char where[400];
    snprintf(where, sizeof where, "is put into container '%s', which %s", clang_getCString(n), how);
    clang_disposeString(n);
    rawop_report_escape(c, p->at, p->wrapper, p->via, where);
  }
}

/* `e` names a local variable (through std::move and copies): that variable, else null. */
CXCursor rawop_local_var_named(CXCursor e) {
  CXCursor s = rawop_strip(e);
  for (int i = 0; i < 4 && clang_getCursorKind(s) == CXCursor_CallExpr; i++) {
    CXCursor fn = clang_getCursorReferenced(s);
    CXString n = clang_getCursorSpelling(fn);
    int mv = strcmp(clang_getCString(n), "move") == 0 && clang_Cursor_getNumArguments(s) == 1;
    clang_disposeString(n);
    if (!mv) break;
    s = rawop_strip(clang_Cursor_getArgument(s, 0));
  }
  if (clang_getCursorKind(s) != CXCursor_DeclRefExpr) return clang_getNullCursor();
  CXCursor var = clang_getCursorReferenced(s);
  return rawop_var_is_local_automatic(var) ? var : clang_getNullCursor();
}

static int is_collection_type(CXType t) {
  CXString ts = clang_getTypeSpelling(clang_getCanonicalType(t));
  const char *sp = clang_getCString(ts);
  static const char *const names[] = {"vector", "Vector", "array", "Array",   "list",
                                      "List",   "deque",  "set",   "Set",     "map",
                                      "Map",    "pair",   "tuple", "optional"};
  int yes = 0;
  for (size_t i = 0; !yes && i < sizeof names / sizeof names[0]; i++)
    if (strstr(sp, names[i])) yes = 1;
  clang_disposeString(ts);
  return yes;
}

/* `return {a.get(), ...}`, `return std::vector<MlirBlock>{...}`, `return std::make_pair(...)`:
 * raw handles handed to the caller inside a collection. */
void rawop_returned_collection(rawop_ctx *c, CXCursor e, int depth) {
  if (depth > 4) return;
  CXCursor s = rawop_strip(e);
  enum CXCursorKind k = clang_getCursorKind(s);
  int descend = 0;
  if (k == CXCursor_InitListExpr) {
    descend = !rawop_type_is_wrapper(c, clang_getCursorType(s));
  } else if (k == CXCursor_CallExpr) {
    CXCursor fn = clang_getCursorReferenced(s);
    CXType t = clang_getCursorType(s);
    if (clang_getCursorKind(fn) == CXCursor_Constructor) {
      descend = !rawop_type_is_wrapper(c, t) && is_collection_type(t);
    } else {
      CXString n = clang_getCursorSpelling(fn);
      const char *name = clang_getCString(n);
      descend = strcmp(name, "make_pair") == 0 || strcmp(name, "make_tuple") == 0 ||
                strcmp(name, "make_optional") == 0;
      clang_disposeString(n);
    }
  }
  if (!descend) return;
  rawop_kids ks = rawop_children(s);
  for (size_t i = 0; i < ks.n; i++) {
    if (!clang_isExpression(clang_getCursorKind(ks.v[i]))) continue;
    rawop_value rv = rawop_raw_value(c, ks.v[i]);
    if (rv.yes)
      rawop_report_escape(c, rawop_start_of(ks.v[i]), rv.wrapper, rv.via,
                          "is returned to the caller in a collection");
    else
      rawop_returned_collection(c, ks.v[i], depth + 1);
    free(rv.wrapper);
  }
  free(ks.v);
}

int rawop_is_push_method(const char *name) {
  static const char *const names[] = {
      "push_back", "emplace_back", "push_front",  "emplace_front",    "insert", "emplace",
      "append",    "push",         "try_emplace", "insert_or_assign", "assign", "emplace_hint"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i]) == 0) return 1;
  return 0;
}

/* Functions that call a callable they are given before returning and do not keep it. */
int rawop_calls_and_forgets(CXCursor fn, CXType param) {
  CXString ps = clang_getTypeSpelling(param);
  int yes = strstr(clang_getCString(ps), "function_ref") != NULL;
  clang_disposeString(ps);
  if (yes) return 1;
  static const char *const algos[] = {
      "for_each",         "any_of",          "all_of",         "none_of",   "find_if",
      "find_if_not",      "count_if",        "remove_if",      "erase_if",  "sort",
      "stable_sort",      "transform",       "accumulate",     "partition", "max_element",
      "min_element",      "generate",        "copy_if",        "is_sorted", "lower_bound",
      "upper_bound",      "equal_range",     "binary_search",  "unique",    "interleave",
      "interleaveComma",  "reduce",          "adjacent_find",  "mismatch",  "replace_if",
      "stable_partition", "partition_point", "is_partitioned", "search"};
  CXString n = clang_getCursorSpelling(fn);
  const char *name = clang_getCString(n);
  for (size_t i = 0; !yes && i < sizeof algos / sizeof algos[0]; i++)
    if (strcmp(name, algos[i]) == 0) yes = 1;
  clang_disposeString(n);
  if (!yes) return 0;
  /* Only the standard library's and LLVM's algorithms. */
  CXCursor ns = clang_getCursorSemanticParent(fn);
  for (int d = 0; d < 8 && !clang_Cursor_isNull(ns); d++) {
    if (clang_getCursorKind(ns) == CXCursor_Namespace) {
      CXString s = clang_getCursorSpelling(ns);
      const char *nn = clang_getCString(s);
      int known = strcmp(nn, "std") == 0 || strcmp(nn, "llvm") == 0;
      clang_disposeString(s);
      if (known) return 1;
    }
    if (clang_getCursorKind(ns) == CXCursor_TranslationUnit) break;
    ns = clang_getCursorSemanticParent(ns);
  }
  return 0;
}
