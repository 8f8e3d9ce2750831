/* dialect_types.c: the types of dialects that upstream's bindings define in C++ (transform, pdl,
 * gpu, nvgpu, llvm), and gpu's ObjectAttr, through the dialects' C APIs; on MLIR 22 also
 * llvm.translate_module_to_llvmir, and casters for the classes whose TypeID the C API gives. Each
 * dialect's classes live in their own module object (`_tether._transform`, ...), re-exported by
 * tether.dialects.<dialect>: classes of different dialects share names (transform.OperationType,
 * pdl.OperationType).
 *
 * MLIR creates a dialect's type only once the dialect is loaded (else a fatal error): every
 * constructor loads its dialect first.
 */
#include "dialects.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/Dialect/NVGPU.h>
#include <mlir-c/Dialect/PDL.h>
#include <mlir-c/Dialect/Transform.h>
#include <string.h>

#if TETHER_MLIR_VERSION >= 22
#include <mlir-c/Dialect/GPU.h>

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
#else
/* MLIR 19's mlir-c/Dialect/GPU.h includes a generated header Debian does not ship: its type and
 * attribute functions. */
MLIR_CAPI_EXPORTED bool mlirTypeIsAGPUAsyncTokenType(MlirType type);
MLIR_CAPI_EXPORTED MlirType mlirGPUAsyncTokenTypeGet(MlirContext ctx);
MLIR_CAPI_EXPORTED bool mlirAttributeIsAGPUObjectAttr(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirAttribute mlirGPUObjectAttrGet(MlirContext mlirCtx, MlirAttribute target,
                                                      uint32_t format, MlirStringRef objectStrRef,
                                                      MlirAttribute mlirObjectProps);
MLIR_CAPI_EXPORTED MlirAttribute mlirGPUObjectAttrGetTarget(MlirAttribute mlirObjectAttr);
MLIR_CAPI_EXPORTED uint32_t mlirGPUObjectAttrGetFormat(MlirAttribute mlirObjectAttr);
MLIR_CAPI_EXPORTED MlirStringRef mlirGPUObjectAttrGetObject(MlirAttribute mlirObjectAttr);
MLIR_CAPI_EXPORTED bool mlirGPUObjectAttrHasProperties(MlirAttribute mlirObjectAttr);
MLIR_CAPI_EXPORTED MlirAttribute mlirGPUObjectAttrGetProperties(MlirAttribute mlirObjectAttr);
#endif

/* The TypeID getter the C API has on MLIR 22 only (upstream 22 registers these classes' casters):
 * NULL on 19. */
#if TETHER_MLIR_VERSION >= 22
#define SINCE_22(fn) fn
#else
#define SINCE_22(fn) NULL
#endif

#define T(o) ((MlirType){TPY_PTR(o)})

/* A type class without parameters: data points to one of these. */
typedef struct {
  const char *dialect;
  MlirType (*get)(MlirContext);
} simple_def;

/* The type as an object of cls: classes without a TypeID have no caster. */
static PyObject *wrap_as(PyObject *cls, PyObject *ctx, MlirType t) {
  return tpy_cast_to(cls, tpy_wrap_type(ctx, t));
}

static PyObject *context_for(PyObject *c, const char *dialect, MlirContext *raw) {
  PyObject *ctx = (PyObject *)tpy_resolve_context(c);
  if (!ctx) return NULL;
  *raw = tpy_ctx_raw(ctx);
  mlirContextGetOrLoadDialect(*raw, mlirStringRefCreateFromCString(dialect));
  return ctx;
}

static PyObject *simple_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  static const char *const names[] = {"context", NULL};
  PyObject *a[1];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 0, 1, a)) return NULL;
  tpy_class_def *def = tpy_class_def_of((PyTypeObject *)cls);
  if (!def || !def->data) return PyErr_Format(PyExc_TypeError, "not a simple dialect type");
  const simple_def *s = def->data;
  MlirContext raw;
  PyObject *ctx = context_for(a[0], s->dialect, &raw);
  return ctx ? wrap_as(cls, ctx, s->get(raw)) : NULL;
}

static PyMethodDef simple_methods[] = {
    {"get", TPY_FASTFN(simple_get), TPY_FAST | METH_CLASS, "get(context=None): the type."},
    TPY_METHODS_END,
};

/* An optional `context=` argument next to a value that determines the context: when given (not
 * None), it must be ctx's (ValueError), as the result belongs to ctx. 1 or 0. */
