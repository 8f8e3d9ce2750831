/* rewrite.c: the C side of tether.rewrite (upstream's mlir.rewrite), in _tether._rewrite:
 * PDLModule, FrozenRewritePatternSet and apply_patterns_and_fold_greedily (on MLIR 22 also
 * walk_and_apply_patterns, PDL native functions written in Python, and sets of patterns written in
 * Python: patterns.c), over the arena's tether_pdl_freeze(_ex) and tether_op_apply_patterns_ex.
 *
 * Invariant: MLIR never owns IR a Python object owns, and applying patterns changes the payload
 * as a pass pipeline does. So a PDLModule gives MLIR a verified copy of the module it is made
 * from (upstream hands MLIR the module itself, which MLIR then destroys: the Module object is left
 * with freed IR, and both free it); a pattern set holds its Context and is destroyed exactly
 * once, by its own object; and an application goes through the arena with the refusals and the
 * revalidation of PassManager.run (objects of IR the rewrites removed become invalid, the others
 * keep their identity), on a payload and a pattern set of the same context only. On MLIR 22 a
 * PDLModule keeps a verified copy of its module and compiles it, with the native functions
 * registered so far, at every freeze(); a set whose patterns or functions are written in Python is
 * applied with MLIR's multithreading off and its callbacks allowed to call Python (patterns.c).
 */
#include "passes.h"

#include <string.h>

/* Upstream 19's name for the capsule of a FrozenRewritePatternSet (Interop.h gives it the pass
 * manager's): kept, so that extensions built against upstream's Interop.h read it. */
#define SET_CAPSULE "mlir.passmanager.PassManager._CAPIPtr"

typedef struct {
  PyObject_HEAD MlirFrozenRewritePatternSet set; /* owned; null once handed to freeze() (MLIR 19) */
  PyObject *context;                             /* TpContext: its arena and MLIRContext */
#if TETHER_MLIR_VERSION >= 22
  PyObject *copy;      /* the Operation of the verified copy of the module (MLIR 22) */
  PyObject *functions; /* list of (is_rewrite, name, callable) registered (MLIR 22) */
#endif
} TpPDLModule;

typedef struct {
  PyObject_HEAD MlirFrozenRewritePatternSet set; /* owned, destroyed with the object */
  PyObject *context;                             /* TpContext: the set's MLIRContext */
#if TETHER_MLIR_VERSION >= 22
  uint64_t id;     /* what its callbacks know it by */
  bool python;     /* its patterns or PDL functions call Python */
  void *pdl_state; /* tether_pdl_freeze_ex's, or NULL */
  tpy_pyfn *fns;   /* the PDL native functions' user data (PyMem), or NULL */
  Py_ssize_t nfns;
#endif
} TpFrozenSet;

static int is_builtin_module(MlirOperation op) {
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  return s.length == 14 && !memcmp(s.data, "builtin.module", 14);
}

/* A Module, or the Operation / OpView of a builtin.module (what upstream's MlirModule conversion
 * stands for): its handle. 0 with TypeError otherwise (InvalidatedError for erased IR). */
static int arg_module(PyObject *o, const char *what, tether_op **h) {
  MlirOperation raw;
  if (!tpy_is(o, tpy.Module) && !tpy_is(o, tpy.OperationBase)) {
    tpy_type_error(what, "a Module (or the Operation of a builtin.module)", o);
    return 0;
  }
  if (!tpy_arg_op(o, h, &raw)) return 0;
  if (!is_builtin_module(raw)) {
    MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(raw));
    PyErr_Format(PyExc_TypeError,
                 "%s must be a Module (or the Operation of a builtin.module), not "
                 "the operation '%.*s'",
                 what, (int)s.length, s.data);
    return 0;
  }
  return 1;
}

/* The text of the first diagnostic captured (new reference), else of the arena's buffer. */
static PyObject *first_message(PyObject *errors, tether_arena *a) {
  if (errors && PyList_GET_SIZE(errors) > 0) {
    PyObject *msg = PyObject_GetAttrString(PyList_GET_ITEM(errors, 0), "message");
    if (msg) return msg;
    PyErr_Clear();
  }
  const char *d = tether_arena_last_error(a);
  return PyUnicode_FromString(*d ? d : "not a PDL pattern module");
}

