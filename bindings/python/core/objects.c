/* objects.c: the free list of the wrappers without the cyclic collector's header (TpWrapper: a
 * header and two words: TpHandle, TpOp, TpCtxObj), as CPython keeps free lists of its own small
 * objects: iterating a block, reading `.type`, an attribute or an operand makes one, and most are
 * dropped at once.
 *
 * Invariant: an object on the list is the memory of a freed wrapper of a reusable class (same size,
 * the generic allocator and free), linked through its first word; at most FREELIST_MAX are kept.
 * Everything runs under the GIL.
 */
#include "core.h"

enum { FREELIST_MAX = 128 };
static PyObject *freelist;
static int nfree;

static int reusable(PyTypeObject *type) {
  return !PyType_IS_GC(type) && type->tp_basicsize == (Py_ssize_t)sizeof(TpWrapper) &&
         type->tp_itemsize == 0 && type->tp_alloc == PyType_GenericAlloc &&
         type->tp_free == PyObject_Free;
}

PyObject *tpy_obj_alloc(PyTypeObject *type) {
  if (!freelist || !reusable(type)) return type->tp_alloc(type, 0);
  TpWrapper *self = (TpWrapper *)freelist;
  freelist = self->first;
  nfree--;
  self->first = NULL;
  self->second = 0;
  PyObject_Init((PyObject *)self, type); /* the type (a heap type) gets its reference */
  return (PyObject *)self;
}

void tpy_obj_free(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (nfree < FREELIST_MAX && reusable(t)) {
    ((TpWrapper *)self)->first = freelist;
    freelist = self;
    nfree++;
  } else {
    t->tp_free(self);
  }
}

/* a + b: a Python list of both (as upstream's sliceable lists). */
PyObject *tpy_concat_as_lists(PyObject *a, PyObject *b) {
  PyObject *la = PySequence_List(a), *lb = la ? PySequence_List(b) : NULL;
  PyObject *r = lb ? PySequence_Concat(la, lb) : NULL;
  Py_XDECREF(la);
  Py_XDECREF(lb);
  return r;
}
