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
 * Invariant: findings of the per-TU checks are reported in the main file only (through
 * tether_lint__report_tu); facts for the cross-file pass come from the main file and from the
 * headers it includes, except system headers unless the configuration says `system-headers = true`.
 * When the translation unit has compile errors, the main file is also scanned token by token for
 * the TypeID macros (and project macros defined in the file that use them); a token result is used
 * only where the AST produced nothing on that line, and the file gets a note saying so. */
#define _XOPEN_SOURCE 700
#include "lint/lint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RULE "weak-typeid"

static const tether_lint_rule_info typeid_rules[] = {
    {RULE, "TypeID storage that can exist more than once in a process",
     "An MLIR TypeID is the address of a static object. When that object has vague linkage (a "
     "function-local static in an inline function or template, an inline variable, a static "
     "member of a class template), every shared object that uses it can carry its own copy: two "
     "Python extensions that each link the code get two TypeIDs for one class, and "
     "isa<>/dyn_cast<> "
     "across them fails silently. Also reported: an explicit TypeID declared but defined in no "
     "translation unit of the run, defined in a header, or defined twice, and TypeID::get<T>() on "
     "a "
     "class in an anonymous namespace that has no TypeID of its own (the name-based fallback "
     "confuses two anonymous classes of the same name).",
     "give the class one strong TypeID: MLIR_DECLARE_EXPLICIT_TYPE_ID(ns::Class) in its header (at "
     "global scope) and MLIR_DEFINE_EXPLICIT_TYPE_ID(ns::Class) in exactly one .cpp, linked into "
     "one shared library that every extension links dynamically; keep "
     "MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID for classes in an anonymous namespace"},
};

/* ---- the TypeID macros, by name (degraded mode, messages) ----------------------------------- */

enum macro_kind { M_NONE, M_INLINE, M_DECLARE, M_DEFINE, M_FALLBACK };

static const struct {
  const char *name;
  enum macro_kind kind;
} known_macros[] = {
    {"MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID", M_INLINE},
    {"MLIR_DECLARE_EXPLICIT_TYPE_ID", M_DECLARE},
    {"MLIR_DECLARE_EXPLICIT_SELF_OWNING_TYPE_ID", M_DECLARE},
    {"MLIR_DEFINE_EXPLICIT_TYPE_ID", M_DEFINE},
    {"MLIR_DEFINE_EXPLICIT_SELF_OWNING_TYPE_ID", M_DEFINE},
    /* The string-fallback pair resolves by type name through one registry: no storage to copy. */
    {"MLIR_DECLARE_EXPLICIT_FALLBACK_TYPE_ID", M_FALLBACK},
    {"MLIR_DEFINE_EXPLICIT_FALLBACK_TYPE_ID", M_FALLBACK},
};

static enum macro_kind known_macro(const char *name) {
  for (size_t i = 0; i < sizeof known_macros / sizeof known_macros[0]; i++)
    if (strcmp(known_macros[i].name, name) == 0) return known_macros[i].kind;
  return M_NONE;
}

/* ---- cross-file facts ------------------------------------------------------------------------ */

enum { FACT_DECLARE, FACT_DEFINE };

typedef struct fact {
  int kind;
  char *key;     /* the class (whitespace and a leading "::" removed) or Class::member */
  char *what;    /* how it was written, for messages: "MLIR_DECLARE_EXPLICIT_TYPE_ID(a::B)" */
  char *file;    /* as reported */
  char *real;    /* canonical path, for comparing locations */
  unsigned line; /* 1-based */
  unsigned col;
  int degraded;  /* recognised from tokens only */
  int main_file; /* in an input file (always the user's), not in a header it includes */
} fact;

typedef struct typeid_state {
  tether_lint_run *run;
  int system_headers;
  tether_lint__strlist roots; /* canonical project roots: headers elsewhere are not the user's */
  fact *v;
  size_t n, cap;
} typeid_state;

/* Keeps a fact in the run's state (the driver's process: take_fact). */
static int fact_store(typeid_state *st, const fact *in) {
  fact nf = {in->kind,
             tether_lint__strdup(in->key),
             tether_lint__strdup(in->what),
             tether_lint__strdup(in->file),
             tether_lint__strdup(in->real),
             in->line,
             in->col,
             in->degraded,
             in->main_file};
  if (!nf.key || !nf.what || !nf.file || !nf.real) goto oom;
  if (st->n == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 32;
    fact *v = realloc(st->v, cap * sizeof *v);
    if (!v) goto oom;
    st->v = v;
    st->cap = cap;
  }
  st->v[st->n++] = nf;
  return 0;
oom:
  free(nf.key);
  free(nf.what);
  free(nf.file);
  free(nf.real);
  return -1;
}

/* Records a fact for the cross-file pass: check_tu runs in a worker process (or not at all, when
 * the driver takes the file's result from its cache), so facts travel through the driver
 * (tether_lint__file_fact) to typeid_take_fact. */
static void fact_add(tether_lint_file *f, typeid_state *st, int kind, const char *key,
                     const char *what, const char *file, unsigned line, unsigned col,
                     int degraded) {
  char abs[PATH_MAX];
  const char *real = realpath(file, abs) ? abs : file;
  (void)st;
  tether_lint__buf b = {0};
  uint32_t main_file = strcmp(file, tether_lint__file_path(f)) == 0;
  int rc = tether_lint__buf_put_u32(&b, (uint32_t)kind) | tether_lint__buf_put_u32(&b, line) |
           tether_lint__buf_put_u32(&b, col) | tether_lint__buf_put_u32(&b, (uint32_t)degraded) |
           tether_lint__buf_put_u32(&b, main_file) | tether_lint__buf_put_str(&b, key) |
           tether_lint__buf_put_str(&b, what) | tether_lint__buf_put_str(&b, file) |
           tether_lint__buf_put_str(&b, real);
  if (rc == 0) tether_lint__file_fact(f, b.p, b.n);
  tether_lint__buf_free(&b);
}

