/* args.c: the one argument parser of the extension, and the converters of plain arguments.
 *
 * Every function that takes arguments parses them here, by its signature spec (sig.c):
 * tpy_fastargs for METH_FASTCALL | METH_KEYWORDS methods (also without METH_KEYWORDS: positional
 * only), tpy_args for tp_new and tp_init. Both accept what the spec's text says: its parameters in
 * order, the first nreq required, at most npos by position, every one after the first nposonly
 * by keyword; they raise TypeError for anything else. Values are converted after parsing, each by
 * its converter: integers range-checked (OverflowError) before they size or index anything, strs
 * as MlirStringRef views valid while the argument lives.
 *
 * Invariant: a spec keeps the last keyword-name tuple it was called with (a strong reference, so
 * its address is not reused) and where each of its names goes: a call site passes the same tuple
 * every time (its code object's constant), so a repeated call maps its keywords without comparing
 * a name.
 */
#include "core.h"

#include <limits.h>
#include <string.h>

/* ---- the parser ------------------------------------------------------------------------------ */

/* Where keyword name key goes among s's parameters, or -1. */
static int find_name(const tpy_sig *s, PyObject *key) {
  /* Keyword names in a call are interned strs: pointer equality finds them. */
  for (int i = 0; i < s->n; i++)
    if (s->info->objs[i] == key) return i;
  for (int i = 0; i < s->n; i++)
    if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, s->info->names[i]) == 0)
      return i;
  return -1;
}

/* The errors every entry reports the same way (TypeError). */
static int too_many_positional(const tpy_sig *s, Py_ssize_t nargs) {
  PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
               s->info->name, s->npos, nargs);
  return 0;
}

/* A spec that is parsed, for a call site that reads nout parameters; 0 with SystemError. */
static int ready_for(tpy_sig *s, int nout) {
  if (!tpy_sig_ready(s)) return 0;
  if (s->star & 2) {
    PyErr_Format(PyExc_SystemError, "tether: \"%s\" takes **kwargs, which the parser does not",
                 s->text);
    return 0;
  }
  if (nout != s->n) {
    PyErr_Format(PyExc_SystemError, "tether: the call site of \"%s\" reads %d parameters", s->text,
                 nout);
    return 0;
  }
  return 1;
}

/* Puts keyword argument key=value in out[] (s's order); 0 with TypeError for a name that is not a
 * parameter (or a positional-only one) or an argument given twice. *where receives the
 * position. */
static int put_keyword(const tpy_sig *s, PyObject *key, PyObject *value, PyObject **out,
                       int *where) {
  int found = find_name(s, key);
  if (found >= 0 && found < s->nposonly) {
    PyErr_Format(PyExc_TypeError,
                 "%s() got some positional-only arguments passed as keyword arguments: '%U'",
                 s->info->name, key);
    return 0;
  }
  if (found < 0) {
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", s->info->name,
                 key);
    return 0;
  }
  if (out[found]) {
    PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", s->info->name,
                 s->info->names[found]);
    return 0;
  }
  out[found] = value;
  *where = found;
  return 1;
}

static inline int check_required(const tpy_sig *s, PyObject **out) {
  for (int i = 0; i < s->nreq; i++)
    if (!out[i]) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", s->info->name,
                   s->info->names[i]);
      return 0;
    }
  return 1;
}

/* gcc would turn the short loops below back into memcpy/memset calls. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static int __attribute__((noinline))
fastargs_named(tpy_sig *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               PyObject **out, int nout) {
  if ((!s->info || nout != s->n || s->star) && !ready_for(s, nout)) return 0;
  int n = s->n;
  if (nargs > s->npos) return too_many_positional(s, nargs);
  /* Loops, not memcpy/memset: a handful of words, where the libc calls cost more. */
  for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
  for (Py_ssize_t i = nargs; i < n; i++) out[i] = NULL;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  int j = 0;
  if (nkw) {
    while (j < TPY_SIG_KW && s->kwnames[j] != kwnames) j++;
    if (j < TPY_SIG_KW) {
      const signed char *map = s->kwmap[j];
      for (Py_ssize_t k = 0; k < nkw; k++) {
        int i = map[k];
        if (out[i]) goto slow; /* also given by position: the slow path says so */
        out[i] = args[nargs + k];
      }
      goto required;
    }
  }
