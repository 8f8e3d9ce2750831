/* What the active profile says about a cursor: raw accessors and fields, guarded accessors, status
 * accessors, validity predicates, wrapper types, and which functions are exempt.
 *
 * Invariant: a profile entry "Class::member" matches a member of that class (or "*::member" of any
 * class); a bare name matches a free function. Dependent members are looked up through the file's
 * instantiations (rawop_templates.c) before they are matched. */
#include "lint/rawop/rawop.h"

#include <stdlib.h>
#include <string.h>

int rawop_lists_match(const tether_lint__strlist *l, const char *cls, const char *mem) {
  return tether_lint__profile_match(l, cls[0] ? cls : NULL, mem);
}

/* Is `e` (already stripped) a raw access through a member (method, field, conversion)? */
rawop_access rawop_classify_member_raw(rawop_ctx *c, CXCursor e) {
  rawop_access r = {0};
  enum CXCursorKind k = clang_getCursorKind(e);
  CXCursor target = e;
  if (k == CXCursor_CallExpr) {
    rawop_kids ks = rawop_children(e);
    CXCursor first = ks.n ? ks.v[0] : clang_getNullCursor();
    free(ks.v);
    if (!clang_Cursor_isNull(first) && clang_getCursorKind(first) == CXCursor_MemberRefExpr) {
      target = first;
    } else {
      CXCursor ref = clang_getCursorReferenced(e);
      if (clang_getCursorKind(ref) != CXCursor_ConversionFunction) return r;
      char cls[128], mem[160];
      rawop_decl_names(ref, cls, sizeof cls, mem, sizeof mem);
      if (!rawop_lists_match(&c->p->raw_accessors, cls, mem)) return r;
      r.is_raw = 1;
      r.node = e;
      r.wrapper = rawop_spelling(c, e); /* implicit conversion: the converted expression itself */
      snprintf(r.via, sizeof r.via, "%s::%s", cls, mem);
      return r;
    }
  }
  if (clang_getCursorKind(target) != CXCursor_MemberRefExpr) return r;
  CXCursor ref = rawop_member_ref(c, target);
  enum CXCursorKind rk = clang_getCursorKind(ref);
  char cls[128], mem[160];
  rawop_decl_names(ref, cls, sizeof cls, mem, sizeof mem);
  if (rk == CXCursor_FieldDecl && rawop_lists_match(&c->p->raw_fields, cls, mem)) {
    snprintf(r.via, sizeof r.via, "field %s::%s", cls, mem);
  } else if ((rk == CXCursor_CXXMethod || rk == CXCursor_ConversionFunction) &&
             rawop_lists_match(&c->p->raw_accessors, cls, mem)) {
    snprintf(r.via, sizeof r.via, "%s::%s()", cls, mem);
  } else {
    return r;
  }
  r.is_raw = 1;
  r.node = target;
  r.wrapper = rawop_member_base(c, target);
  return r;
}

const tether_lint_status_accessor *rawop_status_call(rawop_ctx *c, CXCursor e) {
  if (clang_getCursorKind(e) != CXCursor_CallExpr) return NULL;
  CXCursor ref = clang_getCursorReferenced(e);
  if (clang_getCursorKind(ref) != CXCursor_FunctionDecl) return NULL;
  CXString s = clang_getCursorSpelling(ref);
  const tether_lint_status_accessor *sa = tether_lint__profile_status(c->p, clang_getCString(s));
  clang_disposeString(s);
  return sa;
}

/* The wrapper argument's spelling of a status accessor call `call` (stripped), or NULL. */
char *rawop_status_call_wrapper(rawop_ctx *c, CXCursor call) {
  const tether_lint_status_accessor *sa = rawop_status_call(c, call);
  if (!sa || (int)clang_Cursor_getNumArguments(call) <= sa->wrapper_arg) return NULL;
  return rawop_spelling(c, clang_Cursor_getArgument(call, (unsigned)sa->wrapper_arg));
}

