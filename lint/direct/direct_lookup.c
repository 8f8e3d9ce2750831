/* Names written in tokens, resolved through the declarations the parse did see.
 *
 * A binding file that does not compile loses the statements that failed, but not the headers that
 * were found: with MLIR's headers present, `Block`, `scf::ForOp` or `OpBuilder::InsertPoint` in a
 * registration libclang dropped still name declarations of the translation unit. The index maps
 * the qualified name of every class, class template and type alias declared at namespace level
 * (MLIR's, the project's that were found, the main file's own) to its cursor; a written name is
 * looked up as C++ would from the main file: as written, then in each namespace a using-directive
 * of the file nominates or that encloses the file's code, after the file's namespace aliases.
 *
 * Invariant: the index is built once per file, on the first lookup, and only read afterwards; a
 * name that resolves nowhere resolves to the null cursor (never to a guess). Namespaces of the
 * standard library, LLVM and the binding libraries are not indexed (no MLIR class lives there). */
#include "lint/direct/direct.h"

#include <stdlib.h>
#include <string.h>

struct direct_lookup {
  tether_lint__strmap index;   /* qualified name -> CXCursor * */
  tether_lint__strmap aliases; /* namespace alias -> qualified namespace (char *) */
  tether_lint__strmap memo;    /* written name -> CXCursor * (a null cursor: not found) */
  tether_lint__strmap funcs;   /* name of a function defined in the main file -> CXCursor * */
  tether_lint__strlist scopes; /* namespaces searched, "" first */
};

static CXCursor *boxed(CXCursor c) {
  CXCursor *p = malloc(sizeof *p);
  if (p) *p = c;
  return p;
}

static void put_cursor(tether_lint__strmap *m, const char *key, CXCursor c, int prefer_def) {
  void **slot = tether_lint__strmap_get(m, key);
  if (slot && *slot) {
    /* Keep the first, unless this one is the definition and the first is not. */
    if (!prefer_def || !clang_isCursorDefinition(c) || clang_isCursorDefinition(*(CXCursor *)*slot))
      return;
    *(CXCursor *)*slot = c;
    return;
  }
  slot = tether_lint__strmap_put(m, key);
  if (slot) *slot = boxed(c);
}

/* The qualified name of the namespace a using-directive or alias refers to. */
static enum CXChildVisitResult last_nsref(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  if (clang_getCursorKind(k) == CXCursor_NamespaceRef)
    *(CXCursor *)d = clang_getCursorReferenced(k);
  return CXChildVisit_Continue;
}

static int nominated(CXCursor c, char *out, size_t len) {
  CXCursor ns = clang_getNullCursor();
  clang_visitChildren(c, last_nsref, &ns);
  if (clang_Cursor_isNull(ns)) return 0;
  direct_qualified_name(ns, out, len);
  return out[0] != '\0';
}

typedef struct build_ctx {
  direct_ctx *x;
  direct_lookup *l;
  char prefix[512];
  int in_main_class; /* inside a class of the main file: its methods are helpers too */
} build_ctx;

static int skipped_namespace(const char *name) {
  static const char *const skip[] = {"std",      "__gnu_cxx", "__cxxabiv1", "llvm",
                                     "pybind11", "nanobind",  "__pstl",     "__detail"};
  for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
    if (strcmp(name, skip[i]) == 0) return 1;
  return 0;
}

static int in_main(direct_ctx *x, CXCursor c) {
  return tether_lint__in_main_file(x->tu, clang_getCursorLocation(c));
}

