/* execution_engine.c: ExecutionEngine (MLIR's JIT, through its C API), the base of
 * tether.execution_engine.ExecutionEngine (lookup, invoke and register_runtime are Python there,
 * as upstream's).
 *
 * Lifetimes: the engine holds the Module object it compiled (its context stays alive as long as
 * the engine, whose code refers to the context's types) and every callback registered with it
 * (the JIT'd code holds their raw addresses). Destroying the engine frees the code; an address
 * obtained by raw_lookup must not be called after that (docs/python.md says so: JIT'd code is
 * native code, outside what tether can check).
 */
#include "passes.h"

#include <mlir-c/ExecutionEngine.h>
#include <string.h>

typedef struct {
  PyObject_HEAD MlirExecutionEngine jit;
  PyObject *module; /* the Module compiled (strong) */
  PyObject *keep;   /* list: registered callbacks */
} TpEngine;

static int engine_alive(TpEngine *e) {
  if (e->jit.ptr) return 1;
  PyErr_SetString(PyExc_RuntimeError, "the ExecutionEngine was released");
  return 0;
}

/* enable_pic: MLIR 22's (upstream 22's keyword); a 19 build keeps upstream 19's signature. */
#if TETHER_MLIR_VERSION >= 22
#define ENGINE_PIC ", enable_pic: bool = False"
#else
#define ENGINE_PIC ""
#endif
static tpy_sig engine_new_sig = TPY_SIG(
    "ExecutionEngine(module: Module, opt_level: int = 2, "
    "shared_libs: Sequence[str] | None = None, enable_object_dump: bool = True" ENGINE_PIC ")",
    "MLIR's JIT over a module of LLVM-translatable dialects.");

static PyObject *engine_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *a[5] = {NULL};
  if (!tpy_args(&engine_new_sig, args, kw, a, TETHER_MLIR_VERSION >= 22 ? 5 : 4)) return NULL;
  PyObject *module = a[0], *libs = a[2] ? a[2] : Py_None;
  int opt = 2, dump = 1, pic = 0;
  if ((a[1] && !tpy_arg_int(a[1], "opt_level", &opt)) || (a[3] && !tpy_arg_bool(a[3], &dump)) ||
      (a[4] && !tpy_arg_bool(a[4], &pic)))
    return NULL;
  if (opt < 0 || opt > 3) return PyErr_Format(PyExc_ValueError, "opt_level must be 0 to 3");
  PyObject *paths = libs == Py_None ? PyList_New(0) : PySequence_List(libs);
  if (!paths) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(paths);
  MlirStringRef *refs = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *refs);
  if (!refs) {
    Py_DECREF(paths);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++)
    if (!tpy_arg_str(PyList_GET_ITEM(paths, i), "shared_libs", &refs[i])) {
      PyMem_Free(refs);
      Py_DECREF(paths);
      return NULL;
    }
  /* The module is read after the paths: converting them may run Python code. */
  tether_op *h;
  MlirOperation raw;
  MlirStringRef opname = {NULL, 0};
  if (tpy_arg_op(module, &h, &raw)) opname = mlirIdentifierStr(mlirOperationGetName(raw));
  if (opname.length != 14 || memcmp(opname.data, "builtin.module", 14) != 0) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "ExecutionEngine needs a builtin.module");
    PyMem_Free(refs);
    Py_DECREF(paths);
    return NULL;
  }
  MlirExecutionEngine jit =
      tether_mlir_ee_create(mlirModuleFromOperation(raw), opt, (int)n, refs, dump, pic);
  tether_keep_alive(h);
  PyMem_Free(refs);
  Py_DECREF(paths);
  if (!jit.ptr)
    return PyErr_Format(PyExc_RuntimeError, "Failure while creating the ExecutionEngine.");
  TpEngine *self = (TpEngine *)type->tp_alloc(type, 0);
  if (!self) {
    mlirExecutionEngineDestroy(jit);
    return NULL;
  }
  self->jit = jit;
  self->module = Py_NewRef(module);
  self->keep = PyList_New(0);
  if (!self->keep) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void engine_dealloc(TpEngine *self) {
  PyTypeObject *t = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  if (self->jit.ptr) mlirExecutionEngineDestroy(self->jit);
  Py_CLEAR(self->keep);
  Py_CLEAR(self->module);
  t->tp_free(self);
  Py_DECREF(t);
}

