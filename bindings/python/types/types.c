/* types.c: Type and every builtin type class of upstream mlir.ir (IntegerType, the float types,
 * ShapedType and its subclasses, ComplexType, TupleType, FunctionType, OpaqueType, NoneType).
 *
 * Invariant: types come out of MLIR as the class registered for their TypeID (register_type_caster
 * can add or replace casters); constructors that MLIR could refuse use the *GetChecked C API
 * under an error capture, so bad shapes or element types raise MLIRError instead of asserting.
 */
#include "types.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#define T(o) ((MlirType){TPY_PTR(o)})

PyObject *tpy_wrap_type(PyObject *ctx, MlirType t) {
  if (mlirTypeIsNull(t)) Py_RETURN_NONE;
  return tpy_wrap_cast(tpy.type_casters, tpy.Type, ctx, t.ptr, mlirTypeGetTypeID(t));
}

PyObject *tpy_wrap_type_a(tether_arena *a, MlirType t) {
  PyObject *ctx = tpy_context_of(a);
  if (!ctx) return NULL;
  PyObject *r = tpy_wrap_type(ctx, t);
  Py_DECREF(ctx);
  return r;
}

/* A checked constructor's result: MLIRError("Invalid type", diagnostics) when it is null. */
static PyObject *checked(tpy_errcap *cap, PyObject *ctx, MlirType t) {
  if (mlirTypeIsNull(t)) return tpy_errcap_raise(cap, "Invalid type");
  PyObject *e = tpy_errcap_end(cap);
  Py_XDECREF(e);
  return tpy_wrap_type(ctx, t);
}

/* Where a shaped type's constructor reports what MLIR refuses: get(..., loc=None) at the location
 * given or the current one; get_unchecked(..., context=None) (MLIR 22, `unchecked`) at the unknown
 * location of the context given or the current one (tether checks these too: MLIR would assert or
 * make an invalid type). The element type must belong to that context (ValueError). Begins the
 * error capture: 1, or 0 with the exception. */
static int loc_ctx_begin(PyObject *where, int unchecked, PyObject *elt, tpy_errcap *cap,
                         MlirLocation *l, PyObject **ctx) {
  if (unchecked) {
    *ctx = tpy_context_arg(where);
    if (!*ctx) return 0;
    *l = mlirLocationUnknownGet(tpy_ctx_raw(*ctx));
  } else {
    PyObject *lo = tpy_resolve_loc(where);
    if (!lo) return 0;
    *l = (MlirLocation){TPY_PTR(lo)};
    *ctx = TPY_CTX(lo);
  }
  MlirType t;
  if (!tpy_arg_type_in(elt, *ctx, &t)) return 0;
  tpy_errcap_begin(cap, (TpContext *)*ctx);
  return 1;
}

/* ---- Type ------------------------------------------------------------------------------------ */

static tpy_sig type_new_sig = TPY_SIG("Type(cast_from_type: Type)",
                                      "An MLIR type. Type(t) copies, IntegerType(t) & co. cast.");

static PyObject *type_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *other;
  if (!tpy_args(&type_new_sig, args, kw, &other, 1)) return NULL;
  if (!tpy_is(other, tpy.Type)) return tpy_type_error("cast_from_type", "a Type", other);
  return tpy_ctxobj_new(type, TPY_CTX(other), TPY_PTR(other));
}

static PyObject *type_str(PyObject *self) {
  tpy_strbuf b = {0};
  mlirTypePrint(T(self), tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *type_repr(PyObject *self) {
  PyObject *s = type_str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("Type(%U)", s);
  Py_DECREF(s);
  return r;
}

static tpy_sig type_parse_sig = TPY_SIG("parse(asm: str, context: Context | None = None) -> Type",
                                        "Parses a type; MLIRError on bad input.");

static PyObject *type_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  (void)cls;
  MlirStringRef s;
  TpContext *ctx;
  tpy_errcap cap;
  if (!tpy_parse_begin(&type_parse_sig, args, nargs, kwnames, &s, &ctx, &cap)) return NULL;
  MlirContext raw = tether_arena_context(ctx->arena);
  MlirType t = {NULL};
  if (tether_parse_check(raw, TETHER_PARSE_TYPE, s.data, s.length) == TETHER_OK)
    t = mlirTypeParseGet(raw, s);
  if (mlirTypeIsNull(t)) return tpy_errcap_raise(&cap, "Unable to parse type");
  tpy_errcap_close(&cap);
  return tpy_wrap_type((PyObject *)ctx, t);
}

static PyObject *type_typeid(PyObject *self, void *c) {
  (void)c;
  MlirTypeID id = mlirTypeGetTypeID(T(self));
  if (mlirTypeIDIsNull(id)) return PyErr_Format(PyExc_ValueError, "the type has no TypeID");
  return tpy_wrap_typeid(id);
}

static PyObject *type_maybe_downcast(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *r = tpy_wrap_type(TPY_CTX(self), T(self));
  /* As upstream: with no caster for its TypeID, an object of a class stays what it is. */
  if (r && Py_TYPE(r) == tpy.Type && Py_TYPE(self) != tpy.Type) Py_SETREF(r, Py_NewRef(self));
  return r;
}

static PyObject *type_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirTypeDump(T(self));
  Py_RETURN_NONE;
}

static PyObject *type_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.Type)) return tpy_wrap_type(TPY_CTX(owner), T(owner));
  void *p = tpy_capsule_pointer(cap, "mlir.ir.Type._CAPIPtr");
  if (!p) return NULL;
  tether_arena *a = tpy_arena_for_capsule(mlirTypeGetContext((MlirType){p}));
  if (!a) return NULL;
  return tpy_wrap_type_a(a, (MlirType){p});
}