/* ---- FrozenRewritePatternSet ---------------------------------------------------------------- */

#if TETHER_MLIR_VERSION >= 22
/* Frees the user data of PDL native functions (after the set that calls them). */
static void free_fns(tpy_pyfn *fns, Py_ssize_t n) {
  for (Py_ssize_t i = 0; fns && i < n; i++) {
    Py_XDECREF(fns[i].fn);
    Py_XDECREF(fns[i].name);
  }
  PyMem_Free(fns);
}

PyObject *tpy_frozen_set_new(MlirFrozenRewritePatternSet set, PyObject *context, uint64_t id,
                             bool python, void *pdl_state, tpy_pyfn *fns, Py_ssize_t n) {
  TpFrozenSet *self = PyObject_New(TpFrozenSet, tpy.FrozenRewritePatternSet);
  if (!self) {
    mlirFrozenRewritePatternSetDestroy(set);
    tether_pdl_state_free(pdl_state);
    free_fns(fns, n);
    return NULL;
  }
  self->set = set;
  self->context = Py_NewRef(context);
  self->id = id;
  self->python = python;
  self->pdl_state = pdl_state;
  self->fns = fns;
  self->nfns = n;
  return (PyObject *)self;
}
#else
static PyObject *set_make(MlirFrozenRewritePatternSet set, PyObject *context) {
  TpFrozenSet *self = PyObject_New(TpFrozenSet, tpy.FrozenRewritePatternSet);
  if (!self) {
    mlirFrozenRewritePatternSetDestroy(set);
    return NULL;
  }
  self->set = set;
  self->context = Py_NewRef(context);
  return (PyObject *)self;
}
#endif

static void set_dealloc(TpFrozenSet *self) {
  PyTypeObject *t = Py_TYPE(self);
  /* The context object is released after the set: the set refers to the MLIRContext; what its
   * native functions use after the set, which calls them. */
  if (self->set.ptr) mlirFrozenRewritePatternSetDestroy(self->set);
  self->set.ptr = NULL;
#if TETHER_MLIR_VERSION >= 22
  tether_pdl_state_free(self->pdl_state);
  self->pdl_state = NULL;
  free_fns(self->fns, self->nfns);
  self->fns = NULL;
#endif
  Py_CLEAR(self->context);
  PyObject_Free(self);
  Py_DECREF(t);
}

static PyObject *set_capsule(TpFrozenSet *self, void *c) {
  (void)c;
  return tpy_capsule_with_owner(self->set.ptr, SET_CAPSULE, (PyObject *)self);
}

/* The FrozenRewritePatternSet a capsule of ours stands for (borrowed), else NULL (no error). */
static TpFrozenSet *set_of_capsule(PyObject *cap) {
  PyObject *owner = tpy_capsule_owner(cap);
  return owner && tpy_is(owner, tpy.FrozenRewritePatternSet) ? (TpFrozenSet *)owner : NULL;
}

static PyObject *set_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  TpFrozenSet *s = set_of_capsule(cap);
  if (s) return Py_NewRef(s);
  PyErr_SetString(PyExc_ValueError,
                  "FrozenRewritePatternSet._CAPICreate takes a capsule made by "
                  "FrozenRewritePatternSet._CAPIPtr (a pattern set another binding owns cannot "
                  "be adopted safely: both would destroy it)");
  return NULL;
}

static PyObject *set_context(TpFrozenSet *self, void *c) {
  (void)c;
  return Py_NewRef(self->context);
}

static PyMethodDef set_methods[] = {
    {"_CAPICreate", (PyCFunction)set_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> FrozenRewritePatternSet",
                "The FrozenRewritePatternSet whose _CAPIPtr made the capsule.")},
    TPY_METHODS_END,
};

static PyGetSetDef set_getset[] = {
    {"_CAPIPtr", (getter)set_capsule, NULL,
     TPY_PROP("object",
              "A capsule of the MlirFrozenRewritePatternSet; it keeps this object alive."),
     NULL},
    {"context", (getter)set_context, NULL,
     TPY_PROP("Context", "The Context the patterns belong to (tether's)."), NULL},
    TPY_GETSET_END,
};

