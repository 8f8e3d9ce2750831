/* The raw-op walk over expressions: raw accesses checked against the facts, guards added,
 * assignments, calls (unsequenced arguments, helpers' summaries, containers, status accessors) and
 * the facts a condition proves on each branch.
 *
 * Invariant: a raw access is reported unless its wrapper is in the fact set at that point; the
 * arguments of a call are walked each from the state before the call (C++17 leaves them
 * unsequenced), and only what each establishes is added after it, minus what any removed. */
#include "lint/rawop/rawop.h"

#include <stdlib.h>
#include <string.h>

/* If `e` is a status (accessor call, assignment of one, or a local variable that holds one on
 * every path to here, per the status facts in `st`), the wrapper it is about. */
static char *status_wrapper(rawop_ctx *c, CXCursor e, const rawop_facts *st) {
  CXCursor s = rawop_strip(e);
  if (clang_getCursorKind(s) == CXCursor_BinaryOperator &&
      clang_getCursorBinaryOperatorKind(s) == CXBinaryOperator_Assign) {
    rawop_kids ks = rawop_children(s);
    CXCursor rhs = ks.n == 2 ? ks.v[1] : clang_getNullCursor();
    free(ks.v);
    if (clang_Cursor_isNull(rhs)) return NULL;
    s = rawop_strip(rhs);
  }
  if (rawop_status_call(c, s)) return rawop_status_call_wrapper(c, s);
  CXCursor var = rawop_status_var_of(s);
  if (!clang_Cursor_isNull(var)) return rawop_status_get(c, st, var);
  return NULL;
}

/* Facts that hold when `e` is true (t) and when it is false (f); `st` is the state in which `e`
 * was evaluated (for the status variables it may name). */
void rawop_cond_facts(rawop_ctx *c, CXCursor e, const rawop_facts *st, rawop_facts *t,
                      rawop_facts *f) {
  CXCursor s = rawop_strip(e);
  enum CXCursorKind k = clang_getCursorKind(s);
  if (k == CXCursor_UnaryOperator && clang_getCursorUnaryOperatorKind(s) == CXUnaryOperator_LNot) {
    rawop_kids ks = rawop_children(s);
    if (ks.n == 1) rawop_cond_facts(c, ks.v[0], st, f, t);
    free(ks.v);
    return;
  }
  if (k == CXCursor_BinaryOperator) {
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(s);
    rawop_kids ks = rawop_children(s);
    if (ks.n != 2) {
      free(ks.v);
      return;
    }
    CXCursor a = ks.v[0], b = ks.v[1];
    free(ks.v);
    if (op == CXBinaryOperator_LAnd || op == CXBinaryOperator_LOr) {
      rawop_facts ta = {0}, fa = {0}, tb = {0}, fb = {0};
      rawop_cond_facts(c, a, st, &ta, &fa);
      rawop_cond_facts(c, b, st, &tb, &fb);
      if (op == CXBinaryOperator_LAnd) {
        rawop_facts_union(t, &ta);
        rawop_facts_union(t, &tb);
        rawop_facts_intersect(&fa, &fb);
        rawop_facts_union(f, &fa);
      } else {
        rawop_facts_intersect(&ta, &tb);
        rawop_facts_union(t, &ta);
        rawop_facts_union(f, &fa);
        rawop_facts_union(f, &fb);
      }
      rawop_facts_free(&ta);
      rawop_facts_free(&fa);
      rawop_facts_free(&tb);
      rawop_facts_free(&fb);
      return;
    }
    if (op == CXBinaryOperator_Assign) {
      char *w = status_wrapper(c, s, st);
      if (w) rawop_facts_add(f, w); /* (rc = get(...)): nonzero means failure */
      free(w);
      return;
    }
    if (op == CXBinaryOperator_EQ || op == CXBinaryOperator_NE || op == CXBinaryOperator_LT ||
        op == CXBinaryOperator_GE || op == CXBinaryOperator_GT || op == CXBinaryOperator_LE) {
      char *w = NULL;
      if (rawop_is_ok_constant(c, b)) {
        w = status_wrapper(c, a, st);
      } else if (rawop_is_ok_constant(c, a)) {
        w = status_wrapper(c, b, st);
        if (op == CXBinaryOperator_LT)
          op = CXBinaryOperator_GT;
        else if (op == CXBinaryOperator_GT)
          op = CXBinaryOperator_LT;
        else if (op == CXBinaryOperator_LE)
          op = CXBinaryOperator_GE;
        else if (op == CXBinaryOperator_GE)
          op = CXBinaryOperator_LE;
      }
      if (w) {
        if (op == CXBinaryOperator_EQ || op == CXBinaryOperator_GE) rawop_facts_add(t, w);
        if (op == CXBinaryOperator_NE || op == CXBinaryOperator_LT) rawop_facts_add(f, w);
      }
      free(w);
    }
    return;
  }
  /* A bare status: nonzero is an error. */
  char *w = status_wrapper(c, s, st);
  if (w) {
    rawop_facts_add(f, w);
    free(w);
    return;
  }
  /* w.valid, w.isValid(), isValid(w). */
  CXCursor target = s;
  if (k == CXCursor_CallExpr) {
    rawop_kids ks = rawop_children(s);
    if (ks.n && clang_getCursorKind(ks.v[0]) == CXCursor_MemberRefExpr) target = ks.v[0];
    free(ks.v);
  }
  if (clang_getCursorKind(target) == CXCursor_MemberRefExpr) {
    CXCursor ref = clang_getCursorReferenced(target);
    char cls[128], mem[160];
    rawop_decl_names(ref, cls, sizeof cls, mem, sizeof mem);
    if (rawop_lists_match(&c->p->predicates, cls, mem)) {
      char *base = rawop_member_base(c, target);
      rawop_facts_add(t, base);
      free(base);
    }
    return;
  }
  if (k == CXCursor_CallExpr && clang_Cursor_getNumArguments(s) >= 1) {
    CXCursor ref = clang_getCursorReferenced(s);
    if (clang_getCursorKind(ref) != CXCursor_FunctionDecl) return;
    CXString n = clang_getCursorSpelling(ref);
    int pred = tether_lint__profile_match(&c->p->predicates, NULL, clang_getCString(n));
    clang_disposeString(n);
    if (pred) {
      char *w = rawop_spelling(c, clang_Cursor_getArgument(s, 0));
      rawop_facts_add(t, w);
      free(w);
    }
  }
}

