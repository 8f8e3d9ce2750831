/* Templates: the instantiations the file makes, for expressions that depend on a template
 * parameter.
 *
 * Inside a template, a call through a template parameter (`container.getElement(i).get()` with
 * `Container &container`, `DerivedTy::isaFunction(value)`) names no declaration before
 * instantiation, and libclang shows only the pattern. The translation unit's own instantiations
 * say what the parameters are: a call of a function template gives its parameters' types, a class
 * deriving from `Base<X>` gives a class template's arguments. With those, the member a dependent
 * expression names is looked up in the bound class (and its bases, class templates' patterns
 * with their arguments substituted one level), so its raw accessors, guards and conversions are
 * recognised as in ordinary code.
 *
 * Invariant: the first instantiation recorded for a template (in file order) is the one used. */
#include "lint/rawop/rawop.h"
#include "lint/utils/clang_util.h"

#include <stdlib.h>
#include <string.h>

static void tb_add(rawop_ctx *c, CXCursor tmpl, int is_class, const CXType *args, int nargs) {
  rawop_shared *sh = c->sh;
  CXString u = clang_getCursorUSR(tmpl);
  const char *usr = clang_getCString(u);
  int have = 0;
  for (size_t i = 0; i < sh->ntb && !have; i++)
    if (sh->tb[i].is_class == is_class && strcmp(sh->tb[i].usr, usr) == 0) have = 1;
  if (!have && usr && *usr) {
    if (tether_lint__grow(&sh->tb, &sh->captb, sh->ntb, sizeof *sh->tb) == 0) {
      rawop_tbinding *b = &sh->tb[sh->ntb];
      b->usr = tether_lint__strdup(usr);
      b->is_class = is_class;
      b->nargs = nargs > 8 ? 8 : nargs;
      for (int i = 0; i < b->nargs; i++) b->args[i] = args[i];
      if (b->usr) sh->ntb++;
    }
  }
  clang_disposeString(u);
}

enum CXChildVisitResult rawop_collect_bindings(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  rawop_ctx *c = d;
  enum CXCursorKind kk = clang_getCursorKind(k);
  /* Headers' declarations are skipped; what is inside a declaration of the main file is in it.
   * (Only declarations are asked: an expression's location walks to its leftmost operand, and a
   * 100,000-term sum asked at every level took seconds.) */
  if (clang_isDeclaration(kk) && !tether_lint__in_main_file(c->tu, clang_getCursorLocation(k)))
    return CXChildVisit_Continue;
  if (kk == CXCursor_CallExpr) {
    CXCursor fn = clang_getCursorReferenced(k);
    CXCursor tmpl = clang_Cursor_isNull(fn) ? fn : clang_getSpecializedCursorTemplate(fn);
    if (!clang_Cursor_isNull(tmpl) && clang_getCursorKind(tmpl) == CXCursor_FunctionTemplate) {
      int na = clang_Cursor_getNumArguments(k);
      CXType args[8];
      int n = 0;
      for (int i = 0; i < na && n < 8; i++)
        args[n++] = rawop_strip_refs(clang_getCursorType(clang_Cursor_getArgument(k, (unsigned)i)));
      tb_add(c, tmpl, 0, args, n);
    }
  } else if (kk == CXCursor_CXXBaseSpecifier) {
    CXType bt = clang_getCursorType(k);
    int nta = clang_Type_getNumTemplateArguments(bt);
    CXCursor decl = clang_getTypeDeclaration(bt);
    CXCursor tmpl = clang_Cursor_isNull(decl) ? decl : clang_getSpecializedCursorTemplate(decl);
    if (nta > 0 && !clang_Cursor_isNull(tmpl) &&
        clang_getCursorKind(tmpl) == CXCursor_ClassTemplate) {
      CXType args[8];
      int n = 0;
      for (int i = 0; i < nta && n < 8; i++)
        args[n++] = clang_Type_getTemplateArgumentAsType(bt, (unsigned)i);
      tb_add(c, tmpl, 1, args, n);
    }
  }
  return CXChildVisit_Recurse;
}

static const rawop_tbinding *binding_for(rawop_ctx *c, CXCursor tmpl, int is_class) {
  CXString u = clang_getCursorUSR(tmpl);
  const char *usr = clang_getCString(u);
  const rawop_tbinding *r = NULL;
  for (size_t i = 0; i < c->sh->ntb && !r; i++)
    if (c->sh->tb[i].is_class == is_class && usr && strcmp(c->sh->tb[i].usr, usr) == 0)
      r = &c->sh->tb[i];
  clang_disposeString(u);
  return r;
}

