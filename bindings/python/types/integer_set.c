/* integer_set.c: IntegerSet (upstream's IRAffine.cpp) and its constraints (IntegerSetConstraint,
 * IntegerSetConstraintList); on MLIR 22 IntegerSetAttr.
 *
 * Invariant: the expressions a set is built from or replaced with are checked against its
 * dimensions and symbols, and their counts against the equality flags, before the C API sees them:
 * MLIR asserts on those. A constraint holds its IntegerSet object.
 */
#include "types.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/IntegerSet.h>

#define S(o) ((MlirIntegerSet){TPY_PTR(o)})

/* ---- IntegerSetConstraint -------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD PyObject *set;
  intptr_t pos;
} TpConstraint;

static int constraint_traverse(TpConstraint *c, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(c));
  Py_VISIT(c->set);
  return 0;
}

static int constraint_clear(TpConstraint *c) {
  Py_CLEAR(c->set);
  return 0;
}

static PyObject *constraint_expr(TpConstraint *c, void *u) {
  (void)u;
  return tpy_wrap_affine_expr(TPY_CTX(c->set), mlirIntegerSetGetConstraint(S(c->set), c->pos));
}

static PyObject *constraint_is_eq(TpConstraint *c, void *u) {
  (void)u;
  return PyBool_FromLong(mlirIntegerSetIsConstraintEq(S(c->set), c->pos));
}

static PyGetSetDef constraint_getset[] = {
    {"expr", (getter)constraint_expr, NULL, TPY_PROP("AffineExpr", NULL), NULL},
    {"is_eq", (getter)constraint_is_eq, NULL, TPY_PROP("bool", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot constraint_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, constraint_traverse},
    {Py_tp_clear, constraint_clear},
    {Py_tp_getset, constraint_getset},
    {0, NULL},
};

static PyType_Spec constraint_spec = {
    "tether.ir.IntegerSetConstraint", sizeof(TpConstraint), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, constraint_slots};

/* set.constraints[pos] */
static PyObject *set_constraint(PyObject *set, intptr_t pos) {
  TpConstraint *c = PyObject_GC_New(TpConstraint, tpy.IntegerSetConstraint);
  if (!c) return NULL;
  c->set = Py_NewRef(set);
  c->pos = pos;
  PyObject_GC_Track(c);
  return (PyObject *)c;
}

/* ---- IntegerSet ------------------------------------------------------------------------------ */

static PyObject *wrap_set(PyObject *ctx, MlirIntegerSet s) {
  if (mlirIntegerSetIsNull(s)) Py_RETURN_NONE;
  return tpy_ctxobj_new(tpy.IntegerSet, ctx, s.ptr);
}

static PyObject *set_str(PyObject *self) {
  tpy_strbuf b = {0};
  mlirIntegerSetPrint(S(self), tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *set_repr(PyObject *self) { return tpy_ctxobj_repr(self, "IntegerSet"); }

static tpy_sig set_get_sig =
    TPY_SIG("get(num_dims: int, num_symbols: int, exprs: Sequence[AffineExpr], eq_flags: "
            "Sequence[bool], context: Context | None = None) -> IntegerSet",
            NULL);

static PyObject *set_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  PyObject *a[5];
  if (!tpy_fastargs(&set_get_sig, args, nargs, kw, a, 5)) return NULL;
  intptr_t nd, ns, n;
  if (!tpy_affine_arg_count(a[0], "num_dims", &nd) ||
      !tpy_affine_arg_count(a[1], "num_symbols", &ns))
    return NULL;
  PyObject *ctx = tpy_context_arg(a[4]);
  if (!ctx) return NULL;
  PyObject *flags = tpy_seq_fast(a[3], "eq_flags must be a sequence of bool");
  if (!flags) return NULL;
  Py_ssize_t nf = PySequence_Fast_GET_SIZE(flags);
  Py_ssize_t ne = PyObject_Length(a[2]);
  if (ne < 0) {
    Py_DECREF(flags);
    return NULL;
  }
  if (ne != nf) {
    Py_DECREF(flags);
    return PyErr_Format(PyExc_ValueError,
                        "Expected the number of constraints to match that of equality flags");
  }
  if (ne == 0) {
    Py_DECREF(flags);
    return PyErr_Format(PyExc_ValueError, "Expected non-empty list of constraints");
  }
  bool *fl = PyMem_Malloc((size_t)nf * sizeof *fl);
  MlirAffineExpr *v = NULL;
  PyObject *r = NULL;
  if (!fl) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < nf; i++) {
    int b = PyObject_IsTrue(PySequence_Fast_GET_ITEM(flags, i));
    if (b < 0) goto done;
    fl[i] = b;
  }
  if (!tpy_affine_exprs_of(a[2], ctx, nd, ns, "attempting to create an IntegerSet", &n, &v))
    goto done;
  r = wrap_set(ctx, mlirIntegerSetGet(tpy_ctx_raw(ctx), nd, ns, n, v, fl));
done:
  PyMem_Free(fl);
  PyMem_Free(v);
  Py_DECREF(flags);
  return r;
}

