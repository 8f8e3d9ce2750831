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
 * Invariant: a registration or `.def` the AST judged (direct_ast.c marked it) is never judged here;
 * preprocessor directives are skipped (a macro's body is the AST's, where it is used); a name that
 * resolves nowhere is never classified by its spelling, except MLIR's own class names when the
 * parse has no MLIR at all. Every token finding is reported at its token in the main file, so
 * NOLINT comments apply as to any other finding. */
#include "lint/direct/direct.h"
#include "lint/utils/bind_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tether_lint_token ttok;

#define NO_MATCH ((size_t)-1)

struct direct_toks {
  tether_lint_tokens tk;
  ttok *t;
  size_t n;
  size_t *match;                 /* matching (, [ or { and back, or NO_MATCH */
  unsigned char *skip;           /* 1: in a preprocessor directive */
  tether_lint__strlist libs;     /* qualifiers naming pybind11 or nanobind ... */
  tether_lint__strlist lib_kind; /* ... and which ("p" or "n"), at the same index */
  int bare;                      /* `using namespace pybind11/nanobind`: class_ unqualified */
  int bare_lib;
  int binding;  /* the file names pybind11 or nanobind at all */
  size_t *errs; /* offsets of the main file's errors, sorted */
  size_t nerrs;
  int mlir_known; /* the parse declares mlir::Operation */
  int mlir_named; /* the file includes a header under mlir/ or names namespace mlir */
  int using_mlir; /* `using namespace mlir;`, or code written in namespace mlir */
};

static int is(const struct direct_toks *k, size_t i, const char *s) {
  return i < k->n && strcmp(k->t[i].s, s) == 0;
}

static int ident(const struct direct_toks *k, size_t i) {
  return i < k->n && k->t[i].kind == CXToken_Identifier;
}

/* ---- loading --------------------------------------------------------------------------------- */

