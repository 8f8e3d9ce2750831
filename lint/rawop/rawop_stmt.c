/* The raw-op walk over declarations and statements: every function and lambda body of the main
 * file, and how control flow joins the fact sets.
 *
 * Invariant: rawop_stmt returns 1 when the statement never completes normally (return, throw,
 * break, continue, goto, a call that does not return); after an if, ?: or try the set is the
 * intersection of the branches that complete; a loop or switch body adds nothing to the set after
 * it, and what any of its paths removed is removed after it (rawop_apply_kills); a label empties
 * the set; a lambda body starts with no facts, since it runs later. */
#include "lint/rawop/rawop.h"

#include <stdlib.h>
#include <string.h>

static void analyze_decl(rawop_ctx *c, CXCursor d);

/* Does the source between two cursors contain an `else` token? */
static int else_between(rawop_ctx *c, CXCursor a, CXCursor b) {
  CXSourceRange r = clang_getRange(clang_getRangeEnd(clang_getCursorExtent(a)),
                                   clang_getRangeStart(clang_getCursorExtent(b)));
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(c->tu, r, &toks, &n);
  int yes = 0;
  for (unsigned i = 0; i < n && !yes; i++) {
    CXString s = clang_getTokenSpelling(c->tu, toks[i]);
    yes = strcmp(clang_getCString(s), "else") == 0;
    clang_disposeString(s);
  }
  if (toks) clang_disposeTokens(c->tu, toks, n);
  return yes;
}

static int if_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  rawop_kids ks = rawop_children(s);
  CXCursor init = clang_getNullCursor(), cond, then_s, else_s = clang_getNullCursor();
  if (ks.n < 2) {
    free(ks.v);
    return 0;
  }
  if (ks.n == 2) {
    cond = ks.v[0];
    then_s = ks.v[1];
  } else if (ks.n == 3 && else_between(c, ks.v[1], ks.v[2])) {
    cond = ks.v[0];
    then_s = ks.v[1];
    else_s = ks.v[2];
  } else if (ks.n == 3) {
    init = ks.v[0];
    cond = ks.v[1];
    then_s = ks.v[2];
  } else {
    init = ks.v[ks.n - 4];
    cond = ks.v[ks.n - 3];
    then_s = ks.v[ks.n - 2];
    else_s = ks.v[ks.n - 1];
  }
  free(ks.v);
  if (!clang_Cursor_isNull(init)) rawop_stmt(c, init, st);
  if (clang_getCursorKind(cond) == CXCursor_VarDecl) {
    rawop_stmt(c, cond, st);
  } else {
    rawop_expr(c, cond, st);
  }
  rawop_facts a, b;
  rawop_branch_states(c, cond, st, &a, &b);
  int then_exits = rawop_stmt(c, then_s, &a);
  int else_exits = clang_Cursor_isNull(else_s) ? 0 : rawop_stmt(c, else_s, &b);
  int exits = 0;
  if (then_exits && else_exits) {
    exits = 1;
  } else if (then_exits) {
    rawop_facts_replace(st, &b);
  } else if (else_exits) {
    rawop_facts_replace(st, &a);
  } else {
    rawop_facts_intersect(&a, &b);
    rawop_facts_replace(st, &a);
  }
  rawop_facts_free(&a);
  rawop_facts_free(&b);
  return exits;
}

