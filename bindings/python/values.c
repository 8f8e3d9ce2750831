/* values.c: what every context-owned value class shares (Type, Attribute, Location, the affine
 * classes, TypeID): the object layout, comparison and hashing by MLIR pointer, concrete subclasses
 * defined from tables, casting to the class registered for a TypeID, and the argument converters
 * the whole extension uses (ints range-checked, strs, sequences of values of one context).
 *
 * Invariant: a value object holds a strong reference to its Context object, so its MLIRContext
 * outlives it; a value passed in where another value's context is expected is checked to belong to
 * it (ValueError) before anything reaches MLIR.
 */
#include "tether_py.h"

#include <limits.h>
#include <string.h>

/* ---- the value objects ----------------------------------------------------------------------- */

PyObject *tp_ctxobj_new(PyTypeObject *type, PyObject *ctx, const void *ptr) {
  TpCtxObj *self = (TpCtxObj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->ctx = Py_XNewRef(ctx);
  self->ptr = (void *)ptr;
  return (PyObject *)self;
}

void tp_ctxobj_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  Py_CLEAR(((TpCtxObj *)self)->ctx);
  t->tp_free(self);
  Py_DECREF(t);
}

/* The family of a value class: the class at the root of its tp_base chain (Type for IntegerType
 * and for a Python subclass of it, Attribute, Location, AffineExpr, ...). */
static PyTypeObject *family_root(PyTypeObject *t) {
  while (t->tp_base && t->tp_base != &PyBaseObject_Type) t = t->tp_base;
  return t;
}

PyObject *tp_ctxobj_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  /* MLIR uniques these values in their context: the same value is the same pointer. */
  int same_family = Py_TYPE(a) == Py_TYPE(b) || tp_is(b, family_root(Py_TYPE(a)));
  int eq = same_family && TP_PTR(a) == TP_PTR(b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

Py_hash_t tp_ctxobj_hash(PyObject *a) { return _Py_HashPointer(TP_PTR(a)); }

PyObject *tp_ctxobj_context(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(TP_CTX(self));
}

PyObject *tp_ctxobj_capsule(PyObject *self, void *capsule_name) {
  return tp_capsule_with_owner(TP_PTR(self), (const char *)capsule_name, self);
}

/* ---- strings and integers -------------------------------------------------------------------- */

void tp_strbuf_append(MlirStringRef s, void *user) {
  tp_strbuf *b = user;
  if (b->failed) return;
  if (b->len + s.length + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap : 256;
    while (b->len + s.length + 1 > ncap) ncap *= 2;
    char *p = PyMem_RawRealloc(b->data, ncap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->data = p;
    b->cap = ncap;
  }
  if (s.length) memcpy(b->data + b->len, s.data, s.length);
  b->len += s.length;
}

PyObject *tp_strbuf_finish(tp_strbuf *b) {
  PyObject *r = b->failed
                    ? PyErr_NoMemory()
                    : PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t)b->len, "replace");
  PyMem_RawFree(b->data);
  b->data = NULL;
  return r;
}

PyObject *tp_strbuf_finish_bytes(tp_strbuf *b) {
  PyObject *r = b->failed ? PyErr_NoMemory()
                          : PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t)b->len);
  PyMem_RawFree(b->data);
  b->data = NULL;
  return r;
}

PyObject *tp_str_from_ref(MlirStringRef s) {
  return PyUnicode_DecodeUTF8(s.data ? s.data : "", (Py_ssize_t)s.length, "replace");
}

int tp_arg_str(PyObject *o, const char *what, MlirStringRef *out) {
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
  tp_type_error(what, "a str", o);
  return 0;
}