static void mark_directives(direct_ctx *x, struct direct_toks *k) {
  size_t size = 0;
  const char *text = x->main ? clang_getFileContents(x->tu, x->main, &size) : NULL;
  tether_lint__lines li;
  memset(&li, 0, sizeof li);
  if (!text || tether_lint__lines_build(&li, text, size) != 0) return;
  for (size_t i = 0; i < k->n; i++) {
    if (!is(k, i, "#") || (i > 0 && k->t[i - 1].line == k->t[i].line)) continue;
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

static int errors_in(const struct direct_toks *k, size_t from, size_t to) {
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
    if (ident(k, i) && (is(k, i, "pybind11") || is(k, i, "nanobind") ||
                        is(k, i, "PYBIND11_MODULE") || is(k, i, "NB_MODULE")))
      k->binding = 1;
    if (k->t[i].kind == CXToken_Literal &&
        (strstr(k->t[i].s, "pybind11/") || strstr(k->t[i].s, "nanobind/")))
      k->binding = 1;
    if ((is(k, i, "py") || is(k, i, "nb")) && is(k, i + 1, "::") &&
        (is(k, i + 2, "module_") || is(k, i + 2, "module") || is(k, i + 2, "class_")))
      k->binding = 1;
    if (k->skip[i]) continue;
    /* namespace X = pybind11; */
    if (is(k, i, "namespace") && ident(k, i + 1) && is(k, i + 2, "=") &&
        (is(k, i + 3, "pybind11") || is(k, i + 3, "nanobind")) && is(k, i + 4, ";"))
      add_lib(k, k->t[i + 1].s, is(k, i + 3, "pybind11") ? "p" : "n");
    /* using namespace pybind11; (or an alias of it) */
    if (is(k, i, "using") && is(k, i + 1, "namespace") && ident(k, i + 2) && is(k, i + 3, ";")) {
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
    if ((ident(k, i) && is(k, i, "mlir")) ||
        (k->t[i].kind == CXToken_Literal && strstr(k->t[i].s, "mlir/")))
      k->mlir_named = 1;
    if (is(k, i, "using") && is(k, i + 1, "namespace") && is(k, i + 2, "mlir") && is(k, i + 3, ";"))
      k->using_mlir = 1;
    if (is(k, i, "namespace") && is(k, i + 1, "mlir") && (is(k, i + 2, "{") || is(k, i + 2, "::")))
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

static CXSourceLocation loc_of(direct_ctx *x, const struct direct_toks *k, size_t i) {
  return clang_getLocationForOffset(x->tu, x->main, k->t[i].offset);
}

/* ---- types written in tokens ----------------------------------------------------------------- */

/* The tokens [from, to) joined as C++ would print them (a space only between two words). */
static void join(const struct direct_toks *k, size_t from, size_t to, char *out, size_t len) {
  size_t at = 0;
  out[0] = '\0';
  for (size_t i = from; i < to && at + 1 < len; i++) {
    int space = i > from && ident(k, i) && (ident(k, i - 1) || k->t[i - 1].kind == CXToken_Keyword);
    space |= i > from && k->t[i].kind == CXToken_Keyword && ident(k, i - 1);
    space |= i > from && (is(k, i, "*") || is(k, i, "&") || is(k, i, "&&")) &&
             (ident(k, i - 1) || k->t[i - 1].kind == CXToken_Keyword || is(k, i - 1, ">"));
    int w = snprintf(out + at, len - at, "%s%s", space ? " " : "", k->t[i].s);
    if (w < 0 || (size_t)w >= len - at) break;
    at += (size_t)w;
  }
}

/* The `>` closing the `<` at `lt` (depth counted, `>>` closing two), within [lt, end); NO_MATCH. */
static size_t angle_close(const struct direct_toks *k, size_t lt, size_t end) {
  int depth = 0;
  for (size_t i = lt; i < end && i < k->n; i++) {
    if (k->skip[i]) return NO_MATCH;
    if (is(k, i, "<"))
      depth++;
    else if (is(k, i, ">"))
      depth--;
    else if (is(k, i, ">>"))
      depth -= 2;
    else if (is(k, i, "(") || is(k, i, "[")) {
      if (k->match[i] == NO_MATCH) return NO_MATCH;
      i = k->match[i];
    } else if (is(k, i, ";") || is(k, i, "{") || is(k, i, "}")) {
      return NO_MATCH;
    }
    if (depth <= 0) return i;
  }
  return NO_MATCH;
}

/* Splits [from, to) at commas outside brackets and angle brackets: up to `max` ranges. */
static int split_args(const struct direct_toks *k, size_t from, size_t to, size_t (*r)[2],
                      int max) {
  int n = 0, angle = 0;
  size_t start = from;
  for (size_t i = from; i < to; i++) {
    if ((is(k, i, "(") || is(k, i, "[") || is(k, i, "{")) && k->match[i] != NO_MATCH &&
        k->match[i] < to) {
      i = k->match[i];
      continue;
    }
    if (is(k, i, "<") && i > from && ident(k, i - 1)) angle++;
    if (is(k, i, ">") && angle > 0) angle--;
    if (is(k, i, ">>")) angle = angle > 1 ? angle - 2 : 0;
    if (is(k, i, ",") && angle == 0) {
      if (n < max) {
        r[n][0] = start;
        r[n][1] = i;
        n++;
      }
      start = i + 1;
    }
  }
  if (start < to && n < max) {
    r[n][0] = start;
    r[n][1] = to;
    n++;
  }
  return n;
}

static int is_qualifier_word(const struct direct_toks *k, size_t i) {
  return is(k, i, "const") || is(k, i, "volatile") || is(k, i, "typename") || is(k, i, "struct") ||
         is(k, i, "class") || is(k, i, "&") || is(k, i, "&&") || is(k, i, "*");
}

/* MLIR's class names, for a parse that has no MLIR at all (its headers were not found). */
static int cat_by_mlir_name(const char *name) {
  static const struct {
    const char *n;
    int cat;
  } names[] = {
      {"Operation", DIRECT_OPERATION}, {"Block", DIRECT_BLOCK},
      {"Region", DIRECT_REGION},       {"OpState", DIRECT_OP},
      {"Value", DIRECT_VALUE},         {"OpResult", DIRECT_VALUE},
      {"BlockArgument", DIRECT_VALUE}, {"OpOperand", DIRECT_OPERAND},
      {"Type", DIRECT_TYPE},           {"Attribute", DIRECT_ATTRIBUTE},
      {"Location", DIRECT_LOCATION},   {"PassManager", DIRECT_PASSMANAGER},
      {"MLIRContext", DIRECT_CONTEXT},
  };
  if (strncmp(name, "mlir::", 6) == 0) name += 6;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].n, name) == 0) return names[i].cat;
  if (strcmp(name, "OpBuilder::InsertPoint") == 0) return DIRECT_INSERTPOINT;
  return DIRECT_NONE;
}

static const char *const containers[] = {
    "vector",   "SmallVector", "SmallVectorImpl", "optional",  "pair",
    "tuple",    "ArrayRef",    "MutableArrayRef", "FailureOr", "iterator_range",
    "set",      "map",         "unordered_map",   "list",      "deque",
    "DenseMap", "SetVector",   "Optional",
};

static int in_names(const char *s, const char *const *l, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, l[i]) == 0) return 1;
  return 0;
}

/* What a type written in tokens is. */
typedef struct ttype {
  int cat;           /* its class's category (or its element's, in a container) */
  int resolved;      /* the class's declaration was found (or the file registers it) */
  int in_container;  /* the category is an element's */
  int callback;      /* std::function whose parameters include raw IR (cat is theirs) */
  char written[256]; /* as written, for messages ("Block *") */
  char name[256];    /* the class's name as written, without qualifiers or arguments */
} ttype;

static void classify_tokens(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to,
                            ttype *out, int depth);

