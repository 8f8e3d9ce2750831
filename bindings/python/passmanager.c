/* passmanager.c: PassManager (upstream mlir.passmanager.PassManager) on the arena.
 *
 * Invariant: a pass manager holds its Context object, so the MLIRContext outlives it; a pipeline
 * runs only on IR of its own context, only on IR that verifies (unless the caller opts out: MLIR's
 * passes assume valid input and crash otherwise), and the tree it ran on is revalidated after it:
 * objects of IR a pass removed become invalid, the others keep their identity.
 *
 * Upstream runs a pass manager on IR of any context (MLIR does not check); passes of one context
 * on IR of another would apply that context's types, attributes and patterns to IR they do not
 * belong to. So a run on IR of another context runs the same pipeline rebuilt in the IR's context
 * (its text, the verifier setting, IR printing), and refuses what cannot be carried over.
 */
#include "tether_py.h"

static PyObject *pm_make(PyTypeObject *type, TpContext *ctx, MlirPassManager pm) {
  TpPassManager *self = (TpPassManager *)type->tp_alloc(type, 0);
  if (!self) {
    mlirPassManagerDestroy(pm);
    return NULL;
  }
  self->pm = pm;
  self->context = Py_NewRef(ctx);
  self->verifier = true; /* MLIR's default */
  return (PyObject *)self;
}

static PyObject *pm_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"anchor_op", "context", NULL};
  PyObject *a[2];
  if (!tp_args("PassManager", args, kw, names, 0, 2, a)) return NULL;
  PyObject *anchor = a[0], *c = a[1] ? a[1] : Py_None;
  MlirStringRef on = mlirStringRefCreateFromCString("any");
  if (anchor && !tp_arg_str(anchor, "anchor_op", &on)) return NULL;
  TpContext *ctx = tp_resolve_context(c);
  if (!ctx) return NULL;
  return pm_make(type, ctx, mlirPassManagerCreateOnOperation(tether_arena_context(ctx->arena), on));
}

