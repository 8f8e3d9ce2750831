/* llvm.c: the llvm dialect's StructType and PointerType (`_tether._llvm`, re-exported by
 * tether.dialects.llvm), which upstream defines in C++; on MLIR 22 also
 * translate_module_to_llvmir.
 */
#include "dialects.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/LLVM.h>
#include <string.h>

#if TETHER_MLIR_VERSION >= 22
/* mlir-c/Target/LLVMIR.h includes LLVM's C headers, which tether does not build against: what
 * translate_module_to_llvmir needs of them (libLLVM exports these). */
typedef struct LLVMOpaqueContext *LLVMContextRef;
typedef struct LLVMOpaqueModule *LLVMModuleRef;
LLVMContextRef LLVMContextCreate(void);
void LLVMContextDispose(LLVMContextRef c);
void LLVMDisposeModule(LLVMModuleRef m);
char *LLVMPrintModuleToString(LLVMModuleRef m);
void LLVMDisposeMessage(char *message);
MLIR_CAPI_EXPORTED LLVMModuleRef mlirTranslateModuleToLLVMIR(MlirOperation module,
                                                             LLVMContextRef context);
#endif

TPY_ISA(MlirType, mlirTypeIsALLVMPointerType)

static tpy_sig ptr_get_sig = TPY_SIG(
    "get(address_space: int | None = None, context: Context | None = None) -> Type", "!llvm.ptr.");

static PyObject *ptr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&ptr_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  unsigned as = 0;
  if (a[0] && a[0] != Py_None && !tpy_arg_uint(a[0], "address_space", &as)) return NULL;
  MlirContext raw;
  PyObject *ctx = tpy_dialect_context(a[1], "llvm", &raw);
  return ctx ? tpy_wrap_type(ctx, mlirLLVMPointerTypeGet(raw, as)) : NULL;
}

static PyObject *ptr_space(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(mlirLLVMPointerTypeGetAddressSpace(T(self)));
}

