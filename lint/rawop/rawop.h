/* The raw-op rule family's private interface: the walk's state and the functions its files share.
 *
 * The family (raw-op-unguarded, raw-op-escape) walks every function body of the main file once, in
 * evaluation order, carrying the facts known to hold on every path to the current point (see
 * rawop_facts.c). Its files, in the order a reader meets them:
 *   rule_rawop.c       the family: rules, the entry point, reporting
 *   rawop_stmt.c       the walk over declarations and statements (functions, lambdas, control flow)
 *   rawop_expr.c       the walk over expressions (calls, assignments, conditions)
 *   rawop_facts.c      fact sets: wrappers known valid, status variables, the log of removals
 *   rawop_profile.c    what the profile says about a cursor (raw accesses, guards, wrapper types)
 *   rawop_escape.c     where raw handles are kept: local variables, lambdas, containers, stores
 *   rawop_summary.c    what a helper function or lambda guards for its callers; calls that never
 *                      return
 *   rawop_templates.c  the file's own template instantiations, for dependent expressions
 *   rawop_ast.c        reading the AST: children, implicit nodes stripped, spellings
 *   rawop_tokens.c     degraded mode: raw accesses and guards from tokens, for files that do not
 *                      compile
 * Names shared by these files start with `rawop_`. */
#ifndef TETHER_LINT_RAWOP_H
#define TETHER_LINT_RAWOP_H

#include "lint/lint.h"

#define RULE_UNGUARDED "raw-op-unguarded"
#define RULE_ESCAPE "raw-op-escape"

/* The children of a cursor, in order (rawop_children). */
typedef struct rawop_kids {
  CXCursor *v;
  size_t n, cap;
} rawop_kids;

/* A fact of the walk, known on every path to the current point: wrapper `wrapper` is valid
 * (status_var == RAWOP_NO_STATUS_VAR), or the function's local status variable number
 * `status_var` (rawop_ctx.svars) holds the status of a status accessor called on `wrapper`. A
 * status fact turns into a wrapper fact where the variable is checked against a "valid" status.
 * Both are must-facts (a join keeps them only when every path established them), and both die
 * when the wrapper is written; a status fact also when its variable is. */
#define RAWOP_NO_STATUS_VAR ((size_t)-1)
typedef struct rawop_fact {
  char *wrapper;     /* its spelling (rawop_spelling) */
  size_t status_var; /* RAWOP_NO_STATUS_VAR for a wrapper fact */
} rawop_fact;

/* A set of facts, in the order they were established (status lookups take the first match). */
typedef struct rawop_facts {
  rawop_fact *v;
  size_t n, cap;
} rawop_facts;

/* One removal of facts, logged so that what a loop, switch or try body removed on any of its paths
 * can be removed after it too (rawop_apply_kills). */
enum { RAWOP_KILL_WRAPPER, RAWOP_KILL_STATUS_VAR, RAWOP_KILL_ALL };
typedef struct rawop_kill {
  int kind;
  char *wrapper;     /* RAWOP_KILL_WRAPPER: the wrapper (and what derives from it) */
  size_t status_var; /* RAWOP_KILL_STATUS_VAR: the status variable */
} rawop_kill;

typedef struct rawop_kills {
  rawop_kill *v;
  size_t n, cap;
} rawop_kills;

/* A local variable holding a raw handle from a raw accessor (its uses need a guard), or from a
 * guarded accessor (checked when taken; only where it is kept matters). */
enum { RAWOP_BIND_RAW, RAWOP_BIND_CHECKED };

typedef struct rawop_binding {
  CXCursor var;  /* the local variable holding the raw handle */
  char *wrapper; /* spelling of the wrapper it came from */
  char *via;     /* accessor description, for messages */
  CXSourceLocation access;
  int kind;
  int reported;
} rawop_binding;

/* What a function or lambda defined in the translation unit does for its callers: the wrappers
 * (spelled as in its body) that are valid whenever it returns normally, and whether it can
 * return normally at all. Computed on demand, once per function. */
typedef struct rawop_summary {
  char *key;    /* USR, or the lambda's file offset */
  int done;     /* 0 while being computed (a recursive call sees an empty summary) */
  int noreturn; /* every path ends in a throw or a call that does not return */
  rawop_facts guards;
  tether_lint__strlist params; /* parameter names in order */
} rawop_summary;

/* An instantiation the file makes of one of its templates: a function template's argument types
 * (one per parameter) or a class template's arguments. */