static int same_context(PyObject *c, PyObject *ctx) {
  if (!c || c == Py_None) return 1;
  TpContext *given = tpy_resolve_context(c);
  if (!given) return 0;
  if ((PyObject *)given != ctx && given->arena != ((TpContext *)ctx)->arena) {
    PyErr_SetString(PyExc_ValueError, "the context given is not the context of the arguments");
    return 0;
  }
  return 1;
}

/* The dialect's type from an element type (its context). */
static int element_arg(PyObject *o, const char *what, const char *dialect, MlirType *t,
                       PyObject **ctx) {
  if (!tpy_arg_type(o, t, ctx)) return 0;
  (void)what;
  mlirContextGetOrLoadDialect(mlirTypeGetContext(*t), mlirStringRefCreateFromCString(dialect));
  return 1;
}

/* ---- transform ------------------------------------------------------------------------------- */

TPY_ISA(MlirType, mlirTypeIsATransformAnyOpType)
TPY_ISA(MlirType, mlirTypeIsATransformAnyParamType)
TPY_ISA(MlirType, mlirTypeIsATransformAnyValueType)
TPY_ISA(MlirType, mlirTypeIsATransformOperationType)
TPY_ISA(MlirType, mlirTypeIsATransformParamType)

static const simple_def any_op = {"transform", mlirTransformAnyOpTypeGet};
static const simple_def any_param = {"transform", mlirTransformAnyParamTypeGet};
static const simple_def any_value = {"transform", mlirTransformAnyValueTypeGet};

static PyObject *operation_type_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"operation_name", "context", NULL};
  PyObject *a[2];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  MlirStringRef name;
  if (!tpy_arg_str(a[0], "operation_name", &name)) return NULL;
  MlirContext raw;
  PyObject *ctx = context_for(a[1], "transform", &raw);
  return ctx ? tpy_wrap_type(ctx, mlirTransformOperationTypeGet(raw, name)) : NULL;
}

static PyObject *operation_type_name(PyObject *self, void *c) {
  (void)c;
  MlirStringRef s = mlirTransformOperationTypeGetOperationName(T(self));
  return PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
}

static PyMethodDef operation_type_methods[] = {
    {"get", TPY_FASTFN(operation_type_get), TPY_FAST | METH_STATIC,
     "get(operation_name, context=None): !transform.op<\"name\">."},
    TPY_METHODS_END,
};

static PyGetSetDef operation_type_getset[] = {
    {"operation_name", operation_type_name, NULL, "The name of the payload operation.", NULL},
    TPY_GETSET_END,
};

static PyObject *param_type_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"type", "context", NULL};
  PyObject *a[2];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  MlirType t;
  PyObject *tctx;
  if (!element_arg(a[0], "type", "transform", &t, &tctx)) return NULL;
  return tpy_wrap_type(tctx, mlirTransformParamTypeGet(mlirTypeGetContext(t), t));
}

static PyObject *param_type_type(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirTransformParamTypeGetType(T(self)));
}

static PyMethodDef param_type_methods[] = {
    {"get", TPY_FASTFN(param_type_get), TPY_FAST | METH_STATIC,
     "get(type, context=None): !transform.param<type>."},
    TPY_METHODS_END,
};

static PyGetSetDef param_type_getset[] = {
    {"type", param_type_type, NULL, "The type of the parameter's values.", NULL},
    TPY_GETSET_END,
};