/* The category of a class named by a qualified name written in tokens (without arguments). */
static int cat_of_name(direct_ctx *x, const struct direct_toks *k, const char *name,
                       int *resolved) {
  /* The standard library's and LLVM's classes are never MLIR's (and are not indexed). */
  if (!strncmp(name, "std::", 5) || !strncmp(name, "llvm::", 6)) {
    *resolved = 1;
    return DIRECT_NONE;
  }
  CXCursor c = direct_lookup_class(x, name);
  if (!clang_Cursor_isNull(c)) {
    *resolved = 1;
    return direct_classify_decl(x, c);
  }
  const direct_reg *r = direct_find_reg(x, name);
  if (r && r->cat != DIRECT_NONE) {
    *resolved = 1;
    return r->cat;
  }
  /* MLIR's own names, when the parse does not declare them (the headers were not found, or are of
   * another MLIR): only in a file that names MLIR, spelled mlir::X or after `using namespace mlir`
   * or inside namespace mlir (a game's `Block` is not MLIR's). */
  if (k->mlir_named && (!strncmp(name, "mlir::", 6) || (k->using_mlir && !strstr(name, "::")))) {
    int cat = cat_by_mlir_name(name);
    if (cat != DIRECT_NONE) *resolved = 1;
    return cat;
  }
  return DIRECT_NONE;
}

static void classify_tokens(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to,
                            ttype *out, int depth) {
  memset(out, 0, sizeof *out);
  join(k, from, to, out->written, sizeof out->written);
  while (from < to && is_qualifier_word(k, from)) from++;
  while (to > from && is_qualifier_word(k, to - 1)) to--;
  if (from >= to || depth > 4) return;
  /* The qualified name, up to a `<`. */
  char *name = out->name;
  size_t i = from, at = 0;
  name[0] = '\0';
  if (is(k, i, "::")) i++;
  while (i < to && (ident(k, i) || is(k, i, "::"))) {
    int w = snprintf(name + at, sizeof out->name - at, "%s", k->t[i].s);
    if (w < 0 || (size_t)w >= sizeof out->name - at) return;
    at += (size_t)w;
    i++;
  }
  if (!name[0]) return;
  const char *last = strrchr(name, ':');
  last = last ? last + 1 : name;
  if (i < to && is(k, i, "<")) {
    /* A `>>` closing this and the enclosing list ends the range the caller gave. */
    size_t close = angle_close(k, i, to);
    if (close == NO_MATCH) close = to;
    if (!strcmp(last, "unique_ptr") || !strcmp(last, "shared_ptr") ||
        !strcmp(last, "OwningOpRef")) {
      out->resolved = 1; /* an owner: nothing raw */
      return;
    }
    size_t r[8][2];
    if (!strcmp(last, "function")) {
      /* std::function<R(A, B)>: the parameters the callback is given. */
      size_t lp = i + 1;
      while (lp < close && !is(k, lp, "(")) lp++;
      if (lp >= close || k->match[lp] == NO_MATCH || k->match[lp] > close) return;
      int na = split_args(k, lp + 1, k->match[lp], r, 8);
      for (int a = 0; a < na; a++) {
        ttype e;
        classify_tokens(x, k, r[a][0], r[a][1], &e, depth + 1);
        if (direct_is_raw_ir(e.cat)) {
          out->cat = e.cat;
          out->resolved = 1;
          out->callback = 1;
          return;
        }
      }
      return;
    }
    if (in_names(last, containers, sizeof containers / sizeof containers[0])) {
      int na = split_args(k, i + 1, close, r, 8);
      for (int a = 0; a < na; a++) {
        ttype e;
        classify_tokens(x, k, r[a][0], r[a][1], &e, depth + 1);
        if (direct_is_raw_ir(e.cat)) {
          out->cat = e.cat;
          out->resolved = 1;
          out->in_container = 1;
          return;
        }
      }
      out->resolved = 1;
      return;
    }
  }
  out->cat = cat_of_name(x, k, name, &out->resolved);
}

/* ---- registrations --------------------------------------------------------------------------- */

/* The library a `class_` at `i` belongs to (TETHER_LINT_BIND_*), and where its spelling starts. */
static int registration_library(const struct direct_toks *k, size_t i, size_t *start) {
  *start = i;
  if (i >= 2 && is(k, i - 1, "::") && ident(k, i - 2)) {
    for (size_t l = 0; l < k->libs.n; l++)
      if (strcmp(k->libs.v[l], k->t[i - 2].s) == 0) {
        *start = i - 2;
        if (*start >= 1 && is(k, *start - 1, "::")) (*start)--;
        return k->lib_kind.v[l][0] == 'n' ? TETHER_LINT_BIND_NANOBIND : TETHER_LINT_BIND_PYBIND11;
      }
    return TETHER_LINT_BIND_NONE;
  }
  if (i >= 1 && is(k, i - 1, "::")) return TETHER_LINT_BIND_NONE;
  return k->bare ? k->bare_lib : TETHER_LINT_BIND_NONE;
}

static int mentions(const struct direct_toks *k, size_t from, size_t to, const char *s) {
  for (size_t i = from; i < to; i++)
    if (is(k, i, s)) return 1;
  return 0;
}