static enum CXChildVisitResult build_visit(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  build_ctx *b = d;
  enum CXCursorKind k = clang_getCursorKind(c);
  char *name = NULL;
  switch (k) {
  case CXCursor_LinkageSpec:
    clang_visitChildren(c, build_visit, b);
    break;
  case CXCursor_Namespace: {
    name = tether_lint__cx_take(clang_getCursorSpelling(c));
    if (!name || (!b->prefix[0] && skipped_namespace(name))) break;
    build_ctx inner = *b;
    if (name[0]) {
      int w = snprintf(inner.prefix, sizeof inner.prefix, "%s%s%s", b->prefix,
                       b->prefix[0] ? "::" : "", name);
      if (w < 0 || (size_t)w >= sizeof inner.prefix) break;
    }
    clang_visitChildren(c, build_visit, &inner);
    break;
  }
  case CXCursor_NamespaceAlias: {
    char target[512];
    name = tether_lint__cx_take(clang_getCursorSpelling(c));
    if (name && in_main(b->x, c) && nominated(c, target, sizeof target)) {
      void **slot = tether_lint__strmap_put(&b->l->aliases, name);
      if (slot && !*slot) *slot = tether_lint__strdup(target);
    }
    break;
  }
  case CXCursor_UsingDirective: {
    char target[512];
    if (in_main(b->x, c) && nominated(c, target, sizeof target))
      tether_lint__strlist_add_unique(&b->l->scopes, target);
    break;
  }
  case CXCursor_StructDecl:
  case CXCursor_ClassDecl:
  case CXCursor_UnionDecl:
  case CXCursor_ClassTemplate:
  case CXCursor_TypeAliasDecl:
  case CXCursor_TypedefDecl:
  case CXCursor_TypeAliasTemplateDecl: {
    name = tether_lint__cx_take(clang_getCursorSpelling(c));
    if (!name || !name[0] || b->in_main_class) break;
    tether_lint__buf key = {0};
    tether_lint__buf_printf(&key, "%s%s%s", b->prefix, b->prefix[0] ? "::" : "", name);
    if (key.p) put_cursor(&b->l->index, key.p, c, 1);
    tether_lint__buf_free(&key);
    /* The main file's classes: their methods are helpers a binding may call. */
    if (k != CXCursor_TypeAliasDecl && k != CXCursor_TypedefDecl && in_main(b->x, c) &&
        clang_isCursorDefinition(c)) {
      build_ctx inner = *b;
      inner.in_main_class = 1;
      clang_visitChildren(c, build_visit, &inner);
    }
    break;
  }
  case CXCursor_FunctionDecl:
  case CXCursor_CXXMethod:
  case CXCursor_FunctionTemplate:
    if (clang_isCursorDefinition(c) && in_main(b->x, c)) {
      name = tether_lint__cx_take(clang_getCursorSpelling(c));
      if (name && name[0]) put_cursor(&b->l->funcs, name, c, 0);
    }
    break;
  default:
    break;
  }
  free(name);
  return CXChildVisit_Continue;
}

/* Namespace directives from the main file's tokens too: a using-directive inside a function, or
 * one whose namespace the parse did not know, is not in the index's walk. */
static void token_scopes(direct_ctx *x, direct_lookup *l) {
  tether_lint_tokens tk;
  if (!x->main || tether_lint__tokenize_file(x->tu, x->main, &tk) != 0) return;
  size_t nast = l->scopes.n;
  for (size_t i = 0; i + 2 < tk.n; i++) {
    int alias = tether_lint__token_is(&tk.t[i], "namespace") &&
                tk.t[i + 1].kind == CXToken_Identifier && tether_lint__token_is(&tk.t[i + 2], "=");
    int using_ns = tether_lint__token_is(&tk.t[i], "using") &&
                   tether_lint__token_is(&tk.t[i + 1], "namespace");
    if (!alias && !using_ns) continue;
    tether_lint__buf q = {0};
    size_t j = i + (alias ? 3 : 2);
    for (; j < tk.n && !tether_lint__token_is(&tk.t[j], ";") && j < i + 40; j++) {
      if (tk.t[j].kind != CXToken_Identifier && !tether_lint__token_is(&tk.t[j], "::")) break;
      if (!(q.n == 0 && tether_lint__token_is(&tk.t[j], "::")))
        tether_lint__buf_puts(&q, tk.t[j].s);
    }
    if (q.p && j < tk.n && tether_lint__token_is(&tk.t[j], ";")) {
      if (alias) {
        void **slot = tether_lint__strmap_put(&l->aliases, tk.t[i + 1].s);
        if (slot && !*slot) *slot = tether_lint__strdup(q.p);
      } else {
        tether_lint__strlist_add_unique(&l->scopes, q.p);
        for (size_t s = 1; s < nast; s++) {
          tether_lint__buf n = {0};
          tether_lint__buf_printf(&n, "%s::%s", l->scopes.v[s], q.p);
          if (n.p) tether_lint__strlist_add_unique(&l->scopes, n.p);
          tether_lint__buf_free(&n);
        }
      }
    }
    tether_lint__buf_free(&q);
  }
  tether_lint__tokens_free(&tk);
}

