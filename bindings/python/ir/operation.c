/* operation.c: the wrappers of operations (Operation and OpView objects: TpOp), _OperationBase
 * (what both classes share) and Operation; the live-object counts of Context.
 *
 * Invariants:
 *  - One Operation object and one OpView per operation while they live: the handle's user pointer
 *    is the Operation object when one lives, else the OpView. An OpView made by navigation holds
 *    no Operation; once one exists, the OpView holds it strongly and the Operation points back
 *    (borrowed), so `op.operation is op.operation` and `op.operation.opview is op`. The pairs are
 *    a table of their own (below), not fields of every wrapper.
 *  - A paired OpView is never its handle's user pointer (its Operation is), and an Operation in
 *    the table is held by the OpView it names: neither is freed while the table names it.
 *  - Every method reaches MLIR through the arena's guarded access first: an invalid handle raises
 *    InvalidatedError before anything touches MLIR.
 *  - Python code (casters, __del__, properties) never runs between reading a raw MLIR pointer and
 *    using it: arguments are converted first, raw pointers read after.
 *
 * Which class an operation's OpView has is opview.c's; printing is printing.c's, op.attributes
 * attrmap.c's, Operation.create create.c's.
 */
#include "ir.h"

#include <string.h>

/* ---- live operation objects (Context._get_live_operation_count & co.) --------------------------
 * The handle's user pointer is the live object of an operation (its Operation object, else its
 * OpView): the arena's operation handles with a user pointer are the live operations. */

static int is_view(TpOp *o) { return tpy_is((PyObject *)o, tpy.OpView); }

typedef struct {
  tether_op **v;
  size_t n, cap; /* cap 0: counting only */
} handle_snap;

static void snap_handle(void *h, void *user, void *ud) {
  (void)user;
  handle_snap *s = ud;
  if (s->n < s->cap) s->v[s->n] = h;
  s->n++;
}

/* The operation handles of arena a that have a live object, into s (malloc'd; free s->v). Each is
 * kept alive by that object until Python code runs. 0, or -1 with MemoryError. */
static int live_handles(tether_arena *a, handle_snap *s) {
  s->v = NULL;
  s->n = s->cap = 0;
  tether_arena_foreach_user(a, TETHER_KIND_OP, snap_handle, s);
  if (!s->n) return 0;
  size_t n = s->n;
  if (!(s->v = PyMem_Malloc(n * sizeof *s->v))) {
    PyErr_NoMemory();
    return -1;
  }
  s->cap = n;
  s->n = 0;
  tether_arena_foreach_user(a, TETHER_KIND_OP, snap_handle, s);
  if (s->n > n) s->n = n;
  return 0;
}

/* The operations of arena a with a live object; their Operation objects appended to append_to
 * when given. -1 with an exception. */
Py_ssize_t tpy_live_operations(tether_arena *a, PyObject *append_to) {
  handle_snap s;
  if (live_handles(a, &s) < 0) return -1;
  Py_ssize_t n = (Py_ssize_t)s.n;
  PyObject **objs = NULL;
  if (append_to && s.n) {
    /* The objects first (references, no Python code), then the Operation objects: making them
     * may run a collection that frees other objects and their handles. */
    if (!(objs = PyMem_Malloc(s.n * sizeof *objs))) {
      PyMem_Free(s.v);
      PyErr_NoMemory();
      return -1;
    }
    for (size_t i = 0; i < s.n; i++)
      objs[i] = Py_NewRef((PyObject *)tether_handle_get_user(s.v[i]));
    for (size_t i = 0; i < s.n && n >= 0; i++) {
      PyObject *x = tpy_wrap_operation(TPY_OP(objs[i])->h);
      if (!x || PyList_Append(append_to, x) < 0) n = -1;
      Py_XDECREF(x);
    }
    for (size_t i = 0; i < s.n; i++) Py_DECREF(objs[i]);
    PyMem_Free(objs);
  }
  PyMem_Free(s.v);
  return n;
}

/* Whether op is strictly inside `inside` (both valid). */
static int is_inside(tether_op *op, tether_op *inside) {
  MlirOperation raw, in;
  if (tether_op_get(op, &raw) != TETHER_OK) return 0;
  if (tether_op_get(inside, &in) != TETHER_OK) return 0;
  if (mlirOperationEqual(raw, in)) return 0;
  MlirOperation p = mlirOperationGetParentOperation(raw);
  while (!mlirOperationIsNull(p) && !mlirOperationEqual(p, in))
    p = mlirOperationGetParentOperation(p);
  return !mlirOperationIsNull(p);
}

/* Forgets the identity of live operation objects of arena a (inside `inside` only, when given):
 * they stay valid, but navigation makes new objects. Returns how many, or -1 with an exception. */
