/* dense.c: DenseElementsAttr (from any buffer-protocol object, numpy arrays included, or from a
 * list of attributes; a read-only buffer out of it), DenseIntElementsAttr, DenseFPElementsAttr,
 * DenseResourceElementsAttr, and the Dense{Bool,I8,I16,I32,I64,F32,F64}ArrayAttr classes with
 * their iterators (upstream's IRAttributes.cpp).
 *
 * Invariants: a buffer handed to MLIR is checked first (format, item size, total size against the
 * shape, alignment), so MLIR never reads past it; a buffer MLIR keeps (DenseResourceElementsAttr)
 * stays acquired until MLIR's deleter releases it, under the GIL. Buffers handed out of an
 * attribute are read-only views of the context's storage and keep the attribute (and so its
 * context) alive.
 */
#include "types.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#define A(o) ((MlirAttribute){TPY_PTR(o)})

/* DenseElementsAttr, set at init: its get and get_splat give one, as upstream's (navigation and
 * parsing give DenseIntElementsAttr / DenseFPElementsAttr). */

static PyObject *as_dense(PyObject *ctx, MlirAttribute r) {
  return tpy_ctxobj_new(tpy.DenseElementsAttr, ctx, r.ptr);
}

/* "Type(...)": the form upstream's messages print values in (their base class's repr). */
static PyObject *repr_of(MlirType t, PyObject *ctx) {
  PyObject *o = tpy_ctxobj_new(tpy.Type, ctx, t.ptr);
  if (!o) return NULL;
  PyObject *r = PyObject_Repr(o);
  Py_DECREF(o);
  return r;
}

static PyObject *base_repr(PyObject *o) {
  PyTypeObject *family = tpy_is(o, tpy.Type) ? tpy.Type : tpy.Attribute;
  PyObject *b = tpy_ctxobj_new(family, TPY_CTX(o), TPY_PTR(o));
  if (!b) return NULL;
  PyObject *r = PyObject_Repr(b);
  Py_DECREF(b);
  return r;
}

static int64_t num_elements(MlirType shaped) {
  int64_t n = 1;
  intptr_t rank = mlirShapedTypeGetRank(shaped);
  for (intptr_t i = 0; i < rank; i++) n *= mlirShapedTypeGetDimSize(shaped, i);
  return n;
}

/* ---- DenseElementsAttr.get ------------------------------------------------------------------- */

/* 1 when MLIR can store elements of type t in a dense buffer: integers, index, floats and complex
 * numbers of those. MLIR computes the element width of anything else as if it were an integer or a
 * float, and crashes (an opaque type, a tensor of tensors). */
static int dense_storable(MlirType t) {
  if (mlirTypeIsAComplex(t)) t = mlirComplexTypeGetElementType(t);
  return mlirTypeIsAInteger(t) || mlirTypeIsAIndex(t) || mlirTypeIsAFloat(t);
}

/* ValueError unless shaped's elements can be stored in a dense buffer (dense_storable). */
static int check_dense_storable(PyObject *ctx, MlirType shaped) {
  MlirType e = mlirShapedTypeGetElementType(shaped);
  if (dense_storable(e)) return 1;
  PyObject *r = tpy_wrap_type(ctx, e), *s = r ? PyObject_Str(r) : NULL;
  if (s)
    PyErr_Format(PyExc_ValueError,
                 "DenseElementsAttr cannot hold elements of type %U from a buffer: the elements "
                 "must be integers, index, floats or complex numbers",
                 s);
  Py_XDECREF(r);
  Py_XDECREF(s);
  return 0;
}

static int is_signed_format(const char *f) {
  return f && (f[0] == 'i' || f[0] == 'b' || f[0] == 'h' || f[0] == 'l' || f[0] == 'q');
}

static int is_unsigned_format(const char *f) {
  return f && (f[0] == 'I' || f[0] == 'B' || f[0] == 'H' || f[0] == 'L' || f[0] == 'Q');
}

/* Format codes may carry a byte-order or size prefix ('<', '=', '@', '!', '>'): native only. */
static const char *plain_format(const char *f) {
  if (!f) return "B";
  if (f[0] == '@' || f[0] == '=' || f[0] == '<') return f + 1;
  return f;
}