/* Is the type written at [from, to) a type parameter of one of the main file's templates? */
static int is_template_parameter(direct_ctx *x, const struct direct_toks *k, size_t from,
                                 size_t to) {
  return to == from + 1 && ident(k, from) && direct_ranges_has(&x->templates, k->t[from].offset) &&
         tether_lint__strlist_has(&x->template_params, k->t[from].s);
}

static void token_registration(direct_ctx *x, struct direct_toks *k, size_t i) {
  size_t start;
  int lib = registration_library(k, i, &start);
  if (lib == TETHER_LINT_BIND_NONE || !is(k, i + 1, "<")) return;
  size_t close = angle_close(k, i + 1, k->n);
  if (close == NO_MATCH) return;
  /* A construction: `class_<...>(`, or a variable `class_<...> name(` / `{` / `=`. */
  size_t after = close + 1;
  if (!(is(k, after, "(") || (ident(k, after) && (is(k, after + 1, "(") || is(k, after + 1, "{") ||
                                                  is(k, after + 1, "=")))))
    return;
  if (direct_ast_judged(x, k->t[i].offset)) return;
  size_t r[8][2];
  int na = split_args(k, i + 2, close, r, 8);
  if (na < 1) return;
  x->tok_regs++;
  ttype cls;
  classify_tokens(x, k, r[0][0], r[0][1], &cls, 0);
  int tether = 0, nodelete = 0, base = DIRECT_NONE;
  char basename[256] = "";
  if (cls.cat == DIRECT_TETHER || mentions(k, r[0][0], r[0][1], "tether")) tether = 1;
  const char *cname = cls.name[0] ? cls.name : cls.written;
  for (int a = 1; a < na; a++) {
    if (mentions(k, r[a][0], r[a][1], "tether")) tether = 1;
    if (mentions(k, r[a][0], r[a][1], "nodelete")) nodelete = 1;
    ttype b;
    classify_tokens(x, k, r[a][0], r[a][1], &b, 0);
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
  reg->at = loc_of(x, k, start);
  if (cat == DIRECT_CONTEXT && nodelete) x->immortal_context = 1;
}

/* ---- bound callables ------------------------------------------------------------------------- */

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

static const char *const policies[] = {
    "reference",      "reference_internal",
    "automatic",      "automatic_reference",
    "take_ownership", "copy",
    "move",           "none",
};

/* A variable a body's tokens declare, with its type's tokens. */
typedef struct tvar {
  size_t name, tfrom, tto;
} tvar;

typedef struct tvars {
  tvar v[64];
  int n;
} tvars;

/* Parameters [from, to) of a lambda or function: `Type name` each. */
static void params_of(const struct direct_toks *k, size_t from, size_t to, tvars *vs) {
  size_t r[32][2];
  int na = split_args(k, from, to, r, 32);
  for (int a = 0; a < na && vs->n < 64; a++) {
    size_t e = r[a][1];
    for (size_t j = r[a][0]; j < r[a][1]; j++)
      if (is(k, j, "=")) e = j; /* a default argument */
    if (e > r[a][0] + 1 && ident(k, e - 1)) vs->v[vs->n++] = (tvar){e - 1, r[a][0], e - 1};
  }
}

/* Simple local declarations of a body: `[const] Type [*&] name =|;|(|{` at a statement's start. */
static void locals_of(const struct direct_toks *k, size_t open, size_t close, tvars *vs) {
  for (size_t i = open + 1; i < close && vs->n < 64; i++) {
    if (!(is(k, i - 1, "{") || is(k, i - 1, ";") || is(k, i - 1, "}"))) continue;
    size_t j = i;
    while (j < close && (ident(k, j) || is(k, j, "::") || is_qualifier_word(k, j))) j++;
    if (j < close && is(k, j, "<")) {
      size_t c = angle_close(k, j, close);
      if (c == NO_MATCH) continue;
      j = c + 1;
      while (j < close && (is(k, j, "*") || is(k, j, "&") || is(k, j, "&&"))) j++;
      if (!ident(k, j)) continue;
      j++;
    }
    if (j <= i + 1 || j >= close || !ident(k, j - 1)) continue;
    if (!(is(k, j, "=") || is(k, j, ";") || is(k, j, "(") || is(k, j, "{"))) continue;
    if (is(k, i, "return") || is(k, i, "throw") || is(k, i, "delete")) continue;
    vs->v[vs->n++] = (tvar){j - 1, i, j - 1};
  }
}

static const tvar *var_named(const struct direct_toks *k, const tvars *vs, const char *name) {
  for (int i = vs->n; i-- > 0;)
    if (!strcmp(k->t[vs->v[i].name].s, name)) return &vs->v[i];
  return NULL;
}

/* The category of the receiver of a call whose `.`/`->` is at `dot`: a variable's declared type
 * (-1 when the receiver is not a known variable, DIRECT_NONE when it is but its class is none). */
static int receiver_cat(direct_ctx *x, const struct direct_toks *k, const tvars *vs, size_t dot) {
  if (dot == 0 || !ident(k, dot - 1)) return -1;
  const tvar *v = var_named(k, vs, k->t[dot - 1].s);
  if (!v) return -1;
  ttype t;
  classify_tokens(x, k, v->tfrom, v->tto, &t, 0);
  if (!t.resolved) return -1;
  return t.cat;
}

/* Is the receiver before `dot` a call of getOperations() or getBlocks()? */
static int receiver_is_ir_list(const struct direct_toks *k, size_t dot) {
  if (dot < 3 || !is(k, dot - 1, ")") || k->match[dot - 1] == NO_MATCH) return 0;
  size_t open = k->match[dot - 1];
  return open >= 1 && (is(k, open - 1, "getOperations") || is(k, open - 1, "getBlocks"));
}

static int tok_body_frees(direct_ctx *x, const struct direct_toks *k, size_t open, size_t close,
                          const tvars *params, char *why, size_t len) {
  tvars vs = *params;
  locals_of(k, open, close, &vs);
  for (size_t i = open + 1; i < close; i++) {
    if (!ident(k, i) || (!is(k, i + 1, "(") && !is(k, i + 1, "<"))) continue;
    const char *n = k->t[i].s;
    int member = i > 0 && (is(k, i - 1, ".") || is(k, i - 1, "->"));
    size_t args_close = is(k, i + 1, "(") ? k->match[i + 1] : NO_MATCH;
    int noargs = args_close == i + 2;
    const char *by = direct_frees_by_name(n);
    if (by) {
      snprintf(why, len, "%s%s erases or replaces IR", by, n);
      return 1;
    }
    if (!member) {
      /* A helper of the file. */
      CXCursor fn = direct_lookup_file_function(x, n);
      char inner[256];
      if (!clang_Cursor_isNull(fn) && direct_body_frees(x, fn, inner, sizeof inner)) {
        snprintf(why, len, "through '%s': %s", n, inner);
        return 1;
      }
      continue;
    }
    int rc = receiver_cat(x, k, &vs, i - 1);
    if (!strcmp(n, "erase") || !strcmp(n, "destroy")) {
      if (receiver_is_ir_list(k, i - 1)) {
        snprintf(why, len, "erase on a list of operations or blocks deletes what it removes");
        return 1;
      }
      if (noargs && (rc == -1 || rc == DIRECT_OPERATION || rc == DIRECT_OP || rc == DIRECT_BLOCK)) {
        snprintf(why, len, "%s() erases %s", n,
                 rc == DIRECT_BLOCK ? "the block and its operations"
                                    : "an operation or block and everything in it");
        return 1;
      }
    } else if (!strcmp(n, "clear") || !strcmp(n, "pop_back") || !strcmp(n, "pop_front")) {
      if (receiver_is_ir_list(k, i - 1) || (noargs && rc == DIRECT_BLOCK)) {
        snprintf(why, len, "%s on a block's operations deletes them", n);
        return 1;
      }
    } else if (!strcmp(n, "run") && rc == DIRECT_PASSMANAGER) {
      snprintf(why, len,
               "PassManager::run runs passes, which may erase or replace any operation "
               "under the one it runs on");
      return 1;
    } else {
      CXCursor fn = direct_lookup_file_function(x, n);
      char inner[256];
      if (!clang_Cursor_isNull(fn) && direct_body_frees(x, fn, inner, sizeof inner)) {
        snprintf(why, len, "through '%s': %s", n, inner);
        return 1;
      }
    }
  }
  return 0;
}

/* Does a body return a value (`return x;`, outside the lambdas nested in it)? */
/* The next `return <value>` of a body at or after `from`, outside the lambdas nested in it (the
 * index of `return`), or NO_MATCH. */
static size_t next_return(const struct direct_toks *k, size_t from, size_t close) {
  for (size_t i = from; i < close; i++) {
    if (is(k, i, "[") && k->match[i] != NO_MATCH && is(k, k->match[i] + 1, "(")) {
      /* A nested lambda: skip its body. */
      size_t j = k->match[k->match[i] + 1];
      while (j != NO_MATCH && j < close && !is(k, j, "{")) j++;
      if (j != NO_MATCH && j < close && k->match[j] != NO_MATCH) i = k->match[j];
      continue;
    }
    if (is(k, i, "return") && !is(k, i + 1, ";")) return i;
  }
  return NO_MATCH;
}

static int returns_value(const struct direct_toks *k, size_t open, size_t close) {
  return next_return(k, open + 1, close) != NO_MATCH;
}

/* The class a type written in tokens names (cv, `*` and `&` aside; not a template), or null. */
static CXCursor tokens_class(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to) {
  while (from < to && is_qualifier_word(k, from)) from++;
  while (to > from && is_qualifier_word(k, to - 1)) to--;
  char name[256];
  size_t at = 0;
  name[0] = '\0';
  for (size_t i = from; i < to; i++) {
    if (!ident(k, i) && !is(k, i, "::")) return clang_getNullCursor();
    int w = snprintf(name + at, sizeof name - at, "%s", k->t[i].s);
    if (w < 0 || (size_t)w >= sizeof name - at) return clang_getNullCursor();
    at += (size_t)w;
  }
  if (!name[0] || !strncmp(name, "std::", 5) || !strncmp(name, "llvm::", 6))
    return clang_getNullCursor();
  return direct_lookup_class(x, name);
}

/* The class a type is or points to, and whether that is through a pointer. */
static CXCursor class_of_type(CXType t, int *pointer) {
  t = clang_getCanonicalType(t);
  *pointer = t.kind == CXType_Pointer;
  if (t.kind == CXType_Pointer || t.kind == CXType_LValueReference ||
      t.kind == CXType_RValueReference)
    t = clang_getCanonicalType(clang_getPointeeType(t));
  CXCursor d = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(d)) return d;
  CXCursor def = clang_getCursorDefinition(d);
  return clang_Cursor_isNull(def) ? d : def;
}

