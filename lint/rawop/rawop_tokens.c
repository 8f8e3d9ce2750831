/* Degraded mode of the raw-op rules: raw accesses from tokens, for files that do not compile.
 *
 * When a file does not compile because the wrapper classes are unknown (typically: the header
 * that declares them is missing, as for nanobind-era bindings on an older MLIR), the AST has no
 * member calls to follow. The main file is then scanned token by token, for variables declared
 * with a wrapper type the AST could not resolve (and methods of such wrapper classes), their raw
 * accesses (`self.get()`, `op->operation`, a raw field inside the wrapper's own method) and their
 * guards: a guard call as a statement of its own, `if (!w.isValid()) return/throw ...;` before the
 * access, the access inside `if (w.isValid()) ...`, and a parent's guard. Blocks come from braces;
 * a lambda body starts knowing nothing.
 *
 * Invariant: only what the AST could not resolve is scanned (a variable whose type the AST knows is
 * the walk's), so a finding is never reported twice; every token finding says it comes from tokens,
 * and the file gets one note naming the missing header. */
#include "lint/rawop/rawop.h"
#include "lint/utils/clang_util.h"

#include <stdlib.h>
#include <string.h>

typedef tether_lint_token ttok;

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
  rawop_ctx *c;
  CXFile file;
  tether_lint_tokens toks; /* the main file's tokens: */
  ttok *t;                 /* ... toks.t */
  size_t n;                /* ... toks.n */
  int paren;               /* parenthesis depth */
  size_t *match;           /* matching bracket index, or (size_t)-1 */
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

static int tk_is(const ttok *t, const char *s) { return tether_lint__token_is(t, s); }

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
  CXType t = rawop_strip_refs(clang_getCursorType(cur));
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
  if (tether_lint__grow(&ts->rg, &ts->caprg, ts->nrg, sizeof *ts->rg) != 0) return;
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

/* For each token, the index of its matching bracket ((), [], {}), or (size_t)-1. */
static void match_brackets(tscan *ts) {
  size_t *stack = malloc((ts->n ? ts->n : 1) * sizeof *stack);
  size_t sp = 0;
  for (size_t i = 0; i < ts->n; i++) {
    ts->match[i] = (size_t)-1;
    if (ts->t[i].kind != CXToken_Punctuation) continue;
    const char *s = ts->t[i].s;
    if (strcmp(s, "(") == 0 || strcmp(s, "[") == 0 || strcmp(s, "{") == 0) {
      if (stack) stack[sp++] = i;
    } else if (strcmp(s, ")") == 0 || strcmp(s, "]") == 0 || strcmp(s, "}") == 0) {
      char want = s[0] == ')' ? '(' : s[0] == ']' ? '[' : '{';
      if (sp && ts->t[stack[sp - 1]].s[0] == want) {
        sp--;
        ts->match[i] = stack[sp];
        ts->match[stack[sp]] = i;
      }
    }
  }
  free(stack);
}

/* The main file's tokens, their brackets, and the file's own frame. 0, or -1 (nothing to scan). */
static int scan_init(tscan *ts, rawop_ctx *c, CXFile file) {
  memset(ts, 0, sizeof *ts);
  ts->c = c;
  ts->file = file;
  ts->pending_at = (size_t)-1;
  if (tether_lint__tokenize_file(c->tu, file, &ts->toks) != 0) return -1;
  ts->t = ts->toks.t;
  ts->n = ts->toks.n;
  ts->match = malloc((ts->n ? ts->n : 1) * sizeof *ts->match);
  ts->fr = calloc(ts->n + 2, sizeof *ts->fr);
  if (!ts->match || !ts->fr) {
    free(ts->match);
    free(ts->fr);
    tether_lint__tokens_free(&ts->toks);
    return -1;
  }
  match_brackets(ts);
  push_frame(ts, FR_NS, 0, 0);
  ts->fr[0].stmt_start = 0;
  return 0;
}

static void scan_free(tscan *ts) {
  while (ts->nfr) pop_frame(ts);
  for (size_t i = 0; i < ts->nrg; i++) free(ts->rg[i].name);
  free(ts->rg);
  tether_lint__strlist_free(&ts->pnames);
  tether_lint__strlist_free(&ts->ptypes);
  free(ts->pending);
  tether_lint__tokens_free(&ts->toks);
  free(ts->match);
  free(ts->fr);
}

/* A preprocessor directive at token *i: skipped to the end of its line. */
static int skip_directive(tscan *ts, size_t *i) {
  const ttok *t = ts->t;
  if (!tk_is(&t[*i], "#") || (*i > 0 && t[*i - 1].line >= t[*i].line)) return 0;
  unsigned line = t[*i].line;
  while (*i + 1 < ts->n && t[*i + 1].line == line) ++*i;
  top(ts)->stmt_start = *i + 1;
  return 1;
}