static void var_decl(rawop_ctx *c, CXCursor d, rawop_facts *st) {
  rawop_kids ks = rawop_children(d);
  CXCursor init = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++)
    if (clang_isExpression(clang_getCursorKind(ks.v[i]))) init = ks.v[i];
  free(ks.v);
  if (clang_Cursor_isNull(init)) return;
  CXType dt = clang_getCursorType(d);
  int is_ref = dt.kind == CXType_LValueReference || dt.kind == CXType_RValueReference;
  if (is_ref) {
    /* int &r = rc;: rc may be written through r from now on. */
    CXCursor svar = rawop_status_var_of(init);
    if (!clang_Cursor_isNull(svar)) rawop_status_escape(c, st, svar);
  }
  rawop_value rv = rawop_raw_value(c, init);
  int automatic = rawop_var_is_local_automatic(d);
  CXCursor lam = rawop_lambda_of(init);
  if (automatic && !is_ref && !clang_Cursor_isNull(lam)) rawop_add_lambda_var(c, d, lam);
  CXCursor saved = c->scope.defer;
  if (rv.yes && automatic) c->scope.defer = rv.node;
  rawop_expr(c, init, st);
  c->scope.defer = saved;
  if (rv.yes) {
    if (automatic) {
      rawop_add_binding(c, d, rv.wrapper, rv.via, rv.access,
                        rv.checked ? RAWOP_BIND_CHECKED : RAWOP_BIND_RAW);
    } else {
      CXString n = clang_getCursorSpelling(d);
      char where[300];
      snprintf(where, sizeof where, "is stored in %s variable '%s'",
               clang_Cursor_getStorageClass(d) == CX_SC_Static ? "static" : "global",
               clang_getCString(n));
      clang_disposeString(n);
      rawop_report_escape(c, rawop_start_of(d), rv.wrapper, rv.via, where);
    }
  } else if (automatic) {
    /* int rc = get(h, &raw); (a variable declared again, e.g. in a loop, starts afresh) */
    char *w = rawop_status_call_wrapper(c, rawop_strip(init));
    if (w && !is_ref)
      rawop_status_set(c, st, d, w);
    else
      rawop_status_kill(c, st, d);
    free(w);
  }
  free(rv.wrapper);
}

/* Is `e` an integer constant expression equal to 0 (`0`, `false`, `(0)`)? */
static int is_false_constant(CXCursor e) {
  if (!clang_isExpression(clang_getCursorKind(e))) return 0;
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return 0;
  int zero = clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
  clang_EvalResult_dispose(r);
  return zero;
}

/* Does `body` contain a break or continue that leaves the loop it is the body of? A `break`
 * inside a nested loop or switch, a `continue` inside a nested loop, and anything in a lambda
 * body belong to them. */
typedef struct leave_search {
  int breaks; /* a break counts (not inside a nested switch) */
  int found;
} leave_search;

static enum CXChildVisitResult find_leave(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  leave_search *ls = d;
  switch (clang_getCursorKind(k)) {
  case CXCursor_BreakStmt:
    if (!ls->breaks) return CXChildVisit_Continue;
    ls->found = 1;
    return CXChildVisit_Break;
  case CXCursor_ContinueStmt:
    ls->found = 1;
    return CXChildVisit_Break;
  case CXCursor_ForStmt:
  case CXCursor_WhileStmt:
  case CXCursor_DoStmt:
  case CXCursor_CXXForRangeStmt:
  case CXCursor_LambdaExpr:
    return CXChildVisit_Continue;
  case CXCursor_SwitchStmt: {
    leave_search inner = {0, 0};
    clang_visitChildren(k, find_leave, &inner);
    if (!inner.found) return CXChildVisit_Continue;
    ls->found = 1;
    return CXChildVisit_Break;
  }
  default:
    return CXChildVisit_Recurse;
  }
}

static int leaves_loop(CXCursor body) {
  enum CXCursorKind k = clang_getCursorKind(body);
  if (k == CXCursor_BreakStmt || k == CXCursor_ContinueStmt) return 1;
  leave_search ls = {1, 0};
  clang_visitChildren(body, find_leave, &ls);
  return ls.found;
}

static int loop_body(rawop_ctx *c, CXCursor body, const rawop_facts *st) {
  rawop_facts inner = rawop_facts_copy(st);
  rawop_stmt(c, body, &inner);
  rawop_facts_free(&inner);
  return 0;
}