int tp_arg_int64(PyObject *o, const char *what, int64_t *out) {
  if (!PyIndex_Check(o) || PyBool_Check(o)) {
    if (!PyBool_Check(o)) return tp_type_error(what, "an int", o), 0;
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

int tp_arg_intptr(PyObject *o, const char *what, intptr_t *out) {
  int64_t v;
  if (!tp_arg_int64(o, what, &v)) return 0;
  if (v < INTPTR_MIN || v > INTPTR_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s is out of range", what);
    return 0;
  }
  *out = (intptr_t)v;
  return 1;
}

int tp_arg_int(PyObject *o, const char *what, int *out) {
  int64_t v;
  if (!tp_arg_int64(o, what, &v)) return 0;
  if (v < INT_MIN || v > INT_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s is out of range", what);
    return 0;
  }
  *out = (int)v;
  return 1;
}

int tp_arg_uint(PyObject *o, const char *what, unsigned *out) {
  int64_t v;
  if (!tp_arg_int64(o, what, &v)) return 0;
  if (v < 0 || v > (int64_t)UINT32_MAX) {
    PyErr_Format(PyExc_OverflowError, "%s must be in [0, 2**32)", what);
    return 0;
  }
  *out = (unsigned)v;
  return 1;
}

/* Per static names[] array (at most 16 names), cached by its address: the names as interned str
 * objects, and the last keyword-name tuple seen with where each of its names goes. A call site
 * passes the same tuple every time (its code object's constant), so a hit on it maps the keyword
 * arguments without comparing a name. */
enum { NAME_SETS = 256, MAX_NAMES = 16 };
typedef struct {
  const char *const *names;
  int n;
  PyObject *objs[MAX_NAMES];
  PyObject *kwnames;            /* strong reference (so its address cannot be reused), or NULL */
  signed char kwmap[MAX_NAMES]; /* kwnames[k] is names[kwmap[k]] */
} name_set;
static name_set name_sets[NAME_SETS];

/* The name set of names[] past its first probe: found further on, or made. */
static name_set *name_set_probe(const char *const *names, size_t h) {
  for (size_t probe = 0; probe < NAME_SETS; probe++, h = (h + 1) % NAME_SETS) {
    name_set *ns = &name_sets[h];
    if (ns->names == names) return ns;
    if (!ns->names) {
      int n = 0;
      while (names[n]) n++;
      if (n > MAX_NAMES) return NULL;
      for (int i = 0; i < n; i++) {
        PyObject *o = PyUnicode_InternFromString(names[i]);
        if (!o) {
          PyErr_Clear();
          for (int j = 0; j < i; j++) Py_CLEAR(ns->objs[j]);
          return NULL;
        }
        ns->objs[i] = o; /* kept for the process */
      }
      ns->n = n;
      ns->names = names;
      return ns;
    }
  }
  return NULL;
}

/* Inline in both entries: a call site's set is almost always at its first probe. */
static inline name_set *name_set_of(const char *const *names) {
  size_t h = ((uintptr_t)names >> 4) % NAME_SETS;
  if (name_sets[h].names == names) return &name_sets[h];
  return name_set_probe(names, h);
}

/* Where keyword name key goes in names[], or -1. */
static int find_name(const name_set *ns, const char *const *names, PyObject *key) {
  /* Keyword names in a call are interned strs: pointer equality finds them. */
  for (int i = 0; ns && i < ns->n; i++)
    if (ns->objs[i] == key) return i;
  for (int i = 0; names[i]; i++)
    if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, names[i]) == 0) return i;
  return -1;
}

/* The errors every entry reports the same way (TypeError). */
static int too_many_positional(const char *fname, int npos, int n, Py_ssize_t nargs) {
  PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", fname,
               npos < n ? npos : n, nargs);
  return 0;
}

/* Puts keyword argument key=value in out[] (names[] order); 0 with TypeError for a name that is
 * not in names[] or an argument given twice. *where receives the position. */
static int put_keyword(const char *fname, const name_set *ns, const char *const *names,
                       PyObject *key, PyObject *value, PyObject **out, int *where) {
  int found = find_name(ns, names, key);
  if (found < 0) {
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, key);
    return 0;
  }
  if (out[found]) {
    PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                 names[found]);
    return 0;
  }
  out[found] = value;
  *where = found;
  return 1;
}