Py_ssize_t tpy_clear_live_operations(tether_arena *a, tether_op *inside) {
  handle_snap s;
  if (live_handles(a, &s) < 0) return -1;
  Py_ssize_t n = 0;
  for (size_t i = 0; i < s.n; i++) { /* no Python code runs here: every handle stays alive */
    if (inside && !is_inside(s.v[i], inside)) continue;
    tether_handle_set_user(s.v[i], NULL);
    n++;
  }
  PyMem_Free(s.v);
  return n;
}

/* ---- Operation + OpView pairs ------------------------------------------------------------------
 * An open-addressing table (linear probing, deletion by backward shift, at most half full) from
 * wrapper to wrapper: view -> its Operation, Operation -> its latest view. Keys are live objects,
 * so no two entries share one. Empty in most programs: every lookup first asks pairs_n. */
typedef struct {
  TpOp *key, *val;
} pair_slot;
static pair_slot *pairs;
static size_t pairs_cap, pairs_n; /* cap: 0 or a power of two */

static size_t pair_home(const TpOp *k) {
  return (size_t)(((uintptr_t)k >> 4) * (uintptr_t)0x9E3779B97F4A7C15ull) & (pairs_cap - 1);
}

static TpOp *pair_get(const TpOp *k) {
  if (!pairs_n) return NULL;
  for (size_t i = pair_home(k);; i = (i + 1) & (pairs_cap - 1)) {
    if (pairs[i].key == k) return pairs[i].val;
    if (!pairs[i].key) return NULL;
  }
}

/* Room is reserved (tpy_op_pair_reserve): cannot fail. */
static void pair_put(TpOp *k, TpOp *v) {
  size_t i = pair_home(k);
  while (pairs[i].key && pairs[i].key != k) i = (i + 1) & (pairs_cap - 1);
  if (!pairs[i].key) pairs_n++;
  pairs[i].key = k;
  pairs[i].val = v;
}

/* Removes k's entry; its value, or NULL when k had none. */
static TpOp *pair_take(const TpOp *k) {
  if (!pairs_n) return NULL;
  size_t mask = pairs_cap - 1, i = pair_home(k);
  while (pairs[i].key != k) {
    if (!pairs[i].key) return NULL;
    i = (i + 1) & mask;
  }
  TpOp *v = pairs[i].val;
  pairs_n--;
  /* Backward shift: an entry after the hole moves into it unless its home lies cyclically in
   * (hole, its slot]. */
  for (size_t j = (i + 1) & mask; pairs[j].key; j = (j + 1) & mask) {
    size_t home = pair_home(pairs[j].key);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      pairs[i] = pairs[j];
      i = j;
    }
  }
  pairs[i].key = pairs[i].val = NULL;
  return v;
}

int tpy_op_pair_reserve(void) {
  if ((pairs_n + 2) * 2 <= pairs_cap) return 0;
  size_t cap = pairs_cap ? pairs_cap * 2 : 16;
  pair_slot *old = pairs, *fresh = PyMem_Calloc(cap, sizeof *fresh);
  if (!fresh) {
    PyErr_NoMemory();
    return -1;
  }
  size_t old_cap = pairs_cap;
  pairs = fresh;
  pairs_cap = cap;
  pairs_n = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key) pair_put(old[i].key, old[i].val);
  PyMem_Free(old);
  return 0;
}

void tpy_op_pair(TpOp *view, TpOp *op) {
  pair_put(view, op);
  pair_put(op, view);
}

TpOp *tpy_op_unpair_view(TpOp *view) {
  TpOp *op = pair_take(view);
  if (op && pair_get(op) == view) pair_take(op);
  return op;
}

static TpOp *op_alloc(PyTypeObject *type, tether_op *h) {
  TpOp *self = (TpOp *)tpy_obj_alloc(type);
  if (!self) return NULL;
  /* A Python op class without an instance dict (the generated ones: __slots__ = ()) holds no
   * reference the cyclic collector could follow: untracked, it is not scanned at every gen-0
   * collection (the wrappers of a walk would otherwise be). */
  if (PyType_IS_GC(type) && type->tp_dictoffset == 0 && type != tpy.OpView)
    PyObject_GC_UnTrack(self);
  self->pin = tpy_hold(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    PyErr_NoMemory();
    return NULL;
  }
  self->h = h;
  return self;
}

PyObject *tpy_wrap_operation(tether_op *h) {
  if (!h) Py_RETURN_NONE;
  TpOp *o = tether_handle_get_user(h);
  if (o && !is_view(o)) return Py_NewRef(o);
  /* (Operation has no collector header: making one runs no Python code.) */
  TpOp *op = op_alloc(tpy.Operation, h);
  if (!op) return NULL;
  if (o && tpy_op_pair_reserve() < 0) {
    Py_DECREF(op);
    return NULL;
  }
  if (o) /* an OpView without an Operation: pair them */
    tpy_op_pair(o, (TpOp *)Py_NewRef(op));
  tether_handle_set_user(h, op);
  return (PyObject *)op;
}