typedef struct tparam_find {
  CXCursor want;
  int index, at;
} tparam_find;

static enum CXChildVisitResult find_tparam(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  tparam_find *tf = d;
  enum CXCursorKind kk = clang_getCursorKind(k);
  if (kk != CXCursor_TemplateTypeParameter && kk != CXCursor_NonTypeTemplateParameter &&
      kk != CXCursor_TemplateTemplateParameter)
    return CXChildVisit_Continue;
  if (clang_equalCursors(k, tf->want)) {
    tf->index = tf->at;
    return CXChildVisit_Break;
  }
  tf->at++;
  return CXChildVisit_Continue;
}

/* The position of template parameter `tp` in its template's parameter list, or -1. */
static int tparam_index(CXCursor tmpl, CXCursor tp) {
  tparam_find tf = {tp, -1, 0};
  clang_visitChildren(tmpl, find_tparam, &tf);
  return tf.index;
}

/* Finding a child of a declaration by kind and name (child_named). */
typedef struct named_child {
  const char *name;
  const enum CXCursorKind *kinds;
  size_t nkinds;
  CXCursor found;
} named_child;

static enum CXChildVisitResult find_named(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  named_child *nc = d;
  enum CXCursorKind kk = clang_getCursorKind(k);
  int kind_ok = 0;
  for (size_t i = 0; i < nc->nkinds && !kind_ok; i++) kind_ok = kk == nc->kinds[i];
  if (!kind_ok || !tether_lint__cursor_is(k, nc->name)) return CXChildVisit_Continue;
  nc->found = k;
  return CXChildVisit_Break;
}

/* The first child of `parent` of one of the `nkinds` kinds named `name`, or a null cursor. */
static CXCursor child_named(CXCursor parent, const char *name, const enum CXCursorKind *kinds,
                            size_t nkinds) {
  named_child nc = {name, kinds, nkinds, clang_getNullCursor()};
  clang_visitChildren(parent, find_named, &nc);
  return nc.found;
}

/* A class template's argument for its parameter `tp` in the instantiation `owner` (a
 * specialization type), or else in the file's own instantiations. */
static CXType bound_tparam(rawop_ctx *c, CXCursor tp, CXType owner) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  CXCursor tmpl = clang_getCursorSemanticParent(tp);
  int idx = tparam_index(tmpl, tp);
  if (idx < 0) return none;
  if (owner.kind != CXType_Invalid && idx < clang_Type_getNumTemplateArguments(owner))
    return clang_Type_getTemplateArgumentAsType(owner, (unsigned)idx);
  if (clang_getCursorKind(tmpl) != CXCursor_ClassTemplate) return none;
  const rawop_tbinding *b = binding_for(c, tmpl, 1);
  return b && idx < b->nargs ? b->args[idx] : none;
}

/* The class a (possibly dependent) type stands for. */
static CXType bind_type(rawop_ctx *c, CXType t) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  t = rawop_strip_refs(t);
  if (t.kind == CXType_Record) return t;
  CXCursor d = clang_getTypeDeclaration(t);
  if (clang_getCursorKind(d) == CXCursor_TemplateTypeParameter) {
    CXType b = bound_tparam(c, d, none);
    return b.kind == CXType_Invalid ? none : rawop_strip_refs(b);
  }
  return none;
}

/* The kinds of member a member expression can name. */
static const enum CXCursorKind member_kinds[] = {CXCursor_CXXMethod, CXCursor_FieldDecl,
                                                 CXCursor_VarDecl, CXCursor_ConversionFunction,
                                                 CXCursor_FunctionTemplate};

/* The declaration of member `name` of class type `t` or of one of its bases; `owner` receives
 * the class type it was found in (a specialization, for substituting its arguments). */
