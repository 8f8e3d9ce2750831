/* A bound lambda or pointer read from tokens: its written return type, else the type of what it
 * returns (evaluated through the parse's declarations: `v.m()`, `v->m()`, `Cls::m()` and chains,
 * a returned variable by its declared type), its parameters (std::function callbacks), and the
 * calls in its body that free IR (`erase()` on an operation or block, list operations on
 * `getOperations()`/`getBlocks()`, a PassManager variable's run, the rewriter's and the drivers'
 * names, the file's helpers).
 *
 * Invariant: what libclang kept whole (a LambdaExpr without errors in it) is judged from the AST
 * as in a file that compiles; from tokens, a return type is judged only when written or evaluated,
 * and a bound callable is reported at most once per rule (`done`). */
#include "lint/direct/direct_tokens.h"
#include "lint/utils/bind_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A variable a body's tokens declare, with its type's tokens. */
typedef struct tvar {
  size_t name, tfrom, tto;
} tvar;

typedef struct tvars {
  tvar v[64];
  int n;
} tvars;

/* Parameters [from, to) of a lambda or function: `Type name` each. */
static void params_of(const struct direct_toks *k, size_t from, size_t to, tvars *vs) {
  size_t r[32][2];
  int na = direct_tok_split_args(k, from, to, r, 32);
  for (int a = 0; a < na && vs->n < 64; a++) {
    size_t e = r[a][1];
    for (size_t j = r[a][0]; j < r[a][1]; j++)
      if (direct_tok_is(k, j, "=")) e = j; /* a default argument */
    if (e > r[a][0] + 1 && direct_tok_ident(k, e - 1))
      vs->v[vs->n++] = (tvar){e - 1, r[a][0], e - 1};
  }
}

/* Simple local declarations of a body: `[const] Type [*&] name =|;|(|{` at a statement's start. */
static void locals_of(const struct direct_toks *k, size_t open, size_t close, tvars *vs) {
  for (size_t i = open + 1; i < close && vs->n < 64; i++) {
    if (!(direct_tok_is(k, i - 1, "{") || direct_tok_is(k, i - 1, ";") ||
          direct_tok_is(k, i - 1, "}")))
      continue;
    size_t j = i;
    while (j < close &&
           (direct_tok_ident(k, j) || direct_tok_is(k, j, "::") || direct_tok_qualifier_word(k, j)))
      j++;
    if (j < close && direct_tok_is(k, j, "<")) {
      size_t c = direct_tok_angle_close(k, j, close);
      if (c == NO_MATCH) continue;
      j = c + 1;
      while (j < close &&
             (direct_tok_is(k, j, "*") || direct_tok_is(k, j, "&") || direct_tok_is(k, j, "&&")))
        j++;
      if (!direct_tok_ident(k, j)) continue;
      j++;
    }
    if (j <= i + 1 || j >= close || !direct_tok_ident(k, j - 1)) continue;
    if (!(direct_tok_is(k, j, "=") || direct_tok_is(k, j, ";") || direct_tok_is(k, j, "(") ||
          direct_tok_is(k, j, "{")))
      continue;
    if (direct_tok_is(k, i, "return") || direct_tok_is(k, i, "throw") ||
        direct_tok_is(k, i, "delete"))
      continue;
    vs->v[vs->n++] = (tvar){j - 1, i, j - 1};
  }
}

static const tvar *var_named(const struct direct_toks *k, const tvars *vs, const char *name) {
  for (int i = vs->n; i-- > 0;)
    if (!strcmp(k->t[vs->v[i].name].s, name)) return &vs->v[i];
  return NULL;
}

/* The category of the receiver of a call whose `.`/`->` is at `dot`: a variable's declared type
 * (-1 when the receiver is not a known variable, DIRECT_NONE when it is but its class is none). */
static int receiver_cat(direct_ctx *x, const struct direct_toks *k, const tvars *vs, size_t dot) {
  if (dot == 0 || !direct_tok_ident(k, dot - 1)) return -1;
  const tvar *v = var_named(k, vs, k->t[dot - 1].s);
  if (!v) return -1;
  direct_ttype t;
  direct_tok_classify(x, k, v->tfrom, v->tto, &t, 0);
  if (!t.resolved) return -1;
  return t.cat;
}

