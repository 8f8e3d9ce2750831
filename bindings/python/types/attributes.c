/* attributes.c: Attribute, NamedAttribute and the builtin attribute classes of upstream mlir.ir
 * (IntegerAttr, FloatAttr, BoolAttr, StringAttr, TypeAttr, UnitAttr, ArrayAttr, DictAttr, symbol
 * references, OpaqueAttr, StridedLayoutAttr). The dense element and dense array families are in
 * dense.c, AffineMapAttr in affine_map.c.
 *
 * Invariant: attributes come out of MLIR as the class registered for their TypeID; every value
 * from Python is range-checked before it reaches MLIR, and every attribute combined into another
 * belongs to the same context.
 */
#include "types.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#define A(o) ((MlirAttribute){TPY_PTR(o)})

PyObject *tpy_wrap_attr(PyObject *ctx, MlirAttribute a) {
  if (mlirAttributeIsNull(a)) Py_RETURN_NONE;
  return tpy_wrap_cast(tpy.attr_casters, tpy.Attribute, ctx, a.ptr, mlirAttributeGetTypeID(a));
}

PyObject *tpy_wrap_attr_a(tether_arena *a, MlirAttribute at) {
  PyObject *ctx = tpy_context_of(a);
  if (!ctx) return NULL;
  PyObject *r = tpy_wrap_attr(ctx, at);
  Py_DECREF(ctx);
  return r;
}

/* ---- NamedAttribute -------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD PyObject *name; /* str */
  PyObject *attr;               /* Attribute */
} TpNamedAttr;

static PyObject *named_attr_new(PyObject *name, PyObject *attr) {
  TpNamedAttr *self = PyObject_GC_New(TpNamedAttr, tpy.NamedAttribute);
  if (!self) return NULL;
  self->name = Py_NewRef(name);
  self->attr = Py_NewRef(attr);
  PyObject_GC_Track(self);
  return (PyObject *)self;
}

/* A NamedAttribute for an MLIR one (new reference). */
PyObject *tpy_wrap_named_attr(PyObject *ctx, MlirNamedAttribute na) {
  PyObject *n = tpy_str_from_ref(mlirIdentifierStr(na.name));
  PyObject *a = n ? tpy_wrap_attr(ctx, na.attribute) : NULL;
  PyObject *r = a ? named_attr_new(n, a) : NULL;
  Py_XDECREF(n);
  Py_XDECREF(a);
  return r;
}

static int named_traverse(TpNamedAttr *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->name);
  Py_VISIT(self->attr);
  return 0;
}

static int named_clear(TpNamedAttr *self) {
  Py_CLEAR(self->name);
  Py_CLEAR(self->attr);
  return 0;
}

static PyObject *named_repr(TpNamedAttr *self) {
  return PyUnicode_FromFormat("NamedAttribute(%U=%S)", self->name, self->attr);
}

static PyObject *named_name(TpNamedAttr *self, void *c) {
  (void)c;
  return Py_NewRef(self->name);
}

static PyObject *named_attr(TpNamedAttr *self, void *c) {
  (void)c;
  return Py_NewRef(self->attr);
}

static PyGetSetDef named_getset[] = {
    {"name", (getter)named_name, NULL, TPY_PROP("str", "The name (a str)."), NULL},
    {"attr", (getter)named_attr, NULL, TPY_PROP("Attribute", "The attribute."), NULL},
    TPY_GETSET_END,
};

static PyType_Slot named_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, named_traverse},
    {Py_tp_clear, named_clear},
    {Py_tp_repr, named_repr},
    {Py_tp_getset, named_getset},
    {Py_tp_doc, "A (name, attribute) pair: Attribute.get_named(name) makes one."},
    {0, NULL},
};

static PyType_Spec named_spec = {
    "tether.ir.NamedAttribute", sizeof(TpNamedAttr), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, named_slots};

/* ---- Attribute ------------------------------------------------------------------------------- */

static tpy_sig attr_new_sig = TPY_SIG("Attribute(cast_from_type: Attribute)", "An MLIR attribute.");

static PyObject *attr_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *other;
  if (!tpy_args(&attr_new_sig, args, kw, &other, 1)) return NULL;
  if (!tpy_is(other, tpy.Attribute)) return tpy_type_error("cast_from_type", "an Attribute", other);
  return tpy_ctxobj_new(type, TPY_CTX(other), TPY_PTR(other));
}

static PyObject *attr_str(PyObject *self) {
  tpy_strbuf b = {0};
  mlirAttributePrint(A(self), tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *attr_repr(PyObject *self) {
  PyObject *s = attr_str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("Attribute(%U)", s);
  Py_DECREF(s);
  return r;
}

static tpy_sig attr_parse_sig =
    TPY_SIG("parse(asm: str, context: Context | None = None) -> Attribute",
            "Parses an attribute; MLIRError on bad input.");

static PyObject *attr_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  (void)cls;
  MlirStringRef s;
  TpContext *ctx;
  tpy_errcap cap;
  if (!tpy_parse_begin(&attr_parse_sig, args, nargs, kwnames, &s, &ctx, &cap)) return NULL;
  MlirContext raw = tether_arena_context(ctx->arena);
  MlirAttribute at = {NULL};
  if (tether_parse_check(raw, TETHER_PARSE_ATTRIBUTE, s.data, s.length) == TETHER_OK)
    at = mlirAttributeParseGet(raw, s);
  if (mlirAttributeIsNull(at)) return tpy_errcap_raise(&cap, "Unable to parse attribute");
  tpy_errcap_close(&cap);
  return tpy_wrap_attr((PyObject *)ctx, at);
}

static PyObject *attr_type(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirAttributeGetType(A(self)));
}

