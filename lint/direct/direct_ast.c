/* The AST pass: registrations (`py::class_<T, ...>(scope, "name")`, `nb::class_<T>`) and bound
 * callables (`.def`, `.def_static`, properties, `m.def`) that libclang resolved into namespace
 * pybind11 or nanobind.
 *
 * Invariant: a registration is a call of a constructor of the library's class_ template (a copy or
 * move of a class_ object is not one), its class the template's first argument and its holder or
 * bases the others; a bound callable is an argument of a def-like method of the library that
 * utils/bind_util.c resolves to a function, method, lambda or data member. Every call judged here
 * is marked, so that the token pass never judges it a second time. Only code of the main file is
 * looked at (declarations of other files are skipped whole). */
#include "lint/direct/direct.h"
#include "lint/utils/bind_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The binding libraries' methods that bind a callable or a member (pybind11's, then nanobind's). */
static const char *const def_methods[] = {
    "def",
    "def_static",
    "def_property",
    "def_property_readonly",
    "def_property_static",
    "def_property_readonly_static",
    "def_readonly",
    "def_readwrite",
    "def_readonly_static",
    "def_readwrite_static",
    "def_prop_ro",
    "def_prop_rw",
    "def_prop_ro_static",
    "def_prop_rw_static",
    "def_ro",
    "def_rw",
    "def_ro_static",
    "def_rw_static",
};

typedef struct ast_ctx {
  direct_ctx *x;
  int defs;
} ast_ctx;

/* The name of a template argument's class template (qualified), or "". */
static void template_name(CXType t, char *out, size_t len) {
  out[0] = '\0';
  CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(t));
  CXCursor tmpl = clang_Cursor_isNull(d) ? d : clang_getSpecializedCursorTemplate(d);
  if (!clang_Cursor_isNull(tmpl)) direct_qualified_name(tmpl, out, len);
}

/* std::unique_ptr<T, pybind11::nodelete>: Python never deletes what it holds. */
static int is_nodelete_holder(CXType t) {
  char q[256];
  template_name(t, q, sizeof q);
  if (strcmp(q, "std::unique_ptr") != 0 || clang_Type_getNumTemplateArguments(t) < 2) return 0;
  CXType del = clang_Type_getTemplateArgumentAsType(clang_getCanonicalType(t), 1);
  CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(del));
  char dq[256];
  direct_qualified_name(d, dq, sizeof dq);
  return strcmp(dq, "pybind11::nodelete") == 0;
}

/* Is a holder (or a base) of namespace tether among the arguments 1..? */
static int tether_held(direct_ctx *x, CXType cls, int n) {
  for (int i = 1; i < n; i++) {
    CXType a = clang_Type_getTemplateArgumentAsType(cls, (unsigned)i);
    if (a.kind == CXType_Invalid) continue;
    char q[256];
    template_name(a, q, sizeof q);
    if (strncmp(q, "tether::", 8) == 0 || direct_classify_type(x, a, NULL, 0) == DIRECT_TETHER)
      return 1;
  }
  return 0;
}

static void registration(ast_ctx *a, CXCursor call, CXCursor parent, CXCursor ctor) {
  direct_ctx *x = a->x;
  if (clang_CXXConstructor_isCopyConstructor(ctor) || clang_CXXConstructor_isMoveConstructor(ctor))
    return;
  CXCursor cls = clang_getCursorSemanticParent(ctor);
  CXCursor tmpl = clang_getSpecializedCursorTemplate(cls);
  if (clang_Cursor_isNull(tmpl) || !tether_lint__cursor_is(tmpl, "class_")) return;
  int lib = tether_lint__bind_library(tmpl);
  if (lib == TETHER_LINT_BIND_NONE) return;
  CXType t = clang_getCanonicalType(clang_getCursorType(cls));
  int n = clang_Type_getNumTemplateArguments(t);
  if (n < 1) return;
  CXType arg0 = clang_Type_getTemplateArgumentAsType(t, 0);
  char q[512];
  int cat = direct_classify_type(x, arg0, q, sizeof q);
  int nodelete = 0;
  for (int i = 1; i < n; i++)
    nodelete |= is_nodelete_holder(clang_Type_getTemplateArgumentAsType(t, (unsigned)i));
  int tether = cat == DIRECT_TETHER || tether_held(x, t, n);
  CXSourceRange ext =
      clang_getCursorExtent(clang_getCursorKind(parent) == CXCursor_VarDecl ? parent : call);
  direct_mark_judged(x, clang_getRangeStart(ext), clang_getRangeEnd(ext));
  direct_reg *r = direct_add_reg(x, q, q, cat, NULL);
  if (!r) return;
  r->tether = tether;
  r->nodelete = nodelete;
  r->lib = lib;
  r->at = clang_getCursorLocation(call);
  /* A typedef of a template's specialization (DenseI32ArrayAttr) reads better as written. */
  CXCursor d0 = clang_getTypeDeclaration(clang_getCanonicalType(arg0));
  if (!clang_Cursor_isNull(clang_getSpecializedCursorTemplate(d0))) {
    CXType sugared =
        clang_getCursorType(clang_getCursorKind(parent) == CXCursor_VarDecl ? parent : call);
    CXType a0 = clang_Type_getTemplateArgumentAsType(sugared, 0);
    r->display = tether_lint__cx_take(clang_getTypeSpelling(a0.kind != CXType_Invalid ? a0 : arg0));
  }
  if (clang_getCursorKind(parent) == CXCursor_VarDecl) r->at = clang_getCursorLocation(parent);
  if (cat == DIRECT_CONTEXT && nodelete) x->immortal_context = 1;
}

