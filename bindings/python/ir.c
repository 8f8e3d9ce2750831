/* ir.c: Region, Block, Value (OpResult, BlockArgument), OpOperand, and the sequences over them
 * (OpOperandList, OpResultList, RegionSequence, OpSuccessors, OperationList, BlockArgumentList,
 * BlockList, with upstream's slicing) and their iterators.
 *
 * Invariant: every method gets the MLIR object through the arena's guarded access first, so an
 * invalid handle raises InvalidatedError before anything touches MLIR; arguments are converted
 * (TypeError) before any raw pointer is read.
 */
#include "tether_py.h"

#include <mlir-c/BuiltinAttributes.h>
#include <string.h>

#define H(o) (((TpHandle *)(o))->h)

/* ---- wrapping -------------------------------------------------------------------------------- */

static PyObject *wrap_handle(PyTypeObject *type, void *h) {
  if (!h) Py_RETURN_NONE;
  PyObject *o = tether_handle_get_user(h);
  if (o) return Py_NewRef(o);
  TpHandle *self = (TpHandle *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pin = tp_pin(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->h = h;
  tether_handle_set_user(h, self);
  return (PyObject *)self;
}

static void handle_dealloc(TpHandle *self) {
  if (self->h && tether_handle_get_user(self->h) == self) tether_handle_set_user(self->h, NULL);
  if (self->h && self->pin >= 0) tp_unpin(self->pin);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

PyObject *tp_wrap_region(tether_region *h) { return wrap_handle(tp.Region, h); }
PyObject *tp_wrap_block(tether_block *h) { return wrap_handle(tp.Block, h); }

static PyObject *value_cast(PyObject *v);

PyObject *tp_wrap_value(tether_value *h) {
  if (!h) Py_RETURN_NONE;
  bool res = false;
  tether_value_is_result(h, &res);
  PyObject *v = wrap_handle(res ? tp.OpResult : tp.BlockArgument, h);
  if (v && PyDict_GET_SIZE(tp.value_casters)) return value_cast(v);
  return v;
}

/* An operand, as upstream gives it: a plain Value (OpResult(v) / BlockArgument(v) cast it). Not
 * interned: the value's interned wrapper (if any) is an OpResult or BlockArgument; equality and
 * hashing go by the value, as upstream's. */
static PyObject *plain_value(tether_value *h, int cast) {
  if (!h) Py_RETURN_NONE;
  TpHandle *self = (TpHandle *)tp.Value->tp_alloc(tp.Value, 0);
  if (!self) return NULL;
  self->pin = tp_pin(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->h = h;
  PyObject *v = (PyObject *)self;
  if (cast && PyDict_GET_SIZE(tp.value_casters)) return value_cast(v);
  return v;
}

static PyObject *wrap_operand(tether_value *h) { return plain_value(h, 1); }

#define ARG_FN(name, ctype, rawtype, pytype, getter, what)                                         \
  int name(PyObject *o, ctype **h, rawtype *raw) {                                                 \
    if (!tp_is(o, tp.pytype)) return tp_type_error("argument", what, o), 0;                        \
    ctype *x = H(o);                                                                               \
    int rc = getter(x, raw);                                                                       \
    if (rc != TETHER_OK) return TP_RAISE_RC(rc, x), 0;                                             \
    *h = x;                                                                                        \
    return 1;                                                                                      \
  }

ARG_FN(tp_arg_region, tether_region, MlirRegion, Region, tether_region_get, "a Region")
ARG_FN(tp_arg_block, tether_block, MlirBlock, Block, tether_block_get, "a Block")
ARG_FN(tp_arg_value, tether_value, MlirValue, Value, tether_value_get, "a Value")

#define SELF(getter, self, raw, Raw)                                                               \
  Raw raw;                                                                                         \
  do {                                                                                             \
    int rc_ = getter(H(self), &raw);                                                               \
    if (rc_ != TETHER_OK) return TP_RAISE_RC(rc_, H(self));                                        \
  } while (0)

static PyObject *handle_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  /* Values compare by the value whatever their class (Value, OpResult, a caster's subclass);
   * regions and blocks by the object, within their own kind. */
  int av = tp_is(a, tp.Value), bv = tp_is(b, tp.Value);
  int eq = (av || bv) ? av && bv && H(a) == H(b)
                      : Py_TYPE(b)->tp_dealloc == Py_TYPE(a)->tp_dealloc && H(a) == H(b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t handle_hash(PyObject *a) { return _Py_HashPointer(H(a)); }

static PyObject *ctx_of(PyObject *self) { return tp_context_of(tether_handle_arena(H(self))); }

/* ---- Region ---------------------------------------------------------------------------------- */

static PyObject *region_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"context", NULL};
  PyObject *c;
  if (!tp_args("Region", args, kw, names, 0, 1, &c)) return NULL;
  TpContext *ctx = tp_resolve_context(c);
  if (!ctx) return NULL;
  tether_region *r;
  int rc = tether_region_create(ctx->arena, &r);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  (void)type;
  return tp_wrap_region(r);
}

static PyObject *region_blocks(PyObject *self, void *c) {
  (void)c;
  SELF(tether_region_get, self, raw, MlirRegion);
  (void)raw;
  return tp_new_list(self, TP_LIST_REGION_BLOCKS);
}

static PyObject *region_owner(PyObject *self, void *c) {
  (void)c;
  tether_op *p;
  TP_CALL(tether_region_parent(H(self), &p), H(self));
  return tp_wrap_op(p);
}

static PyObject *region_context(PyObject *self, void *c) {
  (void)c;
  SELF(tether_region_get, self, raw, MlirRegion);
  (void)raw;
  return ctx_of(self);
}

static PyObject *list_iter(PyObject *l);

static PyObject *region_iter(PyObject *self) {
  PyObject *l = region_blocks(self, NULL);
  if (!l) return NULL;
  PyObject *it = list_iter(l);
  Py_DECREF(l);
  return it;
}

static PyGetSetDef region_getset[] = {
    {"blocks", region_blocks, NULL, "The region's blocks (BlockList).", NULL},
    {"owner", region_owner, NULL, "The operation owning the region, or None if detached.", NULL},
    {"context", region_context, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot region_slots[] = {
    {Py_tp_new, region_new},
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_richcompare, handle_richcompare},
    {Py_tp_hash, handle_hash},
    {Py_tp_iter, region_iter},
    {Py_tp_getset, region_getset},
    {Py_tp_doc, "A region. Region(context=None) creates a detached one, owned by this object "
                "until it is given to Operation.create."},
    {0, NULL},
};

PyType_Spec tp_region_spec = {"tether.ir.Region", sizeof(TpHandle), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, region_slots};

/* ---- Block ----------------------------------------------------------------------------------- */

/* Argument types and locations of a new block (locations default to unknown). */
static int block_args(PyObject *types, PyObject *locs, PyObject *ctx, intptr_t *n, MlirType **ts,
                      MlirLocation **ls) {
  if (!tp_seq_types(types, ctx, n, ts)) return 0;
  if (locs && locs != Py_None) {
    intptr_t nl;
    if (!tp_seq_locs(locs, ctx, &nl, ls)) {
      PyMem_Free(*ts);
      return 0;
    }
    if (nl != *n) {
      PyMem_Free(*ts);
      PyMem_Free(*ls);
      PyErr_Format(PyExc_ValueError,
                   "Expected %zd locations, got: %zd (one location per block argument)",
                   (Py_ssize_t)*n, (Py_ssize_t)nl);
      return 0;
    }
    return 1;
  }
  *ls = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof **ls);
  if (!*ls) {
    PyMem_Free(*ts);
    PyErr_NoMemory();
    return 0;
  }
  /* As upstream: the current Location for every argument; none (with arguments) is an error. */
  MlirLocation cur = mlirLocationUnknownGet(tp_ctx_raw(ctx));
  if (*n) {
    PyObject *lo = tp_resolve_loc(Py_None);
    if (!lo || TP_CTX(lo) != ctx) {
      if (lo) PyErr_SetString(PyExc_ValueError, "the current Location belongs to another context");
      PyMem_Free(*ts);
      PyMem_Free(*ls);
      return 0;
    }
    cur = (MlirLocation){TP_PTR(lo)};
  }
  for (intptr_t i = 0; i < *n; i++) (*ls)[i] = cur;
  return 1;
}

/* A new detached block (new reference to its wrapper). */
static PyObject *new_block(PyObject *ctx, PyObject *types, PyObject *locs) {
  intptr_t n;
  MlirType *ts;
  MlirLocation *ls;
  if (!block_args(types, locs, ctx, &n, &ts, &ls)) return NULL;
  tether_block *b;
  tether_arena *a = ((TpContext *)ctx)->arena;
  int rc = tether_block_create(a, n, ts, ls, &b);
  PyMem_Free(ts);
  PyMem_Free(ls);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, a);
  return tp_wrap_block(b);
}

static PyObject *block_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"arg_types", "context", "arg_locs", NULL};
  PyObject *a[3];
  if (!tp_args("Block", args, kw, names, 0, 3, a)) return NULL;
  PyObject *types = a[0], *c = a[1] ? a[1] : Py_None, *locs = a[2] ? a[2] : Py_None;
  (void)type;
  PyObject *ctx = NULL;
  if (c == Py_None && types && PySequence_Check(types) && PySequence_Size(types) > 0) {
    PyObject *t0 = PySequence_GetItem(types, 0);
    MlirType raw;
    int ok = t0 && tp_arg_type(t0, &raw, &ctx);
    Py_XDECREF(t0);
    if (!ok) return NULL;
  } else {
    ctx = (PyObject *)tp_resolve_context(c);
    if (!ctx) return NULL;
  }
  PyObject *empty = PyTuple_New(0);
  if (!empty) return NULL;
  PyObject *r = new_block(ctx, types ? types : empty, locs);
  Py_DECREF(empty);
  return r;
}

