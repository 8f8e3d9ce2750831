/* op.c: _OperationBase, Operation, OpView (the base of dialect op classes), Module, OpAttributeMap,
 * AsmState, Operation.parse, the registry of op classes and the live-object counts
 * (Operation.create and OpView.build_generic are in create.c).
 *
 * Invariants:
 *  - One Operation object and one OpView per operation while they live: the handle's user pointer
 *    is the Operation object when one lives, else the OpView. An OpView made by navigation holds
 *    no Operation; once one exists, the OpView holds it strongly (`sibling`) and the Operation
 *    points back (borrowed), so `op.operation is op.operation` and `op.operation.opview is op`.
 *  - Every method reaches MLIR through the arena's guarded access first: an invalid handle raises
 *    InvalidatedError before anything touches MLIR.
 *  - Python code (casters, __del__, properties) never runs between reading a raw MLIR pointer and
 *    using it: arguments are converted first, raw pointers read after.
 */
#include "tether_py.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#define OP(o) ((TpOp *)(o))

/* ---- live lists (Context._get_live_operation_count & co.) ------------------------------------ */

static TpOp live_ops = {.live_prev = &live_ops, .live_next = &live_ops};
static TpOp live_modules = {.live_prev = &live_modules, .live_next = &live_modules};

static void live_add(TpOp *head, TpOp *o) {
  o->live_next = head;
  o->live_prev = head->live_prev;
  head->live_prev->live_next = o;
  head->live_prev = o;
}

static void live_remove(TpOp *o) {
  if (!o->live_next) return;
  o->live_prev->live_next = o->live_next;
  o->live_next->live_prev = o->live_prev;
  o->live_next = o->live_prev = NULL;
}

static int is_view(TpOp *o) { return tp_is((PyObject *)o, tp.OpView); }

/* The operations of arena a with a live object: Operation objects, and OpViews without one. */
Py_ssize_t tp_live_operations(tether_arena *a, PyObject *append_to) {
  Py_ssize_t n = 0;
  for (TpOp *o = live_ops.live_next; o != &live_ops; o = o->live_next) {
    if (!o->h || tether_handle_arena(o->h) != a) continue;
    if (is_view(o) && o->sibling) continue;
    n++;
    if (append_to) {
      PyObject *x = tp_wrap_operation(o->h);
      if (!x || PyList_Append(append_to, x) < 0) {
        Py_XDECREF(x);
        return -1;
      }
      Py_DECREF(x);
    }
  }
  return n;
}

Py_ssize_t tp_live_modules(tether_arena *a) {
  Py_ssize_t n = 0;
  for (TpOp *o = live_modules.live_next; o != &live_modules; o = o->live_next)
    if (o->h && tether_handle_arena(o->h) == a) n++;
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
 * they stay valid, but navigation makes new objects. Returns how many. */
Py_ssize_t tp_clear_live_operations(tether_arena *a, tether_op *inside) {
  Py_ssize_t n = 0;
  for (TpOp *o = live_ops.live_next; o != &live_ops; o = o->live_next) {
    if (!o->h || tether_handle_arena(o->h) != a) continue;
    if (inside && !is_inside(o->h, inside)) continue;
    if (tether_handle_get_user(o->h) == o) {
      tether_handle_set_user(o->h, NULL);
      n++;
    }
  }
  return n;
}

/* ---- wrapping -------------------------------------------------------------------------------- */

/* Freed wrappers of classes without the cyclic collector's header (Operation, OpView, and the op
 * classes opview_init_subclass makes so), kept for reuse as CPython keeps its own free lists:
 * iterating a block makes and frees one wrapper per operation. Linked through `sibling`. */
enum { FREELIST_MAX = 64 };
static TpOp *freelist;
static int nfree;

static int reusable(PyTypeObject *type) {
  return !PyType_IS_GC(type) && type->tp_basicsize == (Py_ssize_t)sizeof(TpOp) &&
         type->tp_itemsize == 0 && type->tp_alloc == PyType_GenericAlloc &&
         type->tp_free == PyObject_Free;
}

static TpOp *op_alloc(PyTypeObject *type, tether_op *h) {
  TpOp *self;
  if (freelist && reusable(type)) {
    self = freelist;
    freelist = self->sibling;
    nfree--;
    memset((char *)self + sizeof(PyObject), 0, sizeof(TpOp) - sizeof(PyObject));
    PyObject_Init((PyObject *)self, type); /* the type (a heap type) gets its reference */
  } else {
    self = (TpOp *)type->tp_alloc(type, 0);
  }
  if (!self) return NULL;
  /* A Python op class without an instance dict (the generated ones: __slots__ = ()) holds no
   * reference the cyclic collector could follow: untracked, it is not scanned at every gen-0
   * collection (the wrappers of a walk would otherwise be). */
  if (PyType_IS_GC(type) && type->tp_dictoffset == 0 && type != tp.OpView)
    PyObject_GC_UnTrack(self);
  self->pin = tp_pin(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    PyErr_NoMemory();
    return NULL;
  }
  self->h = h;
  live_add(&live_ops, self);
  return self;
}

/* Registered OpView classes by operation name, with a direct-mapped cache keyed by the name's
 * identifier (valid while the registry generation matches). An identifier of a destroyed context
 * may be reused by another one for another name: so a hit also compares the text. */
static unsigned long op_class_generation = 1;
enum { CLASS_CACHE = 256 };
static struct {
  const void *id;
  unsigned long gen;
  size_t len; /* the operation name's length and text (compared on a hit; 0: none kept) */
  char text[48];
  PyObject *cls; /* borrowed from tp.op_classes, or NULL for "none registered" */
} class_cache[CLASS_CACHE];

static PyObject *name_str(MlirOperation raw);

/* Loads the dialect module of a namespace once (tether.dialects.<ns>), so its classes register. */
static void load_dialect(MlirStringRef name) {
  const char *dot = memchr(name.data, '.', name.length);
  if (!dot || !tp.dialect_loader || !tp.loaded_namespaces) return;
  PyObject *ns = PyUnicode_FromStringAndSize(name.data, dot - name.data);
  if (!ns) {
    PyErr_Clear();
    return;
  }
  int seen = PyDict_Contains(tp.loaded_namespaces, ns);
  if (seen == 0 && PyDict_SetItem(tp.loaded_namespaces, ns, Py_True) == 0) {
    PyObject *exc_type, *exc, *tb;
    PyErr_Fetch(&exc_type, &exc, &tb);
    PyObject *r = PyObject_CallOneArg(tp.dialect_loader, ns);
    if (!r) PyErr_WriteUnraisable(tp.dialect_loader);
    Py_XDECREF(r);
    PyErr_Restore(exc_type, exc, tb);
  }
  Py_DECREF(ns);
}

static PyObject *view_class_for(MlirOperation raw) {
  MlirIdentifier id = mlirOperationGetName(raw);
  size_t slot = ((uintptr_t)id.ptr >> 4) % CLASS_CACHE;
  MlirStringRef s = mlirIdentifierStr(id);
  if (class_cache[slot].id == id.ptr && class_cache[slot].gen == op_class_generation &&
      class_cache[slot].len == s.length && !memcmp(class_cache[slot].text, s.data, s.length))
    return class_cache[slot].cls ? class_cache[slot].cls : (PyObject *)tp.OpView;
  load_dialect(mlirIdentifierStr(id));
  PyObject *name = name_str(raw);
  if (!name) {
    PyErr_Clear();
    return (PyObject *)tp.OpView;
  }
  PyObject *cls = tp.op_classes ? PyDict_GetItemWithError(tp.op_classes, name) : NULL;
  if (PyErr_Occurred()) PyErr_Clear();
  Py_DECREF(name);
  if (s.length > sizeof class_cache[slot].text) return cls ? cls : (PyObject *)tp.OpView;
  memcpy(class_cache[slot].text, s.data, s.length);
  class_cache[slot].len = s.length;
  class_cache[slot].id = id.ptr;
  class_cache[slot].gen = op_class_generation;
  class_cache[slot].cls = cls;
  return cls ? cls : (PyObject *)tp.OpView;
}

PyObject *tp_wrap_operation(tether_op *h) {
  if (!h) Py_RETURN_NONE;
  TpOp *o = tether_handle_get_user(h);
  if (o && !is_view(o)) return Py_NewRef(o);
  TpOp *op = op_alloc(tp.Operation, h);
  if (!op) return NULL;
  if (o) { /* an OpView without an Operation: link them */
    o->sibling = (TpOp *)Py_NewRef(op);
    op->sibling = o;
  }
  tether_handle_set_user(h, op);
  return (PyObject *)op;
}

PyObject *tp_wrap_op(tether_op *h) {
  if (!h) Py_RETURN_NONE;
  TpOp *o = tether_handle_get_user(h);
  if (o && is_view(o)) return Py_NewRef(o);
  if (o && o->sibling) return Py_NewRef(o->sibling);
  MlirOperation raw;
  int rc = tether_op_get(h, &raw);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, h);
  PyObject *cls = view_class_for(raw);
  if (tether_handle_get_user(h) != o) return tp_wrap_op(h); /* a dialect import made one */
  TpOp *v = op_alloc((PyTypeObject *)cls, h);
  if (!v) return NULL;
  if (o) {
    v->sibling = (TpOp *)Py_NewRef(o);
    o->sibling = v;
  } else {
    tether_handle_set_user(h, v);
  }
  return (PyObject *)v;
}