static CXCursor lookup_member(rawop_ctx *c, CXType t, const char *name, CXType *owner, int depth) {
  CXCursor none = clang_getNullCursor();
  if (depth > 6 || t.kind == CXType_Invalid) return none;
  CXCursor decl = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(decl)) return none;
  CXCursor def = clang_getCursorDefinition(decl);
  if (clang_Cursor_isNull(def)) def = decl;
  CXCursor tmpl = clang_getSpecializedCursorTemplate(def);
  CXCursor body = !clang_Cursor_isNull(tmpl) ? tmpl : def;
  CXCursor found =
      child_named(body, name, member_kinds, sizeof member_kinds / sizeof member_kinds[0]);
  if (!clang_Cursor_isNull(found)) {
    *owner = t;
    return found;
  }
  rawop_kids ks = rawop_children(body);
  CXCursor r = none;
  for (size_t i = 0; i < ks.n && clang_Cursor_isNull(r); i++) {
    if (clang_getCursorKind(ks.v[i]) != CXCursor_CXXBaseSpecifier) continue;
    CXType bt = clang_getCursorType(ks.v[i]);
    CXType rb = rawop_strip_refs(bt);
    if (rb.kind != CXType_Record) {
      /* A base spelled with the pattern's parameters: substitute when it is one of them. */
      CXCursor bd = clang_getTypeDeclaration(bt);
      if (clang_getCursorKind(bd) != CXCursor_TemplateTypeParameter) continue;
      rb = rawop_strip_refs(bound_tparam(c, bd, t));
      if (rb.kind != CXType_Record) continue;
    }
    r = lookup_member(c, rb, name, owner, depth + 1);
  }
  free(ks.v);
  return r;
}

/* `ret` (a member's type, written in its class's pattern) in the instantiation `owner`. */
static CXType subst_type(rawop_ctx *c, CXType ret, CXType owner, CXCursor member) {
  CXType r = rawop_strip_refs(ret);
  if (r.kind == CXType_Record) return r;
  CXString sp = clang_getTypeSpelling(clang_getNonReferenceType(ret));
  char name[128];
  snprintf(name, sizeof name, "%s", clang_getCString(sp));
  clang_disposeString(sp);
  /* "const E" -> "E" */
  const char *nm = strncmp(name, "const ", 6) == 0 ? name + 6 : name;
  CXCursor cls = clang_getCursorSemanticParent(member);
  static const enum CXCursorKind tparam[] = {CXCursor_TemplateTypeParameter};
  CXCursor tp = child_named(cls, nm, tparam, 1);
  if (clang_Cursor_isNull(tp)) return bind_type(c, ret);
  return rawop_strip_refs(bound_tparam(c, tp, owner));
}

/* The class type of expression `e` (dependent or not), through the file's instantiations. */
static CXType expr_class(rawop_ctx *c, CXCursor e, int depth) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  if (depth > 8 || clang_Cursor_isNull(e)) return none;
  CXCursor s = rawop_skip_parens(e);
  CXType t = rawop_strip_refs(clang_getCursorType(s));
  if (t.kind == CXType_Record) return t;
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_DeclRefExpr) {
    CXCursor var = clang_getCursorReferenced(s);
    if (clang_getCursorKind(var) == CXCursor_ParmDecl) {
      CXCursor fn = clang_getCursorSemanticParent(var);
      if (clang_getCursorKind(fn) == CXCursor_FunctionTemplate) {
        /* (clang_Cursor_getArgument does not work on a template: its parameters in order.) */
        const rawop_tbinding *b = binding_for(c, fn, 0);
        rawop_kids ps = rawop_children(fn);
        int pi = 0;
        CXType r = none;
        for (size_t i = 0; b && i < ps.n; i++) {
          if (clang_getCursorKind(ps.v[i]) != CXCursor_ParmDecl) continue;
          if (clang_equalCursors(ps.v[i], var) && pi < b->nargs) r = rawop_strip_refs(b->args[pi]);
          pi++;
        }
        free(ps.v);
        if (r.kind != CXType_Invalid) return r;
      }
    }
    return clang_Cursor_isNull(var) ? none : bind_type(c, clang_getCursorType(var));
  }
  CXCursor m = s;
  if (k == CXCursor_CallExpr) {
    rawop_kids ks = rawop_children(s);
    m = ks.n ? ks.v[0] : clang_getNullCursor();
    free(ks.v);
  }
  if (clang_Cursor_isNull(m) || clang_getCursorKind(m) != CXCursor_MemberRefExpr) return none;
  CXType bt = expr_class(c, rawop_first_expr_child(m), depth + 1);
  if (bt.kind == CXType_Invalid) return none;
  char name[160];
  rawop_ref_name(c, m, name, sizeof name);
  CXType owner = none;
  CXCursor mem = lookup_member(c, bt, name, &owner, 0);
  if (clang_Cursor_isNull(mem)) return none;
  CXType mt = clang_getCursorType(mem);
  CXType rt = clang_getCursorKind(mem) == CXCursor_FieldDecl ? mt : clang_getResultType(mt);
  return subst_type(c, rt, owner, mem);
}

