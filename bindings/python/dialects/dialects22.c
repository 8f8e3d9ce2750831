/* dialects22.c: the C parts of the dialects whose Python bindings upstream gained in MLIR 22, each
 * in its own module object re-exported by tether.dialects.<dialect>: `_tether._smt` (BoolType,
 * BitVectorType, IntType, export_smtlib), `_tether._amdgpu` (TDMBaseType, TDMDescriptorType,
 * TDMGatherBaseType), `_tether._irdl` (load_dialects). Nothing on an MLIR 19 build (upstream 19
 * has none of them).
 *
 * Invariant: MLIR gets only what it cannot crash on: a type is made once its dialect is loaded
 * (else MLIR aborts), with parameters its verifier accepts (the C API's getters do not verify);
 * IR is verified before MLIR walks it (export, IRDL loading); IRDL defines no dialect whose name
 * the context knows already (MLIR aborts on two dialects of one name), and the loading is tried in
 * a forked child first.
 */
#include "dialects.h"

#include <string.h>

#if TETHER_MLIR_VERSION >= 22

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Dialect/AMDGPU.h>
#include <mlir-c/Dialect/IRDL.h>
#include <mlir-c/Dialect/SMT.h>
#include <mlir-c/Target/ExportSMTLIB.h>

#define T(o) ((MlirType){TPY_PTR(o)})

/* The Context object for `context=` (or the current one), its dialect `dialect` loaded. */
static PyObject *context_with(PyObject *c, const char *dialect) {
  PyObject *ctx = tpy_context_arg(c);
  if (ctx && !tpy_load_dialect(tpy_ctx_raw(ctx), dialect)) return NULL;
  return ctx;
}

/* A type argument of ctx. */
static int type_in(PyObject *o, PyObject *ctx, MlirType *t) { return tpy_arg_type_in(o, ctx, t); }

/* cls.get(context=None) of a type without parameters: def->data is the C API's getter. */
typedef struct {
  const char *dialect;
  MlirType (*get)(MlirContext);
} plain_type;

static PyObject *plain_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  static const char *const names[] = {"context", NULL};
  PyObject *a[1];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 0, 1, a)) return NULL;
  tpy_class_def *def = tpy_class_def_of((PyTypeObject *)cls);
  if (!def || !def->data) return PyErr_Format(PyExc_TypeError, "not a type without parameters");
  const plain_type *p = def->data;
  PyObject *ctx = context_with(a[0], p->dialect);
  return ctx ? tpy_cast_to(cls, tpy_wrap_type(ctx, p->get(tpy_ctx_raw(ctx)))) : NULL;
}

static PyMethodDef plain_methods[] = {
    {"get", TPY_FASTFN(plain_get), TPY_FAST | METH_CLASS, "get(context=None): the type."},
    TPY_METHODS_END,
};

/* Adds module `name` to m with the classes of defs (and their `type_name`s) and functions. */
static int add_module(PyObject *m, const char *name, tpy_class_def *defs,
                      const tpy_mlir_name *names, PyMethodDef *functions) {
  PyObject *sub = PyModule_New(name);
  if (!sub) return -1;
  int bad = (defs && (tpy_define_classes(sub, tpy.Type, defs, tpy.type_casters) < 0 ||
                      tpy_set_mlir_names(defs, "type_name", names) < 0)) ||
            (functions && PyModule_AddFunctions(sub, functions) < 0) ||
            PyModule_AddObjectRef(m, name, sub) < 0;
  Py_DECREF(sub);
  return bad ? -1 : 0;
}

/* ---- smt ------------------------------------------------------------------------------------- */

TPY_ISA(MlirType, mlirSMTTypeIsABool)
TPY_ISA(MlirType, mlirSMTTypeIsABitVector)
TPY_ISA(MlirType, mlirSMTTypeIsAInt)

static const plain_type smt_bool = {"smt", mlirSMTTypeGetBool};
static const plain_type smt_int = {"smt", mlirSMTTypeGetInt};