static void op_dealloc(TpOp *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (PyType_IS_GC(t)) PyObject_GC_UnTrack(self);
  live_remove(self);
  if (self->h) {
    if (is_view(self)) {
      TpOp *op = self->sibling;
      self->sibling = NULL;
      if (op) {
        if (op->sibling == self) op->sibling = NULL;
        Py_DECREF(op);
      } else if (tether_handle_get_user(self->h) == self) {
        tether_handle_set_user(self->h, NULL);
      }
    } else if (tether_handle_get_user(self->h) == self) {
      tether_handle_set_user(self->h, NULL);
    }
    if (self->pin >= 0) tp_unpin(self->pin);
    self->h = NULL;
  }
  if (nfree < FREELIST_MAX && reusable(t)) {
    self->sibling = freelist;
    freelist = self;
    nfree++;
  } else {
    t->tp_free(self);
  }
  Py_DECREF(t);
}

/* ---- argument checks ------------------------------------------------------------------------- */

int tp_arg_op(PyObject *o, tether_op **h, MlirOperation *raw) {
  if (tp_is(o, tp.OperationBase) || tp_is(o, tp.Module)) {
    tether_op *x = OP(o)->h;
    if (!x) {
      PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");
      return 0;
    }
    int rc = tether_op_get(x, raw);
    if (rc != TETHER_OK) return TP_RAISE_RC(rc, x), 0;
    *h = x;
    return 1;
  }
  return tp_type_error("argument", "an Operation", o), 0;
}

#define SELF_OP(self, raw)                                                                         \
  MlirOperation raw;                                                                               \
  do {                                                                                             \
    if (!OP(self)->h) {                                                                            \
      PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");   \
      return NULL;                                                                                 \
    }                                                                                              \
    int rc_ = tether_op_get(OP(self)->h, &raw);                                                    \
    if (rc_ != TETHER_OK) return TP_RAISE_RC(rc_, OP(self)->h);                                    \
  } while (0)

static PyObject *ctx_of_handle(void *h) { return tp_context_of(tether_handle_arena(h)); }

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

static PyObject *name_str(MlirOperation raw) {
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
  SELF_OP(self, raw);
  return name_str(raw);
}

static PyObject *op_list(PyObject *self, int kind) {
  SELF_OP(self, raw);
  (void)raw;
  PyObject *owner = tp_wrap_operation(OP(self)->h);
  if (!owner) return NULL;
  PyObject *l = tp_new_list(owner, kind);
  Py_DECREF(owner);
  return l;
}

static PyObject *op_operands(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TP_LIST_OPERANDS);
}
static PyObject *op_results(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TP_LIST_RESULTS);
}
static PyObject *op_regions(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TP_LIST_REGIONS);
}
static PyObject *op_successors(PyObject *self, void *c) {
  (void)c;
  return op_list(self, TP_LIST_SUCCESSORS);
}

static PyObject *op_result(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  intptr_t n = mlirOperationGetNumResults(raw);
  if (n != 1) {
    PyObject *nm = name_str(raw);
    if (nm)
      PyErr_Format(PyExc_ValueError,
                   "Cannot call .result on operation %U which has %zd results (it is only valid "
                   "for operations with a single result)",
                   nm, (Py_ssize_t)n);
    Py_XDECREF(nm);
    return NULL;
  }
  tether_value *v;
  TP_CALL(tether_op_result(OP(self)->h, 0, &v), OP(self)->h);
  return tp_wrap_value(v);
}

static PyObject *op_parent(PyObject *self, void *c) {
  (void)c;
  tether_op *p;
  TP_CALL(tether_op_parent(OP(self)->h, &p), OP(self)->h);
  if (!p) {
    /* As upstream: an operation in no block (Operation.create without an insertion point, a
     * detached or parsed operation) has no parent to ask for; a module's operation has None. */
    bool root;
    MlirOperation raw;
    if (tether_op_is_root(OP(self)->h, &root) == TETHER_OK && root &&
        tether_op_get(OP(self)->h, &raw) == TETHER_OK) {
      MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(raw));
      if (!(n.length == 14 && !memcmp(n.data, "builtin.module", 14)))
        return PyErr_Format(PyExc_ValueError, "Detached operations have no parent");
    }
  }
  return tp_wrap_operation(p);
}

static PyObject *op_block(PyObject *self, void *c) {
  (void)c;
  tether_block *b;
  TP_CALL(tether_op_block(OP(self)->h, &b), OP(self)->h);
  return tp_wrap_block(b);
}

static PyObject *op_location(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  return tp_wrap_loc_a(tether_handle_arena(OP(self)->h), mlirOperationGetLocation(raw));
}

static PyObject *op_context(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  (void)raw;
  return ctx_of_handle(OP(self)->h);
}

static PyObject *op_is_valid(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(OP(self)->h && tether_handle_is_valid(OP(self)->h));
}

static PyObject *op_capsule(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  /* Raw access may change the IR behind tether's back: nothing is known to verify any more. */
  tether_arena_touch(tether_handle_arena(OP(self)->h));
  PyObject *owner = tp_wrap_operation(OP(self)->h);
  if (!owner) return NULL;
  PyObject *cap = tp_capsule_with_owner(raw.ptr, "mlir.ir.Operation._CAPIPtr", owner);
  Py_DECREF(owner);
  return cap;
}

static PyObject *op_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  int eq = tp_is(b, tp.OperationBase) && OP(a)->h && OP(a)->h == OP(b)->h;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t op_hash(PyObject *a) { return _Py_HashPointer(OP(a)->h); }

