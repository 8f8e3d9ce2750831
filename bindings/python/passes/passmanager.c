/* passmanager.c: PassManager (upstream mlir.passmanager.PassManager) on the arena, and on MLIR 22
 * passes written in Python (ExternalPass, PassManager.add(callable)).
 *
 * Invariant: a pass manager holds its Context object, so the MLIRContext outlives it; a pipeline
 * runs only on IR of its own context, only on IR that verifies (unless the caller opts out: MLIR's
 * passes assume valid input and crash otherwise), and the tree it ran on is revalidated after it:
 * objects of IR a pass removed become invalid, the others keep their identity.
 *
 * A pass written in Python runs only inside run() of its own pass manager, on the thread holding
 * the GIL (MLIR's multithreading is off meanwhile), inside an arena callback scope
 * (tether_scope_enter): the tree is revalidated before the callable sees it, the operation it runs
 * on and everything enclosing it cannot be erased or moved meanwhile, and what it leaves must
 * verify, or the pass fails before MLIR goes on. An exception in it fails the pass and is raised by
 * run(); the ExternalPass object it got refuses use once it returned. MLIR running the pass in any
 * other way (a pass manager handed out through _CAPIPtr) finds no run of its own: the pass fails
 * without calling Python.
 *
 * Upstream runs a pass manager on IR of any context (MLIR does not check); passes of one context
 * on IR of another would apply that context's types, attributes and patterns to IR they do not
 * belong to. So a run on IR of another context runs the same pipeline rebuilt in the IR's context
 * (its text, the verifier setting, IR printing), and refuses what cannot be carried over.
 */
#include "passes.h"

static PyObject *pm_make(PyTypeObject *type, TpContext *ctx, MlirPassManager pm) {
  static uint64_t next_id;
  TpPassManager *self = (TpPassManager *)type->tp_alloc(type, 0);
  if (!self) {
    mlirPassManagerDestroy(pm);
    return NULL;
  }
  self->pm = pm;
  self->context = Py_NewRef(ctx);
  self->verifier = true; /* MLIR's default */
  self->statistics = -1;
  self->id = ++next_id;
  return (PyObject *)self;
}

static tpy_sig pm_new_sig =
    TPY_SIG("PassManager(anchor_op: str = 'any', context: Context | None = None)", NULL);

static PyObject *pm_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *a[2];
  if (!tpy_args(&pm_new_sig, args, kw, a, 2)) return NULL;
  PyObject *anchor = a[0], *c = a[1] ? a[1] : Py_None;
  MlirStringRef on = mlirStringRefCreateFromCString("any");
  if (anchor && !tpy_arg_str(anchor, "anchor_op", &on)) return NULL;
  TpContext *ctx = tpy_resolve_context(c);
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

/* pm_check, and not running: MLIR reads its passes and instrumentation while it runs. */
static int pm_check_idle(TpPassManager *self) {
  if (!pm_check(self)) return 0;
  if (self->running) {
    PyErr_SetString(PyExc_RuntimeError,
                    "the pass manager is running: it cannot be changed or run again from one of "
                    "its passes");
    return 0;
  }
  return 1;
}

/* Adds a textual pipeline through `parse`; ValueError with MLIR's message, as upstream. */
static int pm_pipeline(TpPassManager *self, PyObject *pipeline,
                       MlirLogicalResult (*parse)(MlirOpPassManager, MlirStringRef,
                                                  MlirStringCallback, void *)) {
  MlirStringRef s;
  if (!pm_check_idle(self) || !tpy_arg_str(pipeline, "pipeline", &s)) return 0;
  tpy_strbuf err = {0};
  MlirLogicalResult r =
      parse(mlirPassManagerGetAsOpPassManager(self->pm), s, tpy_strbuf_append, &err);
  PyObject *msg = tpy_strbuf_finish(&err);
  if (mlirLogicalResultIsFailure(r)) {
    if (msg) PyErr_SetObject(PyExc_ValueError, msg);
    Py_XDECREF(msg);
    return 0;
  }
  Py_XDECREF(msg);
  return 1;
}

