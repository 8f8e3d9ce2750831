/* sig.c: signature specs (core.h says what one holds): reading a spec's text, the docstrings and
 * text signatures made from it, and _tether._signatures.
 *
 * Invariant: a spec is parsed at most once, by tpy_sig_ready, before anything reads it: until
 * then its info is NULL and its npos -1 (the parser's fast path declines it); from then on its
 * fields never change (the parser's keyword cache aside) and its info, like the static spec, lives
 * for the process, with every docstring made from it: a table may point at those for good.
 */
#include "core.h"

#include <ctype.h>
#include <string.h>

/* The kinds of callable a docstring is made for: the text signature of a method and a class
 * method begins with the bound argument ($self, $type), as Argument Clinic writes them. */
enum { KIND_FUNCTION, KIND_METHOD, KIND_CLASSMETHOD };

/* ---- reading a spec -------------------------------------------------------------------------- */

static int bad_spec(const tpy_sig *s, const char *why) {
  PyErr_Format(PyExc_SystemError, "tether: bad signature spec \"%s\": %s",
               s->text ? s->text : "(no text)", why);
  return 0;
}

static char *dup_range(const char *b, const char *e) {
  char *r = PyMem_Malloc((size_t)(e - b) + 1);
  if (!r) return (char *)PyErr_NoMemory();
  memcpy(r, b, (size_t)(e - b));
  r[e - b] = '\0';
  return r;
}

static void trim(const char **b, const char **e) {
  while (*b < *e && isspace((unsigned char)**b)) (*b)++;
  while (*e > *b && isspace((unsigned char)(*e)[-1])) (*e)--;
}

/* Whether b..e is a Python name (an identifier that is not a keyword). */
static int is_ident(const char *b, const char *e) {
  static const char *const keywords[] = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  if (b == e || !(isalpha((unsigned char)*b) || *b == '_')) return 0;
  for (const char *p = b; p < e; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
  if (e - b < 2 || e - b > 8) return 1; /* the keywords' lengths */
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (keywords[i][0] == *b && !strncmp(keywords[i], b, (size_t)(e - b)) && !keywords[i][e - b])
      return 0;
  return 1;
}

/* The first of the (at most two) characters of stops at p or after it outside brackets and
 * quotes; e when there is none; NULL when the brackets or quotes do not close before e. */
static const char *scan(const char *p, const char *e, const char *stops) {
  char s0 = stops[0], s1 = s0 ? stops[1] : 0;
  int depth = 0;
  for (; p < e; p++) {
    char c = *p;
    if (c == '\'' || c == '"') {
      const char *q = p + 1;
      while (q < e && *q != c) q += *q == '\\' && q + 1 < e ? 2 : 1;
      if (q >= e) return NULL;
      p = q;
    } else if (depth == 0 && c && (c == s0 || c == s1)) {
      return p;
    } else if (c == '(' || c == '[' || c == '{') {
      depth++;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) return NULL;
    }
  }
  return depth ? NULL : e;
}

/* Whether a default is a literal inspect.signature accepts in a text signature (None, True,
 * False, a number, a str, (), ...); any other default is written `...` there. */
static int is_literal(const char *b, const char *e) {
  size_t n = (size_t)(e - b);
  static const char *const words[] = {"None", "True", "False", "()", "..."};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (n == strlen(words[i]) && !memcmp(b, words[i], n)) return 1;
  if (*b == '\'' || *b == '"') { /* one str, quotes closed at the end */
    const char *p = b + 1;
    while (p < e && *p != *b) p += *p == '\\' && p + 1 < e ? 2 : 1;
    return p == e - 1;
  }
  const char *p = *b == '-' ? b + 1 : b, *digits = p; /* -12, 3.5, 1e-3, 0x1f */
  if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    for (p += 2; p < e && isxdigit((unsigned char)*p); p++) continue;
    return p == e;
  }
  while (p < e && (isdigit((unsigned char)*p) || *p == '_')) p++;
  if (p == digits || !isdigit((unsigned char)*digits)) return 0;
  if (p < e && *p == '.')
    for (p++; p < e && isdigit((unsigned char)*p); p++) continue;
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    if (p == e || !isdigit((unsigned char)*p)) return 0;
    while (p < e && isdigit((unsigned char)*p)) p++;
  }
  return p == e;
}

