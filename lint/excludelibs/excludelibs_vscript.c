/* version-script: a linker version script that makes every unlisted symbol local (`local: *;`),
 * the modern spelling of --exclude-libs (rule family exclude-libs).
 *
 * Invariant: the flag is found by the same value scanner as --exclude-libs (rule_excludelibs.c,
 * the same contexts); this file takes the script argument of one occurrence, resolves it against
 * the build file's folder (the spellings each build language uses for "this folder" and Bazel's
 * `$(location ...)` of a file of the package), reads it (at most 1 MiB) and reports the flag when
 * the script hides everything it does not list and lists nothing of MLIR's. A script that cannot be
 * resolved or read is reported too, saying so: the flag alone is the risky shape. */
#include "lint/excludelibs/excludelibs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t excl_find_vscript(const char *s, size_t n, size_t from) {
  return excl_find_key(s, n, from, "version-script");
}

/* ---- the script ---------------------------------------------------------------------------- */

/* 1 when the script makes every symbol it does not list local (`local: *;` in a node) and lists
 * nothing of MLIR's as global (a pattern naming mlir, C or C++, or `*`). */
static int hides_mlir(const char *t, size_t n) {
  int local = 0, catch_all = 0, exports_mlir = 0;
  size_t i = 0;
  while (i < n) {
    char ch = t[i];
    if (ch == '/' && i + 1 < n && t[i + 1] == '*') {
      const char *e = NULL;
      for (size_t k = i + 2; k + 1 < n; k++)
        if (t[k] == '*' && t[k + 1] == '/') {
          e = t + k;
          break;
        }
      i = e ? (size_t)(e - t) + 2 : n;
      continue;
    }
    if (ch == '#') {
      while (i < n && t[i] != '\n') i++;
      continue;
    }
    if (excl_is_space(ch) || ch == ';' || ch == '{') {
      i++;
      continue;
    }
    if (ch == '}') {
      local = 0;
      i++;
      continue;
    }
    size_t ws = i;
    if (ch == '"') {
      i++;
      while (i < n && t[i] != '"') i++;
      if (i < n) i++;
    } else {
      while (i < n && !excl_is_space(t[i]) && !strchr(";{}", t[i])) i++;
    }
    const char *w = t + ws;
    size_t wn = i - ws;
    /* `local:` / `global:` (also with the colon apart) switch the section. */
    size_t k = i;
    while (k < n && excl_is_space(t[k])) k++;
    int colon_next = k < n && t[k] == ':';
    if ((wn == 6 && !memcmp(w, "local:", 6)) || (wn == 5 && !memcmp(w, "local", 5) && colon_next)) {
      local = 1;
      if (colon_next) i = k + 1;
      continue;
    }
    if ((wn == 7 && !memcmp(w, "global:", 7)) ||
        (wn == 6 && !memcmp(w, "global", 6) && colon_next)) {
      local = 0;
      if (colon_next) i = k + 1;
      continue;
    }
    if (wn == 6 && !memcmp(w, "extern", 6)) continue;
    if (w[0] == '"') continue; /* "C++", "C" */
    int star = wn == 1 && w[0] == '*';
    int mlir = 0;
    for (size_t m = 0; m + 4 <= wn; m++)
      if (!memcmp(w + m, "mlir", 4)) mlir = 1;
    if (local && star) catch_all = 1;
    if (!local && (star || mlir)) exports_mlir = 1;
  }
  return catch_all && !exports_mlir;
}

/* ---- resolving the argument ------------------------------------------------------------------ */

static int starts(const char *s, size_t n, const char *p) {
  size_t pl = strlen(p);
  return n >= pl && memcmp(s, p, pl) == 0;
}

/* Tries dir/rel; 0 with the script's verdict in *hides, or -1 when unreadable. */
static int try_read(const char *dir, const char *rel, size_t rn, int *hides) {
  char path[4096];
  int k = rel[0] == '/' ? snprintf(path, sizeof path, "%.*s", (int)rn, rel)
                        : snprintf(path, sizeof path, "%s/%.*s", dir, (int)rn, rel);
  if (k <= 0 || (size_t)k >= sizeof path) return -1;
  char *text = NULL;
  size_t len = 0;
  if (tether_lint__read_file_max(path, 1u << 20, &text, &len) != 0) return -1;
  *hides = hides_mlir(text, len);
  free(text);
  return 0;
}