/* Printing: the flags of get_asm/print. */
typedef struct {
  PyObject *large_elements_limit;
  int debug, pretty, generic, local, assume, skip_regions, binary;
} print_opts;

static MlirOpPrintingFlags make_flags(print_opts *o, int *ok) {
  *ok = 1;
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  if (o->large_elements_limit && o->large_elements_limit != Py_None) {
    int64_t limit;
    if (!tp_arg_int64(o->large_elements_limit, "large_elements_limit", &limit)) {
      mlirOpPrintingFlagsDestroy(f);
      *ok = 0;
      return f;
    }
    mlirOpPrintingFlagsElideLargeElementsAttrs(f, (intptr_t)limit);
  }
  if (o->debug) mlirOpPrintingFlagsEnableDebugInfo(f, true, o->pretty);
  if (o->generic) mlirOpPrintingFlagsPrintGenericOpForm(f);
  if (o->local) mlirOpPrintingFlagsUseLocalScope(f);
  if (o->assume) mlirOpPrintingFlagsAssumeVerified(f);
  if (o->skip_regions) mlirOpPrintingFlagsSkipRegions(f);
  return f;
}

typedef struct {
  PyObject_HEAD MlirAsmState state;
  PyObject *owner; /* the operation or value it was made for */
} TpAsmState;

static PyTypeObject *AsmStateType;

/* Prints into b (text or bytecode); 0 with an exception set on failure. */
static int print_into(PyObject *self, print_opts *o, PyObject *state, tp_strbuf *b) {
  tether_op *h = OP(self)->h;
  MlirOperation raw;
  if (!h) {
    PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");
    return 0;
  }
  int rc = tether_op_get(h, &raw);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, h), 0;
  /* A state's names and flags were made for the IR as it was: printing with it runs the custom
   * printers, which may crash on operations that do not verify (added since, or IR MLIR's verifier
   * cannot run on). Then the operation is printed as without a state, in the generic form. */
  int stale = 0;
  if (state) {
    stale = tether_handle_has_foreign_uses(h) || tether_op_verify(h) != TETHER_OK;
    if (!stale) {
      mlirOperationPrintWithState(raw, ((TpAsmState *)state)->state, tp_strbuf_append, b);
      return 1;
    }
  }
  int ok;
  MlirOpPrintingFlags f = make_flags(o, &ok);
  if (!ok) return 0;
  if (stale) mlirOpPrintingFlagsPrintGenericOpForm(f);
  /* binary=True is the same text, as bytes (upstream: write_bytecode is the bytecode). */
  rc = tether_op_print(h, f, tp_strbuf_append, b);
  mlirOpPrintingFlagsDestroy(f);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, h), 0;
  return 1;
}

static PyObject *op_get_asm(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  static const char *const names[] = {"binary",
                                      "large_elements_limit",
                                      "enable_debug_info",
                                      "pretty_debug_info",
                                      "print_generic_op_form",
                                      "use_local_scope",
                                      "assume_verified",
                                      "skip_regions",
                                      NULL};
  PyObject *a[8];
  if (!tp_fastargs("get_asm", args, nargs, kwnames, names, 0, 8, a)) return NULL;
  print_opts o = {a[1], 0, 0, 0, 0, 0, 0, 0};
  int *flags[] = {&o.binary,  NULL,     &o.debug,  &o.pretty,
                  &o.generic, &o.local, &o.assume, &o.skip_regions};
  for (int i = 0; i < 8; i++)
    if (flags[i] && a[i] && (*flags[i] = PyObject_IsTrue(a[i])) < 0) return NULL;
  tp_strbuf b = {0};
  if (!print_into(self, &o, NULL, &b)) {
    PyMem_RawFree(b.data);
    return NULL;
  }
  return o.binary ? tp_strbuf_finish_bytes(&b) : tp_strbuf_finish(&b);
}

static PyObject *write_to(PyObject *file, PyObject *text) {
  if (!file || file == Py_None) {
    file = PySys_GetObject("stdout");
    if (!file) return PyErr_Format(PyExc_RuntimeError, "no sys.stdout");
  }
  return PyObject_CallMethod(file, "write", "O", text);
}

static PyObject *op_print(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  /* print(state, file=None, binary=False) or print(large_elements_limit=None, ...). */
  if (nargs >= 1 && tp_is(args[0], AsmStateType)) {
    static const char *const names[] = {"state", "file", "binary", NULL};
    PyObject *a[3];
    if (!tp_fastargs("print", args, nargs, kwnames, names, 1, 3, a)) return NULL;
    int binary = a[2] ? PyObject_IsTrue(a[2]) : 0;
    if (binary < 0) return NULL;
    tp_strbuf b = {0};
    print_opts o = {NULL, 0, 0, 0, 0, 0, 0, binary};
    if (!print_into(self, &o, a[0], &b)) {
      PyMem_RawFree(b.data);
      return NULL;
    }
    PyObject *text = binary ? tp_strbuf_finish_bytes(&b) : tp_strbuf_finish(&b);
    if (!text) return NULL;
    PyObject *r = write_to(a[1], text);
    Py_DECREF(text);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
  }
  static const char *const names[] = {"large_elements_limit",
                                      "enable_debug_info",
                                      "pretty_debug_info",
                                      "print_generic_op_form",
                                      "use_local_scope",
                                      "assume_verified",
                                      "file",
                                      "binary",
                                      "skip_regions",
                                      NULL};
  PyObject *a[9];
  if (!tp_fastargs("print", args, nargs, kwnames, names, 0, 9, a)) return NULL;
  print_opts o = {a[0], 0, 0, 0, 0, 0, 0, 0};
  int *flags[] = {NULL,      &o.debug, &o.pretty, &o.generic,     &o.local,
                  &o.assume, NULL,     &o.binary, &o.skip_regions};
  for (int i = 0; i < 9; i++)
    if (flags[i] && a[i] && (*flags[i] = PyObject_IsTrue(a[i])) < 0) return NULL;
  tp_strbuf b = {0};
  if (!print_into(self, &o, NULL, &b)) {
    PyMem_RawFree(b.data);
    return NULL;
  }
  PyObject *text = o.binary ? tp_strbuf_finish_bytes(&b) : tp_strbuf_finish(&b);
  if (!text) return NULL;
  PyObject *r = write_to(a[6], text);
  Py_DECREF(text);
  if (!r) return NULL;
  Py_DECREF(r);
  if (!o.binary && (!a[6] || a[6] == Py_None)) {
    /* upstream's print ends with the newline MLIR's printer leaves out */
  }
  Py_RETURN_NONE;
}

static PyObject *op_str(PyObject *self) {
  print_opts o = {NULL, 0, 0, 0, 0, 0, 0, 0};
  tp_strbuf b = {0};
  if (!print_into(self, &o, NULL, &b)) {
    PyMem_RawFree(b.data);
    return NULL;
  }
  return tp_strbuf_finish(&b);
}