static PyType_Slot set_slots[] = {
    {Py_tp_dealloc, set_dealloc},
    {Py_tp_methods, set_methods},
    {Py_tp_getset, set_getset},
    {Py_tp_doc, "A compiled set of rewrite patterns (PDLModule.freeze()), to apply with "
                "apply_patterns_and_fold_greedily as often as wanted."},
    {0, NULL},
};

static PyType_Spec set_spec = {"tether.rewrite.FrozenRewritePatternSet", sizeof(TpFrozenSet), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, set_slots};

/* ---- PDLModule ------------------------------------------------------------------------------ */

/* The status of compiling patterns (rc, with the diagnostics cap captured) as an exception: 1 for
 * TETHER_OK, else 0 with MLIRError (does not verify, or MLIR crashes compiling it) or ValueError
 * (anything but patterns, native functions missing). */
static int compile_status(int rc, tpy_errcap *cap, TpContext *ctx, tether_op *h) {
  if (rc == TETHER_OK) {
    tpy_errcap_close(cap);
    return 1;
  }
  if (rc == TETHER_EVERIFY) {
    tpy_errcap_raise(cap, "the PDL pattern module does not verify");
  } else if (rc == TETHER_EPASS) {
    tpy_errcap_raise(cap, "MLIR cannot compile these PDL patterns");
  } else if (rc == TETHER_EARG) {
    PyObject *errors = tpy_errcap_end(cap);
    PyObject *msg = first_message(errors, ctx->arena);
    if (msg) PyErr_SetObject(PyExc_ValueError, msg);
    Py_XDECREF(msg);
    Py_XDECREF(errors);
  } else {
    tpy_errcap_close(cap);
    TPY_RAISE_RC(rc, h);
  }
  return 0;
}

#if TETHER_MLIR_VERSION < 22
/* Compiles the patterns of module (a handle of a builtin.module) in ctx: 1, or 0 with the
 * exception. */
static int compile(tether_op *h, TpContext *ctx, MlirFrozenRewritePatternSet *out) {
  tpy_errcap cap;
  tpy_errcap_begin(&cap, ctx);
  return compile_status(tether_pdl_freeze(h, out), &cap, ctx, h);
}
#endif

static void pdl_dealloc(TpPDLModule *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (self->set.ptr) mlirFrozenRewritePatternSetDestroy(self->set);
  self->set.ptr = NULL;
#if TETHER_MLIR_VERSION >= 22
  Py_CLEAR(self->copy);
  Py_CLEAR(self->functions);
#endif
  Py_CLEAR(self->context);
  t->tp_free(self);
  Py_DECREF(t);
}

static tpy_sig pdl_new_sig = TPY_SIG(
    "PDLModule(module: Module | _OperationBase)",
    "The PDL patterns (pdl.pattern operations) of a Module. MLIR gets a verified copy: the module "
    "stays yours, unchanged.");

#if TETHER_MLIR_VERSION >= 22
/* PDLModule(module): a verified copy of the module's patterns, compiled at each freeze() with the
 * native functions registered by then. */
static PyObject *pdl_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *module;
  if (!tpy_args(&pdl_new_sig, args, kw, &module, 1)) return NULL;
  tether_op *h, *copy;
  if (!arg_module(module, "module", &h)) return NULL;
  PyObject *ctx = tpy_context_of(tether_handle_arena(h));
  if (!ctx) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  int rc = tether_op_verify(h);
  if (rc == TETHER_OK) rc = tether_op_clone(h, &copy);
  if (!compile_status(rc, &cap, (TpContext *)ctx, h)) {
    Py_DECREF(ctx);
    return NULL;
  }
  PyObject *copy_obj = tpy_wrap_operation(copy);
  TpPDLModule *self = copy_obj ? (TpPDLModule *)type->tp_alloc(type, 0) : NULL;
  PyObject *functions = self ? PyList_New(0) : NULL;
  if (!functions) {
    Py_XDECREF(self);
    Py_XDECREF(copy_obj);
    Py_DECREF(ctx);
    return NULL;
  }
  self->context = ctx; /* the reference tpy_context_of gave */
  self->copy = copy_obj;
  self->functions = functions;
  return (PyObject *)self;
}