static tpy_class_def transform_defs[] = {
    {"AnyOpType", NULL, isa_mlirTypeIsATransformAnyOpType, mlirTransformAnyOpTypeGetTypeID,
     simple_methods, NULL, NULL, "!transform.any_op", (void *)&any_op, NULL},
    {"AnyParamType", NULL, isa_mlirTypeIsATransformAnyParamType, mlirTransformAnyParamTypeGetTypeID,
     simple_methods, NULL, NULL, "!transform.any_param", (void *)&any_param, NULL},
    {"AnyValueType", NULL, isa_mlirTypeIsATransformAnyValueType, mlirTransformAnyValueTypeGetTypeID,
     simple_methods, NULL, NULL, "!transform.any_value", (void *)&any_value, NULL},
    {"OperationType", NULL, isa_mlirTypeIsATransformOperationType,
     mlirTransformOperationTypeGetTypeID, operation_type_methods, operation_type_getset, NULL,
     "!transform.op<\"name\">", NULL, NULL},
    {"ParamType", NULL, isa_mlirTypeIsATransformParamType, mlirTransformParamTypeGetTypeID,
     param_type_methods, param_type_getset, NULL, "!transform.param<type>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

/* ---- pdl ------------------------------------------------------------------------------------- */

static tpy_class_def pdl_defs[];

TPY_ISA(MlirType, mlirTypeIsAPDLType)
TPY_ISA(MlirType, mlirTypeIsAPDLAttributeType)
TPY_ISA(MlirType, mlirTypeIsAPDLOperationType)
TPY_ISA(MlirType, mlirTypeIsAPDLRangeType)
TPY_ISA(MlirType, mlirTypeIsAPDLTypeType)
TPY_ISA(MlirType, mlirTypeIsAPDLValueType)

static const simple_def pdl_attribute = {"pdl", mlirPDLAttributeTypeGet};
static const simple_def pdl_operation = {"pdl", mlirPDLOperationTypeGet};
static const simple_def pdl_type = {"pdl", mlirPDLTypeTypeGet};
static const simple_def pdl_value = {"pdl", mlirPDLValueTypeGet};

static PyObject *range_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  static const char *const names[] = {"element_type", "context", NULL};
  PyObject *a[2];
  /* context=: upstream 22's keyword */
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 1, TETHER_MLIR_VERSION >= 22 ? 2 : 1, a))
    return NULL;
  MlirType t;
  PyObject *tctx;
  if (!element_arg(a[0], "element_type", "pdl", &t, &tctx) || !same_context(a[1], tctx))
    return NULL;
  if (!mlirTypeIsAPDLType(t))
    return PyErr_Format(PyExc_ValueError, "a pdl range holds pdl types (attribute, operation, "
                                          "type or value)");
  return wrap_as(cls, tctx, mlirPDLRangeTypeGet(t));
}

static PyObject *range_element(PyObject *self, void *c) {
  (void)c;
  /* The element is a pdl type: of its class (pdl types have no TypeID to find it by). */
  MlirType e = mlirPDLRangeTypeGetElementType(T(self));
  PyTypeObject *cls = NULL;
  for (tpy_class_def *d = pdl_defs + 1; d->name; d++)
    if (d->isa((void *)e.ptr)) cls = d->cls;
  return cls ? wrap_as((PyObject *)cls, TPY_CTX(self), e) : tpy_wrap_type(TPY_CTX(self), e);
}

static PyMethodDef range_methods[] = {
    {"get", TPY_FASTFN(range_get), TPY_FAST | METH_CLASS, "get(element_type): !pdl.range<...>."},
    TPY_METHODS_END,
};

static PyGetSetDef range_getset[] = {
    {"element_type", range_element, NULL, NULL, NULL},
    TPY_GETSET_END,
};