static PyObject *op_write_bytecode(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  static const char *const names[] = {"file", "desired_version", NULL};
  PyObject *a[2];
  if (!tp_fastargs("write_bytecode", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  int64_t version = -1;
  if (a[1] && a[1] != Py_None && !tp_arg_int64(a[1], "desired_version", &version)) return NULL;
  SELF_OP(self, raw);
  /* MLIR's bytecode writer assumes valid, self-contained IR (it crashes numbering a value defined
   * outside, or an attribute of IR that does not verify). */
  int rc = tether_op_check_self_contained(OP(self)->h);
  if (rc == TETHER_ESTATE)
    return PyErr_Format(
        PyExc_ValueError,
        "cannot write bytecode: the operation uses values or blocks defined outside "
        "it, or IR outside it uses its values");
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, OP(self)->h);
  PyObject *ctx = ctx_of_handle(OP(self)->h);
  if (!ctx) return NULL;
  tp_errcap cap;
  tp_errcap_begin(&cap, (TpContext *)ctx);
  rc = tether_op_verify(OP(self)->h);
  if (rc == TETHER_EVERIFY) {
    tp_errcap_raise(&cap, "cannot write bytecode of IR that does not verify");
    Py_DECREF(ctx);
    return NULL;
  }
  Py_XDECREF(tp_errcap_end(&cap));
  Py_DECREF(ctx);
  if (rc != TETHER_OK) return TP_RAISE_RC(rc, OP(self)->h);
  tp_strbuf b = {0};
  if (version < 0) {
    mlirOperationWriteBytecode(raw, tp_strbuf_append, &b);
  } else {
    MlirBytecodeWriterConfig cfg = mlirBytecodeWriterConfigCreate();
    mlirBytecodeWriterConfigDesiredEmitVersion(cfg, version);
    MlirLogicalResult r = mlirOperationWriteBytecodeWithConfig(raw, cfg, tp_strbuf_append, &b);
    mlirBytecodeWriterConfigDestroy(cfg);
    if (mlirLogicalResultIsFailure(r)) {
      PyMem_RawFree(b.data);
      return PyErr_Format(PyExc_ValueError, "Unable to honor desired bytecode version %lld",
                          (long long)version);
    }
  }
  PyObject *bytes = tp_strbuf_finish_bytes(&b);
  if (!bytes) return NULL;
  PyObject *r = write_to(a[0], bytes);
  Py_DECREF(bytes);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

static PyObject *op_verify(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_OP(self, raw);
  PyObject *ctx = ctx_of_handle(OP(self)->h);
  if (!ctx) return NULL;
  tp_errcap cap;
  tp_errcap_begin(&cap, (TpContext *)ctx);
  int rc = tether_op_verify(OP(self)->h);
  if (rc == TETHER_EVERIFY) {
    tp_errcap_raise(&cap, "Verification failed");
    Py_DECREF(ctx);
    return NULL;
  }
  Py_XDECREF(tp_errcap_end(&cap));
  Py_DECREF(ctx);
  (void)raw;
  TP_CALL(rc, OP(self)->h);
  Py_RETURN_TRUE;
}

static PyObject *op_erase(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_OP(self, raw);
  (void)raw;
  TP_CALL(tether_op_erase(OP(self)->h), OP(self)->h);
  Py_RETURN_NONE;
}

static PyObject *op_detach(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_OP(self, raw);
  (void)raw;
  bool root;
  TP_CALL(tether_op_is_root(OP(self)->h, &root), OP(self)->h);
  if (root) return PyErr_Format(PyExc_ValueError, "Detached operation has no parent.");
  TP_CALL(tether_op_detach(OP(self)->h), OP(self)->h);
  return tp_wrap_op(OP(self)->h);
}

static PyObject *op_move(PyObject *self, PyObject *other, int after) {
  tether_op *oh;
  MlirOperation oraw;
  SELF_OP(self, raw);
  (void)raw;
  if (!tp_arg_op(other, &oh, &oraw)) return NULL;
  if (oh == OP(self)->h) Py_RETURN_NONE; /* next to itself: nothing moves, as upstream's */
  int rc = after ? tether_op_move_after(OP(self)->h, oh) : tether_op_move_before(OP(self)->h, oh);
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError, "cannot move an operation into itself");
  if (rc == TETHER_ESTATE)
    return PyErr_Format(PyExc_ValueError, "the reference operation is not in a block");
  TP_CALL(rc, OP(self)->h);
  Py_RETURN_NONE;
}

static PyObject *op_move_before(PyObject *self, PyObject *o) { return op_move(self, o, 0); }
static PyObject *op_move_after(PyObject *self, PyObject *o) { return op_move(self, o, 1); }

/* ip: an InsertionPoint, None (the current one, if any) or False (do not insert). */
static int maybe_insert(tether_op *op, PyObject *ip) {
  if (ip == Py_False) return 0;
  if (!ip || ip == Py_None)
    ip = tp_current_ip();
  else if (!tp_is(ip, tp.InsertionPoint))
    return tp_type_error("ip", "an InsertionPoint", ip), -1;
  if (!ip) return 0;
  return tp_ip_insert(ip, op);
}

static PyObject *op_clone(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  static const char *const names[] = {"ip", NULL};
  PyObject *a[1];
  if (!tp_fastargs("clone", args, nargs, kwnames, names, 0, 1, a)) return NULL;
  SELF_OP(self, raw);
  (void)raw;
  tether_op *c;
  TP_CALL(tether_op_clone(OP(self)->h, &c), OP(self)->h);
  PyObject *r = tp_wrap_op(c);
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
  PyObject *o = tp_wrap_operation(op);
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

static PyObject *op_walk(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  static const char *const names[] = {"callback", "walk_order", NULL};
  PyObject *a[2];
  if (!tp_fastargs("walk", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  if (!PyCallable_Check(a[0])) return tp_type_error("callback", "callable", a[0]);
  long order = 1; /* upstream's default is POST_ORDER */
  if (a[1]) {
    order = PyLong_AsLong(a[1]);
    if (order == -1 && PyErr_Occurred()) return NULL;
    if (order != 0 && order != 1) return PyErr_Format(PyExc_ValueError, "invalid walk_order");
  }
  SELF_OP(self, raw);
  (void)raw;
  walk_ctx w = {a[0], 0, NULL};
  int rc = tether_op_walk(OP(self)->h, order ? TETHER_WALK_POST_ORDER : TETHER_WALK_PRE_ORDER,
                          walk_cb, &w);
  if (w.failed) {
    tp_raise_callback_error();
    return NULL;
  }
  if (rc < 0) return TP_RAISE_RC(rc, OP(self)->h);
  Py_RETURN_NONE;
}

static PyObject *op_attributes(PyObject *self, void *c);

static PyMethodDef opbase_methods[] = {
    {"get_asm", TP_FASTFN(op_get_asm), TP_FAST,
     "get_asm(binary=False, large_elements_limit=None, enable_debug_info=False, "
     "pretty_debug_info=False, print_generic_op_form=False, use_local_scope=False, "
     "assume_verified=False, skip_regions=False): the operation's text (bytes when binary)."},
    {"print", TP_FASTFN(op_print), TP_FAST,
     "print(large_elements_limit=None, enable_debug_info=False, pretty_debug_info=False, "
     "print_generic_op_form=False, use_local_scope=False, assume_verified=False, file=None, "
     "binary=False, skip_regions=False), or print(state, file=None, binary=False)."},
    {"write_bytecode", TP_FASTFN(op_write_bytecode), TP_FAST,
     "write_bytecode(file, desired_version=None): MLIR bytecode into a binary file."},
    {"verify", (PyCFunction)op_verify, METH_NOARGS, "True, or raises MLIRError with diagnostics."},
    {"erase", (PyCFunction)op_erase, METH_NOARGS,
     "Erases the operation and everything in it now; their objects become invalid."},
    {"detach_from_parent", (PyCFunction)op_detach, METH_NOARGS,
     "Removes the operation from its block; it becomes a root. Returns it."},
    {"move_before", (PyCFunction)op_move_before, METH_O, NULL},
    {"move_after", (PyCFunction)op_move_after, METH_O, NULL},
    {"clone", TP_FASTFN(op_clone), TP_FAST, "clone(ip=None): a copy, inserted at ip."},
    {"walk", TP_FASTFN(op_walk), TP_FAST,
     "walk(callback, walk_order=WalkOrder.POST_ORDER): callback(Operation) -> WalkResult."},
    TP_METHODS_END,
};

static PyGetSetDef opbase_getset[] = {
    {"name", op_name, NULL, "The operation name, e.g. 'arith.addi'.", NULL},
    {"operands", op_operands, NULL, NULL, NULL},
    {"results", op_results, NULL, NULL, NULL},
    {"result", op_result, NULL, "The only result.", NULL},
    {"regions", op_regions, NULL, NULL, NULL},
    {"attributes", op_attributes, NULL, NULL, NULL},
    {"parent", op_parent, NULL, "The parent operation, or None.", NULL},
    {"block", op_block, NULL, "The containing block, or None when detached (tether).", NULL},
    {"location", op_location, NULL, NULL, NULL},
    {"context", op_context, NULL, NULL, NULL},
    {"is_valid", op_is_valid, NULL, "False once erased or removed.", NULL},
    {"_CAPIPtr", op_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyObject *opbase_new(PyTypeObject *t, PyObject *a, PyObject *k) {
  (void)t;
  (void)a;
  (void)k;
  PyErr_SetString(PyExc_TypeError, "_OperationBase cannot be instantiated");
  return NULL;
}

static PyType_Slot opbase_slots[] = {
    {Py_tp_new, opbase_new},
    {Py_tp_dealloc, op_dealloc},
    {Py_tp_str, op_str},
    {Py_tp_richcompare, op_richcompare},
    {Py_tp_hash, op_hash},
    {Py_tp_methods, opbase_methods},
    {Py_tp_getset, opbase_getset},
    {Py_tp_doc, "What Operation and OpView share."},
    {0, NULL},
};

PyType_Spec tp_opbase_spec = {"tether.ir._OperationBase", sizeof(TpOp), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, opbase_slots};

/* ---- Operation ------------------------------------------------------------------------------- */

static PyObject *operation_operation(PyObject *self, void *c) {
  (void)c;
  return Py_NewRef(self);
}

static PyObject *operation_opview(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  (void)raw;
  return tp_wrap_op(OP(self)->h);
}

static PyObject *operation_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.OperationBase)) {
    tether_op *h;
    MlirOperation raw;
    if (!tp_arg_op(owner, &h, &raw)) return NULL;
    return tp_wrap_operation(h);
  }
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Operation._CAPIPtr");
  if (!p) return NULL;
  MlirOperation raw = {p};
  tether_arena *a = tether_arena_of_context(mlirOperationGetContext(raw));
  tether_op *h;
  if (!a || tether_op_wrap(a, raw, &h) != TETHER_OK)
    return PyErr_Format(PyExc_ValueError,
                        "the capsule's operation is not in IR a tether Context holds (an "
                        "operation made elsewhere cannot be adopted safely)");
  return tp_wrap_operation(h);
}

static PyObject *operation_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames);

static PyMethodDef operation_methods[] = {
    {"create", TP_FASTFN(tp_op_create), TP_FAST | METH_STATIC,
     "create(name, results=None, operands=None, attributes=None, successors=None, regions=0, "
     "loc=None, ip=None, infer_type=False)"},
    {"parse", TP_FASTFN(operation_parse), TP_FAST | METH_STATIC,
     "parse(source, *, source_name='', context=None): one operation from text or bytecode."},
    {"_CAPICreate", (PyCFunction)operation_from_capsule, METH_O | METH_STATIC, NULL},
    TP_METHODS_END,
};

static PyGetSetDef operation_getset[] = {
    {"operation", operation_operation, NULL, "The operation itself.", NULL},
    {"opview", operation_opview, NULL, "The operation as its OpView class.", NULL},
    {"successors", op_successors, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot operation_slots[] = {
    {Py_tp_new, opbase_new},
    {Py_tp_methods, operation_methods},
    {Py_tp_getset, operation_getset},
    {Py_tp_doc, "An MLIR operation. Interned: one object per operation while it is referenced."},
    {0, NULL},
};

PyType_Spec tp_operation_spec = {"tether.ir.Operation", sizeof(TpOp), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, operation_slots};

/* ---- OpView ---------------------------------------------------------------------------------- */

/* OpView(operation): self becomes the view of that operation. (Generated classes' __init__ calls
 * it with what build_generic made.) */
static int opview_init(PyObject *self, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"operation", NULL};
  PyObject *operation;
  if (!tp_args("OpView", args, kw, names, 1, 1, &operation)) return -1;
  tether_op *h;
  MlirOperation raw;
  if (!tp_arg_op(operation, &h, &raw)) return -1;
  if (OP(self)->h == h) return 0;
  TpOp *op = (TpOp *)tp_wrap_operation(h);
  if (!op) return -1;
  intptr_t pin = tp_pin(h);
  if (pin < 0) {
    Py_DECREF(op);
    PyErr_NoMemory();
    return -1;
  }
  if (OP(self)->h) { /* initialized before: let go of the old operation */
    TpOp *old = OP(self)->sibling;
    OP(self)->sibling = NULL;
    if (old) {
      if (old->sibling == OP(self)) old->sibling = NULL;
      Py_DECREF(old);
    } else if (tether_handle_get_user(OP(self)->h) == self) {
      tether_handle_set_user(OP(self)->h, NULL);
    }
    tp_unpin(OP(self)->pin);
  } else {
    live_add(&live_ops, OP(self));
  }
  OP(self)->h = h;
  OP(self)->pin = pin;
  OP(self)->sibling = op; /* the reference from tp_wrap_operation */
  op->sibling = OP(self);
  return 0;
}

static PyObject *opview_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)args;
  (void)kw;
  TpOp *self = (TpOp *)type->tp_alloc(type, 0);
  if (self) self->pin = -1;
  return (PyObject *)self;
}

static PyObject *opview_operation(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  (void)raw;
  return tp_wrap_operation(OP(self)->h);
}

static PyObject *opview_opview(PyObject *self, void *c) {
  (void)c;
  return Py_NewRef(self);
}

static PyObject *opview_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *op = operation_parse(NULL, args, nargs, kwnames);
  if (!op) return NULL;
  PyObject *want = PyObject_GetAttrString(cls, "OPERATION_NAME");
  tether_op *h;
  MlirOperation raw;
  PyObject *r = NULL;
  if (want && tp_arg_op(op, &h, &raw)) {
    PyObject *got = name_str(raw);
    if (got) {
      int same = PyObject_RichCompareBool(want, got, Py_EQ);
      if (same == 1) {
        PyObject *view = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
        if (view) {
          OP(view)->pin = -1;
          PyObject *t = PyTuple_Pack(1, op);
          if (!t || opview_init(view, t, NULL) < 0) Py_CLEAR(view);
          Py_XDECREF(t);
        }
        r = view;
      } else if (same == 0) {
        PyObject *msg = PyUnicode_FromFormat("Expected a '%U' op, got: '%U'", want, got);
        if (msg) {
          PyObject *e = PyList_New(0);
          if (e) tp_raise_mlir_error(PyUnicode_AsUTF8(msg), e);
          Py_XDECREF(e);
          Py_DECREF(msg);
        }
      }
      Py_DECREF(got);
    }
  }
  Py_XDECREF(want);
  Py_DECREF(op);
  return r;
}