static tpy_sig set_get_empty_sig = TPY_SIG(
    "get_empty(num_dims: int, num_symbols: int, context: Context | None = None) -> IntegerSet",
    NULL);

static PyObject *set_get_empty(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kw) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&set_get_empty_sig, args, nargs, kw, a, 3)) return NULL;
  intptr_t nd, ns;
  if (!tpy_affine_arg_count(a[0], "num_dims", &nd) ||
      !tpy_affine_arg_count(a[1], "num_symbols", &ns))
    return NULL;
  PyObject *ctx = tpy_context_arg(a[2]);
  if (!ctx) return NULL;
  return wrap_set(ctx, mlirIntegerSetEmptyGet(tpy_ctx_raw(ctx), nd, ns));
}

static tpy_sig set_get_replaced_sig =
    TPY_SIG("get_replaced(dim_exprs: Sequence[AffineExpr], symbol_exprs: Sequence[AffineExpr], "
            "num_result_dims: int, num_result_symbols: int) -> IntegerSet",
            NULL);

static PyObject *set_get_replaced(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  PyObject *a[4];
  if (!tpy_fastargs(&set_get_replaced_sig, args, nargs, kwnames, a, 4)) return NULL;
  PyObject *de = a[0], *se = a[1], *nd_o = a[2], *ns_o = a[3];
  intptr_t nd, ns, n1, n2;
  if (!tpy_affine_arg_count(nd_o, "num_result_dims", &nd) ||
      !tpy_affine_arg_count(ns_o, "num_result_symbols", &ns))
    return NULL;
  Py_ssize_t l1 = PyObject_Length(de), l2 = l1 < 0 ? -1 : PyObject_Length(se);
  if (l1 < 0 || l2 < 0) return NULL;
  if (l1 != mlirIntegerSetGetNumDims(S(self)))
    return PyErr_Format(PyExc_ValueError, "Expected the number of dimension replacement "
                                          "expressions to match that of dimensions");
  if (l2 != mlirIntegerSetGetNumSymbols(S(self)))
    return PyErr_Format(PyExc_ValueError, "Expected the number of symbol replacement expressions "
                                          "to match that of symbols");
  /* As upstream: both lists are converted before anything is checked about them. */
  PyObject *lists[2] = {de, se};
  const char *what[2] = {"dimensions", "symbols"};
  for (int k = 0; k < 2; k++) {
    PyObject *f = tpy_seq_fast(lists[k], "expected a list of AffineExpr");
    if (!f) return NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(f); i++) {
      PyObject *x = PySequence_Fast_GET_ITEM(f, i);
      if (!tpy_is(x, tpy.AffineExpr)) {
        PyErr_Format(tpy.CastError,
                     "Invalid expression%s when attempting to create an IntegerSet by replacing "
                     "%s",
                     x == Py_None ? " (None?)" : "", what[k]);
        Py_DECREF(f);
        return NULL;
      }
    }
    Py_DECREF(f);
  }
  MlirAffineExpr *d = NULL, *s = NULL;
  PyObject *r = NULL;
  if (tpy_affine_exprs_of(de, TPY_CTX(self), nd, ns,
                          "attempting to create an IntegerSet by replacing dimensions", &n1, &d) &&
      tpy_affine_exprs_of(se, TPY_CTX(self), nd, ns,
                          "attempting to create an IntegerSet by replacing symbols", &n2, &s))
    r = wrap_set(TPY_CTX(self), mlirIntegerSetReplaceGet(S(self), d, s, nd, ns));
  PyMem_Free(d);
  PyMem_Free(s);
  return r;
}

#define SET_INT(fn, cfn)                                                                           \
  static PyObject *fn(PyObject *self, void *c) {                                                   \
    (void)c;                                                                                       \
    return PyLong_FromSsize_t(cfn(S(self)));                                                       \
  }
SET_INT(set_n_dims, mlirIntegerSetGetNumDims)
SET_INT(set_n_symbols, mlirIntegerSetGetNumSymbols)
SET_INT(set_n_inputs, mlirIntegerSetGetNumInputs)
SET_INT(set_n_eq, mlirIntegerSetGetNumEqualities)
SET_INT(set_n_ineq, mlirIntegerSetGetNumInequalities)

static PyObject *set_canonical_empty(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirIntegerSetIsCanonicalEmpty(S(self)));
}

static PyObject *set_constraints(PyObject *self, void *c) {
  (void)c;
  return tpy_affine_list_new(tpy.IntegerSetConstraintList, self, set_constraint,
                             mlirIntegerSetGetNumConstraints(S(self)));
}

static PyObject *set_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirIntegerSetDump(S(self));
  Py_RETURN_NONE;
}