static PyObject *block_list(PyObject *self, int kind) {
  SELF(tether_block_get, self, raw, MlirBlock);
  (void)raw;
  return tp_new_list(self, kind);
}

static PyObject *block_operations(PyObject *self, void *c) {
  (void)c;
  return block_list(self, TP_LIST_BLOCK_OPS);
}

static PyObject *block_arguments(PyObject *self, void *c) {
  (void)c;
  return block_list(self, TP_LIST_BLOCK_ARGS);
}

static PyObject *block_owner(PyObject *self, void *c) {
  (void)c;
  tether_op *p;
  TP_CALL(tether_block_parent_op(H(self), &p), H(self));
  return tp_wrap_op(p);
}

static PyObject *block_region(PyObject *self, void *c) {
  (void)c;
  tether_region *r;
  TP_CALL(tether_block_parent(H(self), &r), H(self));
  return tp_wrap_region(r);
}

static PyObject *block_context(PyObject *self, void *c) {
  (void)c;
  SELF(tether_block_get, self, raw, MlirBlock);
  (void)raw;
  return ctx_of(self);
}

static PyObject *block_append(PyObject *self, PyObject *op) {
  tether_op *oh;
  MlirOperation raw;
  if (!tp_arg_op(op, &oh, &raw)) return NULL;
  SELF(tether_block_get, self, braw, MlirBlock);
  (void)braw;
  int rc = tether_block_append_op(H(self), oh);
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError, "cannot append an operation into a block inside itself");
  if (rc == TETHER_ESTATE) {
    /* As upstream: an attached operation moves to the end of this block. */
    intptr_t n;
    tether_op *last = NULL;
    rc = tether_block_num_ops(H(self), &n);
    if (rc == TETHER_OK && n > 0) rc = tether_block_op(H(self), n - 1, &last);
    if (rc == TETHER_OK && last == oh) Py_RETURN_NONE;
    if (rc == TETHER_OK) rc = last ? tether_op_move_after(oh, last) : tether_op_detach(oh);
    if (rc == TETHER_OK && !last) rc = tether_block_append_op(H(self), oh);
    if (rc == TETHER_EARG)
      return PyErr_Format(PyExc_ValueError,
                          "cannot append an operation into a block inside itself");
  }
  TP_CALL(rc, H(self));
  Py_RETURN_NONE;
}