void rawop_branch_states(rawop_ctx *c, CXCursor cond, const rawop_facts *st, rawop_facts *on_true,
                         rawop_facts *on_false) {
  rawop_facts t = {0}, f = {0};
  if (clang_getCursorKind(cond) != CXCursor_VarDecl) {
    rawop_cond_facts(c, cond, st, &t, &f);
  } else {
    /* if (int rc = get(h, &raw)) ...: the declared status is the condition; nonzero is an error. */
    char *w = rawop_status_get(c, st, cond);
    if (w) rawop_facts_add(&f, w);
    free(w);
  }
  *on_true = rawop_facts_copy(st);
  *on_false = rawop_facts_copy(st);
  rawop_facts_union(on_true, &t);
  rawop_facts_union(on_false, &f);
  rawop_facts_free(&t);
  rawop_facts_free(&f);
}

static void check_use(rawop_ctx *c, CXCursor node, const char *wrapper, const char *via,
                      CXSourceLocation at, const rawop_facts *st) {
  if (!clang_Cursor_isNull(c->scope.defer) && clang_equalCursors(c->scope.defer, node)) return;
  if (!rawop_facts_has(st, wrapper)) rawop_report_unguarded(c, at, wrapper, via);
}

void rawop_walk_children(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  rawop_kids ks = rawop_children(e);
  for (size_t i = 0; i < ks.n; i++) rawop_expr(c, ks.v[i], st);
  free(ks.v);
}

/* `obj` was just proven valid. When it is a wrapper's parent (`b.getParentOperation()`,
 * `b.parentOperation`, or `parentOperation` inside a method of the wrapper) and the profile says
 * the wrapper is valid exactly when that parent is, the wrapper is valid too. */
static void add_parent_children(rawop_ctx *c, CXCursor obj, rawop_facts *st) {
  for (int depth = 0; depth < 4 && !clang_Cursor_isNull(obj); depth++) {
    CXCursor m = obj;
    if (clang_getCursorKind(m) == CXCursor_CallExpr) {
      rawop_kids ks = rawop_children(m);
      CXCursor first = ks.n ? ks.v[0] : clang_getNullCursor();
      free(ks.v);
      if (clang_Cursor_isNull(first) || clang_getCursorKind(first) != CXCursor_MemberRefExpr)
        return;
      m = first;
    }
    if (clang_getCursorKind(m) != CXCursor_MemberRefExpr) return;
    CXCursor ref = rawop_member_ref(c, m);
    enum CXCursorKind rk = clang_getCursorKind(ref);
    if (rk != CXCursor_CXXMethod && rk != CXCursor_FieldDecl) return;
    char cls[128], mem[160];
    rawop_decl_names(ref, cls, sizeof cls, mem, sizeof mem);
    if (!rawop_lists_match(&c->p->parents, cls, mem)) return;
    char *w = rawop_member_base(c, m);
    rawop_facts_add(st, w);
    free(w);
    obj = rawop_member_object(m);
    if (!clang_Cursor_isNull(obj)) obj = rawop_strip(obj);
  }
}

