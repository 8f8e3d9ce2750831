/* context.c: Context, the thread's stack of current context / insertion point / location (as
 * upstream's `with` semantics), InsertionPoint, DialectRegistry and DialectDescriptor.
 *
 * Invariant: a Context object pins its arena; the arena's user pointer is the one Context object
 * standing for it while that object lives, so `x.context is ctx` holds for everything made in ctx.
 * The stack holds strong references: whatever is current stays alive until its `with` ends.
 */
#include "tether_py.h"

#include <mlir-c/RegisterEverything.h>
#include <string.h>

static Py_ssize_t live_contexts;

/* ---- the thread's stack ---------------------------------------------------------------------- */

enum { FRAME_CONTEXT, FRAME_IP, FRAME_LOC };

typedef struct {
  int kind;
  PyObject *ctx, *ip, *loc; /* strong; ip and loc may be NULL */
} frame;

/* Read on every call that resolves the current context, location or insertion point: the
 * initial-exec model is a plain %fs-relative load where a shared object's default calls
 * __tls_get_addr (the same choice as libtether's, docs/benchmarks.md). */
#define TP_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static TP_TLS frame *stack;
static TP_TLS Py_ssize_t depth, cap;

static int push(int kind, PyObject *ctx, PyObject *ip, PyObject *loc) {
  if (depth == cap) {
    Py_ssize_t ncap = cap ? cap * 2 : 16;
    frame *n = PyMem_RawRealloc(stack, (size_t)ncap * sizeof *n);
    if (!n) return PyErr_NoMemory(), -1;
    stack = n;
    cap = ncap;
  }
  /* As upstream: a frame of the same context inherits the insertion point and location of the
   * frame below it; entering another context starts afresh. */
  if (depth > 0 && stack[depth - 1].ctx == ctx) {
    if (!ip) ip = stack[depth - 1].ip;
    if (!loc) loc = stack[depth - 1].loc;
  }
  stack[depth++] = (frame){kind, Py_NewRef(ctx), Py_XNewRef(ip), Py_XNewRef(loc)};
  return 0;
}

static int pop(int kind, PyObject *self, const char *what) {
  if (depth == 0) {
    PyErr_Format(PyExc_RuntimeError, "Unbalanced %s enter/exit", what);
    return -1;
  }
  frame *f = &stack[depth - 1];
  PyObject *top = kind == FRAME_CONTEXT ? f->ctx : kind == FRAME_IP ? f->ip : f->loc;
  if (f->kind != kind || top != self) {
    PyErr_Format(PyExc_RuntimeError, "Unbalanced %s enter/exit", what);
    return -1;
  }
  depth--;
  frame old = *f;
  Py_DECREF(old.ctx);
  Py_XDECREF(old.ip);
  Py_XDECREF(old.loc);
  return 0;
}

PyObject *tp_current_context(void) { return depth ? stack[depth - 1].ctx : NULL; }
PyObject *tp_current_loc(void) { return depth ? stack[depth - 1].loc : NULL; }
PyObject *tp_current_ip(void) { return depth ? stack[depth - 1].ip : NULL; }

TpContext *tp_resolve_context(PyObject *o) {
  if (o && o != Py_None) {
    if (!tp_is(o, tp.Context)) return tp_type_error("context", "a Context", o), NULL;
    return (TpContext *)o;
  }
  PyObject *c = tp_current_context();
  if (!c) {
    PyErr_SetString(PyExc_RuntimeError,
                    "An MLIR function requires a Context but none was provided in the call or "
                    "from the surrounding environment. Either pass to the function with a "
                    "'context=' argument or establish a default using 'with Context():'");
    return NULL;
  }
  return (TpContext *)c;
}

