/* The token pass: registrations and `.def` chains of a file that does not compile, read from the
 * main file's tokens where the AST lost them.
 *
 * A binding file is often read without its project's generated or private headers, or without
 * nanobind's: clang then drops every statement that names what it does not know, and with it the
 * registration and the whole `.def` chain after it. The tokens still have them. This pass finds
 * `class_<T, ...>(...)` (and `class_<T> var(...)`) after a qualifier that names pybind11 or
 * nanobind, and `.def*(...)` calls, splits their arguments, and judges:
 *   - a registration's class by the declaration its name resolves to (direct_lookup.c: MLIR's
 *     headers were found even when the project's were not), else by a base written among its
 *     template arguments (`class_<tt::FuncOp, OpState>`), else not at all (counted in the note);
 *   - a bound lambda through the AST when libclang kept it (its LambdaExpr survives in a dropped
 *     call), else from its tokens: its written return type (`-> Value`), its parameters
 *     (`std::function<void(Operation *)>`), and the calls in its body that free IR;
 *   - a bound member or function pointer (`&Block::erase`, `&helper`) through the declaration it
 *     resolves to.
 *
 * The types these spell are read in direct_toktypes.c, the lambdas and pointers they bind in
 * direct_tokbody.c (direct_tokens.h lists the three).
 *
 * Invariant: a registration or `.def` the AST judged (direct_ast.c marked it) is never judged here;
 * preprocessor directives are skipped (a macro's body is the AST's, where it is used); a name that
 * resolves nowhere is never classified by its spelling, except MLIR's own class names when the
 * parse has no MLIR at all. Every token finding is reported at its token in the main file, so
 * NOLINT comments apply as to any other finding. */
#include "lint/direct/direct_tokens.h"
#include "lint/utils/bind_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading --------------------------------------------------------------------------------- */

static void mark_directives(direct_ctx *x, struct direct_toks *k) {
  size_t size = 0;
  const char *text = x->main ? clang_getFileContents(x->tu, x->main, &size) : NULL;
  tether_lint__lines li;
  memset(&li, 0, sizeof li);
  if (!text || tether_lint__lines_build(&li, text, size) != 0) return;
  for (size_t i = 0; i < k->n; i++) {
    if (!direct_tok_is(k, i, "#") || (i > 0 && k->t[i - 1].line == k->t[i].line)) continue;
    unsigned end = k->t[i].line;
    const char *s;
    size_t n;
    while (tether_lint__lines_get(&li, end, &s, &n) == 0 && n > 0 &&
           (s[n - 1] == '\\' || (n > 1 && s[n - 1] == '\r' && s[n - 2] == '\\')))
      end++;
    for (size_t j = i; j < k->n && k->t[j].line <= end; j++) k->skip[j] = 1;
  }
  tether_lint__lines_free(&li);
}

static void match_brackets(struct direct_toks *k) {
  size_t *stack = malloc((k->n ? k->n : 1) * sizeof *stack);
  size_t sp = 0;
  for (size_t i = 0; i < k->n; i++) k->match[i] = NO_MATCH;
  if (!stack) return;
  for (size_t i = 0; i < k->n; i++) {
    if (k->skip[i] || k->t[i].kind != CXToken_Punctuation) continue;
    const char *s = k->t[i].s;
    if (!strcmp(s, "(") || !strcmp(s, "[") || !strcmp(s, "{")) {
      stack[sp++] = i;
    } else if (!strcmp(s, ")") || !strcmp(s, "]") || !strcmp(s, "}")) {
      char want = s[0] == ')' ? '(' : s[0] == ']' ? '[' : '{';
      /* Unbalanced code: drop openers until the matching kind (or give up on this closer). */
      size_t j = sp;
      while (j > 0 && k->t[stack[j - 1]].s[0] != want) j--;
      if (j == 0) continue;
      sp = j - 1;
      k->match[stack[sp]] = i;
      k->match[i] = stack[sp];
    }
  }
  free(stack);
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

static void collect_errors(direct_ctx *x, struct direct_toks *k) {
  unsigned nd = clang_getNumDiagnostics(x->tu);
  k->errs = malloc((nd ? nd : 1) * sizeof *k->errs);
  if (!k->errs) return;
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(x->tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXFile file = NULL;
      unsigned off = 0;
      clang_getSpellingLocation(clang_getDiagnosticLocation(d), &file, NULL, NULL, &off);
      if (file && x->main && clang_File_isEqual(file, x->main)) k->errs[k->nerrs++] = off;
    }
    clang_disposeDiagnostic(d);
  }
  qsort(k->errs, k->nerrs, sizeof *k->errs, cmp_size);
}