/* A block: its statements in order; after one that never completes, the rest is unreachable. */
static int compound_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  rawop_kids ks = rawop_children(s);
  int exits = 0;
  for (size_t i = 0; i < ks.n; i++) {
    enum CXCursorKind ik = clang_getCursorKind(ks.v[i]);
    if (exits && c->scope.switch_entry && (ik == CXCursor_CaseStmt || ik == CXCursor_DefaultStmt)) {
      /* A case label after a break: reached from the switch only. */
      rawop_facts entry = rawop_facts_copy(c->scope.switch_entry);
      rawop_facts_replace(st, &entry);
      exits = 0;
    }
    if (exits) {
      /* Unreachable code: analysed, but nothing is known there. */
      rawop_facts none = {0};
      rawop_stmt(c, ks.v[i], &none);
      rawop_facts_free(&none);
      continue;
    }
    if (rawop_stmt(c, ks.v[i], st)) exits = 1;
  }
  free(ks.v);
  return exits;
}

/* while (COND) BODY: the body starts with what COND proves; nothing it adds flows out. */
static void while_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  rawop_kids ks = rawop_children(s);
  if (ks.n >= 2) {
    CXCursor cond = ks.v[ks.n - 2];
    if (clang_getCursorKind(cond) == CXCursor_VarDecl)
      rawop_stmt(c, cond, st);
    else
      rawop_expr(c, cond, st);
    rawop_facts t = {0}, f = {0};
    rawop_cond_facts(c, cond, st, &t, &f);
    rawop_facts inner = rawop_facts_copy(st);
    rawop_facts_union(&inner, &t);
    size_t kills_from = c->kills.n;
    loop_body(c, ks.v[ks.n - 1], &inner);
    rawop_apply_kills(c, st, kills_from); /* what any iteration removed is gone afterwards */
    rawop_facts_free(&inner);
    rawop_facts_free(&t);
    rawop_facts_free(&f);
  }
  free(ks.v);
}

/* do { ... } while (0) without a break or continue of its own (the usual macro shape): the body
 * runs exactly once, straight through. Its body then, else a null cursor. */
static CXCursor do_once_body(CXCursor s) {
  rawop_kids ks = rawop_children(s);
  int once = ks.n == 2 && is_false_constant(ks.v[1]) && !leaves_loop(ks.v[0]);
  CXCursor body = once ? ks.v[0] : clang_getNullCursor();
  free(ks.v);
  return body;
}

/* for, range-for, do/while, switch: everything inside runs zero or more times (or from any case
 * label), so nothing new flows out, and whatever any path through it removed is removed after
 * it. A switch's condition (and C++17 init statement) run once, before the body, and every case
 * label is reached with the state after them. */
static void repeated_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  int is_switch = clang_getCursorKind(s) == CXCursor_SwitchStmt;
  rawop_kids ks = rawop_children(s);
  rawop_facts inner = rawop_facts_copy(st);
  rawop_facts entry = {0};
  const rawop_facts *saved_entry = c->scope.switch_entry;
  size_t kills_from = c->kills.n;
  for (size_t i = 0; i < ks.n; i++) {
    if (is_switch && i + 1 < ks.n) {
      if (clang_isExpression(clang_getCursorKind(ks.v[i])))
        rawop_expr(c, ks.v[i], st);
      else
        rawop_stmt(c, ks.v[i], st);
      continue;
    }
    if (is_switch) {
      rawop_facts_free(&inner);
      inner = rawop_facts_copy(st);
      entry = rawop_facts_copy(st);
      c->scope.switch_entry = &entry;
    }
    rawop_stmt(c, ks.v[i], &inner);
  }
  c->scope.switch_entry = saved_entry;
  rawop_apply_kills(c, st, kills_from);
  rawop_facts_free(&entry);
  rawop_facts_free(&inner);
  free(ks.v);
}

/* A case, default or goto label: reached by a jump, so facts from the fall-through path hold only
 * when the jump's path has them too (a case: the switch's entry state; a label: nothing). */
static int labelled_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_LabelStmt) {
    rawop_kill_all(c, st);
  } else if (c->scope.switch_entry) {
    rawop_facts_intersect(st, c->scope.switch_entry);
  }
  rawop_kids ks = rawop_children(s);
  int exits = 0;
  for (size_t i = 0; i < ks.n; i++) {
    if (clang_isExpression(clang_getCursorKind(ks.v[i])) && k == CXCursor_CaseStmt && i == 0)
      continue; /* the case value */
    exits = rawop_stmt(c, ks.v[i], st);
  }
  free(ks.v);
  return exits;
}

