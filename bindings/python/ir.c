/* ir.c: Operation, Module, Region, Block, Value (OpResult, BlockArgument), their sequences, and the
 * module functions that parse and create IR.
 *
 * Invariant: every method gets the MLIR object through the arena's guarded access first, so an
 * invalid handle raises InvalidatedError before anything touches MLIR; arguments are type-checked
 * before any arena call (TypeError), and everything else is reported from the arena's status.
 */
#include "tether_py.h"

#include <mlir-c/BuiltinAttributes.h>
#include <string.h>

/* ---- wrapping -------------------------------------------------------------------------------- */

static PyObject *wrap_handle(PyTypeObject *type, void *h, int intern) {
  if (!h) Py_RETURN_NONE;
  if (intern) {
    PyObject *o = tether_handle_get_user(h);
    if (o) return Py_NewRef(o);
  }
  TpHandle *self = (TpHandle *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pin = tether_pin(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->h = h;
  if (intern) tether_handle_set_user(h, self);
  return (PyObject *)self;
}

static void handle_dealloc(TpHandle *self) {
  if (self->h && tether_handle_get_user(self->h) == self) tether_handle_set_user(self->h, NULL);
  if (self->h && self->pin >= 0) tether_unpin(self->pin);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

PyObject *tp_wrap_op(tether_op *h) { return wrap_handle(tp.Operation, h, 1); }
PyObject *tp_wrap_region(tether_region *h) { return wrap_handle(tp.Region, h, 1); }
PyObject *tp_wrap_block(tether_block *h) { return wrap_handle(tp.Block, h, 1); }
PyObject *tp_wrap_module(tether_op *h) { return wrap_handle(tp.Module, h, 0); }

PyObject *tp_wrap_value(tether_value *h) {
  if (!h) Py_RETURN_NONE;
  bool res = false;
  tether_value_is_result(h, &res);
  return wrap_handle(res ? tp.OpResult : tp.BlockArgument, h, 1);
}

/* ---- argument checks ------------------------------------------------------------------------- */

#define RAISE_RC(rc, h) tp_raise((rc), (h), tether_handle_arena(h))

int tp_arg_op(PyObject *o, tether_op **h, MlirOperation *raw) {
  if (PyObject_TypeCheck(o, tp.Operation) || PyObject_TypeCheck(o, tp.Module)) {
    tether_op *x = ((TpHandle *)o)->h;
    int rc = tether_op_get(x, raw);
    if (rc != TETHER_OK) return RAISE_RC(rc, x), 0;
    *h = x;
    return 1;
  }
  PyObject *op = PyObject_GetAttrString(o, "operation"); /* OpView-like objects */
  if (op && PyObject_TypeCheck(op, tp.Operation)) {
    int ok = tp_arg_op(op, h, raw);
    Py_DECREF(op);
    return ok;
  }
  Py_XDECREF(op);
  PyErr_Clear();
  return tp_type_error("argument", "an Operation", o), 0;
}

#define ARG_FN(name, ctype, rawtype, pytype, getter, what)                                         \
  int name(PyObject *o, ctype **h, rawtype *raw) {                                                 \
    if (!PyObject_TypeCheck(o, tp.pytype)) return tp_type_error("argument", what, o), 0;           \
    ctype *x = ((TpHandle *)o)->h;                                                                 \
    int rc = getter(x, raw);                                                                       \
    if (rc != TETHER_OK) return RAISE_RC(rc, x), 0;                                                \
    *h = x;                                                                                        \
    return 1;                                                                                      \
  }

ARG_FN(tp_arg_region, tether_region, MlirRegion, Region, tether_region_get, "a Region")
ARG_FN(tp_arg_block, tether_block, MlirBlock, Block, tether_block_get, "a Block")
ARG_FN(tp_arg_value, tether_value, MlirValue, Value, tether_value_get, "a Value")

/* The context argument of a constructor: a Context, or None for the current one. */
static PyObject *current_context_hook;

static int resolve_context(PyObject *o, tether_arena **out) {
  if (o && o != Py_None) return tp_arg_context(o, out);
  if (!current_context_hook) {
    PyErr_SetString(PyExc_ValueError, "no context given and no current context");
    return 0;
  }
  PyObject *c = PyObject_CallNoArgs(current_context_hook);
  if (!c) return 0;
  int ok = tp_arg_context(c, out);
  Py_DECREF(c);
  return ok;
}

/* ---- Operation ------------------------------------------------------------------------------- */

#define SELF_OP(self, raw)                                                                         \
  MlirOperation raw;                                                                               \
  do {                                                                                             \
    int rc_ = tether_op_get((self)->h, &raw);                                                      \
    if (rc_ != TETHER_OK) return RAISE_RC(rc_, (self)->h);                                         \
  } while (0)

#define CALL(expr, h)                                                                              \
  do {                                                                                             \
    int rc_ = (expr);                                                                              \
    if (rc_ != TETHER_OK) return RAISE_RC(rc_, (h));                                               \
  } while (0)

/* Operation names repeat: a direct-mapped cache from the name's identifier (unique per name in a
 * context) to its str. The strong references are bounded by the cache size. */
enum { NAME_CACHE = 512 };
static struct {
  const void *id;
  PyObject *str;
} name_cache[NAME_CACHE];

static PyObject *op_name(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  MlirIdentifier id = mlirOperationGetName(raw);
  MlirStringRef s = mlirIdentifierStr(id);
  size_t slot = ((uintptr_t)id.ptr >> 4) % NAME_CACHE;
  if (name_cache[slot].id == id.ptr) {
    Py_ssize_t n;
    const char *cached = PyUnicode_AsUTF8AndSize(name_cache[slot].str, &n);
    if (cached && (size_t)n == s.length && !memcmp(cached, s.data, s.length))
      return Py_NewRef(name_cache[slot].str);
  }
  PyObject *str = PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
  if (!str) return NULL;
  /* An identifier of a destroyed context may be reused by another one for another name: so a hit
   * also compares the text. */
  Py_XSETREF(name_cache[slot].str, Py_NewRef(str));
  name_cache[slot].id = id.ptr;
  return str;
}

static PyObject *op_operands(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_new_list((PyObject *)self, TP_LIST_OPERANDS);
}

static PyObject *op_results(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_new_list((PyObject *)self, TP_LIST_RESULTS);
}

static PyObject *op_regions(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_new_list((PyObject *)self, TP_LIST_REGIONS);
}

static PyObject *op_successors(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_new_list((PyObject *)self, TP_LIST_SUCCESSORS);
}

static PyObject *op_result(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  intptr_t n = mlirOperationGetNumResults(raw);
  if (n != 1)
    return PyErr_Format(PyExc_ValueError, "cannot call .result on an operation with %zd results",
                        (Py_ssize_t)n);
  tether_value *v;
  CALL(tether_op_result(self->h, 0, &v), self->h);
  return tp_wrap_value(v);
}

static PyObject *op_parent(TpHandle *self, void *c) {
  (void)c;
  tether_op *p;
  CALL(tether_op_parent(self->h, &p), self->h);
  return tp_wrap_op(p);
}

static PyObject *op_block(TpHandle *self, void *c) {
  (void)c;
  tether_block *b;
  CALL(tether_op_block(self->h, &b), self->h);
  return tp_wrap_block(b);
}

static PyObject *op_location(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_wrap_loc(tether_handle_arena(self->h), mlirOperationGetLocation(raw));
}

static PyObject *op_context(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_context_of(tether_handle_arena(self->h));
}

static PyObject *op_operation(TpHandle *self, void *c) {
  (void)c;
  return Py_NewRef(self);
}

static PyObject *op_is_valid(TpHandle *self, void *c) {
  (void)c;
  return PyBool_FromLong(tether_handle_is_valid(self->h));
}

static PyObject *op_get_asm(TpHandle *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"binary",
                           "large_elements_limit",
                           "enable_debug_info",
                           "pretty_debug_info",
                           "print_generic_op_form",
                           "use_local_scope",
                           "assume_verified",
                           NULL};
  int binary = 0, debug = 0, pretty = 0, generic = 0, local = 0, assume = 0;
  PyObject *limit = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|pOppppp", kwlist, &binary, &limit, &debug, &pretty,
                                   &generic, &local, &assume))
    return NULL;
  if (binary) {
    PyErr_SetString(PyExc_NotImplementedError, "binary (bytecode) output is not supported");
    return NULL;
  }
  if (limit != Py_None && !PyLong_Check(limit))
    return tp_type_error("large_elements_limit", "an int", limit);
  SELF_OP(self, raw);
  (void)raw;
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  if (limit != Py_None) mlirOpPrintingFlagsElideLargeElementsAttrs(f, PyLong_AsLong(limit));
  if (debug) mlirOpPrintingFlagsEnableDebugInfo(f, true, pretty);
  if (generic) mlirOpPrintingFlagsPrintGenericOpForm(f);
  if (local) mlirOpPrintingFlagsUseLocalScope(f);
  if (assume) mlirOpPrintingFlagsAssumeVerified(f);
  tp_strbuf b = {0};
  int rc = tether_op_print(self->h, f, tp_strbuf_append, &b);
  mlirOpPrintingFlagsDestroy(f);
  if (rc != TETHER_OK) {
    free(b.data);
    return RAISE_RC(rc, self->h);
  }
  return tp_strbuf_finish(&b);
}

