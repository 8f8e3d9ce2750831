/* Summaries of helper functions and lambdas of the translation unit: what they guard for their
 * callers, and whether they return at all.
 *
 * Invariant: a summary is computed at most once per function (key: USR, or a lambda's offset) by
 * walking its body quietly (no findings) in a context of its own, at most 3 levels deep; the guards
 * are the facts on every normal exit, expressed in the callee's parameter names, and a recursive
 * call during the computation sees an empty summary. A function whose every path ends in a throw
 * or a call that does not return is noreturn. */
#include "lint/rawop/rawop.h"

#include <stdlib.h>
#include <string.h>

static enum CXChildVisitResult find_noreturn_attr(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  if (!clang_isAttribute(clang_getCursorKind(k))) return CXChildVisit_Continue;
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(k);
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(tu, clang_getCursorExtent(k), &toks, &n);
  for (unsigned i = 0; i < n; i++) {
    CXString s = clang_getTokenSpelling(tu, toks[i]);
    const char *t = clang_getCString(s);
    if (strcmp(t, "noreturn") == 0 || strcmp(t, "__noreturn__") == 0 || strcmp(t, "_Noreturn") == 0)
      *(int *)d = 1;
    clang_disposeString(s);
  }
  if (toks) clang_disposeTokens(tu, toks, n);
  return *(int *)d ? CXChildVisit_Break : CXChildVisit_Continue;
}

static int is_noreturn_call(CXCursor call) {
  if (clang_getCursorKind(call) != CXCursor_CallExpr) return 0;
  CXCursor fn = clang_getCursorReferenced(call);
  if (clang_Cursor_isNull(fn)) return 0;
  static const char *const known[] = {"abort",          "exit",       "_Exit",
                                      "quick_exit",     "terminate",  "__builtin_unreachable",
                                      "__builtin_trap", "longjmp",    "siglongjmp",
                                      "Py_FatalError",  "__cxa_throw"};
  CXString s = clang_getCursorSpelling(fn);
  const char *name = clang_getCString(s);
  int yes = 0;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(name, known[i]) == 0) yes = 1;
  clang_disposeString(s);
  if (yes) return 1;
  CXType t = clang_getCursorType(fn);
  CXString ts = clang_getTypeSpelling(t);
  if (strstr(clang_getCString(ts), "noreturn")) yes = 1;
  clang_disposeString(ts);
  if (yes) return 1;
  clang_visitChildren(fn, find_noreturn_attr, &yes);
  return yes;
}

/* A normal exit of the function whose summary is being computed, with state `st`. */
void rawop_summary_exit(rawop_ctx *c, const rawop_facts *st) {
  if (!c->ret_acc) return;
  if (c->ret_seen++ == 0) {
    rawop_facts cp = rawop_facts_copy(st);
    rawop_facts_replace(c->ret_acc, &cp);
  } else {
    rawop_facts_intersect(c->ret_acc, st);
  }
}

/* The summary of function `fn` (a declaration; its definition is looked up) or of lambda
 * expression `fn`; NULL when there is no body to look at, or too deep. */
