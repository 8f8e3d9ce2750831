/* transform_interpreter.c: the C side of tether.dialects.transform.interpreter (upstream's
 * _mlirTransformInterpreter), in _tether._transform_interpreter: TransformOptions,
 * apply_named_sequence and copy_symbols_and_merge_into, over the arena's tether_op_apply_transform
 * and tether_op_merge_symbols.
 *
 * Invariant: the interpreter changes the payload's IR as a pass pipeline does, so it goes through
 * the arena with the same refusals (input that does not verify, IR other IR uses) and the same
 * revalidation (objects of removed IR become invalid, the others keep their identity). Failures
 * raise MLIRError with MLIR's diagnostics; the Python module makes them ValueErrors worded as
 * upstream's.
 */
#include "passes.h"

typedef struct {
  PyObject_HEAD tether_transform_options o;
} TpTransformOptions;

static PyObject *options_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
    return PyErr_Format(PyExc_TypeError, "TransformOptions() takes no arguments");
  TpTransformOptions *self = (TpTransformOptions *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->o = (tether_transform_options){true, true}; /* MLIR's defaults */
  return (PyObject *)self;
}

static void options_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

/* A bool the way upstream's setter (a pybind11 bool) takes it: True, False, None (false), or an
 * object with a truth value of its own (int, float, numpy.bool_); TypeError for anything else. */
static int bool_arg(PyObject *v, const char *name, bool *out) {
  if (!v) {
    PyErr_Format(PyExc_AttributeError, "property '%s' of 'TransformOptions' object has no deleter",
                 name);
    return -1;
  }
  if (v == Py_None) {
    *out = false;
    return 0;
  }
  if (v != Py_True && v != Py_False &&
      !(Py_TYPE(v)->tp_as_number && Py_TYPE(v)->tp_as_number->nb_bool)) {
    PyErr_Format(PyExc_TypeError, "%s must be a bool, not %.100s", name, Py_TYPE(v)->tp_name);
    return -1;
  }
  int r = PyObject_IsTrue(v);
  if (r < 0) return -1;
  *out = r;
  return 0;
}

static PyObject *get_expensive(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((TpTransformOptions *)self)->o.expensive_checks);
}

static int set_expensive(PyObject *self, PyObject *v, void *c) {
  (void)c;
  return bool_arg(v, "expensive_checks", &((TpTransformOptions *)self)->o.expensive_checks);
}

static PyObject *get_single(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(((TpTransformOptions *)self)->o.enforce_single_top_level_transform_op);
}

static int set_single(PyObject *self, PyObject *v, void *c) {
  (void)c;
  return bool_arg(v, "enforce_single_top_level_transform_op",
                  &((TpTransformOptions *)self)->o.enforce_single_top_level_transform_op);
}

static PyGetSetDef options_getset[] = {
    {"expensive_checks", get_expensive, set_expensive,
     TPY_PROP("bool", "Whether the interpreter checks that handles are not used after the payload "
                      "they point to was changed (MLIR's default: True)."),
     NULL},
    {"enforce_single_top_level_transform_op", get_single, set_single,
     TPY_PROP("bool", "Whether a script may have only one top-level transform operation (MLIR's "
                      "default: True)."),
     NULL},
    TPY_GETSET_END,
};

static PyType_Slot options_slots[] = {
    {Py_tp_new, options_new},
    {Py_tp_dealloc, options_dealloc},
    {Py_tp_getset, options_getset},
    {Py_tp_doc, TPY_SIGDOC("TransformOptions()",
                           "Options of the transform interpreter (MLIR's TransformOptions).")},
    {0, NULL},
};

static PyType_Spec options_spec = {"tether.dialects.transform.interpreter.TransformOptions",
                                   sizeof(TpTransformOptions), 0, Py_TPFLAGS_DEFAULT,
                                   options_slots};

/* The arena's status as an exception; message: what failed, for MLIR's failures. */
static PyObject *raise_status(int rc, tpy_errcap *cap, tether_op *h, const char *message,
                              const char *verify_message, const char *busy_message) {
  if (rc == TETHER_EPASS) return tpy_errcap_raise(cap, message);
  if (rc == TETHER_EVERIFY) return tpy_errcap_raise(cap, verify_message);
  tpy_errcap_close(cap);
  if (rc == TETHER_EBUSY) return PyErr_Format(PyExc_ValueError, "%s", busy_message);
  if (rc == TETHER_ECONTEXT)
    return PyErr_Format(PyExc_ValueError, "objects of different contexts cannot be mixed");
  return TPY_RAISE_RC(rc, h);
}