static tpy_sig pm_parse_sig =
    TPY_SIG("parse(pipeline: str, context: Context | None = None) -> PassManager",
            "A pass manager from a textual pipeline (ValueError).");

static PyObject *pm_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&pm_parse_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *pipeline = a[0], *c = a[1] ? a[1] : Py_None;
  TpContext *ctx = tpy_resolve_context(c);
  if (!ctx) return NULL;
  PyObject *self =
      pm_make((PyTypeObject *)cls, ctx, mlirPassManagerCreate(tether_arena_context(ctx->arena)));
  if (!self) return NULL;
  if (!pm_pipeline((TpPassManager *)self, pipeline, mlirParsePassPipeline)) Py_CLEAR(self);
  return self;
}

#if TETHER_MLIR_VERSION >= 22
/* ---- passes written in Python (MLIR 22) ------------------------------------------------------ */

/* The user data of a Python pass in MLIR's ExternalPass: the callable and the pass manager it was
 * added to. */
typedef struct {
  PyObject *fn; /* strong; NULL in a copy MLIR made without the GIL */
  uint64_t pm_id;
} tpy_pypass;

/* A run() in progress on this thread, innermost first: only its pass manager's Python passes call
 * Python. */
typedef struct tpy_pass_run {
  struct tpy_pass_run *outer;
  uint64_t pm_id;
  TpContext *ctx;
  PyObject *error; /* the exception a Python pass raised, or NULL */
} tpy_pass_run;

static _Thread_local tpy_pass_run *active_run;

/* ExternalPass: what a Python pass gets to signal its failure, valid while the pass runs. */
typedef struct {
  PyObject_HEAD MlirExternalPass pass;
  bool live;
} TpExternalPass;

static PyObject *ext_signal_failure(TpExternalPass *self, PyObject *unused) {
  (void)unused;
  if (!self->live)
    return PyErr_Format(PyExc_RuntimeError,
                        "signal_pass_failure() is only valid while the pass that received this "
                        "ExternalPass runs");
  mlirExternalPassSignalFailure(self->pass);
  Py_RETURN_NONE;
}

static PyMethodDef ext_methods[] = {
    {"signal_pass_failure", (PyCFunction)ext_signal_failure, METH_NOARGS,
     TPY_SIGDOC("signal_pass_failure() -> None",
                "Fails the pass (and the pipeline), as MLIR's Pass::signalPassFailure.")},
    TPY_METHODS_END,
};

static void ext_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyType_Slot ext_slots[] = {
    {Py_tp_dealloc, ext_dealloc},
    {Py_tp_methods, ext_methods},
    {Py_tp_doc, "The running pass, as a Python pass receives it: signal_pass_failure()."},
    {0, NULL},
};

static PyType_Spec ext_spec = {"tether.passmanager.ExternalPass", sizeof(TpExternalPass), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, ext_slots};

static void pypass_construct(void *ud) { (void)ud; }

static void pypass_destruct(void *ud) {
  tpy_pypass *p = ud;
  if (!p) return;
  /* MLIR destroys passes with their pass manager, under the GIL (a leaked one never). */
  if (p->fn && PyGILState_Check()) Py_DECREF(p->fn);
  free(p);
}

/* MLIR copies passes for its worker threads (off while Python passes run) and crash reproducers:
 * the copy shares the callable. */
static void *pypass_clone(void *ud) {
  tpy_pypass *p = ud, *c = malloc(sizeof *c);
  if (!c) return NULL;
  c->pm_id = p ? p->pm_id : 0;
  c->fn = p && p->fn && PyGILState_Check() ? Py_NewRef(p->fn) : NULL;
  return c;
}

/* Moves the pending exception into *slot (the first one is kept). */
static void stash_error(PyObject **slot) {
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  PyErr_NormalizeException(&et, &ev, &tb);
  if (ev && tb) PyException_SetTraceback(ev, tb);
  if (!*slot && ev)
    *slot = ev;
  else
    Py_XDECREF(ev);
  Py_XDECREF(et);
  Py_XDECREF(tb);
}

