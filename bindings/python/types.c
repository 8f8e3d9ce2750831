/* types.c: Type, Attribute, Location (context-owned values), PassManager, and the module functions
 * that build and inspect builtin types and attributes. The classes users see (IntegerType,
 * StringAttr, ...) are Python subclasses in tether/ir.py; the casters registered by it pick the
 * most specific class for values coming out of MLIR.
 *
 * Invariant: a value object holds a pinned tether handle, so its context outlives it; every MLIR
 * value passed in is checked to belong to the expected context before use.
 */
#include "tether_py.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>

/* ---- the value objects ----------------------------------------------------------------------- */

static PyObject *value_obj_new(PyTypeObject *type, void *h) {
  TpValueObj *self = (TpValueObj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pin = tether_pin(h);
  if (self->pin < 0) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->h = h;
  return (PyObject *)self;
}

static void value_obj_dealloc(TpValueObj *self) {
  if (self->h && self->pin >= 0) tether_unpin(self->pin);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static void *raw_of(PyObject *o) {
  void *h = ((TpValueObj *)o)->h;
  if (!h) return NULL;
  MlirType t;
  tether_type_get(h, &t); /* the three kinds share one layout */
  return (void *)t.ptr;
}

static tether_arena *arena_of(PyObject *o) { return tether_type_arena(((TpValueObj *)o)->h); }

static PyObject *cast(PyObject *caster, PyObject *o) {
  if (!o || !caster) return o;
  PyObject *r = PyObject_CallOneArg(caster, o);
  Py_DECREF(o);
  return r;
}

PyObject *tp_wrap_type(tether_arena *a, MlirType t) {
  if (mlirTypeIsNull(t)) Py_RETURN_NONE;
  tether_type *h;
  int rc = tether_type_wrap(a, t, &h);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return cast(tp.type_caster, value_obj_new(tp.Type, h));
}

PyObject *tp_wrap_attr(tether_arena *a, MlirAttribute t) {
  if (mlirAttributeIsNull(t)) Py_RETURN_NONE;
  tether_attr *h;
  int rc = tether_attr_wrap(a, t, &h);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return cast(tp.attr_caster, value_obj_new(tp.Attribute, h));
}

PyObject *tp_wrap_loc(tether_arena *a, MlirLocation l) {
  tether_loc *h;
  int rc = tether_loc_wrap(a, l, &h);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return value_obj_new(tp.Location, h);
}

int tp_arg_type(PyObject *o, MlirType *raw, tether_arena **arena) {
  if (!PyObject_TypeCheck(o, tp.Type)) return tp_type_error("argument", "a Type", o), 0;
  raw->ptr = raw_of(o);
  *arena = arena_of(o);
  return 1;
}

int tp_arg_attr(PyObject *o, MlirAttribute *raw, tether_arena **arena) {
  if (!PyObject_TypeCheck(o, tp.Attribute)) return tp_type_error("argument", "an Attribute", o), 0;
  raw->ptr = raw_of(o);
  *arena = arena_of(o);
  return 1;
}

int tp_arg_loc(PyObject *o, MlirLocation *raw, tether_arena **arena) {
  if (!PyObject_TypeCheck(o, tp.Location)) return tp_type_error("argument", "a Location", o), 0;
  raw->ptr = raw_of(o);
  *arena = arena_of(o);
  return 1;
}

/* Type(other): a copy of another value of the same family (subclasses check the kind first). */
static PyObject *value_obj_tp_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *other;
  if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, "O", &other)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "expected one positional argument");
    return NULL;
  }
  PyTypeObject *family = PyType_IsSubtype(type, tp.Type)        ? tp.Type
                         : PyType_IsSubtype(type, tp.Attribute) ? tp.Attribute
                                                                : tp.Location;
  if (!PyObject_TypeCheck(other, family)) return tp_type_error("argument", family->tp_name, other);
  return value_obj_new(type, ((TpValueObj *)other)->h);
}