static int typeid_take_fact(tether_lint_run *run, void *state, const char *data, size_t len) {
  (void)run;
  typeid_state *st = state;
  if (!st) return -1;
  tether_lint__rd r = {(const unsigned char *)data, len, 0, 0};
  fact in;
  in.kind = (int)tether_lint__rd_u32(&r);
  in.line = tether_lint__rd_u32(&r);
  in.col = tether_lint__rd_u32(&r);
  in.degraded = (int)tether_lint__rd_u32(&r);
  in.main_file = (int)tether_lint__rd_u32(&r);
  in.key = tether_lint__rd_str(&r);
  in.what = tether_lint__rd_str(&r);
  in.file = tether_lint__rd_str(&r);
  in.real = tether_lint__rd_str(&r);
  int rc = r.bad || r.off != len || (in.kind != FACT_DECLARE && in.kind != FACT_DEFINE)
               ? -1
               : fact_store(st, &in);
  free(in.key);
  free(in.what);
  free(in.file);
  free(in.real);
  return rc;
}

/* "::a :: B< int >" -> "a::B<int>" */
static char *norm_key(const char *s) {
  size_t n = strlen(s);
  char *r = malloc(n + 1);
  if (!r) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') r[k++] = s[i];
  r[k] = '\0';
  if (r[0] == ':' && r[1] == ':') memmove(r, r + 2, k - 1);
  /* Elaborated spellings from the AST ("struct a::B") never reach here: canonical C++ type
   * spellings carry no keyword. */
  return r;
}

/* The unqualified last component of a key ("a::B<int>" -> "B<int>"), for degraded matching. */
static const char *last_component(const char *key) {
  const char *last = key;
  int depth = 0;
  for (const char *p = key; *p; p++) {
    if (*p == '<') depth++;
    if (*p == '>') depth--;
    if (depth == 0 && p[0] == ':' && p[1] == ':') last = p + 2;
  }
  return last;
}

static int is_header_path(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 6 && strcmp(base + n - 6, ".h.inc") == 0) return 1;
  const char *dot = strrchr(base, '.');
  if (!dot) return 0;
  static const char *const exts[] = {".h", ".hh", ".hpp", ".hxx", ".h++", ".H", ".ipp", ".tcc"};
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
    if (strcmp(dot, exts[i]) == 0) return 1;
  return 0;
}

/* ---- small libclang helpers ------------------------------------------------------------------ */