/* Is the receiver before `dot` a call of getOperations() or getBlocks()? */
static int receiver_is_ir_list(const struct direct_toks *k, size_t dot) {
  if (dot < 3 || !direct_tok_is(k, dot - 1, ")") || k->match[dot - 1] == NO_MATCH) return 0;
  size_t open = k->match[dot - 1];
  return open >= 1 &&
         (direct_tok_is(k, open - 1, "getOperations") || direct_tok_is(k, open - 1, "getBlocks"));
}

static int tok_body_frees(direct_ctx *x, const struct direct_toks *k, size_t open, size_t close,
                          const tvars *params, char *why, size_t len) {
  tvars vs = *params;
  locals_of(k, open, close, &vs);
  for (size_t i = open + 1; i < close; i++) {
    if (!direct_tok_ident(k, i) || (!direct_tok_is(k, i + 1, "(") && !direct_tok_is(k, i + 1, "<")))
      continue;
    const char *n = k->t[i].s;
    int member = i > 0 && (direct_tok_is(k, i - 1, ".") || direct_tok_is(k, i - 1, "->"));
    size_t args_close = direct_tok_is(k, i + 1, "(") ? k->match[i + 1] : NO_MATCH;
    int noargs = args_close == i + 2;
    const char *by = direct_frees_by_name(n);
    if (by) {
      snprintf(why, len, "%s%s erases or replaces IR", by, n);
      return 1;
    }
    if (!member) {
      /* A helper of the file. */
      CXCursor fn = direct_lookup_file_function(x, n);
      char inner[256];
      if (!clang_Cursor_isNull(fn) && direct_body_frees(x, fn, inner, sizeof inner)) {
        snprintf(why, len, "through '%s': %s", n, inner);
        return 1;
      }
      continue;
    }
    int rc = receiver_cat(x, k, &vs, i - 1);
    if (!strcmp(n, "erase") || !strcmp(n, "destroy")) {
      if (receiver_is_ir_list(k, i - 1)) {
        snprintf(why, len, "erase on a list of operations or blocks deletes what it removes");
        return 1;
      }
      if (noargs && (rc == -1 || rc == DIRECT_OPERATION || rc == DIRECT_OP || rc == DIRECT_BLOCK)) {
        snprintf(why, len, "%s() erases %s", n,
                 rc == DIRECT_BLOCK ? "the block and its operations"
                                    : "an operation or block and everything in it");
        return 1;
      }
    } else if (!strcmp(n, "clear") || !strcmp(n, "pop_back") || !strcmp(n, "pop_front")) {
      if (receiver_is_ir_list(k, i - 1) || (noargs && rc == DIRECT_BLOCK)) {
        snprintf(why, len, "%s on a block's operations deletes them", n);
        return 1;
      }
    } else if (!strcmp(n, "run") && rc == DIRECT_PASSMANAGER) {
      snprintf(why, len,
               "PassManager::run runs passes, which may erase or replace any operation "
               "under the one it runs on");
      return 1;
    } else {
      CXCursor fn = direct_lookup_file_function(x, n);
      char inner[256];
      if (!clang_Cursor_isNull(fn) && direct_body_frees(x, fn, inner, sizeof inner)) {
        snprintf(why, len, "through '%s': %s", n, inner);
        return 1;
      }
    }
  }
  return 0;
}

/* Does a body return a value (`return x;`, outside the lambdas nested in it)? */
/* The next `return <value>` of a body at or after `from`, outside the lambdas nested in it (the
 * index of `return`), or NO_MATCH. */
static size_t next_return(const struct direct_toks *k, size_t from, size_t close) {
  for (size_t i = from; i < close; i++) {
    if (direct_tok_is(k, i, "[") && k->match[i] != NO_MATCH &&
        direct_tok_is(k, k->match[i] + 1, "(")) {
      /* A nested lambda: skip its body. */
      size_t j = k->match[k->match[i] + 1];
      while (j != NO_MATCH && j < close && !direct_tok_is(k, j, "{")) j++;
      if (j != NO_MATCH && j < close && k->match[j] != NO_MATCH) i = k->match[j];
      continue;
    }
    if (direct_tok_is(k, i, "return") && !direct_tok_is(k, i + 1, ";")) return i;
  }
  return NO_MATCH;
}

static int returns_value(const struct direct_toks *k, size_t open, size_t close) {
  return next_return(k, open + 1, close) != NO_MATCH;
}

