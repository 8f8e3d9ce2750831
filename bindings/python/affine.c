/* affine.c: AffineExpr and its subclasses, AffineExprList, AffineMap, IntegerSet,
 * IntegerSetConstraint(List) and AffineMapAttr (upstream's IRAffine.cpp).
 *
 * Invariants: affine values are context-owned like types (each holds its Context object);
 * everything that indexes into a map or set (result positions, sub-map sizes, dimension and symbol
 * positions of the expressions a map or set is built from, permutations) is checked before the C
 * API sees it, and constant folding that would divide by zero or overflow is refused: MLIR asserts
 * or traps on those.
 */
#include "tether_py.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/IntegerSet.h>
#include <string.h>

#define E(o) ((MlirAffineExpr){TP_PTR(o)})
#define M(o) ((MlirAffineMap){TP_PTR(o)})
#define S(o) ((MlirIntegerSet){TP_PTR(o)})

static PyObject *ctx_arg(PyObject *c) { return (PyObject *)tp_resolve_context(c); }

/* ---- expressions ----------------------------------------------------------------------------- */

TP_ISA(MlirAffineExpr, mlirAffineExprIsAAdd)
TP_ISA(MlirAffineExpr, mlirAffineExprIsAMul)
TP_ISA(MlirAffineExpr, mlirAffineExprIsAMod)
TP_ISA(MlirAffineExpr, mlirAffineExprIsAFloorDiv)
TP_ISA(MlirAffineExpr, mlirAffineExprIsACeilDiv)
TP_ISA(MlirAffineExpr, mlirAffineExprIsAConstant)
TP_ISA(MlirAffineExpr, mlirAffineExprIsADim)
TP_ISA(MlirAffineExpr, mlirAffineExprIsASymbol)
TP_ISA(MlirAffineExpr, mlirAffineExprIsABinary)

static tp_class_def expr_defs[];
enum { C_CONST, C_DIM, C_SYM, C_BIN, C_ADD, C_MUL, C_MOD, C_FLOOR, C_CEIL };

static PyObject *tp_wrap_affine_expr(PyObject *ctx, MlirAffineExpr e) {
  if (mlirAffineExprIsNull(e)) Py_RETURN_NONE;
  static const int order[] = {C_ADD, C_MUL, C_MOD, C_FLOOR, C_CEIL, C_CONST, C_DIM, C_SYM};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (expr_defs[order[i]].isa((void *)e.ptr))
      return tp_ctxobj_new(expr_defs[order[i]].cls, ctx, e.ptr);
  return tp_ctxobj_new(tp.AffineExpr, ctx, e.ptr);
}

static int arg_expr(PyObject *o, PyObject *ctx, MlirAffineExpr *out) {
  if (!tp_is(o, tp.AffineExpr)) return tp_type_error("argument", "an AffineExpr", o), 0;
  if (ctx && ((TpContext *)TP_CTX(o))->arena != ((TpContext *)ctx)->arena) {
    PyErr_SetString(PyExc_ValueError, "an AffineExpr of another context cannot be used here");
    return 0;
  }
  *out = E(o);
  return 1;
}

/* The largest dimension and symbol positions an expression uses (-1: none). */
static void max_positions(MlirAffineExpr e, intptr_t *dim, intptr_t *sym) {
  if (mlirAffineExprIsADim(e)) {
    intptr_t p = mlirAffineDimExprGetPosition(e);
    if (p > *dim) *dim = p;
  } else if (mlirAffineExprIsASymbol(e)) {
    intptr_t p = mlirAffineSymbolExprGetPosition(e);
    if (p > *sym) *sym = p;
  } else if (mlirAffineExprIsABinary(e)) {
    max_positions(mlirAffineBinaryOpExprGetLHS(e), dim, sym);
    max_positions(mlirAffineBinaryOpExprGetRHS(e), dim, sym);
  }
}

/* Expressions from a list, each within n_dims dimensions and n_syms symbols. */
static int exprs_of(PyObject *list, PyObject *ctx, intptr_t n_dims, intptr_t n_syms,
                    const char *action, intptr_t *n, MlirAffineExpr **out) {
  PyObject *f = PySequence_Fast(list, "expected a list of AffineExpr");
  if (!f) return 0;
  *n = PySequence_Fast_GET_SIZE(f);
  *out = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof **out);
  if (!*out) {
    Py_DECREF(f);
    PyErr_NoMemory();
    return 0;
  }
  for (intptr_t i = 0; i < *n; i++) {
    PyObject *x = PySequence_Fast_GET_ITEM(f, i);
    if (!tp_is(x, tp.AffineExpr)) {
      PyErr_Format(tp.CastError, "Invalid expression%s when %s", x == Py_None ? " (None?)" : "",
                   action);
      goto fail;
    }
    if (!arg_expr(x, ctx, &(*out)[i])) goto fail;
    intptr_t d = -1, s = -1;
    max_positions((*out)[i], &d, &s);
    if (d >= n_dims || s >= n_syms) {
      PyErr_Format(PyExc_ValueError,
                   "expression %zd uses %s %zd, but there are only %zd dimensions and %zd symbols",
                   (Py_ssize_t)i, d >= n_dims ? "dimension" : "symbol",
                   (Py_ssize_t)(d >= n_dims ? d : s), (Py_ssize_t)n_dims, (Py_ssize_t)n_syms);
      goto fail;
    }
  }
  Py_DECREF(f);
  return 1;
fail:
  Py_DECREF(f);
  PyMem_Free(*out);
  *out = NULL;
  return 0;
}

