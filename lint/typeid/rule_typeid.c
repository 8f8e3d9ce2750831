/* Rule family "typeid": weak-typeid, TypeID storage that can exist more than once in a process.
 *
 * An MLIR TypeID is the address of a static object. Storage is "weak" when that object has vague
 * linkage (a function-local static of an inline function or of a template instantiation, an inline
 * variable, a static member of a class template): every shared object that instantiates it gets
 * its own copy unless the symbol is exported and interposed, so two Python extensions can see two
 * TypeIDs for one class. The family finds, per translation unit:
 *   - storage in an inline function or variable whose owner has external linkage (the
 *     MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID macro outside an anonymous namespace, or the
 * same thing written by hand or through a project macro), recognised by what the AST contains, not
 *     by the macro's name;
 *   - storage in a function template (one copy per instantiation, vague linkage);
 *   - classes with external linkage that inherit such a resolveTypeID() from a class template;
 *   - TypeID::get<T>() on a class in an anonymous namespace that has no TypeID of its own (the
 *     name-based fallback cannot tell two anonymous classes of the same name apart);
 * and records, for the cross-file pass, every explicit declaration (MLIR_DECLARE_EXPLICIT_TYPE_ID
 * and its newer spelling, or a static SelfOwningTypeID member declared but not defined) and
 * definition (MLIR_DEFINE_EXPLICIT_TYPE_ID, or the out-of-class definition of such a member).
 * run_end reports a declaration that no translation unit of the run defines, a definition in a
 * header, and a TypeID defined in two places.
 *
 * typeid.h lists the family's files.
 *
 * Invariant: findings of the per-TU checks are reported in the main file only (through
 * tether_lint__report_tu); facts for the cross-file pass come from the main file and from the
 * headers it includes, except system headers unless the configuration says `system-headers = true`.
 * When the translation unit has compile errors, the main file is also scanned token by token for
 * the TypeID macros (and project macros defined in the file that use them); a token result is used
 * only where the AST produced nothing on that line, and the file gets a note saying so. */
#include "lint/typeid/typeid.h"

#include <stdlib.h>
#include <string.h>

static const tether_lint_rule_info typeid_rules[] = {
    {TYPEID_RULE, "TypeID storage that can exist more than once in a process",
     "An MLIR TypeID is the address of a static object. When that object has vague linkage (a "
     "function-local static in an inline function or template, an inline variable, a static "
     "member of a class template), every shared object that uses it can carry its own copy: two "
     "Python extensions that each link the code get two TypeIDs for one class, and "
     "isa<>/dyn_cast<> across them fails silently. Also reported: an explicit TypeID declared "
     "but defined in no translation unit of the run, defined in a header, or defined twice, and "
     "TypeID::get<T>() on a class in an anonymous namespace that has no TypeID of its own (the "
     "name-based fallback confuses two anonymous classes of the same name).",
     "give the class one strong TypeID: MLIR_DECLARE_EXPLICIT_TYPE_ID(ns::Class) in its header (at "
     "global scope) and MLIR_DEFINE_EXPLICIT_TYPE_ID(ns::Class) in exactly one .cpp, linked into "
     "one shared library that every extension links dynamically; keep "
     "MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID for classes in an anonymous namespace"},
};

static const struct {
  const char *name;
  enum typeid_macro_kind kind;
} known_macros[] = {
    {"MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID", TYPEID_MACRO_INLINE},
    {"MLIR_DECLARE_EXPLICIT_TYPE_ID", TYPEID_MACRO_DECLARE},
    {"MLIR_DECLARE_EXPLICIT_SELF_OWNING_TYPE_ID", TYPEID_MACRO_DECLARE},
    {"MLIR_DEFINE_EXPLICIT_TYPE_ID", TYPEID_MACRO_DEFINE},
    {"MLIR_DEFINE_EXPLICIT_SELF_OWNING_TYPE_ID", TYPEID_MACRO_DEFINE},
    /* The string-fallback pair resolves by type name through one registry: no storage to copy. */
    {"MLIR_DECLARE_EXPLICIT_FALLBACK_TYPE_ID", TYPEID_MACRO_FALLBACK},
    {"MLIR_DEFINE_EXPLICIT_FALLBACK_TYPE_ID", TYPEID_MACRO_FALLBACK},
};