static PyObject *block_add_argument(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  static const char *const names[] = {"type", "loc", NULL};
  PyObject *a[2];
  if (!tp_fastargs("add_argument", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  PyObject *type = a[0], *loc = a[1] ? a[1] : Py_None;
  MlirType t;
  PyObject *ctx;
  if (!tp_arg_type(type, &t, &ctx)) return NULL;
  MlirLocation l = mlirLocationUnknownGet(tp_ctx_raw(ctx));
  if (loc != Py_None && !tp_arg_loc_in(loc, ctx, &l)) return NULL;
  SELF(tether_block_get, self, raw, MlirBlock);
  (void)raw;
  if (((TpContext *)ctx)->arena != tether_handle_arena(H(self)))
    return PyErr_Format(PyExc_ValueError, "the type belongs to another context");
  tether_value *v;
  TP_CALL(tether_block_add_arg(H(self), t, l, &v), H(self));
  return plain_value(v, 1); /* a Value, as upstream's (block.arguments[i] is the BlockArgument) */
}

static PyObject *block_erase_argument(PyObject *self, PyObject *index) {
  intptr_t i;
  if (!tp_arg_intptr(index, "index", &i)) return NULL;
  SELF(tether_block_get, self, raw, MlirBlock);
  intptr_t n = mlirBlockGetNumArguments(raw);
  if (i < 0 || i >= n) return PyErr_Format(PyExc_IndexError, "block argument index out of range");
  MlirValue arg = mlirBlockGetArgument(raw, i);
  if (!mlirOpOperandIsNull(mlirValueGetFirstUse(arg)))
    return PyErr_Format(PyExc_ValueError, "cannot erase a block argument that still has uses");
  mlirBlockEraseArgument(raw, (unsigned)i);
  TP_CALL(tether_revalidate(H(self)), H(self));
  Py_RETURN_NONE;
}

/* Position of block b in region r (or -1). */
static intptr_t block_index(tether_region *r, tether_block *b) {
  intptr_t i = 0;
  tether_block *x;
  if (tether_region_first_block(r, &x) != TETHER_OK) return -1;
  while (x) {
    if (x == b) return i;
    i++;
    if (tether_block_next(x, &x) != TETHER_OK) return -1;
  }
  return -1;
}

/* create_before(*arg_types, arg_locs=None) / create_after(...): a new block next to this one. */
static PyObject *block_create_near(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames, int after) {
  static const char *const names[] = {"arg_locs", NULL};
  PyObject *locs;
  if (!tp_fastargs_star(after ? "create_after" : "create_before", args, nargs, kwnames, names,
                        &locs))
    return NULL;
  SELF(tether_block_get, self, raw, MlirBlock);
  (void)raw;
  tether_region *r;
  TP_CALL(tether_block_parent(H(self), &r), H(self));
  if (!r) return PyErr_Format(PyExc_ValueError, "the block is not in a region");
  PyObject *ctx = ctx_of(self);
  PyObject *types = ctx ? tp_tuple_of(args, nargs) : NULL;
  PyObject *b = types ? new_block(ctx, types, locs) : NULL;
  Py_XDECREF(types);
  Py_XDECREF(ctx);
  if (!b) return NULL;
  intptr_t pos = block_index(r, H(self));
  int rc = pos < 0 ? TETHER_ESTATE : tether_region_insert_block(r, pos + (after ? 1 : 0), H(b));
  if (rc != TETHER_OK) {
    Py_DECREF(b);
    return TP_RAISE_RC(rc, H(self));
  }
  return b;
}

static PyObject *block_create_before(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  return block_create_near(self, args, nargs, kwnames, 0);
}

static PyObject *block_create_after(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  return block_create_near(self, args, nargs, kwnames, 1);
}

static PyObject *block_create_at_start(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"parent", "arg_types", "arg_locs", NULL};
  PyObject *a[3];
  if (!tp_fastargs("create_at_start", args, nargs, kwnames, names, 1, 3, a)) return NULL;
  PyObject *parent = a[0], *types = a[1], *locs = a[2] ? a[2] : Py_None;
  tether_region *rh;
  MlirRegion rraw;
  if (!tp_arg_region(parent, &rh, &rraw)) return NULL;
  PyObject *ctx = ctx_of(parent);
  if (!ctx) return NULL;
  PyObject *empty = PyTuple_New(0);
  PyObject *b = empty ? new_block(ctx, types ? types : empty, locs) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(ctx);
  if (!b) return NULL;
  int rc = tether_region_insert_block(rh, 0, H(b));
  if (rc != TETHER_OK) {
    Py_DECREF(b);
    return TP_RAISE_RC(rc, rh);
  }
  return b;
}

static PyObject *block_append_to(PyObject *self, PyObject *region) {
  tether_region *rh;
  MlirRegion rraw;
  if (!tp_arg_region(region, &rh, &rraw)) return NULL;
  SELF(tether_block_get, self, raw, MlirBlock);
  /* A block in a region moves: detached first (upstream: "transferring ownership if
   * necessary"), unless the target region is inside the block itself. */
  if (!mlirRegionIsNull(mlirBlockGetParentRegion(raw))) {
    tether_op *owner = NULL;
    int orc = tether_region_parent(rh, &owner);
    if (orc != TETHER_OK) return TP_RAISE_RC(orc, rh);
    MlirOperation oraw;
    if (owner && tether_op_get(owner, &oraw) == TETHER_OK) {
      for (MlirOperation x = oraw; !mlirOperationIsNull(x); x = mlirOperationGetParentOperation(x))
        if (mlirBlockEqual(mlirOperationGetBlock(x), raw))
          return PyErr_Format(PyExc_ValueError,
                              "cannot append a block into a region inside itself");
    }
    TP_CALL(tether_block_detach(H(self)), H(self));
  }
  int rc = tether_region_append_block(rh, H(self));
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError, "cannot append a block into a region inside itself");
  TP_CALL(rc, H(self));
  Py_RETURN_NONE;
}

static PyObject *block_iter(PyObject *self) {
  PyObject *l = block_operations(self, NULL);
  if (!l) return NULL;
  PyObject *it = list_iter(l);
  Py_DECREF(l);
  return it;
}

