/* sequences.c: the sequences of IR (OpOperandList, OpResultList, RegionSequence, OpSuccessors,
 * OperationList, BlockArgumentList, BlockList: one base class _IRSequence, one subclass per kind,
 * with upstream's slicing and concatenation) and the iterator over a block's operations or a
 * region's blocks.
 *
 * Invariants: a sequence holds its owner's wrapper and reads the owner's list anew at every access
 * (it is a view: an erase shortens it, an invalid owner raises InvalidatedError); a slice is the
 * owner's list seen through (start, step, length), clipped by what is left of the list. The
 * iterator holds the next wrapper, not a position: Python code that runs between steps may change
 * the list without making it read a freed operation.
 */
#include "ir.h"

#if TETHER_MLIR_VERSION >= 22
/* A block's successors or predecessors, read from MLIR at each access (the arena keeps no list of
 * them): their number, and the i-th one's handle (NULL: a predecessor that is a branch in no
 * block). MLIR counts a block's successors from its last operation, and finds its predecessors by
 * walking the uses of the block. */
static int block_edges_len(void *h, int kind, intptr_t *n) {
  MlirBlock raw;
  int rc = tether_block_get(h, &raw);
  if (rc != TETHER_OK) return rc;
  *n = kind == TPY_LIST_BLOCK_SUCCESSORS ? mlirBlockGetNumSuccessors(raw)
                                         : mlirBlockGetNumPredecessors(raw);
  return TETHER_OK;
}

static int block_edge(void *h, int kind, intptr_t i, void **out) {
  /* The safe point first destroys what became unreachable (a predecessor may be in IR nothing
   * holds any more), so that the wrap below, whose own safe point then has nothing queued, never
   * meets a block that is being freed. */
  tether_arena *a = tether_handle_arena(h);
  if (a) tether_safepoint(a);
  intptr_t n;
  int rc = block_edges_len(h, kind, &n);
  if (rc != TETHER_OK) return rc;
  if (i < 0 || i >= n) return TETHER_ERANGE;
  MlirBlock raw;
  if ((rc = tether_block_get(h, &raw)) != TETHER_OK) return rc;
  MlirBlock b = kind == TPY_LIST_BLOCK_SUCCESSORS ? mlirBlockGetSuccessor(raw, i)
                                                  : mlirBlockGetPredecessor(raw, i);
  *out = NULL;
  return mlirBlockIsNull(b) ? TETHER_OK : tether_block_wrap(a, b, (tether_block **)out);
}
#endif

/* ---- the kinds of sequence --------------------------------------------------------------------
 * What each kind reads through the arena (its owner's length and i-th element) and how an element
 * is wrapped: one row per kind, no default. */

typedef struct {
  const char *name;                                           /* the class: tether.ir.<name> */
  int (*len)(void *owner, int kind, intptr_t *n);             /* the owner's whole list */
  int (*item)(void *owner, int kind, intptr_t i, void **out); /* TETHER_ERANGE past the end */
  PyObject *(*wrap)(void *h);
} list_kind;

#define LEN_OF(fn, T)                                                                              \
  static int len_##fn(void *h, int kind, intptr_t *n) {                                            \
    (void)kind;                                                                                    \
    return fn((T *)h, n);                                                                          \
  }
#define ITEM_OF(fn, T, E)                                                                          \
  static int item_##fn(void *h, int kind, intptr_t i, void **out) {                                \
    (void)kind;                                                                                    \
    return fn((T *)h, i, (E **)out);                                                               \
  }
LEN_OF(tether_op_num_operands, tether_op)
LEN_OF(tether_op_num_results, tether_op)
LEN_OF(tether_op_num_regions, tether_op)
LEN_OF(tether_op_num_successors, tether_op)
LEN_OF(tether_block_num_ops, tether_block)
LEN_OF(tether_block_num_args, tether_block)
LEN_OF(tether_region_num_blocks, tether_region)
ITEM_OF(tether_op_operand, tether_op, tether_value)
ITEM_OF(tether_op_result, tether_op, tether_value)
ITEM_OF(tether_op_region, tether_op, tether_region)
ITEM_OF(tether_op_successor, tether_op, tether_block)
ITEM_OF(tether_block_op, tether_block, tether_op)
ITEM_OF(tether_block_arg, tether_block, tether_value)
ITEM_OF(tether_region_block, tether_region, tether_block)

