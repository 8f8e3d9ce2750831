/* context.c: Context (upstream mlir.ir.Context): the object standing for an arena and its
 * MLIRContext; its settings, live counts, capsules and `with`; the identifiers of attribute names.
 *
 * Invariant: a Context object pins its arena; the arena's user pointer is the one Context object
 * standing for it while that object lives, so `x.context is ctx` holds for everything made in ctx.
 * When it goes, its handlers are detached and a collection is scheduled (its MLIRContext should go
 * soon, as upstream's does when its last reference goes).
 */
#include "context.h"

#include <mlir-c/RegisterEverything.h>
#include <string.h>

static Py_ssize_t live_contexts;

static PyObject *context_wrap(PyTypeObject *type, tether_arena *a) {
  TpContext *self = (TpContext *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pin = tpy_pin(a);
  if (self->pin < 0) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->arena = a;
  self->handlers = PyList_New(0);
  if (!self->handlers) {
    Py_DECREF(self);
    return NULL;
  }
  tether_arena_set_user(a, self);
  live_contexts++;
  return (PyObject *)self;
}

PyObject *tpy_context_of(tether_arena *a) {
  if (!a) Py_RETURN_NONE;
  PyObject *o = tether_arena_get_user(a);
  if (o) return Py_NewRef(o);
  return context_wrap(tpy.Context, a);
}

#if TETHER_MLIR_VERSION >= 22
/* The rest of upstream 22's Context(load_on_create_dialects=None, thread_pool=None): the pool
 * installed, and each dialect named loaded as `ctx.dialects[name]` does (IndexError when there is
 * none). Without a list, dialects load when first needed, as on every tether Context. */
static int context_setup(PyObject *self, PyObject *dialects, PyObject *pool) {
  if (pool && pool != Py_None) {
    PyObject *r = PyObject_CallMethod(self, "set_thread_pool", "O", pool);
    if (!r) return -1;
    Py_DECREF(r);
  }
  if (!dialects || dialects == Py_None) return 0;
  /* The program named the dialects it wants: a capsule leaving loads no others (as upstream's). */
  ((TpContext *)self)->dialects_exposed = true;
  PyObject *names = PySequence_List(dialects);
  PyObject *by_name = names ? PyObject_GetAttrString(self, "dialects") : NULL;
  int rc = by_name ? 0 : -1;
  for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(names); i++) {
    PyObject *d = PyObject_GetItem(by_name, PyList_GET_ITEM(names, i));
    rc = d ? 0 : -1;
    Py_XDECREF(d);
  }
  Py_XDECREF(by_name);
  Py_XDECREF(names);
  return rc;
}
#endif

#if TETHER_MLIR_VERSION >= 22
static tpy_sig context_new_sig =
    TPY_SIG("Context(load_on_create_dialects: Sequence[str] | None = None, "
            "thread_pool: ThreadPool | None = None)",
            "An MLIR context with every upstream dialect available.");
#else
static tpy_sig context_new_sig =
    TPY_SIG("Context()", "An MLIR context with every upstream dialect available.");
#endif

static PyObject *context_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
#if TETHER_MLIR_VERSION >= 22
  PyObject *opt[2];
  if (!tpy_args(&context_new_sig, args, kw, opt, 2)) return NULL;
#else
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
    return PyErr_Format(PyExc_TypeError, "Context() takes no arguments");
#endif
  tether_arena *a;
  int rc = tether_arena_create(&a);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, NULL);
  /* As upstream's package does for every Context: the LLVM IR translations, which passes that
   * translate to LLVM IR (gpu-module-to-binary) need. Lost in the noise of the dialect
   * registration (a Context takes about 3 ms either way). */
  mlirRegisterAllLLVMTranslations(tether_arena_context(a));
  tpy_append_global_registry(a);
  PyObject *self = context_wrap(type, a);
#if TETHER_MLIR_VERSION >= 22
  if (self && context_setup(self, opt[0], opt[1]) < 0) Py_CLEAR(self);
#endif
  return self;
}

static int context_traverse(TpContext *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->handlers);
  Py_VISIT(self->diag_deferred);
  return 0;
}

static int context_clear(TpContext *self) {
  Py_CLEAR(self->handlers);
  Py_CLEAR(self->diag_deferred);
  return 0;
}

int tpy_identifier_cached(PyObject *ctx, PyObject *key, MlirIdentifier *out) {
  TpContext *c = (TpContext *)ctx;
  size_t slot = ((uintptr_t)key >> 4) & 15;
  if (c->idents[slot].key != key) return 0;
  *out = c->idents[slot].id;
  return 1;
}