typedef struct rawop_tbinding {
  char *usr;
  int is_class;
  CXType args[8];
  int nargs;
} rawop_tbinding;

/* State shared by a context and the contexts it opens to compute summaries. */
typedef struct rawop_shared {
  rawop_tbinding *tb;
  size_t ntb, captb;
  rawop_summary *v;
  size_t n, cap;
  tether_lint__strlist wrapper_types_yes, wrapper_types_no; /* rawop_type_is_wrapper() memo */
} rawop_shared;

/* A local variable bound to a lambda, and what the lambda captured. */
typedef struct rawop_lambda_var {
  CXCursor var;
  CXCursor lambda;
  char *wrapper, *via; /* a raw handle it captured (NULL: none) */
  CXSourceLocation at;
  int reported;
} rawop_lambda_var;

/* A raw handle pushed into a local container: reported if the container escapes. */
typedef struct rawop_container_push {
  CXCursor var; /* the local container */
  char *wrapper, *via;
  CXSourceLocation at;
  int reported;
} rawop_container_push;

/* Where the walk is: the function or lambda body being walked. Saved, reset and restored around a
 * nested body (rawop_stmt.c). */
typedef struct rawop_scope {
  size_t fn_base;             /* bindings below this index belong to enclosing functions */
  int in_lambda;              /* the body is a lambda's: */
  CXCursor cur_lambda;        /* ... that lambda */
  CXSourceLocation lambda_at; /* ... where it is */
  int lambda_local;           /* ... it does not outlive the function */
  CXCursor defer;             /* raw access being bound or stored: no use check on it */
  const rawop_facts
      *switch_entry; /* the state a `case` label of the innermost switch starts with */
} rawop_scope;

/* The walk's context for one translation unit (and one per summary being computed). */
typedef struct rawop_ctx {
  tether_lint_file *f;
  CXTranslationUnit tu;
  const tether_lint_profile *p;
  rawop_shared *sh; /* shared with the contexts that compute summaries */
  rawop_scope scope;
  CXCursor local_lambda; /* the next lambda to walk is called or kept locally only */
  /* Raw handles the functions being walked keep locally: in variables (innermost last), in
   * lambdas kept in variables, in containers. A body drops what it added when it ends. */
  rawop_binding *b;
  size_t nb, cap;
  rawop_lambda_var *lv;
  size_t nlv, caplv;
  rawop_container_push *cp;
  size_t ncp, capcp;
  /* The local variables seen holding a status (a status fact names one by index), and whether
   * their address was taken; the log of removals (rawop_facts.c). */
  CXCursor *svars;
  unsigned char *sv_escaped;
  size_t nsv, capsv;
  rawop_kills kills;
  /* Summary mode: computing one walks the callee quietly (no findings, `quiet`), `depth` levels
   * down, and intersects the states at every normal exit into `ret_acc`. */
  int quiet, depth;
  rawop_facts *ret_acc;
  int ret_seen;
} rawop_ctx;

typedef struct rawop_access {
  int is_raw;
  CXCursor node; /* where the walk meets the access (the member expression) */
  char *wrapper;
  char via[320];
} rawop_access;

/* If `e` (stripped) is a raw value (raw access or a variable bound to one), describe it. */
typedef struct rawop_value {
  int yes;
  char *wrapper; /* owned when from_access */
  char via[320];
  CXSourceLocation access;
  int from_access;
  int checked; /* from a guarded accessor */
  CXCursor node;
} rawop_value;

/* ---- the walk (rawop_stmt.c, rawop_expr.c) --------------------------------------------------- */

/// Walks statement `s` with state `st` (updated in place). 1 when it never completes normally.
int rawop_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st);
/// A lambda expression where it is evaluated: its captures now, its body (from no facts) as a
/// function of its own.
void rawop_lambda(rawop_ctx *c, CXCursor e, rawop_facts *st);
/// Visitor over declarations: walks each function body of the main file (clang_visitChildren).
enum CXChildVisitResult rawop_visit_decl(CXCursor d, CXCursor parent, CXClientData data);
/// Facts that hold when `e` is true (t) and when it is false (f); `st` is the state in which `e`
/// was evaluated (for the status variables it may name).
void rawop_cond_facts(rawop_ctx *c, CXCursor e, const rawop_facts *st, rawop_facts *t,
                      rawop_facts *f);