rawop_value rawop_raw_value(rawop_ctx *c, CXCursor e) {
  rawop_value v = {0};
  CXCursor s = rawop_strip(e);
  if (clang_getCursorKind(s) == CXCursor_DeclRefExpr) {
    rawop_binding *b = rawop_find_binding(c, s);
    if (b) {
      v.yes = 1;
      v.checked = b->kind == RAWOP_BIND_CHECKED;
      v.wrapper = tether_lint__strdup(b->wrapper);
      snprintf(v.via, sizeof v.via, "%s", b->via);
      v.access = b->access;
      v.node = s;
    }
    return v;
  }
  rawop_access r = rawop_classify_member_raw(c, s);
  if (r.is_raw) {
    v.yes = 1;
    v.wrapper = r.wrapper;
    snprintf(v.via, sizeof v.via, "%s", r.via);
    v.access = rawop_start_of(s);
    v.from_access = 1;
    v.node = r.node;
    return v;
  }
  /* A guarded accessor (`op.get()`, or its conversion operator): checked now, raw all the same
   * once it is kept. */
  if (clang_getCursorKind(s) != CXCursor_CallExpr) return v;
  rawop_kids ks = rawop_children(s);
  CXCursor target = ks.n && clang_getCursorKind(ks.v[0]) == CXCursor_MemberRefExpr ? ks.v[0] : s;
  free(ks.v);
  CXCursor ref = clang_getCursorKind(target) == CXCursor_MemberRefExpr
                     ? rawop_member_ref(c, target)
                     : clang_getCursorReferenced(target);
  enum CXCursorKind rk = clang_getCursorKind(ref);
  if (rk != CXCursor_CXXMethod && rk != CXCursor_ConversionFunction) return v;
  if (clang_equalCursors(target, s) && rk != CXCursor_ConversionFunction) return v;
  char cls[128], mem[160];
  rawop_decl_names(ref, cls, sizeof cls, mem, sizeof mem);
  if (!rawop_lists_match(&c->p->guarded_accessors, cls, mem)) return v;
  v.yes = 1;
  v.checked = 1;
  v.wrapper = clang_equalCursors(target, s) ? rawop_spelling(c, s) : rawop_member_base(c, target);
  snprintf(v.via, sizeof v.via, "%s::%s() (which checks)", cls, mem);
  v.access = rawop_start_of(s);
  v.from_access = 1;
  v.node = target;
  return v;
}

int rawop_is_exempt(rawop_ctx *c, CXCursor fn) {
  char cls[128], mem[160];
  rawop_decl_names(fn, cls, sizeof cls, mem, sizeof mem);
  const tether_lint_profile *p = c->p;
  return rawop_lists_match(&p->raw_accessors, cls, mem) ||
         rawop_lists_match(&p->guarded_accessors, cls, mem) ||
         rawop_lists_match(&p->guards, cls, mem) || rawop_lists_match(&p->predicates, cls, mem) ||
         rawop_lists_match(&p->invalidators, cls, mem);
}

/* Is `t` (through references, pointers, const and a smart reference's template argument) a
 * wrapper class of the profile, or derived from one? */
static int type_is_wrapper_depth(rawop_ctx *c, CXType t, int depth) {
  if (depth > 6) return 0;
  t = rawop_strip_refs(t);
  if (t.kind != CXType_Record) return 0;
  CXString ts = clang_getTypeSpelling(t);
  char key[512];
  snprintf(key, sizeof key, "%s", clang_getCString(ts));
  clang_disposeString(ts);
  if (tether_lint__strlist_has(&c->sh->wrapper_types_yes, key)) return 1;
  if (tether_lint__strlist_has(&c->sh->wrapper_types_no, key)) return 0;
  int yes = 0;
  CXCursor decl = clang_getTypeDeclaration(t);
  char name[256] = "";
  if (!clang_Cursor_isNull(decl)) {
    CXString n = clang_getCursorSpelling(decl);
    snprintf(name, sizeof name, "%s", clang_getCString(n));
    clang_disposeString(n);
  }
  if (name[0] && tether_lint__strlist_has(&c->p->wrappers, name)) yes = 1;
  int nta = clang_Type_getNumTemplateArguments(t);
  for (int i = 0; !yes && i < nta && i < 4; i++) {
    CXType a = clang_Type_getTemplateArgumentAsType(t, (unsigned)i);
    if (a.kind != CXType_Invalid) yes = type_is_wrapper_depth(c, a, depth + 1);
  }
  if (!yes && !clang_Cursor_isNull(decl)) {
    CXCursor def = clang_getCursorDefinition(decl);
    if (!clang_Cursor_isNull(def)) {
      rawop_kids ks = rawop_children(def);
      for (size_t i = 0; !yes && i < ks.n; i++)
        if (clang_getCursorKind(ks.v[i]) == CXCursor_CXXBaseSpecifier)
          yes = type_is_wrapper_depth(c, clang_getCursorType(ks.v[i]), depth + 1);
      free(ks.v);
    }
  }
  tether_lint__strlist_push(yes ? &c->sh->wrapper_types_yes : &c->sh->wrapper_types_no, key);
  return yes;
}

int rawop_type_is_wrapper(rawop_ctx *c, CXType t) { return type_is_wrapper_depth(c, t, 0); }

int rawop_is_ok_constant(rawop_ctx *c, CXCursor e) {
  CXCursor s = rawop_strip(e);
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_IntegerLiteral) {
    char *sp = rawop_spelling(c, s);
    int zero = strcmp(sp, "0") == 0;
    free(sp);
    return zero;
  }
  if (k == CXCursor_DeclRefExpr) {
    CXString n = clang_getCursorSpelling(s);
    int ok = tether_lint__strlist_has(&c->p->ok_status, clang_getCString(n));
    clang_disposeString(n);
    return ok;
  }
  return 0;
}
