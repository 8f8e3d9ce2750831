/* block.c: Block (upstream mlir.ir.Block): its operations, arguments, owner and region; creating
 * blocks (detached, or next to others in a region), appending operations and moving blocks.
 *
 * Invariants: every method reaches the block through the arena's guarded access first, so an
 * invalid handle raises InvalidatedError before anything touches MLIR; arguments are converted
 * (TypeError) before any raw pointer is read. A block with arguments gets a location for each:
 * given, or the current one (as upstream), of the block's own context.
 */
#include "ir.h"

#include <mlir-c/BuiltinAttributes.h>

PyObject *tpy_wrap_block(tether_block *h) { return tpy_wrap_handle(tpy.Block, h); }

/* Argument types and locations of a new block (locations default to unknown). */
static int block_args(PyObject *types, PyObject *locs, PyObject *ctx, intptr_t *n, MlirType **ts,
                      MlirLocation **ls) {
  if (!tpy_seq_types(types, ctx, n, ts)) return 0;
  if (locs && locs != Py_None) {
    intptr_t nl;
    if (!tpy_seq_locs(locs, ctx, &nl, ls)) {
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
  MlirLocation cur = mlirLocationUnknownGet(tpy_ctx_raw(ctx));
  if (*n) {
    PyObject *lo = tpy_resolve_loc(Py_None);
    if (!lo || TPY_CTX(lo) != ctx) {
      if (lo) PyErr_SetString(PyExc_ValueError, "the current Location belongs to another context");
      PyMem_Free(*ts);
      PyMem_Free(*ls);
      return 0;
    }
    cur = (MlirLocation){TPY_PTR(lo)};
  }
  for (intptr_t i = 0; i < *n; i++) (*ls)[i] = cur;
  return 1;
}

/* A new detached block (new reference to its wrapper). */
PyObject *tpy_new_block(PyObject *ctx, PyObject *types, PyObject *locs) {
  intptr_t n;
  MlirType *ts;
  MlirLocation *ls;
  if (!block_args(types, locs, ctx, &n, &ts, &ls)) return NULL;
  tether_block *b;
  tether_arena *a = ((TpContext *)ctx)->arena;
  int rc = tether_block_create(a, n, ts, ls, &b);
  PyMem_Free(ts);
  PyMem_Free(ls);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, a);
  return tpy_wrap_block(b);
}

PyObject *tpy_append_new_block(tether_region *r, PyObject *ctx, PyObject *types, PyObject *locs) {
  intptr_t n;
  MlirType *ts;
  MlirLocation *ls;
  if (!block_args(types, locs, ctx, &n, &ts, &ls)) return NULL;
  tether_block *b;
  int rc = tether_region_append_new_block(r, n, ts, ls, &b);
  PyMem_Free(ts);
  PyMem_Free(ls);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, r);
  return tpy_wrap_block(b);
}

static tpy_sig block_new_sig =
    TPY_SIG("Block(arg_types: Sequence[Type] = (), context: Context | None = None, "
            "arg_locs: Sequence[Location] | None = None)",
            "A block. A new one is detached, owned by this object until it is appended to a "
            "region.");

static PyObject *block_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *a[3];
  if (!tpy_args(&block_new_sig, args, kw, a, 3)) return NULL;
  PyObject *types = a[0], *c = a[1] ? a[1] : Py_None, *locs = a[2] ? a[2] : Py_None;
  (void)type;
  PyObject *ctx = NULL;
  if (c == Py_None && types && PySequence_Check(types) && PySequence_Size(types) > 0) {
    PyObject *t0 = PySequence_GetItem(types, 0);
    MlirType raw;
    int ok = t0 && tpy_arg_type(t0, &raw, &ctx);
    Py_XDECREF(t0);
    if (!ok) return NULL;
  } else {
    ctx = (PyObject *)tpy_resolve_context(c);
    if (!ctx) return NULL;
  }
  PyObject *empty = PyTuple_New(0);
  if (!empty) return NULL;
  PyObject *r = tpy_new_block(ctx, types ? types : empty, locs);
  Py_DECREF(empty);
  return r;
}

static PyObject *block_list(PyObject *self, int kind) {
  TPY_CHECK(tether_block_get, self, MlirBlock);
  return tpy_new_list(self, kind);
}

static PyObject *block_operations(PyObject *self, void *c) {
  (void)c;
  return block_list(self, TPY_LIST_BLOCK_OPS);
}