/* A binary expression; for two constants, the folding MLIR does is checked first. */
static PyObject *binary(int kind, MlirAffineExpr l, MlirAffineExpr r, PyObject *ctx) {
  if (mlirAffineExprIsAConstant(r) && (kind == C_MOD || kind == C_FLOOR || kind == C_CEIL)) {
    int64_t rv = mlirAffineConstantExprGetValue(r);
    if (rv == 0 && mlirAffineExprIsAConstant(l))
      return PyErr_Format(PyExc_ZeroDivisionError, "affine division or modulo by zero");
    if (rv == -1 && mlirAffineExprIsAConstant(l) && mlirAffineConstantExprGetValue(l) == INT64_MIN)
      return PyErr_Format(PyExc_OverflowError, "affine division overflows");
  }
  MlirAffineExpr e;
  switch (kind) {
  case C_ADD:
    e = mlirAffineAddExprGet(l, r);
    break;
  case C_MUL:
    e = mlirAffineMulExprGet(l, r);
    break;
  case C_MOD:
    e = mlirAffineModExprGet(l, r);
    break;
  case C_FLOOR:
    e = mlirAffineFloorDivExprGet(l, r);
    break;
  default:
    e = mlirAffineCeilDivExprGet(l, r);
    break;
  }
  return tp_wrap_affine_expr(ctx, e);
}

/* An operand of an operator or get_*: an AffineExpr or an int (a constant). */
static int operand(PyObject *o, PyObject *ctx, MlirAffineExpr *out) {
  if (tp_is(o, tp.AffineExpr)) return arg_expr(o, ctx, out);
  if (PyLong_Check(o)) {
    int64_t v;
    if (!tp_arg_int64(o, "constant", &v)) return 0;
    *out = mlirAffineConstantExprGet(tp_ctx_raw(ctx), v);
    return 1;
  }
  return -1; /* not an operand: NotImplemented */
}

static PyObject *binop(PyObject *a, PyObject *b, int kind) {
  PyObject *ctx = tp_is(a, tp.AffineExpr) ? TP_CTX(a) : TP_CTX(b);
  MlirAffineExpr l, r;
  int ok = operand(a, ctx, &l);
  if (ok == 1) ok = operand(b, ctx, &r);
  if (ok < 0) Py_RETURN_NOTIMPLEMENTED;
  if (!ok) return NULL;
  return binary(kind, l, r, ctx);
}

static PyObject *expr_add(PyObject *a, PyObject *b) { return binop(a, b, C_ADD); }
static PyObject *expr_mul(PyObject *a, PyObject *b) { return binop(a, b, C_MUL); }
static PyObject *expr_mod(PyObject *a, PyObject *b) { return binop(a, b, C_MOD); }

/* a - b = a + (-1 * b), as upstream. */
static PyObject *expr_sub(PyObject *a, PyObject *b) {
  PyObject *ctx = tp_is(a, tp.AffineExpr) ? TP_CTX(a) : TP_CTX(b);
  MlirAffineExpr l, r;
  int ok = operand(a, ctx, &l);
  if (ok == 1) ok = operand(b, ctx, &r);
  if (ok < 0) Py_RETURN_NOTIMPLEMENTED;
  if (!ok) return NULL;
  MlirAffineExpr neg = mlirAffineMulExprGet(mlirAffineConstantExprGet(tp_ctx_raw(ctx), -1), r);
  return tp_wrap_affine_expr(ctx, mlirAffineAddExprGet(l, neg));
}

static PyObject *expr_str(PyObject *self) {
  tp_strbuf b = {0};
  mlirAffineExprPrint(E(self), tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *wrapped_repr(PyObject *self, const char *cls) {
  PyObject *s = PyObject_Str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("%s(%U)", cls, s);
  Py_DECREF(s);
  return r;
}

static PyObject *expr_repr(PyObject *self) { return wrapped_repr(self, "AffineExpr"); }

static PyObject *expr_compose(PyObject *self, PyObject *map) {
  if (!tp_is(map, tp.AffineMap)) return tp_type_error("other", "an AffineMap", map);
  return tp_wrap_affine_expr(TP_CTX(self), mlirAffineExprCompose(E(self), M(map)));
}

static PyObject *expr_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirAffineExprDump(E(self));
  Py_RETURN_NONE;
}

/* AffineExpr.get_add(lhs, rhs) & co.: an AffineExpr and an AffineExpr or int, either side. */
static PyObject *static_binary(PyObject *const *args, Py_ssize_t nargs, int kind,
                               const char *name) {
  static const char *const names[] = {"lhs", "rhs", NULL};
  PyObject *ab[2];
  if (!tp_fastargs(name, args, nargs, NULL, names, 2, 2, ab)) return NULL;
  PyObject *a = ab[0], *b = ab[1];
  if (!tp_is(a, tp.AffineExpr) && !tp_is(b, tp.AffineExpr))
    return PyErr_Format(PyExc_TypeError, "%s() needs at least one AffineExpr", name);
  PyObject *r = binop(a, b, kind);
  if (r == Py_NotImplemented) {
    Py_DECREF(r);
    return PyErr_Format(PyExc_TypeError, "%s() takes AffineExpr or int arguments", name);
  }
  return r;
}

#define STATIC_BIN(fn, kind, name)                                                                 \
  static PyObject *fn(PyObject *cls, PyObject *const *args, Py_ssize_t nargs) {                    \
    (void)cls;                                                                                     \
    return static_binary(args, nargs, kind, name);                                                 \
  }
STATIC_BIN(get_add, C_ADD, "get_add")
STATIC_BIN(get_mul, C_MUL, "get_mul")
STATIC_BIN(get_mod, C_MOD, "get_mod")
STATIC_BIN(get_floor_div, C_FLOOR, "get_floor_div")
STATIC_BIN(get_ceil_div, C_CEIL, "get_ceil_div")

static PyObject *get_constant(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"value", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs("get_constant", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  int64_t v;
  if (!tp_arg_int64(a[0], "value", &v)) return NULL;
  PyObject *ctx = ctx_arg(a[1]);
  if (!ctx) return NULL;
  return tp_wrap_affine_expr(ctx, mlirAffineConstantExprGet(tp_ctx_raw(ctx), v));
}

static PyObject *get_position(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                              int symbol) {
  static const char *const names[] = {"position", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs(symbol ? "get_symbol" : "get_dim", args, nargs, kwnames, names, 1, 2, a))
    return NULL;
  intptr_t p;
  if (!tp_arg_intptr(a[0], "position", &p)) return NULL;
  if (p < 0 || p > UINT32_MAX) return PyErr_Format(PyExc_ValueError, "position must be >= 0");
  PyObject *ctx = ctx_arg(a[1]);
  if (!ctx) return NULL;
  MlirContext c = tp_ctx_raw(ctx);
  return tp_wrap_affine_expr(ctx,
                             symbol ? mlirAffineSymbolExprGet(c, p) : mlirAffineDimExprGet(c, p));
}

static PyObject *get_dim(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  return get_position(args, nargs, kw, 0);
}

static PyObject *get_symbol(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  return get_position(args, nargs, kw, 1);
}

static PyObject *expr_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.AffineExpr)) return tp_wrap_affine_expr(TP_CTX(owner), E(owner));
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.AffineExpr._CAPIPtr");
  if (!p) return NULL;
  tether_arena *a = tether_arena_of_context(mlirAffineExprGetContext((MlirAffineExpr){p}));
  if (!a) return PyErr_Format(PyExc_ValueError, "the expression's context is not a tether Context");
  PyObject *ctx = tp_context_of(a);
  PyObject *r = ctx ? tp_wrap_affine_expr(ctx, (MlirAffineExpr){p}) : NULL;
  Py_XDECREF(ctx);
  return r;
}

