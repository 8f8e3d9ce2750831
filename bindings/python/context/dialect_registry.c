/* dialect_registry.c: DialectRegistry (a set of dialects to append to contexts) and
 * DialectDescriptor (a loaded dialect of a context), with the Context methods that use them
 * (append_dialect_registry, get_dialect_descriptor).
 *
 * Invariant: a registry is owned by its object alone (destroyed with it); a capsule of it gives
 * back that object, and a registry made elsewhere is refused (it cannot be adopted safely). A
 * descriptor holds its Context object, like every context-owned value.
 */
#include "context.h"

#include <mlir-c/RegisterEverything.h>

typedef struct {
  PyObject_HEAD MlirDialectRegistry reg;
} TpDialectRegistry;

PyObject *tpy_context_append_dialect_registry(TpContext *self, PyObject *reg) {
  if (!tpy_is(reg, tpy.DialectRegistry))
    return tpy_type_error("registry", "a DialectRegistry", reg);
  mlirContextAppendDialectRegistry(tether_arena_context(self->arena),
                                   ((TpDialectRegistry *)reg)->reg);
  Py_RETURN_NONE;
}

/* The DialectDescriptor of a loaded (or loadable) dialect: ValueError when unknown. */
PyObject *tpy_context_get_dialect_descriptor(TpContext *self, PyObject *name) {
  MlirStringRef s;
  if (!tpy_arg_str(name, "dialect_name", &s)) return NULL;
  MlirDialect d = mlirContextGetOrLoadDialect(tether_arena_context(self->arena), s);
  if (mlirDialectIsNull(d)) {
    /* The name may be bytes (tpy_arg_str takes them): the message shows its text. */
    PyObject *text = PyUnicode_DecodeUTF8(s.data, (Py_ssize_t)s.length, "backslashreplace");
    if (text) PyErr_Format(PyExc_ValueError, "Dialect '%U' not found", text);
    Py_XDECREF(text);
    return NULL;
  }
  return tpy_ctxobj_new(tpy.DialectDescriptor, (PyObject *)self, d.ptr);
}

/* Loads the dialect in the context; ValueError when the context does not know it. */
int tpy_load_dialect(MlirContext ctx, const char *name) {
  MlirDialect d = mlirContextGetOrLoadDialect(ctx, mlirStringRefCreateFromCString(name));
  if (mlirDialectIsNull(d)) {
    PyErr_Format(PyExc_ValueError, "the %s dialect is not registered in this context", name);
    return 0;
  }
  return 1;
}

/* ---- DialectRegistry ------------------------------------------------------------------------- */

static PyObject *registry_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
    return PyErr_Format(PyExc_TypeError, "DialectRegistry() takes no arguments");
  TpDialectRegistry *self = (TpDialectRegistry *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->reg = mlirDialectRegistryCreate();
  return (PyObject *)self;
}

static void registry_dealloc(TpDialectRegistry *self) {
  if (self->reg.ptr) mlirDialectRegistryDestroy(self->reg);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyObject *registry_capsule(TpDialectRegistry *self, void *c) {
  (void)c;
  return tpy_capsule_with_owner(self->reg.ptr, "mlir.ir.DialectRegistry._CAPIPtr",
                                (PyObject *)self);
}

static PyObject *registry_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.DialectRegistry)) return Py_NewRef(owner);
  PyErr_SetString(PyExc_ValueError,
                  "DialectRegistry._CAPICreate takes a capsule made by DialectRegistry._CAPIPtr "
                  "(a registry another binding owns cannot be adopted safely)");
  return NULL;
}

/* The process's registry (ir.get_dialect_registry()): what extensions insert in it (upstream's
 * `register_dialect(get_dialect_registry())` idiom) reaches every Context created afterwards. */

static PyObject *registry_make_global(TpDialectRegistry *self, PyObject *unused) {
  (void)unused;
  Py_XSETREF(tpy.global_registry, Py_NewRef((PyObject *)self));
  Py_RETURN_NONE;
}

void tpy_append_global_registry(tether_arena *a) {
  /* Loaded too, as upstream's Context loads every available dialect on creation: an extension's
   * C API may make its types with no other way to load its dialect. */
  if (tpy.global_registry)
    tether_arena_append_registry(a, ((TpDialectRegistry *)tpy.global_registry)->reg, true);
}

static PyObject *registry_insert_all(TpDialectRegistry *self, PyObject *unused) {
  (void)unused;
  mlirRegisterAllDialects(self->reg);
  Py_RETURN_NONE;
}

static PyMethodDef registry_methods[] = {
    {"_CAPICreate", (PyCFunction)registry_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> DialectRegistry", NULL)},
    {"_register_all", (PyCFunction)registry_insert_all, METH_NOARGS,
     TPY_SIGDOC("_register_all() -> None", NULL)},
    {"_make_global", (PyCFunction)registry_make_global, METH_NOARGS,
     TPY_SIGDOC("_make_global() -> None", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef registry_getset[] = {
    {"_CAPIPtr", (getter)registry_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot registry_slots[] = {
    {Py_tp_new, registry_new},
    {Py_tp_dealloc, registry_dealloc},
    {Py_tp_methods, registry_methods},
    {Py_tp_getset, registry_getset},
    {Py_tp_doc, TPY_SIGDOC("DialectRegistry()", "A set of dialects to append to contexts.")},
    {0, NULL},
};

static PyType_Spec registry_spec = {"tether.ir.DialectRegistry", sizeof(TpDialectRegistry), 0,
                                    Py_TPFLAGS_DEFAULT, registry_slots};

/* ---- DialectDescriptor ----------------------------------------------------------------------- */

static PyObject *descriptor_namespace(PyObject *self, void *c) {
  (void)c;
  return tpy_str_from_ref(mlirDialectGetNamespace((MlirDialect){TPY_PTR(self)}));
}

static PyObject *descriptor_repr(PyObject *self) {
  PyObject *ns = tpy_str_from_ref(mlirDialectGetNamespace((MlirDialect){TPY_PTR(self)}));
  if (!ns) return NULL;
  PyObject *r = PyUnicode_FromFormat("<DialectDescriptor %U>", ns);
  Py_DECREF(ns);
  return r;
}

static PyGetSetDef descriptor_getset[] = {
    {"namespace", descriptor_namespace, NULL, TPY_PROP("str", NULL), NULL},
    {"context", tpy_ctxobj_context, NULL, TPY_PROP("Context", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot descriptor_slots[] = {
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_getset, descriptor_getset},
    {Py_tp_repr, descriptor_repr},
    {Py_tp_doc, "A loaded dialect of a context."},
    {0, NULL},
};

static PyType_Spec descriptor_spec = {"tether.ir.DialectDescriptor", sizeof(TpCtxObj), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                      descriptor_slots};

int tpy_init_dialect_registry(PyObject *m) {
  if (tpy_add_type(m, &registry_spec, NULL, &tpy.DialectRegistry) < 0 ||
      tpy_add_type(m, &descriptor_spec, NULL, &tpy.DialectDescriptor) < 0)
    return -1;
  return 0;
}