MlirIdentifier tpy_identifier(PyObject *ctx, PyObject *key, MlirStringRef s) {
  TpContext *c = (TpContext *)ctx;
  size_t slot = ((uintptr_t)key >> 4) & 15;
  /* The entry holds its str: while it is there, no other object has its address. */
  if (c->idents[slot].key == key) return c->idents[slot].id;
  MlirIdentifier id = mlirIdentifierGet(tether_arena_context(c->arena), s);
  Py_XSETREF(c->idents[slot].key, Py_NewRef(key));
  c->idents[slot].id = id;
  return id;
}

static void context_dealloc(TpContext *self) {
  PyObject_GC_UnTrack(self);
  for (size_t i = 0; i < sizeof self->idents / sizeof self->idents[0]; i++)
    Py_CLEAR(self->idents[i].key);
  if (self->arena) {
    tpy_diagnostics_detach_all(self);
    if (tether_arena_get_user(self->arena) == self) tether_arena_set_user(self->arena, NULL);
    live_contexts--;
    tpy_schedule_collection();
  }
  context_clear(self);
  if (self->arena && self->pin >= 0) tpy_unpin(self->pin);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyObject *context_get_allow(TpContext *self, void *c) {
  (void)c;
  return PyBool_FromLong(
      mlirContextGetAllowUnregisteredDialects(tether_arena_context(self->arena)));
}

static int context_set_allow(TpContext *self, PyObject *v, void *c) {
  (void)c;
  if (!v) return PyErr_SetString(PyExc_AttributeError, "cannot delete"), -1;
  int on = PyObject_IsTrue(v);
  if (on < 0) return -1;
  tether_arena_allow_unregistered(self->arena, on);
  return 0;
}

static PyObject *context_get_emit(TpContext *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->emit_error_diagnostics);
}

static int context_set_emit(TpContext *self, PyObject *v, void *c) {
  (void)c;
  if (!v) return PyErr_SetString(PyExc_AttributeError, "cannot delete"), -1;
  int on = PyObject_IsTrue(v);
  if (on < 0) return -1;
  self->emit_error_diagnostics = on;
  return 0;
}

static PyObject *context_live_count(PyObject *cls, PyObject *unused) {
  (void)cls;
  (void)unused;
  return PyLong_FromSsize_t(live_contexts);
}

static PyObject *context_live_roots(TpContext *self, PyObject *unused) {
  (void)unused;
  tether_collect_all();
  tether_arena_stats s;
  tether_arena_get_stats(self->arena, &s);
  return PyLong_FromSsize_t(s.roots);
}

/* The arena's counters as they are (no collection first): tether's addition, for tests and
 * diagnosis of memory use. */
static PyObject *context_arena_stats(TpContext *self, PyObject *unused) {
  (void)unused;
  tether_arena_stats s;
  tether_arena_get_stats(self->arena, &s);
  return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n}", "roots", s.roots, "pending", s.pending, "stuck",
                       s.stuck, "destroyed", s.destroyed, "table_slots", s.table_slots);
}

static PyObject *context_again(TpContext *self, PyObject *unused) {
  (void)unused;
  return tpy_context_of(self->arena);
}

static PyObject *context_load_all(TpContext *self, PyObject *unused) {
  (void)unused;
  mlirContextLoadAllAvailableDialects(tether_arena_context(self->arena));
  Py_RETURN_NONE;
}

static PyObject *context_enable_mt(TpContext *self, PyObject *enable) {
  int on = PyObject_IsTrue(enable);
  if (on < 0) return NULL;
  self->threads_off = !on;
  /* While suspended, MLIR's setting changes when the suspension ends. */
  if (!self->threads_suspended)
    mlirContextEnableMultithreading(tether_arena_context(self->arena), on);
  Py_RETURN_NONE;
}

#if TETHER_MLIR_VERSION >= 22
/* set_thread_pool(pool): multithreading through pool (MLIR wants it off first). The pool is never
 * destroyed from then on (thread_pool.c). */
static PyObject *context_set_thread_pool(TpContext *self, PyObject *pool) {
  MlirLlvmThreadPool p;
  if (!tpy_arg_thread_pool(pool, &p)) return NULL;
  if (self->threads_suspended) {
    /* A pass written in Python runs with multithreading suspended (tpy_context_threads_suspend);
     * a pool set from inside it would turn threads back on under the running pass. */
    PyErr_SetString(
        PyExc_RuntimeError,
        "set_thread_pool cannot be called while a pass or pattern of this context runs");
    return NULL;
  }
  MlirContext c = tether_arena_context(self->arena);
  mlirContextEnableMultithreading(c, false);
  mlirContextSetThreadPool(c, p); /* turns multithreading on, with this pool */
  self->threads_off = false;
  Py_RETURN_NONE;
}

