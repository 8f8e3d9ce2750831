/* patterns.c: MLIR 22's rewriting from Python (upstream 22's mlir.rewrite), in _tether._rewrite:
 * RewritePatternSet with patterns written in Python, the PatternRewriter they get, the
 * PDLResultList of PDL native functions written in Python, GreedyRewriteConfig, and the callbacks
 * MLIR makes into Python while rewrite.c applies a set.
 *
 * Invariant: Python runs inside MLIR only while tether applies the set the callable belongs to, on
 * the thread that applies it, inside an arena callback scope (tether_scope_enter): the tree is
 * revalidated before Python sees it, MLIR's driver keeps every operation it holds (the tree being
 * rewritten changes structurally only through the PatternRewriter, which tells the driver and
 * invalidates what it erases), and the PatternRewriter and PDLResultList objects refuse use once
 * their callback returned. An exception stops the set's Python callbacks (they fail from then on)
 * and is raised when the application returns. MLIR calling them any other way (a set handed out
 * through _CAPIPtr) finds no application of its own: they fail without calling Python.
 */
#include "passes.h"

#if TETHER_MLIR_VERSION >= 22

#include <string.h>

static _Thread_local tpy_apply_run *active_apply;

/* The enum classes tether/rewrite.py defines (_set_enums), or NULL. */

uint64_t tpy_pattern_set_id(void) {
  static uint64_t next;
  return ++next;
}

void tpy_apply_begin(tpy_apply_run *r, uint64_t set_id, TpContext *ctx, int driver) {
  r->outer = active_apply;
  r->set_id = set_id;
  r->ctx = ctx;
  r->driver = driver;
  r->error = NULL;
  active_apply = r;
}

void tpy_apply_end(tpy_apply_run *r) { active_apply = r->outer; }

/* The application a callback of fn belongs to, or NULL: then it must fail without Python. */
static tpy_apply_run *apply_of(const tpy_pyfn *fn) {
  tpy_apply_run *r = active_apply;
  if (!fn || !fn->fn || !r || r->set_id != fn->set_id || r->error || !PyGILState_Check())
    return NULL;
  return r;
}

/* Moves the pending exception into r->error (the first one is kept). */
static void stash_error(tpy_apply_run *r) {
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  PyErr_NormalizeException(&et, &ev, &tb);
  if (ev && tb) PyException_SetTraceback(ev, tb);
  if (!r->error && ev)
    r->error = ev;
  else
    Py_XDECREF(ev);
  Py_XDECREF(et);
  Py_XDECREF(tb);
}

/* A callback's result as MLIR's: success when the callable returned something false (None). */
static MlirLogicalResult result_of(tpy_apply_run *r, PyObject *res) {
  if (!res) {
    stash_error(r);
    return mlirLogicalResultFailure();
  }
  int t = PyObject_IsTrue(res);
  Py_DECREF(res);
  if (t < 0) stash_error(r);
  return t ? mlirLogicalResultFailure() : mlirLogicalResultSuccess();
}

/* ---- PatternRewriter ------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD tether_scope *scope; /* NULL once its callback returned */
  PyObject *context;                 /* TpContext */
} TpRewriter;

static PyObject *rewriter_new(tether_scope *scope, TpContext *ctx) {
  TpRewriter *self = PyObject_New(TpRewriter, tpy.PatternRewriter);
  if (!self) return NULL;
  self->scope = scope;
  self->context = Py_NewRef(ctx);
  return (PyObject *)self;
}

static void rewriter_dealloc(TpRewriter *self) {
  PyTypeObject *t = Py_TYPE(self);
  Py_CLEAR(self->context);
  PyObject_Free(self);
  Py_DECREF(t);
}

/* The scope of a rewriter that may be used now, or NULL with RuntimeError. */
static tether_scope *rewriter_scope(TpRewriter *self) {
  if (!self->scope || tether_scope_check(self->scope) != TETHER_OK) {
    PyErr_SetString(PyExc_RuntimeError,
                    "this PatternRewriter is only valid while the pattern or PDL function that "
                    "received it runs (and not inside a nested rewrite)");
    return NULL;
  }
  return self->scope;
}