static inline int check_required(const char *fname, const char *const *names, int nreq,
                                 PyObject **out) {
  for (int i = 0; i < nreq; i++)
    if (!out[i]) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, names[i]);
      return 0;
    }
  return 1;
}

/* gcc would turn the short loops below back into memcpy/memset calls. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
int tp_fastargs(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                const char *const *names, int nreq, int npos, PyObject **out) {
  name_set *ns = name_set_of(names);
  int n = 0;
  if (ns)
    n = ns->n;
  else
    while (names[n]) n++;
  if (nargs > npos || nargs > n) return too_many_positional(fname, npos, n, nargs);
  /* Loops, not memcpy/memset: a handful of words, where the libc calls cost more. */
  for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
  for (Py_ssize_t i = nargs; i < n; i++) out[i] = NULL;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nkw && ns && kwnames == ns->kwnames) {
    for (Py_ssize_t k = 0; k < nkw; k++) {
      int i = ns->kwmap[k];
      if (out[i]) goto slow; /* also given by position: the slow path says so */
      out[i] = args[nargs + k];
    }
    goto required;
  }
slow:
  for (Py_ssize_t i = nargs; i < n; i++) out[i] = NULL;
  if (ns && kwnames != ns->kwnames) Py_CLEAR(ns->kwnames); /* kwmap is rewritten below */
  for (Py_ssize_t k = 0; k < nkw; k++) {
    int found;
    if (!put_keyword(fname, ns, names, PyTuple_GET_ITEM(kwnames, k), args[nargs + k], out, &found))
      return 0;
    if (ns && k < MAX_NAMES) ns->kwmap[k] = (signed char)found;
  }
  /* Every keyword name found, none twice: remember the tuple. */
  if (nkw && ns && nkw <= ns->n && kwnames != ns->kwnames) ns->kwnames = Py_NewRef(kwnames);
required:
  return check_required(fname, names, nreq, out);
}

int tp_args(const char *fname, PyObject *args, PyObject *kw, const char *const *names, int nreq,
            int npos, PyObject **out) {
  const name_set *ns = name_set_of(names);
  int n = 0;
  while (names[n]) n++;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs > npos || nargs > n) return too_many_positional(fname, npos, n, nargs);
  for (Py_ssize_t i = 0; i < n; i++) out[i] = i < nargs ? PyTuple_GET_ITEM(args, i) : NULL;
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  int found;
  while (kw && PyDict_Next(kw, &pos, &key, &value))
    if (!put_keyword(fname, ns, names, key, value, out, &found)) return 0;
  return check_required(fname, names, nreq, out);
}

PyObject *tp_tuple_of(PyObject *const *items, Py_ssize_t n) {
  PyObject *t = PyTuple_New(n);
  for (Py_ssize_t i = 0; t && i < n; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
  return t;
}

PyObject *tp_kwarg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *name) {
  for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), name) == 0)
      return args[nargs + k];
  return NULL;
}

int tp_arg_bool(PyObject *o, int *out) {
  int v = PyObject_IsTrue(o);
  if (v < 0) return 0;
  *out = v;
  return 1;
}

void tp_asm_flags_for(void *handle, MlirOpPrintingFlags f) {
  /* MLIR makes an AsmState by verifying its scope first (the generic form when that fails), then
   * asking every operation's OpAsmOpInterface for names, which may crash on operations that do
   * not verify. IR its verifier cannot run on (uses of other IR, a verifier that crashes) is
   * neither verified nor named: the generic form, told it is verified. */
  if (tether_handle_has_foreign_uses(handle)) {
    mlirOpPrintingFlagsAssumeVerified(f);
    mlirOpPrintingFlagsPrintGenericOpForm(f);
  }
}

PyObject *tp_cast_error(PyObject *got) {
  if (got == Py_None)
    PyErr_SetString(tp.CastError,
                    "Invalid attribute (None?) when attempting to create an ArrayAttribute");
  else
    PyErr_Format(tp.CastError,
                 "Invalid attribute when attempting to create an ArrayAttribute (%s is not an "
                 "Attribute)",
                 Py_TYPE(got)->tp_name);
  return NULL;
}

