/* Rule family "rawop": raw-op-unguarded and raw-op-escape.
 *
 * Invariant: every function body in the main file (lambda bodies included, each as a function of
 * its own) is walked once, in evaluation order, carrying the set of wrapper expressions known to be
 * valid on every path to the current point (a must-analysis over structured control flow). A
 * wrapper enters the set through a guard (guard call, guarded accessor, a condition that proves
 * validity on the branch taken, or an early exit on the invalid branch) and leaves it when the
 * wrapper is reassigned or invalidated; the set after an if/?:/try is the intersection of its
 * branches, a loop or switch body never adds to the set after it (but what it removed is removed
 * after it; a do/while(0) body is a block), and a label empties it. The set also holds status facts
 * ("local rc holds the status of an accessor called on w"), which a check of rc turns into w.
 * Wrapper identity is the expression's token spelling ("self", "this", "this->parentOperation" is
 * "parentOperation"). Anything the walk does not model makes the set smaller, never larger, so the
 * approximation can only add findings, not hide them. */
#include "lint/lint.h"

#include <stdlib.h>
#include <string.h>

static const tether_lint_rule_info rawop_rules[] = {
    {"raw-op-unguarded", "Raw MLIR handle taken from a wrapper without a validity guard",
     "A raw IR handle (operation, block, region or value) is taken from a binding's wrapper object "
     "through an accessor or field that does not check validity, on a path where no validity guard "
     "on the same wrapper dominates the use. If the wrapper's IR was erased or its parent freed, "
     "the raw handle dangles and using it crashes the process.",
     "guard the wrapper first: call its guard (e.g. self.checkValid()), return early when it is "
     "invalid, or check the accessor's status against TETHER_OK before using the handle"},
    {"raw-op-escape", "Raw MLIR handle from a wrapper stored where it outlives the guard",
     "A raw IR handle taken from a wrapper is stored in a field, a global or static variable, a "
     "lambda capture, or returned to a caller. The validity check (if any) only held where it was "
     "made; the stored copy can outlive the IR it points to and dangle later.",
     "keep the wrapper (or a tether handle) instead of the raw handle, and take the raw handle "
     "again, after a guard, where it is used"},
};

#define RULE_UNGUARDED "raw-op-unguarded"
#define RULE_ESCAPE "raw-op-escape"

/* ---- fact sets ------------------------------------------------------------------------------- */

typedef tether_lint__strlist facts;

static facts facts_copy(const facts *a) {
  facts r = {0};
  for (size_t i = 0; i < a->n; i++) tether_lint__strlist_push(&r, a->v[i]);
  return r;
}

static void facts_add(facts *a, const char *w) {
  if (w && *w) tether_lint__strlist_add_unique(a, w);
}

static void facts_union(facts *a, const facts *b) {
  for (size_t i = 0; i < b->n; i++) facts_add(a, b->v[i]);
}

/* Besides wrapper spellings, a fact set holds status facts: "local variable V holds the status
 * of a status accessor called on wrapper W", spelled STATUS_TAG V-key STATUS_TAG W. They are
 * must-facts like the others (a join keeps them only when every path established them), and they
 * die when V or W is written. A wrapper spelling never starts with STATUS_TAG. */
#define STATUS_TAG '\x01'

/* The wrapper part of a status fact, or NULL for a wrapper fact. */
static const char *status_fact_wrapper(const char *s) {
  if (s[0] != STATUS_TAG) return NULL;
  const char *w = strchr(s + 1, STATUS_TAG);
  return w ? w + 1 : NULL;
}

static void facts_remove(facts *a, const char *w) {
  size_t k = 0;
  size_t wl = strlen(w);
  for (size_t i = 0; i < a->n; i++) {
    /* Removing "op" also removes "op.x" and "op->x": they were derived from the old object. A
     * status fact about "op" (or "op.x") goes with it: the status was about the old object. */
    const char *s = a->v[i];
    const char *sw = status_fact_wrapper(s);
    if (sw) s = sw;
    int derived = strncmp(s, w, wl) == 0 && (s[wl] == '\0' || s[wl] == '.' || s[wl] == '-');
    if (derived) {
      free(a->v[i]);
    } else {
      a->v[k++] = a->v[i];
    }
  }
  a->n = k;
}

/* a := a ∩ b */
static void facts_intersect(facts *a, const facts *b) {
  size_t k = 0;
  for (size_t i = 0; i < a->n; i++) {
    if (tether_lint__strlist_has(b, a->v[i])) {
      a->v[k++] = a->v[i];
    } else {
      free(a->v[i]);
    }
  }
  a->n = k;
}

static void facts_replace(facts *dst, facts *src) {
  tether_lint__strlist_free(dst);
  *dst = *src;
  memset(src, 0, sizeof *src);
}

/* ---- per-function context -------------------------------------------------------------------- */

/* A local variable holding a raw handle from a raw accessor (its uses need a guard), or from a
 * guarded accessor (checked when taken; only where it is kept matters). */
enum { BIND_RAW, BIND_CHECKED };

typedef struct binding {
  CXCursor var;  /* the local variable holding the raw handle */
  char *wrapper; /* spelling of the wrapper it came from */
  char *via;     /* accessor description, for messages */
  CXSourceLocation access;
  int kind;
  int reported;
} binding;

/* What a function or lambda defined in the translation unit does for its callers: the wrappers
 * (spelled as in its body) that are valid whenever it returns normally, and whether it can
 * return normally at all. Computed on demand, once per function. */
typedef struct summary {
  char *key;    /* USR, or the lambda's file offset */
  int done;     /* 0 while being computed (a recursive call sees an empty summary) */
  int noreturn; /* every path ends in a throw or a call that does not return */
  facts guards;
  tether_lint__strlist params; /* parameter names in order */
} summary;

/* An instantiation the file makes of one of its templates: a function template's argument types
 * (one per parameter) or a class template's arguments. */
typedef struct tbinding {
  char *usr;
  int is_class;
  CXType args[8];
  int nargs;
} tbinding;

/* State shared by a context and the contexts it opens to compute summaries. */
typedef struct shared {
  tbinding *tb;
  size_t ntb, captb;
  summary *v;
  size_t n, cap;
  tether_lint__strlist wrapper_types_yes, wrapper_types_no; /* type_is_wrapper() memo */
} shared;

/* A local variable bound to a lambda, and what the lambda captured. */
typedef struct lambda_var {
  CXCursor var;
  CXCursor lambda;
  char *wrapper, *via; /* a raw handle it captured (NULL: none) */
  CXSourceLocation at;
  int reported;
} lambda_var;

/* A raw handle pushed into a local container: reported if the container escapes. */
typedef struct container_push {
  CXCursor var; /* the local container */
  char *wrapper, *via;
  CXSourceLocation at;
  int reported;
} container_push;

typedef struct ctx {
  tether_lint_file *f;
  CXTranslationUnit tu;
  const tether_lint_profile *p;
  binding *b;
  size_t nb, cap;
  size_t fn_base;  /* bindings below this index belong to enclosing functions */
  int is_accessor; /* the function being walked is itself an accessor */
  CXCursor defer;  /* raw access being bound or stored: no immediate use check */
  int in_lambda;
  CXSourceLocation lambda_at; /* the innermost lambda being walked */
  int lambda_local;           /* the innermost lambda does not outlive the function */
  CXCursor cur_lambda;        /* the innermost lambda being walked */
  CXCursor local_lambda;      /* the next lambda to walk is called or kept locally only */
  CXCursor *svars;            /* local variables seen holding a status; a status fact names one */
  unsigned char *sv_escaped;  /* ... by index; 1 once its address was taken */
  size_t nsv, capsv;
  /* Every fact removal of the function so far, in walk order ("w" + wrapper, "s" + status fact
   * prefix, "*" for all), so that what a loop, switch or try body removed on any of its paths can
   * be removed after it (or in a handler) too. */
  tether_lint__strlist kills;
  const facts *switch_entry; /* the state a `case` label of the innermost switch is reached with */
  /* Summaries: computing one walks the callee quietly (no findings) and collects the state at
   * every normal exit. */
  shared *sh;
  int quiet, depth;
  facts *ret_acc; /* summary mode: intersection of the states at `return` */
  int ret_seen;
  lambda_var *lv;
  size_t nlv, caplv;
  container_push *cp;
  size_t ncp, capcp;
} ctx;

static int stmt(ctx *c, CXCursor s, facts *st);
static void expr(ctx *c, CXCursor e, facts *st);

static void log_kill(ctx *c, char kind, const char *what) {
  tether_lint__buf b = {0};
  char k[2] = {kind, '\0'};
  tether_lint__buf_puts(&b, k);
  tether_lint__buf_puts(&b, what);
  if (b.p) tether_lint__strlist_push(&c->kills, b.p);
  tether_lint__buf_free(&b);
}

/* The wrapper `w` was written or invalidated: forget what was known about it. */
static void kill_wrapper(ctx *c, facts *st, const char *w) {
  log_kill(c, 'w', w);
  facts_remove(st, w);
}

/* Removes from `st` whatever was removed anywhere since kill number `from`. */
static void apply_kills(ctx *c, facts *st, size_t from) {
  for (size_t i = from; i < c->kills.n; i++) {
    const char *k = c->kills.v[i];
    if (k[0] == 'w') {
      facts_remove(st, k + 1);
    } else if (k[0] == '*') {
      tether_lint__strlist_free(st);
    } else if (k[0] == 's') {
      size_t pl = strlen(k + 1), n = 0;
      for (size_t j = 0; j < st->n; j++) {
        if (strncmp(st->v[j], k + 1, pl) == 0)
          free(st->v[j]);
        else
          st->v[n++] = st->v[j];
      }
      st->n = n;
    }
  }
}
static void analyze_decl(ctx *c, CXCursor d);
static int var_is_local_automatic(CXCursor var);
static int is_exempt(ctx *c, CXCursor fn);
struct rawval;
static char *container_target(ctx *c, CXCursor obj, CXCursor *local);
static void add_container_push(ctx *c, CXCursor var, const struct rawval *rv, CXSourceLocation at);
static void container_escapes(ctx *c, CXCursor var, const char *how);
static CXCursor local_var_named(CXCursor e);
static lambda_var *find_lambda_var(ctx *c, CXCursor var);

/* ---- cursor helpers -------------------------------------------------------------------------- */

typedef struct kids {
  CXCursor *v;
  size_t n, cap;
} kids;

static enum CXChildVisitResult collect(CXCursor k, CXCursor parent, CXClientData data) {
  (void)parent;
  kids *ks = data;
  if (ks->n == ks->cap) {
    size_t cap = ks->cap ? ks->cap * 2 : 8;
    CXCursor *v = realloc(ks->v, cap * sizeof *v);
    if (!v) return CXChildVisit_Break;
    ks->v = v;
    ks->cap = cap;
  }
  ks->v[ks->n++] = k;
  return CXChildVisit_Continue;
}

static kids children(CXCursor c) {
  kids ks = {0};
  clang_visitChildren(c, collect, &ks);
  return ks;
}

static int is_expr_kind(enum CXCursorKind k) { return clang_isExpression(k); }

/* Strips implicit wrappers: parentheses, implicit casts, copy/move constructions. */
static CXCursor strip(CXCursor e) {
  for (int guard = 0; guard < 64; guard++) {
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr || k == CXCursor_CStyleCastExpr ||
        k == CXCursor_CXXStaticCastExpr || k == CXCursor_CXXFunctionalCastExpr ||
        k == CXCursor_CXXConstCastExpr || k == CXCursor_CXXReinterpretCastExpr) {
      kids ks = children(e);
      CXCursor next = clang_getNullCursor();
      for (size_t i = 0; i < ks.n; i++)
        if (is_expr_kind(clang_getCursorKind(ks.v[i]))) next = ks.v[i];
      free(ks.v);
      if (clang_Cursor_isNull(next)) return e;
      e = next;
      continue;
    }
    if (k == CXCursor_CallExpr) {
      CXCursor ref = clang_getCursorReferenced(e);
      if (clang_getCursorKind(ref) == CXCursor_Constructor) {
        kids ks = children(e);
        CXCursor only = ks.n == 1 ? ks.v[0] : clang_getNullCursor();
        free(ks.v);
        if (!clang_Cursor_isNull(only) && is_expr_kind(clang_getCursorKind(only))) {
          e = only;
          continue;
        }
      }
    }
    return e;
  }
  return e;
}

/* Normalises a wrapper spelling in place: outer parentheses, "(*this)." and "this->" go. */
static void normalise(char *s) {
  for (;;) {
    size_t len = strlen(s);
    if (len >= 2 && s[0] == '(' && s[len - 1] == ')') {
      int depth = 0, whole = 1;
      for (size_t i = 0; i < len; i++) {
        if (s[i] == '(') depth++;
        if (s[i] == ')') depth--;
        if (depth == 0 && i + 1 < len) whole = 0;
      }
      if (whole) {
        memmove(s, s + 1, len - 2);
        s[len - 2] = '\0';
        continue;
      }
    }
    if (strncmp(s, "this->", 6) == 0 && s[6]) {
      memmove(s, s + 6, strlen(s + 6) + 1);
      continue;
    }
    if (strncmp(s, "(*this).", 8) == 0 && s[8]) {
      memmove(s, s + 8, strlen(s + 8) + 1);
      continue;
    }
    if (strcmp(s, "*this") == 0) {
      strcpy(s, "this");
      continue;
    }
    break;
  }
}

/* Concatenated spelling of tokens [from, to), normalised. */
static char *tokens_string(CXTranslationUnit tu, CXToken *toks, unsigned from, unsigned to) {
  tether_lint__buf b = {0};
  for (unsigned i = from; i < to && b.n < 256; i++) {
    CXString s = clang_getTokenSpelling(tu, toks[i]);
    tether_lint__buf_puts(&b, clang_getCString(s));
    clang_disposeString(s);
  }
  if (!b.p) tether_lint__buf_puts(&b, "");
  if (b.p) normalise(b.p);
  return b.p;
}

/* Concatenated token spelling of a source range, normalised ("this->x" -> "x"). */
static char *spelling_of_range(CXTranslationUnit tu, CXSourceRange r, int drop_last) {
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(tu, r, &toks, &n);
  unsigned end = n > (unsigned)drop_last ? n - (unsigned)drop_last : 0;
  char *s = tokens_string(tu, toks, 0, end);
  if (toks) clang_disposeTokens(tu, toks, n);
  return s;
}

static CXCursor first_expr_child(CXCursor e) {
  kids ks = children(e);
  CXCursor r = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++)
    if (is_expr_kind(clang_getCursorKind(ks.v[i]))) {
      r = ks.v[i];
      break;
    }
  free(ks.v);
  return r;
}

static void spell_into(ctx *c, CXCursor e, tether_lint__buf *b, int depth);
static void ref_name(ctx *c, CXCursor e, char *out, size_t len);

/* The object an overloaded operator-> is applied to (its first argument). */
static CXCursor arrow_object(CXCursor call) {
  CXCursor fn = clang_getCursorReferenced(call);
  kids ks = children(call);
  CXCursor r = clang_getNullCursor();
  for (size_t i = 0; i < ks.n && clang_Cursor_isNull(r); i++) {
    CXCursor k = ks.v[i];
    if (!is_expr_kind(clang_getCursorKind(k))) continue;
    CXCursor kref = clang_getCursorReferenced(strip(k));
    if (!clang_Cursor_isNull(kref) && clang_equalCursors(kref, fn) &&
        clang_getCursorKind(strip(k)) == CXCursor_DeclRefExpr)
      continue;
    r = k;
  }
  free(ks.v);
  return r;
}

static int is_arrow_call(CXCursor e) {
  if (clang_getCursorKind(e) != CXCursor_CallExpr) return 0;
  CXString n = clang_getCursorSpelling(e);
  int yes = strcmp(clang_getCString(n), "operator->") == 0;
  clang_disposeString(n);
  return yes;
}

/* Spelling built from the AST, not from tokens, so it is the same inside and outside macros:
 * "self", "self.parentOperation", "parentOperation" (for this->parentOperation), "p->blk". */
static void spell_into(ctx *c, CXCursor e, tether_lint__buf *b, int depth) {
  if (depth > 32) {
    tether_lint__buf_puts(b, "?");
    return;
  }
  enum CXCursorKind k = clang_getCursorKind(e);
  switch (k) {
  case CXCursor_CXXThisExpr:
    tether_lint__buf_puts(b, "this");
    return;
  case CXCursor_DeclRefExpr: {
    CXString n = clang_getCursorSpelling(e);
    tether_lint__buf_puts(b, clang_getCString(n));
    clang_disposeString(n);
    return;
  }
  case CXCursor_ParenExpr:
  case CXCursor_UnexposedExpr: {
    CXCursor in = first_expr_child(e);
    if (clang_Cursor_isNull(in)) break;
    spell_into(c, in, b, depth + 1);
    return;
  }
  case CXCursor_UnaryOperator: {
    enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(e);
    CXCursor in = first_expr_child(e);
    if (clang_Cursor_isNull(in) || (op != CXUnaryOperator_Deref && op != CXUnaryOperator_AddrOf))
      break;
    tether_lint__buf inner = {0};
    spell_into(c, in, &inner, depth + 1);
    if (inner.p && strcmp(inner.p, "this") == 0 && op == CXUnaryOperator_Deref) {
      tether_lint__buf_puts(b, "this");
    } else {
      tether_lint__buf_puts(b, op == CXUnaryOperator_Deref ? "*" : "&");
      tether_lint__buf_puts(b, inner.p ? inner.p : "?");
    }
    tether_lint__buf_free(&inner);
    return;
  }
  case CXCursor_MemberRefExpr: {
    char mname[160];
    ref_name(c, e, mname, sizeof mname);
    CXCursor base = first_expr_child(e);
    tether_lint__buf bb = {0};
    int arrow = 0;
    if (!clang_Cursor_isNull(base)) {
      CXCursor sb = base;
      while (clang_getCursorKind(sb) == CXCursor_UnexposedExpr ||
             clang_getCursorKind(sb) == CXCursor_ParenExpr) {
        CXCursor in = first_expr_child(sb);
        if (clang_Cursor_isNull(in)) break;
        sb = in;
      }
      if (is_arrow_call(sb)) {
        CXCursor obj = arrow_object(sb);
        if (!clang_Cursor_isNull(obj)) spell_into(c, obj, &bb, depth + 1);
        arrow = 1;
      } else {
        spell_into(c, sb, &bb, depth + 1);
        CXType t = clang_getCursorType(sb);
        arrow = t.kind == CXType_Pointer;
      }
    }
    if (bb.p && strcmp(bb.p, "this") != 0 && bb.p[0]) {
      tether_lint__buf_puts(b, bb.p);
      tether_lint__buf_puts(b, arrow ? "->" : ".");
    }
    tether_lint__buf_puts(b, mname);
    tether_lint__buf_free(&bb);
    return;
  }
  case CXCursor_CallExpr: {
    kids ks = children(e);
    CXCursor first = ks.n ? ks.v[0] : clang_getNullCursor();
    free(ks.v);
    if (is_arrow_call(e)) {
      CXCursor obj = arrow_object(e);
      if (!clang_Cursor_isNull(obj)) {
        spell_into(c, obj, b, depth + 1);
        tether_lint__buf_puts(b, "->");
        return;
      }
    }
    if (!clang_Cursor_isNull(first) && clang_getCursorKind(first) == CXCursor_MemberRefExpr) {
      spell_into(c, first, b, depth + 1);
      tether_lint__buf_puts(b, "()");
      return;
    }
    CXString n = clang_getCursorSpelling(e);
    tether_lint__buf_puts(b, clang_getCString(n));
    tether_lint__buf_puts(b, "()");
    clang_disposeString(n);
    return;
  }
  default:
    break;
  }
  /* Anything else: its tokens, when they are all in the main file. */
  CXSourceRange r = clang_getCursorExtent(e);
  CXFile f1 = NULL, f2 = NULL;
  unsigned o1 = 0, o2 = 0;
  clang_getSpellingLocation(clang_getRangeStart(r), &f1, NULL, NULL, &o1);
  clang_getSpellingLocation(clang_getRangeEnd(r), &f2, NULL, NULL, &o2);
  if (f1 && f1 == f2 && o2 >= o1 && o2 - o1 < 256) {
    char *s = spelling_of_range(c->tu, r, 0);
    tether_lint__buf_puts(b, s ? s : "?");
    free(s);
  } else {
    tether_lint__buf_puts(b, "?");
  }
}