static PyObject *pdl_register(tpy_sig *sig, TpPDLModule *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames, bool rewrite) {
  PyObject *a[2];
  MlirStringRef name;
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2) || !tpy_arg_str(a[0], "name", &name))
    return NULL;
  if (!PyUnicode_Check(a[0])) return tpy_type_error("name", "a str", a[0]);
  if (!PyCallable_Check(a[1])) return tpy_type_error("fn", "a callable", a[1]);
  PyObject *entry = Py_BuildValue("(OOO)", rewrite ? Py_True : Py_False, a[0], a[1]);
  if (!entry) return NULL;
  int rc = PyList_Append(self->functions, entry);
  Py_DECREF(entry);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

static tpy_sig pdl_register_rewrite_sig =
    TPY_SIG("register_rewrite_function(name: str, fn: Callable[[PatternRewriter, PDLResultList, "
            "list[Any]], Any]) -> None",
            "fn(rewriter, results, values) is the native rewrite `name`; it appends its results to "
            "`results` and returns something false on success.");

static PyObject *pdl_register_rewrite(TpPDLModule *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  return pdl_register(&pdl_register_rewrite_sig, self, args, nargs, kwnames, true);
}

static tpy_sig pdl_register_constraint_sig =
    TPY_SIG("register_constraint_function(name: str, fn: Callable[[PatternRewriter, PDLResultList, "
            "list[Any]], Any]) -> None",
            "fn(rewriter, results, values) is the native constraint `name`; it returns something "
            "false when the constraint holds.");

static PyObject *pdl_register_constraint(TpPDLModule *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames) {
  return pdl_register(&pdl_register_constraint_sig, self, args, nargs, kwnames, false);
}

/* freeze(): the patterns, compiled with the native functions registered so far. */
static PyObject *pdl_freeze(TpPDLModule *self, PyObject *unused) {
  (void)unused;
  TpContext *ctx = (TpContext *)self->context;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(self->copy, &h, &raw)) return NULL;
  /* A copy of the list: the functions' entries stay alive while they are registered. */
  PyObject *entries = PyList_GetSlice(self->functions, 0, PyList_GET_SIZE(self->functions));
  if (!entries) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(entries);
  tpy_pyfn *fns = PyMem_Calloc(n ? (size_t)n : 1, sizeof *fns);
  tether_pdl_function *tfs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *tfs);
  uint64_t id = tpy_pattern_set_id();
  PyObject *r = NULL;
  if (!fns || !tfs) {
    PyErr_NoMemory();
    goto out;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *e = PyList_GET_ITEM(entries, i);
    fns[i].name = Py_NewRef(PyTuple_GET_ITEM(e, 1));
    fns[i].fn = Py_NewRef(PyTuple_GET_ITEM(e, 2));
    fns[i].set_id = id;
    if (!tpy_arg_str(fns[i].name, "name", &tfs[i].name)) goto out;
    tfs[i].rewrite = fns[i].rewrite = PyTuple_GET_ITEM(e, 0) == Py_True;
    tfs[i].fn = tpy_pdl_callback;
    tfs[i].user = &fns[i];
  }
  MlirFrozenRewritePatternSet set = {NULL};
  void *state = NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, ctx);
  if (!compile_status(tether_pdl_freeze_ex(h, tfs, (intptr_t)n, &set, &state), &cap, ctx, h))
    goto out;
  r = tpy_frozen_set_new(set, self->context, id, n > 0, state, fns, n);
  fns = NULL; /* the set's now */
out:
  if (fns) {
    for (Py_ssize_t i = 0; i < n; i++) {
      Py_XDECREF(fns[i].fn);
      Py_XDECREF(fns[i].name);
    }
    PyMem_Free(fns);
  }
  PyMem_Free(tfs);
  Py_DECREF(entries);
  return r;
}