PyObject *tpy_wrap_op(tether_op *h) {
  if (!h) Py_RETURN_NONE;
  TpOp *o = tether_handle_get_user(h);
  if (o && is_view(o)) return Py_NewRef(o);
  TpOp *paired = o ? pair_get(o) : NULL;
  if (paired) return Py_NewRef(paired);
  MlirOperation raw;
  int rc = tether_op_get(h, &raw);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h);
  /* Choosing the class may run Python code (the dialect's module loads): raw is not read after
   * it. A handle erased meanwhile gets its view all the same, which raises InvalidatedError at
   * every use. */
  PyObject *cls = Py_NewRef(tpy_op_view_class(raw));
  if (tether_handle_get_user(h) != o) { /* a dialect import made one */
    Py_DECREF(cls);
    return tpy_wrap_op(h);
  }
  /* Allocating a view of a class with the collector's header may run a collection, and __del__
   * methods: o and the class are held over it, and the handle's wrappers looked at again after. */
  Py_XINCREF(o);
  TpOp *v = op_alloc((PyTypeObject *)cls, h);
  Py_DECREF(cls);
  if (v && tether_handle_get_user(h) != o) {
    Py_DECREF(v);
    Py_XDECREF(o);
    return tpy_wrap_op(h);
  }
  if (!v || (o && tpy_op_pair_reserve() < 0)) {
    Py_XDECREF(v);
    Py_XDECREF(o);
    return NULL;
  }
  if (o)
    tpy_op_pair(v, o); /* the reference taken above */
  else
    tether_handle_set_user(h, v);
  return (PyObject *)v;
}

void tpy_op_dealloc(TpOp *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (PyType_IS_GC(t)) PyObject_GC_UnTrack(self);
  if (self->h) {
    if (is_view(self))
      Py_XDECREF(tpy_op_unpair_view(self));
    else
      pair_take(self); /* none: an Operation in the table is held by the view it names */
    if (tether_handle_get_user(self->h) == self) tether_handle_set_user(self->h, NULL);
    if (self->pin >= 0) tpy_release(self->h);
    self->h = NULL;
  }
  tpy_obj_free((PyObject *)self);
  Py_DECREF(t);
}

int tpy_arg_op(PyObject *o, tether_op **h, MlirOperation *raw) {
  if (tpy_is(o, tpy.OperationBase) || tpy_is(o, tpy.Module)) {
    tether_op *x = TPY_OP(o)->h;
    if (!x) {
      PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");
      return 0;
    }
    int rc = tether_op_get(x, raw);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, x), 0;
    *h = x;
    return 1;
  }
  return tpy_type_error("argument", "an Operation", o), 0;
}

/* ---- _OperationBase -------------------------------------------------------------------------- */

/* Operation names repeat: a direct-mapped cache from the name's identifier (unique per name in a
 * context) to its str. The strong references are bounded by the cache size. */
enum { NAME_CACHE = 512 };
static struct {
  const void *id;
  PyObject *str;
  size_t len; /* the text of str, compared on a hit */
  char text[48];
} name_cache[NAME_CACHE];

PyObject *tpy_op_name_str(MlirOperation raw) {
  MlirIdentifier id = mlirOperationGetName(raw);
  MlirStringRef s = mlirIdentifierStr(id);
  size_t slot = ((uintptr_t)id.ptr >> 4) % NAME_CACHE;
  /* An identifier of a destroyed context may be reused by another one for another name: so a hit
   * also compares the text. */
  if (name_cache[slot].id == id.ptr && name_cache[slot].len == s.length &&
      !memcmp(name_cache[slot].text, s.data, s.length))
    return Py_NewRef(name_cache[slot].str);
  PyObject *str = PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
  if (!str) return NULL;
  if (s.length > sizeof name_cache[slot].text) return str; /* not kept */
  Py_XSETREF(name_cache[slot].str, Py_NewRef(str));
  name_cache[slot].id = id.ptr;
  name_cache[slot].len = s.length;
  memcpy(name_cache[slot].text, s.data, s.length);
  return str;
}

static PyObject *op_name(PyObject *self, void *c) {
  (void)c;
  TPY_SELF_OP(self, raw);
  return tpy_op_name_str(raw);
}

static PyObject *op_list(PyObject *self, int kind) {
  TPY_CHECK_OP(self);
  return tpy_new_op_list(TPY_OP(self)->h, kind);
}

static PyObject *op_operands(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TPY_LIST_OPERANDS);
}
static PyObject *op_results(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TPY_LIST_RESULTS);
}
static PyObject *op_regions(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TPY_LIST_REGIONS);
}
PyObject *tpy_op_successors(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TPY_LIST_SUCCESSORS);
}

