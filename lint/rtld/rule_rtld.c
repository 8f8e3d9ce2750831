/* Rule family "rtld-global": Python code that loads shared objects RTLD_GLOBAL.
 *
 * Invariant: a small Python lexer (comments, string literals of every quoting and prefix, nothing
 * else) finds the calls that set how later objects are loaded (`sys.setdlopenflags(...)`) or load
 * one (`ctypes.CDLL(...)`, `PyDLL(...)`, `LoadLibrary(...)`, `ctypes.cdll.LoadLibrary(...)`), and
 * reports each `RTLD_GLOBAL` name among their arguments, at its line and column. A flag kept in a
 * variable first (`flags = os.RTLD_GLOBAL | ...`) is not followed. Nothing is allocated. */
#include "lint/lint.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define RTLD_RULE "rtld-global"

static const tether_lint_rule_info rtld_rules[] = {
    {RTLD_RULE, "a shared object loaded RTLD_GLOBAL from Python",
     "sys.setdlopenflags(... | RTLD_GLOBAL) or ctypes.CDLL(..., mode=RTLD_GLOBAL) makes the "
     "symbols of the objects loaded afterwards (or of this one) resolve every later object's "
     "references. Projects reach for it when two extensions each carry a copy of MLIR's TypeIDs "
     "(isa<> failing across them): the first copy loaded then wins, so whether isa<> works "
     "depends on import order, and two different LLVM/MLIR builds in one process interpose each "
     "other's symbols (crashes far from the cause).",
     "link every extension against ONE shared library that holds MLIR (the fix the workaround "
     "stands in for), and load extensions RTLD_LOCAL (Python's default)"},
};

static int rtld_claims(const char *path, const char *head, size_t headlen) {
  (void)head;
  (void)headlen;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return tether_lint__ends_with(base, ".py") && strcmp(base, "setup.py") != 0;
}

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* A string literal starting at t[i] (after its prefix letters): its end, or i when none. */
static size_t skip_string(const char *t, size_t n, size_t i) {
  char q = t[i];
  if (q != '"' && q != '\'') return i;
  int triple = i + 2 < n && t[i + 1] == q && t[i + 2] == q;
  size_t k = i + (triple ? 3 : 1);
  while (k < n) {
    if (t[k] == '\\') {
      k += 2;
      continue;
    }
    if (!triple && t[k] == '\n') return k; /* unterminated: ends at the line */
    if (t[k] == q && (!triple || (k + 2 < n && t[k + 1] == q && t[k + 2] == q)))
      return k + (triple ? 3 : 1);
    k++;
  }
  return n;
}

/* The next code position from i: past comments and string literals. */
static size_t skip_noncode(const char *t, size_t n, size_t i) {
  for (;;) {
    if (i >= n) return n;
    if (t[i] == '#') {
      while (i < n && t[i] != '\n') i++;
      continue;
    }
    /* A quote, or up to two prefix letters (r, b, f, u, rb, ...) that start a word before one. */
    size_t p = i;
    if (i == 0 || !ident_char(t[i - 1]))
      while (p < n && p - i < 2 && strchr("rRbBfFuU", t[p])) p++;
    if (p < n && (t[p] == '"' || t[p] == '\'')) {
      i = skip_string(t, n, p);
      continue;
    }
    return i;
  }
}

static int word_at(const char *t, size_t n, size_t i, const char *w) {
  size_t wl = strlen(w);
  return i + wl <= n && memcmp(t + i, w, wl) == 0 && (i == 0 || !ident_char(t[i - 1])) &&
         (i + wl == n || !ident_char(t[i + wl]));
}

static void line_col(const char *t, size_t off, unsigned *line, unsigned *col) {
  unsigned l = 1;
  size_t ls = 0;
  for (size_t i = 0; i < off; i++)
    if (t[i] == '\n') l++, ls = i + 1;
  *line = l;
  *col = (unsigned)(off - ls) + 1;
}

static int rtld_check_text(tether_lint_file *f, void *state, const char *t, size_t n) {
  (void)state;
  static const char *const calls[] = {"setdlopenflags", "CDLL", "PyDLL", "LoadLibrary", NULL};
  for (size_t i = skip_noncode(t, n, 0); i < n; i = skip_noncode(t, n, i + 1)) {
    const char *name = NULL;
    for (int c = 0; calls[c] && !name; c++)
      if (word_at(t, n, i, calls[c])) name = calls[c];
    if (!name) {
      /* Whole identifiers only: skip the rest of this one. */
      while (i + 1 < n && ident_char(t[i]) && ident_char(t[i + 1])) i++;
      continue;
    }
    size_t k = i + strlen(name);
    while (k < n && (t[k] == ' ' || t[k] == '\t')) k++;
    if (k >= n || t[k] != '(') {
      i = k - 1;
      continue;
    }
    /* The arguments: to the matching ')', over code only. */
    int depth = 0;
    size_t j = k;
    for (; j < n; j = skip_noncode(t, n, j + 1)) {
      if (t[j] == '(' || t[j] == '[' || t[j] == '{') depth++;
      if (t[j] == ')' || t[j] == ']' || t[j] == '}') {
        if (--depth == 0) break;
      }
      /* A number with Linux's RTLD_GLOBAL bit (0x100), as `setdlopenflags(0x100 | 0x2)`. */
      if (isdigit((unsigned char)t[j]) && (j == 0 || !ident_char(t[j - 1]))) {
        char num[32];
        size_t m = 0;
        while (j + m < n && m + 1 < sizeof num &&
               (isalnum((unsigned char)t[j + m]) || t[j + m] == '_'))
          num[m] = t[j + m], m++;
        num[m] = '\0';
        char *end;
        unsigned long long v = strtoull(num, &end, 0);
        if (*end == '\0' && (v & 0x100)) {
          unsigned line, col;
          line_col(t, j, &line, &col);
          tether_lint__report_at(f, line, col, RTLD_RULE,
                                 "%s() loads with %s, which includes RTLD_GLOBAL (0x100 on "
                                 "Linux): the first copy of a symbol loaded serves every later "
                                 "object (duplicated TypeIDs then match or not by import order)",
                                 name, num);
        }
        j += m ? m - 1 : 0;
        continue;
      }
      if (word_at(t, n, j, "RTLD_GLOBAL")) {
        unsigned line, col;
        line_col(t, j, &line, &col);
        tether_lint__report_at(f, line, col, RTLD_RULE,
                               "%s() loads with RTLD_GLOBAL: the first copy of a symbol loaded "
                               "serves every later object (duplicated TypeIDs then match or not "
                               "by import order)",
                               name);
        j += strlen("RTLD_GLOBAL") - 1;
      }
    }
    i = j < n ? j : n;
  }
  return 0;
}

const tether_lint_family tether_lint__family_rtld = {
    .name = "rtld-global",
    .inputs = TETHER_LINT_IN_TEXT,
    .rules = rtld_rules,
    .nrules = sizeof rtld_rules / sizeof rtld_rules[0],
    .claims = rtld_claims,
    .check_text = rtld_check_text,
};
