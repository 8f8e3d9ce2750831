/* linalg.c: _tether._linalg_fill_builtin_region, upstream's `linalg.fill_builtin_region(op)`:
 * MLIR builds the body of a named linalg op (mlirLinalgFillBuiltinNamedOpRegion); on MLIR 22 also
 * `_tether._linalg`, upstream 22's isa_contraction_op, isa_convolution_op,
 * infer_contraction_dimensions(_from_maps), infer_convolution_dimensions, get_indexing_maps and
 * the ContractionDimensions and ConvolutionDimensions they return (the linalg ops they look at
 * are verified first: MLIR reads their indexing maps and regions without checking).
 *
 * MLIR checks nothing there: it casts the op to a linalg op (any other op is undefined
 * behaviour), indexes block arguments by the op's definition (too few operands read past them)
 * and reaches llvm_unreachable on element types its region builder does not handle (matmul of
 * index tensors, a float div_unsigned). So: the op must be one of the ops MLIR has a region builder
 * for (the table generated from MLIR's headers), with one empty region and the operand count its
 * region takes; and the call is made in a child first, once per operation name, operand types and
 * attributes (tether_probe). */
#include "dialects.h"

#include <mlir-c/Dialect/Linalg.h>
#include <string.h>

typedef struct {
  const char *name;
  int nargs; /* operands the region builder takes; 0: not known (not checked) */
} region_op;

#define TPY_LINALG_REGION_OP(name, nargs) {name, nargs},
static const region_op region_ops[] = {
#include "bindings/python/linalg_region_ops.h"
    {NULL, 0},
};
#undef TPY_LINALG_REGION_OP

static const region_op *find_region_op(MlirStringRef name) {
  for (const region_op *r = region_ops; r->name; r++)
    if (strlen(r->name) == name.length && !memcmp(r->name, name.data, name.length)) return r;
  return NULL;
}

static void fill_in_child(void *op) { mlirLinalgFillBuiltinNamedOpRegion(*(MlirOperation *)op); }

static void key_sep(tpy_strbuf *b) { tpy_strbuf_append(mlirStringRefCreate("\x1f", 1), b); }

/* What the region builder's behaviour depends on: the op, its operands' types, its attributes. */
static void make_key(tpy_strbuf *b, MlirOperation op, MlirStringRef name) {
  tpy_strbuf_append(mlirStringRefCreateFromCString("linalg.fill_builtin_region"), b);
  key_sep(b);
  tpy_strbuf_append(name, b);
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n; i++) {
    key_sep(b);
    mlirTypePrint(mlirValueGetType(mlirOperationGetOperand(op, i)), tpy_strbuf_append, b);
  }
  intptr_t na = mlirOperationGetNumAttributes(op);
  for (intptr_t i = 0; i < na; i++) {
    MlirNamedAttribute a = mlirOperationGetAttribute(op, i);
    key_sep(b);
    tpy_strbuf_append(mlirIdentifierStr(a.name), b);
    key_sep(b);
    mlirAttributePrint(a.attribute, tpy_strbuf_append, b);
  }
}

static PyObject *fill_builtin_region(PyObject *module, PyObject *arg) {
  (void)module;
  tether_op *h;
  MlirOperation op;
  if (!tpy_arg_op(arg, &h, &op)) return NULL;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  const region_op *r = find_region_op(name);
  if (!r || !mlirContextIsRegisteredOperation(mlirOperationGetContext(op), name))
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: '%.*s' is not a named linalg op whose region MLIR "
                        "builds (linalg.matmul, linalg.fill, linalg.transpose, ...)",
                        (int)name.length, name.data);
  if (mlirOperationGetNumRegions(op) != 1)
    return PyErr_Format(PyExc_ValueError, "fill_builtin_region: '%s' must have one region",
                        r->name);
  if (!mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0))))
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: the region of this '%s' already has a body", r->name);
  intptr_t n = mlirOperationGetNumOperands(op);
  if (r->nargs && n != r->nargs)
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: the region of '%s' takes %d operands (its inputs "
                        "and outputs), but this op has %zd",
                        r->name, r->nargs, (Py_ssize_t)n);
  if (n < 1)
    return PyErr_Format(PyExc_ValueError, "fill_builtin_region: this '%s' has no operands",
                        r->name);
  tpy_strbuf key = {0};
  make_key(&key, op, name);
  if (key.failed) {
    PyMem_RawFree(key.data);
    return PyErr_NoMemory();
  }
  int safe = tether_probe(key.data, key.len, fill_in_child, &op);
  PyMem_RawFree(key.data);
  if (safe == 0)
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: MLIR's region builder of '%s' crashes on these "
                        "operand types and attributes (an element type or function it does not "
                        "handle)",
                        r->name);
  mlirLinalgFillBuiltinNamedOpRegion(op);
  tether_arena_touch(tether_handle_arena(h));
  Py_RETURN_NONE;
}