static PyObject *op_result(PyObject *self, void *c) {
  (void)c;
  TPY_SELF_OP(self, raw);
  intptr_t n = mlirOperationGetNumResults(raw);
  if (n != 1) {
    PyObject *nm = tpy_op_name_str(raw);
    if (nm)
      PyErr_Format(PyExc_ValueError,
                   "Cannot call .result on operation %U which has %zd results (it is only valid "
                   "for operations with a single result)",
                   nm, (Py_ssize_t)n);
    Py_XDECREF(nm);
    return NULL;
  }
  tether_value *v;
  TPY_CALL(tether_op_result(TPY_OP(self)->h, 0, &v), TPY_OP(self)->h);
  return tpy_wrap_result(v);
}

static PyObject *op_parent(PyObject *self, void *c) {
  (void)c;
  tether_op *p;
  TPY_CALL(tether_op_parent(TPY_OP(self)->h, &p), TPY_OP(self)->h);
  if (!p) {
    /* As upstream: an operation in no block (Operation.create without an insertion point, a
     * detached or parsed operation) has no parent to ask for; a module's operation has None. */
    bool root;
    MlirOperation raw;
    if (tether_op_is_root(TPY_OP(self)->h, &root) == TETHER_OK && root &&
        tether_op_get(TPY_OP(self)->h, &raw) == TETHER_OK) {
      MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(raw));
      if (!(n.length == 14 && !memcmp(n.data, "builtin.module", 14)))
        return PyErr_Format(PyExc_ValueError, "Detached operations have no parent");
    }
  }
  return tpy_wrap_operation(p);
}

static PyObject *op_block(PyObject *self, void *c) {
  (void)c;
  tether_block *b;
  TPY_CALL(tether_op_block(TPY_OP(self)->h, &b), TPY_OP(self)->h);
  return tpy_wrap_block(b);
}

static PyObject *op_location(PyObject *self, void *c) {
  (void)c;
  TPY_SELF_OP(self, raw);
  return tpy_wrap_loc_a(tether_handle_arena(TPY_OP(self)->h), mlirOperationGetLocation(raw));
}

static PyObject *op_context(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK_OP(self);
  return tpy_context_of_handle(TPY_OP(self)->h);
}

static PyObject *op_is_valid(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(TPY_OP(self)->h && tether_handle_is_valid(TPY_OP(self)->h));
}

static PyObject *op_capsule(PyObject *self, void *c) {
  (void)c;
  TPY_SELF_OP(self, raw);
  /* Raw access may change the IR behind tether's back: nothing is known to verify any more. */
  tether_arena_touch(tether_handle_arena(TPY_OP(self)->h));
  tpy_context_expose(tether_handle_arena(TPY_OP(self)->h));
  PyObject *owner = tpy_wrap_operation(TPY_OP(self)->h);
  if (!owner) return NULL;
  PyObject *cap = tpy_capsule_with_owner(raw.ptr, "mlir.ir.Operation._CAPIPtr", owner);
  Py_DECREF(owner);
  return cap;
}

static PyObject *op_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  int eq = tpy_is(b, tpy.OperationBase) && TPY_OP(a)->h && TPY_OP(a)->h == TPY_OP(b)->h;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t op_hash(PyObject *a) { return _Py_HashPointer(TPY_OP(a)->h); }

int tpy_require_verified(tether_op *h) {
  PyObject *ctx = tpy_context_of_handle(h);
  if (!ctx) return 0;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  int rc = tether_op_verify(h);
  if (rc == TETHER_EVERIFY) {
    tpy_errcap_raise(&cap, "Verification failed");
    Py_DECREF(ctx);
    return 0;
  }
  tpy_errcap_close(&cap);
  Py_DECREF(ctx);
  if (rc != TETHER_OK) {
    TPY_RAISE_RC(rc, h);
    return 0;
  }
  return 1;
}

static PyObject *op_verify(PyObject *self, PyObject *unused) {
  (void)unused;
  TPY_CHECK_OP(self);
  PyObject *ctx = tpy_context_of_handle(TPY_OP(self)->h);
  if (!ctx) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  int rc = tether_op_verify(TPY_OP(self)->h);
  if (rc == TETHER_EVERIFY) {
    tpy_errcap_raise(&cap, "Verification failed");
    Py_DECREF(ctx);
    return NULL;
  }
  tpy_errcap_close(&cap);
  Py_DECREF(ctx);
  TPY_CALL(rc, TPY_OP(self)->h);
  Py_RETURN_TRUE;
}

static PyObject *op_erase(PyObject *self, PyObject *unused) {
  (void)unused;
  TPY_CHECK_OP(self);
  TPY_CALL(tether_op_erase(TPY_OP(self)->h), TPY_OP(self)->h);
  Py_RETURN_NONE;
}

