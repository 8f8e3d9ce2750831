/* pybind11 and nanobind as libclang sees them (bind_util.h).
 *
 * Invariant: a declaration belongs to a library only when libclang resolved it into namespace
 * pybind11 or nanobind (an alias such as `py` or `nb` resolves to them), so lookalikes of other
 * namespaces never count; a callable is resolved only through what libclang resolved, never guessed
 * from spellings. Every CXString obtained here is disposed here. */
#include "lint/utils/bind_util.h"
#include "lint/utils/clang_util.h"

#include <stdlib.h>
#include <string.h>

int tether_lint__bind_library(CXCursor c) {
  int lib = TETHER_LINT_BIND_NONE;
  for (int depth = 0; depth < 64; depth++) {
    c = clang_getCursorSemanticParent(c);
    if (clang_Cursor_isNull(c) || clang_isInvalid(clang_getCursorKind(c)) ||
        clang_getCursorKind(c) == CXCursor_TranslationUnit)
      break;
    if (clang_getCursorKind(c) == CXCursor_Namespace) {
      if (tether_lint__cursor_is(c, "pybind11"))
        lib = TETHER_LINT_BIND_PYBIND11;
      else if (tether_lint__cursor_is(c, "nanobind"))
        lib = TETHER_LINT_BIND_NANOBIND;
      else
        lib = TETHER_LINT_BIND_NONE;
    }
  }
  return lib;
}

typedef struct children {
  CXCursor first, last;
  int n;
} children;

static enum CXChildVisitResult take_child(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  children *ch = d;
  if (ch->n++ == 0) ch->first = k;
  ch->last = k;
  return CXChildVisit_Continue;
}

CXCursor tether_lint__bind_strip(CXCursor e) {
  for (int depth = 0; depth < 32; depth++) {
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr && k != CXCursor_UnaryOperator &&
        k != CXCursor_CXXFunctionalCastExpr)
      break;
    children ch = {clang_getNullCursor(), clang_getNullCursor(), 0};
    clang_visitChildren(e, take_child, &ch);
    if (k == CXCursor_CXXFunctionalCastExpr) {
      /* T(x): the type's name first, the converted expression last. */
      if (ch.n == 0 || !clang_isExpression(clang_getCursorKind(ch.last))) break;
      e = ch.last;
      continue;
    }
    /* A unary operator other than & has one child too, and names nothing a caller looks for. */
    if (ch.n != 1) break;
    e = ch.first;
  }
  return e;
}

typedef struct call_operator {
  CXCursor m;
} call_operator;

static enum CXChildVisitResult find_call_operator(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  call_operator *co = d;
  if (clang_getCursorKind(k) == CXCursor_CXXMethod && tether_lint__cursor_is(k, "operator()")) {
    co->m = k;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

/* A malloc'd copy of `s` in single quotes, or NULL. */
static char *quoted(const char *s) {
  size_t n = strlen(s);
  char *q = malloc(n + 3);
  if (!q) return NULL;
  q[0] = '\'';
  memcpy(q + 1, s, n);
  q[n + 1] = '\'';
  q[n + 2] = '\0';
  return q;
}

static int first_callable(CXCursor call, tether_lint_bind_callable *out, int depth);

/* Does the library hand its argument through unchanged (cpp_function, overload_cast)? */
static int is_passthrough(CXCursor fn) {
  if (clang_Cursor_isNull(fn) || tether_lint__bind_library(fn) == TETHER_LINT_BIND_NONE) return 0;
  if (tether_lint__cursor_is(fn, "cpp_function") || tether_lint__cursor_is(fn, "overload_cast"))
    return 1;
  /* py::overload_cast<Args...>(f) calls operator() of the variable template's class. */
  if (!tether_lint__cursor_is(fn, "operator()")) return 0;
  CXCursor cls = clang_getCursorSemanticParent(fn);
  CXCursor tmpl = clang_getSpecializedCursorTemplate(cls);
  if (!clang_Cursor_isNull(tmpl)) cls = tmpl;
  char *n = tether_lint__cx_take(clang_getCursorSpelling(cls));
  int yes = n && strstr(n, "overload_cast") != NULL;
  free(n);
  return yes;
}

static int callable_of(CXCursor arg, tether_lint_bind_callable *out, int depth) {
  CXCursor e = tether_lint__bind_strip(arg);
  enum CXCursorKind k = clang_getCursorKind(e);
  if (k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) {
    CXCursor r = clang_getCursorReferenced(e);
    enum CXCursorKind rk = clang_getCursorKind(r);
    if (rk != CXCursor_FunctionDecl && rk != CXCursor_CXXMethod &&
        rk != CXCursor_ConversionFunction)
      return 0;
    out->decl = r;
    out->expr = e;
    out->result = clang_getCursorResultType(r);
    out->is_lambda = 0;
    char *n = tether_lint__cx_take(clang_getCursorSpelling(r));
    out->name = n ? quoted(n) : NULL;
    free(n);
    return 1;
  }
  if (k == CXCursor_LambdaExpr) {
    CXCursor cls = clang_getTypeDeclaration(clang_getCursorType(e));
    call_operator co = {clang_getNullCursor()};
    if (!clang_Cursor_isNull(cls)) clang_visitChildren(cls, find_call_operator, &co);
    if (clang_Cursor_isNull(co.m)) return 0;
    out->decl = co.m;
    out->expr = e;
    out->result = clang_getCursorResultType(co.m);
    out->is_lambda = 1;
    out->name = tether_lint__strdup("the lambda");
    return 1;
  }
  if (k == CXCursor_CallExpr && depth < 4 && is_passthrough(clang_getCursorReferenced(e)))
    return first_callable(e, out, depth + 1);
  return 0;
}

static int first_callable(CXCursor call, tether_lint_bind_callable *out, int depth) {
  int na = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < na; i++)
    if (callable_of(clang_Cursor_getArgument(call, (unsigned)i), out, depth)) return 1;
  return 0;
}

int tether_lint__bind_callable(CXCursor arg, tether_lint_bind_callable *out) {
  return callable_of(arg, out, 0);
}

int tether_lint__bind_first_callable(CXCursor call, tether_lint_bind_callable *out) {
  return first_callable(call, out, 0);
}