/* A guard-like event on a member call or a free function call. */
static void member_event(rawop_ctx *c, CXCursor m, rawop_facts *st) {
  CXCursor ref = rawop_member_ref(c, m);
  enum CXCursorKind rk = clang_getCursorKind(ref);
  if (rk != CXCursor_CXXMethod && rk != CXCursor_ConversionFunction && rk != CXCursor_FieldDecl)
    return;
  char cls[128], mem[160];
  rawop_decl_names(ref, cls, sizeof cls, mem, sizeof mem);
  if (rk != CXCursor_FieldDecl && (rawop_lists_match(&c->p->guards, cls, mem) ||
                                   rawop_lists_match(&c->p->guarded_accessors, cls, mem))) {
    char *w = rawop_member_base(c, m);
    rawop_facts_add(st, w);
    free(w);
    add_parent_children(c, rawop_member_object(m), st);
    return;
  }
  if (rk != CXCursor_FieldDecl && rawop_lists_match(&c->p->invalidators, cls, mem)) {
    char *w = rawop_member_base(c, m);
    rawop_kill_wrapper(c, st, w);
    free(w);
    return;
  }
  rawop_access r = rawop_classify_member_raw(c, m);
  if (r.is_raw) check_use(c, m, r.wrapper, r.via, rawop_start_of(m), st);
  free(r.wrapper);
}

/* An assignment `lhs = rhs` (built-in, or a class's operator= call `e`). */
static void assign(rawop_ctx *c, CXCursor e, CXCursor lhs, CXCursor rhs, rawop_facts *st) {
  int local = 0;
  CXCursor local_var = clang_getNullCursor();
  char *where = rawop_store_target(c, lhs, &local, &local_var);
  rawop_value rv = rawop_raw_value(c, rhs);
  char *status_of = rawop_status_call_wrapper(c, rawop_strip(rhs));
  CXCursor saved = c->scope.defer;
  if (rv.yes && (local || rv.node.kind == CXCursor_DeclRefExpr)) c->scope.defer = rv.node;
  rawop_expr(c, rhs, st);
  c->scope.defer = saved;
  /* The left side: walk the base of a member, not the member itself (writing is not a use). */
  CXCursor ls = rawop_strip(lhs);
  if (clang_getCursorKind(ls) == CXCursor_MemberRefExpr) {
    rawop_walk_children(c, ls, st);
  } else if (clang_getCursorKind(ls) != CXCursor_DeclRefExpr) {
    rawop_expr(c, lhs, st);
  }
  if (rv.yes && where) rawop_report_escape(c, rawop_start_of(e), rv.wrapper, rv.via, where);
  if (rv.yes && !where && !local) {
    /* `v[i] = raw`, `m[key] = raw`: a store into a container. */
    CXCursor sub = rawop_strip(lhs);
    CXString on = clang_getCursorSpelling(sub);
    int subscript = clang_getCursorKind(sub) == CXCursor_CallExpr &&
                    strcmp(clang_getCString(on), "operator[]") == 0 &&
                    clang_Cursor_getNumArguments(sub) == 2;
    clang_disposeString(on);
    if (subscript) {
      CXCursor lv;
      char *cw = rawop_container_target(c, clang_Cursor_getArgument(sub, 0), &lv);
      if (cw)
        rawop_report_escape(c, rawop_start_of(e), rv.wrapper, rv.via, cw);
      else if (!clang_Cursor_isNull(lv))
        rawop_add_container_push(c, lv, &rv, rawop_start_of(e));
      free(cw);
    }
  }
  if (where) {
    /* A local container or lambda holding raw handles, stored where it outlives the function. */
    CXCursor var = rawop_local_var_named(rhs);
    if (!clang_Cursor_isNull(var)) {
      char how[400];
      snprintf(how, sizeof how, "then %s", where);
      rawop_container_escapes(c, var, how);
      rawop_lambda_var *l = rawop_find_lambda_var(c, var);
      if (l && l->wrapper && !l->reported) {
        l->reported = 1;
        rawop_report_escape(
            c, l->at, l->wrapper, l->via,
            "is captured by a lambda that is stored where it outlives the function");
      }
    }
  }
  if (local && !clang_Cursor_isNull(local_var) && rv.yes)
    rawop_add_binding(c, local_var, rv.wrapper, rv.via, rv.access,
                      rv.checked ? RAWOP_BIND_CHECKED : RAWOP_BIND_RAW);
  /* Writing a wrapper (a variable, a field, through a reference) forgets what was known about it,
   * including the statuses taken from it. */
  if (clang_getCursorKind(ls) == CXCursor_DeclRefExpr ||
      clang_getCursorKind(ls) == CXCursor_MemberRefExpr) {
    char *name = rawop_spelling(c, ls);
    rawop_kill_wrapper(c, st, name);
    free(name);
  }
  /* Writing a status variable: it now holds this accessor's status, or none. */
  CXCursor svar = rawop_status_var_of(ls);
  if (!clang_Cursor_isNull(svar)) {
    if (status_of)
      rawop_status_set(c, st, svar, status_of);
    else
      rawop_status_kill(c, st, svar);
  }
  free(status_of);
  free(where);
  free(rv.wrapper);
}