/* The namespaces the main file's code is written in (`namespace mlir::triton { ... }`). */
static enum CXChildVisitResult main_namespaces(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  build_ctx *b = d;
  /* Only the main file's namespaces (and those nested in them): nothing else is descended into. */
  if (clang_getCursorKind(c) != CXCursor_Namespace || !in_main(b->x, c))
    return CXChildVisit_Continue;
  char q[512];
  direct_qualified_name(c, q, sizeof q);
  if (q[0] && !strstr(q, "(anonymous)")) tether_lint__strlist_add_unique(&b->l->scopes, q);
  return CXChildVisit_Recurse;
}

static direct_lookup *get(direct_ctx *x) {
  if (x->lookup) return x->lookup;
  direct_lookup *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  x->lookup = l;
  tether_lint__strlist_push(&l->scopes, "");
  build_ctx b = {x, l, "", 0};
  clang_visitChildren(clang_getTranslationUnitCursor(x->tu), build_visit, &b);
  clang_visitChildren(clang_getTranslationUnitCursor(x->tu), main_namespaces, &b);
  token_scopes(x, l);
  return l;
}

static enum CXChildVisitResult nested_visit(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  void **io = d; /* [0] name, [1] CXCursor * result */
  enum CXCursorKind k = clang_getCursorKind(c);
  if ((tether_lint__is_class_kind(k) || k == CXCursor_TypeAliasDecl || k == CXCursor_TypedefDecl) &&
      tether_lint__cursor_is(c, (const char *)io[0])) {
    *(CXCursor *)io[1] = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

/* A declaration that names a class: the class (its definition when there is one). */
static CXCursor to_class(CXCursor c) {
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_TypeAliasDecl || k == CXCursor_TypedefDecl) {
    CXType t = clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c));
    c = clang_getTypeDeclaration(t);
    if (clang_Cursor_isNull(c)) return c;
  }
  CXCursor def = clang_getCursorDefinition(c);
  return clang_Cursor_isNull(def) ? c : def;
}

/* `full` in the index, or a class nested in one ("mlir::OpBuilder::InsertPoint"). */
static CXCursor find_qualified(direct_lookup *l, const char *full, int depth) {
  void **slot = tether_lint__strmap_get(&l->index, full);
  if (slot && *slot) return to_class(*(CXCursor *)*slot);
  const char *last = NULL;
  for (const char *p = full; (p = strstr(p, "::")) != NULL; p += 2) last = p;
  if (!last || depth > 3) return clang_getNullCursor();
  char outer[512];
  snprintf(outer, sizeof outer, "%.*s", (int)(last - full), full);
  CXCursor o = find_qualified(l, outer, depth + 1);
  if (clang_Cursor_isNull(o)) return o;
  CXCursor r = clang_getNullCursor();
  void *io[2] = {(void *)(last + 2), &r};
  clang_visitChildren(o, nested_visit, io);
  return clang_Cursor_isNull(r) ? r : to_class(r);
}