PyObject *tp_resolve_loc(PyObject *o) {
  if (o && o != Py_None) {
    if (!tp_is(o, tp.Location)) return tp_type_error("loc", "a Location", o);
    return o;
  }
  PyObject *l = tp_current_loc();
  if (!l) {
    PyErr_SetString(PyExc_RuntimeError,
                    "An MLIR function requires a Location but none was provided in the call or "
                    "from the surrounding environment. Either pass to the function with a 'loc=' "
                    "argument or establish a default using 'with loc:'");
    return NULL;
  }
  return l;
}

/* ---- class-level properties ------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD PyObject *(*fn)(PyObject *cls);
} TpClassProp;

PyObject *tp_classprop_new(PyObject *(*fn)(PyObject *cls)) {
  TpClassProp *p = PyObject_New(TpClassProp, tp.ClassProperty);
  if (p) p->fn = fn;
  return (PyObject *)p;
}

static PyObject *classprop_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)obj;
  return ((TpClassProp *)self)->fn(type);
}

static void classprop_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  PyObject_Free(self);
  Py_DECREF(t);
}

static PyType_Slot classprop_slots[] = {
    {Py_tp_descr_get, classprop_get},
    {Py_tp_dealloc, classprop_dealloc},
    {0, NULL},
};

PyType_Spec tp_classprop_spec = {"tether._tether._ClassProperty", sizeof(TpClassProp), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                 classprop_slots};

static int set_classprop(PyTypeObject *cls, const char *name, PyObject *(*fn)(PyObject *)) {
  PyObject *p = tp_classprop_new(fn);
  if (!p) return -1;
  int rc = PyObject_SetAttrString((PyObject *)cls, name, p);
  Py_DECREF(p);
  return rc;
}

/* ---- Context --------------------------------------------------------------------------------- */

static PyObject *context_wrap(PyTypeObject *type, tether_arena *a) {
  TpContext *self = (TpContext *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pin = tp_pin(a);
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
  /* As upstream's package does for every Context: the LLVM IR translations, which passes that
   * translate to LLVM IR (gpu-module-to-binary) need. Lost in the noise of the dialect
   * registration (a Context takes about 3 ms either way). */
  mlirRegisterAllLLVMTranslations(tether_arena_context(a));
  return context_wrap(type, a);
}

static int context_traverse(TpContext *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->handlers);
  return 0;
}

static int context_clear(TpContext *self) {
  Py_CLEAR(self->handlers);
  return 0;
}

int tp_identifier_cached(PyObject *ctx, PyObject *key, MlirIdentifier *out) {
  TpContext *c = (TpContext *)ctx;
  size_t slot = ((uintptr_t)key >> 4) & 15;
  if (c->idents[slot].key != key) return 0;
  *out = c->idents[slot].id;
  return 1;
}

MlirIdentifier tp_identifier(PyObject *ctx, PyObject *key, MlirStringRef s) {
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
    tp_diagnostics_detach_all(self);
    if (tether_arena_get_user(self->arena) == self) tether_arena_set_user(self->arena, NULL);
    live_contexts--;
    tp_schedule_collection();
  }
  context_clear(self);
  if (self->arena && self->pin >= 0) tp_unpin(self->pin);
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

static PyObject *context_live_ops(TpContext *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSsize_t(tp_live_operations(self->arena, NULL));
}

static PyObject *context_live_op_objects(TpContext *self, PyObject *unused) {
  (void)unused;
  PyObject *l = PyList_New(0);
  if (!l || tp_live_operations(self->arena, l) < 0) {
    Py_XDECREF(l);
    return NULL;
  }
  return l;
}

static PyObject *context_live_modules(TpContext *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSsize_t(tp_live_modules(self->arena));
}

static PyObject *context_clear_live(TpContext *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSsize_t(tp_clear_live_operations(self->arena, NULL));
}

