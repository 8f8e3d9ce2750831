/* ctxobj.c: what every context-owned value class shares (Type, Attribute, Location, AffineExpr,
 * AffineMap, IntegerSet, TypeID): the object layout (TpCtxObj: the raw MLIR pointer and the Context
 * object), comparison and hashing by MLIR pointer within a family, the `context` and `_CAPIPtr`
 * getters, and the converters of such values as arguments (one, or a sequence of them).
 *
 * Invariant: a value object holds a strong reference to its Context object, so its MLIRContext
 * outlives it; a value passed in where another value's context is expected is checked to belong to
 * it (ValueError) before anything reaches MLIR.
 */
#include "context.h"

/* ---- the value objects ----------------------------------------------------------------------- */

_Static_assert(sizeof(TpCtxObj) == sizeof(TpWrapper), "values share the wrappers' free list");

PyObject *tpy_ctxobj_new(PyTypeObject *type, PyObject *ctx, const void *ptr) {
  TpCtxObj *self = (TpCtxObj *)tpy_obj_alloc(type);
  if (!self) return NULL;
  self->ctx = Py_XNewRef(ctx);
  self->ptr = (void *)ptr;
  return (PyObject *)self;
}

void tpy_ctxobj_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  Py_CLEAR(((TpCtxObj *)self)->ctx);
  tpy_obj_free(self);
  Py_DECREF(t);
}

/* The family of a value class: the class at the root of its tp_base chain (Type for IntegerType
 * and for a Python subclass of it, Attribute, Location, AffineExpr, ...). */
static PyTypeObject *family_root(PyTypeObject *t) {
  while (t->tp_base && t->tp_base != &PyBaseObject_Type) t = t->tp_base;
  return t;
}

PyObject *tpy_ctxobj_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  /* MLIR uniques these values in their context: the same value is the same pointer. */
  int same_family = Py_TYPE(a) == Py_TYPE(b) || tpy_is(b, family_root(Py_TYPE(a)));
  int eq = same_family && TPY_PTR(a) == TPY_PTR(b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

Py_hash_t tpy_ctxobj_hash(PyObject *a) { return _Py_HashPointer(TPY_PTR(a)); }

PyObject *tpy_ctxobj_context(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(TPY_CTX(self));
}

PyObject *tpy_ctxobj_capsule(PyObject *self, void *capsule_name) {
  if (TPY_CTX(self)) tpy_context_expose(((TpContext *)TPY_CTX(self))->arena);
  return tpy_capsule_with_owner(TPY_PTR(self), (const char *)capsule_name, self);
}

PyObject *tpy_ctxobj_repr(PyObject *self, const char *cls) {
  PyObject *s = PyObject_Str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("%s(%U)", cls, s);
  Py_DECREF(s);
  return r;
}

/* Whether two Context objects stand for one arena. */
int tpy_same_context(PyObject *a, PyObject *b) {
  return a == b || ((TpContext *)a)->arena == ((TpContext *)b)->arena;
}

/* ---- values as arguments --------------------------------------------------------------------- */

#define ARG_VALUE(fn, fn_in, Raw, pytype, what)                                                    \
  int fn(PyObject *o, Raw *raw, PyObject **ctx) {                                                  \
    if (!tpy_is(o, tpy.pytype)) return tpy_type_error("argument", what, o), 0;                     \
    raw->ptr = TPY_PTR(o);                                                                         \
    if (ctx) *ctx = TPY_CTX(o);                                                                    \
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

ARG_VALUE(tpy_arg_type, tpy_arg_type_in, MlirType, Type, "a Type")
ARG_VALUE(tpy_arg_attr, tpy_arg_attr_in, MlirAttribute, Attribute, "an Attribute")
ARG_VALUE(tpy_arg_loc, tpy_arg_loc_in, MlirLocation, Location, "a Location")

/* Converters from a Python sequence to a PyMem array of MLIR values of one context. The sequence
 * is copied to a list first, so converting (which runs no Python code) sees a fixed set. */
#define SEQ_VALUES(fn, Raw, arg_in, what)                                                          \
  int fn(PyObject *seq, PyObject *ctx, intptr_t *n, Raw **out) {                                   \
    PyObject *f = tpy_seq_fast(seq, "expected a sequence of " what);                               \
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

SEQ_VALUES(tpy_seq_types, MlirType, tpy_arg_type_in, "Type")
SEQ_VALUES(tpy_seq_attrs, MlirAttribute, tpy_arg_attr_in, "Attribute")
SEQ_VALUES(tpy_seq_locs, MlirLocation, tpy_arg_loc_in, "Location")