enum typeid_macro_kind typeid_known_macro(const char *name) {
  for (size_t i = 0; i < sizeof known_macros / sizeof known_macros[0]; i++)
    if (strcmp(known_macros[i].name, name) == 0) return known_macros[i].kind;
  return TYPEID_MACRO_NONE;
}

/* Is this type (canonical spelling, cv-qualifiers ignored) MLIR's SelfOwningTypeID? */
static int is_self_owning(CXType t) {
  char *sp = tether_lint__cx_take(clang_getTypeSpelling(clang_getCanonicalType(t)));
  int yes = sp && tether_lint__ends_with(sp, "SelfOwningTypeID");
  free(sp);
  return yes;
}

/* Is `c` (or a semantic ancestor) a class template pattern? */
static int inside_class_template(CXCursor c) {
  for (int depth = 0; depth < 64 && !clang_Cursor_isNull(c); depth++) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization) return 1;
    if (k == CXCursor_TranslationUnit) return 0;
    c = clang_getCursorSemanticParent(c);
  }
  return 0;
}

/* Is `c` declared inside an anonymous namespace? */
static int in_anonymous_namespace(CXCursor c) {
  for (int depth = 0; depth < 64 && !clang_Cursor_isNull(c); depth++) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_Namespace && clang_Cursor_isAnonymous(c)) return 1;
    if (k == CXCursor_TranslationUnit) return 0;
    c = clang_getCursorSemanticParent(c);
  }
  return 0;
}

static typeid_where where_of(CXTranslationUnit tu, CXSourceLocation loc) {
  typeid_where w;
  memset(&w, 0, sizeof w);
  clang_getExpansionLocation(loc, &w.file, &w.line, &w.col, &w.offset);
  CXFile sf = NULL;
  unsigned soff = 0;
  clang_getSpellingLocation(loc, &sf, NULL, NULL, &soff);
  if (w.file && (!sf || !clang_File_isEqual(sf, w.file) || soff != w.offset)) {
    size_t size = 0;
    const char *text = clang_getFileContents(tu, w.file, &size);
    if (text && w.offset < size) {
      size_t k = 0;
      for (size_t i = w.offset; i < size && k + 1 < sizeof w.macro; i++) {
        char ch = text[i];
        if (!tether_lint__is_ident_char(ch)) break;
        w.macro[k++] = ch;
      }
      w.macro[k] = '\0';
      w.from_macro = k > 0;
    }
  }
  return w;
}

static void cover(typeid_ctx *c, unsigned line) {
  if (tether_lint__grow(&c->lines, &c->caplines, c->nlines, sizeof *c->lines) != 0) return;
  c->lines[c->nlines++] = line;
}

int typeid_covered(const typeid_ctx *c, unsigned line) {
  for (size_t i = 0; i < c->nlines; i++)
    if (c->lines[i] == line) return 1;
  return 0;
}

static void add_cand(typeid_ctx *c, CXCursor cur, int kind, const char *cls, const char *detail) {
  if (tether_lint__grow(&c->cands, &c->capcands, c->ncands, sizeof *c->cands) != 0) return;
  typeid_cand *k = &c->cands[c->ncands++];
  k->cur = cur;
  k->kind = kind;
  k->cls = tether_lint__strdup(cls);
  k->detail = tether_lint__strdup(detail ? detail : "");
}

typedef enum { LOC_MAIN, LOC_USER, LOC_SYSTEM, LOC_NONE } loc_class;

static loc_class classify(typeid_ctx *c, const typeid_where *w) {
  if (!w->file) return LOC_NONE;
  if (clang_File_isEqual(w->file, c->main_file)) return LOC_MAIN;
  CXSourceLocation l = clang_getLocation(c->tu, w->file, w->line, w->col);
  return clang_Location_isInSystemHeader(l) ? LOC_SYSTEM : LOC_USER;
}

/* The path of a fact's file: the input's own name for the main file. */
static char *path_of(typeid_ctx *c, const typeid_where *w) {
  if (clang_File_isEqual(w->file, c->main_file)) return tether_lint__strdup(c->main_path);
  return tether_lint__cx_take(clang_getFileName(w->file));
}

typedef struct storage_scan {
  CXCursor fn;
  int found;
  CXCursor var; /* the static local */
  int via_pointer;
  int in_call; /* depth inside getFromOpaquePointer(...) */
} storage_scan;