static PyMethodDef pdl_methods[] = {
    {"freeze", (PyCFunction)pdl_freeze, METH_NOARGS,
     TPY_SIGDOC("freeze() -> FrozenRewritePatternSet",
                "The patterns as a FrozenRewritePatternSet, compiled with the native functions "
                "registered so far (each call compiles them anew).")},
    {"register_rewrite_function", TPY_FASTFN(pdl_register_rewrite), TPY_FAST,
     TPY_DOC(pdl_register_rewrite_sig)},
    {"register_constraint_function", TPY_FASTFN(pdl_register_constraint), TPY_FAST,
     TPY_DOC(pdl_register_constraint_sig)},
    TPY_METHODS_END,
};
#else
static PyObject *pdl_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *module;
  if (!tpy_args(&pdl_new_sig, args, kw, &module, 1)) return NULL;
  tether_op *h;
  if (!arg_module(module, "module", &h)) return NULL;
  PyObject *ctx = tpy_context_of(tether_handle_arena(h));
  if (!ctx) return NULL;
  MlirFrozenRewritePatternSet set = {NULL};
  if (!compile(h, (TpContext *)ctx, &set)) {
    Py_DECREF(ctx);
    return NULL;
  }
  tether_keep_alive(h);
  TpPDLModule *self = (TpPDLModule *)type->tp_alloc(type, 0);
  if (!self) {
    mlirFrozenRewritePatternSetDestroy(set);
    Py_DECREF(ctx);
    return NULL;
  }
  self->set = set;
  self->context = ctx; /* the reference tpy_context_of gave */
  return (PyObject *)self;
}

/* freeze(): the patterns, compiled; as upstream 19's, only the first call has them (MLIR moves
 * them into the set), later calls give a set that matches nothing (upstream crashes there). */
static PyObject *pdl_freeze(TpPDLModule *self, PyObject *unused) {
  (void)unused;
  TpContext *ctx = (TpContext *)self->context;
  MlirFrozenRewritePatternSet set = self->set;
  self->set.ptr = NULL;
  if (!set.ptr) {
    tether_op *empty;
    int rc = tether_module_create(ctx->arena, NULL, &empty);
    if (rc != TETHER_OK) return tpy_raise(rc, NULL, ctx->arena);
    if (!compile(empty, ctx, &set)) return NULL;
    tether_keep_alive(empty);
  }
  return set_make(set, self->context);
}

static PyMethodDef pdl_methods[] = {
    {"freeze", (PyCFunction)pdl_freeze, METH_NOARGS,
     TPY_SIGDOC("freeze() -> FrozenRewritePatternSet",
                "The patterns as a FrozenRewritePatternSet, compiled with the native functions "
                "registered so far (each call compiles them anew).")},
    TPY_METHODS_END,
};
#endif

static PyType_Slot pdl_slots[] = {
    {Py_tp_new, pdl_new},
    {Py_tp_dealloc, pdl_dealloc},
    {Py_tp_methods, pdl_methods},
    {Py_tp_doc, TPY_DOC(pdl_new_sig)},
    {0, NULL},
};

static PyType_Spec pdl_spec = {"tether.rewrite.PDLModule", sizeof(TpPDLModule), 0,
                               Py_TPFLAGS_DEFAULT, pdl_slots};

/* ---- applying patterns ---------------------------------------------------------------------- */

/* The set argument: a FrozenRewritePatternSet or its capsule (borrowed), else NULL with TypeError.
 */
static TpFrozenSet *arg_set(PyObject *o) {
  TpFrozenSet *set = tpy_is(o, tpy.FrozenRewritePatternSet) ? (TpFrozenSet *)o
                     : PyCapsule_CheckExact(o)              ? set_of_capsule(o)
                                                            : NULL;
  if (!set) tpy_type_error("set", "a FrozenRewritePatternSet (or its _CAPIPtr capsule)", o);
  return set;
}

/* Applies set to the regions of h (driver, config: null for MLIR's defaults) through the arena:
 * None, or NULL with the exception (a pattern's, when one written in Python raised). */