/* ---- bound callables ------------------------------------------------------------------------ */

const char *direct_def_method(const char *name) {
  for (size_t i = 0; name && i < sizeof def_methods / sizeof def_methods[0]; i++)
    if (strcmp(name, def_methods[i]) == 0) return def_methods[i];
  return NULL;
}

static const char *def_method(CXCursor m) {
  char *n = tether_lint__cx_take(clang_getCursorSpelling(m));
  const char *r = direct_def_method(n);
  free(n);
  return r;
}

/* The enumerator of the library's return value policy an argument names, or NULL. */
static int policy_of(CXCursor arg, char *out, size_t len) {
  CXCursor e = tether_lint__bind_strip(arg);
  if (clang_getCursorKind(e) != CXCursor_DeclRefExpr) return 0;
  CXCursor r = clang_getCursorReferenced(e);
  if (clang_getCursorKind(r) != CXCursor_EnumConstantDecl) return 0;
  CXCursor en = clang_getCursorSemanticParent(r);
  if (!(tether_lint__cursor_is(en, "return_value_policy") ||
        tether_lint__cursor_is(en, "rv_policy")) ||
      tether_lint__bind_library(en) == TETHER_LINT_BIND_NONE)
    return 0;
  char *s = tether_lint__cx_take(clang_getCursorSpelling(r));
  snprintf(out, len, "%s", s ? s : "");
  free(s);
  return 1;
}

static enum CXChildVisitResult first_child(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  *(CXCursor *)d = k;
  return CXChildVisit_Break;
}

/* The Python name: the first argument, when it is a string literal. */
static void python_name(CXCursor arg, char *out, size_t len) {
  out[0] = '\0';
  CXCursor e = tether_lint__bind_strip(arg);
  if (clang_getCursorKind(e) != CXCursor_StringLiteral) return;
  char *s = tether_lint__cx_take(clang_getCursorSpelling(e));
  if (s && s[0] == '"') {
    size_t n = strlen(s);
    snprintf(out, len, "%.*s", (int)(n >= 2 ? n - 2 : 0), s + 1);
  }
  free(s);
}

static void def_call(ast_ctx *a, CXCursor call, CXCursor method) {
  direct_ctx *x = a->x;
  direct_site site;
  memset(&site, 0, sizeof site);
  site.method = def_method(method);
  if (!site.method || tether_lint__bind_library(method) == TETHER_LINT_BIND_NONE) return;
  CXCursor callee = clang_getNullCursor();
  clang_visitChildren(call, first_child, &callee);
  site.at = clang_getCursorKind(callee) == CXCursor_MemberRefExpr ? clang_getCursorLocation(callee)
                                                                  : clang_getCursorLocation(call);
  direct_mark_judged(x, site.at, site.at);
  int na = clang_Cursor_getNumArguments(call);
  if (na > 0) python_name(clang_Cursor_getArgument(call, 0), site.name, sizeof site.name);
  for (int i = 1; i < na; i++)
    if (policy_of(clang_Cursor_getArgument(call, (unsigned)i), site.policy, sizeof site.policy))
      break;
  int done = 0;
  for (int i = 0; i < na; i++) {
    CXCursor arg = clang_Cursor_getArgument(call, (unsigned)i);
    tether_lint_bind_callable cb = {0};
    if (tether_lint__bind_callable(arg, &cb)) {
      direct_judge_callable(x, &site, cb.decl, cb.result, &done);
      free(cb.name);
      continue;
    }
    /* A data member (def_readonly, def_rw...): what it holds. */
    CXCursor e = tether_lint__bind_strip(arg);
    if (clang_getCursorKind(e) == CXCursor_DeclRefExpr &&
        clang_getCursorKind(clang_getCursorReferenced(e)) == CXCursor_FieldDecl) {
      CXCursor fld = clang_getCursorReferenced(e);
      direct_judge_callable(x, &site, fld, clang_getCursorType(fld), &done);
    }
  }
}

/* A call of a Python object (`fn(op)` on a py::function, nb::callable...) with raw IR among its
 * arguments, in a body and the lambdas inside it. */
typedef struct pycall_ctx {
  direct_ctx *x;
  direct_ret rr;
  CXType arg;
  int found;
} pycall_ctx;