/* The pass's body: the callable on (operation, ExternalPass), in a callback scope of the arena. */
static PyObject *pypass_call(tpy_pypass *p, TpContext *ctx, MlirOperation op,
                             MlirExternalPass pass) {
  tether_op *h;
  int rc = tether_op_wrap(ctx->arena, op, &h);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, ctx->arena);
  PyObject *opo = tpy_wrap_operation(h);
  if (!opo) return NULL;
  TpExternalPass *po = PyObject_New(TpExternalPass, tpy.ExternalPass);
  PyObject *res = NULL;
  if (po) {
    po->pass = pass;
    po->live = true;
    res = PyObject_CallFunctionObjArgs(p->fn, opo, (PyObject *)po, NULL);
    po->live = false;
    Py_DECREF(po);
  }
  Py_DECREF(opo);
  return res;
}

static void pypass_run(MlirOperation op, MlirExternalPass pass, void *ud) {
  tpy_pypass *p = ud;
  tpy_pass_run *r = active_run;
  /* Only inside run() of the pass manager the pass was added to, on its thread. */
  if (!p || !p->fn || !r || r->pm_id != p->pm_id || r->error || !PyGILState_Check()) {
    mlirExternalPassSignalFailure(pass);
    return;
  }
  tether_scope scope;
  int rc =
      tether_scope_enter(r->ctx->arena, TETHER_SCOPE_PASS, op, (MlirRewriterBase){NULL}, &scope);
  if (rc != TETHER_OK) {
    PyErr_SetString(PyExc_RuntimeError, "a pass written in Python ran outside its pass manager");
    stash_error(&r->error);
    mlirExternalPassSignalFailure(pass);
    return;
  }
  PyObject *res = pypass_call(p, r->ctx, op, pass);
  if (!res) stash_error(&r->error);
  Py_XDECREF(res);
  /* What the pass left must suit the rest of the pipeline (diagnostics otherwise). */
  if (tether_scope_leave(&scope) != TETHER_OK || !res) mlirExternalPassSignalFailure(pass);
}

/* The operation name the pass manager is anchored on ("any", "builtin.module"), new reference: the
 * text before the pipeline's first '('. */
static PyObject *pm_anchor(TpPassManager *self) {
  tpy_strbuf b = {0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(self->pm), tpy_strbuf_append, &b);
  PyObject *text = tpy_strbuf_finish(&b);
  if (!text) return NULL;
  Py_ssize_t paren = PyUnicode_FindChar(text, '(', 0, PyUnicode_GET_LENGTH(text), 1);
  PyObject *r = paren < 0 ? Py_NewRef(text) : PyUnicode_Substring(text, 0, paren);
  Py_DECREF(text);
  return r;
}

/* A str argument that may be None (""). */
static int arg_str_or_none(PyObject *o, const char *what, MlirStringRef *out) {
  if (!o || o == Py_None) {
    *out = mlirStringRefCreate("", 0);
    return 1;
  }
  return tpy_arg_str(o, what, out);
}

/* add(run, name=None, argument="", description="", op_name=""): a pass written in Python. */
static tpy_sig pm_add_python_sig =
    TPY_SIG("add(run: Callable[[Operation, ExternalPass], None], name: str | None = None, "
            "argument: str = '', description: str = '', op_name: str = '') -> None",
            NULL);