static PyObject *op_detach(PyObject *self, PyObject *unused) {
  (void)unused;
  TPY_CHECK_OP(self);
  bool root;
  TPY_CALL(tether_op_is_root(TPY_OP(self)->h, &root), TPY_OP(self)->h);
  if (root) return PyErr_Format(PyExc_ValueError, "Detached operation has no parent.");
  TPY_CALL(tether_op_detach(TPY_OP(self)->h), TPY_OP(self)->h);
  return tpy_wrap_op(TPY_OP(self)->h);
}

static PyObject *op_move(PyObject *self, PyObject *other, int after) {
  tether_op *oh;
  MlirOperation oraw;
  TPY_CHECK_OP(self);
  if (!tpy_arg_op(other, &oh, &oraw)) return NULL;
  if (oh == TPY_OP(self)->h) Py_RETURN_NONE; /* next to itself: nothing moves, as upstream's */
  int rc = after ? tether_op_move_after(TPY_OP(self)->h, oh)
                 : tether_op_move_before(TPY_OP(self)->h, oh);
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError, "cannot move an operation into itself");
  if (rc == TETHER_ESTATE)
    return PyErr_Format(PyExc_ValueError, "the reference operation is not in a block");
  TPY_CALL(rc, TPY_OP(self)->h);
  Py_RETURN_NONE;
}

static PyObject *op_move_before(PyObject *self, PyObject *o) { return op_move(self, o, 0); }
static PyObject *op_move_after(PyObject *self, PyObject *o) { return op_move(self, o, 1); }

/* ip: an InsertionPoint, None (the current one, if any) or False (do not insert). */
static int maybe_insert(tether_op *op, PyObject *ip) {
  if (ip == Py_False) return 0;
  if (!ip || ip == Py_None)
    ip = tpy_current_ip();
  else if (!tpy_is(ip, tpy.InsertionPoint))
    return tpy_type_error("ip", "an InsertionPoint", ip), -1;
  if (!ip) return 0;
  return tpy_ip_insert(ip, op);
}

static tpy_sig op_clone_sig =
    TPY_SIG("clone(ip: InsertionPoint | None = None) -> OpView", "A copy, inserted at ip.");

static PyObject *op_clone(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  PyObject *a[1];
  if (!tpy_fastargs(&op_clone_sig, args, nargs, kwnames, a, 1)) return NULL;
  TPY_CHECK_OP(self);
  tether_op *c;
  TPY_CALL(tether_op_clone(TPY_OP(self)->h, &c), TPY_OP(self)->h);
  PyObject *r = tpy_wrap_op(c);
  if (r && maybe_insert(c, a[0]) < 0) Py_CLEAR(r);
  return r;
}

/* walk(callback, walk_order=POST_ORDER): callback(Operation) -> WalkResult (None: ADVANCE). */
typedef struct {
  PyObject *callback;
  int failed;
  tether_op *skip; /* pre-order: the subtree the callback asked to skip (a handle on the stack:
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
  PyObject *o = tpy_wrap_operation(op);
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

static tpy_sig op_walk_sig = TPY_SIG("walk(callback: Callable[[Operation], WalkResult | None], "
                                     "walk_order: WalkOrder = WalkOrder.POST_ORDER) -> None",
                                     "callback(Operation) -> WalkResult.");

static PyObject *op_walk(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&op_walk_sig, args, nargs, kwnames, a, 2)) return NULL;
  if (!PyCallable_Check(a[0])) return tpy_type_error("callback", "callable", a[0]);
  long order = 1; /* upstream's default is POST_ORDER */
  if (a[1]) {
    order = PyLong_AsLong(a[1]);
    if (order == -1 && PyErr_Occurred()) return NULL;
    if (order != 0 && order != 1) return PyErr_Format(PyExc_ValueError, "invalid walk_order");
  }
  TPY_CHECK_OP(self);
  walk_ctx w = {a[0], 0, NULL};
  int rc = tether_op_walk(TPY_OP(self)->h, order ? TETHER_WALK_POST_ORDER : TETHER_WALK_PRE_ORDER,
                          walk_cb, &w);
  if (w.failed) {
    tpy_raise_callback_error();
    return NULL;
  }
  if (rc < 0) return TPY_RAISE_RC(rc, TPY_OP(self)->h);
  Py_RETURN_NONE;
}

#if TETHER_MLIR_VERSION >= 22
/* ---- what MLIR 22 adds to _OperationBase ----------------------------------------------------- */

static PyObject *op_attached(PyObject *self, void *c) {
  (void)c;
  TPY_SELF_OP(self, raw);
  return PyBool_FromLong(!mlirBlockIsNull(mlirOperationGetBlock(raw)));
}