static int is_static_local(CXCursor v) {
  if (clang_getCursorKind(v) != CXCursor_VarDecl) return 0;
  if (clang_Cursor_getStorageClass(v) != CX_SC_Static) return 0;
  CXCursor p = clang_getCursorSemanticParent(v);
  return tether_lint__is_function_kind(clang_getCursorKind(p)) ||
         clang_getCursorKind(p) == CXCursor_LambdaExpr;
}

static enum CXChildVisitResult scan_storage(CXCursor c, CXCursor parent, CXClientData data);

static enum CXChildVisitResult scan_pointer_arg(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  storage_scan *s = data;
  if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
    CXCursor ref = clang_getCursorReferenced(c);
    if (is_static_local(ref) && !s->found) {
      s->found = 1;
      s->var = ref;
      s->via_pointer = 1;
    }
  }
  return CXChildVisit_Recurse;
}

static enum CXChildVisitResult scan_storage(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  storage_scan *s = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  /* A lambda or a local class is a function of its own, checked where it is visited. */
  if (k == CXCursor_LambdaExpr || tether_lint__is_class_kind(k)) return CXChildVisit_Continue;
  if (k == CXCursor_VarDecl && clang_Cursor_getStorageClass(c) == CX_SC_Static &&
      is_self_owning(clang_getCursorType(c))) {
    if (!s->found) {
      s->found = 1;
      s->var = c;
    }
    return CXChildVisit_Continue;
  }
  if (k == CXCursor_CallExpr && tether_lint__cursor_is(c, "getFromOpaquePointer")) {
    clang_visitChildren(c, scan_pointer_arg, s);
    return CXChildVisit_Continue;
  }
  return CXChildVisit_Recurse;
}

/* Does the body of function `fn` hold TypeID storage in a static local? */
static int function_storage(CXCursor fn, storage_scan *s) {
  memset(s, 0, sizeof *s);
  s->fn = fn;
  if (!clang_isCursorDefinition(fn)) return 0;
  clang_visitChildren(fn, scan_storage, s);
  return s->found;
}

/* Does class template (or class) `cls` carry TypeID storage of its own: a resolveTypeID() with a
 * static local, or a static SelfOwningTypeID member? */
typedef struct tmpl_scan {
  int found;
  char what[256];
} tmpl_scan;