static PyMethodDef functions[] = {
    {"_linalg_fill_builtin_region", fill_builtin_region, METH_O,
     TPY_SIGDOC("_linalg_fill_builtin_region(op: _OperationBase, /) -> None",
                "Builds the body of a named linalg op (MLIR's region builder), as upstream's "
                "linalg.fill_builtin_region.")},
    TPY_METHODS_END,
};

#if TETHER_MLIR_VERSION >= 22

/* ---- ContractionDimensions, ConvolutionDimensions ------------------------------------------- */

/* What an inference found: dense array attributes (DenseI32ArrayAttr, strides and dilations
 * DenseI64ArrayAttr), read through properties (the PyGetSetDef closure is the field's index). */
enum { MAX_DIMS = 8 };
typedef struct {
  PyObject_HEAD PyObject *f[MAX_DIMS];
} TpDims;

static int dims_traverse(TpDims *d, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(d));
  for (int i = 0; i < MAX_DIMS; i++) Py_VISIT(d->f[i]);
  return 0;
}

static int dims_clear(TpDims *d) {
  for (int i = 0; i < MAX_DIMS; i++) Py_CLEAR(d->f[i]);
  return 0;
}

static PyObject *dims_field(TpDims *d, void *i) {
  PyObject *f = d->f[(intptr_t)i];
  return Py_NewRef(f ? f : Py_None);
}

/* The object for n attributes of ctx; None when every attribute is null (no inference). */
static PyObject *dims_new(PyTypeObject *type, PyObject *ctx, const MlirAttribute *attrs, int n) {
  int any = 0;
  for (int i = 0; i < n; i++) any |= !mlirAttributeIsNull(attrs[i]);
  if (!any) Py_RETURN_NONE;
  TpDims *d = PyObject_GC_New(TpDims, type);
  if (!d) return NULL;
  for (int i = 0; i < MAX_DIMS; i++) d->f[i] = NULL;
  PyObject_GC_Track(d);
  for (int i = 0; i < n; i++)
    if (!(d->f[i] = tpy_wrap_attr(ctx, attrs[i]))) {
      Py_DECREF(d);
      return NULL;
    }
  return (PyObject *)d;
}

#define DIM(name, i, type)                                                                         \
  { name, (getter)dims_field, NULL, TPY_PROP(type " | None", NULL), (void *)(i) }
#define I32 "DenseI32ArrayAttr"
#define I64 "DenseI64ArrayAttr"

static PyGetSetDef contraction_getset[] = {
    DIM("batch", 0, I32), DIM("m", 1, I32), DIM("n", 2, I32), DIM("k", 3, I32), TPY_GETSET_END,
};

static PyGetSetDef convolution_getset[] = {
    DIM("batch", 0, I32),       DIM("output_image", 1, I32),  DIM("output_channel", 2, I32),
    DIM("filter_loop", 3, I32), DIM("input_channel", 4, I32), DIM("depth", 5, I32),
    DIM("strides", 6, I64),     DIM("dilations", 7, I64),     TPY_GETSET_END,
};

static PyType_Slot contraction_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, dims_traverse},
    {Py_tp_clear, dims_clear},
    {Py_tp_getset, contraction_getset},
    {Py_tp_doc, "The batch, m, n and k dimensions of a contraction (dense arrays)."},
    {0, NULL},
};