static PyObject *expr_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
  (void)t;
  (void)args;
  (void)kw;
  PyErr_SetString(PyExc_TypeError, "AffineExpr objects come from AffineExpr.get_* and the "
                                   "subclasses' get()");
  return NULL;
}

static PyMethodDef expr_methods[] = {
    {"compose", (PyCFunction)expr_compose, METH_O, "The expression composed with an AffineMap."},
    {"get_add", TP_FASTFN(get_add), METH_FASTCALL | METH_STATIC, "get_add(lhs, rhs)"},
    {"get_mul", TP_FASTFN(get_mul), METH_FASTCALL | METH_STATIC, "get_mul(lhs, rhs)"},
    {"get_mod", TP_FASTFN(get_mod), METH_FASTCALL | METH_STATIC, "get_mod(lhs, rhs)"},
    {"get_floor_div", TP_FASTFN(get_floor_div), METH_FASTCALL | METH_STATIC,
     "get_floor_div(lhs, rhs)"},
    {"get_ceil_div", TP_FASTFN(get_ceil_div), METH_FASTCALL | METH_STATIC,
     "get_ceil_div(lhs, rhs)"},
    {"get_constant", TP_FASTFN(get_constant), TP_FAST | METH_STATIC,
     "get_constant(value, context=None)"},
    {"get_dim", TP_FASTFN(get_dim), TP_FAST | METH_STATIC, "get_dim(position, context=None)"},
    {"get_symbol", TP_FASTFN(get_symbol), TP_FAST | METH_STATIC,
     "get_symbol(position, context=None)"},
    {"_CAPICreate", (PyCFunction)expr_from_capsule, METH_O | METH_STATIC, NULL},
    {"dump", (PyCFunction)expr_dump, METH_NOARGS, "Prints the expression to stderr."},
    TP_METHODS_END,
};

static PyGetSetDef expr_getset[] = {
    {"context", tp_ctxobj_context, NULL, NULL, NULL},
    {"_CAPIPtr", tp_ctxobj_capsule, NULL, NULL, "mlir.ir.AffineExpr._CAPIPtr"},
    TP_GETSET_END,
};

static PyType_Slot expr_slots[] = {
    {Py_tp_new, expr_new},
    {Py_tp_dealloc, tp_ctxobj_dealloc},
    {Py_tp_str, expr_str},
    {Py_tp_repr, expr_repr},
    {Py_tp_richcompare, tp_ctxobj_richcompare},
    {Py_tp_hash, tp_ctxobj_hash},
    {Py_nb_add, expr_add},
    {Py_nb_subtract, expr_sub},
    {Py_nb_multiply, expr_mul},
    {Py_nb_remainder, expr_mod},
    {Py_tp_methods, expr_methods},
    {Py_tp_getset, expr_getset},
    {Py_tp_doc, "An affine expression; + - * % with AffineExpr or int."},
    {0, NULL},
};

static PyType_Spec expr_spec = {"tether.ir.AffineExpr", sizeof(TpCtxObj), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, expr_slots};

/* The subclasses. */

static PyObject *const_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  return get_constant(cls, args, nargs, kw);
}

static PyObject *const_value(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(mlirAffineConstantExprGetValue(E(self)));
}

static PyObject *dim_position(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromSsize_t(mlirAffineDimExprGetPosition(E(self)));
}

static PyObject *sym_position(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromSsize_t(mlirAffineSymbolExprGetPosition(E(self)));
}

static PyObject *bin_lhs(PyObject *self, void *c) {
  (void)c;
  return tp_wrap_affine_expr(TP_CTX(self), mlirAffineBinaryOpExprGetLHS(E(self)));
}

static PyObject *bin_rhs(PyObject *self, void *c) {
  (void)c;
  return tp_wrap_affine_expr(TP_CTX(self), mlirAffineBinaryOpExprGetRHS(E(self)));
}

/* X.get(lhs, rhs) for the binary subclasses (def->data: the kind). */
static PyObject *bin_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs) {
  tp_class_def *d = tp_class_def_of((PyTypeObject *)cls);
  int kind = d ? (int)(intptr_t)d->data : C_ADD;
  return static_binary(args, nargs, kind, "get");
}