/* BitVectorType.get(width, context=None): MLIR's verifier wants a width of at least 1. */
static PyObject *bv_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"width", "context", NULL};
  PyObject *a[2];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  long long width;
  if (!tpy_arg_int_in(a[0], "width", INT32_MIN, INT32_MAX, &width)) return NULL;
  if (width < 1)
    return PyErr_Format(PyExc_ValueError, "bit-vector must have at least a width of one");
  PyObject *ctx = context_with(a[1], "smt");
  if (!ctx) return NULL;
  return tpy_cast_to(cls,
                     tpy_wrap_type(ctx, mlirSMTTypeGetBitVector(tpy_ctx_raw(ctx), (int32_t)width)));
}

static PyMethodDef bv_methods[] = {
    {"get", TPY_FASTFN(bv_get), TPY_FAST | METH_CLASS, "get(width, context=None): !smt.bv<width>."},
    TPY_METHODS_END,
};

static tpy_class_def smt_defs[] = {
    {"BoolType", NULL, isa_mlirSMTTypeIsABool, NULL, plain_methods, NULL, NULL, "!smt.bool",
     (void *)&smt_bool, NULL},
    {"BitVectorType", NULL, isa_mlirSMTTypeIsABitVector, NULL, bv_methods, NULL, NULL,
     "!smt.bv<width>", NULL, NULL},
    {"IntType", NULL, isa_mlirSMTTypeIsAInt, NULL, plain_methods, NULL, NULL, "!smt.int",
     (void *)&smt_int, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const tpy_mlir_name smt_names[] = {{"BoolType", mlirSMTBoolTypeGetName},
                                          {"BitVectorType", mlirSMTBitVectorTypeGetName},
                                          {"IntType", mlirSMTIntTypeGetName},
                                          {NULL, NULL}};

/* export_smtlib(module, inline_single_use_values=False, indent_let_body=False): the SMT-LIB text
 * of a module (or operation) of smt operations; ValueError with MLIR's diagnostics when the export
 * fails (upstream's message). */
static PyObject *export_smtlib(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)m;
  static const char *const names[] = {"module", "inline_single_use_values", "indent_let_body",
                                      NULL};
  PyObject *a[3];
  if (!tpy_fastargs("export_smtlib", args, nargs, kwnames, names, 1, 3, a)) return NULL;
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
    {"export_smtlib", TPY_FASTFN(export_smtlib), TPY_FAST,
     "export_smtlib(module, inline_single_use_values=False, indent_let_body=False): the module's "
     "SMT-LIB text."},
    TPY_METHODS_END,
};

/* ---- amdgpu ---------------------------------------------------------------------------------- */

TPY_ISA(MlirType, mlirTypeIsAAMDGPUTDMBaseType)
TPY_ISA(MlirType, mlirTypeIsAAMDGPUTDMDescriptorType)
TPY_ISA(MlirType, mlirTypeIsAAMDGPUTDMGatherBaseType)

static const plain_type tdm_descriptor = {"amdgpu", mlirAMDGPUTDMDescriptorTypeGet};

/* TDMBaseType.get(element_type, context=None) */
static PyObject *tdm_base_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  static const char *const names[] = {"element_type", "context", NULL};
  PyObject *a[2];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  PyObject *ctx = context_with(a[1], "amdgpu");
  MlirType e;
  if (!ctx || !type_in(a[0], ctx, &e)) return NULL;
  return tpy_cast_to(cls, tpy_wrap_type(ctx, mlirAMDGPUTDMBaseTypeGet(tpy_ctx_raw(ctx), e)));
}

/* TDMGatherBaseType.get(element_type, index_type, context=None). The type has a verifier, which
 * the C API's getter does not run: the type is made by parsing it (which does), MLIRError with the
 * verifier's diagnostics when it refuses. */