static PyObject *apply(tether_op *h, TpFrozenSet *set, tether_driver driver,
                       MlirGreedyRewriteDriverConfig config) {
  tether_arena *arena = tether_handle_arena(h);
  if (((TpContext *)set->context)->arena != arena)
    return PyErr_Format(PyExc_ValueError,
                        "the pattern set and the module belong to different contexts: patterns "
                        "apply only to IR of the context they were made in");
  Py_INCREF(set); /* a diagnostic handler cannot free it while MLIR uses it */
  PyObject *ctx = tpy_context_of(arena);
  if (!ctx) {
    Py_DECREF(set);
    return NULL;
  }
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  bool converged = true;
#if TETHER_MLIR_VERSION >= 22
  /* Python written patterns and functions call Python meanwhile (patterns.c), on this thread. */
  tpy_apply_run run;
  tpy_apply_begin(&run, set->id, (TpContext *)ctx, driver);
  if (set->python) tpy_context_threads_suspend((TpContext *)ctx);
#endif
  int rc = tether_op_apply_patterns_ex(h, set->set, tether_arena_context(arena), driver, config, 0,
                                       &converged);
  PyObject *error = NULL;
#if TETHER_MLIR_VERSION >= 22
  if (set->python) tpy_context_threads_resume((TpContext *)ctx);
  tpy_apply_end(&run);
  error = run.error;
#endif
  PyObject *r = NULL;
  if (error) {
    /* A pattern or function written in Python raised: its exception. */
    tpy_errcap_close(&cap);
    PyErr_SetObject((PyObject *)Py_TYPE(error), error);
    Py_DECREF(error);
  } else if (rc == TETHER_EVERIFY) {
    tpy_errcap_raise(&cap, "Failure while applying patterns: the input does not verify (MLIR's "
                           "patterns assume valid IR)");
  } else if (rc == TETHER_EPASS) {
    tpy_errcap_raise(&cap, "Failure while applying patterns");
  } else {
    tpy_errcap_close(&cap);
    if (rc == TETHER_EBUSY)
      PyErr_Format(PyExc_ValueError,
                   "cannot apply patterns: values or blocks of this IR are used by other IR (a "
                   "detached operation, region or block, or another module), and a rewrite may "
                   "erase them; insert that IR or drop those uses first");
    else if (rc == TETHER_ESUSPENDED)
      PyErr_Format(PyExc_RuntimeError,
                   "cannot apply patterns to this operation now: MLIR is suspended in a pass or "
                   "rewrite pattern written in Python that runs on it (or on IR of its module)");
    else if (rc != TETHER_OK)
      TPY_RAISE_RC(rc, h);
    else if (!converged)
      /* Upstream 19 raised ValueError, upstream 22 RuntimeError. */
      PyErr_SetString(TETHER_MLIR_VERSION >= 22 ? PyExc_RuntimeError : PyExc_ValueError,
                      "pattern application failed to converge");
    else
      r = Py_NewRef(Py_None);
  }
  Py_DECREF(ctx);
  Py_DECREF(set);
  tether_keep_alive(h);
  return r;
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig apply_greedily_op_sig =
    TPY_SIG("apply_patterns_and_fold_greedily(op: _OperationBase, set: FrozenRewritePatternSet, "
            "config: GreedyRewriteConfig | None = None) -> None",
            NULL);
static tpy_sig apply_greedily_sig = TPY_SIG_OR(
    "apply_patterns_and_fold_greedily(module: Module, set: FrozenRewritePatternSet, "
    "config: GreedyRewriteConfig | None = None) -> None",
    "Applies the patterns to what the module or operation holds, greedily, folding as it goes; "
    "RuntimeError when that does not converge. Objects of IR the rewrites removed raise "
    "InvalidatedError afterwards, the others keep their identity.",
    &apply_greedily_op_sig);

/* apply_patterns_and_fold_greedily(module, set, config=None) |
 * apply_patterns_and_fold_greedily(op, set, config=None), as upstream 22's two overloads: a Module,
 * or any operation (the patterns apply to what is nested in it). */
static PyObject *apply_greedily(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)m;
  PyObject *first = nargs ? args[0] : tpy_kwarg(args, nargs, kwnames, "module");
  bool module = first && (nargs ? tpy_is(first, tpy.Module) : true);
  PyObject *a[3];
  if (!tpy_fastargs(module ? &apply_greedily_sig : &apply_greedily_op_sig, args, nargs, kwnames, a,
                    3))
    return NULL;
  tether_op *h;
  MlirOperation raw;
  MlirGreedyRewriteDriverConfig config;
  if (module && !tpy_is(a[0], tpy.Module)) return tpy_type_error("module", "a Module", a[0]);
  if (!module && !tpy_is(a[0], tpy.OperationBase))
    return tpy_type_error("op", "a Module or an operation", a[0]);
  if (!tpy_arg_op(a[0], &h, &raw)) return NULL;
  TpFrozenSet *set = arg_set(a[1]);
  if (!set || !tpy_arg_greedy_config(a[2], &config)) return NULL;
  /* The configuration object stays alive: the call holds its argument. */
  return apply(h, set, TETHER_DRIVER_GREEDY, config);
}