/* The parameters of the function a `{` opens become its variables (the wrapper ones, and the
 * others as shadowing members of the same name: `region` in a constructor). */
static void take_parameters(tscan *ts, tframe *nf, size_t popen) {
  const ttok *t = ts->t;
  for (size_t k = 0; k < ts->pnames.n; k++) {
    tether_lint__strlist_push(&nf->vars, ts->pnames.v[k]);
    tether_lint__strlist_push(&nf->types, ts->ptypes.v[k]);
  }
  snprintf(nf->cls, sizeof nf->cls, "%s", ts->pcls);
  if (popen == (size_t)-1 || ts->match[popen] == (size_t)-1) return;
  for (size_t k = popen + 1; k < ts->match[popen]; k++)
    if (t[k].kind == CXToken_Identifier && k > popen + 1 &&
        (t[k - 1].kind == CXToken_Identifier || t[k - 1].kind == CXToken_Keyword ||
         tk_is(&t[k - 1], "&") || tk_is(&t[k - 1], "*") || tk_is(&t[k - 1], ">")) &&
        (tk_is(&t[k + 1], ",") || tk_is(&t[k + 1], ")") || tk_is(&t[k + 1], "=")) &&
        !tether_lint__strlist_has(&nf->vars, t[k].s)) {
      tether_lint__strlist_push(&nf->vars, t[k].s);
      tether_lint__strlist_push(&nf->types, "");
    }
}

/* A `{` at token i opens a frame. `if (w.isValid()) {` makes `w` valid in the block; a block of
 * `if (!w.isValid()) {` that always exits makes it valid after the block. 0 when there is no
 * room for another frame (the scan stops). */
static int open_brace(tscan *ts, size_t i) {
  const ttok *t = ts->t;
  size_t popen;
  int kind = brace_kind(ts, i, &popen);
  if (ts->nfr > ts->n) return 0;
  char exit_guard[128] = "";
  if (kind == FR_BLOCK && popen != (size_t)-1 && popen > 0 && tk_is(&t[popen - 1], "if") &&
      ts->match[popen] != (size_t)-1) {
    char name[128];
    int neg = 0;
    if (cond_predicate(ts, popen + 1, ts->match[popen], &neg, name, sizeof name)) {
      if (neg)
        snprintf(exit_guard, sizeof exit_guard, "%s", name);
      else if (ts->match[i] != (size_t)-1)
        add_range(ts, name, i, ts->match[i]);
    }
  }
  push_frame(ts, kind, i, ts->paren);
  tframe *nf = top(ts);
  if (exit_guard[0]) nf->exit_guard = tether_lint__strdup(exit_guard);
  if (kind == FR_FUNC) take_parameters(ts, nf, popen);
  if (kind == FR_FUNC || kind == FR_NS) {
    tether_lint__strlist_free(&ts->pnames);
    tether_lint__strlist_free(&ts->ptypes);
    ts->pcls[0] = '\0';
  }
  return 1;
}

/* A `}` at token i closes the innermost frame. A block ends the statement it belongs to (unless
 * `else` follows); a plain block that always exits makes that statement exit. */
static void close_brace(tscan *ts, size_t i) {
  const ttok *t = ts->t;
  if (ts->nfr <= 1) return;
  tframe *fr = top(ts);
  int kind = fr->kind;
  int exits = fr->last_exits;
  ts->paren = fr->paren_base;
  char *eg = fr->exit_guard ? tether_lint__strdup(fr->exit_guard) : NULL;
  pop_frame(ts);
  tframe *parent = top(ts);
  if (kind == FR_BLOCK) {
    if (eg && exits) tether_lint__strlist_add_unique(&parent->guards, eg);
    if (!(i + 1 < ts->n && tk_is(&t[i + 1], "else"))) {
      size_t o = ts->match[i];
      int plain_block = o != (size_t)-1 && o > 0 &&
                        (tk_is(&t[o - 1], "{") || tk_is(&t[o - 1], ";") || tk_is(&t[o - 1], "}"));
      parent->stmt_start = i + 1;
      parent->last_exits = plain_block && exits;
    }
  } else if (kind == FR_NS) {
    parent->stmt_start = i + 1;
  }
  free(eg);
}