static PyObject *wrap_operand(void *h) { return tpy_wrap_operand(h); }
static PyObject *wrap_value(void *h) { return tpy_wrap_value(h); }
static PyObject *wrap_result(void *h) { return tpy_wrap_result(h); }
static PyObject *wrap_region(void *h) { return tpy_wrap_region(h); }
static PyObject *wrap_op(void *h) { return tpy_wrap_op(h); }
static PyObject *wrap_block(void *h) { return tpy_wrap_block(h); }

static const list_kind list_kinds[TPY_LIST_KINDS] = {
    [TPY_LIST_OPERANDS] = {"OpOperandList", len_tether_op_num_operands, item_tether_op_operand,
                           wrap_operand},
    [TPY_LIST_RESULTS] = {"OpResultList", len_tether_op_num_results, item_tether_op_result,
                          wrap_result},
    [TPY_LIST_REGIONS] = {"RegionSequence", len_tether_op_num_regions, item_tether_op_region,
                          wrap_region},
    [TPY_LIST_SUCCESSORS] = {"OpSuccessors", len_tether_op_num_successors, item_tether_op_successor,
                             wrap_block},
    [TPY_LIST_BLOCK_OPS] = {"OperationList", len_tether_block_num_ops, item_tether_block_op,
                            wrap_op},
    [TPY_LIST_BLOCK_ARGS] = {"BlockArgumentList", len_tether_block_num_args, item_tether_block_arg,
                             wrap_value},
    [TPY_LIST_REGION_BLOCKS] = {"BlockList", len_tether_region_num_blocks, item_tether_region_block,
                                wrap_block},
#if TETHER_MLIR_VERSION >= 22
    [TPY_LIST_BLOCK_SUCCESSORS] = {"BlockSuccessors", block_edges_len, block_edge, wrap_block},
    [TPY_LIST_BLOCK_PREDECESSORS] = {"BlockPredecessors", block_edges_len, block_edge, wrap_block},
#endif
};

/* The kinds whose lists are an operation's (owner NULL: they hold the operation's handle and no
 * Python object): their classes have no collector header (tpy_init_sequences). */
static int is_op_kind(int kind) {
  return kind == TPY_LIST_OPERANDS || kind == TPY_LIST_RESULTS || kind == TPY_LIST_REGIONS ||
         kind == TPY_LIST_SUCCESSORS;
}

static TpList *list_alloc(int kind) {
  PyTypeObject *t = tpy.sequence_types[kind];
  TpList *l = PyType_IS_GC(t) ? PyObject_GC_New(TpList, t) : PyObject_New(TpList, t);
  if (!l) return NULL;
  l->owner = NULL;
  l->op = NULL;
  l->pin = -1;
  l->kind = kind;
  l->start = 0;
  l->step = 1;
  l->length = -1;
  return l;
}

PyObject *tpy_new_list(PyObject *owner, int kind) {
  TpList *l = list_alloc(kind);
  if (!l) return NULL;
  l->owner = Py_NewRef(owner);
  PyObject_GC_Track(l);
  return (PyObject *)l;
}

/* An operation's list holds no Python object: its class has no collector header. */
PyObject *tpy_new_op_list(tether_op *h, int kind) {
  TpList *l = list_alloc(kind);
  if (!l) return NULL;
  if ((l->pin = tpy_hold(h)) < 0) {
    Py_DECREF(l);
    return PyErr_NoMemory();
  }
  l->op = h;
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
  if (l->op && l->pin >= 0) tpy_release(l->op);
  l->op = NULL;
  PyTypeObject *t = Py_TYPE(l);
  if (PyType_IS_GC(t)) {
    tpy_gc_dealloc((PyObject *)l);
    return;
  }
  Py_CLEAR(l->owner);
  t->tp_free(l);
  Py_DECREF(t);
}

static void *owner_h(TpList *l) { return l->op ? l->op : TPY_H(l->owner); }

/* Length of the owner's whole list. */
static Py_ssize_t full_len(TpList *l) {
  void *h = owner_h(l);
  intptr_t n = 0;
  int rc = list_kinds[l->kind].len(h, l->kind, &n);
  if (rc != TETHER_OK) {
    TPY_RAISE_RC(rc, h);
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
  const list_kind *k = &list_kinds[l->kind];
  void *out = NULL;
  int rc = k->item(h, l->kind, i, &out);
  if (rc == TETHER_ERANGE) return PyErr_Format(PyExc_IndexError, "index out of range");
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h);
  return k->wrap(out);
}

/* sq_item: a negative index was already adjusted by Python (list_subscript adjusts its own). */
static PyObject *list_item(TpList *l, Py_ssize_t i) {
  Py_ssize_t n = list_len(l);
  if (n < 0) return NULL;
  if (i < 0 || i >= n) return PyErr_Format(PyExc_IndexError, "index out of range");
  return full_item(l, l->length < 0 ? i : l->start + i * l->step);
}