static PyObject *rewriter_ip(TpRewriter *self, void *c) {
  (void)c;
  tether_scope *s = rewriter_scope(self);
  if (!s) return NULL;
  tether_arena *a = ((TpContext *)self->context)->arena;
  MlirBlock block = mlirRewriterBaseGetInsertionBlock(s->rewriter);
  MlirOperation op = mlirRewriterBaseGetOperationAfterInsertion(s->rewriter);
  if (mlirBlockIsNull(block))
    return PyErr_Format(PyExc_RuntimeError, "the PatternRewriter has no insertion point");
  PyObject *where;
  if (mlirOperationIsNull(op)) {
    tether_block *b;
    int rc = tether_block_wrap(a, block, &b);
    if (rc != TETHER_OK) return tpy_raise(rc, NULL, a);
    where = tpy_wrap_block(b);
  } else {
    tether_op *h;
    int rc = tether_op_wrap(a, op, &h);
    if (rc != TETHER_OK) return tpy_raise(rc, NULL, a);
    where = tpy_wrap_operation(h);
  }
  if (!where) return NULL;
  PyObject *ip = PyObject_CallOneArg((PyObject *)tpy.InsertionPoint, where);
  Py_DECREF(where);
  return ip;
}

/* A status of the rewriter's erase or replace as an exception (NULL), or None. */
static PyObject *rewrite_status(int rc, tether_op *h, const char *what) {
  switch (rc) {
  case TETHER_OK:
    Py_RETURN_NONE;
  case TETHER_EBUSY:
    return PyErr_Format(PyExc_ValueError,
                        "cannot %s: values or blocks of the operation are still used outside it "
                        "(replace those uses first)",
                        what);
  case TETHER_EARG:
    return PyErr_Format(PyExc_ValueError,
                        "cannot %s: the PatternRewriter changes only operations nested in the "
                        "operation the patterns apply to (under walk_and_apply_patterns, only the "
                        "matched one), replaced by as many values as the operation has results, "
                        "defined outside it",
                        what);
  case TETHER_ESTATE:
    return PyErr_Format(PyExc_RuntimeError,
                        "cannot %s from here: the PatternRewriter erases and replaces operations "
                        "only in a rewrite pattern (not in a PDL native function)",
                        what);
  case TETHER_ESUSPENDED:
    return PyErr_Format(PyExc_ValueError,
                        "cannot %s: the replacement must be IR of the module being rewritten "
                        "(insert new operations at rewriter.ip)",
                        what);
  default:
    return TPY_RAISE_RC(rc, h);
  }
}

static tpy_sig rewriter_erase_op_sig =
    TPY_SIG("erase_op(op: _OperationBase) -> None", "Erases op, whose results must be unused.");

static PyObject *rewriter_erase_op(TpRewriter *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  PyObject *o;
  if (!tpy_fastargs(&rewriter_erase_op_sig, args, nargs, kwnames, &o, 1)) return NULL;
  tether_scope *s = rewriter_scope(self);
  tether_op *h;
  MlirOperation raw;
  if (!s || !tpy_arg_op(o, &h, &raw)) return NULL;
  return rewrite_status(tether_rewriter_erase_op(s, h), h, "erase the operation");
}

static tpy_sig replace_op_values_sig =
    TPY_SIG("replace_op(op: _OperationBase, values: Sequence[Value]) -> None", NULL);
static tpy_sig rewriter_replace_op_sig = TPY_SIG_OR(
    "replace_op(op: _OperationBase, new_op: _OperationBase) -> None",
    "Replaces op's results and erases it; its objects raise InvalidatedError afterwards.",
    &replace_op_values_sig);

/* replace_op(op, new_op) | replace_op(op, values), as upstream 22's two overloads. */
static PyObject *rewriter_replace_op(TpRewriter *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  PyObject *second = nargs > 1 ? args[1] : tpy_kwarg(args, nargs, kwnames, "new_op");
  bool with_op = second && tpy_is(second, tpy.OperationBase);
  PyObject *a[2];
  if (!tpy_fastargs(with_op ? &rewriter_replace_op_sig : &replace_op_values_sig, args, nargs,
                    kwnames, a, 2))
    return NULL;
  tether_scope *s = rewriter_scope(self);
  tether_op *h;
  MlirOperation raw;
  if (!s || !tpy_arg_op(a[0], &h, &raw)) return NULL;
  if (with_op) {
    tether_op *w;
    if (!tpy_arg_op(a[1], &w, &raw)) return NULL;
    return rewrite_status(tether_rewriter_replace_op_with(s, h, w), h, "replace the operation");
  }
  if (tpy_is(a[1], tpy.Value))
    return tpy_type_error("replace_op() argument 'values'", "a list of Values or an operation",
                          a[1]);
  PyObject *list = tpy_arg_seq(a[1], "values");
  if (!list) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(list);
  tether_value **vs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *vs);
  PyObject *r = NULL;
  if (!vs) {
    PyErr_NoMemory();
    goto out;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    MlirValue vraw;
    PyObject *v = PyList_GET_ITEM(list, i);
    if (!tpy_is(v, tpy.Value)) {
      char buf[32];
      tpy_type_error(tpy_nth(buf, sizeof buf, "values", i), "a Value", v);
      goto out;
    }
    if (!tpy_arg_value(v, &vs[i], &vraw)) goto out;
  }
  /* The list holds the Value objects (and so their handles) until the call returns. */
  r = rewrite_status(tether_rewriter_replace_op(s, h, vs, (intptr_t)n), h, "replace the operation");