static PyObject *dense_from_list(PyObject *list, PyObject *type, PyObject *c) {
  PyObject *ctx = tpy_context_arg(c);
  if (!ctx) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(list);
  if (n == 0) return PyErr_Format(PyExc_ValueError, "Attributes list must be non-empty.");
  MlirType shaped;
  if (type && type != Py_None) {
    if (!tpy_arg_type_in(type, ctx, &shaped)) return NULL;
    if (!mlirTypeIsAShaped(shaped) || !mlirShapedTypeHasStaticShape(shaped)) {
      PyObject *r = base_repr(type);
      if (r)
        PyErr_Format(PyExc_ValueError,
                     "Expected a static ShapedType for the shaped_type parameter: %U", r);
      Py_XDECREF(r);
      return NULL;
    }
  } else {
    MlirAttribute a0;
    PyObject *first = PyList_GET_ITEM(list, 0);
    if (!tpy_is(first, tpy.Attribute)) return tpy_cast_error(first);
    if (!tpy_arg_attr_in(first, ctx, &a0)) return NULL;
    int64_t shape[1] = {n};
    shaped = mlirRankedTensorTypeGet(1, shape, mlirAttributeGetType(a0), mlirAttributeGetNull());
  }
  if (num_elements(shaped) != n && n != 1)
    return PyErr_Format(PyExc_ValueError,
                        "the shaped type holds %lld elements but %zd attributes were given",
                        (long long)num_elements(shaped), n);
  MlirAttribute *v = PyMem_Malloc((size_t)n * sizeof *v);
  if (!v) return PyErr_NoMemory();
  MlirType elt = mlirShapedTypeGetElementType(shaped);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = PyList_GET_ITEM(list, i);
    if (!tpy_is(x, tpy.Attribute)) {
      PyMem_Free(v);
      return tpy_cast_error(x);
    }
    if (!tpy_arg_attr_in(x, ctx, &v[i])) {
      PyMem_Free(v);
      return NULL;
    }
    MlirType at = mlirAttributeGetType(v[i]);
    if (!mlirTypeEqual(elt, at)) {
      PyObject *sr = repr_of(shaped, ctx), *ar = repr_of(at, ctx);
      if (sr && ar)
        PyErr_Format(PyExc_ValueError,
                     "All attributes must be of the same type and match the type parameter: "
                     "expected=%U, but got=%U",
                     sr, ar);
      Py_XDECREF(sr);
      Py_XDECREF(ar);
      PyMem_Free(v);
      return NULL;
    }
  }
  /* MLIR casts each element by the element type, without a check: IntegerAttr for integers and
   * index, FloatAttr for floats, StringAttr for anything else (a UnitAttr, whose type is none
   * like a StringAttr's, crashed it). */
  bool is_int = mlirTypeIsAInteger(elt) || mlirTypeIsAIndex(elt), is_float = mlirTypeIsAFloat(elt);
  for (Py_ssize_t i = 0; i < n; i++) {
    bool ok = is_int     ? mlirAttributeIsAInteger(v[i])
              : is_float ? mlirAttributeIsAFloat(v[i])
                         : mlirAttributeIsAString(v[i]);
    if (!ok) {
      PyMem_Free(v);
      return PyErr_Format(PyExc_ValueError,
                          "DenseElementsAttr.get needs %s elements for this element type "
                          "(attribute %zd is not one)",
                          is_int     ? "IntegerAttr"
                          : is_float ? "FloatAttr"
                                     : "StringAttr",
                          i);
    }
  }
  MlirAttribute r = mlirDenseElementsAttrGet(shaped, n, v);
  PyMem_Free(v);
  if (mlirAttributeIsNull(r))
    return PyErr_Format(PyExc_ValueError, "DenseElementsAttr could not be constructed");
  return as_dense(ctx, r);
}

static PyObject *dense_from_buffer(PyObject *array, int signless, PyObject *type, PyObject *shape_o,
                                   PyObject *c) {
  PyObject *ctx = tpy_context_arg(c);
  if (!ctx) return NULL;
  MlirContext mc = tpy_ctx_raw(ctx);
  MlirType explicit_type = {NULL};
  if (type && type != Py_None && !tpy_arg_type_in(type, ctx, &explicit_type)) return NULL;
  Py_buffer view;
  int flags = PyBUF_ND | (explicit_type.ptr ? 0 : PyBUF_FORMAT);
  if (PyObject_GetBuffer(array, &view, flags) < 0) return NULL;
  PyObject *result = NULL;
  int64_t *shape = NULL;
  intptr_t rank;
  if (shape_o && shape_o != Py_None) {
    PyObject *f = tpy_seq_fast(shape_o, "shape must be a sequence of int");
    if (!f) goto done;
    rank = PySequence_Fast_GET_SIZE(f);
    shape = PyMem_Malloc((size_t)(rank ? rank : 1) * sizeof *shape);
    int ok = shape != NULL;
    for (intptr_t i = 0; ok && i < rank; i++)
      ok = tpy_arg_int64(PySequence_Fast_GET_ITEM(f, i), "dimension", &shape[i]);
    Py_DECREF(f);
    if (!ok) {
      if (!PyErr_Occurred()) PyErr_NoMemory();
      goto done;
    }
  } else {
    rank = view.ndim;
    shape = PyMem_Malloc((size_t)(rank ? rank : 1) * sizeof *shape);
    if (!shape) {
      PyErr_NoMemory();
      goto done;
    }
    for (intptr_t i = 0; i < rank; i++) shape[i] = view.shape ? view.shape[i] : view.len;
  }
  for (intptr_t i = 0; i < rank; i++)
    if (shape[i] < 0) {
      PyErr_SetString(PyExc_ValueError, "shape dimensions must be >= 0");
      goto done;
    }
  MlirType elt = explicit_type;
  if (!elt.ptr) {
    const char *f = plain_format(view.format);
    Py_ssize_t sz = view.itemsize;
    if (!strcmp(f, "f") && sz == 4)
      elt = mlirF32TypeGet(mc);
    else if (!strcmp(f, "d") && sz == 8)
      elt = mlirF64TypeGet(mc);
    else if (!strcmp(f, "e") && sz == 2)
      elt = mlirF16TypeGet(mc);
#if TETHER_MLIR_VERSION >= 22
    else if (!strcmp(f, "?") && sz == 1)
      elt = mlirIntegerTypeGet(mc, 1); /* bools: bit-packed below, as upstream 22 */
#endif
    else if ((is_signed_format(f) || is_unsigned_format(f)) && f[1] == 0 &&
             (sz == 1 || sz == 2 || sz == 4 || sz == 8)) {
      unsigned w = (unsigned)sz * 8;
      elt = signless              ? mlirIntegerTypeGet(mc, w)
            : is_signed_format(f) ? mlirIntegerTypeSignedGet(mc, w)
                                  : mlirIntegerTypeUnsignedGet(mc, w);
    } else {
      PyErr_Format(PyExc_ValueError, "unimplemented array format conversion from format: %s",
                   view.format ? view.format : "B");
      goto done;
    }
  }
  MlirType shaped;
  if (mlirTypeIsAShaped(elt)) {
    if (shape_o && shape_o != Py_None) {
      PyErr_SetString(PyExc_ValueError,
                      "Shape can only be specified explicitly when the type is not a shaped type.");
      goto done;
    }
    if (!mlirShapedTypeHasStaticShape(elt)) {
      PyErr_Format(PyExc_ValueError,
                   "Expected a static ShapedType for the shaped_type parameter: "
                   "%R",
                   type);
      goto done;
    }
    shaped = elt;
  } else {
    shaped = mlirRankedTensorTypeGet(rank, shape, elt, mlirAttributeGetNull());
    if (mlirTypeIsNull(shaped)) {
      PyErr_SetString(PyExc_ValueError, "invalid element type for a tensor");
      goto done;
    }
  }
  if (!check_dense_storable(ctx, shaped)) goto done;
  MlirAttribute r;
#if TETHER_MLIR_VERSION >= 22
  if (!explicit_type.ptr && !strcmp(plain_format(view.format), "?")) {
    /* MLIR stores i1 elements 8 to a byte, the first in the lowest bit (numpy's
     * packbits(bitorder="little")); the buffer is C-contiguous (PyBUF_ND). */
    size_t n = (size_t)view.len, bytes = (n + 7) / 8;
    uint8_t *packed = PyMem_Calloc(bytes ? bytes : 1, 1);
    if (!packed) {
      PyErr_NoMemory();
      goto done;
    }
    for (size_t i = 0; i < n; i++)
      if (((const uint8_t *)view.buf)[i]) packed[i / 8] |= (uint8_t)(1u << (i % 8));
    r = mlirDenseElementsAttrRawBufferGet(shaped, bytes, packed);
    PyMem_Free(packed);
  } else
#endif
    r = mlirDenseElementsAttrRawBufferGet(shaped, (size_t)view.len, view.buf);
  if (mlirAttributeIsNull(r)) {
    PyErr_SetString(PyExc_ValueError,
                    "DenseElementsAttr could not be constructed from the given buffer. This may "
                    "mean that the Python buffer layout does not match that MLIR expected layout "
                    "and is a bug.");
    goto done;
  }
  result = as_dense(ctx, r);
done:
  PyMem_Free(shape);
  PyBuffer_Release(&view);
  return result;
}

