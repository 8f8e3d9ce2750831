/* interfaces.c: InferTypeOpInterface, InferShapedTypeOpInterface and ShapedTypeComponents
 * (upstream's IRInterfaces.cpp).
 *
 * Invariant: an interface object holds the operation (or the OpView class) it was made from; the
 * operands of an inference call are converted first (holding their wrappers), and their raw values
 * read from the handles right before the call.
 */
#include "ir.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Interfaces.h>
#include <string.h>

typedef struct {
  PyObject_HEAD PyObject *obj; /* what it was made from: an operation, or an OpView class */
  PyObject *op;                /* the Operation, or NULL for a static interface */
  PyObject *name;              /* the operation name (str) */
  PyObject *ctx;               /* the Context */
  int shaped;                  /* InferShapedTypeOpInterface */
} TpIface;

static tpy_sig infer_type_new_sig =
    TPY_SIG("InferTypeOpInterface(object: Any, context: Context | None = None)",
            "An operation or OpView class.");
static tpy_sig infer_shaped_new_sig =
    TPY_SIG("InferShapedTypeOpInterface(object: Any, context: Context | None = None)", NULL);

static PyObject *iface_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  int shaped = PyType_IsSubtype(type, tpy.InferShapedTypeOpInterface);
  const char *cls_name = shaped ? "InferShapedTypeOpInterface" : "InferTypeOpInterface";
  PyObject *a[2];
  if (!tpy_args(shaped ? &infer_shaped_new_sig : &infer_type_new_sig, args, kw, a, 2)) return NULL;
  PyObject *obj = a[0], *c = a[1] ? a[1] : Py_None;
  MlirTypeID iid =
      shaped ? mlirInferShapedTypeOpInterfaceTypeID() : mlirInferTypeOpInterfaceTypeID();
  PyObject *op = NULL, *name = NULL, *ctx = NULL;
  if (tpy_is(obj, tpy.OperationBase)) {
    tether_op *h;
    MlirOperation raw;
    if (!tpy_arg_op(obj, &h, &raw)) return NULL;
    if (!mlirOperationImplementsInterface(raw, iid))
      return PyErr_Format(PyExc_ValueError, "the operation does not implement %s", cls_name);
    MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(raw));
    name = tpy_str_from_ref(s);
    op = tpy_wrap_operation(h);
    ctx = tpy_context_of(tether_handle_arena(h));
  } else {
    name = PyObject_GetAttrString(obj, "OPERATION_NAME");
    if (!name || !PyUnicode_Check(name)) {
      Py_XDECREF(name);
      PyErr_Clear();
      return PyErr_Format(PyExc_TypeError,
                          "Op interface does not refer to an operation or OpView class");
    }
    TpContext *tc = tpy_resolve_context(c);
    if (!tc) {
      Py_DECREF(name);
      return NULL;
    }
    MlirStringRef s;
    if (!tpy_arg_str(name, "OPERATION_NAME", &s)) {
      Py_DECREF(name);
      return NULL;
    }
    if (!mlirOperationImplementsInterfaceStatic(s, tether_arena_context(tc->arena), iid)) {
      Py_DECREF(name);
      return PyErr_Format(PyExc_ValueError, "the operation does not implement %s", cls_name);
    }
    ctx = Py_NewRef(tc);
  }
  if (!name || !ctx || (tpy_is(obj, tpy.OperationBase) && !op)) {
    Py_XDECREF(name);
    Py_XDECREF(ctx);
    Py_XDECREF(op);
    return NULL;
  }
  TpIface *self = (TpIface *)type->tp_alloc(type, 0);
  if (!self) {
    Py_DECREF(name);
    Py_DECREF(ctx);
    Py_XDECREF(op);
    return NULL;
  }
  self->obj = Py_NewRef(obj);
  self->op = op;
  self->name = name;
  self->ctx = ctx;
  self->shaped = shaped;
  return (PyObject *)self;
}