out:
  PyMem_Free(vs);
  Py_DECREF(list);
  return r;
}

static PyMethodDef rewriter_methods[] = {
    {"replace_op", TPY_FASTFN(rewriter_replace_op), TPY_FAST, TPY_DOC(rewriter_replace_op_sig)},
    {"erase_op", TPY_FASTFN(rewriter_erase_op), TPY_FAST, TPY_DOC(rewriter_erase_op_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef rewriter_getset[] = {
    {"ip", (getter)rewriter_ip, NULL,
     TPY_PROP("InsertionPoint", "The current insertion point of the PatternRewriter."), NULL},
    TPY_GETSET_END,
};

static PyType_Slot rewriter_slots[] = {
    {Py_tp_dealloc, rewriter_dealloc},
    {Py_tp_methods, rewriter_methods},
    {Py_tp_getset, rewriter_getset},
    {Py_tp_doc, "What a rewrite pattern written in Python gets to change IR through MLIR's "
                "rewriter; valid while the pattern runs."},
    {0, NULL},
};

static PyType_Spec rewriter_spec = {"tether.rewrite.PatternRewriter", sizeof(TpRewriter), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                    rewriter_slots};

/* ---- patterns written in Python -------------------------------------------------------------- */

static void pyfn_construct(void *ud) { (void)ud; }

static void pyfn_destruct(void *ud) {
  tpy_pyfn *f = ud;
  /* MLIR destroys patterns with their set, which its Python object destroys (GIL held). */
  if (f->fn && PyGILState_Check()) Py_DECREF(f->fn);
  PyMem_RawFree(f);
}

static MlirLogicalResult pattern_match(MlirRewritePattern pattern, MlirOperation op,
                                       MlirPatternRewriter rewriter, void *ud) {
  (void)pattern;
  tpy_pyfn *f = ud;
  tpy_apply_run *r = apply_of(f);
  if (!r) return mlirLogicalResultFailure();
  tether_scope scope;
  int kind = r->driver == TETHER_DRIVER_WALK ? TETHER_SCOPE_WALK : TETHER_SCOPE_PATTERN;
  int rc = tether_scope_enter(r->ctx->arena, kind, op, mlirPatternRewriterAsBase(rewriter), &scope);
  if (rc != TETHER_OK) {
    PyErr_SetString(PyExc_RuntimeError, "a rewrite pattern written in Python ran outside its "
                                        "application");
    stash_error(r);
    return mlirLogicalResultFailure();
  }
  PyObject *res = NULL, *view = NULL, *rw = NULL;
  tether_op *h;
  rc = tether_op_wrap(r->ctx->arena, op, &h);
  if (rc != TETHER_OK)
    tpy_raise(rc, NULL, r->ctx->arena);
  else if ((view = tpy_wrap_op(h)) && (rw = rewriter_new(&scope, r->ctx)))
    res = PyObject_CallFunctionObjArgs(f->fn, view, rw, NULL);
  if (rw) ((TpRewriter *)rw)->scope = NULL;
  Py_XDECREF(rw);
  Py_XDECREF(view);
  MlirLogicalResult out = result_of(r, res);
  /* The pattern erased the matched operation (or what holds it) through the rewriter: MLIR must
   * hear "matched", or it tries its next pattern on the freed operation. */
  if (rc == TETHER_OK && !tether_handle_is_valid(h)) out = mlirLogicalResultSuccess();
  tether_scope_leave(&scope);
  return out;
}

/* ---- RewritePatternSet ----------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD MlirRewritePatternSet set; /* owned */
  PyObject *context;                       /* TpContext */
  uint64_t id;                             /* of the frozen set its patterns go to */
} TpPatternSet;

static tpy_sig pset_new_sig = TPY_SIG("RewritePatternSet(context: Context | None = None)",
                                      "Rewrite patterns written in Python.");

static PyObject *pset_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *c = NULL;
  if (!tpy_args(&pset_new_sig, args, kw, &c, 1)) return NULL;
  TpContext *ctx = tpy_resolve_context(c);
  if (!ctx) return NULL;
  TpPatternSet *self = (TpPatternSet *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->set = mlirRewritePatternSetCreate(tpy_ctx_raw((PyObject *)ctx));
  self->context = Py_NewRef(ctx);
  self->id = tpy_pattern_set_id();
  return (PyObject *)self;
}

static void pset_dealloc(TpPatternSet *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (self->set.ptr) mlirRewritePatternSetDestroy(self->set); /* the patterns release their fns */
  self->set.ptr = NULL;
  Py_CLEAR(self->context);
  t->tp_free(self);
  Py_DECREF(t);
}

static tpy_sig pset_add_sig =
    TPY_SIG("add(root: type[OpView] | str, fn: Callable[[Any, PatternRewriter], Any], benefit: int "
            "= 1) -> None",
            "A pattern on operations named root (an OpView class or a name): fn(op, rewriter) "
            "rewrites op through the PatternRewriter and returns something false (None) when it "
            "matched, something true when it did not.");

/* add(root, fn, benefit=1): root an OpView class (its OPERATION_NAME) or an operation name. */
static PyObject *pset_add(TpPatternSet *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  PyObject *a[3];
  if (!tpy_fastargs(&pset_add_sig, args, nargs, kwnames, a, 3)) return NULL;
  unsigned benefit = 1;
  if (a[2] && !tpy_arg_uint_in(a[2], "benefit", &benefit)) return NULL;
  if (!PyCallable_Check(a[1])) return tpy_type_error("add() argument 'fn'", "a callable", a[1]);
  PyObject *name;
  if (PyType_Check(a[0]))
    name = PyObject_GetAttrString(a[0], "OPERATION_NAME");
  else if (PyUnicode_Check(a[0]))
    name = Py_NewRef(a[0]);
  else
    return PyErr_Format(PyExc_TypeError, "the root argument must be a type or a string");
  if (!name) return NULL;
  MlirStringRef s;
  PyObject *r = NULL;
  if (!tpy_arg_str(name, "root", &s)) goto out;
  const char *dot = s.length ? memchr(s.data, '.', s.length) : NULL;
  if (!dot || dot == s.data || memchr(s.data, 0, s.length)) {
    PyErr_Format(PyExc_ValueError, "the root must name an operation ('dialect.op'), not %R", name);
    goto out;
  }
  MlirContext ctx = tpy_ctx_raw(self->context);
  /* MLIR keeps the name's storage: its dialect is loaded first (a name made before its dialect
   * loads is replaced, and freed, when it does). */
  mlirContextGetOrLoadDialect(ctx, mlirStringRefCreate(s.data, (size_t)(dot - s.data)));
  tpy_pyfn *f = PyMem_RawMalloc(sizeof *f);
  if (!f) {
    PyErr_NoMemory();
    goto out;
  }
  f->fn = Py_NewRef(a[1]);
  f->name = NULL;
  f->set_id = self->id;
  f->rewrite = false;
  MlirRewritePatternCallbacks cb = {pyfn_construct, pyfn_destruct, pattern_match};
  mlirRewritePatternSetAdd(self->set, mlirOpRewritePatternCreate(s, benefit, ctx, cb, f, 0, NULL));
  r = Py_NewRef(Py_None);
out:
  Py_DECREF(name);
  return r;
}

/* freeze(): the patterns added so far, as a FrozenRewritePatternSet; the set is then empty (and
 * may be filled and frozen again). */
static PyObject *pset_freeze(TpPatternSet *self, PyObject *unused) {
  (void)unused;
  MlirFrozenRewritePatternSet frozen = mlirFreezeRewritePattern(self->set);
  mlirRewritePatternSetDestroy(self->set); /* emptied by the move */
  self->set = mlirRewritePatternSetCreate(tpy_ctx_raw(self->context));
  uint64_t id = self->id;
  self->id = tpy_pattern_set_id();
  return tpy_frozen_set_new(frozen, self->context, id, true, NULL, NULL, 0);
}

static PyMethodDef pset_methods[] = {
    {"add", TPY_FASTFN(pset_add), TPY_FAST, TPY_DOC(pset_add_sig)},
    {"freeze", (PyCFunction)pset_freeze, METH_NOARGS,
     TPY_SIGDOC("freeze() -> FrozenRewritePatternSet",
                "The patterns as a FrozenRewritePatternSet (the set is empty afterwards).")},
    TPY_METHODS_END,
};

static PyType_Slot pset_slots[] = {
    {Py_tp_new, pset_new},
    {Py_tp_dealloc, pset_dealloc},
    {Py_tp_methods, pset_methods},
    {Py_tp_doc, TPY_DOC(pset_new_sig)},
    {0, NULL},
};

static PyType_Spec pset_spec = {"tether.rewrite.RewritePatternSet", sizeof(TpPatternSet), 0,
                                Py_TPFLAGS_DEFAULT, pset_slots};

/* ---- PDLResultList and PDL native functions -------------------------------------------------- */

typedef struct {
  PyObject_HEAD tether_pdl_results *results; /* NULL once its function returned */
  tether_scope *scope;
  PyObject *context; /* TpContext */
} TpResultList;

static void results_dealloc(TpResultList *self) {
  PyTypeObject *t = Py_TYPE(self);
  Py_CLEAR(self->context);
  PyObject_Free(self);
  Py_DECREF(t);
}

static const char *const kind_names[] = {"an Attribute", "an Operation", "a Type", "a Value"};

/* append(value | op | type | attribute): the next result of the running native function. */
static PyObject *results_append(TpResultList *self, PyObject *o) {
  if (!self->results || tether_scope_check(self->scope) != TETHER_OK)
    return PyErr_Format(PyExc_RuntimeError, "this PDLResultList is only valid while the PDL "
                                            "function that received it runs");
  tether_pdl_kind kind;
  const void *raw;
  int rc = TETHER_OK;
  if (tpy_is(o, tpy.Value)) {
    tether_value *h;
    MlirValue v;
    if (!tpy_arg_value(o, &h, &v)) return NULL;
    rc = tether_scope_check_result(self->scope, h);
    kind = TETHER_PDL_VALUE;
    raw = v.ptr;
  } else if (tpy_is(o, tpy.OperationBase)) {
    tether_op *h;
    MlirOperation op;
    if (!tpy_arg_op(o, &h, &op)) return NULL;
    rc = tether_scope_check_result(self->scope, h);
    kind = TETHER_PDL_OPERATION;
    raw = op.ptr;
  } else if (tpy_is(o, tpy.Type)) {
    MlirType t;
    if (!tpy_arg_type_in(o, self->context, &t)) return NULL;
    kind = TETHER_PDL_TYPE;
    raw = t.ptr;
  } else if (tpy_is(o, tpy.Attribute)) {
    MlirAttribute at;
    if (!tpy_arg_attr_in(o, self->context, &at)) return NULL;
    kind = TETHER_PDL_ATTRIBUTE;
    raw = at.ptr;
  } else {
    return tpy_type_error("append() argument", "a Value, an operation, a Type or an Attribute", o);
  }
  if (rc == TETHER_ESUSPENDED)
    return PyErr_Format(PyExc_ValueError, "a PDL function's results must be IR of the module "
                                          "being rewritten (insert new operations at rewriter.ip)");
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, ((TpContext *)self->context)->arena);
  intptr_t i = tether_pdl_results_given(self->results);
  rc = tether_pdl_results_push(self->results, kind, raw);
  if (rc == TETHER_ERANGE)
    return PyErr_Format(PyExc_ValueError,
                        "the patterns expect %zd result(s) of this function, and it has them",
                        (Py_ssize_t)tether_pdl_results_expected(self->results));
  if (rc != TETHER_OK)
    return PyErr_Format(PyExc_TypeError, "result %zd of this function must be %s, not %s",
                        (Py_ssize_t)i, kind_names[tether_pdl_results_kind(self->results, i)],
                        Py_TYPE(o)->tp_name);
  Py_RETURN_NONE;
}

static PyMethodDef results_methods[] = {
    {"append", (PyCFunction)results_append, METH_O,
     TPY_SIGDOC("append(x: Value | _OperationBase | Type | Attribute, /) -> None",
                "The next result (a Value, an operation, a Type or an Attribute, of the kind the "
                "patterns declare).")},
    TPY_METHODS_END,
};

static PyType_Slot results_slots[] = {
    {Py_tp_dealloc, results_dealloc},
    {Py_tp_methods, results_methods},
    {Py_tp_doc, "The results of a PDL native function written in Python; valid while it runs."},
    {0, NULL},
};

static PyType_Spec results_spec = {"tether.rewrite.PDLResultList", sizeof(TpResultList), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                   results_slots};

/* A PDL value as upstream's: a Value, an operation's OpView, an Attribute or a Type. */
static PyObject *pdl_value(TpContext *ctx, MlirPDLValue v) {
  MlirValue val = mlirPDLValueAsValue(v);
  if (!mlirValueIsNull(val)) {
    tether_value *h;
    int rc = tether_value_wrap(ctx->arena, val, &h);
    return rc == TETHER_OK ? tpy_wrap_value(h) : tpy_raise(rc, NULL, ctx->arena);
  }
  MlirOperation op = mlirPDLValueAsOperation(v);
  if (!mlirOperationIsNull(op)) {
    tether_op *h;
    int rc = tether_op_wrap(ctx->arena, op, &h);
    return rc == TETHER_OK ? tpy_wrap_op(h) : tpy_raise(rc, NULL, ctx->arena);
  }
  MlirAttribute a = mlirPDLValueAsAttribute(v);
  if (!mlirAttributeIsNull(a)) return tpy_wrap_attr((PyObject *)ctx, a);
  MlirType t = mlirPDLValueAsType(v);
  if (!mlirTypeIsNull(t)) return tpy_wrap_type((PyObject *)ctx, t);
  return PyErr_Format(PyExc_RuntimeError, "unsupported PDL value type");
}

/* fn(rewriter, results, values). */
static PyObject *pdl_call(tpy_pyfn *f, TpContext *ctx, tether_scope *scope,
                          tether_pdl_results *results, size_t n, MlirPDLValue *values) {
  PyObject *args = PyList_New((Py_ssize_t)n);
  if (!args) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject *x = pdl_value(ctx, values[i]);
    if (!x) {
      Py_DECREF(args);
      return NULL;
    }
    PyList_SET_ITEM(args, (Py_ssize_t)i, x);
  }
  PyObject *res = NULL, *rw = rewriter_new(scope, ctx);
  TpResultList *rl = rw ? PyObject_New(TpResultList, tpy.PDLResultList) : NULL;
  if (rl) {
    rl->results = results;
    rl->scope = scope;
    rl->context = Py_NewRef(ctx);
    res = PyObject_CallFunctionObjArgs(f->fn, rw, (PyObject *)rl, args, NULL);
    rl->results = NULL;
  }
  if (rw) ((TpRewriter *)rw)->scope = NULL;
  Py_XDECREF(rl);
  Py_XDECREF(rw);
  Py_DECREF(args);
  return res;
}