/* ---- argument conversion --------------------------------------------------------------------- */

#define ARG_VALUE(fn, fn_in, Raw, pytype, what)                                                    \
  int fn(PyObject *o, Raw *raw, PyObject **ctx) {                                                  \
    if (!tp_is(o, tp.pytype)) return tp_type_error("argument", what, o), 0;                        \
    raw->ptr = TP_PTR(o);                                                                          \
    if (ctx) *ctx = TP_CTX(o);                                                                     \
    return 1;                                                                                      \
  }                                                                                                \
  int fn_in(PyObject *o, PyObject *ctx, Raw *raw) {                                                \
    PyObject *c;                                                                                   \
    if (!fn(o, raw, &c)) return 0;                                                                 \
    if (c != ctx && ((TpContext *)c)->arena != ((TpContext *)ctx)->arena) {                        \
      PyErr_SetString(PyExc_ValueError, what " of another context cannot be used here");           \
      return 0;                                                                                    \
    }                                                                                              \
    return 1;                                                                                      \
  }

ARG_VALUE(tp_arg_type, tp_arg_type_in, MlirType, Type, "a Type")
ARG_VALUE(tp_arg_attr, tp_arg_attr_in, MlirAttribute, Attribute, "an Attribute")
ARG_VALUE(tp_arg_loc, tp_arg_loc_in, MlirLocation, Location, "a Location")

/* Converters from a Python sequence to a PyMem array of MLIR values of one context. The sequence
 * is copied to a list first, so converting (which runs no Python code) sees a fixed set. */
#define SEQ_VALUES(fn, Raw, arg_in, what)                                                          \
  int fn(PyObject *seq, PyObject *ctx, intptr_t *n, Raw **out) {                                   \
    PyObject *f = PySequence_Fast(seq, "expected a sequence of " what);                            \
    if (!f) return 0;                                                                              \
    Py_ssize_t k = PySequence_Fast_GET_SIZE(f);                                                    \
    *out = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(Raw));                                        \
    if (!*out) {                                                                                   \
      Py_DECREF(f);                                                                                \
      PyErr_NoMemory();                                                                            \
      return 0;                                                                                    \
    }                                                                                              \
    for (Py_ssize_t i = 0; i < k; i++) {                                                           \
      if (!arg_in(PySequence_Fast_GET_ITEM(f, i), ctx, &(*out)[i])) {                              \
        PyMem_Free(*out);                                                                          \
        *out = NULL;                                                                               \
        Py_DECREF(f);                                                                              \
        return 0;                                                                                  \
      }                                                                                            \
    }                                                                                              \
    *n = k;                                                                                        \
    Py_DECREF(f);                                                                                  \
    return 1;                                                                                      \
  }

SEQ_VALUES(tp_seq_types, MlirType, tp_arg_type_in, "Type")
SEQ_VALUES(tp_seq_attrs, MlirAttribute, tp_arg_attr_in, "Attribute")
SEQ_VALUES(tp_seq_locs, MlirLocation, tp_arg_loc_in, "Location")

/* ---- concrete classes from tables ------------------------------------------------------------ */

enum { MAX_DEFS = 256 };
static tp_class_def *all_defs[MAX_DEFS];
static int n_defs;

tp_class_def *tp_class_def_of(PyTypeObject *cls) {
  PyObject *mro = cls->tp_mro;
  Py_ssize_t n = mro ? PyTuple_GET_SIZE(mro) : 0;
  for (Py_ssize_t k = 0; k < n; k++) {
    PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, k);
    for (int i = 0; i < n_defs; i++)
      if (all_defs[i]->cls == c) return all_defs[i];
  }
  return NULL;
}

static const char *family_word(PyTypeObject *family) {
  if (family == tp.Type) return "type";
  if (family == tp.Attribute) return "attribute";
  if (family == tp.AffineExpr) return "affine expression";
  return "value";
}