slow:
  for (Py_ssize_t i = nargs; i < n; i++) out[i] = NULL;
  /* A tuple not cached takes the next entry (its map is rewritten below); a cached one that went
   * to the slow path keeps its own. */
  if (nkw && j == TPY_SIG_KW) {
    j = s->kwnext;
    s->kwnext = (unsigned char)((j + 1) % TPY_SIG_KW);
    Py_CLEAR(s->kwnames[j]);
  }
  for (Py_ssize_t k = 0; k < nkw; k++) {
    int found;
    if (!put_keyword(s, PyTuple_GET_ITEM(kwnames, k), args[nargs + k], out, &found)) return 0;
    if (k < TPY_SIG_MAX) s->kwmap[j][k] = (signed char)found;
  }
  /* Every keyword name found, none twice: remember the tuple. */
  if (nkw && nkw <= n && !s->kwnames[j]) s->kwnames[j] = Py_NewRef(kwnames);
required:
  return check_required(s, out);
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
int tpy_fastargs(tpy_sig *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                 PyObject **out, int nout) {
  /* Most calls pass every argument by position: the required ones given, no name looked at. A
   * spec not parsed yet has npos -1. */
  if (!kwnames && nargs >= s->nreq && nargs <= s->npos && nout == s->n) {
    Py_ssize_t i = 0;
    for (; i < nargs; i++) out[i] = args[i];
    for (; i < nout; i++) out[i] = NULL;
    return 1;
  }
  return fastargs_named(s, args, nargs, kwnames, out, nout);
}

int tpy_args(tpy_sig *s, PyObject *args, PyObject *kw, PyObject **out, int nout) {
  if (!ready_for(s, nout)) return 0;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs > s->npos) return too_many_positional(s, nargs);
  for (Py_ssize_t i = 0; i < s->n; i++) out[i] = i < nargs ? PyTuple_GET_ITEM(args, i) : NULL;
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  int found;
  while (kw && PyDict_Next(kw, &pos, &key, &value))
    if (!put_keyword(s, key, value, out, &found)) return 0;
  return check_required(s, out);
}

PyObject *tpy_tuple_of(PyObject *const *items, Py_ssize_t n) {
  PyObject *t = PyTuple_New(n);
  for (Py_ssize_t i = 0; t && i < n; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
  return t;
}

PyObject *tpy_kwarg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *name) {
  for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), name) == 0)
      return args[nargs + k];
  return NULL;
}

int tpy_arg_bool(PyObject *o, int *out) {
  int v = PyObject_IsTrue(o);
  if (v < 0) return 0;
  *out = v;
  return 1;
}

/* ---- integers and strings -------------------------------------------------------------------- */

int tpy_arg_str(PyObject *o, const char *what, MlirStringRef *out) {
  if (PyUnicode_CheckExact(o) && PyUnicode_IS_COMPACT_ASCII(o)) {
    /* ASCII text is its own UTF-8: no conversion, no call. */
    *out = (MlirStringRef){(const char *)PyUnicode_DATA(o), (size_t)PyUnicode_GET_LENGTH(o)};
    return 1;
  }
  if (PyUnicode_Check(o)) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) return 0;
    *out = (MlirStringRef){s, (size_t)n};
    return 1;
  }
  if (PyBytes_Check(o)) {
    *out = (MlirStringRef){PyBytes_AS_STRING(o), (size_t)PyBytes_GET_SIZE(o)};
    return 1;
  }
  tpy_type_error(what, "a str", o);
  return 0;
}

/* An int of at most one digit (|v| < 2**30), read without a call: the common case of widths,
 * indices and small constants. */