/* Called by Python for every new subclass (generated op classes, dialects' own subclasses). A
 * subclass that adds nothing to the instance (no __dict__, no __weakref__, no slots of its own: the
 * generated classes have `__slots__ = ()`) and has no finalizer can hold no reference a cycle goes
 * through: its instances are made without the cyclic collector's header, as OpView's are (CPython
 * gives every heap type one; it supports heap types without, in subtype_dealloc). Wrappers are
 * then cheaper to make and free: iterating a block makes one per operation. */
static PyObject *opview_init_subclass(PyObject *cls, PyObject *args, PyObject *kw) {
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
    return PyErr_Format(PyExc_TypeError, "%s.__init_subclass__() takes no keyword arguments",
                        ((PyTypeObject *)cls)->tp_name);
  PyTypeObject *t = (PyTypeObject *)cls;
  PyTypeObject *base = tp.OpView;
  if ((t->tp_flags & Py_TPFLAGS_HEAPTYPE) && PyType_IS_GC(t) && !PyType_IS_GC(base) &&
      t->tp_dictoffset == 0 && t->tp_weaklistoffset == base->tp_weaklistoffset &&
      t->tp_basicsize == base->tp_basicsize && t->tp_itemsize == 0 && !t->tp_finalize &&
      !t->tp_del) {
    t->tp_flags &= ~Py_TPFLAGS_HAVE_GC;
    t->tp_free = PyObject_Free; /* PyType_GenericAlloc's non-GC path is PyObject_Malloc */
    t->tp_traverse = NULL;
    t->tp_clear = NULL;
    /* subtype_dealloc would only find and call OpView's: no dict, slots, finalizer to handle. */
    t->tp_dealloc = (destructor)op_dealloc;
    /* No PyType_Modified: no attribute changed (the version tag keeps its caches). */
  }
  Py_RETURN_NONE;
}

