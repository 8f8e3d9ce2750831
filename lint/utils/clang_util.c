/* libclang helpers and token scanning shared by the rule families (clang_util.h).
 *
 * Invariant: every CXString, CXDiagnostic and CXToken array obtained here is disposed here; what
 * is handed out is plain malloc'd memory the caller frees. */
#include "lint/utils/clang_util.h"

#include <stdlib.h>
#include <string.h>

char *tether_lint__cx_take(CXString s) {
  char *r = tether_lint__strdup(clang_getCString(s) ? clang_getCString(s) : "");
  clang_disposeString(s);
  return r;
}

int tether_lint__cursor_is(CXCursor c, const char *name) {
  CXString s = clang_getCursorSpelling(c);
  int eq = clang_getCString(s) && strcmp(clang_getCString(s), name) == 0;
  clang_disposeString(s);
  return eq;
}

int tether_lint__is_function_kind(enum CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate ||
         k == CXCursor_Constructor || k == CXCursor_Destructor || k == CXCursor_ConversionFunction;
}

int tether_lint__is_class_kind(enum CXCursorKind k) {
  return k == CXCursor_StructDecl || k == CXCursor_ClassDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

int tether_lint__is_ident_char(char ch) {
  return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
         (ch >= '0' && ch <= '9');
}

CXFile tether_lint__main_file(CXTranslationUnit tu) {
  CXString sp = clang_getTranslationUnitSpelling(tu);
  CXFile file = clang_getFile(tu, clang_getCString(sp));
  clang_disposeString(sp);
  return file;
}

unsigned tether_lint__error_count(CXTranslationUnit tu) {
  unsigned nd = clang_getNumDiagnostics(tu), nerr = 0;
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) nerr++;
    clang_disposeDiagnostic(d);
  }
  return nerr;
}

void tether_lint__missing_header(CXTranslationUnit tu, int (*prefer)(const char *name), char *out,
                                 size_t len) {
  out[0] = '\0';
  unsigned nd = clang_getNumDiagnostics(tu);
  int done = 0;
  for (unsigned i = 0; i < nd && !done; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    CXString s = clang_getDiagnosticSpelling(d);
    const char *m = clang_getCString(s);
    const char *q = m ? strchr(m, '\'') : NULL;
    const char *e = q ? strstr(q + 1, "' file not found") : NULL;
    if (q && e) {
      char name[512];
      snprintf(name, sizeof name, "%.*s", (int)(e - q - 1), q + 1);
      int preferred = prefer && prefer(name);
      if (preferred || !out[0]) snprintf(out, len, "%s", name);
      done = prefer ? preferred : out[0] != '\0';
    }
    clang_disposeString(s);
    clang_disposeDiagnostic(d);
  }
}

int tether_lint__tokenize_file(CXTranslationUnit tu, CXFile file, tether_lint_tokens *out) {
  memset(out, 0, sizeof *out);
  size_t size = 0;
  if (!clang_getFileContents(tu, file, &size)) return -1;
  CXSourceRange range = clang_getRange(clang_getLocationForOffset(tu, file, 0),
                                       clang_getLocationForOffset(tu, file, (unsigned)size));
  CXToken *raw = NULL;
  unsigned nraw = 0;
  clang_tokenize(tu, range, &raw, &nraw);
  out->t = calloc(nraw ? nraw : 1, sizeof *out->t);
  int rc = out->t ? 0 : -1;
  for (unsigned i = 0; i < nraw && rc == 0; i++) {
    if (clang_getTokenKind(raw[i]) == CXToken_Comment) continue;
    tether_lint_token *tk = &out->t[out->n];
    tk->kind = clang_getTokenKind(raw[i]);
    tk->s = tether_lint__cx_take(clang_getTokenSpelling(tu, raw[i]));
    if (!tk->s) {
      rc = -1;
      break;
    }
    clang_getSpellingLocation(clang_getTokenLocation(tu, raw[i]), NULL, &tk->line, &tk->col,
                              &tk->offset);
    out->n++;
  }
  if (raw) clang_disposeTokens(tu, raw, nraw);
  if (rc != 0) tether_lint__tokens_free(out);
  return rc;
}

void tether_lint__tokens_free(tether_lint_tokens *t) {
  for (size_t i = 0; i < t->n; i++) free(t->t[i].s);
  free(t->t);
  memset(t, 0, sizeof *t);
}

int tether_lint__token_is(const tether_lint_token *t, const char *s) {
  return strcmp(t->s, s) == 0;
}
