/* insertion_point.c: InsertionPoint (upstream mlir.ir.InsertionPoint): where new operations go,
 * the end of a block or before an operation; `with ip:` makes it the current one.
 *
 * Invariant: an insertion point holds its block (and reference operation) objects; it checks them
 * through the arena at every use, so an erased block or operation raises InvalidatedError, and an
 * insertion at the end of a block that has a terminator is refused (IndexError, as upstream).
 */
#include "ir.h"

typedef struct {
  PyObject_HEAD PyObject *block; /* Block */
  PyObject *ref;                 /* the operation to insert before (an _OperationBase), or NULL */
} TpIP;

static PyObject *ip_make(PyTypeObject *type, PyObject *block, PyObject *ref) {
  TpIP *self = (TpIP *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->block = Py_NewRef(block);
  self->ref = Py_XNewRef(ref);
  return (PyObject *)self;
}

/* InsertionPoint(block) or InsertionPoint(beforeOperation), upstream's two constructors (the
 * keyword names which). */
/* InsertionPoint(block) | InsertionPoint(beforeOperation); the argument by position is either
 * (any_sig names it in messages). */
static tpy_sig ip_before_sig = TPY_SIG("InsertionPoint(beforeOperation: _OperationBase)", NULL);
static tpy_sig ip_new_sig = TPY_SIG_OR(
    "InsertionPoint(block: Block)",
    "Where new operations go: the end of a block, or before an operation.", &ip_before_sig);
static tpy_sig ip_any_sig =
    TPY_SIG("InsertionPoint(beforeOperation_or_block: Block | _OperationBase)", NULL);

static PyObject *ip_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  int by_op = kw && PyDict_GetItemString(kw, "beforeOperation") != NULL;
  int by_block = kw && PyDict_GetItemString(kw, "block") != NULL;
  PyObject *x;
  if (!tpy_args(by_op ? &ip_before_sig : by_block ? &ip_new_sig : &ip_any_sig, args, kw, &x, 1))
    return NULL;
  if (by_op && !tpy_is(x, tpy.OperationBase))
    return tpy_type_error("beforeOperation", "an operation", x);
  if (by_block && !tpy_is(x, tpy.Block)) return tpy_type_error("block", "a Block", x);
  if (tpy_is(x, tpy.Block)) {
    MlirBlock raw;
    tether_block *bh;
    if (!tpy_arg_block(x, &bh, &raw)) return NULL;
    return ip_make(type, x, NULL);
  }
  if (tpy_is(x, tpy.OperationBase)) {
    tether_op *h;
    MlirOperation raw;
    if (!tpy_arg_op(x, &h, &raw)) return NULL;
    tether_block *b;
    int rc = tether_op_block(h, &b);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h);
    if (!b) return PyErr_Format(PyExc_ValueError, "Operation has no parent block.");
    PyObject *bo = tpy_wrap_block(b);
    if (!bo) return NULL;
    PyObject *r = ip_make(type, bo, x);
    Py_DECREF(bo);
    return r;
  }
  return tpy_type_error("InsertionPoint argument", "a Block or an operation", x);
}

static int ip_traverse(TpIP *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->block);
  Py_VISIT(self->ref);
  return 0;
}

static int ip_clear(TpIP *self) {
  Py_CLEAR(self->block);
  Py_CLEAR(self->ref);
  return 0;
}

static PyObject *ip_at_block_begin(PyObject *cls, PyObject *block) {
  tether_block *bh;
  MlirBlock raw;
  if (!tpy_arg_block(block, &bh, &raw)) return NULL;
  tether_op *first;
  int rc = tether_block_first_op(bh, &first);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, bh);
  if (!first) return ip_make((PyTypeObject *)cls, block, NULL);
  PyObject *f = tpy_wrap_operation(first);
  if (!f) return NULL;
  PyObject *r = ip_make((PyTypeObject *)cls, block, f);
  Py_DECREF(f);
  return r;
}