static int iface_traverse(TpIface *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->obj);
  Py_VISIT(self->op);
  Py_VISIT(self->name);
  Py_VISIT(self->ctx);
  return 0;
}

static int iface_clear(TpIface *self) {
  Py_CLEAR(self->obj);
  Py_CLEAR(self->op);
  Py_CLEAR(self->name);
  Py_CLEAR(self->ctx);
  return 0;
}

static PyObject *iface_operation(TpIface *self, void *c) {
  (void)c;
  if (!self->op)
    return PyErr_Format(PyExc_TypeError, "Cannot get an operation from a static interface");
  return Py_NewRef(self->op);
}

static PyObject *iface_opview(TpIface *self, void *c) {
  (void)c;
  if (!self->op)
    return PyErr_Format(PyExc_TypeError, "Cannot get an opview from a static interface");
  return PyObject_GetAttrString(self->op, "opview");
}

/* Operands: Values, sequences of Values, None (skipped), as upstream's wrapOperands. The
 * wrappers are kept in `keep`; the handles in *out (PyMem). */
static int collect_operands(PyObject *list, PyObject *keep, tether_value ***out, intptr_t *n) {
  *out = NULL;
  *n = 0;
  if (!list || list == Py_None) return 1;
  PyObject *f = tpy_seq_fast(list, "operands must be a list");
  if (!f) return 0;
  Py_ssize_t cap = 8, k = 0;
  tether_value **v = PyMem_Malloc((size_t)cap * sizeof *v);
  if (!v) {
    Py_DECREF(f);
    PyErr_NoMemory();
    return 0;
  }
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(f); i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(f, i);
    if (item == Py_None) continue;
    PyObject *seq = tpy_is(item, tpy.Value) ? PyTuple_Pack(1, item) : tpy_seq_fast(item, "");
    if (!seq) {
      PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "Operand %zd must be a Value or Sequence of Values", i);
      goto fail;
    }
    for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(seq); j++) {
      PyObject *x = PySequence_Fast_GET_ITEM(seq, j);
      MlirValue raw;
      if (k == cap) {
        cap *= 2;
        tether_value **nv = PyMem_Realloc(v, (size_t)cap * sizeof *nv);
        if (!nv) {
          Py_DECREF(seq);
          PyErr_NoMemory();
          goto fail;
        }
        v = nv;
      }
      if (!tpy_is(x, tpy.Value) || !tpy_arg_value(x, &v[k], &raw) || PyList_Append(keep, x) < 0) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
          PyErr_Clear();
          PyErr_Format(PyExc_ValueError, "Operand %zd must be a Value or Sequence of Values", i);
        }
        Py_DECREF(seq);
        goto fail;
      }
      k++;
    }
    Py_DECREF(seq);
  }
  Py_DECREF(f);
  *out = v;
  *n = k;
  return 1;
fail:
  Py_DECREF(f);
  PyMem_Free(v);
  return 0;
}

typedef struct {
  PyObject *ctx, *list;
  int failed;
} infer_out;

static void append_types(intptr_t n, MlirType *types, void *user) {
  infer_out *o = user;
  for (intptr_t i = 0; i < n && !o->failed; i++) {
    /* Plain Types, as upstream's (a std::vector<PyType> there: no downcast). */
    PyObject *t = tpy_ctxobj_new(tpy.Type, o->ctx, types[i].ptr);
    if (!t || PyList_Append(o->list, t) < 0) o->failed = 1;
    Py_XDECREF(t);
  }
}

static PyObject *components_make(PyObject *shape, PyObject *elt, PyObject *attr);

