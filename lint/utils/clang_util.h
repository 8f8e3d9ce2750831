/* libclang helpers and token scanning shared by the rule families that read translation units
 * (rawop/, typeid/, lifetime/), as include-what-you-use keeps its AST and lexer utilities in layers
 * of their own. Nothing here knows a rule. */
#ifndef TETHER_LINT_CLANG_UTIL_H
#define TETHER_LINT_CLANG_UTIL_H

#include "lint/lint.h"

/* ---- strings, cursors, kinds ------------------------------------------------------------------
 */

/// A malloc'd copy of `s` ("" when libclang gives none), and `s` disposed. NULL when out of memory.
char *tether_lint__cx_take(CXString s);
/// 1 when the cursor's spelling is `name`.
int tether_lint__cursor_is(CXCursor c, const char *name);
/// Functions, methods, constructors, destructors, conversions, function templates (not lambdas).
int tether_lint__is_function_kind(enum CXCursorKind k);
/// Classes, structs, unions, class templates and their partial specializations.
int tether_lint__is_class_kind(enum CXCursorKind k);
/// A character of a C identifier: [A-Za-z0-9_].
int tether_lint__is_ident_char(char ch);

/* ---- the translation unit ---------------------------------------------------------------------
 */

/// The main file of `tu`, or NULL.
CXFile tether_lint__main_file(CXTranslationUnit tu);
/// How many diagnostics of `tu` are errors (or fatal).
unsigned tether_lint__error_count(CXTranslationUnit tu);
/// The name X of the first "'X' file not found" diagnostic of `tu` for which `prefer` (when not
/// NULL) says yes, else of the first one at all, else "". Written to `out` (at most 511 bytes).
void tether_lint__missing_header(CXTranslationUnit tu, int (*prefer)(const char *name), char *out,
                                 size_t len);

/* ---- tokens -----------------------------------------------------------------------------------
 */

/// One token of a file: its kind, spelling and (spelling) location, and its offset in the file.
typedef struct tether_lint_token {
  CXTokenKind kind;
  char *s;
  unsigned line, col, offset;
} tether_lint_token;

typedef struct tether_lint_tokens {
  tether_lint_token *t;
  size_t n;
} tether_lint_tokens;

/// Every token of `file` (all of its text), comments left out, in order. 0, or -1 when libclang
/// has no contents for the file or out of memory (`out` is then empty).
int tether_lint__tokenize_file(CXTranslationUnit tu, CXFile file, tether_lint_tokens *out);
void tether_lint__tokens_free(tether_lint_tokens *t);
/// 1 when the token's spelling is `s`.
int tether_lint__token_is(const tether_lint_token *t, const char *s);

#endif