static PyMethodDef type_methods[] = {
    {"parse", TPY_FASTFN(type_parse), TPY_FAST | METH_STATIC, TPY_DOC(type_parse_sig)},
    {"_CAPICreate", (PyCFunction)type_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> Type", NULL)},
    {"maybe_downcast", (PyCFunction)type_maybe_downcast, METH_NOARGS,
     TPY_SIGDOC("maybe_downcast() -> Type", "The type as the class registered for its TypeID.")},
    {"dump", (PyCFunction)type_dump, METH_NOARGS,
     TPY_SIGDOC("dump() -> None", "Prints the type to stderr.")},
    TPY_METHODS_END,
};

static PyGetSetDef type_getset[] = {
    {"context", tpy_ctxobj_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"typeid", type_typeid, NULL, TPY_PROP("TypeID", "The TypeID of the type's class."), NULL},
    {"_CAPIPtr", tpy_ctxobj_capsule, NULL, TPY_PROP("object", NULL), "mlir.ir.Type._CAPIPtr"},
    TPY_GETSET_END,
};

static PyType_Slot type_slots[] = {
    {Py_tp_new, type_new},
    {Py_tp_init, tpy_init_noop},
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_str, type_str},
    {Py_tp_repr, type_repr},
    {Py_tp_richcompare, tpy_ctxobj_richcompare},
    {Py_tp_hash, tpy_ctxobj_hash},
    {Py_tp_methods, type_methods},
    {Py_tp_getset, type_getset},
    {Py_tp_doc, TPY_DOC(type_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_type_spec = {"tether.ir.Type", sizeof(TpCtxObj), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, type_slots};

/* ---- helpers for the concrete classes -------------------------------------------------------- */

TPY_ISA(MlirType, mlirTypeIsAInteger)
TPY_ISA(MlirType, mlirTypeIsAIndex)
TPY_ISA(MlirType, mlirTypeIsAFloat)
TPY_ISA(MlirType, mlirTypeIsAF16)
TPY_ISA(MlirType, mlirTypeIsABF16)
TPY_ISA(MlirType, mlirTypeIsAF32)
TPY_ISA(MlirType, mlirTypeIsAF64)
TPY_ISA(MlirType, mlirTypeIsATF32)
TPY_ISA(MlirType, mlirTypeIsAFloat8E4M3FN)
TPY_ISA(MlirType, mlirTypeIsAFloat8E5M2)
TPY_ISA(MlirType, mlirTypeIsAFloat8E4M3)
TPY_ISA(MlirType, mlirTypeIsAFloat8E4M3FNUZ)
TPY_ISA(MlirType, mlirTypeIsAFloat8E4M3B11FNUZ)
TPY_ISA(MlirType, mlirTypeIsAFloat8E5M2FNUZ)
#if TETHER_MLIR_VERSION >= 22
TPY_ISA(MlirType, mlirTypeIsAFloat4E2M1FN)
TPY_ISA(MlirType, mlirTypeIsAFloat6E2M3FN)
TPY_ISA(MlirType, mlirTypeIsAFloat6E3M2FN)
TPY_ISA(MlirType, mlirTypeIsAFloat8E3M4)
TPY_ISA(MlirType, mlirTypeIsAFloat8E8M0FNU)
#endif
TPY_ISA(MlirType, mlirTypeIsANone)
TPY_ISA(MlirType, mlirTypeIsAComplex)
TPY_ISA(MlirType, mlirTypeIsAShaped)
TPY_ISA(MlirType, mlirTypeIsAVector)
TPY_ISA(MlirType, mlirTypeIsARankedTensor)
TPY_ISA(MlirType, mlirTypeIsAUnrankedTensor)
TPY_ISA(MlirType, mlirTypeIsAMemRef)
TPY_ISA(MlirType, mlirTypeIsAUnrankedMemRef)
TPY_ISA(MlirType, mlirTypeIsATuple)
TPY_ISA(MlirType, mlirTypeIsAFunction)
TPY_ISA(MlirType, mlirTypeIsAOpaque)

static tpy_sig simple_get_sig = TPY_SIG("get(context: Context | None = None) -> Self", "The type.");

/* cls.get(context=None) for types that need nothing but a context (def->data: the getter). */
static PyObject *simple_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  PyObject *a[1];
  if (!tpy_fastargs(&simple_get_sig, args, nargs, kwnames, a, 1)) return NULL;
  tpy_class_def *def = tpy_class_def_of((PyTypeObject *)cls);
  PyObject *ctx = tpy_context_arg(a[0]);
  if (!ctx || !def || !def->data) return NULL;
  MlirType (*get)(MlirContext) = (MlirType(*)(MlirContext))def->data;
  return tpy_wrap_type(ctx, get(tpy_ctx_raw(ctx)));
}

static PyMethodDef simple_methods[] = {
    {"get", TPY_FASTFN(simple_get), TPY_FAST | METH_CLASS, TPY_DOC(simple_get_sig)},
    TPY_METHODS_END,
};

/* ---- IntegerType ----------------------------------------------------------------------------- */

static PyObject *int_get(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         MlirType (*get)(MlirContext, unsigned)) {
  PyObject *a[2];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2)) return NULL;
  unsigned w;
  if (!tpy_arg_uint(a[0], "width", &w)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  if (w > 16777215u) /* IntegerType::kMaxWidth: MLIR asserts beyond it */
    return PyErr_Format(PyExc_ValueError, "integer width %u is larger than the maximum %u", w,
                        16777215u);
  /* An IntegerType, as upstream's constructor returns (no caster asked: upstream's returns its
   * own class whatever is registered for the TypeID). */
  return tpy_ctxobj_new(tpy.IntegerType, ctx, get(tpy_ctx_raw(ctx), w).ptr);
}

#define INT_GET(name, fn)                                                                          \
  static tpy_sig name##_sig =                                                                      \
      TPY_SIG(#name "(width: int, context: Context | None = None) -> IntegerType", NULL);          \
  static PyObject *name(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,                    \
                        PyObject *kwnames) {                                                       \
    (void)cls;                                                                                     \
    return int_get(&name##_sig, args, nargs, kwnames, fn);                                         \
  }
INT_GET(get_signless, mlirIntegerTypeGet)
INT_GET(get_signed, mlirIntegerTypeSignedGet)
INT_GET(get_unsigned, mlirIntegerTypeUnsignedGet)

#if TETHER_MLIR_VERSION >= 22
/* IntegerType, set at init: its enum IntegerType.Signedness (tether/ir.py defines it). */

static PyObject *signedness_enum(void) {
  PyObject *e = PyObject_GetAttrString((PyObject *)tpy.IntegerType, "Signedness");
  if (e && !PyType_Check(e)) {
    Py_DECREF(e);
    PyErr_SetString(PyExc_RuntimeError, "IntegerType.Signedness is not a class");
    return NULL;
  }
  return e;
}

static tpy_sig int_get_any_sig =
    TPY_SIG("get(width: int, signedness: IntegerType.Signedness = IntegerType.Signedness.SIGNLESS, "
            "context: Context | None = None) -> IntegerType",
            NULL);

/* IntegerType.get(width, signedness=Signedness.SIGNLESS, context=None) (MLIR 22). */
static PyObject *int_get_any(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&int_get_any_sig, args, nargs, kwnames, a, 3)) return NULL;
  long which = 0;
  if (a[1]) {
    PyObject *e = signedness_enum();
    if (!e) return NULL;
    int ok = PyObject_IsInstance(a[1], e);
    Py_DECREF(e);
    if (ok < 0) return NULL;
    if (!ok) return tpy_type_error("signedness", "an IntegerType.Signedness", a[1]);
    PyObject *v = PyObject_GetAttrString(a[1], "value");
    if (!v) return NULL;
    which = PyLong_Check(v) ? PyLong_AsLong(v) : -1;
    Py_DECREF(v);
    if (which < 0 || which > 2) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "unknown IntegerType.Signedness");
      return NULL;
    }
  }
  PyObject *rest[2] = {a[0], a[2] ? a[2] : Py_None};
  /* int_get reads the width and the context, given by position. */
  static tpy_sig rest_sig = TPY_SIG("get(width: int, context: Context | None = None)", NULL);
  return int_get(&rest_sig, rest, 2, NULL,
                 which == 0   ? mlirIntegerTypeGet
                 : which == 1 ? mlirIntegerTypeSignedGet
                              : mlirIntegerTypeUnsignedGet);
}