static int engine_traverse(TpEngine *self, visitproc visit, void *arg) {
  Py_VISIT(self->keep);
  Py_VISIT(self->module);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

static tpy_sig engine_raw_lookup_sig =
    TPY_SIG("raw_lookup(func_name: str) -> int | None",
            "The address of the packed wrapper of a function (0: none).");

static PyObject *engine_raw_lookup(TpEngine *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  PyObject *name;
  if (!tpy_fastargs(&engine_raw_lookup_sig, args, nargs, kwnames, &name, 1)) return NULL;
  MlirStringRef s;
  if (!engine_alive(self) || !tpy_arg_str(name, "func_name", &s)) return NULL;
  return PyLong_FromVoidPtr(mlirExecutionEngineLookupPacked(self->jit, s));
}

static tpy_sig engine_raw_register_sig =
    TPY_SIG("raw_register_runtime(name: str, callback: Any) -> None",
            "`callback` (a ctypes pointer) as symbol `name`.");

static PyObject *engine_raw_register(TpEngine *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&engine_raw_register_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *name = a[0], *cb = a[1];
  MlirStringRef s;
  if (!engine_alive(self) || !tpy_arg_str(name, "name", &s)) return NULL;
  /* A ctypes pointer (c_void_p: .value) or an int address. */
  PyObject *value = PyLong_Check(cb) ? Py_NewRef(cb) : PyObject_GetAttrString(cb, "value");
  if (!value) return NULL;
  void *sym = PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  if (!sym) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the callback's address is null");
    return NULL;
  }
  if (PyList_Append(self->keep, cb) < 0) return NULL;
  mlirExecutionEngineRegisterSymbol(self->jit, s, sym);
  Py_RETURN_NONE;
}

static tpy_sig engine_dump_sig =
    TPY_SIG("dump_to_object_file(file_name: str) -> None", "The compiled object code into a file.");

static PyObject *engine_dump(TpEngine *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  PyObject *name;
  if (!tpy_fastargs(&engine_dump_sig, args, nargs, kwnames, &name, 1)) return NULL;
  MlirStringRef s;
  if (!engine_alive(self) || !tpy_arg_str(name, "file_name", &s)) return NULL;
  mlirExecutionEngineDumpToObjectFile(self->jit, s);
  Py_RETURN_NONE;
}

#if TETHER_MLIR_VERSION >= 22
/* initialize(): runs the module's global constructors (once), as upstream 22 (MLIR 19 ran them
 * when the engine was made, and upstream 19 has no such method). */
static PyObject *engine_initialize(TpEngine *self, PyObject *unused) {
  (void)unused;
  if (!engine_alive(self)) return NULL;
  tether_mlir_ee_initialize(self->jit);
  Py_RETURN_NONE;
}
#endif

static PyObject *engine_release(TpEngine *self, PyObject *unused) {
  (void)unused;
  /* Upstream's testing hook: forget (leak) the engine. */
  self->jit.ptr = NULL;
  Py_RETURN_NONE;
}

static PyObject *engine_capsule(TpEngine *self, void *c) {
  (void)c;
  if (!engine_alive(self)) return NULL;
  return tpy_capsule_with_owner(self->jit.ptr, "mlir.execution_engine.ExecutionEngine._CAPIPtr",
                                (PyObject *)self);
}

/* _CAPICreate(capsule): the engine a capsule of ours came from (one engine, one owner: a second
 * object over the same engine would destroy it twice). */
static PyObject *engine_from_capsule(PyObject *cls, PyObject *cap) {
  PyObject *owner = tpy_capsule_owner(cap); /* borrowed */
  if (!owner || !tpy_is(owner, (PyTypeObject *)cls))
    return PyErr_Format(PyExc_TypeError, "expected an ExecutionEngine._CAPIPtr capsule");
  return Py_NewRef(owner);
}

static PyMethodDef engine_methods[] = {
    {"_CAPICreate", (PyCFunction)engine_from_capsule, METH_O | METH_CLASS,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> ExecutionEngine",
                "The ExecutionEngine a _CAPIPtr capsule came from.")},
    {"raw_lookup", TPY_FASTFN(engine_raw_lookup), TPY_FAST, TPY_DOC(engine_raw_lookup_sig)},
    {"raw_register_runtime", TPY_FASTFN(engine_raw_register), TPY_FAST,
     TPY_DOC(engine_raw_register_sig)},
    {"dump_to_object_file", TPY_FASTFN(engine_dump), TPY_FAST, TPY_DOC(engine_dump_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"initialize", (PyCFunction)engine_initialize, METH_NOARGS,
     TPY_SIGDOC("initialize() -> None", "Run the module's global constructors (once).")},
#endif
    {"_testing_release", (PyCFunction)engine_release, METH_NOARGS,
     TPY_SIGDOC("_testing_release() -> None", "Releases (leaks) the backing engine (for tests).")},
    TPY_METHODS_END,
};

static PyGetSetDef engine_getset[] = {
    {"_CAPIPtr", (getter)engine_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot engine_slots[] = {
    {Py_tp_new, engine_new},
    {Py_tp_init, tpy_init_noop},
    {Py_tp_dealloc, engine_dealloc},
    {Py_tp_traverse, engine_traverse},
    {Py_tp_methods, engine_methods},
    {Py_tp_getset, engine_getset},
    {Py_tp_doc, TPY_DOC(engine_new_sig)},
    {0, NULL},
};

static PyType_Spec engine_spec = {"tether.ir.ExecutionEngine", sizeof(TpEngine), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                                  engine_slots};

int tpy_init_execution_engine(PyObject *m) {
  PyObject *t = tpy_type_from_spec(NULL, &engine_spec, NULL);
  if (!t) return -1;
  if (PyModule_AddObject(m, "_ExecutionEngine", t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  return 0;
}