/* Whether b..e holds the word lambda, whose parameters the splitting at commas would cut. */
static int has_lambda(const char *b, const char *e) {
  for (const char *p = b; p + 6 <= e; p++)
    if (!memcmp(p, "lambda", 6) && (p == b || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
        (p + 6 == e || !(isalnum((unsigned char)p[6]) || p[6] == '_')))
      return 1;
  return 0;
}

/* A growing text. */
typedef struct {
  char *p;
  size_t len, cap;
} text_buf;

static int put(text_buf *t, const char *b, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->len + n + 1) * 2;
    char *p = PyMem_Realloc(t->p, cap);
    if (!p) {
      PyErr_NoMemory();
      return 0;
    }
    t->p = p;
    t->cap = cap;
  }
  memcpy(t->p + t->len, b, n);
  t->len += n;
  t->p[t->len] = '\0';
  return 1;
}

static int puts_(text_buf *t, const char *s) { return put(t, s, strlen(s)); }

/* Whether the annotation after a parameter's name (colon..e, colon at e: none) is empty or holds
 * a lambda: 0 with SystemError then. */
static int annotation_ok(tpy_sig *s, const char *colon, const char *e) {
  if (colon >= e) return 1;
  const char *ab = colon + 1, *ae = e;
  trim(&ab, &ae);
  if (ab == ae) return bad_spec(s, "an empty annotation");
  if (has_lambda(ab, ae)) return bad_spec(s, "a lambda in an annotation");
  return 1;
}

/* One parameter of the list (b..e, trimmed, not a marker) into s and info; plain gets its
 * annotation-free form. *defaults: whether one before it has a default. */
static int read_param(tpy_sig *s, struct tpy_sig_info *info, const char *b, const char *e,
                      int *defaults, text_buf *plain) {
  const char *stop = scan(b, e, ":=");
  const char *name_end = stop;
  trim(&b, &name_end);
  if (!is_ident(b, name_end)) return bad_spec(s, "a parameter without a name");
  const char *eq = stop < e && *stop == ':' ? scan(stop + 1, e, "=") : stop;
  if (stop < e && *stop == ':' && !annotation_ok(s, stop, eq)) return 0;
  const char *db = NULL, *de = NULL;
  if (eq < e) {
    db = eq + 1;
    de = e;
    trim(&db, &de);
    if (db == de) return bad_spec(s, "an empty default");
    if (has_lambda(db, de)) return bad_spec(s, "a lambda in a default");
  }
  if (s->n == TPY_SIG_MAX) return bad_spec(s, "more than 16 parameters");
  for (int i = 0; i < s->n; i++)
    if (strlen(info->names[i]) == (size_t)(name_end - b) &&
        !memcmp(info->names[i], b, (size_t)(name_end - b)))
      return bad_spec(s, "a parameter named twice");
  if (!db && *defaults) return bad_spec(s, "a required parameter after one with a default");
  if (db) *defaults = 1;
  if (!(info->names[s->n] = dup_range(b, name_end))) return 0;
  s->n++;
  if (!db) s->nreq = s->n;
  if (!put(plain, b, (size_t)(name_end - b))) return 0;
  if (db && !(puts_(plain, "=") &&
              (is_literal(db, de) ? put(plain, db, (size_t)(de - db)) : puts_(plain, "..."))))
    return 0;
  return 1;
}

