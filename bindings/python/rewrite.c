/* rewrite.c: the C side of tether.rewrite (upstream's mlir.rewrite), in _tether._rewrite:
 * PDLModule, FrozenRewritePatternSet and apply_patterns_and_fold_greedily, over the arena's
 * tether_pdl_freeze and tether_op_apply_patterns.
 *
 * Invariant: MLIR never owns IR a Python object owns, and applying patterns changes the payload
 * as a pass pipeline does. So a PDLModule gives MLIR a verified copy of the module it is made
 * from (upstream hands MLIR the module itself, which MLIR then destroys: the Module object is left
 * with freed IR, and both free it); a pattern set holds its Context and is destroyed exactly
 * once, by its own object; and an application goes through the arena with the refusals and the
 * revalidation of PassManager.run (objects of IR the rewrites removed become invalid, the others
 * keep their identity), on a payload and a pattern set of the same context only.
 */
#include "tether_py.h"

#include <string.h>

/* Upstream 19's name for the capsule of a FrozenRewritePatternSet (Interop.h gives it the pass
 * manager's): kept, so that extensions built against upstream's Interop.h read it. */
#define SET_CAPSULE "mlir.passmanager.PassManager._CAPIPtr"

typedef struct {
  PyObject_HEAD MlirFrozenRewritePatternSet set; /* owned; null once handed to freeze() */
  PyObject *context;                             /* TpContext: its arena and MLIRContext */
} TpPDLModule;

typedef struct {
  PyObject_HEAD MlirFrozenRewritePatternSet set; /* owned, destroyed with the object */
  PyObject *context;                             /* TpContext: the set's MLIRContext */
} TpFrozenSet;

static PyTypeObject *FrozenSetType; /* the module keeps the class for the process */

static int is_builtin_module(MlirOperation op) {
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  return s.length == 14 && !memcmp(s.data, "builtin.module", 14);
}

/* A Module, or the Operation / OpView of a builtin.module (what upstream's MlirModule conversion
 * stands for): its handle. 0 with TypeError otherwise (InvalidatedError for erased IR). */
static int arg_module(PyObject *o, const char *what, tether_op **h) {
  MlirOperation raw;
  if (!tp_is(o, tp.Module) && !tp_is(o, tp.OperationBase)) {
    tp_type_error(what, "a Module (or the Operation of a builtin.module)", o);
    return 0;
  }
  if (!tp_arg_op(o, h, &raw)) return 0;
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

static PyObject *set_make(MlirFrozenRewritePatternSet set, PyObject *context) {
  TpFrozenSet *self = PyObject_New(TpFrozenSet, FrozenSetType);
  if (!self) {
    mlirFrozenRewritePatternSetDestroy(set);
    return NULL;
  }
  self->set = set;
  self->context = Py_NewRef(context);
  return (PyObject *)self;
}

static void set_dealloc(TpFrozenSet *self) {
  PyTypeObject *t = Py_TYPE(self);
  /* The context object is released after the set: the set refers to the MLIRContext. */
  if (self->set.ptr) mlirFrozenRewritePatternSetDestroy(self->set);
  self->set.ptr = NULL;
  Py_CLEAR(self->context);
  PyObject_Free(self);
  Py_DECREF(t);
}

static PyObject *set_capsule(TpFrozenSet *self, void *c) {
  (void)c;
  return tp_capsule_with_owner(self->set.ptr, SET_CAPSULE, (PyObject *)self);
}

/* The FrozenRewritePatternSet a capsule of ours stands for (borrowed), else NULL (no error). */
static TpFrozenSet *set_of_capsule(PyObject *cap) {
  PyObject *owner = tp_capsule_owner(cap);
  return owner && tp_is(owner, FrozenSetType) ? (TpFrozenSet *)owner : NULL;
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
     "_CAPICreate(capsule): the FrozenRewritePatternSet whose _CAPIPtr made the capsule."},
    TP_METHODS_END,
};

static PyGetSetDef set_getset[] = {
    {"_CAPIPtr", (getter)set_capsule, NULL,
     "A capsule of the MlirFrozenRewritePatternSet; it keeps this object alive.", NULL},
    {"context", (getter)set_context, NULL, "The Context the patterns belong to (tether's).", NULL},
    TP_GETSET_END,
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

/* Compiles the patterns of module (a handle of a builtin.module) in ctx; NULL with MLIRError
 * (does not verify, or MLIR crashes compiling it) or ValueError (anything but patterns). */
static int compile(tether_op *h, TpContext *ctx, MlirFrozenRewritePatternSet *out) {
  tp_errcap cap;
  tp_errcap_begin(&cap, ctx);
  int rc = tether_pdl_freeze(h, out);
  if (rc == TETHER_OK) {
    Py_XDECREF(tp_errcap_end(&cap));
    return 1;
  }
  if (rc == TETHER_EVERIFY) {
    tp_errcap_raise(&cap, "the PDL pattern module does not verify");
  } else if (rc == TETHER_EPASS) {
    tp_errcap_raise(&cap, "MLIR cannot compile these PDL patterns");
  } else if (rc == TETHER_EARG) {
    PyObject *errors = tp_errcap_end(&cap);
    PyObject *msg = first_message(errors, ctx->arena);
    if (msg) PyErr_SetObject(PyExc_ValueError, msg);
    Py_XDECREF(msg);
    Py_XDECREF(errors);
  } else {
    Py_XDECREF(tp_errcap_end(&cap));
    TP_RAISE_RC(rc, h);
  }
  return 0;
}

static PyObject *pdl_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"module", NULL};
  PyObject *module;
  if (!tp_args("PDLModule", args, kw, names, 1, 1, &module)) return NULL;
  tether_op *h;
  if (!arg_module(module, "module", &h)) return NULL;
  PyObject *ctx = tp_context_of(tether_handle_arena(h));
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
  self->context = ctx; /* the reference tp_context_of gave */
  return (PyObject *)self;
}