static PyObject *int_signedness(PyObject *self, void *c) {
  (void)c;
  PyObject *e = signedness_enum();
  if (!e) return NULL;
  long which = mlirIntegerTypeIsSignless(T(self)) ? 0 : mlirIntegerTypeIsSigned(T(self)) ? 1 : 2;
  PyObject *r = PyObject_CallFunction(e, "l", which);
  Py_DECREF(e);
  return r;
}
#endif

static PyObject *int_width(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(mlirIntegerTypeGetWidth(T(self)));
}
static PyObject *int_signless(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirIntegerTypeIsSignless(T(self)));
}
static PyObject *int_signed(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirIntegerTypeIsSigned(T(self)));
}
static PyObject *int_unsigned(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirIntegerTypeIsUnsigned(T(self)));
}

static PyMethodDef int_methods[] = {
    {"get_signless", TPY_FASTFN(get_signless), TPY_FAST | METH_STATIC, TPY_DOC(get_signless_sig)},
    {"get_signed", TPY_FASTFN(get_signed), TPY_FAST | METH_STATIC, TPY_DOC(get_signed_sig)},
    {"get_unsigned", TPY_FASTFN(get_unsigned), TPY_FAST | METH_STATIC, TPY_DOC(get_unsigned_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get", TPY_FASTFN(int_get_any), TPY_FAST | METH_STATIC, TPY_DOC(int_get_any_sig)},
#endif
    TPY_METHODS_END,
};

static PyGetSetDef int_getset[] = {
    {"width", int_width, NULL, TPY_PROP("int", "The bit width."), NULL},
    {"is_signless", int_signless, NULL, TPY_PROP("bool", NULL), NULL},
    {"is_signed", int_signed, NULL, TPY_PROP("bool", NULL), NULL},
    {"is_unsigned", int_unsigned, NULL, TPY_PROP("bool", NULL), NULL},
#if TETHER_MLIR_VERSION >= 22
    {"signedness", int_signedness, NULL,
     TPY_PROP("IntegerType.Signedness", "An IntegerType.Signedness."), NULL},
#endif
    TPY_GETSET_END,
};

/* ---- FloatType ------------------------------------------------------------------------------- */

static PyObject *float_width(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(mlirFloatTypeGetWidth(T(self)));
}

static PyGetSetDef float_getset[] = {
    {"width", float_width, NULL, TPY_PROP("int", "The bit width."), NULL},
    TPY_GETSET_END,
};

/* ---- ComplexType ----------------------------------------------------------------------------- */

static PyObject *complex_get(PyObject *cls, PyObject *arg) {
  (void)cls;
  MlirType e;
  PyObject *ctx;
  if (!tpy_arg_type(arg, &e, &ctx)) return NULL;
  if (!mlirTypeIsAInteger(e) && !mlirTypeIsAFloat(e)) {
    PyObject *r = PyObject_Str(arg); /* upstream prints the plain Type's repr: Type(index) */
    if (r)
      PyErr_Format(PyExc_ValueError,
                   "invalid 'Type(%U)' and expected floating point or integer type.", r);
    Py_XDECREF(r);
    return NULL;
  }
  return tpy_wrap_type(ctx, mlirComplexTypeGet(e));
}

static PyObject *complex_element(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirComplexTypeGetElementType(T(self)));
}

static PyMethodDef complex_methods[] = {
    {"get", (PyCFunction)complex_get, METH_O | METH_STATIC,
     TPY_SIGDOC("get(element_type: Type, /) -> ComplexType", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef complex_getset[] = {
    {"element_type", complex_element, NULL, TPY_PROP("Type", NULL), NULL},
    TPY_GETSET_END,
};

/* ---- ShapedType ------------------------------------------------------------------------------ */

static int require_rank(PyObject *self) {
  if (!mlirShapedTypeHasRank(T(self))) {
    PyErr_SetString(PyExc_ValueError, "calling this method requires that the type has a rank.");
    return 0;
  }
  return 1;
}

static int dim_index(PyObject *self, PyObject *o, intptr_t *dim) {
  if (!require_rank(self) || !tpy_arg_intptr(o, "dim", dim)) return 0;
  if (*dim < 0 || *dim >= mlirShapedTypeGetRank(T(self))) {
    PyErr_SetString(PyExc_ValueError, "invalid dimension index");
    return 0;
  }
  return 1;
}

static PyObject *shaped_element_type(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirShapedTypeGetElementType(T(self)));
}
static PyObject *shaped_has_rank(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirShapedTypeHasRank(T(self)));
}
static PyObject *shaped_rank(PyObject *self, void *c) {
  (void)c;
  if (!require_rank(self)) return NULL;
  return PyLong_FromSsize_t(mlirShapedTypeGetRank(T(self)));
}
static PyObject *shaped_has_static_shape(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirShapedTypeHasStaticShape(T(self)));
}
static PyObject *shaped_shape(PyObject *self, void *c) {
  (void)c;
  if (!require_rank(self)) return NULL;
  intptr_t r = mlirShapedTypeGetRank(T(self));
  PyObject *l = PyList_New(r);
  for (intptr_t i = 0; l && i < r; i++) {
    PyObject *d = PyLong_FromLongLong(mlirShapedTypeGetDimSize(T(self), i));
    if (!d)
      Py_CLEAR(l);
    else
      PyList_SET_ITEM(l, i, d);
  }
  return l;
}
static PyObject *shaped_is_dynamic_dim(PyObject *self, PyObject *o) {
  intptr_t d;
  if (!dim_index(self, o, &d)) return NULL;
  return PyBool_FromLong(mlirShapedTypeIsDynamicDim(T(self), d));
}
#if TETHER_MLIR_VERSION >= 22
static PyObject *shaped_is_static_dim(PyObject *self, PyObject *o) {
  intptr_t d;
  if (!dim_index(self, o, &d)) return NULL;
  return PyBool_FromLong(mlirShapedTypeIsStaticDim(T(self), d));
}
static PyObject *shaped_is_static_size(PyObject *cls, PyObject *o) {
  (void)cls;
  int64_t v;
  if (!tpy_arg_int64(o, "dim_size", &v)) return NULL;
  return PyBool_FromLong(mlirShapedTypeIsStaticSize(v));
}
static PyObject *shaped_is_static_stride(PyObject *self, PyObject *o) {
  int64_t v;
  if (!require_rank(self) || !tpy_arg_int64(o, "dim_size", &v)) return NULL;
  return PyBool_FromLong(mlirShapedTypeIsStaticStrideOrOffset(v));
}
#endif

static PyObject *shaped_get_dim_size(PyObject *self, PyObject *o) {
  intptr_t d;
  if (!dim_index(self, o, &d)) return NULL;
  return PyLong_FromLongLong(mlirShapedTypeGetDimSize(T(self), d));
}
static PyObject *shaped_is_dynamic_size(PyObject *cls, PyObject *o) {
  (void)cls;
  int64_t v;
  if (!tpy_arg_int64(o, "dim_size", &v)) return NULL;
  return PyBool_FromLong(mlirShapedTypeIsDynamicSize(v));
}
static PyObject *shaped_is_dynamic_stride(PyObject *cls, PyObject *o) {
  (void)cls;
  int64_t v;
  if (!tpy_arg_int64(o, "dim_size", &v)) return NULL;
  return PyBool_FromLong(mlirShapedTypeIsDynamicStrideOrOffset(v));
}
static PyObject *shaped_dynamic_size(PyObject *cls, PyObject *unused) {
  (void)cls;
  (void)unused;
  return PyLong_FromLongLong(mlirShapedTypeGetDynamicSize());
}
static PyObject *shaped_dynamic_stride(PyObject *cls, PyObject *unused) {
  (void)cls;
  (void)unused;
  return PyLong_FromLongLong(mlirShapedTypeGetDynamicStrideOrOffset());
}

static PyMethodDef shaped_methods[] = {
    {"is_dynamic_dim", (PyCFunction)shaped_is_dynamic_dim, METH_O,
     TPY_SIGDOC("is_dynamic_dim(dim: int, /) -> bool", NULL)},
    {"get_dim_size", (PyCFunction)shaped_get_dim_size, METH_O,
     TPY_SIGDOC("get_dim_size(dim: int, /) -> int", NULL)},
    {"is_dynamic_size", (PyCFunction)shaped_is_dynamic_size, METH_O | METH_STATIC,
     TPY_SIGDOC("is_dynamic_size(dim_size: int, /) -> bool", NULL)},
    {"is_dynamic_stride_or_offset", (PyCFunction)shaped_is_dynamic_stride, METH_O | METH_STATIC,
     TPY_SIGDOC("is_dynamic_stride_or_offset(value: int, /) -> bool", NULL)},
    {"get_dynamic_size", (PyCFunction)shaped_dynamic_size, METH_NOARGS | METH_STATIC,
     TPY_SIGDOC("get_dynamic_size() -> int", NULL)},
    {"get_dynamic_stride_or_offset", (PyCFunction)shaped_dynamic_stride, METH_NOARGS | METH_STATIC,
     TPY_SIGDOC("get_dynamic_stride_or_offset() -> int", NULL)},
#if TETHER_MLIR_VERSION >= 22
    {"is_static_dim", (PyCFunction)shaped_is_static_dim, METH_O,
     TPY_SIGDOC("is_static_dim(dim: int, /) -> bool", NULL)},
    {"is_static_size", (PyCFunction)shaped_is_static_size, METH_O | METH_STATIC,
     TPY_SIGDOC("is_static_size(dim_size: int, /) -> bool", NULL)},
    {"is_static_stride_or_offset", (PyCFunction)shaped_is_static_stride, METH_O,
     TPY_SIGDOC("is_static_stride_or_offset(value: int, /) -> bool", NULL)},
#endif
    TPY_METHODS_END,
};

static PyGetSetDef shaped_getset[] = {
    {"element_type", shaped_element_type, NULL, TPY_PROP("Type", NULL), NULL},
    {"has_rank", shaped_has_rank, NULL, TPY_PROP("bool", NULL), NULL},
    {"rank", shaped_rank, NULL, TPY_PROP("int", NULL), NULL},
    {"has_static_shape", shaped_has_static_shape, NULL, TPY_PROP("bool", NULL), NULL},
    {"shape", shaped_shape, NULL, TPY_PROP("list[int]", NULL), NULL},
    TPY_GETSET_END,
};

/* A shape from Python: a sequence of int (range-checked). */
static int shape_of(PyObject *seq, intptr_t *n, int64_t **out) {
  PyObject *f = tpy_seq_fast(seq, "shape must be a sequence of int");
  if (!f) return 0;
  Py_ssize_t k = PySequence_Fast_GET_SIZE(f);
  *out = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(int64_t));
  if (!*out) {
    Py_DECREF(f);
    PyErr_NoMemory();
    return 0;
  }
  for (Py_ssize_t i = 0; i < k; i++)
    if (!tpy_arg_int64(PySequence_Fast_GET_ITEM(f, i), "dimension", &(*out)[i])) {
      PyMem_Free(*out);
      Py_DECREF(f);
      return 0;
    }
  *n = k;
  Py_DECREF(f);
  return 1;
}