static PyObject *tdm_gather_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  static const char *const names[] = {"element_type", "index_type", "context", NULL};
  PyObject *a[3];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 2, 3, a)) return NULL;
  PyObject *ctx = context_with(a[2], "amdgpu");
  MlirType e, i;
  if (!ctx || !type_in(a[0], ctx, &e) || !type_in(a[1], ctx, &i)) return NULL;
  tpy_strbuf b = {0};
  tpy_strbuf_append(mlirStringRefCreateFromCString("!amdgpu.tdm_gather_base<"), &b);
  mlirTypePrint(e, tpy_strbuf_append, &b);
  tpy_strbuf_append(mlirStringRefCreateFromCString(", "), &b);
  mlirTypePrint(i, tpy_strbuf_append, &b);
  tpy_strbuf_append(mlirStringRefCreateFromCString(">"), &b);
  if (b.failed) {
    PyMem_RawFree(b.data);
    return PyErr_NoMemory();
  }
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  MlirType t = {NULL};
  if (tether_parse_check(tpy_ctx_raw(ctx), TETHER_PARSE_TYPE, b.data, b.len) == TETHER_OK)
    t = mlirTypeParseGet(tpy_ctx_raw(ctx), mlirStringRefCreate(b.data, b.len));
  PyMem_RawFree(b.data);
  if (mlirTypeIsNull(t) || !mlirTypeIsAAMDGPUTDMGatherBaseType(t))
    return tpy_errcap_raise(&cap, "Invalid type");
  tpy_errcap_close(&cap);
  return tpy_cast_to(cls, tpy_wrap_type(ctx, t));
}

static PyMethodDef tdm_base_methods[] = {
    {"get", TPY_FASTFN(tdm_base_get), TPY_FAST | METH_CLASS,
     "get(element_type, context=None): !amdgpu.tdm_base<element_type>."},
    TPY_METHODS_END,
};

static PyMethodDef tdm_gather_methods[] = {
    {"get", TPY_FASTFN(tdm_gather_get), TPY_FAST | METH_CLASS,
     "get(element_type, index_type, context=None): !amdgpu.tdm_gather_base<element_type, "
     "index_type>."},
    TPY_METHODS_END,
};

static tpy_class_def amdgpu_defs[] = {
    {"TDMBaseType", NULL, isa_mlirTypeIsAAMDGPUTDMBaseType, mlirAMDGPUTDMBaseTypeGetTypeID,
     tdm_base_methods, NULL, NULL, "!amdgpu.tdm_base<element_type>", NULL, NULL},
    {"TDMDescriptorType", NULL, isa_mlirTypeIsAAMDGPUTDMDescriptorType,
     mlirAMDGPUTDMDescriptorTypeGetTypeID, plain_methods, NULL, NULL, "!amdgpu.tdm_descriptor",
     (void *)&tdm_descriptor, NULL},
    {"TDMGatherBaseType", NULL, isa_mlirTypeIsAAMDGPUTDMGatherBaseType,
     mlirAMDGPUTDMGatherBaseTypeGetTypeID, tdm_gather_methods, NULL, NULL,
     "!amdgpu.tdm_gather_base<element_type, index_type>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const tpy_mlir_name amdgpu_names[] = {
    {"TDMBaseType", mlirAMDGPUTDMBaseTypeGetName},
    {"TDMDescriptorType", mlirAMDGPUTDMDescriptorTypeGetName},
    {"TDMGatherBaseType", mlirAMDGPUTDMGatherBaseTypeGetName},
    {NULL, NULL}};

/* ---- irdl ------------------------------------------------------------------------------------ */

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

/* load_dialects(module): defines the dialects of a module of irdl operations in its context.
 * RuntimeError (upstream's message) when MLIR fails; refused with RuntimeError before MLIR is
 * called: a module that does not verify, a dialect name the context knows (loaded, registered, or
 * defined by an earlier load_dialects) or defined twice, a load that crashes in a child. */
static PyObject *load_dialects(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)m;
  static const char *const names[] = {"module", NULL};
  PyObject *a[1];
  if (!tpy_fastargs("load_dialects", args, nargs, kwnames, names, 1, 1, a)) return NULL;
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
    {"load_dialects", TPY_FASTFN(load_dialects), TPY_FAST,
     "load_dialects(module): defines the dialects of a module of irdl operations in its "
     "context."},
    TPY_METHODS_END,
};

int tpy_init_dialects22(PyObject *m) {
  return add_module(m, "_smt", smt_defs, smt_names, smt_functions) < 0 ||
                 add_module(m, "_amdgpu", amdgpu_defs, amdgpu_names, NULL) < 0 ||
                 add_module(m, "_irdl", NULL, NULL, irdl_functions) < 0
             ? -1
             : 0;
}

#else

int tpy_init_dialects22(PyObject *m) {
  (void)m;
  return 0;
}

#endif