/* The parameter list between open and close: the counts of s, the names and plain of info. */
static int read_params(tpy_sig *s, struct tpy_sig_info *info, const char *open, const char *close,
                       text_buf *plain) {
  int defaults = 0, slash = 0, kwonly = 0, bare = 0, npos = -1;
  const char *q = open + 1, *b = q, *e = close;
  trim(&b, &e);
  if (b == e) q = close + 1; /* no parameters */
  while (q <= close) {
    const char *end = scan(q, close, ",");
    b = q;
    e = end;
    trim(&b, &e);
    if (b == e) return bad_spec(s, "an empty parameter");
    if (s->star & 2) return bad_spec(s, "a parameter after **kwargs");
    if (plain->len && !puts_(plain, ", ")) return 0;
    if (e - b == 1 && *b == '/') {
      if (slash || kwonly || !s->n) return bad_spec(s, "a misplaced /");
      slash = 1;
      s->nposonly = s->n;
      if (!puts_(plain, "/")) return 0;
    } else if (b[0] == '*' && b[1] == '*') { /* **kwargs: documented, not parsed (ready_for) */
      const char *nb = b + 2, *colon = scan(nb, e, ":"), *ne = colon;
      trim(&nb, &ne);
      if (!is_ident(nb, ne)) return bad_spec(s, "**kwargs without a name");
      if (!annotation_ok(s, colon, e)) return 0;
      if (!kwonly) npos = s->n;
      kwonly = 1;
      s->star |= 2;
      if (!puts_(plain, "**") || !put(plain, nb, (size_t)(ne - nb))) return 0;
    } else if (*b == '*') {
      if (kwonly) return bad_spec(s, "a second *");
      kwonly = 1;
      npos = s->n;
      if (e - b == 1) {
        bare = 1;
        if (!puts_(plain, "*")) return 0;
      } else { /* *args: the function reads them itself (tpy_fastargs_star) */
        const char *nb = b + 1, *colon = scan(nb, e, ":"), *ne = colon;
        trim(&nb, &ne);
        if (!is_ident(nb, ne)) return bad_spec(s, "*args without a name");
        if (!annotation_ok(s, colon, e)) return 0;
        if (s->n) return bad_spec(s, "parameters before *args, which the parser does not take");
        s->star = 1;
        if (!puts_(plain, "*") || !put(plain, nb, (size_t)(ne - nb))) return 0;
      }
    } else if (!read_param(s, info, b, e, &defaults, plain)) {
      return 0;
    }
    q = end + 1;
  }
  if (bare && npos == s->n) return bad_spec(s, "a * without parameters after it");
  s->npos = (signed char)(kwonly ? npos : s->n);
  return 1;
}

static int read_spec(tpy_sig *s, struct tpy_sig_info *info) {
  const char *t = s->text, *end = t ? t + strlen(t) : NULL;
  if (!t) return bad_spec(s, "no text");
  if (s->prop) {
    const char *b = t, *e = end;
    trim(&b, &e);
    if (b == e || !scan(b, e, "")) return bad_spec(s, "a getter's spec is its type");
    s->npos = 0;
    return 1;
  }
  const char *open = t;
  while (open < end && (isalnum((unsigned char)*open) || *open == '_')) open++;
  if (!is_ident(t, open) || *open != '(') return bad_spec(s, "expected name(parameters)");
  const char *close = scan(open + 1, end, ")");
  if (!close || close == end) return bad_spec(s, "unbalanced brackets or quotes");
  const char *r = close + 1, *re = end;
  trim(&r, &re);
  if (r < re) {
    if (re - r < 2 || strncmp(r, "->", 2)) return bad_spec(s, "expected `-> type` or nothing");
    r += 2;
    trim(&r, &re);
    if (r == re || !scan(r, re, "")) return bad_spec(s, "expected `-> type` or nothing");
  }
  if (!(info->name = dup_range(t, open))) return 0;
  text_buf plain = {0};
  if (!puts_(&plain, "")) return 0;
  int ok = read_params(s, info, open, close, &plain);
  info->plain = plain.p;
  if (!ok) return 0;
  for (int i = 0; i < s->n; i++)
    if (!(info->objs[i] = PyUnicode_InternFromString(info->names[i]))) return 0;
  return 1;
}

static void free_info(struct tpy_sig_info *info) {
  PyMem_Free(info->name);
  PyMem_Free(info->plain);
  for (int k = 0; k < 3; k++) PyMem_Free(info->docs[k]);
  for (int i = 0; i < TPY_SIG_MAX; i++) {
    PyMem_Free(info->names[i]);
    Py_XDECREF(info->objs[i]);
  }
  PyMem_Free(info);
}

int tpy_sig_ready(tpy_sig *s) {
  for (; s; s = s->next) {
    if (s->info) continue;
    if (strcmp(s->magic, TPY_SIG_MAGIC)) return bad_spec(s, "not made by TPY_SIG");
    struct tpy_sig_info *info = PyMem_Calloc(1, sizeof *info);
    if (!info) return PyErr_NoMemory(), 0;
    s->n = s->nreq = s->nposonly = s->star = 0;
    if (!read_spec(s, info)) {
      free_info(info);
      s->n = s->nreq = s->nposonly = s->star = 0;
      s->npos = -1;
      return 0;
    }
    s->info = info; /* kept for the process, as the spec */
  }
  return 1;
}