MlirLogicalResult tpy_pdl_callback(MlirPatternRewriter rewriter, tether_pdl_results *results,
                                   size_t n, MlirPDLValue *values, void *user) {
  tpy_pyfn *f = user;
  tpy_apply_run *r = apply_of(f);
  if (!r) return mlirLogicalResultFailure();
  tether_scope scope;
  int rc = tether_scope_enter(r->ctx->arena, TETHER_SCOPE_PDL, (MlirOperation){NULL},
                              mlirPatternRewriterAsBase(rewriter), &scope);
  if (rc != TETHER_OK) {
    PyErr_SetString(PyExc_RuntimeError, "a PDL function written in Python ran outside its "
                                        "application");
    stash_error(r);
    return mlirLogicalResultFailure();
  }
  PyObject *res = pdl_call(f, r->ctx, &scope, results, n, values);
  bool raised = !res;
  MlirLogicalResult out = result_of(r, res);
  if (mlirLogicalResultIsSuccess(out) &&
      tether_pdl_results_given(results) != tether_pdl_results_expected(results)) {
    PyErr_Format(PyExc_ValueError,
                 "the PDL function %R gave %zd result(s); the patterns expect %zd",
                 f->name ? f->name : Py_None, (Py_ssize_t)tether_pdl_results_given(results),
                 (Py_ssize_t)tether_pdl_results_expected(results));
    stash_error(r);
    out = mlirLogicalResultFailure();
  } else if (f->rewrite && !raised && mlirLogicalResultIsFailure(out) && !r->error) {
    /* MLIR's drivers cannot recover from a failed rewrite: the arena makes it succeed (results
     * made up) and the application reports the failure. */
    PyErr_Format(PyExc_RuntimeError,
                 "the PDL rewrite function %R failed (returned a true value); MLIR's pattern "
                 "drivers cannot recover from a failed rewrite, so the IR was rewritten with "
                 "made-up results",
                 f->name ? f->name : Py_None);
    stash_error(r);
  }
  tether_scope_leave(&scope);
  return out;
}

