/* capsule.c: the capsules tether hands out (`_CAPIPtr`) keep their owner alive: the capsule's
 * context is a strong reference to the object it came from, released by the capsule's destructor.
 * A capsule of tether's is recognised by that destructor, so `_CAPICreate` gives back the owner
 * itself rather than a second object over the same MLIR pointer.
 */
#include "core.h"

#include <string.h>

/* Capsule names and package prefixes. Upstream names a capsule after the package prefix its
 * extensions are compiled with (MLIR_PYTHON_PACKAGE_PREFIX: "mlir.ir.Context._CAPIPtr",
 * "mlir_standalone.ir.Context._CAPIPtr"), and an extension only reads capsules of its own prefix.
 * tether serves every prefix from one package (tether.alias.install(prefix)): it reads a capsule
 * of any installed prefix, and names the capsules it hands out after one prefix, the process's
 * capsule prefix (the last one a prefix package installed; "mlir" by default). The code spells
 * names with "mlir"; tpy_capsule_name gives the name in the current prefix (names are kept for the
 * process's life: a capsule keeps a pointer to its name). */
#define MAX_PREFIXES 8
#define MAX_NAMES 64
static char *prefixes[MAX_PREFIXES] = {"mlir"}; /* [0]: "mlir"; then installed ones */
static int n_prefixes = 1, current = 0;
static struct {
  const char *canonical;
  int prefix;
  char *name;
} names[MAX_NAMES];
static int n_names;

const char *tpy_capsule_name(const char *canonical) {
  if (current == 0) return canonical;
  for (int i = 0; i < n_names; i++)
    if (names[i].prefix == current && !strcmp(names[i].canonical, canonical)) return names[i].name;
  if (n_names == MAX_NAMES) return canonical;
  const char *rest = canonical + strlen("mlir");
  size_t np = strlen(prefixes[current]), nr = strlen(rest);
  char *name = PyMem_RawMalloc(np + nr + 1);
  if (!name) return canonical;
  memcpy(name, prefixes[current], np);
  memcpy(name + np, rest, nr + 1);
  names[n_names].canonical = canonical;
  names[n_names].prefix = current;
  names[n_names].name = name;
  n_names++;
  return name;
}

void *tpy_capsule_pointer(PyObject *cap, const char *canonical) {
  if (PyCapsule_CheckExact(cap)) {
    const char *name = PyCapsule_GetName(cap);
    const char *rest = canonical + strlen("mlir");
    size_t nn = name ? strlen(name) : 0, nr = strlen(rest);
    if (name && nn > nr && !strcmp(name + nn - nr, rest))
      for (int i = 0; i < n_prefixes; i++)
        if (strlen(prefixes[i]) == nn - nr && !strncmp(name, prefixes[i], nn - nr))
          return PyCapsule_GetPointer(cap, name);
  }
  /* Not a capsule of this kind in any installed prefix: Python's own error. */
  return PyCapsule_GetPointer(cap, canonical);
}

/* _capsule_prefix(prefix=None): makes prefix (a package prefix, "mlir_standalone" or
 * "jaxlib.mlir") one tether reads capsules of and names its own after; returns the current one. */
PyObject *tpy_fn_capsule_prefix(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  if (nargs > 1) return PyErr_Format(PyExc_TypeError, "_capsule_prefix takes at most 1 argument");
  if (nargs == 1 && args[0] != Py_None) {
    Py_ssize_t n;
    const char *p = PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8AndSize(args[0], &n) : NULL;
    if (!p) return tpy_type_error("prefix", "a str", args[0]);
    if (n == 0 || (Py_ssize_t)strlen(p) != n || n > 200)
      return PyErr_Format(PyExc_ValueError, "_capsule_prefix: %R is not a package prefix", args[0]);
    int found = -1;
    for (int i = 0; i < n_prefixes; i++)
      if (!strcmp(prefixes[i], p)) found = i;
    if (found < 0) {
      if (n_prefixes == MAX_PREFIXES)
        return PyErr_Format(PyExc_ValueError, "_capsule_prefix: at most %d package prefixes",
                            MAX_PREFIXES - 1);
      char *copy = PyMem_RawMalloc((size_t)n + 1);
      if (!copy) return PyErr_NoMemory();
      memcpy(copy, p, (size_t)n + 1);
      found = n_prefixes;
      prefixes[n_prefixes++] = copy;
    }
    current = found;
  }
  return PyUnicode_FromString(prefixes[current]);
}

static void owner_capsule_destructor(PyObject *cap) { Py_XDECREF(PyCapsule_GetContext(cap)); }

PyObject *tpy_capsule_with_owner(void *ptr, const char *name, PyObject *owner) {
  PyObject *cap = PyCapsule_New(ptr, tpy_capsule_name(name), owner_capsule_destructor);
  if (!cap) return NULL;
  if (PyCapsule_SetContext(cap, Py_NewRef(owner)) < 0) {
    Py_DECREF(owner);
    Py_DECREF(cap);
    return NULL;
  }
  return cap;
}

/* The owner object a tether capsule keeps alive, or NULL for a foreign capsule (no error). */
PyObject *tpy_capsule_owner(PyObject *cap) {
  if (!PyCapsule_CheckExact(cap) || PyCapsule_GetDestructor(cap) != owner_capsule_destructor)
    return NULL;
  return PyCapsule_GetContext(cap);
}