CXCursor direct_lookup_class(direct_ctx *x, const char *written) {
  direct_lookup *l = get(x);
  if (!l || !written || !written[0]) return clang_getNullCursor();
  void **m = tether_lint__strmap_get(&l->memo, written);
  if (m && *m) return *(CXCursor *)*m;
  const char *name = written;
  if (strncmp(name, "::", 2) == 0) name += 2;
  /* The first component through the file's namespace aliases. */
  tether_lint__buf n = {0};
  const char *sep = strstr(name, "::");
  char first[256];
  snprintf(first, sizeof first, "%.*s", sep ? (int)(sep - name) : (int)strlen(name), name);
  void **al = sep ? tether_lint__strmap_get(&l->aliases, first) : NULL;
  if (al && *al)
    tether_lint__buf_printf(&n, "%s%s", (const char *)*al, sep);
  else
    tether_lint__buf_puts(&n, name);
  CXCursor r = clang_getNullCursor();
  for (size_t i = 0; n.p && i < l->scopes.n && clang_Cursor_isNull(r); i++) {
    tether_lint__buf full = {0};
    tether_lint__buf_printf(&full, "%s%s%s", l->scopes.v[i], l->scopes.v[i][0] ? "::" : "", n.p);
    if (full.p) r = find_qualified(l, full.p, 0);
    tether_lint__buf_free(&full);
  }
  tether_lint__buf_free(&n);
  void **slot = tether_lint__strmap_put(&l->memo, written);
  if (slot && !*slot) *slot = boxed(r);
  return r;
}

typedef struct member_ctx {
  const char *name;
  CXCursor found;
  CXType bases[16];
  int nbases;
} member_ctx;

static enum CXChildVisitResult member_visit(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  member_ctx *m = d;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k == CXCursor_CXXBaseSpecifier) {
    if (m->nbases < 16) m->bases[m->nbases++] = clang_getCursorType(c);
  } else if ((k == CXCursor_CXXMethod || k == CXCursor_FieldDecl ||
              k == CXCursor_FunctionTemplate) &&
             tether_lint__cursor_is(c, m->name)) {
    m->found = c;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static CXCursor member_at(CXCursor cls, const char *name, int depth) {
  if (clang_Cursor_isNull(cls) || depth > 8) return clang_getNullCursor();
  member_ctx m = {name, clang_getNullCursor(), {{0}}, 0};
  clang_visitChildren(cls, member_visit, &m);
  if (clang_Cursor_isNull(m.found)) {
    /* An implicit instantiation has no members of its own to visit: its template's pattern does. */
    CXCursor tmpl = clang_getSpecializedCursorTemplate(cls);
    if (!clang_Cursor_isNull(tmpl)) {
      member_ctx t = {name, clang_getNullCursor(), {{0}}, 0};
      clang_visitChildren(tmpl, member_visit, &t);
      if (!clang_Cursor_isNull(t.found)) return t.found;
      if (!m.nbases) {
        memcpy(m.bases, t.bases, sizeof t.bases);
        m.nbases = t.nbases;
      }
    }
  }
  if (!clang_Cursor_isNull(m.found)) return m.found;
  for (int i = 0; i < m.nbases; i++) {
    CXCursor b = clang_getTypeDeclaration(clang_getCanonicalType(m.bases[i]));
    if (clang_Cursor_isNull(b)) continue;
    CXCursor def = clang_getCursorDefinition(b);
    CXCursor r = member_at(clang_Cursor_isNull(def) ? b : def, name, depth + 1);
    if (!clang_Cursor_isNull(r)) return r;
  }
  return clang_getNullCursor();
}

CXCursor direct_lookup_member(direct_ctx *x, CXCursor cls, const char *name) {
  (void)x;
  return member_at(cls, name, 0);
}

CXCursor direct_lookup_file_function(direct_ctx *x, const char *name) {
  direct_lookup *l = get(x);
  if (!l) return clang_getNullCursor();
  void **slot = tether_lint__strmap_get(&l->funcs, name);
  return slot && *slot ? *(CXCursor *)*slot : clang_getNullCursor();
}

void direct_lookup_free(direct_lookup *l) {
  if (!l) return;
  tether_lint__strmap_free(&l->index, free);
  tether_lint__strmap_free(&l->aliases, free);
  tether_lint__strmap_free(&l->memo, free);
  tether_lint__strmap_free(&l->funcs, free);
  tether_lint__strlist_free(&l->scopes);
  free(l);
}
