/* affine_expr.c: AffineExpr and its subclasses (upstream's IRAffine.cpp): constants, dimensions,
 * symbols and the binary expressions, with + - * % on AffineExpr or int; and what AffineMap and
 * IntegerSet need of expressions (a list of them within n dimensions and symbols).
 *
 * Invariants: affine values are context-owned like types (each holds its Context object); the
 * dimension and symbol positions an expression uses are checked against the map or set it goes
 * into before the C API sees it, and constant folding that would divide by zero or overflow is
 * refused: MLIR asserts or traps on those.
 */
#include "types.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>

#define E(o) ((MlirAffineExpr){TPY_PTR(o)})

TPY_ISA(MlirAffineExpr, mlirAffineExprIsAAdd)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsAMul)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsAMod)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsAFloorDiv)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsACeilDiv)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsAConstant)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsADim)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsASymbol)
TPY_ISA(MlirAffineExpr, mlirAffineExprIsABinary)

static tpy_class_def expr_defs[];
enum { C_CONST, C_DIM, C_SYM, C_BIN, C_ADD, C_MUL, C_MOD, C_FLOOR, C_CEIL };

PyObject *tpy_wrap_affine_expr(PyObject *ctx, MlirAffineExpr e) {
  if (mlirAffineExprIsNull(e)) Py_RETURN_NONE;
  static const int order[] = {C_ADD, C_MUL, C_MOD, C_FLOOR, C_CEIL, C_CONST, C_DIM, C_SYM};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (expr_defs[order[i]].isa((void *)e.ptr))
      return tpy_ctxobj_new(expr_defs[order[i]].cls, ctx, e.ptr);
  return tpy_ctxobj_new(tpy.AffineExpr, ctx, e.ptr);
}

int tpy_arg_affine_expr(PyObject *o, PyObject *ctx, MlirAffineExpr *out) {
  if (!tpy_is(o, tpy.AffineExpr)) return tpy_type_error("argument", "an AffineExpr", o), 0;
  if (ctx && ((TpContext *)TPY_CTX(o))->arena != ((TpContext *)ctx)->arena) {
    PyErr_SetString(PyExc_ValueError, "an AffineExpr of another context cannot be used here");
    return 0;
  }
  *out = E(o);
  return 1;
}

/* The largest dimension and symbol positions an expression uses (-1: none). */
void tpy_affine_max_positions(MlirAffineExpr e, intptr_t *dim, intptr_t *sym) {
  if (mlirAffineExprIsADim(e)) {
    intptr_t p = mlirAffineDimExprGetPosition(e);
    if (p > *dim) *dim = p;
  } else if (mlirAffineExprIsASymbol(e)) {
    intptr_t p = mlirAffineSymbolExprGetPosition(e);
    if (p > *sym) *sym = p;
  } else if (mlirAffineExprIsABinary(e)) {
    tpy_affine_max_positions(mlirAffineBinaryOpExprGetLHS(e), dim, sym);
    tpy_affine_max_positions(mlirAffineBinaryOpExprGetRHS(e), dim, sym);
  }
}

/* Expressions from a list, each within n_dims dimensions and n_syms symbols. */
int tpy_affine_exprs_of(PyObject *list, PyObject *ctx, intptr_t n_dims, intptr_t n_syms,
                        const char *action, intptr_t *n, MlirAffineExpr **out) {
  PyObject *f = tpy_seq_fast(list, "expected a list of AffineExpr");
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
    if (!tpy_is(x, tpy.AffineExpr)) {
      PyErr_Format(tpy.CastError, "Invalid expression%s when %s", x == Py_None ? " (None?)" : "",
                   action);
      goto fail;
    }
    if (!tpy_arg_affine_expr(x, ctx, &(*out)[i])) goto fail;
    intptr_t d = -1, s = -1;
    tpy_affine_max_positions((*out)[i], &d, &s);
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
  return tpy_wrap_affine_expr(ctx, e);
}

/* An operand of an operator or get_*: an AffineExpr or an int (a constant). */
static int operand(PyObject *o, PyObject *ctx, MlirAffineExpr *out) {
  if (tpy_is(o, tpy.AffineExpr)) return tpy_arg_affine_expr(o, ctx, out);
  if (PyLong_Check(o)) {
    int64_t v;
    if (!tpy_arg_int64(o, "constant", &v)) return 0;
    *out = mlirAffineConstantExprGet(tpy_ctx_raw(ctx), v);
    return 1;
  }
  return -1; /* not an operand: NotImplemented */
}

