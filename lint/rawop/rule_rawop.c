/* Rule family "rawop": raw-op-unguarded and raw-op-escape. The family's entry point, its rules,
 * and how its findings are reported.
 *
 * Invariant: every function body in the main file (lambda bodies included, each as a function of
 * its own) is walked once, in evaluation order, carrying the set of wrapper expressions known to be
 * valid on every path to the current point (a must-analysis over structured control flow). A
 * wrapper enters the set through a guard (guard call, guarded accessor, a condition that proves
 * validity on the branch taken, or an early exit on the invalid branch) and leaves it when the
 * wrapper is reassigned or invalidated; the set after an if/?:/try is the intersection of its
 * branches, a loop or switch body never adds to the set after it (but what it removed is removed
 * after it; a do/while(0) body is a block), and a label empties it. The set also holds status facts
 * ("local rc holds the status of an accessor called on w"), which a check of rc turns into w.
 * Wrapper identity is the expression's token spelling ("self", "this", "this->parentOperation" is
 * "parentOperation"). Anything the walk does not model makes the set smaller, never larger, so the
 * approximation can only add findings, not hide them. rawop.h lists the family's files. */
#include "lint/rawop/rawop.h"
#include "lint/utils/clang_util.h"

#include <stdlib.h>
#include <string.h>

static const tether_lint_rule_info rawop_rules[] = {
    {"raw-op-unguarded", "Raw MLIR handle taken from a wrapper without a validity guard",
     "A raw IR handle (operation, block, region or value) is taken from a binding's wrapper object "
     "through an accessor or field that does not check validity, on a path where no validity guard "
     "on the same wrapper dominates the use. If the wrapper's IR was erased or its parent freed, "
     "the raw handle dangles and using it crashes the process.",
     "guard the wrapper first: call its guard (e.g. self.checkValid()), return early when it is "
     "invalid, or check the accessor's status against TETHER_OK before using the handle"},
    {"raw-op-escape", "Raw MLIR handle from a wrapper stored where it outlives the guard",
     "A raw IR handle taken from a wrapper is stored in a field, a global or static variable, a "
     "lambda capture, or returned to a caller. The validity check (if any) only held where it was "
     "made; the stored copy can outlive the IR it points to and dangle later.",
     "keep the wrapper (or a tether handle) instead of the raw handle, and take the raw handle "
     "again, after a guard, where it is used"},
};

/* The end offset of the macro invocation whose name starts at `off` in `text` (the closing
 * parenthesis of its arguments), or `off` when it takes none. */
static size_t macro_invocation_end(const char *text, size_t size, size_t off) {
  size_t i = off;
  while (i < size && tether_lint__is_ident_char(text[i])) i++;
  while (i < size && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) i++;
  if (i >= size || text[i] != '(') return off;
  int depth = 0;
  char quote = 0;
  for (; i < size; i++) {
    char ch = text[i];
    if (quote) {
      if (ch == '\\' && i + 1 < size)
        i++;
      else if (ch == quote)
        quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'') quote = ch;
    if (ch == '(') depth++;
    if (ch == ')' && --depth == 0) return i;
  }
  return off;
}

/* Is `loc` in code written in a macro's arguments in the main file (`assert(f(op.get()))`)?
 * Such code is reported where it is written, not at the macro's name. */
static int in_macro_argument(CXTranslationUnit tu, CXSourceLocation loc) {
  CXFile ef = NULL, sf = NULL;
  unsigned eoff = 0, soff = 0;
  clang_getExpansionLocation(loc, &ef, NULL, NULL, &eoff);
  clang_getSpellingLocation(loc, &sf, NULL, NULL, &soff);
  if (!ef || !sf || !clang_File_isEqual(ef, sf) || soff <= eoff) return 0;
  size_t size = 0;
  const char *text = clang_getFileContents(tu, ef, &size);
  if (!text || eoff >= size) return 0;
  return soff <= macro_invocation_end(text, size, eoff);
}