static PyObject *block_str(PyObject *self) {
  SELF(tether_block_get, self, raw, MlirBlock);
  /* MLIR verifies the enclosing IR before printing a block, and its verifier crashes on IR that
   * uses values of other IR; it has no way to print a block unverified. */
  if (tether_handle_has_foreign_uses(H(self)))
    return PyErr_Format(PyExc_ValueError,
                        "the IR this block is in uses values or blocks defined outside it (in a "
                        "detached operation, region or block): print the operation instead, or "
                        "insert that IR first");
  tp_strbuf b = {0};
  mlirBlockPrint(raw, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *block_capsule(PyObject *self, void *c) {
  (void)c;
  SELF(tether_block_get, self, raw, MlirBlock);
  tether_arena_touch(tether_handle_arena(H(self)));
  return tp_capsule_with_owner(raw.ptr, "mlir.ir.Block._CAPIPtr", self);
}

static PyMethodDef block_methods[] = {
    {"append", (PyCFunction)block_append, METH_O,
     "Appends an operation to the block (a detached one, or moves it here)."},
    {"add_argument", TP_FASTFN(block_add_argument), TP_FAST,
     "add_argument(type, loc=None): a new argument; returns it."},
    {"erase_argument", (PyCFunction)block_erase_argument, METH_O,
     "Erases argument `index` (ValueError while it has uses)."},
    {"create_before", TP_FASTFN(block_create_before), TP_FAST,
     "create_before(*arg_types, arg_locs=None)"},
    {"create_after", TP_FASTFN(block_create_after), TP_FAST,
     "create_after(*arg_types, arg_locs=None)"},
    {"create_at_start", TP_FASTFN(block_create_at_start), TP_FAST | METH_STATIC,
     "create_at_start(parent, arg_types=[], arg_locs=None): a new first block of the region."},
    {"append_to", (PyCFunction)block_append_to, METH_O,
     "Appends this block to a region (moving it out of its region, if any)."},
    TP_METHODS_END,
};

static PyGetSetDef block_getset[] = {
    {"operations", block_operations, NULL, "The block's operations (OperationList).", NULL},
    {"arguments", block_arguments, NULL, "The block's arguments (BlockArgumentList).", NULL},
    {"owner", block_owner, NULL, "The operation owning the block's region, or None.", NULL},
    {"region", block_region, NULL, "The containing region, or None.", NULL},
    {"context", block_context, NULL, NULL, NULL},
    {"_CAPIPtr", block_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot block_slots[] = {
    {Py_tp_new, block_new},
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_str, block_str},
    {Py_tp_richcompare, handle_richcompare},
    {Py_tp_hash, handle_hash},
    {Py_tp_iter, block_iter},
    {Py_tp_methods, block_methods},
    {Py_tp_getset, block_getset},
    {Py_tp_doc, "A block. Block(arg_types=(), context=None, arg_locs=None) creates a detached one, "
                "owned by this object until it is appended to a region."},
    {0, NULL},
};

PyType_Spec tp_block_spec = {"tether.ir.Block", sizeof(TpHandle), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, block_slots};

/* ---- Value ----------------------------------------------------------------------------------- */

/* The value as the class registered (register_value_caster) for its type's TypeID. Steals v. */
static PyObject *value_cast(PyObject *v) {
  MlirValue raw;
  if (tether_value_get(H(v), &raw) != TETHER_OK) return v;
  MlirTypeID id = mlirTypeGetTypeID(mlirValueGetType(raw));
  PyObject *caster = tp_caster_of(tp.value_casters, id);
  if (!caster) {
    if (PyErr_Occurred()) Py_CLEAR(v);
    return v;
  }
  Py_INCREF(caster);
  PyObject *r = PyObject_CallOneArg(caster, v);
  Py_DECREF(caster);
  Py_DECREF(v);
  return r;
}

static PyObject *value_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"value", NULL};
  PyObject *v;
  if (type == tp.Value || type == tp.OpResult || type == tp.BlockArgument) {
    if (!tp_args(_PyType_Name(type), args, kw, names, 1, 1, &v)) return NULL;
  } else {
    /* A Python subclass: its __init__ takes its own arguments; the value is the first. */
    if (PyTuple_GET_SIZE(args) < 1)
      return PyErr_Format(PyExc_TypeError, "%s() needs the value to wrap", type->tp_name);
    v = PyTuple_GET_ITEM(args, 0);
  }
  tether_value *h;
  MlirValue raw;
  if (!tp_arg_value(v, &h, &raw)) return NULL;
  if (PyType_IsSubtype(type, tp.OpResult) && !mlirValueIsAOpResult(raw))
    return PyErr_Format(PyExc_ValueError, "Cannot cast value to OpResult (from %R)", v);
  if (PyType_IsSubtype(type, tp.BlockArgument) && !mlirValueIsABlockArgument(raw))
    return PyErr_Format(PyExc_ValueError, "Cannot cast value to BlockArgument (from %R)", v);
  if (type == tp.Value) return plain_value(h, 0); /* Value(v) is a Value, as upstream's */
  if (type == tp.OpResult || type == tp.BlockArgument) return wrap_handle(type, h);
  /* A Python subclass (a value caster's class): a new object over the same handle. */
  TpHandle *self = (TpHandle *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pin = tp_pin(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->h = h;
  return (PyObject *)self;
}

static PyObject *value_type(PyObject *self, void *c) {
  (void)c;
  SELF(tether_value_get, self, raw, MlirValue);
  return tp_wrap_type_a(tether_handle_arena(H(self)), mlirValueGetType(raw));
}

static PyObject *value_owner(PyObject *self, void *c) {
  (void)c;
  SELF(tether_value_get, self, raw, MlirValue);
  if (mlirValueIsAOpResult(raw)) {
    tether_op *o;
    TP_CALL(tether_value_owner_op(H(self), &o), H(self));
    return tp_wrap_operation(o); /* as upstream: the Operation, not its OpView */
  }
  tether_block *b;
  TP_CALL(tether_value_owner_block(H(self), &b), H(self));
  return tp_wrap_block(b);
}

static PyObject *value_context(PyObject *self, void *c) {
  (void)c;
  SELF(tether_value_get, self, raw, MlirValue);
  (void)raw;
  return ctx_of(self);
}

static PyObject *value_index(PyObject *self, void *c) {
  (void)c;
  intptr_t i;
  TP_CALL(tether_value_index(H(self), &i), H(self));
  return PyLong_FromSsize_t(i);
}

static PyObject *value_rauw(PyObject *self, PyObject *with) {
  tether_value *wh;
  MlirValue wraw;
  if (!tp_arg_value(with, &wh, &wraw)) return NULL;
  SELF(tether_value_get, self, raw, MlirValue);
  if (tether_handle_arena(wh) != tether_handle_arena(H(self)))
    return PyErr_Format(PyExc_ValueError, "objects of different contexts cannot be mixed");
  if (wh == H(self)) Py_RETURN_NONE; /* replacing a value with itself changes nothing */
  (void)raw;
  TP_CALL(tether_value_replace_all_uses(H(self), wh), H(self));
  Py_RETURN_NONE;
}

static PyObject *value_set_type(PyObject *self, PyObject *type) {
  MlirType t;
  PyObject *tctx;
  if (!tp_arg_type(type, &t, &tctx)) return NULL;
  SELF(tether_value_get, self, raw, MlirValue);
  if (((TpContext *)tctx)->arena != tether_handle_arena(H(self)))
    return PyErr_Format(PyExc_ValueError, "the type belongs to another context");
  tether_handle_mark_suspect(H(self)); /* verifiers may cast the old type */
  mlirValueSetType(raw, t);
  Py_RETURN_NONE;
}

/* OpOperand: a use of a value (owner: the user OpView, operand_number). */
typedef struct {
  PyObject_HEAD PyObject *owner;
  Py_ssize_t number;
} TpOpOperand;

static PyObject *operand_owner(TpOpOperand *self, void *c) {
  (void)c;
  return Py_NewRef(self->owner);
}

static PyObject *operand_number(TpOpOperand *self, void *c) {
  (void)c;
  return PyLong_FromSsize_t(self->number);
}

static int operand_traverse(TpOpOperand *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->owner);
  return 0;
}

static int operand_clear(TpOpOperand *self) {
  Py_CLEAR(self->owner);
  return 0;
}

static void operand_dealloc(TpOpOperand *self) {
  PyObject_GC_UnTrack(self);
  operand_clear(self);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyGetSetDef operand_getset[] = {
    {"owner", (getter)operand_owner, NULL, "The operation using the value.", NULL},
    {"operand_number", (getter)operand_number, NULL, "The operand's number in its owner.", NULL},
    TP_GETSET_END,
};

static PyType_Slot operand_slots[] = {
    {Py_tp_dealloc, operand_dealloc}, {Py_tp_traverse, operand_traverse},
    {Py_tp_clear, operand_clear},     {Py_tp_getset, operand_getset},
    {Py_tp_doc, "A use of a value."}, {0, NULL},
};

static PyType_Spec operand_spec = {
    "tether.ir.OpOperand", sizeof(TpOpOperand), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, operand_slots};

/* value.uses: an iterator of OpOperand. The owners are wrapped first (handles that keep their
 * trees alive), then the Python objects are made: Python code that runs meanwhile cannot make
 * the loop read a freed use. */
static PyObject *value_uses(PyObject *self, void *c) {
  (void)c;
  SELF(tether_value_get, self, raw, MlirValue);
  tether_arena *a = tether_handle_arena(H(self));
  Py_ssize_t n = 0;
  for (MlirOpOperand u = mlirValueGetFirstUse(raw); !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u))
    n++;
  PyObject *owners = PyList_New(0);
  PyObject *numbers = PyList_New(0);
  if (!owners || !numbers) goto fail;
  for (Py_ssize_t i = 0; i < n; i++) {
    /* Re-read the use list from the start each time: nothing of it is kept across calls. The
     * safe point first destroys what became unreachable, so the wrap below (whose own safe point
     * then has nothing queued) never meets a user that is being freed. */
    tether_safepoint(a);
    int rc = tether_value_get(H(self), &raw);
    if (rc != TETHER_OK) {
      TP_RAISE_RC(rc, H(self));
      goto fail;
    }
    MlirOpOperand u = mlirValueGetFirstUse(raw);
    for (Py_ssize_t k = 0; k < i && !mlirOpOperandIsNull(u); k++) u = mlirOpOperandGetNextUse(u);
    if (mlirOpOperandIsNull(u)) break;
    tether_op *owner;
    rc = tether_op_wrap(a, mlirOpOperandGetOwner(u), &owner);
    if (rc != TETHER_OK) {
      tp_raise(rc, NULL, a);
      goto fail;
    }
    Py_ssize_t num = (Py_ssize_t)mlirOpOperandGetOperandNumber(u);
    PyObject *o = tp_wrap_op(owner);
    PyObject *nn = o ? PyLong_FromSsize_t(num) : NULL;
    if (!nn || PyList_Append(owners, o) < 0 || PyList_Append(numbers, nn) < 0) {
      Py_XDECREF(o);
      Py_XDECREF(nn);
      goto fail;
    }
    Py_DECREF(o);
    Py_DECREF(nn);
  }
  PyObject *result = PyList_New(PyList_GET_SIZE(owners));
  for (Py_ssize_t i = 0; result && i < PyList_GET_SIZE(owners); i++) {
    TpOpOperand *u = PyObject_GC_New(TpOpOperand, tp.OpOperand);
    if (!u) {
      Py_CLEAR(result);
      break;
    }
    u->owner = Py_NewRef(PyList_GET_ITEM(owners, i));
    u->number = PyLong_AsSsize_t(PyList_GET_ITEM(numbers, i));
    PyObject_GC_Track(u);
    PyList_SET_ITEM(result, i, (PyObject *)u);
  }
  Py_DECREF(owners);
  Py_DECREF(numbers);
  if (!result) return NULL;
  PyObject *it = PyObject_GetIter(result);
  Py_DECREF(result);
  return it;
fail:
  Py_XDECREF(owners);
  Py_XDECREF(numbers);
  return NULL;
}

static PyObject *value_get_name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  static const char *const names[] = {"use_local_scope", "state", NULL};
  PyObject *a[2];
  if (!tp_fastargs("get_name", args, nargs, kwnames, names, 0, 2, a)) return NULL;
  int local = 0;
  if (a[0] && !tp_arg_bool(a[0], &local)) return NULL;
  PyObject *state = a[1] ? a[1] : Py_None;
  MlirAsmState *given = NULL;
  if (state != Py_None && !(given = tp_arg_asm_state(state))) return NULL;
  SELF(tether_value_get, self, raw, MlirValue);
  tp_strbuf b = {0};
  if (given) {
    mlirValuePrintAsOperand(raw, *given, tp_strbuf_append, &b);
  } else {
    /* An argument of a block no operation owns has no printing scope: MLIR would crash. */
    if (mlirValueIsABlockArgument(raw) &&
        mlirOperationIsNull(mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(raw))))
      return PyErr_Format(PyExc_ValueError,
                          "the value is an argument of a block that no operation owns: it has no "
                          "name yet");
    MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
    if (local) mlirOpPrintingFlagsUseLocalScope(f);
    tp_asm_flags_for(H(self), f);
    MlirAsmState st = mlirAsmStateCreateForValue(raw, f);
    mlirValuePrintAsOperand(raw, st, tp_strbuf_append, &b);
    mlirAsmStateDestroy(st);
    mlirOpPrintingFlagsDestroy(f);
  }
  tether_keep_alive(H(self));
  return tp_strbuf_finish(&b);
}