static char *spelling(ctx *c, CXCursor e) {
  tether_lint__buf b = {0};
  spell_into(c, e, &b, 0);
  if (!b.p) tether_lint__buf_puts(&b, "?");
  if (b.p) normalise(b.p);
  return b.p;
}

/* The wrapper a member expression is applied to ("self" in self.get(), "this" when implicit). */
static char *member_base(ctx *c, CXCursor m) {
  CXCursor base = first_expr_child(m);
  if (clang_Cursor_isNull(base)) return tether_lint__strdup("this");
  CXCursor sb = base;
  while (clang_getCursorKind(sb) == CXCursor_UnexposedExpr ||
         clang_getCursorKind(sb) == CXCursor_ParenExpr) {
    CXCursor in = first_expr_child(sb);
    if (clang_Cursor_isNull(in)) break;
    sb = in;
  }
  if (is_arrow_call(sb)) {
    CXCursor obj = arrow_object(sb);
    if (!clang_Cursor_isNull(obj)) return spelling(c, obj);
  }
  return spelling(c, sb);
}

/* "Class" and "member" of a referenced declaration. Returns 0 when it has no class. */
static void decl_names(CXCursor decl, char *cls, size_t clen, char *mem, size_t mlen) {
  CXString m = clang_getCursorSpelling(decl);
  snprintf(mem, mlen, "%s", clang_getCString(m));
  clang_disposeString(m);
  cls[0] = '\0';
  CXCursor parent = clang_getCursorSemanticParent(decl);
  enum CXCursorKind pk = clang_getCursorKind(parent);
  if (pk == CXCursor_ClassDecl || pk == CXCursor_StructDecl || pk == CXCursor_ClassTemplate ||
      pk == CXCursor_ClassTemplatePartialSpecialization || pk == CXCursor_UnionDecl) {
    CXString s = clang_getCursorSpelling(parent);
    snprintf(cls, clen, "%s", clang_getCString(s));
    clang_disposeString(s);
  }
}

static int lists_match(const tether_lint__strlist *l, const char *cls, const char *mem) {
  return tether_lint__profile_match(l, cls[0] ? cls : NULL, mem);
}

/* ---- templates: the instantiations the file makes -----------------------------------------------
 *
 * Inside a template, a call through a template parameter (`container.getElement(i).get()` with
 * `Container &container`, `DerivedTy::isaFunction(value)`) names no declaration before
 * instantiation, and libclang shows only the pattern. The translation unit's own instantiations
 * say what the parameters are: a call of a function template gives its parameters' types, a class
 * deriving from `Base<X>` gives a class template's arguments. With those, the member a dependent
 * expression names is looked up in the bound class (and its bases, class templates' patterns
 * with their arguments substituted one level), so its raw accessors, guards and conversions are
 * recognised as in ordinary code. The first instantiation that resolves the expression is used. */

static void tb_add(ctx *c, CXCursor tmpl, int is_class, const CXType *args, int nargs) {
  shared *sh = c->sh;
  CXString u = clang_getCursorUSR(tmpl);
  const char *usr = clang_getCString(u);
  int have = 0;
  for (size_t i = 0; i < sh->ntb && !have; i++)
    if (sh->tb[i].is_class == is_class && strcmp(sh->tb[i].usr, usr) == 0) have = 1;
  if (!have && usr && *usr) {
    if (sh->ntb == sh->captb) {
      size_t cap = sh->captb ? sh->captb * 2 : 16;
      tbinding *v = realloc(sh->tb, cap * sizeof *v);
      if (v) {
        sh->tb = v;
        sh->captb = cap;
      }
    }
    if (sh->ntb < sh->captb) {
      tbinding *b = &sh->tb[sh->ntb];
      b->usr = tether_lint__strdup(usr);
      b->is_class = is_class;
      b->nargs = nargs > 8 ? 8 : nargs;
      for (int i = 0; i < b->nargs; i++) b->args[i] = args[i];
      if (b->usr) sh->ntb++;
    }
  }
  clang_disposeString(u);
}

static CXType strip_refs(CXType t) {
  for (int i = 0; i < 4; i++)
    if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
        t.kind == CXType_Pointer)
      t = clang_getPointeeType(t);
  return clang_getCanonicalType(t);
}