static PyTypeObject *family_of(PyTypeObject *cls) {
  if (PyType_IsSubtype(cls, tp.Type)) return tp.Type;
  if (PyType_IsSubtype(cls, tp.Attribute)) return tp.Attribute;
  if (tp.AffineExpr && PyType_IsSubtype(cls, tp.AffineExpr)) return tp.AffineExpr;
  return cls->tp_base;
}

/* X(cast_from): a copy of a value of the family, checked to be an X. */
static PyObject *concrete_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  tp_class_def *def = tp_class_def_of(type);
  PyTypeObject *family = family_of(type);
  PyObject *other;
  if ((kw && PyDict_GET_SIZE(kw)) || PyTuple_GET_SIZE(args) != 1) {
    PyErr_Format(PyExc_TypeError, "%s() takes exactly one positional argument (the %s to cast)",
                 def ? def->name : type->tp_name, family_word(family));
    return NULL;
  }
  other = PyTuple_GET_ITEM(args, 0);
  if (!tp_is(other, family))
    return tp_type_error("argument",
                         family == tp.Type        ? "a Type"
                         : family == tp.Attribute ? "an Attribute"
                                                  : "an AffineExpr",
                         other);
  if (def && def->isa && !def->isa(TP_PTR(other))) {
    /* As upstream, the value is shown in its base class's form: Attribute(...), Type(...). */
    PyObject *base = tp_ctxobj_new(family, TP_CTX(other), TP_PTR(other));
    PyObject *r = base ? PyObject_Repr(base) : NULL;
    Py_XDECREF(base);
    if (r) {
      PyErr_Format(PyExc_ValueError, "Cannot cast %s to %s (from %U)", family_word(family),
                   def->name, r);
      Py_DECREF(r);
    }
    return NULL;
  }
  return tp_ctxobj_new(type, TP_CTX(other), TP_PTR(other));
}

/* X.isinstance(value): whether the value is an X (as a classmethod: works on subclasses). */
static PyObject *concrete_isinstance(PyObject *cls, PyObject *other) {
  tp_class_def *def = tp_class_def_of((PyTypeObject *)cls);
  PyTypeObject *family = family_of((PyTypeObject *)cls);
  if (!tp_is(other, family)) Py_RETURN_FALSE;
  return PyBool_FromLong(!def || !def->isa || def->isa(TP_PTR(other)));
}

/* ClassName(printed form), as upstream prints concrete values. */
static PyObject *concrete_repr(PyObject *self) {
  tp_class_def *def = tp_class_def_of(Py_TYPE(self));
  PyObject *s = PyObject_Str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("%s(%U)", def ? def->name : _PyType_Name(Py_TYPE(self)), s);
  Py_DECREF(s);
  return r;
}

static PyMethodDef concrete_methods[] = {
    {"isinstance", concrete_isinstance, METH_O | METH_CLASS,
     "Whether the value is an instance of this class."},
    TP_METHODS_END,
};

static PyObject *add_methods(PyObject *cls, PyMethodDef *defs) {
  for (PyMethodDef *d = defs; d && d->ml_name; d++) {
    PyObject *f;
    if (d->ml_flags & METH_CLASS)
      f = PyDescr_NewClassMethod((PyTypeObject *)cls, d);
    else if (d->ml_flags & METH_STATIC) {
      PyObject *cf = PyCFunction_NewEx(d, NULL, NULL);
      f = cf ? PyStaticMethod_New(cf) : NULL;
      Py_XDECREF(cf);
    } else
      f = PyDescr_NewMethod((PyTypeObject *)cls, d);
    if (!f || PyObject_SetAttrString(cls, d->ml_name, f) < 0) {
      Py_XDECREF(f);
      return NULL;
    }
    Py_DECREF(f);
  }
  return cls;
}

