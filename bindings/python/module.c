/* module.c: the _tether module: types, exceptions, Context, collection and safe points.
 *
 * Invariant: MLIR IR is destroyed only at tether safe points, which this module reaches with the
 * GIL held: inside tether calls, in tether.collect(), and in a pending call that the arena's
 * notifier schedules when the collector queued work. After interpreter shutdown begins, nothing is
 * destroyed (tether_shutdown).
 */
#include "tether_py.h"

#include <stdlib.h>
#include <string.h>

TpState tp;

/* ---- errors ---------------------------------------------------------------------------------- */

static const char *kind_name(const void *handle) {
  switch (tether_handle_kind(handle)) {
  case TETHER_KIND_OP:
    return "operation";
  case TETHER_KIND_REGION:
    return "region";
  case TETHER_KIND_BLOCK:
    return "block";
  default:
    return "value";
  }
}

PyObject *tp_raise(int rc, const void *handle, tether_arena *arena) {
  const char *diag = arena ? tether_arena_last_error(arena) : "";
  const char *sep = *diag ? ":\n" : "";
  if (rc == TETHER_EINVALID) {
    const char *what = handle ? kind_name(handle) : "object";
    switch (handle ? tether_handle_reason(handle) : TETHER_REASON_NONE) {
    case TETHER_REASON_ERASED:
      return PyErr_Format(tp.InvalidatedError, "the %s was erased", what);
    case TETHER_REASON_PARENT_ERASED:
      return PyErr_Format(tp.InvalidatedError,
                          "the %s is gone: an ancestor was erased with it (parent erased)", what);
    case TETHER_REASON_REMOVED:
      return PyErr_Format(tp.InvalidatedError,
                          "the %s was removed by a pass or another change to the IR", what);
    default:
      return PyErr_Format(tp.InvalidatedError, "the %s is no longer valid", what);
    }
  }
  switch (rc) {
  case TETHER_EPARSE:
  case TETHER_EVERIFY:
  case TETHER_EPASS:
    return PyErr_Format(tp.MLIRError, "%s%s%s", tether_strerror(rc), sep, diag);
  case TETHER_ENOMEM:
    return PyErr_NoMemory();
  case TETHER_ERANGE:
    return PyErr_Format(PyExc_IndexError, "index out of range");
  case TETHER_EBUSY:
    return PyErr_Format(PyExc_ValueError,
                        "cannot erase: results of the operation are still used outside it");
  case TETHER_ECONTEXT:
    return PyErr_Format(PyExc_ValueError, "objects of different contexts cannot be mixed");
  case TETHER_ESTATE:
    return PyErr_Format(PyExc_ValueError, "the object already has a parent: detach it first");
  default:
    return PyErr_Format(PyExc_ValueError, "%s%s%s", tether_strerror(rc), sep, diag);
  }
}

PyObject *tp_type_error(const char *what, const char *expected, PyObject *got) {
  return PyErr_Format(PyExc_TypeError, "%s must be %s, not %s", what, expected,
                      got == Py_None ? "None" : Py_TYPE(got)->tp_name);
}

/* ---- printing -------------------------------------------------------------------------------- */

void tp_strbuf_append(MlirStringRef s, void *user) {
  tp_strbuf *b = user;
  if (b->failed) return;
  if (b->len + s.length + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap : 256;
    while (b->len + s.length + 1 > ncap) ncap *= 2;
    char *p = realloc(b->data, ncap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->data = p;
    b->cap = ncap;
  }
  memcpy(b->data + b->len, s.data, s.length);
  b->len += s.length;
}

PyObject *tp_strbuf_finish(tp_strbuf *b) {
  PyObject *r = b->failed
                    ? PyErr_NoMemory()
                    : PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t)b->len, "replace");
  free(b->data);
  b->data = NULL;
  return r;
}

/* ---- Context --------------------------------------------------------------------------------- */

static PyObject *context_wrap(PyTypeObject *type, tether_arena *a) {
  TpContext *self = (TpContext *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pin = tether_pin(a);
  if (self->pin < 0) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->arena = a;
  tether_arena_set_user(a, self);
  return (PyObject *)self;
}

PyObject *tp_context_of(tether_arena *a) {
  if (!a) Py_RETURN_NONE;
  PyObject *o = tether_arena_get_user(a);
  if (o) return Py_NewRef(o);
  return context_wrap(tp.Context, a);
}

static PyObject *context_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
    return PyErr_Format(PyExc_TypeError, "Context() takes no arguments");
  tether_arena *a;
  int rc = tether_arena_create(&a);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, NULL);
  return context_wrap(type, a);
}