static PyObject *value_str(PyObject *self) {
  SELF(tether_value_get, self, raw, MlirValue);
  tp_strbuf b = {0};
  tp_strbuf_append(mlirStringRefCreateFromCString("Value("), &b);
  if (mlirValueIsAOpResult(raw) && tether_handle_has_foreign_uses(H(self))) {
    /* mlirValuePrint verifies the enclosing IR first, which crashes on IR using values of other
     * IR: print the defining operation unverified, generic form. */
    MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsAssumeVerified(f);
    mlirOpPrintingFlagsPrintGenericOpForm(f);
    mlirOperationPrintWithFlags(mlirOpResultGetOwner(raw), f, tp_strbuf_append, &b);
    mlirOpPrintingFlagsDestroy(f);
  } else {
    mlirValuePrint(raw, tp_strbuf_append, &b);
  }
  tp_strbuf_append(mlirStringRefCreateFromCString(")"), &b);
  return tp_strbuf_finish(&b);
}

static PyObject *value_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF(tether_value_get, self, raw, MlirValue);
  if (tether_handle_has_foreign_uses(H(self))) {
    /* mlirValueDump verifies first (see value_str). */
    PyObject *s = value_str(self);
    if (!s) return NULL;
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(s, &n);
    if (text && n >= 7) fprintf(stderr, "%.*s\n", (int)(n - 7), text + 6);
    Py_DECREF(s);
    Py_RETURN_NONE;
  }
  mlirValueDump(raw);
  Py_RETURN_NONE;
}