static enum CXChildVisitResult pycall_visit(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  pycall_ctx *p = d;
  if (clang_getCursorKind(c) != CXCursor_CallExpr) return CXChildVisit_Recurse;
  CXCursor callee = clang_getCursorReferenced(c);
  if (clang_getCursorKind(callee) != CXCursor_CXXMethod ||
      !tether_lint__cursor_is(callee, "operator()") ||
      tether_lint__bind_library(callee) == TETHER_LINT_BIND_NONE)
    return CXChildVisit_Recurse;
  int na = clang_Cursor_getNumArguments(c);
  for (int i = 0; i < na; i++) {
    CXType t = clang_getCursorType(clang_Cursor_getArgument(c, (unsigned)i));
    if (direct_type_raw_ir(p->x, t, &p->rr)) {
      p->arg = t;
      p->found = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

void direct_judge_callable(direct_ctx *x, const direct_site *site, CXCursor decl, CXType result,
                           int *done) {
  char why[512];
  int is_function = clang_getCursorKind(decl) != CXCursor_FieldDecl;
  if (!(*done & DIRECT_DONE_FREES) && is_function &&
      tether_lint__file_rule_enabled(x->f, DIRECT_RULE_FREES) &&
      direct_body_frees(x, decl, why, sizeof why)) {
    direct_report_frees(x, site, why);
    *done |= DIRECT_DONE_FREES;
  }
  if ((*done & DIRECT_DONE_RAW) || !tether_lint__file_rule_enabled(x->f, DIRECT_RULE_RAW)) return;
  direct_ret rr;
  if (result.kind != CXType_Invalid && direct_type_raw_ir(x, result, &rr)) {
    if (!direct_held(x, rr.qname, rr.cat)) {
      char *ts = tether_lint__cx_take(clang_getTypeSpelling(result));
      direct_report_raw(x, site, ts ? ts : rr.qname, rr.cat, 0, rr.in_container);
      free(ts);
      *done |= DIRECT_DONE_RAW;
      return;
    }
  }
  int np = is_function ? clang_Cursor_getNumArguments(decl) : 0;
  for (int i = 0; i < np; i++) {
    CXType pt = clang_getCursorType(clang_Cursor_getArgument(decl, (unsigned)i));
    if (!direct_callback_raw_ir(x, pt, &rr) || direct_held(x, rr.qname, rr.cat)) continue;
    char *ts = tether_lint__cx_take(clang_getTypeSpelling(pt));
    direct_report_raw(x, site, ts ? ts : rr.qname, rr.cat, 1, 0);
    free(ts);
    *done |= DIRECT_DONE_RAW;
    return;
  }
  /* A Python callable the body calls with raw IR (`[](Operation &op, py::function fn) {
   * op.walk([&](Operation *o) { fn(o); }); }`). */
  CXCursor def = is_function ? clang_getCursorDefinition(decl) : clang_getNullCursor();
  if (clang_Cursor_isNull(def) || !tether_lint__in_main_file(x->tu, clang_getCursorLocation(def)))
    return;
  pycall_ctx p = {x, {0}, {CXType_Invalid, {NULL, NULL}}, 0};
  clang_visitChildren(def, pycall_visit, &p);
  if (!p.found || direct_held(x, p.rr.qname, p.rr.cat)) return;
  char *ts = tether_lint__cx_take(clang_getTypeSpelling(p.arg));
  direct_report_raw(x, site, ts ? ts : p.rr.qname, p.rr.cat, 1, 0);
  free(ts);
  *done |= DIRECT_DONE_RAW;
}

/* ---- the walk -------------------------------------------------------------------------------- */

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData d) {
  ast_ctx *a = d;
  enum CXCursorKind k = clang_getCursorKind(c);
  /* Other files' declarations are skipped whole (only declarations are asked: asking every
   * expression's location is slow on long expressions). */
  if (clang_isDeclaration(k) && !tether_lint__in_main_file(a->x->tu, clang_getCursorLocation(c)))
    return CXChildVisit_Continue;
  /* A template's dependent registrations and `.def` calls have no callee yet: the token pass
   * reads them (from the pattern as written). */
  if (!a->defs && (k == CXCursor_FunctionTemplate || k == CXCursor_ClassTemplate ||
                   k == CXCursor_ClassTemplatePartialSpecialization)) {
    CXSourceRange ext = clang_getCursorExtent(c);
    direct_ranges_add(a->x, &a->x->templates, clang_getRangeStart(ext), clang_getRangeEnd(ext));
  }
  if (!a->defs && k == CXCursor_TemplateTypeParameter) {
    char *n = tether_lint__cx_take(clang_getCursorSpelling(c));
    if (n && n[0]) tether_lint__strlist_add_unique(&a->x->template_params, n);
    free(n);
  }
  if (k != CXCursor_CallExpr) return CXChildVisit_Recurse;
  CXCursor ref = clang_getCursorReferenced(c);
  enum CXCursorKind rk = clang_getCursorKind(ref);
  if (!a->defs && rk == CXCursor_Constructor) registration(a, c, parent, ref);
  if (a->defs && rk == CXCursor_CXXMethod) def_call(a, c, ref);
  return CXChildVisit_Recurse;
}

void direct_ast_pass(direct_ctx *x, int defs) {
  ast_ctx a = {x, defs};
  clang_visitChildren(clang_getTranslationUnitCursor(x->tu), visit, &a);
}