/// Walks every child of `e` as an expression, in order, with the same state.
/// The states at the start of the branches condition `cond` chooses between (`st` being the state
/// after it): `st` plus what it proves true, and `st` plus what it proves false. A declaration as
/// the condition (`if (int rc = get(h, &raw))`) is its status variable: nonzero is an error.
void rawop_branch_states(rawop_ctx *c, CXCursor cond, const rawop_facts *st, rawop_facts *on_true,
                         rawop_facts *on_false);
void rawop_walk_children(rawop_ctx *c, CXCursor e, rawop_facts *st);
/// C++: a lambda that names a status variable of the enclosing function may write it (by reference)
/// whenever it is called; that variable's status facts are no longer trusted.
void rawop_status_lambda_refs(rawop_ctx *c, CXCursor e, rawop_facts *st);
/// Walks expression `e` with state `st` (updated in place).
void rawop_expr(rawop_ctx *c, CXCursor e, rawop_facts *st);

/* ---- reporting (rule_rawop.c) ---------------------------------------------------------------- */

/// Where a construct is reported: the start of its extent (an expansion location), or for code in a
/// macro's arguments its own (macro) location, which the report resolves to where it is written.
CXSourceLocation rawop_start_of(CXCursor e);
/// Reports raw-op-unguarded at `at` (not while computing a summary).
void rawop_report_unguarded(rawop_ctx *c, CXSourceLocation at, const char *wrapper,
                            const char *via);
/// Reports raw-op-escape at `at`: the raw handle `where` (how it outlives its guard).
void rawop_report_escape(rawop_ctx *c, CXSourceLocation at, const char *wrapper, const char *via,
                         const char *where);
/// Frees what a context owns (not its shared state).
void rawop_ctx_free(rawop_ctx *c);

/* ---- fact sets (rawop_facts.c) --------------------------------------------------------------- */

/// A copy of `a`.
rawop_facts rawop_facts_copy(const rawop_facts *a);
/// Frees every fact; the set is empty (and usable) afterwards.
void rawop_facts_free(rawop_facts *a);
/// Adds the wrapper fact `w` unless present; NULL and "" are ignored.
void rawop_facts_add(rawop_facts *a, const char *w);
/// 1 when wrapper `w` is known valid (a wrapper fact, not a status fact).
int rawop_facts_has(const rawop_facts *a, const char *w);
/// a := a ∪ b
void rawop_facts_union(rawop_facts *a, const rawop_facts *b);
/// a := a ∩ b (in a's order)
void rawop_facts_intersect(rawop_facts *a, const rawop_facts *b);
/// Frees `dst` and moves `src` into it (`src` is empty afterwards).
void rawop_facts_replace(rawop_facts *dst, rawop_facts *src);
/// The wrapper `w` was written or invalidated: forget what was known about it, and what derives
/// from it ("w.x", "w->x", the statuses taken from them).
void rawop_kill_wrapper(rawop_ctx *c, rawop_facts *st, const char *w);
/// Control may arrive here from anywhere (a label): forget everything.
void rawop_kill_all(rawop_ctx *c, rawop_facts *st);
/// Removes from `st` whatever was removed anywhere since removal number `from` (c->kills.n then).
void rawop_apply_kills(rawop_ctx *c, rawop_facts *st, size_t from);
/// Drops the removals logged since number `from` (at the end of a function).
void rawop_kills_truncate(rawop_kills *k, size_t from);
void rawop_kills_free(rawop_kills *k);
/// The local variable `e` names, when it can hold a status fact: an automatic variable of the
/// function of integer, bool or enum type (not a reference: writing through a reference writes
/// somewhere else).
CXCursor rawop_status_var_of(CXCursor e);
/// `var` was written (or may have been): what it held no longer holds.
void rawop_status_kill(rawop_ctx *c, rawop_facts *st, CXCursor var);
/// `var` now holds the status of an accessor called on `wrapper`.
void rawop_status_set(rawop_ctx *c, rawop_facts *st, CXCursor var, const char *wrapper);
/// The wrapper whose status `var` holds on every path to here (malloc'd), or NULL.
char *rawop_status_get(rawop_ctx *c, const rawop_facts *st, CXCursor var);
/// The address of `var` was taken: it may be written behind the walk's back from now on.
void rawop_status_escape(rawop_ctx *c, rawop_facts *st, CXCursor var);

/* ---- the profile (rawop_profile.c) ----------------------------------------------------------- */