/* return [E]: a raw handle (alone, in a collection, in a local container or lambda) handed to the
 * caller escapes; the state is a normal exit for the summary being computed. */
static void return_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  rawop_kids ks = rawop_children(s);
  if (ks.n >= 1) {
    rawop_value rv = rawop_raw_value(c, ks.v[0]);
    rawop_expr(c, ks.v[0], st);
    if (rv.yes)
      rawop_report_escape(c, rawop_start_of(s), rv.wrapper, rv.via, "is returned to the caller");
    free(rv.wrapper);
    rawop_returned_collection(c, ks.v[0], 0);
    CXCursor var = rawop_local_var_named(ks.v[0]);
    if (!clang_Cursor_isNull(var)) {
      rawop_container_escapes(c, var, "is returned to the caller");
      rawop_lambda_var *l = rawop_find_lambda_var(c, var);
      if (l && l->wrapper && !l->reported) {
        l->reported = 1;
        rawop_report_escape(c, l->at, l->wrapper, l->via,
                            "is captured by a lambda that is returned to the caller");
      }
    }
  }
  rawop_summary_exit(c, st);
  free(ks.v);
}

/* try { ... } catch ...: each handler starts from the state before the try, minus whatever the
 * try block removed (it may have thrown anywhere); after it, the intersection of the block and
 * handlers that complete. 1 when none does. */
static int try_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  rawop_kids ks = rawop_children(s);
  rawop_facts entry = rawop_facts_copy(st);
  int all_exit = 1;
  rawop_facts out = {0};
  int have_out = 0;
  size_t kills_from = c->kills.n;
  for (size_t i = 0; i < ks.n; i++) {
    rawop_facts cur = rawop_facts_copy(&entry);
    if (i > 0) rawop_apply_kills(c, &cur, kills_from);
    int exits = rawop_stmt(c, ks.v[i], &cur);
    if (!exits) {
      all_exit = 0;
      if (!have_out) {
        rawop_facts_replace(&out, &cur);
        have_out = 1;
      } else {
        rawop_facts_intersect(&out, &cur);
      }
    }
    rawop_facts_free(&cur);
  }
  free(ks.v);
  if (have_out) rawop_facts_replace(st, &out);
  rawop_facts_free(&out);
  rawop_facts_free(&entry);
  return all_exit && ks.n > 0;
}

/* The children of a statement (only its blocks when `blocks_only`: a catch's handler), walked in
 * order as statements; what the last one walked returns, or 0. */
static int children_stmts(rawop_ctx *c, CXCursor s, int blocks_only, rawop_facts *st) {
  rawop_kids ks = rawop_children(s);
  int exits = 0;
  for (size_t i = 0; i < ks.n; i++)
    if (!blocks_only || clang_getCursorKind(ks.v[i]) == CXCursor_CompoundStmt)
      exits = rawop_stmt(c, ks.v[i], st);
  free(ks.v);
  return exits;
}

static void decl_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  rawop_kids ks = rawop_children(s);
  for (size_t i = 0; i < ks.n; i++) {
    if (clang_getCursorKind(ks.v[i]) == CXCursor_VarDecl)
      var_decl(c, ks.v[i], st);
    else
      analyze_decl(c, ks.v[i]);
  }
  free(ks.v);
}