static tpy_sig apply_named_sequence_sig = TPY_SIG(
    "apply_named_sequence(payload_root: _OperationBase, transform_root: _OperationBase, "
    "transform_module: _OperationBase, transform_options: TransformOptions | None = None) -> None",
    "Operations only (the Python module unpacks op views).");

static PyObject *apply_named_sequence(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  (void)self;
  PyObject *a[4];
  if (!tpy_fastargs(&apply_named_sequence_sig, args, nargs, kwnames, a, 4)) return NULL;
  tether_op *h[3];
  MlirOperation raw;
  for (int i = 0; i < 3; i++)
    if (!tpy_arg_op(a[i], &h[i], &raw)) return NULL;
  const tether_transform_options *o = NULL;
  if (a[3] && a[3] != Py_None) {
    if (!tpy_is(a[3], tpy.TransformOptions))
      return tpy_type_error("transform_options", "a TransformOptions", a[3]);
    o = &((TpTransformOptions *)a[3])->o;
  }
  PyObject *ctx = tpy_context_of(tether_handle_arena(h[0]));
  if (!ctx) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  int rc = tether_op_apply_transform(h[0], h[1], h[2], o, 0);
  PyObject *r = rc == TETHER_OK
                    ? (Py_XDECREF(tpy_errcap_end(&cap)), Py_NewRef(Py_None))
                    : raise_status(rc, &cap, h[0], "Failed to apply named transform sequence.",
                                   "Failed to apply named transform sequence: the "
                                   "input does not verify (MLIR's transforms assume "
                                   "valid IR).",
                                   "cannot apply the transform sequence: values or "
                                   "blocks of the payload's IR are used by other IR "
                                   "(a detached operation, region or block, or "
                                   "another module), and a transform may erase them; "
                                   "insert that IR or drop those uses first");
  Py_DECREF(ctx);
  tether_keep_alive(h[0]);
  tether_keep_alive(h[1]);
  tether_keep_alive(h[2]);
  return r;
}

static tpy_sig copy_symbols_sig =
    TPY_SIG("copy_symbols_and_merge_into(target: _OperationBase, other: _OperationBase) -> None",
            "Operations only.");

static PyObject *copy_symbols(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)self;
  PyObject *a[2];
  if (!tpy_fastargs(&copy_symbols_sig, args, nargs, kwnames, a, 2)) return NULL;
  tether_op *h[2];
  MlirOperation raw;
  for (int i = 0; i < 2; i++)
    if (!tpy_arg_op(a[i], &h[i], &raw)) return NULL;
  PyObject *ctx = tpy_context_of(tether_handle_arena(h[0]));
  if (!ctx) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  int rc = tether_op_merge_symbols(h[0], h[1]);
  PyObject *r =
      rc == TETHER_OK
          ? (Py_XDECREF(tpy_errcap_end(&cap)), Py_NewRef(Py_None))
          : raise_status(rc, &cap, h[0], "Failed to merge symbols.",
                         "Failed to merge symbols: the input does not verify.",
                         "cannot merge symbols: values or blocks of the target's IR are used by "
                         "other IR (a detached operation, region or block, or another module), "
                         "and merging may erase declarations; insert that IR or drop those uses "
                         "first");
  Py_DECREF(ctx);
  tether_keep_alive(h[0]);
  tether_keep_alive(h[1]);
  return r;
}

static PyMethodDef functions[] = {
    {"apply_named_sequence", TPY_FASTFN(apply_named_sequence), TPY_FAST,
     TPY_DOC(apply_named_sequence_sig)},
    {"copy_symbols_and_merge_into", TPY_FASTFN(copy_symbols), TPY_FAST, TPY_DOC(copy_symbols_sig)},
    TPY_METHODS_END,
};

int tpy_init_transform_interpreter(PyObject *m) {
  PyObject *sub = PyModule_New("_transform_interpreter");
  if (!sub) return -1;
  PyObject *cls = tpy_type_from_spec(m, &options_spec, NULL);
  if (!cls || PyModule_AddObjectRef(sub, "TransformOptions", cls) < 0 ||
      PyModule_AddFunctions(sub, functions) < 0 ||
      PyModule_AddObject(m, "_transform_interpreter", sub) < 0) {
    Py_XDECREF(cls);
    Py_DECREF(sub);
    return -1;
  }
  tpy.TransformOptions = (PyTypeObject *)cls; /* the module keeps the class for the process */
  return 0;
}