/// 1 when "cls::mem" (or "*::mem", or `mem` when `cls` is empty) is in the profile list `l`.
int rawop_lists_match(const tether_lint__strlist *l, const char *cls, const char *mem);
/// Is `e` (already stripped) a raw access through a member (method, field, conversion)?
rawop_access rawop_classify_member_raw(rawop_ctx *c, CXCursor e);
/// The status accessor `e` calls (a free function of the profile), or NULL.
const tether_lint_status_accessor *rawop_status_call(rawop_ctx *c, CXCursor e);
/// The wrapper argument's spelling of a status accessor call `call` (stripped), or NULL.
char *rawop_status_call_wrapper(rawop_ctx *c, CXCursor call);
/// If `e` is a raw value (a raw access, a variable bound to one, or a guarded accessor's result),
/// what it is and where it came from; .yes == 0 otherwise.
rawop_value rawop_raw_value(rawop_ctx *c, CXCursor e);
/// 1 for a function the profile names (accessor, guard, predicate, invalidator): not walked, and
/// never summarized.
int rawop_is_exempt(rawop_ctx *c, CXCursor fn);
/// Is `t` (through references, pointers and template arguments) a wrapper class of the profile, or
/// derived from one? Memoized per translation unit.
int rawop_type_is_wrapper(rawop_ctx *c, CXType t);
/// Is `e` 0 or one of the profile's status constants meaning "valid"?
int rawop_is_ok_constant(rawop_ctx *c, CXCursor e);

/* ---- where raw handles are kept (rawop_escape.c) --------------------------------------------- */

/// The binding of the variable a DeclRefExpr names (innermost first), or NULL.
rawop_binding *rawop_find_binding(rawop_ctx *c, CXCursor declref);
/// `var` now holds a raw handle taken from `wrapper` through `via` at `access`.
void rawop_add_binding(rawop_ctx *c, CXCursor var, const char *wrapper, const char *via,
                       CXSourceLocation access, int kind);
/// Frees the bindings (lambda variables, container pushes) from number `from` on: a body that
/// ends drops what it added.
void rawop_drop_bindings(rawop_ctx *c, size_t from);
void rawop_drop_lambda_vars(rawop_ctx *c, size_t from);
void rawop_drop_container_pushes(rawop_ctx *c, size_t from);
/// Where does an assignment to `lhs` store? NULL: a local (no escape); else a description.
char *rawop_store_target(rawop_ctx *c, CXCursor lhs, int *is_local_var, CXCursor *local);
/// The lambda kept in local variable `var`, or NULL.
rawop_lambda_var *rawop_find_lambda_var(rawop_ctx *c, CXCursor var);
/// The local variable lambda expression `lam` is kept in, or NULL.
rawop_lambda_var *rawop_lambda_var_for(rawop_ctx *c, CXCursor lam);
/// Local variable `var` holds lambda expression `lam`.
void rawop_add_lambda_var(rawop_ctx *c, CXCursor var, CXCursor lam);
/// A raw handle captured by a lambda: an escape, unless the lambda stays in the function (called on
/// the spot, passed to a function that only calls it, or kept in a local variable that is only
/// called), in which case it is remembered with the variable until the variable itself escapes.
void rawop_lambda_capture(rawop_ctx *c, CXCursor lam, int local, const char *wrapper,
                          const char *via, CXSourceLocation at);
/// The local container a push or subscript writes to, or a description of the longer-lived one
/// (NULL and a null cursor: not a container store we understand).
char *rawop_container_target(rawop_ctx *c, CXCursor obj, CXCursor *local);
/// A raw handle was put into local container `var` at `at`: an escape if the container escapes.
void rawop_add_container_push(rawop_ctx *c, CXCursor var, const struct rawop_value *rv,
                              CXSourceLocation at);
/// The local container `var` leaves the function: every raw handle put into it escapes.
void rawop_container_escapes(rawop_ctx *c, CXCursor var, const char *how);
/// `e` names a local variable (through std::move and copies): that variable, else null.
CXCursor rawop_local_var_named(CXCursor e);
/// `return {a.get(), ...}`, `return std::vector<MlirBlock>{...}`, `return std::make_pair(...)`: raw
/// handles handed to the caller inside a collection.
void rawop_returned_collection(rawop_ctx *c, CXCursor e, int depth);
/// Is `name` a method that puts its argument into a container (push_back, insert, ...)?
int rawop_is_push_method(const char *name);
/// Functions that call a callable they are given before returning and do not keep it.
int rawop_calls_and_forgets(CXCursor fn, CXType param);

/* ---- summaries of helpers (rawop_summary.c) -------------------------------------------------- */