static PyMethodDef ptr_methods[] = {
    {"get", TPY_FASTFN(ptr_get), TPY_FAST | METH_STATIC, TPY_DOC(ptr_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef ptr_getset[] = {
    {"address_space", ptr_space, NULL, TPY_PROP("int", NULL), NULL},
    TPY_GETSET_END,
};

TPY_ISA(MlirType, mlirTypeIsALLVMStructType)

/* The element types of a sequence, in the context of ctx (NULL: the current one). */
static int struct_elements(PyObject *seq, PyObject *ctx, intptr_t *n, MlirType **ts) {
  return tpy_seq_types(seq, ctx, n, ts);
}

/* get_literal(elements, *, packed=False, loc=None[, context=None on 22]) and, on MLIR 22,
 * get_literal_unchecked(elements, *, packed=False, context=None) (`unchecked`: reported at the
 * unknown location of the context; tether checks it as well, MLIR would make an invalid type). */
#if TETHER_MLIR_VERSION >= 22
static tpy_sig struct_literal_sig =
    TPY_SIG("get_literal(elements: Sequence[Type], packed: bool = False, "
            "loc: Location | None = None, *, context: Context | None = None) -> Self",
            "!llvm.struct<(...)>.");
static tpy_sig struct_literal_unchecked_sig =
    TPY_SIG("get_literal_unchecked(elements: Sequence[Type], packed: bool = False, *, "
            "context: Context | None = None) -> Self",
            "!llvm.struct<(...)>.");
#else
static tpy_sig struct_literal_sig =
    TPY_SIG("get_literal(elements: Sequence[Type], packed: bool = False, "
            "loc: Location | None = None) -> Self",
            "!llvm.struct<(...)>.");
#endif

static PyObject *struct_literal_make(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames, int unchecked) {
  PyObject *a[4] = {NULL, NULL, NULL, NULL};
  PyObject *ctx;
  MlirLocation l;
#if TETHER_MLIR_VERSION >= 22
  if (unchecked) {
    if (!tpy_fastargs(&struct_literal_unchecked_sig, args, nargs, kwnames, a, 3) ||
        !(ctx = tpy_context_arg(a[2])))
      return NULL;
    l = mlirLocationUnknownGet(tpy_ctx_raw(ctx));
  } else {
#else
  (void)unchecked;
  {
#endif
    if (!tpy_fastargs(&struct_literal_sig, args, nargs, kwnames, a,
                      TETHER_MLIR_VERSION >= 22 ? 4 : 3))
      return NULL;
    PyObject *lo = tpy_resolve_loc(a[2] ? a[2] : Py_None);
    if (!lo) return NULL;
    ctx = TPY_CTX(lo);
    l = (MlirLocation){TPY_PTR(lo)};
    if (!tpy_dialect_same_context(a[3], ctx)) return NULL;
  }
  int packed = a[1] ? PyObject_IsTrue(a[1]) : 0;
  if (packed < 0) return NULL;
  mlirContextGetOrLoadDialect(tpy_ctx_raw(ctx), mlirStringRefCreateFromCString("llvm"));
  intptr_t n;
  MlirType *ts;
  if (!struct_elements(a[0], ctx, &n, &ts)) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  MlirType t = mlirLLVMStructTypeLiteralGetChecked(l, n, ts, packed);
  PyMem_Free(ts);
  if (mlirTypeIsNull(t)) {
    PyObject *errs = tpy_errcap_end(&cap);
    PyObject *msg = errs && PyList_GET_SIZE(errs) ? PyObject_Str(PyList_GET_ITEM(errs, 0)) : NULL;
    PyErr_Format(PyExc_ValueError, "%S", msg ? msg : (PyObject *)Py_None);
    Py_XDECREF(msg);
    Py_XDECREF(errs);
    return NULL;
  }
  tpy_errcap_close(&cap);
  return tpy_dialect_wrap_as(cls, ctx, t);
}

static PyObject *struct_literal(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  return struct_literal_make(cls, args, nargs, kwnames, 0);
}

#if TETHER_MLIR_VERSION >= 22
static PyObject *struct_literal_unchecked(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames) {
  return struct_literal_make(cls, args, nargs, kwnames, 1);
}
#endif

static PyObject *struct_named(tpy_sig *sig, PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, int opaque) {
  PyObject *a[2];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirStringRef name;
  if (!tpy_arg_str(a[0], "name", &name)) return NULL;
  MlirContext raw;
  PyObject *ctx = tpy_dialect_context(a[1], "llvm", &raw);
  if (!ctx) return NULL;
  return tpy_dialect_wrap_as(cls, ctx,
                             opaque ? mlirLLVMStructTypeOpaqueGet(raw, name)
                                    : mlirLLVMStructTypeIdentifiedGet(raw, name));
}

static tpy_sig struct_identified_sig =
    TPY_SIG("get_identified(name: str, context: Context | None = None) -> Self",
            "The identified struct of that name.");

static PyObject *struct_identified(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  return struct_named(&struct_identified_sig, cls, args, nargs, kwnames, 0);
}

static tpy_sig struct_opaque_sig =
    TPY_SIG("get_opaque(name: str, context: Context | None = None) -> Self",
            "An opaque identified struct.");

static PyObject *struct_opaque(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  return struct_named(&struct_opaque_sig, cls, args, nargs, kwnames, 1);
}

static tpy_sig struct_new_identified_sig =
    TPY_SIG("new_identified(name: str, elements: Sequence[Type], packed: bool = False, context: "
            "Context | None = None) -> Self",
            "A fresh identified struct (renamed if the name is taken).");

static PyObject *struct_new_identified(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  PyObject *a[4];
  if (!tpy_fastargs(&struct_new_identified_sig, args, nargs, kwnames, a, 4)) return NULL;
  MlirStringRef name;
  if (!tpy_arg_str(a[0], "name", &name)) return NULL;
  int packed = a[2] ? PyObject_IsTrue(a[2]) : 0;
  if (packed < 0) return NULL;
  MlirContext raw;
  PyObject *ctx = tpy_dialect_context(a[3], "llvm", &raw);
  if (!ctx) return NULL;
  intptr_t n;
  MlirType *ts;
  if (!struct_elements(a[1], ctx, &n, &ts)) return NULL;
  MlirType t = mlirLLVMStructTypeIdentifiedNewGet(raw, name, n, ts, packed);
  PyMem_Free(ts);
  return tpy_dialect_wrap_as(cls, ctx, t);
}

static tpy_sig struct_set_body_sig =
    TPY_SIG("set_body(elements: Sequence[Type], packed: bool = False) -> None",
            "The body of an identified struct.");

static PyObject *struct_set_body(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&struct_set_body_sig, args, nargs, kwnames, a, 2)) return NULL;
  int packed = a[1] ? PyObject_IsTrue(a[1]) : 0;
  if (packed < 0) return NULL;
  if (mlirLLVMStructTypeIsLiteral(T(self)))
    return PyErr_Format(PyExc_ValueError, "a literal struct has its body already");
  intptr_t n;
  MlirType *ts;
  if (!struct_elements(a[0], TPY_CTX(self), &n, &ts)) return NULL;
  MlirLogicalResult r = mlirLLVMStructTypeSetBody(T(self), n, ts, packed);
  PyMem_Free(ts);
  if (!mlirLogicalResultIsSuccess(r))
    return PyErr_Format(PyExc_ValueError, "Struct body already set to different content.");
  Py_RETURN_NONE;
}

static PyObject *struct_name(PyObject *self, void *c) {
  (void)c;
  if (mlirLLVMStructTypeIsLiteral(T(self))) Py_RETURN_NONE;
  return tpy_str_from_ref(mlirLLVMStructTypeGetIdentifier(T(self)));
}

static PyObject *struct_body(PyObject *self, void *c) {
  (void)c;
  if (mlirLLVMStructTypeIsOpaque(T(self))) Py_RETURN_NONE;
  intptr_t n = mlirLLVMStructTypeGetNumElementTypes(T(self));
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++) {
    PyObject *e = tpy_wrap_type(TPY_CTX(self), mlirLLVMStructTypeGetElementType(T(self), i));
    if (!e) {
      Py_CLEAR(l);
      break;
    }
    PyList_SET_ITEM(l, i, e);
  }
  return l;
}

static PyObject *struct_packed(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirLLVMStructTypeIsPacked(T(self)));
}

