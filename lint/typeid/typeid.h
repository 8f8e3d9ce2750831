/* The weak-typeid rule family's private interface: the per-unit context, the cross-file facts, and
 * what its files share.
 *   rule_typeid.c    the family: the AST checks of one translation unit
 *   typeid_facts.c   the cross-file pass: declarations and definitions, the project's roots
 *   typeid_tokens.c  degraded mode: the TypeID macros from tokens, for files that do not compile
 * Names shared by these files start with `typeid_`. */
#ifndef TETHER_LINT_TYPEID_H
#define TETHER_LINT_TYPEID_H

#include "lint/utils/clang_util.h"
#include "lint/lint.h"

#define TYPEID_RULE "weak-typeid"

/* The TypeID macros, by what their expansion does (typeid_known_macro). */
enum typeid_macro_kind {
  TYPEID_MACRO_NONE,
  TYPEID_MACRO_INLINE,
  TYPEID_MACRO_DECLARE,
  TYPEID_MACRO_DEFINE,
  TYPEID_MACRO_FALLBACK
};

enum { TYPEID_FACT_DECLARE, TYPEID_FACT_DEFINE };

/* A declaration or definition of explicit TypeID storage, for the cross-file pass. */
typedef struct typeid_fact {
  int kind;
  char *key;     /* the class (whitespace and a leading "::" removed) or Class::member */
  char *what;    /* how it was written, for messages: "MLIR_DECLARE_EXPLICIT_TYPE_ID(a::B)" */
  char *file;    /* as reported */
  char *real;    /* canonical path, for comparing locations */
  unsigned line; /* 1-based */
  unsigned col;
  int degraded;  /* recognised from tokens only */
  int main_file; /* in an input file (always the user's), not in a header it includes */
} typeid_fact;

/* The family's state for a run (the driver's process): the facts of every unit. */
typedef struct typeid_state {
  tether_lint_run *run;
  int system_headers;
  tether_lint__strlist roots; /* canonical project roots: headers elsewhere are not the user's */
  typeid_fact *v;
  size_t n, cap;
} typeid_state;

/* Where a construct is written: file, line, column of its expansion location, and whether it
 * came out of a macro (then `macro` receives the name written at the expansion location). */
typedef struct typeid_where {
  CXFile file;
  unsigned line, col, offset;
  int from_macro;
  char macro[128];
} typeid_where;

/* A finding that depends on the whole unit (a resolver specialization may come later in it). */
typedef struct typeid_cand {
  CXCursor cur;
  int kind; /* TYPEID_CAND_DERIVED, TYPEID_CAND_GET */
  char *cls;
  char *detail;
} typeid_cand;

enum { TYPEID_CAND_DERIVED, TYPEID_CAND_GET };

/* The context of one translation unit's checks. */
typedef struct typeid_ctx {
  tether_lint_file *f;
  typeid_state *st;
  CXTranslationUnit tu;
  CXFile main_file;
  const char *main_path;
  int main_is_header;
  tether_lint__strlist specialized;  /* classes with an explicit TypeIDResolver<> specialization */
  tether_lint__strlist own_resolver; /* classes (canonical spelling) that declare resolveTypeID */
  unsigned *lines;                   /* main-file lines the AST analysis covered */
  size_t nlines, caplines;
  typeid_cand *cands;
  size_t ncands, capcands;
} typeid_ctx;

/* ---- the AST checks (rule_typeid.c) -----------------------------------------------------------
 */

/// What the TypeID macro `name` does, or TYPEID_MACRO_NONE.
enum typeid_macro_kind typeid_known_macro(const char *name);
/// 1 when the AST analysis covered main-file line `line` (a token result there is not used).
int typeid_covered(const typeid_ctx *c, unsigned line);
/// How copies come about, for messages: in a header (`header`) or in linked code.
const char *typeid_linkage_story(int header);

/* ---- the cross-file pass (typeid_facts.c) ------------------------------------------------------
 */

/// Records a fact for the cross-file pass through the driver (tether_lint__file_fact): check_tu
/// runs in a worker process, or not at all when the result comes from the cache.
void typeid_fact_add(tether_lint_file *f, int kind, const char *key, const char *what,
                     const char *file, unsigned line, unsigned col, int degraded);
/// "::a :: B< int >" -> "a::B<int>" (malloc'd).
char *typeid_norm_key(const char *s);
/// The unqualified last component of a key ("a::B<int>" -> "B<int>"), for degraded matching.
const char *typeid_last_component(const char *key);
/// A header by its name (.h, .hpp, ..., .h.inc).
int typeid_is_header_path(const char *path);
int typeid_run_begin(tether_lint_run *run, void **state);
int typeid_take_fact(tether_lint_run *run, void *state, const char *data, size_t len);
int typeid_run_end(tether_lint_run *run, void *state);

/* ---- degraded mode (typeid_tokens.c) -----------------------------------------------------------
 */

/// For a unit with compile errors: the TypeID macros from tokens, and a note saying so.
void typeid_degraded(typeid_ctx *x);

#endif