/* C++: a status variable passed to a reference parameter may be written by the callee. (C has
 * no references: an argument is a copy.) */
static void status_ref_args(rawop_ctx *c, CXCursor e, CXCursor fn, rawop_facts *st) {
  CXType ft = clang_getCursorType(fn);
  if (ft.kind != CXType_FunctionProto) return;
  int nparams = clang_getNumArgTypes(ft);
  int nargs = clang_Cursor_getNumArguments(e);
  /* A member operator call (a >> rc, f(rc) on a functor) lists the object as argument 0. */
  int shift = clang_getCursorKind(fn) == CXCursor_CXXMethod && nargs == nparams + 1 &&
              !clang_isFunctionTypeVariadic(ft);
  for (int i = shift; i < nargs; i++) {
    CXCursor var = rawop_status_var_of(clang_Cursor_getArgument(e, (unsigned)i));
    if (clang_Cursor_isNull(var) || i - shift >= nparams) continue; /* `...` copies */
    CXType pt = clang_getArgType(ft, (unsigned)(i - shift));
    if (pt.kind == CXType_LValueReference || pt.kind == CXType_RValueReference)
      rawop_status_escape(c, st, var);
  }
}

typedef struct lambda_refs {
  rawop_ctx *c;
  rawop_facts *st;
  unsigned from, to; /* the lambda's extent (file offsets) */
} lambda_refs;

static enum CXChildVisitResult find_outer_refs(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  lambda_refs *lr = d;
  if (clang_getCursorKind(k) == CXCursor_DeclRefExpr) {
    CXCursor var = rawop_status_var_of(k);
    if (!clang_Cursor_isNull(var)) {
      unsigned off = 0;
      clang_getFileLocation(clang_getCursorLocation(var), NULL, NULL, NULL, &off);
      if (off < lr->from || off >= lr->to) rawop_status_escape(lr->c, lr->st, var);
    }
  }
  return CXChildVisit_Recurse;
}

/* C++: a lambda that names a status variable of the enclosing function may write it (by
 * reference) whenever it is called; that variable's status facts are no longer trusted. */
void rawop_status_lambda_refs(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  CXSourceRange r = clang_getCursorExtent(e);
  lambda_refs lr = {c, st, 0, 0};
  clang_getFileLocation(clang_getRangeStart(r), NULL, NULL, NULL, &lr.from);
  clang_getFileLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &lr.to);
  clang_visitChildren(e, find_outer_refs, &lr);
}

/* A call being walked. */
typedef struct call_info {
  CXCursor e;                  /* the call */
  CXCursor ref;                /* the callee's declaration (null for a dependent call) */
  rawop_kids ks;               /* the call's children: the callee expression first */
  int has_member;              /* the callee is a member expression: obj.f(...) */
  CXCursor callee_lambda;      /* a lambda called on the spot, or through a local variable: */
  rawop_lambda_var *callee_lv; /* ... that variable */
} call_info;