static PyObject *op_str(TpHandle *self) {
  tp_strbuf b = {0};
  int rc = tether_op_print(self->h, (MlirOpPrintingFlags){NULL}, tp_strbuf_append, &b);
  if (rc != TETHER_OK) {
    free(b.data);
    return RAISE_RC(rc, self->h);
  }
  return tp_strbuf_finish(&b);
}

static PyObject *op_verify(TpHandle *self, PyObject *unused) {
  (void)unused;
  CALL(tether_op_verify(self->h), self->h);
  Py_RETURN_TRUE;
}

static PyObject *op_erase(TpHandle *self, PyObject *unused) {
  (void)unused;
  CALL(tether_op_erase(self->h), self->h);
  Py_RETURN_NONE;
}

static PyObject *op_detach(TpHandle *self, PyObject *unused) {
  (void)unused;
  CALL(tether_op_detach(self->h), self->h);
  return Py_NewRef(self);
}

static PyObject *op_move(TpHandle *self, PyObject *other, int after) {
  tether_op *oh;
  MlirOperation oraw;
  SELF_OP(self, raw);
  (void)raw;
  if (!tp_arg_op(other, &oh, &oraw)) return NULL;
  int rc = after ? tether_op_move_after(self->h, oh) : tether_op_move_before(self->h, oh);
  if (rc == TETHER_EARG) {
    PyErr_SetString(PyExc_ValueError, "cannot move an operation next to itself or into itself");
    return NULL;
  }
  if (rc == TETHER_ESTATE) {
    PyErr_SetString(PyExc_ValueError, "the reference operation is not in a block");
    return NULL;
  }
  CALL(rc, self->h);
  Py_RETURN_NONE;
}

static PyObject *op_move_before(TpHandle *self, PyObject *o) { return op_move(self, o, 0); }
static PyObject *op_move_after(TpHandle *self, PyObject *o) { return op_move(self, o, 1); }

static PyObject *op_clone(TpHandle *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"ip", NULL};
  PyObject *ip = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &ip)) return NULL;
  tether_op *c;
  CALL(tether_op_clone(self->h, &c), self->h);
  PyObject *r = tp_wrap_op(c);
  if (r && ip != Py_None) {
    PyObject *x = PyObject_CallMethod(ip, "insert", "O", r);
    if (!x) Py_CLEAR(r);
    Py_XDECREF(x);
  }
  return r;
}

typedef struct {
  PyObject *callback;
  int failed;
  tether_op *skip; /* pre-order: the subtree the callback asked to skip (a handle, on the stack:
                      the callback may have erased it, which its handle then says) */
} walk_ctx;

static int walk_cb(tether_op *op, void *ud) {
  walk_ctx *w = ud;
  MlirOperation raw;
  if (tether_op_get(op, &raw) != TETHER_OK) return 0;
  MlirOperation skip;
  if (w->skip && tether_op_get(w->skip, &skip) == TETHER_OK) {
    MlirOperation p = raw;
    while (!mlirOperationIsNull(p) && !mlirOperationEqual(p, skip))
      p = mlirOperationGetParentOperation(p);
    if (!mlirOperationIsNull(p)) return 0;
  }
  w->skip = NULL;
  PyObject *o = tp_wrap_op(op);
  if (!o) {
    w->failed = 1;
    return 1;
  }
  PyObject *r = PyObject_CallOneArg(w->callback, o);
  Py_DECREF(o);
  if (!r) {
    w->failed = 1;
    return 1;
  }
  long v = r == Py_None ? 0 : PyLong_AsLong(r);
  Py_DECREF(r);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    v = 0;
  }
  if (v == 1) return 1;     /* INTERRUPT */
  if (v == 2) w->skip = op; /* SKIP */
  return 0;
}

static PyObject *op_walk(TpHandle *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"callback", "walk_order", NULL};
  PyObject *cb;
  int order = 1; /* upstream's default is POST_ORDER */
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|i", kwlist, &cb, &order)) return NULL;
  if (!PyCallable_Check(cb)) return tp_type_error("callback", "callable", cb);
  walk_ctx w = {cb, 0, NULL};
  int rc =
      tether_op_walk(self->h, order ? TETHER_WALK_POST_ORDER : TETHER_WALK_PRE_ORDER, walk_cb, &w);
  if (w.failed) return NULL;
  if (rc < 0) return RAISE_RC(rc, self->h);
  Py_RETURN_NONE;
}

/* Attributes by name: the mapping itself is OpAttributeMap in tether/ir.py. */
static PyObject *op_attr_get(TpHandle *self, PyObject *name) {
  SELF_OP(self, raw);
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(name, &n);
  if (!s) return NULL;
  MlirAttribute a = mlirOperationGetAttributeByName(raw, (MlirStringRef){s, (size_t)n});
  if (mlirAttributeIsNull(a)) {
    PyErr_SetObject(PyExc_KeyError, name);
    return NULL;
  }
  return tp_wrap_attr(tether_handle_arena(self->h), a);
}

static PyObject *op_attr_set(TpHandle *self, PyObject *args) {
  PyObject *name, *attr;
  if (!PyArg_ParseTuple(args, "UO", &name, &attr)) return NULL;
  SELF_OP(self, raw);
  MlirAttribute a;
  tether_arena *aa;
  if (!tp_arg_attr(attr, &a, &aa)) return NULL;
  if (aa != tether_handle_arena(self->h)) return tp_raise(TETHER_ECONTEXT, NULL, NULL);
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(name, &n);
  if (!s) return NULL;
  mlirOperationSetAttributeByName(raw, (MlirStringRef){s, (size_t)n}, a);
  Py_RETURN_NONE;
}