/* The type of a simple expression written in tokens [from, to) (`v`, `v.m(...)`, `v->m(...)`,
 * `Cls::m(...)` and chains of them), through the declarations the parse saw; an invalid type when
 * any step does not resolve (a template method, an unknown variable...). */
static CXType expr_type(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to,
                        const tvars *vs) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  while (from < to && (is(k, from, "&") || is(k, from, "*") || is(k, from, "("))) from++;
  if (from >= to || !ident(k, from)) return none;
  CXCursor cls = clang_getNullCursor();
  CXType cur = none;
  int pointer = 0;
  size_t i = from;
  const tvar *v = var_named(k, vs, k->t[i].s);
  if (v && !is(k, i + 1, "::")) {
    cls = tokens_class(x, k, v->tfrom, v->tto);
    pointer = 0;
    for (size_t j = v->tfrom; j < v->tto; j++) pointer |= is(k, j, "*");
    i++;
  } else {
    /* Cls::m(...): a static member of a class. */
    size_t j = i;
    while (j + 2 < to && ident(k, j) && is(k, j + 1, "::") && ident(k, j + 2)) j += 2;
    if (j == i || !is(k, j + 1, "(")) return none;
    cls = tokens_class(x, k, i, j - 1);
    i = j - 1; /* at the `::` before the member */
  }
  while (i < to && !clang_Cursor_isNull(cls)) {
    int arrow = is(k, i, "->");
    if (!arrow && !is(k, i, ".") && !is(k, i, "::")) break;
    if (!ident(k, i + 1) || !is(k, i + 2, "(") || k->match[i + 2] == NO_MATCH) return none;
    if (arrow && !pointer) {
      /* OpState's operator->: the operation. */
      CXCursor op = direct_lookup_member(x, cls, "operator->");
      if (clang_Cursor_isNull(op)) return none;
      cls = class_of_type(clang_getCursorResultType(op), &pointer);
      if (clang_Cursor_isNull(cls)) return none;
    }
    CXCursor m = direct_lookup_member(x, cls, k->t[i + 1].s);
    if (clang_getCursorKind(m) != CXCursor_CXXMethod) return none;
    cur = clang_getCursorResultType(m);
    if (cur.kind == CXType_Invalid) return none;
    cls = class_of_type(cur, &pointer);
    i = k->match[i + 2] + 1;
  }
  return i == to ? cur : none;
}

