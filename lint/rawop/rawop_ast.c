/* Reading the AST for the raw-op walk: children in order, implicit nodes stripped, and the
 * spelling that identifies a wrapper.
 *
 * Invariant: a wrapper's spelling is built from the AST, not from tokens, so it is the same inside
 * and outside macros, and normalised ("this->x" and "(*this).x" are "x", outer parentheses go):
 * two expressions denote the same wrapper exactly when their spellings are equal. */
#include "lint/rawop/rawop.h"
#include "lint/utils/clang_util.h"

#include <stdlib.h>
#include <string.h>

static enum CXChildVisitResult collect(CXCursor k, CXCursor parent, CXClientData data) {
  (void)parent;
  rawop_kids *ks = data;
  if (tether_lint__grow(&ks->v, &ks->cap, ks->n, sizeof *ks->v) != 0) return CXChildVisit_Break;
  ks->v[ks->n++] = k;
  return CXChildVisit_Continue;
}

rawop_kids rawop_children(CXCursor c) {
  rawop_kids ks = {0};
  clang_visitChildren(c, collect, &ks);
  return ks;
}

/* Strips implicit wrappers: parentheses, implicit casts, copy/move constructions. */
CXCursor rawop_strip(CXCursor e) {
  for (int guard = 0; guard < 64; guard++) {
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k == CXCursor_ParenExpr || k == CXCursor_UnexposedExpr || k == CXCursor_CStyleCastExpr ||
        k == CXCursor_CXXStaticCastExpr || k == CXCursor_CXXFunctionalCastExpr ||
        k == CXCursor_CXXConstCastExpr || k == CXCursor_CXXReinterpretCastExpr) {
      rawop_kids ks = rawop_children(e);
      CXCursor next = clang_getNullCursor();
      for (size_t i = 0; i < ks.n; i++)
        if (clang_isExpression(clang_getCursorKind(ks.v[i]))) next = ks.v[i];
      free(ks.v);
      if (clang_Cursor_isNull(next)) return e;
      e = next;
      continue;
    }
    if (k == CXCursor_CallExpr) {
      CXCursor ref = clang_getCursorReferenced(e);
      if (clang_getCursorKind(ref) == CXCursor_Constructor) {
        rawop_kids ks = rawop_children(e);
        CXCursor only = ks.n == 1 ? ks.v[0] : clang_getNullCursor();
        free(ks.v);
        if (!clang_Cursor_isNull(only) && clang_isExpression(clang_getCursorKind(only))) {
          e = only;
          continue;
        }
      }
    }
    return e;
  }
  return e;
}

/* Normalises a wrapper spelling in place: outer parentheses, "(*this)." and "this->" go. */
void rawop_normalise(char *s) {
  for (;;) {
    size_t len = strlen(s);
    if (len >= 2 && s[0] == '(' && s[len - 1] == ')') {
      int depth = 0, whole = 1;
      for (size_t i = 0; i < len; i++) {
        if (s[i] == '(') depth++;
        if (s[i] == ')') depth--;
        if (depth == 0 && i + 1 < len) whole = 0;
      }
      if (whole) {
        memmove(s, s + 1, len - 2);
        s[len - 2] = '\0';
        continue;
      }
    }
    if (strncmp(s, "this->", 6) == 0 && s[6]) {
      memmove(s, s + 6, strlen(s + 6) + 1);
      continue;
    }
    if (strncmp(s, "(*this).", 8) == 0 && s[8]) {
      memmove(s, s + 8, strlen(s + 8) + 1);
      continue;
    }
    if (strcmp(s, "*this") == 0) {
      strcpy(s, "this");
      continue;
    }
    break;
  }
}

/* Concatenated spelling of tokens [from, to), normalised. */
static char *tokens_string(CXTranslationUnit tu, CXToken *toks, unsigned from, unsigned to) {
  tether_lint__buf b = {0};
  for (unsigned i = from; i < to && b.n < 256; i++) {
    CXString s = clang_getTokenSpelling(tu, toks[i]);
    tether_lint__buf_puts(&b, clang_getCString(s));
    clang_disposeString(s);
  }
  if (!b.p) tether_lint__buf_puts(&b, "");
  if (b.p) rawop_normalise(b.p);
  return b.p;
}