static tpy_sig dense_get_sig1 = TPY_SIG("get(attrs: Sequence[Attribute], type: Type | None = None, "
                                        "context: Context | None = None) -> DenseElementsAttr",
                                        NULL);
static tpy_sig dense_get_sig = TPY_SIG_OR(
    "get(array: Any, signless: bool = True, type: Type | None = None, shape: Sequence[int] | None "
    "= None, context: Context | None = None) -> DenseElementsAttr",
    "From a buffer (a numpy array, array.array, memoryview, ...), or from a list of attributes.",
    &dense_get_sig1);

/* get(array, signless=True, type=None, shape=None, context=None) from a buffer, or
 * get(attrs, type=None, context=None) from a list of attributes (upstream's two overloads). */
static PyObject *dense_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  (void)cls;
  PyObject *first = nargs ? args[0] : tpy_kwarg(args, nargs, kwnames, "array");
  if (!first) first = tpy_kwarg(args, nargs, kwnames, "attrs");
  if (first && !PyObject_CheckBuffer(first) && PyList_Check(first)) {
    PyObject *a[3];
    if (!tpy_fastargs(&dense_get_sig1, args, nargs, kwnames, a, 3)) return NULL;
    if (!PyList_Check(a[0])) return tpy_type_error("attrs", "a list", a[0]);
    return dense_from_list(a[0], a[1] ? a[1] : Py_None, a[2] ? a[2] : Py_None);
  }
  PyObject *a[5];
  if (!tpy_fastargs(&dense_get_sig, args, nargs, kwnames, a, 5)) return NULL;
  int signless = 1;
  if (a[1] && !tpy_arg_bool(a[1], &signless)) return NULL;
  if (!PyObject_CheckBuffer(a[0]))
    return tpy_type_error("array", "a buffer (e.g. a numpy array) or a list of Attribute", a[0]);
  return dense_from_buffer(a[0], signless, a[2] ? a[2] : Py_None, a[3] ? a[3] : Py_None,
                           a[4] ? a[4] : Py_None);
}

static tpy_sig dense_get_splat_sig =
    TPY_SIG("get_splat(shaped_type: Type, element_attr: Attribute) -> DenseElementsAttr", NULL);