tpy_sig *tpy_sig_of(const char *doc) {
  if (!doc || strcmp(doc, TPY_SIG_MAGIC)) return NULL;
  return (tpy_sig *)(uintptr_t)doc; /* the magic is a spec's first member */
}

/* ---- docstrings ------------------------------------------------------------------------------ */

/* Whether s's forms take different parameters (else the other forms only type them otherwise,
 * get_asm(binary: Literal[True], ...) -> bytes: the first one's text signature serves them all). */
static int several_forms(const tpy_sig *s) {
  for (const tpy_sig *f = s->next; f; f = f->next) {
    if (f->n != s->n || f->npos != s->npos || f->nposonly != s->nposonly || f->star != s->star)
      return 1;
    for (int i = 0; i < s->n; i++)
      if (strcmp(f->info->names[i], s->info->names[i])) return 1;
  }
  return 0;
}

/* The docstring of the callable name with s's forms: "name(<bound>, /, a, b=None)\n--\n\n<body>",
 * the text signature CPython reads; with several forms, each on a line, then a blank line and the
 * body (no text signature: inspect has no overloads). */
static char *make_doc(const tpy_sig *s, const char *name, int kind, const char *body) {
  text_buf t = {0};
  int ok = puts_(&t, "");
  if (several_forms(s)) {
    for (const tpy_sig *f = s; ok && f; f = f->next)
      ok = puts_(&t, name) && puts_(&t, "(") && puts_(&t, f->info->plain) &&
           puts_(&t, f->next ? ")\n" : ")");
    if (ok && body) ok = puts_(&t, "\n\n") && puts_(&t, body);
  } else {
    const char *bound = kind == KIND_METHOD ? "$self" : kind == KIND_CLASSMETHOD ? "$type" : NULL;
    const char *plain = s->info->plain;
    ok = ok && puts_(&t, name) && puts_(&t, "(");
    if (ok && bound)
      ok = puts_(&t, bound) && puts_(&t, !*plain ? ", /" : s->nposonly ? ", " : ", /, ");
    ok = ok && puts_(&t, plain) && puts_(&t, ")\n--\n\n") && (!body || puts_(&t, body));
  }
  if (!ok) {
    PyMem_Free(t.p);
    return NULL;
  }
  return t.p;
}

/* The typed text _signatures records: each form one a line, named name. */
static PyObject *typed_text(const tpy_sig *s, const char *name) {
  text_buf t = {0};
  int ok = puts_(&t, "");
  for (const tpy_sig *f = s; ok && f; f = f->next)
    ok = puts_(&t, name) && puts_(&t, f->text + strlen(f->info->name)) &&
         (!f->next || puts_(&t, "\n"));
  PyObject *r = ok ? PyUnicode_FromString(t.p) : NULL;
  PyMem_Free(t.p);
  return r;
}

static int record(PyObject *key, PyObject *text) {
  if (!tpy.signatures && !(tpy.signatures = PyDict_New())) return 0;
  int bad = !key || !text || PyDict_SetItem(tpy.signatures, key, text) < 0;
  Py_XDECREF(key);
  Py_XDECREF(text);
  return !bad;
}

/* The classes whose constructor has a spec, for the walk that publishes it (a class's docstring
 * keeps no pointer to the spec). */
typedef struct {
  PyTypeObject *type; /* the module keeps it for the process */
  tpy_sig *s;
} ctor;
static ctor *ctors;
static Py_ssize_t n_ctors, cap_ctors;

int tpy_sig_add_ctor(PyTypeObject *type, tpy_sig *s) {
  if (n_ctors == cap_ctors) {
    Py_ssize_t cap = cap_ctors ? 2 * cap_ctors : 64;
    ctor *v = PyMem_Realloc(ctors, (size_t)cap * sizeof *v);
    if (!v) return PyErr_NoMemory(), -1;
    ctors = v;
    cap_ctors = cap;
  }
  ctors[n_ctors++] = (ctor){type, s};
  return 0;
}