/* Reads the script named by arg[0..an) from a build file in `dir`: 0 with the verdict, -1 when
 * the argument cannot be resolved or read. Prefixes that mean the build file's folder are taken
 * off; a project-root variable or a Bazel label is tried against the folder and its parents. */
static int read_script(const char *dir, const char *arg, size_t an, int *hides) {
  static const char *const here[] = {"${CMAKE_CURRENT_SOURCE_DIR}/",
                                     "${CMAKE_CURRENT_LIST_DIR}/",
                                     "$(CURDIR)/",
                                     "$(srcdir)/",
                                     "./",
                                     NULL};
  static const char *const root[] = {"${PROJECT_SOURCE_DIR}/", "${CMAKE_SOURCE_DIR}/", "//", NULL};
  static const char *const bazel[] = {"$(location ", "$(locations ", "$(execpath ", "$(execpaths ",
                                      "$(rootpath ", "$(rootpaths ", NULL};
  int upward = 0;
  for (int i = 0; bazel[i]; i++)
    if (starts(arg, an, bazel[i])) {
      size_t pl = strlen(bazel[i]);
      const char *close = memchr(arg + pl, ')', an - pl);
      if (!close) return -1;
      an = (size_t)(close - arg) - pl;
      arg += pl;
      if (an && arg[0] == ':') arg++, an--;
      break;
    }
  for (int i = 0; here[i]; i++)
    if (starts(arg, an, here[i])) arg += strlen(here[i]), an -= strlen(here[i]);
  for (int i = 0; root[i]; i++)
    if (starts(arg, an, root[i])) arg += strlen(root[i]), an -= strlen(root[i]), upward = 1;
  if (an == 0 || memchr(arg, '$', an) || memchr(arg, '@', an)) return -1;
  /* A Bazel label `pkg:name` is the file pkg/name. */
  char rel[1024];
  if (an >= sizeof rel) return -1;
  memcpy(rel, arg, an);
  rel[an] = '\0';
  char *colon = strchr(rel, ':');
  if (colon) {
    *colon = '/';
    upward = 1;
  }
  if (rel[0] == '/') return try_read("", rel, an, hides);
  char d[4096];
  if (snprintf(d, sizeof d, "%s", dir) >= (int)sizeof d) return -1;
  for (;;) {
    if (try_read(d, rel, an, hides) == 0) return 0;
    char *slash = strrchr(d, '/');
    if (!upward || !slash || slash == d) return -1;
    *slash = '\0';
  }
}

void excl_report_vscript(excl_ctx *c, size_t off, const char *word, size_t wn, const char *arg,
                         size_t an) {
  /* The argument without quotes, generator-expression closers and trailing punctuation. */
  while (an && (arg[0] == '"' || arg[0] == '\'')) arg++, an--;
  while (an && strchr("\"'>,);\\", arg[an - 1])) {
    /* Keep the ')' of a $(location ...) whose '(' is in the argument. */
    if (arg[an - 1] == ')' && memchr(arg, '(', an)) break;
    an--;
  }
  char dir[4096];
  const char *path = tether_lint__file_path(c->f);
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
  int hides = 0;
  int got = an ? read_script(dir, arg, an, &hides) : -1;
  if (got == 0 && !hides) return;
  unsigned line, col;
  excl_line_col(c, off, &line, &col);
  if (wn > 120) wn = 120;
  if (an > 200) an = 200;
  if (got == 0)
    tether_lint__report_at(c->f, line, col, EXCL_VSCRIPT_RULE,
                           "link flag '%.*s' passes a version script whose 'local: *;' makes "
                           "every symbol it does not list local, and it lists none of MLIR's: "
                           "symbols from static archives (TypeIDs among them) become private to "
                           "this shared object, as with --exclude-libs",
                           (int)wn, word);
  else
    tether_lint__report_at(c->f, line, col, EXCL_VSCRIPT_RULE,
                           "link flag '%.*s' passes a version script tether-lint could not read "
                           "('%.*s'): if it has 'local: *;' and does not list MLIR's symbols, "
                           "symbols from static archives (TypeIDs among them) become private to "
                           "this shared object, as with --exclude-libs",
                           (int)wn, word, (int)an, arg);
}
