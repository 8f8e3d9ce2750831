/* handback.c: a C extension that hands IR back to Python through the capsule protocol of
 * upstream's bindings (mlir-c/Bindings/Python/Interop.h), as extensions written against upstream's
 * adaptor headers do: it reads a Context or Block from its `_CAPIPtr`, builds IR with the MLIR C
 * API, and returns it through the core package's `_CAPICreate` factories, which such an
 * extension's casters call where no exception may escape (a nanobind caster that meets one ends
 * the process). For tests/bindings/test_handback.py.
 *
 * Invariant: every function either returns what the factory gave or raises; it destroys only IR
 * it made and did not hand over.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Bindings/Python/Interop.h>
#include <mlir-c/IR.h>

/* The core package's class name (Module, Operation) in tether.ir. */
static PyObject *ir_class(const char *name) {
  PyObject *ir = PyImport_ImportModule("tether.ir");
  if (!ir) return NULL;
  PyObject *cls = PyObject_GetAttrString(ir, name);
  Py_DECREF(ir);
  return cls;
}

/* cls._CAPICreate(capsule), stealing capsule. */
static PyObject *create_from(const char *cls_name, PyObject *capsule) {
  if (!capsule) return NULL;
  PyObject *cls = ir_class(cls_name);
  PyObject *r = cls ? PyObject_CallMethod(cls, MLIR_PYTHON_CAPI_FACTORY_ATTR, "O", capsule) : NULL;
  Py_XDECREF(cls);
  Py_DECREF(capsule);
  return r;
}

static MlirContext context_of(PyObject *obj) {
  PyObject *cap = PyObject_GetAttrString(obj, MLIR_PYTHON_CAPI_PTR_ATTR);
  if (!cap) return (MlirContext){NULL};
  MlirContext c = mlirPythonCapsuleToContext(cap);
  Py_DECREF(cap);
  return c;
}

/* parse_module(context, text): a module parsed in C (as an importer or deserializer makes one),
 * handed over: the Module object owns it. */
static PyObject *parse_module(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *ctx_obj;
  const char *text;
  if (!PyArg_ParseTuple(args, "Os", &ctx_obj, &text)) return NULL;
  MlirContext c = context_of(ctx_obj);
  if (mlirContextIsNull(c)) return NULL;
  MlirModule m = mlirModuleCreateParse(c, mlirStringRefCreateFromCString(text));
  if (mlirModuleIsNull(m)) return PyErr_Format(PyExc_ValueError, "the text did not parse");
  return create_from("Module", mlirPythonModuleToCapsule(m));
}

/* An arith.constant of type i32 made with mlirOperationCreate in context c. */
static MlirOperation make_constant_op(MlirContext c, long value) {
  MlirType i32 = mlirIntegerTypeGet(c, 32);
  MlirNamedAttribute attr =
      mlirNamedAttributeGet(mlirIdentifierGet(c, mlirStringRefCreateFromCString("value")),
                            mlirIntegerAttrGet(i32, value));
  MlirOperationState st = mlirOperationStateGet(mlirStringRefCreateFromCString("arith.constant"),
                                                mlirLocationUnknownGet(c));
  mlirOperationStateAddResults(&st, 1, &i32);
  mlirOperationStateAddAttributes(&st, 1, &attr);
  return mlirOperationCreate(&st);
}

/* make_constant(context, value): a detached arith.constant made in C, handed over. */
static PyObject *make_constant(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *ctx_obj;
  long value;
  if (!PyArg_ParseTuple(args, "Ol", &ctx_obj, &value)) return NULL;
  MlirContext c = context_of(ctx_obj);
  if (mlirContextIsNull(c)) return NULL;
  return create_from("Operation", mlirPythonOperationToCapsule(make_constant_op(c, value)));
}

/* append_constant(block, value): an arith.constant made in C and appended to a block Python holds
 * (the block owns it); returns the operation as the core package sees it. */
static PyObject *append_constant(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *block_obj;
  long value;
  if (!PyArg_ParseTuple(args, "Ol", &block_obj, &value)) return NULL;
  PyObject *cap = PyObject_GetAttrString(block_obj, MLIR_PYTHON_CAPI_PTR_ATTR);
  if (!cap) return NULL;
  MlirBlock b = mlirPythonCapsuleToBlock(cap);
  Py_DECREF(cap);
  if (mlirBlockIsNull(b)) return NULL;
  MlirOperation parent = mlirBlockGetParentOperation(b);
  MlirContext c = mlirOperationGetContext(parent);
  MlirOperation op = make_constant_op(c, value);
  mlirBlockAppendOwnedOperation(b, op);
  return create_from("Operation", mlirPythonOperationToCapsule(op));
}

/* is_registered(operation): whether MLIR knows the operation's name in its context (an operation
 * of a dialect that was not loaded when it was made is unregistered). */
static PyObject *is_registered(PyObject *self, PyObject *op_obj) {
  (void)self;
  PyObject *cap = PyObject_GetAttrString(op_obj, MLIR_PYTHON_CAPI_PTR_ATTR);
  if (!cap) return NULL;
  MlirOperation op = mlirPythonCapsuleToOperation(cap);
  Py_DECREF(cap);
  if (mlirOperationIsNull(op)) return NULL;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  return PyBool_FromLong(mlirContextIsRegisteredOperation(mlirOperationGetContext(op), name));
}

static PyMethodDef methods[] = {
    {"parse_module", parse_module, METH_VARARGS, NULL},
    {"make_constant", make_constant, METH_VARARGS, NULL},
    {"append_constant", append_constant, METH_VARARGS, NULL},
    {"is_registered", is_registered, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_handback", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__handback(void);
PyMODINIT_FUNC PyInit__handback(void) { return PyModule_Create(&module); }