int rawop_stmt(rawop_ctx *c, CXCursor s, rawop_facts *st) {
  enum CXCursorKind k = clang_getCursorKind(s);
  switch (k) {
  case CXCursor_CompoundStmt:
    return compound_stmt(c, s, st);
  case CXCursor_IfStmt:
    return if_stmt(c, s, st);
  case CXCursor_WhileStmt:
    while_stmt(c, s, st);
    return 0;
  case CXCursor_DoStmt: {
    CXCursor once = do_once_body(s);
    if (!clang_Cursor_isNull(once)) return rawop_stmt(c, once, st);
    repeated_stmt(c, s, st);
    return 0;
  }
  case CXCursor_ForStmt:
  case CXCursor_CXXForRangeStmt:
  case CXCursor_SwitchStmt:
    repeated_stmt(c, s, st);
    return 0;
  case CXCursor_CaseStmt:
  case CXCursor_DefaultStmt:
  case CXCursor_LabelStmt:
    return labelled_stmt(c, s, st);
  case CXCursor_ReturnStmt:
    return_stmt(c, s, st);
    return 1;
  case CXCursor_BreakStmt:
  case CXCursor_ContinueStmt:
  case CXCursor_GotoStmt:
  case CXCursor_IndirectGotoStmt:
    return 1;
  case CXCursor_CXXTryStmt:
    return try_stmt(c, s, st);
  case CXCursor_CXXCatchStmt:
    return children_stmts(c, s, 1, st);
  case CXCursor_DeclStmt:
    decl_stmt(c, s, st);
    return 0;
  case CXCursor_VarDecl:
    var_decl(c, s, st);
    return 0;
  case CXCursor_NullStmt:
    return 0;
  case CXCursor_CXXThrowExpr:
    rawop_walk_children(c, s, st);
    return 1;
  default:
    break;
  }
  if (clang_isExpression(k)) {
    rawop_expr(c, s, st);
    CXCursor e = rawop_strip(s);
    if (clang_getCursorKind(e) == CXCursor_CXXThrowExpr) return 1;
    if (clang_getCursorKind(e) == CXCursor_CallExpr && rawop_call_never_returns(c, e)) return 1;
    return 0;
  }
  /* Other statements (asm, SEH, ...): walk their children as statements. */
  children_stmts(c, s, 0, st);
  return 0;
}

/* ---- function and lambda bodies ------------------------------------------------------------- */

/* Enters a body: a scope of its own (`lambda` null for a function), saving the enclosing one. */
static rawop_scope enter_body(rawop_ctx *c, CXCursor lambda, int lambda_local) {
  rawop_scope saved = c->scope;
  c->scope.fn_base = c->nb;
  c->scope.in_lambda = !clang_Cursor_isNull(lambda);
  c->scope.cur_lambda = lambda;
  c->scope.lambda_at = c->scope.in_lambda ? rawop_start_of(lambda) : clang_getNullLocation();
  c->scope.lambda_local = lambda_local;
  c->scope.defer = clang_getNullCursor();
  c->scope.switch_entry = NULL;
  return saved;
}

/* A function definition's body (and a constructor's initializers): the walk starts with no facts.
 * At its end, what it kept (bindings, lambdas, containers, status variables, removals) goes. */
static void function_body(rawop_ctx *c, CXCursor fn) {
  size_t saved_nb = c->nb, saved_nlv = c->nlv, saved_ncp = c->ncp;
  size_t saved_kills = c->kills.n, saved_nsv = c->nsv;
  rawop_scope saved = enter_body(c, clang_getNullCursor(), 0);
  rawop_facts st = {0};
  rawop_kids ks = rawop_children(fn);
  CXCursor pending_field = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++) {
    enum CXCursorKind k = clang_getCursorKind(ks.v[i]);
    if (k == CXCursor_CompoundStmt) {
      rawop_stmt(c, ks.v[i], &st);
    } else if (k == CXCursor_MemberRef) {
      pending_field = ks.v[i];
    } else if (clang_isExpression(k)) {
      /* Constructor initializers. */
      rawop_value rv = rawop_raw_value(c, ks.v[i]);
      rawop_expr(c, ks.v[i], &st);
      if (rv.yes && !clang_Cursor_isNull(pending_field)) {
        CXString n = clang_getCursorSpelling(pending_field);
        char where[300];
        snprintf(where, sizeof where, "is stored in field '%s'", clang_getCString(n));
        clang_disposeString(n);
        rawop_report_escape(c, rawop_start_of(pending_field), rv.wrapper, rv.via, where);
      }
      free(rv.wrapper);
      pending_field = clang_getNullCursor();
    }
  }
  free(ks.v);
  rawop_facts_free(&st);
  rawop_drop_bindings(c, saved_nb);
  rawop_drop_lambda_vars(c, saved_nlv);
  rawop_drop_container_pushes(c, saved_ncp);
  c->scope = saved;
  rawop_kills_truncate(&c->kills, saved_kills);
  c->nsv = saved_nsv; /* the status variables of this function are out of scope */
}