/* A lambda written at `lb` (its `[`): its parts' token ranges. */
typedef struct tlambda {
  size_t params_open, params_close; /* NO_MATCH without a parameter list */
  size_t ret_from, ret_to;          /* the written return type, or equal */
  size_t body_open, body_close;
} tlambda;

static int parse_lambda(const struct direct_toks *k, size_t lb, size_t end, tlambda *l) {
  if (!is(k, lb, "[") || k->match[lb] == NO_MATCH) return 0;
  size_t i = k->match[lb] + 1;
  l->params_open = l->params_close = NO_MATCH;
  l->ret_from = l->ret_to = 0;
  if (is(k, i, "(")) {
    if (k->match[i] == NO_MATCH) return 0;
    l->params_open = i;
    l->params_close = k->match[i];
    i = k->match[i] + 1;
  }
  while (i < end && (is(k, i, "mutable") || is(k, i, "constexpr") || is(k, i, "noexcept"))) {
    i++;
    if (is(k, i, "(") && k->match[i] != NO_MATCH) i = k->match[i] + 1;
  }
  if (is(k, i, "->")) {
    l->ret_from = ++i;
    while (i < end && !is(k, i, "{")) i++;
    l->ret_to = i;
  }
  if (!is(k, i, "{") || k->match[i] == NO_MATCH || k->match[i] > end) return 0;
  l->body_open = i;
  l->body_close = k->match[i];
  return 1;
}

/* The LambdaExpr libclang kept for the lambda at `lb`, or the null cursor. */
static CXCursor ast_lambda(direct_ctx *x, const struct direct_toks *k, size_t lb) {
  CXCursor c = clang_getCursor(x->tu, loc_of(x, k, lb));
  return clang_getCursorKind(c) == CXCursor_LambdaExpr ? c : clang_getNullCursor();
}