static void context_dealloc(TpContext *self) {
  if (self->arena && tether_arena_get_user(self->arena) == self)
    tether_arena_set_user(self->arena, NULL);
  if (self->pin >= 0) tether_unpin(self->pin);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

int tp_arg_context(PyObject *o, tether_arena **out) {
  if (!PyObject_TypeCheck(o, tp.Context)) return tp_type_error("context", "a Context", o), 0;
  *out = ((TpContext *)o)->arena;
  return 1;
}

static PyObject *context_get_allow(TpContext *self, void *c) {
  (void)c;
  return PyBool_FromLong(
      mlirContextGetAllowUnregisteredDialects(tether_arena_context(self->arena)));
}

static int context_set_allow(TpContext *self, PyObject *v, void *c) {
  (void)c;
  if (!v || !PyBool_Check(v))
    return tp_type_error("allow_unregistered_dialects", "a bool", v ? v : Py_None), -1;
  tether_arena_allow_unregistered(self->arena, v == Py_True);
  return 0;
}

/* The counters answer "what is alive now": they first run the arena's collection, so IR that no
 * Python object reaches any more (after `del` or gc.collect()) is not counted. */
static PyObject *context_live_ops(TpContext *self, PyObject *unused) {
  (void)unused;
  tether_collect_all();
  tether_arena_stats s;
  tether_arena_get_stats(self->arena, &s);
  return PyLong_FromSsize_t(s.handles[TETHER_KIND_OP]);
}

typedef struct {
  MlirIdentifier module_name;
  Py_ssize_t n;
} count_modules;

static void count_module_root(tether_kind kind, void *root, void *user) {
  count_modules *c = user;
  if (kind == TETHER_KIND_OP &&
      mlirIdentifierEqual(mlirOperationGetName((MlirOperation){root}), c->module_name))
    c->n++;
}

static PyObject *context_live_modules(TpContext *self, PyObject *unused) {
  (void)unused;
  tether_collect_all();
  MlirContext ctx = tether_arena_context(self->arena);
  count_modules c = {mlirIdentifierGet(ctx, mlirStringRefCreateFromCString("builtin.module")), 0};
  tether_arena_foreach_root(self->arena, count_module_root, &c);
  return PyLong_FromSsize_t(c.n);
}

static PyObject *context_live_roots(TpContext *self, PyObject *unused) {
  (void)unused;
  tether_collect_all();
  tether_arena_stats s;
  tether_arena_get_stats(self->arena, &s);
  return PyLong_FromSsize_t(s.roots);
}

static PyObject *context_load_all(TpContext *self, PyObject *unused) {
  (void)unused;
  mlirContextLoadAllAvailableDialects(tether_arena_context(self->arena));
  Py_RETURN_NONE;
}

static PyObject *context_enable_mt(TpContext *self, PyObject *enable) {
  int on = PyObject_IsTrue(enable);
  if (on < 0) return NULL;
  mlirContextEnableMultithreading(tether_arena_context(self->arena), on);
  Py_RETURN_NONE;
}

static PyObject *context_is_registered(TpContext *self, PyObject *name) {
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(name, &n);
  if (!s) return NULL;
  return PyBool_FromLong(mlirContextIsRegisteredOperation(tether_arena_context(self->arena),
                                                          (MlirStringRef){s, (size_t)n}));
}

static PyObject *context_capsule(TpContext *self, void *c) {
  (void)c;
  return PyCapsule_New(tether_arena_context(self->arena).ptr, "mlir.ir.Context._CAPIPtr", NULL);
}

static PyObject *context_arena_capsule(TpContext *self, void *c) {
  (void)c;
  return PyCapsule_New(self->arena, "tether.arena", NULL);
}

static PyMethodDef context_methods[] = {
    {"_get_live_operation_count", (PyCFunction)context_live_ops, METH_NOARGS,
     "After a collection: the operations of this context's IR that have a handle (an object was "
     "made for them) and are still alive."},
    {"_get_live_module_count", (PyCFunction)context_live_modules, METH_NOARGS,
     "After a collection: the builtin.module roots of this context still alive."},
    {"_get_live_root_count", (PyCFunction)context_live_roots, METH_NOARGS,
     "After a collection: live roots (parsed or created operations, detached operations, "
     "regions and blocks)."},
    {"load_all_available_dialects", (PyCFunction)context_load_all, METH_NOARGS, NULL},
    {"is_registered_operation", (PyCFunction)context_is_registered, METH_O, NULL},
    {"enable_multithreading", (PyCFunction)context_enable_mt, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef context_getset[] = {
    {"allow_unregistered_dialects", (getter)context_get_allow, (setter)context_set_allow, NULL,
     NULL},
    {"_CAPIPtr", (getter)context_capsule, NULL, "The MlirContext as a capsule.", NULL},
    {"_arena", (getter)context_arena_capsule, NULL, "The tether_arena as a capsule.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot context_slots[] = {
    {Py_tp_new, context_new},
    {Py_tp_dealloc, context_dealloc},
    {Py_tp_methods, context_methods},
    {Py_tp_getset, context_getset},
    {Py_tp_doc, "An MLIR context with every upstream dialect available."},
    {0, NULL},
};

PyType_Spec tp_context_spec = {"tether._tether.Context", sizeof(TpContext), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, context_slots};

/* ---- collection and safe points -------------------------------------------------------------- */

static int pending_scheduled;

static int pending_safepoint(void *arg) {
  (void)arg;
  pending_scheduled = 0;
  if (!_Py_IsFinalizing()) tether_safepoint_all();
  return 0;
}

/* Called by the arena (maybe on a thread without the GIL) when the collector queued work. */
static void notifier(void) {
  if (__atomic_exchange_n(&pending_scheduled, 1, __ATOMIC_ACQ_REL)) return;
  if (Py_AddPendingCall(pending_safepoint, NULL) != 0) pending_scheduled = 0;
}

static PyObject *mod_collect(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  /* Python first, so wrappers it frees unpin their handles; then the arena, twice around a second
   * Python collection for wrappers that only became garbage now. */
  for (int i = 0; i < 2; i++) {
    PyGC_Collect();
    tether_collect_all();
  }
  Py_RETURN_NONE;
}

static PyObject *mod_shutdown(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  tether_shutdown();
  Py_RETURN_NONE;
}

static PyObject *mod_stats(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  tether_global_stats g;
  tether_get_global_stats(&g);
  return Py_BuildValue("{s:n,s:n,s:n,s:n}", "arenas", g.arenas, "arenas_pending", g.arenas_pending,
                       "pins", g.pins, "threads", g.threads);
}

static PyObject *mod_set_casters(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *tc, *ac;
  if (!PyArg_ParseTuple(args, "OO", &tc, &ac)) return NULL;
  Py_XSETREF(tp.type_caster, Py_NewRef(tc));
  Py_XSETREF(tp.attr_caster, Py_NewRef(ac));
  Py_RETURN_NONE;
}

static PyMethodDef module_functions[] = {
    {"collect", mod_collect, METH_NOARGS,
     "Runs Python's collection, then the arena's, and destroys unreachable IR."},
    {"_shutdown", mod_shutdown, METH_NOARGS, "Stops all IR destruction (interpreter exit)."},
    {"_global_stats", mod_stats, METH_NOARGS, "Process-wide arena counters."},
    {"_set_casters", mod_set_casters, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* ---- module ---------------------------------------------------------------------------------- */

static int add_type(PyObject *m, PyType_Spec *spec, PyObject *base, PyTypeObject **out) {
  PyObject *t = PyType_FromModuleAndSpec(m, spec, base);
  if (!t) return -1;
  const char *dot = strrchr(spec->name, '.');
  if (PyModule_AddObjectRef(m, dot ? dot + 1 : spec->name, t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  *out = (PyTypeObject *)t; /* the module state keeps this reference for the process */
  return 0;
}

static int add_functions(PyObject *m, PyMethodDef *defs) { return PyModule_AddFunctions(m, defs); }

static int exec_module(PyObject *m) {
  if (tp.Context) {
    PyErr_SetString(PyExc_ImportError, "tether._tether can be loaded once per process");
    return -1;
  }
  if (add_type(m, &tp_context_spec, NULL, &tp.Context) < 0 ||
      add_type(m, &tp_module_spec, NULL, &tp.Module) < 0 ||
      add_type(m, &tp_operation_spec, NULL, &tp.Operation) < 0 ||
      add_type(m, &tp_region_spec, NULL, &tp.Region) < 0 ||
      add_type(m, &tp_block_spec, NULL, &tp.Block) < 0 ||
      add_type(m, &tp_value_spec, NULL, &tp.Value) < 0 ||
      add_type(m, &tp_opresult_spec, (PyObject *)tp.Value, &tp.OpResult) < 0 ||
      add_type(m, &tp_blockarg_spec, (PyObject *)tp.Value, &tp.BlockArgument) < 0 ||
      add_type(m, &tp_type_spec, NULL, &tp.Type) < 0 ||
      add_type(m, &tp_attribute_spec, NULL, &tp.Attribute) < 0 ||
      add_type(m, &tp_location_spec, NULL, &tp.Location) < 0 ||
      add_type(m, &tp_passmanager_spec, NULL, &tp.PassManager) < 0 ||
      add_type(m, &tp_list_spec, NULL, &tp.List) < 0 ||
      add_type(m, &tp_iter_spec, NULL, &tp.Iter) < 0)
    return -1;
  tp.MLIRError = PyErr_NewExceptionWithDoc(
      "tether._tether.MLIRError", "MLIR reported errors; the message holds its diagnostics.", NULL,
      NULL);
  tp.InvalidatedError = PyErr_NewExceptionWithDoc(
      "tether._tether.InvalidatedError",
      "The object stands for IR that was erased, removed by a pass, or destroyed.",
      PyExc_RuntimeError, NULL);
  if (!tp.MLIRError || !tp.InvalidatedError ||
      PyModule_AddObjectRef(m, "MLIRError", tp.MLIRError) < 0 ||
      PyModule_AddObjectRef(m, "InvalidatedError", tp.InvalidatedError) < 0)
    return -1;
  if (add_functions(m, tp_ir_functions) < 0 || add_functions(m, tp_type_functions) < 0) return -1;
  tether_set_notifier(notifier);
  return 0;
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_tether",
    "tether's C extension: MLIR handles on a garbage-collected arena.",
    0,
    module_functions,
    slots,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__tether(void) { return PyModuleDef_Init(&module_def); }