/* The class a type written in tokens names (cv, `*` and `&` aside; not a template), or null. */
static CXCursor tokens_class(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to) {
  while (from < to && direct_tok_qualifier_word(k, from)) from++;
  while (to > from && direct_tok_qualifier_word(k, to - 1)) to--;
  char name[256];
  size_t at = 0;
  name[0] = '\0';
  for (size_t i = from; i < to; i++) {
    if (!direct_tok_ident(k, i) && !direct_tok_is(k, i, "::")) return clang_getNullCursor();
    int w = snprintf(name + at, sizeof name - at, "%s", k->t[i].s);
    if (w < 0 || (size_t)w >= sizeof name - at) return clang_getNullCursor();
    at += (size_t)w;
  }
  if (!name[0] || !strncmp(name, "std::", 5) || !strncmp(name, "llvm::", 6))
    return clang_getNullCursor();
  return direct_lookup_class(x, name);
}

/* The class a type is or points to, and whether that is through a pointer. */
static CXCursor class_of_type(CXType t, int *pointer) {
  t = clang_getCanonicalType(t);
  *pointer = t.kind == CXType_Pointer;
  if (t.kind == CXType_Pointer || t.kind == CXType_LValueReference ||
      t.kind == CXType_RValueReference)
    t = clang_getCanonicalType(clang_getPointeeType(t));
  CXCursor d = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(d)) return d;
  CXCursor def = clang_getCursorDefinition(d);
  return clang_Cursor_isNull(def) ? d : def;
}

/* The type of a simple expression written in tokens [from, to) (`v`, `v.m(...)`, `v->m(...)`,
 * `Cls::m(...)` and chains of them), through the declarations the parse saw; an invalid type when
 * any step does not resolve (a template method, an unknown variable...). */
static CXType expr_type(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to,
                        const tvars *vs) {
  CXType none = {CXType_Invalid, {NULL, NULL}};
  while (from < to && (direct_tok_is(k, from, "&") || direct_tok_is(k, from, "*") ||
                       direct_tok_is(k, from, "(")))
    from++;
  if (from >= to || !direct_tok_ident(k, from)) return none;
  CXCursor cls = clang_getNullCursor();
  CXType cur = none;
  int pointer = 0;
  size_t i = from;
  const tvar *v = var_named(k, vs, k->t[i].s);
  if (v && !direct_tok_is(k, i + 1, "::")) {
    cls = tokens_class(x, k, v->tfrom, v->tto);
    pointer = 0;
    for (size_t j = v->tfrom; j < v->tto; j++) pointer |= direct_tok_is(k, j, "*");
    i++;
  } else {
    /* Cls::m(...): a static member of a class. */
    size_t j = i;
    while (j + 2 < to && direct_tok_ident(k, j) && direct_tok_is(k, j + 1, "::") &&
           direct_tok_ident(k, j + 2))
      j += 2;
    if (j == i || !direct_tok_is(k, j + 1, "(")) return none;
    cls = tokens_class(x, k, i, j - 1);
    i = j - 1; /* at the `::` before the member */
  }
  while (i < to && !clang_Cursor_isNull(cls)) {
    int arrow = direct_tok_is(k, i, "->");
    if (!arrow && !direct_tok_is(k, i, ".") && !direct_tok_is(k, i, "::")) break;
    if (!direct_tok_ident(k, i + 1) || !direct_tok_is(k, i + 2, "(") || k->match[i + 2] == NO_MATCH)
      return none;
    if (arrow && !pointer) {
      /* OpState's operator->: the operation. */
      CXCursor op = direct_lookup_member(x, cls, "operator->");
      if (clang_Cursor_isNull(op)) return none;
      cls = class_of_type(clang_getCursorResultType(op), &pointer);
      if (clang_Cursor_isNull(cls)) return none;
    }
    CXCursor m = direct_lookup_member(x, cls, k->t[i + 1].s);
    if (clang_getCursorKind(m) != CXCursor_CXXMethod) return none;
    cur = clang_getCursorResultType(m);
    if (cur.kind == CXType_Invalid) return none;
    cls = class_of_type(cur, &pointer);
    i = k->match[i + 2] + 1;
  }
  return i == to ? cur : none;
}

