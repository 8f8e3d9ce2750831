/* Rule family "exclude-libs": `--exclude-libs` in the link flags of build files.
 *
 * Invariant: each file kind has its own small lexer (comments, string literals, continuations of
 * that language) that hands every value token to scan_value() together with the context the
 * language gives it: LINK (the token is a link flag list: a linkopts/link_args/LDFLAGS value, a
 * target_link_options argument, a linking compile_commands.json entry), ASSIGN (a value of a
 * variable or keyword that is not known to be about compiling or linking: only explicit linker
 * pass-through spellings in a token made only of flags count), or nothing (comments, printed or
 * documented strings, compile flags), which is never scanned. A finding is reported at the line and
 * column of the `--exclude-libs` occurrence in the file's own text. Nothing here allocates per
 * token; the only allocation is cJSON's tree for compile_commands.json. */
#include "lint/lint.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define RULE "exclude-libs"

static const tether_lint_rule_info excl_rules[] = {
    {RULE, "--exclude-libs in the link flags of a shared object or extension",
     "The linker flag --exclude-libs (-Wl,--exclude-libs,ALL, LINKER:--exclude-libs,ALL, ...) "
     "makes every symbol that comes from a static archive local to the shared object being "
     "linked. When several Python extensions each link MLIR (or any C++ library with TypeIDs or "
     "other vague-linkage statics) from static archives with this flag, each extension gets a "
     "private copy of those symbols: the same TypeID has a different address in each extension, "
     "so isa<>/dyn_cast<> and interface lookups fail across them (two type universes in one "
     "process).",
     "link every extension against ONE shared library that holds the MLIR C API (and your "
     "dialects), and drop --exclude-libs from the link flags"},
};

typedef enum {
  K_NONE,
  K_CMAKE,
  K_BAZEL,
  K_MAKE,
  K_MESON,
  K_SETUPPY,
  K_PYPROJECT,
  K_COMPDB
} file_kind;

enum {
  CTX_NONE,   /* not a link flag: never scanned */
  CTX_WORDS,  /* a command line: words with a linker pass-through spelling count */
  CTX_ASSIGN, /* a plain value: the same, when every word of the value is a flag */
  CTX_LINK,   /* a link flag list: every --exclude-libs counts */
};

static int ends_with_n(const char *s, size_t n, const char *suf) {
  size_t b = strlen(suf);
  return n >= b && memcmp(s + n - b, suf, b) == 0;
}

static file_kind kind_of(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strcmp(base, "CMakeLists.txt") == 0 || tether_lint__ends_with(base, ".cmake")) return K_CMAKE;
  if (strcmp(base, "BUILD") == 0 || strcmp(base, "BUILD.bazel") == 0 ||
      tether_lint__ends_with(base, ".bzl"))
    return K_BAZEL;
  if (strcmp(base, "Makefile") == 0 || strcmp(base, "makefile") == 0 ||
      strcmp(base, "GNUmakefile") == 0 || tether_lint__ends_with(base, ".mk"))
    return K_MAKE;
  if (strcmp(base, "meson.build") == 0) return K_MESON;
  if (strcmp(base, "setup.py") == 0) return K_SETUPPY;
  if (strcmp(base, "pyproject.toml") == 0) return K_PYPROJECT;
  if (strcmp(base, "compile_commands.json") == 0) return K_COMPDB;
  return K_NONE;
}

static int excl_claims(const char *path, const char *head, size_t headlen) {
  (void)head;
  (void)headlen;
  return kind_of(path) != K_NONE;
}

/* ---- names ------------------------------------------------------------------------------- */

/* Lower-cases `s[0..n)` into `out` with '-' read as '_'. */
static void norm_name(const char *s, size_t n, char *out, size_t outlen) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < outlen; i++)
    out[k++] = s[i] == '-' ? '_' : (char)tolower((unsigned char)s[i]);
  out[k] = '\0';
}

static int name_has(const char *s, size_t n, const char *const *subs) {
  char buf[256];
  norm_name(s, n, buf, sizeof buf);
  for (size_t i = 0; subs[i]; i++)
    if (strstr(buf, subs[i])) return 1;
  return 0;
}

/* A variable, keyword, property or table whose values are link flags. */
static int linkish(const char *s, size_t n) {
  static const char *const subs[] = {
      "linkopt", "link_opt",    "link_arg",   "linkarg",    "link_flag",   "linkflag",
      "linker_", "link_option", "linkoption", "ldflag",     "link_librar", "link_libs",
      "ldlibs",  "ldadd",       "libadd",     "linkerflag", NULL};
  return n > 0 && name_has(s, n, subs);
}