static void append_components(bool has_rank, intptr_t rank, const int64_t *shape, MlirType elt,
                              MlirAttribute attr, void *user) {
  infer_out *o = user;
  if (o->failed) return;
  PyObject *s = NULL;
  if (has_rank) {
    s = PyList_New(rank);
    for (intptr_t i = 0; s && i < rank; i++) PyList_SET_ITEM(s, i, PyLong_FromLongLong(shape[i]));
    if (!s) {
      o->failed = 1;
      return;
    }
  }
  PyObject *e = tpy_wrap_type(o->ctx, elt);
  PyObject *a = mlirAttributeIsNull(attr) ? Py_NewRef(Py_None) : tpy_wrap_attr(o->ctx, attr);
  PyObject *c = e && a ? components_make(s ? s : Py_None, e, a) : NULL;
  if (!c || PyList_Append(o->list, c) < 0) o->failed = 1;
  Py_XDECREF(c);
  Py_XDECREF(e);
  Py_XDECREF(a);
  Py_XDECREF(s);
}

/* inferReturnTypes and inferReturnTypeComponents: the same parameters. */
#define INFER_PARAMS                                                                               \
  "(operands: Sequence[Value] | None = None, attributes: Attribute | None = None, "                \
  "properties: Any = None, regions: Sequence[Region] | None = None, "                              \
  "context: Context | None = None, loc: Location | None = None)"
static tpy_sig iface_infer_sig = TPY_SIG("inferReturnTypes" INFER_PARAMS " -> list[Type]",
                                         "The result types the operation would have.");
static tpy_sig iface_infer_shaped_sig =
    TPY_SIG("inferReturnTypeComponents" INFER_PARAMS " -> list[ShapedTypeComponents]",
            "ShapedTypeComponents of the results.");

static PyObject *iface_infer(TpIface *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  PyObject *a[6];
  if (!tpy_fastargs(self->shaped ? &iface_infer_shaped_sig : &iface_infer_sig, args, nargs, kwnames,
                    a, 6))
    return NULL;
  PyObject *ops = a[0] ? a[0] : Py_None, *attrs = a[1] ? a[1] : Py_None,
           *props = a[2] ? a[2] : Py_None, *regions = a[3] ? a[3] : Py_None,
           *c = a[4] ? a[4] : Py_None, *loc = a[5] ? a[5] : Py_None;
  if (props != Py_None)
    return PyErr_Format(PyExc_NotImplementedError,
                        "properties are not supported (pass attributes instead)");
  TpContext *ctx = c == Py_None ? (TpContext *)self->ctx : tpy_resolve_context(c);
  if (!ctx) return NULL;
  PyObject *lo = tpy_resolve_loc(loc);
  if (!lo) return NULL;
  MlirAttribute dict = mlirAttributeGetNull();
  if (attrs != Py_None && !tpy_arg_attr_in(attrs, (PyObject *)ctx, &dict)) return NULL;
  PyObject *keep = PyList_New(0);
  if (!keep) return NULL;
  tether_value **vh = NULL;
  intptr_t nv = 0;
  MlirRegion *rg = NULL;
  MlirValue *vals = NULL;
  Py_ssize_t nr = 0;
  PyObject *result = NULL;
  if (!collect_operands(ops, keep, &vh, &nv)) goto done;
  if (regions != Py_None) {
    PyObject *f = tpy_seq_fast(regions, "regions must be a list of Region");
    if (!f) goto done;
    nr = PySequence_Fast_GET_SIZE(f);
    rg = PyMem_Malloc((size_t)(nr ? nr : 1) * sizeof *rg);
    int ok = rg != NULL;
    for (Py_ssize_t i = 0; ok && i < nr; i++) {
      tether_region *rh;
      ok = tpy_arg_region(PySequence_Fast_GET_ITEM(f, i), &rh, &rg[i]) &&
           PyList_Append(keep, PySequence_Fast_GET_ITEM(f, i)) == 0;
    }
    Py_DECREF(f);
    if (!ok) {
      if (!PyErr_Occurred()) PyErr_NoMemory();
      goto done;
    }
  }
  vals = PyMem_Malloc((size_t)(nv ? nv : 1) * sizeof *vals);
  if (!vals) {
    PyErr_NoMemory();
    goto done;
  }
  for (intptr_t i = 0; i < nv; i++) {
    int rc = tether_value_get(vh[i], &vals[i]);
    if (rc != TETHER_OK) {
      TPY_RAISE_RC(rc, vh[i]);
      goto done;
    }
    if (tether_handle_arena(vh[i]) != ctx->arena) {
      PyErr_SetString(PyExc_ValueError, "objects of different contexts cannot be mixed");
      goto done;
    }
  }
  MlirStringRef name;
  if (!tpy_arg_str(self->name, "name", &name)) goto done;
  infer_out out = {(PyObject *)ctx, PyList_New(0), 0};
  if (!out.list) goto done;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, ctx);
  tether_infer_call call = {tether_arena_context(ctx->arena),
                            name,
                            (MlirLocation){TPY_PTR(lo)},
                            nv,
                            vals,
                            dict,
                            nr,
                            rg,
                            self->shaped};
  int rc = tether_infer(&call, append_types, append_components, &out);
  PyObject *errs = tpy_errcap_end(&cap);
  if (rc == TETHER_EARG && !PyErr_Occurred()) {
    /* Refused: inference would crash; the diagnostic says so. */
    PyObject *msg = errs && PyList_GET_SIZE(errs) ? PyObject_Str(PyList_GET_ITEM(errs, 0)) : NULL;
    PyErr_Format(PyExc_ValueError, "%s: %S",
                 self->shaped ? "Failed to infer result shape type components"
                              : "Failed to infer result types",
                 msg ? msg : Py_None);
    Py_XDECREF(msg);
  }
  Py_XDECREF(errs);
  if (out.failed || rc != TETHER_OK) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, self->shaped
                                            ? "Failed to infer result shape type components"
                                            : "Failed to infer result types");
    Py_DECREF(out.list);
    goto done;
  }
  result = out.list;