static PyMethodDef opview_methods[] = {
    {"__init_subclass__", (PyCFunction)(void (*)(void))opview_init_subclass,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "Makes op classes that add no instance state cheaper to instantiate (no GC header)."},
    {"build_generic", TP_FASTFN(tp_opview_build_generic), TP_FAST | METH_CLASS,
     "build_generic(results=None, operands=None, attributes=None, successors=None, "
     "regions=None, loc=None, ip=None): the operation of this class, from _ODS_* metadata."},
    {"parse", TP_FASTFN(opview_parse), TP_FAST | METH_CLASS,
     "parse(source, *, source_name='', context=None): one operation of this class."},
    TP_METHODS_END,
};

static PyGetSetDef opview_getset[] = {
    {"operation", opview_operation, NULL, "The Operation object.", NULL},
    {"opview", opview_opview, NULL, "The OpView itself.", NULL},
    {"successors", op_successors, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot opview_slots[] = {
    {Py_tp_new, opview_new},
    {Py_tp_init, opview_init},
    {Py_tp_dealloc, op_dealloc},
    {Py_tp_methods, opview_methods},
    {Py_tp_getset, opview_getset},
    {Py_tp_doc, "An operation seen through its dialect class; base of generated op classes."},
    {0, NULL},
};

PyType_Spec tp_opview_spec = {"tether.ir.OpView", sizeof(TpOp), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, opview_slots};

/* ---- OpAttributeMap -------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD PyObject *op; /* Operation */
} TpAttrMap;

static PyObject *op_attributes(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  (void)raw;
  PyObject *op = tp_wrap_operation(OP(self)->h);
  if (!op) return NULL;
  TpAttrMap *m = PyObject_GC_New(TpAttrMap, tp.OpAttributeMap);
  if (!m) {
    Py_DECREF(op);
    return NULL;
  }
  m->op = op;
  PyObject_GC_Track(m);
  return (PyObject *)m;
}

static int attrmap_traverse(TpAttrMap *m, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(m));
  Py_VISIT(m->op);
  return 0;
}

static int attrmap_clear(TpAttrMap *m) {
  Py_CLEAR(m->op);
  return 0;
}

static void attrmap_dealloc(TpAttrMap *m) {
  PyObject_GC_UnTrack(m);
  attrmap_clear(m);
  PyTypeObject *t = Py_TYPE(m);
  t->tp_free(m);
  Py_DECREF(t);
}

#define MAP_OP(m, raw, err)                                                                        \
  MlirOperation raw;                                                                               \
  do {                                                                                             \
    int rc_ = tether_op_get(OP((m)->op)->h, &raw);                                                 \
    if (rc_ != TETHER_OK) {                                                                        \
      TP_RAISE_RC(rc_, OP((m)->op)->h);                                                            \
      return err;                                                                                  \
    }                                                                                              \
  } while (0)

static Py_ssize_t attrmap_len(TpAttrMap *m) {
  MAP_OP(m, raw, -1);
  return mlirOperationGetNumAttributes(raw);
}

static PyObject *attrmap_item(TpAttrMap *m, Py_ssize_t i) {
  MAP_OP(m, raw, NULL);
  intptr_t n = mlirOperationGetNumAttributes(raw);
  if (i < 0 || i >= n) /* sq_item: a negative index was already adjusted */
    return PyErr_Format(PyExc_IndexError, "attempt to access out of bounds attribute");
  PyObject *ctx = ctx_of_handle(OP(m->op)->h);
  if (!ctx) return NULL;
  MAP_OP(m, raw2, NULL); /* ctx_of_handle may run Python code: read the raw pointer again */
  PyObject *r = tp_wrap_named_attr(ctx, mlirOperationGetAttribute(raw2, i));
  Py_DECREF(ctx);
  return r;
}

static PyObject *attrmap_subscript(TpAttrMap *m, PyObject *key) {
  if (!PyUnicode_Check(key)) {
    if (PyIndex_Check(key)) {
      Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
      if (i == -1 && PyErr_Occurred()) return NULL;
      if (i < 0) {
        Py_ssize_t n = attrmap_len(m);
        if (n < 0) return NULL;
        i += n;
      }
      return attrmap_item(m, i);
    }
    return tp_type_error("attribute name", "a str", key);
  }
  MlirStringRef s;
  if (!tp_arg_str(key, "name", &s)) return NULL;
  PyObject *ctx = ctx_of_handle(OP(m->op)->h);
  if (!ctx) return NULL;
  MAP_OP(m, raw, (Py_DECREF(ctx), NULL));
  MlirAttribute a = mlirOperationGetAttributeByName(raw, s);
  PyObject *r;
  if (mlirAttributeIsNull(a))
    r = PyErr_Format(PyExc_KeyError, "attempt to access a non-existent attribute");
  else
    r = tp_wrap_attr(ctx, a);
  Py_DECREF(ctx);
  return r;
}