/// A normal exit of the function whose summary is being computed, with state `st`.
void rawop_summary_exit(rawop_ctx *c, const rawop_facts *st);
/// The summary of function `fn` (a declaration; its definition is looked up) or of lambda
/// expression `fn`; NULL when there is no body to look at, or too deep.
rawop_summary *rawop_summary_of(rawop_ctx *c, CXCursor fn);
/// Facts a call establishes through the callee's summary: its guards on a parameter become guards
/// on the argument, on `this` a guard on the object, and (for a lambda) on a captured variable a
/// guard on that variable.
void rawop_apply_summary(rawop_ctx *c, const rawop_summary *sm, CXCursor call, const char *obj,
                         int shift, int is_lambda, rawop_facts *st);
/// Does a call to `fn` never return (declared so, a well-known name, or a body that always throws)?
int rawop_call_never_returns(rawop_ctx *c, CXCursor call);

/* ---- template instantiations (rawop_templates.c) --------------------------------------------- */

/// Visitor recording the file's template instantiations in the shared state (clang_visitChildren
/// with the context as data).
enum CXChildVisitResult rawop_collect_bindings(CXCursor k, CXCursor parent, CXClientData d);
/// The declaration a member expression refers to: libclang's, or for a dependent one, the member of
/// the class its object has in the file's instantiations.
CXCursor rawop_member_ref(rawop_ctx *c, CXCursor m);
/// The conversion operator of class `from` (or a base) to `to`, or null.
CXCursor rawop_conversion_to(CXType from, CXType to, int depth);
/// A dependent call `T::f(args)` with T a class template's parameter: the parameter types of f in
/// the file's instantiation, so that a wrapper passed where a raw handle is expected is seen as the
/// implicit conversion it becomes. Returns the number of parameter types written to `params`.
int rawop_dependent_params(rawop_ctx *c, CXCursor call, CXType *params, int max);

/* ---- reading the AST (rawop_ast.c) ----------------------------------------------------------- */

/// The children of `c`, in order (malloc'd array; empty when out of memory).
rawop_kids rawop_children(CXCursor c);
/// Strips implicit wrappers: parentheses, implicit casts, copy/move constructions.
CXCursor rawop_strip(CXCursor e);
/// Normalises a wrapper spelling in place: outer parentheses, "(*this)." and "this->" go.
void rawop_normalise(char *s);
/// `e` with parentheses and unexposed (implicit) expressions skipped, as long as they have an
/// expression child.
CXCursor rawop_skip_parens(CXCursor e);
/// The first child of `e` that is an expression, or a null cursor.
CXCursor rawop_first_expr_child(CXCursor e);
/// The normalised spelling of expression `e` (malloc'd): "self", "self.parentOperation",
/// "parentOperation" for this->parentOperation, "p->blk".
char *rawop_spelling(rawop_ctx *c, CXCursor e);
/// The wrapper a member expression is applied to ("self" in self.get(), "this" when implicit).
char *rawop_member_base(rawop_ctx *c, CXCursor m);
/// The object a member expression is applied to, with parentheses and implicit conversions
/// stripped, and an overloaded `->` seen through (`p->checkValid()` on a smart reference: `p`).
CXCursor rawop_member_object(CXCursor m);
/// "Class" and "member" of a referenced declaration; `cls` is "" when it is not a class member.
void rawop_decl_names(CXCursor decl, char *cls, size_t clen, char *mem, size_t mlen);
/// The name a member expression or a qualified name refers to: its spelling, or for a dependent one
/// (which libclang leaves unnamed) the last identifier written in it.
void rawop_ref_name(rawop_ctx *c, CXCursor e, char *out, size_t len);
/// `t` without references and pointers (up to 4 levels), canonical.
CXType rawop_strip_refs(CXType t);
/// Is `var` a parameter, or a non-static, non-thread-local variable of a function or lambda?
int rawop_var_is_local_automatic(CXCursor var);
/// Is declaration `d` in a system header?
int rawop_in_system_header(CXCursor d);
/// The lambda expression `e` is (implicit nodes stripped), or a null cursor.
CXCursor rawop_lambda_of(CXCursor e);
/// Is `k` an argument of `call`? Then `*index` is its position.
int rawop_is_argument_of(CXCursor call, CXCursor k, int *index);
/// A class's copy/move assignment call `a = b`: its two operands, without the operator itself.
int rawop_operator_assign(CXCursor e, CXCursor *lhs, CXCursor *rhs);

/* ---- degraded mode (rawop_tokens.c) ---------------------------------------------------------- */

/// After the AST walk: the token scan, for files that do not compile.
void rawop_degraded(rawop_ctx *c);

#endif