rawop_summary *rawop_summary_of(rawop_ctx *c, CXCursor fn) {
  if (c->depth >= 3 || !c->sh) return NULL;
  int is_lambda = clang_getCursorKind(fn) == CXCursor_LambdaExpr;
  CXCursor def = is_lambda ? fn : clang_getCursorDefinition(fn);
  if (clang_Cursor_isNull(def)) return NULL;
  char key[600];
  if (is_lambda) {
    unsigned off = 0;
    CXFile file = NULL;
    clang_getExpansionLocation(clang_getCursorLocation(def), &file, NULL, NULL, &off);
    snprintf(key, sizeof key, "L%u", off);
  } else {
    CXString u = clang_getCursorUSR(def);
    snprintf(key, sizeof key, "F%s", clang_getCString(u));
    clang_disposeString(u);
    if (strlen(key) < 2) return NULL;
  }
  for (size_t i = 0; i < c->sh->n; i++)
    if (strcmp(c->sh->v[i].key, key) == 0) return &c->sh->v[i];
  rawop_kids ks = rawop_children(def);
  CXCursor body = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++)
    if (clang_getCursorKind(ks.v[i]) == CXCursor_CompoundStmt) body = ks.v[i];
  if (clang_Cursor_isNull(body)) {
    free(ks.v);
    return NULL;
  }
  if (tether_lint__grow(&c->sh->v, &c->sh->cap, c->sh->n, sizeof *c->sh->v) != 0) {
    free(ks.v);
    return NULL;
  }
  size_t idx = c->sh->n++;
  rawop_summary *sm = &c->sh->v[idx];
  memset(sm, 0, sizeof *sm);
  sm->key = tether_lint__strdup(key);
  if (is_lambda) {
    for (size_t i = 0; i < ks.n; i++)
      if (clang_getCursorKind(ks.v[i]) == CXCursor_ParmDecl) {
        CXString n = clang_getCursorSpelling(ks.v[i]);
        tether_lint__strlist_push(&sm->params, clang_getCString(n));
        clang_disposeString(n);
      }
  } else {
    int na = clang_Cursor_getNumArguments(def);
    for (int i = 0; i < na; i++) {
      CXString n = clang_getCursorSpelling(clang_Cursor_getArgument(def, (unsigned)i));
      tether_lint__strlist_push(&sm->params, clang_getCString(n));
      clang_disposeString(n);
    }
  }
  free(ks.v);
  rawop_ctx sub;
  memset(&sub, 0, sizeof sub);
  sub.f = c->f;
  sub.tu = c->tu;
  sub.p = c->p;
  sub.sh = c->sh;
  sub.quiet = 1;
  sub.depth = c->depth + 1;
  sub.scope.defer = clang_getNullCursor();
  sub.local_lambda = clang_getNullCursor();
  sub.scope.in_lambda = is_lambda;
  rawop_facts acc = {0}, st = {0};
  sub.ret_acc = &acc;
  int exits = rawop_stmt(&sub, body, &st);
  if (!exits) rawop_summary_exit(&sub, &st);
  sm = &c->sh->v[idx]; /* the array may have moved while the body was walked */
  sm->noreturn = sub.ret_seen == 0;
  sm->guards = acc;
  sm->done = 1;
  rawop_facts_free(&st);
  rawop_ctx_free(&sub);
  return sm;
}

/* Facts a call establishes through the callee's summary: its guards on a parameter become
 * guards on the argument, on `this` a guard on the object, and (for a lambda) on a captured
 * variable a guard on that variable. */
void rawop_apply_summary(rawop_ctx *c, const rawop_summary *sm, CXCursor call, const char *obj,
                         int shift, int is_lambda, rawop_facts *st) {
  int nargs = clang_Cursor_getNumArguments(call);
  for (size_t i = 0; i < sm->guards.n; i++) {
    if (sm->guards.v[i].status_var != RAWOP_NO_STATUS_VAR) continue;
    const char *g = sm->guards.v[i].wrapper;
    size_t hn = strcspn(g, ".-([");
    if (hn == 4 && strncmp(g, "this", 4) == 0) {
      if (obj && g[hn] == '\0') rawop_facts_add(st, obj);
      continue;
    }
    int pi = -1;
    for (size_t k = 0; k < sm->params.n; k++)
      if (strlen(sm->params.v[k]) == hn && strncmp(sm->params.v[k], g, hn) == 0) pi = (int)k;
    if (pi >= 0) {
      if (pi + shift >= nargs) continue;
      char *a = rawop_spelling(c, clang_Cursor_getArgument(call, (unsigned)(pi + shift)));
      tether_lint__buf b = {0};
      if (a[0] == '&' && a[1]) {
        /* A pointer to the wrapper: a guard on `p` or `p->x` is a guard on `w` or `w.x`. */
        tether_lint__buf_puts(&b, a + 1);
        tether_lint__buf_puts(&b, strncmp(g + hn, "->", 2) == 0 ? "." : "");
        tether_lint__buf_puts(&b, strncmp(g + hn, "->", 2) == 0 ? g + hn + 2 : g + hn);
      } else {
        tether_lint__buf_puts(&b, a);
        tether_lint__buf_puts(&b, g + hn);
      }
      if (b.p) {
        rawop_normalise(b.p);
        rawop_facts_add(st, b.p);
      }
      tether_lint__buf_free(&b);
      free(a);
    } else if (is_lambda) {
      rawop_facts_add(st, g);
    }
  }
}

/* Does a call to `fn` never return (declared so, a well-known name, or a body that always
 * throws)? */
int rawop_call_never_returns(rawop_ctx *c, CXCursor call) {
  if (is_noreturn_call(call)) return 1;
  CXCursor fn = clang_getCursorReferenced(call);
  enum CXCursorKind k = clang_getCursorKind(fn);
  if (k != CXCursor_FunctionDecl && k != CXCursor_CXXMethod) return 0;
  CXCursor def = clang_getCursorDefinition(fn);
  if (clang_Cursor_isNull(def) || rawop_in_system_header(def)) return 0;
  rawop_summary *sm = rawop_summary_of(c, fn);
  return sm && sm->done && sm->noreturn;
}