/* ---- VectorType ------------------------------------------------------------------------------ */

static PyObject *vector_make(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, int unchecked) {
  PyObject *a[5];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 5)) return NULL;
  MlirType elt;
  if (!tpy_arg_type(a[1], &elt, NULL)) return NULL;
  intptr_t rank;
  int64_t *shape;
  if (!shape_of(a[0], &rank, &shape)) return NULL;
  bool *scal = NULL;
  if (a[2] && a[2] != Py_None && a[3] && a[3] != Py_None) {
    PyMem_Free(shape);
    return PyErr_Format(PyExc_ValueError, "'scalable' and 'scalable_dims' kwargs are mutually "
                                          "exclusive.");
  }
  if ((a[2] && a[2] != Py_None) || (a[3] && a[3] != Py_None)) {
    scal = PyMem_Calloc((size_t)(rank ? rank : 1), sizeof(bool));
    if (!scal) {
      PyMem_Free(shape);
      return PyErr_NoMemory();
    }
    PyObject *f =
        tpy_seq_fast(a[2] && a[2] != Py_None ? a[2] : a[3], "scalable must be a sequence");
    int ok = f != NULL;
    if (ok && a[2] && a[2] != Py_None) {
      if (PySequence_Fast_GET_SIZE(f) != rank) {
        PyErr_SetString(PyExc_ValueError, "Expected len(scalable) == len(shape).");
        ok = 0;
      }
      for (Py_ssize_t i = 0; ok && i < rank; i++) {
        int b = PyObject_IsTrue(PySequence_Fast_GET_ITEM(f, i));
        if (b < 0) ok = 0;
        scal[i] = b == 1;
      }
    } else if (ok) {
      for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(f); i++) {
        intptr_t d;
        ok = tpy_arg_intptr(PySequence_Fast_GET_ITEM(f, i), "scalable dim", &d);
        if (ok && (d < 0 || d >= rank)) {
          PyErr_SetString(PyExc_ValueError, "Scalable dimension index out of bounds.");
          ok = 0;
        }
        if (ok) scal[d] = true;
      }
    }
    Py_XDECREF(f);
    if (!ok) {
      PyMem_Free(shape);
      PyMem_Free(scal);
      return NULL;
    }
  }
  tpy_errcap cap;
  MlirLocation l;
  PyObject *ctx;
  if (!loc_ctx_begin(a[4], unchecked, a[1], &cap, &l, &ctx)) {
    PyMem_Free(shape);
    PyMem_Free(scal);
    return NULL;
  }
  MlirType t = scal ? mlirVectorTypeGetScalableChecked(l, rank, shape, scal, elt)
                    : mlirVectorTypeGetChecked(l, rank, shape, elt);
  PyMem_Free(shape);
  PyMem_Free(scal);
  return checked(&cap, ctx, t);
}

static tpy_sig vector_get_sig = TPY_SIG(
    "get(shape: Sequence[int], element_type: Type, *, scalable: Sequence[bool] | None = None, "
    "scalable_dims: Sequence[int] | None = None, loc: Location | None = None) -> VectorType",
    NULL);

