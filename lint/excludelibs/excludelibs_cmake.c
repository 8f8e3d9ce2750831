/* exclude-libs in CMake: command invocations, and MLIR's CMake helpers that pass the flag.
 *
 * CMake: command invocations `name(args)`; arguments are bracket arguments `[=[...]=]`, quoted
 * arguments "..." (backslash escapes, line continuations) and unquoted ones (which may contain
 * generator expressions and nested parentheses); `#` comments and `#[[...]]` bracket comments are
 * skipped everywhere. A command's arguments are link flags (target_link_options, ...), values of
 * a link-flag variable or property, or plain values; printing and compiling commands are not
 * looked at.
 *
 * MLIR's AddMLIRPython.cmake links every Python extension it builds with
 * `LINKER:--exclude-libs,ALL` (add_mlir_python_extension, which add_mlir_python_modules calls for
 * each extension declared with declare_mlir_python_extension). A project that calls those
 * helpers gets the flag without writing it. The helper file of the MLIR the project uses is read
 * once per run (`[lint] mlir-cmake-dir`, else the newest installed one): every function in it that
 * passes the flag, or calls one that does, is a helper whose call sites are reported, with the
 * line of the flag as the reason.
 *
 * Invariant: at most 256 arguments of a command are kept (the rest are not scanned); a helper is
 * tainted when it passes the flag or calls a tainted one (to a fixed point). The lexer is shared
 * (excl_cmake_parse) with the link-graph reader of dialect-linked-twice. */
#include "lint/excludelibs/excludelibs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef excl_cm_arg cm_arg;

/* Length of a bracket opener "[", "="*, "[" at p, or 0; the level goes to *eq. */
static size_t bracket_open(const char *p, const char *end, size_t *eq) {
  if (p >= end || *p != '[') return 0;
  const char *q = p + 1;
  while (q < end && *q == '=') q++;
  if (q >= end || *q != '[') return 0;
  *eq = (size_t)(q - p - 1);
  return (size_t)(q - p + 1);
}

/* Finds the closing "]", "="*eq, "]" from p; returns the position of the first ']' or end. */
static const char *bracket_close(const char *p, const char *end, size_t eq) {
  for (; p < end; p++) {
    if (*p != ']') continue;
    const char *q = p + 1;
    size_t k = 0;
    while (q < end && *q == '=' && k < eq) q++, k++;
    if (k == eq && q < end && *q == ']') return p;
  }
  return end;
}

static const char *cm_skip_comment(const char *p, const char *end) {
  /* p at '#' */
  size_t eq;
  size_t ol = bracket_open(p + 1, end, &eq);
  if (ol) {
    const char *cl = bracket_close(p + 1 + ol, end, eq);
    return cl < end ? cl + eq + 2 : end;
  }
  while (p < end && *p != '\n') p++;
  return p;
}

static int cm_is(const cm_arg *a, const char *kw) {
  size_t n = strlen(kw);
  return !a->quoted && a->n == n && memcmp(a->s, kw, n) == 0;
}

static int cm_keyword(const cm_arg *a) {
  if (a->quoted || a->n < 2) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (!(isupper((unsigned char)a->s[i]) || isdigit((unsigned char)a->s[i]) || a->s[i] == '_'))
      return 0;
  return 1;
}

static int ieq(const char *a, size_t an, const char *b) {
  size_t bn = strlen(b);
  if (an != bn) return 0;
  for (size_t i = 0; i < an; i++)
    if (tolower((unsigned char)a[i]) != b[i]) return 0;
  return 1;
}

static int var_ctx(const cm_arg *var) {
  if (excl_linkish(var->s, var->n)) return EXCL_CTX_LINK;
  if (excl_compileish(var->s, var->n)) return EXCL_CTX_NONE;
  return EXCL_CTX_ASSIGN;
}

static void cm_values(excl_ctx *c, const cm_arg *a, size_t from, size_t to, int ctx) {
  for (size_t i = from; i < to; i++) excl_scan_value(c, a[i].s, a[i].n, ctx, 0);
}