static PyMethodDef const_methods[] = {
    {"get", TP_FASTFN(const_get), TP_FAST | METH_STATIC, "get(value, context=None)"},
    TP_METHODS_END,
};
static PyMethodDef dim_methods[] = {
    {"get", TP_FASTFN(get_dim), TP_FAST | METH_STATIC, "get(position, context=None)"},
    TP_METHODS_END,
};
static PyMethodDef sym_methods[] = {
    {"get", TP_FASTFN(get_symbol), TP_FAST | METH_STATIC, "get(position, context=None)"},
    TP_METHODS_END,
};
static PyMethodDef bin_methods[] = {
    {"get", TP_FASTFN(bin_get), METH_FASTCALL | METH_CLASS, "get(lhs, rhs)"},
    TP_METHODS_END,
};
static PyGetSetDef const_getset[] = {{"value", const_value, NULL, NULL, NULL}, TP_GETSET_END};
static PyGetSetDef dim_getset[] = {{"position", dim_position, NULL, NULL, NULL}, TP_GETSET_END};
static PyGetSetDef sym_getset[] = {{"position", sym_position, NULL, NULL, NULL}, TP_GETSET_END};
static PyGetSetDef bin_getset[] = {
    {"lhs", bin_lhs, NULL, NULL, NULL},
    {"rhs", bin_rhs, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyObject *expr_sub_repr(PyObject *self) { return expr_repr(self); }
static PyType_Slot expr_sub_slots[] = {{Py_tp_repr, expr_sub_repr}, {0, NULL}};

#define BIN(Name, isa, kind)                                                                       \
  {                                                                                                \
    Name, "AffineBinaryExpr", isa, NULL, bin_methods, NULL, expr_sub_slots, NULL,                  \
        (void *)(intptr_t)(kind), NULL                                                             \
  }

static tp_class_def expr_defs[] = {
    [C_CONST] = {"AffineConstantExpr", NULL, isa_mlirAffineExprIsAConstant, NULL, const_methods,
                 const_getset, expr_sub_slots, NULL, NULL, NULL},
    [C_DIM] = {"AffineDimExpr", NULL, isa_mlirAffineExprIsADim, NULL, dim_methods, dim_getset,
               expr_sub_slots, NULL, NULL, NULL},
    [C_SYM] = {"AffineSymbolExpr", NULL, isa_mlirAffineExprIsASymbol, NULL, sym_methods, sym_getset,
               expr_sub_slots, NULL, NULL, NULL},
    [C_BIN] = {"AffineBinaryExpr", NULL, isa_mlirAffineExprIsABinary, NULL, NULL, bin_getset,
               expr_sub_slots, NULL, NULL, NULL},
    [C_ADD] = BIN("AffineAddExpr", isa_mlirAffineExprIsAAdd, C_ADD),
    [C_MUL] = BIN("AffineMulExpr", isa_mlirAffineExprIsAMul, C_MUL),
    [C_MOD] = BIN("AffineModExpr", isa_mlirAffineExprIsAMod, C_MOD),
    [C_FLOOR] = BIN("AffineFloorDivExpr", isa_mlirAffineExprIsAFloorDiv, C_FLOOR),
    [C_CEIL] = BIN("AffineCeilDivExpr", isa_mlirAffineExprIsACeilDiv, C_CEIL),
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

/* ---- read-only lists (AffineExprList, IntegerSetConstraintList) ------------------------------ */

typedef struct {
  PyObject_HEAD PyObject *owner; /* AffineMap or IntegerSet */
  Py_ssize_t start, step, length;
} TpAffineList;

static PyTypeObject *ExprListType, *ConstraintListType, *ConstraintType;

static PyObject *alist_new(PyTypeObject *t, PyObject *owner, Py_ssize_t start, Py_ssize_t step,
                           Py_ssize_t length) {
  TpAffineList *l = PyObject_GC_New(TpAffineList, t);
  if (!l) return NULL;
  l->owner = Py_NewRef(owner);
  l->start = start;
  l->step = step;
  l->length = length;
  PyObject_GC_Track(l);
  return (PyObject *)l;
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

static void alist_dealloc(TpAffineList *l) {
  PyObject_GC_UnTrack(l);
  alist_clear(l);
  PyTypeObject *t = Py_TYPE(l);
  t->tp_free(l);
  Py_DECREF(t);
}

static Py_ssize_t alist_len(TpAffineList *l) { return l->length; }

typedef struct {
  PyObject_HEAD PyObject *set;
  intptr_t pos;
} TpConstraint;

static PyObject *alist_item(TpAffineList *l, Py_ssize_t i) {
  if (i < 0 || i >= l->length) return PyErr_Format(PyExc_IndexError, "index out of range");
  intptr_t pos = l->start + i * l->step;
  if (Py_TYPE(l) == ExprListType)
    return tp_wrap_affine_expr(TP_CTX(l->owner), mlirAffineMapGetResult(M(l->owner), pos));
  TpConstraint *c = PyObject_GC_New(TpConstraint, ConstraintType);
  if (!c) return NULL;
  c->set = Py_NewRef(l->owner);
  c->pos = pos;
  PyObject_GC_Track(c);
  return (PyObject *)c;
}

static PyObject *alist_subscript(TpAffineList *l, PyObject *key) {
  if (PySlice_Check(key)) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t k = PySlice_AdjustIndices(l->length, &start, &stop, step);
    return alist_new(Py_TYPE(l), l->owner, l->start + start * l->step, step * l->step, k);
  }
  Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0) i += l->length;
  return alist_item(l, i);
}

static PyObject *alist_concat(PyObject *a, PyObject *b) {
  PyObject *la = PySequence_List(a), *lb = la ? PySequence_List(b) : NULL;
  PyObject *r = lb ? PySequence_Concat(la, lb) : NULL;
  Py_XDECREF(la);
  Py_XDECREF(lb);
  return r;
}

static PyType_Slot alist_slots[] = {
    {Py_tp_dealloc, alist_dealloc},
    {Py_tp_traverse, alist_traverse},
    {Py_tp_clear, alist_clear},
    {Py_sq_length, alist_len},
    {Py_sq_item, alist_item},
    {Py_mp_length, alist_len},
    {Py_mp_subscript, alist_subscript},
    {Py_nb_add, alist_concat},
    {0, NULL},
};

static PyType_Spec expr_list_spec = {
    "tether.ir.AffineExprList", sizeof(TpAffineList), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, alist_slots};
static PyType_Spec constraint_list_spec = {
    "tether.ir.IntegerSetConstraintList", sizeof(TpAffineList), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, alist_slots};

static int constraint_traverse(TpConstraint *c, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(c));
  Py_VISIT(c->set);
  return 0;
}

static int constraint_clear(TpConstraint *c) {
  Py_CLEAR(c->set);
  return 0;
}

static void constraint_dealloc(TpConstraint *c) {
  PyObject_GC_UnTrack(c);
  constraint_clear(c);
  PyTypeObject *t = Py_TYPE(c);
  t->tp_free(c);
  Py_DECREF(t);
}

static PyObject *constraint_expr(TpConstraint *c, void *u) {
  (void)u;
  return tp_wrap_affine_expr(TP_CTX(c->set), mlirIntegerSetGetConstraint(S(c->set), c->pos));
}

static PyObject *constraint_is_eq(TpConstraint *c, void *u) {
  (void)u;
  return PyBool_FromLong(mlirIntegerSetIsConstraintEq(S(c->set), c->pos));
}

static PyGetSetDef constraint_getset[] = {
    {"expr", (getter)constraint_expr, NULL, NULL, NULL},
    {"is_eq", (getter)constraint_is_eq, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot constraint_slots[] = {
    {Py_tp_dealloc, constraint_dealloc},
    {Py_tp_traverse, constraint_traverse},
    {Py_tp_clear, constraint_clear},
    {Py_tp_getset, constraint_getset},
    {0, NULL},
};

static PyType_Spec constraint_spec = {
    "tether.ir.IntegerSetConstraint", sizeof(TpConstraint), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, constraint_slots};

/* ---- AffineMap ------------------------------------------------------------------------------- */

PyObject *tp_wrap_affine_map(PyObject *ctx, MlirAffineMap m) {
  if (mlirAffineMapIsNull(m)) Py_RETURN_NONE;
  return tp_ctxobj_new(tp.AffineMap, ctx, m.ptr);
}

static PyObject *map_str(PyObject *self) {
  tp_strbuf b = {0};
  mlirAffineMapPrint(M(self), tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *map_repr(PyObject *self) { return wrapped_repr(self, "AffineMap"); }

static int nonneg(PyObject *o, const char *what, intptr_t *out) {
  if (!tp_arg_intptr(o, what, out)) return 0;
  if (*out < 0 || *out > (1 << 24)) {
    PyErr_Format(PyExc_ValueError, "%s must be in [0, 2**24]", what);
    return 0;
  }
  return 1;
}

static PyObject *map_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"dim_count", "symbol_count", "exprs", "context", NULL};
  PyObject *a[4];
  if (!tp_fastargs("get", args, nargs, kw, names, 3, 4, a)) return NULL;
  intptr_t nd, ns, n;
  if (!nonneg(a[0], "dim_count", &nd) || !nonneg(a[1], "symbol_count", &ns)) return NULL;
  PyObject *ctx = ctx_arg(a[3]);
  if (!ctx) return NULL;
  MlirAffineExpr *v;
  if (!exprs_of(a[2], ctx, nd, ns, "attempting to create an AffineMap", &n, &v)) return NULL;
  MlirAffineMap m = mlirAffineMapGet(tp_ctx_raw(ctx), nd, ns, n, v);
  PyMem_Free(v);
  return tp_wrap_affine_map(ctx, m);
}

static PyObject *map_get_constant(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"value", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs("get_constant", args, nargs, kw, names, 1, 2, a)) return NULL;
  int64_t v;
  if (!tp_arg_int64(a[0], "value", &v)) return NULL;
  PyObject *ctx = ctx_arg(a[1]);
  if (!ctx) return NULL;
  return tp_wrap_affine_map(ctx, mlirAffineMapConstantGet(tp_ctx_raw(ctx), v));
}

static PyObject *map_get_empty(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"context", NULL};
  PyObject *a[1];
  if (!tp_fastargs("get_empty", args, nargs, kw, names, 0, 1, a)) return NULL;
  PyObject *ctx = ctx_arg(a[0]);
  if (!ctx) return NULL;
  return tp_wrap_affine_map(ctx, mlirAffineMapEmptyGet(tp_ctx_raw(ctx)));
}

static PyObject *map_get_identity(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"n_dims", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs("get_identity", args, nargs, kw, names, 1, 2, a)) return NULL;
  intptr_t n;
  if (!nonneg(a[0], "n_dims", &n)) return NULL;
  PyObject *ctx = ctx_arg(a[1]);
  if (!ctx) return NULL;
  return tp_wrap_affine_map(ctx, mlirAffineMapMultiDimIdentityGet(tp_ctx_raw(ctx), n));
}

