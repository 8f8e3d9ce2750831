/* state.c: the module state (tpy: every class and object the extension's files share), the pin
 * pool of wrappers, and the two helpers every type uses (tpy_add_type, tpy_gc_dealloc).
 *
 * Invariant: the module state holds a strong reference to each class and object it names, for the
 * process's life (the extension is never unloaded); it is filled once, at import, under the GIL.
 */
#include "core.h"

#include <string.h>

TpState tpy;
tether_pin_pool *tpy_pins;

static int spec_has_slot(const PyType_Spec *spec, int slot) {
  for (const PyType_Slot *s = spec->slots; s->slot; s++)
    if (s->slot == slot) return 1;
  return 0;
}

int tpy_add_type(PyObject *m, PyType_Spec *spec, PyObject *base, PyTypeObject **out) {
  PyObject *t = tpy_type_from_spec(m, spec, base);
  if (!t) return -1;
  /* A class from a spec without a dealloc gets CPython's generic one for subclasses
   * (subtype_dealloc: it looks for __dict__, slots, weak references and finalizers, then calls the
   * base's), about 120 instructions per object freed (OpResult, the IR sequences). A subclass that
   * adds nothing to the instance is freed by its base's own dealloc instead. */
  PyTypeObject *tt = (PyTypeObject *)t, *b = tt->tp_base;
  if (b && b != &PyBaseObject_Type && !spec_has_slot(spec, Py_tp_dealloc) &&
      tt->tp_basicsize == b->tp_basicsize && tt->tp_itemsize == b->tp_itemsize &&
      tt->tp_dictoffset == b->tp_dictoffset && tt->tp_weaklistoffset == b->tp_weaklistoffset &&
      PyType_IS_GC(tt) == PyType_IS_GC(b) && tt->tp_finalize == b->tp_finalize && !tt->tp_del)
    tt->tp_dealloc = b->tp_dealloc;
  const char *dot = strrchr(spec->name, '.');
  if (PyModule_AddObjectRef(m, dot ? dot + 1 : spec->name, t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  *out = (PyTypeObject *)t; /* the module state keeps this reference for the process */
  return 0;
}

void tpy_gc_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  t->tp_clear(self);
  t->tp_free(self);
  Py_DECREF(t); /* heap types: each instance holds its type */
}

int tpy_add_methods(PyTypeObject *type, PyMethodDef *defs) {
  for (PyMethodDef *d = defs; d->ml_name; d++) {
    PyObject *descr = d->ml_flags & METH_CLASS    ? PyDescr_NewClassMethod(type, d)
                      : d->ml_flags & METH_STATIC ? PyCFunction_New(d, NULL)
                                                  : PyDescr_NewMethod(type, d);
    if (descr && (d->ml_flags & METH_STATIC)) Py_SETREF(descr, PyStaticMethod_New(descr));
    if (!descr || PyDict_SetItemString(type->tp_dict, d->ml_name, descr) < 0) {
      Py_XDECREF(descr);
      return -1;
    }
    Py_DECREF(descr);
  }
  PyType_Modified(type);
  return 0;
}

int tpy_add_getset(PyTypeObject *type, PyGetSetDef *defs) {
  for (PyGetSetDef *d = defs; d->name; d++) {
    PyObject *descr = PyDescr_NewGetSet(type, d);
    if (!descr || PyDict_SetItemString(type->tp_dict, d->name, descr) < 0) {
      Py_XDECREF(descr);
      return -1;
    }
    Py_DECREF(descr);
  }
  PyType_Modified(type);
  return 0;
}