static void cm_command(excl_ctx *c, const char *name, size_t nl, const cm_arg *a, size_t na) {
  static const char *const link_cmds[] = {"target_link_options", "add_link_options",
                                          "target_link_libraries", "link_libraries", NULL};
  static const char *const quiet_cmds[] = {"message",
                                           "if",
                                           "elseif",
                                           "else",
                                           "endif",
                                           "while",
                                           "endwhile",
                                           "foreach",
                                           "endforeach",
                                           "option",
                                           "return",
                                           "include",
                                           "find_package",
                                           "file",
                                           "cmake_minimum_required",
                                           "project",
                                           "function",
                                           "macro",
                                           "endfunction",
                                           "endmacro",
                                           "target_compile_options",
                                           "add_compile_options",
                                           "target_compile_definitions",
                                           "add_definitions",
                                           "add_compile_definitions",
                                           "target_include_directories",
                                           "include_directories",
                                           "separate_arguments",
                                           NULL};
  for (size_t i = 0; link_cmds[i]; i++)
    if (ieq(name, nl, link_cmds[i])) {
      cm_values(c, a, 0, na, EXCL_CTX_LINK);
      return;
    }
  for (size_t i = 0; quiet_cmds[i]; i++)
    if (ieq(name, nl, quiet_cmds[i])) return;
  if (ieq(name, nl, "set")) {
    if (na < 2) return;
    size_t end = na;
    for (size_t i = 1; i < na; i++)
      if (cm_is(&a[i], "CACHE") || cm_is(&a[i], "PARENT_SCOPE")) {
        end = i;
        break;
      }
    cm_values(c, a, 1, end, var_ctx(&a[0]));
    return;
  }
  if (ieq(name, nl, "list") || ieq(name, nl, "string")) {
    if (na < 3) return;
    if (cm_is(&a[0], "APPEND") || cm_is(&a[0], "PREPEND"))
      cm_values(c, a, 2, na, var_ctx(&a[1]));
    else if (cm_is(&a[0], "INSERT") && na >= 4)
      cm_values(c, a, 3, na, var_ctx(&a[1]));
    return;
  }
  if (ieq(name, nl, "set_property")) {
    for (size_t i = 0; i + 1 < na; i++)
      if (cm_is(&a[i], "PROPERTY")) {
        cm_values(c, a, i + 2, na, var_ctx(&a[i + 1]));
        return;
      }
    return;
  }
  if (nl > 4 && ieq(name, 4, "set_") && excl_ends_with_n(name, nl, "_properties")) {
    for (size_t i = 0; i < na; i++)
      if (cm_is(&a[i], "PROPERTIES")) {
        for (size_t k = i + 1; k + 1 < na; k += 2) cm_values(c, a, k + 1, k + 2, var_ctx(&a[k]));
        return;
      }
    return;
  }
  /* Any other command (add_library, add_custom_command, a project's own functions): arguments
   * after an upper-case keyword about linking are link flags, after one about compiling they are
   * not looked at, and the rest are plain values. */
  int ctx = EXCL_CTX_ASSIGN;
  for (size_t i = 0; i < na; i++) {
    if (cm_keyword(&a[i])) {
      ctx = excl_linkish(a[i].s, a[i].n)      ? EXCL_CTX_LINK
            : excl_compileish(a[i].s, a[i].n) ? EXCL_CTX_NONE
                                              : EXCL_CTX_ASSIGN;
      continue;
    }
    excl_scan_value(c, a[i].s, a[i].n, ctx, 0);
  }
}

/* CMake: command invocations `name(args)`; arguments are bracket arguments `[=[...]=]`, quoted
 * arguments "..." (backslash escapes, line continuations) and unquoted ones (which may contain
 * generator expressions and nested parentheses); `#` comments and `#[[...]]` bracket comments are
 * skipped everywhere. */
typedef excl_cm_callback cm_callback;

