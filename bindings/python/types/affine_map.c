/* affine_map.c: AffineMap (upstream's IRAffine.cpp), its results (AffineExprList, a read-only
 * sequence IntegerSet's constraints share), and AffineMapAttr.
 *
 * Invariant: everything that indexes into a map (result positions, sub-map sizes, permutations,
 * the dimensions and symbols of the expressions a map is built from or replaced with) is checked
 * before the C API sees it: MLIR asserts on those.
 */
#include "types.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>

#define M(o) ((MlirAffineMap){TPY_PTR(o)})

/* ---- read-only lists (AffineExprList; IntegerSetConstraintList uses the same) ---------------- */

typedef struct {
  PyObject_HEAD PyObject *owner;                    /* AffineMap or IntegerSet */
  PyObject *(*item)(PyObject *owner, intptr_t pos); /* element pos of the owner */
  Py_ssize_t start, step, length;
} TpAffineList;

static PyObject *alist_new(PyTypeObject *t, PyObject *owner,
                           PyObject *(*item)(PyObject *owner, intptr_t pos), Py_ssize_t start,
                           Py_ssize_t step, Py_ssize_t length) {
  TpAffineList *l = PyObject_GC_New(TpAffineList, t);
  if (!l) return NULL;
  l->owner = Py_NewRef(owner);
  l->item = item;
  l->start = start;
  l->step = step;
  l->length = length;
  PyObject_GC_Track(l);
  return (PyObject *)l;
}

PyObject *tpy_affine_list_new(PyTypeObject *type, PyObject *owner,
                              PyObject *(*item)(PyObject *owner, intptr_t pos), Py_ssize_t length) {
  return alist_new(type, owner, item, 0, 1, length);
}

static int alist_traverse(TpAffineList *l, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(l));
  Py_VISIT(l->owner);
  return 0;
}

static int alist_clear(TpAffineList *l) {
  Py_CLEAR(l->owner);
  return 0;
}

static Py_ssize_t alist_len(TpAffineList *l) { return l->length; }

static PyObject *alist_item(TpAffineList *l, Py_ssize_t i) {
  if (i < 0 || i >= l->length) return PyErr_Format(PyExc_IndexError, "index out of range");
  return l->item(l->owner, l->start + i * l->step);
}

static PyObject *alist_subscript(TpAffineList *l, PyObject *key) {
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t k = PySlice_AdjustIndices(l->length, &start, &stop, step);
    return alist_new(Py_TYPE(l), l->owner, l->item, l->start + start * l->step, step * l->step, k);
  }
  Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0) i += l->length;
  return alist_item(l, i);
}

static PyType_Slot alist_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, alist_traverse},
    {Py_tp_clear, alist_clear},
    {Py_sq_length, alist_len},
    {Py_sq_item, alist_item},
    {Py_mp_length, alist_len},
    {Py_mp_subscript, alist_subscript},
    {Py_nb_add, tpy_concat_as_lists},
    {0, NULL},
};

int tpy_affine_list_type(PyObject *m, const char *name, PyTypeObject **out) {
  PyType_Spec spec = {name, sizeof(TpAffineList), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                      alist_slots};
  return tpy_add_type(m, &spec, NULL, out);
}

/* ---- AffineMap ------------------------------------------------------------------------------- */

PyObject *tpy_wrap_affine_map(PyObject *ctx, MlirAffineMap m) {
  if (mlirAffineMapIsNull(m)) Py_RETURN_NONE;
  return tpy_ctxobj_new(tpy.AffineMap, ctx, m.ptr);
}

