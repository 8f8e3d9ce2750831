/* irdl.c: irdl's load_dialects, in `_tether._irdl` (tether.dialects.irdl re-exports it); MLIR 22
 * only.
 *
 * Invariant: IR is verified before MLIR walks it; IRDL defines no dialect whose name the context
 * knows already (MLIR aborts on two dialects of one name), and the loading is tried in a forked
 * child first.
 */
#include "dialects.h"

#if TETHER_MLIR_VERSION >= 22

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Dialect/IRDL.h>
#include <string.h>

/* The names of the irdl.dialect operations in an operation: the walk collects them (views of the
 * names' storage in the context) into raw memory, so that no Python code runs while MLIR walks. */
typedef struct {
  MlirStringRef *names;
  size_t n, cap;
  int failed;
} dialect_names;

static MlirWalkResult collect_dialect(MlirOperation op, void *user) {
  dialect_names *d = user;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length != 12 || memcmp(name.data, "irdl.dialect", 12) != 0) return MlirWalkResultAdvance;
  MlirAttribute sym =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("sym_name"));
  if (!mlirAttributeIsAString(sym)) return MlirWalkResultSkip; /* the verifier requires one */
  if (d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 8;
    MlirStringRef *grown = PyMem_RawRealloc(d->names, cap * sizeof *grown);
    if (!grown) {
      d->failed = 1;
      return MlirWalkResultInterrupt;
    }
    d->names = grown;
    d->cap = cap;
  }
  d->names[d->n++] = mlirStringAttrGetValue(sym);
  return MlirWalkResultSkip; /* dialects do not nest */
}

static void load_in_child(void *module) { (void)mlirLoadIRDLDialects(*(MlirModule *)module); }

static tpy_sig load_dialects_sig =
    TPY_SIG("load_dialects(module: Module) -> None",
            "Defines the dialects of a module of irdl operations in its context.");

/* load_dialects(module): defines the dialects of a module of irdl operations in its context.
 * RuntimeError (upstream's message) when MLIR fails; refused with RuntimeError before MLIR is
 * called: a module that does not verify, a dialect name the context knows (loaded, registered, or
 * defined by an earlier load_dialects) or defined twice, a load that crashes in a child. */
static PyObject *load_dialects(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)m;
  PyObject *a[1];
  if (!tpy_fastargs(&load_dialects_sig, args, nargs, kwnames, a, 1)) return NULL;
  if (!tpy_is(a[0], tpy.Module)) return tpy_type_error("module", "a Module", a[0]);
  tether_op *h;
  MlirOperation op;
  if (!tpy_arg_op(a[0], &h, &op) || !tpy_require_verified(h)) return NULL;
  MlirContext ctx = mlirOperationGetContext(op);
  dialect_names d = {NULL, 0, 0, 0};
  mlirOperationWalk(op, collect_dialect, &d, MlirWalkPreOrder);
  if (d.failed) {
    PyMem_RawFree(d.names);
    return PyErr_NoMemory();
  }
  for (size_t i = 0; i < d.n; i++) {
    const char *why = NULL;
    for (size_t j = 0; j < i && !why; j++)
      if (mlirStringRefEqual(d.names[i], d.names[j])) why = "is defined twice";
    /* Loaded (a dialect, or one an earlier load defined) or registered: MLIR aborts on a second
     * dialect of that name (now, or when the registered one loads). Loading a registered dialect
     * here is harmless. */
    if (!why && !mlirDialectIsNull(mlirContextGetOrLoadDialect(ctx, d.names[i])))
      why = "exists in the context already";
    if (why) {
      PyErr_Format(PyExc_RuntimeError,
                   "failed to load IRDL dialects from the input module: dialect '%.*s' %s",
                   (int)d.names[i].length, d.names[i].data, why);
      PyMem_RawFree(d.names);
      return NULL;
    }
  }
  PyMem_RawFree(d.names);
  MlirModule module = mlirModuleFromOperation(op);
  /* Nothing else checks what the dialects define (the ops MLIR registers may meet names the
   * context used unregistered): the load runs in a child first. Every load is tried: the verdict
   * depends on the context's state, which the key cannot name. */
  static unsigned long long loads;
  char key[64];
  int len = snprintf(key, sizeof key, "irdl.load_dialects %p %llu", (void *)ctx.ptr, ++loads);
  if (tether_probe(key, (size_t)len, load_in_child, &module) == 0)
    return PyErr_Format(PyExc_RuntimeError,
                        "failed to load IRDL dialects from the input module: MLIR crashes "
                        "loading them");
  if (mlirLogicalResultIsFailure(mlirLoadIRDLDialects(module)))
    return PyErr_Format(PyExc_RuntimeError, "failed to load IRDL dialects from the input module");
  Py_RETURN_NONE;
}

static PyMethodDef irdl_functions[] = {
    {"load_dialects", TPY_FASTFN(load_dialects), TPY_FAST, TPY_DOC(load_dialects_sig)},
    TPY_METHODS_END,
};

int tpy_init_irdl(PyObject *m) {
  PyObject *sub = PyModule_New("_irdl");
  int bad = !sub || PyModule_AddObjectRef(m, "_irdl", sub) < 0 ||
            PyModule_AddFunctions(sub, irdl_functions) < 0;
  Py_XDECREF(sub);
  return bad ? -1 : 0;
}

#endif