static void cm_parse(excl_ctx *c, cm_callback cb, void *ud) {
  const char *p = c->text, *end = c->text + c->len;
  cm_arg args[256];
  while (p < end) {
    if (*p == '#') {
      p = cm_skip_comment(p, end);
      continue;
    }
    if (!(isalpha((unsigned char)*p) || *p == '_')) {
      p++;
      continue;
    }
    const char *name = p;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_')) p++;
    size_t nl = (size_t)(p - name);
    const char *q = p;
    while (q < end && (*q == ' ' || *q == '\t')) q++;
    if (q >= end || *q != '(') continue;
    p = q + 1;
    size_t na = 0;
    int depth = 1;
    while (p < end && depth > 0) {
      char ch = *p;
      if (excl_is_space(ch)) {
        p++;
      } else if (ch == '#') {
        p = cm_skip_comment(p, end);
      } else if (ch == '(') {
        depth++;
        p++;
      } else if (ch == ')') {
        depth--;
        p++;
      } else if (ch == '"') {
        const char *s = ++p;
        while (p < end && *p != '"') p += (*p == '\\' && p + 1 < end) ? 2 : 1;
        if (na < 256) args[na++] = (cm_arg){s, (size_t)(p - s), 1};
        if (p < end) p++;
      } else {
        size_t eq;
        size_t ol = bracket_open(p, end, &eq);
        if (ol) {
          const char *s = p + ol;
          const char *cl = bracket_close(s, end, eq);
          if (na < 256) args[na++] = (cm_arg){s, (size_t)(cl - s), 1};
          p = cl < end ? cl + eq + 2 : end;
          continue;
        }
        /* Unquoted: up to whitespace, a parenthesis, '"' or '#'; `$<...>` keeps its inner
         * characters (a generator expression may contain anything but '>' nesting). */
        const char *s = p;
        int genex = 0;
        while (p < end) {
          if (*p == '\\' && p + 1 < end) {
            p += 2;
            continue;
          }
          if (*p == '$' && p + 1 < end && p[1] == '<') {
            genex++;
            p += 2;
            continue;
          }
          if (genex && *p == '>') {
            genex--;
            p++;
            continue;
          }
          if (!genex && (excl_is_space(*p) || *p == '(' || *p == ')' || *p == '"' || *p == '#'))
            break;
          if (genex && (*p == '\n')) break;
          p++;
        }
        if (p == s) {
          p++;
          continue;
        }
        if (na < 256) args[na++] = (cm_arg){s, (size_t)(p - s), 0};
      }
    }
    cb(c, name, nl, args, na, ud);
  }
}

void excl_cmake_parse(excl_ctx *c, excl_cm_callback cb, void *ud) {
  if (cb) cm_parse(c, cb, ud);
}

typedef struct helper {
  char name[96];
  unsigned flag_line; /* the line of the flag in the helper file (direct or through a callee) */
  char via[96];       /* the function that passes it, when not this one */
  int tainted;
} helper;

struct excl_state {
  char path[1024]; /* the helper file, "" when there is none */
  helper *h;
  size_t nh;
  excl_twice *twice; /* the run's link graph (dialect-linked-twice) */
};

typedef struct helper_scan {
  excl_state *st;
  int cur;       /* the function being read, -1 outside */
  int outer[16]; /* the enclosing functions of a nested one */
  int depth;
  /* call names seen in each function, resolved after every function is known */
  char (*pending)[2][96];
  size_t npending, cappending;
} helper_scan;