static PyObject *block_arguments(PyObject *self, void *c) {
  (void)c;
  return block_list(self, TPY_LIST_BLOCK_ARGS);
}

#if TETHER_MLIR_VERSION >= 22
static PyObject *block_successors(PyObject *self, void *c) {
  (void)c;
  return block_list(self, TPY_LIST_BLOCK_SUCCESSORS);
}

static PyObject *block_predecessors(PyObject *self, void *c) {
  (void)c;
  return block_list(self, TPY_LIST_BLOCK_PREDECESSORS);
}
#endif

static PyObject *block_owner(PyObject *self, void *c) {
  (void)c;
  tether_op *p;
  TPY_CALL(tether_block_parent_op(TPY_H(self), &p), TPY_H(self));
  return tpy_wrap_op(p);
}

static PyObject *block_region(PyObject *self, void *c) {
  (void)c;
  tether_region *r;
  TPY_CALL(tether_block_parent(TPY_H(self), &r), TPY_H(self));
  return tpy_wrap_region(r);
}

static PyObject *block_context(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK(tether_block_get, self, MlirBlock);
  return tpy_context_of_handle(TPY_H(self));
}

static tpy_sig block_append_sig =
    TPY_SIG("append(operation: _OperationBase) -> None",
            "Appends an operation to the block (a detached one, or moves it here).");

static PyObject *block_append(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *op;
  if (!tpy_fastargs(&block_append_sig, args, nargs, kwnames, &op, 1)) return NULL;
  tether_op *oh;
  MlirOperation raw;
  if (!tpy_arg_op(op, &oh, &raw)) return NULL;
  TPY_SELF(tether_block_get, self, braw, MlirBlock);
  (void)braw;
  int rc = tether_block_append_op(TPY_H(self), oh);
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError, "cannot append an operation into a block inside itself");
  if (rc == TETHER_ESTATE) {
    /* As upstream: an attached operation moves to the end of this block. */
    intptr_t n;
    tether_op *last = NULL;
    rc = tether_block_num_ops(TPY_H(self), &n);
    if (rc == TETHER_OK && n > 0) rc = tether_block_op(TPY_H(self), n - 1, &last);
    if (rc == TETHER_OK && last == oh) Py_RETURN_NONE;
    if (rc == TETHER_OK) rc = last ? tether_op_move_after(oh, last) : tether_op_detach(oh);
    if (rc == TETHER_OK && !last) rc = tether_block_append_op(TPY_H(self), oh);
    if (rc == TETHER_EARG)
      return PyErr_Format(PyExc_ValueError,
                          "cannot append an operation into a block inside itself");
  }
  TPY_CALL(rc, TPY_H(self));
  Py_RETURN_NONE;
}

static tpy_sig block_add_argument_sig =
    TPY_SIG("add_argument(type: Type, loc: Location | None = None) -> BlockArgument",
            "A new argument; returns it.");

static PyObject *block_add_argument(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&block_add_argument_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *type = a[0], *loc = a[1] ? a[1] : Py_None;
  MlirType t;
  PyObject *ctx;
  if (!tpy_arg_type(type, &t, &ctx)) return NULL;
  MlirLocation l = mlirLocationUnknownGet(tpy_ctx_raw(ctx));
  if (loc != Py_None && !tpy_arg_loc_in(loc, ctx, &l)) return NULL;
  TPY_CHECK(tether_block_get, self, MlirBlock);
  if (((TpContext *)ctx)->arena != tether_handle_arena(TPY_H(self)))
    return PyErr_Format(PyExc_ValueError, "the type belongs to another context");
  tether_value *v;
  TPY_CALL(tether_block_add_arg(TPY_H(self), t, l, &v), TPY_H(self));
#if TETHER_MLIR_VERSION >= 22
  return tpy_wrap_handle(tpy.BlockArgument, v); /* the BlockArgument, as upstream 22's */
#else
  return tpy_wrap_operand(v); /* a Value, as upstream's (block.arguments[i] is the BlockArgument) */
#endif
}

static tpy_sig block_erase_argument_sig =
    TPY_SIG("erase_argument(index: int) -> None",
            "Erases argument `index` (ValueError while it has uses).");

