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
 * token; the only allocation is cJSON's tree for compile_commands.json. CMake and BUILD files are
 * also read as a link graph for dialect-linked-twice (excludelibs_twice.c: one fact per file, the
 * cross-file pass in run_end). excludelibs.h lists the family's files. */
#include "lint/excludelibs/excludelibs.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const tether_lint_rule_info excl_rules[] = {
    {EXCL_RULE, "--exclude-libs in the link flags of a shared object or extension",
     "The linker flag --exclude-libs (-Wl,--exclude-libs,ALL, LINKER:--exclude-libs,ALL, ...) "
     "makes every symbol that comes from a static archive local to the shared object being "
     "linked. When several Python extensions each link MLIR (or any C++ library with TypeIDs or "
     "other vague-linkage statics) from static archives with this flag, each extension gets a "
     "private copy of those symbols: the same TypeID has a different address in each extension, "
     "so isa<>/dyn_cast<> and interface lookups fail across them (two type universes in one "
     "process).",
     "link every extension against ONE shared library that holds the MLIR C API (and your "
     "dialects), and drop --exclude-libs from the link flags"},
    {EXCL_VSCRIPT_RULE, "a version script that makes MLIR's symbols local (local: *;)",
     "A linker version script (-Wl,--version-script=FILE, LINKER:--version-script=FILE, ...) "
     "whose node ends in 'local: *;' makes every symbol it does not list local to the shared "
     "object, whatever archive it came from: the modern form of --exclude-libs. When an extension "
     "links MLIR (or a dialect) from static archives and exports only its PyInit_ function this "
     "way, it carries private copies of MLIR's TypeIDs and C-API symbols (two type universes in "
     "one process). A script that lists MLIR's symbols as global (mlir*, mlir::*) is not "
     "reported; one tether-lint cannot resolve or read is, saying so.",
     "link MLIR and your dialects from ONE shared library that every extension links, or list "
     "MLIR's symbols (mlir*; extern \"C++\" { mlir::*; }) as global in the script"},
    {EXCL_TWICE_RULE, "a static dialect library linked into two shared objects one process loads",
     "A project's own static MLIR dialect library (add_mlir_dialect_library, a cc_library named "
     "*Dialect, or one that links such a library) reaches two shared objects that one Python "
     "process loads: typically the Python extension (PRIVATE_LINK_LIBS, target_link_libraries, "
     "deps) and the shared C-API library or aggregate (EMBED_CAPI_LINK_LIBS, LINK_LIBS). Each "
     "object carries its own copy of the dialect's TypeIDs and registration: the context knows "
     "one copy, the extension uses the other, and MLIR aborts (\"storage uniquer isn't "
     "initialized\", \"can't create type ... not registered\") or isa<> fails. Read from the "
     "CMake and Bazel files of the run together; reported at the second object's link.",
     "link the dialect into ONE shared library (the C-API aggregate) and link the extension "
     "against that library only, or build the dialect as a shared library"},
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