static enum CXChildVisitResult scan_class_storage(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  tmpl_scan *t = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if ((k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate) &&
      tether_lint__cursor_is(c, "resolveTypeID")) {
    storage_scan s;
    if (function_storage(c, &s)) {
      t->found = 1;
      snprintf(t->what, sizeof t->what, "resolveTypeID() with a function-local static");
      return CXChildVisit_Break;
    }
  }
  if (k == CXCursor_VarDecl && is_self_owning(clang_getCursorType(c))) {
    t->found = 1;
    char *name = tether_lint__cx_take(clang_getCursorSpelling(c));
    snprintf(t->what, sizeof t->what, "static SelfOwningTypeID member '%s'", name ? name : "");
    free(name);
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult find_resolver_member(CXCursor c, CXCursor parent,
                                                    CXClientData data) {
  (void)parent;
  int *yes = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if ((k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate) &&
      tether_lint__cursor_is(c, "resolveTypeID")) {
    *yes = 1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

/* Does the class declare a resolveTypeID() of its own (whatever its body)? */
static int declares_resolver(CXCursor cls) {
  int yes = 0;
  clang_visitChildren(cls, find_resolver_member, &yes);
  return yes;
}

static char *class_name(CXCursor cls) {
  return tether_lint__cx_take(
      clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(cls))));
}

/* Walks the bases of a class looking for a class template that carries TypeID storage. */
typedef struct base_walk {
  int depth;
  int found;
  char base[256];
  char what[256];
} base_walk;

static void walk_bases(CXCursor cls, base_walk *b);

static enum CXChildVisitResult visit_base(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  base_walk *b = data;
  if (clang_getCursorKind(c) != CXCursor_CXXBaseSpecifier) return CXChildVisit_Continue;
  CXType t = clang_getCursorType(c);
  CXCursor decl = clang_getTypeDeclaration(clang_getCanonicalType(t));
  if (clang_Cursor_isNull(decl) || clang_getCursorKind(decl) == CXCursor_NoDeclFound)
    decl = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(decl) || clang_getCursorKind(decl) == CXCursor_NoDeclFound)
    return CXChildVisit_Continue;
  CXCursor tmpl = clang_getCursorKind(decl) == CXCursor_ClassTemplate
                      ? decl
                      : clang_getSpecializedCursorTemplate(decl);
  CXCursor next = decl;
  if (!clang_Cursor_isNull(tmpl)) {
    tmpl_scan ts = {0, ""};
    clang_visitChildren(tmpl, scan_class_storage, &ts);
    if (ts.found) {
      b->found = 1;
      char *bn = tether_lint__cx_take(clang_getTypeSpelling(t));
      snprintf(b->base, sizeof b->base, "%s", bn ? bn : "");
      free(bn);
      snprintf(b->what, sizeof b->what, "%s", ts.what);
      return CXChildVisit_Break;
    }
    /* An implicit instantiation shows no children: follow the template's own bases. */
    next = tmpl;
  } else {
    CXCursor def = clang_getCursorDefinition(decl);
    if (!clang_Cursor_isNull(def)) next = def;
    /* A non-template base with a resolver of its own is checked where it is defined. */
    if (declares_resolver(next)) return CXChildVisit_Continue;
  }
  if (b->depth < 8) {
    b->depth++;
    walk_bases(next, b);
    b->depth--;
  }
  return b->found ? CXChildVisit_Break : CXChildVisit_Continue;
}

static void walk_bases(CXCursor cls, base_walk *b) { clang_visitChildren(cls, visit_base, b); }

/* "NAME(ARGS)" as written at a macro expansion location (at most ~200 bytes). */
static void invocation_text(CXTranslationUnit tu, const typeid_where *w, char *out, size_t outlen) {
  snprintf(out, outlen, "%s", w->macro);
  size_t size = 0;
  const char *text = clang_getFileContents(tu, w->file, &size);
  if (!text) return;
  size_t i = w->offset + strlen(w->macro);
  while (i < size && (text[i] == ' ' || text[i] == '\t')) i++;
  if (i >= size || text[i] != '(') return;
  size_t k = strlen(out);
  int depth = 0;
  for (; i < size && k + 5 < outlen; i++) {
    char ch = text[i];
    if (ch == '\n' || ch == '\r' || ch == '\\') continue;
    if (ch == '(') depth++;
    if (ch == ')') depth--;
    out[k++] = ch;
    if (depth == 0) break;
  }
  if (depth != 0) {
    memcpy(out + k, "...)", 4);
    k += 4;
  }
  out[k] = '\0';
}

static void report(typeid_ctx *x, CXCursor c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report(typeid_ctx *x, CXCursor c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tether_lint__report_tu(x->f, x->tu, clang_getCursorLocation(c), TYPEID_RULE, "%s", msg);
}

const char *typeid_linkage_story(int header) {
  return header ? "every shared object that includes this header and uses it gets its own copy "
                  "unless the symbol is exported and interposed"
                : "every shared object that links this code gets its own copy unless the symbol "
                  "is exported and interposed";
}

/* A function definition in the main file: TypeID storage in a static local with vague linkage? */
static void check_function(typeid_ctx *x, CXCursor fn, const typeid_where *w) {
  storage_scan s;
  if (!function_storage(fn, &s)) return;
  cover(x, w->line);
  if (inside_class_template(fn)) return; /* a template pattern: checked at its instantiations */
  enum CXCursorKind k = clang_getCursorKind(fn);
  enum CXLinkageKind lk = clang_getCursorLinkage(fn);
  int is_template = k == CXCursor_FunctionTemplate;
  int vague = is_template || clang_Cursor_isFunctionInlined(fn);
  char *fname = tether_lint__cx_take(clang_getCursorSpelling(fn));
  char *vname = tether_lint__cx_take(clang_getCursorSpelling(s.var));
  CXCursor owner = clang_getCursorSemanticParent(fn);
  char *oname = tether_lint__is_class_kind(clang_getCursorKind(owner)) ? class_name(owner) : NULL;
  char subject[512];
  if (oname)
    snprintf(subject, sizeof subject, "%s::%s()", oname, fname ? fname : "");
  else
    snprintf(subject, sizeof subject, "%s()", fname ? fname : "");
  char how[1200];
  enum typeid_macro_kind mk = w->from_macro ? typeid_known_macro(w->macro) : TYPEID_MACRO_NONE;
  if (mk == TYPEID_MACRO_INLINE)
    snprintf(how, sizeof how, "%s", w->macro);
  else if (w->from_macro)
    snprintf(how, sizeof how, "macro %s (it expands to %s with a function-local static '%s')",
             w->macro, subject, vname ? vname : "");
  else
    snprintf(how, sizeof how, "%s keeps its TypeID in a function-local static '%s'", subject,
             vname ? vname : "");
  if (lk == CXLinkage_External && vague) {
    if (is_template)
      report(x, fn,
             "%s in a function template: every instantiation keeps its TypeID in a static with "
             "vague linkage (COMDAT/weak); %s",
             how, typeid_linkage_story(x->main_is_header));
    else if (mk == TYPEID_MACRO_INLINE || w->from_macro)
      report(x, fn,
             "%s in '%s', which is not in an anonymous namespace: its resolveTypeID() keeps the "
             "TypeID in a function-local static of an inline function (vague linkage); %s",
             how, oname ? oname : subject, typeid_linkage_story(x->main_is_header));
    else
      report(x, fn,
             "%s of an inline function with external linkage (vague linkage, COMDAT/weak); %s", how,
             typeid_linkage_story(x->main_is_header));
  } else if (x->main_is_header && lk == CXLinkage_Internal &&
             (vague || !oname || in_anonymous_namespace(fn))) {
    report(x, fn,
           "%s in a header, with internal linkage (static or in an anonymous namespace): every "
           "translation unit that includes the header gets its own TypeID",
           how);
  }
  free(fname);
  free(vname);
  free(oname);
}

/* A static data member of TypeID storage type: a declaration, a definition, or an inline
 * variable. */
static void check_member(typeid_ctx *x, CXCursor v, const typeid_where *w, loc_class lc) {
  CXCursor cls = clang_getCursorSemanticParent(v);
  enum CXCursorKind ck = clang_getCursorKind(cls);
  if (!tether_lint__is_class_kind(ck)) return;
  if (!is_self_owning(clang_getCursorType(v))) return;
  if (lc == LOC_MAIN) cover(x, w->line);
  if (ck == CXCursor_ClassTemplate || ck == CXCursor_ClassTemplatePartialSpecialization ||
      inside_class_template(cls))
    return; /* template storage: checked at the classes that inherit it */
  char *vname = tether_lint__cx_take(clang_getCursorSpelling(v));
  char *key = NULL;
  if (tether_lint__cursor_is(cls, "TypeIDResolver") &&
      !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(cls))) {
    CXType arg = clang_Type_getTemplateArgumentAsType(clang_getCursorType(cls), 0);
    char *a = tether_lint__cx_take(clang_getTypeSpelling(clang_getCanonicalType(arg)));
    key = a ? typeid_norm_key(a) : NULL;
    free(a);
  } else {
    char *cn = class_name(cls);
    tether_lint__buf b = {0};
    tether_lint__buf_printf(&b, "%s::%s", cn ? cn : "", vname ? vname : "");
    free(cn);
    key = b.p ? typeid_norm_key(b.p) : NULL;
    tether_lint__buf_free(&b);
  }
  CXCursor lex = clang_getCursorLexicalParent(v);
  int in_class = clang_equalCursors(clang_getCanonicalCursor(lex), clang_getCanonicalCursor(cls));
  int is_def = clang_isCursorDefinition(v);
  char what[256];
  if (w->from_macro)
    invocation_text(x->tu, w, what, sizeof what);
  else if (tether_lint__cursor_is(cls, "TypeIDResolver"))
    snprintf(what, sizeof what, "SelfOwningTypeID TypeIDResolver<%s>::%s", key ? key : "",
             vname ? vname : "");
  else
    snprintf(what, sizeof what, "static SelfOwningTypeID %s", key ? key : "");
  if (in_class && is_def) {
    /* `static inline SelfOwningTypeID id;` (C++17): an inline variable, vague linkage. */
    if (lc == LOC_MAIN && clang_getCursorLinkage(v) == CXLinkage_External)
      report(x, v,
             "%s is an inline variable with external linkage (vague linkage, COMDAT/weak); %s",
             what, typeid_linkage_story(x->main_is_header));
  } else if (key && *key && (lc == LOC_MAIN || lc == LOC_USER || x->st->system_headers)) {
    char *path = path_of(x, w);
    if (path)
      typeid_fact_add(x->f,
                      in_class ? TYPEID_FACT_DECLARE
                               : (is_def ? TYPEID_FACT_DEFINE : TYPEID_FACT_DECLARE),
                      key, what, path, w->line, w->col, 0);
    free(path);
  }
  free(key);
  free(vname);
}

/* A class definition in the main file: does it get a weak TypeID from a template base? */
static void check_class(typeid_ctx *x, CXCursor cls) {
  enum CXCursorKind k = clang_getCursorKind(cls);
  if (k != CXCursor_StructDecl && k != CXCursor_ClassDecl) return;
  if (!clang_isCursorDefinition(cls) || inside_class_template(cls)) return;
  char *name = class_name(cls);
  if (!name) return;
  if (declares_resolver(cls)) {
    tether_lint__strlist_add_unique(&x->own_resolver, name);
    free(name);
    return;
  }
  if (clang_getCursorLinkage(cls) == CXLinkage_External) {
    base_walk b;
    memset(&b, 0, sizeof b);
    walk_bases(cls, &b);
    if (b.found) {
      char detail[600];
      snprintf(detail, sizeof detail, "'%s' inherits resolveTypeID() from '%s' (%s)", name, b.base,
               b.what);
      add_cand(x, cls, TYPEID_CAND_DERIVED, name, detail);
    }
  }
  free(name);
}

/* The explicit template argument of a call `TypeID::get<T>()`: the first TypeRef after the
 * name `get` (libclang gives no template arguments for a method specialization). A TemplateRef
 * first (`get<Outer<Inner>>`) means the argument is a specialization: not followed. */
typedef struct targ_scan {
  unsigned get_off;
  unsigned best_off;
  CXCursor best;
  int is_template;
} targ_scan;

static unsigned offset_of(CXCursor c) {
  unsigned off = 0;
  clang_getExpansionLocation(clang_getCursorLocation(c), NULL, NULL, NULL, &off);
  return off;
}

static enum CXChildVisitResult find_get_name(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  targ_scan *t = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if ((k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) &&
      tether_lint__cursor_is(c, "get")) {
    t->get_off = offset_of(c);
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static enum CXChildVisitResult find_targ(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  targ_scan *t = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_TypeRef || k == CXCursor_TemplateRef) {
    unsigned off = offset_of(c);
    if (off > t->get_off && (clang_Cursor_isNull(t->best) || off < t->best_off)) {
      t->best = c;
      t->best_off = off;
      t->is_template = k == CXCursor_TemplateRef;
    }
  }
  return CXChildVisit_Recurse;
}

/* TypeID::get<T>() in the main file, T a class in an anonymous namespace with no TypeID of its
 * own: the name-based fallback gives two such classes of the same name one TypeID. */
static void check_call(typeid_ctx *x, CXCursor call, const typeid_where *w) {
  if (!tether_lint__cursor_is(call, "get")) return;
  CXCursor ref = clang_getCursorReferenced(call);
  if (clang_Cursor_isNull(ref) || clang_getCursorKind(ref) != CXCursor_CXXMethod) return;
  if (!tether_lint__cursor_is(clang_getCursorSemanticParent(ref), "TypeID")) return;
  targ_scan ts;
  memset(&ts, 0, sizeof ts);
  ts.best = clang_getNullCursor();
  clang_visitChildren(call, find_get_name, &ts);
  if (!ts.get_off) return;
  clang_visitChildren(call, find_targ, &ts);
  if (clang_Cursor_isNull(ts.best) || ts.is_template) return;
  cover(x, w->line);
  CXCursor decl = clang_getCursorReferenced(ts.best);
  if (clang_Cursor_isNull(decl) || !tether_lint__is_class_kind(clang_getCursorKind(decl))) return;
  CXCursor def = clang_getCursorDefinition(decl);
  if (!clang_Cursor_isNull(def)) decl = def;
  if (clang_getCursorLinkage(decl) == CXLinkage_NoLinkage) return; /* a local class */
  if (!in_anonymous_namespace(decl)) return;
  if (declares_resolver(decl)) return;
  base_walk b;
  memset(&b, 0, sizeof b);
  walk_bases(decl, &b);
  if (b.found) return; /* an inherited inline resolver: internal here, fine */
  char *name = class_name(decl);
  if (name) add_cand(x, call, TYPEID_CAND_GET, name, NULL);
  free(name);
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  typeid_ctx *x = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  int is_call = k == CXCursor_CallExpr;
  if (!is_call && !clang_isDeclaration(k)) return CXChildVisit_Recurse;
  typeid_where w = where_of(x->tu, clang_getCursorLocation(c));
  loc_class lc = classify(x, &w);
  if (lc == LOC_NONE) return CXChildVisit_Recurse;
  if (lc == LOC_SYSTEM && !x->st->system_headers) return CXChildVisit_Continue;
  if (is_call) {
    if (lc == LOC_MAIN) check_call(x, c, &w);
    return CXChildVisit_Recurse;
  }
  if ((k == CXCursor_StructDecl || k == CXCursor_ClassDecl) &&
      tether_lint__cursor_is(c, "TypeIDResolver") &&
      !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c))) {
    CXType arg = clang_Type_getTemplateArgumentAsType(clang_getCursorType(c), 0);
    char *a = tether_lint__cx_take(clang_getTypeSpelling(clang_getCanonicalType(arg)));
    if (a) tether_lint__strlist_add_unique(&x->specialized, a);
    free(a);
    if (lc == LOC_MAIN) cover(x, w.line);
  }
  if (tether_lint__is_function_kind(k)) {
    if (lc == LOC_MAIN) check_function(x, c, &w);
  } else if (k == CXCursor_VarDecl) {
    check_member(x, c, &w, lc);
  } else if (k == CXCursor_StructDecl || k == CXCursor_ClassDecl) {
    if (lc == LOC_MAIN)
      check_class(x, c);
    else if (clang_isCursorDefinition(c) && declares_resolver(c)) {
      char *name = class_name(c);
      if (name) tether_lint__strlist_add_unique(&x->own_resolver, name);
      free(name);
    }
  }
  return CXChildVisit_Recurse;
}