/* ---- GreedyRewriteConfig --------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD MlirGreedyRewriteDriverConfig config; /* owned */
} TpConfig;

static PyObject *config_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
    return PyErr_Format(PyExc_TypeError, "GreedyRewriteConfig() takes no arguments");
  TpConfig *self = (TpConfig *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->config = mlirGreedyRewriteDriverConfigCreate();
  return (PyObject *)self;
}

static void config_dealloc(TpConfig *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (self->config.ptr) mlirGreedyRewriteDriverConfigDestroy(self->config);
  t->tp_free(self);
  Py_DECREF(t);
}

int tpy_arg_greedy_config(PyObject *o, MlirGreedyRewriteDriverConfig *out) {
  if (!o || o == Py_None) {
    out->ptr = NULL;
    return 1;
  }
  if (!tpy_is(o, tpy.GreedyRewriteConfig)) {
    tpy_type_error("config", "a GreedyRewriteConfig or None", o);
    return 0;
  }
  *out = ((TpConfig *)o)->config;
  return 1;
}

enum {
  C_MAX_ITERATIONS,
  C_MAX_NUM_REWRITES,
  C_TOP_DOWN,
  C_FOLDING,
  C_STRICTNESS,
  C_REGION_LEVEL,
  C_CONSTANT_CSE
};