static PyObject *map_get_minor_identity(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"n_dims", "n_results", "context", NULL};
  PyObject *a[3];
  if (!tp_fastargs("get_minor_identity", args, nargs, kw, names, 2, 3, a)) return NULL;
  intptr_t nd, nr;
  if (!nonneg(a[0], "n_dims", &nd) || !nonneg(a[1], "n_results", &nr)) return NULL;
  if (nr > nd) return PyErr_Format(PyExc_ValueError, "n_results must be <= n_dims");
  PyObject *ctx = ctx_arg(a[2]);
  if (!ctx) return NULL;
  return tp_wrap_affine_map(ctx, mlirAffineMapMinorIdentityGet(tp_ctx_raw(ctx), nd, nr));
}

static PyObject *map_get_permutation(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"permutation", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs("get_permutation", args, nargs, kw, names, 1, 2, a)) return NULL;
  PyObject *ctx = ctx_arg(a[1]);
  if (!ctx) return NULL;
  PyObject *f = PySequence_Fast(a[0], "permutation must be a sequence of int");
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
    if (!tp_arg_intptr(PySequence_Fast_GET_ITEM(f, i), "permutation element", &v)) goto done;
    if (v < 0 || v >= n || seen[v]) {
      PyErr_SetString(tp.CastError, "Invalid permutation when attempting to create an AffineMap");
      goto done;
    }
    seen[v] = 1;
    p[i] = (unsigned)v;
  }
  r = tp_wrap_affine_map(ctx, mlirAffineMapPermutationGet(tp_ctx_raw(ctx), n, p));