static void helper_cb(excl_ctx *c, const char *name, size_t nl, const cm_arg *a, size_t na,
                      void *ud) {
  helper_scan *hs = ud;
  excl_state *st = hs->st;
  if ((ieq(name, nl, "function") || ieq(name, nl, "macro")) && na >= 1 && a[0].n < 96) {
    helper *v = realloc(st->h, (st->nh + 1) * sizeof *v);
    if (!v) return;
    st->h = v;
    helper *h = &st->h[st->nh];
    memset(h, 0, sizeof *h);
    for (size_t i = 0; i < a[0].n; i++) h->name[i] = (char)tolower((unsigned char)a[0].s[i]);
    if (hs->depth < 16) hs->outer[hs->depth] = hs->cur;
    hs->depth++;
    hs->cur = (int)st->nh++;
    return;
  }
  if (ieq(name, nl, "endfunction") || ieq(name, nl, "endmacro")) {
    if (hs->depth > 0) hs->depth--;
    hs->cur = hs->depth < 16 && hs->depth > 0 ? hs->outer[hs->depth] : -1;
    return;
  }
  if (hs->cur < 0) return;
  helper *h = &st->h[hs->cur];
  static const char *const link_cmds[] = {"target_link_options", "add_link_options",
                                          "target_link_libraries", "link_libraries", NULL};
  for (size_t i = 0; link_cmds[i]; i++) {
    if (!ieq(name, nl, link_cmds[i])) continue;
    for (size_t k = 0; k < na && !h->tainted; k++) {
      size_t at = excl_find_flag(a[k].s, a[k].n, 0);
      if (at == (size_t)-1) continue;
      unsigned line, col;
      excl_line_col(c, (size_t)(a[k].s + at - c->text), &line, &col);
      h->tainted = 1;
      h->flag_line = line;
    }
    return;
  }
  if (nl >= 96) return;
  if (tether_lint__grow(&hs->pending, &hs->cappending, hs->npending, sizeof *hs->pending) != 0)
    return;
  snprintf(hs->pending[hs->npending][0], 96, "%s", h->name);
  for (size_t i = 0; i < nl; i++)
    hs->pending[hs->npending][1][i] = (char)tolower((unsigned char)name[i]);
  hs->pending[hs->npending][1][nl] = '\0';
  hs->npending++;
}

static int helper_index(const excl_state *st, const char *name) {
  for (size_t i = 0; i < st->nh; i++)
    if (strcmp(st->h[i].name, name) == 0) return (int)i;
  return -1;
}

/* Reads the helper file and works out which of its functions link with --exclude-libs. */
static void load_helpers(excl_state *st, const char *path) {
  char *text = NULL;
  size_t len = 0;
  if (tether_lint__read_file(path, &text, &len) != 0) return;
  snprintf(st->path, sizeof st->path, "%s", path);
  excl_ctx c = {NULL, text, len, NULL};
  helper_scan hs;
  memset(&hs, 0, sizeof hs);
  hs.st = st;
  hs.cur = -1;
  cm_parse(&c, helper_cb, &hs);
  /* Propagate through calls until nothing changes. */
  for (int changed = 1, rounds = 0; changed && rounds < 64; rounds++) {
    changed = 0;
    for (size_t i = 0; i < hs.npending; i++) {
      int from = helper_index(st, hs.pending[i][0]), to = helper_index(st, hs.pending[i][1]);
      if (from < 0 || to < 0 || st->h[from].tainted || !st->h[to].tainted) continue;
      helper *f = &st->h[from], *t = &st->h[to];
      f->tainted = 1;
      f->flag_line = t->flag_line;
      snprintf(f->via, sizeof f->via, "%s", t->via[0] ? t->via : t->name);
      changed = 1;
    }
  }
  /* An extension declared with declare_mlir_python_extension is built by
   * add_mlir_python_modules. */
  int decl = helper_index(st, "declare_mlir_python_extension");
  int mods = helper_index(st, "add_mlir_python_modules");
  if (decl >= 0 && mods >= 0 && st->h[mods].tainted && !st->h[decl].tainted) {
    st->h[decl].tainted = 1;
    st->h[decl].flag_line = st->h[mods].flag_line;
    snprintf(st->h[decl].via, sizeof st->h[decl].via, "%s",
             st->h[mods].via[0] ? st->h[mods].via : st->h[mods].name);
  }
  free(hs.pending);
  free(text);
}