static PyObject *set_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.IntegerSet)) return wrap_set(TPY_CTX(owner), S(owner));
  void *p = tpy_capsule_pointer(cap, "mlir.ir.IntegerSet._CAPIPtr");
  if (!p) return NULL;
  tether_arena *ar = tpy_arena_for_capsule(mlirIntegerSetGetContext((MlirIntegerSet){p}));
  if (!ar) return NULL;
  PyObject *ctx = tpy_context_of(ar);
  PyObject *r = ctx ? wrap_set(ctx, (MlirIntegerSet){p}) : NULL;
  Py_XDECREF(ctx);
  return r;
}

static PyMethodDef set_methods[] = {
    {"get", TPY_FASTFN(set_get), TPY_FAST | METH_STATIC, TPY_DOC(set_get_sig)},
    {"get_empty", TPY_FASTFN(set_get_empty), TPY_FAST | METH_STATIC, TPY_DOC(set_get_empty_sig)},
    {"get_replaced", TPY_FASTFN(set_get_replaced), TPY_FAST, TPY_DOC(set_get_replaced_sig)},
    {"_CAPICreate", (PyCFunction)set_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> IntegerSet", NULL)},
    {"dump", (PyCFunction)set_dump, METH_NOARGS,
     TPY_SIGDOC("dump() -> None", "Prints the set to stderr.")},
    TPY_METHODS_END,
};

static PyGetSetDef set_getset[] = {
    {"context", tpy_ctxobj_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"is_canonical_empty", set_canonical_empty, NULL, TPY_PROP("bool", NULL), NULL},
    {"n_dims", set_n_dims, NULL, TPY_PROP("int", NULL), NULL},
    {"n_symbols", set_n_symbols, NULL, TPY_PROP("int", NULL), NULL},
    {"n_inputs", set_n_inputs, NULL, TPY_PROP("int", NULL), NULL},
    {"n_equalities", set_n_eq, NULL, TPY_PROP("int", NULL), NULL},
    {"n_inequalities", set_n_ineq, NULL, TPY_PROP("int", NULL), NULL},
    {"constraints", set_constraints, NULL, TPY_PROP("IntegerSetConstraintList", NULL), NULL},
    {"_CAPIPtr", tpy_ctxobj_capsule, NULL, TPY_PROP("object", NULL), "mlir.ir.IntegerSet._CAPIPtr"},
    TPY_GETSET_END,
};

static PyType_Slot set_slots[] = {
    {Py_tp_new, tpy_affine_new_refused},
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_str, set_str},
    {Py_tp_repr, set_repr},
    {Py_tp_richcompare, tpy_ctxobj_richcompare},
    {Py_tp_hash, tpy_ctxobj_hash},
    {Py_tp_methods, set_methods},
    {Py_tp_getset, set_getset},
    {Py_tp_doc, "An integer set."},
    {0, NULL},
};

static PyType_Spec set_spec = {"tether.ir.IntegerSet", sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT,
                               set_slots};

/* ---- IntegerSetAttr (MLIR 22) ---------------------------------------------------------------- */

#if TETHER_MLIR_VERSION >= 22
TPY_ISA(MlirAttribute, mlirAttributeIsAIntegerSet)

static tpy_sig set_attr_get_sig = TPY_SIG("get(integer_set: IntegerSet) -> IntegerSetAttr",
                                          "The attribute holding an IntegerSet.");

/* IntegerSetAttr.get(integer_set): the set's context is the attribute's. */
static PyObject *set_attr_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  PyObject *a[1];
  if (!tpy_fastargs(&set_attr_get_sig, args, nargs, kwnames, a, 1)) return NULL;
  if (!tpy_is(a[0], tpy.IntegerSet)) return tpy_type_error("integer_set", "an IntegerSet", a[0]);
  return tpy_wrap_attr(TPY_CTX(a[0]), mlirIntegerSetAttrGet(S(a[0])));
}

static PyMethodDef set_attr_methods[] = {
    {"get", TPY_FASTFN(set_attr_get), TPY_FAST | METH_STATIC, TPY_DOC(set_attr_get_sig)},
    TPY_METHODS_END,
};

static tpy_class_def set_attr_defs[] = {
    {"IntegerSetAttr", NULL, isa_mlirAttributeIsAIntegerSet, mlirIntegerSetAttrGetTypeID,
     set_attr_methods, NULL, NULL, "An attribute holding an IntegerSet.", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const tpy_mlir_name set_attr_names[] = {{"IntegerSetAttr", mlirIntegerSetAttrGetName},
                                               {NULL, NULL}};
#endif

int tpy_init_integer_set(PyObject *m) {
  if (tpy_add_type(m, &set_spec, NULL, &tpy.IntegerSet) < 0 ||
      tpy_affine_list_type(m, "tether.ir.IntegerSetConstraintList", &tpy.IntegerSetConstraintList) <
          0 ||
      tpy_add_type(m, &constraint_spec, NULL, &tpy.IntegerSetConstraint) < 0)
    return -1;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_define_classes(m, tpy.Attribute, set_attr_defs, tpy.attr_casters) < 0 ||
      tpy_set_mlir_names(set_attr_defs, "attr_name", set_attr_names) < 0)
    return -1;
#endif
  return 0;
}