/* Concatenated token spelling of a source range, normalised ("this->x" -> "x"). */
static char *spelling_of_range(CXTranslationUnit tu, CXSourceRange r, int drop_last) {
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(tu, r, &toks, &n);
  unsigned end = n > (unsigned)drop_last ? n - (unsigned)drop_last : 0;
  char *s = tokens_string(tu, toks, 0, end);
  if (toks) clang_disposeTokens(tu, toks, n);
  return s;
}

CXCursor rawop_first_expr_child(CXCursor e) {
  rawop_kids ks = rawop_children(e);
  CXCursor r = clang_getNullCursor();
  for (size_t i = 0; i < ks.n; i++)
    if (clang_isExpression(clang_getCursorKind(ks.v[i]))) {
      r = ks.v[i];
      break;
    }
  free(ks.v);
  return r;
}

/* The object an overloaded operator-> is applied to (its first argument). */
static CXCursor arrow_object(CXCursor call) {
  CXCursor fn = clang_getCursorReferenced(call);
  rawop_kids ks = rawop_children(call);
  CXCursor r = clang_getNullCursor();
  for (size_t i = 0; i < ks.n && clang_Cursor_isNull(r); i++) {
    CXCursor k = ks.v[i];
    if (!clang_isExpression(clang_getCursorKind(k))) continue;
    CXCursor kref = clang_getCursorReferenced(rawop_strip(k));
    if (!clang_Cursor_isNull(kref) && clang_equalCursors(kref, fn) &&
        clang_getCursorKind(rawop_strip(k)) == CXCursor_DeclRefExpr)
      continue;
    r = k;
  }
  free(ks.v);
  return r;
}

CXCursor rawop_skip_parens(CXCursor e) {
  while (clang_getCursorKind(e) == CXCursor_UnexposedExpr ||
         clang_getCursorKind(e) == CXCursor_ParenExpr) {
    CXCursor in = rawop_first_expr_child(e);
    if (clang_Cursor_isNull(in)) break;
    e = in;
  }
  return e;
}

static int is_arrow_call(CXCursor e) {
  if (clang_getCursorKind(e) != CXCursor_CallExpr) return 0;
  CXString n = clang_getCursorSpelling(e);
  int yes = strcmp(clang_getCString(n), "operator->") == 0;
  clang_disposeString(n);
  return yes;
}

/* Spelling built from the AST, not from tokens, so it is the same inside and outside macros:
 * "self", "self.parentOperation", "parentOperation" (for this->parentOperation), "p->blk". */