static PyObject *context_clear_live_inside(TpContext *self, PyObject *op) {
  tether_op *h;
  MlirOperation raw;
  if (!tp_arg_op(op, &h, &raw)) return NULL;
  tp_clear_live_operations(self->arena, h);
  Py_RETURN_NONE;
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
  return Py_BuildValue("{s:n,s:n,s:n,s:n}", "roots", s.roots, "pending", s.pending, "stuck",
                       s.stuck, "destroyed", s.destroyed);
}

static PyObject *context_again(TpContext *self, PyObject *unused) {
  (void)unused;
  return tp_context_of(self->arena);
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
  MlirStringRef s;
  if (!tp_arg_str(name, "operation_name", &s)) return NULL;
  /* Upstream loads every available dialect into a new context; tether loads a dialect when it is
   * first needed: here, the operation's. */
  MlirContext c = tether_arena_context(self->arena);
  const char *dot = memchr(s.data, '.', s.length);
  if (dot) mlirContextGetOrLoadDialect(c, (MlirStringRef){s.data, (size_t)(dot - s.data)});
  return PyBool_FromLong(mlirContextIsRegisteredOperation(c, s));
}

/* Capsules keep their owner alive: the capsule's context is a strong reference to it. */
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

static PyObject *context_capsule(TpContext *self, void *c) {
  (void)c;
  return tp_capsule_with_owner(tether_arena_context(self->arena).ptr, "mlir.ir.Context._CAPIPtr",
                               (PyObject *)self);
}

static PyObject *context_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.Context)) return tp_context_of(((TpContext *)owner)->arena);
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Context._CAPIPtr");
  if (!p) return NULL;
  MlirContext ctx = {p};
  tether_arena *a = tether_arena_of_context(ctx);
  if (a) return tp_context_of(a);
  /* A context another binding made: adopted, not owned (its maker must keep it alive). */
  int rc = tether_arena_adopt(ctx, false, &a);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, NULL);
  return tp_context_of(a);
}

static PyObject *context_arena_capsule(TpContext *self, void *c) {
  (void)c;
  return tp_capsule_with_owner(self->arena, "tether.arena", (PyObject *)self);
}

static PyObject *context_enter(TpContext *self, PyObject *unused) {
  (void)unused;
  if (push(FRAME_CONTEXT, (PyObject *)self, NULL, NULL) < 0) return NULL;
  return Py_NewRef(self);
}