static void pdl_dealloc(TpPDLModule *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (self->set.ptr) mlirFrozenRewritePatternSetDestroy(self->set);
  self->set.ptr = NULL;
  Py_CLEAR(self->context);
  t->tp_free(self);
  Py_DECREF(t);
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
    if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
    if (!compile(empty, ctx, &set)) return NULL;
    tether_keep_alive(empty);
  }
  return set_make(set, self->context);
}

static PyMethodDef pdl_methods[] = {
    {"freeze", (PyCFunction)pdl_freeze, METH_NOARGS,
     "The patterns as a FrozenRewritePatternSet. As upstream's, only the first call gives them; "
     "later calls give a set that matches nothing."},
    TP_METHODS_END,
};

static PyType_Slot pdl_slots[] = {
    {Py_tp_new, pdl_new},
    {Py_tp_dealloc, pdl_dealloc},
    {Py_tp_methods, pdl_methods},
    {Py_tp_doc, "PDLModule(module): the PDL patterns (pdl.pattern operations) of a Module. MLIR "
                "gets a verified copy: the module stays yours, unchanged."},
    {0, NULL},
};

static PyType_Spec pdl_spec = {"tether.rewrite.PDLModule", sizeof(TpPDLModule), 0,
                               Py_TPFLAGS_DEFAULT, pdl_slots};

/* ---- apply_patterns_and_fold_greedily ------------------------------------------------------- */

static PyObject *apply_greedily(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)m;
  static const char *const names[] = {"module", "set", NULL};
  PyObject *a[2];
  if (!tp_fastargs("apply_patterns_and_fold_greedily", args, nargs, kwnames, names, 2, 2, a))
    return NULL;
  tether_op *h;
  if (!arg_module(a[0], "module", &h)) return NULL;
  TpFrozenSet *set = tp_is(a[1], FrozenSetType)   ? (TpFrozenSet *)a[1]
                     : PyCapsule_CheckExact(a[1]) ? set_of_capsule(a[1])
                                                  : NULL;
  if (!set)
    return tp_type_error("set", "a FrozenRewritePatternSet (or its _CAPIPtr capsule)", a[1]);
  tether_arena *arena = tether_handle_arena(h);
  if (((TpContext *)set->context)->arena != arena)
    return PyErr_Format(PyExc_ValueError,
                        "the pattern set and the module belong to different contexts: patterns "
                        "apply only to IR of the context they were made in");
  Py_INCREF(set); /* a diagnostic handler cannot free it while MLIR uses it */
  PyObject *ctx = tp_context_of(arena);
  if (!ctx) {
    Py_DECREF(set);
    return NULL;
  }
  tp_errcap cap;
  tp_errcap_begin(&cap, (TpContext *)ctx);
  bool converged = true;
  int rc = tether_op_apply_patterns(h, set->set, tether_arena_context(arena), 0, &converged);
  PyObject *r = NULL;
  if (rc == TETHER_EVERIFY) {
    tp_errcap_raise(&cap, "Failure while applying patterns: the input does not verify (MLIR's "
                          "patterns assume valid IR)");
  } else if (rc == TETHER_EPASS) {
    tp_errcap_raise(&cap, "Failure while applying patterns");
  } else {
    Py_XDECREF(tp_errcap_end(&cap));
    if (rc == TETHER_EBUSY)
      PyErr_Format(PyExc_ValueError,
                   "cannot apply patterns: values or blocks of this IR are used by other IR (a "
                   "detached operation, region or block, or another module), and a rewrite may "
                   "erase them; insert that IR or drop those uses first");
    else if (rc != TETHER_OK)
      TP_RAISE_RC(rc, h);
    else if (!converged)
      PyErr_SetString(PyExc_ValueError, "pattern application failed to converge");
    else
      r = Py_NewRef(Py_None);
  }
  Py_DECREF(ctx);
  Py_DECREF(set);
  tether_keep_alive(h);
  return r;
}

static PyMethodDef functions[] = {
    {"apply_patterns_and_fold_greedily", TP_FASTFN(apply_greedily), TP_FAST,
     "apply_patterns_and_fold_greedily(module, set): applies the patterns to the module greedily, "
     "folding as it goes; ValueError when that does not converge. Objects of IR the rewrites "
     "removed raise InvalidatedError afterwards, the others keep their identity."},
    TP_METHODS_END,
};

int tp_init_rewrite(PyObject *m) {
  PyObject *sub = PyModule_New("_rewrite");
  if (!sub) return -1;
  PyObject *pdl = PyType_FromModuleAndSpec(m, &pdl_spec, NULL);
  PyObject *set = pdl ? PyType_FromModuleAndSpec(m, &set_spec, NULL) : NULL;
  if (!set || PyModule_AddObjectRef(sub, "PDLModule", pdl) < 0 ||
      PyModule_AddObjectRef(sub, "FrozenRewritePatternSet", set) < 0 ||
      PyModule_AddFunctions(sub, functions) < 0 || PyModule_AddObject(m, "_rewrite", sub) < 0) {
    Py_XDECREF(pdl);
    Py_XDECREF(set);
    Py_DECREF(sub);
    return -1;
  }
  Py_DECREF(pdl); /* the submodule holds it */
  FrozenSetType = (PyTypeObject *)set;
  return 0;
}