int excl_ends_with_n(const char *s, size_t n, const char *suf) {
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
int excl_linkish(const char *s, size_t n) {
  static const char *const subs[] = {
      "linkopt", "link_opt",    "link_arg",   "linkarg",    "link_flag",   "linkflag",
      "linker_", "link_option", "linkoption", "ldflag",     "link_librar", "link_libs",
      "ldlibs",  "ldadd",       "libadd",     "linkerflag", NULL};
  return n > 0 && name_has(s, n, subs);
}

/* A variable or keyword whose values are compile flags (never scanned). */
int excl_compileish(const char *s, size_t n) {
  static const char *const subs[] = {
      "copt",   "cflag",  "cxxflag",     "cppflag", "compile_arg", "compile_opt", "compile_flag",
      "cxxopt", "define", "include_dir", "c_args",  "cpp_args",    "cxx_args",    NULL};
  return n > 0 && !excl_linkish(s, n) && name_has(s, n, subs);
}

int excl_is_ident(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-')) return 0;
  return 1;
}

void excl_line_col(const excl_ctx *c, size_t off, unsigned *line, unsigned *col) {
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

int excl_is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

/* Separators of words in a flag value: whitespace and CMake's list separator. */
static int is_word_sep(char ch) { return excl_is_space(ch) || ch == ';'; }

static int before_ok(char ch) { return excl_is_space(ch) || strchr(",:=<>;\"'([{", ch) != NULL; }

static int after_ok(char ch) { return excl_is_space(ch) || strchr(",=>;\"')]}\\", ch) != NULL; }

static void report(excl_ctx *c, size_t off, const char *word, size_t wn) {
  unsigned line, col;
  excl_line_col(c, off, &line, &col);
  if (wn > 120) wn = 120;
  tether_lint__report_at(
      c->f, line, col, EXCL_RULE,
      "link flag '%.*s' passes --exclude-libs to the linker: symbols from static "
      "archives (TypeIDs among them) become private to this shared object",
      (int)wn, word);
}

/* Finds "-KEY"/"--KEY" with flag boundaries in s[0..n). Returns the offset of the first dash, or
 * (size_t)-1. */
size_t excl_find_key(const char *s, size_t n, size_t from, const char *key) {
  const size_t kl = strlen(key);
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

size_t excl_find_flag(const char *s, size_t n, size_t from) {
  return excl_find_key(s, n, from, "exclude-libs");
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

/* A word without its leading quotes and CMake's "SHELL:" prefix. */
static void unwrap_word(const char **w, size_t *n) {
  while (*n && (**w == '"' || **w == '\'')) ++*w, --*n;
  if (starts_with_n(*w, *n, "SHELL:")) *w += 6, *n -= 6;
}

/* The word is a linker pass-through spelling. */
static int passthrough_word(const char *w, size_t n) {
  unwrap_word(&w, &n);
  return starts_with_n(w, n, "-Wl,") || starts_with_n(w, n, "LINKER:") ||
         starts_with_n(w, n, "$<") || starts_with_n(w, n, "-Xlinker,");
}

static int xlinker_word(const char *w, size_t n) {
  unwrap_word(&w, &n);
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
  if (nl == 0 || !excl_linkish(w + s, nl) || !excl_is_ident(w + s, nl)) return 0;
  return (size_t)(eq - w) + 1;
}

/* The next word of s[0..n) from *i (words are separated by whitespace or ';'): 1 with the word at
 * [*ws, *i), or 0 at the end. */
static int next_word(const char *s, size_t n, size_t *i, size_t *ws) {
  while (*i < n && is_word_sep(s[*i])) ++*i;
  if (*i >= n) return 0;
  *ws = *i;
  while (*i < n && !is_word_sep(s[*i])) ++*i;
  return 1;
}

/* The script argument of the version-script flag whose first dash is s[at] and whose word ends
 * at `we`: the rest of the word after '=' or ',', else the next word that is not -Xlinker. */
static void vscript_arg(const char *s, size_t n, size_t at, size_t we, const char **arg,
                        size_t *an) {
  size_t ke = at + (s[at + 1] == '-' ? 2 : 1) + strlen("version-script");
  *arg = s + n;
  *an = 0;
  if (ke < we && (s[ke] == '=' || s[ke] == ',')) {
    *arg = s + ke + 1;
    *an = we - ke - 1;
    /* `$(location FILE)`: the words up to its ')'. */
    const char *open = memchr(*arg, '(', *an);
    if (open && !memchr(open, ')', (size_t)(s + we - open))) {
      const char *close = memchr(s + we, ')', n - we);
      if (close) *an = (size_t)(close - *arg) + 1;
    }
    return;
  }
  for (size_t i = we, ws; next_word(s, n, &i, &ws);) {
    if (xlinker_word(s + ws, i - ws)) continue;
    *arg = s + ws;
    *an = i - ws;
    return;
  }
}

/* Reports every version-script flag in the word s[ws..we) of the value s[0..n). */
static void scan_vscript(excl_ctx *c, const char *s, size_t n, size_t origin, size_t ws,
                         size_t we) {
  for (size_t at = excl_find_vscript(s + ws, we - ws, 0); at != (size_t)-1;
       at = excl_find_vscript(s + ws, we - ws, at + 2)) {
    const char *arg;
    size_t an;
    vscript_arg(s, n, ws + at, we, &arg, &an);
    excl_report_vscript(c, file_off(c, s, ws + at, origin), s + ws, we - ws, arg, an);
  }
}

/* Scans one value token s[0..n). In LINK context every occurrence counts. In ASSIGN context the
 * token must consist of flags only (each word starts with '-', '$', LINKER:, SHELL: or follows
 * -Xlinker), and an occurrence counts when its word is a pass-through spelling (-Wl,..., LINKER:,
 * a generator expression), follows -Xlinker, or is the value of a link-flag NAME=VALUE word. */
void excl_scan_value(excl_ctx *c, const char *s, size_t n, int ctx, size_t origin) {
  if (ctx == EXCL_CTX_NONE || n == 0) return;
  if (ctx == EXCL_CTX_LINK) {
    for (size_t at = excl_find_flag(s, n, 0); at != (size_t)-1; at = excl_find_flag(s, n, at + 2)) {
      size_t ws = at, we = at;
      while (ws > 0 && !is_word_sep(s[ws - 1])) ws--;
      while (we < n && !is_word_sep(s[we])) we++;
      report(c, file_off(c, s, at, origin), s + ws, we - ws);
    }
    for (size_t i = 0, ws; next_word(s, n, &i, &ws);) scan_vscript(c, s, n, origin, ws, i);
    return;
  }
  /* ASSIGN: first, is every word a flag? */
  int prev_x = 0;
  for (size_t i = 0, ws; ctx == EXCL_CTX_ASSIGN && next_word(s, n, &i, &ws);) {
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
  for (size_t i = 0, ws; next_word(s, n, &i, &ws);) {
    const char *w = s + ws;
    size_t wn = i - ws;
    size_t at = excl_find_flag(w, wn, 0);
    size_t va = linkish_assignment(w, wn);
    if (at != (size_t)-1 && (passthrough_word(w, wn) || prev_x || (va && at >= va)))
      report(c, file_off(c, s, ws + at, origin), w, wn);
    size_t vs = excl_find_vscript(w, wn, 0);
    if (vs != (size_t)-1 && (passthrough_word(w, wn) || prev_x || (va && vs >= va)))
      scan_vscript(c, s, n, origin, ws, i);
    prev_x = xlinker_word(w, wn);
  }
}

static int excl_check_text(tether_lint_file *f, void *state, const char *text, size_t len) {
  excl_ctx c = {f, text, len, state};
  const char *path = tether_lint__file_path(f);
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  switch (kind_of(path)) {
  case K_CMAKE:
    excl_check_cmake(&c);
    excl_twice_collect(&c, 0);
    return 0;
  case K_BAZEL:
    excl_check_pylike(&c, EXCL_PYTHON);
    if (!tether_lint__ends_with(base, ".bzl")) excl_twice_collect(&c, 1);
    return 0;
  case K_SETUPPY:
    excl_check_pylike(&c, EXCL_PYTHON);
    return 0;
  case K_MESON:
    excl_check_pylike(&c, EXCL_MESON);
    return 0;
  case K_PYPROJECT:
    excl_check_pylike(&c, EXCL_TOML);
    return 0;
  case K_MAKE:
    excl_check_make(&c);
    return 0;
  case K_COMPDB:
    return excl_check_compdb(&c);
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
    .take_fact = excl_take_fact,
};