static PyObject *binop(PyObject *a, PyObject *b, int kind) {
  PyObject *ctx = tpy_is(a, tpy.AffineExpr) ? TPY_CTX(a) : TPY_CTX(b);
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
  PyObject *ctx = tpy_is(a, tpy.AffineExpr) ? TPY_CTX(a) : TPY_CTX(b);
  MlirAffineExpr l, r;
  int ok = operand(a, ctx, &l);
  if (ok == 1) ok = operand(b, ctx, &r);
  if (ok < 0) Py_RETURN_NOTIMPLEMENTED;
  if (!ok) return NULL;
  MlirAffineExpr neg = mlirAffineMulExprGet(mlirAffineConstantExprGet(tpy_ctx_raw(ctx), -1), r);
  return tpy_wrap_affine_expr(ctx, mlirAffineAddExprGet(l, neg));
}

static PyObject *expr_str(PyObject *self) {
  tpy_strbuf b = {0};
  mlirAffineExprPrint(E(self), tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *expr_repr(PyObject *self) { return tpy_ctxobj_repr(self, "AffineExpr"); }

static PyObject *expr_compose(PyObject *self, PyObject *map) {
  if (!tpy_is(map, tpy.AffineMap)) return tpy_type_error("other", "an AffineMap", map);
  return tpy_wrap_affine_expr(TPY_CTX(self),
                              mlirAffineExprCompose(E(self), (MlirAffineMap){TPY_PTR(map)}));
}

static PyObject *expr_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  mlirAffineExprDump(E(self));
  Py_RETURN_NONE;
}

/* AffineExpr.get_add(lhs, rhs) & co.: an AffineExpr and an AffineExpr or int, either side. */
static PyObject *static_binary(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs, int kind) {
  PyObject *ab[2];
  if (!tpy_fastargs(sig, args, nargs, NULL, ab, 2)) return NULL;
  const char *name = sig->info->name;
  PyObject *a = ab[0], *b = ab[1];
  if (!tpy_is(a, tpy.AffineExpr) && !tpy_is(b, tpy.AffineExpr))
    return PyErr_Format(PyExc_TypeError, "%s() needs at least one AffineExpr", name);
  PyObject *r = binop(a, b, kind);
  if (r == Py_NotImplemented) {
    Py_DECREF(r);
    return PyErr_Format(PyExc_TypeError, "%s() takes AffineExpr or int arguments", name);
  }
  return r;
}

#define STATIC_BIN(fn, kind, result)                                                               \
  static tpy_sig fn##_sig =                                                                        \
      TPY_SIG(#fn "(lhs: AffineExpr | int, rhs: AffineExpr | int, /) -> " result, NULL);           \
  static PyObject *fn(PyObject *cls, PyObject *const *args, Py_ssize_t nargs) {                    \
    (void)cls;                                                                                     \
    return static_binary(&fn##_sig, args, nargs, kind);                                            \
  }
STATIC_BIN(get_add, C_ADD, "AffineAddExpr")
STATIC_BIN(get_mul, C_MUL, "AffineMulExpr")
STATIC_BIN(get_mod, C_MOD, "AffineModExpr")
STATIC_BIN(get_floor_div, C_FLOOR, "AffineFloorDivExpr")
STATIC_BIN(get_ceil_div, C_CEIL, "AffineCeilDivExpr")

static tpy_sig get_constant_sig =
    TPY_SIG("get_constant(value: int, context: Context | None = None) -> AffineConstantExpr", NULL);

static PyObject *get_constant(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&get_constant_sig, args, nargs, kwnames, a, 2)) return NULL;
  int64_t v;
  if (!tpy_arg_int64(a[0], "value", &v)) return NULL;
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  return tpy_wrap_affine_expr(ctx, mlirAffineConstantExprGet(tpy_ctx_raw(ctx), v));
}

static PyObject *get_position(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames, int symbol) {
  PyObject *a[2];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2)) return NULL;
  intptr_t p;
  if (!tpy_arg_intptr(a[0], "position", &p)) return NULL;
  if (p < 0 || p > UINT32_MAX) return PyErr_Format(PyExc_ValueError, "position must be >= 0");
  PyObject *ctx = tpy_context_arg(a[1]);
  if (!ctx) return NULL;
  MlirContext c = tpy_ctx_raw(ctx);
  return tpy_wrap_affine_expr(ctx,
                              symbol ? mlirAffineSymbolExprGet(c, p) : mlirAffineDimExprGet(c, p));
}