static PyObject *attr_typeid(PyObject *self, void *c) {
  (void)c;
  MlirTypeID id = mlirAttributeGetTypeID(A(self));
  if (mlirTypeIDIsNull(id)) return PyErr_Format(PyExc_ValueError, "the attribute has no TypeID");
  return tpy_wrap_typeid(id);
}

static PyObject *attr_maybe_downcast(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *r = tpy_wrap_attr(TPY_CTX(self), A(self));
  /* As upstream: with no caster for its TypeID, an object of a class stays what it is. */
  if (r && Py_TYPE(r) == tpy.Attribute && Py_TYPE(self) != tpy.Attribute)
    Py_SETREF(r, Py_NewRef(self));
  return r;
}

static PyObject *attr_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirAttributeDump(A(self));
  Py_RETURN_NONE;
}

static PyObject *attr_get_named(PyObject *self, PyObject *name) {
  if (!PyUnicode_Check(name)) return tpy_type_error("name", "a str", name);
  return named_attr_new(name, self);
}

static PyObject *attr_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.Attribute)) return tpy_wrap_attr(TPY_CTX(owner), A(owner));
  void *p = tpy_capsule_pointer(cap, "mlir.ir.Attribute._CAPIPtr");
  if (!p) return NULL;
  tether_arena *a = tpy_arena_for_capsule(mlirAttributeGetContext((MlirAttribute){p}));
  if (!a) return NULL;
  return tpy_wrap_attr_a(a, (MlirAttribute){p});
}