static PyObject *dense_get_splat(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&dense_get_splat_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *t = a[0], *e = a[1];
  MlirType st;
  PyObject *ctx;
  MlirAttribute ea;
  if (!tpy_arg_type(t, &st, &ctx) || !tpy_arg_attr_in(e, ctx, &ea)) return NULL;
  int bad = !mlirAttributeIsAInteger(ea) && !mlirAttributeIsAFloat(ea)                   ? 1
            : !mlirTypeIsAShaped(st) || !mlirShapedTypeHasStaticShape(st)                ? 2
            : !mlirTypeEqual(mlirShapedTypeGetElementType(st), mlirAttributeGetType(ea)) ? 3
                                                                                         : 0;
  if (bad) {
    /* The messages print both (upstream's words); only on this path. */
    PyObject *tr = base_repr(t), *er = base_repr(e);
    if (tr && er && bad == 1)
      PyErr_Format(PyExc_ValueError, "Illegal element type for DenseElementsAttr: %U", er);
    else if (tr && er && bad == 2)
      PyErr_Format(PyExc_ValueError,
                   "Expected a static ShapedType for the shaped_type parameter: %U", tr);
    else if (tr && er)
      PyErr_Format(PyExc_ValueError,
                   "Shaped element type and attribute type must be equal: shaped=%U, element=%U",
                   tr, er);
    Py_XDECREF(tr);
    Py_XDECREF(er);
    return NULL;
  }
  return as_dense(ctx, mlirDenseElementsAttrSplatGet(st, ea));
}

static PyObject *dense_is_splat(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirDenseElementsAttrIsSplat(A(self)));
}

static PyObject *dense_splat_value(PyObject *self, PyObject *unused) {
  (void)unused;
  if (!mlirDenseElementsAttrIsSplat(A(self)))
    return PyErr_Format(PyExc_ValueError, "get_splat_value called on a non-splat attribute");
  return tpy_wrap_attr(TPY_CTX(self), mlirDenseElementsAttrGetSplatValue(A(self)));
}

static Py_ssize_t dense_len(PyObject *self) {
  return (Py_ssize_t)mlirElementsAttrGetNumElements(A(self));
}

/* The buffer of the attribute's storage: read-only, C-contiguous (splats: strides 0). */
static int dense_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  if (flags & PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "DenseElementsAttr buffers are read-only");
    return -1;
  }
  MlirType st = mlirAttributeGetType(A(self));
  MlirType e = mlirShapedTypeGetElementType(st);
  const char *fmt = NULL;
  Py_ssize_t size = 0;
  if (mlirTypeIsAF32(e))
    fmt = "f", size = 4;
  else if (mlirTypeIsAF64(e))
    fmt = "d", size = 8;
  else if (mlirTypeIsAF16(e))
    fmt = "e", size = 2;
  else if (mlirTypeIsAIndex(e))
    fmt = "q", size = 8;
  else if (mlirTypeIsAInteger(e)) {
    unsigned w = mlirIntegerTypeGetWidth(e);
    int u = mlirIntegerTypeIsUnsigned(e);
    if (w == 8)
      fmt = u ? "B" : "b", size = 1;
    else if (w == 16)
      fmt = u ? "H" : "h", size = 2;
    else if (w == 32)
      fmt = u ? "I" : "i", size = 4;
    else if (w == 64)
      fmt = u ? "Q" : "q", size = 8;
  }
#if TETHER_MLIR_VERSION >= 22
  /* i1: MLIR packs 8 to a byte; the buffer is an unpacked copy of bools (upstream 22 unpacks them
   * with numpy), owned by the view. */
  int bools = mlirTypeIsAInteger(e) && mlirIntegerTypeGetWidth(e) == 1;
  if (bools) fmt = "?", size = 1;
#else
  int bools = 0;
#endif
  if (!fmt) {
    PyErr_SetString(PyExc_ValueError, "unsupported data type for conversion to Python buffer");
    return -1;
  }
  intptr_t rank = mlirShapedTypeGetRank(st);
  Py_ssize_t total = 1;
  for (intptr_t i = 0; i < rank; i++) total *= (Py_ssize_t)mlirShapedTypeGetDimSize(st, i);
  size_t head = (size_t)(2 * rank + 1) * sizeof(Py_ssize_t);
  Py_ssize_t *dims = PyMem_Malloc(head + (bools ? (size_t)total : 0));
  if (!dims) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t *strides = dims + rank;
  int splat = !bools && mlirDenseElementsAttrIsSplat(A(self));
  for (intptr_t i = 0; i < rank; i++) dims[i] = (Py_ssize_t)mlirShapedTypeGetDimSize(st, i);
  Py_ssize_t stride = size;
  for (intptr_t i = rank - 1; i >= 0; i--) {
    strides[i] = splat ? 0 : stride;
    stride *= dims[i];
  }
  if (bools) {
    uint8_t *data = (uint8_t *)dims + head;
    for (Py_ssize_t i = 0; i < total; i++)
      data[i] = mlirDenseElementsAttrGetBoolValue(A(self), (intptr_t)i);
    view->buf = data;
  } else {
    view->buf = (void *)mlirDenseElementsAttrGetRawData(A(self));
  }
  view->obj = Py_NewRef(self);
  view->len = total * size;
  view->readonly = 1;
  view->itemsize = size;
  view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
  view->ndim = (int)rank;
  view->shape = (flags & PyBUF_ND) ? dims : NULL;
  view->strides = (flags & PyBUF_STRIDES) ? strides : NULL;
  view->suboffsets = NULL;
  view->internal = dims;
  if (splat && !(flags & PyBUF_STRIDES) && total > 1) {
    PyMem_Free(dims);
    Py_CLEAR(view->obj);
    PyErr_SetString(PyExc_BufferError, "a splat's buffer needs strides (PyBUF_STRIDES)");
    return -1;
  }
  return 0;
}

static void dense_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)self;
  PyMem_Free(view->internal);
}

