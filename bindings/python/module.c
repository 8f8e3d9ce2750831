/* module.c: the _tether module: types, exceptions, Context, collection and safe points.
 *
 * Invariant: MLIR IR is destroyed only at tether safe points, which this module reaches with the
 * GIL held: inside tether calls, in tether.collect(), and in a pending call that the arena's
 * notifier schedules when the collector queued work. After interpreter shutdown begins, nothing is
 * destroyed (tether_shutdown).
 */
#include "tether_py.h"

#include <string.h>

TpState tp;
tether_pin_pool *tp_pins;

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
      return PyErr_Format(tp.InvalidatedError, "the %s has been invalidated: it was erased", what);
    case TETHER_REASON_PARENT_ERASED:
      return PyErr_Format(tp.InvalidatedError,
                          "the %s has been invalidated: an ancestor was erased with it (parent "
                          "erased)",
                          what);
    case TETHER_REASON_REMOVED:
      return PyErr_Format(tp.InvalidatedError,
                          "the %s has been invalidated: it was removed by a pass or another "
                          "change to the IR",
                          what);
    default:
      return PyErr_Format(tp.InvalidatedError, "the %s has been invalidated", what);
    }
  }
  switch (rc) {
  case TETHER_EPARSE:
  case TETHER_EVERIFY:
  case TETHER_EPASS: {
    PyObject *msg = PyUnicode_FromFormat("%s%s%s", tether_strerror(rc), sep, diag);
    PyObject *none = PyList_New(0);
    if (msg && none) tp_raise_mlir_error(PyUnicode_AsUTF8(msg), none);
    Py_XDECREF(msg);
    Py_XDECREF(none);
    return NULL;
  }
  case TETHER_ENOMEM:
    return PyErr_NoMemory();
  case TETHER_ERANGE:
    return PyErr_Format(PyExc_IndexError, "index out of range");
  case TETHER_EBUSY:
    return PyErr_Format(PyExc_ValueError,
                        "cannot erase: results or blocks of the operation are still used outside "
                        "it (drop or replace those uses first)");
  case TETHER_ECONTEXT:
    return PyErr_Format(PyExc_ValueError, "objects of different contexts cannot be mixed");
  case TETHER_ESTATE:
    return PyErr_Format(PyExc_ValueError, "the object already has a parent: detach it first");
  case TETHER_ERUNNING:
    return PyErr_Format(PyExc_RuntimeError,
                        "the IR of this context cannot be used while MLIR runs passes, a "
                        "transform script or the verifier on it (from a diagnostic handler)");
  default:
    return PyErr_Format(PyExc_ValueError, "%s%s%s", tether_strerror(rc), sep, diag);
  }
}

PyObject *tp_type_error(const char *what, const char *expected, PyObject *got) {
  return PyErr_Format(PyExc_TypeError, "%s must be %s, not %s", what, expected,
                      got == Py_None ? "None" : Py_TYPE(got)->tp_name);
}

/* ---- collection and safe points -------------------------------------------------------------- */

static int pending_scheduled;

static int pending_safepoint(void *arg) {
  (void)arg;
  pending_scheduled = 0;
  if (!_Py_IsFinalizing()) tether_safepoint_all();
  return 0;
}

/* A Context object went away: its MLIRContext (with everything MLIR keeps in it, e.g. the buffers
 * of DenseResourceElementsAttr) should go soon, as upstream's does when its last reference goes,
 * not at some later collection. One collection, run at the interpreter's next pending-call check
 * (never inside the deallocation that asked for it). */
static int collect_scheduled;

static int pending_collect(void *arg) {
  (void)arg;
  collect_scheduled = 0;
  if (!_Py_IsFinalizing()) tether_collect_all();
  return 0;
}

void tp_schedule_collection(void) {
  if (collect_scheduled || _Py_IsFinalizing()) return;
  collect_scheduled = 1;
  if (Py_AddPendingCall(pending_collect, NULL) != 0) collect_scheduled = 0;
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
  return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n}", "arenas", g.arenas, "arenas_pending",
                       g.arenas_pending, "pins", g.pins, "threads", g.threads, "children",
                       g.children);
}

static PyObject *mod_set_hooks(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  static const char *const names[] = {"MLIRError", "DiagnosticSeverity", NULL};
  PyObject *a[2];
  if (!tp_fastargs("_set_hooks", args, nargs, NULL, names, 2, 2, a)) return NULL;
  PyObject *mlir_error = a[0], *severity = a[1];
  Py_XSETREF(tp.MLIRError, Py_NewRef(mlir_error));
  Py_XSETREF(tp.DiagnosticSeverity, Py_NewRef(severity));
  Py_RETURN_NONE;
}

static PyMethodDef module_functions[] = {
    {"collect", mod_collect, METH_NOARGS,
     "Runs Python's collection, then the arena's, and destroys unreachable IR."},
    {"_shutdown", mod_shutdown, METH_NOARGS, "Stops all IR destruction (interpreter exit)."},
    {"_global_stats", mod_stats, METH_NOARGS, "Process-wide arena counters."},
    {"_set_hooks", TP_FASTFN(mod_set_hooks), METH_FASTCALL,
     "_set_hooks(MLIRError, DiagnosticSeverity): the Python classes tether/ir.py defines."},
    TP_METHODS_END,
};

/* ---- module ---------------------------------------------------------------------------------- */

int tp_add_type(PyObject *m, PyType_Spec *spec, PyObject *base, PyTypeObject **out) {
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

static int exec_module(PyObject *m) {
  if (tp.Context) {
    PyErr_SetString(PyExc_ImportError, "tether._tether can be loaded once per process");
    return -1;
  }
  /* The interpreter's static data holds no tether object (wrappers pin theirs). */
  tether_skip_program_data();
  /* Every wrapper's pin: the GIL serializes them, so the pool needs no lock of its own. */
  if (!(tp_pins = tether_pin_pool_new())) {
    PyErr_NoMemory();
    return -1;
  }
  tp.InvalidatedError = PyErr_NewExceptionWithDoc(
      "tether.ir.InvalidatedError",
      "The object stands for IR that was erased, removed by a pass, or destroyed.",
      PyExc_RuntimeError, NULL);
  if (!tp.InvalidatedError || PyModule_AddObjectRef(m, "InvalidatedError", tp.InvalidatedError) < 0)
    return -1;
  /* Order matters: classes are created before the classes that refer to them at init. */
  if (tp_init_values(m) < 0 || tp_init_context(m) < 0 || tp_init_locations(m) < 0 ||
      tp_init_diagnostics(m) < 0 || tp_init_types(m) < 0 || tp_init_attributes(m) < 0 ||
      tp_init_affine(m) < 0 || tp_init_ops(m) < 0 || tp_init_ir(m) < 0 ||
      tp_init_passmanager(m) < 0 || tp_init_symbols(m) < 0 || tp_init_interfaces(m) < 0 ||
      tp_init_dialect_types(m) < 0 || tp_init_dialect_quant_sparse(m) < 0 ||
      tp_init_execution_engine(m) < 0 || tp_init_transform_interpreter(m) < 0 ||
      tp_init_linalg(m) < 0 || tp_init_rewrite(m) < 0)
    return -1;
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

PyMODINIT_FUNC PyInit__tether(void);
PyMODINIT_FUNC PyInit__tether(void) { return PyModuleDef_Init(&module_def); }