static PyObject *context_num_threads(TpContext *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromUnsignedLong(mlirContextGetNumThreads(tether_arena_context(self->arena)));
}

/* The address of the context's thread pool ("0" without one). MLIR hands out the pool it keeps
 * (with multithreading off, the external pool it remembers, or none): nothing is dereferenced. */
static PyObject *context_pool_ptr(TpContext *self, PyObject *unused) {
  (void)unused;
  return tpy_thread_pool_ptr_str(mlirContextGetThreadPool(tether_arena_context(self->arena)));
}
#endif

void tpy_context_threads_suspend(TpContext *ctx) {
  if (ctx->threads_suspended++ == 0 && !ctx->threads_off)
    mlirContextEnableMultithreading(tether_arena_context(ctx->arena), false);
}

void tpy_context_threads_resume(TpContext *ctx) {
  if (--ctx->threads_suspended == 0 && !ctx->threads_off)
    mlirContextEnableMultithreading(tether_arena_context(ctx->arena), true);
}

static PyObject *context_is_registered(TpContext *self, PyObject *name) {
  MlirStringRef s;
  if (!tpy_arg_str(name, "operation_name", &s)) return NULL;
  /* Upstream loads every available dialect into a new context; tether loads a dialect when it is
   * first needed: here, the operation's. */
  MlirContext c = tether_arena_context(self->arena);
  const char *dot = memchr(s.data, '.', s.length);
  if (dot) mlirContextGetOrLoadDialect(c, (MlirStringRef){s.data, (size_t)(dot - s.data)});
  return PyBool_FromLong(mlirContextIsRegisteredOperation(c, s));
}

void tpy_context_expose(tether_arena *a) {
  if (!a) return;
  TpContext *o = tether_arena_get_user(a);
  if (o && o->dialects_exposed) return;
  mlirContextLoadAllAvailableDialects(tether_arena_context(a));
  if (o) o->dialects_exposed = true;
}

tether_arena *tpy_arena_for_capsule(MlirContext c) {
  if (mlirContextIsNull(c)) {
    PyErr_SetString(PyExc_ValueError, "the capsule's object has no MLIR context");
    return NULL;
  }
  tether_arena *a = tether_arena_of_context(c);
  if (a) return a;
  /* A context another binding made: adopted, not owned (its maker must keep it alive). */
  int rc = tether_arena_adopt(c, false, &a);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, NULL), NULL;
  return a;
}

static PyObject *context_capsule(TpContext *self, void *c) {
  (void)c;
  tpy_context_expose(self->arena);
  return tpy_capsule_with_owner(tether_arena_context(self->arena).ptr, "mlir.ir.Context._CAPIPtr",
                                (PyObject *)self);
}

static PyObject *context_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.Context)) return tpy_context_of(((TpContext *)owner)->arena);
  void *p = tpy_capsule_pointer(cap, "mlir.ir.Context._CAPIPtr");
  if (!p) return NULL;
  return tpy_context_of(tpy_arena_for_capsule((MlirContext){p}));
}

static PyObject *context_arena_capsule(TpContext *self, void *c) {
  (void)c;
  return tpy_capsule_with_owner(self->arena, "tether.arena", (PyObject *)self);
}

static PyObject *context_enter(TpContext *self, PyObject *unused) {
  (void)unused;
  if (tpy_current_push(TPY_FRAME_CONTEXT, (PyObject *)self, NULL, NULL) < 0) return NULL;
  return Py_NewRef(self);
}