static PyObject *map_str(PyObject *self) {
  tpy_strbuf b = {0};
  mlirAffineMapPrint(M(self), tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *map_repr(PyObject *self) { return tpy_ctxobj_repr(self, "AffineMap"); }

static tpy_sig map_get_sig =
    TPY_SIG("get(dim_count: int, symbol_count: int, exprs: Sequence[AffineExpr], context: Context "
            "| None = None) -> AffineMap",
            NULL);

static PyObject *map_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  PyObject *a[4];
  if (!tpy_fastargs(&map_get_sig, args, nargs, kw, a, 4)) return NULL;
  intptr_t nd, ns, n;
  if (!tpy_affine_arg_count(a[0], "dim_count", &nd) ||
      !tpy_affine_arg_count(a[1], "symbol_count", &ns))
    return NULL;
  PyObject *ctx = tpy_context_arg(a[3]);
  if (!ctx) return NULL;
  MlirAffineExpr *v;
  if (!tpy_affine_exprs_of(a[2], ctx, nd, ns, "attempting to create an AffineMap", &n, &v))
    return NULL;
  MlirAffineMap m = mlirAffineMapGet(tpy_ctx_raw(ctx), nd, ns, n, v);
  PyMem_Free(v);
  return tpy_wrap_affine_map(ctx, m);
}

static tpy_sig map_get_constant_sig =
    TPY_SIG("get_constant(value: int, context: Context | None = None) -> AffineMap", NULL);

static PyObject *map_get_constant(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&map_get_constant_sig, args, nargs, kw, a, 2)) return NULL;
  int64_t v;
  if (!tpy_arg_int64(a[0], "value", &v)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  return tpy_wrap_affine_map(ctx, mlirAffineMapConstantGet(tpy_ctx_raw(ctx), v));
}

static tpy_sig map_get_empty_sig =
    TPY_SIG("get_empty(context: Context | None = None) -> AffineMap", NULL);

static PyObject *map_get_empty(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kw) {
  (void)cls;
  PyObject *a[1];
  if (!tpy_fastargs(&map_get_empty_sig, args, nargs, kw, a, 1)) return NULL;
  PyObject *ctx = tpy_context_arg(a[0]);
  if (!ctx) return NULL;
  return tpy_wrap_affine_map(ctx, mlirAffineMapEmptyGet(tpy_ctx_raw(ctx)));
}

static tpy_sig map_get_identity_sig =
    TPY_SIG("get_identity(n_dims: int, context: Context | None = None) -> AffineMap", NULL);

static PyObject *map_get_identity(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&map_get_identity_sig, args, nargs, kw, a, 2)) return NULL;
  intptr_t n;
  if (!tpy_affine_arg_count(a[0], "n_dims", &n)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  return tpy_wrap_affine_map(ctx, mlirAffineMapMultiDimIdentityGet(tpy_ctx_raw(ctx), n));
}

static tpy_sig map_get_minor_identity_sig = TPY_SIG(
    "get_minor_identity(n_dims: int, n_results: int, context: Context | None = None) -> AffineMap",
    NULL);

static PyObject *map_get_minor_identity(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kw) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&map_get_minor_identity_sig, args, nargs, kw, a, 3)) return NULL;
  intptr_t nd, nr;
  if (!tpy_affine_arg_count(a[0], "n_dims", &nd) || !tpy_affine_arg_count(a[1], "n_results", &nr))
    return NULL;
  if (nr > nd) return PyErr_Format(PyExc_ValueError, "n_results must be <= n_dims");
  PyObject *ctx = tpy_context_arg(a[2]);
  if (!ctx) return NULL;
  return tpy_wrap_affine_map(ctx, mlirAffineMapMinorIdentityGet(tpy_ctx_raw(ctx), nd, nr));
}

static tpy_sig map_get_permutation_sig = TPY_SIG(
    "get_permutation(permutation: Sequence[int], context: Context | None = None) -> AffineMap",
    NULL);

static PyObject *map_get_permutation(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kw) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&map_get_permutation_sig, args, nargs, kw, a, 2)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  PyObject *f = tpy_seq_fast(a[0], "permutation must be a sequence of int");
  if (!f) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  unsigned *p = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *p);
  char *seen = PyMem_Calloc((size_t)(n ? n : 1), 1);
  PyObject *r = NULL;
  if (!p || !seen) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    intptr_t v;
    if (!tpy_arg_intptr(PySequence_Fast_GET_ITEM(f, i), "permutation element", &v)) goto done;
    if (v < 0 || v >= n || seen[v]) {
      PyErr_SetString(tpy.CastError, "Invalid permutation when attempting to create an AffineMap");
      goto done;
    }
    seen[v] = 1;
    p[i] = (unsigned)v;
  }
  /* MLIR takes the largest element as the number of dimensions (undefined with none: it hung):
   * the permutation of nothing is the map of no dimensions. */
  r = tpy_wrap_affine_map(ctx, n ? mlirAffineMapPermutationGet(tpy_ctx_raw(ctx), n, p)
                                 : mlirAffineMapEmptyGet(tpy_ctx_raw(ctx)));