static tpy_sig walk_and_apply_sig =
    TPY_SIG("walk_and_apply_patterns(op: _OperationBase, set: FrozenRewritePatternSet) -> None",
            "Applies the patterns in one walk of what op holds, without folding.");

/* walk_and_apply_patterns(op, set): MLIR's walk driver (one walk, no folding). */
static PyObject *walk_and_apply(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)m;
  PyObject *a[2];
  if (!tpy_fastargs(&walk_and_apply_sig, args, nargs, kwnames, a, 2)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_is(a[0], tpy.Module) && !tpy_is(a[0], tpy.OperationBase))
    return tpy_type_error("op", "a Module or an operation", a[0]);
  if (!tpy_arg_op(a[0], &h, &raw)) return NULL;
  TpFrozenSet *set = arg_set(a[1]);
  if (!set) return NULL;
  return apply(h, set, TETHER_DRIVER_WALK, (MlirGreedyRewriteDriverConfig){NULL});
}

static PyMethodDef functions[] = {
    {"apply_patterns_and_fold_greedily", TPY_FASTFN(apply_greedily), TPY_FAST,
     TPY_DOC(apply_greedily_sig)},
    {"walk_and_apply_patterns", TPY_FASTFN(walk_and_apply), TPY_FAST, TPY_DOC(walk_and_apply_sig)},
    TPY_METHODS_END,
};
#else
static tpy_sig apply_greedily_sig = TPY_SIG(
    "apply_patterns_and_fold_greedily(module: Module, set: FrozenRewritePatternSet) -> None",
    "Applies the patterns to the module greedily, folding as it goes; ValueError when "
    "that does not converge. Objects of IR the rewrites removed raise InvalidatedError "
    "afterwards, the others keep their identity.");

static PyObject *apply_greedily(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)m;
  PyObject *a[2];
  if (!tpy_fastargs(&apply_greedily_sig, args, nargs, kwnames, a, 2)) return NULL;
  tether_op *h;
  if (!arg_module(a[0], "module", &h)) return NULL;
  TpFrozenSet *set = arg_set(a[1]);
  if (!set) return NULL;
  return apply(h, set, TETHER_DRIVER_GREEDY, (MlirGreedyRewriteDriverConfig){NULL});
}

static PyMethodDef functions[] = {
    {"apply_patterns_and_fold_greedily", TPY_FASTFN(apply_greedily), TPY_FAST,
     TPY_DOC(apply_greedily_sig)},
    TPY_METHODS_END,
};
#endif

int tpy_init_rewrite(PyObject *m) {
  PyObject *sub = PyModule_New("_rewrite");
  if (!sub) return -1;
  PyObject *pdl = tpy_type_from_spec(m, &pdl_spec, NULL);
  PyObject *set = pdl ? tpy_type_from_spec(m, &set_spec, NULL) : NULL;
  if (!set || PyModule_AddObjectRef(sub, "PDLModule", pdl) < 0 ||
      PyModule_AddObjectRef(sub, "FrozenRewritePatternSet", set) < 0 ||
      PyModule_AddFunctions(sub, functions) < 0 || PyModule_AddObject(m, "_rewrite", sub) < 0) {
    Py_XDECREF(pdl);
    Py_XDECREF(set);
    Py_DECREF(sub);
    return -1;
  }
  Py_DECREF(pdl); /* the submodule holds it */
  tpy.FrozenRewritePatternSet = (PyTypeObject *)set;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_init_patterns(sub) < 0) return -1;
#endif
  return 0;
}