/* A variable or keyword whose values are compile flags (never scanned). */
static int compileish(const char *s, size_t n) {
  static const char *const subs[] = {
      "copt",   "cflag",  "cxxflag",     "cppflag", "compile_arg", "compile_opt", "compile_flag",
      "cxxopt", "define", "include_dir", "c_args",  "cpp_args",    "cxx_args",    NULL};
  return n > 0 && !linkish(s, n) && name_has(s, n, subs);
}

static int is_ident(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-')) return 0;
  return 1;
}

/* ---- the scanner shared by every language ------------------------------------------------ */

typedef struct excl_state excl_state;

typedef struct excl_ctx {
  tether_lint_file *f;
  const char *text;
  size_t len;
  const excl_state *st; /* the run's view of MLIR's CMake helpers (NULL: none) */
} excl_ctx;

static void line_col(const excl_ctx *c, size_t off, unsigned *line, unsigned *col) {
  unsigned l = 1;
  size_t ls = 0;
  if (off > c->len) off = c->len;
  for (size_t i = 0; i < off; i++)
    if (c->text[i] == '\n') {
      l++;
      ls = i + 1;
    }
  *line = l;
  *col = (unsigned)(off - ls) + 1;
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

/* Separators of words in a flag value: whitespace and CMake's list separator. */
static int is_word_sep(char ch) { return is_space(ch) || ch == ';'; }

static int before_ok(char ch) { return is_space(ch) || strchr(",:=<>;\"'([{", ch) != NULL; }
static int after_ok(char ch) { return is_space(ch) || strchr(",=>;\"')]}\\", ch) != NULL; }

static void report(excl_ctx *c, size_t off, const char *word, size_t wn) {
  unsigned line, col;
  line_col(c, off, &line, &col);
  if (wn > 120) wn = 120;
  tether_lint__report_at(
      c->f, line, col, RULE,
      "link flag '%.*s' passes --exclude-libs to the linker: symbols from static "
      "archives (TypeIDs among them) become private to this shared object",
      (int)wn, word);
}

/* Finds "-exclude-libs"/"--exclude-libs" with flag boundaries in s[0..n). Returns the offset of
 * the first dash, or (size_t)-1. */
static size_t find_flag(const char *s, size_t n, size_t from) {
  static const char key[] = "exclude-libs";
  const size_t kl = sizeof key - 1;
  for (size_t i = from + 1; i + kl <= n; i++) {
    if (s[i - 1] != '-' || memcmp(s + i, key, kl) != 0) continue;
    size_t j = i - 1;
    if (j > 0 && s[j - 1] == '-') j--;
    if (j > 0 && !before_ok(s[j - 1])) continue;
    if (i + kl < n && !after_ok(s[i + kl])) continue;
    return j;
  }
  return (size_t)-1;
}

/* Offset in the file of s[i]: s points into the file's text, or it does not (a decoded string),
 * and then every position maps to `origin`. */
static size_t file_off(const excl_ctx *c, const char *s, size_t i, size_t origin) {
  if (s >= c->text && s < c->text + c->len) return (size_t)(s - c->text) + i;
  return origin;
}

static int starts_with_n(const char *s, size_t n, const char *p) {
  size_t pl = strlen(p);
  return n >= pl && memcmp(s, p, pl) == 0;
}

/* The word is a linker pass-through spelling. */
static int passthrough_word(const char *w, size_t n) {
  while (n && (*w == '"' || *w == '\'')) w++, n--;
  if (starts_with_n(w, n, "SHELL:")) w += 6, n -= 6;
  return starts_with_n(w, n, "-Wl,") || starts_with_n(w, n, "LINKER:") ||
         starts_with_n(w, n, "$<") || starts_with_n(w, n, "-Xlinker,");
}

static int xlinker_word(const char *w, size_t n) {
  while (n && (*w == '"' || *w == '\'')) w++, n--;
  if (starts_with_n(w, n, "SHELL:")) w += 6, n -= 6;
  while (n && (w[n - 1] == '"' || w[n - 1] == '\'')) n--;
  return (n == 8 && memcmp(w, "-Xlinker", 8) == 0) || (n == 9 && memcmp(w, "--Xlinker", 9) == 0);
}

/* `NAME=VALUE` (or -DNAME=VALUE) with a link-flag NAME: the offset of VALUE, else 0. */
static size_t linkish_assignment(const char *w, size_t n) {
  size_t s = 0;
  while (s < n && (w[s] == '"' || w[s] == '\'')) s++;
  if (n - s > 2 && w[s] == '-' && w[s + 1] == 'D') s += 2;
  const char *eq = memchr(w + s, '=', n - s);
  if (!eq) return 0;
  size_t nl = (size_t)(eq - (w + s));
  if (nl == 0 || !linkish(w + s, nl) || !is_ident(w + s, nl)) return 0;
  return (size_t)(eq - w) + 1;
}

/* Scans one value token s[0..n). In LINK context every occurrence counts. In ASSIGN context the
 * token must consist of flags only (each word starts with '-', '$', LINKER:, SHELL: or follows
 * -Xlinker), and an occurrence counts when its word is a pass-through spelling (-Wl,..., LINKER:,
 * a generator expression), follows -Xlinker, or is the value of a link-flag NAME=VALUE word. */
static void scan_value(excl_ctx *c, const char *s, size_t n, int ctx, size_t origin) {
  if (ctx == CTX_NONE || n == 0) return;
  if (ctx == CTX_LINK) {
    for (size_t at = find_flag(s, n, 0); at != (size_t)-1; at = find_flag(s, n, at + 2)) {
      size_t ws = at, we = at;
      while (ws > 0 && !is_word_sep(s[ws - 1])) ws--;
      while (we < n && !is_word_sep(s[we])) we++;
      report(c, file_off(c, s, at, origin), s + ws, we - ws);
    }
    return;
  }
  /* ASSIGN: first, is every word a flag? */
  int prev_x = 0;
  for (size_t i = 0; ctx == CTX_ASSIGN && i < n;) {
    while (i < n && is_word_sep(s[i])) i++;
    if (i >= n) break;
    size_t ws = i;
    while (i < n && !is_word_sep(s[i])) i++;
    const char *w = s + ws;
    size_t wn = i - ws;
    while (wn && (*w == '"' || *w == '\'')) w++, wn--;
    if (!wn) continue;
    int flag = w[0] == '-' || w[0] == '$' || starts_with_n(w, wn, "LINKER:") ||
               starts_with_n(w, wn, "SHELL:") || linkish_assignment(w, wn);
    if (!flag && !prev_x) return;
    prev_x = xlinker_word(w, wn);
  }
  prev_x = 0;
  for (size_t i = 0; i < n;) {
    while (i < n && is_word_sep(s[i])) i++;
    if (i >= n) break;
    size_t ws = i;
    while (i < n && !is_word_sep(s[i])) i++;
    const char *w = s + ws;
    size_t wn = i - ws;
    size_t at = find_flag(w, wn, 0);
    size_t va = linkish_assignment(w, wn);
    if (at != (size_t)-1 && (passthrough_word(w, wn) || prev_x || (va && at >= va)))
      report(c, file_off(c, s, ws + at, origin), w, wn);
    prev_x = xlinker_word(w, wn);
  }
}

/* ---- CMake ------------------------------------------------------------------------------- */

typedef struct cm_arg {
  const char *s; /* contents (without quotes or brackets), in the file's text */
  size_t n;
  int quoted; /* 0 unquoted, 1 quoted or bracket argument */
} cm_arg;

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
  if (linkish(var->s, var->n)) return CTX_LINK;
  if (compileish(var->s, var->n)) return CTX_NONE;
  return CTX_ASSIGN;
}