/* The newest installed MLIR's AddMLIRPython.cmake, or "". */
static void installed_helpers(char *out, size_t len) {
  int best = tether_lint__newest_llvm("lib/cmake/mlir/AddMLIRPython.cmake", out, len);
  if (best < 0) {
    static const char *const others[] = {"/usr/local/lib/cmake/mlir/AddMLIRPython.cmake",
                                         "/usr/lib/cmake/mlir/AddMLIRPython.cmake"};
    for (size_t i = 0; i < sizeof others / sizeof others[0] && !out[0]; i++) {
      FILE *fp = fopen(others[i], "r");
      if (fp) {
        fclose(fp);
        snprintf(out, len, "%s", others[i]);
      }
    }
  }
}

int excl_run_begin(tether_lint_run *run, void **state) {
  excl_state *st = calloc(1, sizeof *st);
  if (!st) return -1;
  if ((st->twice = excl_twice_new()) == NULL) {
    free(st);
    return -1;
  }
  const tether_lint_config *cfg = tether_lint__run_config(run);
  char path[1024] = "";
  if (tether_lint__config_mlir_helpers(cfg, path, sizeof path)) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
      excl_twice_free(st->twice);
      free(st);
      return -1; /* configured but missing: the run cannot say what the helpers do */
    }
    fclose(fp);
  } else {
    installed_helpers(path, sizeof path);
  }
  if (path[0]) load_helpers(st, path);
  *state = st;
  return 0;
}

int excl_take_fact(tether_lint_run *run, void *state, const char *data, size_t len) {
  (void)run;
  excl_state *st = state;
  /* Without a state the family did not start, which the driver already reports. */
  return st ? excl_twice_take_fact(st->twice, data, len) : 0;
}

int excl_run_end(tether_lint_run *run, void *state) {
  excl_state *st = state;
  int rc = 0;
  if (st) {
    rc = excl_twice_run_end(run, st->twice);
    excl_twice_free(st->twice);
    free(st->h);
  }
  free(st);
  return rc;
}

/* A call to one of MLIR's helpers that links with --exclude-libs. */
static void cm_helper_call(excl_ctx *c, const char *name, size_t nl) {
  const excl_state *st = c->st;
  if (!st || !st->nh || nl >= 96 || name[0] == '_') return;
  char low[96];
  for (size_t i = 0; i < nl; i++) low[i] = (char)tolower((unsigned char)name[i]);
  low[nl] = '\0';
  int k = helper_index(st, low);
  if (k < 0 || !st->h[k].tainted) return;
  const helper *h = &st->h[k];
  unsigned line, col;
  excl_line_col(c, (size_t)(name - c->text), &line, &col);
  /* What the call does, and whose symbols become private: a declared extension is built by
   * add_mlir_python_modules(); a helper that passes the flag through another builds several. */
  int declares = strcmp(h->name, "declare_mlir_python_extension") == 0;
  const char *does = declares ? "declares a Python extension that add_mlir_python_modules() links"
                     : h->via[0] ? "links the Python extensions it builds"
                                 : "links the Python extension";
  const char *whose = !declares && h->via[0] ? "each extension" : "the extension";
  tether_lint__report_at(c->f, line, col, EXCL_RULE,
                         "%.*s() %s with --exclude-libs: MLIR's CMake helper%s%s passes it "
                         "(%s:%u), so symbols from static archives (TypeIDs among them) become "
                         "private to %s",
                         (int)nl, name, does, declares || h->via[0] ? " " : "", h->via, st->path,
                         h->flag_line, whose);
}

static void cm_command_cb(excl_ctx *c, const char *name, size_t nl, const cm_arg *a, size_t na,
                          void *ud) {
  (void)ud;
  cm_helper_call(c, name, nl);
  cm_command(c, name, nl, a, na);
}

void excl_check_cmake(excl_ctx *c) {
  /* MLIR's own helper files are where the flag is written (and reported); calls between their
   * functions are not the project's. */
  const char *path = tether_lint__file_path(c->f);
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  excl_ctx cc = *c;
  if (strncmp(base, "AddMLIR", 7) == 0) cc.st = NULL;
  cm_parse(&cc, cm_command_cb, NULL);
}