static PyObject *op_attr_del(TpHandle *self, PyObject *name) {
  SELF_OP(self, raw);
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(name, &n);
  if (!s) return NULL;
  if (!mlirOperationRemoveAttributeByName(raw, (MlirStringRef){s, (size_t)n})) {
    PyErr_SetObject(PyExc_KeyError, name);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *op_attr_names(TpHandle *self, PyObject *unused) {
  (void)unused;
  SELF_OP(self, raw);
  intptr_t n = mlirOperationGetNumAttributes(raw);
  PyObject *l = PyList_New(n);
  if (!l) return NULL;
  for (intptr_t i = 0; i < n; i++) {
    MlirStringRef s = mlirIdentifierStr(mlirOperationGetAttribute(raw, i).name);
    PyObject *u = PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
    if (!u) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SET_ITEM(l, i, u);
  }
  return l;
}

static PyObject *op_capsule(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return PyCapsule_New(raw.ptr, "mlir.ir.Operation._CAPIPtr", NULL);
}

static PyMethodDef op_methods[] = {
    {"get_asm", (PyCFunction)(void (*)(void))op_get_asm, METH_VARARGS | METH_KEYWORDS,
     "The operation's textual form."},
    {"verify", (PyCFunction)op_verify, METH_NOARGS, "True, or raises MLIRError with diagnostics."},
    {"erase", (PyCFunction)op_erase, METH_NOARGS,
     "Erases the operation and everything in it now; their objects become invalid."},
    {"detach_from_parent", (PyCFunction)op_detach, METH_NOARGS,
     "Removes the operation from its block; it becomes a root. Returns it."},
    {"move_before", (PyCFunction)op_move_before, METH_O, NULL},
    {"move_after", (PyCFunction)op_move_after, METH_O, NULL},
    {"clone", (PyCFunction)(void (*)(void))op_clone, METH_VARARGS | METH_KEYWORDS, NULL},
    {"walk", (PyCFunction)(void (*)(void))op_walk, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_attr_get", (PyCFunction)op_attr_get, METH_O, NULL},
    {"_attr_set", (PyCFunction)op_attr_set, METH_VARARGS, NULL},
    {"_attr_del", (PyCFunction)op_attr_del, METH_O, NULL},
    {"_attr_names", (PyCFunction)op_attr_names, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef op_getset[] = {
    {"name", (getter)op_name, NULL, "The operation name, e.g. 'arith.addi'.", NULL},
    {"operands", (getter)op_operands, NULL, NULL, NULL},
    {"results", (getter)op_results, NULL, NULL, NULL},
    {"result", (getter)op_result, NULL, "The only result.", NULL},
    {"regions", (getter)op_regions, NULL, NULL, NULL},
    {"successors", (getter)op_successors, NULL, NULL, NULL},
    {"parent", (getter)op_parent, NULL, "The parent operation, or None.", NULL},
    {"block", (getter)op_block, NULL, "The containing block, or None.", NULL},
    {"location", (getter)op_location, NULL, NULL, NULL},
    {"context", (getter)op_context, NULL, NULL, NULL},
    {"operation", (getter)op_operation, NULL, "The operation itself.", NULL},
    {"is_valid", (getter)op_is_valid, NULL, "False once erased or removed.", NULL},
    {"_CAPIPtr", (getter)op_capsule, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot op_slots[] = {
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_str, op_str},
    {Py_tp_methods, op_methods},
    {Py_tp_getset, op_getset},
    {Py_tp_doc, "An MLIR operation. Interned: one object per operation while it is referenced."},
    {0, NULL},
};

PyType_Spec tp_operation_spec = {"tether._tether.Operation", sizeof(TpHandle), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, op_slots};

/* ---- Module ---------------------------------------------------------------------------------- */

static PyObject *module_operation(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_wrap_op(self->h);
}

static PyObject *module_body(TpHandle *self, void *c) {
  (void)c;
  tether_region *r;
  tether_block *b;
  CALL(tether_op_region(self->h, 0, &r), self->h);
  CALL(tether_region_first_block(r, &b), self->h);
  return tp_wrap_block(b);
}

static PyObject *module_context(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_context_of(tether_handle_arena(self->h));
}

static PyObject *module_capsule(TpHandle *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return PyCapsule_New(raw.ptr, "mlir.ir.Module._CAPIPtr", NULL);
}

static PyGetSetDef module_getset[] = {
    {"operation", (getter)module_operation, NULL, "The builtin.module operation.", NULL},
    {"body", (getter)module_body, NULL, "The module's block.", NULL},
    {"context", (getter)module_context, NULL, NULL, NULL},
    {"_CAPIPtr", (getter)module_capsule, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot module_slots[] = {
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_str, op_str},
    {Py_tp_getset, module_getset},
    {Py_tp_doc, "A builtin.module: Module.parse(), Module.create()."},
    {0, NULL},
};

PyType_Spec tp_module_spec = {"tether._tether.Module", sizeof(TpHandle), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, module_slots};

/* ---- Region ---------------------------------------------------------------------------------- */

static PyObject *region_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"context", NULL};
  PyObject *ctx = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &ctx)) return NULL;
  tether_arena *a;
  if (!resolve_context(ctx, &a)) return NULL;
  tether_region *r;
  int rc = tether_region_create(a, &r);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return wrap_handle(type, r, 1);
}

#define SELF_REGION(self)                                                                          \
  do {                                                                                             \
    MlirRegion r_;                                                                                 \
    int rc_ = tether_region_get((self)->h, &r_);                                                   \
    if (rc_ != TETHER_OK) return RAISE_RC(rc_, (self)->h);                                         \
  } while (0)

static PyObject *region_blocks(TpHandle *self, void *c) {
  (void)c;
  SELF_REGION(self);
  return tp_new_list((PyObject *)self, TP_LIST_REGION_BLOCKS);
}

static PyObject *region_owner(TpHandle *self, void *c) {
  (void)c;
  tether_op *p;
  CALL(tether_region_parent(self->h, &p), self->h);
  return tp_wrap_op(p);
}

static PyObject *region_context(TpHandle *self, void *c) {
  (void)c;
  SELF_REGION(self);
  return tp_context_of(tether_handle_arena(self->h));
}

static PyGetSetDef region_getset[] = {
    {"blocks", (getter)region_blocks, NULL, NULL, NULL},
    {"owner", (getter)region_owner, NULL, "The operation owning the region, or None.", NULL},
    {"context", (getter)region_context, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot region_slots[] = {
    {Py_tp_new, region_new},
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_getset, region_getset},
    {Py_tp_doc, "A region. Region(context=None) creates a detached one, owned by this object "
                "until it is given to Operation.create."},
    {0, NULL},
};

PyType_Spec tp_region_spec = {"tether._tether.Region", sizeof(TpHandle), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, region_slots};

/* ---- Block ----------------------------------------------------------------------------------- */

/* Collects types (and locations) from Python sequences. Returns malloc'd arrays. */
static int collect_types(PyObject *seq, PyObject *locs, tether_arena *a, intptr_t *n,
                         MlirType **types, MlirLocation **out_locs) {
  PyObject *fast = PySequence_Fast(seq, "arg_types must be a sequence of Type");
  if (!fast) return 0;
  Py_ssize_t k = PySequence_Fast_GET_SIZE(fast);
  *types = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(MlirType));
  *out_locs = PyMem_Malloc((size_t)(k ? k : 1) * sizeof(MlirLocation));
  PyObject *lfast = NULL;
  if (locs && locs != Py_None) {
    lfast = PySequence_Fast(locs, "arg_locs must be a sequence of Location");
    if (!lfast || PySequence_Fast_GET_SIZE(lfast) != k) {
      if (lfast) PyErr_SetString(PyExc_ValueError, "arg_locs must have one location per type");
      goto fail;
    }
  }
  if (!*types || !*out_locs) {
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t i = 0; i < k; i++) {
    tether_arena *ta;
    if (!tp_arg_type(PySequence_Fast_GET_ITEM(fast, i), &(*types)[i], &ta)) goto fail;
    if (ta != a) {
      tp_raise(TETHER_ECONTEXT, NULL, NULL);
      goto fail;
    }
    (*out_locs)[i] = mlirLocationUnknownGet(tether_arena_context(a));
    if (lfast && !tp_arg_loc(PySequence_Fast_GET_ITEM(lfast, i), &(*out_locs)[i], &ta)) goto fail;
  }
  *n = k;
  Py_DECREF(fast);
  Py_XDECREF(lfast);
  return 1;
fail:
  Py_DECREF(fast);
  Py_XDECREF(lfast);
  PyMem_Free(*types);
  PyMem_Free(*out_locs);
  *types = NULL;
  *out_locs = NULL;
  return 0;
}

static PyObject *block_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"arg_types", "context", "arg_locs", NULL};
  PyObject *types = NULL, *ctx = Py_None, *locs = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOO", kwlist, &types, &ctx, &locs)) return NULL;
  tether_arena *a;
  if (ctx == Py_None && types && PySequence_Check(types) && PySequence_Size(types) > 0) {
    PyObject *t0 = PySequence_GetItem(types, 0);
    MlirType raw;
    int ok = t0 && tp_arg_type(t0, &raw, &a);
    Py_XDECREF(t0);
    if (!ok) return NULL;
  } else if (!resolve_context(ctx, &a)) {
    return NULL;
  }
  intptr_t n = 0;
  MlirType *ts = NULL;
  MlirLocation *ls = NULL;
  PyObject *empty = PyTuple_New(0);
  int ok = collect_types(types ? types : empty, locs, a, &n, &ts, &ls);
  Py_DECREF(empty);
  if (!ok) return NULL;
  tether_block *b;
  int rc = tether_block_create(a, n, ts, ls, &b);
  PyMem_Free(ts);
  PyMem_Free(ls);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return wrap_handle(type, b, 1);
}

#define SELF_BLOCK(self, raw)                                                                      \
  MlirBlock raw;                                                                                   \
  do {                                                                                             \
    int rc_ = tether_block_get((self)->h, &raw);                                                   \
    if (rc_ != TETHER_OK) return RAISE_RC(rc_, (self)->h);                                         \
  } while (0)

static PyObject *block_operations(TpHandle *self, void *c) {
  (void)c;
  SELF_BLOCK(self, raw);
  (void)raw;
  return tp_new_list((PyObject *)self, TP_LIST_BLOCK_OPS);
}

static PyObject *block_arguments(TpHandle *self, void *c) {
  (void)c;
  SELF_BLOCK(self, raw);
  (void)raw;
  return tp_new_list((PyObject *)self, TP_LIST_BLOCK_ARGS);
}

static PyObject *block_owner(TpHandle *self, void *c) {
  (void)c;
  tether_op *p;
  CALL(tether_block_parent_op(self->h, &p), self->h);
  return tp_wrap_op(p);
}

static PyObject *block_region(TpHandle *self, void *c) {
  (void)c;
  tether_region *r;
  CALL(tether_block_parent(self->h, &r), self->h);
  return tp_wrap_region(r);
}

static PyObject *block_context(TpHandle *self, void *c) {
  (void)c;
  SELF_BLOCK(self, raw);
  (void)raw;
  return tp_context_of(tether_handle_arena(self->h));
}

static PyObject *block_append(TpHandle *self, PyObject *op) {
  tether_op *oh;
  MlirOperation raw;
  if (!tp_arg_op(op, &oh, &raw)) return NULL;
  int rc = tether_block_append_op(self->h, oh);
  if (rc == TETHER_EARG) {
    PyErr_SetString(PyExc_ValueError, "cannot append an operation into a block inside itself");
    return NULL;
  }
  CALL(rc, self->h);
  Py_RETURN_NONE;
}

static PyObject *block_add_argument(TpHandle *self, PyObject *args) {
  PyObject *type, *loc = Py_None;
  if (!PyArg_ParseTuple(args, "O|O", &type, &loc)) return NULL;
  SELF_BLOCK(self, raw);
  (void)raw;
  MlirType t;
  tether_arena *ta;
  if (!tp_arg_type(type, &t, &ta)) return NULL;
  MlirLocation l = mlirLocationUnknownGet(tether_arena_context(ta));
  if (loc != Py_None && !tp_arg_loc(loc, &l, &ta)) return NULL;
  tether_value *v;
  CALL(tether_block_add_arg(self->h, t, l, &v), self->h);
  return tp_wrap_value(v);
}

static PyObject *block_terminator(TpHandle *self, PyObject *unused) {
  (void)unused;
  tether_op *t;
  CALL(tether_block_terminator(self->h, &t), self->h);
  return tp_wrap_op(t);
}

static PyObject *block_str(TpHandle *self) {
  SELF_BLOCK(self, raw);
  tp_strbuf b = {0};
  mlirBlockPrint(raw, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyMethodDef block_methods[] = {
    {"append", (PyCFunction)block_append, METH_O,
     "Appends a detached operation (a root) to the block; ownership moves to the block."},
    {"add_argument", (PyCFunction)block_add_argument, METH_VARARGS, NULL},
    {"_terminator", (PyCFunction)block_terminator, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef block_getset[] = {
    {"operations", (getter)block_operations, NULL, NULL, NULL},
    {"arguments", (getter)block_arguments, NULL, NULL, NULL},
    {"owner", (getter)block_owner, NULL, "The operation owning the block's region, or None.", NULL},
    {"region", (getter)block_region, NULL, "The containing region, or None.", NULL},
    {"context", (getter)block_context, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot block_slots[] = {
    {Py_tp_new, block_new},
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_str, block_str},
    {Py_tp_methods, block_methods},
    {Py_tp_getset, block_getset},
    {Py_tp_doc, "A block. Block(arg_types=(), context=None) creates a detached one, owned by this "
                "object until it is appended to a region."},
    {0, NULL},
};

PyType_Spec tp_block_spec = {"tether._tether.Block", sizeof(TpHandle), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, block_slots};

/* ---- Value ----------------------------------------------------------------------------------- */

#define SELF_VALUE(self, raw)                                                                      \
  MlirValue raw;                                                                                   \
  do {                                                                                             \
    int rc_ = tether_value_get((self)->h, &raw);                                                   \
    if (rc_ != TETHER_OK) return RAISE_RC(rc_, (self)->h);                                         \
  } while (0)

static PyObject *value_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)kw;
  PyObject *v;
  if (!PyArg_ParseTuple(args, "O", &v)) return NULL;
  tether_value *h;
  MlirValue raw;
  if (!tp_arg_value(v, &h, &raw)) return NULL;
  if (type == tp.OpResult && !mlirValueIsAOpResult(raw))
    return PyErr_Format(PyExc_ValueError, "the value is not an OpResult");
  if (type == tp.BlockArgument && !mlirValueIsABlockArgument(raw))
    return PyErr_Format(PyExc_ValueError, "the value is not a BlockArgument");
  return tp_wrap_value(h);
}

static PyObject *value_type(TpHandle *self, void *c) {
  (void)c;
  SELF_VALUE(self, raw);
  return tp_wrap_type(tether_handle_arena(self->h), mlirValueGetType(raw));
}

static PyObject *value_owner(TpHandle *self, void *c) {
  (void)c;
  SELF_VALUE(self, raw);
  if (mlirValueIsAOpResult(raw)) {
    tether_op *o;
    CALL(tether_value_owner_op(self->h, &o), self->h);
    return tp_wrap_op(o);
  }
  tether_block *b;
  CALL(tether_value_owner_block(self->h, &b), self->h);
  return tp_wrap_block(b);
}

static PyObject *value_context(TpHandle *self, void *c) {
  (void)c;
  SELF_VALUE(self, raw);
  return tp_context_of(tether_handle_arena(self->h));
}

static PyObject *value_index(TpHandle *self, void *c) {
  (void)c;
  intptr_t i;
  CALL(tether_value_index(self->h, &i), self->h);
  return PyLong_FromSsize_t(i);
}

static PyObject *value_rauw(TpHandle *self, PyObject *with) {
  tether_value *wh;
  MlirValue wraw;
  SELF_VALUE(self, raw);
  (void)raw;
  if (!tp_arg_value(with, &wh, &wraw)) return NULL;
  CALL(tether_value_replace_all_uses(self->h, wh), self->h);
  Py_RETURN_NONE;
}

static PyObject *value_set_type(TpHandle *self, PyObject *type) {
  SELF_VALUE(self, raw);
  MlirType t;
  tether_arena *ta;
  if (!tp_arg_type(type, &t, &ta)) return NULL;
  if (ta != tether_handle_arena(self->h)) return tp_raise(TETHER_ECONTEXT, NULL, NULL);
  mlirValueSetType(raw, t);
  Py_RETURN_NONE;
}

/* value.uses: (owner operation, operand number) pairs, as upstream's OpOperand (owner,
 * operand_number) in a list. The owners are interned operations of the same IR. */
static PyObject *value_uses(TpHandle *self, void *c) {
  (void)c;
  SELF_VALUE(self, raw);
  tether_arena *a = tether_handle_arena(self->h);
  PyObject *l = PyList_New(0);
  if (!l) return NULL;
  for (MlirOpOperand u = mlirValueGetFirstUse(raw); !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u)) {
    tether_op *owner;
    int rc = tether_op_wrap(a, mlirOpOperandGetOwner(u), &owner);
    if (rc != TETHER_OK) {
      Py_DECREF(l);
      return tp_raise(rc, NULL, a);
    }
    PyObject *o = tp_wrap_op(owner);
    PyObject *pair =
        o ? Py_BuildValue("(Nn)", o, (Py_ssize_t)mlirOpOperandGetOperandNumber(u)) : NULL;
    if (!pair || PyList_Append(l, pair) < 0) {
      Py_XDECREF(pair);
      Py_DECREF(l);
      return NULL;
    }
    Py_DECREF(pair);
  }
  tether_keep_alive(self->h);
  return l;
}

static PyObject *value_get_name(TpHandle *self, PyObject *unused) {
  (void)unused;
  SELF_VALUE(self, raw);
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  MlirAsmState st = mlirAsmStateCreateForValue(raw, f);
  tp_strbuf b = {0};
  mlirValuePrintAsOperand(raw, st, tp_strbuf_append, &b);
  mlirAsmStateDestroy(st);
  mlirOpPrintingFlagsDestroy(f);
  tether_keep_alive(self->h);
  return tp_strbuf_finish(&b);
}

static PyObject *value_str(TpHandle *self) {
  SELF_VALUE(self, raw);
  tp_strbuf b = {0};
  mlirValuePrint(raw, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyMethodDef value_methods[] = {
    {"replace_all_uses_with", (PyCFunction)value_rauw, METH_O, NULL},
    {"set_type", (PyCFunction)value_set_type, METH_O, NULL},
    {"get_name", (PyCFunction)value_get_name, METH_NOARGS, "The value's name as an operand: %0."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef value_getset[] = {
    {"type", (getter)value_type, NULL, NULL, NULL},
    {"owner", (getter)value_owner, NULL, "The defining Operation, or the owning Block.", NULL},
    {"_uses", (getter)value_uses, NULL, NULL, NULL},
    {"context", (getter)value_context, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot value_slots[] = {
    {Py_tp_new, value_new},
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_str, value_str},
    {Py_tp_methods, value_methods},
    {Py_tp_getset, value_getset},
    {Py_tp_doc, "An SSA value: an OpResult or a BlockArgument."},
    {0, NULL},
};

PyType_Spec tp_value_spec = {"tether._tether.Value", sizeof(TpHandle), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, value_slots};

static PyGetSetDef opresult_getset[] = {
    {"result_number", (getter)value_index, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot opresult_slots[] = {
    {Py_tp_getset, opresult_getset},
    {Py_tp_doc, "A result of an operation."},
    {0, NULL},
};

PyType_Spec tp_opresult_spec = {"tether._tether.OpResult", sizeof(TpHandle), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, opresult_slots};

static PyGetSetDef blockarg_getset[] = {
    {"arg_number", (getter)value_index, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot blockarg_slots[] = {
    {Py_tp_getset, blockarg_getset},
    {Py_tp_doc, "An argument of a block."},
    {0, NULL},
};

PyType_Spec tp_blockarg_spec = {"tether._tether.BlockArgument", sizeof(TpHandle), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, blockarg_slots};

/* ---- sequences ------------------------------------------------------------------------------- */

PyObject *tp_new_list(PyObject *owner, int kind) {
  TpList *l = PyObject_GC_New(TpList, tp.List);
  if (!l) return NULL;
  l->owner = Py_NewRef(owner);
  l->kind = kind;
  PyObject_GC_Track(l);
  return (PyObject *)l;
}

static int list_traverse(TpList *l, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(l));
  Py_VISIT(l->owner);
  return 0;
}

static int list_clear(TpList *l) {
  Py_CLEAR(l->owner);
  return 0;
}

static void list_dealloc(TpList *l) {
  PyObject_GC_UnTrack(l);
  list_clear(l);
  PyTypeObject *t = Py_TYPE(l);
  t->tp_free(l);
  Py_DECREF(t);
}

static void *owner_h(TpList *l) { return ((TpHandle *)l->owner)->h; }

static Py_ssize_t list_len(TpList *l) {
  void *h = owner_h(l);
  intptr_t n = 0;
  int rc;
  switch (l->kind) {
  case TP_LIST_OPERANDS:
    rc = tether_op_num_operands(h, &n);
    break;
  case TP_LIST_RESULTS:
    rc = tether_op_num_results(h, &n);
    break;
  case TP_LIST_REGIONS:
    rc = tether_op_num_regions(h, &n);
    break;
  case TP_LIST_SUCCESSORS:
    rc = tether_op_num_successors(h, &n);
    break;
  case TP_LIST_BLOCK_OPS:
    rc = tether_block_num_ops(h, &n);
    break;
  case TP_LIST_BLOCK_ARGS:
    rc = tether_block_num_args(h, &n);
    break;
  default:
    rc = tether_region_num_blocks(h, &n);
    break;
  }
  if (rc != TETHER_OK) {
    RAISE_RC(rc, h);
    return -1;
  }
  return (Py_ssize_t)n;
}

static PyObject *list_item(TpList *l, Py_ssize_t i) {
  void *h = owner_h(l);
  void *out = NULL;
  int rc;
  if (i < 0) {
    Py_ssize_t n = list_len(l);
    if (n < 0) return NULL;
    i += n;
  }
  if (i < 0) return PyErr_Format(PyExc_IndexError, "index out of range");
  switch (l->kind) {
  case TP_LIST_OPERANDS:
    rc = tether_op_operand(h, i, (tether_value **)&out);
    break;
  case TP_LIST_RESULTS:
    rc = tether_op_result(h, i, (tether_value **)&out);
    break;
  case TP_LIST_REGIONS:
    rc = tether_op_region(h, i, (tether_region **)&out);
    break;
  case TP_LIST_SUCCESSORS:
    rc = tether_op_successor(h, i, (tether_block **)&out);
    break;
  case TP_LIST_BLOCK_OPS:
    rc = tether_block_op(h, i, (tether_op **)&out);
    break;
  case TP_LIST_BLOCK_ARGS:
    rc = tether_block_arg(h, i, (tether_value **)&out);
    break;
  default:
    rc = tether_region_block(h, i, (tether_block **)&out);
    break;
  }
  if (rc == TETHER_ERANGE) return PyErr_Format(PyExc_IndexError, "index %zd out of range", i);
  if (rc != TETHER_OK) return RAISE_RC(rc, h);
  switch (l->kind) {
  case TP_LIST_OPERANDS:
  case TP_LIST_RESULTS:
  case TP_LIST_BLOCK_ARGS:
    return tp_wrap_value(out);
  case TP_LIST_REGIONS:
    return tp_wrap_region(out);
  case TP_LIST_BLOCK_OPS:
    return tp_wrap_op(out);
  default:
    return tp_wrap_block(out);
  }
}

static PyObject *list_subscript(TpList *l, PyObject *key) {
  if (PyIndex_Check(key)) {
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    return list_item(l, i);
  }
  if (PySlice_Check(key)) {
    Py_ssize_t n = list_len(l);
    if (n < 0) return NULL;
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t k = PySlice_AdjustIndices(n, &start, &stop, step);
    PyObject *r = PyList_New(k);
    if (!r) return NULL;
    for (Py_ssize_t j = 0, i = start; j < k; j++, i += step) {
      PyObject *x = list_item(l, i);
      if (!x) {
        Py_DECREF(r);
        return NULL;
      }
      PyList_SET_ITEM(r, j, x);
    }
    return r;
  }
  return tp_type_error("index", "an int or a slice", key);
}

static int list_ass(TpList *l, PyObject *key, PyObject *v) {
  if (l->kind != TP_LIST_OPERANDS) {
    PyErr_SetString(PyExc_TypeError, "this sequence does not support item assignment");
    return -1;
  }
  if (!v) {
    PyErr_SetString(PyExc_TypeError, "operands cannot be deleted");
    return -1;
  }
  Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return -1;
  if (i < 0) {
    Py_ssize_t n = list_len(l);
    if (n < 0) return -1;
    i += n;
  }
  tether_value *vh;
  MlirValue raw;
  if (!tp_arg_value(v, &vh, &raw)) return -1;
  int rc = tether_op_set_operand(owner_h(l), i, vh);
  if (rc != TETHER_OK) {
    RAISE_RC(rc, owner_h(l));
    return -1;
  }
  return 0;
}

static PyObject *iter_new(PyObject *first, int kind);

static PyObject *list_iter(TpList *l) {
  void *h = owner_h(l);
  int rc;
  void *first = NULL;
  if (l->kind == TP_LIST_BLOCK_OPS) {
    rc = tether_block_first_op(h, (tether_op **)&first);
    if (rc != TETHER_OK) return RAISE_RC(rc, h);
    PyObject *f = tp_wrap_op(first);
    if (!f) return NULL;
    PyObject *it = iter_new(f, l->kind);
    Py_DECREF(f);
    return it;
  }
  if (l->kind == TP_LIST_REGION_BLOCKS) {
    rc = tether_region_first_block(h, (tether_block **)&first);
    if (rc != TETHER_OK) return RAISE_RC(rc, h);
    PyObject *f = tp_wrap_block(first);
    if (!f) return NULL;
    PyObject *it = iter_new(f, l->kind);
    Py_DECREF(f);
    return it;
  }
  return PySeqIter_New((PyObject *)l);
}

/* region.blocks.append(block) attaches a detached Block (ownership moves to the region);
 * region.blocks.append(*arg_types) creates a new block with those argument types. */
static PyObject *list_append(TpList *l, PyObject *args, PyObject *kw) {
  if (l->kind != TP_LIST_REGION_BLOCKS) {
    PyErr_SetString(PyExc_TypeError, "only region.blocks supports append");
    return NULL;
  }
  void *rh = owner_h(l);
  MlirRegion rraw;
  int rc = tether_region_get(rh, &rraw);
  if (rc != TETHER_OK) return RAISE_RC(rc, rh);
  tether_arena *a = tether_handle_arena(rh);
  if (PyTuple_GET_SIZE(args) == 1 && PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), tp.Block)) {
    PyObject *bo = PyTuple_GET_ITEM(args, 0);
    tether_block *bh;
    MlirBlock braw;
    if (!tp_arg_block(bo, &bh, &braw)) return NULL;
    rc = tether_region_append_block(rh, bh);
    if (rc == TETHER_ESTATE) {
      PyErr_SetString(PyExc_ValueError, "the block already belongs to a region");
      return NULL;
    }
    if (rc == TETHER_EARG) {
      PyErr_SetString(PyExc_ValueError, "cannot append a block into a region inside itself");
      return NULL;
    }
    if (rc != TETHER_OK) return RAISE_RC(rc, rh);
    return Py_NewRef(bo);
  }
  PyObject *locs = kw ? PyDict_GetItemString(kw, "arg_locs") : NULL;
  intptr_t n;
  MlirType *ts;
  MlirLocation *ls;
  if (!collect_types(args, locs, a, &n, &ts, &ls)) return NULL;
  tether_block *b;
  rc = tether_block_create(a, n, ts, ls, &b);
  PyMem_Free(ts);
  PyMem_Free(ls);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  PyObject *bo = tp_wrap_block(b); /* hold it: the handle must stay reachable */
  if (!bo) return NULL;
  rc = tether_region_append_block(rh, b);
  if (rc != TETHER_OK) {
    Py_DECREF(bo);
    return RAISE_RC(rc, rh);
  }
  return bo;
}

static PyObject *list_repr(TpList *l) {
  static const char *const names[] = {"OpOperandList", "OpResultList",  "RegionSequence",
                                      "OpSuccessors",  "OperationList", "BlockArgumentList",
                                      "BlockList"};
  Py_ssize_t n = list_len(l);
  if (n < 0) return NULL;
  return PyUnicode_FromFormat("<%s of %zd>", names[l->kind], n);
}

static PyMethodDef list_methods[] = {
    {"append", (PyCFunction)(void (*)(void))list_append, METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot list_slots[] = {
    {Py_tp_dealloc, list_dealloc},     {Py_tp_traverse, list_traverse}, {Py_tp_clear, list_clear},
    {Py_sq_length, list_len},          {Py_sq_item, list_item},         {Py_mp_length, list_len},
    {Py_mp_subscript, list_subscript}, {Py_mp_ass_subscript, list_ass}, {Py_tp_iter, list_iter},
    {Py_tp_repr, list_repr},           {Py_tp_methods, list_methods},   {0, NULL},
};

PyType_Spec tp_list_spec = {"tether._tether.IRSequence", sizeof(TpList), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, list_slots};

static PyObject *iter_new(PyObject *first, int kind) {
  TpIter *it = PyObject_GC_New(TpIter, tp.Iter);
  if (!it) return NULL;
  it->next = first == Py_None ? NULL : Py_NewRef(first);
  it->kind = kind;
  PyObject_GC_Track(it);
  return (PyObject *)it;
}

static int iter_traverse(TpIter *it, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(it));
  Py_VISIT(it->next);
  return 0;
}

static int iter_clear(TpIter *it) {
  Py_CLEAR(it->next);
  return 0;
}

static void iter_dealloc(TpIter *it) {
  PyObject_GC_UnTrack(it);
  iter_clear(it);
  PyTypeObject *t = Py_TYPE(it);
  t->tp_free(it);
  Py_DECREF(t);
}

static PyObject *iter_next(TpIter *it) {
  PyObject *cur = it->next;
  if (!cur) return NULL;
  void *h = ((TpHandle *)cur)->h;
  void *nx = NULL;
  int rc = it->kind == TP_LIST_BLOCK_OPS ? tether_op_next(h, (tether_op **)&nx)
                                         : tether_block_next(h, (tether_block **)&nx);
  if (rc != TETHER_OK) {
    it->next = NULL;
    Py_DECREF(cur);
    return RAISE_RC(rc, h);
  }
  PyObject *n = NULL;
  if (nx) {
    n = it->kind == TP_LIST_BLOCK_OPS ? tp_wrap_op(nx) : tp_wrap_block(nx);
    if (!n) {
      it->next = NULL;
      Py_DECREF(cur);
      return NULL;
    }
  }
  it->next = n;
  return cur; /* the reference moves to the caller */
}

static PyType_Slot iter_slots[] = {
    {Py_tp_dealloc, iter_dealloc},   {Py_tp_traverse, iter_traverse}, {Py_tp_clear, iter_clear},
    {Py_tp_iter, PyObject_SelfIter}, {Py_tp_iternext, iter_next},     {0, NULL},
};

PyType_Spec tp_iter_spec = {"tether._tether.IRIterator", sizeof(TpIter), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, iter_slots};

/* ---- module functions: parsing and creating -------------------------------------------------- */

static PyObject *fn_module_parse(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *ctx, *text;
  if (!PyArg_ParseTuple(args, "OO", &ctx, &text)) return NULL;
  tether_arena *a;
  if (!tp_arg_context(ctx, &a)) return NULL;
  const char *s;
  Py_ssize_t n;
  if (PyUnicode_Check(text)) {
    s = PyUnicode_AsUTF8AndSize(text, &n);
    if (!s) return NULL;
  } else if (PyBytes_Check(text)) {
    s = PyBytes_AS_STRING(text);
    n = PyBytes_GET_SIZE(text);
  } else {
    return tp_type_error("asm", "a str or bytes", text);
  }
  tether_op *op;
  int rc = tether_module_parse(a, s, (size_t)n, &op);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return tp_wrap_module(op);
}

static PyObject *fn_op_parse(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *ctx;
  const char *s;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "Os#", &ctx, &s, &n)) return NULL;
  tether_arena *a;
  if (!tp_arg_context(ctx, &a)) return NULL;
  tether_op *op;
  int rc = tether_op_parse(a, s, (size_t)n, &op);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return tp_wrap_op(op);
}

static PyObject *fn_module_create(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *ctx, *loc;
  if (!PyArg_ParseTuple(args, "OO", &ctx, &loc)) return NULL;
  tether_arena *a;
  if (!tp_arg_context(ctx, &a)) return NULL;
  tether_loc *l = NULL;
  if (loc != Py_None) {
    if (!PyObject_TypeCheck(loc, tp.Location)) return tp_type_error("loc", "a Location", loc);
    l = ((TpValueObj *)loc)->h;
  }
  tether_op *op;
  int rc = tether_module_create(a, l, &op);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return tp_wrap_module(op);
}

static PyObject *fn_module_from_op(PyObject *m, PyObject *op) {
  (void)m;
  tether_op *h;
  MlirOperation raw;
  if (!tp_arg_op(op, &h, &raw)) return NULL;
  return tp_wrap_module(h);
}

/* _op_create(context, name, results, operands, attributes, successors, regions, loc, infer) */
static PyObject *fn_op_create(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *ctx, *name, *results, *operands, *attrs, *succs, *regions, *loc;
  int infer;
  if (!PyArg_ParseTuple(args, "OUOOOOOOp", &ctx, &name, &results, &operands, &attrs, &succs,
                        &regions, &loc, &infer))
    return NULL;
  tether_arena *a;
  if (!tp_arg_context(ctx, &a)) return NULL;
  MlirLocation l;
  tether_arena *la;
  if (!tp_arg_loc(loc, &l, &la)) return NULL;
  Py_ssize_t nlen;
  const char *nm = PyUnicode_AsUTF8AndSize(name, &nlen);
  if (!nm) return NULL;
  MlirOperationState st = mlirOperationStateGet((MlirStringRef){nm, (size_t)nlen}, l);
  PyObject *keep = PyList_New(0); /* wrappers whose handles must stay reachable */
  PyObject *fr = NULL, *fo = NULL, *fs = NULL, *fg = NULL, *items = NULL, *result = NULL;
  MlirType *rt = NULL;
  MlirValue *ov = NULL;
  MlirBlock *sb = NULL;
  MlirRegion *rg = NULL;
  MlirNamedAttribute *na = NULL;
  if (!keep) return NULL;
  if (results != Py_None) {
    if (!(fr = PySequence_Fast(results, "results must be a sequence of Type"))) goto done;
    st.nResults = PySequence_Fast_GET_SIZE(fr);
    rt = PyMem_Malloc((size_t)(st.nResults ? st.nResults : 1) * sizeof *rt);
    if (!rt) goto nomem;
    for (Py_ssize_t i = 0; i < st.nResults; i++) {
      tether_arena *ta;
      if (!tp_arg_type(PySequence_Fast_GET_ITEM(fr, i), &rt[i], &ta)) goto done;
    }
    st.results = rt;
  }
  if (operands != Py_None) {
    if (!(fo = PySequence_Fast(operands, "operands must be a sequence of Value"))) goto done;
    st.nOperands = PySequence_Fast_GET_SIZE(fo);
    ov = PyMem_Malloc((size_t)(st.nOperands ? st.nOperands : 1) * sizeof *ov);
    if (!ov) goto nomem;
    for (Py_ssize_t i = 0; i < st.nOperands; i++) {
      PyObject *v = PySequence_Fast_GET_ITEM(fo, i);
      PyObject *res = NULL;
      if (!PyObject_TypeCheck(v, tp.Value)) {
        /* an Operation (or OpView) with one result stands for that result */
        res = PyObject_GetAttrString(v, "result");
        if (!res) {
          PyErr_Clear();
          tp_type_error("operand", "a Value", v);
          goto done;
        }
        v = res;
      }
      tether_value *vh;
      int ok = tp_arg_value(v, &vh, &ov[i]);
      if (ok) PyList_Append(keep, v);
      Py_XDECREF(res);
      if (!ok) goto done;
    }
    st.operands = ov;
  }
  if (succs != Py_None) {
    if (!(fs = PySequence_Fast(succs, "successors must be a sequence of Block"))) goto done;
    st.nSuccessors = PySequence_Fast_GET_SIZE(fs);
    sb = PyMem_Malloc((size_t)(st.nSuccessors ? st.nSuccessors : 1) * sizeof *sb);
    if (!sb) goto nomem;
    for (Py_ssize_t i = 0; i < st.nSuccessors; i++) {
      tether_block *bh;
      if (!tp_arg_block(PySequence_Fast_GET_ITEM(fs, i), &bh, &sb[i])) goto done;
    }
    st.successors = sb;
  }
  Py_ssize_t n_new_regions = 0;
  if (PyLong_Check(regions)) {
    n_new_regions = PyLong_AsSsize_t(regions);
    if (n_new_regions < 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "regions must be >= 0");
      goto done;
    }
  } else if (regions != Py_None) {
    if (!(fg = PySequence_Fast(regions, "regions must be an int or a sequence of Region")))
      goto done;
    st.nRegions = PySequence_Fast_GET_SIZE(fg);
  }
  {
    Py_ssize_t total = n_new_regions + st.nRegions;
    rg = PyMem_Malloc((size_t)(total ? total : 1) * sizeof *rg);
    if (!rg) goto nomem;
    for (Py_ssize_t i = 0; i < st.nRegions; i++) {
      tether_region *rh;
      if (!tp_arg_region(PySequence_Fast_GET_ITEM(fg, i), &rh, &rg[i])) goto done;
    }
    /* New empty regions are detached regions too, so the arena owns them until the op does. */
    for (Py_ssize_t i = 0; i < n_new_regions; i++) {
      tether_region *rh;
      int rc = tether_region_create(a, &rh);
      if (rc != TETHER_OK) {
        tp_raise(rc, NULL, a);
        goto done;
      }
      PyObject *ro = tp_wrap_region(rh);
      if (!ro || PyList_Append(keep, ro) < 0) {
        Py_XDECREF(ro);
        goto done;
      }
      Py_DECREF(ro);
      tether_region_get(rh, &rg[st.nRegions + i]);
    }
    st.nRegions = total;
    st.regions = rg;
  }
  if (attrs != Py_None) {
    if (!PyDict_Check(attrs)) {
      tp_type_error("attributes", "a dict of str to Attribute", attrs);
      goto done;
    }
    if (!(items = PyDict_Items(attrs))) goto done;
    st.nAttributes = PyList_GET_SIZE(items);
    na = PyMem_Malloc((size_t)(st.nAttributes ? st.nAttributes : 1) * sizeof *na);
    if (!na) goto nomem;
    for (Py_ssize_t i = 0; i < st.nAttributes; i++) {
      PyObject *kv = PyList_GET_ITEM(items, i);
      PyObject *k = PyTuple_GET_ITEM(kv, 0), *v = PyTuple_GET_ITEM(kv, 1);
      if (!PyUnicode_Check(k)) {
        tp_type_error("attribute name", "a str", k);
        goto done;
      }
      Py_ssize_t kl;
      const char *ks = PyUnicode_AsUTF8AndSize(k, &kl);
      if (!ks) goto done;
      tether_arena *aa;
      MlirAttribute av;
      if (!tp_arg_attr(v, &av, &aa)) goto done;
      na[i] = mlirNamedAttributeGet(
          mlirIdentifierGet(tether_arena_context(a), (MlirStringRef){ks, (size_t)kl}), av);
    }
    st.attributes = na;
  }
  st.enableResultTypeInference = infer;
  {
    tether_op *op;
    int rc = tether_op_create(a, &st, &op);
    if (rc == TETHER_EARG && infer) {
      PyErr_Format(PyExc_ValueError, "could not infer the result types of '%U'%s%s", name,
                   *tether_arena_last_error(a) ? ":\n" : "", tether_arena_last_error(a));
      goto done;
    }
    if (rc == TETHER_EARG) {
      PyErr_Format(PyExc_ValueError,
                   "invalid operation state for '%U': operands, successors and regions must be "
                   "alive in this context, and regions detached",
                   name);
      goto done;
    }
    if (rc != TETHER_OK) {
      tp_raise(rc, NULL, a);
      goto done;
    }
    result = tp_wrap_op(op);
  }
  goto done;
nomem:
  PyErr_NoMemory();
done:
  PyMem_Free(rt);
  PyMem_Free(ov);
  PyMem_Free(sb);
  PyMem_Free(rg);
  PyMem_Free(na);
  Py_XDECREF(fr);
  Py_XDECREF(fo);
  Py_XDECREF(fs);
  Py_XDECREF(fg);
  Py_XDECREF(items);
  Py_DECREF(keep);
  return result;
}

static PyObject *fn_block_create_at_start(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *region, *types, *locs = Py_None;
  if (!PyArg_ParseTuple(args, "OO|O", &region, &types, &locs)) return NULL;
  tether_region *rh;
  MlirRegion rraw;
  if (!tp_arg_region(region, &rh, &rraw)) return NULL;
  tether_arena *a = tether_handle_arena(rh);
  intptr_t n;
  MlirType *ts;
  MlirLocation *ls;
  if (!collect_types(types, locs, a, &n, &ts, &ls)) return NULL;
  tether_block *b;
  int rc = tether_block_create(a, n, ts, ls, &b);
  PyMem_Free(ts);
  PyMem_Free(ls);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  PyObject *bo = tp_wrap_block(b);
  if (!bo) return NULL;
  rc = tether_region_insert_block(rh, 0, b);
  if (rc != TETHER_OK) {
    Py_DECREF(bo);
    return RAISE_RC(rc, rh);
  }
  return bo;
}

static PyObject *fn_set_context_hook(PyObject *m, PyObject *fn) {
  (void)m;
  Py_XSETREF(current_context_hook, Py_NewRef(fn));
  Py_RETURN_NONE;
}

static PyObject *fn_run_passes(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *pmo, *opo;
  if (!PyArg_ParseTuple(args, "O!O", tp.PassManager, &pmo, &opo)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tp_arg_op(opo, &h, &raw)) return NULL;
  TpPassManager *pm = (TpPassManager *)pmo;
  tether_arena *pa = ((TpContext *)pm->context)->arena;
  if (pa != tether_handle_arena(h)) return tp_raise(TETHER_ECONTEXT, NULL, NULL);
  int rc = tether_op_run_passes(h, pm->pm);
  if (rc != TETHER_OK) return tp_raise(rc, h, pa);
  Py_RETURN_NONE;
}

PyMethodDef tp_ir_functions[] = {
    {"_module_parse", fn_module_parse, METH_VARARGS, NULL},
    {"_module_create", fn_module_create, METH_VARARGS, NULL},
    {"_op_parse", fn_op_parse, METH_VARARGS, NULL},
    {"_module_from_op", fn_module_from_op, METH_O, NULL},
    {"_op_create", fn_op_create, METH_VARARGS, NULL},
    {"_block_create_at_start", fn_block_create_at_start, METH_VARARGS, NULL},
    {"_set_context_hook", fn_set_context_hook, METH_O, NULL},
    {"_run_passes", fn_run_passes, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