static tpy_sig *ctor_of(PyTypeObject *type) {
  for (Py_ssize_t i = 0; i < n_ctors; i++)
    if (ctors[i].type == type) return ctors[i].s;
  return NULL;
}

char *tpy_sig_class_doc(tpy_sig *s, const char *qualname, const char *body) {
  if (!tpy_sig_ready(s)) return NULL;
  if (s->prop) return bad_spec(s, "a getter's spec as a constructor's"), NULL;
  const char *dot = strrchr(qualname, '.'), *name = dot ? dot + 1 : qualname;
  return make_doc(s, name, KIND_FUNCTION, body ? body : s->doc);
}

PyObject *tpy_type_from_spec(PyObject *m, PyType_Spec *spec, PyObject *base) {
  PyType_Slot *doc = spec->slots;
  while (doc->slot && doc->slot != Py_tp_doc) doc++;
  tpy_sig *s = doc->slot ? tpy_sig_of(doc->pfunc) : NULL;
  char *made = NULL;
  if (s) {
    const char *dot = strrchr(spec->name, '.'), *name = dot ? dot + 1 : spec->name;
    if (!tpy_sig_ready(s)) return NULL;
    for (tpy_sig *f = s; f; f = f->next)
      if (f->prop || strcmp(f->info->name, name)) {
        PyErr_Format(PyExc_SystemError, "tether: signature spec \"%s\" is the constructor of %s",
                     f->text, spec->name);
        return NULL;
      }
    if (!(made = tpy_sig_class_doc(s, spec->name, NULL))) return NULL;
    doc->pfunc = made; /* PyType_FromSpec copies the class's docstring */
  }
  PyObject *t = PyType_FromModuleAndSpec(m, spec, base);
  if (s) {
    doc->pfunc = s;
    PyMem_Free(made);
    if (t && tpy_sig_add_ctor((PyTypeObject *)t, s) < 0) Py_CLEAR(t);
  }
  return t;
}

/* ---- publishing ------------------------------------------------------------------------------ */

/* A table entry whose doc gets the docstring made from its spec. */
typedef struct {
  PyMethodDef *def; /* or NULL for a getter */
  PyGetSetDef *getset;
  tpy_sig *s;
  int kind;
} patch;

typedef struct {
  patch *v;
  Py_ssize_t n, cap;
  PyObject *seen; /* the classes visited (set) */
} walk;

static int add_patch(walk *w, patch p) {
  if (w->n == w->cap) {
    Py_ssize_t cap = w->cap ? 2 * w->cap : 256;
    patch *v = PyMem_Realloc(w->v, (size_t)cap * sizeof *v);
    if (!v) return PyErr_NoMemory(), -1;
    w->v = v;
    w->cap = cap;
  }
  w->v[w->n++] = p;
  return 0;
}

static int wrong_member(const tpy_sig *s, PyObject *owner, const char *name) {
  PyErr_Format(PyExc_SystemError, "tether: signature spec \"%s\" is the doc of %U.%s", s->text,
               owner, name);
  return -1;
}

/* Whether a spec named name documents the entry ml_name: the same name; the private name a module
 * re-exports under the spec's (_ods_common.get_default_loc_context); an __init__ method whose
 * spec is its class's constructor (OpView(operation)). */
static int names_entry(const char *name, const char *ml_name) {
  return !strcmp(name, ml_name) || (ml_name[0] == '_' && !strcmp(name, ml_name + 1)) ||
         !strcmp(ml_name, "__init__");
}

static int visit_def(walk *w, PyObject *owner, PyMethodDef *d, int kind) {
  tpy_sig *s = tpy_sig_of(d->ml_doc);
  if (!s) return 0;
  if (!tpy_sig_ready(s)) return -1;
  for (tpy_sig *f = s; f; f = f->next)
    if (f->prop || !names_entry(f->info->name, d->ml_name))
      return wrong_member(f, owner, d->ml_name);
  if (!record(PyUnicode_FromFormat("%U.%s", owner, d->ml_name), typed_text(s, d->ml_name)))
    return -1;
  return add_patch(w, (patch){d, NULL, s, kind});
}

