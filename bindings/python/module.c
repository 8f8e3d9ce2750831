/* The _tether extension module: converts between Python and the arena; holds no lifetime logic. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tether.h"

static void append_to_list(MlirStringRef s, void *user) {
  PyObject *parts = user;
  PyObject *str = PyUnicode_DecodeUTF8(s.data, (Py_ssize_t)s.length, "replace");
  if (str) {
    PyList_Append(parts, str);
    Py_DECREF(str);
  }
}

/* _parse_roundtrip(asm: str) -> str: parses and prints back (the foundation's smoke entry). */
static PyObject *parse_roundtrip(PyObject *self, PyObject *arg) {
  (void)self;
  Py_ssize_t len;
  const char *text = PyUnicode_AsUTF8AndSize(arg, &len);
  if (!text) return NULL;
  tether_arena *a;
  if (tether_arena_create(&a) != TETHER_OK) return PyErr_NoMemory();
  tether_op *op;
  int rc = tether_module_parse(a, text, (size_t)len, &op);
  if (rc != TETHER_OK) {
    PyErr_Format(PyExc_ValueError, "could not parse: %s", tether_strerror(rc));
    return NULL;
  }
  PyObject *parts = PyList_New(0);
  if (!parts) return NULL;
  tether_op_print(op, (MlirOpPrintingFlags){NULL}, append_to_list, parts);
  PyObject *empty = PyUnicode_FromString("");
  PyObject *joined = empty ? PyUnicode_Join(empty, parts) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(parts);
  return joined;
}

static PyMethodDef methods[] = {
    {"_parse_roundtrip", parse_roundtrip, METH_O, "Parse MLIR assembly and print it back."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_tether", "tether's C extension.", 0, methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tether(void) { return PyModuleDef_Init(&module_def); }