static int typeid_check_tu(tether_lint_file *f, void *state, CXTranslationUnit tu) {
  typeid_state *st = state;
  if (!st) return -1;
  typeid_ctx x;
  memset(&x, 0, sizeof x);
  x.f = f;
  x.st = st;
  x.tu = tu;
  x.main_path = tether_lint__file_path(f);
  x.main_is_header = typeid_is_header_path(x.main_path);
  CXCursor root = clang_getTranslationUnitCursor(tu);
  x.main_file = tether_lint__main_file(tu);
  if (!x.main_file) return 0;
  clang_visitChildren(root, visit, &x);
  for (size_t i = 0; i < x.ncands; i++) {
    typeid_cand *k = &x.cands[i];
    if (k->cls && !tether_lint__strlist_has(&x.specialized, k->cls)) {
      if (k->kind == TYPEID_CAND_DERIVED) {
        typeid_where w = where_of(tu, clang_getCursorLocation(k->cur));
        cover(&x, w.line);
        report(&x, k->cur,
               "%s: a resolveTypeID() defined in a class template keeps the TypeID in storage "
               "with vague linkage in every instantiation, and '%s' has external linkage; %s",
               k->detail, k->cls, typeid_linkage_story(x.main_is_header));
      } else if (!tether_lint__strlist_has(&x.own_resolver, k->cls)) {
        report(&x, k->cur,
               "TypeID::get<%s>() on a class in an anonymous namespace that has no TypeID of its "
               "own: the fallback resolves it by type name, which an anonymous class of the same "
               "name in another translation unit shares (give it "
               "MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID)",
               k->cls);
      }
    }
    free(k->cls);
    free(k->detail);
  }
  /* A file with compile errors: the TypeID macros it uses may not have expanded. */
  typeid_degraded(&x);
  free(x.cands);
  free(x.lines);
  tether_lint__strlist_free(&x.specialized);
  tether_lint__strlist_free(&x.own_resolver);
  return 0;
}

const tether_lint_family tether_lint__family_typeid = {
    .name = "typeid",
    .inputs = TETHER_LINT_IN_TU,
    .rules = typeid_rules,
    .nrules = sizeof typeid_rules / sizeof typeid_rules[0],
    .run_begin = typeid_run_begin,
    .check_tu = typeid_check_tu,
    .run_end = typeid_run_end,
    .take_fact = typeid_take_fact,
};