static inline int compact_long(PyObject *o, int64_t *out) {
#if PY_VERSION_HEX >= 0x030C0000
  if (!PyUnstable_Long_IsCompact((PyLongObject *)o)) return 0;
  *out = PyUnstable_Long_CompactValue((PyLongObject *)o);
#else
  Py_ssize_t size = Py_SIZE(o);
  if (size < -1 || size > 1) return 0;
  *out = size * (int64_t)((PyLongObject *)o)->ob_digit[0];
#endif
  return 1;
}

int tpy_arg_int64(PyObject *o, const char *what, int64_t *out) {
  if (PyLong_CheckExact(o)) { /* the common case, without the checks below */
    if (compact_long(o, out)) return 1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      PyErr_Format(PyExc_OverflowError, "%s does not fit in 64 bits", what);
      return 0;
    }
    *out = v;
    return 1;
  }
  if (!PyIndex_Check(o) || PyBool_Check(o)) {
    if (!PyBool_Check(o)) return tpy_type_error(what, "an int", o), 0;
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) {
    PyErr_Format(PyExc_OverflowError, "%s does not fit in 64 bits", what);
    return 0;
  }
  if (v == -1 && PyErr_Occurred()) return 0;
  *out = v;
  return 1;
}

int tpy_arg_intptr(PyObject *o, const char *what, intptr_t *out) {
  int64_t v;
  if (!tpy_arg_int64(o, what, &v)) return 0;
  if (v < INTPTR_MIN || v > INTPTR_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s is out of range", what);
    return 0;
  }
  *out = (intptr_t)v;
  return 1;
}

int tpy_arg_int(PyObject *o, const char *what, int *out) {
  int64_t v;
  if (!tpy_arg_int64(o, what, &v)) return 0;
  if (v < INT_MIN || v > INT_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s is out of range", what);
    return 0;
  }
  *out = (int)v;
  return 1;
}

int tpy_arg_uint(PyObject *o, const char *what, unsigned *out) {
  int64_t v;
  if (!tpy_arg_int64(o, what, &v)) return 0;
  if (v < 0 || v > (int64_t)UINT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s must be in [0, 2**32)", what);
    return 0;
  }
  *out = (unsigned)v;
  return 1;
}

/* ---- converters with upstream's errors ------------------------------------------------------ */

/* The dialect classes upstream defines in C++ convert their arguments as pybind11 does: a value
 * of the wrong kind, or out of the C type's range, is a TypeError (not OverflowError). */

int tpy_arg_index(PyObject *o, const char *what, long long *out, int *overflow) {
  if (!PyIndex_Check(o)) return tpy_type_error(what, "an int", o), 0;
  PyObject *i = PyNumber_Index(o);
  if (!i) return 0;
  *overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i, overflow);
  Py_DECREF(i);
  if (v == -1 && PyErr_Occurred()) return 0;
  *out = v;
  return 1;
}

/* An int argument within [lo, hi]. Anything else is a TypeError, as upstream's conversion of
 * an argument to its C type (pybind11) raises. */
int tpy_arg_int_in(PyObject *o, const char *what, long long lo, long long hi, long long *out) {
  long long v;
  int overflow;
  if (!tpy_arg_index(o, what, &v, &overflow)) return 0;
  if (overflow || v < lo || v > hi) {
    PyErr_Format(PyExc_TypeError, "%s must be an int in [%lld, %lld], not %R", what, lo, hi, o);
    return 0;
  }
  *out = v;
  return 1;
}

int tpy_arg_uint_in(PyObject *o, const char *what, unsigned *out) {
  long long v;
  if (!tpy_arg_int_in(o, what, 0, UINT32_MAX, &v)) return 0;
  *out = (unsigned)v;
  return 1;
}

/* "name[i]", for messages about one element of a sequence argument. */
const char *tpy_nth(char *buf, size_t size, const char *name, Py_ssize_t i) {
  snprintf(buf, size, "%s[%zd]", name, i);
  return buf;
}

/* A sequence argument (not a str or bytes) as a list (new reference). */
PyObject *tpy_arg_seq(PyObject *o, const char *what) {
  if (PyUnicode_Check(o) || PyBytes_Check(o) || !PySequence_Check(o))
    return tpy_type_error(what, "a sequence", o);
  return PySequence_List(o);
}