/* A member of an enum class rewrite.py defined (any int in range before it did). */
static PyObject *enum_member(PyObject *cls, long v) {
  return cls ? PyObject_CallFunction(cls, "l", v) : PyLong_FromLong(v);
}

static PyObject *config_get(TpConfig *self, void *closure) {
  MlirGreedyRewriteDriverConfig c = self->config;
  switch ((int)(intptr_t)closure) {
  case C_MAX_ITERATIONS:
    return PyLong_FromLongLong(mlirGreedyRewriteDriverConfigGetMaxIterations(c));
  case C_MAX_NUM_REWRITES:
    return PyLong_FromLongLong(mlirGreedyRewriteDriverConfigGetMaxNumRewrites(c));
  case C_TOP_DOWN:
    return PyBool_FromLong(mlirGreedyRewriteDriverConfigGetUseTopDownTraversal(c));
  case C_FOLDING:
    return PyBool_FromLong(mlirGreedyRewriteDriverConfigIsFoldingEnabled(c));
  case C_STRICTNESS:
    return enum_member(tpy.GreedyRewriteStrictness, mlirGreedyRewriteDriverConfigGetStrictness(c));
  case C_REGION_LEVEL:
    return enum_member(tpy.GreedySimplifyRegionLevel,
                       mlirGreedyRewriteDriverConfigGetRegionSimplificationLevel(c));
  default:
    return PyBool_FromLong(mlirGreedyRewriteDriverConfigIsConstantCSEEnabled(c));
  }
}