static void judge_lambda(direct_ctx *x, const struct direct_toks *k, const direct_site *site,
                         size_t lb, const tlambda *l, int *done) {
  CXCursor lam = ast_lambda(x, k, lb);
  int clean = !errors_in(k, k->t[lb].offset, k->t[l->body_close].offset);
  tether_lint_bind_callable cb = {0};
  int have = !clang_Cursor_isNull(lam) && tether_lint__bind_callable(lam, &cb);
  if (have && clean) {
    /* libclang has all of it: the AST decides, as in a file that compiles. */
    direct_judge_callable(x, site, cb.decl, cb.result, done);
    free(cb.name);
    return;
  }
  /* direct-frees-ir: what the AST kept of the body, then its tokens. */
  char why[512];
  tvars ps = {.n = 0};
  if (l->params_open != NO_MATCH) params_of(k, l->params_open + 1, l->params_close, &ps);
  if (!(*done & DIRECT_DONE_FREES) && tether_lint__file_rule_enabled(x->f, DIRECT_RULE_FREES) &&
      ((have && direct_body_frees(x, cb.decl, why, sizeof why)) ||
       tok_body_frees(x, k, l->body_open, l->body_close, &ps, why, sizeof why))) {
    direct_report_frees(x, site, why);
    *done |= DIRECT_DONE_FREES;
  }
  free(cb.name);
  if ((*done & DIRECT_DONE_RAW) || !tether_lint__file_rule_enabled(x->f, DIRECT_RULE_RAW)) return;
  /* direct-raw-return: the written return type, then callbacks among the parameters. */
  if (l->ret_to > l->ret_from) {
    ttype t;
    classify_tokens(x, k, l->ret_from, l->ret_to, &t, 0);
    if (direct_is_raw_ir(t.cat) && !t.callback && !direct_held(x, t.name, t.cat)) {
      direct_report_raw(x, site, t.written, t.cat, 0, t.in_container);
      *done |= DIRECT_DONE_RAW;
      return;
    }
  } else if (returns_value(k, l->body_open, l->body_close)) {
    /* No return type written: the type of what it returns, where the declarations tell it. */
    tvars vs = ps;
    locals_of(k, l->body_open, l->body_close, &vs);
    int judged = 0;
    for (size_t r = next_return(k, l->body_open + 1, l->body_close); r != NO_MATCH && !judged;
         r = next_return(k, r + 1, l->body_close)) {
      size_t end = r + 1;
      while (end < l->body_close && !is(k, end, ";")) {
        if ((is(k, end, "(") || is(k, end, "[") || is(k, end, "{")) && k->match[end] != NO_MATCH)
          end = k->match[end];
        end++;
      }
      /* `return v;`: the type v was declared with (`std::vector<Value> v;`). */
      const tvar *v = end == r + 2 && ident(k, r + 1) ? var_named(k, &vs, k->t[r + 1].s) : NULL;
      if (v) {
        ttype vt;
        classify_tokens(x, k, v->tfrom, v->tto, &vt, 0);
        if (!vt.resolved) continue;
        judged = 1;
        if (direct_is_raw_ir(vt.cat) && !vt.callback && !direct_held(x, vt.name, vt.cat)) {
          direct_report_raw(x, site, vt.written, vt.cat, 0, vt.in_container);
          *done |= DIRECT_DONE_RAW;
          return;
        }
        continue;
      }
      CXType rt = expr_type(x, k, r + 1, end, &vs);
      if (rt.kind == CXType_Invalid) continue;
      judged = 1;
      direct_ret rr;
      if (direct_type_raw_ir(x, rt, &rr)) {
        if (!direct_held(x, rr.qname, rr.cat)) {
          char *ts = tether_lint__cx_take(clang_getTypeSpelling(rt));
          direct_report_raw(x, site, ts ? ts : rr.qname, rr.cat, 0, rr.in_container);
          free(ts);
          *done |= DIRECT_DONE_RAW;
          return;
        }
      }
    }
    if (!judged) x->unjudged_returns++;
  }
  for (int p = 0; p < ps.n; p++) {
    ttype t;
    classify_tokens(x, k, ps.v[p].tfrom, ps.v[p].tto, &t, 0);
    if (t.callback && !direct_held(x, t.name, t.cat)) {
      direct_report_raw(x, site, t.written, t.cat, 1, 0);
      *done |= DIRECT_DONE_RAW;
      return;
    }
  }
}