static PyObject *context_exit(TpContext *self, PyObject *args) {
  (void)args;
  if (pop(FRAME_CONTEXT, (PyObject *)self, "Context") < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *context_current(PyObject *cls) {
  (void)cls;
  PyObject *c = tp_current_context();
  return Py_NewRef(c ? c : Py_None);
}

typedef struct {
  PyObject_HEAD MlirDialectRegistry reg;
} TpDialectRegistry;

static PyTypeObject *DialectRegistryType, *DialectDescriptorType;

static PyObject *context_append_registry(TpContext *self, PyObject *reg) {
  if (!tp_is(reg, DialectRegistryType)) return tp_type_error("registry", "a DialectRegistry", reg);
  mlirContextAppendDialectRegistry(tether_arena_context(self->arena),
                                   ((TpDialectRegistry *)reg)->reg);
  Py_RETURN_NONE;
}

/* The DialectDescriptor of a loaded (or loadable) dialect: ValueError when unknown. */
static PyObject *context_dialect_descriptor(TpContext *self, PyObject *name) {
  MlirStringRef s;
  if (!tp_arg_str(name, "dialect_name", &s)) return NULL;
  MlirDialect d = mlirContextGetOrLoadDialect(tether_arena_context(self->arena), s);
  if (mlirDialectIsNull(d)) return PyErr_Format(PyExc_ValueError, "Dialect '%U' not found", name);
  return tp_ctxobj_new(DialectDescriptorType, (PyObject *)self, d.ptr);
}

static PyObject *context_attach_handler(TpContext *self, PyObject *cb) {
  return tp_attach_diagnostic_handler(self, cb);
}

static PyMethodDef context_methods[] = {
    {"_get_live_count", (PyCFunction)context_live_count, METH_NOARGS | METH_STATIC,
     "Context objects alive in the process."},
    {"_get_live_operation_count", (PyCFunction)context_live_ops, METH_NOARGS,
     "Operations of this context that have a live Python object."},
    {"_get_live_operation_objects", (PyCFunction)context_live_op_objects, METH_NOARGS,
     "The Operation objects of this context's live operation objects."},
    {"_get_live_module_count", (PyCFunction)context_live_modules, METH_NOARGS,
     "Module objects of this context alive."},
    {"_clear_live_operations", (PyCFunction)context_clear_live, METH_NOARGS,
     "Forgets the identity of every live operation object (they stay valid: tether objects never "
     "dangle); returns how many there were."},
    {"_clear_live_operations_inside", (PyCFunction)context_clear_live_inside, METH_O, NULL},
    {"_arena_stats", (PyCFunction)context_arena_stats, METH_NOARGS,
     "The arena's counters (roots, pending, stuck, destroyed), without collecting first."},
    {"_get_live_root_count", (PyCFunction)context_live_roots, METH_NOARGS,
     "After a collection: live roots (parsed or created operations, detached operations, "
     "regions and blocks)."},
    {"_get_context_again", (PyCFunction)context_again, METH_NOARGS, NULL},
    {"_CAPICreate", (PyCFunction)context_from_capsule, METH_O | METH_STATIC, NULL},
    {"__enter__", (PyCFunction)context_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)context_exit, METH_VARARGS, NULL},
    {"load_all_available_dialects", (PyCFunction)context_load_all, METH_NOARGS, NULL},
    {"is_registered_operation", (PyCFunction)context_is_registered, METH_O, NULL},
    {"enable_multithreading", (PyCFunction)context_enable_mt, METH_O, NULL},
    {"append_dialect_registry", (PyCFunction)context_append_registry, METH_O, NULL},
    {"get_dialect_descriptor", (PyCFunction)context_dialect_descriptor, METH_O,
     "The DialectDescriptor of a dialect, loading it; ValueError if unknown."},
    {"attach_diagnostic_handler", (PyCFunction)context_attach_handler, METH_O,
     "Attaches callback(Diagnostic) -> bool; returns a DiagnosticHandler."},
    TP_METHODS_END,
};

static PyGetSetDef context_getset[] = {
    {"allow_unregistered_dialects", (getter)context_get_allow, (setter)context_set_allow, NULL,
     NULL},
    {"emit_error_diagnostics", (getter)context_get_emit, (setter)context_set_emit,
     "When True, error diagnostics go to the diagnostic handlers instead of into MLIRError.", NULL},
    {"_CAPIPtr", (getter)context_capsule, NULL, "The MlirContext as a capsule.", NULL},
    {"_arena", (getter)context_arena_capsule, NULL, "The tether_arena as a capsule.", NULL},
    TP_GETSET_END,
};

static PyType_Slot context_slots[] = {
    {Py_tp_new, context_new},
    {Py_tp_dealloc, context_dealloc},
    {Py_tp_traverse, context_traverse},
    {Py_tp_clear, context_clear},
    {Py_tp_methods, context_methods},
    {Py_tp_getset, context_getset},
    {Py_tp_doc, "An MLIR context with every upstream dialect available."},
    {0, NULL},
};

PyType_Spec tp_context_spec = {"tether.ir.Context", sizeof(TpContext), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                               context_slots};

/* ---- Location enter/exit (the rest of Location is in locations.c) ------------------------------
 */

PyObject *tp_location_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  if (push(FRAME_LOC, TP_CTX(self), NULL, self) < 0) return NULL;
  return Py_NewRef(self);
}

PyObject *tp_location_exit(PyObject *self, PyObject *args) {
  (void)args;
  if (pop(FRAME_LOC, self, "Location") < 0) return NULL;
  Py_RETURN_NONE;
}