static PyMethodDef attr_methods[] = {
    {"parse", TPY_FASTFN(attr_parse), TPY_FAST | METH_STATIC, TPY_DOC(attr_parse_sig)},
    {"_CAPICreate", (PyCFunction)attr_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> Attribute", NULL)},
    {"maybe_downcast", (PyCFunction)attr_maybe_downcast, METH_NOARGS,
     TPY_SIGDOC("maybe_downcast() -> Attribute", NULL)},
    {"dump", (PyCFunction)attr_dump, METH_NOARGS,
     TPY_SIGDOC("dump() -> None", "Prints the attribute to stderr.")},
    {"get_named", (PyCFunction)attr_get_named, METH_O,
     TPY_SIGDOC("get_named(name: str, /) -> NamedAttribute",
                "A NamedAttribute of this attribute.")},
    TPY_METHODS_END,
};

static PyGetSetDef attr_getset[] = {
    {"context", tpy_ctxobj_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"type", attr_type, NULL, TPY_PROP("Type", "The attribute's type."), NULL},
    {"typeid", attr_typeid, NULL, TPY_PROP("TypeID", NULL), NULL},
    {"_CAPIPtr", tpy_ctxobj_capsule, NULL, TPY_PROP("object", NULL), "mlir.ir.Attribute._CAPIPtr"},
    TPY_GETSET_END,
};

static PyType_Slot attr_slots[] = {
    {Py_tp_new, attr_new},
    {Py_tp_init, tpy_init_noop},
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_str, attr_str},
    {Py_tp_repr, attr_repr},
    {Py_tp_richcompare, tpy_ctxobj_richcompare},
    {Py_tp_hash, tpy_ctxobj_hash},
    {Py_tp_methods, attr_methods},
    {Py_tp_getset, attr_getset},
    {Py_tp_doc, TPY_DOC(attr_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_attribute_spec = {"tether.ir.Attribute", sizeof(TpCtxObj), 0,
                                         Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, attr_slots};

/* ---- the concrete classes -------------------------------------------------------------------- */

TPY_ISA(MlirAttribute, mlirAttributeIsAInteger)
TPY_ISA(MlirAttribute, mlirAttributeIsAFloat)
TPY_ISA(MlirAttribute, mlirAttributeIsABool)
TPY_ISA(MlirAttribute, mlirAttributeIsAString)
TPY_ISA(MlirAttribute, mlirAttributeIsAType)
TPY_ISA(MlirAttribute, mlirAttributeIsAUnit)
TPY_ISA(MlirAttribute, mlirAttributeIsAArray)
TPY_ISA(MlirAttribute, mlirAttributeIsADictionary)
TPY_ISA(MlirAttribute, mlirAttributeIsAFlatSymbolRef)
TPY_ISA(MlirAttribute, mlirAttributeIsASymbolRef)
TPY_ISA(MlirAttribute, mlirAttributeIsAOpaque)
TPY_ISA(MlirAttribute, mlirAttributeIsAStridedLayout)

/* IntegerAttr */

/* IntegerAttr, set at init: IntegerAttr.get gives one, as upstream's (navigation and parsing
 * give the most specific class: `true` is a BoolAttr there). */

static tpy_sig int_attr_get_sig = TPY_SIG("get(type: Type, value: int) -> IntegerAttr", NULL);

static PyObject *int_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&int_attr_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirType t;
  PyObject *ctx;
  int64_t v;
  if (!tpy_arg_type(a[0], &t, &ctx) || !tpy_arg_int64(a[1], "value", &v)) return NULL;
  if (!mlirTypeIsAInteger(t) && !mlirTypeIsAIndex(t)) {
    PyObject *r = PyObject_Repr(a[0]);
    if (r) PyErr_Format(PyExc_ValueError, "IntegerAttr needs an integer or index type, not %U", r);
    Py_XDECREF(r);
    return NULL;
  }
  return tpy_ctxobj_new(tpy.IntegerAttr, ctx, mlirIntegerAttrGet(t, v).ptr);
}

static PyObject *int_attr_value(PyObject *self, void *c) {
  (void)c;
  MlirType t = mlirAttributeGetType(A(self));
  if (mlirTypeIsAIndex(t) || mlirIntegerTypeIsSignless(t))
    return PyLong_FromLongLong(mlirIntegerAttrGetValueInt(A(self)));
  if (mlirIntegerTypeIsSigned(t)) return PyLong_FromLongLong(mlirIntegerAttrGetValueSInt(A(self)));
  return PyLong_FromUnsignedLongLong(mlirIntegerAttrGetValueUInt(A(self)));
}

static PyObject *int_attr_int(PyObject *self) { return int_attr_value(self, NULL); }

static PyMethodDef int_attr_methods[] = {
    {"get", TPY_FASTFN(int_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(int_attr_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef int_attr_getset[] = {
    {"value", int_attr_value, NULL, TPY_PROP("int", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot int_attr_slots[] = {
    {Py_nb_int, int_attr_int},
    {Py_nb_index, int_attr_int},
    {0, NULL},
};

/* FloatAttr */

static int arg_double(PyObject *o, double *out) {
  if (!PyFloat_Check(o) && !PyLong_Check(o)) return tpy_type_error("value", "a float", o), 0;
  *out = PyFloat_AsDouble(o);
  return !(*out == -1.0 && PyErr_Occurred());
}

/* FloatAttr.get(type, value, loc=None), and on MLIR 22 get_unchecked(type, value, context=None)
 * (`unchecked`), which tether checks as well (MLIR asserts on a type that is not a float type),
 * at the unknown location of the context. */
static PyObject *float_attr_make(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames, int unchecked) {
  PyObject *a[3];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 3)) return NULL;
  MlirType t;
  double v;
  if (!tpy_arg_type(a[0], &t, NULL) || !arg_double(a[1], &v)) return NULL;
  PyObject *ctx;
  MlirLocation l;
  if (unchecked) {
    if (!(ctx = tpy_context_arg(a[2]))) return NULL;
    l = mlirLocationUnknownGet(tpy_ctx_raw(ctx));
  } else {
    PyObject *lo = tpy_resolve_loc(a[2]);
    if (!lo) return NULL;
    ctx = TPY_CTX(lo);
    l = (MlirLocation){TPY_PTR(lo)};
  }
  if (!tpy_arg_type_in(a[0], ctx, &t)) return NULL;
  /* A float type cannot fail FloatAttr's verifier (the value is converted to its semantics):
   * no error capture (attaching and detaching a handler cost as much as the attribute). */
  if (mlirTypeIsAFloat(t))
    return tpy_wrap_attr(ctx, mlirFloatAttrDoubleGet(tpy_ctx_raw(ctx), t, v));
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  MlirAttribute r = mlirFloatAttrDoubleGetChecked(l, t, v);
  if (mlirAttributeIsNull(r)) return tpy_errcap_raise(&cap, "Invalid attribute");
  tpy_errcap_close(&cap);
  return tpy_wrap_attr(ctx, r);
}

static tpy_sig float_attr_get_sig =
    TPY_SIG("get(type: Type, value: float, loc: Location | None = None) -> FloatAttr", NULL);

static PyObject *float_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)cls;
  return float_attr_make(&float_attr_get_sig, args, nargs, kwnames, 0);
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig float_attr_get_unchecked_sig = TPY_SIG(
    "get_unchecked(type: Type, value: float, context: Context | None = None) -> FloatAttr", NULL);

static PyObject *float_attr_get_unchecked(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames) {
  (void)cls;
  return float_attr_make(&float_attr_get_unchecked_sig, args, nargs, kwnames, 1);
}
#endif

static PyObject *float_attr_get_typed(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames, MlirType (*get)(MlirContext)) {
  PyObject *a[2];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2)) return NULL;
  double v;
  if (!arg_double(a[0], &v)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  MlirContext c = tpy_ctx_raw(ctx);
  return tpy_wrap_attr(ctx, mlirFloatAttrDoubleGet(c, get(c), v));
}

static tpy_sig float_attr_get_f32_sig =
    TPY_SIG("get_f32(value: float, context: Context | None = None) -> FloatAttr", NULL);

static PyObject *float_attr_get_f32(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)cls;
  return float_attr_get_typed(&float_attr_get_f32_sig, args, nargs, kwnames, mlirF32TypeGet);
}

static tpy_sig float_attr_get_f64_sig =
    TPY_SIG("get_f64(value: float, context: Context | None = None) -> FloatAttr", NULL);

static PyObject *float_attr_get_f64(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)cls;
  return float_attr_get_typed(&float_attr_get_f64_sig, args, nargs, kwnames, mlirF64TypeGet);
}

static PyObject *float_attr_value(PyObject *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(mlirFloatAttrGetValueDouble(A(self)));
}

static PyObject *float_attr_float(PyObject *self) { return float_attr_value(self, NULL); }

static PyMethodDef float_attr_methods[] = {
    {"get", TPY_FASTFN(float_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(float_attr_get_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get_unchecked", TPY_FASTFN(float_attr_get_unchecked), TPY_FAST | METH_STATIC,
     TPY_DOC(float_attr_get_unchecked_sig)},
#endif
    {"get_f32", TPY_FASTFN(float_attr_get_f32), TPY_FAST | METH_STATIC,
     TPY_DOC(float_attr_get_f32_sig)},
    {"get_f64", TPY_FASTFN(float_attr_get_f64), TPY_FAST | METH_STATIC,
     TPY_DOC(float_attr_get_f64_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef float_attr_getset[] = {
    {"value", float_attr_value, NULL, TPY_PROP("float", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot float_attr_slots[] = {
    {Py_nb_float, float_attr_float},
    {0, NULL},
};

/* BoolAttr */

static tpy_sig bool_attr_get_sig =
    TPY_SIG("get(value: bool, context: Context | None = None) -> BoolAttr", NULL);

/* Its own class, as upstream (BoolAttr shares IntegerAttr's TypeID). */
static PyObject *bool_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&bool_attr_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  if (!PyBool_Check(a[0])) return tpy_type_error("value", "a bool", a[0]);
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  return tpy_ctxobj_new((PyTypeObject *)cls, ctx,
                        mlirBoolAttrGet(tpy_ctx_raw(ctx), a[0] == Py_True).ptr);
}

static PyObject *bool_attr_value(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirBoolAttrGetValue(A(self)));
}

static int bool_attr_bool(PyObject *self) { return mlirBoolAttrGetValue(A(self)); }

static PyMethodDef bool_attr_methods[] = {
    {"get", TPY_FASTFN(bool_attr_get), TPY_FAST | METH_CLASS, TPY_DOC(bool_attr_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef bool_attr_getset[] = {
    {"value", bool_attr_value, NULL, TPY_PROP("bool", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot bool_attr_slots[] = {
    {Py_nb_bool, bool_attr_bool},
    {0, NULL},
};

/* StringAttr */

static tpy_sig string_attr_get_sig =
    TPY_SIG("get(value: str | bytes, context: Context | None = None) -> StringAttr", NULL);

static PyObject *string_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&string_attr_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirStringRef s;
  if (!tpy_arg_str(a[0], "value", &s)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  return tpy_wrap_attr(ctx, mlirStringAttrGet(tpy_ctx_raw(ctx), s));
}

static tpy_sig string_attr_get_typed_sig =
    TPY_SIG("get_typed(type: Type, value: str) -> StringAttr", NULL);

static PyObject *string_attr_get_typed(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&string_attr_get_typed_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirType t;
  PyObject *ctx;
  MlirStringRef s;
  if (!tpy_arg_type(a[0], &t, &ctx) || !tpy_arg_str(a[1], "value", &s)) return NULL;
  return tpy_wrap_attr(ctx, mlirStringAttrTypedGet(t, s));
}

static PyObject *string_attr_value(PyObject *self, void *c) {
  (void)c;
  return tpy_str_from_ref(mlirStringAttrGetValue(A(self)));
}

static PyObject *string_attr_bytes(PyObject *self, void *c) {
  (void)c;
  MlirStringRef s = mlirStringAttrGetValue(A(self));
  return PyBytes_FromStringAndSize(s.data, (Py_ssize_t)s.length);
}

static PyMethodDef string_attr_methods[] = {
    {"get", TPY_FASTFN(string_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(string_attr_get_sig)},
    {"get_typed", TPY_FASTFN(string_attr_get_typed), TPY_FAST | METH_STATIC,
     TPY_DOC(string_attr_get_typed_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef string_attr_getset[] = {
    {"value", string_attr_value, NULL, TPY_PROP("str", "The value as a str."), NULL},
    {"value_bytes", string_attr_bytes, NULL, TPY_PROP("bytes", "The value as bytes."), NULL},
    TPY_GETSET_END,
};

/* TypeAttr */

static tpy_sig type_attr_get_sig =
    TPY_SIG("get(value: Type, context: Context | None = None) -> TypeAttr", NULL);

static PyObject *type_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&type_attr_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirType t;
  PyObject *ctx;
  if (!tpy_arg_type(a[0], &t, &ctx)) return NULL;
  return tpy_wrap_attr(ctx, mlirTypeAttrGet(t));
}

static PyObject *type_attr_value(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirTypeAttrGetValue(A(self)));
}

static PyMethodDef type_attr_methods[] = {
    {"get", TPY_FASTFN(type_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(type_attr_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef type_attr_getset[] = {
    {"value", type_attr_value, NULL, TPY_PROP("Type", NULL), NULL},
    TPY_GETSET_END,
};

/* UnitAttr */

static tpy_sig unit_attr_get_sig = TPY_SIG("get(context: Context | None = None) -> UnitAttr", NULL);

static PyObject *unit_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  PyObject *a[1];
  if (!tpy_fastargs(&unit_attr_get_sig, args, nargs, kwnames, a, 1)) return NULL;
  PyObject *ctx = tpy_context_arg(a[0]);
  if (!ctx) return NULL;
  return tpy_wrap_attr(ctx, mlirUnitAttrGet(tpy_ctx_raw(ctx)));
}

static PyMethodDef unit_attr_methods[] = {
    {"get", TPY_FASTFN(unit_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(unit_attr_get_sig)},
    TPY_METHODS_END,
};

/* ArrayAttr */

static tpy_sig array_attr_get_sig = TPY_SIG(
    "get(attributes: Sequence[Attribute], context: Context | None = None) -> ArrayAttr", NULL);

static PyObject *array_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&array_attr_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  PyObject *f = tpy_seq_fast(a[0], "attributes must be a sequence of Attribute");
  if (!f) return NULL;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(f); i++)
    if (!tpy_is(PySequence_Fast_GET_ITEM(f, i), tpy.Attribute)) {
      tpy_cast_error(PySequence_Fast_GET_ITEM(f, i));
      Py_DECREF(f);
      return NULL;
    }
  intptr_t n;
  MlirAttribute *v;
  int ok = tpy_seq_attrs(f, ctx, &n, &v);
  Py_DECREF(f);
  if (!ok) return NULL;
  MlirAttribute r = mlirArrayAttrGet(tpy_ctx_raw(ctx), n, v);
  PyMem_Free(v);
  return tpy_wrap_attr(ctx, r);
}

static Py_ssize_t array_len(PyObject *self) { return mlirArrayAttrGetNumElements(A(self)); }

/* sq_item: Python has already added the length to a negative index. */
static PyObject *array_item(PyObject *self, Py_ssize_t i) {
  intptr_t n = mlirArrayAttrGetNumElements(A(self));
  if (i < 0 || i >= n) return PyErr_Format(PyExc_IndexError, "ArrayAttribute index out of range");
  return tpy_wrap_attr(TPY_CTX(self), mlirArrayAttrGetElement(A(self), i));
}

/* `array + sequence of attributes`. CPython calls the slot for the reflected `other + array` too,
 * with the other object first: only an ArrayAttr on the left. */
static PyObject *array_concat(PyObject *self, PyObject *other) {
  if (!tpy_is(self, tpy.Attribute) || !mlirAttributeIsAArray(A(self))) Py_RETURN_NOTIMPLEMENTED;
  PyObject *ctx = TPY_CTX(self);
  intptr_t n2;
  MlirAttribute *v2;
  if (!tpy_seq_attrs(other, ctx, &n2, &v2)) return NULL;
  intptr_t n1 = mlirArrayAttrGetNumElements(A(self));
  MlirAttribute *v = PyMem_Malloc((size_t)(n1 + n2 + 1) * sizeof *v);
  if (!v) {
    PyMem_Free(v2);
    return PyErr_NoMemory();
  }
  for (intptr_t i = 0; i < n1; i++) v[i] = mlirArrayAttrGetElement(A(self), i);
  for (intptr_t i = 0; i < n2; i++) v[n1 + i] = v2[i];
  MlirAttribute r = mlirArrayAttrGet(tpy_ctx_raw(ctx), n1 + n2, v);
  PyMem_Free(v);
  PyMem_Free(v2);
  return tpy_wrap_attr(ctx, r);
}

static PyMethodDef array_attr_methods[] = {
    {"get", TPY_FASTFN(array_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(array_attr_get_sig)},
    TPY_METHODS_END,
};

/* Iteration as upstream's ArrayAttributeIterator: the elements in order (a sequence iterator over
 * sq_item, which reads the attribute, immutable, at each step). */
static PyObject *array_iter(PyObject *self) { return PySeqIter_New(self); }

static PyType_Slot array_attr_slots[] = {
    {Py_tp_iter, array_iter},
    {Py_sq_length, array_len},
    {Py_sq_item, array_item},
    {Py_nb_add, array_concat},
    {0, NULL},
};

/* DictAttr */

static tpy_sig dict_attr_get_sig = TPY_SIG(
    "get(value: Mapping[str, Attribute] = {}, context: Context | None = None) -> DictAttr", NULL);

static PyObject *dict_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&dict_attr_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  PyObject *d = a[0] ? a[0] : Py_None;
  if (d != Py_None && !PyDict_Check(d)) return tpy_type_error("value", "a dict", d);
  PyObject *items = d == Py_None ? PyList_New(0) : PyDict_Items(d);
  if (!items) return NULL;
  Py_ssize_t k = PyList_GET_SIZE(items);
  MlirNamedAttribute *v = PyMem_Malloc((size_t)(k ? k : 1) * sizeof *v);
  if (!v) {
    Py_DECREF(items);
    return PyErr_NoMemory();
  }
  MlirContext c = tpy_ctx_raw(ctx);
  for (Py_ssize_t i = 0; i < k; i++) {
    PyObject *kv = PyList_GET_ITEM(items, i);
    MlirStringRef key;
    MlirAttribute av;
    if (!PyUnicode_Check(PyTuple_GET_ITEM(kv, 0))) {
      tpy_type_error("key", "a str", PyTuple_GET_ITEM(kv, 0));
      goto fail;
    }
    if (!tpy_arg_str(PyTuple_GET_ITEM(kv, 0), "key", &key) ||
        !tpy_arg_attr_in(PyTuple_GET_ITEM(kv, 1), ctx, &av))
      goto fail;
    v[i] = mlirNamedAttributeGet(mlirIdentifierGet(c, key), av);
  }
  MlirAttribute r = mlirDictionaryAttrGet(c, k, v);
  PyMem_Free(v);
  Py_DECREF(items);
  return tpy_wrap_attr(ctx, r);
fail:
  PyMem_Free(v);
  Py_DECREF(items);
  return NULL;
}

static Py_ssize_t dict_len(PyObject *self) { return mlirDictionaryAttrGetNumElements(A(self)); }

static PyObject *dict_subscript(PyObject *self, PyObject *key) {
  if (PyUnicode_Check(key)) {
    MlirStringRef s;
    if (!tpy_arg_str(key, "key", &s)) return NULL;
    MlirAttribute e = mlirDictionaryAttrGetElementByName(A(self), s);
    if (mlirAttributeIsNull(e))
      return PyErr_Format(PyExc_KeyError, "attempt to access a non-existent attribute");
    return tpy_wrap_attr(TPY_CTX(self), e);
  }
  intptr_t i;
  if (!tpy_arg_intptr(key, "index", &i)) return NULL;
  intptr_t n = mlirDictionaryAttrGetNumElements(A(self));
  if (i < 0) i += n;
  if (i < 0 || i >= n)
    return PyErr_Format(PyExc_IndexError, "attempt to access out of bounds attribute");
  extern PyObject *tpy_wrap_named_attr(PyObject *, MlirNamedAttribute);
  return tpy_wrap_named_attr(TPY_CTX(self), mlirDictionaryAttrGetElement(A(self), i));
}

static int dict_contains(PyObject *self, PyObject *key) {
  if (!PyUnicode_Check(key)) return 0;
  MlirStringRef s;
  if (!tpy_arg_str(key, "key", &s)) return -1;
  return !mlirAttributeIsNull(mlirDictionaryAttrGetElementByName(A(self), s));
}

static PyMethodDef dict_attr_methods[] = {
    {"get", TPY_FASTFN(dict_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(dict_attr_get_sig)},
    TPY_METHODS_END,
};

static PyType_Slot dict_attr_slots[] = {
    {Py_mp_length, dict_len},
    {Py_sq_length, dict_len},
    {Py_mp_subscript, dict_subscript},
    {Py_sq_contains, dict_contains},
    {0, NULL},
};

/* FlatSymbolRefAttr / SymbolRefAttr */

static tpy_sig flat_symbol_get_sig =
    TPY_SIG("get(value: str, context: Context | None = None) -> FlatSymbolRefAttr", NULL);

/* As upstream: the constructor gives its own class (FlatSymbolRefAttr shares SymbolRefAttr's
 * TypeID, so casting would give a SymbolRefAttr). */
static PyObject *flat_symbol_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&flat_symbol_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirStringRef s;
  if (!tpy_arg_str(a[0], "value", &s)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  return tpy_ctxobj_new((PyTypeObject *)cls, ctx,
                        mlirFlatSymbolRefAttrGet(tpy_ctx_raw(ctx), s).ptr);
}

static PyObject *flat_symbol_value(PyObject *self, void *c) {
  (void)c;
  return tpy_str_from_ref(mlirFlatSymbolRefAttrGetValue(A(self)));
}

static PyMethodDef flat_symbol_methods[] = {
    {"get", TPY_FASTFN(flat_symbol_get), TPY_FAST | METH_CLASS, TPY_DOC(flat_symbol_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef flat_symbol_getset[] = {
    {"value", flat_symbol_value, NULL, TPY_PROP("str", NULL), NULL},
    TPY_GETSET_END,
};

static tpy_sig symbol_ref_get_sig =
    TPY_SIG("get(symbols: Sequence[str], context: Context | None = None) -> SymbolRefAttr", NULL);

static PyObject *symbol_ref_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&symbol_ref_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  PyObject *f = tpy_seq_fast(a[0], "symbols must be a sequence of str");
  if (!f) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  if (n == 0) {
    Py_DECREF(f);
    return PyErr_Format(PyExc_ValueError, "SymbolRefAttr must be composed of at least one symbol.");
  }
  MlirContext c = tpy_ctx_raw(ctx);
  MlirAttribute *nested = PyMem_Malloc((size_t)n * sizeof *nested);
  MlirStringRef root;
  if (!nested) {
    Py_DECREF(f);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    MlirStringRef s;
    if (!tpy_arg_str(PySequence_Fast_GET_ITEM(f, i), "symbol", &s)) {
      PyMem_Free(nested);
      Py_DECREF(f);
      return NULL;
    }
    if (i == 0)
      root = s;
    else
      nested[i - 1] = mlirFlatSymbolRefAttrGet(c, s);
  }
  MlirAttribute r = mlirSymbolRefAttrGet(c, root, n - 1, nested);
  PyMem_Free(nested);
  Py_DECREF(f);
  return tpy_wrap_attr(ctx, r);
}

static PyObject *symbol_ref_value(PyObject *self, void *c) {
  (void)c;
  intptr_t n = mlirSymbolRefAttrGetNumNestedReferences(A(self));
  PyObject *l = PyList_New(n + 1);
  if (!l) return NULL;
  PyObject *root = tpy_str_from_ref(mlirSymbolRefAttrGetRootReference(A(self)));
  if (!root) {
    Py_DECREF(l);
    return NULL;
  }
  PyList_SET_ITEM(l, 0, root);
  for (intptr_t i = 0; i < n; i++) {
    PyObject *s = tpy_str_from_ref(
        mlirSymbolRefAttrGetLeafReference(mlirSymbolRefAttrGetNestedReference(A(self), i)));
    if (!s) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, i + 1, s);
  }
  return l;
}

static PyMethodDef symbol_ref_methods[] = {
    {"get", TPY_FASTFN(symbol_ref_get), TPY_FAST | METH_STATIC, TPY_DOC(symbol_ref_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef symbol_ref_getset[] = {
    {"value", symbol_ref_value, NULL,
     TPY_PROP("list[str]", "The root and nested references, as a list of str."), NULL},
    TPY_GETSET_END,
};

/* OpaqueAttr */

static tpy_sig opaque_attr_get_sig = TPY_SIG("get(dialect_namespace: str, buffer: bytes, type: "
                                             "Type, context: Context | None = None) -> OpaqueAttr",
                                             NULL);

static PyObject *opaque_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  (void)cls;
  PyObject *a[4];
  if (!tpy_fastargs(&opaque_attr_get_sig, args, nargs, kwnames, a, 4)) return NULL;
  MlirStringRef ns;
  if (!tpy_arg_str(a[0], "dialect_namespace", &ns)) return NULL;
  PyObject *ctx = tpy_context_arg(a[3]);
  if (!ctx) return NULL;
  MlirType t;
  if (!tpy_arg_type_in(a[2], ctx, &t)) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(a[1], &view, PyBUF_SIMPLE) < 0) return NULL;
  MlirAttribute r =
      mlirOpaqueAttrGet(tpy_ctx_raw(ctx), ns, (intptr_t)view.len, (const char *)view.buf, t);
  PyBuffer_Release(&view);
  return tpy_wrap_attr(ctx, r);
}

static PyObject *opaque_attr_namespace(PyObject *self, void *c) {
  (void)c;
  return tpy_str_from_ref(mlirOpaqueAttrGetDialectNamespace(A(self)));
}

static PyObject *opaque_attr_data(PyObject *self, void *c) {
  (void)c;
  MlirStringRef s = mlirOpaqueAttrGetData(A(self));
  return PyBytes_FromStringAndSize(s.data, (Py_ssize_t)s.length);
}

static PyMethodDef opaque_attr_methods[] = {
    {"get", TPY_FASTFN(opaque_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(opaque_attr_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef opaque_attr_getset[] = {
    {"dialect_namespace", opaque_attr_namespace, NULL, TPY_PROP("str", NULL), NULL},
    {"data", opaque_attr_data, NULL, TPY_PROP("bytes", NULL), NULL},
    TPY_GETSET_END,
};

/* StridedLayoutAttr */

static tpy_sig strided_get_sig = TPY_SIG(
    "get(offset: int, strides: Sequence[int], context: Context | None = None) -> StridedLayoutAttr",
    NULL);

static PyObject *strided_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&strided_get_sig, args, nargs, kwnames, a, 3)) return NULL;
  int64_t off;
  if (!tpy_arg_int64(a[0], "offset", &off)) return NULL;
  PyObject *ctx = tpy_context_arg(a[2]);
  if (!ctx) return NULL;
  PyObject *f = tpy_seq_fast(a[1], "strides must be a sequence of int");
  if (!f) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  int64_t *s = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *s);
  if (!s) {
    Py_DECREF(f);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++)
    if (!tpy_arg_int64(PySequence_Fast_GET_ITEM(f, i), "stride", &s[i])) {
      PyMem_Free(s);
      Py_DECREF(f);
      return NULL;
    }
  MlirAttribute r = mlirStridedLayoutAttrGet(tpy_ctx_raw(ctx), off, n, s);
  PyMem_Free(s);
  Py_DECREF(f);
  return tpy_wrap_attr(ctx, r);
}

static tpy_sig strided_fully_dynamic_sig = TPY_SIG(
    "get_fully_dynamic(rank: int, context: Context | None = None) -> StridedLayoutAttr", NULL);

static PyObject *strided_fully_dynamic(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&strided_fully_dynamic_sig, args, nargs, kwnames, a, 2)) return NULL;
  intptr_t rank;
  if (!tpy_arg_intptr(a[0], "rank", &rank)) return NULL;
  if (rank < 0 || rank > (1 << 20)) return PyErr_Format(PyExc_ValueError, "invalid rank");
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  int64_t *s = PyMem_Malloc((size_t)(rank ? rank : 1) * sizeof *s);
  if (!s) return PyErr_NoMemory();
  for (intptr_t i = 0; i < rank; i++) s[i] = mlirShapedTypeGetDynamicStrideOrOffset();
  MlirAttribute r =
      mlirStridedLayoutAttrGet(tpy_ctx_raw(ctx), mlirShapedTypeGetDynamicStrideOrOffset(), rank, s);
  PyMem_Free(s);
  return tpy_wrap_attr(ctx, r);
}

static PyObject *strided_offset(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(mlirStridedLayoutAttrGetOffset(A(self)));
}

static PyObject *strided_strides(PyObject *self, void *c) {
  (void)c;
  intptr_t n = mlirStridedLayoutAttrGetNumStrides(A(self));
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++)
    PyList_SET_ITEM(l, i, PyLong_FromLongLong(mlirStridedLayoutAttrGetStride(A(self), i)));
  return l;
}

static PyMethodDef strided_methods[] = {
    {"get", TPY_FASTFN(strided_get), TPY_FAST | METH_STATIC, TPY_DOC(strided_get_sig)},
    {"get_fully_dynamic", TPY_FASTFN(strided_fully_dynamic), TPY_FAST | METH_STATIC,
     TPY_DOC(strided_fully_dynamic_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef strided_getset[] = {
    {"offset", strided_offset, NULL, TPY_PROP("int", NULL), NULL},
    {"strides", strided_strides, NULL, TPY_PROP("list[int]", NULL), NULL},
    TPY_GETSET_END,
};

/* ---- the table ------------------------------------------------------------------------------- */

#define DEF(Name, isa, tid, methods, getset, slots)                                                \
  { Name, NULL, isa, tid, methods, getset, slots, NULL, NULL, NULL }

static tpy_class_def attr_defs[] = {
    DEF("IntegerAttr", isa_mlirAttributeIsAInteger, mlirIntegerAttrGetTypeID, int_attr_methods,
        int_attr_getset, int_attr_slots),
    DEF("FloatAttr", isa_mlirAttributeIsAFloat, mlirFloatAttrGetTypeID, float_attr_methods,
        float_attr_getset, float_attr_slots),
    DEF("BoolAttr", isa_mlirAttributeIsABool, NULL, bool_attr_methods, bool_attr_getset,
        bool_attr_slots),
    DEF("StringAttr", isa_mlirAttributeIsAString, mlirStringAttrGetTypeID, string_attr_methods,
        string_attr_getset, NULL),
    DEF("TypeAttr", isa_mlirAttributeIsAType, mlirTypeAttrGetTypeID, type_attr_methods,
        type_attr_getset, NULL),
    DEF("UnitAttr", isa_mlirAttributeIsAUnit, mlirUnitAttrGetTypeID, unit_attr_methods, NULL, NULL),
    DEF("ArrayAttr", isa_mlirAttributeIsAArray, mlirArrayAttrGetTypeID, array_attr_methods, NULL,
        array_attr_slots),
    DEF("DictAttr", isa_mlirAttributeIsADictionary, mlirDictionaryAttrGetTypeID, dict_attr_methods,
        NULL, dict_attr_slots),
    DEF("SymbolRefAttr", isa_mlirAttributeIsASymbolRef, mlirSymbolRefAttrGetTypeID,
        symbol_ref_methods, symbol_ref_getset, NULL),
    DEF("FlatSymbolRefAttr", isa_mlirAttributeIsAFlatSymbolRef, NULL, flat_symbol_methods,
        flat_symbol_getset, NULL),
    DEF("OpaqueAttr", isa_mlirAttributeIsAOpaque, mlirOpaqueAttrGetTypeID, opaque_attr_methods,
        opaque_attr_getset, NULL),
    DEF("StridedLayoutAttr", isa_mlirAttributeIsAStridedLayout, mlirStridedLayoutAttrGetTypeID,
        strided_methods, strided_getset, NULL),
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#if TETHER_MLIR_VERSION >= 22
/* Upstream 22's `attr_name` of each class ("builtin.integer"; AffineMapAttr's, IntegerSetAttr's
 * and DenseResourceElementsAttr's are set where they are defined). */
static const tpy_mlir_name attr_names[] = {
    {"IntegerAttr", mlirIntegerAttrGetName},
    {"FloatAttr", mlirFloatAttrGetName},
    {"StringAttr", mlirStringAttrGetName},
    {"TypeAttr", mlirTypeAttrGetName},
    {"UnitAttr", mlirUnitAttrGetName},
    {"ArrayAttr", mlirArrayAttrGetName},
    {"DictAttr", mlirDictionaryAttrGetName},
    {"SymbolRefAttr", mlirSymbolRefAttrGetName},
    {"FlatSymbolRefAttr", mlirFlatSymbolRefAttrGetName},
    {"OpaqueAttr", mlirOpaqueAttrGetName},
    {"StridedLayoutAttr", mlirStridedLayoutAttrGetName},
    {NULL, NULL},
};
#endif

/* Location.attr: defined here, where attributes are, and added to Location at init. */
static PyObject *loc_attr(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_attr(TPY_CTX(self), mlirLocationGetAttribute((MlirLocation){TPY_PTR(self)}));
}

static PyGetSetDef location_getset[] = {
    {"attr", loc_attr, NULL, TPY_PROP("Attribute", "The location as an attribute."), NULL},
    TPY_GETSET_END,
};

int tpy_init_attributes(PyObject *m) {
  if (tpy_add_type(m, &tpy_attribute_spec, NULL, &tpy.Attribute) < 0 ||
      tpy_add_type(m, &named_spec, NULL, &tpy.NamedAttribute) < 0 ||
      tpy_add_getset(tpy.Location, location_getset) < 0)
    return -1;
  if (tpy_define_classes(m, tpy.Attribute, attr_defs, tpy.attr_casters) < 0) return -1;
  tpy.IntegerAttr = attr_defs[0].cls;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_set_mlir_names(attr_defs, "attr_name", attr_names) < 0) return -1;
#endif
  /* As upstream: `true` comes back as a BoolAttr, `@a` as a FlatSymbolRefAttr (their TypeIDs are
   * IntegerAttr's and SymbolRefAttr's). */
  PyObject *ints = Py_BuildValue("(OO)", attr_defs[2].cls, attr_defs[0].cls);
  PyObject *syms = Py_BuildValue("(OO)", attr_defs[9].cls, attr_defs[8].cls);
  int rc = !ints || !syms ||
           tpy_register_choice(tpy.attr_casters, mlirIntegerAttrGetTypeID(), ints) < 0 ||
           tpy_register_choice(tpy.attr_casters, mlirSymbolRefAttrGetTypeID(), syms) < 0;
  Py_XDECREF(ints);
  Py_XDECREF(syms);
  return rc ? -1 : tpy_init_dense(m);
}