static int visit_getset(walk *w, PyObject *owner, PyGetSetDef *g) {
  tpy_sig *s = tpy_sig_of(g->doc);
  if (!s) return 0;
  if (!tpy_sig_ready(s)) return -1;
  if (!s->prop || s->next) return wrong_member(s, owner, g->name);
  PyObject *text = PyUnicode_FromFormat("%s%s%s", g->name, g->set ? ": " : " -> ", s->text);
  if (!record(PyUnicode_FromFormat("%U.%s", owner, g->name), text)) return -1;
  return add_patch(w, (patch){NULL, g, s, 0});
}

/* One value of a class's dict. */
static int visit_member(walk *w, PyObject *owner, PyObject *v) {
  if (Py_IS_TYPE(v, &PyMethodDescr_Type))
    return visit_def(w, owner, ((PyMethodDescrObject *)v)->d_method, KIND_METHOD);
  if (Py_IS_TYPE(v, &PyClassMethodDescr_Type))
    return visit_def(w, owner, ((PyMethodDescrObject *)v)->d_method, KIND_CLASSMETHOD);
  if (Py_IS_TYPE(v, &PyGetSetDescr_Type))
    return visit_getset(w, owner, ((PyGetSetDescrObject *)v)->d_getset);
  if (Py_IS_TYPE(v, &PyStaticMethod_Type)) {
    PyObject *f = PyObject_GetAttrString(v, "__func__");
    if (!f) return -1;
    int r = PyCFunction_Check(f)
                ? visit_def(w, owner, ((PyCFunctionObject *)f)->m_ml, KIND_FUNCTION)
                : 0;
    Py_DECREF(f);
    return r;
  }
  return 0;
}

/* A class found as prefix (the module holding it and its qualified name: "_transform.OperationType"
 * is not "_pdl.OperationType", though both say they are tether.ir.OperationType). */
static int visit_class(walk *w, PyTypeObject *t, PyObject *prefix) {
  int seen = PySet_Contains(w->seen, (PyObject *)t);
  if (seen) return seen < 0 ? -1 : 0;
  if (PySet_Add(w->seen, (PyObject *)t) < 0) return -1;
  tpy_sig *init = ctor_of(t);
  if (init &&
      !record(PyUnicode_FromFormat("%U.__init__", prefix), typed_text(init, _PyType_Name(t))))
    return -1;
  PyObject *dict = PyObject_GetAttrString((PyObject *)t, "__dict__");
  PyObject *items = dict ? PyMapping_Items(dict) : NULL;
  int r = items ? 0 : -1;
  for (Py_ssize_t i = 0; !r && i < PyList_GET_SIZE(items); i++) {
    PyObject *kv = PyList_GET_ITEM(items, i), *k = PyTuple_GET_ITEM(kv, 0),
             *v = PyTuple_GET_ITEM(kv, 1);
    if (PyType_Check(v)) { /* a class defined in this one (not one it merely refers to) */
      PyObject *q = PyObject_GetAttrString(v, "__qualname__");
      PyObject *outer = q ? PyObject_GetAttrString((PyObject *)t, "__qualname__") : NULL;
      PyObject *want = outer ? PyUnicode_FromFormat("%U.%U", outer, k) : NULL;
      PyObject *inner = want ? PyUnicode_FromFormat("%U.%U", prefix, k) : NULL;
      int nested = inner ? PyUnicode_Compare(q, want) == 0 : -1;
      r = nested < 0 ? -1 : nested ? visit_class(w, (PyTypeObject *)v, inner) : 0;
      Py_XDECREF(inner);
      Py_XDECREF(want);
      Py_XDECREF(outer);
      Py_XDECREF(q);
    } else {
      r = visit_member(w, prefix, v);
    }
  }
  Py_XDECREF(items);
  Py_XDECREF(dict);
  return r;
}

/* A module's functions and classes (named after it); the top module's submodules too. */
static int visit_module(walk *w, PyObject *mod, int top) {
  PyObject *name = PyModule_GetNameObject(mod);
  PyObject *items = name ? PyDict_Items(PyModule_GetDict(mod)) : NULL;
  int r = items ? 0 : -1;
  for (Py_ssize_t i = 0; !r && i < PyList_GET_SIZE(items); i++) {
    PyObject *k = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0),
             *v = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1);
    if (PyModule_Check(v)) {
      r = top ? visit_module(w, v, 0) : 0;
    } else if (PyType_Check(v)) {
      PyObject *prefix = PyUnicode_FromFormat("%U.%U", name, k);
      r = prefix ? visit_class(w, (PyTypeObject *)v, prefix) : -1;
      Py_XDECREF(prefix);
    } else if (PyCFunction_Check(v)) {
      r = visit_def(w, name, ((PyCFunctionObject *)v)->m_ml, KIND_FUNCTION);
    }
  }
  Py_XDECREF(items);
  Py_XDECREF(name);
  return r;
}

