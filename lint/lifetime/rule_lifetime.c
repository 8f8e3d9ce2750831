/* Rule family "lifetime": pybind11 and nanobind lifetime annotations that do nothing.
 *
 * A binding ties a returned object's life to its parent with a call policy (keep_alive<0, 1>) or
 * a return value policy (reference_internal). Two spellings compile and are silently dropped:
 *   keep-alive-ignored            pybind11's def_property family (def_property,
 *                                 def_property_readonly, their _static forms, def_readonly,
 *                                 def_readwrite and theirs) builds the getter and setter without
 *                                 the extras it is given and applies only what a function record
 *                                 stores; keep_alive and call_guard live in the dispatcher pybind11
 *                                 generates when it builds a function, so they are lost (pybind11
 *                                 issues #2618, #5046; 3.0.2 turned them into a static_assert).
 *                                 nanobind's def_prop_* forward them: not reported.
 *   reference-internal-by-value   reference_internal on a function that returns by value: both
 *                                 libraries turn the policy into `move` for a value (pybind11's
 *                                 return_value_policy_override, nanobind's infer_policy), and the
 *                                 keep-alive of reference_internal is added only where that policy
 *                                 reaches the cast, so the result keeps nothing alive: a raw
 *                                 handle returned this way outlives the object it came from.
 *
 * Invariant: only calls written in the main file are looked at (declarations of other files are
 * skipped whole); a call counts when libclang resolves its callee to a declaration inside
 * namespace pybind11 or nanobind, and an argument counts when it resolves to the library's
 * keep_alive/call_guard class template or to the enumerator reference_internal of its policy enum.
 * The callable whose return type decides is the first argument that resolves to a function,
 * method, lambda, or a cpp_function or overload_cast built from one (utils/bind_util.c); a generic
 * lambda or anything else unresolved is not judged (no finding). Nothing is kept between calls;
 * nothing is allocated but spellings. */
#include "lint/utils/bind_util.h"
#include "lint/utils/clang_util.h"

#include <stdlib.h>
#include <string.h>

#define KA_RULE "keep-alive-ignored"
#define RI_RULE "reference-internal-by-value"

static const tether_lint_rule_info lifetime_rules[] = {
    {KA_RULE, "pybind11 call policies passed to def_property and friends, which drop them",
     "pybind11's def_property, def_property_readonly, def_property_static, "
     "def_property_readonly_static, def_readonly, def_readwrite and their _static forms build "
     "their getter and setter without the extra arguments they are given: keep_alive<> and "
     "call_guard<> compile and are silently ignored (pybind11 issues #2618 and #5046; pybind11 "
     "3.0.2 rejects them with a static_assert). A property meant to keep its parent alive does "
     "not: the returned object can outlive the wrapper whose IR it points into.",
     "build the getter yourself with the policy, as pybind11 documents: "
     "def_property_readonly(\"x\", py::cpp_function(getter, py::keep_alive<0, 1>())); or return "
     "a reference or pointer so that reference_internal applies"},
    {RI_RULE, "reference_internal on a function that returns by value: no keep-alive",
     "return_value_policy::reference_internal (nanobind: rv_policy::reference_internal) means "
     "'reference the result and keep the object it came from alive'. Both libraries apply it "
     "only to results returned by pointer or lvalue reference: a result returned by value is "
     "moved into a new Python object (pybind11's return_value_policy_override, nanobind's "
     "infer_policy) and no keep-alive is added. A value that holds a raw MLIR handle (an "
     "MlirOperation, a PyValue) is then not tied to its parent, and dangles once the parent's IR "
     "is freed.",
     "keep the parent alive explicitly (py::keep_alive<0, 1>() / nb::keep_alive<0, 1>()), or make "
     "the returned object hold a reference to its parent (as upstream's PyValue holds its "
     "PyOperationRef)"},
};

/* The class template a (possibly cv-qualified) argument's type is a specialization of, when it is
 * `keep_alive` or `call_guard` of pybind11: its name, else NULL. */
static const char *call_policy_of(CXCursor arg) {
  CXType t = clang_getCanonicalType(clang_getCursorType(arg));
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
    t = clang_getCanonicalType(clang_getPointeeType(t));
  CXCursor decl = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(decl)) return NULL;
  CXCursor tmpl = clang_getSpecializedCursorTemplate(decl);
  if (clang_Cursor_isNull(tmpl) || tether_lint__bind_library(tmpl) != TETHER_LINT_BIND_PYBIND11)
    return NULL;
  if (tether_lint__cursor_is(tmpl, "keep_alive")) return "keep_alive";
  if (tether_lint__cursor_is(tmpl, "call_guard")) return "call_guard";
  return NULL;
}