static PyType_Slot convolution_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, dims_traverse},
    {Py_tp_clear, dims_clear},
    {Py_tp_getset, convolution_getset},
    {Py_tp_doc, "The dimensions of a convolution, and its strides and dilations (dense arrays)."},
    {0, NULL},
};

static PyType_Spec contraction_spec = {
    "tether.dialects.linalg.ContractionDimensions", sizeof(TpDims), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, contraction_slots};

static PyType_Spec convolution_spec = {
    "tether.dialects.linalg.ConvolutionDimensions", sizeof(TpDims), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, convolution_slots};

/* ---- the functions --------------------------------------------------------------------------- */

/* The operation argument `op` of a function, checked; a linalg operation must verify (MLIR reads
 * its maps and region as the verifier guarantees them). ctx: its Context (new reference). */
static int linalg_op_arg(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         MlirOperation *op, PyObject **ctx) {
  PyObject *a[1];
  tether_op *h;
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 1) || !tpy_arg_op(a[0], &h, op)) return 0;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(*op));
  if (name.length > 7 && !memcmp(name.data, "linalg.", 7) && !tpy_require_verified(h)) return 0;
  *ctx = tpy_context_of_handle(h);
  return *ctx != NULL;
}

/* A function of _linalg, after its spec cname_sig (the signature text, the doc). */
#define LINALG_FN(cname, text, doc)                                                                \
  static tpy_sig cname##_sig = TPY_SIG(text, doc);                                                 \
  static PyObject *cname(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)

LINALG_FN(isa_contraction, "isa_contraction_op(op: _OperationBase) -> bool",
          "Whether op is a linalg contraction.") {
  (void)m;
  MlirOperation op;
  PyObject *ctx;
  if (!linalg_op_arg(&isa_contraction_sig, args, nargs, kwnames, &op, &ctx)) return NULL;
  Py_DECREF(ctx);
  return PyBool_FromLong(mlirLinalgIsAContractionOp(op));
}

LINALG_FN(isa_convolution, "isa_convolution_op(op: _OperationBase) -> bool",
          "Whether op is a linalg convolution.") {
  (void)m;
  MlirOperation op;
  PyObject *ctx;
  if (!linalg_op_arg(&isa_convolution_sig, args, nargs, kwnames, &op, &ctx)) return NULL;
  Py_DECREF(ctx);
  return PyBool_FromLong(mlirLinalgIsAConvolutionOp(op));
}

static PyObject *contraction_dims(PyObject *ctx, MlirLinalgContractionDimensions d) {
  MlirAttribute f[4] = {d.batch, d.m, d.n, d.k};
  return dims_new(tpy.ContractionDimensions, ctx, f, 4);
}

LINALG_FN(infer_contraction,
          "infer_contraction_dimensions(op: _OperationBase) -> ContractionDimensions | None",
          "The ContractionDimensions of a linalg contraction, or None.") {
  (void)m;
  MlirOperation op;
  PyObject *ctx;
  if (!linalg_op_arg(&infer_contraction_sig, args, nargs, kwnames, &op, &ctx)) return NULL;
  PyObject *r = contraction_dims(ctx, mlirLinalgInferContractionDimensions(op));
  Py_DECREF(ctx);
  return r;
}

/* infer_contraction_dimensions_from_maps(indexing_maps): None as well when the maps differ in
 * their number of dimensions (MLIR indexes one map's dimensions with another's). */
LINALG_FN(infer_contraction_from_maps,
          "infer_contraction_dimensions_from_maps(indexing_maps: Sequence[AffineMap]) "
          "-> ContractionDimensions | None",
          "The ContractionDimensions of three indexing maps (inputs, output), or None.") {
  (void)m;
  PyObject *a[1];
  if (!tpy_fastargs(&infer_contraction_from_maps_sig, args, nargs, kwnames, a, 1)) return NULL;
  PyObject *maps = tpy_arg_seq(a[0], "indexing_maps");
  if (!maps) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(maps);
  MlirAffineMap *raw = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *raw);
  PyObject *r = NULL, *ctx = NULL;
  if (!raw) {
    PyErr_NoMemory();
    goto done;
  }
  int same_dims = 1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyList_GET_ITEM(maps, i);
    if (!tpy_is(o, tpy.AffineMap)) {
      tpy_type_error("indexing_maps", "a sequence of AffineMap", o);
      goto done;
    }
    if (!ctx)
      ctx = TPY_CTX(o);
    else if (!tpy_same_context(ctx, TPY_CTX(o))) {
      PyErr_SetString(PyExc_ValueError, "indexing_maps: maps of different contexts");
      goto done;
    }
    raw[i] = (MlirAffineMap){TPY_PTR(o)};
    same_dims &= mlirAffineMapGetNumDims(raw[i]) == mlirAffineMapGetNumDims(raw[0]);
  }
  if (n == 0 || !same_dims)
    r = Py_NewRef(Py_None);
  else
    r = contraction_dims(ctx, mlirLinalgInferContractionDimensionsFromMaps(raw, (size_t)n));