static PyObject *value_obj_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  int same_family = (PyObject_TypeCheck(a, tp.Type) && PyObject_TypeCheck(b, tp.Type)) ||
                    (PyObject_TypeCheck(a, tp.Attribute) && PyObject_TypeCheck(b, tp.Attribute)) ||
                    (PyObject_TypeCheck(a, tp.Location) && PyObject_TypeCheck(b, tp.Location));
  int eq = same_family && raw_of(a) == raw_of(b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t value_obj_hash(PyObject *a) { return _Py_HashPointer(raw_of(a)); }

static PyObject *type_str(PyObject *self) {
  tp_strbuf b = {0};
  mlirTypePrint((MlirType){raw_of(self)}, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *attr_str(PyObject *self) {
  tp_strbuf b = {0};
  mlirAttributePrint((MlirAttribute){raw_of(self)}, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *loc_str(PyObject *self) {
  tp_strbuf b = {0};
  mlirLocationPrint((MlirLocation){raw_of(self)}, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *value_obj_repr(PyObject *self) {
  PyObject *s = PyObject_Str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("%s(%U)", _PyType_Name(Py_TYPE(self)), s);
  Py_DECREF(s);
  return r;
}

static PyObject *value_obj_context(PyObject *self, void *c) {
  (void)c;
  return tp_context_of(arena_of(self));
}

static PyObject *type_capsule(PyObject *self, void *c) {
  (void)c;
  return PyCapsule_New(raw_of(self), "mlir.ir.Type._CAPIPtr", NULL);
}

static PyObject *attr_capsule(PyObject *self, void *c) {
  (void)c;
  return PyCapsule_New(raw_of(self), "mlir.ir.Attribute._CAPIPtr", NULL);
}

static PyObject *attr_type(PyObject *self, void *c) {
  (void)c;
  return tp_wrap_type(arena_of(self), mlirAttributeGetType((MlirAttribute){raw_of(self)}));
}

static PyGetSetDef type_getset[] = {
    {"context", value_obj_context, NULL, NULL, NULL},
    {"_CAPIPtr", type_capsule, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef attr_getset[] = {
    {"context", value_obj_context, NULL, NULL, NULL},
    {"type", attr_type, NULL, NULL, NULL},
    {"_CAPIPtr", attr_capsule, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef loc_getset[] = {
    {"context", value_obj_context, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define VALUE_SLOTS(str, getset, doc)                                                              \
  {Py_tp_new, value_obj_tp_new}, {Py_tp_dealloc, value_obj_dealloc}, {Py_tp_str, str},             \
      {Py_tp_repr, value_obj_repr}, {Py_tp_richcompare, value_obj_richcompare},                    \
      {Py_tp_hash, value_obj_hash}, {Py_tp_getset, getset}, {Py_tp_doc, doc}, {                    \
    0, NULL                                                                                        \
  }

static PyType_Slot type_slots[] = {VALUE_SLOTS(type_str, type_getset, "An MLIR type.")};
static PyType_Slot attr_slots[] = {VALUE_SLOTS(attr_str, attr_getset, "An MLIR attribute.")};
static PyType_Slot loc_slots[] = {VALUE_SLOTS(loc_str, loc_getset, "An MLIR location.")};

PyType_Spec tp_type_spec = {"tether._tether.Type", sizeof(TpValueObj), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, type_slots};
PyType_Spec tp_attribute_spec = {"tether._tether.Attribute", sizeof(TpValueObj), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, attr_slots};
PyType_Spec tp_location_spec = {"tether._tether.Location", sizeof(TpValueObj), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, loc_slots};

/* ---- PassManager ----------------------------------------------------------------------------- */

static PyObject *pm_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"context", "anchor_op", NULL};
  PyObject *ctx;
  const char *anchor = "builtin.module";
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s", kwlist, &ctx, &anchor)) return NULL;
  tether_arena *a;
  if (!tp_arg_context(ctx, &a)) return NULL;
  TpPassManager *self = (TpPassManager *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pm = mlirPassManagerCreateOnOperation(tether_arena_context(a),
                                              mlirStringRefCreateFromCString(anchor));
  self->context = Py_NewRef(ctx);
  return (PyObject *)self;
}

static void pm_dealloc(TpPassManager *self) {
  if (self->pm.ptr) mlirPassManagerDestroy(self->pm);
  Py_XDECREF(self->context);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

/* Adds a textual pipeline through `parse` (mlirOpPassManagerAddPipeline: nested passes;
 * mlirParsePassPipeline: a whole pipeline with its anchor). MLIRError with MLIR's message. */
static PyObject *pm_pipeline(TpPassManager *self, PyObject *pipeline,
                             MlirLogicalResult (*parse)(MlirOpPassManager, MlirStringRef,
                                                        MlirStringCallback, void *)) {
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(pipeline, &n);
  if (!s) return NULL;
  tp_strbuf err = {0};
  MlirLogicalResult r = parse(mlirPassManagerGetAsOpPassManager(self->pm),
                              (MlirStringRef){s, (size_t)n}, tp_strbuf_append, &err);
  if (mlirLogicalResultIsFailure(r)) {
    PyObject *msg = tp_strbuf_finish(&err);
    if (msg) {
      PyErr_Format(tp.MLIRError, "invalid pass pipeline '%s': %U", s, msg);
      Py_DECREF(msg);
    }
    return NULL;
  }
  free(err.data);
  Py_RETURN_NONE;
}

static PyObject *pm_add(TpPassManager *self, PyObject *pipeline) {
  return pm_pipeline(self, pipeline, mlirOpPassManagerAddPipeline);
}

static PyObject *pm_parse_into(TpPassManager *self, PyObject *pipeline) {
  return pm_pipeline(self, pipeline, mlirParsePassPipeline);
}

static PyObject *pm_str(TpPassManager *self) {
  tp_strbuf b = {0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(self->pm), tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *pm_enable_verifier(TpPassManager *self, PyObject *v) {
  mlirPassManagerEnableVerifier(self->pm, PyObject_IsTrue(v) == 1);
  Py_RETURN_NONE;
}

static PyObject *pm_context(TpPassManager *self, void *c) {
  (void)c;
  return Py_NewRef(self->context);
}

static PyMethodDef pm_methods[] = {
    {"add", (PyCFunction)pm_add, METH_O, "Appends a textual pipeline, e.g. 'canonicalize,cse'."},
    {"_parse_into", (PyCFunction)pm_parse_into, METH_O, NULL},
    {"enable_verifier", (PyCFunction)pm_enable_verifier, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pm_getset[] = {
    {"context", (getter)pm_context, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot pm_slots[] = {
    {Py_tp_new, pm_new},         {Py_tp_dealloc, pm_dealloc}, {Py_tp_str, pm_str},
    {Py_tp_methods, pm_methods}, {Py_tp_getset, pm_getset},   {0, NULL},
};

PyType_Spec tp_passmanager_spec = {"tether._tether.PassManager", sizeof(TpPassManager), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, pm_slots};

/* ---- builtin types and attributes ------------------------------------------------------------ */

/* Kinds, in the order the casters test them. */
typedef struct {
  const char *name;
  bool (*isa)(MlirType);
} type_kind;

static const type_kind type_kinds[] = {
    {"integer", mlirTypeIsAInteger},
    {"index", mlirTypeIsAIndex},
    {"f16", mlirTypeIsAF16},
    {"bf16", mlirTypeIsABF16},
    {"f32", mlirTypeIsAF32},
    {"f64", mlirTypeIsAF64},
    {"none", mlirTypeIsANone},
    {"complex", mlirTypeIsAComplex},
    {"function", mlirTypeIsAFunction},
    {"tuple", mlirTypeIsATuple},
    {"ranked_tensor", mlirTypeIsARankedTensor},
    {"unranked_tensor", mlirTypeIsAUnrankedTensor},
    {"memref", mlirTypeIsAMemRef},
    {"unranked_memref", mlirTypeIsAUnrankedMemRef},
    {"vector", mlirTypeIsAVector},
};

typedef struct {
  const char *name;
  bool (*isa)(MlirAttribute);
} attr_kind;

static const attr_kind attr_kinds[] = {
    {"unit", mlirAttributeIsAUnit},
    {"bool", mlirAttributeIsABool},
    {"integer", mlirAttributeIsAInteger},
    {"float", mlirAttributeIsAFloat},
    {"string", mlirAttributeIsAString},
    {"type", mlirAttributeIsAType},
    {"array", mlirAttributeIsAArray},
    {"dictionary", mlirAttributeIsADictionary},
    {"flat_symbol_ref", mlirAttributeIsAFlatSymbolRef},
    {"symbol_ref", mlirAttributeIsASymbolRef},
    {"dense_elements", mlirAttributeIsADenseElements},
};

static PyObject *fn_type_kind(PyObject *m, PyObject *t) {
  (void)m;
  MlirType raw;
  tether_arena *a;
  if (!tp_arg_type(t, &raw, &a)) return NULL;
  for (size_t i = 0; i < sizeof type_kinds / sizeof type_kinds[0]; i++)
    if (type_kinds[i].isa(raw)) return PyUnicode_FromString(type_kinds[i].name);
  Py_RETURN_NONE;
}

static PyObject *fn_attr_kind(PyObject *m, PyObject *t) {
  (void)m;
  MlirAttribute raw;
  tether_arena *a;
  if (!tp_arg_attr(t, &raw, &a)) return NULL;
  for (size_t i = 0; i < sizeof attr_kinds / sizeof attr_kinds[0]; i++)
    if (attr_kinds[i].isa(raw)) return PyUnicode_FromString(attr_kinds[i].name);
  Py_RETURN_NONE;
}

/* Type.parse / Attribute.parse: the arena parses (capturing MLIR's diagnostics for MLIRError), and
 * its handle becomes the Python object. */
static PyObject *parse_value(PyObject *args, int is_attr) {
  PyObject *ctx;
  const char *s;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "Os#", &ctx, &s, &n)) return NULL;
  tether_arena *a;
  if (!tp_arg_context(ctx, &a)) return NULL;
  void *h;
  int rc = is_attr ? tether_attr_parse(a, s, (size_t)n, (tether_attr **)&h)
                   : tether_type_parse(a, s, (size_t)n, (tether_type **)&h);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return cast(is_attr ? tp.attr_caster : tp.type_caster,
              value_obj_new(is_attr ? tp.Attribute : tp.Type, h));
}

static PyObject *fn_type_parse(PyObject *m, PyObject *args) {
  (void)m;
  return parse_value(args, 0);
}

static PyObject *fn_attr_parse(PyObject *m, PyObject *args) {
  (void)m;
  return parse_value(args, 1);
}

/* _make_type(ctx, kind, *args): the builtin type constructors. */
/* Converters from a Python sequence to a PyMem array of MLIR values of one family, all of arena a
 * (TypeError for a wrong element, ValueError for another context). */
#define TP_VALUES_OF(name, Raw, arg_fn, what)                                                      \
  static int name(PyObject *seq, tether_arena *a, intptr_t *n, Raw **out) {                        \
    PyObject *f = PySequence_Fast(seq, "expected a sequence of " what);                            \
    if (!f) return 0;                                                                              \
    Py_ssize_t k = PySequence_Fast_GET_SIZE(f);                                                    \
    *out = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(Raw));                                        \
    if (!*out) {                                                                                   \
      Py_DECREF(f);                                                                                \
      PyErr_NoMemory();                                                                            \
      return 0;                                                                                    \
    }                                                                                              \
    for (Py_ssize_t i = 0; i < k; i++) {                                                           \
      tether_arena *ea;                                                                            \
      if (!arg_fn(PySequence_Fast_GET_ITEM(f, i), &(*out)[i], &ea) || ea != a) {                   \
        if (!PyErr_Occurred()) tp_raise(TETHER_ECONTEXT, NULL, NULL);                              \
        PyMem_Free(*out);                                                                          \
        Py_DECREF(f);                                                                              \
        return 0;                                                                                  \
      }                                                                                            \
    }                                                                                              \
    *n = k;                                                                                        \
    Py_DECREF(f);                                                                                  \
    return 1;                                                                                      \
  }

TP_VALUES_OF(types_of, MlirType, tp_arg_type, "Type")
TP_VALUES_OF(attrs_of, MlirAttribute, tp_arg_attr, "Attribute")
TP_VALUES_OF(locs_of, MlirLocation, tp_arg_loc, "Location")

static int shape_of(PyObject *seq, intptr_t *n, int64_t **out) {
  PyObject *f = PySequence_Fast(seq, "shape must be a sequence of int");
  if (!f) return 0;
  Py_ssize_t k = PySequence_Fast_GET_SIZE(f);
  *out = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(int64_t));
  if (!*out) {
    Py_DECREF(f);
    PyErr_NoMemory();
    return 0;
  }
  for (Py_ssize_t i = 0; i < k; i++) {
    PyObject *d = PySequence_Fast_GET_ITEM(f, i);
    if (!PyLong_Check(d)) {
      tp_type_error("dimension", "an int", d);
      PyMem_Free(*out);
      Py_DECREF(f);
      return 0;
    }
    (*out)[i] = PyLong_AsLongLong(d);
  }
  *n = k;
  Py_DECREF(f);
  return 1;
}

/* Collects the diagnostics of a *GetChecked constructor into an MLIRError. */
typedef struct {
  tp_strbuf buf;
} checked_diag;

static void diag_piece(MlirStringRef s, void *ud) { tp_strbuf_append(s, ud); }

static MlirLogicalResult checked_handler(MlirDiagnostic d, void *ud) {
  mlirDiagnosticPrint(d, diag_piece, ud);
  tp_strbuf_append(mlirStringRefCreateFromCString("\n"), ud);
  return mlirLogicalResultSuccess();
}

static PyObject *checked_type(tether_arena *a, MlirType t, tp_strbuf *diag, const char *what) {
  if (mlirTypeIsNull(t)) {
    PyObject *msg = tp_strbuf_finish(diag);
    if (msg) {
      PyErr_Format(PyExc_ValueError, "invalid %s: %U", what, msg);
      Py_DECREF(msg);
    }
    return NULL;
  }
  free(diag->data);
  return tp_wrap_type(a, t);
}

static PyObject *fn_make_type(PyObject *m, PyObject *args) {
  (void)m;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs < 2) return PyErr_Format(PyExc_TypeError, "_make_type(ctx, kind, ...)");
  tether_arena *a;
  if (!tp_arg_context(PyTuple_GET_ITEM(args, 0), &a)) return NULL;
  MlirContext ctx = tether_arena_context(a);
  const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 1));
  if (!kind) return NULL;
  PyObject *x = nargs > 2 ? PyTuple_GET_ITEM(args, 2) : NULL;
  PyObject *y = nargs > 3 ? PyTuple_GET_ITEM(args, 3) : NULL;
  if (!strcmp(kind, "index")) return tp_wrap_type(a, mlirIndexTypeGet(ctx));
  if (!strcmp(kind, "f16")) return tp_wrap_type(a, mlirF16TypeGet(ctx));
  if (!strcmp(kind, "bf16")) return tp_wrap_type(a, mlirBF16TypeGet(ctx));
  if (!strcmp(kind, "f32")) return tp_wrap_type(a, mlirF32TypeGet(ctx));
  if (!strcmp(kind, "f64")) return tp_wrap_type(a, mlirF64TypeGet(ctx));
  if (!strcmp(kind, "none")) return tp_wrap_type(a, mlirNoneTypeGet(ctx));
  if (!strncmp(kind, "integer", 7) && x) {
    if (!PyLong_Check(x)) return tp_type_error("width", "an int", x);
    long w = PyLong_AsLong(x);
    if (w <= 0 || w > 16777215)
      return PyErr_Format(PyExc_ValueError, "invalid integer width %ld", w);
    if (!strcmp(kind, "integer_signed"))
      return tp_wrap_type(a, mlirIntegerTypeSignedGet(ctx, (unsigned)w));
    if (!strcmp(kind, "integer_unsigned"))
      return tp_wrap_type(a, mlirIntegerTypeUnsignedGet(ctx, (unsigned)w));
    return tp_wrap_type(a, mlirIntegerTypeGet(ctx, (unsigned)w));
  }
  if (!strcmp(kind, "function") && x && y) {
    intptr_t ni, nr;
    MlirType *ti, *tr;
    if (!types_of(x, a, &ni, &ti)) return NULL;
    if (!types_of(y, a, &nr, &tr)) {
      PyMem_Free(ti);
      return NULL;
    }
    MlirType f = mlirFunctionTypeGet(ctx, ni, ti, nr, tr);
    PyMem_Free(ti);
    PyMem_Free(tr);
    return tp_wrap_type(a, f);
  }
  if ((!strcmp(kind, "ranked_tensor") || !strcmp(kind, "memref") || !strcmp(kind, "vector")) && x &&
      y) {
    intptr_t rank;
    int64_t *shape;
    MlirType elt;
    tether_arena *ea;
    if (!tp_arg_type(y, &elt, &ea)) return NULL;
    if (ea != a) return tp_raise(TETHER_ECONTEXT, NULL, NULL);
    if (!shape_of(x, &rank, &shape)) return NULL;
    tp_strbuf diag = {0};
    MlirDiagnosticHandlerID id =
        mlirContextAttachDiagnosticHandler(ctx, checked_handler, &diag, NULL);
    MlirLocation loc = mlirLocationUnknownGet(ctx);
    MlirType t;
    if (!strcmp(kind, "ranked_tensor"))
      t = mlirRankedTensorTypeGetChecked(loc, rank, shape, elt, mlirAttributeGetNull());
    else if (!strcmp(kind, "memref"))
      t = mlirMemRefTypeGetChecked(loc, elt, rank, shape, mlirAttributeGetNull(),
                                   mlirAttributeGetNull());
    else
      t = mlirVectorTypeGetChecked(loc, rank, shape, elt);
    mlirContextDetachDiagnosticHandler(ctx, id);
    PyMem_Free(shape);
    return checked_type(a, t, &diag, kind);
  }
  return PyErr_Format(PyExc_ValueError, "unknown type kind '%s' or wrong arguments", kind);
}

static PyObject *fn_type_info(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *t;
  const char *what;
  if (!PyArg_ParseTuple(args, "Os", &t, &what)) return NULL;
  MlirType raw;
  tether_arena *a;
  if (!tp_arg_type(t, &raw, &a)) return NULL;
  if (!strcmp(what, "width") && mlirTypeIsAInteger(raw))
    return PyLong_FromUnsignedLong(mlirIntegerTypeGetWidth(raw));
  if (!strcmp(what, "signedness") && mlirTypeIsAInteger(raw))
    return PyUnicode_FromString(mlirIntegerTypeIsSigned(raw)     ? "signed"
                                : mlirIntegerTypeIsUnsigned(raw) ? "unsigned"
                                                                 : "signless");
  if (!strcmp(what, "shape") && mlirTypeIsAShaped(raw) && mlirShapedTypeHasRank(raw)) {
    intptr_t r = mlirShapedTypeGetRank(raw);
    PyObject *l = PyList_New(r);
    for (intptr_t i = 0; l && i < r; i++)
      PyList_SET_ITEM(l, i, PyLong_FromLongLong(mlirShapedTypeGetDimSize(raw, i)));
    return l;
  }
  if (!strcmp(what, "element_type") && mlirTypeIsAShaped(raw))
    return tp_wrap_type(a, mlirShapedTypeGetElementType(raw));
  if (!strcmp(what, "rank") && mlirTypeIsAShaped(raw) && mlirShapedTypeHasRank(raw))
    return PyLong_FromSsize_t(mlirShapedTypeGetRank(raw));
  if ((!strcmp(what, "inputs") || !strcmp(what, "results")) && mlirTypeIsAFunction(raw)) {
    int in = !strcmp(what, "inputs");
    intptr_t n = in ? mlirFunctionTypeGetNumInputs(raw) : mlirFunctionTypeGetNumResults(raw);
    PyObject *l = PyList_New(n);
    for (intptr_t i = 0; l && i < n; i++) {
      PyObject *e = tp_wrap_type(a, in ? mlirFunctionTypeGetInput(raw, i)
                                       : mlirFunctionTypeGetResult(raw, i));
      if (!e) {
        Py_CLEAR(l);
        break;
      }
      PyList_SET_ITEM(l, i, e);
    }
    return l;
  }
  return PyErr_Format(PyExc_ValueError, "this type has no '%s'", what);
}

static PyObject *fn_make_attr(PyObject *m, PyObject *args) {
  (void)m;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs < 2) return PyErr_Format(PyExc_TypeError, "_make_attr(ctx, kind, ...)");
  tether_arena *a;
  if (!tp_arg_context(PyTuple_GET_ITEM(args, 0), &a)) return NULL;
  MlirContext ctx = tether_arena_context(a);
  const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 1));
  if (!kind) return NULL;
  PyObject *x = nargs > 2 ? PyTuple_GET_ITEM(args, 2) : NULL;
  PyObject *y = nargs > 3 ? PyTuple_GET_ITEM(args, 3) : NULL;
  if (!strcmp(kind, "unit")) return tp_wrap_attr(a, mlirUnitAttrGet(ctx));
  if (!strcmp(kind, "bool") && x)
    return tp_wrap_attr(a, mlirBoolAttrGet(ctx, PyObject_IsTrue(x) == 1));
  if (!strcmp(kind, "string") && x) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(x, &n);
    if (!s) return NULL;
    return tp_wrap_attr(a, mlirStringAttrGet(ctx, (MlirStringRef){s, (size_t)n}));
  }
  if ((!strcmp(kind, "integer") || !strcmp(kind, "float")) && x && y) {
    MlirType t;
    tether_arena *ta;
    if (!tp_arg_type(x, &t, &ta)) return NULL;
    if (ta != a) return tp_raise(TETHER_ECONTEXT, NULL, NULL);
    if (!strcmp(kind, "integer")) {
      if (!PyLong_Check(y)) return tp_type_error("value", "an int", y);
      if (!mlirTypeIsAInteger(t) && !mlirTypeIsAIndex(t))
        return PyErr_Format(PyExc_ValueError, "IntegerAttr needs an integer or index type");
      long long v = PyLong_AsLongLong(y);
      if (v == -1 && PyErr_Occurred()) return NULL;
      return tp_wrap_attr(a, mlirIntegerAttrGet(t, v));
    }
    if (!PyFloat_Check(y) && !PyLong_Check(y)) return tp_type_error("value", "a float", y);
    if (!mlirTypeIsAFloat(t)) return PyErr_Format(PyExc_ValueError, "FloatAttr needs a float type");
    double v = PyFloat_AsDouble(y);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    return tp_wrap_attr(a, mlirFloatAttrDoubleGet(ctx, t, v));
  }
  if (!strcmp(kind, "type") && x) {
    MlirType t;
    tether_arena *ta;
    if (!tp_arg_type(x, &t, &ta)) return NULL;
    return tp_wrap_attr(ta, mlirTypeAttrGet(t));
  }
  if (!strcmp(kind, "dense_splat") && x && y) {
    MlirType t;
    MlirAttribute e;
    tether_arena *ta, *ea;
    if (!tp_arg_type(x, &t, &ta) || !tp_arg_attr(y, &e, &ea)) return NULL;
    if (ta != a || ea != a) return tp_raise(TETHER_ECONTEXT, NULL, NULL);
    if (!mlirTypeIsAShaped(t) || !mlirShapedTypeHasStaticShape(t))
      return PyErr_Format(PyExc_ValueError, "DenseElementsAttr needs a statically shaped type");
    if (!mlirTypeEqual(mlirAttributeGetType(e), mlirShapedTypeGetElementType(t)))
      return PyErr_Format(PyExc_ValueError, "the splat value's type is not the element type");
    return tp_wrap_attr(a, mlirDenseElementsAttrSplatGet(t, e));
  }
  if (!strcmp(kind, "flat_symbol_ref") && x) {
    Py_ssize_t n;
    const char *sym = PyUnicode_AsUTF8AndSize(x, &n);
    if (!sym) return NULL;
    return tp_wrap_attr(a, mlirFlatSymbolRefAttrGet(ctx, (MlirStringRef){sym, (size_t)n}));
  }
  if (!strcmp(kind, "dictionary") && x) {
    if (!PyDict_Check(x)) return tp_type_error("value", "a dict of str to Attribute", x);
    PyObject *items = PyDict_Items(x);
    if (!items) return NULL;
    Py_ssize_t k = PyList_GET_SIZE(items);
    MlirNamedAttribute *v = PyMem_Malloc((size_t)(k ? k : 1) * sizeof *v);
    if (!v) {
      Py_DECREF(items);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < k; i++) {
      PyObject *kv = PyList_GET_ITEM(items, i);
      PyObject *key = PyTuple_GET_ITEM(kv, 0);
      Py_ssize_t kl;
      const char *ks = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &kl) : NULL;
      MlirAttribute av;
      tether_arena *ea;
      if (!ks || !tp_arg_attr(PyTuple_GET_ITEM(kv, 1), &av, &ea) || ea != a) {
        if (!PyErr_Occurred()) {
          if (!ks)
            tp_type_error("key", "a str", key);
          else
            tp_raise(TETHER_ECONTEXT, NULL, NULL);
        }
        PyMem_Free(v);
        Py_DECREF(items);
        return NULL;
      }
      v[i] = mlirNamedAttributeGet(mlirIdentifierGet(ctx, (MlirStringRef){ks, (size_t)kl}), av);
    }
    MlirAttribute r = mlirDictionaryAttrGet(ctx, k, v);
    PyMem_Free(v);
    Py_DECREF(items);
    return tp_wrap_attr(a, r);
  }
  if (!strcmp(kind, "array") && x) {
    intptr_t k;
    MlirAttribute *v;
    if (!attrs_of(x, a, &k, &v)) return NULL;
    MlirAttribute r = mlirArrayAttrGet(ctx, k, v);
    PyMem_Free(v);
    return tp_wrap_attr(a, r);
  }
  return PyErr_Format(PyExc_ValueError, "unknown attribute kind '%s' or wrong arguments", kind);
}

static PyObject *fn_attr_info(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *t, *index = NULL;
  const char *what;
  if (!PyArg_ParseTuple(args, "Os|O", &t, &what, &index)) return NULL;
  MlirAttribute raw;
  tether_arena *a;
  if (!tp_arg_attr(t, &raw, &a)) return NULL;
  if (!strcmp(what, "value")) {
    if (mlirAttributeIsABool(raw)) return PyBool_FromLong(mlirBoolAttrGetValue(raw));
    if (mlirAttributeIsAInteger(raw)) {
      MlirType ty = mlirAttributeGetType(raw);
      if (mlirTypeIsAInteger(ty) && mlirIntegerTypeIsUnsigned(ty))
        return PyLong_FromUnsignedLongLong(mlirIntegerAttrGetValueUInt(raw));
      if (mlirTypeIsAInteger(ty) && mlirIntegerTypeIsSigned(ty))
        return PyLong_FromLongLong(mlirIntegerAttrGetValueSInt(raw));
      return PyLong_FromLongLong(mlirIntegerAttrGetValueInt(raw));
    }
    if (mlirAttributeIsAFloat(raw)) return PyFloat_FromDouble(mlirFloatAttrGetValueDouble(raw));
    if (mlirAttributeIsAString(raw)) {
      MlirStringRef s = mlirStringAttrGetValue(raw);
      return PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
    }
    if (mlirAttributeIsAType(raw)) return tp_wrap_type(a, mlirTypeAttrGetValue(raw));
    if (mlirAttributeIsAFlatSymbolRef(raw)) {
      MlirStringRef s = mlirFlatSymbolRefAttrGetValue(raw);
      return PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
    }
  }
  if (!strcmp(what, "is_splat") && mlirAttributeIsADenseElements(raw))
    return PyBool_FromLong(mlirDenseElementsAttrIsSplat(raw));
  if (!strcmp(what, "len") && mlirAttributeIsADictionary(raw))
    return PyLong_FromSsize_t(mlirDictionaryAttrGetNumElements(raw));
  if (!strcmp(what, "get") && mlirAttributeIsADictionary(raw) && index) {
    Py_ssize_t n;
    const char *key = PyUnicode_Check(index) ? PyUnicode_AsUTF8AndSize(index, &n) : NULL;
    if (!key) return tp_type_error("key", "a str", index);
    MlirAttribute e = mlirDictionaryAttrGetElementByName(raw, (MlirStringRef){key, (size_t)n});
    if (mlirAttributeIsNull(e)) {
      PyErr_SetObject(PyExc_KeyError, index);
      return NULL;
    }
    return tp_wrap_attr(a, e);
  }
  if (!strcmp(what, "len") && mlirAttributeIsAArray(raw))
    return PyLong_FromSsize_t(mlirArrayAttrGetNumElements(raw));
  if (!strcmp(what, "item") && mlirAttributeIsAArray(raw) && index) {
    Py_ssize_t i = PyNumber_AsSsize_t(index, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    intptr_t n = mlirArrayAttrGetNumElements(raw);
    if (i < 0) i += n;
    if (i < 0 || i >= n) return PyErr_Format(PyExc_IndexError, "ArrayAttr index out of range");
    return tp_wrap_attr(a, mlirArrayAttrGetElement(raw, i));
  }
  return PyErr_Format(PyExc_ValueError, "this attribute has no '%s'", what);
}

static PyObject *fn_make_loc(PyObject *m, PyObject *args) {
  (void)m;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  if (nargs < 2) return PyErr_Format(PyExc_TypeError, "_make_loc(ctx, kind, ...)");
  tether_arena *a;
  if (!tp_arg_context(PyTuple_GET_ITEM(args, 0), &a)) return NULL;
  MlirContext ctx = tether_arena_context(a);
  const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 1));
  if (!kind) return NULL;
  if (!strcmp(kind, "unknown")) return tp_wrap_loc(a, mlirLocationUnknownGet(ctx));
  if (!strcmp(kind, "file") && nargs == 5) {
    Py_ssize_t n;
    const char *f = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(args, 2), &n);
    if (!f) return NULL;
    long line = PyLong_AsLong(PyTuple_GET_ITEM(args, 3));
    long col = PyLong_AsLong(PyTuple_GET_ITEM(args, 4));
    if (PyErr_Occurred()) return NULL;
    return tp_wrap_loc(a, mlirLocationFileLineColGet(ctx, (MlirStringRef){f, (size_t)n},
                                                     (unsigned)line, (unsigned)col));
  }
  if (!strcmp(kind, "name") && nargs == 4) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(args, 2), &n);
    if (!s) return NULL;
    PyObject *child = PyTuple_GET_ITEM(args, 3);
    MlirLocation cl = mlirLocationUnknownGet(ctx);
    tether_arena *ca;
    if (child != Py_None && !tp_arg_loc(child, &cl, &ca)) return NULL;
    return tp_wrap_loc(a, mlirLocationNameGet(ctx, (MlirStringRef){s, (size_t)n}, cl));
  }
  if (!strcmp(kind, "callsite") && nargs == 4) {
    MlirLocation callee, caller;
    tether_arena *ea, *ra;
    if (!tp_arg_loc(PyTuple_GET_ITEM(args, 2), &callee, &ea) ||
        !tp_arg_loc(PyTuple_GET_ITEM(args, 3), &caller, &ra))
      return NULL;
    if (ea != a || ra != a) return tp_raise(TETHER_ECONTEXT, NULL, NULL);
    return tp_wrap_loc(a, mlirLocationCallSiteGet(callee, caller));
  }
  if (!strcmp(kind, "fused") && nargs == 3) {
    intptr_t k;
    MlirLocation *v;
    if (!locs_of(PyTuple_GET_ITEM(args, 2), a, &k, &v)) return NULL;
    MlirLocation r = mlirLocationFusedGet(ctx, k, v, mlirAttributeGetNull());
    PyMem_Free(v);
    return tp_wrap_loc(a, r);
  }
  return PyErr_Format(PyExc_ValueError, "unknown location kind '%s' or wrong arguments", kind);
}

/* Type._CAPICreate / Attribute._CAPICreate: a value another extension made, through the MLIR C
 * API's capsule convention. Its context must be one of tether's. */
static PyObject *fn_from_capsule(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *cap;
  int is_attr;
  if (!PyArg_ParseTuple(args, "Op", &cap, &is_attr)) return NULL;
  const char *name = is_attr ? "mlir.ir.Attribute._CAPIPtr" : "mlir.ir.Type._CAPIPtr";
  if (!PyCapsule_IsValid(cap, name))
    return PyErr_Format(PyExc_TypeError, "expected a capsule named %s", name);
  void *p = PyCapsule_GetPointer(cap, name);
  if (!p)
    return PyErr_Format(PyExc_ValueError, "the capsule holds a null %s",
                        is_attr ? "attribute" : "type");
  MlirContext ctx =
      is_attr ? mlirAttributeGetContext((MlirAttribute){p}) : mlirTypeGetContext((MlirType){p});
  tether_arena *a = tether_arena_of_context(ctx);
  if (!a)
    return PyErr_Format(PyExc_ValueError,
                        "the value belongs to a context that is not a tether Context");
  return is_attr ? tp_wrap_attr(a, (MlirAttribute){p}) : tp_wrap_type(a, (MlirType){p});
}

static PyObject *fn_type_typeid(PyObject *m, PyObject *t) {
  (void)m;
  MlirType raw;
  tether_arena *a;
  if (!tp_arg_type(t, &raw, &a)) return NULL;
  return PyLong_FromVoidPtr((void *)mlirTypeGetTypeID(raw).ptr);
}

PyMethodDef tp_type_functions[] = {
    {"_from_capsule", fn_from_capsule, METH_VARARGS, NULL},
    {"_type_typeid", fn_type_typeid, METH_O, NULL},
    {"_type_kind", fn_type_kind, METH_O, NULL},
    {"_attr_kind", fn_attr_kind, METH_O, NULL},
    {"_type_parse", fn_type_parse, METH_VARARGS, NULL},
    {"_attr_parse", fn_attr_parse, METH_VARARGS, NULL},
    {"_make_type", fn_make_type, METH_VARARGS, NULL},
    {"_type_info", fn_type_info, METH_VARARGS, NULL},
    {"_make_attr", fn_make_attr, METH_VARARGS, NULL},
    {"_attr_info", fn_attr_info, METH_VARARGS, NULL},
    {"_make_loc", fn_make_loc, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
