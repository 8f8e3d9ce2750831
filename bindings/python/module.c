/* module.c: Module (upstream mlir.ir.Module), a builtin.module root: Module.parse, Module.create,
 * its operation and body. (The extension module itself is extension.c.)
 *
 * Invariant: a Module object pins the handle of its module operation, which keeps the whole tree
 * alive; it is not interned (each parse or create makes one object), and counts in
 * Context._get_live_module_count while it lives.
 */
#include "tether_py.h"

static TpOp live_modules = {.live_prev = &live_modules, .live_next = &live_modules};

Py_ssize_t tp_live_modules(tether_arena *a) {
  Py_ssize_t n = 0;
  for (TpOp *o = live_modules.live_next; o != &live_modules; o = o->live_next)
    if (o->h && tether_handle_arena(o->h) == a) n++;
  return n;
}

static PyObject *wrap_module(tether_op *h) {
  if (!h) Py_RETURN_NONE;
  TpOp *self = (TpOp *)tp_handle_new(tp.Module, h); /* TpOp begins as TpHandle does */
  if (self) tp_live_link(&live_modules, self);
  return (PyObject *)self;
}

static void module_dealloc(TpOp *self) {
  tp_live_unlink(self);
  if (self->h && self->pin >= 0) tp_unpin(self->pin);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyObject *module_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  MlirStringRef s;
  TpContext *ctx;
  tp_errcap cap;
  if (!tp_parse_begin(args, nargs, kwnames, &s, &ctx, &cap)) return NULL;
  tether_op *op;
  int rc = tether_module_parse(ctx->arena, s.data, s.length, &op);
  if (rc == TETHER_EPARSE) return tp_errcap_raise(&cap, "Unable to parse module assembly");
  Py_XDECREF(tp_errcap_end(&cap));
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  return wrap_module(op);
}

static PyObject *module_create(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"loc", NULL};
  PyObject *a[1];
  if (!tp_fastargs("create", args, nargs, kwnames, names, 0, 1, a)) return NULL;
  PyObject *lo = tp_resolve_loc(a[0]);
  if (!lo) return NULL;
  TpContext *ctx = (TpContext *)TP_CTX(lo);
  tether_loc *l;
  int rc = tether_loc_wrap(ctx->arena, (MlirLocation){TP_PTR(lo)}, &l);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  tether_op *op;
  rc = tether_module_create(ctx->arena, l, &op);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  return wrap_module(op);
}

static PyObject *module_operation(PyObject *self, void *c) {
  (void)c;
  TP_SELF_OP(self, raw);
  (void)raw;
  return tp_wrap_operation(TP_OP(self)->h);
}

static PyObject *module_body(PyObject *self, void *c) {
  (void)c;
  tether_region *r;
  tether_block *b;
  TP_CALL(tether_op_region(TP_OP(self)->h, 0, &r), TP_OP(self)->h);
  TP_CALL(tether_region_first_block(r, &b), TP_OP(self)->h);
  return tp_wrap_block(b);
}

static PyObject *module_context(PyObject *self, void *c) {
  (void)c;
  TP_SELF_OP(self, raw);
  (void)raw;
  return tp_context_of_handle(TP_OP(self)->h);
}

static PyObject *module_capsule(PyObject *self, void *c) {
  (void)c;
  TP_SELF_OP(self, raw);
  tether_arena_touch(tether_handle_arena(TP_OP(self)->h));
  return tp_capsule_with_owner(raw.ptr, "mlir.ir.Module._CAPIPtr", self);
}

static PyObject *module_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.Module)) return Py_NewRef(owner);
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Module._CAPIPtr");
  if (!p) return NULL;
  MlirOperation raw = {p};
  tether_arena *a = tether_arena_of_context(mlirOperationGetContext(raw));
  tether_op *h;
  if (!a || tether_op_wrap(a, raw, &h) != TETHER_OK)
    return PyErr_Format(PyExc_ValueError,
                        "the capsule's module is not IR a tether Context holds (a module made "
                        "elsewhere cannot be adopted safely)");
  return wrap_module(h);
}

static PyObject *module_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  TP_SELF_OP(self, raw);
  mlirOperationDump(raw);
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"parse", TP_FASTFN(module_parse), TP_FAST | METH_STATIC,
     "parse(asm, context=None): MLIRError on bad input."},
    {"create", TP_FASTFN(module_create), TP_FAST | METH_STATIC,
     "create(loc=None): an empty module."},
    {"_CAPICreate", (PyCFunction)module_from_capsule, METH_O | METH_STATIC, NULL},
    {"dump", (PyCFunction)module_dump, METH_NOARGS, "Prints the module to stderr."},
    TP_METHODS_END,
};

static PyGetSetDef module_getset[] = {
    {"operation", module_operation, NULL, "The builtin.module operation.", NULL},
    {"body", module_body, NULL, "The module's block.", NULL},
    {"context", module_context, NULL, NULL, NULL},
    {"_CAPIPtr", module_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot module_slots[] = {
    {Py_tp_new, tp_opbase_new},
    {Py_tp_dealloc, module_dealloc},
    {Py_tp_str, tp_op_str},
    {Py_tp_methods, module_methods},
    {Py_tp_getset, module_getset},
    {Py_tp_doc, "A builtin.module: Module.parse(), Module.create()."},
    {0, NULL},
};

static PyType_Spec tp_module_spec = {"tether.ir.Module", sizeof(TpOp), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, module_slots};

int tp_init_module(PyObject *m) { return tp_add_type(m, &tp_module_spec, NULL, &tp.Module); }