static PyObject *block_erase_argument(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  PyObject *index;
  if (!tpy_fastargs(&block_erase_argument_sig, args, nargs, kwnames, &index, 1)) return NULL;
  intptr_t i;
  if (!tpy_arg_intptr(index, "index", &i)) return NULL;
  TPY_SELF(tether_block_get, self, raw, MlirBlock);
  intptr_t n = mlirBlockGetNumArguments(raw);
  if (i < 0 || i >= n) return PyErr_Format(PyExc_IndexError, "block argument index out of range");
  MlirValue arg = mlirBlockGetArgument(raw, i);
  if (!mlirOpOperandIsNull(mlirValueGetFirstUse(arg)))
    return PyErr_Format(PyExc_ValueError, "cannot erase a block argument that still has uses");
  mlirBlockEraseArgument(raw, (unsigned)i);
  TPY_CALL(tether_revalidate(TPY_H(self)), TPY_H(self));
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
static PyObject *block_create_near(tpy_sig *sig, PyObject *self, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames, int after) {
  PyObject *locs;
  if (!tpy_fastargs_star(sig, args, nargs, kwnames, &locs, 1)) return NULL;
  TPY_CHECK(tether_block_get, self, MlirBlock);
  tether_region *r;
  TPY_CALL(tether_block_parent(TPY_H(self), &r), TPY_H(self));
  if (!r) return PyErr_Format(PyExc_ValueError, "the block is not in a region");
  PyObject *ctx = tpy_context_of_handle(TPY_H(self));
  PyObject *types = ctx ? tpy_tuple_of(args, nargs) : NULL;
  PyObject *b = types ? tpy_new_block(ctx, types, locs) : NULL;
  Py_XDECREF(types);
  Py_XDECREF(ctx);
  if (!b) return NULL;
  intptr_t pos = block_index(r, TPY_H(self));
  int rc = pos < 0 ? TETHER_ESTATE : tether_region_insert_block(r, pos + (after ? 1 : 0), TPY_H(b));
  if (rc != TETHER_OK) {
    Py_DECREF(b);
    return TPY_RAISE_RC(rc, TPY_H(self));
  }
  return b;
}

static tpy_sig block_create_before_sig = TPY_SIG(
    "create_before(*arg_types: Type, arg_locs: Sequence[Location] | None = None) -> Block", NULL);

static PyObject *block_create_before(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  return block_create_near(&block_create_before_sig, self, args, nargs, kwnames, 0);
}

static tpy_sig block_create_after_sig = TPY_SIG(
    "create_after(*arg_types: Type, arg_locs: Sequence[Location] | None = None) -> Block", NULL);

static PyObject *block_create_after(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  return block_create_near(&block_create_after_sig, self, args, nargs, kwnames, 1);
}

static tpy_sig block_create_at_start_sig =
    TPY_SIG("create_at_start(parent: Region, arg_types: Sequence[Type] = [], arg_locs: "
            "Sequence[Location] | None = None) -> Block",
            "A new first block of the region.");

static PyObject *block_create_at_start(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&block_create_at_start_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *parent = a[0], *types = a[1], *locs = a[2] ? a[2] : Py_None;
  tether_region *rh;
  MlirRegion rraw;
  if (!tpy_arg_region(parent, &rh, &rraw)) return NULL;
  PyObject *ctx = tpy_context_of_handle(TPY_H(parent));
  if (!ctx) return NULL;
  PyObject *empty = PyTuple_New(0);
  PyObject *b = empty ? tpy_new_block(ctx, types ? types : empty, locs) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(ctx);
  if (!b) return NULL;
  int rc = tether_region_insert_block(rh, 0, TPY_H(b));
  if (rc != TETHER_OK) {
    Py_DECREF(b);
    return TPY_RAISE_RC(rc, rh);
  }
  return b;
}

static tpy_sig block_append_to_sig =
    TPY_SIG("append_to(region: Region) -> None",
            "Appends this block to a region (moving it out of its region, if any).");

static PyObject *block_append_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  PyObject *region;
  if (!tpy_fastargs(&block_append_to_sig, args, nargs, kwnames, &region, 1)) return NULL;
  tether_region *rh;
  MlirRegion rraw;
  if (!tpy_arg_region(region, &rh, &rraw)) return NULL;
  TPY_SELF(tether_block_get, self, raw, MlirBlock);
  /* A block in a region moves: detached first (upstream: "transferring ownership if
   * necessary"), unless the target region is inside the block itself. */
  if (!mlirRegionIsNull(mlirBlockGetParentRegion(raw))) {
    tether_op *owner = NULL;
    int orc = tether_region_parent(rh, &owner);
    if (orc != TETHER_OK) return TPY_RAISE_RC(orc, rh);
    MlirOperation oraw;
    if (owner && tether_op_get(owner, &oraw) == TETHER_OK) {
      for (MlirOperation x = oraw; !mlirOperationIsNull(x); x = mlirOperationGetParentOperation(x))
        if (mlirBlockEqual(mlirOperationGetBlock(x), raw))
          return PyErr_Format(PyExc_ValueError,
                              "cannot append a block into a region inside itself");
    }
    TPY_CALL(tether_block_detach(TPY_H(self)), TPY_H(self));
  }
  int rc = tether_region_append_block(rh, TPY_H(self));
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError, "cannot append a block into a region inside itself");
  TPY_CALL(rc, TPY_H(self));
  Py_RETURN_NONE;
}