int direct_tok_errors_in(const struct direct_toks *k, size_t from, size_t to) {
  size_t lo = 0, hi = k->nerrs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (k->errs[mid] < from)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < k->nerrs && k->errs[lo] <= to;
}

static void add_lib(struct direct_toks *k, const char *q, const char *kind) {
  if (tether_lint__strlist_has(&k->libs, q)) return;
  tether_lint__strlist_push(&k->libs, q);
  tether_lint__strlist_push(&k->lib_kind, kind);
}

static void find_libraries(struct direct_toks *k) {
  add_lib(k, "pybind11", "p");
  add_lib(k, "py", "p");
  add_lib(k, "nanobind", "n");
  add_lib(k, "nb", "n");
  for (size_t i = 0; i < k->n; i++) {
    /* The file binds with pybind11 or nanobind: it names them, includes their headers (a quoted
     * include is one literal token), or uses their conventional aliases' module type (`nb` may be
     * declared in a header of the project). */
    if (direct_tok_ident(k, i) &&
        (direct_tok_is(k, i, "pybind11") || direct_tok_is(k, i, "nanobind") ||
         direct_tok_is(k, i, "PYBIND11_MODULE") || direct_tok_is(k, i, "NB_MODULE")))
      k->binding = 1;
    if (k->t[i].kind == CXToken_Literal &&
        (strstr(k->t[i].s, "pybind11/") || strstr(k->t[i].s, "nanobind/")))
      k->binding = 1;
    if ((direct_tok_is(k, i, "py") || direct_tok_is(k, i, "nb")) && direct_tok_is(k, i + 1, "::") &&
        (direct_tok_is(k, i + 2, "module_") || direct_tok_is(k, i + 2, "module") ||
         direct_tok_is(k, i + 2, "class_")))
      k->binding = 1;
    if (k->skip[i]) continue;
    /* namespace X = pybind11; */
    if (direct_tok_is(k, i, "namespace") && direct_tok_ident(k, i + 1) &&
        direct_tok_is(k, i + 2, "=") &&
        (direct_tok_is(k, i + 3, "pybind11") || direct_tok_is(k, i + 3, "nanobind")) &&
        direct_tok_is(k, i + 4, ";"))
      add_lib(k, k->t[i + 1].s, direct_tok_is(k, i + 3, "pybind11") ? "p" : "n");
    /* using namespace pybind11; (or an alias of it) */
    if (direct_tok_is(k, i, "using") && direct_tok_is(k, i + 1, "namespace") &&
        direct_tok_ident(k, i + 2) && direct_tok_is(k, i + 3, ";")) {
      for (size_t l = 0; l < k->libs.n; l++)
        if (strcmp(k->libs.v[l], k->t[i + 2].s) == 0) {
          k->bare = 1;
          k->bare_lib =
              k->lib_kind.v[l][0] == 'n' ? TETHER_LINT_BIND_NANOBIND : TETHER_LINT_BIND_PYBIND11;
        }
    }
  }
}

static struct direct_toks *load(direct_ctx *x) {
  if (x->toks) return x->toks;
  struct direct_toks *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  x->toks = k;
  if (!x->main || tether_lint__tokenize_file(x->tu, x->main, &k->tk) != 0) return k;
  k->t = k->tk.t;
  k->n = k->tk.n;
  k->match = malloc((k->n ? k->n : 1) * sizeof *k->match);
  k->skip = calloc(k->n ? k->n : 1, 1);
  if (!k->match || !k->skip) {
    k->n = 0;
    return k;
  }
  mark_directives(x, k);
  match_brackets(k);
  find_libraries(k);
  collect_errors(x, k);
  k->mlir_known = !clang_Cursor_isNull(direct_lookup_class(x, "mlir::Operation"));
  for (size_t i = 0; i < k->n; i++) {
    if ((direct_tok_ident(k, i) && direct_tok_is(k, i, "mlir")) ||
        (k->t[i].kind == CXToken_Literal && strstr(k->t[i].s, "mlir/")))
      k->mlir_named = 1;
    if (direct_tok_is(k, i, "using") && direct_tok_is(k, i + 1, "namespace") &&
        direct_tok_is(k, i + 2, "mlir") && direct_tok_is(k, i + 3, ";"))
      k->using_mlir = 1;
    if (direct_tok_is(k, i, "namespace") && direct_tok_is(k, i + 1, "mlir") &&
        (direct_tok_is(k, i + 2, "{") || direct_tok_is(k, i + 2, "::")))
      k->using_mlir = 1;
  }
  return k;
}

void direct_tokens_free(direct_ctx *x) {
  struct direct_toks *k = x->toks;
  if (!k) return;
  tether_lint__tokens_free(&k->tk);
  free(k->match);
  free(k->skip);
  free(k->errs);
  tether_lint__strlist_free(&k->libs);
  tether_lint__strlist_free(&k->lib_kind);
  free(k);
  x->toks = NULL;
}