int direct_tok_parse_lambda(const struct direct_toks *k, size_t lb, size_t end, direct_tlambda *l) {
  if (!direct_tok_is(k, lb, "[") || k->match[lb] == NO_MATCH) return 0;
  size_t i = k->match[lb] + 1;
  l->params_open = l->params_close = NO_MATCH;
  l->ret_from = l->ret_to = 0;
  if (direct_tok_is(k, i, "(")) {
    if (k->match[i] == NO_MATCH) return 0;
    l->params_open = i;
    l->params_close = k->match[i];
    i = k->match[i] + 1;
  }
  while (i < end && (direct_tok_is(k, i, "mutable") || direct_tok_is(k, i, "constexpr") ||
                     direct_tok_is(k, i, "noexcept"))) {
    i++;
    if (direct_tok_is(k, i, "(") && k->match[i] != NO_MATCH) i = k->match[i] + 1;
  }
  if (direct_tok_is(k, i, "->")) {
    l->ret_from = ++i;
    while (i < end && !direct_tok_is(k, i, "{")) i++;
    l->ret_to = i;
  }
  if (!direct_tok_is(k, i, "{") || k->match[i] == NO_MATCH || k->match[i] > end) return 0;
  l->body_open = i;
  l->body_close = k->match[i];
  return 1;
}

/* The LambdaExpr libclang kept for the lambda at `lb`, or the null cursor. */
static CXCursor ast_lambda(direct_ctx *x, const struct direct_toks *k, size_t lb) {
  CXCursor c = clang_getCursor(x->tu, direct_tok_loc(x, k, lb));
  return clang_getCursorKind(c) == CXCursor_LambdaExpr ? c : clang_getNullCursor();
}

void direct_tok_judge_lambda(direct_ctx *x, const struct direct_toks *k, const direct_site *site,
                             size_t lb, const direct_tlambda *l, int *done) {
  CXCursor lam = ast_lambda(x, k, lb);
  int clean = !direct_tok_errors_in(k, k->t[lb].offset, k->t[l->body_close].offset);
  tether_lint_bind_callable cb = {0};
  int have = !clang_Cursor_isNull(lam) && tether_lint__bind_callable(lam, &cb);
  if (have && clean) {
    /* libclang has all of it: the AST decides, as in a file that compiles. */
    direct_judge_callable(x, site, cb.decl, cb.result, done);
    free(cb.name);
    return;
  }
  /* direct-frees-ir: what the AST kept of the body, then its tokens. */
  char why[512];
  tvars ps = {.n = 0};
  if (l->params_open != NO_MATCH) params_of(k, l->params_open + 1, l->params_close, &ps);
  if (!(*done & DIRECT_DONE_FREES) && tether_lint__file_rule_enabled(x->f, DIRECT_RULE_FREES) &&
      ((have && direct_body_frees(x, cb.decl, why, sizeof why)) ||
       tok_body_frees(x, k, l->body_open, l->body_close, &ps, why, sizeof why))) {
    direct_report_frees(x, site, why);
    *done |= DIRECT_DONE_FREES;
  }
  free(cb.name);
  if ((*done & DIRECT_DONE_RAW) || !tether_lint__file_rule_enabled(x->f, DIRECT_RULE_RAW)) return;
  /* direct-raw-return: the written return type, then callbacks among the parameters. */
  if (l->ret_to > l->ret_from) {
    direct_ttype t;
    direct_tok_classify(x, k, l->ret_from, l->ret_to, &t, 0);
    if (direct_is_raw_ir(t.cat) && !t.callback && !direct_held(x, t.name, t.cat)) {
      direct_report_raw(x, site, t.written, t.cat, 0, t.in_container);
      *done |= DIRECT_DONE_RAW;
      return;
    }
  } else if (returns_value(k, l->body_open, l->body_close)) {
    /* No return type written: the type of what it returns, where the declarations tell it. */
    tvars vs = ps;
    locals_of(k, l->body_open, l->body_close, &vs);
    int judged = 0;
    for (size_t r = next_return(k, l->body_open + 1, l->body_close); r != NO_MATCH && !judged;
         r = next_return(k, r + 1, l->body_close)) {
      size_t end = r + 1;
      while (end < l->body_close && !direct_tok_is(k, end, ";")) {
        if ((direct_tok_is(k, end, "(") || direct_tok_is(k, end, "[") ||
             direct_tok_is(k, end, "{")) &&
            k->match[end] != NO_MATCH)
          end = k->match[end];
        end++;
      }
      /* `return v;`: the type v was declared with (`std::vector<Value> v;`). */
      const tvar *v =
          end == r + 2 && direct_tok_ident(k, r + 1) ? var_named(k, &vs, k->t[r + 1].s) : NULL;
      if (v) {
        direct_ttype vt;
        direct_tok_classify(x, k, v->tfrom, v->tto, &vt, 0);
        if (!vt.resolved) continue;
        judged = 1;
        if (direct_is_raw_ir(vt.cat) && !vt.callback && !direct_held(x, vt.name, vt.cat)) {
          direct_report_raw(x, site, vt.written, vt.cat, 0, vt.in_container);
          *done |= DIRECT_DONE_RAW;
          return;
        }
        continue;
      }
      CXType rt = expr_type(x, k, r + 1, end, &vs);
      if (rt.kind == CXType_Invalid) continue;
      judged = 1;
      direct_ret rr;
      if (direct_type_raw_ir(x, rt, &rr)) {
        if (!direct_held(x, rr.qname, rr.cat)) {
          char *ts = tether_lint__cx_take(clang_getTypeSpelling(rt));
          direct_report_raw(x, site, ts ? ts : rr.qname, rr.cat, 0, rr.in_container);
          free(ts);
          *done |= DIRECT_DONE_RAW;
          return;
        }
      }
    }
    if (!judged) x->unjudged_returns++;
  }
  for (int p = 0; p < ps.n; p++) {
    direct_ttype t;
    direct_tok_classify(x, k, ps.v[p].tfrom, ps.v[p].tto, &t, 0);
    if (t.callback && !direct_held(x, t.name, t.cat)) {
      direct_report_raw(x, site, t.written, t.cat, 1, 0);
      *done |= DIRECT_DONE_RAW;
      return;
    }
  }
}