done:
  PyMem_Free(p);
  PyMem_Free(seen);
  Py_DECREF(f);
  return r;
}

static PyObject *map_get_submap(PyObject *self, PyObject *positions) {
  PyObject *f = tpy_seq_fast(positions, "result_positions must be a sequence of int");
  if (!f) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  intptr_t nr = mlirAffineMapGetNumResults(M(self));
  intptr_t *p = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *p);
  PyObject *r = NULL;
  if (!p) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!tpy_arg_intptr(PySequence_Fast_GET_ITEM(f, i), "result position", &p[i])) goto done;
    if (p[i] < 0 || p[i] >= nr) {
      PyErr_SetString(PyExc_ValueError, "result position out of bounds");
      goto done;
    }
  }
  r = tpy_wrap_affine_map(TPY_CTX(self), mlirAffineMapGetSubMap(M(self), n, p));
done:
  PyMem_Free(p);
  Py_DECREF(f);
  return r;
}

static PyObject *map_major_minor(PyObject *self, PyObject *o, int major) {
  intptr_t n;
  if (!tpy_arg_intptr(o, "n_results", &n)) return NULL;
  if (n < 0 || n >= mlirAffineMapGetNumResults(M(self)))
    return PyErr_Format(PyExc_ValueError, "number of results out of bounds");
  return tpy_wrap_affine_map(TPY_CTX(self), major ? mlirAffineMapGetMajorSubMap(M(self), n)
                                                  : mlirAffineMapGetMinorSubMap(M(self), n));
}

static PyObject *map_get_major_submap(PyObject *self, PyObject *o) {
  return map_major_minor(self, o, 1);
}
static PyObject *map_get_minor_submap(PyObject *self, PyObject *o) {
  return map_major_minor(self, o, 0);
}

static tpy_sig map_replace_sig = TPY_SIG("replace(expr: AffineExpr, replacement: AffineExpr, "
                                         "n_result_dims: int, n_result_syms: int) -> AffineMap",
                                         NULL);

static PyObject *map_replace(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  PyObject *a[4];
  if (!tpy_fastargs(&map_replace_sig, args, nargs, kwnames, a, 4)) return NULL;
  PyObject *e = a[0], *r = a[1], *nd_o = a[2], *ns_o = a[3];
  MlirAffineExpr ee, re;
  intptr_t nd, ns;
  if (!tpy_arg_affine_expr(e, TPY_CTX(self), &ee) || !tpy_arg_affine_expr(r, TPY_CTX(self), &re) ||
      !tpy_affine_arg_count(nd_o, "n_result_dims", &nd) ||
      !tpy_affine_arg_count(ns_o, "n_result_syms", &ns))
    return NULL;
  /* The result map must hold what its results use. */
  MlirAffineMap m = mlirAffineMapReplace(M(self), ee, re, nd, ns);
  intptr_t d = -1, s = -1;
  for (intptr_t i = 0; i < mlirAffineMapGetNumResults(m); i++)
    tpy_affine_max_positions(mlirAffineMapGetResult(m, i), &d, &s);
  if (d >= nd || s >= ns)
    return PyErr_Format(PyExc_ValueError,
                        "the replaced map uses more dimensions or symbols than n_result_dims / "
                        "n_result_syms");
  return tpy_wrap_affine_map(TPY_CTX(self), m);
}

typedef struct {
  PyObject *ctx, *list;
  int failed;
} compress_out;

static void compress_cb(void *user, intptr_t idx, MlirAffineMap m) {
  compress_out *o = user;
  if (o->failed) return;
  PyObject *x = tpy_wrap_affine_map(o->ctx, m);
  if (!x) {
    o->failed = 1;
    return;
  }
  PyList_SET_ITEM(o->list, idx, x);
}

static tpy_sig map_compress_sig =
    TPY_SIG("compress_unused_symbols(affine_maps: Sequence[AffineMap], context: Context | None = "
            "None) -> list[AffineMap]",
            NULL);

