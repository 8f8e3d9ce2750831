/* exclude-libs in Makefiles.
 *
 * Invariant: the file is read as logical lines (backslash continuations joined), comments removed
 * as make does; a recipe line is a shell command (printing commands skipped, compile-only commands
 * link nothing, the linker itself makes every flag count); any other line counts only as an
 * assignment (export/override/private, target-specific ones included) to a link-flag variable or
 * a plain one. */
#include "lint/excludelibs/excludelibs.h"

#include <ctype.h>
#include <string.h>

/* A recipe line [s, e): a shell command. Printing commands are skipped; others are scanned as
 * values, and a bare --exclude-libs counts when the command is the linker itself. */
static void make_recipe(excl_ctx *c, const char *s, const char *e) {
  const char *p = s;
  while (p < e && (excl_is_space(*p) || *p == '@' || *p == '-' || *p == '+')) p++;
  const char *w = p;
  while (p < e && !excl_is_space(*p)) p++;
  size_t wn = (size_t)(p - w);
  static const char *const quiet[] = {"echo",   "printf",    ":",       "true",
                                      "$(info", "$(warning", "$(error", NULL};
  for (size_t i = 0; quiet[i]; i++)
    if (strlen(quiet[i]) == wn && memcmp(quiet[i], w, wn) == 0) return;
  int ld = (wn >= 2 && (excl_ends_with_n(w, wn, "ld") || excl_ends_with_n(w, wn, "(LD)") ||
                        excl_ends_with_n(w, wn, "{LD}")));
  /* A command that only compiles links nothing. */
  for (p = w; p < e;) {
    while (p < e && excl_is_space(*p)) p++;
    const char *ws = p;
    while (p < e && !excl_is_space(*p)) p++;
    if (p - ws == 2 && ws[0] == '-' && ws[1] == 'c') return;
  }
  excl_scan_value(c, w, (size_t)(e - w), ld ? EXCL_CTX_LINK : EXCL_CTX_WORDS, 0);
}

/* Any other line [s, e): an assignment `[export|override|private] NAME op VALUE`, also a
 * target-specific one `target: NAME op VALUE`, scanned by what NAME is about. */
static void make_assignment(excl_ctx *c, const char *s, const char *e) {
  const char *p = s;
  for (;;) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *w = p;
    while (p < e && (isalnum((unsigned char)*p) || *p == '_')) p++;
    size_t wn = (size_t)(p - w);
    if ((wn == 6 && memcmp(w, "export", 6) == 0) || (wn == 8 && memcmp(w, "override", 8) == 0) ||
        (wn == 7 && memcmp(w, "private", 7) == 0)) {
      if (p < e && (*p == ' ' || *p == '\t')) continue;
    }
    p = w;
    break;
  }
  /* Find the assignment operator; a ':' that is not part of ":=" / "::=" first means a rule (or
   * a target-specific assignment after it). */
  for (int pass = 0; pass < 2; pass++) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *name = p;
    while (p < e && !excl_is_space(*p) && *p != '=' && *p != ':' && *p != '+' && *p != '?' &&
           *p != '!')
      p++;
    const char *name_end = p;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *op = p;
    if (p < e && *p == ':' && !(p + 1 < e && (p[1] == '=' || p[1] == ':'))) {
      if (pass == 1) return;
      p++; /* a rule: maybe "target: NAME = value" */
      continue;
    }
    while (p < e && (*p == ':' || *p == '+' || *p == '?' || *p == '!')) p++;
    if (p >= e || *p != '=' || name_end == name) return;
    (void)op;
    p++;
    int ctx = excl_linkish(name, (size_t)(name_end - name))      ? EXCL_CTX_LINK
              : excl_compileish(name, (size_t)(name_end - name)) ? EXCL_CTX_NONE
                                                                 : EXCL_CTX_ASSIGN;
    excl_scan_value(c, p, (size_t)(e - p), ctx, 0);
    return;
  }
}

/* One logical line [s, e) (continuations included, comments not yet removed). */
static void make_line(excl_ctx *c, const char *s, const char *e) {
  int recipe = *s == '\t';
  /* Where the comment starts: '#' not escaped; in a recipe, '#' at the start of a shell word
   * outside quotes. */
  const char *ce = e;
  char quote = 0;
  for (const char *p = s; p < e; p++) {
    if (*p == '\\' && p + 1 < e) {
      p++;
      continue;
    }
    if (recipe) {
      if (quote) {
        if (*p == quote) quote = 0;
        continue;
      }
      if (*p == '"' || *p == '\'') {
        quote = *p;
        continue;
      }
      if (*p == '#' && (p == s || excl_is_space(p[-1]))) {
        ce = p;
        break;
      }
    } else if (*p == '#') {
      ce = p;
      break;
    }
  }
  e = ce;
  if (recipe)
    make_recipe(c, s, e);
  else
    make_assignment(c, s, e);
}

void excl_check_make(excl_ctx *c) {
  const char *p = c->text, *end = c->text + c->len;
  while (p < end) {
    const char *s = p;
    /* A logical line: a backslash before the newline continues it. */
    while (p < end) {
      if (*p == '\n') {
        size_t bs = 0;
        for (const char *b = p; b > s && b[-1] == '\\'; b--) bs++;
        if (bs % 2 == 0) break;
      }
      p++;
    }
    make_line(c, s, p);
    if (p < end) p++;
  }
}
