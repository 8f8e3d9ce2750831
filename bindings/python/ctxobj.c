/* ctxobj.c: what every context-owned value class shares (Type, Attribute, Location, AffineExpr,
 * AffineMap, IntegerSet, TypeID): the object layout (TpCtxObj: the raw MLIR pointer and the Context
 * object), comparison and hashing by MLIR pointer within a family, the `context` and `_CAPIPtr`
 * getters, and the converters of such values as arguments (one, or a sequence of them).
 *
 * Invariant: a value object holds a strong reference to its Context object, so its MLIRContext
 * outlives it; a value passed in where another value's context is expected is checked to belong to
 * it (ValueError) before anything reaches MLIR.
 */
#include "tether_py.h"

/* ---- the value objects ----------------------------------------------------------------------- */

/* The free list of 32-byte wrappers (tether_py.h, tp_obj_alloc), linked through their first
 * word. */
enum { FREELIST_MAX = 128 };
static PyObject *freelist;
static int nfree;

_Static_assert(sizeof(TpCtxObj) == sizeof(TpHandle) && sizeof(TpOp) == sizeof(TpHandle),
               "the wrappers share one free list");

static int reusable(PyTypeObject *type) {
  return !PyType_IS_GC(type) && type->tp_basicsize == (Py_ssize_t)sizeof(TpHandle) &&
         type->tp_itemsize == 0 && type->tp_alloc == PyType_GenericAlloc &&
         type->tp_free == PyObject_Free;
}

PyObject *tp_obj_alloc(PyTypeObject *type) {
  if (!freelist || !reusable(type)) return type->tp_alloc(type, 0);
  TpHandle *self = (TpHandle *)freelist;
  freelist = self->h;
  nfree--;
  self->h = NULL;
  self->pin = 0;
  PyObject_Init((PyObject *)self, type); /* the type (a heap type) gets its reference */
  return (PyObject *)self;
}

void tp_obj_free(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (nfree < FREELIST_MAX && reusable(t)) {
    ((TpHandle *)self)->h = freelist;
    freelist = self;
    nfree++;
  } else {
    t->tp_free(self);
  }
}

PyObject *tp_ctxobj_new(PyTypeObject *type, PyObject *ctx, const void *ptr) {
  TpCtxObj *self = (TpCtxObj *)tp_obj_alloc(type);
  if (!self) return NULL;
  self->ctx = Py_XNewRef(ctx);
  self->ptr = (void *)ptr;
  return (PyObject *)self;
}

void tp_ctxobj_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  Py_CLEAR(((TpCtxObj *)self)->ctx);
  tp_obj_free(self);
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
  if (TP_CTX(self)) tp_context_expose(((TpContext *)TP_CTX(self))->arena);
  return tp_capsule_with_owner(TP_PTR(self), (const char *)capsule_name, self);
}

PyObject *tp_ctxobj_repr(PyObject *self, const char *cls) {
  PyObject *s = PyObject_Str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("%s(%U)", cls, s);
  Py_DECREF(s);
  return r;
}

/* Whether two Context objects stand for one arena. */
int tp_same_context(PyObject *a, PyObject *b) {
  return a == b || ((TpContext *)a)->arena == ((TpContext *)b)->arena;
}

/* ---- values as arguments --------------------------------------------------------------------- */

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
    PyObject *f = tp_seq_fast(seq, "expected a sequence of " what);                                \
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