static PyObject *map_compress(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kw) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&map_compress_sig, args, nargs, kw, a, 2)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  PyObject *f = tpy_seq_fast(a[0], "affine_maps must be a list of AffineMap");
  if (!f) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  MlirAffineMap *v = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *v);
  compress_out o = {ctx, PyList_New(n), 0};
  PyObject *r = NULL;
  if (!v || !o.list) {
    if (!PyErr_Occurred()) PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = PySequence_Fast_GET_ITEM(f, i);
    if (!tpy_is(x, tpy.AffineMap)) {
      PyErr_SetString(tpy.CastError, "Invalid expression when attempting to create an AffineMap");
      goto done;
    }
    v[i] = M(x);
  }
  mlirAffineMapCompressUnusedSymbols(v, n, &o, compress_cb);
  if (o.failed) goto done;
  for (Py_ssize_t i = 0; i < n; i++)
    if (!PyList_GET_ITEM(o.list, i)) goto done;
  r = Py_NewRef(o.list);
done:
  PyMem_Free(v);
  Py_XDECREF(o.list);
  Py_DECREF(f);
  return r;
}

#define MAP_INT(fn, cfn)                                                                           \
  static PyObject *fn(PyObject *self, void *c) {                                                   \
    (void)c;                                                                                       \
    return PyLong_FromSsize_t(cfn(M(self)));                                                       \
  }
MAP_INT(map_n_dims, mlirAffineMapGetNumDims)
MAP_INT(map_n_inputs, mlirAffineMapGetNumInputs)
MAP_INT(map_n_symbols, mlirAffineMapGetNumSymbols)

static PyObject *map_is_permutation(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirAffineMapIsPermutation(M(self)));
}

static PyObject *map_is_projected(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirAffineMapIsProjectedPermutation(M(self)));
}

/* map.results[pos] */
static PyObject *map_result(PyObject *self, intptr_t pos) {
  return tpy_wrap_affine_expr(TPY_CTX(self), mlirAffineMapGetResult(M(self), pos));
}

static PyObject *map_results(PyObject *self, void *c) {
  (void)c;
  return tpy_affine_list_new(tpy.AffineExprList, self, map_result,
                             mlirAffineMapGetNumResults(M(self)));
}

static PyObject *map_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirAffineMapDump(M(self));
  Py_RETURN_NONE;
}

static PyObject *map_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.AffineMap)) return tpy_wrap_affine_map(TPY_CTX(owner), M(owner));
  void *p = tpy_capsule_pointer(cap, "mlir.ir.AffineMap._CAPIPtr");
  if (!p) return NULL;
  tether_arena *ar = tpy_arena_for_capsule(mlirAffineMapGetContext((MlirAffineMap){p}));
  if (!ar) return NULL;
  PyObject *ctx = tpy_context_of(ar);
  PyObject *r = ctx ? tpy_wrap_affine_map(ctx, (MlirAffineMap){p}) : NULL;
  Py_XDECREF(ctx);
  return r;
}