static PyObject *list_subscript(TpList *l, PyObject *key) {
  /* list[i] of a whole list with i >= 0 (`.results[0]`): the element's own lookup checks the
   * range, no length first. */
  if (PyLong_CheckExact(key) && l->length < 0) {
    Py_ssize_t i = PyLong_AsSsize_t(key);
    if (i >= 0) return full_item(l, i);
    if (i == -1 && PyErr_Occurred()) PyErr_Clear(); /* the general path says what it is */
  }
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
    if (l->kind == TPY_LIST_BLOCK_OPS || l->kind == TPY_LIST_REGION_BLOCKS) {
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
    TpList *s =
        (TpList *)(l->op ? tpy_new_op_list(l->op, l->kind) : tpy_new_list(l->owner, l->kind));
    if (!s) return NULL;
    Py_ssize_t base = l->length < 0 ? 0 : l->start, bstep = l->length < 0 ? 1 : l->step;
    s->start = base + start * bstep;
    s->step = step * bstep;
    s->length = k;
    if (k == 0) s->start = 0;
    return (PyObject *)s;
  }
  return tpy_type_error("index", "an int or a slice", key);
}

static int list_ass(TpList *l, PyObject *key, PyObject *v) {
  if (l->kind != TPY_LIST_OPERANDS && l->kind != TPY_LIST_SUCCESSORS) {
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
  if (l->kind == TPY_LIST_SUCCESSORS) {
    tether_block *bh;
    MlirBlock braw;
    if (!tpy_arg_block(v, &bh, &braw)) return -1;
    MlirOperation op;
    int rc = tether_op_get(owner_h(l), &op);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, owner_h(l)), -1;
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
  if (!tpy_arg_value(v, &vh, &raw)) return -1;
  int rc = tether_op_set_operand(owner_h(l), i, vh);
  if (rc != TETHER_OK) {
    TPY_RAISE_RC(rc, owner_h(l));
    return -1;
  }
  return 0;
}

static PyObject *iter_new(PyObject *first, int kind);

PyObject *tpy_list_iter(PyObject *lo) {
  TpList *l = (TpList *)lo;
  void *h = owner_h(l);
  if (l->length < 0 && (l->kind == TPY_LIST_BLOCK_OPS || l->kind == TPY_LIST_REGION_BLOCKS)) {
    void *first = NULL;
    int rc = l->kind == TPY_LIST_BLOCK_OPS ? tether_block_first_op(h, (tether_op **)&first)
                                           : tether_region_first_block(h, (tether_block **)&first);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h);
    PyObject *f = l->kind == TPY_LIST_BLOCK_OPS ? tpy_wrap_op(first) : tpy_wrap_block(first);
    if (!f) return NULL;
    PyObject *it = iter_new(f, l->kind);
    Py_DECREF(f);
    return it;
  }
  return PySeqIter_New(lo);
}

static tpy_sig list_append_block_sig = TPY_SIG("append(block: Block, /) -> Block", NULL);
static tpy_sig list_append_sig =
    TPY_SIG_OR("append(*arg_types: Type, arg_locs: Sequence[Location] | None = None) -> Block",
               "region.blocks: a new block at the end of the region, or a detached block moved "
               "there.",
               &list_append_block_sig);

/* region.blocks.append(*arg_types, arg_locs=None): a new block at the end of the region; or
 * region.blocks.append(block) with a detached Block: the block moves into the region. */