static call_info call_info_of(rawop_ctx *c, CXCursor e) {
  call_info ci = {e, clang_getCursorReferenced(e), rawop_children(e),
                  0, clang_getNullCursor(),        NULL};
  ci.has_member = ci.ks.n && clang_getCursorKind(ci.ks.v[0]) == CXCursor_MemberRefExpr;
  /* The callee: a lambda in a local variable (`check()`), or a lambda called on the spot. */
  int calls_object = 0;
  if (clang_getCursorKind(ci.ref) == CXCursor_CXXMethod) {
    CXString rn = clang_getCursorSpelling(ci.ref);
    calls_object = strcmp(clang_getCString(rn), "operator()") == 0;
    clang_disposeString(rn);
  }
  if (ci.ks.n && calls_object) {
    CXCursor first = rawop_strip(ci.ks.v[0]);
    if (clang_getCursorKind(first) == CXCursor_LambdaExpr) {
      ci.callee_lambda = first;
    } else if (clang_getCursorKind(first) == CXCursor_DeclRefExpr) {
      ci.callee_lv = rawop_find_lambda_var(c, clang_getCursorReferenced(first));
      if (ci.callee_lv) ci.callee_lambda = ci.callee_lv->lambda;
    }
  }
  return ci;
}

/* An implicit conversion operator (`MlirRegion r = pyRegion;`): the source is hidden in the call;
 * a raw one is a use, a guarded one a guard. */
static void implicit_conversion(rawop_ctx *c, const call_info *ci, rawop_facts *st) {
  if (ci->has_member || clang_getCursorKind(ci->ref) != CXCursor_ConversionFunction) return;
  rawop_access r = rawop_classify_member_raw(c, ci->e);
  if (r.is_raw) check_use(c, ci->e, r.wrapper, r.via, rawop_start_of(ci->e), st);
  free(r.wrapper);
  char cls[128], mem[160];
  rawop_decl_names(ci->ref, cls, sizeof cls, mem, sizeof mem);
  if (rawop_lists_match(&c->p->guarded_accessors, cls, mem)) {
    char *w = rawop_spelling(c, ci->e);
    rawop_facts_add(st, w);
    free(w);
  }
}

/* The callee, then the arguments. C++17: the callee is evaluated before the arguments; the
 * arguments are unsequenced with respect to each other, so what one establishes is not known in
 * another: each starts from the state before them, and what each establishes (minus what any
 * removed) holds after them. A lambda argument of a function that calls it and forgets it stays
 * local. */
static void walk_operands(rawop_ctx *c, const call_info *ci, rawop_facts *st) {
  rawop_facts base = {0};
  int have_base = 0;
  rawop_facts out = {0};
  size_t kills_from = c->kills.n;
  for (size_t i = 0; i < ci->ks.n; i++) {
    int ai = -1;
    CXCursor k = ci->ks.v[i];
    if (i == 0 && !clang_Cursor_isNull(ci->callee_lambda)) {
      if (ci->callee_lv) continue; /* calling the variable is not a use that lets it escape */
      CXCursor saved = c->local_lambda;
      c->local_lambda = ci->callee_lambda;
      rawop_expr(c, k, st);
      c->local_lambda = saved;
      continue;
    }
    if (!rawop_is_argument_of(ci->e, k, &ai)) {
      rawop_expr(c, k, st);
      continue;
    }
    if (!have_base) {
      base = rawop_facts_copy(st);
      have_base = 1;
    }
    rawop_facts cur = rawop_facts_copy(&base);
    CXCursor lam = rawop_lambda_of(k);
    CXCursor saved = c->local_lambda;
    if (!clang_Cursor_isNull(lam) && !clang_Cursor_isNull(ci->ref)) {
      CXType ft = clang_getCursorType(ci->ref);
      int np = clang_getNumArgTypes(ft);
      int pi = ai - (np >= 0 && clang_Cursor_getNumArguments(ci->e) == np + 1 ? 1 : 0);
      CXType pt = pi >= 0 && pi < np ? clang_getArgType(ft, (unsigned)pi) : clang_getCursorType(k);
      if (rawop_calls_and_forgets(ci->ref, pt)) c->local_lambda = lam;
    }
    rawop_expr(c, k, &cur);
    c->local_lambda = saved;
    rawop_facts_union(&out, &cur);
    rawop_facts_free(&cur);
  }
  if (have_base) {
    rawop_facts_union(st, &out);
    rawop_apply_kills(c, st, kills_from);
  }
  rawop_facts_free(&base);
  rawop_facts_free(&out);
}

/* A dependent call (`DerivedTy::isaFunction(value)`): a wrapper passed where the file's
 * instantiation expects a raw handle is converted to it (a use, or a guard when the conversion
 * checks). */