CXSourceLocation direct_tok_loc(direct_ctx *x, const struct direct_toks *k, size_t i) {
  return clang_getLocationForOffset(x->tu, x->main, k->t[i].offset);
}

/* ---- registrations --------------------------------------------------------------------------- */

/* The library a `class_` at `i` belongs to (TETHER_LINT_BIND_*), and where its spelling starts. */
static int registration_library(const struct direct_toks *k, size_t i, size_t *start) {
  *start = i;
  if (i >= 2 && direct_tok_is(k, i - 1, "::") && direct_tok_ident(k, i - 2)) {
    for (size_t l = 0; l < k->libs.n; l++)
      if (strcmp(k->libs.v[l], k->t[i - 2].s) == 0) {
        *start = i - 2;
        if (*start >= 1 && direct_tok_is(k, *start - 1, "::")) (*start)--;
        return k->lib_kind.v[l][0] == 'n' ? TETHER_LINT_BIND_NANOBIND : TETHER_LINT_BIND_PYBIND11;
      }
    return TETHER_LINT_BIND_NONE;
  }
  if (i >= 1 && direct_tok_is(k, i - 1, "::")) return TETHER_LINT_BIND_NONE;
  return k->bare ? k->bare_lib : TETHER_LINT_BIND_NONE;
}

static int mentions(const struct direct_toks *k, size_t from, size_t to, const char *s) {
  for (size_t i = from; i < to; i++)
    if (direct_tok_is(k, i, s)) return 1;
  return 0;
}

/* Is the type written at [from, to) a type parameter of one of the main file's templates? */
static int is_template_parameter(direct_ctx *x, const struct direct_toks *k, size_t from,
                                 size_t to) {
  return to == from + 1 && direct_tok_ident(k, from) &&
         direct_ranges_has(&x->templates, k->t[from].offset) &&
         tether_lint__strlist_has(&x->template_params, k->t[from].s);
}

static void token_registration(direct_ctx *x, struct direct_toks *k, size_t i) {
  size_t start;
  int lib = registration_library(k, i, &start);
  if (lib == TETHER_LINT_BIND_NONE || !direct_tok_is(k, i + 1, "<")) return;
  size_t close = direct_tok_angle_close(k, i + 1, k->n);
  if (close == NO_MATCH) return;
  /* A construction: `class_<...>(`, or a variable `class_<...> name(` / `{` / `=`. */
  size_t after = close + 1;
  if (!(direct_tok_is(k, after, "(") ||
        (direct_tok_ident(k, after) &&
         (direct_tok_is(k, after + 1, "(") || direct_tok_is(k, after + 1, "{") ||
          direct_tok_is(k, after + 1, "=")))))
    return;
  if (direct_ast_judged(x, k->t[i].offset)) return;
  size_t r[8][2];
  int na = direct_tok_split_args(k, i + 2, close, r, 8);
  if (na < 1) return;
  x->tok_regs++;
  direct_ttype cls;
  direct_tok_classify(x, k, r[0][0], r[0][1], &cls, 0);
  int tether = 0, nodelete = 0, base = DIRECT_NONE;
  char basename[256] = "";
  if (cls.cat == DIRECT_TETHER || mentions(k, r[0][0], r[0][1], "tether")) tether = 1;
  const char *cname = cls.name[0] ? cls.name : cls.written;
  for (int a = 1; a < na; a++) {
    if (mentions(k, r[a][0], r[a][1], "tether")) tether = 1;
    if (mentions(k, r[a][0], r[a][1], "nodelete")) nodelete = 1;
    direct_ttype b;
    direct_tok_classify(x, k, r[a][0], r[a][1], &b, 0);
    if (base == DIRECT_NONE && (direct_is_ir(b.cat) || direct_is_ctx(b.cat))) {
      base = b.cat;
      snprintf(basename, sizeof basename, "%s", b.written);
    }
  }
  int cat = cls.cat;
  char *how = NULL;
  if (!cls.resolved && base != DIRECT_NONE) {
    cat = base;
    tether_lint__buf h = {0};
    if (is_template_parameter(x, k, r[0][0], r[0][1]))
      tether_lint__buf_printf(&h, " (the template parameter %s, whose base is %s)", cname,
                              basename);
    else
      tether_lint__buf_printf(&h, " (known by its base %s: the parse does not declare %s)",
                              basename, cname);
    how = h.p;
    x->by_name++;
  } else if (!cls.resolved) {
    x->unknown_classes++;
    if (x->unknown.n < 5) tether_lint__strlist_add_unique(&x->unknown, cname);
  }
  CXCursor c = cls.resolved ? direct_lookup_class(x, cname) : clang_getNullCursor();
  char q[512] = "";
  if (!clang_Cursor_isNull(c)) direct_qualified_name(c, q, sizeof q);
  direct_reg *reg = direct_add_reg(x, cname, q, cat, how);
  if (!reg) return;
  /* A typedef of a template's specialization (DenseI32ArrayAttr) reads better as written. */
  if (!clang_Cursor_isNull(c) && !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c)))
    reg->display = tether_lint__strdup(cname);
  reg->tether = tether;
  reg->nodelete = nodelete;
  reg->lib = lib;
  reg->at = direct_tok_loc(x, k, start);
  if (cat == DIRECT_CONTEXT && nodelete) x->immortal_context = 1;
}