static PyObject *vector_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  (void)cls;
  return vector_make(&vector_get_sig, args, nargs, kwnames, 0);
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig vector_get_unchecked_sig =
    TPY_SIG("get_unchecked(shape: Sequence[int], element_type: Type, *, scalable: Sequence[bool] | "
            "None = None, scalable_dims: Sequence[int] | None = None, context: Context | None = "
            "None) -> VectorType",
            NULL);

static PyObject *vector_get_unchecked(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  (void)cls;
  return vector_make(&vector_get_unchecked_sig, args, nargs, kwnames, 1);
}
#endif

static PyObject *vector_scalable(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirVectorTypeIsScalable(T(self)));
}

static PyObject *vector_scalable_dims(PyObject *self, void *c) {
  (void)c;
  intptr_t r = mlirShapedTypeGetRank(T(self));
  PyObject *l = PyList_New(r);
  for (intptr_t i = 0; l && i < r; i++)
    PyList_SET_ITEM(l, i, PyBool_FromLong(mlirVectorTypeIsDimScalable(T(self), i)));
  return l;
}

static PyMethodDef vector_methods[] = {
    {"get", TPY_FASTFN(vector_get), TPY_FAST | METH_STATIC, TPY_DOC(vector_get_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get_unchecked", TPY_FASTFN(vector_get_unchecked), TPY_FAST | METH_STATIC,
     TPY_DOC(vector_get_unchecked_sig)},
#endif
    TPY_METHODS_END,
};

static PyGetSetDef vector_getset[] = {
    {"scalable", vector_scalable, NULL, TPY_PROP("bool", NULL), NULL},
    {"scalable_dims", vector_scalable_dims, NULL, TPY_PROP("list[bool]", NULL), NULL},
    TPY_GETSET_END,
};

/* ---- RankedTensorType / UnrankedTensorType --------------------------------------------------- */

static PyObject *tensor_make(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, int unchecked) {
  PyObject *a[4];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 4)) return NULL;
  MlirType elt;
  if (!tpy_arg_type(a[1], &elt, NULL)) return NULL;
  MlirAttribute enc = mlirAttributeGetNull();
  if (a[2] && a[2] != Py_None && !tpy_arg_attr(a[2], &enc, NULL)) return NULL;
  intptr_t rank;
  int64_t *shape;
  if (!shape_of(a[0], &rank, &shape)) return NULL;
  tpy_errcap cap;
  MlirLocation l;
  PyObject *ctx;
  if (!loc_ctx_begin(a[3], unchecked, a[1], &cap, &l, &ctx)) {
    PyMem_Free(shape);
    return NULL;
  }
  if (!mlirAttributeIsNull(enc) && !tpy_arg_attr_in(a[2], ctx, &enc)) {
    tpy_errcap_close(&cap);
    PyMem_Free(shape);
    return NULL;
  }
  MlirType t = mlirRankedTensorTypeGetChecked(l, rank, shape, elt, enc);
  PyMem_Free(shape);
  return checked(&cap, ctx, t);
}

static tpy_sig tensor_get_sig =
    TPY_SIG("get(shape: Sequence[int], element_type: Type, encoding: Attribute | None = None, *, "
            "loc: Location | None = None) -> RankedTensorType",
            NULL);

static PyObject *tensor_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  (void)cls;
  return tensor_make(&tensor_get_sig, args, nargs, kwnames, 0);
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig tensor_get_unchecked_sig =
    TPY_SIG("get_unchecked(shape: Sequence[int], element_type: Type, encoding: Attribute | None = "
            "None, context: Context | None = None) -> RankedTensorType",
            NULL);

static PyObject *tensor_get_unchecked(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  (void)cls;
  return tensor_make(&tensor_get_unchecked_sig, args, nargs, kwnames, 1);
}
#endif

static PyObject *tensor_encoding(PyObject *self, void *c) {
  (void)c;
  MlirAttribute e = mlirRankedTensorTypeGetEncoding(T(self));
  return tpy_wrap_attr(TPY_CTX(self), e);
}

static PyMethodDef tensor_methods[] = {
    {"get", TPY_FASTFN(tensor_get), TPY_FAST | METH_STATIC, TPY_DOC(tensor_get_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get_unchecked", TPY_FASTFN(tensor_get_unchecked), TPY_FAST | METH_STATIC,
     TPY_DOC(tensor_get_unchecked_sig)},
#endif
    TPY_METHODS_END,
};

static PyGetSetDef tensor_getset[] = {
    {"encoding", tensor_encoding, NULL, TPY_PROP("Attribute | None", NULL), NULL},
    TPY_GETSET_END,
};

static PyObject *unranked_tensor_make(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames, int unchecked) {
  PyObject *a[2];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirType elt;
  if (!tpy_arg_type(a[0], &elt, NULL)) return NULL;
  tpy_errcap cap;
  MlirLocation l;
  PyObject *ctx;
  if (!loc_ctx_begin(a[1], unchecked, a[0], &cap, &l, &ctx)) return NULL;
  return checked(&cap, ctx, mlirUnrankedTensorTypeGetChecked(l, elt));
}

static tpy_sig unranked_tensor_get_sig =
    TPY_SIG("get(element_type: Type, loc: Location | None = None) -> UnrankedTensorType", NULL);

static PyObject *unranked_tensor_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  (void)cls;
  return unranked_tensor_make(&unranked_tensor_get_sig, args, nargs, kwnames, 0);
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig unranked_tensor_get_unchecked_sig = TPY_SIG(
    "get_unchecked(element_type: Type, context: Context | None = None) -> UnrankedTensorType",
    NULL);

static PyObject *unranked_tensor_get_unchecked(PyObject *cls, PyObject *const *args,
                                               Py_ssize_t nargs, PyObject *kwnames) {
  (void)cls;
  return unranked_tensor_make(&unranked_tensor_get_unchecked_sig, args, nargs, kwnames, 1);
}
#endif

static PyMethodDef unranked_tensor_methods[] = {
    {"get", TPY_FASTFN(unranked_tensor_get), TPY_FAST | METH_STATIC,
     TPY_DOC(unranked_tensor_get_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get_unchecked", TPY_FASTFN(unranked_tensor_get_unchecked), TPY_FAST | METH_STATIC,
     TPY_DOC(unranked_tensor_get_unchecked_sig)},
#endif
    TPY_METHODS_END,
};

/* ---- MemRefType / UnrankedMemRefType --------------------------------------------------------- */

static PyObject *memref_make(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames, int unchecked) {
  PyObject *a[5];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 5)) return NULL;
  MlirType elt;
  if (!tpy_arg_type(a[1], &elt, NULL)) return NULL;
  MlirAttribute layout = mlirAttributeGetNull(), space = mlirAttributeGetNull();
  if (a[2] && a[2] != Py_None && !tpy_arg_attr(a[2], &layout, NULL)) return NULL;
  if (a[3] && a[3] != Py_None && !tpy_arg_attr(a[3], &space, NULL)) return NULL;
  intptr_t rank;
  int64_t *shape;
  if (!shape_of(a[0], &rank, &shape)) return NULL;
  tpy_errcap cap;
  MlirLocation l;
  PyObject *ctx;
  if (!loc_ctx_begin(a[4], unchecked, a[1], &cap, &l, &ctx)) {
    PyMem_Free(shape);
    return NULL;
  }
  if ((!mlirAttributeIsNull(layout) && !tpy_arg_attr_in(a[2], ctx, &layout)) ||
      (!mlirAttributeIsNull(space) && !tpy_arg_attr_in(a[3], ctx, &space))) {
    tpy_errcap_close(&cap);
    PyMem_Free(shape);
    return NULL;
  }
  if (!mlirAttributeIsNull(layout) && !tether_attr_is_memref_layout(layout)) {
    /* MLIR casts the layout to its layout interface unchecked, and crashes. */
    tpy_errcap_close(&cap);
    PyMem_Free(shape);
    PyObject *s = PyObject_Str(a[2]);
    if (s)
      PyErr_Format(PyExc_ValueError,
                   "the layout of a MemRefType must be a layout attribute (an AffineMapAttr, a "
                   "StridedLayoutAttr or a dialect's memref layout), not %U",
                   s);
    Py_XDECREF(s);
    return NULL;
  }
  MlirType t = mlirMemRefTypeGetChecked(l, elt, rank, shape, layout, space);
  PyMem_Free(shape);
  return checked(&cap, ctx, t);
}