static tpy_class_def pdl_defs[] = {
    {"PDLType", NULL, isa_mlirTypeIsAPDLType, NULL, NULL, NULL, NULL, "Any pdl type.", NULL, NULL},
    {"AttributeType", "PDLType", isa_mlirTypeIsAPDLAttributeType,
     SINCE_22(mlirPDLAttributeTypeGetTypeID), simple_methods, NULL, NULL, "!pdl.attribute",
     (void *)&pdl_attribute, NULL},
    {"OperationType", "PDLType", isa_mlirTypeIsAPDLOperationType,
     SINCE_22(mlirPDLOperationTypeGetTypeID), simple_methods, NULL, NULL, "!pdl.operation",
     (void *)&pdl_operation, NULL},
    {"RangeType", "PDLType", isa_mlirTypeIsAPDLRangeType, SINCE_22(mlirPDLRangeTypeGetTypeID),
     range_methods, range_getset, NULL, "!pdl.range<element_type>", NULL, NULL},
    {"TypeType", "PDLType", isa_mlirTypeIsAPDLTypeType, SINCE_22(mlirPDLTypeTypeGetTypeID),
     simple_methods, NULL, NULL, "!pdl.type", (void *)&pdl_type, NULL},
    {"ValueType", "PDLType", isa_mlirTypeIsAPDLValueType, SINCE_22(mlirPDLValueTypeGetTypeID),
     simple_methods, NULL, NULL, "!pdl.value", (void *)&pdl_value, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

/* ---- gpu, nvgpu ------------------------------------------------------------------------------ */

TPY_ISA(MlirType, mlirTypeIsAGPUAsyncTokenType)
static const simple_def gpu_token = {"gpu", mlirGPUAsyncTokenTypeGet};

static tpy_class_def gpu_defs[] = {
    {"AsyncTokenType", NULL, isa_mlirTypeIsAGPUAsyncTokenType, NULL, simple_methods, NULL, NULL,
     "!gpu.async.token", (void *)&gpu_token, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

/* gpu.ObjectAttr: #gpu.object<target, [properties = {...},] [format =] "bytes">. As upstream's
 * class, it has no TypeID caster (attributes read from IR are plain Attributes until cast with
 * ObjectAttr(attr)). */
#define A(o) ((MlirAttribute){TPY_PTR(o)})

TPY_ISA(MlirAttribute, mlirAttributeIsAGPUObjectAttr)

/* The attribute as an object of cls (a subclass's own class, as upstream's `cls(...)`). */
static PyObject *wrap_attr_as(PyObject *cls, PyObject *ctx, MlirAttribute a) {
  return tpy_cast_to(cls, tpy_wrap_attr(ctx, a));
}

/* ObjectAttr's verifier wants a target implementing or promising gpu::TargetAttrInterface (MLIR
 * casts it to the interface when it serializes or embeds the object); the C API's get does not
 * verify, and cannot ask an attribute for an interface. The parser runs that verifier: 1 if
 * `#gpu.object<target, "">` parses, else 0 with ValueError carrying MLIR's message. */
static int check_target(PyObject *ctx, MlirAttribute target) {
  tpy_strbuf b = {0};
  tpy_strbuf_append(mlirStringRefCreateFromCString("#gpu.object<"), &b);
  mlirAttributePrint(target, tpy_strbuf_append, &b);
  tpy_strbuf_append(mlirStringRefCreateFromCString(", \"\">"), &b);
  PyObject *text = tpy_strbuf_finish(&b);
  if (!text) return 0;
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(text, &n);
  if (!s) {
    Py_DECREF(text);
    return 0;
  }
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  MlirAttribute parsed = mlirAttributeParseGet(tpy_ctx_raw(ctx), mlirStringRefCreate(s, (size_t)n));
  PyObject *errs = tpy_errcap_end(&cap);
  Py_DECREF(text);
  if (!mlirAttributeIsNull(parsed)) {
    Py_XDECREF(errs);
    return 1;
  }
  PyObject *msg = NULL;
  if (errs && PyList_GET_SIZE(errs))
    msg = PyObject_GetAttrString(PyList_GET_ITEM(errs, 0), "message");
  PyErr_Clear();
  PyErr_Format(PyExc_ValueError, "invalid target for gpu.ObjectAttr: %S",
               msg ? msg : (PyObject *)Py_None);
  Py_XDECREF(msg);
  Py_XDECREF(errs);
  return 0;
}

#if TETHER_MLIR_VERSION >= 22
/* Whether attr is a #gpu.kernel_table (the C API has no isa for it): the TypeID of one parsed in
 * its context. */
static int is_kernel_table(PyObject *ctx, MlirAttribute attr) {
  MlirAttribute empty = mlirAttributeParseGet(
      tpy_ctx_raw(ctx), mlirStringRefCreateFromCString("#gpu.kernel_table<>"));
  return !mlirAttributeIsNull(empty) &&
         mlirTypeIDEqual(mlirAttributeGetTypeID(empty), mlirAttributeGetTypeID(attr));
}
#endif

static PyObject *object_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
#if TETHER_MLIR_VERSION >= 22
  static const char *const names[] = {"target",  "format",  "object", "properties",
                                      "kernels", "context", NULL};
  PyObject *a[6];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 3, 6, a)) return NULL;
  PyObject *context = a[5];
#else
  static const char *const names[] = {"target", "format", "object", "properties", "context", NULL};
  PyObject *a[5];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 3, 4, a)) return NULL;
  PyObject *context = a[4];
#endif
  MlirAttribute target;
  PyObject *ctx;
  if (!tpy_arg_attr(a[0], &target, &ctx)) return NULL;
  if (context && context != Py_None) {
    TpContext *c = tpy_resolve_context(context);
    if (!c) return NULL;
    if ((PyObject *)c != ctx && c->arena != ((TpContext *)ctx)->arena)
      return PyErr_Format(PyExc_ValueError, "the target belongs to another context");
  }
  unsigned format;
  if (!tpy_arg_uint(a[1], "format", &format)) return NULL;
  if (format < 1 || format > 4)
    return PyErr_Format(PyExc_ValueError,
                        "format must be a gpu.CompilationTarget (Offload = 1, Assembly = 2, "
                        "Binary = 3, Fatbin = 4), not %u",
                        format);
  MlirAttribute props = {NULL};
  if (a[3] && a[3] != Py_None) {
    if (!tpy_arg_attr_in(a[3], ctx, &props)) return NULL;
    if (!mlirAttributeIsADictionary(props)) return tpy_type_error("properties", "a DictAttr", a[3]);
  }
  MlirAttribute kernels = {NULL};