static PyMethodDef dense_methods[] = {
    {"get", TPY_FASTFN(dense_get), TPY_FAST | METH_STATIC, TPY_DOC(dense_get_sig)},
    {"get_splat", TPY_FASTFN(dense_get_splat), TPY_FAST | METH_STATIC,
     TPY_DOC(dense_get_splat_sig)},
    {"get_splat_value", (PyCFunction)dense_splat_value, METH_NOARGS,
     TPY_SIGDOC("get_splat_value() -> Attribute", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef dense_getset[] = {
    {"is_splat", dense_is_splat, NULL, TPY_PROP("bool", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot dense_slots[] = {
    {Py_sq_length, dense_len},
    {Py_bf_getbuffer, dense_getbuffer},
    {Py_bf_releasebuffer, dense_releasebuffer},
    {0, NULL},
};

static PyObject *dense_int_item(PyObject *self, Py_ssize_t pos) {
  if (pos < 0 || pos >= dense_len(self))
    return PyErr_Format(PyExc_IndexError, "attempt to access out of bounds element");
  MlirType e = mlirShapedTypeGetElementType(mlirAttributeGetType(A(self)));
  MlirAttribute a = A(self);
  if (mlirTypeIsAIndex(e)) return PyLong_FromLongLong(mlirDenseElementsAttrGetInt64Value(a, pos));
  unsigned w = mlirIntegerTypeGetWidth(e);
  int u = mlirIntegerTypeIsUnsigned(e);
  switch (w) {
  case 1: /* an int, as upstream */
    return PyLong_FromLong(mlirDenseElementsAttrGetBoolValue(a, pos));
  case 8:
    return u ? PyLong_FromUnsignedLong(mlirDenseElementsAttrGetUInt8Value(a, pos))
             : PyLong_FromLong(mlirDenseElementsAttrGetInt8Value(a, pos));
  case 16:
    return u ? PyLong_FromUnsignedLong(mlirDenseElementsAttrGetUInt16Value(a, pos))
             : PyLong_FromLong(mlirDenseElementsAttrGetInt16Value(a, pos));
  case 32:
    return u ? PyLong_FromUnsignedLong(mlirDenseElementsAttrGetUInt32Value(a, pos))
             : PyLong_FromLong(mlirDenseElementsAttrGetInt32Value(a, pos));
  case 64:
    return u ? PyLong_FromUnsignedLongLong(mlirDenseElementsAttrGetUInt64Value(a, pos))
             : PyLong_FromLongLong(mlirDenseElementsAttrGetInt64Value(a, pos));
  default:
    return PyErr_Format(PyExc_TypeError, "Unsupported integer type");
  }
}

static PyObject *dense_fp_item(PyObject *self, Py_ssize_t pos) {
  if (pos < 0 || pos >= dense_len(self))
    return PyErr_Format(PyExc_IndexError, "attempt to access out of bounds element");
  MlirType e = mlirShapedTypeGetElementType(mlirAttributeGetType(A(self)));
  if (mlirTypeIsAF32(e))
    return PyFloat_FromDouble(mlirDenseElementsAttrGetFloatValue(A(self), pos));
  if (mlirTypeIsAF64(e))
    return PyFloat_FromDouble(mlirDenseElementsAttrGetDoubleValue(A(self), pos));
  return PyErr_Format(PyExc_TypeError, "Unsupported floating-point type");
}

static PyType_Slot dense_int_slots[] = {{Py_sq_item, dense_int_item}, {0, NULL}};
static PyType_Slot dense_fp_slots[] = {{Py_sq_item, dense_fp_item}, {0, NULL}};

/* ---- DenseResourceElementsAttr --------------------------------------------------------------- */

static void resource_deleter(void *user, const void *data, size_t size, size_t align) {
  (void)data;
  (void)size;
  (void)align;
  Py_buffer *view = user;
  if (!Py_IsInitialized()) return; /* the process is ending: nothing to release to */
  PyGILState_STATE g = PyGILState_Ensure();
  PyBuffer_Release(view);
  PyMem_RawFree(view);
  PyGILState_Release(g);
}

static tpy_sig resource_get_sig = TPY_SIG(
    "get_from_buffer(array: Any, name: str, type: Type, alignment: int | None = None, is_mutable: "
    "bool = False, context: Context | None = None) -> DenseResourceElementsAttr",
    "An attribute over the buffer's memory (kept acquired while MLIR uses it).");

static PyObject *resource_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  PyObject *a[6];
  if (!tpy_fastargs(&resource_get_sig, args, nargs, kwnames, a, 6)) return NULL;
  PyObject *array = a[0], *name = a[1], *type = a[2], *align_o = a[3] ? a[3] : Py_None,
           *c = a[5] ? a[5] : Py_None;
  int mut = 0;
  if (a[4] && !tpy_arg_bool(a[4], &mut)) return NULL;
  PyObject *ctx = tpy_context_arg(c);
  if (!ctx) return NULL;
  MlirStringRef ns;
  MlirType t;
  if (!tpy_arg_str(name, "name", &ns) || !tpy_arg_type_in(type, ctx, &t)) return NULL;
  if (!mlirTypeIsAShaped(t))
    return PyErr_Format(PyExc_ValueError,
                        "Constructing a DenseResourceElementsAttr requires a ShapedType.");
  if (!mlirShapedTypeHasStaticShape(t))
    return PyErr_Format(PyExc_ValueError, "DenseResourceElementsAttr needs a static shape");
  Py_buffer *view = PyMem_RawMalloc(sizeof *view);
  if (!view) return PyErr_NoMemory();
  if (PyObject_GetBuffer(array, view, PyBUF_STRIDES) < 0) {
    PyMem_RawFree(view);
    return NULL;
  }
  const char *err = NULL;
  size_t alignment = view->ndim ? (size_t)view->strides[view->ndim - 1] : (size_t)view->itemsize;
  if (align_o != Py_None) {
    intptr_t a;
    if (!tpy_arg_intptr(align_o, "alignment", &a)) goto fail;
    alignment = a > 0 ? (size_t)a : 0;
  }
  MlirType e = mlirShapedTypeGetElementType(t);
  unsigned bits = mlirTypeIsAInteger(e) ? mlirIntegerTypeGetWidth(e)
                  : mlirTypeIsAFloat(e) ? mlirFloatTypeGetWidth(e)
                  : mlirTypeIsAIndex(e) ? 64
                                        : 0;
  if (!PyBuffer_IsContiguous(view, 'A'))
    err = "Contiguous buffer is required.";
  else if (alignment == 0 || (alignment & (alignment - 1)))
    err = "the alignment must be a power of two";
  else if (alignment > TETHER_MAX_RESOURCE_ALIGNMENT)
    err = "the alignment is larger than 65536 (TETHER_MAX_RESOURCE_ALIGNMENT): MLIR's bytecode "
          "writer pads a blob to its alignment";
  else if ((uintptr_t)view->buf % alignment)
    err = "the buffer's data is not aligned to the alignment";
  else if (bits % 8 == 0 && bits && (uint64_t)view->len < (uint64_t)num_elements(t) * (bits / 8))
    /* Smaller than the type's elements: MLIR would read past it. Larger is upstream's (the blob
     * keeps the whole buffer; the elements are its first bytes). */
    err = "the buffer is smaller than the shaped type's elements";
  if (err) {
    PyErr_SetString(PyExc_ValueError, err);
    goto fail;
  }
  MlirAttribute r = mlirUnmanagedDenseResourceElementsAttrGet(
      t, ns, view->buf, (size_t)view->len, alignment, mut, resource_deleter, view);
  if (mlirAttributeIsNull(r)) {
    PyErr_SetString(PyExc_ValueError,
                    "DenseResourceElementsAttr could not be constructed from the given buffer.");
    goto fail;
  }
  /* MLIR owns the view now: its deleter releases it. */
  return tpy_wrap_attr(ctx, r);
fail:
  PyBuffer_Release(view);
  PyMem_RawFree(view);
  return NULL;
}

static PyMethodDef resource_methods[] = {
    {"get_from_buffer", TPY_FASTFN(resource_get), TPY_FAST | METH_STATIC,
     TPY_DOC(resource_get_sig)},
    TPY_METHODS_END,
};

/* ---- Dense*ArrayAttr ------------------------------------------------------------------------- */

enum { K_BOOL, K_I8, K_I16, K_I32, K_I64, K_F32, K_F64, K_COUNT };
_Static_assert(K_COUNT <= sizeof tpy.dense_array_iterators / sizeof tpy.dense_array_iterators[0],
               "the module state holds an iterator class per kind");

static const char *const array_names[K_COUNT] = {
    "DenseBoolArrayAttr", "DenseI8ArrayAttr",  "DenseI16ArrayAttr", "DenseI32ArrayAttr",
    "DenseI64ArrayAttr",  "DenseF32ArrayAttr", "DenseF64ArrayAttr"};

static int array_kind(MlirAttribute a) {
  if (mlirAttributeIsADenseBoolArray(a)) return K_BOOL;
  if (mlirAttributeIsADenseI8Array(a)) return K_I8;
  if (mlirAttributeIsADenseI16Array(a)) return K_I16;
  if (mlirAttributeIsADenseI32Array(a)) return K_I32;
  if (mlirAttributeIsADenseI64Array(a)) return K_I64;
  if (mlirAttributeIsADenseF32Array(a)) return K_F32;
  return K_F64;
}

static int kind_of_class(PyObject *cls) {
  tpy_class_def *d = tpy_class_def_of((PyTypeObject *)cls);
  for (int k = 0; d && k < K_COUNT; k++)
    if (!strcmp(d->name, array_names[k])) return k;
  return -1;
}

static PyObject *array_element(MlirAttribute a, int k, intptr_t i) {
  switch (k) {
  case K_BOOL:
    return PyBool_FromLong(mlirDenseBoolArrayGetElement(a, i));
  case K_I8:
    return PyLong_FromLong(mlirDenseI8ArrayGetElement(a, i));
  case K_I16:
    return PyLong_FromLong(mlirDenseI16ArrayGetElement(a, i));
  case K_I32:
    return PyLong_FromLong(mlirDenseI32ArrayGetElement(a, i));
  case K_I64:
    return PyLong_FromLongLong(mlirDenseI64ArrayGetElement(a, i));
  case K_F32:
    return PyFloat_FromDouble(mlirDenseF32ArrayGetElement(a, i));
  default:
    return PyFloat_FromDouble(mlirDenseF64ArrayGetElement(a, i));
  }
}

/* Builds an array attribute of kind k from existing elements (a, may be null) and Python values. */
static PyObject *array_make(PyObject *ctx, int k, MlirAttribute old, PyObject *values) {
  PyObject *f = tpy_seq_fast(values, "values must be a sequence");
  if (!f) return NULL;
  intptr_t n0 = old.ptr ? mlirDenseArrayGetNumElements(old) : 0;
  Py_ssize_t n = n0 + PySequence_Fast_GET_SIZE(f);
  static const size_t sizes[K_COUNT] = {sizeof(int), 1, 2, 4, 8, 4, 8};
  char *buf = PyMem_Malloc((size_t)(n ? n : 1) * sizes[k]);
  if (!buf) {
    Py_DECREF(f);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x =
        i < n0 ? array_element(old, k, i) : Py_NewRef(PySequence_Fast_GET_ITEM(f, i - n0));
    int ok = x != NULL;
    /* As upstream's converters: bools from anything with __bool__, integers from __index__
     * (not floats), floats from __float__; a value out of range does not fit. */
    if (ok && k == K_BOOL) {
      int b = Py_TYPE(x)->tp_as_number && Py_TYPE(x)->tp_as_number->nb_bool ? PyObject_IsTrue(x)
              : x == Py_None                                                ? 0
                                                                            : -2;
      if (b == -2)
        ok = 0;
      else if (b < 0)
        ok = -1;
      else
        ((int *)buf)[i] = b;
    } else if (ok && (k == K_F32 || k == K_F64)) {
      double d = PyFloat_AsDouble(x);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        ok = 0;
      } else if (k == K_F32) {
        ((float *)buf)[i] = (float)d;
      } else {
        ((double *)buf)[i] = d;
      }
    } else if (ok) {
      static const int64_t lo[K_COUNT] = {0, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
      static const int64_t hi[K_COUNT] = {0, INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
      PyObject *ix = PyFloat_Check(x) ? NULL : PyNumber_Index(x);
      int overflow = 0;
      long long v = ix ? PyLong_AsLongLongAndOverflow(ix, &overflow) : 0;
      Py_XDECREF(ix);
      if (!ix || overflow || v < lo[k] || v > hi[k]) {
        PyErr_Clear();
        ok = 0;
      } else {
        if (k == K_I8) ((int8_t *)buf)[i] = (int8_t)v;
        if (k == K_I16) ((int16_t *)buf)[i] = (int16_t)v;
        if (k == K_I32) ((int32_t *)buf)[i] = (int32_t)v;
        if (k == K_I64) ((int64_t *)buf)[i] = v;
      }
    }
    if (ok == 0)
      PyErr_Format(PyExc_TypeError,
                   "get(): incompatible function arguments: element %zd (%R) cannot be converted "
                   "for %s",
                   i - n0, x, array_names[k]);
    Py_XDECREF(x);
    if (ok != 1) {
      PyMem_Free(buf);
      Py_DECREF(f);
      return NULL;
    }
  }
  Py_DECREF(f);
  MlirContext c = tpy_ctx_raw(ctx);
  MlirAttribute r;
  switch (k) {
  case K_BOOL:
    r = mlirDenseBoolArrayGet(c, n, (int *)buf);
    break;
  case K_I8:
    r = mlirDenseI8ArrayGet(c, n, (int8_t *)buf);
    break;
  case K_I16:
    r = mlirDenseI16ArrayGet(c, n, (int16_t *)buf);
    break;
  case K_I32:
    r = mlirDenseI32ArrayGet(c, n, (int32_t *)buf);
    break;
  case K_I64:
    r = mlirDenseI64ArrayGet(c, n, (int64_t *)buf);
    break;
  case K_F32:
    r = mlirDenseF32ArrayGet(c, n, (float *)buf);
    break;
  default:
    r = mlirDenseF64ArrayGet(c, n, (double *)buf);
    break;
  }
  PyMem_Free(buf);
  return tpy_wrap_attr(ctx, r);
}

/* X.get(values, context=None) of the dense array classes: one spec per element type. */
static PyObject *array_get(tpy_sig *sig, PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2)) return NULL;
  int k = kind_of_class(cls);
  if (k < 0) return PyErr_Format(PyExc_TypeError, "not a dense array class");
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  return array_make(ctx, k, (MlirAttribute){NULL}, a[0]);
}

#define ARRAY_GET(elt)                                                                             \
  static tpy_sig elt##_array_get_sig =                                                             \
      TPY_SIG("get(values: Sequence[" #elt "], context: Context | None = None) -> Self", NULL);    \
  static PyObject *elt##_array_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,         \
                                   PyObject *kwnames) {                                            \
    return array_get(&elt##_array_get_sig, cls, args, nargs, kwnames);                             \
  }                                                                                                \
  static PyMethodDef elt##_array_methods[] = {                                                     \
      {"get", TPY_FASTFN(elt##_array_get), TPY_FAST | METH_CLASS, TPY_DOC(elt##_array_get_sig)},   \
      TPY_METHODS_END,                                                                             \
  };
ARRAY_GET(bool)
ARRAY_GET(int)
ARRAY_GET(float)

static Py_ssize_t array_len(PyObject *self) { return mlirDenseArrayGetNumElements(A(self)); }

static PyObject *array_item(PyObject *self, Py_ssize_t i) {
  if (i < 0 || i >= array_len(self))
    return PyErr_Format(PyExc_IndexError, "DenseArray index out of range");
  return array_element(A(self), array_kind(A(self)), i);
}

/* `array + list`, as upstream's __add__(list). CPython calls the slot for `self + other` and for
 * `other + self` alike (the reflected case has the array on the right), so `self` may be any
 * object: only an array of these classes on the left and a list on the right; anything else is
 * NotImplemented (Python's TypeError). */
static PyObject *array_add(PyObject *self, PyObject *other) {
  int k = kind_of_class((PyObject *)Py_TYPE(self));
  if (k < 0 || array_kind(A(self)) != k || !PyList_Check(other)) Py_RETURN_NOTIMPLEMENTED;
  return array_make(TPY_CTX(self), k, A(self), other);
}

typedef struct {
  PyObject_HEAD PyObject *attr;
  intptr_t next;
} TpArrayIter;

static PyObject *array_iter(PyObject *self) {
  int k = array_kind(A(self));
  TpArrayIter *it = PyObject_GC_New(TpArrayIter, tpy.dense_array_iterators[k]);
  if (!it) return NULL;
  it->attr = Py_NewRef(self);
  it->next = 0;
  PyObject_GC_Track(it);
  return (PyObject *)it;
}

static PyObject *array_iter_next(TpArrayIter *it) {
  if (it->next >= mlirDenseArrayGetNumElements(A(it->attr))) return NULL;
  return array_element(A(it->attr), array_kind(A(it->attr)), it->next++);
}

static int array_iter_traverse(TpArrayIter *it, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(it));
  Py_VISIT(it->attr);
  return 0;
}

static int array_iter_clear(TpArrayIter *it) {
  Py_CLEAR(it->attr);
  return 0;
}

static PyType_Slot array_slots[] = {
    {Py_sq_length, array_len},
    {Py_sq_item, array_item},
    {Py_nb_add, array_add},
    {Py_tp_iter, array_iter},
    {0, NULL},
};

/* ---- the table ------------------------------------------------------------------------------- */

TPY_ISA(MlirAttribute, mlirAttributeIsADenseElements)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseIntElements)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseFPElements)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseResourceElements)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseBoolArray)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseI8Array)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseI16Array)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseI32Array)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseI64Array)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseF32Array)
TPY_ISA(MlirAttribute, mlirAttributeIsADenseF64Array)