static enum CXChildVisitResult collect_bindings(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  ctx *c = d;
  if (!clang_Location_isFromMainFile(clang_getCursorLocation(k))) return CXChildVisit_Continue;
  enum CXCursorKind kk = clang_getCursorKind(k);
  if (kk == CXCursor_CallExpr) {
    CXCursor fn = clang_getCursorReferenced(k);
    CXCursor tmpl = clang_Cursor_isNull(fn) ? fn : clang_getSpecializedCursorTemplate(fn);
    if (!clang_Cursor_isNull(tmpl) && clang_getCursorKind(tmpl) == CXCursor_FunctionTemplate) {
      int na = clang_Cursor_getNumArguments(k);
      CXType args[8];
      int n = 0;
      for (int i = 0; i < na && n < 8; i++)
        args[n++] = strip_refs(clang_getCursorType(clang_Cursor_getArgument(k, (unsigned)i)));
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

static const tbinding *binding_for(ctx *c, CXCursor tmpl, int is_class) {
  CXString u = clang_getCursorUSR(tmpl);
  const char *usr = clang_getCString(u);
  const tbinding *r = NULL;
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

typedef struct tparam_named {
  const char *name;
  CXCursor found;
} tparam_named;

static enum CXChildVisitResult find_tparam_named(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  tparam_named *tn = d;
  if (clang_getCursorKind(k) != CXCursor_TemplateTypeParameter) return CXChildVisit_Continue;
  CXString s = clang_getCursorSpelling(k);
  int eq = strcmp(clang_getCString(s), tn->name) == 0;
  clang_disposeString(s);
  if (eq) {
    tn->found = k;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

/* A class template's argument for its parameter `tp` in the instantiation `owner` (a
 * specialization type), or else in the file's own instantiations. */
static CXType bound_tparam(ctx *c, CXCursor tp, CXType owner) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  CXCursor tmpl = clang_getCursorSemanticParent(tp);
  int idx = tparam_index(tmpl, tp);
  if (idx < 0) return none;
  if (owner.kind != CXType_Invalid && idx < clang_Type_getNumTemplateArguments(owner))
    return clang_Type_getTemplateArgumentAsType(owner, (unsigned)idx);
  if (clang_getCursorKind(tmpl) != CXCursor_ClassTemplate) return none;
  const tbinding *b = binding_for(c, tmpl, 1);
  return b && idx < b->nargs ? b->args[idx] : none;
}

/* The class a (possibly dependent) type stands for. */
static CXType bind_type(ctx *c, CXType t) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  t = strip_refs(t);
  if (t.kind == CXType_Record) return t;
  CXCursor d = clang_getTypeDeclaration(t);
  if (clang_getCursorKind(d) == CXCursor_TemplateTypeParameter) {
    CXType b = bound_tparam(c, d, none);
    return b.kind == CXType_Invalid ? none : strip_refs(b);
  }
  return none;
}

/* The name a member expression or a qualified name refers to: its spelling, or for a dependent
 * one (which libclang leaves unnamed) the last identifier written in it. */
static void ref_name(ctx *c, CXCursor e, char *out, size_t len) {
  CXString s = clang_getCursorSpelling(e);
  snprintf(out, len, "%s", clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  if (out[0]) return;
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(c->tu, clang_getCursorExtent(e), &toks, &n);
  for (unsigned i = n; i-- > 0;) {
    if (clang_getTokenKind(toks[i]) != CXToken_Identifier) continue;
    CXString ts = clang_getTokenSpelling(c->tu, toks[i]);
    snprintf(out, len, "%s", clang_getCString(ts));
    clang_disposeString(ts);
    break;
  }
  if (toks) clang_disposeTokens(c->tu, toks, n);
}

typedef struct member_find {
  const char *name;
  CXCursor found;
} member_find;

static enum CXChildVisitResult find_member(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  member_find *mf = d;
  enum CXCursorKind kk = clang_getCursorKind(k);
  if (kk != CXCursor_CXXMethod && kk != CXCursor_FieldDecl && kk != CXCursor_VarDecl &&
      kk != CXCursor_ConversionFunction && kk != CXCursor_FunctionTemplate)
    return CXChildVisit_Continue;
  CXString s = clang_getCursorSpelling(k);
  int eq = strcmp(clang_getCString(s), mf->name) == 0;
  clang_disposeString(s);
  if (eq) {
    mf->found = k;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

/* The declaration of member `name` of class type `t` or of one of its bases; `owner` receives
 * the class type it was found in (a specialization, for substituting its arguments). */
static CXCursor lookup_member(ctx *c, CXType t, const char *name, CXType *owner, int depth) {
  CXCursor none = clang_getNullCursor();
  if (depth > 6 || t.kind == CXType_Invalid) return none;
  CXCursor decl = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(decl)) return none;
  CXCursor def = clang_getCursorDefinition(decl);
  if (clang_Cursor_isNull(def)) def = decl;
  CXCursor tmpl = clang_getSpecializedCursorTemplate(def);
  CXCursor body = !clang_Cursor_isNull(tmpl) ? tmpl : def;
  member_find mf = {name, clang_getNullCursor()};
  clang_visitChildren(body, find_member, &mf);
  if (!clang_Cursor_isNull(mf.found)) {
    *owner = t;
    return mf.found;
  }
  kids ks = children(body);
  CXCursor r = none;
  for (size_t i = 0; i < ks.n && clang_Cursor_isNull(r); i++) {
    if (clang_getCursorKind(ks.v[i]) != CXCursor_CXXBaseSpecifier) continue;
    CXType bt = clang_getCursorType(ks.v[i]);
    CXType rb = strip_refs(bt);
    if (rb.kind != CXType_Record) {
      /* A base spelled with the pattern's parameters: substitute when it is one of them. */
      CXCursor bd = clang_getTypeDeclaration(bt);
      if (clang_getCursorKind(bd) != CXCursor_TemplateTypeParameter) continue;
      rb = strip_refs(bound_tparam(c, bd, t));
      if (rb.kind != CXType_Record) continue;
    }
    r = lookup_member(c, rb, name, owner, depth + 1);
  }
  free(ks.v);
  return r;
}

/* `ret` (a member's type, written in its class's pattern) in the instantiation `owner`. */
static CXType subst_type(ctx *c, CXType ret, CXType owner, CXCursor member) {
  CXType r = strip_refs(ret);
  if (r.kind == CXType_Record) return r;
  CXString sp = clang_getTypeSpelling(clang_getNonReferenceType(ret));
  char name[128];
  snprintf(name, sizeof name, "%s", clang_getCString(sp));
  clang_disposeString(sp);
  /* "const E" -> "E" */
  const char *nm = strncmp(name, "const ", 6) == 0 ? name + 6 : name;
  CXCursor cls = clang_getCursorSemanticParent(member);
  tparam_named tn = {nm, clang_getNullCursor()};
  clang_visitChildren(cls, find_tparam_named, &tn);
  if (clang_Cursor_isNull(tn.found)) return bind_type(c, ret);
  return strip_refs(bound_tparam(c, tn.found, owner));
}

/* The class type of expression `e` (dependent or not), through the file's instantiations. */
static CXType expr_class(ctx *c, CXCursor e, int depth) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  if (depth > 8 || clang_Cursor_isNull(e)) return none;
  CXCursor s = e;
  while (clang_getCursorKind(s) == CXCursor_ParenExpr ||
         clang_getCursorKind(s) == CXCursor_UnexposedExpr) {
    CXCursor in = first_expr_child(s);
    if (clang_Cursor_isNull(in)) break;
    s = in;
  }
  CXType t = strip_refs(clang_getCursorType(s));
  if (t.kind == CXType_Record) return t;
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_DeclRefExpr) {
    CXCursor var = clang_getCursorReferenced(s);
    if (clang_getCursorKind(var) == CXCursor_ParmDecl) {
      CXCursor fn = clang_getCursorSemanticParent(var);
      if (clang_getCursorKind(fn) == CXCursor_FunctionTemplate) {
        /* (clang_Cursor_getArgument does not work on a template: its parameters in order.) */
        const tbinding *b = binding_for(c, fn, 0);
        kids ps = children(fn);
        int pi = 0;
        CXType r = none;
        for (size_t i = 0; b && i < ps.n; i++) {
          if (clang_getCursorKind(ps.v[i]) != CXCursor_ParmDecl) continue;
          if (clang_equalCursors(ps.v[i], var) && pi < b->nargs) r = strip_refs(b->args[pi]);
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
    kids ks = children(s);
    m = ks.n ? ks.v[0] : clang_getNullCursor();
    free(ks.v);
  }
  if (clang_Cursor_isNull(m) || clang_getCursorKind(m) != CXCursor_MemberRefExpr) return none;
  CXType bt = expr_class(c, first_expr_child(m), depth + 1);
  if (bt.kind == CXType_Invalid) return none;
  char name[160];
  ref_name(c, m, name, sizeof name);
  CXType owner = none;
  CXCursor mem = lookup_member(c, bt, name, &owner, 0);
  if (clang_Cursor_isNull(mem)) return none;
  CXType mt = clang_getCursorType(mem);
  CXType rt = clang_getCursorKind(mem) == CXCursor_FieldDecl ? mt : clang_getResultType(mt);
  return subst_type(c, rt, owner, mem);
}

/* The declaration a member expression refers to: libclang's, or for a dependent one, the member
 * of the class its object has in the file's instantiations. */
static CXCursor member_ref(ctx *c, CXCursor m) {
  CXCursor ref = clang_getCursorReferenced(m);
  if (!clang_Cursor_isNull(ref) || !c->sh || !c->sh->ntb) return ref;
  if (clang_getCursorKind(m) != CXCursor_MemberRefExpr) return ref;
  CXType bt = expr_class(c, first_expr_child(m), 0);
  if (bt.kind == CXType_Invalid) return ref;
  char name[160];
  ref_name(c, m, name, sizeof name);
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
static CXCursor conversion_to(CXType from, CXType to, int depth) {
  if (depth > 6) return clang_getNullCursor();
  CXCursor decl = clang_getCursorDefinition(clang_getTypeDeclaration(from));
  if (clang_Cursor_isNull(decl)) return decl;
  conv_find cf = {clang_getCanonicalType(to), clang_getNullCursor()};
  clang_visitChildren(decl, find_conversion, &cf);
  if (!clang_Cursor_isNull(cf.found)) return cf.found;
  kids ks = children(decl);
  CXCursor r = clang_getNullCursor();
  for (size_t i = 0; i < ks.n && clang_Cursor_isNull(r); i++)
    if (clang_getCursorKind(ks.v[i]) == CXCursor_CXXBaseSpecifier)
      r = conversion_to(strip_refs(clang_getCursorType(ks.v[i])), to, depth + 1);
  free(ks.v);
  return r;
}

/* A dependent call `T::f(args)` with T a class template's parameter: the parameter types of f in
 * the file's instantiation, so that a wrapper passed where a raw handle is expected is seen as the
 * implicit conversion it becomes. Returns the number of parameter types written to `params`. */
static int dependent_params(ctx *c, CXCursor call, CXType *params, int max) {
  kids ks = children(call);
  CXCursor callee = ks.n ? ks.v[0] : clang_getNullCursor();
  free(ks.v);
  if (clang_Cursor_isNull(callee) || clang_getCursorKind(callee) != CXCursor_DeclRefExpr ||
      !clang_Cursor_isNull(clang_getCursorReferenced(callee)))
    return 0;
  kids qs = children(callee);
  CXCursor tp = clang_getNullCursor();
  for (size_t i = 0; i < qs.n; i++)
    if (clang_getCursorKind(qs.v[i]) == CXCursor_TypeRef) {
      CXCursor r = clang_getCursorReferenced(qs.v[i]);
      if (clang_getCursorKind(r) == CXCursor_TemplateTypeParameter) tp = r;
    }
  free(qs.v);
  if (clang_Cursor_isNull(tp)) return 0;
  CXType none = {CXType_Invalid, {NULL, NULL}};
  CXType bound = strip_refs(bound_tparam(c, tp, none));
  if (bound.kind != CXType_Record) return 0;
  char name[160];
  ref_name(c, callee, name, sizeof name);
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

/* ---- classification -------------------------------------------------------------------------- */

typedef struct rawacc {
  int is_raw;
  CXCursor node; /* where the walk meets the access (the member expression) */
  char *wrapper;
  char via[320];
} rawacc;

/* Is `e` (already stripped) a raw access through a member (method, field, conversion)? */
static rawacc classify_member_raw(ctx *c, CXCursor e) {
  rawacc r = {0};
  enum CXCursorKind k = clang_getCursorKind(e);
  CXCursor target = e;
  if (k == CXCursor_CallExpr) {
    kids ks = children(e);
    CXCursor first = ks.n ? ks.v[0] : clang_getNullCursor();
    free(ks.v);
    if (!clang_Cursor_isNull(first) && clang_getCursorKind(first) == CXCursor_MemberRefExpr) {
      target = first;
    } else {
      CXCursor ref = clang_getCursorReferenced(e);
      if (clang_getCursorKind(ref) != CXCursor_ConversionFunction) return r;
      char cls[128], mem[160];
      decl_names(ref, cls, sizeof cls, mem, sizeof mem);
      if (!lists_match(&c->p->raw_accessors, cls, mem)) return r;
      r.is_raw = 1;
      r.node = e;
      r.wrapper = spelling(c, e); /* implicit conversion: the converted expression itself */
      snprintf(r.via, sizeof r.via, "%s::%s", cls, mem);
      return r;
    }
  }
  if (clang_getCursorKind(target) != CXCursor_MemberRefExpr) return r;
  CXCursor ref = member_ref(c, target);
  enum CXCursorKind rk = clang_getCursorKind(ref);
  char cls[128], mem[160];
  decl_names(ref, cls, sizeof cls, mem, sizeof mem);
  if (rk == CXCursor_FieldDecl && lists_match(&c->p->raw_fields, cls, mem)) {
    snprintf(r.via, sizeof r.via, "field %s::%s", cls, mem);
  } else if ((rk == CXCursor_CXXMethod || rk == CXCursor_ConversionFunction) &&
             lists_match(&c->p->raw_accessors, cls, mem)) {
    snprintf(r.via, sizeof r.via, "%s::%s()", cls, mem);
  } else {
    return r;
  }
  r.is_raw = 1;
  r.node = target;
  r.wrapper = member_base(c, target);
  return r;
}

static binding *find_binding(ctx *c, CXCursor declref) {
  CXCursor ref = clang_getCursorReferenced(declref);
  if (clang_Cursor_isNull(ref)) return NULL;
  for (size_t i = c->nb; i-- > 0;)
    if (clang_equalCursors(c->b[i].var, ref)) return &c->b[i];
  return NULL;
}

static const tether_lint_status_accessor *status_call(ctx *c, CXCursor e) {
  if (clang_getCursorKind(e) != CXCursor_CallExpr) return NULL;
  CXCursor ref = clang_getCursorReferenced(e);
  if (clang_getCursorKind(ref) != CXCursor_FunctionDecl) return NULL;
  CXString s = clang_getCursorSpelling(ref);
  const tether_lint_status_accessor *sa = tether_lint__profile_status(c->p, clang_getCString(s));
  clang_disposeString(s);
  return sa;
}

/* ---- status facts --------------------------------------------------------------------------- */

/* The local variable `e` names, when it can hold a status fact: an automatic variable of the
 * function of integer, bool or enum type (not a reference: writing through a reference writes
 * somewhere else). */
static CXCursor status_var_of(CXCursor e) {
  CXCursor s = strip(e);
  if (clang_getCursorKind(s) != CXCursor_DeclRefExpr) return clang_getNullCursor();
  CXCursor var = clang_getCursorReferenced(s);
  if (clang_getCursorKind(var) != CXCursor_VarDecl || !var_is_local_automatic(var))
    return clang_getNullCursor();
  CXType t = clang_getCanonicalType(clang_getCursorType(var));
  int scalar = (t.kind >= CXType_Bool && t.kind <= CXType_Int128) || t.kind == CXType_Enum;
  return scalar ? var : clang_getNullCursor();
}

/* The index of `var` in c->svars, added when `add`; (size_t)-1 when absent or out of memory. */
static size_t status_var_index(ctx *c, CXCursor var, int add) {
  for (size_t i = 0; i < c->nsv; i++)
    if (clang_equalCursors(c->svars[i], var)) return i;
  if (!add) return (size_t)-1;
  if (c->nsv == c->capsv) {
    size_t cap = c->capsv ? c->capsv * 2 : 16;
    CXCursor *v = realloc(c->svars, cap * sizeof *v);
    if (!v) return (size_t)-1;
    c->svars = v;
    unsigned char *e = realloc(c->sv_escaped, cap);
    if (!e) return (size_t)-1;
    c->sv_escaped = e;
    c->capsv = cap;
  }
  c->svars[c->nsv] = var;
  c->sv_escaped[c->nsv] = 0;
  return c->nsv++;
}

/* The prefix every status fact about variable `idx` starts with. */
static void status_prefix(char *buf, size_t len, size_t idx) {
  snprintf(buf, len, "%cv%zu%c", STATUS_TAG, idx, STATUS_TAG);
}

/* `var` was written (or may have been): what it held no longer holds. */
static void status_kill(ctx *c, facts *st, CXCursor var) {
  size_t idx = status_var_index(c, var, 0);
  if (idx == (size_t)-1) return;
  char pre[48];
  status_prefix(pre, sizeof pre, idx);
  log_kill(c, 's', pre);
  size_t pl = strlen(pre), k = 0;
  for (size_t i = 0; i < st->n; i++) {
    if (strncmp(st->v[i], pre, pl) == 0) {
      free(st->v[i]);
    } else {
      st->v[k++] = st->v[i];
    }
  }
  st->n = k;
}

/* `var` now holds the status of an accessor called on `wrapper`. */
static void status_set(ctx *c, facts *st, CXCursor var, const char *wrapper) {
  status_kill(c, st, var);
  size_t idx = status_var_index(c, var, 1);
  if (idx == (size_t)-1 || c->sv_escaped[idx] || !wrapper || !*wrapper) return;
  tether_lint__buf b = {0};
  char pre[48];
  status_prefix(pre, sizeof pre, idx);
  tether_lint__buf_puts(&b, pre);
  tether_lint__buf_puts(&b, wrapper);
  if (b.p) facts_add(st, b.p);
  tether_lint__buf_free(&b);
}

/* The wrapper whose status `var` holds on every path to here, or NULL. */
static char *status_get(ctx *c, const facts *st, CXCursor var) {
  size_t idx = status_var_index(c, var, 0);
  if (idx == (size_t)-1 || c->sv_escaped[idx]) return NULL;
  char pre[48];
  status_prefix(pre, sizeof pre, idx);
  size_t pl = strlen(pre);
  for (size_t i = 0; i < st->n; i++)
    if (strncmp(st->v[i], pre, pl) == 0) return tether_lint__strdup(st->v[i] + pl);
  return NULL;
}

/* The address of `var` was taken: it may be written behind the walk's back from now on. */
static void status_escape(ctx *c, facts *st, CXCursor var) {
  status_kill(c, st, var);
  size_t idx = status_var_index(c, var, 1);
  if (idx != (size_t)-1) c->sv_escaped[idx] = 1;
}

/* The wrapper argument's spelling of a status accessor call `call` (stripped), or NULL. */
static char *status_call_wrapper(ctx *c, CXCursor call) {
  const tether_lint_status_accessor *sa = status_call(c, call);
  if (!sa || (int)clang_Cursor_getNumArguments(call) <= sa->wrapper_arg) return NULL;
  return spelling(c, clang_Cursor_getArgument(call, (unsigned)sa->wrapper_arg));
}

static void add_binding(ctx *c, CXCursor var, const char *wrapper, const char *via,
                        CXSourceLocation access, int kind) {
  if (c->nb == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    binding *v = realloc(c->b, cap * sizeof *v);
    if (!v) return;
    c->b = v;
    c->cap = cap;
  }
  binding *b = &c->b[c->nb++];
  b->var = var;
  b->wrapper = tether_lint__strdup(wrapper);
  b->via = tether_lint__strdup(via);
  b->access = access;
  b->kind = kind;
  b->reported = 0;
}

/* The end offset of the macro invocation whose name starts at `off` in `text` (the closing
 * parenthesis of its arguments), or `off` when it takes none. */
static size_t macro_invocation_end(const char *text, size_t size, size_t off) {
  size_t i = off;
  while (i < size && (text[i] == '_' || (text[i] >= 'a' && text[i] <= 'z') ||
                      (text[i] >= 'A' && text[i] <= 'Z') || (text[i] >= '0' && text[i] <= '9')))
    i++;
  while (i < size && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) i++;
  if (i >= size || text[i] != '(') return off;
  int depth = 0;
  char quote = 0;
  for (; i < size; i++) {
    char ch = text[i];
    if (quote) {
      if (ch == '\\' && i + 1 < size)
        i++;
      else if (ch == quote)
        quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'') quote = ch;
    if (ch == '(') depth++;
    if (ch == ')' && --depth == 0) return i;
  }
  return off;
}

/* Is `loc` in code written in a macro's arguments in the main file (`assert(f(op.get()))`)?
 * Such code is reported where it is written, not at the macro's name. */
static int in_macro_argument(CXTranslationUnit tu, CXSourceLocation loc) {
  CXFile ef = NULL, sf = NULL;
  unsigned eoff = 0, soff = 0;
  clang_getExpansionLocation(loc, &ef, NULL, NULL, &eoff);
  clang_getSpellingLocation(loc, &sf, NULL, NULL, &soff);
  if (!ef || !sf || !clang_File_isEqual(ef, sf) || soff <= eoff) return 0;
  size_t size = 0;
  const char *text = clang_getFileContents(tu, ef, &size);
  if (!text || eoff >= size) return 0;
  return soff <= macro_invocation_end(text, size, eoff);
}

/* Where a construct is reported: the start of its extent (an expansion location), or for code in
 * a macro's arguments its own (macro) location, which the report resolves to where it is
 * written. */
static CXSourceLocation start_of(CXCursor e) {
  CXSourceLocation loc = clang_getCursorLocation(e);
  if (in_macro_argument(clang_Cursor_getTranslationUnit(e), loc)) return loc;
  return clang_getRangeStart(clang_getCursorExtent(e));
}

static void report_unguarded(ctx *c, CXSourceLocation at, const char *wrapper, const char *via) {
  if (c->quiet) return;
  const char *fmt = "raw handle taken from '%s' through %s is used where no validity check of "
                    "'%s' dominates it";
  if (in_macro_argument(c->tu, at))
    tether_lint__report_tu_spelled(c->f, c->tu, at, RULE_UNGUARDED, fmt, wrapper, via, wrapper);
  else
    tether_lint__report_tu(c->f, c->tu, at, RULE_UNGUARDED, fmt, wrapper, via, wrapper);
}

static void report_escape(ctx *c, CXSourceLocation at, const char *wrapper, const char *via,
                          const char *where) {
  if (c->quiet) return;
  const char *fmt = "raw handle taken from '%s' through %s %s, where it outlives any validity "
                    "check";
  if (in_macro_argument(c->tu, at))
    tether_lint__report_tu_spelled(c->f, c->tu, at, RULE_ESCAPE, fmt, wrapper, via, where);
  else
    tether_lint__report_tu(c->f, c->tu, at, RULE_ESCAPE, fmt, wrapper, via, where);
}

/* If `e` (stripped) is a raw value (raw access or a variable bound to one), describe it. */
typedef struct rawval {
  int yes;
  char *wrapper; /* owned when from_access */
  char via[320];
  CXSourceLocation access;
  int from_access;
  int checked; /* from a guarded accessor */
  CXCursor node;
} rawval;

static rawval raw_value(ctx *c, CXCursor e) {
  rawval v = {0};
  CXCursor s = strip(e);
  if (clang_getCursorKind(s) == CXCursor_DeclRefExpr) {
    binding *b = find_binding(c, s);
    if (b) {
      v.yes = 1;
      v.checked = b->kind == BIND_CHECKED;
      v.wrapper = tether_lint__strdup(b->wrapper);
      snprintf(v.via, sizeof v.via, "%s", b->via);
      v.access = b->access;
      v.node = s;
    }
    return v;
  }
  rawacc r = classify_member_raw(c, s);
  if (r.is_raw) {
    v.yes = 1;
    v.wrapper = r.wrapper;
    snprintf(v.via, sizeof v.via, "%s", r.via);
    v.access = start_of(s);
    v.from_access = 1;
    v.node = r.node;
    return v;
  }
  /* A guarded accessor (`op.get()`, or its conversion operator): checked now, raw all the same
   * once it is kept. */
  if (clang_getCursorKind(s) != CXCursor_CallExpr) return v;
  kids ks = children(s);
  CXCursor target = ks.n && clang_getCursorKind(ks.v[0]) == CXCursor_MemberRefExpr ? ks.v[0] : s;
  free(ks.v);
  CXCursor ref = clang_getCursorKind(target) == CXCursor_MemberRefExpr
                     ? member_ref(c, target)
                     : clang_getCursorReferenced(target);
  enum CXCursorKind rk = clang_getCursorKind(ref);
  if (rk != CXCursor_CXXMethod && rk != CXCursor_ConversionFunction) return v;
  if (clang_equalCursors(target, s) && rk != CXCursor_ConversionFunction) return v;
  char cls[128], mem[160];
  decl_names(ref, cls, sizeof cls, mem, sizeof mem);
  if (!lists_match(&c->p->guarded_accessors, cls, mem)) return v;
  v.yes = 1;
  v.checked = 1;
  v.wrapper = clang_equalCursors(target, s) ? spelling(c, s) : member_base(c, target);
  snprintf(v.via, sizeof v.via, "%s::%s() (which checks)", cls, mem);
  v.access = start_of(s);
  v.from_access = 1;
  v.node = target;
  return v;
}

/* ---- storage classification ----------------------------------------------------------------- */

static int is_function_kind(enum CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_Constructor ||
         k == CXCursor_Destructor || k == CXCursor_ConversionFunction ||
         k == CXCursor_FunctionTemplate || k == CXCursor_LambdaExpr;
}

static int var_is_local_automatic(CXCursor var) {
  if (clang_getCursorKind(var) != CXCursor_VarDecl && clang_getCursorKind(var) != CXCursor_ParmDecl)
    return 0;
  if (clang_getCursorKind(var) == CXCursor_ParmDecl) return 1;
  if (clang_Cursor_getStorageClass(var) == CX_SC_Static) return 0;
  if (clang_getCursorTLSKind(var) != CXTLS_None) return 0;
  return is_function_kind(clang_getCursorKind(clang_getCursorSemanticParent(var)));
}

/* Where does an assignment to `lhs` store? NULL: a local (no escape); else a description. */
static char *store_target(ctx *c, CXCursor lhs, int *is_local_var, CXCursor *local) {
  CXCursor s = strip(lhs);
  *is_local_var = 0;
  enum CXCursorKind k = clang_getCursorKind(s);
  tether_lint__buf b = {0};
  if (k == CXCursor_DeclRefExpr) {
    CXCursor var = clang_getCursorReferenced(s);
    CXString n = clang_getCursorSpelling(var);
    if (var_is_local_automatic(var)) {
      CXType t = clang_getCursorType(var);
      if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
          clang_getCursorKind(var) == CXCursor_ParmDecl) {
        /* Writing through a reference parameter or reference: the caller's storage. */
        if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference)
          tether_lint__buf_printf(&b, "is stored through reference '%s'", clang_getCString(n));
        else
          *is_local_var = 1, *local = var;
      } else {
        *is_local_var = 1;
        *local = var;
      }
    } else if (clang_getCursorKind(var) == CXCursor_VarDecl) {
      tether_lint__buf_printf(&b, "is stored in %s variable '%s'",
                              clang_Cursor_getStorageClass(var) == CX_SC_Static ? "static"
                                                                                : "global",
                              clang_getCString(n));
    }
    clang_disposeString(n);
    return b.p;
  }
  if (k == CXCursor_MemberRefExpr) {
    CXCursor field = clang_getCursorReferenced(s);
    if (clang_getCursorKind(field) == CXCursor_VarDecl) { /* static data member */
      CXString n = clang_getCursorSpelling(field);
      tether_lint__buf_printf(&b, "is stored in static member '%s'", clang_getCString(n));
      clang_disposeString(n);
      return b.p;
    }
    if (clang_getCursorKind(field) != CXCursor_FieldDecl) return NULL;
    /* A field of a local object (s.f with s a local by value) dies with the function. */
    kids ks = children(s);
    CXCursor base = ks.n ? strip(ks.v[0]) : clang_getNullCursor();
    free(ks.v);
    char *base_sp = member_base(c, s);
    int arrow = 0;
    {
      char *full = spelling(c, s);
      size_t bl = strlen(base_sp);
      arrow = strncmp(full, base_sp, bl) == 0 && strncmp(full + bl, "->", 2) == 0;
      free(full);
    }
    if (!clang_Cursor_isNull(base) && clang_getCursorKind(base) == CXCursor_DeclRefExpr && !arrow) {
      CXCursor var = clang_getCursorReferenced(base);
      CXType t = clang_getCursorType(var);
      if (var_is_local_automatic(var) && clang_getCursorKind(var) == CXCursor_VarDecl &&
          t.kind != CXType_LValueReference && t.kind != CXType_RValueReference) {
        free(base_sp);
        return NULL;
      }
    }
    CXString n = clang_getCursorSpelling(field);
    tether_lint__buf_printf(&b, "is stored in field '%s' of '%s'", clang_getCString(n), base_sp);
    clang_disposeString(n);
    free(base_sp);
    return b.p;
  }
  if (k == CXCursor_UnaryOperator) { /* *out = raw: the caller's storage */
    char *sp = spelling(c, s);
    tether_lint__buf_printf(&b, "is stored through '%s'", sp);
    free(sp);
    return b.p;
  }
  return NULL;
}

/* ---- noreturn ------------------------------------------------------------------------------- */

static enum CXChildVisitResult find_noreturn_attr(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  if (!clang_isAttribute(clang_getCursorKind(k))) return CXChildVisit_Continue;
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(k);
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(tu, clang_getCursorExtent(k), &toks, &n);
  for (unsigned i = 0; i < n; i++) {
    CXString s = clang_getTokenSpelling(tu, toks[i]);
    const char *t = clang_getCString(s);
    if (strcmp(t, "noreturn") == 0 || strcmp(t, "__noreturn__") == 0 || strcmp(t, "_Noreturn") == 0)
      *(int *)d = 1;
    clang_disposeString(s);
  }
  if (toks) clang_disposeTokens(tu, toks, n);
  return *(int *)d ? CXChildVisit_Break : CXChildVisit_Continue;
}

static int is_noreturn_call(CXCursor call) {
  if (clang_getCursorKind(call) != CXCursor_CallExpr) return 0;
  CXCursor fn = clang_getCursorReferenced(call);
  if (clang_Cursor_isNull(fn)) return 0;
  static const char *const known[] = {"abort",          "exit",       "_Exit",
                                      "quick_exit",     "terminate",  "__builtin_unreachable",
                                      "__builtin_trap", "longjmp",    "siglongjmp",
                                      "Py_FatalError",  "__cxa_throw"};
  CXString s = clang_getCursorSpelling(fn);
  const char *name = clang_getCString(s);
  int yes = 0;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(name, known[i]) == 0) yes = 1;
  clang_disposeString(s);
  if (yes) return 1;
  CXType t = clang_getCursorType(fn);
  CXString ts = clang_getTypeSpelling(t);
  if (strstr(clang_getCString(ts), "noreturn")) yes = 1;
  clang_disposeString(ts);
  if (yes) return 1;
  clang_visitChildren(fn, find_noreturn_attr, &yes);
  return yes;
}

/* ---- conditions ----------------------------------------------------------------------------- */

static int is_ok_constant(ctx *c, CXCursor e) {
  CXCursor s = strip(e);
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_IntegerLiteral) {
    char *sp = spelling(c, s);
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

/* If `e` is a status (accessor call, assignment of one, or a local variable that holds one on
 * every path to here, per the status facts in `st`), the wrapper it is about. */
static char *status_wrapper(ctx *c, CXCursor e, const facts *st) {
  CXCursor s = strip(e);
  if (clang_getCursorKind(s) == CXCursor_BinaryOperator &&
      clang_getCursorBinaryOperatorKind(s) == CXBinaryOperator_Assign) {
    kids ks = children(s);
    CXCursor rhs = ks.n == 2 ? ks.v[1] : clang_getNullCursor();
    free(ks.v);
    if (clang_Cursor_isNull(rhs)) return NULL;
    s = strip(rhs);
  }
  if (status_call(c, s)) return status_call_wrapper(c, s);
  CXCursor var = status_var_of(s);
  if (!clang_Cursor_isNull(var)) return status_get(c, st, var);
  return NULL;
}

/* Facts that hold when `e` is true (t) and when it is false (f); `st` is the state in which `e`
 * was evaluated (for the status variables it may name). */
static void cond_facts(ctx *c, CXCursor e, const facts *st, facts *t, facts *f) {
  CXCursor s = strip(e);
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(s) == CXUnaryOperator_LNot) {
    kids ks = children(s);
    if (ks.n == 1) cond_facts(c, ks.v[0], st, f, t);
    free(ks.v);
    return;
  }
  if (k == CXCursor_BinaryOperator) {
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(s);
    kids ks = children(s);
    if (ks.n != 2) {
      free(ks.v);
      return;
    }
    CXCursor a = ks.v[0], b = ks.v[1];
    free(ks.v);
    if (op == CXBinaryOperator_LAnd || op == CXBinaryOperator_LOr) {
      facts ta = {0}, fa = {0}, tb = {0}, fb = {0};
      cond_facts(c, a, st, &ta, &fa);
      cond_facts(c, b, st, &tb, &fb);
      if (op == CXBinaryOperator_LAnd) {
        facts_union(t, &ta);
        facts_union(t, &tb);
        facts_intersect(&fa, &fb);
        facts_union(f, &fa);
      } else {
        facts_intersect(&ta, &tb);
        facts_union(t, &ta);
        facts_union(f, &fa);
        facts_union(f, &fb);
      }
      tether_lint__strlist_free(&ta);
      tether_lint__strlist_free(&fa);
      tether_lint__strlist_free(&tb);
      tether_lint__strlist_free(&fb);
      return;
    }
    if (op == CXBinaryOperator_Assign) {
      char *w = status_wrapper(c, s, st);
      if (w) facts_add(f, w); /* (rc = get(...)): nonzero means failure */
      free(w);
      return;
    }
    if (op == CXBinaryOperator_EQ || op == CXBinaryOperator_NE || op == CXBinaryOperator_LT ||
        op == CXBinaryOperator_GE || op == CXBinaryOperator_GT || op == CXBinaryOperator_LE) {
      char *w = NULL;
      if (is_ok_constant(c, b)) {
        w = status_wrapper(c, a, st);
      } else if (is_ok_constant(c, a)) {
        w = status_wrapper(c, b, st);
        if (op == CXBinaryOperator_LT)
          op = CXBinaryOperator_GT;
        else if (op == CXBinaryOperator_GT)
          op = CXBinaryOperator_LT;
        else if (op == CXBinaryOperator_LE)
          op = CXBinaryOperator_GE;
        else if (op == CXBinaryOperator_GE)
          op = CXBinaryOperator_LE;
      }
      if (w) {
        if (op == CXBinaryOperator_EQ || op == CXBinaryOperator_GE) facts_add(t, w);
        if (op == CXBinaryOperator_NE || op == CXBinaryOperator_LT) facts_add(f, w);
      }
      free(w);
    }
    return;
  }
  /* A bare status: nonzero is an error. */
  char *w = status_wrapper(c, s, st);
  if (w) {
    facts_add(f, w);
    free(w);
    return;
  }
  /* w.valid, w.isValid(), isValid(w). */
  CXCursor target = s;
  if (k == CXCursor_CallExpr) {
    kids ks = children(s);
    if (ks.n && clang_getCursorKind(ks.v[0]) == CXCursor_MemberRefExpr) target = ks.v[0];
    free(ks.v);
  }
  if (clang_getCursorKind(target) == CXCursor_MemberRefExpr) {
    CXCursor ref = clang_getCursorReferenced(target);
    char cls[128], mem[160];
    decl_names(ref, cls, sizeof cls, mem, sizeof mem);
    if (lists_match(&c->p->predicates, cls, mem)) {
      char *base = member_base(c, target);
      facts_add(t, base);
      free(base);
    }
    return;
  }
  if (k == CXCursor_CallExpr && clang_Cursor_getNumArguments(s) >= 1) {
    CXCursor ref = clang_getCursorReferenced(s);
    if (clang_getCursorKind(ref) != CXCursor_FunctionDecl) return;
    CXString n = clang_getCursorSpelling(ref);
    int pred = tether_lint__profile_match(&c->p->predicates, NULL, clang_getCString(n));
    clang_disposeString(n);
    if (pred) {
      char *w = spelling(c, clang_Cursor_getArgument(s, 0));
      facts_add(t, w);
      free(w);
    }
  }
}

/* ---- expressions ---------------------------------------------------------------------------- */

static void check_use(ctx *c, CXCursor node, const char *wrapper, const char *via,
                      CXSourceLocation at, const facts *st) {
  if (!clang_Cursor_isNull(c->defer) && clang_equalCursors(c->defer, node)) return;
  if (!tether_lint__strlist_has(st, wrapper)) report_unguarded(c, at, wrapper, via);
}

static void walk_children(ctx *c, CXCursor e, facts *st) {
  kids ks = children(e);
  for (size_t i = 0; i < ks.n; i++) expr(c, ks.v[i], st);
  free(ks.v);
}

/* The object a member expression is applied to, with parentheses and implicit conversions
 * stripped, and an overloaded `->` seen through (`p->checkValid()` on a smart reference: `p`). */
static CXCursor member_object(CXCursor m) {
  CXCursor sb = first_expr_child(m);
  if (clang_Cursor_isNull(sb)) return sb;
  while (clang_getCursorKind(sb) == CXCursor_UnexposedExpr ||
         clang_getCursorKind(sb) == CXCursor_ParenExpr) {
    CXCursor in = first_expr_child(sb);
    if (clang_Cursor_isNull(in)) break;
    sb = in;
  }
  if (is_arrow_call(sb)) {
    CXCursor obj = arrow_object(sb);
    if (!clang_Cursor_isNull(obj)) sb = strip(obj);
  }
  return sb;
}

/* `obj` was just proven valid. When it is a wrapper's parent (`b.getParentOperation()`,
 * `b.parentOperation`, or `parentOperation` inside a method of the wrapper) and the profile says
 * the wrapper is valid exactly when that parent is, the wrapper is valid too. */
static void add_parent_children(ctx *c, CXCursor obj, facts *st) {
  for (int depth = 0; depth < 4 && !clang_Cursor_isNull(obj); depth++) {
    CXCursor m = obj;
    if (clang_getCursorKind(m) == CXCursor_CallExpr) {
      kids ks = children(m);
      CXCursor first = ks.n ? ks.v[0] : clang_getNullCursor();
      free(ks.v);
      if (clang_Cursor_isNull(first) || clang_getCursorKind(first) != CXCursor_MemberRefExpr)
        return;
      m = first;
    }
    if (clang_getCursorKind(m) != CXCursor_MemberRefExpr) return;
    CXCursor ref = member_ref(c, m);
    enum CXCursorKind rk = clang_getCursorKind(ref);
    if (rk != CXCursor_CXXMethod && rk != CXCursor_FieldDecl) return;
    char cls[128], mem[160];
    decl_names(ref, cls, sizeof cls, mem, sizeof mem);
    if (!lists_match(&c->p->parents, cls, mem)) return;
    char *w = member_base(c, m);
    facts_add(st, w);
    free(w);
    obj = member_object(m);
    if (!clang_Cursor_isNull(obj)) obj = strip(obj);
  }
}

/* A guard-like event on a member call or a free function call. */
static void member_event(ctx *c, CXCursor m, facts *st) {
  CXCursor ref = member_ref(c, m);
  enum CXCursorKind rk = clang_getCursorKind(ref);
  if (rk != CXCursor_CXXMethod && rk != CXCursor_ConversionFunction && rk != CXCursor_FieldDecl)
    return;
  char cls[128], mem[160];
  decl_names(ref, cls, sizeof cls, mem, sizeof mem);
  if (rk != CXCursor_FieldDecl &&
      (lists_match(&c->p->guards, cls, mem) || lists_match(&c->p->guarded_accessors, cls, mem))) {
    char *w = member_base(c, m);
    facts_add(st, w);
    free(w);
    add_parent_children(c, member_object(m), st);
    return;
  }
  if (rk != CXCursor_FieldDecl && lists_match(&c->p->invalidators, cls, mem)) {
    char *w = member_base(c, m);
    kill_wrapper(c, st, w);
    free(w);
    return;
  }
  rawacc r = classify_member_raw(c, m);
  if (r.is_raw) check_use(c, m, r.wrapper, r.via, start_of(m), st);
  free(r.wrapper);
}

static void lambda(ctx *c, CXCursor e, facts *st);

/* A class's copy/move assignment call `a = b`: its two operands, without the operator itself. */
static int operator_assign(CXCursor e, CXCursor *lhs, CXCursor *rhs) {
  CXCursor fn = clang_getCursorReferenced(e);
  if (clang_getCursorKind(fn) != CXCursor_CXXMethod) return 0;
  CXString n = clang_getCursorSpelling(fn);
  int is_assign = strcmp(clang_getCString(n), "operator=") == 0;
  clang_disposeString(n);
  if (!is_assign) return 0;
  kids ks = children(e);
  CXCursor ops[2];
  size_t nops = 0;
  for (size_t i = 0; i < ks.n; i++) {
    CXCursor k = ks.v[i];
    CXCursor sk = strip(k);
    if (clang_getCursorKind(sk) == CXCursor_DeclRefExpr &&
        clang_equalCursors(clang_getCursorReferenced(sk), fn))
      continue; /* the operator function itself */
    if (clang_getCursorKind(k) == CXCursor_MemberRefExpr &&
        clang_equalCursors(clang_getCursorReferenced(k), fn))
      continue; /* a.operator=(b) spelled out */
    if (nops < 2) ops[nops] = k;
    nops++;
  }
  free(ks.v);
  if (nops != 2) return 0;
  *lhs = ops[0];
  *rhs = ops[1];
  return 1;
}

/* An assignment `lhs = rhs` (built-in, or a class's operator= call `e`). */
static void assign(ctx *c, CXCursor e, CXCursor lhs, CXCursor rhs, facts *st) {
  int local = 0;
  CXCursor local_var = clang_getNullCursor();
  char *where = store_target(c, lhs, &local, &local_var);
  rawval rv = raw_value(c, rhs);
  char *status_of = status_call_wrapper(c, strip(rhs));
  CXCursor saved = c->defer;
  if (rv.yes && (local || rv.node.kind == CXCursor_DeclRefExpr)) c->defer = rv.node;
  expr(c, rhs, st);
  c->defer = saved;
  /* The left side: walk the base of a member, not the member itself (writing is not a use). */
  CXCursor ls = strip(lhs);
  if (clang_getCursorKind(ls) == CXCursor_MemberRefExpr) {
    walk_children(c, ls, st);
  } else if (clang_getCursorKind(ls) != CXCursor_DeclRefExpr) {
    expr(c, lhs, st);
  }
  if (rv.yes && where) report_escape(c, start_of(e), rv.wrapper, rv.via, where);
  if (rv.yes && !where && !local) {
    /* `v[i] = raw`, `m[key] = raw`: a store into a container. */
    CXCursor sub = strip(lhs);
    CXString on = clang_getCursorSpelling(sub);
    int subscript = clang_getCursorKind(sub) == CXCursor_CallExpr &&
                    strcmp(clang_getCString(on), "operator[]") == 0 &&
                    clang_Cursor_getNumArguments(sub) == 2;
    clang_disposeString(on);
    if (subscript) {
      CXCursor lv;
      char *cw = container_target(c, clang_Cursor_getArgument(sub, 0), &lv);
      if (cw)
        report_escape(c, start_of(e), rv.wrapper, rv.via, cw);
      else if (!clang_Cursor_isNull(lv))
        add_container_push(c, lv, &rv, start_of(e));
      free(cw);
    }
  }
  if (where) {
    /* A local container or lambda holding raw handles, stored where it outlives the function. */
    CXCursor var = local_var_named(rhs);
    if (!clang_Cursor_isNull(var)) {
      char how[400];
      snprintf(how, sizeof how, "then %s", where);
      container_escapes(c, var, how);
      lambda_var *l = find_lambda_var(c, var);
      if (l && l->wrapper && !l->reported) {
        l->reported = 1;
        report_escape(c, l->at, l->wrapper, l->via,
                      "is captured by a lambda that is stored where it outlives the function");
      }
    }
  }
  if (local && !clang_Cursor_isNull(local_var) && rv.yes)
    add_binding(c, local_var, rv.wrapper, rv.via, rv.access, rv.checked ? BIND_CHECKED : BIND_RAW);
  /* Writing a wrapper (a variable, a field, through a reference) forgets what was known about it,
   * including the statuses taken from it. */
  if (clang_getCursorKind(ls) == CXCursor_DeclRefExpr ||
      clang_getCursorKind(ls) == CXCursor_MemberRefExpr) {
    char *name = spelling(c, ls);
    kill_wrapper(c, st, name);
    free(name);
  }
  /* Writing a status variable: it now holds this accessor's status, or none. */
  CXCursor svar = status_var_of(ls);
  if (!clang_Cursor_isNull(svar)) {
    if (status_of)
      status_set(c, st, svar, status_of);
    else
      status_kill(c, st, svar);
  }
  free(status_of);
  free(where);
  free(rv.wrapper);
}

/* C++: a status variable passed to a reference parameter may be written by the callee. (C has
 * no references: an argument is a copy.) */
static void status_ref_args(ctx *c, CXCursor e, CXCursor fn, facts *st) {
  CXType ft = clang_getCursorType(fn);
  if (ft.kind != CXType_FunctionProto) return;
  int nparams = clang_getNumArgTypes(ft);
  int nargs = clang_Cursor_getNumArguments(e);
  /* A member operator call (a >> rc, f(rc) on a functor) lists the object as argument 0. */
  int shift = clang_getCursorKind(fn) == CXCursor_CXXMethod && nargs == nparams + 1 &&
              !clang_isFunctionTypeVariadic(ft);
  for (int i = shift; i < nargs; i++) {
    CXCursor var = status_var_of(clang_Cursor_getArgument(e, (unsigned)i));
    if (clang_Cursor_isNull(var) || i - shift >= nparams) continue; /* `...` copies */
    CXType pt = clang_getArgType(ft, (unsigned)(i - shift));
    if (pt.kind == CXType_LValueReference || pt.kind == CXType_RValueReference)
      status_escape(c, st, var);
  }
}

typedef struct lambda_refs {
  ctx *c;
  facts *st;
  unsigned from, to; /* the lambda's extent (file offsets) */
} lambda_refs;

static enum CXChildVisitResult find_outer_refs(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  lambda_refs *lr = d;
  if (clang_getCursorKind(k) == CXCursor_DeclRefExpr) {
    CXCursor var = status_var_of(k);
    if (!clang_Cursor_isNull(var)) {
      unsigned off = 0;
      clang_getFileLocation(clang_getCursorLocation(var), NULL, NULL, NULL, &off);
      if (off < lr->from || off >= lr->to) status_escape(lr->c, lr->st, var);
    }
  }
  return CXChildVisit_Recurse;
}

/* C++: a lambda that names a status variable of the enclosing function may write it (by
 * reference) whenever it is called; that variable's status facts are no longer trusted. */
static void status_lambda_refs(ctx *c, CXCursor e, facts *st) {
  CXSourceRange r = clang_getCursorExtent(e);
  lambda_refs lr = {c, st, 0, 0};
  clang_getFileLocation(clang_getRangeStart(r), NULL, NULL, NULL, &lr.from);
  clang_getFileLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &lr.to);
  clang_visitChildren(e, find_outer_refs, &lr);
}

/* ---- summaries of helper functions and lambdas ---------------------------------------------- */

static int stmt(ctx *c, CXCursor s, facts *st);

/* Is `t` (through references, pointers, const and a smart reference's template argument) a
 * wrapper class of the profile, or derived from one? */
static int type_is_wrapper_depth(ctx *c, CXType t, int depth) {
  if (depth > 6) return 0;
  for (int i = 0; i < 4; i++) {
    if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
        t.kind == CXType_Pointer)
      t = clang_getPointeeType(t);
    else
      break;
  }
  t = clang_getCanonicalType(t);
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
      kids ks = children(def);
      for (size_t i = 0; !yes && i < ks.n; i++)
        if (clang_getCursorKind(ks.v[i]) == CXCursor_CXXBaseSpecifier)
          yes = type_is_wrapper_depth(c, clang_getCursorType(ks.v[i]), depth + 1);
      free(ks.v);
    }
  }
  tether_lint__strlist_push(yes ? &c->sh->wrapper_types_yes : &c->sh->wrapper_types_no, key);
  return yes;
}

static int type_is_wrapper(ctx *c, CXType t) { return type_is_wrapper_depth(c, t, 0); }

static int in_system_header(CXCursor d) {
  return clang_Location_isInSystemHeader(clang_getCursorLocation(d));
}

static void ctx_free(ctx *c) {
  for (size_t i = 0; i < c->nb; i++) {
    free(c->b[i].wrapper);
    free(c->b[i].via);
  }
  free(c->b);
  free(c->svars);
  free(c->sv_escaped);
  tether_lint__strlist_free(&c->kills);
  for (size_t i = 0; i < c->nlv; i++) {
    free(c->lv[i].wrapper);
    free(c->lv[i].via);
  }
  free(c->lv);
  for (size_t i = 0; i < c->ncp; i++) {
    free(c->cp[i].wrapper);
    free(c->cp[i].via);
  }
  free(c->cp);
}

/* A normal exit of the function whose summary is being computed, with state `st`. */
static void summary_exit(ctx *c, const facts *st) {
  if (!c->ret_acc) return;
  if (c->ret_seen++ == 0) {
    facts cp = facts_copy(st);
    facts_replace(c->ret_acc, &cp);
  } else {
    facts_intersect(c->ret_acc, st);
  }
}

/* The summary of function `fn` (a declaration; its definition is looked up) or of lambda
 * expression `fn`; NULL when there is no body to look at, or too deep. */
static summary *summary_of(ctx *c, CXCursor fn) {
  if (c->depth >= 3 || !c->sh) return NULL;
  int is_lambda = clang_getCursorKind(fn) == CXCursor_LambdaExpr;
  CXCursor def = is_lambda ? fn : clang_getCursorDefinition(fn);
  if (clang_Cursor_isNull(def)) return NULL;
  char key[600];
  if (is_lambda) {
    unsigned off = 0;
    CXFile file = NULL;
    clang_getExpansionLocation(clang_getCursorLocation(def), &file, NULL, NULL, &off);
    snprintf(key, sizeof key, "L%u", off);
  } else {
    CXString u = clang_getCursorUSR(def);
    snprintf(key, sizeof key, "F%s", clang_getCString(u));
    clang_disposeString(u);
    if (strlen(key) < 2) return NULL;
  }
  for (size_t i = 0; i < c->sh->n; i++)
    if (strcmp(c->sh->v[i].key, key) == 0) return &c->sh->v[i];
  kids ks = children(def);
  CXCursor body = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++)
    if (clang_getCursorKind(ks.v[i]) == CXCursor_CompoundStmt) body = ks.v[i];
  if (clang_Cursor_isNull(body)) {
    free(ks.v);
    return NULL;
  }
  if (c->sh->n == c->sh->cap) {
    size_t cap = c->sh->cap ? c->sh->cap * 2 : 32;
    summary *v = realloc(c->sh->v, cap * sizeof *v);
    if (!v) {
      free(ks.v);
      return NULL;
    }
    c->sh->v = v;
    c->sh->cap = cap;
  }
  size_t idx = c->sh->n++;
  summary *sm = &c->sh->v[idx];
  memset(sm, 0, sizeof *sm);
  sm->key = tether_lint__strdup(key);
  if (is_lambda) {
    for (size_t i = 0; i < ks.n; i++)
      if (clang_getCursorKind(ks.v[i]) == CXCursor_ParmDecl) {
        CXString n = clang_getCursorSpelling(ks.v[i]);
        tether_lint__strlist_push(&sm->params, clang_getCString(n));
        clang_disposeString(n);
      }
  } else {
    int na = clang_Cursor_getNumArguments(def);
    for (int i = 0; i < na; i++) {
      CXString n = clang_getCursorSpelling(clang_Cursor_getArgument(def, (unsigned)i));
      tether_lint__strlist_push(&sm->params, clang_getCString(n));
      clang_disposeString(n);
    }
  }
  free(ks.v);
  ctx sub;
  memset(&sub, 0, sizeof sub);
  sub.f = c->f;
  sub.tu = c->tu;
  sub.p = c->p;
  sub.sh = c->sh;
  sub.quiet = 1;
  sub.depth = c->depth + 1;
  sub.defer = clang_getNullCursor();
  sub.local_lambda = clang_getNullCursor();
  sub.in_lambda = is_lambda;
  facts acc = {0}, st = {0};
  sub.ret_acc = &acc;
  int exits = stmt(&sub, body, &st);
  if (!exits) summary_exit(&sub, &st);
  sm = &c->sh->v[idx]; /* the array may have moved while the body was walked */
  sm->noreturn = sub.ret_seen == 0;
  sm->guards = acc;
  sm->done = 1;
  tether_lint__strlist_free(&st);
  ctx_free(&sub);
  return sm;
}

/* Facts a call establishes through the callee's summary: its guards on a parameter become
 * guards on the argument, on `this` a guard on the object, and (for a lambda) on a captured
 * variable a guard on that variable. */
static void apply_summary(ctx *c, const summary *sm, CXCursor call, const char *obj, int shift,
                          int is_lambda, facts *st) {
  int nargs = clang_Cursor_getNumArguments(call);
  for (size_t i = 0; i < sm->guards.n; i++) {
    const char *g = sm->guards.v[i];
    if (g[0] == STATUS_TAG) continue;
    size_t hn = strcspn(g, ".-([");
    if (hn == 4 && strncmp(g, "this", 4) == 0) {
      if (obj && g[hn] == '\0') facts_add(st, obj);
      continue;
    }
    int pi = -1;
    for (size_t k = 0; k < sm->params.n; k++)
      if (strlen(sm->params.v[k]) == hn && strncmp(sm->params.v[k], g, hn) == 0) pi = (int)k;
    if (pi >= 0) {
      if (pi + shift >= nargs) continue;
      char *a = spelling(c, clang_Cursor_getArgument(call, (unsigned)(pi + shift)));
      tether_lint__buf b = {0};
      if (a[0] == '&' && a[1]) {
        /* A pointer to the wrapper: a guard on `p` or `p->x` is a guard on `w` or `w.x`. */
        tether_lint__buf_puts(&b, a + 1);
        tether_lint__buf_puts(&b, strncmp(g + hn, "->", 2) == 0 ? "." : "");
        tether_lint__buf_puts(&b, strncmp(g + hn, "->", 2) == 0 ? g + hn + 2 : g + hn);
      } else {
        tether_lint__buf_puts(&b, a);
        tether_lint__buf_puts(&b, g + hn);
      }
      if (b.p) {
        normalise(b.p);
        facts_add(st, b.p);
      }
      tether_lint__buf_free(&b);
      free(a);
    } else if (is_lambda) {
      facts_add(st, g);
    }
  }
}

/* Does a call to `fn` never return (declared so, a well-known name, or a body that always
 * throws)? */
static int call_never_returns(ctx *c, CXCursor call) {
  if (is_noreturn_call(call)) return 1;
  CXCursor fn = clang_getCursorReferenced(call);
  enum CXCursorKind k = clang_getCursorKind(fn);
  if (k != CXCursor_FunctionDecl && k != CXCursor_CXXMethod) return 0;
  CXCursor def = clang_getCursorDefinition(fn);
  if (clang_Cursor_isNull(def) || in_system_header(def)) return 0;
  summary *sm = summary_of(c, fn);
  return sm && sm->done && sm->noreturn;
}

/* ---- lambdas kept in local variables, local containers ------------------------------------- */

static lambda_var *find_lambda_var(ctx *c, CXCursor var) {
  for (size_t i = c->nlv; i-- > 0;)
    if (clang_equalCursors(c->lv[i].var, var)) return &c->lv[i];
  return NULL;
}

static lambda_var *lambda_var_for(ctx *c, CXCursor lam) {
  for (size_t i = c->nlv; i-- > 0;)
    if (clang_equalCursors(c->lv[i].lambda, lam)) return &c->lv[i];
  return NULL;
}

static void add_lambda_var(ctx *c, CXCursor var, CXCursor lam) {
  if (c->nlv == c->caplv) {
    size_t cap = c->caplv ? c->caplv * 2 : 8;
    lambda_var *v = realloc(c->lv, cap * sizeof *v);
    if (!v) return;
    c->lv = v;
    c->caplv = cap;
  }
  lambda_var *l = &c->lv[c->nlv++];
  memset(l, 0, sizeof *l);
  l->var = var;
  l->lambda = lam;
}

/* A raw handle captured by a lambda: an escape, unless the lambda stays in the function (called
 * on the spot, passed to a function that only calls it, or kept in a local variable that is only
 * called), in which case it is remembered with the variable until the variable itself escapes. */
static void lambda_capture(ctx *c, CXCursor lam, int local, const char *wrapper, const char *via,
                           CXSourceLocation at) {
  lambda_var *l = lambda_var_for(c, lam);
  if (l) {
    if (!l->wrapper) {
      l->wrapper = tether_lint__strdup(wrapper);
      l->via = tether_lint__strdup(via);
      l->at = at;
    }
    return;
  }
  if (local) return;
  report_escape(c, at, wrapper, via, "is captured by a lambda");
}

/* The local container a push or subscript writes to, or a description of the longer-lived one
 * (NULL and a null cursor: not a container store we understand). */
static char *container_target(ctx *c, CXCursor obj, CXCursor *local) {
  *local = clang_getNullCursor();
  int is_local = 0;
  char *where = store_target(c, obj, &is_local, local);
  if (is_local) {
    free(where);
    return NULL;
  }
  *local = clang_getNullCursor();
  if (!where) {
    /* `(*p).push_back`, `get().push_back`: not a local, not a store we can name: skip. */
    CXCursor s = strip(obj);
    if (clang_getCursorKind(s) != CXCursor_UnaryOperator) return NULL;
  }
  free(where);
  char *sp = spelling(c, obj);
  tether_lint__buf b = {0};
  tether_lint__buf_printf(&b, "is put into container '%s', which outlives the function", sp);
  free(sp);
  return b.p;
}

static void add_container_push(ctx *c, CXCursor var, const struct rawval *rv, CXSourceLocation at) {
  if (c->ncp == c->capcp) {
    size_t cap = c->capcp ? c->capcp * 2 : 8;
    container_push *v = realloc(c->cp, cap * sizeof *v);
    if (!v) return;
    c->cp = v;
    c->capcp = cap;
  }
  container_push *p = &c->cp[c->ncp++];
  p->var = var;
  p->wrapper = tether_lint__strdup(rv->wrapper);
  p->via = tether_lint__strdup(rv->via);
  p->at = at;
  p->reported = 0;
}

/* The local container `var` leaves the function: every raw handle put into it escapes. */
static void container_escapes(ctx *c, CXCursor var, const char *how) {
  for (size_t i = 0; i < c->ncp; i++) {
    container_push *p = &c->cp[i];
    if (p->reported || !clang_equalCursors(p->var, var)) continue;
    p->reported = 1;
    CXString n = clang_getCursorSpelling(var);
    char where[400];
    snprintf(where, sizeof where, "is put into container '%s', which %s", clang_getCString(n), how);
    clang_disposeString(n);
    report_escape(c, p->at, p->wrapper, p->via, where);
  }
}

/* `e` names a local variable (through std::move and copies): that variable, else null. */
static CXCursor local_var_named(CXCursor e) {
  CXCursor s = strip(e);
  for (int i = 0; i < 4 && clang_getCursorKind(s) == CXCursor_CallExpr; i++) {
    CXCursor fn = clang_getCursorReferenced(s);
    CXString n = clang_getCursorSpelling(fn);
    int mv = strcmp(clang_getCString(n), "move") == 0 && clang_Cursor_getNumArguments(s) == 1;
    clang_disposeString(n);
    if (!mv) break;
    s = strip(clang_Cursor_getArgument(s, 0));
  }
  if (clang_getCursorKind(s) != CXCursor_DeclRefExpr) return clang_getNullCursor();
  CXCursor var = clang_getCursorReferenced(s);
  return var_is_local_automatic(var) ? var : clang_getNullCursor();
}

static int is_collection_type(CXType t) {
  CXString ts = clang_getTypeSpelling(clang_getCanonicalType(t));
  const char *sp = clang_getCString(ts);
  static const char *const names[] = {"vector", "Vector", "array", "Array",   "list",
                                      "List",   "deque",  "set",   "Set",     "map",
                                      "Map",    "pair",   "tuple", "optional"};
  int yes = 0;
  for (size_t i = 0; !yes && i < sizeof names / sizeof names[0]; i++)
    if (strstr(sp, names[i])) yes = 1;
  clang_disposeString(ts);
  return yes;
}

/* `return {a.get(), ...}`, `return std::vector<MlirBlock>{...}`, `return std::make_pair(...)`:
 * raw handles handed to the caller inside a collection. */
static void returned_collection(ctx *c, CXCursor e, int depth) {
  if (depth > 4) return;
  CXCursor s = strip(e);
  enum CXCursorKind k = clang_getCursorKind(s);
  int descend = 0;
  if (k == CXCursor_InitListExpr) {
    descend = !type_is_wrapper(c, clang_getCursorType(s));
  } else if (k == CXCursor_CallExpr) {
    CXCursor fn = clang_getCursorReferenced(s);
    CXType t = clang_getCursorType(s);
    if (clang_getCursorKind(fn) == CXCursor_Constructor) {
      descend = !type_is_wrapper(c, t) && is_collection_type(t);
    } else {
      CXString n = clang_getCursorSpelling(fn);
      const char *name = clang_getCString(n);
      descend = strcmp(name, "make_pair") == 0 || strcmp(name, "make_tuple") == 0 ||
                strcmp(name, "make_optional") == 0;
      clang_disposeString(n);
    }
  }
  if (!descend) return;
  kids ks = children(s);
  for (size_t i = 0; i < ks.n; i++) {
    if (!is_expr_kind(clang_getCursorKind(ks.v[i]))) continue;
    rawval rv = raw_value(c, ks.v[i]);
    if (rv.yes)
      report_escape(c, start_of(ks.v[i]), rv.wrapper, rv.via,
                    "is returned to the caller in a collection");
    else
      returned_collection(c, ks.v[i], depth + 1);
    free(rv.wrapper);
  }
  free(ks.v);
}

static int is_push_method(const char *name) {
  static const char *const names[] = {
      "push_back", "emplace_back", "push_front",  "emplace_front",    "insert", "emplace",
      "append",    "push",         "try_emplace", "insert_or_assign", "assign", "emplace_hint"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i]) == 0) return 1;
  return 0;
}