static PyObject *ip_at_block_terminator(PyObject *cls, PyObject *block) {
  tether_block *bh;
  MlirBlock raw;
  if (!tpy_arg_block(block, &bh, &raw)) return NULL;
  tether_op *term;
  int rc = tether_block_terminator(bh, &term);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, bh);
  if (!term) return PyErr_Format(PyExc_ValueError, "Block has no terminator");
  PyObject *t = tpy_wrap_operation(term);
  if (!t) return NULL;
  PyObject *r = ip_make((PyTypeObject *)cls, block, t);
  Py_DECREF(t);
  return r;
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig ip_after_sig =
    TPY_SIG("after(operation: _OperationBase) -> InsertionPoint",
            "Inserts right after the operation (before the one that follows it now).");

/* InsertionPoint.after(operation): before the operation that follows it now, or at the end of its
 * block. */
static PyObject *ip_after(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  PyObject *operation;
  if (!tpy_fastargs(&ip_after_sig, args, nargs, kwnames, &operation, 1)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(operation, &h, &raw)) return NULL;
  tether_block *b;
  tether_op *next;
  TPY_CALL(tether_op_block(h, &b), h);
  if (!b) return PyErr_Format(PyExc_ValueError, "Operation has no parent block.");
  TPY_CALL(tether_op_next(h, &next), h);
  PyObject *bo = tpy_wrap_block(b);
  PyObject *no = bo && next ? tpy_wrap_operation(next) : NULL;
  PyObject *r = bo && (no || !next) ? ip_make((PyTypeObject *)cls, bo, no) : NULL;
  Py_XDECREF(bo);
  Py_XDECREF(no);
  return r;
}
#endif

int tpy_ip_target(PyObject *ipo, tether_block **block, tether_op **before) {
  TpIP *ip = (TpIP *)ipo;
  *before = NULL;
  if (ip->ref) {
    MlirBlock braw;
    MlirOperation rraw;
    return tpy_arg_block(ip->block, block, &braw) && tpy_arg_op(ip->ref, before, &rraw) ? 0 : -1;
  }
  /* At the end of the block (ip->block is a Block: checked when the InsertionPoint was made);
   * the terminator check also checks the block's handle. */
  *block = ((TpHandle *)ip->block)->h;
  bool term;
  int rc = tether_block_has_terminator(*block, &term);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, *block), -1;
  if (term) {
    PyErr_SetString(PyExc_IndexError,
                    "Cannot insert operation at the end of a block that already has a "
                    "terminator. Did you mean to use 'InsertionPoint.at_block_terminator(block)' "
                    "versus 'InsertionPoint(block)'?");
    return -1;
  }
  return 0;
}

int tpy_ip_insert(PyObject *ipo, tether_op *op) {
  bool root;
  int rc = tether_op_is_root(op, &root);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, op), -1;
  tether_block *parent;
  rc = tether_op_block(op, &parent);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, op), -1;
  if (parent || !root) {
    PyErr_SetString(PyExc_ValueError, "Attempt to insert operation that is already attached");
    return -1;
  }
  tether_block *bh;
  tether_op *ref;
  if (tpy_ip_target(ipo, &bh, &ref) < 0) return -1;
  rc = ref ? tether_op_move_before(op, ref) : tether_block_append_op(bh, op);
  if (rc == TETHER_EARG) {
    PyErr_SetString(PyExc_ValueError, "cannot insert an operation into itself");
    return -1;
  }
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, op), -1;
  return 0;
}