static PyObject *context_exit(TpContext *self, PyObject *args) {
  (void)args;
  if (tpy_current_pop(TPY_FRAME_CONTEXT, (PyObject *)self, "Context") < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *context_current(PyObject *cls) {
  (void)cls;
  PyObject *c = tpy_current_context();
  return Py_NewRef(c ? c : Py_None);
}

static PyMethodDef context_methods[] = {
    {"_get_live_count", (PyCFunction)context_live_count, METH_NOARGS | METH_STATIC,
     TPY_SIGDOC("_get_live_count() -> int", "Context objects alive in the process.")},
    {"_arena_stats", (PyCFunction)context_arena_stats, METH_NOARGS,
     TPY_SIGDOC(
         "_arena_stats() -> dict[str, int]",
         "The arena's counters (roots, pending, stuck, destroyed), without collecting first.")},
    {"_get_live_root_count", (PyCFunction)context_live_roots, METH_NOARGS,
     TPY_SIGDOC("_get_live_root_count() -> int",
                "After a collection: live roots (parsed or created operations, detached "
                "operations, regions and blocks).")},
    {"_get_context_again", (PyCFunction)context_again, METH_NOARGS,
     TPY_SIGDOC("_get_context_again() -> Context", NULL)},
    {"_CAPICreate", (PyCFunction)context_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> Context", NULL)},
    {"__enter__", (PyCFunction)context_enter, METH_NOARGS,
     TPY_SIGDOC("__enter__() -> Context", NULL)},
    {"__exit__", (PyCFunction)context_exit, METH_VARARGS,
     TPY_SIGDOC("__exit__(*args: object) -> None", NULL)},
    {"load_all_available_dialects", (PyCFunction)context_load_all, METH_NOARGS,
     TPY_SIGDOC("load_all_available_dialects() -> None", NULL)},
    {"is_registered_operation", (PyCFunction)context_is_registered, METH_O,
     TPY_SIGDOC("is_registered_operation(operation_name: str, /) -> bool", NULL)},
    {"enable_multithreading", (PyCFunction)context_enable_mt, METH_O,
     TPY_SIGDOC("enable_multithreading(enable: bool, /) -> None", NULL)},
#if TETHER_MLIR_VERSION >= 22
    {"set_thread_pool", (PyCFunction)context_set_thread_pool, METH_O,
     TPY_SIGDOC("set_thread_pool(pool: ThreadPool, /) -> None",
                "Runs multithreaded work on a ThreadPool (kept for the process).")},
    {"get_num_threads", (PyCFunction)context_num_threads, METH_NOARGS,
     TPY_SIGDOC("get_num_threads() -> int",
                "The number of threads the context's work may use (1 without multithreading).")},
    {"_mlir_thread_pool_ptr", (PyCFunction)context_pool_ptr, METH_NOARGS,
     TPY_SIGDOC("_mlir_thread_pool_ptr() -> str",
                "The address of the context's LLVM thread pool, as a str.")},
#endif
    {"append_dialect_registry", (PyCFunction)tpy_context_append_dialect_registry, METH_O,
     TPY_SIGDOC("append_dialect_registry(registry: DialectRegistry, /) -> None", NULL)},
    {"get_dialect_descriptor", (PyCFunction)tpy_context_get_dialect_descriptor, METH_O,
     TPY_SIGDOC("get_dialect_descriptor(dialect_name: str, /) -> DialectDescriptor",
                "The DialectDescriptor of a dialect, loading it; ValueError if unknown.")},
    {"attach_diagnostic_handler", (PyCFunction)tpy_context_attach_diagnostic_handler, METH_O,
     TPY_SIGDOC("attach_diagnostic_handler(callback: Callable[[Diagnostic], bool], /) -> "
                "DiagnosticHandler",
                "Attaches callback(Diagnostic) -> bool; returns a DiagnosticHandler.")},
    TPY_METHODS_END,
};

static PyGetSetDef context_getset[] = {
    {"allow_unregistered_dialects", (getter)context_get_allow, (setter)context_set_allow,
     TPY_PROP("bool", NULL), NULL},
    {"emit_error_diagnostics", (getter)context_get_emit, (setter)context_set_emit,
     TPY_PROP(
         "bool",
         "When True, error diagnostics go to the diagnostic handlers instead of into MLIRError."),
     NULL},
    {"_CAPIPtr", (getter)context_capsule, NULL, TPY_PROP("object", "The MlirContext as a capsule."),
     NULL},
    {"_arena", (getter)context_arena_capsule, NULL,
     TPY_PROP("object", "The tether_arena as a capsule."), NULL},
    TPY_GETSET_END,
};

static PyType_Slot context_slots[] = {
    {Py_tp_new, context_new},
    {Py_tp_dealloc, context_dealloc},
    {Py_tp_traverse, context_traverse},
    {Py_tp_clear, context_clear},
    {Py_tp_methods, context_methods},
    {Py_tp_getset, context_getset},
    {Py_tp_doc, TPY_DOC(context_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_context_spec = {
    "tether.ir.Context", sizeof(TpContext), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, context_slots};

int tpy_init_context(PyObject *m) {
  if (tpy_add_type(m, &tpy_context_spec, NULL, &tpy.Context) < 0) return -1;
  return tpy_set_classprop(tpy.Context, "current", context_current);
}
