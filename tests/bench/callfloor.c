/* _callfloor: the interpreter's floor of the side-by-side rows (tests/bench/side_by_side.py
 * --interpreter-floor). One object, `anything`, stands for every name a row uses: an attribute of
 * it is itself, calling it (any arguments, by vectorcall, as a binding's fast functions are
 * called) returns itself, so does indexing it, and it is its own context manager. A row run on
 * it executes the same Python (the loop, the argument lists and dicts, the attribute lookups, the
 * calls) with no binding and no MLIR behind it: what no binding can go below. Added to the C-API
 * floor (create_floor.c), it gives the least time a row can take. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
  PyObject_HEAD vectorcallfunc vectorcall;
} Anything;

static PyObject *the_one;

static PyObject *any_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  (void)args;
  (void)nargsf;
  (void)kwnames;
  return Py_NewRef(self);
}

static PyObject *any_getattr(PyObject *self, PyObject *name) {
  (void)name;
  return Py_NewRef(self);
}

static PyObject *any_subscript(PyObject *self, PyObject *key) {
  (void)key;
  return Py_NewRef(self);
}

static PyObject *any_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *any_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  (void)args;
  (void)nargs;
  Py_RETURN_FALSE;
}

static PyMethodDef any_methods[] = {
    {"__enter__", any_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))any_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods any_mapping = {.mp_subscript = any_subscript};

static PyTypeObject AnythingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_callfloor.Anything",
    .tp_basicsize = sizeof(Anything),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Anything, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = any_getattr,
    .tp_as_mapping = &any_mapping,
    .tp_methods = any_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_callfloor",
                                    .m_doc = "The interpreter's floor of the side-by-side rows.",
                                    .m_size = -1};

PyMODINIT_FUNC PyInit__callfloor(void);
PyMODINIT_FUNC PyInit__callfloor(void) {
  if (PyType_Ready(&AnythingType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  Anything *a = PyObject_New(Anything, &AnythingType);
  if (!a) {
    Py_DECREF(m);
    return NULL;
  }
  a->vectorcall = any_call;
  the_one = (PyObject *)a;
  if (PyModule_AddObjectRef(m, "anything", the_one) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