static void spell_into(rawop_ctx *c, CXCursor e, tether_lint__buf *b, int depth) {
  if (depth > 32) {
    tether_lint__buf_puts(b, "?");
    return;
  }
  enum CXCursorKind k = clang_getCursorKind(e);
  switch (k) {
  case CXCursor_CXXThisExpr:
    tether_lint__buf_puts(b, "this");
    return;
  case CXCursor_DeclRefExpr: {
    CXString n = clang_getCursorSpelling(e);
    tether_lint__buf_puts(b, clang_getCString(n));
    clang_disposeString(n);
    return;
  }
  case CXCursor_ParenExpr:
  case CXCursor_UnexposedExpr: {
    CXCursor in = rawop_first_expr_child(e);
    if (clang_Cursor_isNull(in)) break;
    spell_into(c, in, b, depth + 1);
    return;
  }
  case CXCursor_UnaryOperator: {
    enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(e);
    CXCursor in = rawop_first_expr_child(e);
    if (clang_Cursor_isNull(in) || (op != CXUnaryOperator_Deref && op != CXUnaryOperator_AddrOf))
      break;
    tether_lint__buf inner = {0};
    spell_into(c, in, &inner, depth + 1);
    if (inner.p && strcmp(inner.p, "this") == 0 && op == CXUnaryOperator_Deref) {
      tether_lint__buf_puts(b, "this");
    } else {
      tether_lint__buf_puts(b, op == CXUnaryOperator_Deref ? "*" : "&");
      tether_lint__buf_puts(b, inner.p ? inner.p : "?");
    }
    tether_lint__buf_free(&inner);
    return;
  }
  case CXCursor_MemberRefExpr: {
    char mname[160];
    rawop_ref_name(c, e, mname, sizeof mname);
    CXCursor base = rawop_first_expr_child(e);
    tether_lint__buf bb = {0};
    int arrow = 0;
    if (!clang_Cursor_isNull(base)) {
      CXCursor sb = rawop_skip_parens(base);
      if (is_arrow_call(sb)) {
        CXCursor obj = arrow_object(sb);
        if (!clang_Cursor_isNull(obj)) spell_into(c, obj, &bb, depth + 1);
        arrow = 1;
      } else {
        spell_into(c, sb, &bb, depth + 1);
        CXType t = clang_getCursorType(sb);
        arrow = t.kind == CXType_Pointer;
      }
    }
    if (bb.p && strcmp(bb.p, "this") != 0 && bb.p[0]) {
      tether_lint__buf_puts(b, bb.p);
      tether_lint__buf_puts(b, arrow ? "->" : ".");
    }
    tether_lint__buf_puts(b, mname);
    tether_lint__buf_free(&bb);
    return;
  }
  case CXCursor_CallExpr: {
    rawop_kids ks = rawop_children(e);
    CXCursor first = ks.n ? ks.v[0] : clang_getNullCursor();
    free(ks.v);
    if (is_arrow_call(e)) {
      CXCursor obj = arrow_object(e);
      if (!clang_Cursor_isNull(obj)) {
        spell_into(c, obj, b, depth + 1);
        tether_lint__buf_puts(b, "->");
        return;
      }
    }
    if (!clang_Cursor_isNull(first) && clang_getCursorKind(first) == CXCursor_MemberRefExpr) {
      spell_into(c, first, b, depth + 1);
      tether_lint__buf_puts(b, "()");
      return;
    }
    CXString n = clang_getCursorSpelling(e);
    tether_lint__buf_puts(b, clang_getCString(n));
    tether_lint__buf_puts(b, "()");
    clang_disposeString(n);
    return;
  }
  default:
    break;
  }
  /* Anything else: its tokens, when they are all in the main file. */
  CXSourceRange r = clang_getCursorExtent(e);
  CXFile f1 = NULL, f2 = NULL;
  unsigned o1 = 0, o2 = 0;
  clang_getSpellingLocation(clang_getRangeStart(r), &f1, NULL, NULL, &o1);
  clang_getSpellingLocation(clang_getRangeEnd(r), &f2, NULL, NULL, &o2);
  if (f1 && f1 == f2 && o2 >= o1 && o2 - o1 < 256) {
    char *s = spelling_of_range(c->tu, r, 0);
    tether_lint__buf_puts(b, s ? s : "?");
    free(s);
  } else {
    tether_lint__buf_puts(b, "?");
  }
}

char *rawop_spelling(rawop_ctx *c, CXCursor e) {
  tether_lint__buf b = {0};
  spell_into(c, e, &b, 0);
  if (!b.p) tether_lint__buf_puts(&b, "?");
  if (b.p) rawop_normalise(b.p);
  return b.p;
}

/* The wrapper a member expression is applied to ("self" in self.get(), "this" when implicit). */
char *rawop_member_base(rawop_ctx *c, CXCursor m) {
  CXCursor base = rawop_first_expr_child(m);
  if (clang_Cursor_isNull(base)) return tether_lint__strdup("this");
  CXCursor sb = rawop_skip_parens(base);
  if (is_arrow_call(sb)) {
    CXCursor obj = arrow_object(sb);
    if (!clang_Cursor_isNull(obj)) return rawop_spelling(c, obj);
  }
  return rawop_spelling(c, sb);
}

/* The object a member expression is applied to, with parentheses and implicit conversions
 * stripped, and an overloaded `->` seen through (`p->checkValid()` on a smart reference: `p`). */
CXCursor rawop_member_object(CXCursor m) {
  CXCursor sb = rawop_first_expr_child(m);
  if (clang_Cursor_isNull(sb)) return sb;
  sb = rawop_skip_parens(sb);
  if (is_arrow_call(sb)) {
    CXCursor obj = arrow_object(sb);
    if (!clang_Cursor_isNull(obj)) sb = rawop_strip(obj);
  }
  return sb;
}