/* ---- InsertionPoint -------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD PyObject *block; /* Block */
  PyObject *ref;                 /* the operation to insert before (an _OperationBase), or NULL */
} TpIP;

static PyObject *ip_make(PyTypeObject *type, PyObject *block, PyObject *ref) {
  TpIP *self = (TpIP *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->block = Py_NewRef(block);
  self->ref = Py_XNewRef(ref);
  return (PyObject *)self;
}

static PyObject *ip_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"beforeOperation_or_block", NULL};
  PyObject *x;
  if (!tp_args("InsertionPoint", args, kw, names, 1, 1, &x)) return NULL;
  if (tp_is(x, tp.Block)) {
    MlirBlock raw;
    tether_block *bh;
    if (!tp_arg_block(x, &bh, &raw)) return NULL;
    return ip_make(type, x, NULL);
  }
  if (tp_is(x, tp.OperationBase)) {
    tether_op *h;
    MlirOperation raw;
    if (!tp_arg_op(x, &h, &raw)) return NULL;
    tether_block *b;
    int rc = tether_op_block(h, &b);
    if (rc != TETHER_OK) return TP_RAISE_RC(rc, h);
    if (!b) return PyErr_Format(PyExc_ValueError, "Operation has no parent block.");
    PyObject *bo = tp_wrap_block(b);
    if (!bo) return NULL;
    PyObject *r = ip_make(type, bo, x);
    Py_DECREF(bo);
    return r;
  }
  return tp_type_error("InsertionPoint argument", "a Block or an operation", x);
}

static int ip_traverse(TpIP *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->block);
  Py_VISIT(self->ref);
  return 0;
}

static int ip_clear(TpIP *self) {
  Py_CLEAR(self->block);
  Py_CLEAR(self->ref);
  return 0;
}

static void ip_dealloc(TpIP *self) {
  PyObject_GC_UnTrack(self);
  ip_clear(self);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyObject *ip_at_block_begin(PyObject *cls, PyObject *block) {
  tether_block *bh;
  MlirBlock raw;
  if (!tp_arg_block(block, &bh, &raw)) return NULL;
  tether_op *first;
  int rc = tether_block_first_op(bh, &first);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, bh);
  if (!first) return ip_make((PyTypeObject *)cls, block, NULL);
  PyObject *f = tp_wrap_operation(first);
  if (!f) return NULL;
  PyObject *r = ip_make((PyTypeObject *)cls, block, f);
  Py_DECREF(f);
  return r;
}

static PyObject *ip_at_block_terminator(PyObject *cls, PyObject *block) {
  tether_block *bh;
  MlirBlock raw;
  if (!tp_arg_block(block, &bh, &raw)) return NULL;
  tether_op *term;
  int rc = tether_block_terminator(bh, &term);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, bh);
  if (!term) return PyErr_Format(PyExc_ValueError, "Block has no terminator");
  PyObject *t = tp_wrap_operation(term);
  if (!t) return NULL;
  PyObject *r = ip_make((PyTypeObject *)cls, block, t);
  Py_DECREF(t);
  return r;
}

int tp_ip_target(PyObject *ipo, tether_block **block, tether_op **before) {
  TpIP *ip = (TpIP *)ipo;
  *before = NULL;
  if (ip->ref) {
    MlirBlock braw;
    MlirOperation rraw;
    return tp_arg_block(ip->block, block, &braw) && tp_arg_op(ip->ref, before, &rraw) ? 0 : -1;
  }
  /* At the end of the block (ip->block is a Block: checked when the InsertionPoint was made);
   * the terminator check also checks the block's handle. */
  *block = ((TpHandle *)ip->block)->h;
  bool term;
  int rc = tether_block_has_terminator(*block, &term);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, *block), -1;
  if (term) {
    PyErr_SetString(PyExc_IndexError,
                    "Cannot insert operation at the end of a block that already has a "
                    "terminator. Did you mean to use 'InsertionPoint.at_block_terminator(block)' "
                    "versus 'InsertionPoint(block)'?");
    return -1;
  }
  return 0;
}