/* Where a construct is reported: the start of its extent (an expansion location), or for code in
 * a macro's arguments (`assert(f(self.get()))`) a macro location the report resolves to where it
 * is written: the start of the expression there. */
CXSourceLocation rawop_start_of(CXCursor e) {
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(e);
  CXSourceLocation loc = clang_getCursorLocation(e);
  CXSourceLocation start = clang_getRangeStart(clang_getCursorExtent(e));
  /* In a macro's arguments the extent's start is spelled where the expression begins (`self` of
   * `self.get()`), unless the expression itself starts outside the arguments. */
  if (in_macro_argument(tu, loc)) return in_macro_argument(tu, start) ? start : loc;
  return start;
}

/* A finding at `at` (where it is written, for code in a macro's arguments), with a message of
 * three strings; none while computing a summary. */
static void report(rawop_ctx *c, CXSourceLocation at, const char *rule, const char *fmt,
                   const char *a, const char *b, const char *d) {
  if (c->quiet) return;
  if (in_macro_argument(c->tu, at))
    tether_lint__report_tu_spelled(c->f, c->tu, at, rule, fmt, a, b, d);
  else
    tether_lint__report_tu(c->f, c->tu, at, rule, fmt, a, b, d);
}

void rawop_report_unguarded(rawop_ctx *c, CXSourceLocation at, const char *wrapper,
                            const char *via) {
  report(c, at, RULE_UNGUARDED,
         "raw handle taken from '%s' through %s is used where no validity check of '%s' "
         "dominates it",
         wrapper, via, wrapper);
}

void rawop_report_escape(rawop_ctx *c, CXSourceLocation at, const char *wrapper, const char *via,
                         const char *where) {
  report(c, at, RULE_ESCAPE,
         "raw handle taken from '%s' through %s %s, where it outlives any validity check", wrapper,
         via, where);
}

void rawop_ctx_free(rawop_ctx *c) {
  rawop_drop_bindings(c, 0);
  rawop_drop_lambda_vars(c, 0);
  rawop_drop_container_pushes(c, 0);
  free(c->b);
  free(c->lv);
  free(c->cp);
  free(c->svars);
  free(c->sv_escaped);
  rawop_kills_free(&c->kills);
}

static int rawop_check_tu(tether_lint_file *f, void *state, CXTranslationUnit tu) {
  (void)state;
  rawop_ctx c;
  memset(&c, 0, sizeof c);
  c.f = f;
  c.tu = tu;
  c.p = tether_lint__file_profile(f);
  c.scope.defer = clang_getNullCursor();
  c.local_lambda = clang_getNullCursor();
  c.scope.cur_lambda = clang_getNullCursor();
  rawop_shared sh;
  memset(&sh, 0, sizeof sh);
  c.sh = &sh;
  clang_visitChildren(clang_getTranslationUnitCursor(tu), rawop_collect_bindings, &c);
  clang_visitChildren(clang_getTranslationUnitCursor(tu), rawop_visit_decl, &c);
  rawop_degraded(&c);
  rawop_ctx_free(&c);
  for (size_t i = 0; i < sh.n; i++) {
    free(sh.v[i].key);
    rawop_facts_free(&sh.v[i].guards);
    tether_lint__strlist_free(&sh.v[i].params);
  }
  free(sh.v);
  for (size_t i = 0; i < sh.ntb; i++) free(sh.tb[i].usr);
  free(sh.tb);
  tether_lint__strlist_free(&sh.wrapper_types_yes);
  tether_lint__strlist_free(&sh.wrapper_types_no);
  return 0;
}

const tether_lint_family tether_lint__family_rawop = {
    .name = "rawop",
    .inputs = TETHER_LINT_IN_TU,
    .rules = rawop_rules,
    .nrules = sizeof rawop_rules / sizeof rawop_rules[0],
    .check_tu = rawop_check_tu,
};