static PyObject *pm_add_python(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  static MlirTypeIDAllocator ids; /* the passes' TypeIDs live as long as the process */
  PyObject *a[5];
  if (!tpy_fastargs(&pm_add_python_sig, args, nargs, kwnames, a, 5) || !pm_check_idle(self))
    return NULL;
  if (!PyCallable_Check(a[0]))
    return tpy_type_error("add() argument 'run'", "a pipeline (str) or a callable", a[0]);
  PyObject *name =
      a[1] && a[1] != Py_None ? Py_NewRef(a[1]) : PyObject_GetAttrString(a[0], "__name__");
  if (!name) return NULL;
  MlirStringRef n, arg, desc, on;
  PyObject *anchor = NULL, *r = NULL;
  if (!tpy_arg_str(name, "name", &n) || !arg_str_or_none(a[2], "argument", &arg) ||
      !arg_str_or_none(a[3], "description", &desc) || !arg_str_or_none(a[4], "op_name", &on))
    goto out;
  if (on.length) {
    /* MLIR aborts adding a pass for one operation to a pass manager anchored on another. */
    if (!(anchor = pm_anchor(self))) goto out;
    PyObject *want = PyUnicode_FromStringAndSize(on.data, (Py_ssize_t)on.length);
    if (!want) goto out;
    int same = PyUnicode_Compare(anchor, want) == 0 ||
               PyUnicode_CompareWithASCIIString(anchor, "any") == 0;
    if (!same)
      PyErr_Format(PyExc_ValueError,
                   "Can't add pass '%S' restricted to '%U' on a PassManager intended to run on "
                   "'%U', did you intend to nest?",
                   name, want, anchor);
    Py_DECREF(want);
    if (!same) goto out;
  }
  if (!ids.ptr) ids = mlirTypeIDAllocatorCreate();
  tpy_pypass *p = malloc(sizeof *p);
  if (!p) {
    PyErr_NoMemory();
    goto out;
  }
  p->fn = Py_NewRef(a[0]);
  p->pm_id = self->id;
  MlirExternalPassCallbacks cb = {pypass_construct, pypass_destruct, NULL, pypass_clone,
                                  pypass_run};
  MlirPass pass = mlirCreateExternalPass(mlirTypeIDAllocatorAllocateTypeID(ids), n, arg, desc, on,
                                         0, NULL, cb, p);
  mlirPassManagerAddOwnedPass(self->pm, pass);
  self->python_passes = true;
  r = Py_NewRef(Py_None);
out:
  Py_XDECREF(anchor);
  Py_DECREF(name);
  return r;
}

static tpy_sig pm_add_sig = TPY_SIG_OR(
    "add(pipeline: str) -> None",
    "add(pipeline) appends a textual pipeline, e.g. 'canonicalize,cse'; add(run, name=None, "
    "argument='', description='', op_name='') appends a pass written in Python: run(op, pass_) "
    "may change op through tether and call pass_.signal_pass_failure(); an exception it raises "
    "fails the pass and comes out of run().",
    &pm_add_python_sig);

/* add(pipeline) | add(run, name=None, argument="", description="", op_name=""), as upstream 22's
 * two overloads. */
static PyObject *pm_add(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  PyObject *first = nargs ? args[0] : tpy_kwarg(args, nargs, kwnames, "pipeline");
  if (first && PyUnicode_Check(first)) {
    PyObject *pipeline;
    if (!tpy_fastargs(&pm_add_sig, args, nargs, kwnames, &pipeline, 1) ||
        !pm_pipeline(self, pipeline, mlirOpPassManagerAddPipeline))
      return NULL;
    Py_RETURN_NONE;
  }
  return pm_add_python(self, args, nargs, kwnames);
}

static PyObject *pm_enable_timing(TpPassManager *self, PyObject *unused) {
  (void)unused;
  if (!pm_check_idle(self)) return NULL;
  mlirPassManagerEnableTiming(self->pm);
  self->timing = true;
  Py_RETURN_NONE;
}

static tpy_sig pm_enable_statistics_sig =
    TPY_SIG("enable_statistics(displayMode: PassDisplayMode = PassDisplayMode.PIPELINE) -> None",
            "Enable pass statistics.");

