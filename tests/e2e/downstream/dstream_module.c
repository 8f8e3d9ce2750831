/* _dstream: the downstream dialect's Python extension. It receives tether.ir objects through the
 * MLIR C API's capsule convention (Context._CAPIPtr) and hands types back the same way
 * (Type._CAPICreate), as any extension written against upstream's Python bindings does. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dstream_capi.h"

static int context_of(PyObject *context, MlirContext *out) {
  PyObject *cap = PyObject_GetAttrString(context, "_CAPIPtr");
  if (!cap) return 0;
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Context._CAPIPtr");
  Py_DECREF(cap);
  if (!p) return 0;
  out->ptr = p;
  return 1;
}

static PyObject *register_dialect(PyObject *m, PyObject *context) {
  (void)m;
  MlirContext ctx;
  if (!context_of(context, &ctx)) return NULL;
  dstreamRegisterDialect(ctx);
  Py_RETURN_NONE;
}

static PyObject *pixel_type(PyObject *m, PyObject *context) {
  (void)m;
  MlirContext ctx;
  if (!context_of(context, &ctx)) return NULL;
  MlirType t = dstreamPixelTypeGet(ctx);
  return PyCapsule_New((void *)t.ptr, "mlir.ir.Type._CAPIPtr", NULL);
}

static PyObject *is_pixel(PyObject *m, PyObject *type) {
  (void)m;
  PyObject *cap = PyObject_GetAttrString(type, "_CAPIPtr");
  if (!cap) return NULL;
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Type._CAPIPtr");
  Py_DECREF(cap);
  if (!p) return NULL;
  return PyBool_FromLong(dstreamTypeIsAPixel((MlirType){p}));
}

static PyObject *pixel_typeid(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyLong_FromVoidPtr((void *)dstreamPixelTypeID());
}

/* The pixel TypeID in the C API's capsule convention (tether.ir.TypeID._CAPICreate takes it). */
static PyObject *pixel_typeid_capsule(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyCapsule_New((void *)dstreamPixelTypeID(), "mlir.ir.TypeID._CAPIPtr", NULL);
}

static PyObject *memref_interface_typeid(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyLong_FromVoidPtr((void *)dstreamMemRefElementInterfaceTypeID());
}

static PyMethodDef methods[] = {
    {"register_dialect", register_dialect, METH_O, "Registers and loads dstream in a Context."},
    {"pixel_type", pixel_type, METH_O, "A capsule holding !dstream.pixel."},
    {"is_pixel", is_pixel, METH_O, NULL},
    {"pixel_typeid", pixel_typeid, METH_NOARGS, NULL},
    {"pixel_typeid_capsule", pixel_typeid_capsule, METH_NOARGS, NULL},
    {"memref_interface_typeid", memref_interface_typeid, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_dstream", NULL, 0, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__dstream(void) { return PyModuleDef_Init(&module_def); }