static int op_set_location(PyObject *self, PyObject *value, void *c) {
  (void)c;
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "the location of an operation cannot be deleted");
    return -1;
  }
  MlirLocation loc;
  PyObject *lctx;
  if (!tpy_arg_loc(value, &loc, &lctx)) return -1;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(self, &h, &raw)) return -1;
  if (((TpContext *)lctx)->arena != tether_handle_arena(h)) {
    PyErr_SetString(PyExc_ValueError, "the location belongs to another context");
    return -1;
  }
  mlirOperationSetLocation(raw, loc);
  return 0;
}

static tpy_sig op_is_before_in_block_sig =
    TPY_SIG("is_before_in_block(other: _OperationBase) -> bool",
            "Whether this operation comes before `other` in their block (ValueError when they are "
            "not in the same block).");

/* is_before_in_block(other): MLIR leaves operations of different blocks undefined (it reads the
 * order of one block only): ValueError. */
static PyObject *op_is_before_in_block(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  PyObject *other;
  if (!tpy_fastargs(&op_is_before_in_block_sig, args, nargs, kwnames, &other, 1)) return NULL;
  tether_op *oh;
  MlirOperation oraw;
  if (!tpy_arg_op(other, &oh, &oraw)) return NULL;
  TPY_SELF_OP(self, raw);
  MlirBlock b = mlirOperationGetBlock(raw);
  if (mlirBlockIsNull(b) || !mlirBlockEqual(b, mlirOperationGetBlock(oraw)))
    return PyErr_Format(PyExc_ValueError,
                        "is_before_in_block: the operations are not in the same block");
  return PyBool_FromLong(mlirOperationIsBeforeInBlock(raw, oraw));
}

static tpy_sig op_replace_uses_of_with_sig =
    TPY_SIG("replace_uses_of_with(of: Value, with_: Value) -> None",
            "Replaces `of` with `with_` among this operation's operands.");

/* replace_uses_of_with(of, with_): in this operation's own operands. */
static PyObject *op_replace_uses_of_with(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&op_replace_uses_of_with_sig, args, nargs, kwnames, a, 2)) return NULL;
  tether_value *of, *with;
  MlirValue raw_of, raw_with;
  if (!tpy_arg_value(a[0], &of, &raw_of) || !tpy_arg_value(a[1], &with, &raw_with)) return NULL;
  TPY_CHECK_OP(self);
  int rc = tether_op_replace_uses_of(TPY_OP(self)->h, of, with);
  if (rc == TETHER_EINVALID) /* which one: the value that is invalid says why */
    return TPY_RAISE_RC(rc, tether_handle_is_valid(of) ? with : of);
  TPY_CALL(rc, TPY_OP(self)->h);
  Py_RETURN_NONE;
}

/* _set_invalid(): upstream 22 asks its users to invalidate by hand the objects of operations a
 * change erased. tether invalidates every one of them itself (they raise InvalidatedError), so
 * there is nothing to do: the operation and its object stay as they are. */
static PyObject *op_set_invalid(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  Py_RETURN_NONE;
}
#endif