static PyObject *ip_insert(TpIP *self, PyObject *operation) {
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(operation, &h, &raw)) return NULL;
  if (tpy_ip_insert((PyObject *)self, h) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *ip_context_of(TpIP *self) {
  tether_block *bh;
  MlirBlock raw;
  if (!tpy_arg_block(self->block, &bh, &raw)) return NULL;
  return tpy_context_of(tether_handle_arena(bh));
}

static PyObject *ip_enter(TpIP *self, PyObject *unused) {
  (void)unused;
  PyObject *ctx = ip_context_of(self);
  if (!ctx) return NULL;
  int rc = tpy_current_push(TPY_FRAME_IP, ctx, (PyObject *)self, NULL);
  Py_DECREF(ctx);
  if (rc < 0) return NULL;
  return Py_NewRef(self);
}

static tpy_sig ip_exit_sig =
    TPY_SIG("__exit__(exc_type: object, exc_value: object, traceback: object) -> None", NULL);

/* __exit__(exc_type, exc_value, traceback), upstream 22's names (19's took them positionally). */
static PyObject *ip_exit(TpIP *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a[3];
  if (!tpy_fastargs(&ip_exit_sig, args, nargs, kwnames, a, 3)) return NULL;
  if (tpy_current_pop(TPY_FRAME_IP, (PyObject *)self, "InsertionPoint") < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *ip_current(PyObject *cls) {
  (void)cls;
  PyObject *ip = tpy_current_ip();
  if (!ip) return PyErr_Format(PyExc_ValueError, "No current InsertionPoint");
  return Py_NewRef(ip);
}

static PyObject *ip_block(TpIP *self, void *c) {
  (void)c;
  return Py_NewRef(self->block);
}

static PyObject *ip_ref(TpIP *self, void *c) {
  (void)c;
  if (!self->ref) Py_RETURN_NONE;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(self->ref, &h, &raw)) return NULL;
  return tpy_wrap_operation(h);
}

static PyMethodDef ip_methods[] = {
    {"at_block_begin", (PyCFunction)ip_at_block_begin, METH_O | METH_CLASS,
     TPY_SIGDOC("at_block_begin(block: Block, /) -> InsertionPoint",
                "Inserts before the block's first operation (at its end when empty).")},
    {"at_block_terminator", (PyCFunction)ip_at_block_terminator, METH_O | METH_CLASS,
     TPY_SIGDOC("at_block_terminator(block: Block, /) -> InsertionPoint",
                "Inserts before the block's terminator; ValueError without one.")},
#if TETHER_MLIR_VERSION >= 22
    {"after", TPY_FASTFN(ip_after), TPY_FAST | METH_CLASS, TPY_DOC(ip_after_sig)},
#endif
    {"insert", (PyCFunction)ip_insert, METH_O,
     TPY_SIGDOC("insert(operation: _OperationBase, /) -> None",
                "Inserts a detached operation here.")},
    {"__enter__", (PyCFunction)ip_enter, METH_NOARGS,
     TPY_SIGDOC("__enter__() -> InsertionPoint", NULL)},
    {"__exit__", TPY_FASTFN(ip_exit), TPY_FAST, TPY_DOC(ip_exit_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef ip_getset[] = {
    {"block", (getter)ip_block, NULL, TPY_PROP("Block", "The block operations are inserted into."),
     NULL},
    {"ref_operation", (getter)ip_ref, NULL,
     TPY_PROP("_OperationBase | None",
              "The operation new operations go before, or None (the end of the block)."),
     NULL},
    TPY_GETSET_END,
};

static PyType_Slot ip_slots[] = {
    {Py_tp_new, ip_new},
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, ip_traverse},
    {Py_tp_clear, ip_clear},
    {Py_tp_methods, ip_methods},
    {Py_tp_getset, ip_getset},
    {Py_tp_doc, TPY_DOC(ip_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_insertion_point_spec = {
    "tether.ir.InsertionPoint", sizeof(TpIP), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE, ip_slots};

int tpy_init_insertion_point(PyObject *m) {
  if (tpy_add_type(m, &tpy_insertion_point_spec, NULL, &tpy.InsertionPoint) < 0) return -1;
  return tpy_set_classprop(tpy.InsertionPoint, "current", ip_current);
}