/* Functions that call a callable they are given before returning and do not keep it. */
static int calls_and_forgets(CXCursor fn, CXType param) {
  CXString ps = clang_getTypeSpelling(param);
  int yes = strstr(clang_getCString(ps), "function_ref") != NULL;
  clang_disposeString(ps);
  if (yes) return 1;
  static const char *const algos[] = {
      "for_each",         "any_of",          "all_of",         "none_of",   "find_if",
      "find_if_not",      "count_if",        "remove_if",      "erase_if",  "sort",
      "stable_sort",      "transform",       "accumulate",     "partition", "max_element",
      "min_element",      "generate",        "copy_if",        "is_sorted", "lower_bound",
      "upper_bound",      "equal_range",     "binary_search",  "unique",    "interleave",
      "interleaveComma",  "reduce",          "adjacent_find",  "mismatch",  "replace_if",
      "stable_partition", "partition_point", "is_partitioned", "search"};
  CXString n = clang_getCursorSpelling(fn);
  const char *name = clang_getCString(n);
  for (size_t i = 0; !yes && i < sizeof algos / sizeof algos[0]; i++)
    if (strcmp(name, algos[i]) == 0) yes = 1;
  clang_disposeString(n);
  if (!yes) return 0;
  /* Only the standard library's and LLVM's algorithms. */
  CXCursor ns = clang_getCursorSemanticParent(fn);
  for (int d = 0; d < 8 && !clang_Cursor_isNull(ns); d++) {
    if (clang_getCursorKind(ns) == CXCursor_Namespace) {
      CXString s = clang_getCursorSpelling(ns);
      const char *nn = clang_getCString(s);
      int known = strcmp(nn, "std") == 0 || strcmp(nn, "llvm") == 0;
      clang_disposeString(s);
      if (known) return 1;
    }
    if (clang_getCursorKind(ns) == CXCursor_TranslationUnit) break;
    ns = clang_getCursorSemanticParent(ns);
  }
  return 0;
}