static tpy_sig memref_get_sig =
    TPY_SIG("get(shape: Sequence[int], element_type: Type, layout: Attribute | None = None, "
            "memory_space: Attribute | None = None, *, loc: Location | None = None) -> MemRefType",
            NULL);

static PyObject *memref_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  (void)cls;
  return memref_make(&memref_get_sig, args, nargs, kwnames, 0);
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig memref_get_unchecked_sig = TPY_SIG(
    "get_unchecked(shape: Sequence[int], element_type: Type, layout: Attribute | None = None, "
    "memory_space: Attribute | None = None, context: Context | None = None) -> MemRefType",
    NULL);

static PyObject *memref_get_unchecked(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  (void)cls;
  return memref_make(&memref_get_unchecked_sig, args, nargs, kwnames, 1);
}
#endif

static PyObject *memref_layout(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_attr(TPY_CTX(self), mlirMemRefTypeGetLayout(T(self)));
}

static PyObject *memref_affine_map(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_affine_map(TPY_CTX(self), mlirMemRefTypeGetAffineMap(T(self)));
}

static PyObject *memref_memory_space(PyObject *self, void *c) {
  (void)c;
  MlirAttribute a = mlirTypeIsAMemRef(T(self)) ? mlirMemRefTypeGetMemorySpace(T(self))
                                               : mlirUnrankedMemrefGetMemorySpace(T(self));
  return tpy_wrap_attr(TPY_CTX(self), a);
}

static PyObject *memref_strides_and_offset(PyObject *self, PyObject *unused) {
  (void)unused;
  intptr_t r = mlirShapedTypeGetRank(T(self));
  int64_t *strides = PyMem_Malloc((size_t)(r ? r : 1) * sizeof(int64_t));
  if (!strides) return PyErr_NoMemory();
  int64_t offset;
  if (mlirLogicalResultIsFailure(mlirMemRefTypeGetStridesAndOffset(T(self), strides, &offset))) {
    PyMem_Free(strides);
    return PyErr_Format(PyExc_ValueError, "Failed to extract strides and offset from memref.");
  }
  PyObject *l = PyList_New(r);
  for (intptr_t i = 0; l && i < r; i++) PyList_SET_ITEM(l, i, PyLong_FromLongLong(strides[i]));
  PyMem_Free(strides);
  if (!l) return NULL;
  return Py_BuildValue("(NL)", l, (long long)offset);
}