/* ---- bound callables ------------------------------------------------------------------------- */

static const char *const policies[] = {
    "reference",      "reference_internal",
    "automatic",      "automatic_reference",
    "take_ownership", "copy",
    "move",           "none",
};

static const char *def_name(const struct direct_toks *k, size_t i) {
  return i < k->n ? direct_def_method(k->t[i].s) : NULL;
}

static void token_def(direct_ctx *x, struct direct_toks *k, size_t i) {
  const char *method = def_name(k, i);
  size_t open = i + 1;
  if (!method || !(direct_tok_is(k, i - 1, ".") || direct_tok_is(k, i - 1, "->")) ||
      !direct_tok_is(k, open, "(") || k->match[open] == NO_MATCH)
    return;
  if (direct_ast_judged(x, k->t[i].offset)) return;
  size_t close = k->match[open];
  direct_site site;
  memset(&site, 0, sizeof site);
  site.method = method;
  site.at = direct_tok_loc(x, k, i);
  if (k->t[open + 1].kind == CXToken_Literal && k->t[open + 1].s[0] == '"') {
    const char *s = k->t[open + 1].s;
    size_t n = strlen(s);
    snprintf(site.name, sizeof site.name, "%.*s", (int)(n >= 2 ? n - 2 : 0), s + 1);
  }
  for (size_t j = open + 1; j < close; j++) {
    if (!direct_tok_is(k, j - 1, "::")) continue;
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++)
      if (direct_tok_is(k, j, policies[p]) && !site.policy[0])
        snprintf(site.policy, sizeof site.policy, "%s", policies[p]);
  }
  x->tok_defs++;
  int done = 0;
  size_t r[16][2];
  int na = direct_tok_split_args(k, open + 1, close, r, 16);
  for (int a = 0; a < na; a++) {
    size_t from = r[a][0], to = r[a][1];
    /* Through the library's pass-through wrappers: cpp_function(f, ...), overload_cast<...>(f). */
    for (int hops = 0; hops < 3; hops++) {
      size_t j = from;
      while (j < to && (direct_tok_ident(k, j) || direct_tok_is(k, j, "::"))) j++;
      if (j > from &&
          (direct_tok_is(k, j - 1, "cpp_function") || direct_tok_is(k, j - 1, "overload_cast"))) {
        if (direct_tok_is(k, j, "<")) {
          size_t c = direct_tok_angle_close(k, j, to);
          if (c == NO_MATCH) break;
          j = c + 1;
        }
        if (!direct_tok_is(k, j, "(") || k->match[j] == NO_MATCH || k->match[j] >= to) break;
        size_t in[4][2];
        if (direct_tok_split_args(k, j + 1, k->match[j], in, 4) < 1) break;
        from = in[0][0];
        to = in[0][1];
        continue;
      }
      break;
    }
    direct_tlambda l;
    if (direct_tok_is(k, from, "[") && direct_tok_parse_lambda(k, from, to, &l)) {
      direct_tok_judge_lambda(x, k, &site, from, &l, &done);
    } else if (a > 0) {
      direct_tok_judge_pointer(x, k, &site, from, to, &done);
    }
  }
}

void direct_token_pass(direct_ctx *x, int defs) {
  /* A file that compiles has nothing the AST lost but its templates' dependent code. */
  if (!x->errors && !x->templates.n) return;
  struct direct_toks *k = load(x);
  /* A file that binds something else than MLIR (a game's nb::class_<Block>) is not this family's.
   */
  if (!k || !k->binding || !k->mlir_named) return;
  for (size_t i = 1; i < k->n; i++) {
    if (k->skip[i] || !direct_tok_ident(k, i)) continue;
    if (!x->errors && !direct_ranges_has(&x->templates, k->t[i].offset)) continue;
    if (!defs && direct_tok_is(k, i, "class_")) token_registration(x, k, i);
    if (defs && def_name(k, i)) token_def(x, k, i);
  }
}