static int attrmap_ass(TpAttrMap *m, PyObject *key, PyObject *v) {
  if (!PyUnicode_Check(key)) return tp_type_error("attribute name", "a str", key), -1;
  MlirStringRef s;
  if (!tp_arg_str(key, "name", &s)) return -1;
  if (!v) {
    MAP_OP(m, raw, -1);
    tether_arena_touch(tether_handle_arena(OP(m->op)->h));
    /* Verifiers of nested operations assume their parent's inherent attributes: removing one may
     * crash MLIR's verifier (func.return reads func.func's function_type). */
    if (mlirOperationHasInherentAttributeByName(raw, s)) tether_handle_mark_suspect(OP(m->op)->h);
    if (!mlirOperationRemoveAttributeByName(raw, s)) {
      PyErr_SetString(PyExc_KeyError, "attempt to delete a non-existent attribute");
      return -1;
    }
    return 0;
  }
  MlirAttribute a;
  PyObject *actx;
  if (!tp_arg_attr(v, &a, &actx)) return -1;
  MAP_OP(m, raw, -1);
  if (((TpContext *)actx)->arena != tether_handle_arena(OP(m->op)->h)) {
    PyErr_SetString(PyExc_ValueError, "an Attribute of another context cannot be used here");
    return -1;
  }
  tether_arena_touch(tether_handle_arena(OP(m->op)->h));
  if (mlirOperationHasInherentAttributeByName(raw, s)) {
    MlirAttribute old = mlirOperationGetAttributeByName(raw, s);
    if (mlirAttributeIsNull(old) ||
        !mlirTypeIDEqual(mlirAttributeGetTypeID(old), mlirAttributeGetTypeID(a)))
      tether_handle_mark_suspect(OP(m->op)->h); /* an inherent attribute of another kind */
  }
  mlirOperationSetAttributeByName(raw, s, a);
  return 0;
}

static int attrmap_contains(TpAttrMap *m, PyObject *key) {
  if (!PyUnicode_Check(key)) return 0;
  MlirStringRef s;
  if (!tp_arg_str(key, "name", &s)) return -1;
  MAP_OP(m, raw, -1);
  return !mlirAttributeIsNull(mlirOperationGetAttributeByName(raw, s));
}

static PyType_Slot attrmap_slots[] = {
    {Py_tp_dealloc, attrmap_dealloc},
    {Py_tp_traverse, attrmap_traverse},
    {Py_tp_clear, attrmap_clear},
    {Py_mp_length, attrmap_len},
    {Py_sq_length, attrmap_len},
    {Py_sq_item, attrmap_item},
    {Py_mp_subscript, attrmap_subscript},
    {Py_mp_ass_subscript, attrmap_ass},
    {Py_sq_contains, attrmap_contains},
    {Py_tp_doc, "op.attributes: by name (str) -> Attribute, by index (int) -> NamedAttribute."},
    {0, NULL},
};

static PyType_Spec attrmap_spec = {
    "tether.ir.OpAttributeMap", sizeof(TpAttrMap), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, attrmap_slots};

/* ---- Module ---------------------------------------------------------------------------------- */

PyObject *tp_wrap_module(tether_op *h) {
  if (!h) Py_RETURN_NONE;
  TpOp *self = (TpOp *)tp.Module->tp_alloc(tp.Module, 0);
  if (!self) return NULL;
  self->pin = tp_pin(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->h = h;
  live_add(&live_modules, self);
  return (PyObject *)self;
}

static void module_dealloc(TpOp *self) {
  live_remove(self);
  if (self->h && self->pin >= 0) tp_unpin(self->pin);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyObject *module_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"asm", "context", NULL};
  PyObject *a[2];
  if (!tp_fastargs("parse", args, nargs, kwnames, names, 1, 2, a)) return NULL;
  MlirStringRef s;
  if (!tp_arg_str(a[0], "asm", &s)) return NULL;
  TpContext *ctx = tp_resolve_context(a[1]);
  if (!ctx) return NULL;
  tp_errcap cap;
  tp_errcap_begin(&cap, ctx);
  tether_op *op;
  int rc = tether_module_parse(ctx->arena, s.data, s.length, &op);
  if (rc == TETHER_EPARSE) return tp_errcap_raise(&cap, "Unable to parse module assembly");
  Py_XDECREF(tp_errcap_end(&cap));
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  return tp_wrap_module(op);
}

static PyObject *module_create(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"loc", NULL};
  PyObject *a[1];
  if (!tp_fastargs("create", args, nargs, kwnames, names, 0, 1, a)) return NULL;
  PyObject *lo = tp_resolve_loc(a[0]);
  if (!lo) return NULL;
  TpContext *ctx = (TpContext *)TP_CTX(lo);
  tether_loc *l;
  int rc = tether_loc_wrap(ctx->arena, (MlirLocation){TP_PTR(lo)}, &l);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  tether_op *op;
  rc = tether_module_create(ctx->arena, l, &op);
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  return tp_wrap_module(op);
}

static PyObject *module_operation(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  (void)raw;
  return tp_wrap_operation(OP(self)->h);
}

static PyObject *module_body(PyObject *self, void *c) {
  (void)c;
  tether_region *r;
  tether_block *b;
  TP_CALL(tether_op_region(OP(self)->h, 0, &r), OP(self)->h);
  TP_CALL(tether_region_first_block(r, &b), OP(self)->h);
  return tp_wrap_block(b);
}

static PyObject *module_context(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  (void)raw;
  return ctx_of_handle(OP(self)->h);
}

static PyObject *module_capsule(PyObject *self, void *c) {
  (void)c;
  SELF_OP(self, raw);
  tether_arena_touch(tether_handle_arena(OP(self)->h));
  return tp_capsule_with_owner(raw.ptr, "mlir.ir.Module._CAPIPtr", self);
}

static PyObject *module_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.Module)) return Py_NewRef(owner);
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Module._CAPIPtr");
  if (!p) return NULL;
  MlirOperation raw = {p};
  tether_arena *a = tether_arena_of_context(mlirOperationGetContext(raw));
  tether_op *h;
  if (!a || tether_op_wrap(a, raw, &h) != TETHER_OK)
    return PyErr_Format(PyExc_ValueError,
                        "the capsule's module is not IR a tether Context holds (a module made "
                        "elsewhere cannot be adopted safely)");
  return tp_wrap_module(h);
}

static PyObject *module_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  SELF_OP(self, raw);
  mlirOperationDump(raw);
  Py_RETURN_NONE;
}

static PyObject *module_str(PyObject *self) { return op_str(self); }

static PyMethodDef module_methods[] = {
    {"parse", TP_FASTFN(module_parse), TP_FAST | METH_STATIC,
     "parse(asm, context=None): MLIRError on bad input."},
    {"create", TP_FASTFN(module_create), TP_FAST | METH_STATIC,
     "create(loc=None): an empty module."},
    {"_CAPICreate", (PyCFunction)module_from_capsule, METH_O | METH_STATIC, NULL},
    {"dump", (PyCFunction)module_dump, METH_NOARGS, "Prints the module to stderr."},
    TP_METHODS_END,
};

static PyGetSetDef module_getset[] = {
    {"operation", module_operation, NULL, "The builtin.module operation.", NULL},
    {"body", module_body, NULL, "The module's block.", NULL},
    {"context", module_context, NULL, NULL, NULL},
    {"_CAPIPtr", module_capsule, NULL, NULL, NULL},
    TP_GETSET_END,
};

static PyType_Slot module_slots[] = {
    {Py_tp_new, opbase_new},
    {Py_tp_dealloc, module_dealloc},
    {Py_tp_str, module_str},
    {Py_tp_methods, module_methods},
    {Py_tp_getset, module_getset},
    {Py_tp_doc, "A builtin.module: Module.parse(), Module.create()."},
    {0, NULL},
};

PyType_Spec tp_module_spec = {"tether.ir.Module", sizeof(TpOp), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, module_slots};

/* ---- Operation.parse ------------------------------------------------------------------------- */