static PyMethodDef memref_methods[] = {
    {"get", TPY_FASTFN(memref_get), TPY_FAST | METH_STATIC, TPY_DOC(memref_get_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get_unchecked", TPY_FASTFN(memref_get_unchecked), TPY_FAST | METH_STATIC,
     TPY_DOC(memref_get_unchecked_sig)},
#endif
    {"get_strides_and_offset", (PyCFunction)memref_strides_and_offset, METH_NOARGS,
     TPY_SIGDOC("get_strides_and_offset() -> tuple[list[int], int]", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef memref_getset[] = {
    {"layout", memref_layout, NULL, TPY_PROP("Attribute", NULL), NULL},
    {"affine_map", memref_affine_map, NULL, TPY_PROP("AffineMap", NULL), NULL},
    {"memory_space", memref_memory_space, NULL, TPY_PROP("Attribute | None", NULL), NULL},
    TPY_GETSET_END,
};

static PyObject *unranked_memref_make(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames, int unchecked) {
  PyObject *a[3];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 3)) return NULL;
  MlirType elt;
  if (!tpy_arg_type(a[0], &elt, NULL)) return NULL;
  MlirAttribute space = mlirAttributeGetNull();
  if (a[1] != Py_None && !tpy_arg_attr(a[1], &space, NULL)) return NULL;
  tpy_errcap cap;
  MlirLocation l;
  PyObject *ctx;
  if (!loc_ctx_begin(a[2], unchecked, a[0], &cap, &l, &ctx)) return NULL;
  if (!mlirAttributeIsNull(space) && !tpy_arg_attr_in(a[1], ctx, &space)) {
    tpy_errcap_close(&cap);
    return NULL;
  }
  return checked(&cap, ctx, mlirUnrankedMemRefTypeGetChecked(l, elt, space));
}

static tpy_sig unranked_memref_get_sig =
    TPY_SIG("get(element_type: Type, memory_space: Attribute | None, *, loc: Location | None = "
            "None) -> UnrankedMemRefType",
            NULL);

static PyObject *unranked_memref_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  (void)cls;
  return unranked_memref_make(&unranked_memref_get_sig, args, nargs, kwnames, 0);
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig unranked_memref_get_unchecked_sig =
    TPY_SIG("get_unchecked(element_type: Type, memory_space: Attribute | None, context: Context | "
            "None = None) -> UnrankedMemRefType",
            NULL);

static PyObject *unranked_memref_get_unchecked(PyObject *cls, PyObject *const *args,
                                               Py_ssize_t nargs, PyObject *kwnames) {
  (void)cls;
  return unranked_memref_make(&unranked_memref_get_unchecked_sig, args, nargs, kwnames, 1);
}
#endif

static PyMethodDef unranked_memref_methods[] = {
    {"get", TPY_FASTFN(unranked_memref_get), TPY_FAST | METH_STATIC,
     TPY_DOC(unranked_memref_get_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get_unchecked", TPY_FASTFN(unranked_memref_get_unchecked), TPY_FAST | METH_STATIC,
     TPY_DOC(unranked_memref_get_unchecked_sig)},
#endif
    TPY_METHODS_END,
};

static PyGetSetDef unranked_memref_getset[] = {
    {"memory_space", memref_memory_space, NULL, TPY_PROP("Attribute | None", NULL), NULL},
    TPY_GETSET_END,
};

/* ---- TupleType ------------------------------------------------------------------------------- */

static tpy_sig tuple_get_sig = TPY_SIG(
    "get_tuple(elements: Sequence[Type], context: Context | None = None) -> TupleType", NULL);

static PyObject *tuple_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&tuple_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  intptr_t n;
  MlirType *ts;
  if (!tpy_seq_types(a[0], ctx, &n, &ts)) return NULL;
  MlirType t = mlirTupleTypeGet(tpy_ctx_raw(ctx), n, ts);
  PyMem_Free(ts);
  return tpy_wrap_type(ctx, t);
}

static PyObject *tuple_get_type(PyObject *self, PyObject *o) {
  intptr_t i;
  if (!tpy_arg_intptr(o, "pos", &i)) return NULL;
  intptr_t n = mlirTupleTypeGetNumTypes(T(self));
  if (i < 0 || i >= n) return PyErr_Format(PyExc_IndexError, "tuple type index out of range");
  return tpy_wrap_type(TPY_CTX(self), mlirTupleTypeGetType(T(self), i));
}

static PyObject *tuple_num_types(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromSsize_t(mlirTupleTypeGetNumTypes(T(self)));
}

static PyMethodDef tuple_methods[] = {
    {"get_tuple", TPY_FASTFN(tuple_get), TPY_FAST | METH_STATIC, TPY_DOC(tuple_get_sig)},
    {"get_type", (PyCFunction)tuple_get_type, METH_O,
     TPY_SIGDOC("get_type(pos: int, /) -> Type", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef tuple_getset[] = {
    {"num_types", tuple_num_types, NULL, TPY_PROP("int", NULL), NULL},
    TPY_GETSET_END,
};

/* ---- FunctionType ---------------------------------------------------------------------------- */

static tpy_sig function_get_sig = TPY_SIG("get(inputs: Sequence[Type], results: Sequence[Type], "
                                          "context: Context | None = None) -> FunctionType",
                                          NULL);

static PyObject *function_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&function_get_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *ctx = tpy_context_arg(a[2]);
  if (!ctx) return NULL;
  intptr_t ni, nr;
  MlirType *ti, *tr;
  if (!tpy_seq_types(a[0], ctx, &ni, &ti)) return NULL;
  if (!tpy_seq_types(a[1], ctx, &nr, &tr)) {
    PyMem_Free(ti);
    return NULL;
  }
  MlirType t = mlirFunctionTypeGet(tpy_ctx_raw(ctx), ni, ti, nr, tr);
  PyMem_Free(ti);
  PyMem_Free(tr);
  return tpy_wrap_type(ctx, t);
}

static PyObject *function_types(PyObject *self, int inputs) {
  MlirType t = T(self);
  intptr_t n = inputs ? mlirFunctionTypeGetNumInputs(t) : mlirFunctionTypeGetNumResults(t);
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++) {
    PyObject *e = tpy_wrap_type(TPY_CTX(self), inputs ? mlirFunctionTypeGetInput(t, i)
                                                      : mlirFunctionTypeGetResult(t, i));
    if (!e)
      Py_CLEAR(l);
    else
      PyList_SET_ITEM(l, i, e);
  }
  return l;
}

static PyObject *function_inputs(PyObject *self, void *c) {
  (void)c;
  return function_types(self, 1);
}
static PyObject *function_results(PyObject *self, void *c) {
  (void)c;
  return function_types(self, 0);
}

static PyMethodDef function_methods[] = {
    {"get", TPY_FASTFN(function_get), TPY_FAST | METH_STATIC, TPY_DOC(function_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef function_getset[] = {
    {"inputs", function_inputs, NULL, TPY_PROP("list[Type]", NULL), NULL},
    {"results", function_results, NULL, TPY_PROP("list[Type]", NULL), NULL},
    TPY_GETSET_END,
};

/* ---- OpaqueType ------------------------------------------------------------------------------ */

static tpy_sig opaque_get_sig = TPY_SIG(
    "get(dialect_namespace: str, buffer: str, context: Context | None = None) -> OpaqueType", NULL);

static PyObject *opaque_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&opaque_get_sig, args, nargs, kwnames, a, 3)) return NULL;
  MlirStringRef ns, data;
  if (!tpy_arg_str(a[0], "dialect_namespace", &ns) || !tpy_arg_str(a[1], "buffer", &data))
    return NULL;
  PyObject *ctx = tpy_context_arg(a[2]);
  if (!ctx) return NULL;
  return tpy_wrap_type(ctx, mlirOpaqueTypeGet(tpy_ctx_raw(ctx), ns, data));
}

static PyObject *opaque_namespace(PyObject *self, void *c) {
  (void)c;
  return tpy_str_from_ref(mlirOpaqueTypeGetDialectNamespace(T(self)));
}
static PyObject *opaque_data(PyObject *self, void *c) {
  (void)c;
  return tpy_str_from_ref(mlirOpaqueTypeGetData(T(self)));
}

static PyMethodDef opaque_methods[] = {
    {"get", TPY_FASTFN(opaque_get), TPY_FAST | METH_STATIC, TPY_DOC(opaque_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef opaque_getset[] = {
    {"dialect_namespace", opaque_namespace, NULL, TPY_PROP("str", NULL), NULL},
    {"data", opaque_data, NULL, TPY_PROP("str", NULL), NULL},
    TPY_GETSET_END,
};

/* ---- the table ------------------------------------------------------------------------------- */

#define SIMPLE(Name, isa, tid, getter)                                                             \
  { Name, "FloatType", isa, tid, simple_methods, NULL, NULL, NULL, (void *)getter, NULL }

static tpy_class_def type_defs[] = {
    {"IntegerType", NULL, isa_mlirTypeIsAInteger, mlirIntegerTypeGetTypeID, int_methods, int_getset,
     NULL, "An integer type (signless, signed or unsigned).", NULL, NULL},
    {"IndexType", NULL, isa_mlirTypeIsAIndex, mlirIndexTypeGetTypeID, simple_methods, NULL, NULL,
     "The index type.", (void *)mlirIndexTypeGet, NULL},
    {"FloatType", NULL, isa_mlirTypeIsAFloat, NULL, NULL, float_getset, NULL,
     "Base class of the floating-point types.", NULL, NULL},
    SIMPLE("F16Type", isa_mlirTypeIsAF16, mlirFloat16TypeGetTypeID, mlirF16TypeGet),
    SIMPLE("BF16Type", isa_mlirTypeIsABF16, mlirBFloat16TypeGetTypeID, mlirBF16TypeGet),
    SIMPLE("F32Type", isa_mlirTypeIsAF32, mlirFloat32TypeGetTypeID, mlirF32TypeGet),
    SIMPLE("F64Type", isa_mlirTypeIsAF64, mlirFloat64TypeGetTypeID, mlirF64TypeGet),
    SIMPLE("FloatTF32Type", isa_mlirTypeIsATF32, mlirFloatTF32TypeGetTypeID, mlirTF32TypeGet),
    SIMPLE("Float8E4M3FNType", isa_mlirTypeIsAFloat8E4M3FN, mlirFloat8E4M3FNTypeGetTypeID,
           mlirFloat8E4M3FNTypeGet),
    SIMPLE("Float8E5M2Type", isa_mlirTypeIsAFloat8E5M2, mlirFloat8E5M2TypeGetTypeID,
           mlirFloat8E5M2TypeGet),
    SIMPLE("Float8E4M3Type", isa_mlirTypeIsAFloat8E4M3, mlirFloat8E4M3TypeGetTypeID,
           mlirFloat8E4M3TypeGet),
    SIMPLE("Float8E4M3FNUZType", isa_mlirTypeIsAFloat8E4M3FNUZ, mlirFloat8E4M3FNUZTypeGetTypeID,
           mlirFloat8E4M3FNUZTypeGet),
    SIMPLE("Float8E4M3B11FNUZType", isa_mlirTypeIsAFloat8E4M3B11FNUZ,
           mlirFloat8E4M3B11FNUZTypeGetTypeID, mlirFloat8E4M3B11FNUZTypeGet),
    SIMPLE("Float8E5M2FNUZType", isa_mlirTypeIsAFloat8E5M2FNUZ, mlirFloat8E5M2FNUZTypeGetTypeID,
           mlirFloat8E5M2FNUZTypeGet),
#if TETHER_MLIR_VERSION >= 22
    SIMPLE("Float4E2M1FNType", isa_mlirTypeIsAFloat4E2M1FN, mlirFloat4E2M1FNTypeGetTypeID,
           mlirFloat4E2M1FNTypeGet),
    SIMPLE("Float6E2M3FNType", isa_mlirTypeIsAFloat6E2M3FN, mlirFloat6E2M3FNTypeGetTypeID,
           mlirFloat6E2M3FNTypeGet),
    SIMPLE("Float6E3M2FNType", isa_mlirTypeIsAFloat6E3M2FN, mlirFloat6E3M2FNTypeGetTypeID,
           mlirFloat6E3M2FNTypeGet),
    SIMPLE("Float8E3M4Type", isa_mlirTypeIsAFloat8E3M4, mlirFloat8E3M4TypeGetTypeID,
           mlirFloat8E3M4TypeGet),
    SIMPLE("Float8E8M0FNUType", isa_mlirTypeIsAFloat8E8M0FNU, mlirFloat8E8M0FNUTypeGetTypeID,
           mlirFloat8E8M0FNUTypeGet),
#endif
    {"NoneType", NULL, isa_mlirTypeIsANone, mlirNoneTypeGetTypeID, simple_methods, NULL, NULL,
     "The none type.", (void *)mlirNoneTypeGet, NULL},
    {"ComplexType", NULL, isa_mlirTypeIsAComplex, mlirComplexTypeGetTypeID, complex_methods,
     complex_getset, NULL, "complex<element_type>.", NULL, NULL},
    {"ShapedType", NULL, isa_mlirTypeIsAShaped, NULL, shaped_methods, shaped_getset, NULL,
     "Base class of tensor, memref and vector types.", NULL, NULL},
    {"VectorType", "ShapedType", isa_mlirTypeIsAVector, mlirVectorTypeGetTypeID, vector_methods,
     vector_getset, NULL, NULL, NULL, NULL},
    {"RankedTensorType", "ShapedType", isa_mlirTypeIsARankedTensor, mlirRankedTensorTypeGetTypeID,
     tensor_methods, tensor_getset, NULL, NULL, NULL, NULL},
    {"UnrankedTensorType", "ShapedType", isa_mlirTypeIsAUnrankedTensor,
     mlirUnrankedTensorTypeGetTypeID, unranked_tensor_methods, NULL, NULL, NULL, NULL, NULL},
    {"MemRefType", "ShapedType", isa_mlirTypeIsAMemRef, mlirMemRefTypeGetTypeID, memref_methods,
     memref_getset, NULL, NULL, NULL, NULL},
    {"UnrankedMemRefType", "ShapedType", isa_mlirTypeIsAUnrankedMemRef,
     mlirUnrankedMemRefTypeGetTypeID, unranked_memref_methods, unranked_memref_getset, NULL, NULL,
     NULL, NULL},
    {"TupleType", NULL, isa_mlirTypeIsATuple, mlirTupleTypeGetTypeID, tuple_methods, tuple_getset,
     NULL, NULL, NULL, NULL},
    {"FunctionType", NULL, isa_mlirTypeIsAFunction, mlirFunctionTypeGetTypeID, function_methods,
     function_getset, NULL, NULL, NULL, NULL},
    {"OpaqueType", NULL, isa_mlirTypeIsAOpaque, mlirOpaqueTypeGetTypeID, opaque_methods,
     opaque_getset, NULL, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#if TETHER_MLIR_VERSION >= 22
/* Upstream 22's `type_name` of each class ("builtin.integer"). */
static const tpy_mlir_name type_names[] = {
    {"IntegerType", mlirIntegerTypeGetName},
    {"IndexType", mlirIndexTypeGetName},
    {"F16Type", mlirF16TypeGetName},
    {"BF16Type", mlirBF16TypeGetName},
    {"F32Type", mlirF32TypeGetName},
    {"F64Type", mlirF64TypeGetName},
    {"FloatTF32Type", mlirTF32TypeGetName},
    {"Float8E4M3FNType", mlirFloat8E4M3FNTypeGetName},
    {"Float8E5M2Type", mlirFloat8E5M2TypeGetName},
    {"Float8E4M3Type", mlirFloat8E4M3TypeGetName},
    {"Float8E4M3FNUZType", mlirFloat8E4M3FNUZTypeGetName},
    {"Float8E4M3B11FNUZType", mlirFloat8E4M3B11FNUZTypeGetName},
    {"Float8E5M2FNUZType", mlirFloat8E5M2FNUZTypeGetName},
    {"Float4E2M1FNType", mlirFloat4E2M1FNTypeGetName},
    {"Float6E2M3FNType", mlirFloat6E2M3FNTypeGetName},
    {"Float6E3M2FNType", mlirFloat6E3M2FNTypeGetName},
    {"Float8E3M4Type", mlirFloat8E3M4TypeGetName},
    {"Float8E8M0FNUType", mlirFloat8E8M0FNUTypeGetName},
    {"NoneType", mlirNoneTypeGetName},
    {"ComplexType", mlirComplexTypeGetName},
    {"VectorType", mlirVectorTypeGetName},
    {"RankedTensorType", mlirRankedTensorTypeGetName},
    {"UnrankedTensorType", mlirUnrankedTensorTypeGetName},
    {"MemRefType", mlirMemRefTypeGetName},
    {"UnrankedMemRefType", mlirUnrankedMemRefTypeGetName},
    {"TupleType", mlirTupleTypeGetName},
    {"FunctionType", mlirFunctionTypeGetName},
    {"OpaqueType", mlirOpaqueTypeGetName},
    {NULL, NULL},
};
#endif

int tpy_init_types(PyObject *m) {
  if (tpy_add_type(m, &tpy_type_spec, NULL, &tpy.Type) < 0 ||
      tpy_define_classes(m, tpy.Type, type_defs, tpy.type_casters) < 0)
    return -1;
  tpy.IntegerType = type_defs[0].cls;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_set_mlir_names(type_defs, "type_name", type_names) < 0) return -1;
#endif
  return 0;
}