/* The docstring of a table entry: made once per spec and kind, kept in its info. */
static const char *doc_for(tpy_sig *s, const char *name, int kind) {
  if (!s->info->docs[kind]) s->info->docs[kind] = make_doc(s, name, kind, s->doc);
  return s->info->docs[kind];
}

int tpy_sig_publish(PyObject *m) {
  walk w = {NULL, 0, 0, PySet_New(NULL)};
  int r =
      w.seen && (tpy.signatures || (tpy.signatures = PyDict_New())) ? visit_module(&w, m, 1) : -1;
  /* Every entry is read first, then each gets its docstring: a table several classes share is
   * found through each of them. */
  for (Py_ssize_t i = 0; !r && i < w.n; i++) {
    patch *p = &w.v[i];
    if (p->getset) {
      p->getset->doc = p->s->doc;
    } else {
      const char *doc = doc_for(p->s, p->def->ml_name, p->kind);
      if (!doc) r = -1;
      p->def->ml_doc = doc;
    }
  }
  PyMem_Free(w.v);
  Py_XDECREF(w.seen);
  if (!r) r = PyModule_AddObjectRef(m, "_signatures", tpy.signatures);
  return r;
}

/* ---- _tether._parse_signature ---------------------------------------------------------------- */

/* What the parser and the docstrings read of a spec's text, for tests (and fuzzing): a spec made
 * for the call, parsed, described, freed. */
static PyObject *describe(tpy_sig *s) {
  PyObject *names = PyList_New(s->n);
  for (int i = 0; names && i < s->n; i++) PyList_SET_ITEM(names, i, Py_NewRef(s->info->objs[i]));
  char *doc = names && !s->prop ? make_doc(s, s->info->name, KIND_FUNCTION, NULL) : NULL;
  PyObject *r = names && (s->prop || doc)
                    ? Py_BuildValue("{s:z,s:N,s:i,s:i,s:i,s:i,s:z}", "name", s->info->name, "names",
                                    names, "required", s->nreq, "positional", s->npos,
                                    "positional_only", s->nposonly, "star", s->star, "doc", doc)
                    : NULL;
  if (!r) Py_XDECREF(names);
  PyMem_Free(doc);
  return r;
}

static tpy_sig fn_parse_signature_sig =
    TPY_SIG("_parse_signature(text: str, getter: bool = False, /) -> dict[str, Any]",
            "What the parser reads of a signature spec's text (SystemError for a bad one).");

static PyObject *fn_parse_signature(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  PyObject *a[2];
  MlirStringRef text;
  int getter = 0;
  if (!tpy_fastargs(&fn_parse_signature_sig, args, nargs, NULL, a, 2) ||
      !tpy_arg_str(a[0], "text", &text) || (a[1] && !tpy_arg_bool(a[1], &getter)))
    return NULL;
  if (memchr(text.data, '\0', text.length))
    return PyErr_Format(PyExc_ValueError, "text: an embedded NUL");
  char *copy = dup_range(text.data, text.data + text.length);
  tpy_sig *s = copy ? PyMem_Calloc(1, sizeof *s) : NULL;
  if (!s) {
    PyMem_Free(copy);
    return copy ? PyErr_NoMemory() : NULL;
  }
  *s = (tpy_sig)TPY_SIG(copy, NULL);
  s->prop = (signed char)getter;
  PyObject *r = tpy_sig_ready(s) ? describe(s) : NULL;
  if (s->info) free_info(s->info);
  PyMem_Free(s);
  PyMem_Free(copy);
  return r;
}

static PyMethodDef sig_functions[] = {
    {"_parse_signature", TPY_FASTFN(fn_parse_signature), METH_FASTCALL,
     TPY_DOC(fn_parse_signature_sig)},
    TPY_METHODS_END,
};

int tpy_init_sig(PyObject *m) { return PyModule_AddFunctions(m, sig_functions); }