static PyObject *list_append(TpList *l, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  if (l->kind != TPY_LIST_REGION_BLOCKS || l->length >= 0)
    return PyErr_Format(PyExc_TypeError, "only region.blocks supports append");
  void *rh = owner_h(l);
  MlirRegion rraw;
  int rc = tether_region_get(rh, &rraw);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, rh);
  if (nargs == 1 && tpy_is(args[0], tpy.Block)) {
    tether_block *bh;
    MlirBlock braw;
    if (!tpy_arg_block(args[0], &bh, &braw)) return NULL;
    rc = tether_region_append_block(rh, bh);
    if (rc == TETHER_ESTATE)
      return PyErr_Format(PyExc_ValueError, "the block already belongs to a region");
    if (rc == TETHER_EARG)
      return PyErr_Format(PyExc_ValueError, "cannot append a block into a region inside itself");
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, rh);
    return Py_NewRef(args[0]);
  }
  PyObject *locs;
  if (!tpy_fastargs_star(&list_append_sig, args, nargs, kwnames, &locs, 1)) return NULL;
  PyObject *ctx = tpy_context_of(tether_handle_arena(rh));
  if (!ctx) return NULL;
  PyObject *types = tpy_tuple_of(args, nargs), *cur_locs = NULL, *cur;
  int ok = types != NULL;
  if (ok && (!locs || locs == Py_None) && nargs > 0 && (cur = tpy_current_loc())) {
    /* As upstream: the arguments get the current location when there is one. */
    locs = cur_locs = PyList_New(nargs);
    for (Py_ssize_t i = 0; cur_locs && i < nargs; i++) PyList_SET_ITEM(cur_locs, i, Py_NewRef(cur));
    ok = cur_locs != NULL;
  }
  PyObject *b = ok ? tpy_append_new_block(rh, ctx, types, locs) : NULL;
  Py_XDECREF(cur_locs);
  Py_XDECREF(types);
  Py_DECREF(ctx);
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
  return l->op ? tpy_wrap_op(l->op) : Py_NewRef(l->owner);
}

static PyMethodDef list_methods[] = {
    {"append", TPY_FASTFN(list_append), TPY_FAST, TPY_DOC(list_append_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef list_getset[] = {
    {"types", (getter)list_types_get, NULL,
     TPY_PROP("list[Type]", "The types of the values (value lists)."), NULL},
    {"owner", (getter)list_owner, NULL, TPY_PROP("object", "The object the list belongs to."),
     NULL},
    TPY_GETSET_END,
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
    {Py_tp_iter, tpy_list_iter},
    {Py_tp_methods, list_methods},
    {Py_tp_getset, list_getset},
    {Py_nb_add, tpy_concat_as_lists},
    {0, NULL},
};

static PyType_Spec tpy_list_spec = {"tether.ir._IRSequence", sizeof(TpList), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION |
                                        Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
                                    list_slots};

static PyObject *iter_new(PyObject *first, int kind) {
  TpIter *it = PyObject_GC_New(TpIter, tpy.Iter);
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

static PyObject *iter_next(TpIter *it) {
  PyObject *cur = it->next;
  if (!cur) return NULL;
  void *h = it->kind == TPY_LIST_BLOCK_OPS ? ((TpOp *)cur)->h : TPY_H(cur);
  void *nx = NULL;
  int rc = it->kind == TPY_LIST_BLOCK_OPS ? tether_op_next(h, (tether_op **)&nx)
                                          : tether_block_next(h, (tether_block **)&nx);
  if (rc != TETHER_OK) {
    it->next = NULL;
    Py_DECREF(cur);
    return TPY_RAISE_RC(rc, h);
  }
  PyObject *n = NULL;
  if (nx) {
    n = it->kind == TPY_LIST_BLOCK_OPS ? tpy_wrap_op(nx) : tpy_wrap_block(nx);
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
    {Py_tp_dealloc, tpy_gc_dealloc}, {Py_tp_traverse, iter_traverse}, {Py_tp_clear, iter_clear},
    {Py_tp_iter, PyObject_SelfIter}, {Py_tp_iternext, iter_next},     {0, NULL},
};

static PyType_Spec tpy_iter_spec = {
    "tether.ir._IRIterator", sizeof(TpIter), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, iter_slots};

int tpy_init_sequences(PyObject *m) {
  if (tpy_add_type(m, &tpy_list_spec, NULL, &tpy.List) < 0 ||
      tpy_add_type(m, &tpy_iter_spec, NULL, &tpy.Iter) < 0)
    return -1;
  for (int k = 0; k < TPY_LIST_KINDS; k++) {
    char name[64];
    snprintf(name, sizeof name, "tether.ir.%s", list_kinds[k].name);
    PyType_Slot slots[] = {{0, NULL}};
    PyType_Spec spec = {name, sizeof(TpList), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
    if (tpy_add_type(m, &spec, (PyObject *)tpy.List, &tpy.sequence_types[k]) < 0) return -1;
    if (is_op_kind(k)) {
      /* An operation's list can be in no reference cycle (it holds no Python object): no
       * collector header, made and freed as a plain object (`.results[0]` makes one). The class
       * is final, so no subclass needs the header back. */
      PyTypeObject *t = tpy.sequence_types[k];
      t->tp_flags &= ~(unsigned long)Py_TPFLAGS_HAVE_GC;
      t->tp_free = PyObject_Free;
      t->tp_traverse = NULL;
      t->tp_clear = NULL;
    }
  }
  return 0;
}
