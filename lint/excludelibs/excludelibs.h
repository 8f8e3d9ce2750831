/* The exclude-libs rule family's private interface: the scanner every build-file language shares,
 * and the checks of each language.
 *   rule_excludelibs.c    the family: file kinds, link-flag names, the scanner of values
 *   excludelibs_cmake.c   CMake, and MLIR's CMake helpers that pass the flag themselves
 *   excludelibs_pylike.c  Starlark (Bazel), Python (setup.py), Meson, TOML (pyproject.toml)
 *   excludelibs_make.c    Makefiles
 *   excludelibs_compdb.c  compile_commands.json
 *   excludelibs_vscript.c version scripts (rule version-script): reading the script a flag names
 *   excludelibs_twice.c   dialect-linked-twice: one CMake or BUILD file's targets and links
 *   excludelibs_twice_graph.c  the run's link graph: which static dialect libraries end up in two
 *                         shared objects (excludelibs_twice.h: the records between the two)
 * Names shared by these files start with `excl_`. */
#ifndef TETHER_LINT_EXCLUDELIBS_H
#define TETHER_LINT_EXCLUDELIBS_H

#include "lint/lint.h"

#define EXCL_RULE "exclude-libs"
#define EXCL_VSCRIPT_RULE "version-script"
#define EXCL_TWICE_RULE "dialect-linked-twice"

/* What a value token is, as the language around it says (excl_scan_value). */
enum {
  EXCL_CTX_NONE,   /* not a link flag: never scanned */
  EXCL_CTX_WORDS,  /* a command line: words with a linker pass-through spelling count */
  EXCL_CTX_ASSIGN, /* a plain value: the same, when every word of the value is a flag */
  EXCL_CTX_LINK,   /* a link flag list: every --exclude-libs counts */
};

typedef struct excl_state excl_state;
typedef struct excl_twice excl_twice;

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

/* ---- the lexers, for readers of the build graph ------------------------------------------------
 */

/// One argument of a CMake command: its contents (without quotes or brackets) in the file's text.
typedef struct excl_cm_arg {
  const char *s;
  size_t n;
  int quoted; /* 0 unquoted, 1 quoted or bracket argument */
} excl_cm_arg;

/// Receives each command invocation `name(args)` of a CMake text, in text order (at most 256
/// arguments; the rest are dropped).
typedef void (*excl_cm_callback)(excl_ctx *c, const char *name, size_t nl, const excl_cm_arg *a,
                                 size_t na, void *ud);
/// Runs the CMake lexer of excludelibs_cmake.c over c->text (comments, bracket and quoted
/// arguments, generator expressions, unbalanced parentheses up to the end of the text).
void excl_cmake_parse(excl_ctx *c, excl_cm_callback cb, void *ud);

/// A Starlark token: a string literal (its contents, without quotes), a name, one bracket, a
/// comma, an operator (one or two characters: "=", "+=", "==", ":", ".", a digit...) or a newline.
/// `s` points into the text.
typedef enum {
  EXCL_TOK_STRING,
  EXCL_TOK_NAME,
  EXCL_TOK_OPEN,
  EXCL_TOK_CLOSE,
  EXCL_TOK_COMMA,
  EXCL_TOK_OP,
  EXCL_TOK_NEWLINE,
} excl_tok_kind;

typedef struct excl_tok {
  excl_tok_kind kind;
  const char *s;
  size_t n;
} excl_tok;

typedef void (*excl_tok_callback)(const excl_tok *t, void *ud);
/// Runs the Starlark/Python lexer of excludelibs_pylike.c over text[0..len) and hands every token
/// to `cb`, in text order (comments and line continuations are skipped). Reports nothing.
void excl_lex_starlark(const char *text, size_t len, excl_tok_callback cb, void *ud);

/* ---- dialect-linked-twice (excludelibs_twice.c) -------------------------------------------------
 */

/// The run's link graph, empty. NULL when out of memory.
excl_twice *excl_twice_new(void);
void excl_twice_free(excl_twice *tw);
/// Records the targets and links of a CMake file (`bazel` 0) or a Bazel BUILD file (1) as one
/// fact of the file (tether_lint__file_fact), when dialect-linked-twice is enabled for it.
void excl_twice_collect(excl_ctx *c, int bazel);
/// Adds the fact of one file to the graph. 0, or -1 when it is malformed or out of memory.
int excl_twice_take_fact(excl_twice *tw, const char *data, size_t len);
/// The cross-file pass: reports each static dialect library two shared objects both hold. 0 or
/// -1 when out of memory.
int excl_twice_run_end(tether_lint_run *run, excl_twice *tw);

/* ---- the languages -----------------------------------------------------------------------------
 */

void excl_check_cmake(excl_ctx *c);
void excl_check_pylike(excl_ctx *c, excl_pylang lang);
void excl_check_make(excl_ctx *c);
/// compile_commands.json: -1 when out of memory (a malformed file is a message, 0).
int excl_check_compdb(excl_ctx *c);
/// Reads MLIR's CMake helpers once per run (`[lint] mlir-cmake-dir`, else the newest installed).
int excl_run_begin(tether_lint_run *run, void **state);
/// The family's take_fact: a fact of excl_twice_collect, into the run's graph.
int excl_take_fact(tether_lint_run *run, void *state, const char *data, size_t len);
/// Runs the cross-file pass of dialect-linked-twice and frees the run's state.
int excl_run_end(tether_lint_run *run, void *state);

#endif
