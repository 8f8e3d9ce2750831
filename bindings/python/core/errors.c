/* errors.c: the exceptions of the extension and how tether's statuses become them.
 *
 * InvalidatedError (a RuntimeError) for a handle whose IR is gone, with the reason the arena
 * recorded; CastError (a TypeError and a RuntimeError, as upstream's pybind11 cast errors are);
 * MLIRError (defined in tether/ir.py, handed over by _set_hooks) for MLIR's diagnosed failures;
 * ValueError, IndexError, MemoryError for the other statuses. Every function here returns NULL
 * with the exception set, so callers `return tpy_raise(...)`.
 */
#include "core.h"

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

PyObject *tpy_raise(int rc, const void *handle, tether_arena *arena) {
  const char *diag = arena ? tether_arena_last_error(arena) : "";
  const char *sep = *diag ? ":\n" : "";
  if (rc == TETHER_EINVALID) {
    const char *what = handle ? kind_name(handle) : "object";
    switch (handle ? tether_handle_reason(handle) : TETHER_REASON_NONE) {
    case TETHER_REASON_ERASED:
      return PyErr_Format(tpy.InvalidatedError, "the %s has been invalidated: it was erased", what);
    case TETHER_REASON_PARENT_ERASED:
      return PyErr_Format(tpy.InvalidatedError,
                          "the %s has been invalidated: an ancestor was erased with it (parent "
                          "erased)",
                          what);
    case TETHER_REASON_REMOVED:
      return PyErr_Format(tpy.InvalidatedError,
                          "the %s has been invalidated: it was removed by a pass or another "
                          "change to the IR",
                          what);
    default:
      return PyErr_Format(tpy.InvalidatedError, "the %s has been invalidated", what);
    }
  }
  switch (rc) {
  case TETHER_EPARSE:
  case TETHER_EVERIFY:
  case TETHER_EPASS: {
    PyObject *msg = PyUnicode_FromFormat("%s%s%s", tether_strerror(rc), sep, diag);
    PyObject *none = PyList_New(0);
    if (msg && none) tpy_raise_mlir_error(PyUnicode_AsUTF8(msg), none);
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
  case TETHER_ESUSPENDED:
    return PyErr_Format(PyExc_RuntimeError,
                        "MLIR is suspended in a pass or rewrite pattern written in Python and "
                        "still holds this IR: it cannot be erased, moved, used from other IR or "
                        "rewritten by MLIR until the pass or pattern returns (a pattern changes "
                        "its IR through the PatternRewriter)");
  case TETHER_ERUNNING:
    return PyErr_Format(PyExc_RuntimeError,
                        "the IR of this context cannot be used while MLIR runs passes, a "
                        "transform script or the verifier on it (from a diagnostic handler)");
  default:
    return PyErr_Format(PyExc_ValueError, "%s%s%s", tether_strerror(rc), sep, diag);
  }
}

PyObject *tpy_type_error(const char *what, const char *expected, PyObject *got) {
  return PyErr_Format(PyExc_TypeError, "%s must be %s, not %s", what, expected,
                      got == Py_None ? "None" : Py_TYPE(got)->tp_name);
}

PyObject *tpy_cast_error(PyObject *got) {
  if (got == Py_None)
    PyErr_SetString(tpy.CastError,
                    "Invalid attribute (None?) when attempting to create an ArrayAttribute");
  else
    PyErr_Format(tpy.CastError,
                 "Invalid attribute when attempting to create an ArrayAttribute (%s is not an "
                 "Attribute)",
                 Py_TYPE(got)->tp_name);
  return NULL;
}

void tpy_raise_callback_error(void) {
  /* As upstream: the callback's exception becomes a RuntimeError (chained to it). */
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  PyErr_NormalizeException(&et, &ev, &tb);
  PyObject *s = ev ? PyObject_Str(ev) : NULL;
  PyErr_Format(PyExc_RuntimeError, "Exception raised in callback: %s: %U",
               et ? ((PyTypeObject *)et)->tp_name : "?", s ? s : Py_None);
  Py_XDECREF(s);
  PyObject *nt, *nv, *ntb;
  PyErr_Fetch(&nt, &nv, &ntb);
  PyErr_NormalizeException(&nt, &nv, &ntb);
  if (ev) PyException_SetCause(nv, Py_NewRef(ev));
  PyErr_Restore(nt, nv, ntb);
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(tb);
}

static tpy_sig mod_set_hooks_sig =
    TPY_SIG("_set_hooks(MLIRError: type, DiagnosticSeverity: type, /) -> None",
            "The Python classes tether/ir.py defines: MLIRError, DiagnosticSeverity.");

static PyObject *mod_set_hooks(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  PyObject *a[2];
  if (!tpy_fastargs(&mod_set_hooks_sig, args, nargs, NULL, a, 2)) return NULL;
  PyObject *mlir_error = a[0], *severity = a[1];
  Py_XSETREF(tpy.MLIRError, Py_NewRef(mlir_error));
  Py_XSETREF(tpy.DiagnosticSeverity, Py_NewRef(severity));
  Py_RETURN_NONE;
}

static PyMethodDef error_functions[] = {
    {"_set_hooks", TPY_FASTFN(mod_set_hooks), METH_FASTCALL, TPY_DOC(mod_set_hooks_sig)},
    TPY_METHODS_END,
};

int tpy_init_errors(PyObject *m) {
  tpy.InvalidatedError = PyErr_NewExceptionWithDoc(
      "tether.ir.InvalidatedError",
      "The object stands for IR that was erased, removed by a pass, or destroyed.",
      PyExc_RuntimeError, NULL);
  if (!tpy.InvalidatedError ||
      PyModule_AddObjectRef(m, "InvalidatedError", tpy.InvalidatedError) < 0)
    return -1;
  /* upstream's pybind11 cast errors are RuntimeErrors; they are also TypeErrors here. */
  PyObject *bases = PyTuple_Pack(2, PyExc_TypeError, PyExc_RuntimeError);
  tpy.CastError = bases ? PyErr_NewExceptionWithDoc(
                              "tether.ir.CastError",
                              "A value of the wrong kind (a TypeError, and a RuntimeError as "
                              "upstream's cast errors are).",
                              bases, NULL)
                        : NULL;
  Py_XDECREF(bases);
  if (!tpy.CastError || PyModule_AddObjectRef(m, "CastError", tpy.CastError) < 0) return -1;
  return PyModule_AddFunctions(m, error_functions);
}

PyObject *tpy_raise_mlir_error(const char *message, PyObject *diagnostics) {
  if (!tpy.MLIRError) {
    PyErr_SetString(PyExc_RuntimeError, message);
    return NULL;
  }
  PyObject *e = PyObject_CallFunction(tpy.MLIRError, "sO", message, diagnostics);
  if (e) {
    PyErr_SetObject((PyObject *)Py_TYPE(e), e);
    Py_DECREF(e);
  }
  return NULL;
}