static PyMethodDef map_methods[] = {
    {"get", TPY_FASTFN(map_get), TPY_FAST | METH_STATIC, TPY_DOC(map_get_sig)},
    {"get_constant", TPY_FASTFN(map_get_constant), TPY_FAST | METH_STATIC,
     TPY_DOC(map_get_constant_sig)},
    {"get_empty", TPY_FASTFN(map_get_empty), TPY_FAST | METH_STATIC, TPY_DOC(map_get_empty_sig)},
    {"get_identity", TPY_FASTFN(map_get_identity), TPY_FAST | METH_STATIC,
     TPY_DOC(map_get_identity_sig)},
    {"get_minor_identity", TPY_FASTFN(map_get_minor_identity), TPY_FAST | METH_STATIC,
     TPY_DOC(map_get_minor_identity_sig)},
    {"get_permutation", TPY_FASTFN(map_get_permutation), TPY_FAST | METH_STATIC,
     TPY_DOC(map_get_permutation_sig)},
    {"compress_unused_symbols", TPY_FASTFN(map_compress), TPY_FAST | METH_STATIC,
     TPY_DOC(map_compress_sig)},
    {"get_submap", (PyCFunction)map_get_submap, METH_O,
     TPY_SIGDOC("get_submap(result_positions: Sequence[int], /) -> AffineMap", NULL)},
    {"get_major_submap", (PyCFunction)map_get_major_submap, METH_O,
     TPY_SIGDOC("get_major_submap(n_results: int, /) -> AffineMap", NULL)},
    {"get_minor_submap", (PyCFunction)map_get_minor_submap, METH_O,
     TPY_SIGDOC("get_minor_submap(n_results: int, /) -> AffineMap", NULL)},
    {"replace", TPY_FASTFN(map_replace), TPY_FAST, TPY_DOC(map_replace_sig)},
    {"_CAPICreate", (PyCFunction)map_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> AffineMap", NULL)},
    {"dump", (PyCFunction)map_dump, METH_NOARGS,
     TPY_SIGDOC("dump() -> None", "Prints the map to stderr.")},
    TPY_METHODS_END,
};

static PyGetSetDef map_getset[] = {
    {"context", tpy_ctxobj_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"n_dims", map_n_dims, NULL, TPY_PROP("int", NULL), NULL},
    {"n_inputs", map_n_inputs, NULL, TPY_PROP("int", NULL), NULL},
    {"n_symbols", map_n_symbols, NULL, TPY_PROP("int", NULL), NULL},
    {"is_permutation", map_is_permutation, NULL, TPY_PROP("bool", NULL), NULL},
    {"is_projected_permutation", map_is_projected, NULL, TPY_PROP("bool", NULL), NULL},
    {"results", map_results, NULL,
     TPY_PROP("AffineExprList", "The result expressions (AffineExprList)."), NULL},
    {"_CAPIPtr", tpy_ctxobj_capsule, NULL, TPY_PROP("object", NULL), "mlir.ir.AffineMap._CAPIPtr"},
    TPY_GETSET_END,
};

static PyType_Slot map_slots[] = {
    {Py_tp_new, tpy_affine_new_refused},
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_str, map_str},
    {Py_tp_repr, map_repr},
    {Py_tp_richcompare, tpy_ctxobj_richcompare},
    {Py_tp_hash, tpy_ctxobj_hash},
    {Py_tp_methods, map_methods},
    {Py_tp_getset, map_getset},
    {Py_tp_doc, "An affine map."},
    {0, NULL},
};

static PyType_Spec map_spec = {"tether.ir.AffineMap", sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT,
                               map_slots};

/* ---- AffineMapAttr --------------------------------------------------------------------------- */

TPY_ISA(MlirAttribute, mlirAttributeIsAAffineMap)

static PyObject *map_attr_get(PyObject *cls, PyObject *map) {
  (void)cls;
  if (!tpy_is(map, tpy.AffineMap)) return tpy_type_error("affine_map", "an AffineMap", map);
  return tpy_wrap_attr(TPY_CTX(map), mlirAffineMapAttrGet(M(map)));
}

static PyObject *map_attr_value(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_affine_map(TPY_CTX(self),
                             mlirAffineMapAttrGetValue((MlirAttribute){TPY_PTR(self)}));
}

static PyMethodDef map_attr_methods[] = {
    {"get", (PyCFunction)map_attr_get, METH_O | METH_STATIC,
     TPY_SIGDOC("get(affine_map: AffineMap, /) -> AffineMapAttr", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef map_attr_getset[] = {
    {"value", map_attr_value, NULL, TPY_PROP("AffineMap", "The AffineMap."), NULL},
    TPY_GETSET_END,
};

static tpy_class_def map_attr_defs[] = {
    {"AffineMapAttr", NULL, isa_mlirAttributeIsAAffineMap, mlirAffineMapAttrGetTypeID,
     map_attr_methods, map_attr_getset, NULL, "An attribute holding an AffineMap.", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

int tpy_init_affine_map(PyObject *m) {
  if (tpy_add_type(m, &map_spec, NULL, &tpy.AffineMap) < 0 ||
      tpy_affine_list_type(m, "tether.ir.AffineExprList", &tpy.AffineExprList) < 0 ||
      tpy_define_classes(m, tpy.Attribute, map_attr_defs, tpy.attr_casters) < 0)
    return -1;
#if TETHER_MLIR_VERSION >= 22
  static const tpy_mlir_name names[] = {{"AffineMapAttr", mlirAffineMapAttrGetName}, {NULL, NULL}};
  if (tpy_set_mlir_names(map_attr_defs, "attr_name", names) < 0) return -1;
#endif
  return 0;
}