/* A `;` at token i ends a statement of the innermost frame; a guard waiting for it applies. */
static void end_statement(tscan *ts, size_t i) {
  tframe *fr = top(ts);
  if (fr->kind != FR_EXPR) {
    fr->last_exits = tstmt_exits(ts, fr->stmt_start);
    fr->stmt_start = i + 1;
  }
  if (fr->kind == FR_NS) {
    tether_lint__strlist_free(&ts->pnames);
    tether_lint__strlist_free(&ts->ptypes);
    ts->pcls[0] = '\0';
  }
  if (ts->pending && ts->pending_at == i) {
    tether_lint__strlist_add_unique(&fr->guards, ts->pending);
    free(ts->pending);
    ts->pending = NULL;
  }
}

/* `if (COND) STATEMENT;` without braces at token i: `if (w.isValid()) S;` makes `w` valid in S;
 * `if (!w.isValid()) return ...;` makes it valid after the statement. */
static void if_without_braces(tscan *ts, size_t i) {
  const ttok *t = ts->t;
  if (!tk_is(&t[i], "if") || i + 1 >= ts->n || !tk_is(&t[i + 1], "(") ||
      ts->match[i + 1] == (size_t)-1 || ts->match[i + 1] + 1 >= ts->n ||
      tk_is(&t[ts->match[i + 1] + 1], "{"))
    return;
  size_t close = ts->match[i + 1];
  char name[128];
  int neg = 0;
  if (!cond_predicate(ts, i + 2, close, &neg, name, sizeof name)) return;
  /* The statement after the condition ends at the first `;` outside brackets. */
  size_t e = close + 1;
  while (e < ts->n && !tk_is(&t[e], ";")) {
    if (ts->match[e] != (size_t)-1 && ts->match[e] > e) e = ts->match[e];
    e++;
  }
  if (neg && tstmt_exits(ts, close + 1)) {
    free(ts->pending);
    ts->pending = tether_lint__strdup(name);
    ts->pending_at = e;
  } else if (!neg) {
    add_range(ts, name, close + 1, e);
  }
}

/* A wrapper class's name at token i: a variable of it declared (`W &w`), or `W::method(...) {`,
 * a method of a wrapper class the AST does not know. */
static void wrapper_name(tscan *ts, size_t i) {
  const ttok *t = ts->t;
  tframe *fr = top(ts);
  maybe_declaration(ts, i, ts->paren > fr->paren_base);
  if (fr->kind == FR_NS && i + 3 < ts->n && tk_is(&t[i + 1], "::") &&
      t[i + 2].kind == CXToken_Identifier && tk_is(&t[i + 3], "(") &&
      !ast_resolved_method(ts, i + 2))
    snprintf(ts->pcls, sizeof ts->pcls, "%s", t[i].s);
}

/* A local declaration at token i inside a method of an unknown wrapper: it shadows a member of
 * the same name. 1 when it is one. */
static int shadowing_local(tscan *ts, size_t i) {
  const ttok *t = ts->t;
  if (!(t[i].kind == CXToken_Identifier && i > 0 && i + 1 < ts->n && var_class(ts, "this") &&
        (t[i - 1].kind == CXToken_Identifier || tk_is(&t[i - 1], ">") || tk_is(&t[i - 1], "*") ||
         tk_is(&t[i - 1], "&") || tk_is(&t[i - 1], "auto")) &&
        (tk_is(&t[i + 1], "=") || tk_is(&t[i + 1], ";") || tk_is(&t[i + 1], "{") ||
         tk_is(&t[i + 1], "[") ||
         (tk_is(&t[i + 1], "(") && t[i - 1].kind == CXToken_Identifier &&
          !tk_is(&t[i - 1], "return")))))
    return 0;
  tether_lint__strlist_push(&top(ts)->vars, t[i].s);
  tether_lint__strlist_push(&top(ts)->types, "");
  return 1;
}

/* A wrapper made on the spot from a Python object at token *i: `nb::cast<PyValue &>(arg).get()`
 * (also nanobind::, py::, pybind11::). A temporary has no guard before its raw access. 1 (and *i
 * past it) when it is one. */
static int cast_temporary(tscan *ts, size_t *i) {
  const ttok *t = ts->t;
  size_t c = *i;
  if (!tk_is(&t[c], "cast") || c + 2 >= ts->n || !tk_is(&t[c + 1], "<") ||
      !tok_wrapper(ts, c + 2) || ast_resolved_type_at(ts, c + 2))
    return 0;
  size_t k = c + 3;
  while (k < ts->n &&
         (tk_is(&t[k], "&") || tk_is(&t[k], "*") || tk_is(&t[k], "&&") || tk_is(&t[k], "const")))
    k++;
  if (k + 1 >= ts->n || !tk_is(&t[k], ">") || !tk_is(&t[k + 1], "(") ||
      ts->match[k + 1] == (size_t)-1)
    return 0;
  size_t close = ts->match[k + 1];
  if (close + 2 >= ts->n || (!tk_is(&t[close + 1], ".") && !tk_is(&t[close + 1], "->"))) return 0;
  char via[300], tname[200];
  const char *q = c >= 2 && tk_is(&t[c - 1], "::") ? t[c - 2].s : "";
  snprintf(tname, sizeof tname, "%s%scast<%s>(...)", q, q[0] ? "::" : "", t[c + 2].s);
  if (member_role(ts, close + 2, t[c + 2].s, via, sizeof via) == TM_RAW)
    treport(ts, close + 2, tname, via);
  *i = close + 2;
  return 1;
}