void rawop_lambda(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  rawop_status_lambda_refs(c, e, st);
  int local = !clang_Cursor_isNull(c->local_lambda) && clang_equalCursors(c->local_lambda, e);
  rawop_kids ks = rawop_children(e);
  CXCursor body = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++) {
    enum CXCursorKind k = clang_getCursorKind(ks.v[i]);
    if (k == CXCursor_CompoundStmt) {
      body = ks.v[i];
    } else if (k == CXCursor_VariableRef) {
      /* An explicit capture of a variable holding a raw handle. */
      CXCursor ref = clang_getCursorReferenced(ks.v[i]);
      for (size_t j = c->nb; j-- > 0;)
        if (clang_equalCursors(c->b[j].var, ref)) {
          rawop_lambda_capture(c, e, local, c->b[j].wrapper, c->b[j].via, rawop_start_of(e));
          break;
        }
    } else if (clang_isExpression(k)) {
      /* Init-captures ([r = self.get()]) and implicit captures, evaluated where the lambda is. */
      rawop_value rv = rawop_raw_value(c, ks.v[i]);
      if (rv.yes) {
        rawop_lambda_capture(c, e, local, rv.wrapper, rv.via, rawop_start_of(e));
        CXCursor saved = c->scope.defer;
        if (!rv.from_access) c->scope.defer = rv.node;
        rawop_expr(c, ks.v[i], st);
        c->scope.defer = saved;
      } else {
        rawop_expr(c, ks.v[i], st);
      }
      free(rv.wrapper);
    }
  }
  free(ks.v);
  if (clang_Cursor_isNull(body)) return;
  /* The body runs later, maybe after the wrapper died: it starts knowing nothing. */
  size_t saved_nb = c->nb;
  rawop_scope saved = enter_body(c, e, local || rawop_lambda_var_for(c, e) != NULL);
  rawop_facts inner = {0};
  rawop_stmt(c, body, &inner);
  rawop_facts_free(&inner);
  rawop_drop_bindings(c, saved_nb);
  c->scope = saved;
}

enum CXChildVisitResult rawop_visit_decl(CXCursor d, CXCursor parent, CXClientData data) {
  (void)parent;
  rawop_ctx *c = data;
  if (!tether_lint__in_main_file(c->tu, clang_getCursorLocation(d))) return CXChildVisit_Continue;
  analyze_decl(c, d);
  return CXChildVisit_Continue;
}

static void analyze_decl(rawop_ctx *c, CXCursor d) {
  enum CXCursorKind k = clang_getCursorKind(d);
  switch (k) {
  case CXCursor_Namespace:
  case CXCursor_LinkageSpec:
  case CXCursor_ClassDecl:
  case CXCursor_StructDecl:
  case CXCursor_UnionDecl:
  case CXCursor_ClassTemplate:
  case CXCursor_ClassTemplatePartialSpecialization:
  case CXCursor_UnexposedDecl:
    clang_visitChildren(d, rawop_visit_decl, c);
    return;
  case CXCursor_FunctionDecl:
  case CXCursor_CXXMethod:
  case CXCursor_Constructor:
  case CXCursor_Destructor:
  case CXCursor_ConversionFunction:
  case CXCursor_FunctionTemplate:
    if (!clang_isCursorDefinition(d) || rawop_is_exempt(c, d)) return;
    function_body(c, d);
    return;
  case CXCursor_VarDecl: {
    /* A namespace-scope variable: its initializer runs once, outside any function. */
    rawop_facts st = {0};
    size_t saved_nb = c->nb;
    var_decl(c, d, &st);
    rawop_facts_free(&st);
    rawop_drop_bindings(c, saved_nb);
    return;
  }
  default:
    return;
  }
}