static CXCursor lambda_of(CXCursor e) {
  CXCursor s = strip(e);
  return clang_getCursorKind(s) == CXCursor_LambdaExpr ? s : clang_getNullCursor();
}

static int is_argument_of(CXCursor call, CXCursor k, int *index) {
  int na = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < na; i++)
    if (clang_equalCursors(clang_Cursor_getArgument(call, (unsigned)i), k)) {
      *index = i;
      return 1;
    }
  return 0;
}

static void call(ctx *c, CXCursor e, facts *st) {
  const tether_lint_status_accessor *sa = status_call(c, e);
  CXCursor ref = clang_getCursorReferenced(e);
  kids ks = children(e);
  int has_member = ks.n && clang_getCursorKind(ks.v[0]) == CXCursor_MemberRefExpr;
  if (!has_member && clang_getCursorKind(ref) == CXCursor_ConversionFunction) {
    /* Implicit conversion operator (e.g. MlirRegion r = pyRegion;): the source is hidden. */
    rawacc r = classify_member_raw(c, e);
    if (r.is_raw) check_use(c, e, r.wrapper, r.via, start_of(e), st);
    free(r.wrapper);
    char cls[128], mem[160];
    decl_names(ref, cls, sizeof cls, mem, sizeof mem);
    if (lists_match(&c->p->guarded_accessors, cls, mem)) {
      char *w = spelling(c, e);
      facts_add(st, w);
      free(w);
    }
  }
  /* The callee: a lambda in a local variable (`check()`), or a lambda called on the spot. */
  CXCursor callee_lambda = clang_getNullCursor();
  lambda_var *callee_lv = NULL;
  int calls_object = 0;
  if (clang_getCursorKind(ref) == CXCursor_CXXMethod) {
    CXString rn = clang_getCursorSpelling(ref);
    calls_object = strcmp(clang_getCString(rn), "operator()") == 0;
    clang_disposeString(rn);
  }
  if (ks.n && calls_object) {
    CXCursor first = strip(ks.v[0]);
    if (clang_getCursorKind(first) == CXCursor_LambdaExpr) {
      callee_lambda = first;
    } else if (clang_getCursorKind(first) == CXCursor_DeclRefExpr) {
      callee_lv = find_lambda_var(c, clang_getCursorReferenced(first));
      if (callee_lv) callee_lambda = callee_lv->lambda;
    }
  }
  /* C++17: the callee is evaluated before the arguments; the arguments are unsequenced with
   * respect to each other, so what one establishes is not known in another. */
  facts base = {0};
  int have_base = 0;
  facts out = {0};
  size_t kills_from = c->kills.n;
  for (size_t i = 0; i < ks.n; i++) {
    int ai = -1;
    CXCursor k = ks.v[i];
    if (i == 0 && !clang_Cursor_isNull(callee_lambda)) {
      if (callee_lv) continue; /* calling the variable is not a use that lets the lambda escape */
      CXCursor saved = c->local_lambda;
      c->local_lambda = callee_lambda;
      expr(c, k, st);
      c->local_lambda = saved;
      continue;
    }
    if (!is_argument_of(e, k, &ai)) {
      expr(c, k, st);
      continue;
    }
    if (!have_base) {
      base = facts_copy(st);
      have_base = 1;
    }
    facts cur = facts_copy(&base);
    CXCursor lam = lambda_of(k);
    CXCursor saved = c->local_lambda;
    if (!clang_Cursor_isNull(lam) && !clang_Cursor_isNull(ref)) {
      CXType ft = clang_getCursorType(ref);
      int np = clang_getNumArgTypes(ft);
      int pi = ai - (np >= 0 && clang_Cursor_getNumArguments(e) == np + 1 ? 1 : 0);
      CXType pt = pi >= 0 && pi < np ? clang_getArgType(ft, (unsigned)pi) : clang_getCursorType(k);
      if (calls_and_forgets(ref, pt)) c->local_lambda = lam;
    }
    expr(c, k, &cur);
    c->local_lambda = saved;
    facts_union(&out, &cur);
    tether_lint__strlist_free(&cur);
  }
  if (have_base) {
    facts_union(st, &out);
    apply_kills(c, st, kills_from);
  }
  tether_lint__strlist_free(&base);
  tether_lint__strlist_free(&out);
  /* A dependent call (`DerivedTy::isaFunction(value)`): a wrapper passed where the file's
   * instantiation expects a raw handle is converted to it. */
  if (clang_Cursor_isNull(ref) && c->sh && c->sh->ntb) {
    CXType params[16];
    int np = dependent_params(c, e, params, 16);
    int na = clang_Cursor_getNumArguments(e);
    for (int i = 0; i < np && i < na; i++) {
      CXCursor arg = clang_Cursor_getArgument(e, (unsigned)i);
      CXType at = strip_refs(clang_getCursorType(arg));
      if (at.kind != CXType_Record || clang_equalTypes(at, clang_getCanonicalType(params[i])))
        continue;
      CXCursor conv = conversion_to(at, params[i], 0);
      if (clang_Cursor_isNull(conv)) continue;
      char cls[128], mem[160];
      decl_names(conv, cls, sizeof cls, mem, sizeof mem);
      char *w = spelling(c, arg);
      if (lists_match(&c->p->raw_accessors, cls, mem)) {
        char via[320];
        snprintf(via, sizeof via, "%s::%s", cls, mem);
        check_use(c, arg, w, via, start_of(arg), st);
      } else if (lists_match(&c->p->guarded_accessors, cls, mem)) {
        facts_add(st, w);
      }
      free(w);
    }
  }
  /* A raw handle put into a container. */
  if (has_member) {
    CXString mn = clang_getCursorSpelling(ks.v[0]);
    int push = is_push_method(clang_getCString(mn));
    clang_disposeString(mn);
    int na = clang_Cursor_getNumArguments(e);
    for (int i = 0; push && i < na; i++) {
      CXCursor arg = clang_Cursor_getArgument(e, (unsigned)i);
      rawval rv = raw_value(c, arg);
      if (rv.yes) {
        CXCursor local;
        char *where = container_target(c, member_object(ks.v[0]), &local);
        if (where)
          report_escape(c, start_of(arg), rv.wrapper, rv.via, where);
        else if (!clang_Cursor_isNull(local))
          add_container_push(c, local, &rv, start_of(arg));
        free(where);
      }
      free(rv.wrapper);
    }
  }
  if (!clang_Cursor_isNull(ref)) status_ref_args(c, e, ref, st);
  if (sa) {
    int nargs = clang_Cursor_getNumArguments(e);
    if (nargs > sa->wrapper_arg && nargs > sa->out_arg) {
      char *w = spelling(c, clang_Cursor_getArgument(e, (unsigned)sa->wrapper_arg));
      CXCursor out = strip(clang_Cursor_getArgument(e, (unsigned)sa->out_arg));
      if (clang_getCursorKind(out) == CXCursor_UnaryOperator &&
          clang_getCursorUnaryOperatorKind(out) == CXUnaryOperator_AddrOf) {
        kids ok = children(out);
        CXCursor v = ok.n == 1 ? strip(ok.v[0]) : clang_getNullCursor();
        free(ok.v);
        if (!clang_Cursor_isNull(v) && clang_getCursorKind(v) == CXCursor_DeclRefExpr) {
          char via[320];
          snprintf(via, sizeof via, "%s()", sa->name);
          add_binding(c, clang_getCursorReferenced(v), w, via, start_of(e), BIND_RAW);
        }
      }
      free(w);
    }
    free(ks.v);
    return;
  }
  if (!has_member && clang_getCursorKind(ref) == CXCursor_FunctionDecl &&
      clang_Cursor_getNumArguments(e) >= 1) {
    CXString n = clang_getCursorSpelling(ref);
    const char *name = clang_getCString(n);
    int guard = tether_lint__profile_match(&c->p->guards, NULL, name) ||
                tether_lint__profile_match(&c->p->guarded_accessors, NULL, name);
    int inval = tether_lint__profile_match(&c->p->invalidators, NULL, name);
    clang_disposeString(n);
    if (guard || inval) {
      char *w = spelling(c, clang_Cursor_getArgument(e, 0));
      if (guard) facts_add(st, w);
      if (inval) kill_wrapper(c, st, w);
      free(w);
      free(ks.v);
      return;
    }
  }
  /* A helper that guards: a lambda, or a function or method of the translation unit that takes
   * a wrapper (or is a method of one). */
  if (!clang_Cursor_isNull(callee_lambda)) {
    summary *sm = summary_of(c, callee_lambda);
    if (sm && sm->done) {
      int nargs = clang_Cursor_getNumArguments(e);
      int shift = nargs == (int)sm->params.n + 1 ? 1 : 0;
      apply_summary(c, sm, e, NULL, shift, 1, st);
    }
  } else if (!clang_Cursor_isNull(ref) &&
             (clang_getCursorKind(ref) == CXCursor_FunctionDecl ||
              clang_getCursorKind(ref) == CXCursor_CXXMethod) &&
             !is_exempt(c, ref)) {
    int wants = clang_getCursorKind(ref) == CXCursor_CXXMethod &&
                type_is_wrapper(c, clang_getCursorType(clang_getCursorSemanticParent(ref)));
    int np = clang_Cursor_getNumArguments(ref);
    for (int i = 0; !wants && i < np; i++)
      wants = type_is_wrapper(c, clang_getCursorType(clang_Cursor_getArgument(ref, (unsigned)i)));
    if (wants) {
      summary *sm = summary_of(c, ref);
      if (sm && sm->done) {
        char *obj = has_member ? member_base(c, ks.v[0]) : NULL;
        if (!obj && clang_getCursorKind(ref) == CXCursor_CXXMethod)
          obj = tether_lint__strdup("this");
        apply_summary(c, sm, e, obj, 0, 0, st);
        free(obj);
      }
    }
  }
  free(ks.v);
}

static void declref(ctx *c, CXCursor e, facts *st) {
  CXCursor var = clang_getCursorReferenced(e);
  lambda_var *l = clang_Cursor_isNull(var) ? NULL : find_lambda_var(c, var);
  if (l && l->wrapper && !l->reported) {
    /* A lambda kept in a local variable is used other than by calling it: it may be stored
     * or passed on, and with it the raw handle it captured. */
    l->reported = 1;
    report_escape(c, l->at, l->wrapper, l->via, "is captured by a lambda that leaves the function");
  }
  binding *b = find_binding(c, e);
  if (!b) return;
  size_t idx = (size_t)(b - c->b);
  if (c->in_lambda && idx < c->fn_base) {
    lambda_capture(c, c->cur_lambda, c->lambda_local, b->wrapper, b->via, c->lambda_at);
    return;
  }
  if (b->kind != BIND_RAW) return;
  if (!clang_Cursor_isNull(c->defer) && clang_equalCursors(c->defer, e)) return;
  if (!b->reported && !tether_lint__strlist_has(st, b->wrapper)) {
    b->reported = 1;
    report_unguarded(c, b->access, b->wrapper, b->via);
  }
}