#if TETHER_MLIR_VERSION >= 22
  if (a[4] && a[4] != Py_None) {
    if (!tpy_arg_attr_in(a[4], ctx, &kernels)) return NULL;
    mlirContextGetOrLoadDialect(tpy_ctx_raw(ctx), mlirStringRefCreateFromCString("gpu"));
    if (!is_kernel_table(ctx, kernels))
      return tpy_type_error("kernels", "a #gpu.kernel_table attribute", a[4]);
  }
#endif
  if (PyUnicode_Check(a[2])) return tpy_type_error("object", "bytes", a[2]);
  Py_buffer view;
  if (PyObject_GetBuffer(a[2], &view, PyBUF_SIMPLE) < 0) {
    PyErr_Clear();
    return tpy_type_error("object", "bytes", a[2]);
  }
  mlirContextGetOrLoadDialect(tpy_ctx_raw(ctx), mlirStringRefCreateFromCString("gpu"));
  PyObject *r = NULL;
  if (check_target(ctx, target)) {
#if TETHER_MLIR_VERSION >= 22
    MlirAttribute o = mlirGPUObjectAttrGetWithKernels(
        tpy_ctx_raw(ctx), target, format, mlirStringRefCreate(view.buf, (size_t)view.len), props,
        kernels);
#else
    (void)kernels;
    MlirAttribute o = mlirGPUObjectAttrGet(tpy_ctx_raw(ctx), target, format,
                                           mlirStringRefCreate(view.buf, (size_t)view.len), props);
#endif
    r = wrap_attr_as(cls, ctx, o);
  }
  PyBuffer_Release(&view);
  return r;
}

static PyObject *object_target(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_attr(TPY_CTX(self), mlirGPUObjectAttrGetTarget(A(self)));
}

static PyObject *object_format(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(mlirGPUObjectAttrGetFormat(A(self)));
}

static PyObject *object_bytes(PyObject *self, void *c) {
  (void)c;
  MlirStringRef s = mlirGPUObjectAttrGetObject(A(self));
  return PyBytes_FromStringAndSize(s.data, (Py_ssize_t)s.length);
}

static PyObject *object_properties(PyObject *self, void *c) {
  (void)c;
  if (!mlirGPUObjectAttrHasProperties(A(self))) Py_RETURN_NONE;
  return tpy_wrap_attr(TPY_CTX(self), mlirGPUObjectAttrGetProperties(A(self)));
}

#if TETHER_MLIR_VERSION >= 22
static PyObject *object_kernels(PyObject *self, void *c) {
  (void)c;
  if (!mlirGPUObjectAttrHasKernels(A(self))) Py_RETURN_NONE;
  return tpy_wrap_attr(TPY_CTX(self), mlirGPUObjectAttrGetKernels(A(self)));
}
#endif

static PyMethodDef object_methods[] = {
#if TETHER_MLIR_VERSION >= 22
    {"get", TPY_FASTFN(object_get), TPY_FAST | METH_CLASS,
     "get(target, format, object, properties=None, kernels=None, context=None): a #gpu.object "
     "from its target attribute, gpu.CompilationTarget format, bytes, optional DictAttr "
     "properties and optional #gpu.kernel_table."},
#else
    {"get", TPY_FASTFN(object_get), TPY_FAST | METH_CLASS,
     "get(target, format, object, properties=None, *, context=None): a #gpu.object from its "
     "target attribute, gpu.CompilationTarget format, bytes and optional DictAttr properties."},
#endif
    TPY_METHODS_END,
};

static PyGetSetDef object_getset[] = {
    {"target", object_target, NULL, "The target attribute (#nvvm.target, #rocdl.target, ...).",
     NULL},
    {"format", object_format, NULL, "The format, an int (gpu.CompilationTarget(format)).", NULL},
    {"object", object_bytes, NULL, "The object's contents, as bytes.", NULL},
    {"properties", object_properties, NULL, "The properties (a DictAttr), or None.", NULL},
#if TETHER_MLIR_VERSION >= 22
    {"kernels", object_kernels, NULL, "The kernel table (#gpu.kernel_table), or None.", NULL},
#endif
    TPY_GETSET_END,
};