int tp_define_classes(PyObject *m, PyTypeObject *family, tp_class_def *defs, PyObject *casters) {
  for (tp_class_def *d = defs; d->name; d++) {
    PyTypeObject *base = family;
    if (d->base) {
      for (tp_class_def *b = defs; b < d; b++)
        if (!strcmp(b->name, d->base)) base = b->cls;
      if (base == family) {
        PyErr_Format(PyExc_SystemError, "class %s: base %s not defined before it", d->name,
                     d->base);
        return -1;
      }
    }
    PyType_Slot slots[32];
    int k = 0;
    slots[k++] = (PyType_Slot){Py_tp_new, concrete_new};
    slots[k++] = (PyType_Slot){Py_tp_init, tp_init_noop};
    slots[k++] = (PyType_Slot){Py_tp_repr, concrete_repr};
    slots[k++] = (PyType_Slot){Py_tp_dealloc, tp_ctxobj_dealloc};
    if (d->getset) slots[k++] = (PyType_Slot){Py_tp_getset, d->getset};
    if (d->doc) slots[k++] = (PyType_Slot){Py_tp_doc, (void *)d->doc};
    for (PyType_Slot *s = d->slots; s && s->slot && k < 30; s++) slots[k++] = *s;
    slots[k] = (PyType_Slot){0, NULL};
    char name[128];
    snprintf(name, sizeof name, "tether.ir.%s", d->name);
    PyType_Spec spec = {name, (int)sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                        slots};
    PyObject *cls = PyType_FromModuleAndSpec(m, &spec, (PyObject *)base);
    if (!cls) return -1;
    if (!add_methods(cls, concrete_methods) || !add_methods(cls, d->methods)) {
      Py_DECREF(cls);
      return -1;
    }
    if (d->type_id) {
      PyObject *id = tp_wrap_typeid(d->type_id());
      int bad = !id || PyObject_SetAttrString(cls, "static_typeid", id) < 0;
      if (!bad && casters) {
        PyObject *key = PyLong_FromVoidPtr((void *)d->type_id().ptr);
        bad = !key || PyDict_SetItem(casters, key, cls) < 0;
        Py_XDECREF(key);
        tp_casters_changed();
      }
      Py_XDECREF(id);
      if (bad) {
        Py_DECREF(cls);
        return -1;
      }
    }
    if (PyModule_AddObjectRef(m, d->name, cls) < 0) {
      Py_DECREF(cls);
      return -1;
    }
    d->cls = (PyTypeObject *)cls; /* the module keeps the class for the process */
    if (n_defs == MAX_DEFS) {
      PyErr_SetString(PyExc_SystemError, "too many concrete classes");
      return -1;
    }
    all_defs[n_defs++] = d;
  }
  return 0;
}

/* ---- casting by TypeID ----------------------------------------------------------------------- */

/* The caster registered for a TypeID in one of the casters dicts (borrowed), or NULL (with an
 * error set, or none registered). Remembered in a direct-mapped cache keyed by (dict, TypeID):
 * TypeIDs are stable for the process, and every change to a casters dict bumps the generation
 * (tp_casters_changed). */
static unsigned long casters_generation = 1;
void tp_casters_changed(void) { casters_generation++; }

enum { CASTER_CACHE = 64 };
static struct {
  PyObject *casters;
  const void *id;
  unsigned long gen;
  PyObject *caster; /* strong, or NULL for "none registered" */
} caster_cache[CASTER_CACHE];

PyObject *tp_caster_of(PyObject *casters, MlirTypeID id) {
  size_t slot = (((uintptr_t)id.ptr >> 3) ^ ((uintptr_t)casters >> 4)) % CASTER_CACHE;
  if (caster_cache[slot].gen == casters_generation && caster_cache[slot].id == id.ptr &&
      caster_cache[slot].casters == casters)
    return caster_cache[slot].caster;
  PyObject *key = PyLong_FromVoidPtr((void *)id.ptr);
  if (!key) return NULL;
  PyObject *caster = PyDict_GetItemWithError(casters, key);
  Py_DECREF(key);
  if (!caster && PyErr_Occurred()) return NULL;
  /* The entry is rewritten before the old caster is released (its release may run Python code
   * that registers casters: the generation then moves on). */
  PyObject *old = caster_cache[slot].caster;
  caster_cache[slot].casters = casters;
  caster_cache[slot].id = id.ptr;
  caster_cache[slot].gen = casters_generation;
  caster_cache[slot].caster = Py_XNewRef(caster);
  Py_XDECREF(old);
  return caster;
}