/* "Class" and "member" of a referenced declaration; `cls` is "" when it is not a class member. */
void rawop_decl_names(CXCursor decl, char *cls, size_t clen, char *mem, size_t mlen) {
  CXString m = clang_getCursorSpelling(decl);
  snprintf(mem, mlen, "%s", clang_getCString(m));
  clang_disposeString(m);
  cls[0] = '\0';
  CXCursor parent = clang_getCursorSemanticParent(decl);
  enum CXCursorKind pk = clang_getCursorKind(parent);
  if (tether_lint__is_class_kind(pk)) {
    CXString s = clang_getCursorSpelling(parent);
    snprintf(cls, clen, "%s", clang_getCString(s));
    clang_disposeString(s);
  }
}

/* The name a member expression or a qualified name refers to: its spelling, or for a dependent
 * one (which libclang leaves unnamed) the last identifier written in it. */
void rawop_ref_name(rawop_ctx *c, CXCursor e, char *out, size_t len) {
  CXString s = clang_getCursorSpelling(e);
  snprintf(out, len, "%s", clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  if (out[0]) return;
  CXToken *toks = NULL;
  unsigned n = 0;
  clang_tokenize(c->tu, clang_getCursorExtent(e), &toks, &n);
  for (unsigned i = n; i-- > 0;) {
    if (clang_getTokenKind(toks[i]) != CXToken_Identifier) continue;
    CXString ts = clang_getTokenSpelling(c->tu, toks[i]);
    snprintf(out, len, "%s", clang_getCString(ts));
    clang_disposeString(ts);
    break;
  }
  if (toks) clang_disposeTokens(c->tu, toks, n);
}

CXType rawop_strip_refs(CXType t) {
  for (int i = 0; i < 4; i++)
    if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference ||
        t.kind == CXType_Pointer)
      t = clang_getPointeeType(t);
  return clang_getCanonicalType(t);
}

static int is_function_kind(enum CXCursorKind k) {
  return tether_lint__is_function_kind(k) || k == CXCursor_LambdaExpr;
}

int rawop_var_is_local_automatic(CXCursor var) {
  if (clang_getCursorKind(var) != CXCursor_VarDecl && clang_getCursorKind(var) != CXCursor_ParmDecl)
    return 0;
  if (clang_getCursorKind(var) == CXCursor_ParmDecl) return 1;
  if (clang_Cursor_getStorageClass(var) == CX_SC_Static) return 0;
  if (clang_getCursorTLSKind(var) != CXTLS_None) return 0;
  return is_function_kind(clang_getCursorKind(clang_getCursorSemanticParent(var)));
}

int rawop_in_system_header(CXCursor d) {
  return clang_Location_isInSystemHeader(clang_getCursorLocation(d));
}

CXCursor rawop_lambda_of(CXCursor e) {
  CXCursor s = rawop_strip(e);
  return clang_getCursorKind(s) == CXCursor_LambdaExpr ? s : clang_getNullCursor();
}

int rawop_is_argument_of(CXCursor call, CXCursor k, int *index) {
  int na = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < na; i++)
    if (clang_equalCursors(clang_Cursor_getArgument(call, (unsigned)i), k)) {
      *index = i;
      return 1;
    }
  return 0;
}

/* A class's copy/move assignment call `a = b`: its two operands, without the operator itself. */
int rawop_operator_assign(CXCursor e, CXCursor *lhs, CXCursor *rhs) {
  CXCursor fn = clang_getCursorReferenced(e);
  if (clang_getCursorKind(fn) != CXCursor_CXXMethod) return 0;
  CXString n = clang_getCursorSpelling(fn);
  int is_assign = strcmp(clang_getCString(n), "operator=") == 0;
  clang_disposeString(n);
  if (!is_assign) return 0;
  rawop_kids ks = rawop_children(e);
  CXCursor ops[2];
  size_t nops = 0;
  for (size_t i = 0; i < ks.n; i++) {
    CXCursor k = ks.v[i];
    CXCursor sk = rawop_strip(k);
    if (clang_getCursorKind(sk) == CXCursor_DeclRefExpr &&
        clang_equalCursors(clang_getCursorReferenced(sk), fn))
      continue; /* the operator function itself */
    if (clang_getCursorKind(k) == CXCursor_MemberRefExpr &&
        clang_equalCursors(clang_getCursorReferenced(k), fn))
      continue; /* a.operator=(b) spelled out */
    if (nops < 2) ops[nops] = k;
    nops++;
  }
  free(ks.v);
  if (nops != 2) return 0;
  *lhs = ops[0];
  *rhs = ops[1];
  return 1;
}