static void cm_values(excl_ctx *c, const cm_arg *a, size_t from, size_t to, int ctx) {
  for (size_t i = from; i < to; i++) scan_value(c, a[i].s, a[i].n, ctx, 0);
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
      cm_values(c, a, 0, na, CTX_LINK);
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
  if (nl > 4 && ieq(name, 4, "set_") && ends_with_n(name, nl, "_properties")) {
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
  int ctx = CTX_ASSIGN;
  for (size_t i = 0; i < na; i++) {
    if (cm_keyword(&a[i])) {
      ctx = linkish(a[i].s, a[i].n) ? CTX_LINK : compileish(a[i].s, a[i].n) ? CTX_NONE : CTX_ASSIGN;
      continue;
    }
    scan_value(c, a[i].s, a[i].n, ctx, 0);
  }
}

/* CMake: command invocations `name(args)`; arguments are bracket arguments `[=[...]=]`, quoted
 * arguments "..." (backslash escapes, line continuations) and unquoted ones (which may contain
 * generator expressions and nested parentheses); `#` comments and `#[[...]]` bracket comments are
 * skipped everywhere. */
typedef void (*cm_callback)(excl_ctx *c, const char *name, size_t nl, const cm_arg *a, size_t na,
                            void *ud);

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
      if (is_space(ch)) {
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
          if (!genex && (is_space(*p) || *p == '(' || *p == ')' || *p == '"' || *p == '#')) break;
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

/* ---- MLIR's CMake helpers ------------------------------------------------------------------
 *
 * MLIR's AddMLIRPython.cmake links every Python extension it builds with
 * `LINKER:--exclude-libs,ALL` (add_mlir_python_extension, which add_mlir_python_modules calls for
 * each extension declared with declare_mlir_python_extension). A project that calls those
 * helpers gets the flag without writing it. The helper file of the MLIR the project uses is read
 * once per run (`[lint] mlir-cmake-dir`, else the newest installed one): every function in it that
 * passes the flag, or calls one that does, is a helper whose call sites are reported, with the
 * line of the flag as the reason. */

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
      size_t at = find_flag(a[k].s, a[k].n, 0);
      if (at == (size_t)-1) continue;
      unsigned line, col;
      line_col(c, (size_t)(a[k].s + at - c->text), &line, &col);
      h->tainted = 1;
      h->flag_line = line;
    }
    return;
  }
  if (nl >= 96) return;
  if (hs->npending == hs->cappending) {
    size_t cap = hs->cappending ? hs->cappending * 2 : 64;
    void *v = realloc(hs->pending, cap * sizeof *hs->pending);
    if (!v) return;
    hs->pending = v;
    hs->cappending = cap;
  }
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
  out[0] = '\0';
  int best = -1;
  for (int v = 10; v < 100; v++) {
    char cand[256];
    snprintf(cand, sizeof cand, "/usr/lib/llvm-%d/lib/cmake/mlir/AddMLIRPython.cmake", v);
    FILE *fp = fopen(cand, "r");
    if (!fp) continue;
    fclose(fp);
    if (v > best) {
      best = v;
      snprintf(out, len, "%s", cand);
    }
  }
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