/* obj (a new reference of the family's base class) as the class its caster gives. */
static PyObject *cast_with(PyObject *caster, PyObject *obj) {
  if (!caster) return obj;
  if (PyTuple_CheckExact(caster)) {
    /* Several classes share the TypeID (tp_register_choice): the first whose isa holds. */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(caster); i++) {
      PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(caster, i);
      tp_class_def *d = tp_class_def_of(cls);
      if (d && d->isa && d->isa(TP_PTR(obj))) {
        PyObject *r = tp_ctxobj_new(cls, TP_CTX(obj), TP_PTR(obj));
        Py_DECREF(obj);
        return r;
      }
    }
    return obj;
  }
  if (PyType_Check(caster) && Py_TYPE(obj) != (PyTypeObject *)caster &&
      ((PyTypeObject *)caster)->tp_new == concrete_new) {
    /* One of ours (or a Python subclass of one): no call needed. */
    PyObject *r = tp_ctxobj_new((PyTypeObject *)caster, TP_CTX(obj), TP_PTR(obj));
    Py_DECREF(obj);
    return r;
  }
  Py_INCREF(caster);
  PyObject *r = PyObject_CallOneArg(caster, obj);
  Py_DECREF(caster);
  Py_DECREF(obj);
  return r;
}

PyObject *tp_wrap_cast(PyObject *casters, PyTypeObject *base, PyObject *ctx, const void *ptr,
                       MlirTypeID id) {
  PyObject *caster = mlirTypeIDIsNull(id) ? NULL : tp_caster_of(casters, id);
  if (!caster && PyErr_Occurred()) return NULL;
  /* One of tether's classes: made directly, without the base-class object first. */
  if (caster && PyType_Check(caster) && ((PyTypeObject *)caster)->tp_new == concrete_new)
    return tp_ctxobj_new((PyTypeObject *)caster, ctx, (void *)ptr);
  PyObject *obj = tp_ctxobj_new(base, ctx, (void *)ptr);
  return obj ? cast_with(caster, obj) : NULL;
}

/* _register_caster(kind, typeid, caster, replace): kind 0 types, 1 attributes, 2 values. The
 * decorators (register_type_caster, ...) are in tether/ir.py. */
static PyObject *fn_register_caster(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  static const char *const names[] = {"kind", "typeid", "caster", "replace", NULL};
  PyObject *a[4];
  int kind, replace;
  if (!tp_fastargs("_register_caster", args, nargs, NULL, names, 4, 4, a) ||
      !tp_arg_int(a[0], "kind", &kind) || !tp_arg_bool(a[3], &replace))
    return NULL;
  PyObject *id = a[1], *caster = a[2];
  PyObject *casters = kind == 0 ? tp.type_casters : kind == 1 ? tp.attr_casters : tp.value_casters;
  const char *what = kind == 0 ? "Type" : kind == 1 ? "Attribute" : "Value";
  if (!tp_is(id, tp.TypeID)) return tp_type_error("typeid", "a TypeID", id);
  if (!PyCallable_Check(caster)) return tp_type_error("caster", "callable", caster);
  PyObject *key = PyLong_FromVoidPtr(TP_PTR(id));
  if (!key) return NULL;
  PyObject *old = PyDict_GetItemWithError(casters, key);
  if (old && !replace) {
    Py_DECREF(key);
    PyObject *r = PyObject_Repr(old);
    if (r) {
      /* Upstream's words differ by family. */
      if (!strcmp(what, "Value"))
        PyErr_Format(PyExc_RuntimeError, "Value caster is already registered: %U", r);
      else
        PyErr_Format(PyExc_RuntimeError, "%s caster is already registered with caster: %U", what,
                     r);
      Py_DECREF(r);
    }
    return NULL;
  }
  int rc = PyDict_SetItem(casters, key, caster);
  Py_DECREF(key);
  tp_casters_changed();
  if (rc < 0) return NULL;
  return Py_NewRef(caster);
}