done:
  PyMem_Free(vh);
  PyMem_Free(rg);
  PyMem_Free(vals);
  Py_DECREF(keep);
  return result;
}

static PyMethodDef infer_type_methods[] = {
    {"inferReturnTypes", TPY_FASTFN(iface_infer), TPY_FAST, TPY_DOC(iface_infer_sig)},
    TPY_METHODS_END,
};

static PyMethodDef infer_shaped_methods[] = {
    {"inferReturnTypeComponents", TPY_FASTFN(iface_infer), TPY_FAST,
     TPY_DOC(iface_infer_shaped_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef iface_getset[] = {
    {"operation", (getter)iface_operation, NULL, TPY_PROP("Operation", NULL), NULL},
    {"opview", (getter)iface_opview, NULL, TPY_PROP("OpView", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot infer_type_slots[] = {
    {Py_tp_new, iface_new},
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, iface_traverse},
    {Py_tp_clear, iface_clear},
    {Py_tp_methods, infer_type_methods},
    {Py_tp_getset, iface_getset},
    {Py_tp_doc, TPY_DOC(infer_type_new_sig)},
    {0, NULL},
};

static PyType_Slot infer_shaped_slots[] = {
    {Py_tp_new, iface_new},
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, iface_traverse},
    {Py_tp_clear, iface_clear},
    {Py_tp_methods, infer_shaped_methods},
    {Py_tp_getset, iface_getset},
    {Py_tp_doc, TPY_DOC(infer_shaped_new_sig)},
    {0, NULL},
};

static PyType_Spec infer_type_spec = {"tether.ir.InferTypeOpInterface", sizeof(TpIface), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, infer_type_slots};
static PyType_Spec infer_shaped_spec = {"tether.ir.InferShapedTypeOpInterface", sizeof(TpIface), 0,
                                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
                                        infer_shaped_slots};

/* ---- ShapedTypeComponents -------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD PyObject *shape; /* list of int, or None when unranked */
  PyObject *element_type, *attribute;
} TpComponents;

static PyObject *components_make(PyObject *shape, PyObject *elt, PyObject *attr) {
  TpComponents *c = PyObject_GC_New(TpComponents, tpy.ShapedTypeComponents);
  if (!c) return NULL;
  c->shape = Py_NewRef(shape);
  c->element_type = Py_NewRef(elt);
  c->attribute = Py_NewRef(attr);
  PyObject_GC_Track(c);
  return (PyObject *)c;
}

static tpy_sig components_get_sig1 =
    TPY_SIG("get(shape: list[int], element_type: Type, attribute: Attribute | None = None) "
            "-> ShapedTypeComponents",
            NULL);
static tpy_sig components_get_sig =
    TPY_SIG_OR("get(element_type: Type) -> ShapedTypeComponents", NULL, &components_get_sig1);

/* get(element_type) / get(shape, element_type) / get(shape, element_type, attribute) */
static PyObject *components_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)cls;
  PyObject *x[3];
  if (nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0) == 1) {
    if (!tpy_fastargs(&components_get_sig, args, nargs, kwnames, x, 1)) return NULL;
    if (!tpy_is(x[0], tpy.Type)) return tpy_type_error("element_type", "a Type", x[0]);
    return components_make(Py_None, x[0], Py_None);
  }
  if (!tpy_fastargs(&components_get_sig1, args, nargs, kwnames, x, 3)) return NULL;
  PyObject *a = x[0], *b = x[1], *d = x[2];
  if (!PyList_Check(a)) return tpy_type_error("shape", "a list", a);
  if (!tpy_is(b, tpy.Type)) return tpy_type_error("element_type", "a Type", b);
  if (d && !tpy_is(d, tpy.Attribute)) return tpy_type_error("attribute", "an Attribute", d);
  PyObject *shape = PySequence_List(a);
  if (!shape) return NULL;
  PyObject *r = components_make(shape, b, d ? d : Py_None);
  Py_DECREF(shape);
  return r;
}