#define ARRAY(k, isa, methods)                                                                     \
  { array_names[k], NULL, isa, NULL, methods, NULL, array_slots, NULL, NULL, NULL }

static tpy_class_def dense_defs[] = {
    {"DenseElementsAttr", NULL, isa_mlirAttributeIsADenseElements, NULL, dense_methods,
     dense_getset, dense_slots, "Dense elements (tensor/vector of integers or floats).", NULL,
     NULL},
    {"DenseIntElementsAttr", "DenseElementsAttr", isa_mlirAttributeIsADenseIntElements, NULL, NULL,
     NULL, dense_int_slots, NULL, NULL, NULL},
    {"DenseFPElementsAttr", "DenseElementsAttr", isa_mlirAttributeIsADenseFPElements, NULL, NULL,
     NULL, dense_fp_slots, NULL, NULL, NULL},
    {"DenseResourceElementsAttr", NULL, isa_mlirAttributeIsADenseResourceElements, NULL,
     resource_methods, NULL, NULL, NULL, NULL, NULL},
    ARRAY(K_BOOL, isa_mlirAttributeIsADenseBoolArray, bool_array_methods),
    ARRAY(K_I8, isa_mlirAttributeIsADenseI8Array, int_array_methods),
    ARRAY(K_I16, isa_mlirAttributeIsADenseI16Array, int_array_methods),
    ARRAY(K_I32, isa_mlirAttributeIsADenseI32Array, int_array_methods),
    ARRAY(K_I64, isa_mlirAttributeIsADenseI64Array, int_array_methods),
    ARRAY(K_F32, isa_mlirAttributeIsADenseF32Array, float_array_methods),
    ARRAY(K_F64, isa_mlirAttributeIsADenseF64Array, float_array_methods),
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot iter_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},   {Py_tp_traverse, array_iter_traverse},
    {Py_tp_clear, array_iter_clear},   {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, array_iter_next}, {0, NULL},
};