static void dependent_conversions(rawop_ctx *c, const call_info *ci, rawop_facts *st) {
  if (!clang_Cursor_isNull(ci->ref) || !c->sh || !c->sh->ntb) return;
  CXType params[16];
  int np = rawop_dependent_params(c, ci->e, params, 16);
  int na = clang_Cursor_getNumArguments(ci->e);
  for (int i = 0; i < np && i < na; i++) {
    CXCursor arg = clang_Cursor_getArgument(ci->e, (unsigned)i);
    CXType at = rawop_strip_refs(clang_getCursorType(arg));
    if (at.kind != CXType_Record || clang_equalTypes(at, clang_getCanonicalType(params[i])))
      continue;
    CXCursor conv = rawop_conversion_to(at, params[i], 0);
    if (clang_Cursor_isNull(conv)) continue;
    char cls[128], mem[160];
    rawop_decl_names(conv, cls, sizeof cls, mem, sizeof mem);
    char *w = rawop_spelling(c, arg);
    if (rawop_lists_match(&c->p->raw_accessors, cls, mem)) {
      char via[320];
      snprintf(via, sizeof via, "%s::%s", cls, mem);
      check_use(c, arg, w, via, rawop_start_of(arg), st);
    } else if (rawop_lists_match(&c->p->guarded_accessors, cls, mem)) {
      rawop_facts_add(st, w);
    }
    free(w);
  }
}

/* `v.push_back(raw)`, `m.insert(...)`: a raw handle put into a container, an escape unless the
 * container is local (then remembered with it). */
static void container_pushes(rawop_ctx *c, const call_info *ci) {
  if (!ci->has_member) return;
  CXString mn = clang_getCursorSpelling(ci->ks.v[0]);
  int push = rawop_is_push_method(clang_getCString(mn));
  clang_disposeString(mn);
  int na = clang_Cursor_getNumArguments(ci->e);
  for (int i = 0; push && i < na; i++) {
    CXCursor arg = clang_Cursor_getArgument(ci->e, (unsigned)i);
    rawop_value rv = rawop_raw_value(c, arg);
    if (rv.yes) {
      CXCursor local;
      char *where = rawop_container_target(c, rawop_member_object(ci->ks.v[0]), &local);
      if (where)
        rawop_report_escape(c, rawop_start_of(arg), rv.wrapper, rv.via, where);
      else if (!clang_Cursor_isNull(local))
        rawop_add_container_push(c, local, &rv, rawop_start_of(arg));
      free(where);
    }
    free(rv.wrapper);
  }
}

/* `get(w, &raw)`, a status accessor of the profile: `raw` is bound to the raw handle of `w`. */
static void status_accessor_call(rawop_ctx *c, const call_info *ci,
                                 const tether_lint_status_accessor *sa) {
  int nargs = clang_Cursor_getNumArguments(ci->e);
  if (nargs <= sa->wrapper_arg || nargs <= sa->out_arg) return;
  char *w = rawop_spelling(c, clang_Cursor_getArgument(ci->e, (unsigned)sa->wrapper_arg));
  CXCursor out = rawop_strip(clang_Cursor_getArgument(ci->e, (unsigned)sa->out_arg));
  if (clang_getCursorKind(out) == CXCursor_UnaryOperator &&
      clang_getCursorUnaryOperatorKind(out) == CXUnaryOperator_AddrOf) {
    rawop_kids ok = rawop_children(out);
    CXCursor v = ok.n == 1 ? rawop_strip(ok.v[0]) : clang_getNullCursor();
    free(ok.v);
    if (!clang_Cursor_isNull(v) && clang_getCursorKind(v) == CXCursor_DeclRefExpr) {
      char via[320];
      snprintf(via, sizeof via, "%s()", sa->name);
      rawop_add_binding(c, clang_getCursorReferenced(v), w, via, rawop_start_of(ci->e),
                        RAWOP_BIND_RAW);
    }
  }
  free(w);
}

/* A free function of the profile taking the wrapper first: a guard (the wrapper is valid after
 * it) or an invalidator (it is not). 1 when it was one. */
