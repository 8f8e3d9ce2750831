/* smt.c: the smt dialect's types (BoolType, BitVectorType, IntType) and export_smtlib, in
 * `_tether._smt` (tether.dialects.smt re-exports them); MLIR 22 only (upstream 19 has none).
 *
 * Invariant: a type is made once the dialect is loaded (else MLIR aborts), with parameters its
 * verifier accepts (the C API's getters do not verify); IR is verified before MLIR exports it.
 */
#include "dialects.h"

#if TETHER_MLIR_VERSION >= 22

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Dialect/SMT.h>
#include <mlir-c/Target/ExportSMTLIB.h>

TPY_ISA(MlirType, mlirSMTTypeIsABool)
TPY_ISA(MlirType, mlirSMTTypeIsABitVector)
TPY_ISA(MlirType, mlirSMTTypeIsAInt)

static const simple_def smt_bool = {"smt", mlirSMTTypeGetBool};
static const simple_def smt_int = {"smt", mlirSMTTypeGetInt};

static tpy_sig bv_get_sig =
    TPY_SIG("get(width: int, context: Context | None = None) -> BitVectorType", "!smt.bv<width>.");

/* BitVectorType.get(width, context=None): MLIR's verifier wants a width of at least 1. */
static PyObject *bv_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&bv_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  long long width;
  if (!tpy_arg_int_in(a[0], "width", INT32_MIN, INT32_MAX, &width)) return NULL;
  if (width < 1)
    return PyErr_Format(PyExc_ValueError, "bit-vector must have at least a width of one");
  PyObject *ctx = tpy_dialect_ctx(a[1], "smt");
  if (!ctx) return NULL;
  return tpy_cast_to(cls,
                     tpy_wrap_type(ctx, mlirSMTTypeGetBitVector(tpy_ctx_raw(ctx), (int32_t)width)));
}

static PyMethodDef bv_methods[] = {
    {"get", TPY_FASTFN(bv_get), TPY_FAST | METH_CLASS, TPY_DOC(bv_get_sig)},
    TPY_METHODS_END,
};

static tpy_class_def smt_defs[] = {
    {"BoolType", NULL, isa_mlirSMTTypeIsABool, NULL, tpy_dialect_simple_methods, NULL, NULL,
     "!smt.bool", (void *)&smt_bool, NULL},
    {"BitVectorType", NULL, isa_mlirSMTTypeIsABitVector, NULL, bv_methods, NULL, NULL,
     "!smt.bv<width>", NULL, NULL},
    {"IntType", NULL, isa_mlirSMTTypeIsAInt, NULL, tpy_dialect_simple_methods, NULL, NULL,
     "!smt.int", (void *)&smt_int, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const tpy_mlir_name smt_names[] = {{"BoolType", mlirSMTBoolTypeGetName},
                                          {"BitVectorType", mlirSMTBitVectorTypeGetName},
                                          {"IntType", mlirSMTIntTypeGetName},
                                          {NULL, NULL}};

static tpy_sig export_smtlib_sig =
    TPY_SIG("export_smtlib(module: _OperationBase | Module, inline_single_use_values: bool = "
            "False, indent_let_body: bool = False) -> str",
            "The module's SMT-LIB text.");

/* export_smtlib(module, inline_single_use_values=False, indent_let_body=False): the SMT-LIB text
 * of a module (or operation) of smt operations; ValueError with MLIR's diagnostics when the export
 * fails (upstream's message). */
static PyObject *export_smtlib(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)m;
  PyObject *a[3];
  if (!tpy_fastargs(&export_smtlib_sig, args, nargs, kwnames, a, 3)) return NULL;
  int inline_single = 0, indent = 0;
  tether_op *h;
  MlirOperation op;
  if ((a[1] && !tpy_arg_bool(a[1], &inline_single)) || (a[2] && !tpy_arg_bool(a[2], &indent)) ||
      !tpy_arg_op(a[0], &h, &op) || !tpy_require_verified(h))
    return NULL;
  PyObject *ctx = tpy_context_of_handle(h);
  if (!ctx) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  Py_DECREF(ctx); /* the handle keeps it alive */
  tpy_strbuf b = {0};
  MlirLogicalResult r =
      mlirTranslateOperationToSMTLIB(op, tpy_strbuf_append, &b, inline_single, indent);
  PyObject *errs = tpy_errcap_end(&cap);
  if (mlirLogicalResultIsSuccess(r)) {
    Py_XDECREF(errs);
    return tpy_strbuf_finish(&b);
  }
  PyMem_RawFree(b.data);
  PyObject *msg = PyUnicode_FromString("");
  for (Py_ssize_t i = 0; msg && errs && i < PyList_GET_SIZE(errs); i++) {
    PyObject *one = PyObject_GetAttrString(PyList_GET_ITEM(errs, i), "message");
    PyObject *joined = one ? PyUnicode_FromFormat("%U%s%S", msg, i ? "\n" : "", one) : NULL;
    Py_XDECREF(one);
    Py_SETREF(msg, joined);
  }
  Py_XDECREF(errs);
  if (msg) PyErr_Format(PyExc_ValueError, "Failed to export smtlib.\nDiagnostic message %U", msg);
  Py_XDECREF(msg);
  return NULL;
}

static PyMethodDef smt_functions[] = {
    {"export_smtlib", TPY_FASTFN(export_smtlib), TPY_FAST, TPY_DOC(export_smtlib_sig)},
    TPY_METHODS_END,
};

int tpy_init_smt(PyObject *m) {
  return tpy_dialect_module(m, "_smt", smt_defs, NULL) < 0 ||
                 tpy_set_mlir_names(smt_defs, "type_name", smt_names) < 0 ||
                 tpy_dialect_functions(m, "_smt", smt_functions) < 0
             ? -1
             : 0;
}

#endif