int tp_ip_insert(PyObject *ipo, tether_op *op) {
  bool root;
  int rc = tether_op_is_root(op, &root);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, op), -1;
  tether_block *parent;
  rc = tether_op_block(op, &parent);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, op), -1;
  if (parent || !root) {
    PyErr_SetString(PyExc_ValueError, "Attempt to insert operation that is already attached");
    return -1;
  }
  tether_block *bh;
  tether_op *ref;
  if (tp_ip_target(ipo, &bh, &ref) < 0) return -1;
  rc = ref ? tether_op_move_before(op, ref) : tether_block_append_op(bh, op);
  if (rc == TETHER_EARG) {
    PyErr_SetString(PyExc_ValueError, "cannot insert an operation into itself");
    return -1;
  }
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, op), -1;
  return 0;
}

static PyObject *ip_insert(TpIP *self, PyObject *operation) {
  tether_op *h;
  MlirOperation raw;
  if (!tp_arg_op(operation, &h, &raw)) return NULL;
  if (tp_ip_insert((PyObject *)self, h) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *ip_context_of(TpIP *self) {
  tether_block *bh;
  MlirBlock raw;
  if (!tp_arg_block(self->block, &bh, &raw)) return NULL;
  return tp_context_of(tether_handle_arena(bh));
}

static PyObject *ip_enter(TpIP *self, PyObject *unused) {
  (void)unused;
  PyObject *ctx = ip_context_of(self);
  if (!ctx) return NULL;
  int rc = push(FRAME_IP, ctx, (PyObject *)self, NULL);
  Py_DECREF(ctx);
  if (rc < 0) return NULL;
  return Py_NewRef(self);
}

static PyObject *ip_exit(TpIP *self, PyObject *args) {
  (void)args;
  if (pop(FRAME_IP, (PyObject *)self, "InsertionPoint") < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *ip_current(PyObject *cls) {
  (void)cls;
  PyObject *ip = tp_current_ip();
  if (!ip) return PyErr_Format(PyExc_ValueError, "No current InsertionPoint");
  return Py_NewRef(ip);
}

static PyObject *ip_block(TpIP *self, void *c) {
  (void)c;
  return Py_NewRef(self->block);
}

static PyObject *ip_ref(TpIP *self, void *c) {
  (void)c;
  if (!self->ref) Py_RETURN_NONE;
  tether_op *h;
  MlirOperation raw;
  if (!tp_arg_op(self->ref, &h, &raw)) return NULL;
  return tp_wrap_operation(h);
}

static PyMethodDef ip_methods[] = {
    {"at_block_begin", (PyCFunction)ip_at_block_begin, METH_O | METH_CLASS,
     "Inserts before the block's first operation (at its end when empty)."},
    {"at_block_terminator", (PyCFunction)ip_at_block_terminator, METH_O | METH_CLASS,
     "Inserts before the block's terminator; ValueError without one."},
    {"insert", (PyCFunction)ip_insert, METH_O, "Inserts a detached operation here."},
    {"__enter__", (PyCFunction)ip_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)ip_exit, METH_VARARGS, NULL},
    TP_METHODS_END,
};

static PyGetSetDef ip_getset[] = {
    {"block", (getter)ip_block, NULL, "The block operations are inserted into.", NULL},
    {"ref_operation", (getter)ip_ref, NULL,
     "The operation new operations go before, or None (the end of the block).", NULL},
    TP_GETSET_END,
};

static PyType_Slot ip_slots[] = {
    {Py_tp_new, ip_new},
    {Py_tp_dealloc, ip_dealloc},
    {Py_tp_traverse, ip_traverse},
    {Py_tp_clear, ip_clear},
    {Py_tp_methods, ip_methods},
    {Py_tp_getset, ip_getset},
    {Py_tp_doc, "Where new operations go: the end of a block, or before an operation."},
    {0, NULL},
};

PyType_Spec tp_insertion_point_spec = {
    "tether.ir.InsertionPoint", sizeof(TpIP), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE, ip_slots};

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
  return tp_capsule_with_owner(self->reg.ptr, "mlir.ir.DialectRegistry._CAPIPtr", (PyObject *)self);
}

static PyObject *registry_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, DialectRegistryType)) return Py_NewRef(owner);
  PyErr_SetString(PyExc_ValueError,
                  "DialectRegistry._CAPICreate takes a capsule made by DialectRegistry._CAPIPtr "
                  "(a registry another binding owns cannot be adopted safely)");
  return NULL;
}