static PyObject *struct_is_opaque(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirLLVMStructTypeIsOpaque(T(self)));
}

static PyMethodDef struct_methods[] = {
  {"get_literal", TPY_FASTFN(struct_literal), TPY_FAST | METH_CLASS, TPY_DOC(struct_literal_sig)},
#if TETHER_MLIR_VERSION >= 22
  {"get_literal_unchecked", TPY_FASTFN(struct_literal_unchecked), TPY_FAST | METH_CLASS,
   TPY_DOC(struct_literal_unchecked_sig)},
#endif
  {"get_identified", TPY_FASTFN(struct_identified), TPY_FAST | METH_CLASS,
   TPY_DOC(struct_identified_sig)},
  {"get_opaque", TPY_FASTFN(struct_opaque), TPY_FAST | METH_CLASS, TPY_DOC(struct_opaque_sig)},
  {"new_identified", TPY_FASTFN(struct_new_identified), TPY_FAST | METH_CLASS,
   TPY_DOC(struct_new_identified_sig)},
  {"set_body", TPY_FASTFN(struct_set_body), TPY_FAST, TPY_DOC(struct_set_body_sig)},
  TPY_METHODS_END,
};

static PyGetSetDef struct_getset[] = {
    {"name", struct_name, NULL,
     TPY_PROP("str | None", "The identifier (None for a literal struct)."), NULL},
    {"body", struct_body, NULL,
     TPY_PROP("list[Type] | None", "The element types (None while opaque)."), NULL},
    {"packed", struct_packed, NULL, TPY_PROP("bool", NULL), NULL},
    {"opaque", struct_is_opaque, NULL, TPY_PROP("bool", NULL), NULL},
    TPY_GETSET_END,
};

static tpy_class_def llvm_defs[] = {
    {"StructType", NULL, isa_mlirTypeIsALLVMStructType, SINCE_22(mlirLLVMStructTypeGetTypeID),
     struct_methods, struct_getset, NULL, "!llvm.struct<...>", NULL, NULL},
    {"PointerType", NULL, isa_mlirTypeIsALLVMPointerType, SINCE_22(mlirLLVMPointerTypeGetTypeID),
     ptr_methods, ptr_getset, NULL, "!llvm.ptr", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#if TETHER_MLIR_VERSION >= 22
static tpy_sig translate_to_llvmir_sig =
    TPY_SIG("translate_module_to_llvmir(module: _OperationBase) -> str",
            "The LLVM IR of a module of llvm dialect operations, as text.");

/* llvm.translate_module_to_llvmir(module): the LLVM IR (text) of an operation MLIR translates (a
 * module of llvm dialect operations). MLIR's translation edits what it translates (it splits
 * duplicated successors): it gets a copy, and the operation is verified first. What MLIR refuses
 * raises MLIRError with its diagnostics (upstream 22 crashes printing the null module). */
static PyObject *translate_to_llvmir(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  (void)m;
  PyObject *a[1];
  if (!tpy_fastargs(&translate_to_llvmir_sig, args, nargs, kwnames, a, 1)) return NULL;
  tether_op *h;
  MlirOperation op;
  if (!tpy_arg_op(a[0], &h, &op) || !tpy_require_verified(h)) return NULL;
  PyObject *ctx = tpy_context_of_handle(h);
  if (!ctx) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  Py_DECREF(ctx); /* the handle keeps it alive */
  MlirOperation copy = mlirOperationClone(op);
  LLVMContextRef llvm = LLVMContextCreate();
  LLVMModuleRef module = mlirTranslateModuleToLLVMIR(copy, llvm);
  mlirOperationDestroy(copy);
  if (!module) {
    LLVMContextDispose(llvm);
    return tpy_errcap_raise(&cap, "Failed to translate the module to LLVM IR");
  }
  tpy_errcap_close(&cap);
  char *text = LLVMPrintModuleToString(module);
  PyObject *r = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
  LLVMDisposeMessage(text);
  LLVMDisposeModule(module);
  LLVMContextDispose(llvm);
  return r;
}

static PyMethodDef llvm_functions[] = {
    {"translate_module_to_llvmir", TPY_FASTFN(translate_to_llvmir), TPY_FAST,
     TPY_DOC(translate_to_llvmir_sig)},
    TPY_METHODS_END,
};
#endif

#if TETHER_MLIR_VERSION >= 22
/* Upstream 22's `type_name` / `attr_name` of these classes. */
static const tpy_mlir_name llvm_names[] = {{"StructType", mlirLLVMStructTypeGetName},
                                           {"PointerType", mlirLLVMPointerTypeGetName},
                                           {NULL, NULL}};
#endif

int tpy_init_llvm(PyObject *m) {
  if (tpy_dialect_module(m, "_llvm", llvm_defs, NULL) < 0) return -1;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_dialect_functions(m, "_llvm", llvm_functions) < 0) return -1;
  if (tpy_set_mlir_names(llvm_defs, "type_name", llvm_names) < 0) return -1;
#endif
  return 0;
}