/* The declaration a member expression refers to: libclang's, or for a dependent one, the member
 * of the class its object has in the file's instantiations. */
CXCursor rawop_member_ref(rawop_ctx *c, CXCursor m) {
  CXCursor ref = clang_getCursorReferenced(m);
  if (!clang_Cursor_isNull(ref) || !c->sh || !c->sh->ntb) return ref;
  if (clang_getCursorKind(m) != CXCursor_MemberRefExpr) return ref;
  CXType bt = expr_class(c, rawop_first_expr_child(m), 0);
  if (bt.kind == CXType_Invalid) return ref;
  char name[160];
  rawop_ref_name(c, m, name, sizeof name);
  if (!name[0]) return ref;
  CXType owner;
  return lookup_member(c, bt, name, &owner, 0);
}

typedef struct conv_find {
  CXType to;
  CXCursor found;
} conv_find;

static enum CXChildVisitResult find_conversion(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  conv_find *cf = d;
  if (clang_getCursorKind(k) != CXCursor_ConversionFunction) return CXChildVisit_Continue;
  CXType r = clang_getCanonicalType(clang_getResultType(clang_getCursorType(k)));
  if (clang_equalTypes(r, cf->to)) {
    cf->found = k;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

/* The conversion operator of class `from` (or a base) to `to`, or null. */
CXCursor rawop_conversion_to(CXType from, CXType to, int depth) {
  if (depth > 6) return clang_getNullCursor();
  CXCursor decl = clang_getCursorDefinition(clang_getTypeDeclaration(from));
  if (clang_Cursor_isNull(decl)) return decl;
  conv_find cf = {clang_getCanonicalType(to), clang_getNullCursor()};
  clang_visitChildren(decl, find_conversion, &cf);
  if (!clang_Cursor_isNull(cf.found)) return cf.found;
  rawop_kids ks = rawop_children(decl);
  CXCursor r = clang_getNullCursor();
  for (size_t i = 0; i < ks.n && clang_Cursor_isNull(r); i++)
    if (clang_getCursorKind(ks.v[i]) == CXCursor_CXXBaseSpecifier)
      r = rawop_conversion_to(rawop_strip_refs(clang_getCursorType(ks.v[i])), to, depth + 1);
  free(ks.v);
  return r;
}

/* A dependent call `T::f(args)` with T a class template's parameter: the parameter types of f in
 * the file's instantiation, so that a wrapper passed where a raw handle is expected is seen as the
 * implicit conversion it becomes. Returns the number of parameter types written to `params`. */
int rawop_dependent_params(rawop_ctx *c, CXCursor call, CXType *params, int max) {
  rawop_kids ks = rawop_children(call);
  CXCursor callee = ks.n ? ks.v[0] : clang_getNullCursor();
  free(ks.v);
  if (clang_Cursor_isNull(callee) || clang_getCursorKind(callee) != CXCursor_DeclRefExpr ||
      !clang_Cursor_isNull(clang_getCursorReferenced(callee)))
    return 0;
  rawop_kids qs = rawop_children(callee);
  CXCursor tp = clang_getNullCursor();
  for (size_t i = 0; i < qs.n; i++)
    if (clang_getCursorKind(qs.v[i]) == CXCursor_TypeRef) {
      CXCursor r = clang_getCursorReferenced(qs.v[i]);
      if (clang_getCursorKind(r) == CXCursor_TemplateTypeParameter) tp = r;
    }
  free(qs.v);
  if (clang_Cursor_isNull(tp)) return 0;
  CXType none = {CXType_Invalid, {NULL, NULL}};
  CXType bound = rawop_strip_refs(bound_tparam(c, tp, none));
  if (bound.kind != CXType_Record) return 0;
  char name[160];
  rawop_ref_name(c, callee, name, sizeof name);
  CXType owner;
  CXCursor mem = lookup_member(c, bound, name, &owner, 0);
  if (clang_Cursor_isNull(mem)) return 0;
  CXType ft = clang_getCanonicalType(clang_getCursorType(mem));
  if (ft.kind == CXType_Pointer) ft = clang_getCanonicalType(clang_getPointeeType(ft));
  if (ft.kind != CXType_FunctionProto) return 0;
  int n = clang_getNumArgTypes(ft);
  for (int i = 0; i < n && i < max; i++) params[i] = clang_getArgType(ft, (unsigned)i);
  return n < max ? n : max;
}