/* enable_statistics(displayMode=PassDisplayMode.PIPELINE). */
static PyObject *pm_enable_statistics(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  PyObject *mode = NULL;
  if (!tpy_fastargs(&pm_enable_statistics_sig, args, nargs, kwnames, &mode, 1) ||
      !pm_check_idle(self))
    return NULL;
  long long m = MLIR_PASS_DISPLAY_MODE_PIPELINE;
  if (mode) {
    if (tpy.PassDisplayMode && !tpy_is(mode, (PyTypeObject *)tpy.PassDisplayMode))
      return tpy_type_error("displayMode", "a PassDisplayMode", mode);
    if (!tpy_arg_int_in(mode, "displayMode", MLIR_PASS_DISPLAY_MODE_LIST,
                        MLIR_PASS_DISPLAY_MODE_PIPELINE, &m))
      return NULL;
  }
  mlirPassManagerEnableStatistics(self->pm, (MlirPassDisplayMode)m);
  self->statistics = (int)m;
  Py_RETURN_NONE;
}

static PyObject *pm_set_enums(PyObject *cls, PyObject *mode) {
  (void)cls;
  if (!PyType_Check(mode)) return tpy_type_error("_set_enums argument", "a class", mode);
  Py_XSETREF(tpy.PassDisplayMode, Py_NewRef(mode));
  Py_RETURN_NONE;
}
#else
static PyObject *pm_add(TpPassManager *self, PyObject *pipeline) {
  if (!pm_pipeline(self, pipeline, mlirOpPassManagerAddPipeline)) return NULL;
  Py_RETURN_NONE;
}
#endif