static void expr(ctx *c, CXCursor e, facts *st) {
  enum CXCursorKind k = clang_getCursorKind(e);
  if (clang_isStatement(k) && !clang_isExpression(k)) {
    stmt(c, e, st);
    return;
  }
  if (clang_isDeclaration(k)) {
    if (k == CXCursor_VarDecl) {
      facts tmp = facts_copy(st);
      stmt(c, e, &tmp); /* handled like a declaration statement */
      facts_replace(st, &tmp);
    }
    return;
  }
  switch (k) {
  case CXCursor_MemberRefExpr:
    walk_children(c, e, st);
    member_event(c, e, st);
    return;
  case CXCursor_CallExpr: {
    CXCursor lhs, rhs;
    if (operator_assign(e, &lhs, &rhs)) {
      assign(c, e, lhs, rhs, st);
      return;
    }
    call(c, e, st);
    return;
  }
  case CXCursor_DeclRefExpr:
    declref(c, e, st);
    return;
  case CXCursor_LambdaExpr:
    lambda(c, e, st);
    return;
  case CXCursor_BinaryOperator: {
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
    if (op == CXBinaryOperator_Assign) {
      kids ks = children(e);
      if (ks.n == 2) {
        assign(c, e, ks.v[0], ks.v[1], st);
      } else {
        for (size_t i = 0; i < ks.n; i++) expr(c, ks.v[i], st);
      }
      free(ks.v);
      return;
    }
    if (op == CXBinaryOperator_LAnd || op == CXBinaryOperator_LOr) {
      kids ks = children(e);
      if (ks.n == 2) {
        expr(c, ks.v[0], st);
        facts t = {0}, f = {0};
        cond_facts(c, ks.v[0], st, &t, &f);
        facts right = facts_copy(st);
        facts_union(&right, op == CXBinaryOperator_LAnd ? &t : &f);
        expr(c, ks.v[1], &right);
        tether_lint__strlist_free(&right);
        tether_lint__strlist_free(&t);
        tether_lint__strlist_free(&f);
      }
      free(ks.v);
      return;
    }
    walk_children(c, e, st);
    return;
  }
  case CXCursor_CompoundAssignOperator: {
    /* rc |= ...: a status variable no longer holds the accessor's status. */
    walk_children(c, e, st);
    kids ks = children(e);
    if (ks.n == 2) {
      CXCursor svar = status_var_of(ks.v[0]);
      if (!clang_Cursor_isNull(svar)) status_kill(c, st, svar);
    }
    free(ks.v);
    return;
  }
  case CXCursor_UnaryOperator: {
    walk_children(c, e, st);
    enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(e);
    if (op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PostDec ||
        op == CXUnaryOperator_PreInc || op == CXUnaryOperator_PreDec ||
        op == CXUnaryOperator_AddrOf) {
      CXCursor svar = status_var_of(first_expr_child(e));
      if (clang_Cursor_isNull(svar)) return;
      if (op == CXUnaryOperator_AddrOf)
        status_escape(c, st, svar); /* &rc: it may be written anywhere from now on */
      else
        status_kill(c, st, svar);
    }
    return;
  }
  case CXCursor_ConditionalOperator: {
    kids ks = children(e);
    if (ks.n == 3) {
      expr(c, ks.v[0], st);
      facts t = {0}, f = {0};
      cond_facts(c, ks.v[0], st, &t, &f);
      facts a = facts_copy(st), b = facts_copy(st);
      facts_union(&a, &t);
      facts_union(&b, &f);
      expr(c, ks.v[1], &a);
      expr(c, ks.v[2], &b);
      facts_intersect(&a, &b);
      facts_union(st, &a);
      tether_lint__strlist_free(&a);
      tether_lint__strlist_free(&b);
      tether_lint__strlist_free(&t);
      tether_lint__strlist_free(&f);
    } else {
      for (size_t i = 0; i < ks.n; i++) expr(c, ks.v[i], st);
    }
    free(ks.v);
    return;
  }
  default:
    walk_children(c, e, st);
    return;
  }
}

/* ---- statements ----------------------------------------------------------------------------- */

/* Does the source between two cursors contain an `else` token? */
static int else_between(ctx *c, CXCursor a, CXCursor b) {
  CXSourceRange r = clang_getRange(clang_getRangeEnd(clang_getCursorExtent(a)),
                                   clang_getRangeStart(clang_getCursorExtent(b)));
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(c->tu, r, &toks, &n);
  int yes = 0;
  for (unsigned i = 0; i < n && !yes; i++) {
    CXString s = clang_getTokenSpelling(c->tu, toks[i]);
    yes = strcmp(clang_getCString(s), "else") == 0;
    clang_disposeString(s);
  }
  if (toks) clang_disposeTokens(c->tu, toks, n);
  return yes;
}

static int if_stmt(ctx *c, CXCursor s, facts *st) {
  kids ks = children(s);
  CXCursor init = clang_getNullCursor(), cond, then_s, else_s = clang_getNullCursor();
  if (ks.n < 2) {
    free(ks.v);
    return 0;
  }
  if (ks.n == 2) {
    cond = ks.v[0];
    then_s = ks.v[1];
  } else if (ks.n == 3 && else_between(c, ks.v[1], ks.v[2])) {
    cond = ks.v[0];
    then_s = ks.v[1];
    else_s = ks.v[2];
  } else if (ks.n == 3) {
    init = ks.v[0];
    cond = ks.v[1];
    then_s = ks.v[2];
  } else {
    init = ks.v[ks.n - 4];
    cond = ks.v[ks.n - 3];
    then_s = ks.v[ks.n - 2];
    else_s = ks.v[ks.n - 1];
  }
  free(ks.v);
  if (!clang_Cursor_isNull(init)) stmt(c, init, st);
  if (clang_getCursorKind(cond) == CXCursor_VarDecl) {
    stmt(c, cond, st);
  } else {
    expr(c, cond, st);
  }
  facts t = {0}, f = {0};
  if (clang_getCursorKind(cond) != CXCursor_VarDecl) {
    cond_facts(c, cond, st, &t, &f);
  } else {
    /* if (int rc = get(h, &raw)) ...: the declared status is the condition; nonzero is an error. */
    char *w = status_get(c, st, cond);
    if (w) facts_add(&f, w);
    free(w);
  }
  facts a = facts_copy(st), b = facts_copy(st);
  facts_union(&a, &t);
  facts_union(&b, &f);
  int then_exits = stmt(c, then_s, &a);
  int else_exits = clang_Cursor_isNull(else_s) ? 0 : stmt(c, else_s, &b);
  int exits = 0;
  if (then_exits && else_exits) {
    exits = 1;
  } else if (then_exits) {
    facts_replace(st, &b);
  } else if (else_exits) {
    facts_replace(st, &a);
  } else {
    facts_intersect(&a, &b);
    facts_replace(st, &a);
  }
  tether_lint__strlist_free(&a);
  tether_lint__strlist_free(&b);
  tether_lint__strlist_free(&t);
  tether_lint__strlist_free(&f);
  return exits;
}

static void var_decl(ctx *c, CXCursor d, facts *st) {
  kids ks = children(d);
  CXCursor init = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++)
    if (is_expr_kind(clang_getCursorKind(ks.v[i]))) init = ks.v[i];
  free(ks.v);
  if (clang_Cursor_isNull(init)) return;
  CXType dt = clang_getCursorType(d);
  int is_ref = dt.kind == CXType_LValueReference || dt.kind == CXType_RValueReference;
  if (is_ref) {
    /* int &r = rc;: rc may be written through r from now on. */
    CXCursor svar = status_var_of(init);
    if (!clang_Cursor_isNull(svar)) status_escape(c, st, svar);
  }
  rawval rv = raw_value(c, init);
  int automatic = var_is_local_automatic(d);
  CXCursor lam = lambda_of(init);
  if (automatic && !is_ref && !clang_Cursor_isNull(lam)) add_lambda_var(c, d, lam);
  CXCursor saved = c->defer;
  if (rv.yes && automatic) c->defer = rv.node;
  expr(c, init, st);
  c->defer = saved;
  if (rv.yes) {
    if (automatic) {
      add_binding(c, d, rv.wrapper, rv.via, rv.access, rv.checked ? BIND_CHECKED : BIND_RAW);
    } else {
      CXString n = clang_getCursorSpelling(d);
      char where[300];
      snprintf(where, sizeof where, "is stored in %s variable '%s'",
               clang_Cursor_getStorageClass(d) == CX_SC_Static ? "static" : "global",
               clang_getCString(n));
      clang_disposeString(n);
      report_escape(c, start_of(d), rv.wrapper, rv.via, where);
    }
  } else if (automatic) {
    /* int rc = get(h, &raw); (a variable declared again, e.g. in a loop, starts afresh) */
    char *w = status_call_wrapper(c, strip(init));
    if (w && !is_ref)
      status_set(c, st, d, w);
    else
      status_kill(c, st, d);
    free(w);
  }
  free(rv.wrapper);
}

/* Is `e` an integer constant expression equal to 0 (`0`, `false`, `(0)`)? */
static int is_false_constant(CXCursor e) {
  if (!clang_isExpression(clang_getCursorKind(e))) return 0;
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return 0;
  int zero = clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
  clang_EvalResult_dispose(r);
  return zero;
}

/* Does `body` contain a break or continue that leaves the loop it is the body of? A `break`
 * inside a nested loop or switch, a `continue` inside a nested loop, and anything in a lambda
 * body belong to them. */
typedef struct leave_search {
  int breaks; /* a break counts (not inside a nested switch) */
  int found;
} leave_search;

static enum CXChildVisitResult find_leave(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  leave_search *ls = d;
  switch (clang_getCursorKind(k)) {
  case CXCursor_BreakStmt:
    if (!ls->breaks) return CXChildVisit_Continue;
    ls->found = 1;
    return CXChildVisit_Break;
  case CXCursor_ContinueStmt:
    ls->found = 1;
    return CXChildVisit_Break;
  case CXCursor_ForStmt:
  case CXCursor_WhileStmt:
  case CXCursor_DoStmt:
  case CXCursor_CXXForRangeStmt:
  case CXCursor_LambdaExpr:
    return CXChildVisit_Continue;
  case CXCursor_SwitchStmt: {
    leave_search inner = {0, 0};
    clang_visitChildren(k, find_leave, &inner);
    if (!inner.found) return CXChildVisit_Continue;
    ls->found = 1;
    return CXChildVisit_Break;
  }
  default:
    return CXChildVisit_Recurse;
  }
}

static int leaves_loop(CXCursor body) {
  enum CXCursorKind k = clang_getCursorKind(body);
  if (k == CXCursor_BreakStmt || k == CXCursor_ContinueStmt) return 1;
  leave_search ls = {1, 0};
  clang_visitChildren(body, find_leave, &ls);
  return ls.found;
}

static int loop_body(ctx *c, CXCursor body, const facts *st) {
  facts inner = facts_copy(st);
  stmt(c, body, &inner);
  tether_lint__strlist_free(&inner);
  return 0;
}

static int stmt(ctx *c, CXCursor s, facts *st) {
  enum CXCursorKind k = clang_getCursorKind(s);
  switch (k) {
  case CXCursor_CompoundStmt: {
    kids ks = children(s);
    int exits = 0;
    for (size_t i = 0; i < ks.n; i++) {
      enum CXCursorKind ik = clang_getCursorKind(ks.v[i]);
      if (exits && c->switch_entry && (ik == CXCursor_CaseStmt || ik == CXCursor_DefaultStmt)) {
        /* A case label after a break: reached from the switch only. */
        facts entry = facts_copy(c->switch_entry);
        facts_replace(st, &entry);
        exits = 0;
      }
      if (exits) {
        /* Unreachable code: analysed, but nothing is known there. */
        facts none = {0};
        stmt(c, ks.v[i], &none);
        tether_lint__strlist_free(&none);
        continue;
      }
      if (stmt(c, ks.v[i], st)) exits = 1;
    }
    free(ks.v);
    return exits;
  }
  case CXCursor_IfStmt:
    return if_stmt(c, s, st);
  case CXCursor_WhileStmt: {
    kids ks = children(s);
    if (ks.n >= 2) {
      CXCursor cond = ks.v[ks.n - 2];
      if (clang_getCursorKind(cond) == CXCursor_VarDecl)
        stmt(c, cond, st);
      else
        expr(c, cond, st);
      facts t = {0}, f = {0};
      cond_facts(c, cond, st, &t, &f);
      facts inner = facts_copy(st);
      facts_union(&inner, &t);
      size_t kills_from = c->kills.n;
      loop_body(c, ks.v[ks.n - 1], &inner);
      apply_kills(c, st, kills_from); /* what any iteration removed is gone afterwards */
      tether_lint__strlist_free(&inner);
      tether_lint__strlist_free(&t);
      tether_lint__strlist_free(&f);
    }
    free(ks.v);
    return 0;
  }
  case CXCursor_DoStmt: {
    /* do { ... } while (0) without a break or continue of its own (the usual macro shape): the
     * body runs exactly once, straight through, so it is a block whose facts flow out. */
    kids ks = children(s);
    int once = ks.n == 2 && is_false_constant(ks.v[1]) && !leaves_loop(ks.v[0]);
    CXCursor body = ks.n ? ks.v[0] : clang_getNullCursor();
    free(ks.v);
    if (once) return stmt(c, body, st);
  }
    /* fall through */
  case CXCursor_ForStmt:
  case CXCursor_CXXForRangeStmt:
  case CXCursor_SwitchStmt: {
    /* Everything inside runs zero or more times (or from any case label): nothing new flows out,
     * and whatever any path through it removed is removed after it. */
    kids ks = children(s);
    facts inner = facts_copy(st);
    facts entry = {0};
    const facts *saved_entry = c->switch_entry;
    size_t kills_from = c->kills.n;
    for (size_t i = 0; i < ks.n; i++) {
      if (k == CXCursor_SwitchStmt && i + 1 < ks.n) {
        /* The condition (and a C++17 init statement) run once, before the body. */
        if (clang_isExpression(clang_getCursorKind(ks.v[i])))
          expr(c, ks.v[i], st);
        else
          stmt(c, ks.v[i], st);
        continue;
      }
      if (k == CXCursor_SwitchStmt) {
        /* The body: every case label is reached with the state after the condition. */
        tether_lint__strlist_free(&inner);
        inner = facts_copy(st);
        entry = facts_copy(st);
        c->switch_entry = &entry;
      }
      stmt(c, ks.v[i], &inner);
    }
    c->switch_entry = saved_entry;
    apply_kills(c, st, kills_from);
    tether_lint__strlist_free(&entry);
    tether_lint__strlist_free(&inner);
    free(ks.v);
    return 0;
  }
  case CXCursor_CaseStmt:
  case CXCursor_DefaultStmt:
  case CXCursor_LabelStmt: {
    /* Reached by a jump: facts from the fall-through path do not hold on the other path. */
    if (k == CXCursor_LabelStmt) {
      log_kill(c, '*', "");
      tether_lint__strlist_free(st);
    } else if (c->switch_entry) {
      facts_intersect(st, c->switch_entry);
    }
    kids ks = children(s);
    int exits = 0;
    for (size_t i = 0; i < ks.n; i++) {
      if (clang_isExpression(clang_getCursorKind(ks.v[i])) && k == CXCursor_CaseStmt && i == 0)
        continue; /* the case value */
      exits = stmt(c, ks.v[i], st);
    }
    free(ks.v);
    return exits;
  }
  case CXCursor_ReturnStmt: {
    kids ks = children(s);
    if (ks.n >= 1) {
      rawval rv = raw_value(c, ks.v[0]);
      expr(c, ks.v[0], st);
      if (rv.yes && !c->is_accessor)
        report_escape(c, start_of(s), rv.wrapper, rv.via, "is returned to the caller");
      free(rv.wrapper);
      if (!c->is_accessor) {
        returned_collection(c, ks.v[0], 0);
        CXCursor var = local_var_named(ks.v[0]);
        if (!clang_Cursor_isNull(var)) {
          container_escapes(c, var, "is returned to the caller");
          lambda_var *l = find_lambda_var(c, var);
          if (l && l->wrapper && !l->reported) {
            l->reported = 1;
            report_escape(c, l->at, l->wrapper, l->via,
                          "is captured by a lambda that is returned to the caller");
          }
        }
      }
    }
    summary_exit(c, st);
    free(ks.v);
    return 1;
  }
  case CXCursor_BreakStmt:
  case CXCursor_ContinueStmt:
  case CXCursor_GotoStmt:
  case CXCursor_IndirectGotoStmt:
    return 1;
  case CXCursor_CXXTryStmt: {
    kids ks = children(s);
    facts entry = facts_copy(st);
    int all_exit = 1;
    facts out = {0};
    int have_out = 0;
    size_t kills_from = c->kills.n;
    for (size_t i = 0; i < ks.n; i++) {
      facts cur = facts_copy(&entry);
      /* A handler is entered from anywhere in the try block: what it removed is gone. */
      if (i > 0) apply_kills(c, &cur, kills_from);
      int exits = stmt(c, ks.v[i], &cur);
      if (!exits) {
        all_exit = 0;
        if (!have_out) {
          facts_replace(&out, &cur);
          have_out = 1;
        } else {
          facts_intersect(&out, &cur);
        }
      }
      tether_lint__strlist_free(&cur);
    }
    free(ks.v);
    if (have_out) facts_replace(st, &out);
    tether_lint__strlist_free(&out);
    tether_lint__strlist_free(&entry);
    return all_exit && ks.n > 0;
  }
  case CXCursor_CXXCatchStmt: {
    kids ks = children(s);
    int exits = 0;
    for (size_t i = 0; i < ks.n; i++)
      if (clang_getCursorKind(ks.v[i]) == CXCursor_CompoundStmt) exits = stmt(c, ks.v[i], st);
    free(ks.v);
    return exits;
  }
  case CXCursor_DeclStmt: {
    kids ks = children(s);
    for (size_t i = 0; i < ks.n; i++) {
      if (clang_getCursorKind(ks.v[i]) == CXCursor_VarDecl)
        var_decl(c, ks.v[i], st);
      else
        analyze_decl(c, ks.v[i]);
    }
    free(ks.v);
    return 0;
  }
  case CXCursor_VarDecl:
    var_decl(c, s, st);
    return 0;
  case CXCursor_NullStmt:
    return 0;
  case CXCursor_CXXThrowExpr:
    walk_children(c, s, st);
    return 1;
  default:
    break;
  }
  if (clang_isExpression(k)) {
    expr(c, s, st);
    CXCursor e = strip(s);
    if (clang_getCursorKind(e) == CXCursor_CXXThrowExpr) return 1;
    if (clang_getCursorKind(e) == CXCursor_CallExpr && call_never_returns(c, e)) return 1;
    return 0;
  }
  /* Other statements (asm, SEH, ...): walk their children as statements. */
  kids ks = children(s);
  for (size_t i = 0; i < ks.n; i++) stmt(c, ks.v[i], st);
  free(ks.v);
  return 0;
}

/* ---- functions ------------------------------------------------------------------------------ */

static int is_exempt(ctx *c, CXCursor fn) {
  char cls[128], mem[160];
  decl_names(fn, cls, sizeof cls, mem, sizeof mem);
  const tether_lint_profile *p = c->p;
  return lists_match(&p->raw_accessors, cls, mem) || lists_match(&p->guarded_accessors, cls, mem) ||
         lists_match(&p->guards, cls, mem) || lists_match(&p->predicates, cls, mem) ||
         lists_match(&p->invalidators, cls, mem);
}

static void function_body(ctx *c, CXCursor fn, int is_lambda, facts *outer) {
  (void)outer;
  size_t saved_base = c->fn_base, saved_nb = c->nb;
  int saved_acc = c->is_accessor, saved_lambda = c->in_lambda;
  CXCursor saved_defer = c->defer;
  c->fn_base = c->nb;
  c->is_accessor = 0;
  c->in_lambda = is_lambda;
  c->defer = clang_getNullCursor();
  const facts *saved_entry = c->switch_entry;
  size_t saved_kills = c->kills.n, saved_nsv = c->nsv, saved_nlv = c->nlv, saved_ncp = c->ncp;
  c->switch_entry = NULL;
  facts st = {0};
  kids ks = children(fn);
  CXCursor pending_field = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++) {
    enum CXCursorKind k = clang_getCursorKind(ks.v[i]);
    if (k == CXCursor_CompoundStmt) {
      stmt(c, ks.v[i], &st);
    } else if (k == CXCursor_MemberRef) {
      pending_field = ks.v[i];
    } else if (is_expr_kind(k) && !is_lambda) {
      /* Constructor initializers. */
      rawval rv = raw_value(c, ks.v[i]);
      expr(c, ks.v[i], &st);
      if (rv.yes && !clang_Cursor_isNull(pending_field)) {
        CXString n = clang_getCursorSpelling(pending_field);
        char where[300];
        snprintf(where, sizeof where, "is stored in field '%s'", clang_getCString(n));
        clang_disposeString(n);
        report_escape(c, start_of(pending_field), rv.wrapper, rv.via, where);
      }
      free(rv.wrapper);
      pending_field = clang_getNullCursor();
    }
  }
  free(ks.v);
  tether_lint__strlist_free(&st);
  for (size_t i = saved_nb; i < c->nb; i++) {
    free(c->b[i].wrapper);
    free(c->b[i].via);
  }
  for (size_t i = saved_nlv; i < c->nlv; i++) {
    free(c->lv[i].wrapper);
    free(c->lv[i].via);
  }
  c->nlv = saved_nlv;
  for (size_t i = saved_ncp; i < c->ncp; i++) {
    free(c->cp[i].wrapper);
    free(c->cp[i].via);
  }
  c->ncp = saved_ncp;
  c->nb = saved_nb;
  c->fn_base = saved_base;
  c->is_accessor = saved_acc;
  c->in_lambda = saved_lambda;
  c->defer = saved_defer;
  c->switch_entry = saved_entry;
  while (c->kills.n > saved_kills) free(c->kills.v[--c->kills.n]);
  c->nsv = saved_nsv; /* the status variables of this function are out of scope */
}

