/* capsule.c: the capsules tether hands out (`_CAPIPtr`) keep their owner alive: the capsule's
 * context is a strong reference to the object it came from, released by the capsule's destructor.
 * A capsule of tether's is recognised by that destructor, so `_CAPICreate` gives back the owner
 * itself rather than a second object over the same MLIR pointer.
 */
#include "tether_py.h"

static void owner_capsule_destructor(PyObject *cap) { Py_XDECREF(PyCapsule_GetContext(cap)); }

PyObject *tp_capsule_with_owner(void *ptr, const char *name, PyObject *owner) {
  PyObject *cap = PyCapsule_New(ptr, name, owner_capsule_destructor);
  if (!cap) return NULL;
  if (PyCapsule_SetContext(cap, Py_NewRef(owner)) < 0) {
    Py_DECREF(owner);
    Py_DECREF(cap);
    return NULL;
  }
  return cap;
}

/* The owner object a tether capsule keeps alive, or NULL for a foreign capsule (no error). */
PyObject *tp_capsule_owner(PyObject *cap) {
  if (!PyCapsule_CheckExact(cap) || PyCapsule_GetDestructor(cap) != owner_capsule_destructor)
    return NULL;
  return PyCapsule_GetContext(cap);
}