/* Registers a caster for `id` that picks the first class of `classes` (most specific first) whose
 * isa holds. */

int tpy_init_dense(PyObject *m) {
  if (tpy_define_classes(m, tpy.Attribute, dense_defs, tpy.attr_casters) < 0) return -1;
  tpy.DenseElementsAttr = dense_defs[0].cls;
#if TETHER_MLIR_VERSION >= 22
  static const tpy_mlir_name names[] = {
      {"DenseResourceElementsAttr", mlirDenseResourceElementsAttrGetName}, {NULL, NULL}};
  if (tpy_set_mlir_names(dense_defs, "attr_name", names) < 0) return -1;
#endif
  for (int k = 0; k < K_COUNT; k++) {
    char name[80];
    snprintf(name, sizeof name, "tether.ir.%.*sIterator", (int)(strlen(array_names[k]) - 4),
             array_names[k]);
    PyType_Spec spec = {name, sizeof(TpArrayIter), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                        iter_slots};
    if (tpy_add_type(m, &spec, NULL, &tpy.dense_array_iterators[k]) < 0) return -1;
  }
  /* As upstream: one TypeID for dense int and float elements, one for every dense array. */
  PyObject *elements =
      Py_BuildValue("(OOO)", dense_defs[1].cls, dense_defs[2].cls, dense_defs[0].cls);
  PyObject *arrays = PyTuple_New(K_COUNT);
  for (int k = 0; arrays && k < K_COUNT; k++)
    PyTuple_SET_ITEM(arrays, k, Py_NewRef((PyObject *)dense_defs[4 + k].cls));
  int rc = !elements || !arrays ||
           tpy_register_choice(tpy.attr_casters, mlirDenseIntOrFPElementsAttrGetTypeID(),
                               elements) < 0 ||
           tpy_register_choice(tpy.attr_casters, mlirDenseArrayAttrGetTypeID(), arrays) < 0;
  Py_XDECREF(elements);
  Py_XDECREF(arrays);
  return rc ? -1 : 0;
}