done:
  PyMem_Free(p);
  PyMem_Free(seen);
  Py_DECREF(f);
  return r;
}

static PyObject *map_get_submap(PyObject *self, PyObject *positions) {
  PyObject *f = PySequence_Fast(positions, "result_positions must be a sequence of int");
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
    if (!tp_arg_intptr(PySequence_Fast_GET_ITEM(f, i), "result position", &p[i])) goto done;
    if (p[i] < 0 || p[i] >= nr) {
      PyErr_SetString(PyExc_ValueError, "result position out of bounds");
      goto done;
    }
  }
  r = tp_wrap_affine_map(TP_CTX(self), mlirAffineMapGetSubMap(M(self), n, p));
done:
  PyMem_Free(p);
  Py_DECREF(f);
  return r;
}

static PyObject *map_major_minor(PyObject *self, PyObject *o, int major) {
  intptr_t n;
  if (!tp_arg_intptr(o, "n_results", &n)) return NULL;
  if (n < 0 || n >= mlirAffineMapGetNumResults(M(self)))
    return PyErr_Format(PyExc_ValueError, "number of results out of bounds");
  return tp_wrap_affine_map(TP_CTX(self), major ? mlirAffineMapGetMajorSubMap(M(self), n)
                                                : mlirAffineMapGetMinorSubMap(M(self), n));
}

static PyObject *map_get_major_submap(PyObject *self, PyObject *o) {
  return map_major_minor(self, o, 1);
}
static PyObject *map_get_minor_submap(PyObject *self, PyObject *o) {
  return map_major_minor(self, o, 0);
}

static PyObject *map_replace(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  static const char *const names[] = {"expr", "replacement", "n_result_dims", "n_result_syms",
                                      NULL};
  PyObject *a[4];
  if (!tp_fastargs("replace", args, nargs, kwnames, names, 4, 4, a)) return NULL;
  PyObject *e = a[0], *r = a[1], *nd_o = a[2], *ns_o = a[3];
  MlirAffineExpr ee, re;
  intptr_t nd, ns;
  if (!arg_expr(e, TP_CTX(self), &ee) || !arg_expr(r, TP_CTX(self), &re) ||
      !nonneg(nd_o, "n_result_dims", &nd) || !nonneg(ns_o, "n_result_syms", &ns))
    return NULL;
  /* The result map must hold what its results use. */
  MlirAffineMap m = mlirAffineMapReplace(M(self), ee, re, nd, ns);
  intptr_t d = -1, s = -1;
  for (intptr_t i = 0; i < mlirAffineMapGetNumResults(m); i++)
    max_positions(mlirAffineMapGetResult(m, i), &d, &s);
  if (d >= nd || s >= ns)
    return PyErr_Format(PyExc_ValueError,
                        "the replaced map uses more dimensions or symbols than n_result_dims / "
                        "n_result_syms");
  return tp_wrap_affine_map(TP_CTX(self), m);
}

typedef struct {
  PyObject *ctx, *list;
  int failed;
} compress_out;

static void compress_cb(void *user, intptr_t idx, MlirAffineMap m) {
  compress_out *o = user;
  if (o->failed) return;
  PyObject *x = tp_wrap_affine_map(o->ctx, m);
  if (!x) {
    o->failed = 1;
    return;
  }
  PyList_SET_ITEM(o->list, idx, x);
}

static PyObject *map_compress(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"affine_maps", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs("compress_unused_symbols", args, nargs, kw, names, 1, 2, a)) return NULL;
  PyObject *ctx = ctx_arg(a[1]);
  if (!ctx) return NULL;
  PyObject *f = PySequence_Fast(a[0], "affine_maps must be a list of AffineMap");
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
    if (!tp_is(x, tp.AffineMap)) {
      PyErr_SetString(tp.CastError, "Invalid expression when attempting to create an AffineMap");
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

static PyObject *map_results(PyObject *self, void *c) {
  (void)c;
  return alist_new(ExprListType, self, 0, 1, mlirAffineMapGetNumResults(M(self)));
}

static PyObject *map_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirAffineMapDump(M(self));
  Py_RETURN_NONE;
}

static PyObject *map_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.AffineMap)) return tp_wrap_affine_map(TP_CTX(owner), M(owner));
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.AffineMap._CAPIPtr");
  if (!p) return NULL;
  tether_arena *ar = tether_arena_of_context(mlirAffineMapGetContext((MlirAffineMap){p}));
  if (!ar) return PyErr_Format(PyExc_ValueError, "the map's context is not a tether Context");
  PyObject *ctx = tp_context_of(ar);
  PyObject *r = ctx ? tp_wrap_affine_map(ctx, (MlirAffineMap){p}) : NULL;
  Py_XDECREF(ctx);
  return r;
}