static tpy_sig get_dim_sig =
    TPY_SIG("get_dim(position: int, context: Context | None = None) -> AffineDimExpr", NULL);

static PyObject *get_dim(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  return get_position(&get_dim_sig, args, nargs, kw, 0);
}

static tpy_sig get_symbol_sig =
    TPY_SIG("get_symbol(position: int, context: Context | None = None) -> AffineSymbolExpr", NULL);

static PyObject *get_symbol(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kw) {
  (void)cls;
  return get_position(&get_symbol_sig, args, nargs, kw, 1);
}

static PyObject *expr_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.AffineExpr)) return tpy_wrap_affine_expr(TPY_CTX(owner), E(owner));
  void *p = tpy_capsule_pointer(cap, "mlir.ir.AffineExpr._CAPIPtr");
  if (!p) return NULL;
  tether_arena *a = tpy_arena_for_capsule(mlirAffineExprGetContext((MlirAffineExpr){p}));
  if (!a) return NULL;
  PyObject *ctx = tpy_context_of(a);
  PyObject *r = ctx ? tpy_wrap_affine_expr(ctx, (MlirAffineExpr){p}) : NULL;
  Py_XDECREF(ctx);
  return r;
}

PyObject *tpy_affine_new_refused(PyTypeObject *t, PyObject *args, PyObject *kw) {
  (void)t;
  (void)args;
  (void)kw;
  PyErr_SetString(PyExc_TypeError, "AffineExpr objects come from AffineExpr.get_* and the "
                                   "subclasses' get()");
  return NULL;
}

#if TETHER_MLIR_VERSION >= 22
/* shift_dims(num_dims, shift, offset=0) and shift_symbols(num_symbols, shift, offset=0): MLIR
 * builds a replacement for each of the first num positions; positions the expression does not use
 * change nothing, so only those up to the largest it uses are asked for (the result is the same,
 * without a table of 2**32 expressions). */
static PyObject *expr_shift(tpy_sig *sig, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames, int dims) {
  PyObject *a[3];
  unsigned n, shift, offset = 0;
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 3) ||
      !tpy_arg_uint_in(a[0], sig->info->names[0], &n) || !tpy_arg_uint_in(a[1], "shift", &shift) ||
      (a[2] && !tpy_arg_uint_in(a[2], "offset", &offset)))
    return NULL;
  MlirAffineExpr e = {TPY_PTR(self)};
  intptr_t max_dim = -1, max_sym = -1;
  tpy_affine_max_positions(e, &max_dim, &max_sym);
  intptr_t used = (dims ? max_dim : max_sym) + 1;
  if ((intptr_t)n > used) n = (unsigned)used;
  if (offset > n) offset = n;
  return tpy_wrap_affine_expr(TPY_CTX(self), dims
                                                 ? mlirAffineExprShiftDims(e, n, shift, offset)
                                                 : mlirAffineExprShiftSymbols(e, n, shift, offset));
}

static tpy_sig expr_shift_dims_sig =
    TPY_SIG("shift_dims(num_dims: int, shift: int, offset: int = 0) -> AffineExpr",
            "Dimensions offset..num_dims-1 moved by shift.");

static PyObject *expr_shift_dims(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  return expr_shift(&expr_shift_dims_sig, self, args, nargs, kwnames, 1);
}

static tpy_sig expr_shift_symbols_sig =
    TPY_SIG("shift_symbols(num_symbols: int, shift: int, offset: int = 0) -> AffineExpr",
            "Symbols offset..num_symbols-1 moved by shift.");

static PyObject *expr_shift_symbols(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  return expr_shift(&expr_shift_symbols_sig, self, args, nargs, kwnames, 0);
}

static tpy_sig expr_simplify_sig =
    TPY_SIG("simplify_affine_expr(expr: AffineExpr, num_dims: int, num_symbols: int) -> AffineExpr",
            "The expression simplified.");

/* AffineExpr.simplify_affine_expr(expr, num_dims, num_symbols): MLIR's flattening indexes a row
 * of num_dims + num_symbols entries by the positions the expression uses, for each node: the
 * positions must be within the counts (ValueError), and the counts at most 2**16 together. */