static int free_function_event(rawop_ctx *c, const call_info *ci, rawop_facts *st) {
  if (ci->has_member || clang_getCursorKind(ci->ref) != CXCursor_FunctionDecl ||
      clang_Cursor_getNumArguments(ci->e) < 1)
    return 0;
  CXString n = clang_getCursorSpelling(ci->ref);
  const char *name = clang_getCString(n);
  int guard = tether_lint__profile_match(&c->p->guards, NULL, name) ||
              tether_lint__profile_match(&c->p->guarded_accessors, NULL, name);
  int inval = tether_lint__profile_match(&c->p->invalidators, NULL, name);
  clang_disposeString(n);
  if (!guard && !inval) return 0;
  char *w = rawop_spelling(c, clang_Cursor_getArgument(ci->e, 0));
  if (guard) rawop_facts_add(st, w);
  if (inval) rawop_kill_wrapper(c, st, w);
  free(w);
  return 1;
}

/* A helper that guards: a lambda, or a function or method of the translation unit that takes a
 * wrapper (or is a method of one): its summary's guards, in the caller's terms. */
static void helper_summary(rawop_ctx *c, const call_info *ci, rawop_facts *st) {
  CXCursor ref = ci->ref;
  if (!clang_Cursor_isNull(ci->callee_lambda)) {
    rawop_summary *sm = rawop_summary_of(c, ci->callee_lambda);
    if (sm && sm->done) {
      int nargs = clang_Cursor_getNumArguments(ci->e);
      int shift = nargs == (int)sm->params.n + 1 ? 1 : 0;
      rawop_apply_summary(c, sm, ci->e, NULL, shift, 1, st);
    }
    return;
  }
  if (clang_Cursor_isNull(ref) ||
      (clang_getCursorKind(ref) != CXCursor_FunctionDecl &&
       clang_getCursorKind(ref) != CXCursor_CXXMethod) ||
      rawop_is_exempt(c, ref))
    return;
  int wants = clang_getCursorKind(ref) == CXCursor_CXXMethod &&
              rawop_type_is_wrapper(c, clang_getCursorType(clang_getCursorSemanticParent(ref)));
  int np = clang_Cursor_getNumArguments(ref);
  for (int i = 0; !wants && i < np; i++)
    wants =
        rawop_type_is_wrapper(c, clang_getCursorType(clang_Cursor_getArgument(ref, (unsigned)i)));
  if (!wants) return;
  rawop_summary *sm = rawop_summary_of(c, ref);
  if (!sm || !sm->done) return;
  char *obj = ci->has_member ? rawop_member_base(c, ci->ks.v[0]) : NULL;
  if (!obj && clang_getCursorKind(ref) == CXCursor_CXXMethod) obj = tether_lint__strdup("this");
  rawop_apply_summary(c, sm, ci->e, obj, 0, 0, st);
  free(obj);
}

static void call(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  const tether_lint_status_accessor *sa = rawop_status_call(c, e);
  call_info ci = call_info_of(c, e);
  implicit_conversion(c, &ci, st);
  walk_operands(c, &ci, st);
  dependent_conversions(c, &ci, st);
  container_pushes(c, &ci);
  if (!clang_Cursor_isNull(ci.ref)) status_ref_args(c, e, ci.ref, st);
  if (sa)
    status_accessor_call(c, &ci, sa);
  else if (!free_function_event(c, &ci, st))
    helper_summary(c, &ci, st);
  free(ci.ks.v);
}

static void declref(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  CXCursor var = clang_getCursorReferenced(e);
  rawop_lambda_var *l = clang_Cursor_isNull(var) ? NULL : rawop_find_lambda_var(c, var);
  if (l && l->wrapper && !l->reported) {
    /* A lambda kept in a local variable is used other than by calling it: it may be stored
     * or passed on, and with it the raw handle it captured. */
    l->reported = 1;
    rawop_report_escape(c, l->at, l->wrapper, l->via,
                        "is captured by a lambda that leaves the function");
  }
  rawop_binding *b = rawop_find_binding(c, e);
  if (!b) return;
  size_t idx = (size_t)(b - c->b);
  if (c->scope.in_lambda && idx < c->scope.fn_base) {
    rawop_lambda_capture(c, c->scope.cur_lambda, c->scope.lambda_local, b->wrapper, b->via,
                         c->scope.lambda_at);
    return;
  }
  if (b->kind != RAWOP_BIND_RAW) return;
  if (!clang_Cursor_isNull(c->scope.defer) && clang_equalCursors(c->scope.defer, e)) return;
  if (!b->reported && !rawop_facts_has(st, b->wrapper)) {
    b->reported = 1;
    rawop_report_unguarded(c, b->access, b->wrapper, b->via);
  }
}

/* `a = b`, `a && b`, `a || b`: the right side of && (||) starts with what the left side proves
 * true (false). */
