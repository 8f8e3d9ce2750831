/* The exclude-libs rule family's private interface: the scanner every build-file language shares,
 * and the checks of each language.
 *   rule_excludelibs.c    the family: file kinds, link-flag names, the scanner of values
 *   excludelibs_cmake.c   CMake, and MLIR's CMake helpers that pass the flag themselves
 *   excludelibs_pylike.c  Starlark (Bazel), Python (setup.py), Meson, TOML (pyproject.toml)
 *   excludelibs_make.c    Makefiles
 *   excludelibs_compdb.c  compile_commands.json
 *   excludelibs_vscript.c version scripts (rule version-script): reading the script a flag names
 * Names shared by these files start with `excl_`. */
#ifndef TETHER_LINT_EXCLUDELIBS_H
#define TETHER_LINT_EXCLUDELIBS_H

#include "lint/lint.h"

#define EXCL_RULE "exclude-libs"
#define EXCL_VSCRIPT_RULE "version-script"

/* What a value token is, as the language around it says (excl_scan_value). */
enum {
  EXCL_CTX_NONE,   /* not a link flag: never scanned */
  EXCL_CTX_WORDS,  /* a command line: words with a linker pass-through spelling count */
  EXCL_CTX_ASSIGN, /* a plain value: the same, when every word of the value is a flag */
  EXCL_CTX_LINK,   /* a link flag list: every --exclude-libs counts */
};

typedef struct excl_state excl_state;

typedef struct excl_ctx {
  tether_lint_file *f;
  const char *text;
  size_t len;
  const excl_state *st; /* the run's view of MLIR's CMake helpers (NULL: none) */
} excl_ctx;

/* The Python-like languages (excl_check_pylike). */
typedef enum { EXCL_PYTHON, EXCL_MESON, EXCL_TOML } excl_pylang;

/* ---- the scanner (rule_excludelibs.c) ----------------------------------------------------------
 */

/// Scans one value token s[0..n) in context `ctx` and reports every --exclude-libs that counts
/// there; positions are in the file's text when `s` points into it, else all at `origin`.
void excl_scan_value(excl_ctx *c, const char *s, size_t n, int ctx, size_t origin);
/// Finds "-KEY"/"--KEY" with flag boundaries in s[0..n) from `from`: the offset of its first
/// dash, or (size_t)-1. excl_find_flag: KEY exclude-libs.
size_t excl_find_key(const char *s, size_t n, size_t from, const char *key);
size_t excl_find_flag(const char *s, size_t n, size_t from);
/// The line and column (1-based) of byte `off` of the file's text.
void excl_line_col(const excl_ctx *c, size_t off, unsigned *line, unsigned *col);
/// A variable, keyword, property or table whose values are link flags.
int excl_linkish(const char *s, size_t n);
/// A variable or keyword whose values are compile flags (never scanned).
int excl_compileish(const char *s, size_t n);
/// An identifier (letters, digits, '_', '-'; not starting with a digit or '-').
int excl_is_ident(const char *s, size_t n);
int excl_is_space(char ch);
int excl_ends_with_n(const char *s, size_t n, const char *suffix);

/* ---- version scripts (excludelibs_vscript.c) ------------------------------------------------
 */

/// Finds "-version-script"/"--version-script" with flag boundaries, as excl_find_flag.
size_t excl_find_vscript(const char *s, size_t n, size_t from);
/// Reports the version-script flag at file offset `off` (its word, and the script argument
/// arg[0..an), empty when none was found) unless the script is read and keeps MLIR's symbols.
void excl_report_vscript(excl_ctx *c, size_t off, const char *word, size_t wn, const char *arg,
                         size_t an);

/* ---- the languages -----------------------------------------------------------------------------
 */

void excl_check_cmake(excl_ctx *c);
void excl_check_pylike(excl_ctx *c, excl_pylang lang);
void excl_check_make(excl_ctx *c);
/// compile_commands.json: -1 when out of memory (a malformed file is a message, 0).
int excl_check_compdb(excl_ctx *c);
/// Reads MLIR's CMake helpers once per run (`[lint] mlir-cmake-dir`, else the newest installed).
int excl_run_begin(tether_lint_run *run, void **state);
int excl_run_end(tether_lint_run *run, void *state);

#endif