static PyObject *expr_simplify(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  unsigned nd, ns;
  MlirAffineExpr e;
  if (!tpy_fastargs(&expr_simplify_sig, args, nargs, kwnames, a, 3) ||
      !tpy_arg_affine_expr(a[0], NULL, &e) || !tpy_arg_uint_in(a[1], "num_dims", &nd) ||
      !tpy_arg_uint_in(a[2], "num_symbols", &ns))
    return NULL;
  if ((unsigned long long)nd + ns > (1u << 16))
    return PyErr_Format(PyExc_ValueError, "num_dims + num_symbols must be at most 2**16");
  intptr_t max_dim = -1, max_sym = -1;
  tpy_affine_max_positions(e, &max_dim, &max_sym);
  if (max_dim >= (intptr_t)nd || max_sym >= (intptr_t)ns)
    return PyErr_Format(PyExc_ValueError,
                        "the expression uses %s %zd, but there are only %u dimensions and %u "
                        "symbols",
                        max_dim >= (intptr_t)nd ? "dimension" : "symbol",
                        (Py_ssize_t)(max_dim >= (intptr_t)nd ? max_dim : max_sym), nd, ns);
  return tpy_wrap_affine_expr(TPY_CTX(a[0]), mlirSimplifyAffineExpr(e, nd, ns));
}

/* maybe_downcast(): the expression as its subclass (AffineAddExpr, ...), as every expression
 * tether hands out already is. */
static PyObject *expr_maybe_downcast(PyObject *self, PyObject *unused) {
  (void)unused;
  return tpy_wrap_affine_expr(TPY_CTX(self), (MlirAffineExpr){TPY_PTR(self)});
}
#endif

static PyMethodDef expr_methods[] = {
#if TETHER_MLIR_VERSION >= 22
    {"shift_dims", TPY_FASTFN(expr_shift_dims), TPY_FAST, TPY_DOC(expr_shift_dims_sig)},
    {"shift_symbols", TPY_FASTFN(expr_shift_symbols), TPY_FAST, TPY_DOC(expr_shift_symbols_sig)},
    {"simplify_affine_expr", TPY_FASTFN(expr_simplify), TPY_FAST | METH_STATIC,
     TPY_DOC(expr_simplify_sig)},
    {"maybe_downcast", (PyCFunction)expr_maybe_downcast, METH_NOARGS,
     TPY_SIGDOC("maybe_downcast() -> AffineExpr", "The expression as its subclass.")},
#endif
    {"compose", (PyCFunction)expr_compose, METH_O,
     TPY_SIGDOC("compose(affine_map: AffineMap, /) -> AffineExpr",
                "The expression composed with an AffineMap.")},
    {"get_add", TPY_FASTFN(get_add), METH_FASTCALL | METH_STATIC, TPY_DOC(get_add_sig)},
    {"get_mul", TPY_FASTFN(get_mul), METH_FASTCALL | METH_STATIC, TPY_DOC(get_mul_sig)},
    {"get_mod", TPY_FASTFN(get_mod), METH_FASTCALL | METH_STATIC, TPY_DOC(get_mod_sig)},
    {"get_floor_div", TPY_FASTFN(get_floor_div), METH_FASTCALL | METH_STATIC,
     TPY_DOC(get_floor_div_sig)},
    {"get_ceil_div", TPY_FASTFN(get_ceil_div), METH_FASTCALL | METH_STATIC,
     TPY_DOC(get_ceil_div_sig)},
    {"get_constant", TPY_FASTFN(get_constant), TPY_FAST | METH_STATIC, TPY_DOC(get_constant_sig)},
    {"get_dim", TPY_FASTFN(get_dim), TPY_FAST | METH_STATIC, TPY_DOC(get_dim_sig)},
    {"get_symbol", TPY_FASTFN(get_symbol), TPY_FAST | METH_STATIC, TPY_DOC(get_symbol_sig)},
    {"_CAPICreate", (PyCFunction)expr_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> AffineExpr", NULL)},
    {"dump", (PyCFunction)expr_dump, METH_NOARGS,
     TPY_SIGDOC("dump() -> None", "Prints the expression to stderr.")},
    TPY_METHODS_END,
};

static PyGetSetDef expr_getset[] = {
    {"context", tpy_ctxobj_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"_CAPIPtr", tpy_ctxobj_capsule, NULL, TPY_PROP("object", NULL), "mlir.ir.AffineExpr._CAPIPtr"},
    TPY_GETSET_END,
};

static PyType_Slot expr_slots[] = {
    {Py_tp_new, tpy_affine_new_refused},
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_str, expr_str},
    {Py_tp_repr, expr_repr},
    {Py_tp_richcompare, tpy_ctxobj_richcompare},
    {Py_tp_hash, tpy_ctxobj_hash},
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

/* AffineConstantExpr.get: get_constant (by that name in its messages). */
static tpy_sig const_get_sig =
    TPY_SIG("get(value: int, context: Context | None = None) -> AffineConstantExpr", NULL);

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
  return tpy_wrap_affine_expr(TPY_CTX(self), mlirAffineBinaryOpExprGetLHS(E(self)));
}

