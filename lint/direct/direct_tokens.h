/* The token layer of the direct-binding family: the main file's tokens and what the three files
 * that read them share. A binding file that does not compile loses registrations and `.def` chains
 * from its AST; these files read them from tokens:
 *   direct_tokens.c   loading the tokens (directives, brackets, the binding libraries' spellings);
 *                     registrations and `.def` calls found in them; the pass
 *   direct_toktypes.c types written in tokens (`Block *`, `std::vector<Value>`,
 *                     `std::function<void(Operation *)>`), resolved through the parse's
 * declarations direct_tokbody.c  a bound lambda or pointer from tokens: its return type, its
 * parameters, what it returns, the calls in its body that free IR Names shared by these files start
 * with `direct_tok`. */
#ifndef TETHER_LINT_DIRECT_TOKENS_H
#define TETHER_LINT_DIRECT_TOKENS_H

#include "lint/direct/direct.h"

#include <string.h>

#define NO_MATCH ((size_t)-1)

typedef tether_lint_token ttok;

/* The main file's tokens and what the loading found in them. */
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

static inline int direct_tok_is(const struct direct_toks *k, size_t i, const char *s) {
  return i < k->n && strcmp(k->t[i].s, s) == 0;
}

static inline int direct_tok_ident(const struct direct_toks *k, size_t i) {
  return i < k->n && k->t[i].kind == CXToken_Identifier;
}

/// The location of token `i` in the main file.
CXSourceLocation direct_tok_loc(direct_ctx *x, const struct direct_toks *k, size_t i);
/// 1 when a compile error of the main file lies between the offsets `from` and `to`.
int direct_tok_errors_in(const struct direct_toks *k, size_t from, size_t to);

/* ---- types written in tokens (direct_toktypes.c) ----------------------------------------------
 */

/// The tokens [from, to) joined as C++ would print them (a space only between two words).
void direct_tok_join(const struct direct_toks *k, size_t from, size_t to, char *out, size_t len);
/// The `>` closing the `<` at `lt` (depth counted, `>>` closing two), within [lt, end); NO_MATCH.
size_t direct_tok_angle_close(const struct direct_toks *k, size_t lt, size_t end);
/// Splits [from, to) at commas outside brackets and angle brackets: up to `max` ranges in `r`;
/// returns how many.
int direct_tok_split_args(const struct direct_toks *k, size_t from, size_t to, size_t (*r)[2],
                          int max);
/// `const`, `volatile`, `typename`, `struct`, `class`, `&`, `&&`, `*`.
int direct_tok_qualifier_word(const struct direct_toks *k, size_t i);

/// What a type written in tokens is.
typedef struct direct_ttype {
  int cat;           /* its class's category (or its element's, in a container) */
  int resolved;      /* the class's declaration was found (or the file registers it) */
  int in_container;  /* the category is an element's */
  int callback;      /* std::function whose parameters include raw IR (cat is theirs) */
  char written[256]; /* as written, for messages ("Block *") */
  char name[256];    /* the class's name as written, without qualifiers or arguments */
} direct_ttype;

/// Classifies the type written at [from, to): owners hold nothing raw, containers by their
/// elements, std::function by its parameters, a class through the parse's declarations (else the
/// file's registrations, else MLIR's own names where the file names MLIR).
void direct_tok_classify(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to,
                         direct_ttype *out, int depth);

/* ---- bound callables from tokens (direct_tokbody.c) -------------------------------------------
 */

/// A lambda written at a `[`: its parts' token ranges.
typedef struct direct_tlambda {
  size_t params_open, params_close; /* NO_MATCH without a parameter list */
  size_t ret_from, ret_to;          /* the written return type, or equal */
  size_t body_open, body_close;
} direct_tlambda;

/// Parses the lambda at `lb` (its `[`) within [lb, end): 1 with `l` filled, else 0.
int direct_tok_parse_lambda(const struct direct_toks *k, size_t lb, size_t end, direct_tlambda *l);
/// Judges the lambda at `lb` bound at `site`: through its LambdaExpr when libclang kept it whole,
/// else from its tokens (direct-frees-ir, direct-raw-return); `*done` as direct_judge_callable's.
void direct_tok_judge_lambda(direct_ctx *x, const struct direct_toks *k, const direct_site *site,
                             size_t lb, const direct_tlambda *l, int *done);
/// Judges `&A::B::m`, `&f` or `f` written at [from, to) through the declaration it names. 1 when
/// resolved.
int direct_tok_judge_pointer(direct_ctx *x, const struct direct_toks *k, const direct_site *site,
                             size_t from, size_t to, int *done);

#endif