static void binary_op(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
  if (op != CXBinaryOperator_Assign && op != CXBinaryOperator_LAnd && op != CXBinaryOperator_LOr) {
    rawop_walk_children(c, e, st);
    return;
  }
  rawop_kids ks = rawop_children(e);
  if (op == CXBinaryOperator_Assign) {
    if (ks.n == 2) {
      assign(c, e, ks.v[0], ks.v[1], st);
    } else {
      for (size_t i = 0; i < ks.n; i++) rawop_expr(c, ks.v[i], st);
    }
  } else if (ks.n == 2) {
    rawop_expr(c, ks.v[0], st);
    rawop_facts t = {0}, f = {0};
    rawop_cond_facts(c, ks.v[0], st, &t, &f);
    rawop_facts right = rawop_facts_copy(st);
    rawop_facts_union(&right, op == CXBinaryOperator_LAnd ? &t : &f);
    rawop_expr(c, ks.v[1], &right);
    rawop_facts_free(&right);
    rawop_facts_free(&t);
    rawop_facts_free(&f);
  }
  free(ks.v);
}

/* `rc |= ...`, `rc++`, `&rc`: a status variable written no longer holds the accessor's status; one
 * whose address is taken may be written anywhere from now on. */
static void status_write(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  rawop_walk_children(c, e, st);
  if (clang_getCursorKind(e) == CXCursor_CompoundAssignOperator) {
    rawop_kids ks = rawop_children(e);
    if (ks.n == 2) {
      CXCursor svar = rawop_status_var_of(ks.v[0]);
      if (!clang_Cursor_isNull(svar)) rawop_status_kill(c, st, svar);
    }
    free(ks.v);
    return;
  }
  enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(e);
  if (op != CXUnaryOperator_PostInc && op != CXUnaryOperator_PostDec &&
      op != CXUnaryOperator_PreInc && op != CXUnaryOperator_PreDec && op != CXUnaryOperator_AddrOf)
    return;
  CXCursor svar = rawop_status_var_of(rawop_first_expr_child(e));
  if (clang_Cursor_isNull(svar)) return;
  if (op == CXUnaryOperator_AddrOf)
    rawop_status_escape(c, st, svar);
  else
    rawop_status_kill(c, st, svar);
}

/* `cond ? a : b`: each branch starts with what `cond` proves on it; after it, what both add. */
static void conditional(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  rawop_kids ks = rawop_children(e);
  if (ks.n == 3) {
    rawop_expr(c, ks.v[0], st);
    rawop_facts a, b;
    rawop_branch_states(c, ks.v[0], st, &a, &b);
    rawop_expr(c, ks.v[1], &a);
    rawop_expr(c, ks.v[2], &b);
    rawop_facts_intersect(&a, &b);
    rawop_facts_union(st, &a);
    rawop_facts_free(&a);
    rawop_facts_free(&b);
  } else {
    for (size_t i = 0; i < ks.n; i++) rawop_expr(c, ks.v[i], st);
  }
  free(ks.v);
}

void rawop_expr(rawop_ctx *c, CXCursor e, rawop_facts *st) {
  enum CXCursorKind k = clang_getCursorKind(e);
  if (clang_isStatement(k) && !clang_isExpression(k)) {
    rawop_stmt(c, e, st);
    return;
  }
  if (clang_isDeclaration(k)) {
    if (k == CXCursor_VarDecl) {
      rawop_facts tmp = rawop_facts_copy(st);
      rawop_stmt(c, e, &tmp); /* handled like a declaration statement */
      rawop_facts_replace(st, &tmp);
    }
    return;
  }
  switch (k) {
  case CXCursor_MemberRefExpr:
    rawop_walk_children(c, e, st);
    member_event(c, e, st);
    return;
  case CXCursor_CallExpr: {
    CXCursor lhs, rhs;
    if (rawop_operator_assign(e, &lhs, &rhs))
      assign(c, e, lhs, rhs, st);
    else
      call(c, e, st);
    return;
  }
  case CXCursor_DeclRefExpr:
    declref(c, e, st);
    return;
  case CXCursor_LambdaExpr:
    rawop_lambda(c, e, st);
    return;
  case CXCursor_BinaryOperator:
    binary_op(c, e, st);
    return;
  case CXCursor_CompoundAssignOperator:
  case CXCursor_UnaryOperator:
    status_write(c, e, st);
    return;
  case CXCursor_ConditionalOperator:
    conditional(c, e, st);
    return;
  default:
    rawop_walk_children(c, e, st);
    return;
  }
}