static PyObject *bin_rhs(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_affine_expr(TPY_CTX(self), mlirAffineBinaryOpExprGetRHS(E(self)));
}

static tpy_sig bin_get_sig =
    TPY_SIG("get(lhs: AffineExpr | int, rhs: AffineExpr | int, /) -> Self", NULL);

/* X.get(lhs, rhs) for the binary subclasses (def->data: the kind). */
static PyObject *bin_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs) {
  tpy_class_def *d = tpy_class_def_of((PyTypeObject *)cls);
  int kind = d ? (int)(intptr_t)d->data : C_ADD;
  return static_binary(&bin_get_sig, args, nargs, kind);
}

static PyMethodDef const_methods[] = {
    {"get", TPY_FASTFN(const_get), TPY_FAST | METH_STATIC, TPY_DOC(const_get_sig)},
    TPY_METHODS_END,
};
static PyMethodDef dim_methods[] = {
    {"get", TPY_FASTFN(get_dim), TPY_FAST | METH_STATIC,
     TPY_SIGDOC("get(position: int, context: Context | None = None) -> AffineDimExpr", NULL)},
    TPY_METHODS_END,
};
static PyMethodDef sym_methods[] = {
    {"get", TPY_FASTFN(get_symbol), TPY_FAST | METH_STATIC,
     TPY_SIGDOC("get(position: int, context: Context | None = None) -> AffineSymbolExpr", NULL)},
    TPY_METHODS_END,
};
static PyMethodDef bin_methods[] = {
    {"get", TPY_FASTFN(bin_get), METH_FASTCALL | METH_CLASS, TPY_DOC(bin_get_sig)},
    TPY_METHODS_END,
};
static PyGetSetDef const_getset[] = {{"value", const_value, NULL, TPY_PROP("int", NULL), NULL},
                                     TPY_GETSET_END};
static PyGetSetDef dim_getset[] = {{"position", dim_position, NULL, TPY_PROP("int", NULL), NULL},
                                   TPY_GETSET_END};
static PyGetSetDef sym_getset[] = {{"position", sym_position, NULL, TPY_PROP("int", NULL), NULL},
                                   TPY_GETSET_END};
static PyGetSetDef bin_getset[] = {
    {"lhs", bin_lhs, NULL, TPY_PROP("AffineExpr", NULL), NULL},
    {"rhs", bin_rhs, NULL, TPY_PROP("AffineExpr", NULL), NULL},
    TPY_GETSET_END,
};

static PyObject *expr_sub_repr(PyObject *self) { return expr_repr(self); }
static PyType_Slot expr_sub_slots[] = {{Py_tp_repr, expr_sub_repr}, {0, NULL}};

#define BIN(Name, isa, kind)                                                                       \
  {                                                                                                \
    Name, "AffineBinaryExpr", isa, NULL, bin_methods, NULL, expr_sub_slots, NULL,                  \
        (void *)(intptr_t)(kind), NULL                                                             \
  }

static tpy_class_def expr_defs[] = {
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

int tpy_affine_arg_count(PyObject *o, const char *what, intptr_t *out) {
  if (!tpy_arg_intptr(o, what, out)) return 0;
  if (*out < 0 || *out > (1 << 24)) {
    PyErr_Format(PyExc_ValueError, "%s must be in [0, 2**24]", what);
    return 0;
  }
  return 1;
}

int tpy_init_affine_expr(PyObject *m) {
  if (tpy_add_type(m, &expr_spec, NULL, &tpy.AffineExpr) < 0 ||
      tpy_define_classes(m, tpy.AffineExpr, expr_defs, NULL) < 0)
    return -1;
  return 0;
}