/* Is the argument the enumerator reference_internal of the library's policy enum? */
static int is_reference_internal(CXCursor arg, int lib) {
  CXCursor e = tether_lint__bind_strip(arg);
  if (clang_getCursorKind(e) != CXCursor_DeclRefExpr) return 0;
  CXCursor r = clang_getCursorReferenced(e);
  if (clang_getCursorKind(r) != CXCursor_EnumConstantDecl ||
      !tether_lint__cursor_is(r, "reference_internal"))
    return 0;
  CXCursor en = clang_getCursorSemanticParent(r);
  const char *want = lib == TETHER_LINT_BIND_PYBIND11 ? "return_value_policy" : "rv_policy";
  return tether_lint__cursor_is(en, want) && tether_lint__bind_library(en) == lib;
}

/* The functions of pybind11 that drop keep_alive and call_guard. */
static int drops_call_policies(CXCursor fn) {
  static const char *const names[] = {
      "def_property",        "def_property_readonly",
      "def_property_static", "def_property_readonly_static",
      "def_readonly",        "def_readwrite",
      "def_readonly_static", "def_readwrite_static",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (tether_lint__cursor_is(fn, names[i])) return 1;
  return 0;
}

/* Does a result of this type reach the cast as a value (not a pointer or lvalue reference)? Only
 * class types are judged: a number or an enum returned with the policy is pointless, not a
 * lifetime bug. */
static int returned_by_value(CXType t) {
  CXType c = clang_getCanonicalType(t);
  if (c.kind == CXType_RValueReference) return 1;
  return c.kind == CXType_Record;
}

typedef struct lifetime_ctx {
  tether_lint_file *f;
  CXTranslationUnit tu;
  unsigned *ka_lines; /* lines of the AST's keep-alive-ignored findings (for the token scan) */
  size_t nka, capka;
} lifetime_ctx;

static void check_call(lifetime_ctx *x, CXCursor call) {
  CXCursor fn = clang_getCursorReferenced(call);
  if (clang_Cursor_isNull(fn)) return;
  int lib = tether_lint__bind_library(fn);
  if (lib == TETHER_LINT_BIND_NONE) return;
  char *fname = tether_lint__cx_take(clang_getCursorSpelling(fn));
  int na = clang_Cursor_getNumArguments(call);
  int ka = lib == TETHER_LINT_BIND_PYBIND11 && drops_call_policies(fn);
  for (int i = 0; i < na; i++) {
    CXCursor arg = clang_Cursor_getArgument(call, (unsigned)i);
    const char *pol = ka ? call_policy_of(arg) : NULL;
    if (pol) {
      CXSourceLocation at = clang_getRangeStart(clang_getCursorExtent(arg));
      unsigned line = 0;
      clang_getExpansionLocation(at, NULL, &line, NULL, NULL);
      if (tether_lint__grow(&x->ka_lines, &x->capka, x->nka, sizeof *x->ka_lines) == 0)
        x->ka_lines[x->nka++] = line;
      tether_lint__report_tu(x->f, x->tu, at, KA_RULE,
                             "%s<> passed to %s() is ignored: pybind11 builds the property's "
                             "getter and setter without it (wrap the getter: "
                             "py::cpp_function(getter, py::%s<...>()))",
                             pol, fname ? fname : "def_property", pol);
    }
    if (!is_reference_internal(arg, lib)) continue;
    tether_lint_bind_callable cb = {0};
    if (tether_lint__bind_first_callable(call, &cb) && returned_by_value(cb.result)) {
      char *ts = tether_lint__cx_take(clang_getTypeSpelling(cb.result));
      tether_lint__report_tu(
          x->f, x->tu, clang_getRangeStart(clang_getCursorExtent(arg)), RI_RULE,
          "%s::reference_internal on %s, which returns '%s' by value: %s moves a returned value "
          "into a new object and adds no keep-alive, so the result does not keep its parent alive",
          lib == TETHER_LINT_BIND_PYBIND11 ? "return_value_policy" : "rv_policy",
          cb.name ? cb.name : "a function", ts ? ts : "?",
          lib == TETHER_LINT_BIND_PYBIND11 ? "pybind11" : "nanobind");
      free(ts);
    }
    free(cb.name);
  }
  free(fname);
}

static enum CXChildVisitResult visit(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  lifetime_ctx *x = d;
  enum CXCursorKind kk = clang_getCursorKind(k);
  /* Other files' declarations are skipped whole (only declarations are asked: asking every
   * expression's location is slow on long expressions). */
  if (clang_isDeclaration(kk) && !tether_lint__in_main_file(x->tu, clang_getCursorLocation(k)))
    return CXChildVisit_Continue;
  if (kk == CXCursor_CallExpr) check_call(x, k);
  return CXChildVisit_Recurse;
}

/* ---- files that do not compile --------------------------------------------------------------
 * Without pybind11's headers nothing resolves. keep-alive-ignored is then found from tokens: a
 * call `.def_property...(` (names only pybind11 uses) with `keep_alive <` or `call_guard <` among
 * its arguments, up to the matching parenthesis. reference-internal-by-value needs return types
 * and is not checked from tokens; the note says so. */

static int ka_line_seen(const lifetime_ctx *x, unsigned line) {
  for (size_t i = 0; i < x->nka; i++)
    if (x->ka_lines[i] == line) return 1;
  return 0;
}

static int is_property_def(const char *s) {
  static const char *const names[] = {
      "def_property",        "def_property_readonly",
      "def_property_static", "def_property_readonly_static",
      "def_readonly",        "def_readwrite",
      "def_readonly_static", "def_readwrite_static",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i]) == 0) return 1;
  return 0;
}