static PyObject *operation_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"source", "source_name", "context", NULL};
  PyObject *a[3];
  if (!tp_fastargs("parse", args, nargs, kwnames, names, 1, 1, a)) return NULL;
  MlirStringRef s, name = {"", 0};
  if (!tp_arg_str(a[0], "source", &s)) return NULL;
  if (a[1] && !tp_arg_str(a[1], "source_name", &name)) return NULL;
  TpContext *ctx = tp_resolve_context(a[2]);
  if (!ctx) return NULL;
  char *cname = PyMem_Malloc(name.length + 1);
  if (!cname) return PyErr_NoMemory();
  memcpy(cname, name.data, name.length);
  cname[name.length] = 0;
  tp_errcap cap;
  tp_errcap_begin(&cap, ctx);
  tether_op *op;
  int rc = tether_op_parse_named(ctx->arena, s.data, s.length, cname, &op);
  PyMem_Free(cname);
  if (rc == TETHER_EPARSE) return tp_errcap_raise(&cap, "Unable to parse operation assembly");
  Py_XDECREF(tp_errcap_end(&cap));
  if (rc != TETHER_OK) return tp_raise(rc, NULL, ctx->arena);
  return tp_wrap_op(op);
}

/* ---- AsmState -------------------------------------------------------------------------------- */

void tp_asm_flags_for(void *handle, MlirOpPrintingFlags f) {
  /* MLIR makes an AsmState by verifying its scope first (the generic form when that fails), then
   * asking every operation's OpAsmOpInterface for names, which may crash on operations that do
   * not verify. IR its verifier cannot run on (uses of other IR, a verifier that crashes) is
   * neither verified nor named: the generic form, told it is verified. */
  if (tether_handle_has_foreign_uses(handle)) {
    mlirOpPrintingFlagsAssumeVerified(f);
    mlirOpPrintingFlagsPrintGenericOpForm(f);
  }
}

static PyObject *asmstate_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static const char *const names[] = {"value", "use_local_scope", NULL};
  PyObject *a[2];
  int local = 0;
  if (!tp_args("AsmState", args, kw, names, 1, 2, a) || (a[1] && !tp_arg_bool(a[1], &local)))
    return NULL;
  PyObject *o = a[0];
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  if (local) mlirOpPrintingFlagsUseLocalScope(f);
  MlirAsmState st;
  if (tp_is(o, tp.Value)) {
    tether_value *h;
    MlirValue raw;
    if (!tp_arg_value(o, &h, &raw)) {
      mlirOpPrintingFlagsDestroy(f);
      return NULL;
    }
    /* An argument of a block no operation owns has no printing scope: MLIR would crash. */
    if (mlirValueIsABlockArgument(raw) &&
        mlirOperationIsNull(mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(raw)))) {
      mlirOpPrintingFlagsDestroy(f);
      return PyErr_Format(PyExc_ValueError,
                          "an argument of a block that no operation owns has no AsmState");
    }
    tp_asm_flags_for(h, f);
    st = mlirAsmStateCreateForValue(raw, f);
  } else {
    tether_op *h;
    MlirOperation raw;
    if (!tp_arg_op(o, &h, &raw)) {
      mlirOpPrintingFlagsDestroy(f);
      return NULL;
    }
    tp_asm_flags_for(h, f);
    st = mlirAsmStateCreateForOperation(raw, f);
  }
  mlirOpPrintingFlagsDestroy(f);
  TpAsmState *self = (TpAsmState *)type->tp_alloc(type, 0);
  if (!self) {
    mlirAsmStateDestroy(st);
    return NULL;
  }
  self->state = st;
  self->owner = Py_NewRef(o);
  return (PyObject *)self;
}

static void asmstate_dealloc(TpAsmState *self) {
  if (self->state.ptr) mlirAsmStateDestroy(self->state);
  Py_CLEAR(self->owner);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyType_Slot asmstate_slots[] = {
    {Py_tp_new, asmstate_new},
    {Py_tp_dealloc, asmstate_dealloc},
    {Py_tp_doc, "AsmState(value_or_op, use_local_scope=False): printing state for names."},
    {0, NULL},
};

static PyType_Spec asmstate_spec = {"tether.ir.AsmState", sizeof(TpAsmState), 0, Py_TPFLAGS_DEFAULT,
                                    asmstate_slots};

/* The MlirAsmState of an AsmState object, or NULL with TypeError. */
MlirAsmState *tp_arg_asm_state(PyObject *o) {
  if (!tp_is(o, AsmStateType)) return tp_type_error("state", "an AsmState", o), NULL;
  return &((TpAsmState *)o)->state;
}

/* ---- operation class registry ---------------------------------------------------------------- */

static PyObject *fn_register_operation_class(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  static const char *const names[] = {"name", "cls", "replace", NULL};
  PyObject *a[3];
  int replace = 0;
  if (!tp_fastargs("_register_operation_class", args, nargs, NULL, names, 2, 3, a)) return NULL;
  if (!PyUnicode_Check(a[0])) return tp_type_error("name", "a str", a[0]);
  if (a[2] && !tp_arg_bool(a[2], &replace)) return NULL;
  PyObject *name = a[0], *cls = a[1];
  if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, tp.OpView))
    return tp_type_error("operation class", "a subclass of OpView", cls);
  PyObject *old = PyDict_GetItemWithError(tp.op_classes, name);
  if (old && !replace && old != cls)
    return PyErr_Format(PyExc_RuntimeError,
                        "Operation '%U' is already registered to %R. Use replace=True to replace.",
                        name, old);
  if (PyErr_Occurred() || PyDict_SetItem(tp.op_classes, name, cls) < 0) return NULL;
  op_class_generation++;
  Py_RETURN_NONE;
}

static PyObject *fn_set_dialect_loader(PyObject *m, PyObject *fn) {
  (void)m;
  Py_XSETREF(tp.dialect_loader, Py_NewRef(fn));
  op_class_generation++;
  Py_RETURN_NONE;
}

static PyMethodDef op_functions[] = {
    {"_register_operation_class", TP_FASTFN(fn_register_operation_class), METH_FASTCALL, NULL},
    {"_set_dialect_loader", fn_set_dialect_loader, METH_O, NULL},
    TP_METHODS_END,
};

int tp_init_ops(PyObject *m) {
  if (tp_add_type(m, &tp_opbase_spec, NULL, &tp.OperationBase) < 0 ||
      tp_add_type(m, &tp_operation_spec, (PyObject *)tp.OperationBase, &tp.Operation) < 0 ||
      tp_add_type(m, &tp_opview_spec, (PyObject *)tp.OperationBase, &tp.OpView) < 0 ||
      tp_add_type(m, &tp_module_spec, NULL, &tp.Module) < 0 ||
      tp_add_type(m, &attrmap_spec, NULL, &tp.OpAttributeMap) < 0 ||
      tp_add_type(m, &asmstate_spec, NULL, &AsmStateType) < 0)
    return -1;
  PyObject *regions = Py_BuildValue("(iO)", 0, Py_True);
  if (!regions || PyObject_SetAttrString((PyObject *)tp.OpView, "_ODS_REGIONS", regions) < 0 ||
      PyObject_SetAttrString((PyObject *)tp.OpView, "_ODS_OPERAND_SEGMENTS", Py_None) < 0 ||
      PyObject_SetAttrString((PyObject *)tp.OpView, "_ODS_RESULT_SEGMENTS", Py_None) < 0) {
    Py_XDECREF(regions);
    return -1;
  }
  Py_DECREF(regions);
  tp.op_classes = PyDict_New();
  tp.loaded_namespaces = PyDict_New();
  if (!tp.op_classes || !tp.loaded_namespaces) return -1;
  return PyModule_AddFunctions(m, op_functions);
}
