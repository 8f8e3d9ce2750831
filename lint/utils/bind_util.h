/* pybind11 and nanobind as libclang sees them: which library a declaration belongs to, and what a
 * binding call's argument calls when Python calls it. Shared by the rule families that read
 * binding code (lifetime/, direct/), as include-what-you-use keeps its AST utilities in a layer of
 * their own. Nothing here knows a rule. */
#ifndef TETHER_LINT_BIND_UTIL_H
#define TETHER_LINT_BIND_UTIL_H

#include "lint/lint.h"

/// The binding library a declaration belongs to.
enum { TETHER_LINT_BIND_NONE, TETHER_LINT_BIND_PYBIND11, TETHER_LINT_BIND_NANOBIND };

/// The library whose namespace encloses `c` (the outermost named namespace decides): one of
/// TETHER_LINT_BIND_*.
int tether_lint__bind_library(CXCursor c);

/// `e` without the implicit conversions, parentheses, address-of and functional casts
/// (`py::cpp_function(f)`) around what it names.
CXCursor tether_lint__bind_strip(CXCursor e);

/// What a binding call's argument calls when Python calls it.
typedef struct tether_lint_bind_callable {
  CXCursor decl; /* the function or method, or the lambda's operator() */
  CXCursor expr; /* the argument's expression that names it (a LambdaExpr, a DeclRefExpr...) */
  CXType result; /* its return type (a lambda's deduced one) */
  int is_lambda; /* 1 for a lambda */
  char *name;    /* for messages: 'name' in quotes, or "the lambda" (malloc'd; may be NULL) */
} tether_lint_bind_callable;

/// Resolves `arg` to the function, method or lambda it names, directly or through the library's
/// `cpp_function(f, ...)` or `overload_cast<...>(f)`: 1 with `out` filled (the caller frees
/// out->name), else 0 (a generic lambda, a callable kept in a variable, anything unresolved).
int tether_lint__bind_callable(CXCursor arg, tether_lint_bind_callable *out);
/// The first argument of `call` that tether_lint__bind_callable resolves: 1 and `out`, or 0.
int tether_lint__bind_first_callable(CXCursor call, tether_lint_bind_callable *out);

#endif