static void lambda(ctx *c, CXCursor e, facts *st) {
  status_lambda_refs(c, e, st);
  int local = !clang_Cursor_isNull(c->local_lambda) && clang_equalCursors(c->local_lambda, e);
  kids ks = children(e);
  CXCursor body = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++) {
    enum CXCursorKind k = clang_getCursorKind(ks.v[i]);
    if (k == CXCursor_CompoundStmt) {
      body = ks.v[i];
    } else if (k == CXCursor_VariableRef) {
      /* An explicit capture of a variable holding a raw handle. */
      CXCursor ref = clang_getCursorReferenced(ks.v[i]);
      for (size_t j = c->nb; j-- > 0;)
        if (clang_equalCursors(c->b[j].var, ref)) {
          lambda_capture(c, e, local, c->b[j].wrapper, c->b[j].via, start_of(e));
          break;
        }
    } else if (is_expr_kind(k)) {
      /* Init-captures ([r = self.get()]) and implicit captures, evaluated where the lambda is. */
      rawval rv = raw_value(c, ks.v[i]);
      if (rv.yes) {
        lambda_capture(c, e, local, rv.wrapper, rv.via, start_of(e));
        CXCursor saved = c->defer;
        if (!rv.from_access) c->defer = rv.node;
        expr(c, ks.v[i], st);
        c->defer = saved;
      } else {
        expr(c, ks.v[i], st);
      }
      free(rv.wrapper);
    }
  }
  free(ks.v);
  if (!clang_Cursor_isNull(body)) {
    /* The body runs later, maybe after the wrapper died: it starts knowing nothing. */
    size_t saved_base = c->fn_base;
    int saved_lambda = c->in_lambda, saved_acc = c->is_accessor;
    CXCursor saved_defer = c->defer;
    CXSourceLocation saved_at = c->lambda_at;
    const facts *saved_entry = c->switch_entry;
    int saved_local = c->lambda_local;
    CXCursor saved_cur = c->cur_lambda;
    c->lambda_local = local || lambda_var_for(c, e) != NULL;
    c->cur_lambda = e;
    c->switch_entry = NULL;
    c->lambda_at = start_of(e);
    c->fn_base = c->nb;
    c->in_lambda = 1;
    c->is_accessor = 0;
    c->defer = clang_getNullCursor();
    facts inner = {0};
    size_t saved_nb = c->nb;
    stmt(c, body, &inner);
    tether_lint__strlist_free(&inner);
    for (size_t i = saved_nb; i < c->nb; i++) {
      free(c->b[i].wrapper);
      free(c->b[i].via);
    }
    c->nb = saved_nb;
    c->fn_base = saved_base;
    c->in_lambda = saved_lambda;
    c->is_accessor = saved_acc;
    c->defer = saved_defer;
    c->lambda_at = saved_at;
    c->switch_entry = saved_entry;
    c->lambda_local = saved_local;
    c->cur_lambda = saved_cur;
  }
}

static enum CXChildVisitResult visit_decl(CXCursor d, CXCursor parent, CXClientData data) {
  (void)parent;
  ctx *c = data;
  if (!clang_Location_isFromMainFile(clang_getCursorLocation(d))) return CXChildVisit_Continue;
  analyze_decl(c, d);
  return CXChildVisit_Continue;
}

static void analyze_decl(ctx *c, CXCursor d) {
  enum CXCursorKind k = clang_getCursorKind(d);
  switch (k) {
  case CXCursor_Namespace:
  case CXCursor_LinkageSpec:
  case CXCursor_ClassDecl:
  case CXCursor_StructDecl:
  case CXCursor_UnionDecl:
  case CXCursor_ClassTemplate:
  case CXCursor_ClassTemplatePartialSpecialization:
  case CXCursor_UnexposedDecl:
    clang_visitChildren(d, visit_decl, c);
    return;
  case CXCursor_FunctionDecl:
  case CXCursor_CXXMethod:
  case CXCursor_Constructor:
  case CXCursor_Destructor:
  case CXCursor_ConversionFunction:
  case CXCursor_FunctionTemplate:
    if (!clang_isCursorDefinition(d) || is_exempt(c, d)) return;
    function_body(c, d, 0, NULL);
    return;
  case CXCursor_VarDecl: {
    /* A namespace-scope variable: its initializer runs once, outside any function. */
    facts st = {0};
    size_t saved_nb = c->nb;
    var_decl(c, d, &st);
    tether_lint__strlist_free(&st);
    for (size_t i = saved_nb; i < c->nb; i++) {
      free(c->b[i].wrapper);
      free(c->b[i].via);
    }
    c->nb = saved_nb;
    return;
  }
  default:
    return;
  }
}

/* ---- degraded mode: raw accesses from tokens ---------------------------------------------------
 *
 * When a file does not compile because the wrapper classes are unknown (typically: the header
 * that declares them is missing, as for nanobind-era bindings on an older MLIR), the AST has no
 * member calls to follow. The main file is then scanned token by token, for variables declared
 * with a wrapper type the AST could not resolve (and methods of such wrapper classes), their raw
 * accesses (`self.get()`, `op->operation`, a raw field inside the wrapper's own method) and their
 * guards: a guard call as a statement of its own, `if (!w.isValid()) return/throw ...;` before the
 * access, the access inside `if (w.isValid()) ...`, and a parent's guard. Blocks come from braces;
 * a lambda body starts knowing nothing. */

typedef struct ttok {
  CXTokenKind kind;
  char *s;
  unsigned line, col;
} ttok;

enum { FR_NS, FR_FUNC, FR_BLOCK, FR_EXPR };

typedef struct tguard_range {
  char *name;
  size_t from, to; /* token indexes */
} tguard_range;

typedef struct tframe {
  int kind;
  size_t open;       /* index of its `{` (0 for the file) */
  size_t stmt_start; /* first token of the current statement */
  tether_lint__strlist guards;
  tether_lint__strlist vars; /* "name" and, at the same index in `types`, the wrapper class */
  tether_lint__strlist types;
  char cls[128];    /* FUNC: the (unresolved) wrapper class whose method this is */
  int last_exits;   /* the last statement completed in this block always exits */
  char *exit_guard; /* opened by `if (!w.valid) {`: `w` is valid after it when it exits */
  int paren_base;   /* parenthesis depth at its `{` */
} tframe;

typedef struct tscan {
  ctx *c;
  CXFile file;
  ttok *t;
  size_t n;
  size_t *match; /* matching bracket index, or (size_t)-1 */
  tframe *fr;
  size_t nfr;
  tguard_range *rg;
  size_t nrg, caprg;
  tether_lint__strlist pnames, ptypes; /* parameters waiting for the body they belong to */
  char pcls[128];                      /* method class waiting for its body */
  size_t pending_at;                   /* index of the `;` after which `pending` becomes a guard */
  char *pending;
  int found, vars;
} tscan;

static int tk_is(const ttok *t, const char *s) { return strcmp(t->s, s) == 0; }

static int is_control_keyword(const char *s) {
  return strcmp(s, "if") == 0 || strcmp(s, "else") == 0 || strcmp(s, "for") == 0 ||
         strcmp(s, "while") == 0 || strcmp(s, "do") == 0 || strcmp(s, "switch") == 0 ||
         strcmp(s, "case") == 0 || strcmp(s, "default") == 0;
}

/* The wrapper class of the profile whose name the token is, or NULL. */
static const char *tok_wrapper(tscan *ts, size_t i) {
  if (ts->t[i].kind != CXToken_Identifier) return NULL;
  if (!tether_lint__strlist_has(&ts->c->p->wrappers, ts->t[i].s)) return NULL;
  return ts->t[i].s;
}

/* Did the AST resolve the variable declared at token `i` to the wrapper class `w`? */
static int ast_resolved_var(tscan *ts, size_t i, const char *w) {
  CXSourceLocation loc = clang_getLocation(ts->c->tu, ts->file, ts->t[i].line, ts->t[i].col);
  CXCursor cur = clang_getCursor(ts->c->tu, loc);
  enum CXCursorKind k = clang_getCursorKind(cur);
  if (k != CXCursor_ParmDecl && k != CXCursor_VarDecl && k != CXCursor_FieldDecl) return 0;
  CXType t = clang_getCursorType(cur);
  for (int d = 0; d < 4; d++)
    if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
        t.kind == CXType_Pointer)
      t = clang_getPointeeType(t);
  t = clang_getCanonicalType(t);
  if (t.kind != CXType_Record) return 0;
  CXCursor decl = clang_getTypeDeclaration(t);
  CXString n = clang_getCursorSpelling(decl);
  int yes = strcmp(clang_getCString(n), w) == 0 &&
            clang_isCursorDefinition(clang_getCursorDefinition(decl));
  clang_disposeString(n);
  return yes;
}

/* Did the AST resolve the class named at token `i` (a type written in an expression)? */
static int ast_resolved_type_at(tscan *ts, size_t i) {
  CXSourceLocation loc = clang_getLocation(ts->c->tu, ts->file, ts->t[i].line, ts->t[i].col);
  CXCursor cur = clang_getCursor(ts->c->tu, loc);
  if (clang_getCursorKind(cur) != CXCursor_TypeRef) return 0;
  CXCursor decl = clang_getCursorReferenced(cur);
  enum CXCursorKind k = clang_getCursorKind(decl);
  return (k == CXCursor_ClassDecl || k == CXCursor_StructDecl) &&
         !clang_Cursor_isNull(clang_getCursorDefinition(decl));
}

/* Did the AST resolve the method definition whose name is at token `i` (after `W ::`)? */
static int ast_resolved_method(tscan *ts, size_t i) {
  CXSourceLocation loc = clang_getLocation(ts->c->tu, ts->file, ts->t[i].line, ts->t[i].col);
  CXCursor cur = clang_getCursor(ts->c->tu, loc);
  enum CXCursorKind k = clang_getCursorKind(cur);
  return k == CXCursor_CXXMethod || k == CXCursor_Constructor || k == CXCursor_Destructor ||
         k == CXCursor_ConversionFunction;
}

static tframe *top(tscan *ts) { return &ts->fr[ts->nfr - 1]; }

/* The wrapper class of a degraded variable visible here (through lambda boundaries: captures),
 * or NULL. `this` is the class of the innermost method frame. */
static const char *var_class(tscan *ts, const char *name) {
  for (size_t f = ts->nfr; f-- > 0;) {
    tframe *fr = &ts->fr[f];
    for (size_t i = fr->vars.n; i-- > 0;)
      if (strcmp(fr->vars.v[i], name) == 0) return fr->types.v[i]; /* "": not a wrapper */
    if (strcmp(name, "this") == 0 && fr->kind == FR_FUNC && fr->cls[0]) return fr->cls;
  }
  return NULL;
}

/* Is `name` known valid at token `at`: a guard in a block up to the innermost function, or a
 * range guard around `at`? */
static int tguarded(tscan *ts, const char *name, size_t at) {
  for (size_t f = ts->nfr; f-- > 0;) {
    if (tether_lint__strlist_has(&ts->fr[f].guards, name)) return 1;
    if (ts->fr[f].kind == FR_FUNC) break;
  }
  for (size_t i = 0; i < ts->nrg; i++)
    if (ts->rg[i].from <= at && at <= ts->rg[i].to && strcmp(ts->rg[i].name, name) == 0) return 1;
  return 0;
}

static void add_range(tscan *ts, const char *name, size_t from, size_t to) {
  if (ts->nrg == ts->caprg) {
    size_t cap = ts->caprg ? ts->caprg * 2 : 16;
    tguard_range *v = realloc(ts->rg, cap * sizeof *v);
    if (!v) return;
    ts->rg = v;
    ts->caprg = cap;
  }
  ts->rg[ts->nrg].name = tether_lint__strdup(name);
  ts->rg[ts->nrg].from = from;
  ts->rg[ts->nrg].to = to;
  if (ts->rg[ts->nrg].name) ts->nrg++;
}

/* A wrapper reference starting at token `i`: `v`, `this`, or (inside a method of an unresolved
 * wrapper) nothing at all before a member name. Fills the name and returns the index of the
 * member token, or 0. */
static size_t wrapper_ref(tscan *ts, size_t i, char *name, size_t len, const char **cls) {
  const ttok *t = ts->t;
  if (i + 2 < ts->n && (tk_is(&t[i + 1], ".") || tk_is(&t[i + 1], "->")) &&
      (t[i].kind == CXToken_Identifier || tk_is(&t[i], "this"))) {
    if (i > 0 && (tk_is(&t[i - 1], ".") || tk_is(&t[i - 1], "->") || tk_is(&t[i - 1], "::")))
      return 0;
    const char *k = var_class(ts, t[i].s);
    if (!k || !*k) return 0;
    snprintf(name, len, "%s", t[i].s);
    *cls = k;
    return i + 2;
  }
  return 0;
}

/* A member name at `m` of wrapper class `cls` used as a raw access, a guard, or a parent's guard
 * (`w.getParentOperation()->checkValid()`, `parentOperation->checkValid()`). */
enum { TM_NONE, TM_RAW, TM_GUARD, TM_INVALIDATE };
static int member_role(tscan *ts, size_t m, const char *cls, char *via, size_t vlen) {
  const ttok *t = ts->t;
  const tether_lint_profile *p = ts->c->p;
  if (t[m].kind != CXToken_Identifier) return TM_NONE;
  int called = m + 1 < ts->n && tk_is(&t[m + 1], "(");
  const char *mem = t[m].s;
  if (called && (tether_lint__profile_match(&p->guards, cls, mem) ||
                 tether_lint__profile_match(&p->guarded_accessors, cls, mem)))
    return TM_GUARD;
  if (called && tether_lint__profile_match(&p->invalidators, cls, mem)) return TM_INVALIDATE;
  if (called && tether_lint__profile_match(&p->raw_accessors, cls, mem)) {
    snprintf(via, vlen, "%s::%s()", cls, mem);
    return TM_RAW;
  }
  if (!called && tether_lint__profile_match(&p->raw_fields, cls, mem) &&
      !(m + 1 < ts->n && tk_is(&t[m + 1], "="))) {
    snprintf(via, vlen, "field %s::%s", cls, mem);
    return TM_RAW;
  }
  if (tether_lint__profile_match(&p->parents, cls, mem)) {
    size_t k = m + 1;
    if (called && ts->match[k] != (size_t)-1) k = ts->match[k] + 1;
    if (k + 2 < ts->n && (tk_is(&t[k], "->") || tk_is(&t[k], ".")) &&
        t[k + 1].kind == CXToken_Identifier && k + 2 < ts->n && tk_is(&t[k + 2], "(")) {
      const char *g = t[k + 1].s;
      if (strcmp(g, "checkValid") == 0 || strcmp(g, "get") == 0) return TM_GUARD;
    }
  }
  return TM_NONE;
}

/* Does the statement starting at token `s` always exit (`return`, `throw`, a call that does not
 * return)? */
static int tstmt_exits(tscan *ts, size_t s) {
  const ttok *t = ts->t;
  if (s >= ts->n) return 0;
  if (tk_is(&t[s], "return") || tk_is(&t[s], "throw")) return 1;
  static const char *const known[] = {"abort",           "exit",          "_Exit",
                                      "terminate",       "Py_FatalError", "__builtin_unreachable",
                                      "llvm_unreachable"};
  size_t k = s;
  if (k + 2 < ts->n && tk_is(&t[k], "std") && tk_is(&t[k + 1], "::")) k += 2;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (tk_is(&t[k], known[i])) return 1;
  return 0;
}

/* `if (COND)` with COND the tokens (a, b): `w.P`, `w.P()`, `w->P()`, `P()` (implicit this), with
 * a leading `!` when `negated`. Returns 1 and the wrapper's name when P is a validity
 * predicate. */
static int cond_predicate(tscan *ts, size_t a, size_t b, int *negated, char *name, size_t len) {
  const ttok *t = ts->t;
  *negated = 0;
  if (a < b && tk_is(&t[a], "!")) {
    *negated = 1;
    a++;
  }
  const char *cls = NULL;
  size_t m = wrapper_ref(ts, a, name, len, &cls);
  if (!m) {
    cls = var_class(ts, "this");
    if (!cls) return 0;
    if (a + 2 < b && tk_is(&t[a], "this") && tk_is(&t[a + 1], "->"))
      m = a + 2;
    else
      m = a;
    snprintf(name, len, "this");
  }
  if (m >= b || t[m].kind != CXToken_Identifier) return 0;
  if (!tether_lint__profile_match(&ts->c->p->predicates, cls, t[m].s)) return 0;
  size_t end = m + 1;
  if (end < b && tk_is(&t[end], "(") && ts->match[end] != (size_t)-1) end = ts->match[end] + 1;
  return end == b;
}

static void push_frame(tscan *ts, int kind, size_t open, int paren) {
  tframe *f = &ts->fr[ts->nfr++];
  memset(f, 0, sizeof *f);
  f->kind = kind;
  f->open = open;
  f->stmt_start = open + 1;
  f->paren_base = paren;
}

static void pop_frame(tscan *ts) {
  tframe *f = top(ts);
  tether_lint__strlist_free(&f->guards);
  tether_lint__strlist_free(&f->vars);
  tether_lint__strlist_free(&f->types);
  free(f->exit_guard);
  ts->nfr--;
}

/* Classifies the `{` at token `i` from what precedes it. */
static int brace_kind(tscan *ts, size_t i, size_t *paren_open) {
  const ttok *t = ts->t;
  int in_fn = 0;
  for (size_t f = 0; f < ts->nfr; f++)
    if (ts->fr[f].kind == FR_FUNC) in_fn = 1;
  *paren_open = (size_t)-1;
  if (i == 0) return in_fn ? FR_BLOCK : FR_NS;
  size_t p = i - 1;
  /* Skip what may follow a parameter list: qualifiers and a trailing return type. */
  for (size_t back = 0; back < 16 && p > 0; back++) {
    const char *s = t[p].s;
    if (strcmp(s, "const") == 0 || strcmp(s, "noexcept") == 0 || strcmp(s, "override") == 0 ||
        strcmp(s, "final") == 0 || strcmp(s, "mutable") == 0 || strcmp(s, "volatile") == 0) {
      p--;
      continue;
    }
    break;
  }
  if (tk_is(&t[p], ")") && ts->match[p] != (size_t)-1) {
    size_t o = ts->match[p];
    *paren_open = o;
    if (o == 0) return FR_FUNC;
    const char *b = t[o - 1].s;
    if (strcmp(b, "if") == 0 || strcmp(b, "for") == 0 || strcmp(b, "while") == 0 ||
        strcmp(b, "switch") == 0 || strcmp(b, "catch") == 0 || strcmp(b, "constexpr") == 0)
      return FR_BLOCK;
    if (strcmp(b, "]") == 0) return FR_FUNC;
    if (!in_fn) {
      /* A constructor's initializer list `) : a(x), b{y} {`: the parameters are before it. */
      size_t k = o;
      for (int guard = 0; guard < 256 && k >= 2 && t[k - 1].kind == CXToken_Identifier; guard++) {
        const char *sep = t[k - 2].s;
        if (strcmp(sep, ":") == 0 && k >= 3 && tk_is(&t[k - 3], ")") &&
            ts->match[k - 3] != (size_t)-1) {
          *paren_open = ts->match[k - 3];
          break;
        }
        if (strcmp(sep, ",") != 0 || k < 4) break;
        size_t prev = k - 3; /* the previous initializer's closing bracket */
        if ((!tk_is(&t[prev], ")") && !tk_is(&t[prev], "}")) || ts->match[prev] == (size_t)-1)
          break;
        k = ts->match[prev];
      }
      return FR_FUNC;
    }
    /* Inside a function: `) {` after a call is not valid C++; a macro such as FOR_EACH(x) {. */
    return FR_BLOCK;
  }
  /* A trailing return type: `) -> T {`. */
  for (size_t k = i, back = 0; k > 0 && back < 16; k--, back++) {
    const char *s = t[k - 1].s;
    if (strcmp(s, ";") == 0 || strcmp(s, "{") == 0 || strcmp(s, "}") == 0 || strcmp(s, "=") == 0)
      break;
    if (strcmp(s, "->") == 0 && k >= 2 && tk_is(&t[k - 2], ")") && ts->match[k - 2] != (size_t)-1) {
      *paren_open = ts->match[k - 2];
      return FR_FUNC;
    }
  }
  /* A lambda without parameters: `[&] {`, `[=] mutable {`. */
  if (tk_is(&t[p], "]")) return FR_FUNC;
  const char *s = t[p].s;
  if (strcmp(s, "else") == 0 || strcmp(s, "do") == 0 || strcmp(s, "try") == 0 ||
      strcmp(s, ";") == 0 || strcmp(s, "{") == 0 || strcmp(s, "}") == 0 ||
      (strcmp(s, ":") == 0 && in_fn))
    return in_fn ? FR_BLOCK : FR_NS;
  if (!in_fn) return FR_NS;
  return FR_EXPR;
}