/* A use at token *i: `v.m`, `v->m`, `this->m`, and inside a method of an unknown wrapper a bare
 * `m`: a raw access is reported unless guarded; a guard statement adds a guard; an invalidator
 * removes it. *i moves to the member. */
static void member_use(tscan *ts, size_t *i) {
  const ttok *t = ts->t;
  tframe *fr = top(ts);
  char name[128];
  const char *cls = NULL;
  size_t m = wrapper_ref(ts, *i, name, sizeof name, &cls);
  if (!m && t[*i].kind == CXToken_Identifier &&
      !(*i > 0 && (tk_is(&t[*i - 1], ".") || tk_is(&t[*i - 1], "->") || tk_is(&t[*i - 1], "::"))) &&
      (cls = var_class(ts, "this")) != NULL && !var_class(ts, t[*i].s)) {
    m = *i;
    snprintf(name, sizeof name, "this");
  }
  if (!m || !cls) return;
  char via[300];
  int role = member_role(ts, m, cls, via, sizeof via);
  int plain = !is_control_keyword(t[fr->stmt_start < ts->n ? fr->stmt_start : 0].s);
  if (role == TM_GUARD) {
    if (plain && fr->kind != FR_EXPR) tether_lint__strlist_add_unique(&fr->guards, name);
  } else if (role == TM_INVALIDATE) {
    for (size_t f = ts->nfr; f-- > 0;) {
      tframe *g = &ts->fr[f];
      for (size_t k = 0; k < g->guards.n; k++)
        if (strcmp(g->guards.v[k], name) == 0) {
          free(g->guards.v[k]);
          g->guards.v[k] = g->guards.v[--g->guards.n];
          break;
        }
      if (g->kind == FR_FUNC) break;
    }
  } else if (role == TM_RAW && !tguarded(ts, name, *i)) {
    treport(ts, m, name, via);
  }
  if (m > *i) *i = m;
}

/* Scans the main file's tokens once; returns the raw accesses reported, `*nvars` the wrapper
 * variables found whose type the AST does not know. */
static int rawop_token_scan(rawop_ctx *c, CXFile file, int *nvars) {
  tscan ts;
  if (scan_init(&ts, c, file) != 0) return 0;
  for (size_t i = 0; i < ts.n; i++) {
    if (skip_directive(&ts, &i)) continue;
    const char *s = ts.t[i].s;
    if (strcmp(s, "(") == 0) ts.paren++;
    if (strcmp(s, ")") == 0 && ts.paren > 0) ts.paren--;
    if (strcmp(s, "{") == 0) {
      if (!open_brace(&ts, i)) break;
      continue;
    }
    if (strcmp(s, "}") == 0) {
      close_brace(&ts, i);
      continue;
    }
    if (strcmp(s, ";") == 0 && ts.paren == top(&ts)->paren_base) {
      end_statement(&ts, i);
      continue;
    }
    if_without_braces(&ts, i);
    if (tok_wrapper(&ts, i)) {
      wrapper_name(&ts, i);
      continue;
    }
    if (top(&ts)->kind == FR_NS || shadowing_local(&ts, i) || cast_temporary(&ts, &i)) continue;
    member_use(&ts, &i);
  }
  *nvars = ts.vars;
  int found = ts.found;
  scan_free(&ts);
  return found;
}

/* The missing headers most likely to declare the wrappers: the Python bindings' own. */
static int bindings_header(const char *name) {
  return strstr(name, "Bindings/Python") || strstr(name, "IRCore") || strstr(name, "IRModule") ||
         strstr(name, "nanobind") || strstr(name, "pybind");
}

/* After the AST walk: the token scan, for files that do not compile. */
void rawop_degraded(rawop_ctx *c) {
  if (!tether_lint__error_count(c->tu)) return;
  if (!tether_lint__file_rule_enabled(c->f, RULE_UNGUARDED)) return;
  CXFile file = tether_lint__main_file(c->tu);
  if (!file) return;
  int nvars = 0;
  int found = rawop_token_scan(c, file, &nvars);
  if (!nvars && !found) return;
  char hdr[512];
  tether_lint__missing_header(c->tu, bindings_header, hdr, sizeof hdr);
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