static tpy_class_def gpu_attr_defs[] = {
    {"ObjectAttr", NULL, isa_mlirAttributeIsAGPUObjectAttr, NULL, object_methods, object_getset,
     NULL, "#gpu.object<target, properties, format, object>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

TPY_ISA(MlirType, mlirTypeIsANVGPUTensorMapDescriptorType)

static PyObject *tmd_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {
    "tensor_type",
    "swizzle",
    "l2promo",
    "oob_fill",
    "interleave",
#if TETHER_MLIR_VERSION >= 22
    "context", /* upstream 22's name */
#else
    "ctx",
#endif
    NULL
  };
  PyObject *a[6];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 5, 6, a)) return NULL;
  MlirType t;
  PyObject *tctx;
  if (!element_arg(a[0], "tensor_type", "nvgpu", &t, &tctx) || !same_context(a[5], tctx))
    return NULL;
  if (!mlirTypeIsAMemRef(t))
    return PyErr_Format(PyExc_ValueError, "tensor_type must be a MemRefType");
  int64_t v[4];
  for (int i = 0; i < 4; i++)
    if (!tpy_arg_int64(a[i + 1], names[i + 1], &v[i])) return NULL;
  if (v[0] < 0 || v[0] > 4 || v[1] < 0 || v[1] > 3 || v[2] < 0 || v[2] > 1 || v[3] < 0 || v[3] > 2)
    return PyErr_Format(PyExc_ValueError, "swizzle, l2promo, oob_fill or interleave out of "
                                          "range of their enums");
  return tpy_wrap_type(tctx,
                       mlirNVGPUTensorMapDescriptorTypeGet(mlirTypeGetContext(t), t, (int)v[0],
                                                           (int)v[1], (int)v[2], (int)v[3]));
}

static PyMethodDef tmd_methods[] = {
#if TETHER_MLIR_VERSION >= 22
    {"get", TPY_FASTFN(tmd_get), TPY_FAST | METH_STATIC,
     "get(tensor_type, swizzle, l2promo, oob_fill, interleave, context=None)."},
#else
    {"get", TPY_FASTFN(tmd_get), TPY_FAST | METH_STATIC,
     "get(tensor_type, swizzle, l2promo, oob_fill, interleave, ctx=None)."},
#endif
    TPY_METHODS_END,
};

static tpy_class_def nvgpu_defs[] = {
    {"TensorMapDescriptorType", NULL, isa_mlirTypeIsANVGPUTensorMapDescriptorType, NULL,
     tmd_methods, NULL, NULL, "!nvgpu.tensormap.descriptor<...>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

/* ---- llvm ------------------------------------------------------------------------------------ */

TPY_ISA(MlirType, mlirTypeIsALLVMPointerType)

static PyObject *ptr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"address_space", "context", NULL};
  PyObject *a[2];
  if (!tpy_fastargs("get", args, nargs, kwnames, names, 0, 2, a)) return NULL;
  unsigned as = 0;
  if (a[0] && a[0] != Py_None && !tpy_arg_uint(a[0], "address_space", &as)) return NULL;
  MlirContext raw;
  PyObject *ctx = context_for(a[1], "llvm", &raw);
  return ctx ? tpy_wrap_type(ctx, mlirLLVMPointerTypeGet(raw, as)) : NULL;
}

static PyObject *ptr_space(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(mlirLLVMPointerTypeGetAddressSpace(T(self)));
}

static PyMethodDef ptr_methods[] = {
    {"get", TPY_FASTFN(ptr_get), TPY_FAST | METH_STATIC,
     "get(address_space=None, context=None): !llvm.ptr."},
    TPY_METHODS_END,
};