static void treport(tscan *ts, size_t at, const char *name, const char *via) {
  ts->found++;
  if (ts->c->quiet) return;
  CXSourceLocation loc = clang_getLocation(ts->c->tu, ts->file, ts->t[at].line, ts->t[at].col);
  tether_lint__report_tu(ts->c->f, ts->c->tu, loc, RULE_UNGUARDED,
                         "raw handle taken from '%s' through %s is used where no validity check of "
                         "'%s' dominates it [recognised from tokens: the wrapper's type is unknown "
                         "here]",
                         name, via, name);
}

/* A wrapper variable declaration at token `i` (`W &name`, `const W *name`, `W name = ...`)? */
static void maybe_declaration(tscan *ts, size_t i, int in_parens) {
  const ttok *t = ts->t;
  const char *w = tok_wrapper(ts, i);
  if (!w || (i + 1 < ts->n && tk_is(&t[i + 1], "::"))) return;
  if (i > 0 && (tk_is(&t[i - 1], ".") || tk_is(&t[i - 1], "->"))) return;
  size_t j = i + 1;
  while (j < ts->n &&
         (tk_is(&t[j], "&") || tk_is(&t[j], "*") || tk_is(&t[j], "&&") || tk_is(&t[j], "const")))
    j++;
  if (j + 1 >= ts->n || t[j].kind != CXToken_Identifier) return;
  const char *after = t[j + 1].s;
  int decl = in_parens
                 ? (strcmp(after, ",") == 0 || strcmp(after, ")") == 0 || strcmp(after, "=") == 0)
                 : (strcmp(after, "=") == 0 || strcmp(after, ";") == 0 || strcmp(after, "(") == 0 ||
                    strcmp(after, "{") == 0);
  if (!decl || ast_resolved_var(ts, j, w)) return;
  ts->vars++;
  if (in_parens) {
    tether_lint__strlist_push(&ts->pnames, t[j].s);
    tether_lint__strlist_push(&ts->ptypes, w);
  } else {
    tether_lint__strlist_push(&top(ts)->vars, t[j].s);
    tether_lint__strlist_push(&top(ts)->types, w);
  }
}

static int rawop_token_scan(ctx *c, CXFile file, int *nvars) {
  size_t size = 0;
  const char *text = clang_getFileContents(c->tu, file, &size);
  if (!text) return 0;
  CXSourceRange range = clang_getRange(clang_getLocationForOffset(c->tu, file, 0),
                                       clang_getLocationForOffset(c->tu, file, (unsigned)size));
  CXToken *raw = NULL;
  unsigned nraw = 0;
  clang_tokenize(c->tu, range, &raw, &nraw);
  tscan ts;
  memset(&ts, 0, sizeof ts);
  ts.c = c;
  ts.file = file;
  ts.n = nraw;
  ts.t = calloc(nraw ? nraw : 1, sizeof *ts.t);
  ts.match = malloc((nraw ? nraw : 1) * sizeof *ts.match);
  ts.fr = calloc(nraw + 2, sizeof *ts.fr);
  ts.pending_at = (size_t)-1;
  if (!ts.t || !ts.match || !ts.fr) {
    free(ts.t);
    free(ts.match);
    free(ts.fr);
    clang_disposeTokens(c->tu, raw, nraw);
    return 0;
  }
  size_t nt = 0;
  for (unsigned i = 0; i < nraw; i++) {
    if (clang_getTokenKind(raw[i]) == CXToken_Comment) continue;
    ttok *tk = &ts.t[nt++];
    tk->kind = clang_getTokenKind(raw[i]);
    CXString s = clang_getTokenSpelling(c->tu, raw[i]);
    tk->s = tether_lint__strdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    if (!tk->s) tk->s = tether_lint__strdup("");
    clang_getSpellingLocation(clang_getTokenLocation(c->tu, raw[i]), NULL, &tk->line, &tk->col,
                              NULL);
  }
  ts.n = nt;
  clang_disposeTokens(c->tu, raw, nraw);
  /* Brackets. */
  {
    size_t *stack = malloc((ts.n ? ts.n : 1) * sizeof *stack);
    size_t sp = 0;
    for (size_t i = 0; i < ts.n; i++) {
      ts.match[i] = (size_t)-1;
      if (!ts.t[i].s || ts.t[i].kind != CXToken_Punctuation) continue;
      const char *s = ts.t[i].s;
      if (strcmp(s, "(") == 0 || strcmp(s, "[") == 0 || strcmp(s, "{") == 0) {
        if (stack) stack[sp++] = i;
      } else if (strcmp(s, ")") == 0 || strcmp(s, "]") == 0 || strcmp(s, "}") == 0) {
        char want = s[0] == ')' ? '(' : s[0] == ']' ? '[' : '{';
        if (sp && ts.t[stack[sp - 1]].s[0] == want) {
          sp--;
          ts.match[i] = stack[sp];
          ts.match[stack[sp]] = i;
        }
      }
    }
    free(stack);
  }
  push_frame(&ts, FR_NS, 0, 0);
  ts.fr[0].stmt_start = 0;
  int paren = 0;
  for (size_t i = 0; i < ts.n; i++) {
    const ttok *t = ts.t;
    const char *s = t[i].s;
    /* Preprocessor directives: skip the line. */
    if (tk_is(&t[i], "#") && (i == 0 || t[i - 1].line < t[i].line)) {
      unsigned line = t[i].line;
      while (i + 1 < ts.n && t[i + 1].line == line) i++;
      top(&ts)->stmt_start = i + 1;
      continue;
    }
    if (strcmp(s, "(") == 0) paren++;
    if (strcmp(s, ")") == 0 && paren > 0) paren--;
    tframe *fr = top(&ts);
    if (strcmp(s, "{") == 0) {
      size_t popen;
      int kind = brace_kind(&ts, i, &popen);
      if (ts.nfr > ts.n) break;
      char exit_guard[128] = "";
      if (kind == FR_BLOCK && popen != (size_t)-1 && popen > 0 && tk_is(&t[popen - 1], "if") &&
          ts.match[popen] != (size_t)-1) {
        char name[128];
        int neg = 0;
        if (cond_predicate(&ts, popen + 1, ts.match[popen], &neg, name, sizeof name)) {
          if (neg)
            snprintf(exit_guard, sizeof exit_guard, "%s", name);
          else if (ts.match[i] != (size_t)-1)
            add_range(&ts, name, i, ts.match[i]);
        }
      }
      push_frame(&ts, kind, i, paren);
      tframe *nf = top(&ts);
      if (exit_guard[0]) nf->exit_guard = tether_lint__strdup(exit_guard);
      if (kind == FR_FUNC) {
        for (size_t k = 0; k < ts.pnames.n; k++) {
          tether_lint__strlist_push(&nf->vars, ts.pnames.v[k]);
          tether_lint__strlist_push(&nf->types, ts.ptypes.v[k]);
        }
        snprintf(nf->cls, sizeof nf->cls, "%s", ts.pcls);
        /* The other parameters shadow members of the same name (`region` in a constructor). */
        if (popen != (size_t)-1 && ts.match[popen] != (size_t)-1)
          for (size_t k = popen + 1; k < ts.match[popen]; k++)
            if (t[k].kind == CXToken_Identifier && k > popen + 1 &&
                (t[k - 1].kind == CXToken_Identifier || t[k - 1].kind == CXToken_Keyword ||
                 tk_is(&t[k - 1], "&") || tk_is(&t[k - 1], "*") || tk_is(&t[k - 1], ">")) &&
                (tk_is(&t[k + 1], ",") || tk_is(&t[k + 1], ")") || tk_is(&t[k + 1], "=")) &&
                !tether_lint__strlist_has(&nf->vars, t[k].s)) {
              tether_lint__strlist_push(&nf->vars, t[k].s);
              tether_lint__strlist_push(&nf->types, "");
            }
      }
      if (kind == FR_FUNC || kind == FR_NS) {
        tether_lint__strlist_free(&ts.pnames);
        tether_lint__strlist_free(&ts.ptypes);
        ts.pcls[0] = '\0';
      }
      continue;
    }
    if (strcmp(s, "}") == 0) {
      if (ts.nfr <= 1) continue;
      int kind = fr->kind;
      int exits = fr->last_exits;
      paren = fr->paren_base;
      char *eg = fr->exit_guard ? tether_lint__strdup(fr->exit_guard) : NULL;
      pop_frame(&ts);
      tframe *parent = top(&ts);
      if (kind == FR_BLOCK) {
        if (eg && exits) tether_lint__strlist_add_unique(&parent->guards, eg);
        /* A block ends the statement it belongs to, unless `else` follows. */
        if (!(i + 1 < ts.n && tk_is(&t[i + 1], "else"))) {
          /* A plain block that always exits makes its enclosing statement exit; an if/loop
           * body does not. */
          size_t o = ts.match[i];
          int plain_block =
              o != (size_t)-1 && o > 0 &&
              (tk_is(&t[o - 1], "{") || tk_is(&t[o - 1], ";") || tk_is(&t[o - 1], "}"));
          parent->stmt_start = i + 1;
          parent->last_exits = plain_block && exits;
        }
      } else if (kind == FR_NS) {
        parent->stmt_start = i + 1;
      }
      free(eg);
      continue;
    }
    if (strcmp(s, ";") == 0 && paren == fr->paren_base) {
      if (fr->kind != FR_EXPR) {
        fr->last_exits = tstmt_exits(&ts, fr->stmt_start);
        fr->stmt_start = i + 1;
      }
      if (fr->kind == FR_NS) {
        tether_lint__strlist_free(&ts.pnames);
        tether_lint__strlist_free(&ts.ptypes);
        ts.pcls[0] = '\0';
      }
      if (ts.pending && ts.pending_at == i) {
        tether_lint__strlist_add_unique(&fr->guards, ts.pending);
        free(ts.pending);
        ts.pending = NULL;
      }
      continue;
    }
    /* `if (COND) STATEMENT;` without braces. */
    if (strcmp(s, "if") == 0 && i + 1 < ts.n && tk_is(&t[i + 1], "(") &&
        ts.match[i + 1] != (size_t)-1 && ts.match[i + 1] + 1 < ts.n &&
        !tk_is(&t[ts.match[i + 1] + 1], "{")) {
      size_t close = ts.match[i + 1];
      char name[128];
      int neg = 0;
      if (cond_predicate(&ts, i + 2, close, &neg, name, sizeof name)) {
        /* The statement after the condition ends at the first `;` outside brackets. */
        size_t e = close + 1;
        while (e < ts.n && !tk_is(&t[e], ";")) {
          if (ts.match[e] != (size_t)-1 && ts.match[e] > e) e = ts.match[e];
          e++;
        }
        if (neg && tstmt_exits(&ts, close + 1)) {
          free(ts.pending);
          ts.pending = tether_lint__strdup(name);
          ts.pending_at = e;
        } else if (!neg) {
          add_range(&ts, name, close + 1, e);
        }
      }
    }
    /* Declarations. */
    if (tok_wrapper(&ts, i)) {
      maybe_declaration(&ts, i, paren > fr->paren_base);
      /* `W::method(...) {`: a method of a wrapper class the AST does not know. */
      if (fr->kind == FR_NS && i + 3 < ts.n && tk_is(&t[i + 1], "::") &&
          t[i + 2].kind == CXToken_Identifier && tk_is(&t[i + 3], "(") &&
          !ast_resolved_method(&ts, i + 2))
        snprintf(ts.pcls, sizeof ts.pcls, "%s", s);
      continue;
    }
    if (fr->kind == FR_NS) continue;
    /* A local declaration inside a method of an unknown wrapper shadows a member. */
    if (t[i].kind == CXToken_Identifier && i > 0 && i + 1 < ts.n && var_class(&ts, "this") &&
        (t[i - 1].kind == CXToken_Identifier || tk_is(&t[i - 1], ">") || tk_is(&t[i - 1], "*") ||
         tk_is(&t[i - 1], "&") || tk_is(&t[i - 1], "auto")) &&
        (tk_is(&t[i + 1], "=") || tk_is(&t[i + 1], ";") || tk_is(&t[i + 1], "{") ||
         tk_is(&t[i + 1], "[") ||
         (tk_is(&t[i + 1], "(") && t[i - 1].kind == CXToken_Identifier &&
          !tk_is(&t[i - 1], "return")))) {
      tether_lint__strlist_push(&fr->vars, s);
      tether_lint__strlist_push(&fr->types, "");
      continue;
    }
    /* A wrapper made on the spot from a Python object: `nb::cast<PyValue &>(arg).get()` (also
     * nanobind::, py::, pybind11::). A temporary has no guard before its raw access. */
    if (tk_is(&t[i], "cast") && i + 2 < ts.n && tk_is(&t[i + 1], "<") && tok_wrapper(&ts, i + 2) &&
        !ast_resolved_type_at(&ts, i + 2)) {
      size_t k = i + 3;
      while (k < ts.n && (tk_is(&t[k], "&") || tk_is(&t[k], "*") || tk_is(&t[k], "&&") ||
                          tk_is(&t[k], "const")))
        k++;
      if (k + 1 < ts.n && tk_is(&t[k], ">") && tk_is(&t[k + 1], "(") &&
          ts.match[k + 1] != (size_t)-1) {
        size_t close = ts.match[k + 1];
        if (close + 2 < ts.n && (tk_is(&t[close + 1], ".") || tk_is(&t[close + 1], "->"))) {
          char via[300], tname[200];
          const char *q = i >= 2 && tk_is(&t[i - 1], "::") ? t[i - 2].s : "";
          snprintf(tname, sizeof tname, "%s%scast<%s>(...)", q, q[0] ? "::" : "", t[i + 2].s);
          if (member_role(&ts, close + 2, t[i + 2].s, via, sizeof via) == TM_RAW)
            treport(&ts, close + 2, tname, via);
          i = close + 2;
          continue;
        }
      }
    }
    /* Uses: `v.m`, `v->m`, `this->m`, and inside a method of an unknown wrapper a bare `m`. */
    char name[128];
    const char *cls = NULL;
    size_t m = wrapper_ref(&ts, i, name, sizeof name, &cls);
    if (!m && t[i].kind == CXToken_Identifier &&
        !(i > 0 && (tk_is(&t[i - 1], ".") || tk_is(&t[i - 1], "->") || tk_is(&t[i - 1], "::"))) &&
        (cls = var_class(&ts, "this")) != NULL && !var_class(&ts, s)) {
      m = i;
      snprintf(name, sizeof name, "this");
    }
    if (!m || !cls) continue;
    char via[300];
    int role = member_role(&ts, m, cls, via, sizeof via);
    int plain = !is_control_keyword(t[fr->stmt_start < ts.n ? fr->stmt_start : 0].s);
    if (role == TM_GUARD) {
      if (plain && fr->kind != FR_EXPR) tether_lint__strlist_add_unique(&fr->guards, name);
    } else if (role == TM_INVALIDATE) {
      for (size_t f = ts.nfr; f-- > 0;) {
        tframe *g = &ts.fr[f];
        for (size_t k = 0; k < g->guards.n; k++)
          if (strcmp(g->guards.v[k], name) == 0) {
            free(g->guards.v[k]);
            g->guards.v[k] = g->guards.v[--g->guards.n];
            break;
          }
        if (g->kind == FR_FUNC) break;
      }
    } else if (role == TM_RAW && !tguarded(&ts, name, i)) {
      treport(&ts, m, name, via);
    }
    if (m > i) i = m;
  }
  while (ts.nfr) pop_frame(&ts);
  for (size_t i = 0; i < ts.nrg; i++) free(ts.rg[i].name);
  free(ts.rg);
  tether_lint__strlist_free(&ts.pnames);
  tether_lint__strlist_free(&ts.ptypes);
  free(ts.pending);
  for (size_t i = 0; i < ts.n; i++) free(ts.t[i].s);
  free(ts.t);
  free(ts.match);
  free(ts.fr);
  *nvars = ts.vars;
  return ts.found;
}

/* The missing header that most likely declares the wrappers: the first "'X' file not found" of
 * the translation unit's diagnostics whose name is about the Python bindings, else the first one,
 * else "". */
static void missing_header(CXTranslationUnit tu, char *out, size_t len) {
  out[0] = '\0';
  unsigned nd = clang_getNumDiagnostics(tu);
  int preferred = 0;
  for (unsigned i = 0; i < nd && !preferred; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    CXString s = clang_getDiagnosticSpelling(d);
    const char *m = clang_getCString(s);
    const char *q = m ? strchr(m, '\'') : NULL;
    const char *e = q ? strstr(q + 1, "' file not found") : NULL;
    if (q && e) {
      char name[512];
      snprintf(name, sizeof name, "%.*s", (int)(e - q - 1), q + 1);
      preferred = strstr(name, "Bindings/Python") || strstr(name, "IRCore") ||
                  strstr(name, "IRModule") || strstr(name, "nanobind") || strstr(name, "pybind");
      if (preferred || !out[0]) snprintf(out, len, "%s", name);
    }
    clang_disposeString(s);
    clang_disposeDiagnostic(d);
  }
}

static int tu_has_errors(CXTranslationUnit tu) {
  unsigned nd = clang_getNumDiagnostics(tu);
  int errors = 0;
  for (unsigned i = 0; i < nd && !errors; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) errors = 1;
    clang_disposeDiagnostic(d);
  }
  return errors;
}

/* After the AST walk: the token scan, for files that do not compile. */
static void rawop_degraded(ctx *c) {
  if (!tu_has_errors(c->tu)) return;
  if (!tether_lint__file_rule_enabled(c->f, RULE_UNGUARDED)) return;
  CXString sp = clang_getTranslationUnitSpelling(c->tu);
  CXFile file = clang_getFile(c->tu, clang_getCString(sp));
  clang_disposeString(sp);
  if (!file) return;
  int nvars = 0;
  int found = rawop_token_scan(c, file, &nvars);
  if (!nvars && !found) return;
  char hdr[512];
  missing_header(c->tu, hdr, sizeof hdr);
  char why[600];
  if (hdr[0])
    snprintf(why, sizeof why, "the file does not compile (missing header '%s')", hdr);
  else
    snprintf(why, sizeof why, "the file does not compile");
  tether_lint__file_message(
      c->f, 0,
      "raw-op: degraded mode: %s; %d wrapper(s) of a type the compiler does not "
      "know, %d raw access(es) recognised from tokens only (guards from "
      "statements, early exits and `if (w.isValid())` blocks; no raw handles "
      "followed through variables, no escapes)",
      why, nvars, found);
}

static int rawop_check_tu(tether_lint_file *f, void *state, CXTranslationUnit tu) {
  (void)state;
  ctx c;
  memset(&c, 0, sizeof c);
  c.f = f;
  c.tu = tu;
  c.p = tether_lint__file_profile(f);
  c.defer = clang_getNullCursor();
  c.local_lambda = clang_getNullCursor();
  c.cur_lambda = clang_getNullCursor();
  shared sh;
  memset(&sh, 0, sizeof sh);
  c.sh = &sh;
  clang_visitChildren(clang_getTranslationUnitCursor(tu), collect_bindings, &c);
  clang_visitChildren(clang_getTranslationUnitCursor(tu), visit_decl, &c);
  rawop_degraded(&c);
  ctx_free(&c);
  for (size_t i = 0; i < sh.n; i++) {
    free(sh.v[i].key);
    tether_lint__strlist_free(&sh.v[i].guards);
    tether_lint__strlist_free(&sh.v[i].params);
  }
  free(sh.v);
  for (size_t i = 0; i < sh.ntb; i++) free(sh.tb[i].usr);
  free(sh.tb);
  tether_lint__strlist_free(&sh.wrapper_types_yes);
  tether_lint__strlist_free(&sh.wrapper_types_no);
  return 0;
}

const tether_lint_family tether_lint__family_rawop = {
    .name = "rawop",
    .inputs = TETHER_LINT_IN_TU,
    .rules = rawop_rules,
    .nrules = sizeof rawop_rules / sizeof rawop_rules[0],
    .check_tu = rawop_check_tu,
};