static PyObject *value_maybe_downcast(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF(tether_value_get, self, raw, MlirValue);
  (void)raw;
  bool res = false;
  tether_value_is_result(H(self), &res);
  PyObject *v = wrap_handle(res ? tp.OpResult : tp.BlockArgument, H(self));
  return v ? value_cast(v) : NULL;
}

static PyObject *value_capsule(PyObject *self, void *c) {
  (void)c;
  SELF(tether_value_get, self, raw, MlirValue);
  tether_arena_touch(tether_handle_arena(H(self)));
  return tp_capsule_with_owner((void *)raw.ptr, "mlir.ir.Value._CAPIPtr", self);
}

static PyObject *value_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.Value)) return Py_NewRef(owner);
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Value._CAPIPtr");
  if (!p) return NULL;
  MlirValue raw = {p};
  tether_arena *a = tether_arena_of_context(mlirTypeGetContext(mlirValueGetType(raw)));
  tether_value *h;
  if (!a || tether_value_wrap(a, raw, &h) != TETHER_OK)
    return PyErr_Format(PyExc_ValueError,
                        "the capsule's value is not in IR a tether Context holds");
  return tp_wrap_value(h);
}

static PyObject *value_isinstance(PyObject *cls, PyObject *other) {
  if (!tp_is(other, tp.Value)) Py_RETURN_FALSE;
  MlirValue raw;
  if (tether_value_get(H(other), &raw) != TETHER_OK) Py_RETURN_FALSE;
  if (PyType_IsSubtype((PyTypeObject *)cls, tp.OpResult))
    return PyBool_FromLong(mlirValueIsAOpResult(raw));
  if (PyType_IsSubtype((PyTypeObject *)cls, tp.BlockArgument))
    return PyBool_FromLong(mlirValueIsABlockArgument(raw));
  Py_RETURN_TRUE;
}

static PyMethodDef value_methods[] = {
    {"replace_all_uses_with", (PyCFunction)value_rauw, METH_O,
     "Replaces every use of this value with another one."},
    {"set_type", (PyCFunction)value_set_type, METH_O, NULL},
    {"get_name", TP_FASTFN(value_get_name), TP_FAST,
     "get_name(use_local_scope=False, state=None): the value's name as an operand (%0)."},
    {"dump", (PyCFunction)value_dump, METH_NOARGS, "Prints the value to stderr."},
    {"maybe_downcast", (PyCFunction)value_maybe_downcast, METH_NOARGS, NULL},
    {"_CAPICreate", (PyCFunction)value_from_capsule, METH_O | METH_STATIC, NULL},
    {"isinstance", (PyCFunction)value_isinstance, METH_O | METH_CLASS, NULL},
    TP_METHODS_END,
};