done:
  PyMem_Free(raw);
  Py_DECREF(maps);
  return r;
}

LINALG_FN(infer_convolution,
          "infer_convolution_dimensions(op: _OperationBase) -> ConvolutionDimensions | None",
          "The ConvolutionDimensions of a linalg convolution, or None.") {
  (void)m;
  MlirOperation op;
  PyObject *ctx;
  if (!linalg_op_arg(&infer_convolution_sig, args, nargs, kwnames, &op, &ctx)) return NULL;
  MlirLinalgConvolutionDimensions d = mlirLinalgInferConvolutionDimensions(op);
  MlirAttribute f[8] = {d.batch,        d.outputImage, d.outputChannel, d.filterLoop,
                        d.inputChannel, d.depth,       d.strides,       d.dilations};
  PyObject *r = dims_new(tpy.ConvolutionDimensions, ctx, f, 8);
  Py_DECREF(ctx);
  return r;
}

LINALG_FN(get_indexing_maps, "get_indexing_maps(op: _OperationBase) -> ArrayAttr | None",
          "The indexing_maps ArrayAttr of a linalg op, or None.") {
  (void)m;
  MlirOperation op;
  PyObject *ctx;
  if (!linalg_op_arg(&get_indexing_maps_sig, args, nargs, kwnames, &op, &ctx)) return NULL;
  PyObject *r = tpy_wrap_attr(ctx, mlirLinalgGetIndexingMapsAttribute(op));
  Py_DECREF(ctx);
  return r;
}

static PyMethodDef linalg_functions[] = {
    {"isa_contraction_op", TPY_FASTFN(isa_contraction), TPY_FAST, TPY_DOC(isa_contraction_sig)},
    {"isa_convolution_op", TPY_FASTFN(isa_convolution), TPY_FAST, TPY_DOC(isa_convolution_sig)},
    {"infer_contraction_dimensions", TPY_FASTFN(infer_contraction), TPY_FAST,
     TPY_DOC(infer_contraction_sig)},
    {"infer_contraction_dimensions_from_maps", TPY_FASTFN(infer_contraction_from_maps), TPY_FAST,
     TPY_DOC(infer_contraction_from_maps_sig)},
    {"infer_convolution_dimensions", TPY_FASTFN(infer_convolution), TPY_FAST,
     TPY_DOC(infer_convolution_sig)},
    {"get_indexing_maps", TPY_FASTFN(get_indexing_maps), TPY_FAST, TPY_DOC(get_indexing_maps_sig)},
    TPY_METHODS_END,
};

static int init_linalg22(PyObject *m) {
  PyObject *sub = PyModule_New("_linalg");
  if (!sub) return -1;
  int bad = tpy_add_type(sub, &contraction_spec, NULL, &tpy.ContractionDimensions) < 0 ||
            tpy_add_type(sub, &convolution_spec, NULL, &tpy.ConvolutionDimensions) < 0 ||
            PyModule_AddFunctions(sub, linalg_functions) < 0 ||
            PyModule_AddObjectRef(m, "_linalg", sub) < 0;
  Py_DECREF(sub);
  return bad ? -1 : 0;
}
#endif

int tpy_init_linalg(PyObject *m) {
#if TETHER_MLIR_VERSION >= 22
  if (init_linalg22(m) < 0) return -1;
#endif
  return PyModule_AddFunctions(m, functions);
}