/* A property value: a bool (only True or False, as upstream's), or a member of enum cls in [0,
 * hi]. */
static int arg_strict_bool(PyObject *o, const char *what, bool *out) {
  if (!PyBool_Check(o)) {
    tpy_type_error(what, "a bool", o);
    return 0;
  }
  *out = o == Py_True;
  return 1;
}

static int arg_enum(PyObject *o, PyObject *cls, const char *what, long long hi, long long *out) {
  if (cls && !tpy_is(o, (PyTypeObject *)cls)) {
    tpy_type_error(what, ((PyTypeObject *)cls)->tp_name, o);
    return 0;
  }
  return tpy_arg_int_in(o, what, 0, hi, out);
}

static int config_set(TpConfig *self, PyObject *v, void *closure) {
  if (!v) {
    PyErr_SetString(PyExc_AttributeError, "the properties of a GreedyRewriteConfig cannot be "
                                          "deleted");
    return -1;
  }
  MlirGreedyRewriteDriverConfig c = self->config;
  int64_t i;
  bool b;
  long long e;
  switch ((int)(intptr_t)closure) {
  case C_MAX_ITERATIONS:
    if (!tpy_arg_int64(v, "max_iterations", &i)) return -1;
    mlirGreedyRewriteDriverConfigSetMaxIterations(c, i);
    return 0;
  case C_MAX_NUM_REWRITES:
    if (!tpy_arg_int64(v, "max_num_rewrites", &i)) return -1;
    mlirGreedyRewriteDriverConfigSetMaxNumRewrites(c, i);
    return 0;
  case C_TOP_DOWN:
    if (!arg_strict_bool(v, "use_top_down_traversal", &b)) return -1;
    mlirGreedyRewriteDriverConfigSetUseTopDownTraversal(c, b);
    return 0;
  case C_FOLDING:
    if (!arg_strict_bool(v, "enable_folding", &b)) return -1;
    mlirGreedyRewriteDriverConfigEnableFolding(c, b);
    return 0;
  case C_STRICTNESS:
    if (!arg_enum(v, tpy.GreedyRewriteStrictness, "strictness",
                  MLIR_GREEDY_REWRITE_STRICTNESS_EXISTING_OPS, &e))
      return -1;
    mlirGreedyRewriteDriverConfigSetStrictness(c, (MlirGreedyRewriteStrictness)e);
    return 0;
  case C_REGION_LEVEL:
    if (!arg_enum(v, tpy.GreedySimplifyRegionLevel, "region_simplification_level",
                  MLIR_GREEDY_SIMPLIFY_REGION_LEVEL_AGGRESSIVE, &e))
      return -1;
    mlirGreedyRewriteDriverConfigSetRegionSimplificationLevel(c, (MlirGreedySimplifyRegionLevel)e);
    return 0;
  default:
    if (!arg_strict_bool(v, "enable_constant_cse", &b)) return -1;
    mlirGreedyRewriteDriverConfigEnableConstantCSE(c, b);
    return 0;
  }
}