static int components_traverse(TpComponents *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->shape);
  Py_VISIT(self->element_type);
  Py_VISIT(self->attribute);
  return 0;
}

static int components_clear(TpComponents *self) {
  Py_CLEAR(self->shape);
  Py_CLEAR(self->element_type);
  Py_CLEAR(self->attribute);
  return 0;
}

static PyObject *components_element_type(TpComponents *self, void *c) {
  (void)c;
  return Py_NewRef(self->element_type);
}

static PyObject *components_has_rank(TpComponents *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->shape != Py_None);
}

static PyObject *components_rank(TpComponents *self, void *c) {
  (void)c;
  if (self->shape == Py_None) Py_RETURN_NONE;
  return PyLong_FromSsize_t(PyList_GET_SIZE(self->shape));
}

static PyObject *components_shape(TpComponents *self, void *c) {
  (void)c;
  if (self->shape == Py_None) Py_RETURN_NONE;
  return PySequence_List(self->shape);
}

static PyMethodDef components_methods[] = {
    {"get", TPY_FASTFN(components_get), TPY_FAST | METH_STATIC, TPY_DOC(components_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef components_getset[] = {
    {"element_type", (getter)components_element_type, NULL, TPY_PROP("Type", NULL), NULL},
    {"has_rank", (getter)components_has_rank, NULL, TPY_PROP("bool", NULL), NULL},
    {"rank", (getter)components_rank, NULL, TPY_PROP("int", NULL), NULL},
    {"shape", (getter)components_shape, NULL, TPY_PROP("list[int]", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot components_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, components_traverse},
    {Py_tp_clear, components_clear},
    {Py_tp_methods, components_methods},
    {Py_tp_getset, components_getset},
    {Py_tp_doc, "Shape, element type and attribute."},
    {0, NULL},
};

static PyType_Spec components_spec = {
    "tether.ir.ShapedTypeComponents", sizeof(TpComponents), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, components_slots};

int tpy_init_interfaces(PyObject *m) {
  if (tpy_add_type(m, &infer_type_spec, NULL, &tpy.InferTypeOpInterface) < 0 ||
      tpy_add_type(m, &infer_shaped_spec, NULL, &tpy.InferShapedTypeOpInterface) < 0 ||
      tpy_add_type(m, &components_spec, NULL, &tpy.ShapedTypeComponents) < 0)
    return -1;
  return 0;
}