static PyGetSetDef ptr_getset[] = {
    {"address_space", ptr_space, NULL, NULL, NULL},
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
static PyObject *struct_literal_make(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames, int unchecked) {
  static const char *const names[] = {"elements", "packed", "loc", "context", NULL};
  static const char *const names_unchecked[] = {"elements", "packed", "context", NULL};
  PyObject *a[4] = {NULL, NULL, NULL, NULL};
  PyObject *ctx;
  MlirLocation l;
  if (unchecked) {
    if (!tpy_fastargs("get_literal_unchecked", args, nargs, kwnames, names_unchecked, 1, 2, a) ||
        !(ctx = tpy_context_arg(a[2])))
      return NULL;
    l = mlirLocationUnknownGet(tpy_ctx_raw(ctx));
  } else {
    if (!tpy_fastargs("get_literal", args, nargs, kwnames, names, 1, 3, a)) return NULL;
#if TETHER_MLIR_VERSION < 22
    if (a[3])
      return PyErr_Format(PyExc_TypeError,
                          "get_literal() got an unexpected keyword argument 'context'");
#endif
    PyObject *lo = tpy_resolve_loc(a[2] ? a[2] : Py_None);
    if (!lo) return NULL;
    ctx = TPY_CTX(lo);
    l = (MlirLocation){TPY_PTR(lo)};
    if (!same_context(a[3], ctx)) return NULL;
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
  return wrap_as(cls, ctx, t);
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

static PyObject *struct_named(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, int opaque) {
  static const char *const names[] = {"name", "context", NULL};
  PyObject *a[2];
  if (!tpy_fastargs(opaque ? "get_opaque" : "get_identified", args, nargs, kwnames, names, 1, 2, a))
    return NULL;
  MlirStringRef name;
  if (!tpy_arg_str(a[0], "name", &name)) return NULL;
  MlirContext raw;
  PyObject *ctx = context_for(a[1], "llvm", &raw);
  if (!ctx) return NULL;
  return wrap_as(cls, ctx,
                 opaque ? mlirLLVMStructTypeOpaqueGet(raw, name)
                        : mlirLLVMStructTypeIdentifiedGet(raw, name));
}

static PyObject *struct_identified(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  return struct_named(cls, args, nargs, kwnames, 0);
}

static PyObject *struct_opaque(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  return struct_named(cls, args, nargs, kwnames, 1);
}

static PyObject *struct_new_identified(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  static const char *const names[] = {"name", "elements", "packed", "context", NULL};
  PyObject *a[4];
  if (!tpy_fastargs("new_identified", args, nargs, kwnames, names, 2, 4, a)) return NULL;
  MlirStringRef name;
  if (!tpy_arg_str(a[0], "name", &name)) return NULL;
  int packed = a[2] ? PyObject_IsTrue(a[2]) : 0;
  if (packed < 0) return NULL;
  MlirContext raw;
  PyObject *ctx = context_for(a[3], "llvm", &raw);
  if (!ctx) return NULL;
  intptr_t n;
  MlirType *ts;
  if (!struct_elements(a[1], ctx, &n, &ts)) return NULL;
  MlirType t = mlirLLVMStructTypeIdentifiedNewGet(raw, name, n, ts, packed);
  PyMem_Free(ts);
  return wrap_as(cls, ctx, t);
}

static PyObject *struct_set_body(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  static const char *const names[] = {"elements", "packed", NULL};
  PyObject *a[2];
  if (!tpy_fastargs("set_body", args, nargs, kwnames, names, 1, 2, a)) return NULL;
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
#if TETHER_MLIR_VERSION >= 22
    {"get_literal", TPY_FASTFN(struct_literal), TPY_FAST | METH_CLASS,
     "get_literal(elements, *, packed=False, loc=None, context=None): !llvm.struct<(...)>."},
    {"get_literal_unchecked", TPY_FASTFN(struct_literal_unchecked), TPY_FAST | METH_CLASS,
     "get_literal_unchecked(elements, *, packed=False, context=None): !llvm.struct<(...)>."},
#else
    {"get_literal", TPY_FASTFN(struct_literal), TPY_FAST | METH_CLASS,
     "get_literal(elements, *, packed=False, loc=None): !llvm.struct<(...)>."},
#endif
    {"get_identified", TPY_FASTFN(struct_identified), TPY_FAST | METH_CLASS,
     "get_identified(name, *, context=None): the identified struct of that name."},
    {"get_opaque", TPY_FASTFN(struct_opaque), TPY_FAST | METH_CLASS,
     "get_opaque(name, context=None): an opaque identified struct."},
    {"new_identified", TPY_FASTFN(struct_new_identified), TPY_FAST | METH_CLASS,
     "new_identified(name, elements, *, packed=False, context=None): a fresh identified struct "
     "(renamed if the name is taken)."},
    {"set_body", TPY_FASTFN(struct_set_body), TPY_FAST,
     "set_body(elements, *, packed=False): the body of an identified struct."},
    TPY_METHODS_END,
};

static PyGetSetDef struct_getset[] = {
    {"name", struct_name, NULL, "The identifier (None for a literal struct).", NULL},
    {"body", struct_body, NULL, "The element types (None while opaque).", NULL},
    {"packed", struct_packed, NULL, NULL, NULL},
    {"opaque", struct_is_opaque, NULL, NULL, NULL},
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
/* llvm.translate_module_to_llvmir(module): the LLVM IR (text) of an operation MLIR translates (a
 * module of llvm dialect operations). MLIR's translation edits what it translates (it splits
 * duplicated successors): it gets a copy, and the operation is verified first. What MLIR refuses
 * raises MLIRError with its diagnostics (upstream 22 crashes printing the null module). */
static PyObject *translate_to_llvmir(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  (void)m;
  static const char *const names[] = {"module", NULL};
  PyObject *a[1];
  if (!tpy_fastargs("translate_module_to_llvmir", args, nargs, kwnames, names, 1, 1, a))
    return NULL;
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
     "translate_module_to_llvmir(module): the LLVM IR of a module of llvm dialect operations, "
     "as text."},
    TPY_METHODS_END,
};

/* Upstream 22's `type_name` / `attr_name` of these classes. */
static const tpy_mlir_name transform_names[] = {
    {"AnyOpType", mlirTransformAnyOpTypeGetName},
    {"AnyParamType", mlirTransformAnyParamTypeGetName},
    {"AnyValueType", mlirTransformAnyValueTypeGetName},
    {"OperationType", mlirTransformOperationTypeGetName},
    {"ParamType", mlirTransformParamTypeGetName},
    {NULL, NULL}};
static const tpy_mlir_name pdl_names[] = {
    {"AttributeType", mlirPDLAttributeTypeGetName}, {"OperationType", mlirPDLOperationTypeGetName},
    {"RangeType", mlirPDLRangeTypeGetName},         {"TypeType", mlirPDLTypeTypeGetName},
    {"ValueType", mlirPDLValueTypeGetName},         {NULL, NULL}};
static const tpy_mlir_name gpu_names[] = {{"AsyncTokenType", mlirGPUAsyncTokenTypeGetName},
                                          {NULL, NULL}};
static const tpy_mlir_name gpu_attr_names[] = {{"ObjectAttr", mlirGPUObjectAttrGetName},
                                               {NULL, NULL}};
static const tpy_mlir_name nvgpu_names[] = {
    {"TensorMapDescriptorType", mlirNVGPUTensorMapDescriptorTypeGetName}, {NULL, NULL}};
static const tpy_mlir_name llvm_names[] = {{"StructType", mlirLLVMStructTypeGetName},
                                           {"PointerType", mlirLLVMPointerTypeGetName},
                                           {NULL, NULL}};
#endif

/* ---- module ---------------------------------------------------------------------------------- */

/* The module `attr` of m, with the type classes `defs` and the attribute classes `attr_defs`
 * (may be NULL). */
static int define_in(PyObject *m, const char *attr, tpy_class_def *defs, tpy_class_def *attr_defs) {
  PyObject *sub = PyModule_New(attr);
  if (!sub) return -1;
  if (tpy_define_classes(sub, tpy.Type, defs, tpy.type_casters) < 0 ||
      (attr_defs && tpy_define_classes(sub, tpy.Attribute, attr_defs, tpy.attr_casters) < 0) ||
      PyModule_AddObject(m, attr, sub) < 0) {
    Py_DECREF(sub);
    return -1;
  }
  return 0;
}

int tpy_init_dialect_types(PyObject *m) {
  if (define_in(m, "_transform", transform_defs, NULL) < 0 ||
      define_in(m, "_pdl", pdl_defs, NULL) < 0 ||
      define_in(m, "_gpu", gpu_defs, gpu_attr_defs) < 0 ||
      define_in(m, "_nvgpu", nvgpu_defs, NULL) < 0 || define_in(m, "_llvm", llvm_defs, NULL) < 0)
    return -1;
#if TETHER_MLIR_VERSION >= 22
  PyObject *llvm = PyObject_GetAttrString(m, "_llvm");
  int rc = !llvm || PyModule_AddFunctions(llvm, llvm_functions) < 0;
  Py_XDECREF(llvm);
  if (rc || tpy_set_mlir_names(transform_defs, "type_name", transform_names) < 0 ||
      tpy_set_mlir_names(pdl_defs, "type_name", pdl_names) < 0 ||
      tpy_set_mlir_names(gpu_defs, "type_name", gpu_names) < 0 ||
      tpy_set_mlir_names(gpu_attr_defs, "attr_name", gpu_attr_names) < 0 ||
      tpy_set_mlir_names(nvgpu_defs, "type_name", nvgpu_names) < 0 ||
      tpy_set_mlir_names(llvm_defs, "type_name", llvm_names) < 0)
    return -1;
#endif
  return 0;
}