#define CONFIG_PROP(name, id, type, doc)                                                           \
  { name, (getter)config_get, (setter)config_set, TPY_PROP(type, doc), (void *)(intptr_t)(id) }

static PyGetSetDef config_getset[] = {
    CONFIG_PROP("max_iterations", C_MAX_ITERATIONS, "int", "Maximum number of iterations"),
    CONFIG_PROP("max_num_rewrites", C_MAX_NUM_REWRITES, "int",
                "Maximum number of rewrites per iteration"),
    CONFIG_PROP("use_top_down_traversal", C_TOP_DOWN, "bool", "Whether to use top-down traversal"),
    CONFIG_PROP("enable_folding", C_FOLDING, "bool", "Enable or disable folding"),
    CONFIG_PROP("strictness", C_STRICTNESS, "GreedyRewriteStrictness", "Rewrite strictness level"),
    CONFIG_PROP("region_simplification_level", C_REGION_LEVEL, "GreedySimplifyRegionLevel",
                "Region simplification level"),
    CONFIG_PROP("enable_constant_cse", C_CONSTANT_CSE, "bool", "Enable or disable constant CSE"),
    TPY_GETSET_END,
};

static PyType_Slot config_slots[] = {
    {Py_tp_new, config_new},
    {Py_tp_dealloc, config_dealloc},
    {Py_tp_getset, config_getset},
    {Py_tp_doc, TPY_SIGDOC("GreedyRewriteConfig()",
                           "The greedy driver's configuration, MLIR's defaults first.")},
    {0, NULL},
};

static PyType_Spec config_spec = {"tether.rewrite.GreedyRewriteConfig", sizeof(TpConfig), 0,
                                  Py_TPFLAGS_DEFAULT, config_slots};

/* ---- the submodule --------------------------------------------------------------------------- */

static PyObject *set_enums(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  if (nargs != 2 || !PyType_Check(args[0]) || !PyType_Check(args[1]))
    return PyErr_Format(PyExc_TypeError, "_set_enums(GreedyRewriteStrictness, "
                                         "GreedySimplifyRegionLevel)");
  Py_XSETREF(tpy.GreedyRewriteStrictness, Py_NewRef(args[0]));
  Py_XSETREF(tpy.GreedySimplifyRegionLevel, Py_NewRef(args[1]));
  Py_RETURN_NONE;
}

static PyMethodDef functions[] = {
    {"_set_enums", (PyCFunction)(void (*)(void))set_enums, METH_FASTCALL,
     TPY_SIGDOC("_set_enums(GreedyRewriteStrictness: type, GreedySimplifyRegionLevel: type, /) "
                "-> None",
                "The classes of tether/rewrite.py.")},
    TPY_METHODS_END,
};

/* Adds a class from spec to the submodule sub; *out keeps a reference for the process. */
static int add_class(PyObject *sub, PyType_Spec *spec, PyTypeObject **out) {
  PyObject *t = tpy_type_from_spec(NULL, spec, NULL);
  if (!t) return -1;
  const char *dot = strrchr(spec->name, '.');
  if (PyModule_AddObjectRef(sub, dot + 1, t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  *out = (PyTypeObject *)t;
  return 0;
}

int tpy_init_patterns(PyObject *sub) {
  PyTypeObject *pset;
  if (add_class(sub, &rewriter_spec, &tpy.PatternRewriter) < 0 ||
      add_class(sub, &pset_spec, &pset) < 0 ||
      add_class(sub, &results_spec, &tpy.PDLResultList) < 0 ||
      add_class(sub, &config_spec, &tpy.GreedyRewriteConfig) < 0 ||
      PyModule_AddFunctions(sub, functions) < 0)
    return -1;
  return 0;
}

#endif