static void pm_dealloc(TpPassManager *self) {
  if (self->pm.ptr) mlirPassManagerDestroy(self->pm);
  Py_XDECREF(self->context);
  Py_XDECREF(self->printing.tree_dir);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static int pm_check(TpPassManager *self) {
  if (!self->pm.ptr) {
    PyErr_SetString(PyExc_RuntimeError, "the pass manager was released");
    return 0;
  }
  return 1;
}

/* Adds a textual pipeline through `parse`; ValueError with MLIR's message, as upstream. */
static int pm_pipeline(TpPassManager *self, PyObject *pipeline,
                       MlirLogicalResult (*parse)(MlirOpPassManager, MlirStringRef,
                                                  MlirStringCallback, void *)) {
  MlirStringRef s;
  if (!pm_check(self) || !tp_arg_str(pipeline, "pipeline", &s)) return 0;
  tp_strbuf err = {0};
  MlirLogicalResult r =
      parse(mlirPassManagerGetAsOpPassManager(self->pm), s, tp_strbuf_append, &err);
  PyObject *msg = tp_strbuf_finish(&err);
  if (mlirLogicalResultIsFailure(r)) {
    if (msg) PyErr_SetObject(PyExc_ValueError, msg);
    Py_XDECREF(msg);
    return 0;
  }
  Py_XDECREF(msg);
  return 1;
}

static PyObject *pm_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  static const char *const names[] = {"pipeline", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs("parse", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  PyObject *pipeline = a[0], *c = a[1] ? a[1] : Py_None;
  TpContext *ctx = tp_resolve_context(c);
  if (!ctx) return NULL;
  PyObject *self =
      pm_make((PyTypeObject *)cls, ctx, mlirPassManagerCreate(tether_arena_context(ctx->arena)));
  if (!self) return NULL;
  if (!pm_pipeline((TpPassManager *)self, pipeline, mlirParsePassPipeline)) Py_CLEAR(self);
  return self;
}

static PyObject *pm_add(TpPassManager *self, PyObject *pipeline) {
  if (!pm_pipeline(self, pipeline, mlirOpPassManagerAddPipeline)) return NULL;
  Py_RETURN_NONE;
}

static PyObject *pm_str(TpPassManager *self) {
  if (!pm_check(self)) return NULL;
  tp_strbuf b = {0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(self->pm), tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *pm_enable_verifier(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  static const char *const names[] = {"enable", NULL};
  PyObject *enable;
  int on;
  if (!tp_fastargs("enable_verifier", args, nargs, kwnames, names, 1, 1, &enable) ||
      !tp_arg_bool(enable, &on))
    return NULL;
  if (!pm_check(self)) return NULL;
  mlirPassManagerEnableVerifier(self->pm, on);
  self->verifier = on;
  Py_RETURN_NONE;
}

/* Turns IR printing on in pm with self's options. 0 with an exception when MLIR cannot. */
static int pm_apply_printing(TpPassManager *self, MlirPassManager pm) {
  const TpIRPrinting *o = &self->printing;
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  if (o->elements_limit >= 0) mlirOpPrintingFlagsElideLargeElementsAttrs(flags, o->elements_limit);
#if TETHER_MLIR_VERSION >= 22
  if (o->resource_limit >= 0) mlirOpPrintingFlagsElideLargeResourceString(flags, o->resource_limit);
#endif
  if (o->debug_info) mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
  if (o->generic) mlirOpPrintingFlagsPrintGenericOpForm(flags);
  tether_mlir_ir_printing p = {o->before_all,    o->after_all, o->module_scope, o->after_change,
                               o->after_failure, flags,        {NULL, 0}};
  int ok = !o->tree_dir || tp_arg_str(o->tree_dir, "tree_printing_dir_path", &p.tree_dir);
#if TETHER_MLIR_VERSION < 22
  p.flags = (MlirOpPrintingFlags){NULL}; /* MLIR 19 takes no options (only the default ones) */
#endif
  if (ok && !tether_mlir_pm_enable_ir_printing(pm, &p)) {
    PyErr_SetString(PyExc_NotImplementedError,
                    "this IR printing configuration needs MLIR 22 (tether is built for MLIR 19)");
    ok = 0;
  }
  mlirOpPrintingFlagsDestroy(flags);
  return ok;
}

#if TETHER_MLIR_VERSION >= 22
/* enable_ir_printing(print_before_all=False, print_after_all=True, print_module_scope=False,
 * print_after_change=False, print_after_failure=False, large_elements_limit=None,
 * large_resource_limit=None, enable_debug_info=False, print_generic_op_form=False,
 * tree_printing_dir_path=None), as upstream 22. */
static PyObject *pm_enable_ir_printing(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  static const char *const names[] = {"print_before_all",
                                      "print_after_all",
                                      "print_module_scope",
                                      "print_after_change",
                                      "print_after_failure",
                                      "large_elements_limit",
                                      "large_resource_limit",
                                      "enable_debug_info",
                                      "print_generic_op_form",
                                      "tree_printing_dir_path",
                                      NULL};
  PyObject *x[10];
  if (!tp_fastargs("enable_ir_printing", args, nargs, kwnames, names, 0, 10, x) || !pm_check(self))
    return NULL;
  TpIRPrinting o = {false, true, false, false, false, false, false, -1, -1, NULL};
  bool *flags[] = {&o.before_all, &o.after_all, &o.module_scope, &o.after_change, &o.after_failure,
                   NULL,          NULL,         &o.debug_info,   &o.generic};
  for (int i = 0; i < 9; i++) {
    if (!x[i] || !flags[i]) continue;
    int v = PyObject_IsTrue(x[i]);
    if (v < 0) return NULL;
    *flags[i] = v;
  }
  intptr_t *limits[] = {&o.elements_limit, &o.resource_limit};
  for (int i = 0; i < 2; i++)
    if (x[5 + i] && x[5 + i] != Py_None && !tp_arg_intptr(x[5 + i], names[5 + i], limits[i]))
      return NULL;
  if (x[9] && x[9] != Py_None) {
    MlirStringRef dir;
    if (!tp_arg_str(x[9], "tree_printing_dir_path", &dir)) return NULL;
    o.tree_dir = Py_NewRef(x[9]);
  }
  TpIRPrinting old = self->printing;
  self->printing = o;
  if (!pm_apply_printing(self, self->pm)) {
    self->printing = old;
    Py_XDECREF(o.tree_dir);
    return NULL;
  }
  Py_XDECREF(old.tree_dir);
  self->ir_printing = true;
  Py_RETURN_NONE;
}
#else
/* enable_ir_printing(), as upstream 19: MLIR's one configuration. */
static PyObject *pm_enable_ir_printing(TpPassManager *self, PyObject *unused) {
  (void)unused;
  if (!pm_check(self)) return NULL;
  tether_mlir_ir_printing d = tether_mlir_ir_printing_19();
  self->printing = (TpIRPrinting){
      d.before_all, d.after_all, d.module_scope, d.after_change, d.after_failure, false, false, -1,
      -1,           NULL};
  if (!pm_apply_printing(self, self->pm)) return NULL;
  self->ir_printing = true;
  Py_RETURN_NONE;
}
#endif

/* The pipeline of self, built anew in ctx (another context): the textual pipeline, parsed there and
 * checked to print back the same, with the verifier setting and IR printing. Null with ValueError
 * when that cannot be done exactly. */
static MlirPassManager pm_rebuild(TpPassManager *self, TpContext *ctx) {
  MlirPassManager none = {NULL};
  if (self->capsule_given) {
    PyErr_SetString(PyExc_ValueError,
                    "cannot run this pass manager on IR of another context: it was handed out "
                    "through _CAPIPtr, so passes or instrumentation may have been added to it "
                    "that its textual pipeline does not show and that cannot be carried over; "
                    "create the pass manager in the operation's context");
    return none;
  }
  tp_strbuf text = {0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(self->pm), tp_strbuf_append, &text);
  PyObject *pipeline = tp_strbuf_finish(&text);
  if (!pipeline) return none;
  MlirStringRef s;
  MlirPassManager pm = mlirPassManagerCreate(tether_arena_context(ctx->arena));
  tp_strbuf err = {0};
  int ok = tp_arg_str(pipeline, "pipeline", &s) &&
           mlirLogicalResultIsSuccess(mlirParsePassPipeline(mlirPassManagerGetAsOpPassManager(pm),
                                                            s, tp_strbuf_append, &err));
  PyObject *msg = tp_strbuf_finish(&err);
  PyObject *again = NULL;
  if (ok) {
    tp_strbuf back = {0};
    mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), tp_strbuf_append, &back);
    again = tp_strbuf_finish(&back);
    ok = again && PyUnicode_Compare(again, pipeline) == 0;
    if (!ok && again)
      PyErr_Format(PyExc_ValueError,
                   "cannot run this pass manager on IR of another context: its pipeline '%U', "
                   "rebuilt in the operation's context, prints as '%U'",
                   pipeline, again);
  } else if (!PyErr_Occurred()) {
    PyErr_Format(PyExc_ValueError,
                 "cannot run this pass manager on IR of another context: its pipeline '%U' does "
                 "not parse in the operation's context: %S",
                 pipeline, msg ? msg : Py_None);
  }
  Py_XDECREF(again);
  Py_XDECREF(msg);
  Py_DECREF(pipeline);
  if (!ok) {
    mlirPassManagerDestroy(pm);
    return none;
  }
  mlirPassManagerEnableVerifier(pm, self->verifier);
  if (self->ir_printing && !pm_apply_printing(self, pm)) {
    mlirPassManagerDestroy(pm);
    return none;
  }
  return pm;
}

/* run(operation, invalidate_ops=True, *, verify_input=True): invalidate_ops is accepted for
 * upstream's signature: tether invalidates precisely what the passes removed. The arena refuses
 * input that does not verify (MLIR's passes assume valid IR), unless verify_input=False: the caller
 * vouches for it (docs/python.md: the one documented way to crash). */
static PyObject *pm_run(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  static const char *const names[] = {"operation", "invalidate_ops", "verify_input", NULL};
  PyObject *a[3];
  if (!tp_fastargs("run", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  PyObject *opo = a[0];
  int verify = 1;
  if (a[2] && !tp_arg_bool(a[2], &verify)) return NULL;
  if (!pm_check(self)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tp_arg_op(opo, &h, &raw)) return NULL;
  TpContext *ctx = (TpContext *)self->context;
  MlirPassManager pm = self->pm;
  PyObject *other = NULL; /* the operation's Context object, when it is not the pass manager's */
  if (ctx->arena != tether_handle_arena(h)) {
    other = tp_context_of(tether_handle_arena(h));
    if (!other) return NULL;
    pm = pm_rebuild(self, (TpContext *)other);
    if (!pm.ptr) {
      Py_DECREF(other);
      return NULL;
    }
    ctx = (TpContext *)other;
  }
  tp_errcap cap;
  tp_errcap_begin(&cap, ctx);
  int rc = tether_op_run_passes_ex(h, pm, verify ? 0 : TETHER_PASSES_TRUSTED_INPUT);
  if (other) mlirPassManagerDestroy(pm);
  PyObject *r = NULL;
  if (rc == TETHER_EVERIFY)
    tp_errcap_raise(&cap, "Failure while executing pass pipeline: the input does not verify "
                          "(MLIR's passes assume valid IR)");
  else if (rc == TETHER_EPASS)
    tp_errcap_raise(&cap, "Failure while executing pass pipeline");
  else {
    Py_XDECREF(tp_errcap_end(&cap));
    if (rc == TETHER_EBUSY)
      PyErr_Format(PyExc_ValueError,
                   "cannot run passes: values or blocks of this IR are used by other IR (a "
                   "detached operation, region or block, or another module), and a pass may "
                   "erase them; insert that IR or drop those uses first");
    else if (rc != TETHER_OK)
      TP_RAISE_RC(rc, h);
    else
      r = Py_NewRef(Py_None);
  }
  Py_XDECREF(other); /* after the capture, which used it */
  return r;
}

static PyObject *pm_context(TpPassManager *self, void *c) {
  (void)c;
  return Py_NewRef(self->context);
}

static PyObject *pm_capsule(TpPassManager *self, void *c) {
  (void)c;
  if (!pm_check(self)) return NULL;
  self->capsule_given = true;
  return tp_capsule_with_owner(self->pm.ptr, "mlir.passmanager.PassManager._CAPIPtr",
                               (PyObject *)self);
}

static PyObject *pm_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.PassManager)) return Py_NewRef(owner);
  PyErr_SetString(PyExc_ValueError, "PassManager._CAPICreate takes a capsule made by "
                                    "PassManager._CAPIPtr (a pass manager another binding owns "
                                    "cannot be adopted safely)");
  return NULL;
}

static PyObject *pm_release(TpPassManager *self, PyObject *unused) {
  (void)unused;
  self->pm.ptr = NULL; /* leaked on purpose (upstream's testing hook) */
  Py_RETURN_NONE;
}

static PyMethodDef pm_methods[] = {
    {"parse", TP_FASTFN(pm_parse), TP_FAST | METH_CLASS,
     "parse(pipeline, context=None): a pass manager from a textual pipeline (ValueError)."},
    {"add", (PyCFunction)pm_add, METH_O, "Appends a textual pipeline, e.g. 'canonicalize,cse'."},
    {"run", TP_FASTFN(pm_run), TP_FAST,
     "run(operation, invalidate_ops=True, *, verify_input=True): MLIRError on failure (also when "
     "the input does not verify; verify_input=False trusts it). On IR of another context, the "
     "same pipeline built in that context runs."},
    {"enable_verifier", TP_FASTFN(pm_enable_verifier), TP_FAST,
     "enable_verifier(enable): verify after each pass."},
#if TETHER_MLIR_VERSION >= 22
    {"enable_ir_printing", TP_FASTFN(pm_enable_ir_printing), TP_FAST,
     "enable_ir_printing(print_before_all=False, print_after_all=True, print_module_scope=False, "
     "print_after_change=False, print_after_failure=False, large_elements_limit=None, "
     "large_resource_limit=None, enable_debug_info=False, print_generic_op_form=False, "
     "tree_printing_dir_path=None): print the IR around passes."},
#else
    {"enable_ir_printing", (PyCFunction)pm_enable_ir_printing, METH_NOARGS, NULL},
#endif
    {"_CAPICreate", (PyCFunction)pm_from_capsule, METH_O | METH_STATIC, NULL},
    {"_testing_release", (PyCFunction)pm_release, METH_NOARGS, NULL},
    TP_METHODS_END,
};

static PyGetSetDef pm_getset[] = {
    {"context", (getter)pm_context, NULL, NULL, NULL},
    {"_CAPIPtr", (getter)pm_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot pm_slots[] = {
    {Py_tp_new, pm_new},
    {Py_tp_dealloc, pm_dealloc},
    {Py_tp_str, pm_str},
    {Py_tp_methods, pm_methods},
    {Py_tp_getset, pm_getset},
    {Py_tp_doc, "PassManager(anchor_op='any', context=None)"},
    {0, NULL},
};

static PyType_Spec tp_passmanager_spec = {"tether.passmanager.PassManager", sizeof(TpPassManager),
                                          0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, pm_slots};

int tp_init_passmanager(PyObject *m) {
  return tp_add_type(m, &tp_passmanager_spec, NULL, &tp.PassManager);
}