static PyObject *block_iter(PyObject *self) {
  PyObject *l = block_operations(self, NULL);
  if (!l) return NULL;
  PyObject *it = tpy_list_iter(l);
  Py_DECREF(l);
  return it;
}

static PyObject *block_str(PyObject *self) {
  TPY_SELF(tether_block_get, self, raw, MlirBlock);
  /* MLIR verifies the enclosing IR before printing a block, and its verifier crashes on IR that
   * uses values of other IR; it has no way to print a block unverified. */
  if (tether_handle_has_foreign_uses(TPY_H(self)))
    return PyErr_Format(PyExc_ValueError,
                        "the IR this block is in uses values or blocks defined outside it (in a "
                        "detached operation, region or block): print the operation instead, or "
                        "insert that IR first");
  tpy_strbuf b = {0};
  mlirBlockPrint(raw, tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *block_capsule(PyObject *self, void *c) {
  (void)c;
  TPY_SELF(tether_block_get, self, raw, MlirBlock);
  tether_arena_touch(tether_handle_arena(TPY_H(self)));
  tpy_context_expose(tether_handle_arena(TPY_H(self)));
  return tpy_capsule_with_owner(raw.ptr, "mlir.ir.Block._CAPIPtr", self);
}

static PyMethodDef block_methods[] = {
    {"append", TPY_FASTFN(block_append), TPY_FAST, TPY_DOC(block_append_sig)},
    {"add_argument", TPY_FASTFN(block_add_argument), TPY_FAST, TPY_DOC(block_add_argument_sig)},
    {"erase_argument", TPY_FASTFN(block_erase_argument), TPY_FAST,
     TPY_DOC(block_erase_argument_sig)},
    {"create_before", TPY_FASTFN(block_create_before), TPY_FAST, TPY_DOC(block_create_before_sig)},
    {"create_after", TPY_FASTFN(block_create_after), TPY_FAST, TPY_DOC(block_create_after_sig)},
    {"create_at_start", TPY_FASTFN(block_create_at_start), TPY_FAST | METH_STATIC,
     TPY_DOC(block_create_at_start_sig)},
    {"append_to", TPY_FASTFN(block_append_to), TPY_FAST, TPY_DOC(block_append_to_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef block_getset[] = {
    {"operations", block_operations, NULL,
     TPY_PROP("OperationList", "The block's operations (OperationList)."), NULL},
    {"arguments", block_arguments, NULL,
     TPY_PROP("BlockArgumentList", "The block's arguments (BlockArgumentList)."), NULL},
    {"owner", block_owner, NULL,
     TPY_PROP("OpView | None", "The operation owning the block's region, or None."), NULL},
    {"region", block_region, NULL, TPY_PROP("Region | None", "The containing region, or None."),
     NULL},
#if TETHER_MLIR_VERSION >= 22
    {"successors", block_successors, NULL,
     TPY_PROP("BlockSuccessors", "The blocks its terminator branches to (BlockSuccessors)."), NULL},
    {"predecessors", block_predecessors, NULL,
     TPY_PROP("BlockPredecessors",
              "The blocks that branch to it (BlockPredecessors; None for a branch in no block)."),
     NULL},
#endif
    {"context", block_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"_CAPIPtr", block_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot block_slots[] = {
    {Py_tp_new, block_new},
    {Py_tp_dealloc, tpy_handle_dealloc},
    {Py_tp_str, block_str},
    {Py_tp_richcompare, tpy_handle_richcompare},
    {Py_tp_hash, tpy_handle_hash},
    {Py_tp_iter, block_iter},
    {Py_tp_methods, block_methods},
    {Py_tp_getset, block_getset},
    {Py_tp_doc, TPY_DOC(block_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_block_spec = {"tether.ir.Block", sizeof(TpHandle), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, block_slots};

int tpy_init_block(PyObject *m) { return tpy_add_type(m, &tpy_block_spec, NULL, &tpy.Block); }