static PyMethodDef opbase_methods[] = {
#if TETHER_MLIR_VERSION >= 22
    {"get_asm", TPY_FASTFN(tpy_op_get_asm), TPY_FAST, TPY_DOC(tpy_op_get_asm_sig)},
    {"print", TPY_FASTFN(tpy_op_print), TPY_FAST, TPY_DOC(tpy_op_print_sig)},
    {"is_before_in_block", TPY_FASTFN(op_is_before_in_block), TPY_FAST,
     TPY_DOC(op_is_before_in_block_sig)},
    {"replace_uses_of_with", TPY_FASTFN(op_replace_uses_of_with), TPY_FAST,
     TPY_DOC(op_replace_uses_of_with_sig)},
    {"_set_invalid", (PyCFunction)op_set_invalid, METH_NOARGS,
     TPY_SIGDOC("_set_invalid() -> None",
                "Accepted for upstream 22's programs; does nothing (tether invalidates the objects "
                "of erased operations itself).")},
#else
    {"get_asm", TPY_FASTFN(tpy_op_get_asm), TPY_FAST, TPY_DOC(tpy_op_get_asm_sig)},
    {"print", TPY_FASTFN(tpy_op_print), TPY_FAST, TPY_DOC(tpy_op_print_sig)},
#endif
    {"write_bytecode", TPY_FASTFN(tpy_op_write_bytecode), TPY_FAST,
     TPY_DOC(tpy_op_write_bytecode_sig)},
    {"verify", (PyCFunction)op_verify, METH_NOARGS,
     TPY_SIGDOC("verify() -> bool", "True, or raises MLIRError with diagnostics.")},
    {"erase", (PyCFunction)op_erase, METH_NOARGS,
     TPY_SIGDOC("erase() -> None",
                "Erases the operation and everything in it now; their objects become invalid.")},
    {"detach_from_parent", (PyCFunction)op_detach, METH_NOARGS,
     TPY_SIGDOC("detach_from_parent() -> OpView",
                "Removes the operation from its block; it becomes a root. Returns it.")},
    {"move_before", (PyCFunction)op_move_before, METH_O,
     TPY_SIGDOC("move_before(other: _OperationBase, /) -> None", NULL)},
    {"move_after", (PyCFunction)op_move_after, METH_O,
     TPY_SIGDOC("move_after(other: _OperationBase, /) -> None", NULL)},
    {"clone", TPY_FASTFN(op_clone), TPY_FAST, TPY_DOC(op_clone_sig)},
    {"walk", TPY_FASTFN(op_walk), TPY_FAST, TPY_DOC(op_walk_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef opbase_getset[] = {
    {"name", op_name, NULL, TPY_PROP("str", "The operation name, e.g. 'arith.addi'."), NULL},
    {"operands", op_operands, NULL, TPY_PROP("OpOperandList", NULL), NULL},
    {"results", op_results, NULL, TPY_PROP("OpResultList", NULL), NULL},
    {"result", op_result, NULL, TPY_PROP("OpResult", "The only result."), NULL},
    {"regions", op_regions, NULL, TPY_PROP("RegionSequence", NULL), NULL},
    {"attributes", tpy_op_attributes, NULL, TPY_PROP("OpAttributeMap", NULL), NULL},
    {"parent", op_parent, NULL, TPY_PROP("Operation | None", "The parent operation, or None."),
     NULL},
    {"block", op_block, NULL,
     TPY_PROP("Block | None", "The containing block, or None when detached (tether)."), NULL},
#if TETHER_MLIR_VERSION >= 22
    {"location", op_location, op_set_location,
     TPY_PROP("Location", "The operation's location (settable)."), NULL},
    {"attached", op_attached, NULL, TPY_PROP("bool", "Whether the operation is in a block."), NULL},
#else
    {"location", op_location, NULL, TPY_PROP("Location", "The operation's location (settable)."),
     NULL},
#endif
    {"context", op_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"is_valid", op_is_valid, NULL, TPY_PROP("bool", "False once erased or removed."), NULL},
    {"_CAPIPtr", op_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

PyObject *tpy_opbase_new(PyTypeObject *t, PyObject *a, PyObject *k) {
  (void)t;
  (void)a;
  (void)k;
  PyErr_SetString(PyExc_TypeError, "_OperationBase cannot be instantiated");
  return NULL;
}

static PyType_Slot opbase_slots[] = {
    {Py_tp_new, tpy_opbase_new},
    {Py_tp_dealloc, tpy_op_dealloc},
    {Py_tp_str, tpy_op_str},
    {Py_tp_richcompare, op_richcompare},
    {Py_tp_hash, op_hash},
    {Py_tp_methods, opbase_methods},
    {Py_tp_getset, opbase_getset},
    {Py_tp_doc, "What Operation and OpView share."},
    {0, NULL},
};

static PyType_Spec tpy_opbase_spec = {"tether.ir._OperationBase", sizeof(TpOp), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, opbase_slots};

/* ---- Operation ------------------------------------------------------------------------------- */

static PyObject *operation_operation(PyObject *self, void *c) {
  (void)c;
  return Py_NewRef(self);
}

static PyObject *operation_opview(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK_OP(self);
  return tpy_wrap_op(TPY_OP(self)->h);
}

static PyObject *operation_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.OperationBase)) {
    tether_op *h;
    MlirOperation raw;
    if (!tpy_arg_op(owner, &h, &raw)) return NULL;
    return tpy_wrap_operation(h);
  }
  void *p = tpy_capsule_pointer(cap, "mlir.ir.Operation._CAPIPtr");
  if (!p) return NULL;
  MlirOperation raw = {p};
  tether_arena *a = tpy_arena_for_capsule(mlirOperationGetContext(raw));
  if (!a) return NULL;
  /* An operation in IR tether holds gets its handle; one made elsewhere and in no block (an
   * extension's mlirOperationCreate) is adopted: tether owns it from now on. */
  tether_op *h;
  int rc = tether_op_adopt(a, raw, &h);
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError,
                        "the capsule's operation is inside IR that tether does not hold (an "
                        "operation made elsewhere): only an operation in no block can be adopted");
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, a);
  return tpy_wrap_operation(h);
}

