/* exclude-libs in Python-like languages: Starlark (Bazel BUILD, .bzl), Python (setup.py), Meson
 * (meson.build), TOML (pyproject.toml).
 *
 * Invariant: the scan keeps, for each open bracket, the name its values belong to (a keyword
 * argument, a dict key, an assignment, the called function); a string is scanned in the context
 * of the innermost level with a name: link flags under a link-flag name, nothing under a compile
 * flag name or inside a printing call, plain values otherwise. At most 64 levels are tracked.
 *
 * The same scan serves the build-graph reader of dialect-linked-twice (excl_lex_starlark): it then
 * scans no value and hands every token to a callback instead, in text order. */
#include "lint/excludelibs/excludelibs.h"

#include <ctype.h>
#include <string.h>

typedef enum { KEY_NONE, KEY_ASSIGN, KEY_CALL } key_kind;

typedef struct py_level {
  char opener; /* '(' '[' '{' or 0 for the top level */
  int subscript;
  key_kind kk;
  const char *key; /* the name the values at this level belong to */
  size_t keyn;
  const char *call; /* '(' after a name: the called function (keyword arguments end at ',') */
  size_t calln;
  const char *last; /* the last name (or identifier-like string) seen at this level */
  size_t lastn;
} py_level;

/* Calls whose arguments are printed or documented, never link flags. */
static int quiet_call(const char *s, size_t n) {
  static const char *const names[] = {"print",   "fail",   "message", "warning", "error", "assert",
                                      "summary", "format", "debug",   "info",    NULL};
  for (size_t i = 0; names[i]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return 1;
  return 0;
}

/* The context of a string at the top of `st`: the innermost level with a key decides; calls that
 * are not about linking are transparent (select(), Extension(), ...), except printing ones. */
static int py_ctx(const py_level *st, size_t depth, const char *table, size_t tablen) {
  for (size_t i = depth + 1; i-- > 0;) {
    const py_level *l = &st[i];
    if (l->kk == KEY_NONE) continue;
    if (l->kk == KEY_CALL) {
      if (excl_linkish(l->key, l->keyn)) return EXCL_CTX_LINK;
      if (quiet_call(l->key, l->keyn)) return EXCL_CTX_NONE;
      continue;
    }
    if (excl_linkish(l->key, l->keyn)) return EXCL_CTX_LINK;
    if (excl_compileish(l->key, l->keyn)) return EXCL_CTX_NONE;
    if (table && excl_linkish(table, tablen)) return EXCL_CTX_LINK;
    return EXCL_CTX_ASSIGN;
  }
  return EXCL_CTX_NONE;
}

/* One scan of a Python-like file. */
typedef struct py_scan {
  excl_ctx *c;
  excl_pylang lang;
  const char *p, *end;
  py_level st[64]; /* the brackets open around p; st[0] is the top level */
  size_t depth;
  int prev_name;     /* the previous token was a name (a following '(' is a call) */
  const char *pname; /* ... that name */
  size_t pnamen;
  int prev_closer;   /* the previous token closed a bracket or was a string ('[' subscripts) */
  int line_start;    /* TOML: nothing but whitespace since the last newline at the top level */
  const char *table; /* TOML: the current [table] header */
  size_t tablen;
  excl_tok_callback tok; /* excl_lex_starlark: receives every token; no value is scanned */
  void *ud;
} py_scan;

/* Hands a token to the callback of excl_lex_starlark, when there is one. */
static void py_emit(py_scan *ps, excl_tok_kind kind, const char *s, size_t n) {
  if (!ps->tok) return;
  excl_tok t = {kind, s, n};
  ps->tok(&t, ps->ud);
}

/* Whitespace, line continuations, comments and newlines (which end a top-level statement). 1 when
 * p was at one of them. */
static int py_blank(py_scan *ps) {
  const char *p = ps->p, *end = ps->end;
  char ch = *p;
  if (ch == '\n') {
    py_emit(ps, EXCL_TOK_NEWLINE, p, 1);
    if (ps->depth == 0) {
      ps->st[0].kk = KEY_NONE;
      ps->st[0].last = NULL;
      ps->line_start = 1;
    }
    ps->prev_name = ps->prev_closer = 0;
    ps->p++;
  } else if (excl_is_space(ch)) {
    ps->p++;
  } else if (ch == '\\' && p + 1 < end && (p[1] == '\n' || p[1] == '\r')) {
    ps->p += 2;
  } else if (ch == '#') {
    while (ps->p < end && *ps->p != '\n') ps->p++;
  } else {
    return 0;
  }
  return 1;
}

/* TOML: a table header [a.b] or [[a.b]] at the start of a line; its last dotted component names
 * the table. 1 when p was at one. */
static int toml_table(py_scan *ps) {
  if (ps->lang != EXCL_TOML || *ps->p != '[' || ps->depth != 0 || !ps->line_start) return 0;
  const char *q = ps->p, *end = ps->end;
  while (q < end && *q == '[') q++;
  const char *h = q;
  while (q < end && *q != ']' && *q != '\n') q++;
  const char *lc = h;
  for (const char *r = h; r < q; r++)
    if (*r == '.') lc = r + 1;
  while (lc < q && (*lc == ' ' || *lc == '"' || *lc == '\'')) lc++;
  const char *le = q;
  while (le > lc && (le[-1] == ' ' || le[-1] == '"' || le[-1] == '\'')) le--;
  ps->table = lc;
  ps->tablen = (size_t)(le - lc);
  while (q < end && *q != '\n') q++;
  ps->p = q;
  return 1;
}

/* A string literal (with its prefixes: r, b, u, f in Python, f in Meson; '...' only in Meson;
 * triple-quoted; raw), scanned as a value in the context of where it is. 1 when p was at one. */
static int py_string(py_scan *ps) {
  const char *p = ps->p, *end = ps->end, *q = p;
  if (ps->lang == EXCL_PYTHON) {
    while (q < end && q - p < 3 && strchr("rRbBuUfF", *q)) q++;
  } else if (ps->lang == EXCL_MESON) {
    if (q < end && *q == 'f') q++;
  }
  if (q >= end || (*q != '"' && *q != '\'') || (ps->lang == EXCL_MESON && *q != '\'')) return 0;
  char quote = *q;
  int raw = 0;
  for (const char *r = p; r < q; r++)
    if (*r == 'r' || *r == 'R') raw = 1;
  if (ps->lang == EXCL_TOML && quote == '\'') raw = 1;
  int triple = q + 2 < end && q[1] == quote && q[2] == quote;
  const char *s = q + (triple ? 3 : 1);
  const char *e = s;
  while (e < end) {
    if (*e == '\\' && !raw && e + 1 < end) {
      e += 2;
      continue;
    }
    if (triple) {
      if (*e == quote && e + 2 < end && e[1] == quote && e[2] == quote) break;
    } else if (*e == quote || *e == '\n') {
      break;
    }
    e++;
  }
  size_t sn = (size_t)(e - s);
  py_level *l = &ps->st[ps->depth];
  if (excl_is_ident(s, sn)) {
    l->last = s;
    l->lastn = sn;
  }
  if (ps->tok)
    py_emit(ps, EXCL_TOK_STRING, s, sn);
  else
    excl_scan_value(ps->c, s, sn, py_ctx(ps->st, ps->depth, ps->table, ps->tablen), 0);
  ps->p = e < end ? e + (triple ? 3 : (*e == quote ? 1 : 0)) : end;
  ps->prev_name = 0;
  ps->prev_closer = 1;
  return 1;
}

/* A name (TOML: a bare key, which may hold '-' and digits). 1 when p was at one. */
static int py_name(py_scan *ps) {
  int toml = ps->lang == EXCL_TOML;
  char ch = *ps->p;
  if (!(isalpha((unsigned char)ch) || ch == '_' ||
        (toml && (ch == '-' || isdigit((unsigned char)ch)))))
    return 0;
  const char *s = ps->p;
  while (ps->p < ps->end &&
         (isalnum((unsigned char)*ps->p) || *ps->p == '_' || (toml && *ps->p == '-')))
    ps->p++;
  ps->st[ps->depth].last = s;
  ps->st[ps->depth].lastn = (size_t)(ps->p - s);
  py_emit(ps, EXCL_TOK_NAME, s, (size_t)(ps->p - s));
  ps->prev_name = 1;
  ps->pname = s;
  ps->pnamen = (size_t)(ps->p - s);
  ps->prev_closer = 1;
  return 1;
}

/* An opening bracket: a new level; after a name, '(' is a call whose name keys the values. */
static void py_open(py_scan *ps, char ch) {
  py_emit(ps, EXCL_TOK_OPEN, ps->p, 1);
  if (ps->depth + 1 < sizeof ps->st / sizeof ps->st[0]) {
    py_level *l = &ps->st[++ps->depth];
    memset(l, 0, sizeof *l);
    l->opener = ch;
    if (ch == '(' && ps->prev_name) {
      l->kk = KEY_CALL;
      l->key = l->call = ps->pname;
      l->keyn = l->calln = ps->pnamen;
    }
    l->subscript = ch == '[' && ps->prev_closer;
  }
  ps->prev_name = ps->prev_closer = 0;
  ps->p++;
}

/* A closing bracket: back to the enclosing level (a subscript keeps the name it subscripted). */
static void py_close(py_scan *ps) {
  py_emit(ps, EXCL_TOK_CLOSE, ps->p, 1);
  if (ps->depth > 0) {
    py_level *inner = &ps->st[ps->depth];
    ps->depth--;
    if (inner->subscript && inner->last) {
      ps->st[ps->depth].last = inner->last;
      ps->st[ps->depth].lastn = inner->lastn;
    } else {
      ps->st[ps->depth].last = NULL;
    }
  }
  ps->prev_name = 0;
  ps->prev_closer = 1;
  ps->p++;
}

/* A ',': a keyword argument or dict entry ends here; in a call, back to the call itself. */
static void py_comma(py_scan *ps) {
  py_emit(ps, EXCL_TOK_COMMA, ps->p, 1);
  py_level *l = &ps->st[ps->depth];
  l->kk = l->call ? KEY_CALL : KEY_NONE;
  l->key = l->call;
  l->keyn = l->calln;
  l->last = NULL;
  ps->prev_name = ps->prev_closer = 0;
  ps->p++;
}

/* Any other character: '=' (not '==', '<=', '>=', '!='), '+=', '|=' and ':' (dict keys, Meson
 * keyword arguments) make the last name the key of the values that follow. */
static void py_operator(py_scan *ps) {
  const char *p = ps->p, *end = ps->end;
  char ch = *p;
  int assign = 0;
  if (ch == '=' && !(p + 1 < end && p[1] == '=')) assign = 1;
  if ((ch == '+' || ch == '|') && p + 1 < end && p[1] == '=') {
    assign = 1;
    p++;
  }
  if (ch == ':' && ps->lang != EXCL_TOML && !(p + 1 < end && p[1] == '=')) assign = 1;
  if ((ch == '=' || ch == '!' || ch == '<' || ch == '>') && p + 1 < end && p[1] == '=') {
    py_emit(ps, EXCL_TOK_OP, p, 2);
    ps->p = p + 2;
    ps->prev_name = ps->prev_closer = 0;
    return;
  }
  py_emit(ps, EXCL_TOK_OP, ps->p, (size_t)(p + 1 - ps->p));
  py_level *l = &ps->st[ps->depth];
  if (assign && l->last) {
    l->kk = KEY_ASSIGN;
    l->key = l->last;
    l->keyn = l->lastn;
  }
  ps->prev_name = ps->prev_closer = 0;
  ps->p = p + 1;
}

/* The scan of one file: values to excl_scan_value, or tokens to `tok` when it is not NULL. */
static void py_run(excl_ctx *c, excl_pylang lang, excl_tok_callback tok, void *ud) {
  py_scan ps;
  memset(&ps, 0, sizeof ps);
  ps.c = c;
  ps.lang = lang;
  ps.p = c->text;
  ps.end = c->text + c->len;
  ps.line_start = 1;
  ps.tok = tok;
  ps.ud = ud;
  while (ps.p < ps.end) {
    if (py_blank(&ps) || toml_table(&ps)) continue;
    ps.line_start = 0;
    if (py_string(&ps) || py_name(&ps)) continue;
    char ch = *ps.p;
    if (ch == '(' || ch == '[' || ch == '{')
      py_open(&ps, ch);
    else if (ch == ')' || ch == ']' || ch == '}')
      py_close(&ps);
    else if (ch == ',')
      py_comma(&ps);
    else
      py_operator(&ps);
  }
}

void excl_check_pylike(excl_ctx *c, excl_pylang lang) { py_run(c, lang, NULL, NULL); }

void excl_lex_starlark(const char *text, size_t len, excl_tok_callback cb, void *ud) {
  excl_ctx c = {NULL, text, len, NULL};
  if (cb) py_run(&c, EXCL_PYTHON, cb, ud);
}