static char *cx_take(CXString s) {
  char *r = tether_lint__strdup(clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  return r;
}

static int spelled(CXCursor c, const char *name) {
  CXString s = clang_getCursorSpelling(c);
  int eq = clang_getCString(s) && strcmp(clang_getCString(s), name) == 0;
  clang_disposeString(s);
  return eq;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Is this type (canonical spelling, cv-qualifiers ignored) MLIR's SelfOwningTypeID? */
static int is_self_owning(CXType t) {
  char *sp = cx_take(clang_getTypeSpelling(clang_getCanonicalType(t)));
  int yes = sp && ends_with(sp, "SelfOwningTypeID");
  free(sp);
  return yes;
}

static int is_class_kind(enum CXCursorKind k) {
  return k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

static int is_function_kind(enum CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate ||
         k == CXCursor_Constructor || k == CXCursor_Destructor || k == CXCursor_ConversionFunction;
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

/* Where the construct is written: file, line, column of its expansion location, and whether it
 * came out of a macro (then `macro` receives the name written at the expansion location). */
typedef struct where {
  CXFile file;
  unsigned line, col, offset;
  int from_macro;
  char macro[128];
} where;

static where where_of(CXTranslationUnit tu, CXSourceLocation loc) {
  where w;
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
        if (!(ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9')))
          break;
        w.macro[k++] = ch;
      }
      w.macro[k] = '\0';
      w.from_macro = k > 0;
    }
  }
  return w;
}

/* ---- per-TU context -------------------------------------------------------------------------- */

typedef struct cand {
  CXCursor cur;
  int kind; /* CAND_DERIVED, CAND_GET */
  char *cls;
  char *detail;
} cand;

enum { CAND_DERIVED, CAND_GET };

typedef struct ctx {
  tether_lint_file *f;
  typeid_state *st;
  CXTranslationUnit tu;
  CXFile main_file;
  const char *main_path;
  int main_is_header;
  tether_lint__strlist specialized;  /* classes with an explicit TypeIDResolver<> specialization */
  tether_lint__strlist own_resolver; /* classes (canonical spelling) that declare resolveTypeID */
  unsigned *lines;                   /* main-file lines the AST analysis covered */
  size_t nlines, caplines;
  cand *cands;
  size_t ncands, capcands;
} ctx;

static void cover(ctx *c, unsigned line) {
  if (c->nlines == c->caplines) {
    size_t cap = c->caplines ? c->caplines * 2 : 32;
    unsigned *v = realloc(c->lines, cap * sizeof *v);
    if (!v) return;
    c->lines = v;
    c->caplines = cap;
  }
  c->lines[c->nlines++] = line;
}

static int covered(const ctx *c, unsigned line) {
  for (size_t i = 0; i < c->nlines; i++)
    if (c->lines[i] == line) return 1;
  return 0;
}

static void add_cand(ctx *c, CXCursor cur, int kind, const char *cls, const char *detail) {
  if (c->ncands == c->capcands) {
    size_t cap = c->capcands ? c->capcands * 2 : 16;
    cand *v = realloc(c->cands, cap * sizeof *v);
    if (!v) return;
    c->cands = v;
    c->capcands = cap;
  }
  cand *k = &c->cands[c->ncands++];
  k->cur = cur;
  k->kind = kind;
  k->cls = tether_lint__strdup(cls);
  k->detail = tether_lint__strdup(detail ? detail : "");
}

typedef enum { LOC_MAIN, LOC_USER, LOC_SYSTEM, LOC_NONE } loc_class;

static loc_class classify(ctx *c, const where *w) {
  if (!w->file) return LOC_NONE;
  if (clang_File_isEqual(w->file, c->main_file)) return LOC_MAIN;
  CXSourceLocation l = clang_getLocation(c->tu, w->file, w->line, w->col);
  return clang_Location_isInSystemHeader(l) ? LOC_SYSTEM : LOC_USER;
}

/* The path of a fact's file: the input's own name for the main file. */
static char *path_of(ctx *c, const where *w) {
  if (clang_File_isEqual(w->file, c->main_file)) return tether_lint__strdup(c->main_path);
  return cx_take(clang_getFileName(w->file));
}

/* ---- storage in a function body ------------------------------------------------------------- */

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
  return is_function_kind(clang_getCursorKind(p)) || clang_getCursorKind(p) == CXCursor_LambdaExpr;
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
  if (k == CXCursor_LambdaExpr || is_class_kind(k)) return CXChildVisit_Continue;
  if (k == CXCursor_VarDecl && clang_Cursor_getStorageClass(c) == CX_SC_Static &&
      is_self_owning(clang_getCursorType(c))) {
    if (!s->found) {
      s->found = 1;
      s->var = c;
    }
    return CXChildVisit_Continue;
  }
  if (k == CXCursor_CallExpr && spelled(c, "getFromOpaquePointer")) {
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
  if ((k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate) && spelled(c, "resolveTypeID")) {
    storage_scan s;
    if (function_storage(c, &s)) {
      t->found = 1;
      snprintf(t->what, sizeof t->what, "resolveTypeID() with a function-local static");
      return CXChildVisit_Break;
    }
  }
  if (k == CXCursor_VarDecl && is_self_owning(clang_getCursorType(c))) {
    t->found = 1;
    char *name = cx_take(clang_getCursorSpelling(c));
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
  if ((k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate) && spelled(c, "resolveTypeID")) {
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
  return cx_take(clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(cls))));
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
      char *bn = cx_take(clang_getTypeSpelling(t));
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
static void invocation_text(CXTranslationUnit tu, const where *w, char *out, size_t outlen) {
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

/* ---- the AST walk ---------------------------------------------------------------------------- */

static void report(ctx *x, CXCursor c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(ctx *x, CXCursor c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tether_lint__report_tu(x->f, x->tu, clang_getCursorLocation(c), RULE, "%s", msg);
}

static const char *linkage_story(int header) {
  return header ? "every shared object that includes this header and uses it gets its own copy "
                  "unless the symbol is exported and interposed"
                : "every shared object that links this code gets its own copy unless the symbol "
                  "is exported and interposed";
}

/* A function definition in the main file: TypeID storage in a static local with vague linkage? */
static void check_function(ctx *x, CXCursor fn, const where *w) {
  storage_scan s;
  if (!function_storage(fn, &s)) return;
  cover(x, w->line);
  if (inside_class_template(fn)) return; /* a template pattern: checked at its instantiations */
  enum CXCursorKind k = clang_getCursorKind(fn);
  enum CXLinkageKind lk = clang_getCursorLinkage(fn);
  int is_template = k == CXCursor_FunctionTemplate;
  int vague = is_template || clang_Cursor_isFunctionInlined(fn);
  char *fname = cx_take(clang_getCursorSpelling(fn));
  char *vname = cx_take(clang_getCursorSpelling(s.var));
  CXCursor owner = clang_getCursorSemanticParent(fn);
  char *oname = is_class_kind(clang_getCursorKind(owner)) ? class_name(owner) : NULL;
  char subject[512];
  if (oname)
    snprintf(subject, sizeof subject, "%s::%s()", oname, fname ? fname : "");
  else
    snprintf(subject, sizeof subject, "%s()", fname ? fname : "");
  char how[1200];
  enum macro_kind mk = w->from_macro ? known_macro(w->macro) : M_NONE;
  if (mk == M_INLINE)
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
             how, linkage_story(x->main_is_header));
    else if (mk == M_INLINE || w->from_macro)
      report(x, fn,
             "%s in '%s', which is not in an anonymous namespace: its resolveTypeID() keeps the "
             "TypeID in a function-local static of an inline function (vague linkage); %s",
             how, oname ? oname : subject, linkage_story(x->main_is_header));
    else
      report(x, fn,
             "%s of an inline function with external linkage (vague linkage, COMDAT/weak); %s", how,
             linkage_story(x->main_is_header));
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
static void check_member(ctx *x, CXCursor v, const where *w, loc_class lc) {
  CXCursor cls = clang_getCursorSemanticParent(v);
  enum CXCursorKind ck = clang_getCursorKind(cls);
  if (!is_class_kind(ck)) return;
  if (!is_self_owning(clang_getCursorType(v))) return;
  if (lc == LOC_MAIN) cover(x, w->line);
  if (ck == CXCursor_ClassTemplate || ck == CXCursor_ClassTemplatePartialSpecialization ||
      inside_class_template(cls))
    return; /* template storage: checked at the classes that inherit it */
  char *vname = cx_take(clang_getCursorSpelling(v));
  char *key = NULL;
  if (spelled(cls, "TypeIDResolver") &&
      !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(cls))) {
    CXType arg = clang_Type_getTemplateArgumentAsType(clang_getCursorType(cls), 0);
    char *a = cx_take(clang_getTypeSpelling(clang_getCanonicalType(arg)));
    key = a ? norm_key(a) : NULL;
    free(a);
  } else {
    char *cn = class_name(cls);
    tether_lint__buf b = {0};
    tether_lint__buf_printf(&b, "%s::%s", cn ? cn : "", vname ? vname : "");
    free(cn);
    key = b.p ? norm_key(b.p) : NULL;
    tether_lint__buf_free(&b);
  }
  CXCursor lex = clang_getCursorLexicalParent(v);
  int in_class = clang_equalCursors(clang_getCanonicalCursor(lex), clang_getCanonicalCursor(cls));
  int is_def = clang_isCursorDefinition(v);
  char what[256];
  if (w->from_macro)
    invocation_text(x->tu, w, what, sizeof what);
  else if (spelled(cls, "TypeIDResolver"))
    snprintf(what, sizeof what, "SelfOwningTypeID TypeIDResolver<%s>::%s", key ? key : "",
             vname ? vname : "");
  else
    snprintf(what, sizeof what, "static SelfOwningTypeID %s", key ? key : "");
  if (in_class && is_def) {
    /* `static inline SelfOwningTypeID id;` (C++17): an inline variable, vague linkage. */
    if (lc == LOC_MAIN && clang_getCursorLinkage(v) == CXLinkage_External)
      report(x, v,
             "%s is an inline variable with external linkage (vague linkage, COMDAT/weak); %s",
             what, linkage_story(x->main_is_header));
  } else if (key && *key && (lc == LOC_MAIN || lc == LOC_USER || x->st->system_headers)) {
    char *path = path_of(x, w);
    if (path)
      fact_add(x->f, x->st, in_class ? FACT_DECLARE : (is_def ? FACT_DEFINE : FACT_DECLARE), key,
               what, path, w->line, w->col, 0);
    free(path);
  }
  free(key);
  free(vname);
}

/* A class definition in the main file: does it get a weak TypeID from a template base? */
static void check_class(ctx *x, CXCursor cls) {
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
      add_cand(x, cls, CAND_DERIVED, name, detail);
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
  if ((k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) && spelled(c, "get")) {
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
static void check_call(ctx *x, CXCursor call, const where *w) {
  if (!spelled(call, "get")) return;
  CXCursor ref = clang_getCursorReferenced(call);
  if (clang_Cursor_isNull(ref) || clang_getCursorKind(ref) != CXCursor_CXXMethod) return;
  if (!spelled(clang_getCursorSemanticParent(ref), "TypeID")) return;
  targ_scan ts;
  memset(&ts, 0, sizeof ts);
  ts.best = clang_getNullCursor();
  clang_visitChildren(call, find_get_name, &ts);
  if (!ts.get_off) return;
  clang_visitChildren(call, find_targ, &ts);
  if (clang_Cursor_isNull(ts.best) || ts.is_template) return;
  cover(x, w->line);
  CXCursor decl = clang_getCursorReferenced(ts.best);
  if (clang_Cursor_isNull(decl) || !is_class_kind(clang_getCursorKind(decl))) return;
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
  if (name) add_cand(x, call, CAND_GET, name, NULL);
  free(name);
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
  (void)parent;
  ctx *x = data;
  enum CXCursorKind k = clang_getCursorKind(c);
  int is_call = k == CXCursor_CallExpr;
  if (!is_call && !clang_isDeclaration(k)) return CXChildVisit_Recurse;
  where w = where_of(x->tu, clang_getCursorLocation(c));
  loc_class lc = classify(x, &w);
  if (lc == LOC_NONE) return CXChildVisit_Recurse;
  if (lc == LOC_SYSTEM && !x->st->system_headers) return CXChildVisit_Continue;
  if (is_call) {
    if (lc == LOC_MAIN) check_call(x, c, &w);
    return CXChildVisit_Recurse;
  }
  if ((k == CXCursor_StructDecl || k == CXCursor_ClassDecl) && spelled(c, "TypeIDResolver") &&
      !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c))) {
    CXType arg = clang_Type_getTemplateArgumentAsType(clang_getCursorType(c), 0);
    char *a = cx_take(clang_getTypeSpelling(clang_getCanonicalType(arg)));
    if (a) tether_lint__strlist_add_unique(&x->specialized, a);
    free(a);
    if (lc == LOC_MAIN) cover(x, w.line);
  }
  if (is_function_kind(k)) {
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

/* ---- degraded mode: the TypeID macros from tokens -------------------------------------------- */

typedef struct tok {
  CXTokenKind kind;
  char *s;
  unsigned line, col;
} tok;

enum { S_NS, S_ANON, S_CLASS, S_BLOCK, S_OPEN };

typedef struct scope {
  int kind;
  int is_template;
  int anon_class; /* index into anon classes, or -1 */
  int impl_ns;    /* `namespace impl {` (where TableGen's pass bases live) */
} scope;

typedef struct anon_class {
  char *name;
  int has_inline;
} anon_class;

typedef struct get_use {
  char *arg;
  unsigned line, col;
} get_use;

static int tok_is(const tok *t, const char *s) { return strcmp(t->s, s) == 0; }

/* Classifies the `{` that ends head tokens t[a..b). */
static scope classify_brace(const tok *t, size_t a, size_t b, char *name, size_t namelen) {
  scope sc = {S_BLOCK, 0, -1, 0};
  name[0] = '\0';
  size_t i = a;
  if (i < b && tok_is(&t[i], "template")) {
    sc.is_template = 1;
    i++;
    int depth = 0;
    for (; i < b; i++) {
      if (tok_is(&t[i], "<")) depth++;
      if (tok_is(&t[i], ">")) depth--;
      if (tok_is(&t[i], ">>")) depth -= 2;
      if (depth <= 0) {
        i++;
        break;
      }
    }
  }
  for (size_t j = i; j < b; j++) {
    if (tok_is(&t[j], "namespace")) {
      sc.kind = j + 1 == b ? S_ANON : S_NS;
      sc.impl_ns = b >= 1 && tok_is(&t[b - 1], "impl");
      return sc;
    }
  }
  if (i + 1 < b && tok_is(&t[i], "extern") && t[i + 1].kind == CXToken_Literal) {
    sc.kind = S_OPEN;
    return sc;
  }
  for (size_t j = i; j < b; j++) {
    if (tok_is(&t[j], "enum") || tok_is(&t[j], "=")) return sc;
    if (tok_is(&t[j], "class") || tok_is(&t[j], "struct") || tok_is(&t[j], "union")) {
      int paren = 0;
      for (size_t m = j + 1; m < b; m++) {
        if (tok_is(&t[m], ":") || tok_is(&t[m], "final") || tok_is(&t[m], "<")) break;
        if (tok_is(&t[m], "(")) {
          /* alignas(...), __attribute__((...)) belong to the class head; a call does not. */
          if (m > j + 1 && (tok_is(&t[m - 1], "alignas") || tok_is(&t[m - 1], "__attribute__") ||
                            tok_is(&t[m - 1], "__declspec"))) {
            int d = 0;
            for (; m < b; m++) {
              if (tok_is(&t[m], "(")) d++;
              if (tok_is(&t[m], ")") && --d == 0) break;
            }
            continue;
          }
          paren = 1;
          break;
        }
        if (t[m].kind == CXToken_Identifier) snprintf(name, namelen, "%s", t[m].s);
      }
      if (paren) {
        name[0] = '\0';
        return sc;
      }
      sc.kind = S_CLASS;
      return sc;
    }
  }
  return sc;
}

typedef struct alias {
  char *name;
  enum macro_kind kind;
} alias;

static enum macro_kind macro_kind_of(const char *s, const alias *al, size_t nal) {
  enum macro_kind k = known_macro(s);
  if (k != M_NONE) return k;
  for (size_t i = 0; i < nal; i++)
    if (strcmp(al[i].name, s) == 0) return al[i].kind;
  return M_NONE;
}

/* The last line of the preprocessor directive that starts on `line` (backslash continuations). */
static unsigned directive_end(const char *text, size_t size, unsigned line) {
  unsigned at = 1;
  size_t i = 0;
  while (i < size && at < line) {
    if (text[i] == '\n') at++;
    i++;
  }
  for (;;) {
    size_t e = i;
    while (e < size && text[e] != '\n') e++;
    size_t last = e;
    while (last > i && (text[last - 1] == '\r' || text[last - 1] == ' ' || text[last - 1] == '\t'))
      last--;
    if (last > i && text[last - 1] == '\\' && e < size) {
      at++;
      i = e + 1;
      continue;
    }
    return at;
  }
}

/* A TableGen pass base in the head tokens t[a..b) of class `name`: `: public impl::FooBase<name>`
 * (GEN_PASS_DEF) or `: public FooPassBase<name>` (the older GEN_PASS_CLASSES), whose argument is
 * the class itself. Fills the base's spelling and the
 * index of the class name token; 0 when there is none. */
static int pass_base(const tok *t, size_t a, size_t b, const char *name, char *base, size_t len,
                     size_t *name_at, int in_impl) {
  size_t colon = b;
  *name_at = b;
  for (size_t j = a; j < b; j++) {
    if (t[j].kind == CXToken_Identifier && tok_is(&t[j], name) && *name_at == b) *name_at = j;
    if (tok_is(&t[j], ":") && *name_at < j) {
      colon = j;
      break;
    }
  }
  if (colon == b) return 0;
  size_t j = colon + 1;
  while (j < b) {
    while (j < b && (tok_is(&t[j], "public") || tok_is(&t[j], "protected") ||
                     tok_is(&t[j], "private") || tok_is(&t[j], "virtual")))
      j++;
    size_t start = j, last = b;
    while (j < b && (t[j].kind == CXToken_Identifier || tok_is(&t[j], "::"))) {
      if (t[j].kind == CXToken_Identifier) last = j;
      j++;
    }
    if (last < b && j < b && tok_is(&t[j], "<")) {
      /* TableGen's spellings: `impl::FooBase` (GEN_PASS_DEF), or a name ending in "PassBase"
       * (the older GEN_PASS_CLASSES); a project's own CRTP `OptionsBase<X>` is not one. */
      size_t n = strlen(t[last].s);
      int qualified_impl = in_impl || (last >= start + 2 && tok_is(&t[last - 1], "::") &&
                                       tok_is(&t[last - 2], "impl"));
      int ends_base = n > 4 && strcmp(t[last].s + n - 4, "Base") == 0 &&
                      (qualified_impl || (n > 8 && strcmp(t[last].s + n - 8, "PassBase") == 0));
      int crtp = j + 2 < b && tok_is(&t[j + 1], name) && tok_is(&t[j + 2], ">");
      if (ends_base && crtp) {
        tether_lint__buf sp = {0};
        for (size_t k = start; k <= j + 2; k++) tether_lint__buf_puts(&sp, t[k].s);
        snprintf(base, len, "%s", sp.p ? sp.p : "");
        tether_lint__buf_free(&sp);
        return 1;
      }
    }
    /* The next base specifier. */
    int depth = 0;
    for (; j < b; j++) {
      if (tok_is(&t[j], "<")) depth++;
      if (tok_is(&t[j], ">")) depth--;
      if (tok_is(&t[j], ">>")) depth -= 2;
      if (tok_is(&t[j], ",") && depth <= 0) {
        j++;
        break;
      }
    }
  }
  return 0;
}

/* Did the AST resolve a base class of the class whose name is at line:col? */
static enum CXChildVisitResult find_resolved_base(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  if (clang_getCursorKind(c) != CXCursor_CXXBaseSpecifier) return CXChildVisit_Continue;
  CXCursor decl = clang_getTypeDeclaration(clang_getCursorType(c));
  if (!clang_Cursor_isNull(decl) && clang_getCursorKind(decl) != CXCursor_NoDeclFound) {
    *(int *)d = 1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static int ast_base_resolved(ctx *x, unsigned line, unsigned col) {
  CXCursor c = clang_getCursor(x->tu, clang_getLocation(x->tu, x->main_file, line, col));
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k != CXCursor_StructDecl && k != CXCursor_ClassDecl) return 0;
  int yes = 0;
  clang_visitChildren(c, find_resolved_base, &yes);
  return yes;
}

static int degraded_scan(ctx *x, int *inherited) {
  size_t size = 0;
  const char *text = clang_getFileContents(x->tu, x->main_file, &size);
  if (!text) return 0;
  CXSourceRange range =
      clang_getRange(clang_getLocationForOffset(x->tu, x->main_file, 0),
                     clang_getLocationForOffset(x->tu, x->main_file, (unsigned)size));
  CXToken *raw = NULL;
  unsigned nraw = 0;
  clang_tokenize(x->tu, range, &raw, &nraw);
  tok *t = calloc(nraw ? nraw : 1, sizeof *t);
  if (!t) {
    clang_disposeTokens(x->tu, raw, nraw);
    return 0;
  }
  size_t n = 0;
  for (unsigned i = 0; i < nraw; i++) {
    if (clang_getTokenKind(raw[i]) == CXToken_Comment) continue;
    t[n].kind = clang_getTokenKind(raw[i]);
    t[n].s = cx_take(clang_getTokenSpelling(x->tu, raw[i]));
    if (!t[n].s) t[n].s = tether_lint__strdup("");
    clang_getSpellingLocation(clang_getTokenLocation(x->tu, raw[i]), NULL, &t[n].line, &t[n].col,
                              NULL);
    n++;
  }
  clang_disposeTokens(x->tu, raw, nraw);

  int used = 0;
  alias *al = NULL;
  size_t nal = 0;
  scope *stack = calloc(n + 1, sizeof *stack);
  size_t depth = 0;
  anon_class *ac = NULL;
  size_t nac = 0;
  get_use *gu = NULL;
  size_t ngu = 0;
  size_t head = 0;
  for (size_t i = 0; stack && i < n; i++) {
    if (!t[i].s) continue;
    /* Preprocessor directives: learn the project's wrapper macros, skip the rest. */
    if (tok_is(&t[i], "#") && (i == 0 || t[i - 1].line < t[i].line)) {
      unsigned end = directive_end(text, size, t[i].line);
      size_t j = i + 1;
      if (j + 1 < n && tok_is(&t[j], "define") && t[j + 1].line <= end) {
        const char *name = t[j + 1].s;
        enum macro_kind kind = M_NONE;
        for (size_t m = j + 2; m < n && t[m].line <= end; m++) {
          enum macro_kind mk = macro_kind_of(t[m].s, al, nal);
          if (mk != M_NONE) kind = mk;
        }
        if (kind != M_NONE && known_macro(name) == M_NONE) {
          alias *v = realloc(al, (nal + 1) * sizeof *al);
          if (v) {
            al = v;
            al[nal].name = tether_lint__strdup(name);
            al[nal].kind = kind;
            if (al[nal].name) nal++;
          }
        }
      }
      while (i + 1 < n && t[i + 1].line <= end) i++;
      head = i + 1;
      continue;
    }
    if (tok_is(&t[i], ";")) {
      head = i + 1;
      continue;
    }
    if (tok_is(&t[i], "{")) {
      char name[256];
      scope sc = classify_brace(t, head, i, name, sizeof name);
      if (sc.kind == S_CLASS && name[0]) {
        int in_anon = 0, in_block = 0;
        for (size_t d = 0; d < depth; d++) {
          if (stack[d].kind == S_ANON) in_anon = 1;
          if (stack[d].kind == S_BLOCK) in_block = 1;
        }
        if (in_anon && !in_block) {
          anon_class *v = realloc(ac, (nac + 1) * sizeof *ac);
          if (v) {
            ac = v;
            ac[nac].name = tether_lint__strdup(name);
            ac[nac].has_inline = 0;
            if (ac[nac].name) sc.anon_class = (int)nac++;
          }
        }
        /* A class deriving from a TableGen pass base the compiler does not know (the generated
         * header is missing): its inherited resolveTypeID() is judged by the base's name. */
        int tmpl = sc.is_template, in_impl = 0;
        for (size_t d = 0; d < depth; d++) {
          if (stack[d].kind == S_CLASS) tmpl |= stack[d].is_template;
          if (stack[d].kind == S_NS && stack[d].impl_ns) in_impl = 1;
        }
        char base[256];
        size_t at = 0;
        if (!in_anon && !in_block && !tmpl &&
            pass_base(t, head, i, name, base, sizeof base, &at, in_impl) && at < i &&
            !covered(x, t[at].line) && !ast_base_resolved(x, t[at].line, t[at].col)) {
          (*inherited)++;
          tether_lint__report_tu(
              x->f, x->tu, clang_getLocation(x->tu, x->main_file, t[at].line, t[at].col), RULE,
              "'%s' derives from '%s', a TableGen pass base whose resolveTypeID() keeps the "
              "TypeID in storage with vague linkage (MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID "
              "in the base), and '%s' is not in an anonymous namespace; %s [recognised from "
              "tokens: the base class is unknown here, judged by its name]",
              name, base, name, linkage_story(x->main_is_header));
        }
      }
      stack[depth++] = sc;
      head = i + 1;
      continue;
    }
    if (tok_is(&t[i], "}")) {
      if (depth) depth--;
      head = i + 1;
      continue;
    }
    /* TypeID::get<ARG> */
    if (tok_is(&t[i], "TypeID") && i + 3 < n && tok_is(&t[i + 1], "::") &&
        tok_is(&t[i + 2], "get") && tok_is(&t[i + 3], "<")) {
      tether_lint__buf arg = {0};
      int d = 0;
      size_t j = i + 3;
      for (; j < n; j++) {
        if (tok_is(&t[j], "<")) d++;
        if (tok_is(&t[j], ">")) d--;
        if (tok_is(&t[j], ">>")) d -= 2;
        if (d <= 0) break;
        if (j > i + 3) tether_lint__buf_puts(&arg, t[j].s);
      }
      get_use *v = realloc(gu, (ngu + 1) * sizeof *gu);
      if (v && arg.p) {
        gu = v;
        gu[ngu].arg = arg.p;
        gu[ngu].line = t[i].line;
        gu[ngu].col = t[i].col;
        ngu++;
      } else {
        if (v) gu = v;
        tether_lint__buf_free(&arg);
      }
      continue;
    }
    if (t[i].kind != CXToken_Identifier || i + 1 >= n || !tok_is(&t[i + 1], "(")) continue;
    enum macro_kind mk = macro_kind_of(t[i].s, al, nal);
    if (mk == M_NONE) continue;
    /* The invocation: NAME ( ARGS ). */
    tether_lint__buf arg = {0};
    int d = 0;
    size_t j = i + 1;
    for (; j < n; j++) {
      if (tok_is(&t[j], "(")) d++;
      if (tok_is(&t[j], ")") && --d == 0) break;
      if (j > i + 1) tether_lint__buf_puts(&arg, t[j].s);
    }
    char what[300];
    snprintf(what, sizeof what, "%s(%s)", t[i].s, arg.p ? arg.p : "");
    unsigned line = t[i].line, col = t[i].col;
    CXSourceLocation loc = clang_getLocation(x->tu, x->main_file, line, col);
    if (mk == M_INLINE) {
      int cls = -1, in_anon = 0, in_block = 0, tmpl = 0;
      for (size_t dd = 0; dd < depth; dd++) {
        if (stack[dd].kind == S_CLASS) {
          cls = (int)dd;
          if (stack[dd].is_template) tmpl = 1;
        }
        if (stack[dd].kind == S_ANON) in_anon = 1;
        if (stack[dd].kind == S_BLOCK) in_block = 1;
      }
      if (cls >= 0 && stack[cls].anon_class >= 0) ac[stack[cls].anon_class].has_inline = 1;
      if (cls >= 0 && !covered(x, line)) {
        used++;
        if (!in_block && !tmpl && !in_anon)
          tether_lint__report_tu(
              x->f, x->tu, loc, RULE,
              "%s in a class that is not in an anonymous namespace: its "
              "resolveTypeID() keeps the TypeID in a function-local static of an "
              "inline function (vague linkage); %s [recognised from tokens: the "
              "file does not compile]",
              what, linkage_story(x->main_is_header));
        else if (!in_block && !tmpl && in_anon && x->main_is_header)
          tether_lint__report_tu(x->f, x->tu, loc, RULE,
                                 "%s in an anonymous namespace in a header: every translation unit "
                                 "that includes the header gets its own TypeID [recognised from "
                                 "tokens: the file does not compile]",
                                 what);
      }
    } else if ((mk == M_DECLARE || mk == M_DEFINE) && arg.p && !covered(x, line)) {
      used++;
      char *key = norm_key(arg.p);
      if (key && *key)
        fact_add(x->f, x->st, mk == M_DECLARE ? FACT_DECLARE : FACT_DEFINE, key, what, x->main_path,
                 line, col, 1);
      free(key);
    } else if (mk == M_FALLBACK && !covered(x, line)) {
      used++;
    }
    tether_lint__buf_free(&arg);
    head = j + 1;
    i = j;
  }
  for (size_t g = 0; g < ngu; g++) {
    if (!covered(x, gu[g].line)) {
      const char *last = last_component(gu[g].arg);
      for (size_t a = 0; a < nac; a++)
        if (strcmp(ac[a].name, last) == 0) {
          used++;
          if (!ac[a].has_inline)
            tether_lint__report_tu(
                x->f, x->tu, clang_getLocation(x->tu, x->main_file, gu[g].line, gu[g].col), RULE,
                "TypeID::get<%s>() on a class in an anonymous namespace that has no TypeID of "
                "its own: the fallback resolves it by type name, which the anonymous '%s' of "
                "another translation unit shares [recognised from tokens: the file does not "
                "compile]",
                gu[g].arg, ac[a].name);
          break;
        }
    }
    free(gu[g].arg);
  }
  for (size_t a = 0; a < nac; a++) free(ac[a].name);
  for (size_t a = 0; a < nal; a++) free(al[a].name);
  for (size_t i = 0; i < n; i++) free(t[i].s);
  free(gu);
  free(ac);
  free(al);
  free(stack);
  free(t);
  return used;
}

/* The first "'X' file not found" of the translation unit's diagnostics, or "". */
static void missing_header(CXTranslationUnit tu, char *out, size_t len) {
  out[0] = '\0';
  unsigned nd = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < nd && !out[0]; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    CXString s = clang_getDiagnosticSpelling(d);
    const char *m = clang_getCString(s);
    const char *q = m ? strchr(m, '\'') : NULL;
    const char *e = q ? strstr(q + 1, "' file not found") : NULL;
    if (q && e) snprintf(out, len, "%.*s", (int)(e - q - 1), q + 1);
    clang_disposeString(s);
    clang_disposeDiagnostic(d);
  }
}

/* ---- the family ------------------------------------------------------------------------------ */

static int typeid_check_tu(tether_lint_file *f, void *state, CXTranslationUnit tu) {
  typeid_state *st = state;
  if (!st) return -1;
  ctx x;
  memset(&x, 0, sizeof x);
  x.f = f;
  x.st = st;
  x.tu = tu;
  x.main_path = tether_lint__file_path(f);
  x.main_is_header = is_header_path(x.main_path);
  CXCursor root = clang_getTranslationUnitCursor(tu);
  {
    CXString sp = clang_getTranslationUnitSpelling(tu);
    x.main_file = clang_getFile(tu, clang_getCString(sp));
    clang_disposeString(sp);
  }
  if (!x.main_file) return 0;
  clang_visitChildren(root, visit, &x);
  for (size_t i = 0; i < x.ncands; i++) {
    cand *k = &x.cands[i];
    if (k->cls && !tether_lint__strlist_has(&x.specialized, k->cls)) {
      if (k->kind == CAND_DERIVED) {
        where w = where_of(tu, clang_getCursorLocation(k->cur));
        cover(&x, w.line);
        report(&x, k->cur,
               "%s: a resolveTypeID() defined in a class template keeps the TypeID in storage "
               "with vague linkage in every instantiation, and '%s' has external linkage; %s",
               k->detail, k->cls, linkage_story(x.main_is_header));
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
  unsigned nd = clang_getNumDiagnostics(tu), nerr = 0;
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) nerr++;
    clang_disposeDiagnostic(d);
  }
  if (nerr) {
    int inherited = 0;
    int used = degraded_scan(&x, &inherited);
    if (used || inherited) {
      char hdr[512] = "", why[600] = "";
      missing_header(tu, hdr, sizeof hdr);
      if (hdr[0]) snprintf(why, sizeof why, " (missing header '%s')", hdr);
      tether_lint__file_message(
          f, 0,
          "weak-typeid: degraded mode: the file does not compile%s, %d TypeID "
          "macro use(s) recognised from tokens only (class and namespace scopes "
          "from braces; wrapper macros only when defined in this file), %d "
          "class(es) deriving from a TableGen pass base judged by the base's name",
          why, used, inherited);
    }
  }
  free(x.cands);
  free(x.lines);
  tether_lint__strlist_free(&x.specialized);
  tether_lint__strlist_free(&x.own_resolver);
  return 0;
}

/* Lexically absolute (relative to the current directory), without "." components or a
 * trailing slash; symlinks are not resolved and ".." is kept as written (unlike
 * tether_lint__lexical_abs), since a project root is compared with paths as the user spelled
 * them. */
static void lexical_path(const char *path, char *out, size_t len) {
  char cwd[PATH_MAX];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
    snprintf(out, len, "%s", path);
  else
    snprintf(out, len, "%s/%s", cwd, path);
  char *p;
  while ((p = strstr(out, "/./")) != NULL) memmove(p, p + 2, strlen(p + 2) + 1);
  size_t n = strlen(out);
  while (n > 1 && out[n - 1] == '/') out[--n] = '\0';
  if (n > 2 && strcmp(out + n - 2, "/.") == 0) out[n - 2] = '\0';
}

/* A project root, both as written (made absolute) and canonical, so that a file is matched
 * whether it was reached through a symlink or not. */
static void add_root(typeid_state *st, const char *base, const char *dir) {
  char buf[PATH_MAX * 2 + 2];
  if (dir[0] == '/' || !base)
    snprintf(buf, sizeof buf, "%s", dir);
  else
    snprintf(buf, sizeof buf, "%s/%s", base, dir);
  char lex[PATH_MAX * 2 + 2];
  lexical_path(buf, lex, sizeof lex);
  tether_lint__strlist_add_unique(&st->roots, lex);
  char abs[PATH_MAX];
  if (realpath(buf, abs)) tether_lint__strlist_add_unique(&st->roots, abs);
}

static int typeid_run_begin(tether_lint_run *run, void **state) {
  typeid_state *st = calloc(1, sizeof *st);
  if (!st) return -1;
  st->run = run;
  const tether_lint_config *cfg = tether_lint__run_config(run);
  const tether_lint_options *o = tether_lint__run_options(run);
  st->system_headers = cfg->system_headers;
  /* The project: `project-roots` (relative to the config file's folder), else the config file's
   * folder, else the repository (git top-level) of the first PATH, else the current directory. */
  struct stat sb;
  const char *cfg_dir =
      cfg->path && cfg->dir && stat(cfg->path, &sb) == 0 && S_ISREG(sb.st_mode) ? cfg->dir : NULL;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
  if (cfg->project_roots.n) {
    for (size_t i = 0; i < cfg->project_roots.n; i++)
      add_root(st, cfg_dir ? cfg_dir : cwd, cfg->project_roots.v[i]);
  } else if (cfg_dir) {
    add_root(st, NULL, cfg_dir);
  } else {
    char top[PATH_MAX];
    if (o->paths.n && tether_lint__real_dir(o->paths.v[0], top) &&
        tether_lint__find_upward(top, ".git", 0))
      add_root(st, NULL, top);
    else
      add_root(st, NULL, cwd);
  }
  *state = st;
  return 0;
}

/* MLIR's own headers (its include tree, installed or in a source checkout) are never the user's:
 * their TypeIDs are defined in libMLIR. */
static int mlir_own(const char *path) {
  return strstr(path, "/include/mlir/") != NULL || strstr(path, "/include/mlir-c/") != NULL;
}

/* Is a fact the user's to fix: in an input file, or in a header under a project root; never in
 * MLIR's own headers (unless `system-headers = true`, which also asks to check a vendored MLIR). */
static int users(const typeid_state *st, const fact *a) {
  if (mlir_own(a->real) && !st->system_headers) return 0;
  if (a->main_file || st->system_headers) return 1;
  char lex[PATH_MAX * 2 + 2];
  lexical_path(a->file, lex, sizeof lex);
  const char *paths[2] = {a->real, lex};
  for (size_t i = 0; i < st->roots.n; i++) {
    const char *r = st->roots.v[i];
    size_t n = strlen(r);
    if (strcmp(r, "/") == 0) return 1;
    for (int k = 0; k < 2; k++)
      if (strncmp(paths[k], r, n) == 0 && (paths[k][n] == '/' || paths[k][n] == '\0')) return 1;
  }
  return 0;
}

static int same_class(const fact *a, const fact *b) {
  if (strcmp(a->key, b->key) == 0) return 1;
  return (a->degraded || b->degraded) &&
         strcmp(last_component(a->key), last_component(b->key)) == 0;
}

static int same_place(const fact *a, const fact *b) {
  return a->line == b->line && strcmp(a->real, b->real) == 0;
}

/* Facts arrive in input order: sort them by place so that the output (which copy of a header's
 * fact is kept, which other definition a message names) depends on where facts are, not on which
 * translation unit saw them first. */
static int fact_cmp(const void *pa, const void *pb) {
  const fact *a = pa, *b = pb;
  int c = strcmp(a->real, b->real);
  if (c) return c;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  if (a->col != b->col) return a->col < b->col ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  if (a->degraded != b->degraded) return a->degraded < b->degraded ? -1 : 1;
  c = strcmp(a->key, b->key);
  if (c) return c;
  c = strcmp(a->file, b->file);
  if (c) return c;
  return strcmp(a->what, b->what);
}

static int typeid_run_end(tether_lint_run *run, void *state) {
  typeid_state *st = state;
  if (!st) return 0;
  /* "Declared, defined nowhere" needs the whole program: a partial run (pre-commit passes the
   * changed files only) does not see the definitions in the files it was not given. */
  int whole = tether_lint__run_whole_program(run);
  if (st->n > 1) qsort(st->v, st->n, sizeof *st->v, fact_cmp);
  for (size_t i = 0; i < st->n; i++) {
    fact *a = &st->v[i];
    int dup = 0;
    for (size_t j = 0; j < i && !dup; j++)
      if (st->v[j].kind == a->kind && same_place(&st->v[j], a) && same_class(&st->v[j], a)) dup = 1;
    if (dup) continue;           /* the same header seen from several translation units */
    if (!users(st, a)) continue; /* still a definition for the declarations that need one */
    if (a->kind == FACT_DECLARE) {
      if (!whole) continue;
      int defined = 0;
      for (size_t j = 0; j < st->n && !defined; j++)
        if (st->v[j].kind == FACT_DEFINE && same_class(&st->v[j], a)) defined = 1;
      if (!defined)
        tether_lint__report_run(
            run, a->file, a->line, a->col, RULE,
            "%s declares TypeID storage for '%s' that no translation unit of this "
            "run defines: define it in exactly one .cpp (MLIR_DEFINE_EXPLICIT_TYPE_ID "
            "for the macro); until then the link fails, or each shared object "
            "resolves it on its own",
            a->what, a->key);
      continue;
    }
    if (is_header_path(a->file))
      tether_lint__report_run(
          run, a->file, a->line, a->col, RULE,
          "%s defines the TypeID storage of '%s' in a header: every translation "
          "unit that includes it defines it again (a link error in one shared "
          "object, a second copy of the TypeID in the next one); move it to one "
          ".cpp",
          a->what, a->key);
    for (size_t j = 0; j < st->n; j++) {
      fact *b = &st->v[j];
      if (j == i || b->kind != FACT_DEFINE || !same_class(a, b) || same_place(a, b)) continue;
      tether_lint__report_run(
          run, a->file, a->line, a->col, RULE,
          "%s defines the TypeID storage of '%s', which %s:%u defines too: two "
          "definitions are two TypeIDs as soon as they end up in different shared "
          "objects; keep exactly one",
          a->what, a->key, b->file, b->line);
      break;
    }
  }
  for (size_t i = 0; i < st->n; i++) {
    free(st->v[i].key);
    free(st->v[i].what);
    free(st->v[i].file);
    free(st->v[i].real);
  }
  free(st->v);
  tether_lint__strlist_free(&st->roots);
  free(st);
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