int tp_register_choice(PyObject *casters, MlirTypeID id, PyObject *classes) {
  PyObject *key = PyLong_FromVoidPtr((void *)id.ptr);
  if (!key) return -1;
  int rc = PyDict_SetItem(casters, key, classes);
  Py_DECREF(key);
  tp_casters_changed();
  return rc;
}

/* ---- TypeID ---------------------------------------------------------------------------------- */

PyObject *tp_wrap_typeid(MlirTypeID id) {
  if (mlirTypeIDIsNull(id)) Py_RETURN_NONE;
  return tp_ctxobj_new(tp.TypeID, NULL, id.ptr);
}

/* Hashed as MLIR hashes TypeIDs (compared as every value is). */
static Py_hash_t typeid_hash(PyObject *a) {
  return (Py_hash_t)mlirTypeIDHashValue((MlirTypeID){TP_PTR(a)});
}

static PyObject *typeid_capsule(PyObject *self, void *c) {
  (void)c;
  return PyCapsule_New(TP_PTR(self), "mlir.ir.TypeID._CAPIPtr", NULL);
}

static PyObject *typeid_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.TypeID._CAPIPtr");
  if (!p) return NULL;
  return tp_wrap_typeid((MlirTypeID){p});
}

int tp_init_noop(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  (void)args;
  (void)kw;
  return 0;
}

static PyObject *typeid_new(PyTypeObject *t, PyObject *a, PyObject *k) {
  (void)t;
  (void)a;
  (void)k;
  PyErr_SetString(PyExc_TypeError, "TypeID objects come from static_typeid, .typeid or "
                                   "TypeID._CAPICreate");
  return NULL;
}

static PyMethodDef typeid_methods[] = {
    {"_CAPICreate", typeid_from_capsule, METH_O | METH_STATIC, NULL},
    TP_METHODS_END,
};

static PyGetSetDef typeid_getset[] = {
    {"_CAPIPtr", typeid_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot typeid_slots[] = {
    {Py_tp_new, typeid_new},
    {Py_tp_dealloc, tp_ctxobj_dealloc},
    {Py_tp_richcompare, tp_ctxobj_richcompare},
    {Py_tp_hash, typeid_hash},
    {Py_tp_methods, typeid_methods},
    {Py_tp_getset, typeid_getset},
    {Py_tp_doc, "The identity of a type or attribute class."},
    {0, NULL},
};

PyType_Spec tp_typeid_spec = {"tether.ir.TypeID", sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT,
                              typeid_slots};

static PyMethodDef value_functions[] = {
    {"_register_caster", TP_FASTFN(fn_register_caster), METH_FASTCALL, NULL},
    TP_METHODS_END,
};

int tp_init_values(PyObject *m) {
  if (tp_add_type(m, &tp_typeid_spec, NULL, &tp.TypeID) < 0) return -1;
  /* upstream's pybind11 cast errors are RuntimeErrors; they are also TypeErrors here. */
  PyObject *bases = PyTuple_Pack(2, PyExc_TypeError, PyExc_RuntimeError);
  tp.CastError = bases ? PyErr_NewExceptionWithDoc(
                             "tether.ir.CastError",
                             "A value of the wrong kind (a TypeError, and a RuntimeError as "
                             "upstream's cast errors are).",
                             bases, NULL)
                       : NULL;
  Py_XDECREF(bases);
  if (!tp.CastError || PyModule_AddObjectRef(m, "CastError", tp.CastError) < 0) return -1;
  tp.type_casters = PyDict_New();
  tp.attr_casters = PyDict_New();
  tp.value_casters = PyDict_New();
  if (!tp.type_casters || !tp.attr_casters || !tp.value_casters) return -1;
  return PyModule_AddFunctions(m, value_functions);
}