static int excl_run_begin(tether_lint_run *run, void **state) {
  excl_state *st = calloc(1, sizeof *st);
  if (!st) return -1;
  const tether_lint_config *cfg = tether_lint__run_config(run);
  char path[1024] = "";
  if (cfg->mlir_cmake_dir) {
    const char *d = cfg->mlir_cmake_dir;
    if (d[0] == '/' || !cfg->dir)
      snprintf(path, sizeof path, "%s/AddMLIRPython.cmake", d);
    else
      snprintf(path, sizeof path, "%s/%s/AddMLIRPython.cmake", cfg->dir, d);
    FILE *fp = fopen(path, "r");
    if (!fp) {
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

static int excl_run_end(tether_lint_run *run, void *state) {
  (void)run;
  excl_state *st = state;
  if (st) free(st->h);
  free(st);
  return 0;
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
  line_col(c, (size_t)(name - c->text), &line, &col);
  if (strcmp(h->name, "declare_mlir_python_extension") == 0)
    tether_lint__report_at(
        c->f, line, col, RULE,
        "%.*s() declares a Python extension that add_mlir_python_modules() links "
        "with --exclude-libs: MLIR's CMake helper %s passes it (%s:%u), so symbols "
        "from static archives (TypeIDs among them) become private to the extension",
        (int)nl, name, h->via, st->path, h->flag_line);
  else if (h->via[0])
    tether_lint__report_at(
        c->f, line, col, RULE,
        "%.*s() links the Python extensions it builds with --exclude-libs: MLIR's "
        "CMake helper %s passes it (%s:%u), so symbols from static archives "
        "(TypeIDs among them) become private to each extension",
        (int)nl, name, h->via, st->path, h->flag_line);
  else
    tether_lint__report_at(
        c->f, line, col, RULE,
        "%.*s() links the Python extension with --exclude-libs: MLIR's CMake "
        "helper passes it (%s:%u), so symbols from static archives (TypeIDs among "
        "them) become private to the extension",
        (int)nl, name, st->path, h->flag_line);
}

static void cm_command_cb(excl_ctx *c, const char *name, size_t nl, const cm_arg *a, size_t na,
                          void *ud) {
  (void)ud;
  cm_helper_call(c, name, nl);
  cm_command(c, name, nl, a, na);
}

static void check_cmake(excl_ctx *c) {
  /* MLIR's own helper files are where the flag is written (and reported); calls between their
   * functions are not the project's. */
  const char *path = tether_lint__file_path(c->f);
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  excl_ctx cc = *c;
  if (strncmp(base, "AddMLIR", 7) == 0) cc.st = NULL;
  cm_parse(&cc, cm_command_cb, NULL);
}

/* ---- Python-like languages: Starlark (Bazel), Python (setup.py), Meson, TOML --------------- */

typedef enum { KEY_NONE, KEY_ASSIGN, KEY_CALL } key_kind;

typedef struct py_level {
  char opener; /* '(' '[' '{' or 0 for the top level */
  int subscript;
  key_kind kk;
  const char *key; /* the name the values at this level belong to */
  size_t keyn;
  const char *call; /* '(' after a name: the called function (keyword arguments end at ',') */
  size_t calln;
  const char *last; /* the last name (or identifier-like string) seen at this level */
  size_t lastn;
} py_level;

typedef enum { LANG_PY, LANG_MESON, LANG_TOML } py_lang;

/* Calls whose arguments are printed or documented, never link flags. */
static int quiet_call(const char *s, size_t n) {
  static const char *const names[] = {"print",   "fail",   "message", "warning", "error", "assert",
                                      "summary", "format", "debug",   "info",    NULL};
  for (size_t i = 0; names[i]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return 1;
  return 0;
}

/* The context of a string at the top of `st`: the innermost level with a key decides; calls that
 * are not about linking are transparent (select(), Extension(), ...), except printing ones. */
static int py_ctx(const py_level *st, size_t depth, const char *table, size_t tablen) {
  for (size_t i = depth + 1; i-- > 0;) {
    const py_level *l = &st[i];
    if (l->kk == KEY_NONE) continue;
    if (l->kk == KEY_CALL) {
      if (linkish(l->key, l->keyn)) return CTX_LINK;
      if (quiet_call(l->key, l->keyn)) return CTX_NONE;
      continue;
    }
    if (linkish(l->key, l->keyn)) return CTX_LINK;
    if (compileish(l->key, l->keyn)) return CTX_NONE;
    if (table && linkish(table, tablen)) return CTX_LINK;
    return CTX_ASSIGN;
  }
  return CTX_NONE;
}

static void check_pylike(excl_ctx *c, py_lang lang) {
  const char *p = c->text, *end = c->text + c->len;
  py_level st[64];
  size_t depth = 0;
  memset(&st[0], 0, sizeof st[0]);
  int prev_name = 0;        /* the previous token was a name (a following '(' is a call) */
  const char *pname = NULL; /* that name */
  size_t pnamen = 0;
  int prev_closer = 0; /* the previous token closed a bracket or was a string ('[' subscripts) */
  int line_start = 1;  /* TOML: nothing but whitespace since the last newline at the top level */
  const char *table = NULL; /* TOML: the current [table] header */
  size_t tablen = 0;
  while (p < end) {
    char ch = *p;
    if (ch == '\n') {
      if (depth == 0) {
        st[0].kk = KEY_NONE;
        st[0].last = NULL;
        line_start = 1;
      }
      prev_name = prev_closer = 0;
      p++;
      continue;
    }
    if (is_space(ch)) {
      p++;
      continue;
    }
    if (ch == '\\' && p + 1 < end && (p[1] == '\n' || p[1] == '\r')) {
      p += 2; /* line continuation */
      continue;
    }
    if (ch == '#') {
      while (p < end && *p != '\n') p++;
      continue;
    }
    /* TOML table headers: [a.b] or [[a.b]] at the start of a line. */
    if (lang == LANG_TOML && ch == '[' && depth == 0 && line_start) {
      const char *q = p;
      while (q < end && *q == '[') q++;
      const char *h = q;
      while (q < end && *q != ']' && *q != '\n') q++;
      /* The last dotted component names the table. */
      const char *lc = h;
      for (const char *r = h; r < q; r++)
        if (*r == '.') lc = r + 1;
      while (lc < q && (*lc == ' ' || *lc == '"' || *lc == '\'')) lc++;
      const char *le = q;
      while (le > lc && (le[-1] == ' ' || le[-1] == '"' || le[-1] == '\'')) le--;
      table = lc;
      tablen = (size_t)(le - lc);
      while (q < end && *q != '\n') q++;
      p = q;
      continue;
    }
    line_start = 0;
    /* Strings, with their prefixes. */
    const char *q = p;
    if (lang == LANG_PY) {
      while (q < end && q - p < 3 && strchr("rRbBuUfF", *q)) q++;
    } else if (lang == LANG_MESON) {
      if (q < end && *q == 'f') q++;
    }
    if (q < end && (*q == '"' || *q == '\'') && (lang != LANG_MESON || *q == '\'')) {
      char quote = *q;
      int raw = 0;
      for (const char *r = p; r < q; r++)
        if (*r == 'r' || *r == 'R') raw = 1;
      if (lang == LANG_TOML && quote == '\'') raw = 1;
      int triple = q + 2 < end && q[1] == quote && q[2] == quote;
      const char *s = q + (triple ? 3 : 1);
      const char *e = s;
      while (e < end) {
        if (*e == '\\' && !raw && e + 1 < end) {
          e += 2;
          continue;
        }
        if (triple) {
          if (*e == quote && e + 2 < end && e[1] == quote && e[2] == quote) break;
        } else if (*e == quote || *e == '\n') {
          break;
        }
        e++;
      }
      size_t sn = (size_t)(e - s);
      py_level *l = &st[depth];
      if (is_ident(s, sn)) {
        l->last = s;
        l->lastn = sn;
      }
      scan_value(c, s, sn, py_ctx(st, depth, table, tablen), 0);
      p = e < end ? e + (triple ? 3 : (*e == quote ? 1 : 0)) : end;
      prev_name = 0;
      prev_closer = 1;
      continue;
    }
    if (isalpha((unsigned char)ch) || ch == '_' ||
        (lang == LANG_TOML && (ch == '-' || isdigit((unsigned char)ch)))) {
      const char *s = p;
      while (p < end &&
             (isalnum((unsigned char)*p) || *p == '_' || (lang == LANG_TOML && *p == '-')))
        p++;
      st[depth].last = s;
      st[depth].lastn = (size_t)(p - s);
      prev_name = 1;
      pname = s;
      pnamen = (size_t)(p - s);
      prev_closer = 1;
      continue;
    }
    if (ch == '(' || ch == '[' || ch == '{') {
      if (depth + 1 < sizeof st / sizeof st[0]) {
        depth++;
        memset(&st[depth], 0, sizeof st[depth]);
        st[depth].opener = ch;
        if (ch == '(' && prev_name) {
          st[depth].kk = KEY_CALL;
          st[depth].key = st[depth].call = pname;
          st[depth].keyn = st[depth].calln = pnamen;
        }
        st[depth].subscript = ch == '[' && prev_closer;
      }
      prev_name = prev_closer = 0;
      p++;
      continue;
    }
    if (ch == ')' || ch == ']' || ch == '}') {
      if (depth > 0) {
        py_level *inner = &st[depth];
        depth--;
        if (inner->subscript && inner->last) {
          st[depth].last = inner->last;
          st[depth].lastn = inner->lastn;
        } else {
          st[depth].last = NULL;
        }
      }
      prev_name = 0;
      prev_closer = 1;
      p++;
      continue;
    }
    if (ch == ',') {
      /* A keyword argument or dict entry ends here; in a call, back to the call itself. */
      py_level *l = &st[depth];
      l->kk = l->call ? KEY_CALL : KEY_NONE;
      l->key = l->call;
      l->keyn = l->calln;
      l->last = NULL;
      prev_name = prev_closer = 0;
      p++;
      continue;
    }
    /* '=' (not '==', '<=', '>=', '!='), '+=', and ':' (dict keys, Meson keyword arguments). */
    int assign = 0;
    if (ch == '=' && !(p + 1 < end && p[1] == '=')) assign = 1;
    if ((ch == '+' || ch == '|') && p + 1 < end && p[1] == '=') {
      assign = 1;
      p++;
    }
    if (ch == ':' && lang != LANG_TOML && !(p + 1 < end && p[1] == '=')) assign = 1;
    if (ch == '=' || ch == '!' || ch == '<' || ch == '>') {
      if (p + 1 < end && p[1] == '=') {
        p += 2;
        prev_name = prev_closer = 0;
        continue;
      }
    }
    if (assign) {
      py_level *l = &st[depth];
      if (l->last) {
        l->kk = KEY_ASSIGN;
        l->key = l->last;
        l->keyn = l->lastn;
      }
    }
    prev_name = prev_closer = 0;
    p++;
  }
}

/* ---- Makefiles --------------------------------------------------------------------------- */

/* One logical line [s, e) (continuations included, comments not yet removed). */
static void make_line(excl_ctx *c, const char *s, const char *e) {
  int recipe = *s == '\t';
  /* Where the comment starts: '#' not escaped; in a recipe, '#' at the start of a shell word
   * outside quotes. */
  const char *ce = e;
  char quote = 0;
  for (const char *p = s; p < e; p++) {
    if (*p == '\\' && p + 1 < e) {
      p++;
      continue;
    }
    if (recipe) {
      if (quote) {
        if (*p == quote) quote = 0;
        continue;
      }
      if (*p == '"' || *p == '\'') {
        quote = *p;
        continue;
      }
      if (*p == '#' && (p == s || is_space(p[-1]))) {
        ce = p;
        break;
      }
    } else if (*p == '#') {
      ce = p;
      break;
    }
  }
  e = ce;
  if (recipe) {
    /* A shell command: printing commands are skipped; others are scanned as values, and a bare
     * --exclude-libs counts when the command is the linker itself. */
    const char *p = s;
    while (p < e && (is_space(*p) || *p == '@' || *p == '-' || *p == '+')) p++;
    const char *w = p;
    while (p < e && !is_space(*p)) p++;
    size_t wn = (size_t)(p - w);
    static const char *const quiet[] = {"echo",   "printf",    ":",       "true",
                                        "$(info", "$(warning", "$(error", NULL};
    for (size_t i = 0; quiet[i]; i++)
      if (strlen(quiet[i]) == wn && memcmp(quiet[i], w, wn) == 0) return;
    int ld = (wn >= 2 && (ends_with_n(w, wn, "ld") || ends_with_n(w, wn, "(LD)") ||
                          ends_with_n(w, wn, "{LD}")));
    /* A command that only compiles links nothing. */
    for (p = w; p < e;) {
      while (p < e && is_space(*p)) p++;
      const char *ws = p;
      while (p < e && !is_space(*p)) p++;
      if (p - ws == 2 && ws[0] == '-' && ws[1] == 'c') return;
    }
    scan_value(c, w, (size_t)(e - w), ld ? CTX_LINK : CTX_WORDS, 0);
    return;
  }
  /* Assignments: [export|override|private] NAME op VALUE, also target-specific
   * "target: NAME op VALUE". */
  const char *p = s;
  for (;;) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *w = p;
    while (p < e && (isalnum((unsigned char)*p) || *p == '_')) p++;
    size_t wn = (size_t)(p - w);
    if ((wn == 6 && memcmp(w, "export", 6) == 0) || (wn == 8 && memcmp(w, "override", 8) == 0) ||
        (wn == 7 && memcmp(w, "private", 7) == 0)) {
      if (p < e && (*p == ' ' || *p == '\t')) continue;
    }
    p = w;
    break;
  }
  /* Find the assignment operator; a ':' that is not part of ":=" / "::=" first means a rule (or
   * a target-specific assignment after it). */
  for (int pass = 0; pass < 2; pass++) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *name = p;
    while (p < e && !is_space(*p) && *p != '=' && *p != ':' && *p != '+' && *p != '?' && *p != '!')
      p++;
    const char *name_end = p;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *op = p;
    if (p < e && *p == ':' && !(p + 1 < e && (p[1] == '=' || p[1] == ':'))) {
      if (pass == 1) return;
      p++; /* a rule: maybe "target: NAME = value" */
      continue;
    }
    while (p < e && (*p == ':' || *p == '+' || *p == '?' || *p == '!')) p++;
    if (p >= e || *p != '=' || name_end == name) return;
    (void)op;
    p++;
    int ctx = linkish(name, (size_t)(name_end - name))      ? CTX_LINK
              : compileish(name, (size_t)(name_end - name)) ? CTX_NONE
                                                            : CTX_ASSIGN;
    scan_value(c, p, (size_t)(e - p), ctx, 0);
    return;
  }
}

static void check_make(excl_ctx *c) {
  const char *p = c->text, *end = c->text + c->len;
  while (p < end) {
    const char *s = p;
    /* A logical line: a backslash before the newline continues it. */
    while (p < end) {
      if (*p == '\n') {
        size_t bs = 0;
        for (const char *b = p; b > s && b[-1] == '\\'; b--) bs++;
        if (bs % 2 == 0) break;
      }
      p++;
    }
    make_line(c, s, p);
    if (p < end) p++;
  }
}

/* ---- compile_commands.json --------------------------------------------------------------- */

/* The line and column of every JSON string token (keys included), in document order: the same
 * order as a depth-first walk of cJSON's tree, so the k-th string of the walk is at offs[k]. */
typedef struct json_strs {
  size_t *offs;
  size_t n, cap;
} json_strs;

static int json_collect(const char *t, size_t len, json_strs *js) {
  for (size_t i = 0; i < len; i++) {
    if (t[i] != '"') continue;
    if (js->n == js->cap) {
      size_t nc = js->cap ? js->cap * 2 : 256;
      size_t *v = realloc(js->offs, nc * sizeof *v);
      if (!v) return -1;
      js->offs = v;
      js->cap = nc;
    }
    js->offs[js->n++] = i;
    for (i++; i < len && t[i] != '"'; i++)
      if (t[i] == '\\') i++;
  }
  return 0;
}

/* Counts the strings of `node` (its value and, recursively, its children's keys and values) in
 * document order, starting at index k; returns the index after them. */
static size_t json_count(const cJSON *node, size_t k) {
  if (cJSON_IsString(node)) k++;
  for (const cJSON *ch = node->child; ch; ch = ch->next) {
    if (ch->string) k++;
    k = json_count(ch, k);
  }
  return k;
}

/* Does this argument stop the driver before linking? */
static int no_link_arg(const char *a, size_t n) {
  static const char *const stop[] = {"-c", "-S", "-E", "-fsyntax-only", "-M", "-MM", NULL};
  for (size_t i = 0; stop[i]; i++)
    if (strlen(stop[i]) == n && memcmp(stop[i], a, n) == 0) return 1;
  return 0;
}

static int command_links(const char *cmd) {
  const char *p = cmd;
  while (*p) {
    while (*p && is_space(*p)) p++;
    const char *w = p;
    char q = 0;
    while (*p && (q || !is_space(*p))) {
      if (q && *p == q)
        q = 0;
      else if (!q && (*p == '"' || *p == '\''))
        q = *p;
      p++;
    }
    if (p > w && no_link_arg(w, (size_t)(p - w))) return 0;
  }
  return 1;
}

static int check_compdb(excl_ctx *c) {
  const char *endp = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(c->text, c->len, &endp, 0);
  if (!root) {
    size_t off = endp && endp >= c->text ? (size_t)(endp - c->text) : 0;
    tether_lint__file_message(c->f, 1, "malformed JSON near byte %zu; not analysed", off);
    return 0;
  }
  json_strs js = {0};
  if (json_collect(c->text, c->len, &js) != 0) {
    cJSON_Delete(root);
    return -1;
  }
  if (!cJSON_IsArray(root)) {
    tether_lint__file_message(c->f, 1,
                              "not a compilation database (expected a JSON array); not "
                              "analysed");
  } else {
    size_t k = 0; /* index of the next string token */
    for (cJSON *ent = root->child; ent; ent = ent->next) {
      if (!cJSON_IsObject(ent)) {
        k = json_count(ent, k);
        continue;
      }
      for (cJSON *it = ent->child; it; it = it->next) {
        k++; /* the key */
        if (it->string && strcmp(it->string, "arguments") == 0 && cJSON_IsArray(it)) {
          int links = 1;
          for (cJSON *a = it->child; a; a = a->next)
            if (cJSON_IsString(a) && no_link_arg(a->valuestring, strlen(a->valuestring))) links = 0;
          for (cJSON *a = it->child; a; a = a->next) {
            if (cJSON_IsString(a) && links && k < js.n)
              scan_value(c, a->valuestring, strlen(a->valuestring), CTX_LINK, js.offs[k]);
            k = json_count(a, k);
          }
        } else {
          if (it->string && strcmp(it->string, "command") == 0 && cJSON_IsString(it) &&
              command_links(it->valuestring) && k < js.n)
            scan_value(c, it->valuestring, strlen(it->valuestring), CTX_LINK, js.offs[k]);
          k = json_count(it, k);
        }
      }
    }
  }
  free(js.offs);
  cJSON_Delete(root);
  return 0;
}

/* ---- the family -------------------------------------------------------------------------- */

static int excl_check_text(tether_lint_file *f, void *state, const char *text, size_t len) {
  excl_ctx c = {f, text, len, state};
  switch (kind_of(tether_lint__file_path(f))) {
  case K_CMAKE:
    check_cmake(&c);
    return 0;
  case K_BAZEL:
  case K_SETUPPY:
    check_pylike(&c, LANG_PY);
    return 0;
  case K_MESON:
    check_pylike(&c, LANG_MESON);
    return 0;
  case K_PYPROJECT:
    check_pylike(&c, LANG_TOML);
    return 0;
  case K_MAKE:
    check_make(&c);
    return 0;
  case K_COMPDB:
    return check_compdb(&c);
  case K_NONE:
    break;
  }
  return 0;
}

const tether_lint_family tether_lint__family_excludelibs = {
    .name = "exclude-libs",
    .inputs = TETHER_LINT_IN_TEXT,
    .rules = excl_rules,
    .nrules = sizeof excl_rules / sizeof excl_rules[0],
    .claims = excl_claims,
    .run_begin = excl_run_begin,
    .check_text = excl_check_text,
    .run_end = excl_run_end,
};