static PyMethodDef operation_methods[] = {
    {"create", TPY_FASTFN(tpy_op_create), TPY_FAST | METH_STATIC, TPY_DOC(tpy_op_create_sig)},
    {"parse", TPY_FASTFN(tpy_operation_parse), TPY_FAST | METH_STATIC,
     TPY_DOC(tpy_operation_parse_sig)},
    {"_CAPICreate", (PyCFunction)operation_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> Operation", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef operation_getset[] = {
    {"operation", operation_operation, NULL, TPY_PROP("Operation", "The operation itself."), NULL},
    {"opview", operation_opview, NULL, TPY_PROP("OpView", "The operation as its OpView class."),
     NULL},
    {"successors", tpy_op_successors, NULL, TPY_PROP("OpSuccessors", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot operation_slots[] = {
    {Py_tp_new, tpy_opbase_new},
    {Py_tp_methods, operation_methods},
    {Py_tp_getset, operation_getset},
    {Py_tp_doc, "An MLIR operation. Interned: one object per operation while it is referenced."},
    {0, NULL},
};

static PyType_Spec tpy_operation_spec = {"tether.ir.Operation", sizeof(TpOp), 0,
                                         Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, operation_slots};

/* ---- Operation.parse ------------------------------------------------------------------------- */

tpy_sig tpy_operation_parse_sig = TPY_SIG("parse(source: str | bytes, *, source_name: str = '', "
                                          "context: Context | None = None) -> OpView",
                                          "One operation from text or bytecode.");

PyObject *tpy_operation_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&tpy_operation_parse_sig, args, nargs, kwnames, a, 3)) return NULL;
  MlirStringRef s, name = {"", 0};
  if (!tpy_arg_str(a[0], "source", &s)) return NULL;
  if (a[1] && !tpy_arg_str(a[1], "source_name", &name)) return NULL;
  TpContext *ctx = tpy_resolve_context(a[2]);
  if (!ctx) return NULL;
  char *cname = PyMem_Malloc(name.length + 1);
  if (!cname) return PyErr_NoMemory();
  memcpy(cname, name.data, name.length);
  cname[name.length] = 0;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, ctx);
  tether_op *op;
  int rc = tether_op_parse_named(ctx->arena, s.data, s.length, cname, &op);
  PyMem_Free(cname);
  if (rc == TETHER_EPARSE) return tpy_errcap_raise(&cap, "Unable to parse operation assembly");
  tpy_errcap_close(&cap);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, ctx->arena);
  return tpy_wrap_op(op);
}

/* ---- the Context methods about live operations ------------------------------------------------
 * Upstream's Context methods that count, list and forget the live operation objects: defined here,
 * where the operation wrappers are, and added to Context when this file initializes. */

#define CTX_ARENA(self) (((TpContext *)(self))->arena)

static PyObject *context_live_ops(PyObject *self, PyObject *unused) {
  (void)unused;
  Py_ssize_t n = tpy_live_operations(CTX_ARENA(self), NULL);
  return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

static PyObject *context_live_op_objects(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *l = PyList_New(0);
  if (!l || tpy_live_operations(CTX_ARENA(self), l) < 0) {
    Py_XDECREF(l);
    return NULL;
  }
  return l;
}

static PyObject *context_live_modules(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromSsize_t(tpy_live_modules(CTX_ARENA(self)));
}

static PyObject *context_clear_live(PyObject *self, PyObject *unused) {
  (void)unused;
  Py_ssize_t n = tpy_clear_live_operations(CTX_ARENA(self), NULL);
  return n < 0 ? NULL : PyLong_FromSsize_t(n);
}

static PyObject *context_clear_live_inside(PyObject *self, PyObject *op) {
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(op, &h, &raw)) return NULL;
  if (tpy_clear_live_operations(CTX_ARENA(self), h) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef context_methods[] = {
    {"_get_live_operation_count", (PyCFunction)context_live_ops, METH_NOARGS,
     TPY_SIGDOC("_get_live_operation_count() -> int",
                "Operations of this context that have a live Python object.")},
    {"_get_live_operation_objects", (PyCFunction)context_live_op_objects, METH_NOARGS,
     TPY_SIGDOC("_get_live_operation_objects() -> list[Operation]",
                "The Operation objects of this context's live operation objects.")},
    {"_get_live_module_count", (PyCFunction)context_live_modules, METH_NOARGS,
     TPY_SIGDOC("_get_live_module_count() -> int", "Module objects of this context alive.")},
    {"_clear_live_operations", (PyCFunction)context_clear_live, METH_NOARGS,
     TPY_SIGDOC("_clear_live_operations() -> int",
                "Forgets the identity of every live operation object (they stay valid: tether "
                "objects never dangle); returns how many there were.")},
    {"_clear_live_operations_inside", (PyCFunction)context_clear_live_inside, METH_O,
     TPY_SIGDOC("_clear_live_operations_inside(operation: _OperationBase, /) -> int", NULL)},
    TPY_METHODS_END,
};

int tpy_init_operation(PyObject *m) {
  if (tpy_add_type(m, &tpy_opbase_spec, NULL, &tpy.OperationBase) < 0 ||
      tpy_add_type(m, &tpy_operation_spec, (PyObject *)tpy.OperationBase, &tpy.Operation) < 0 ||
      tpy_add_methods(tpy.Context, context_methods) < 0)
    return -1;
  return 0;
}
