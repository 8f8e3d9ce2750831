/* gpu.c: gpu's AsyncTokenType and ObjectAttr (`_tether._gpu`) and nvgpu's TensorMapDescriptorType
 * (`_tether._nvgpu`), which upstream defines in C++, re-exported by tether.dialects.gpu / .nvgpu.
 */
#include "dialects.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/NVGPU.h>
#include <string.h>

#if TETHER_MLIR_VERSION >= 22
#include <mlir-c/Dialect/GPU.h>
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

/* ----, nvgpu ------------------------------------------------------------------------------ */

TPY_ISA(MlirType, mlirTypeIsAGPUAsyncTokenType)
static const simple_def gpu_token = {"gpu", mlirGPUAsyncTokenTypeGet};

static tpy_class_def gpu_defs[] = {
    {"AsyncTokenType", NULL, isa_mlirTypeIsAGPUAsyncTokenType, NULL, tpy_dialect_simple_methods,
     NULL, NULL, "!gpu.async.token", (void *)&gpu_token, NULL},
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

#if TETHER_MLIR_VERSION >= 22
static tpy_sig object_get_sig = TPY_SIG(
    "get(target: Attribute, format: int, object: bytes, properties: DictAttr | None = None, "
    "kernels: Attribute | None = None, context: Context | None = None) -> Self",
    "A #gpu.object from its target attribute, gpu.CompilationTarget format, bytes, optional "
    "DictAttr properties and optional #gpu.kernel_table.");
#else
static tpy_sig object_get_sig = TPY_SIG(
    "get(target: Attribute, format: int, object: bytes, properties: DictAttr | None = None, "
    "*, context: Context | None = None) -> Self",
    "A #gpu.object from its target attribute, gpu.CompilationTarget format, bytes and "
    "optional DictAttr properties.");
#endif

static PyObject *object_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
#if TETHER_MLIR_VERSION >= 22
  PyObject *a[6];
  if (!tpy_fastargs(&object_get_sig, args, nargs, kwnames, a, 6)) return NULL;
  PyObject *context = a[5];
#else
  PyObject *a[5];
  if (!tpy_fastargs(&object_get_sig, args, nargs, kwnames, a, 5)) return NULL;
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
    {"get", TPY_FASTFN(object_get), TPY_FAST | METH_CLASS, TPY_DOC(object_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef object_getset[] = {
    {"target", object_target, NULL,
     TPY_PROP("Attribute", "The target attribute (#nvvm.target, #rocdl.target, ...)."), NULL},
    {"format", object_format, NULL,
     TPY_PROP("int", "The format, an int (gpu.CompilationTarget(format))."), NULL},
    {"object", object_bytes, NULL, TPY_PROP("bytes", "The object's contents, as bytes."), NULL},
    {"properties", object_properties, NULL,
     TPY_PROP("DictAttr | None", "The properties (a DictAttr), or None."), NULL},
#if TETHER_MLIR_VERSION >= 22
    {"kernels", object_kernels, NULL,
     TPY_PROP("Attribute | None", "The kernel table (#gpu.kernel_table), or None."), NULL},
#endif
    TPY_GETSET_END,
};

static tpy_class_def gpu_attr_defs[] = {
    {"ObjectAttr", NULL, isa_mlirAttributeIsAGPUObjectAttr, NULL, object_methods, object_getset,
     NULL, "#gpu.object<target, properties, format, object>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

TPY_ISA(MlirType, mlirTypeIsANVGPUTensorMapDescriptorType)

#if TETHER_MLIR_VERSION >= 22
#define TMD_CONTEXT "context" /* upstream 22's name */
#else
#define TMD_CONTEXT "ctx"
#endif
static tpy_sig tmd_get_sig =
    TPY_SIG("get(tensor_type: Type, swizzle: int, l2promo: int, oob_fill: int, interleave: "
            "int, " TMD_CONTEXT ": Context | None = None) -> Type",
            NULL);

static PyObject *tmd_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  (void)cls;
  PyObject *a[6];
  if (!tpy_fastargs(&tmd_get_sig, args, nargs, kwnames, a, 6)) return NULL;
  MlirType t;
  PyObject *tctx;
  if (!tpy_dialect_element_arg(a[0], "tensor_type", "nvgpu", &t, &tctx) ||
      !tpy_dialect_same_context(a[5], tctx))
    return NULL;
  if (!mlirTypeIsAMemRef(t))
    return PyErr_Format(PyExc_ValueError, "tensor_type must be a MemRefType");
  int64_t v[4];
  for (int i = 0; i < 4; i++)
    if (!tpy_arg_int64(a[i + 1], tmd_get_sig.info->names[i + 1], &v[i])) return NULL;
  if (v[0] < 0 || v[0] > 4 || v[1] < 0 || v[1] > 3 || v[2] < 0 || v[2] > 1 || v[3] < 0 || v[3] > 2)
    return PyErr_Format(PyExc_ValueError, "swizzle, l2promo, oob_fill or interleave out of "
                                          "range of their enums");
  return tpy_wrap_type(tctx,
                       mlirNVGPUTensorMapDescriptorTypeGet(mlirTypeGetContext(t), t, (int)v[0],
                                                           (int)v[1], (int)v[2], (int)v[3]));
}

static PyMethodDef tmd_methods[] = {
    {"get", TPY_FASTFN(tmd_get), TPY_FAST | METH_STATIC, TPY_DOC(tmd_get_sig)},
    TPY_METHODS_END,
};

static tpy_class_def nvgpu_defs[] = {
    {"TensorMapDescriptorType", NULL, isa_mlirTypeIsANVGPUTensorMapDescriptorType, NULL,
     tmd_methods, NULL, NULL, "!nvgpu.tensormap.descriptor<...>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#if TETHER_MLIR_VERSION >= 22
/* Upstream 22's `type_name` / `attr_name` of these classes. */
static const tpy_mlir_name gpu_names[] = {{"AsyncTokenType", mlirGPUAsyncTokenTypeGetName},
                                          {NULL, NULL}};
static const tpy_mlir_name gpu_attr_names[] = {{"ObjectAttr", mlirGPUObjectAttrGetName},
                                               {NULL, NULL}};
static const tpy_mlir_name nvgpu_names[] = {
    {"TensorMapDescriptorType", mlirNVGPUTensorMapDescriptorTypeGetName}, {NULL, NULL}};
#endif

int tpy_init_gpu(PyObject *m) {
  if (tpy_dialect_module(m, "_gpu", gpu_defs, gpu_attr_defs) < 0 ||
      tpy_dialect_module(m, "_nvgpu", nvgpu_defs, NULL) < 0)
    return -1;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_set_mlir_names(gpu_defs, "type_name", gpu_names) < 0 ||
      tpy_set_mlir_names(gpu_attr_defs, "attr_name", gpu_attr_names) < 0 ||
      tpy_set_mlir_names(nvgpu_defs, "type_name", nvgpu_names) < 0)
    return -1;
#endif
  return 0;
}
