/* Degraded mode of weak-typeid: the TypeID macros from tokens, for files that do not compile.
 *
 * When a translation unit has compile errors, the TypeID macros it uses may not have expanded (a
 * missing header declares them, or the TableGen pass bases). The main file is then scanned token
 * by token: class and namespace scopes from braces, the file's own macros that expand to a TypeID
 * macro from its #defines, classes deriving from a TableGen pass base judged by the base's name.
 *
 * Invariant: a token result is used only where the AST produced nothing on that line
 * (typeid_covered), every token finding says it comes from tokens, and the file gets one note. */
#include "lint/typeid/typeid.h"

#include <stdlib.h>
#include <string.h>

static int tok_is(const tether_lint_token *t, const char *s) { return tether_lint__token_is(t, s); }

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

/* Classifies the `{` that ends head tokens t[a..b). */
static scope classify_brace(const tether_lint_token *t, size_t a, size_t b, char *name,
                            size_t namelen) {
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
  enum typeid_macro_kind kind;
} alias;

static enum typeid_macro_kind macro_kind_of(const char *s, const alias *al, size_t nal) {
  enum typeid_macro_kind k = typeid_known_macro(s);
  if (k != TYPEID_MACRO_NONE) return k;
  for (size_t i = 0; i < nal; i++)
    if (strcmp(al[i].name, s) == 0) return al[i].kind;
  return TYPEID_MACRO_NONE;
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
static int pass_base(const tether_lint_token *t, size_t a, size_t b, const char *name, char *base,
                     size_t len, size_t *name_at, int in_impl) {
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

static int ast_base_resolved(typeid_ctx *x, unsigned line, unsigned col) {
  CXCursor c = clang_getCursor(x->tu, clang_getLocation(x->tu, x->main_file, line, col));
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k != CXCursor_StructDecl && k != CXCursor_ClassDecl) return 0;
  int yes = 0;
  clang_visitChildren(c, find_resolved_base, &yes);
  return yes;
}

/* One scan of the main file's tokens. */
typedef struct dscan {
  typeid_ctx *x;
  const char *text; /* the main file, for directives' continuation lines */
  size_t size;
  tether_lint_tokens toks;
  const tether_lint_token *t; /* toks.t */
  size_t n;                   /* toks.n */
  alias *al;                  /* the file's own macros that expand to a TypeID macro */
  size_t nal;
  scope *stack; /* the scopes the braces opened */
  size_t depth;
  anon_class *ac; /* classes in anonymous namespaces */
  size_t nac;
  get_use *gu; /* TypeID::get<...> uses */
  size_t ngu;
  size_t head;   /* first token of the current declaration's head */
  int used;      /* TypeID macro uses recognised */
  int inherited; /* classes judged by their pass base */
} dscan;

/* Where the scan is, from the scopes open around it. */
typedef struct scope_flags {
  int cls;      /* the innermost open class scope, or -1 */
  int tmpl;     /* inside a class template */
  int in_anon;  /* inside an anonymous namespace */
  int in_block; /* inside a function body or other block */
  int in_impl;  /* inside `namespace impl` */
} scope_flags;

static scope_flags flags_of(const dscan *ds) {
  scope_flags f = {-1, 0, 0, 0, 0};
  for (size_t d = 0; d < ds->depth; d++) {
    const scope *s = &ds->stack[d];
    if (s->kind == S_CLASS) {
      f.cls = (int)d;
      f.tmpl |= s->is_template;
    }
    if (s->kind == S_ANON) f.in_anon = 1;
    if (s->kind == S_BLOCK) f.in_block = 1;
    if (s->kind == S_NS && s->impl_ns) f.in_impl = 1;
  }
  return f;
}

/* A preprocessor directive at token *i: a `#define` of a macro that expands to a TypeID macro is
 * learnt; the directive is skipped (continuation lines included). 1 when it was one. */
static int directive(dscan *ds, size_t *i) {
  const tether_lint_token *t = ds->t;
  if (!tok_is(&t[*i], "#") || (*i > 0 && t[*i - 1].line >= t[*i].line)) return 0;
  unsigned end = directive_end(ds->text, ds->size, t[*i].line);
  size_t j = *i + 1;
  if (j + 1 < ds->n && tok_is(&t[j], "define") && t[j + 1].line <= end) {
    const char *name = t[j + 1].s;
    enum typeid_macro_kind kind = TYPEID_MACRO_NONE;
    for (size_t m = j + 2; m < ds->n && t[m].line <= end; m++) {
      enum typeid_macro_kind mk = macro_kind_of(t[m].s, ds->al, ds->nal);
      if (mk != TYPEID_MACRO_NONE) kind = mk;
    }
    if (kind != TYPEID_MACRO_NONE && typeid_known_macro(name) == TYPEID_MACRO_NONE) {
      alias *v = realloc(ds->al, (ds->nal + 1) * sizeof *ds->al);
      if (v) {
        ds->al = v;
        ds->al[ds->nal].name = tether_lint__strdup(name);
        ds->al[ds->nal].kind = kind;
        if (ds->al[ds->nal].name) ds->nal++;
      }
    }
  }
  while (*i + 1 < ds->n && t[*i + 1].line <= end) ++*i;
  ds->head = *i + 1;
  return 1;
}

/* A class the compiler does not know that derives from a TableGen pass base (the generated header
 * is missing): its inherited resolveTypeID() is judged by the base's name. */
static void pass_base_finding(dscan *ds, size_t i, const char *name, const scope *sc,
                              const scope_flags *fl) {
  const tether_lint_token *t = ds->t;
  typeid_ctx *x = ds->x;
  char base[256];
  size_t at = 0;
  if (fl->in_anon || fl->in_block || sc->is_template || fl->tmpl ||
      !pass_base(t, ds->head, i, name, base, sizeof base, &at, fl->in_impl) || at >= i ||
      typeid_covered(x, t[at].line) || ast_base_resolved(x, t[at].line, t[at].col))
    return;
  ds->inherited++;
  tether_lint__report_tu(
      x->f, x->tu, clang_getLocation(x->tu, x->main_file, t[at].line, t[at].col), TYPEID_RULE,
      "'%s' derives from '%s', a TableGen pass base whose resolveTypeID() keeps the TypeID in "
      "storage with vague linkage (MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID in the base), and "
      "'%s' is not in an anonymous namespace; %s [recognised from tokens: the base class is "
      "unknown here, judged by its name]",
      name, base, name, typeid_linkage_story(x->main_is_header));
}

/* A `{` at token i opens a scope, classified from the head before it; a class in an anonymous
 * namespace is remembered, one deriving from a pass base judged. */
static void open_scope(dscan *ds, size_t i) {
  char name[256];
  scope sc = classify_brace(ds->t, ds->head, i, name, sizeof name);
  if (sc.kind == S_CLASS && name[0]) {
    scope_flags fl = flags_of(ds);
    if (fl.in_anon && !fl.in_block) {
      anon_class *v = realloc(ds->ac, (ds->nac + 1) * sizeof *ds->ac);
      if (v) {
        ds->ac = v;
        ds->ac[ds->nac].name = tether_lint__strdup(name);
        ds->ac[ds->nac].has_inline = 0;
        if (ds->ac[ds->nac].name) sc.anon_class = (int)ds->nac++;
      }
    }
    pass_base_finding(ds, i, name, &sc, &fl);
  }
  ds->stack[ds->depth++] = sc;
  ds->head = i + 1;
}

/* `TypeID::get<ARG>` at token i: remembered, judged once every anonymous class is known. 1 when
 * it is one. */
static int get_use_at(dscan *ds, size_t i) {
  const tether_lint_token *t = ds->t;
  if (!tok_is(&t[i], "TypeID") || i + 3 >= ds->n || !tok_is(&t[i + 1], "::") ||
      !tok_is(&t[i + 2], "get") || !tok_is(&t[i + 3], "<"))
    return 0;
  tether_lint__buf arg = {0};
  int d = 0;
  for (size_t j = i + 3; j < ds->n; j++) {
    if (tok_is(&t[j], "<")) d++;
    if (tok_is(&t[j], ">")) d--;
    if (tok_is(&t[j], ">>")) d -= 2;
    if (d <= 0) break;
    if (j > i + 3) tether_lint__buf_puts(&arg, t[j].s);
  }
  get_use *v = realloc(ds->gu, (ds->ngu + 1) * sizeof *ds->gu);
  if (v && arg.p) {
    ds->gu = v;
    ds->gu[ds->ngu].arg = arg.p;
    ds->gu[ds->ngu].line = t[i].line;
    ds->gu[ds->ngu].col = t[i].col;
    ds->ngu++;
  } else {
    if (v) ds->gu = v;
    tether_lint__buf_free(&arg);
  }
  return 1;
}

/* An inline TypeID macro in a class: reported outside an anonymous namespace, and in one of a
 * header. */
static void inline_macro(dscan *ds, const char *what, unsigned line, CXSourceLocation loc) {
  typeid_ctx *x = ds->x;
  scope_flags fl = flags_of(ds);
  if (fl.cls >= 0 && ds->stack[fl.cls].anon_class >= 0)
    ds->ac[ds->stack[fl.cls].anon_class].has_inline = 1;
  if (fl.cls < 0 || typeid_covered(x, line)) return;
  ds->used++;
  if (fl.in_block || fl.tmpl) return;
  if (!fl.in_anon)
    tether_lint__report_tu(x->f, x->tu, loc, TYPEID_RULE,
                           "%s in a class that is not in an anonymous namespace: its "
                           "resolveTypeID() keeps the TypeID in a function-local static of an "
                           "inline function (vague linkage); %s [recognised from tokens: the "
                           "file does not compile]",
                           what, typeid_linkage_story(x->main_is_header));
  else if (x->main_is_header)
    tether_lint__report_tu(x->f, x->tu, loc, TYPEID_RULE,
                           "%s in an anonymous namespace in a header: every translation unit "
                           "that includes the header gets its own TypeID [recognised from "
                           "tokens: the file does not compile]",
                           what);
}

/* A TypeID macro (or the file's own macro for one) invoked at token *i: `NAME ( ARGS )`. The AST's
 * result wins where it has one on the line. *i moves to the closing parenthesis. */
static void macro_use(dscan *ds, size_t *i) {
  const tether_lint_token *t = ds->t;
  typeid_ctx *x = ds->x;
  if (t[*i].kind != CXToken_Identifier || *i + 1 >= ds->n || !tok_is(&t[*i + 1], "(")) return;
  enum typeid_macro_kind mk = macro_kind_of(t[*i].s, ds->al, ds->nal);
  if (mk == TYPEID_MACRO_NONE) return;
  tether_lint__buf arg = {0};
  int d = 0;
  size_t j = *i + 1;
  for (; j < ds->n; j++) {
    if (tok_is(&t[j], "(")) d++;
    if (tok_is(&t[j], ")") && --d == 0) break;
    if (j > *i + 1) tether_lint__buf_puts(&arg, t[j].s);
  }
  char what[300];
  snprintf(what, sizeof what, "%s(%s)", t[*i].s, arg.p ? arg.p : "");
  unsigned line = t[*i].line, col = t[*i].col;
  if (mk == TYPEID_MACRO_INLINE) {
    inline_macro(ds, what, line, clang_getLocation(x->tu, x->main_file, line, col));
  } else if ((mk == TYPEID_MACRO_DECLARE || mk == TYPEID_MACRO_DEFINE) && arg.p &&
             !typeid_covered(x, line)) {
    ds->used++;
    char *key = typeid_norm_key(arg.p);
    if (key && *key)
      typeid_fact_add(x->f, mk == TYPEID_MACRO_DECLARE ? TYPEID_FACT_DECLARE : TYPEID_FACT_DEFINE,
                      key, what, x->main_path, line, col, 1);
    free(key);
  } else if (mk == TYPEID_MACRO_FALLBACK && !typeid_covered(x, line)) {
    ds->used++;
  }
  tether_lint__buf_free(&arg);
  ds->head = j + 1;
  *i = j;
}

/* TypeID::get<T>() on an anonymous class (by its last name component) with no TypeID of its
 * own: the name-based fallback confuses it with an anonymous class of another unit. */
static void anonymous_gets(dscan *ds) {
  typeid_ctx *x = ds->x;
  for (size_t g = 0; g < ds->ngu; g++) {
    const get_use *u = &ds->gu[g];
    if (typeid_covered(x, u->line)) continue;
    const char *last = typeid_last_component(u->arg);
    for (size_t a = 0; a < ds->nac; a++) {
      if (strcmp(ds->ac[a].name, last) != 0) continue;
      ds->used++;
      if (!ds->ac[a].has_inline)
        tether_lint__report_tu(
            x->f, x->tu, clang_getLocation(x->tu, x->main_file, u->line, u->col), TYPEID_RULE,
            "TypeID::get<%s>() on a class in an anonymous namespace that has no TypeID of its "
            "own: the fallback resolves it by type name, which the anonymous '%s' of another "
            "translation unit shares [recognised from tokens: the file does not compile]",
            u->arg, ds->ac[a].name);
      break;
    }
  }
}

static void dscan_free(dscan *ds) {
  for (size_t g = 0; g < ds->ngu; g++) free(ds->gu[g].arg);
  for (size_t a = 0; a < ds->nac; a++) free(ds->ac[a].name);
  for (size_t a = 0; a < ds->nal; a++) free(ds->al[a].name);
  free(ds->gu);
  free(ds->ac);
  free(ds->al);
  free(ds->stack);
  tether_lint__tokens_free(&ds->toks);
}

/* Scans the main file's tokens for the TypeID macros the AST did not see. Returns the uses
 * recognised, `*inherited` the classes judged by their pass base. */
static int degraded_scan(typeid_ctx *x, int *inherited) {
  dscan ds;
  memset(&ds, 0, sizeof ds);
  ds.x = x;
  ds.text = clang_getFileContents(x->tu, x->main_file, &ds.size);
  if (!ds.text || tether_lint__tokenize_file(x->tu, x->main_file, &ds.toks) != 0) return 0;
  ds.t = ds.toks.t;
  ds.n = ds.toks.n;
  ds.stack = calloc(ds.n + 1, sizeof *ds.stack);
  for (size_t i = 0; ds.stack && i < ds.n; i++) {
    if (directive(&ds, &i)) continue;
    if (tok_is(&ds.t[i], ";")) {
      ds.head = i + 1;
    } else if (tok_is(&ds.t[i], "{")) {
      open_scope(&ds, i);
    } else if (tok_is(&ds.t[i], "}")) {
      if (ds.depth) ds.depth--;
      ds.head = i + 1;
    } else if (!get_use_at(&ds, i)) {
      macro_use(&ds, &i);
    }
  }
  anonymous_gets(&ds);
  *inherited = ds.inherited;
  int used = ds.used;
  dscan_free(&ds);
  return used;
}

void typeid_degraded(typeid_ctx *x) {
  if (!tether_lint__error_count(x->tu)) return;
  int inherited = 0;
  int used = degraded_scan(x, &inherited);
  if (!used && !inherited) return;
  char hdr[512] = "", why[600] = "";
  tether_lint__missing_header(x->tu, NULL, hdr, sizeof hdr);
  if (hdr[0]) snprintf(why, sizeof why, " (missing header '%s')", hdr);
  tether_lint__file_message(x->f, 0,
                            "weak-typeid: degraded mode: the file does not compile%s, %d TypeID "
                            "macro use(s) recognised from tokens only (class and namespace scopes "
                            "from braces; wrapper macros only when defined in this file), %d "
                            "class(es) deriving from a TableGen pass base judged by the base's "
                            "name",
                            why, used, inherited);
}