static PyGetSetDef value_getset[] = {
    {"type", value_type, NULL, NULL, NULL},
    {"owner", value_owner, NULL, "The defining operation, or the owning Block.", NULL},
    {"uses", value_uses, NULL, "The uses of the value: an iterator of OpOperand.", NULL},
    {"context", value_context, NULL, NULL, NULL},
    {"_CAPIPtr", value_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot value_slots[] = {
    {Py_tp_new, value_new},
    {Py_tp_init, tp_init_noop},
    {Py_tp_dealloc, handle_dealloc},
    {Py_tp_str, value_str},
    {Py_tp_richcompare, handle_richcompare},
    {Py_tp_hash, handle_hash},
    {Py_tp_methods, value_methods},
    {Py_tp_getset, value_getset},
    {Py_tp_doc, "An SSA value: an OpResult or a BlockArgument."},
    {0, NULL},
};

PyType_Spec tp_value_spec = {"tether.ir.Value", sizeof(TpHandle), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, value_slots};

static PyGetSetDef opresult_getset[] = {
    {"result_number", value_index, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot opresult_slots[] = {
    {Py_tp_getset, opresult_getset},
    {Py_tp_doc, "A result of an operation."},
    {0, NULL},
};

PyType_Spec tp_opresult_spec = {"tether.ir.OpResult", sizeof(TpHandle), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, opresult_slots};

static PyGetSetDef blockarg_getset[] = {
    {"arg_number", value_index, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot blockarg_slots[] = {
    {Py_tp_getset, blockarg_getset},
    {Py_tp_doc, "An argument of a block."},
    {0, NULL},
};

PyType_Spec tp_blockarg_spec = {"tether.ir.BlockArgument", sizeof(TpHandle), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, blockarg_slots};

/* ---- sequences ------------------------------------------------------------------------------- */

static PyTypeObject *list_types[TP_LIST_KINDS];
static const char *const list_names[TP_LIST_KINDS] = {
    "OpOperandList", "OpResultList",      "RegionSequence", "OpSuccessors",
    "OperationList", "BlockArgumentList", "BlockList"};

PyObject *tp_new_list(PyObject *owner, int kind) {
  TpList *l = PyObject_GC_New(TpList, list_types[kind]);
  if (!l) return NULL;
  l->owner = Py_NewRef(owner);
  l->kind = kind;
  l->start = 0;
  l->step = 1;
  l->length = -1;
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

static void *owner_h(TpList *l) {
  return tp_is(l->owner, tp.OperationBase) ? ((TpOp *)l->owner)->h : H(l->owner);
}

/* Length of the owner's whole list. */
static Py_ssize_t full_len(TpList *l) {
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
    TP_RAISE_RC(rc, h);
    return -1;
  }
  return (Py_ssize_t)n;
}

static Py_ssize_t list_len(TpList *l) {
  Py_ssize_t n = full_len(l);
  if (n < 0 || l->length < 0) return n;
  /* A slice: its own length, clipped by what is left of the list now. */
  Py_ssize_t k = l->length;
  while (k > 0 && l->start + (k - 1) * l->step >= n) k--;
  return k;
}

/* Element i of the owner's whole list. */
static PyObject *full_item(TpList *l, Py_ssize_t i) {
  void *h = owner_h(l);
  void *out = NULL;
  int rc;
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
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, h);
  switch (l->kind) {
  case TP_LIST_OPERANDS:
    return wrap_operand(out);
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

/* sq_item: a negative index was already adjusted by Python (list_subscript adjusts its own). */
static PyObject *list_item(TpList *l, Py_ssize_t i) {
  Py_ssize_t n = list_len(l);
  if (n < 0) return NULL;
  if (i < 0 || i >= n) return PyErr_Format(PyExc_IndexError, "index out of range");
  return full_item(l, l->length < 0 ? i : l->start + i * l->step);
}

static PyObject *list_subscript(TpList *l, PyObject *key) {
  if (PyIndex_Check(key)) {
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0) {
      Py_ssize_t n = list_len(l);
      if (n < 0) return NULL;
      i += n;
    }
    return list_item(l, i);
  }
  if (PySlice_Check(key)) {
    Py_ssize_t n = list_len(l);
    if (n < 0) return NULL;
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
    Py_ssize_t k = PySlice_AdjustIndices(n, &start, &stop, step);
    if (l->kind == TP_LIST_BLOCK_OPS || l->kind == TP_LIST_REGION_BLOCKS) {
      PyObject *r = PyList_New(k);
      for (Py_ssize_t j = 0, i = start; r && j < k; j++, i += step) {
        PyObject *x = list_item(l, i);
        if (!x)
          Py_CLEAR(r);
        else
          PyList_SET_ITEM(r, j, x);
      }
      return r;
    }
    /* As upstream's sliceable lists: a list of the same kind over part of the owner's. */
    TpList *s = (TpList *)tp_new_list(l->owner, l->kind);
    if (!s) return NULL;
    Py_ssize_t base = l->length < 0 ? 0 : l->start, bstep = l->length < 0 ? 1 : l->step;
    s->start = base + start * bstep;
    s->step = step * bstep;
    s->length = k;
    if (k == 0) s->start = 0;
    return (PyObject *)s;
  }
  return tp_type_error("index", "an int or a slice", key);
}

static int list_ass(TpList *l, PyObject *key, PyObject *v) {
  if (l->kind != TP_LIST_OPERANDS && l->kind != TP_LIST_SUCCESSORS) {
    PyErr_SetString(PyExc_TypeError, "this sequence does not support item assignment");
    return -1;
  }
  if (!v) {
    PyErr_SetString(PyExc_TypeError, "items cannot be deleted");
    return -1;
  }
  Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return -1;
  Py_ssize_t n = list_len(l);
  if (n < 0) return -1;
  if (i < 0) i += n;
  if (i < 0 || i >= n) {
    PyErr_SetString(PyExc_IndexError, "index out of range");
    return -1;
  }
  if (l->length >= 0) i = l->start + i * l->step;
  if (l->kind == TP_LIST_SUCCESSORS) {
    tether_block *bh;
    MlirBlock braw;
    if (!tp_arg_block(v, &bh, &braw)) return -1;
    MlirOperation op;
    int rc = tether_op_get(owner_h(l), &op);
    if (rc != TETHER_OK) return TP_RAISE_RC(rc, owner_h(l)), -1;
    if (tether_handle_arena(bh) != tether_handle_arena(owner_h(l))) {
      PyErr_SetString(PyExc_ValueError, "objects of different contexts cannot be mixed");
      return -1;
    }
    tether_arena_touch(tether_handle_arena(bh));
    mlirOperationSetSuccessor(op, i, braw);
    return 0;
  }
  tether_value *vh;
  MlirValue raw;
  if (!tp_arg_value(v, &vh, &raw)) return -1;
  int rc = tether_op_set_operand(owner_h(l), i, vh);
  if (rc != TETHER_OK) {
    TP_RAISE_RC(rc, owner_h(l));
    return -1;
  }
  return 0;
}

/* a + b: a Python list of both (as upstream's sliceable lists). */
static PyObject *list_concat(PyObject *a, PyObject *b) {
  PyObject *la = PySequence_List(a);
  if (!la) return NULL;
  PyObject *lb = PySequence_List(b);
  if (!lb) {
    Py_DECREF(la);
    return NULL;
  }
  PyObject *r = PySequence_Concat(la, lb);
  Py_DECREF(la);
  Py_DECREF(lb);
  return r;
}

static PyObject *iter_new(PyObject *first, int kind);

static PyObject *list_iter(PyObject *lo) {
  TpList *l = (TpList *)lo;
  void *h = owner_h(l);
  if (l->length < 0 && (l->kind == TP_LIST_BLOCK_OPS || l->kind == TP_LIST_REGION_BLOCKS)) {
    void *first = NULL;
    int rc = l->kind == TP_LIST_BLOCK_OPS ? tether_block_first_op(h, (tether_op **)&first)
                                          : tether_region_first_block(h, (tether_block **)&first);
    if (rc != TETHER_OK) return TP_RAISE_RC(rc, h);
    PyObject *f = l->kind == TP_LIST_BLOCK_OPS ? tp_wrap_op(first) : tp_wrap_block(first);
    if (!f) return NULL;
    PyObject *it = iter_new(f, l->kind);
    Py_DECREF(f);
    return it;
  }
  return PySeqIter_New(lo);
}

/* region.blocks.append(*arg_types, arg_locs=None): a new block at the end of the region; or
 * region.blocks.append(block) with a detached Block: the block moves into the region. */
static PyObject *list_append(TpList *l, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  if (l->kind != TP_LIST_REGION_BLOCKS || l->length >= 0)
    return PyErr_Format(PyExc_TypeError, "only region.blocks supports append");
  void *rh = owner_h(l);
  MlirRegion rraw;
  int rc = tether_region_get(rh, &rraw);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, rh);
  if (nargs == 1 && tp_is(args[0], tp.Block)) {
    tether_block *bh;
    MlirBlock braw;
    if (!tp_arg_block(args[0], &bh, &braw)) return NULL;
    rc = tether_region_append_block(rh, bh);
    if (rc == TETHER_ESTATE)
      return PyErr_Format(PyExc_ValueError, "the block already belongs to a region");
    if (rc == TETHER_EARG)
      return PyErr_Format(PyExc_ValueError, "cannot append a block into a region inside itself");
    if (rc != TETHER_OK) return TP_RAISE_RC(rc, rh);
    return Py_NewRef(args[0]);
  }
  static const char *const names[] = {"arg_locs", NULL};
  PyObject *locs;
  if (!tp_fastargs_star("append", args, nargs, kwnames, names, &locs)) return NULL;
  PyObject *ctx = tp_context_of(tether_handle_arena(rh));
  if (!ctx) return NULL;
  PyObject *types = tp_tuple_of(args, nargs), *cur_locs = NULL, *cur;
  int ok = types != NULL;
  if (ok && (!locs || locs == Py_None) && nargs > 0 && (cur = tp_current_loc())) {
    /* As upstream: the arguments get the current location when there is one. */
    locs = cur_locs = PyList_New(nargs);
    for (Py_ssize_t i = 0; cur_locs && i < nargs; i++) PyList_SET_ITEM(cur_locs, i, Py_NewRef(cur));
    ok = cur_locs != NULL;
  }
  PyObject *b = ok ? new_block(ctx, types, locs) : NULL;
  Py_XDECREF(cur_locs);
  Py_XDECREF(types);
  Py_DECREF(ctx);
  if (!b) return NULL;
  rc = tether_region_append_block(rh, H(b));
  if (rc != TETHER_OK) {
    Py_DECREF(b);
    return TP_RAISE_RC(rc, rh);
  }
  return b;
}

static PyObject *list_types_get(TpList *l, void *c) {
  (void)c;
  Py_ssize_t n = list_len(l);
  if (n < 0) return NULL;
  PyObject *r = PyList_New(n);
  for (Py_ssize_t i = 0; r && i < n; i++) {
    PyObject *v = list_item(l, i);
    PyObject *t = v ? PyObject_GetAttrString(v, "type") : NULL;
    Py_XDECREF(v);
    if (!t)
      Py_CLEAR(r);
    else
      PyList_SET_ITEM(r, i, t);
  }
  return r;
}

static PyObject *list_owner(TpList *l, void *c) {
  (void)c;
  if (tp_is(l->owner, tp.OperationBase)) return tp_wrap_op(owner_h(l));
  return Py_NewRef(l->owner);
}

static PyMethodDef list_methods[] = {
    {"append", TP_FASTFN(list_append), TP_FAST,
     "region.blocks.append(*arg_types, arg_locs=None) or .append(detached_block)"},
    TP_METHODS_END,
};

static PyGetSetDef list_getset[] = {
    {"types", (getter)list_types_get, NULL, "The types of the values (value lists).", NULL},
    {"owner", (getter)list_owner, NULL, "The object the list belongs to.", NULL},
    TP_GETSET_END,
};

static PyType_Slot list_slots[] = {
    {Py_tp_dealloc, list_dealloc},
    {Py_tp_traverse, list_traverse},
    {Py_tp_clear, list_clear},
    {Py_sq_length, list_len},
    {Py_sq_item, list_item},
    {Py_mp_length, list_len},
    {Py_mp_subscript, list_subscript},
    {Py_mp_ass_subscript, list_ass},
    {Py_tp_iter, list_iter},
    {Py_tp_methods, list_methods},
    {Py_tp_getset, list_getset},
    {Py_nb_add, list_concat},
    {0, NULL},
};

PyType_Spec tp_list_spec = {"tether.ir._IRSequence", sizeof(TpList), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION |
                                Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
                            list_slots};

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
  void *h = it->kind == TP_LIST_BLOCK_OPS ? ((TpOp *)cur)->h : H(cur);
  void *nx = NULL;
  int rc = it->kind == TP_LIST_BLOCK_OPS ? tether_op_next(h, (tether_op **)&nx)
                                         : tether_block_next(h, (tether_block **)&nx);
  if (rc != TETHER_OK) {
    it->next = NULL;
    Py_DECREF(cur);
    return TP_RAISE_RC(rc, h);
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

PyType_Spec tp_iter_spec = {
    "tether.ir._IRIterator", sizeof(TpIter), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, iter_slots};

int tp_init_ir(PyObject *m) {
  if (tp_add_type(m, &tp_region_spec, NULL, &tp.Region) < 0 ||
      tp_add_type(m, &tp_block_spec, NULL, &tp.Block) < 0 ||
      tp_add_type(m, &tp_value_spec, NULL, &tp.Value) < 0 ||
      tp_add_type(m, &tp_opresult_spec, (PyObject *)tp.Value, &tp.OpResult) < 0 ||
      tp_add_type(m, &tp_blockarg_spec, (PyObject *)tp.Value, &tp.BlockArgument) < 0 ||
      tp_add_type(m, &operand_spec, NULL, &tp.OpOperand) < 0 ||
      tp_add_type(m, &tp_list_spec, NULL, &tp.List) < 0 ||
      tp_add_type(m, &tp_iter_spec, NULL, &tp.Iter) < 0)
    return -1;
  for (int k = 0; k < TP_LIST_KINDS; k++) {
    char name[64];
    snprintf(name, sizeof name, "tether.ir.%s", list_names[k]);
    PyType_Slot slots[] = {{0, NULL}};
    PyType_Spec spec = {name, sizeof(TpList), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
    if (tp_add_type(m, &spec, (PyObject *)tp.List, &list_types[k]) < 0) return -1;
  }
  return 0;
}