static PyMethodDef map_methods[] = {
    {"get", TP_FASTFN(map_get), TP_FAST | METH_STATIC,
     "get(dim_count, symbol_count, exprs, context=None)"},
    {"get_constant", TP_FASTFN(map_get_constant), TP_FAST | METH_STATIC,
     "get_constant(value, context=None)"},
    {"get_empty", TP_FASTFN(map_get_empty), TP_FAST | METH_STATIC, "get_empty(context=None)"},
    {"get_identity", TP_FASTFN(map_get_identity), TP_FAST | METH_STATIC,
     "get_identity(n_dims, context=None)"},
    {"get_minor_identity", TP_FASTFN(map_get_minor_identity), TP_FAST | METH_STATIC,
     "get_minor_identity(n_dims, n_results, context=None)"},
    {"get_permutation", TP_FASTFN(map_get_permutation), TP_FAST | METH_STATIC,
     "get_permutation(permutation, context=None)"},
    {"compress_unused_symbols", TP_FASTFN(map_compress), TP_FAST | METH_STATIC,
     "compress_unused_symbols(affine_maps, context=None)"},
    {"get_submap", (PyCFunction)map_get_submap, METH_O, "get_submap(result_positions)"},
    {"get_major_submap", (PyCFunction)map_get_major_submap, METH_O, "get_major_submap(n_results)"},
    {"get_minor_submap", (PyCFunction)map_get_minor_submap, METH_O, "get_minor_submap(n_results)"},
    {"replace", TP_FASTFN(map_replace), TP_FAST,
     "replace(expr, replacement, n_result_dims, n_result_syms)"},
    {"_CAPICreate", (PyCFunction)map_from_capsule, METH_O | METH_STATIC, NULL},
    {"dump", (PyCFunction)map_dump, METH_NOARGS, "Prints the map to stderr."},
    TP_METHODS_END,
};

static PyGetSetDef map_getset[] = {
    {"context", tp_ctxobj_context, NULL, NULL, NULL},
    {"n_dims", map_n_dims, NULL, NULL, NULL},
    {"n_inputs", map_n_inputs, NULL, NULL, NULL},
    {"n_symbols", map_n_symbols, NULL, NULL, NULL},
    {"is_permutation", map_is_permutation, NULL, NULL, NULL},
    {"is_projected_permutation", map_is_projected, NULL, NULL, NULL},
    {"results", map_results, NULL, "The result expressions (AffineExprList).", NULL},
    {"_CAPIPtr", tp_ctxobj_capsule, NULL, NULL, "mlir.ir.AffineMap._CAPIPtr"},
    TP_GETSET_END,
};

static PyType_Slot map_slots[] = {
    {Py_tp_new, expr_new},
    {Py_tp_dealloc, tp_ctxobj_dealloc},
    {Py_tp_str, map_str},
    {Py_tp_repr, map_repr},
    {Py_tp_richcompare, tp_ctxobj_richcompare},
    {Py_tp_hash, tp_ctxobj_hash},
    {Py_tp_methods, map_methods},
    {Py_tp_getset, map_getset},
    {Py_tp_doc, "An affine map."},
    {0, NULL},
};

static PyType_Spec map_spec = {"tether.ir.AffineMap", sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT,
                               map_slots};

/* ---- IntegerSet ------------------------------------------------------------------------------ */

static PyObject *wrap_set(PyObject *ctx, MlirIntegerSet s) {
  if (mlirIntegerSetIsNull(s)) Py_RETURN_NONE;
  return tp_ctxobj_new(tp.IntegerSet, ctx, s.ptr);
}

static PyObject *set_str(PyObject *self) {
  tp_strbuf b = {0};
  mlirIntegerSetPrint(S(self), tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *set_repr(PyObject *self) { return wrapped_repr(self, "IntegerSet"); }

static PyObject *set_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"num_dims", "num_symbols", "exprs",
                                      "eq_flags", "context",     NULL};
  PyObject *a[5];
  if (!tp_fastargs("get", args, nargs, kw, names, 4, 5, a)) return NULL;
  intptr_t nd, ns, n;
  if (!nonneg(a[0], "num_dims", &nd) || !nonneg(a[1], "num_symbols", &ns)) return NULL;
  PyObject *ctx = ctx_arg(a[4]);
  if (!ctx) return NULL;
  PyObject *flags = PySequence_Fast(a[3], "eq_flags must be a sequence of bool");
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
  if (!exprs_of(a[2], ctx, nd, ns, "attempting to create an IntegerSet", &n, &v)) goto done;
  r = wrap_set(ctx, mlirIntegerSetGet(tp_ctx_raw(ctx), nd, ns, n, v, fl));
done:
  PyMem_Free(fl);
  PyMem_Free(v);
  Py_DECREF(flags);
  return r;
}

static PyObject *set_get_empty(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kw) {
  (void)cls;
  static const char *const names[] = {"num_dims", "num_symbols", "context", NULL};
  PyObject *a[3];
  if (!tp_fastargs("get_empty", args, nargs, kw, names, 2, 3, a)) return NULL;
  intptr_t nd, ns;
  if (!nonneg(a[0], "num_dims", &nd) || !nonneg(a[1], "num_symbols", &ns)) return NULL;
  PyObject *ctx = ctx_arg(a[2]);
  if (!ctx) return NULL;
  return wrap_set(ctx, mlirIntegerSetEmptyGet(tp_ctx_raw(ctx), nd, ns));
}