/* `&A::B::m` or `&f` (or `f`) at [from, to): the declaration it names, judged. 1 when resolved. */
static int judge_pointer(direct_ctx *x, const struct direct_toks *k, const direct_site *site,
                         size_t from, size_t to, int *done) {
  int amp = is(k, from, "&");
  if (amp) from++;
  char name[256], cls[256];
  join(k, from, to, name, sizeof name);
  for (size_t i = from; i < to; i++)
    if (!ident(k, i) && !is(k, i, "::")) return 0;
  if (to <= from) return 0;
  const char *last = strrchr(name, ':');
  CXCursor decl = clang_getNullCursor();
  if (last && last > name + 1) {
    snprintf(cls, sizeof cls, "%.*s", (int)(last - 1 - name), name);
    CXCursor c = direct_lookup_class(x, cls);
    if (!clang_Cursor_isNull(c)) decl = direct_lookup_member(x, c, last + 1);
    if (clang_Cursor_isNull(decl)) {
      /* A method of a class the parse does not declare, registered by base: erase still erases. */
      const direct_reg *r = direct_find_reg(x, cls);
      if (r && (r->cat == DIRECT_OP || r->cat == DIRECT_OPERATION || r->cat == DIRECT_BLOCK) &&
          (!strcmp(last + 1, "erase") || !strcmp(last + 1, "destroy")) &&
          !(*done & DIRECT_DONE_FREES) && tether_lint__file_rule_enabled(x->f, DIRECT_RULE_FREES)) {
        char why[300];
        snprintf(why, sizeof why, "%s::%s erases it and everything in it", cls, last + 1);
        direct_report_frees(x, site, why);
        *done |= DIRECT_DONE_FREES;
        return 1;
      }
      if (amp) {
        x->unjudged_pointers++;
        if (x->unknown_owners.n < 5)
          tether_lint__strlist_add_unique(&x->unknown_owners, cls);
        else if (!tether_lint__strlist_has(&x->unknown_owners, cls))
          x->unknown_owners_more = 1;
      }
      return 0;
    }
  } else {
    decl = direct_lookup_file_function(x, name);
    if (clang_Cursor_isNull(decl)) return 0;
  }
  CXType result = clang_getCursorKind(decl) == CXCursor_FieldDecl ? clang_getCursorType(decl)
                                                                  : clang_getCursorResultType(decl);
  direct_judge_callable(x, site, decl, result, done);
  return 1;
}

static const char *def_name(const struct direct_toks *k, size_t i) {
  for (size_t m = 0; m < sizeof def_methods / sizeof def_methods[0]; m++)
    if (is(k, i, def_methods[m])) return def_methods[m];
  return NULL;
}

static void token_def(direct_ctx *x, struct direct_toks *k, size_t i) {
  const char *method = def_name(k, i);
  size_t open = i + 1;
  if (!method || !(is(k, i - 1, ".") || is(k, i - 1, "->")) || !is(k, open, "(") ||
      k->match[open] == NO_MATCH)
    return;
  if (direct_ast_judged(x, k->t[i].offset)) return;
  size_t close = k->match[open];
  direct_site site;
  memset(&site, 0, sizeof site);
  site.method = method;
  site.at = loc_of(x, k, i);
  if (k->t[open + 1].kind == CXToken_Literal && k->t[open + 1].s[0] == '"') {
    const char *s = k->t[open + 1].s;
    size_t n = strlen(s);
    snprintf(site.name, sizeof site.name, "%.*s", (int)(n >= 2 ? n - 2 : 0), s + 1);
  }
  for (size_t j = open + 1; j < close; j++) {
    if (!is(k, j - 1, "::")) continue;
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++)
      if (is(k, j, policies[p]) && !site.policy[0])
        snprintf(site.policy, sizeof site.policy, "%s", policies[p]);
  }
  x->tok_defs++;
  int done = 0;
  size_t r[16][2];
  int na = split_args(k, open + 1, close, r, 16);
  for (int a = 0; a < na; a++) {
    size_t from = r[a][0], to = r[a][1];
    /* Through the library's pass-through wrappers: cpp_function(f, ...), overload_cast<...>(f). */
    for (int hops = 0; hops < 3; hops++) {
      size_t j = from;
      while (j < to && (ident(k, j) || is(k, j, "::"))) j++;
      if (j > from && (is(k, j - 1, "cpp_function") || is(k, j - 1, "overload_cast"))) {
        if (is(k, j, "<")) {
          size_t c = angle_close(k, j, to);
          if (c == NO_MATCH) break;
          j = c + 1;
        }
        if (!is(k, j, "(") || k->match[j] == NO_MATCH || k->match[j] >= to) break;
        size_t in[4][2];
        if (split_args(k, j + 1, k->match[j], in, 4) < 1) break;
        from = in[0][0];
        to = in[0][1];
        continue;
      }
      break;
    }
    tlambda l;
    if (is(k, from, "[") && parse_lambda(k, from, to, &l)) {
      judge_lambda(x, k, &site, from, &l, &done);
    } else if (a > 0) {
      judge_pointer(x, k, &site, from, to, &done);
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
    if (k->skip[i] || !ident(k, i)) continue;
    if (!x->errors && !direct_ranges_has(&x->templates, k->t[i].offset)) continue;
    if (!defs && is(k, i, "class_")) token_registration(x, k, i);
    if (defs && def_name(k, i)) token_def(x, k, i);
  }
}