static PyObject *registry_insert_all(TpDialectRegistry *self, PyObject *unused) {
  (void)unused;
  mlirRegisterAllDialects(self->reg);
  Py_RETURN_NONE;
}

static PyMethodDef registry_methods[] = {
    {"_CAPICreate", (PyCFunction)registry_from_capsule, METH_O | METH_STATIC, NULL},
    {"_register_all", (PyCFunction)registry_insert_all, METH_NOARGS, NULL},
    TP_METHODS_END,
};

static PyGetSetDef registry_getset[] = {
    {"_CAPIPtr", (getter)registry_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot registry_slots[] = {
    {Py_tp_new, registry_new},
    {Py_tp_dealloc, registry_dealloc},
    {Py_tp_methods, registry_methods},
    {Py_tp_getset, registry_getset},
    {Py_tp_doc, "A set of dialects to append to contexts."},
    {0, NULL},
};

static PyType_Spec registry_spec = {"tether.ir.DialectRegistry", sizeof(TpDialectRegistry), 0,
                                    Py_TPFLAGS_DEFAULT, registry_slots};

/* ---- DialectDescriptor ----------------------------------------------------------------------- */

static PyObject *descriptor_namespace(PyObject *self, void *c) {
  (void)c;
  return tp_str_from_ref(mlirDialectGetNamespace((MlirDialect){TP_PTR(self)}));
}

static PyObject *descriptor_repr(PyObject *self) {
  PyObject *ns = tp_str_from_ref(mlirDialectGetNamespace((MlirDialect){TP_PTR(self)}));
  if (!ns) return NULL;
  PyObject *r = PyUnicode_FromFormat("<DialectDescriptor %U>", ns);
  Py_DECREF(ns);
  return r;
}

static PyGetSetDef descriptor_getset[] = {
    {"namespace", descriptor_namespace, NULL, NULL, NULL},
    {"context", tp_ctxobj_context, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot descriptor_slots[] = {
    {Py_tp_dealloc, tp_ctxobj_dealloc},
    {Py_tp_getset, descriptor_getset},
    {Py_tp_repr, descriptor_repr},
    {Py_tp_doc, "A loaded dialect of a context."},
    {0, NULL},
};

static PyType_Spec descriptor_spec = {"tether.ir.DialectDescriptor", sizeof(TpCtxObj), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                      descriptor_slots};

int tp_init_context(PyObject *m) {
  if (tp_add_type(m, &tp_classprop_spec, NULL, &tp.ClassProperty) < 0 ||
      tp_add_type(m, &tp_context_spec, NULL, &tp.Context) < 0 ||
      tp_add_type(m, &tp_insertion_point_spec, NULL, &tp.InsertionPoint) < 0 ||
      tp_add_type(m, &registry_spec, NULL, &DialectRegistryType) < 0 ||
      tp_add_type(m, &descriptor_spec, NULL, &DialectDescriptorType) < 0)
    return -1;
  if (set_classprop(tp.Context, "current", context_current) < 0 ||
      set_classprop(tp.InsertionPoint, "current", ip_current) < 0)
    return -1;
  return 0;
}