static PyObject *set_get_replaced(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  static const char *const names[] = {"dim_exprs", "symbol_exprs", "num_result_dims",
                                      "num_result_symbols", NULL};
  PyObject *a[4];
  if (!tp_fastargs("get_replaced", args, nargs, kwnames, names, 4, 4, a)) return NULL;
  PyObject *de = a[0], *se = a[1], *nd_o = a[2], *ns_o = a[3];
  intptr_t nd, ns, n1, n2;
  if (!nonneg(nd_o, "num_result_dims", &nd) || !nonneg(ns_o, "num_result_symbols", &ns))
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
    PyObject *f = PySequence_Fast(lists[k], "expected a list of AffineExpr");
    if (!f) return NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(f); i++) {
      PyObject *x = PySequence_Fast_GET_ITEM(f, i);
      if (!tp_is(x, tp.AffineExpr)) {
        PyErr_Format(tp.CastError,
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
  if (exprs_of(de, TP_CTX(self), nd, ns,
               "attempting to create an IntegerSet by replacing dimensions", &n1, &d) &&
      exprs_of(se, TP_CTX(self), nd, ns, "attempting to create an IntegerSet by replacing symbols",
               &n2, &s))
    r = wrap_set(TP_CTX(self), mlirIntegerSetReplaceGet(S(self), d, s, nd, ns));
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
  return alist_new(ConstraintListType, self, 0, 1, mlirIntegerSetGetNumConstraints(S(self)));
}

static PyObject *set_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirIntegerSetDump(S(self));
  Py_RETURN_NONE;
}

static PyObject *set_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.IntegerSet)) return wrap_set(TP_CTX(owner), S(owner));
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.IntegerSet._CAPIPtr");
  if (!p) return NULL;
  tether_arena *ar = tether_arena_of_context(mlirIntegerSetGetContext((MlirIntegerSet){p}));
  if (!ar) return PyErr_Format(PyExc_ValueError, "the set's context is not a tether Context");
  PyObject *ctx = tp_context_of(ar);
  PyObject *r = ctx ? wrap_set(ctx, (MlirIntegerSet){p}) : NULL;
  Py_XDECREF(ctx);
  return r;
}

static PyMethodDef set_methods[] = {
    {"get", TP_FASTFN(set_get), TP_FAST | METH_STATIC,
     "get(num_dims, num_symbols, exprs, eq_flags, context=None)"},
    {"get_empty", TP_FASTFN(set_get_empty), TP_FAST | METH_STATIC,
     "get_empty(num_dims, num_symbols, context=None)"},
    {"get_replaced", TP_FASTFN(set_get_replaced), TP_FAST,
     "get_replaced(dim_exprs, symbol_exprs, num_result_dims, num_result_symbols)"},
    {"_CAPICreate", (PyCFunction)set_from_capsule, METH_O | METH_STATIC, NULL},
    {"dump", (PyCFunction)set_dump, METH_NOARGS, "Prints the set to stderr."},
    TP_METHODS_END,
};

static PyGetSetDef set_getset[] = {
    {"context", tp_ctxobj_context, NULL, NULL, NULL},
    {"is_canonical_empty", set_canonical_empty, NULL, NULL, NULL},
    {"n_dims", set_n_dims, NULL, NULL, NULL},
    {"n_symbols", set_n_symbols, NULL, NULL, NULL},
    {"n_inputs", set_n_inputs, NULL, NULL, NULL},
    {"n_equalities", set_n_eq, NULL, NULL, NULL},
    {"n_inequalities", set_n_ineq, NULL, NULL, NULL},
    {"constraints", set_constraints, NULL, NULL, NULL},
    {"_CAPIPtr", tp_ctxobj_capsule, NULL, NULL, "mlir.ir.IntegerSet._CAPIPtr"},
    TP_GETSET_END,
};

static PyType_Slot set_slots[] = {
    {Py_tp_new, expr_new},
    {Py_tp_dealloc, tp_ctxobj_dealloc},
    {Py_tp_str, set_str},
    {Py_tp_repr, set_repr},
    {Py_tp_richcompare, tp_ctxobj_richcompare},
    {Py_tp_hash, tp_ctxobj_hash},
    {Py_tp_methods, set_methods},
    {Py_tp_getset, set_getset},
    {Py_tp_doc, "An integer set."},
    {0, NULL},
};

static PyType_Spec set_spec = {"tether.ir.IntegerSet", sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT,
                               set_slots};

/* ---- AffineMapAttr --------------------------------------------------------------------------- */

TP_ISA(MlirAttribute, mlirAttributeIsAAffineMap)

static PyObject *map_attr_get(PyObject *cls, PyObject *map) {
  (void)cls;
  if (!tp_is(map, tp.AffineMap)) return tp_type_error("affine_map", "an AffineMap", map);
  return tp_wrap_attr(TP_CTX(map), mlirAffineMapAttrGet(M(map)));
}

static PyObject *map_attr_value(PyObject *self, void *c) {
  (void)c;
  return tp_wrap_affine_map(TP_CTX(self), mlirAffineMapAttrGetValue((MlirAttribute){TP_PTR(self)}));
}

static PyMethodDef map_attr_methods[] = {
    {"get", (PyCFunction)map_attr_get, METH_O | METH_STATIC, "get(affine_map)"},
    TP_METHODS_END,
};

static PyGetSetDef map_attr_getset[] = {
    {"value", map_attr_value, NULL, "The AffineMap.", NULL},
    TP_GETSET_END,
};

static tp_class_def map_attr_defs[] = {
    {"AffineMapAttr", NULL, isa_mlirAttributeIsAAffineMap, mlirAffineMapAttrGetTypeID,
     map_attr_methods, map_attr_getset, NULL, "An attribute holding an AffineMap.", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

int tp_init_affine(PyObject *m) {
  if (tp_add_type(m, &expr_spec, NULL, &tp.AffineExpr) < 0 ||
      tp_define_classes(m, tp.AffineExpr, expr_defs, NULL) < 0 ||
      tp_add_type(m, &map_spec, NULL, &tp.AffineMap) < 0 ||
      tp_add_type(m, &set_spec, NULL, &tp.IntegerSet) < 0 ||
      tp_add_type(m, &expr_list_spec, NULL, &ExprListType) < 0 ||
      tp_add_type(m, &constraint_list_spec, NULL, &ConstraintListType) < 0 ||
      tp_add_type(m, &constraint_spec, NULL, &ConstraintType) < 0 ||
      tp_define_classes(m, tp.Attribute, map_attr_defs, tp.attr_casters) < 0)
    return -1;
  return 0;
}