static void degraded(lifetime_ctx *x) {
  if (!tether_lint__error_count(x->tu)) return;
  CXFile file = tether_lint__main_file(x->tu);
  if (!file) return;
  tether_lint_tokens tk;
  if (tether_lint__tokenize_file(x->tu, file, &tk) != 0) return;
  int policies = 0, found = 0;
  for (size_t i = 1; i + 1 < tk.n; i++) {
    const tether_lint_token *t = &tk.t[i];
    if (t->kind == CXToken_Identifier && tether_lint__token_is(t, "reference_internal"))
      policies = 1;
    if (t->kind != CXToken_Identifier || !tether_lint__token_is(&tk.t[i - 1], ".") ||
        !tether_lint__token_is(&tk.t[i + 1], "("))
      continue;
    if (!is_property_def(t->s) || !tether_lint__file_rule_enabled(x->f, KA_RULE)) continue;
    size_t depth = 0;
    for (size_t j = i + 1; j < tk.n; j++) {
      const tether_lint_token *a = &tk.t[j];
      if (tether_lint__token_is(a, "(")) depth++;
      if (tether_lint__token_is(a, ")") && --depth == 0) break;
      if (a->kind != CXToken_Identifier || j + 1 >= tk.n ||
          !tether_lint__token_is(&tk.t[j + 1], "<"))
        continue;
      const char *pol = tether_lint__token_is(a, "keep_alive")   ? "keep_alive"
                        : tether_lint__token_is(a, "call_guard") ? "call_guard"
                                                                 : NULL;
      if (!pol || ka_line_seen(x, a->line)) continue;
      tether_lint__report_at(x->f, a->line, a->col, KA_RULE,
                             "%s<> passed to %s() is ignored: pybind11 builds the property's "
                             "getter and setter without it (wrap the getter: "
                             "py::cpp_function(getter, py::%s<...>()))",
                             pol, t->s, pol);
      found++;
    }
  }
  tether_lint__tokens_free(&tk);
  if (!policies || !tether_lint__file_rule_enabled(x->f, RI_RULE)) return;
  char hdr[512];
  tether_lint__missing_header(x->tu, NULL, hdr, sizeof hdr);
  tether_lint__file_message(x->f, 0,
                            "lifetime: degraded mode: the file does not compile%s%s%s; %d "
                            "keep-alive-ignored finding(s) from tokens only; "
                            "reference-internal-by-value not checked where the call did not "
                            "compile (it needs return types)",
                            hdr[0] ? " (missing header '" : "", hdr, hdr[0] ? "')" : "", found);
}

static int lifetime_check_tu(tether_lint_file *f, void *state, CXTranslationUnit tu) {
  (void)state;
  if (!tether_lint__file_rule_enabled(f, KA_RULE) && !tether_lint__file_rule_enabled(f, RI_RULE))
    return 0;
  lifetime_ctx x = {f, tu, NULL, 0, 0};
  clang_visitChildren(clang_getTranslationUnitCursor(tu), visit, &x);
  degraded(&x);
  free(x.ka_lines);
  return 0;
}

const tether_lint_family tether_lint__family_lifetime = {
    .name = "lifetime",
    .inputs = TETHER_LINT_IN_TU,
    .rules = lifetime_rules,
    .nrules = sizeof lifetime_rules / sizeof lifetime_rules[0],
    .check_tu = lifetime_check_tu,
};