static PyObject *pm_str(TpPassManager *self) {
  if (!pm_check(self)) return NULL;
  tpy_strbuf b = {0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(self->pm), tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static tpy_sig pm_enable_verifier_sig =
    TPY_SIG("enable_verifier(enable: bool) -> None", "Verify after each pass.");

static PyObject *pm_enable_verifier(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  PyObject *enable;
  int on;
  if (!tpy_fastargs(&pm_enable_verifier_sig, args, nargs, kwnames, &enable, 1) ||
      !tpy_arg_bool(enable, &on))
    return NULL;
  if (!pm_check_idle(self)) return NULL;
  mlirPassManagerEnableVerifier(self->pm, on);
  self->verifier = on;
  Py_RETURN_NONE;
}

/* MLIR aborts (an LLVM fatal error) when IR printing at module scope is set up in a context with
 * multithreading on, and a run with it on would print the module while other threads change it:
 * both are refused. 0 with RuntimeError when ctx is multithreaded and module scope is asked for. */
static int pm_printing_allowed(const TpIRPrinting *o, TpContext *ctx) {
  if (!o->module_scope || !tether_arena_multithreaded(ctx->arena)) return 1;
  PyErr_SetString(PyExc_RuntimeError,
                  "IR printing can't be setup on a pass-manager without disabling multi-threading "
                  "first (print_module_scope prints the whole module while passes run on threads: "
                  "call context.enable_multithreading(False))");
  return 0;
}

/* Turns IR printing on in pm (of context ctx) with self's options. 0 with an exception when MLIR
 * cannot. */
static int pm_apply_printing(TpPassManager *self, MlirPassManager pm, TpContext *ctx) {
  const TpIRPrinting *o = &self->printing;
  if (!pm_printing_allowed(o, ctx)) return 0;
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  if (o->elements_limit >= 0) mlirOpPrintingFlagsElideLargeElementsAttrs(flags, o->elements_limit);
#if TETHER_MLIR_VERSION >= 22
  /* As upstream 22: the elements limit elides resources too, unless a resource limit is given. */
  if (o->elements_limit >= 0) mlirOpPrintingFlagsElideLargeResourceString(flags, o->elements_limit);
  if (o->resource_limit >= 0) mlirOpPrintingFlagsElideLargeResourceString(flags, o->resource_limit);
#endif
  if (o->debug_info) mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
  if (o->generic) mlirOpPrintingFlagsPrintGenericOpForm(flags);
  tether_mlir_ir_printing p = {o->before_all,    o->after_all, o->module_scope, o->after_change,
                               o->after_failure, flags,        {NULL, 0}};
  int ok = !o->tree_dir || tpy_arg_str(o->tree_dir, "tree_printing_dir_path", &p.tree_dir);
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
static tpy_sig pm_enable_ir_printing_sig = TPY_SIG(
    "enable_ir_printing(print_before_all: bool = False, print_after_all: bool = True, "
    "print_module_scope: bool = False, print_after_change: bool = False, print_after_failure: bool "
    "= False, large_elements_limit: int | None = None, large_resource_limit: int | None = None, "
    "enable_debug_info: bool = False, print_generic_op_form: bool = False, tree_printing_dir_path: "
    "str | None = None) -> None",
    "Print the IR around passes.");

/* enable_ir_printing(print_before_all=False, print_after_all=True, print_module_scope=False,
 * print_after_change=False, print_after_failure=False, large_elements_limit=None,
 * large_resource_limit=None, enable_debug_info=False, print_generic_op_form=False,
 * tree_printing_dir_path=None), as upstream 22. */
static PyObject *pm_enable_ir_printing(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  PyObject *x[10];
  if (!tpy_fastargs(&pm_enable_ir_printing_sig, args, nargs, kwnames, x, 10) ||
      !pm_check_idle(self))
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
    if (x[5 + i] && x[5 + i] != Py_None &&
        !tpy_arg_intptr(x[5 + i], pm_enable_ir_printing_sig.info->names[5 + i], limits[i]))
      return NULL;
  if (x[9] && x[9] != Py_None) {
    MlirStringRef dir;
    if (!tpy_arg_str(x[9], "tree_printing_dir_path", &dir)) return NULL;
    o.tree_dir = Py_NewRef(x[9]);
  }
  TpIRPrinting old = self->printing;
  self->printing = o;
  if (!pm_apply_printing(self, self->pm, (TpContext *)self->context)) {
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
  if (!pm_apply_printing(self, self->pm, (TpContext *)self->context)) return NULL;
  self->ir_printing = true;
  Py_RETURN_NONE;
}
#endif

/* The pipeline of self, built anew in ctx (another context): the textual pipeline, parsed there and
 * checked to print back the same, with the verifier setting and IR printing. Null with ValueError
 * when that cannot be done exactly. */
static MlirPassManager pm_rebuild(TpPassManager *self, TpContext *ctx) {
  MlirPassManager none = {NULL};
  if (self->python_passes) {
    PyErr_SetString(PyExc_ValueError,
                    "cannot run this pass manager on IR of another context: it holds passes "
                    "written in Python, which cannot be carried over; create the pass manager in "
                    "the operation's context");
    return none;
  }
  if (self->capsule_given) {
    PyErr_SetString(PyExc_ValueError,
                    "cannot run this pass manager on IR of another context: it was handed out "
                    "through _CAPIPtr, so passes or instrumentation may have been added to it "
                    "that its textual pipeline does not show and that cannot be carried over; "
                    "create the pass manager in the operation's context");
    return none;
  }
  tpy_strbuf text = {0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(self->pm), tpy_strbuf_append, &text);
  PyObject *pipeline = tpy_strbuf_finish(&text);
  if (!pipeline) return none;
  MlirStringRef s;
  MlirPassManager pm = mlirPassManagerCreate(tether_arena_context(ctx->arena));
  tpy_strbuf err = {0};
  int ok = tpy_arg_str(pipeline, "pipeline", &s) &&
           mlirLogicalResultIsSuccess(mlirParsePassPipeline(mlirPassManagerGetAsOpPassManager(pm),
                                                            s, tpy_strbuf_append, &err));
  PyObject *msg = tpy_strbuf_finish(&err);
  PyObject *again = NULL;
  if (ok) {
    tpy_strbuf back = {0};
    mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), tpy_strbuf_append, &back);
    again = tpy_strbuf_finish(&back);
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
  if (self->ir_printing && !pm_apply_printing(self, pm, ctx)) {
    mlirPassManagerDestroy(pm);
    return none;
  }
#if TETHER_MLIR_VERSION >= 22
  if (self->timing) mlirPassManagerEnableTiming(pm);
  if (self->statistics >= 0)
    mlirPassManagerEnableStatistics(pm, (MlirPassDisplayMode)self->statistics);
#endif
  return pm;
}

/* Runs pm on h, with the arena's checks (flags), from run(): on MLIR 22 the passes written in
 * Python of self may call Python meanwhile (MLIR's multithreading off); *error receives the first
 * exception one raised. */
static int pm_run_passes(TpPassManager *self, TpContext *ctx, tether_op *h, MlirPassManager pm,
                         unsigned flags, PyObject **error) {
  *error = NULL;
  self->running = true;
#if TETHER_MLIR_VERSION >= 22
  tpy_pass_run run = {active_run, self->id, ctx, NULL};
  active_run = &run;
  if (self->python_passes) tpy_context_threads_suspend(ctx);
#else
  (void)ctx;
#endif
  int rc = tether_op_run_passes_ex(h, pm, flags);
#if TETHER_MLIR_VERSION >= 22
  if (self->python_passes) tpy_context_threads_resume(ctx);
  active_run = run.outer;
  *error = run.error;
#endif
  self->running = false;
  return rc;
}

#if TETHER_MLIR_VERSION >= 22
#define RUN_PARAMS "operation: _OperationBase | Module, *, "
#else
#define RUN_PARAMS "operation: _OperationBase | Module, invalidate_ops: bool = True, *, "
#endif
static tpy_sig pm_run_sig =
    TPY_SIG("run(" RUN_PARAMS "verify_input: bool = True) -> None",
            "MLIRError on failure (also when the input does not verify; verify_input=False trusts "
            "it). On IR of another context, the same pipeline built in that context runs.");

/* run(operation, *, verify_input=True) on MLIR 22 (upstream 22's run(operation)); on MLIR 19
 * run(operation, invalidate_ops=True, *, verify_input=True), where invalidate_ops is accepted for
 * upstream 19's signature: tether invalidates precisely what the passes removed. The arena refuses
 * input that does not verify (MLIR's passes assume valid IR), unless verify_input=False: the caller
 * vouches for it (docs/python.md: the one documented way to crash). */
static PyObject *pm_run(TpPassManager *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
#if TETHER_MLIR_VERSION >= 22
  PyObject *a[2];
  if (!tpy_fastargs(&pm_run_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *verify_arg = a[1];
#else
  PyObject *a[3];
  if (!tpy_fastargs(&pm_run_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *verify_arg = a[2];
#endif
  PyObject *opo = a[0];
  int verify = 1;
  if (verify_arg && !tpy_arg_bool(verify_arg, &verify)) return NULL;
  if (!pm_check_idle(self)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(opo, &h, &raw)) return NULL;
  TpContext *ctx = (TpContext *)self->context;
  MlirPassManager pm = self->pm;
  PyObject *other = NULL; /* the operation's Context object, when it is not the pass manager's */
  if (ctx->arena != tether_handle_arena(h)) {
    other = tpy_context_of(tether_handle_arena(h));
    if (!other) return NULL;
    pm = pm_rebuild(self, (TpContext *)other);
    if (!pm.ptr) {
      Py_DECREF(other);
      return NULL;
    }
    ctx = (TpContext *)other;
  }
  if (self->ir_printing && !pm_printing_allowed(&self->printing, ctx)) {
    if (other) mlirPassManagerDestroy(pm);
    Py_XDECREF(other);
    return NULL;
  }
  tpy_errcap cap;
  tpy_errcap_begin(&cap, ctx);
  PyObject *error;
  int rc = pm_run_passes(self, ctx, h, pm, verify ? 0 : TETHER_PASSES_TRUSTED_INPUT, &error);
  if (other) mlirPassManagerDestroy(pm);
  PyObject *r = NULL;
  if (error) {
    /* A pass written in Python raised: its exception, as upstream's run() lets it through. */
    tpy_errcap_close(&cap);
    PyErr_SetObject((PyObject *)Py_TYPE(error), error);
    Py_DECREF(error);
  } else if (rc == TETHER_EVERIFY)
    tpy_errcap_raise(&cap, "Failure while executing pass pipeline: the input does not verify "
                           "(MLIR's passes assume valid IR)");
  else if (rc == TETHER_EPASS)
    tpy_errcap_raise(&cap, "Failure while executing pass pipeline");
  else {
    tpy_errcap_close(&cap);
    if (rc == TETHER_EBUSY)
      PyErr_Format(PyExc_ValueError,
                   "cannot run passes: values or blocks of this IR are used by other IR (a "
                   "detached operation, region or block, or another module), and a pass may "
                   "erase them; insert that IR or drop those uses first");
    else if (rc == TETHER_ESUSPENDED)
      PyErr_Format(PyExc_RuntimeError,
                   "cannot run passes on this operation now: MLIR is suspended in a pass or "
                   "rewrite pattern written in Python that runs on it or inside it (run passes "
                   "on the operation the pass runs on, or inside it)");
    else if (rc != TETHER_OK)
      TPY_RAISE_RC(rc, h);
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
  return tpy_capsule_with_owner(self->pm.ptr, "mlir.passmanager.PassManager._CAPIPtr",
                                (PyObject *)self);
}

static PyObject *pm_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.PassManager)) return Py_NewRef(owner);
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
    {"parse", TPY_FASTFN(pm_parse), TPY_FAST | METH_CLASS, TPY_DOC(pm_parse_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"add", TPY_FASTFN(pm_add), TPY_FAST, TPY_DOC(pm_add_sig)},
    {"run", TPY_FASTFN(pm_run), TPY_FAST, TPY_DOC(pm_run_sig)},
    {"enable_timing", (PyCFunction)pm_enable_timing, METH_NOARGS,
     TPY_SIGDOC("enable_timing() -> None", "Enable pass timing.")},
    {"enable_statistics", TPY_FASTFN(pm_enable_statistics), TPY_FAST,
     TPY_DOC(pm_enable_statistics_sig)},
    {"_set_enums", (PyCFunction)pm_set_enums, METH_O | METH_STATIC,
     TPY_SIGDOC("_set_enums(display_mode: type, /) -> None", NULL)},
#else
    {"add", (PyCFunction)pm_add, METH_O,
     TPY_SIGDOC("add(pipeline: str, /) -> None",
                "Appends a textual pipeline, e.g. 'canonicalize,cse'.")},
    {"run", TPY_FASTFN(pm_run), TPY_FAST, TPY_DOC(pm_run_sig)},
#endif
    {"enable_verifier", TPY_FASTFN(pm_enable_verifier), TPY_FAST, TPY_DOC(pm_enable_verifier_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"enable_ir_printing", TPY_FASTFN(pm_enable_ir_printing), TPY_FAST,
     TPY_DOC(pm_enable_ir_printing_sig)},
#else
    {"enable_ir_printing", (PyCFunction)pm_enable_ir_printing, METH_NOARGS,
     TPY_SIGDOC("enable_ir_printing() -> None", NULL)},
#endif
    {"_CAPICreate", (PyCFunction)pm_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> PassManager", NULL)},
    {"_testing_release", (PyCFunction)pm_release, METH_NOARGS,
     TPY_SIGDOC("_testing_release() -> None", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef pm_getset[] = {
    {"context", (getter)pm_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"_CAPIPtr", (getter)pm_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot pm_slots[] = {
    {Py_tp_new, pm_new},
    {Py_tp_dealloc, pm_dealloc},
    {Py_tp_str, pm_str},
    {Py_tp_methods, pm_methods},
    {Py_tp_getset, pm_getset},
    {Py_tp_doc, TPY_DOC(pm_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_passmanager_spec = {"tether.passmanager.PassManager", sizeof(TpPassManager),
                                           0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, pm_slots};

int tpy_init_passmanager(PyObject *m) {
#if TETHER_MLIR_VERSION >= 22
  if (tpy_add_type(m, &ext_spec, NULL, &tpy.ExternalPass) < 0) return -1;
#endif
  return tpy_add_type(m, &tpy_passmanager_spec, NULL, &tpy.PassManager);
}