/* `&A::B::m` or `&f` (or `f`) at [from, to): the declaration it names, judged. 1 when resolved. */
int direct_tok_judge_pointer(direct_ctx *x, const struct direct_toks *k, const direct_site *site,
                             size_t from, size_t to, int *done) {
  int amp = direct_tok_is(k, from, "&");
  if (amp) from++;
  char name[256], cls[256];
  direct_tok_join(k, from, to, name, sizeof name);
  for (size_t i = from; i < to; i++)
    if (!direct_tok_ident(k, i) && !direct_tok_is(k, i, "::")) return 0;
  if (to <= from) return 0;
  const char *last = strrchr(name, ':');
  CXCursor decl = clang_getNullCursor();
  if (last && last > name + 1) {
    snprintf(cls, sizeof cls, "%.*s", (int)(last - 1 - name), name);
    CXCursor c = direct_lookup_class(x, cls);
    if (!clang_Cursor_isNull(c)) decl = direct_lookup_member(x, c, last + 1);
    if (clang_Cursor_isNull(decl)) {
      /* A method of a class the parse does not declare, registered by base: erase still erases. */
      const direct_reg *r = direct_find_reg(x, cls);
      if (r && (r->cat == DIRECT_OP || r->cat == DIRECT_OPERATION || r->cat == DIRECT_BLOCK) &&
          (!strcmp(last + 1, "erase") || !strcmp(last + 1, "destroy")) &&
          !(*done & DIRECT_DONE_FREES) && tether_lint__file_rule_enabled(x->f, DIRECT_RULE_FREES)) {
        char why[300];
        snprintf(why, sizeof why, "%s::%s erases it and everything in it", cls, last + 1);
        direct_report_frees(x, site, why);
        *done |= DIRECT_DONE_FREES;
        return 1;
      }
      if (amp) {
        x->unjudged_pointers++;
        if (x->unknown_owners.n < 5)
          tether_lint__strlist_add_unique(&x->unknown_owners, cls);
        else if (!tether_lint__strlist_has(&x->unknown_owners, cls))
          x->unknown_owners_more = 1;
      }
      return 0;
    }
  } else {
    decl = direct_lookup_file_function(x, name);
    if (clang_Cursor_isNull(decl)) return 0;
  }
  CXType result = clang_getCursorKind(decl) == CXCursor_FieldDecl ? clang_getCursorType(decl)
                                                                  : clang_getCursorResultType(decl);
  direct_judge_callable(x, site, decl, result, done);
  return 1;
}
