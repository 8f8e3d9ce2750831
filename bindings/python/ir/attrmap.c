/* attrmap.c: OpAttributeMap, op.attributes: an operation's attributes by name (str -> Attribute)
 * and by index (int -> NamedAttribute), settable and deletable by name; on MLIR 22 also keys(),
 * values(), items(), get() and iteration over the names.
 *
 * Invariants: the map holds the Operation object, and reads the operation through the arena's
 * guarded access at every use (an erased operation raises InvalidatedError). Setting or removing
 * an inherent attribute that nested verifiers may read (of another kind, or gone) marks the
 * operation suspect, so the arena verifies in a child before MLIR's verifier runs on it.
 */
#include "ir.h"

typedef struct {
  PyObject_HEAD PyObject *op; /* Operation */
} TpAttrMap;

PyObject *tpy_op_attributes(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK_OP(self);
  PyObject *op = tpy_wrap_operation(TPY_OP(self)->h);
  if (!op) return NULL;
  TpAttrMap *m = PyObject_GC_New(TpAttrMap, tpy.OpAttributeMap);
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

#define MAP_OP(m, raw, err)                                                                        \
  MlirOperation raw;                                                                               \
  do {                                                                                             \
    int rc_ = tether_op_get(TPY_OP((m)->op)->h, &raw);                                             \
    if (rc_ != TETHER_OK) {                                                                        \
      TPY_RAISE_RC(rc_, TPY_OP((m)->op)->h);                                                       \
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
  PyObject *ctx = tpy_context_of_handle(TPY_OP(m->op)->h);
  if (!ctx) return NULL;
  MAP_OP(m, raw2, NULL); /* ctx_of_handle may run Python code: read the raw pointer again */
  PyObject *r = tpy_wrap_named_attr(ctx, mlirOperationGetAttribute(raw2, i));
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
    return tpy_type_error("attribute name", "a str", key);
  }
  MlirStringRef s;
  if (!tpy_arg_str(key, "name", &s)) return NULL;
  PyObject *ctx = tpy_context_of_handle(TPY_OP(m->op)->h);
  if (!ctx) return NULL;
  MAP_OP(m, raw, (Py_DECREF(ctx), NULL));
  MlirAttribute a = mlirOperationGetAttributeByName(raw, s);
  PyObject *r;
  if (mlirAttributeIsNull(a))
    r = PyErr_Format(PyExc_KeyError, "attempt to access a non-existent attribute");
  else
    r = tpy_wrap_attr(ctx, a);
  Py_DECREF(ctx);
  return r;
}

static void discard(MlirStringRef s, void *ud) {
  (void)s;
  (void)ud;
}

/* As printing does: an operation that does not verify is printed in the generic form (safe), one
 * that verifies by its custom printer. */
static void print_op(void *op) {
  if (!mlirOperationVerify(*(MlirOperation *)op)) return;
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsAssumeVerified(f);
  mlirOperationPrintWithFlags(*(MlirOperation *)op, f, discard, NULL);
  mlirOpPrintingFlagsDestroy(f);
}

/* Whether printing op crashes now that its inherent attribute `name` is gone: a property with a
 * default value left null, with which the operation still verifies and MLIR's custom printer
 * crashes (arith.muli's overflowFlags; upstream crashes printing it). Tried in a child once per
 * operation name and attribute (tether_probe). */
static bool printer_crashes_without(MlirOperation op, MlirStringRef name) {
  MlirStringRef opname = mlirIdentifierStr(mlirOperationGetName(op));
  static const char tag[] = "tether print without inherent\n";
  size_t n = sizeof tag - 1 + opname.length + 1 + name.length;
  char *key = PyMem_Malloc(n);
  if (!key) return false;
  memcpy(key, tag, sizeof tag - 1);
  memcpy(key + sizeof tag - 1, opname.data, opname.length);
  key[sizeof tag - 1 + opname.length] = '\n';
  memcpy(key + sizeof tag + opname.length, name.data, name.length);
  int r = tether_probe(key, n, print_op, &op);
  PyMem_Free(key);
  return r == 0;
}

static int attrmap_ass(TpAttrMap *m, PyObject *key, PyObject *v) {
  if (!PyUnicode_Check(key)) return tpy_type_error("attribute name", "a str", key), -1;
  MlirStringRef s;
  if (!tpy_arg_str(key, "name", &s)) return -1;
  if (!v) {
    MAP_OP(m, raw, -1);
    tether_arena_touch(tether_handle_arena(TPY_OP(m->op)->h));
    /* Verifiers of nested operations assume their parent's inherent attributes: removing one may
     * crash MLIR's verifier (func.return reads func.func's function_type). */
    bool inherent = mlirOperationHasInherentAttributeByName(raw, s);
    MlirAttribute old = inherent ? mlirOperationGetAttributeByName(raw, s) : (MlirAttribute){NULL};
    if (inherent) tether_handle_mark_suspect(TPY_OP(m->op)->h);
    if (!mlirOperationRemoveAttributeByName(raw, s)) {
      PyErr_SetString(PyExc_KeyError, "attempt to delete a non-existent attribute");
      return -1;
    }
    if (inherent && !mlirAttributeIsNull(old) && printer_crashes_without(raw, s)) {
      mlirOperationSetAttributeByName(raw, s, old); /* as it was */
      MlirStringRef on = mlirIdentifierStr(mlirOperationGetName(raw));
      PyObject *an = PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
      PyObject *opn = PyUnicode_FromStringAndSize(on.data, (Py_ssize_t)on.length);
      if (an && opn)
        PyErr_Format(PyExc_ValueError,
                     "removing the inherent attribute '%U' leaves '%U' in a state MLIR's printer "
                     "crashes on (an attribute with a default value): set it to its default "
                     "instead; the operation is unchanged",
                     an, opn);
      Py_XDECREF(an);
      Py_XDECREF(opn);
      return -1;
    }
    return 0;
  }
  MlirAttribute a;
  PyObject *actx;
  if (!tpy_arg_attr(v, &a, &actx)) return -1;
  MAP_OP(m, raw, -1);
  if (((TpContext *)actx)->arena != tether_handle_arena(TPY_OP(m->op)->h)) {
    PyErr_SetString(PyExc_ValueError, "an Attribute of another context cannot be used here");
    return -1;
  }
  tether_arena_touch(tether_handle_arena(TPY_OP(m->op)->h));
  if (mlirOperationHasInherentAttributeByName(raw, s)) {
    MlirAttribute old = mlirOperationGetAttributeByName(raw, s);
    if (mlirAttributeIsNull(old) ||
        !mlirTypeIDEqual(mlirAttributeGetTypeID(old), mlirAttributeGetTypeID(a)))
      tether_handle_mark_suspect(TPY_OP(m->op)->h); /* an inherent attribute of another kind */
  }
  mlirOperationSetAttributeByName(raw, s, a);
  return 0;
}

static int attrmap_contains(TpAttrMap *m, PyObject *key) {
  if (!PyUnicode_Check(key)) return 0;
  MlirStringRef s;
  if (!tpy_arg_str(key, "name", &s)) return -1;
  MAP_OP(m, raw, -1);
  return !mlirAttributeIsNull(mlirOperationGetAttributeByName(raw, s));
}

#if TETHER_MLIR_VERSION >= 22
/* What keys(), values(), items() and iteration list (MLIR 22): 0 names, 1 attributes, 2 (name,
 * attribute) tuples. The attributes are read first (no Python code runs while MLIR is read; names
 * and attributes belong to the context, which the operation keeps). */
static PyObject *attrmap_list(TpAttrMap *m, int what) {
  PyObject *ctx = tpy_context_of_handle(TPY_OP(m->op)->h);
  if (!ctx) return NULL;
  MAP_OP(m, raw, (Py_DECREF(ctx), NULL));
  intptr_t n = mlirOperationGetNumAttributes(raw);
  MlirNamedAttribute *all = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof *all);
  if (!all) {
    Py_DECREF(ctx);
    return PyErr_NoMemory();
  }
  for (intptr_t i = 0; i < n; i++) all[i] = mlirOperationGetAttribute(raw, i);
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++) {
    PyObject *name = what != 1 ? tpy_str_from_ref(mlirIdentifierStr(all[i].name)) : NULL;
    PyObject *attr = what != 0 ? tpy_wrap_attr(ctx, all[i].attribute) : NULL;
    PyObject *e = NULL;
    if (what == 0)
      e = name;
    else if (what == 1)
      e = attr;
    else if (name && attr)
      e = PyTuple_Pack(2, name, attr);
    if (what == 2) {
      Py_XDECREF(name);
      Py_XDECREF(attr);
    }
    if (!e)
      Py_CLEAR(l);
    else
      PyList_SET_ITEM(l, i, e);
  }
  PyMem_RawFree(all);
  Py_DECREF(ctx);
  return l;
}

static PyObject *attrmap_keys(TpAttrMap *m, PyObject *unused) {
  (void)unused;
  return attrmap_list(m, 0);
}

static PyObject *attrmap_values(TpAttrMap *m, PyObject *unused) {
  (void)unused;
  return attrmap_list(m, 1);
}

static PyObject *attrmap_items(TpAttrMap *m, PyObject *unused) {
  (void)unused;
  return attrmap_list(m, 2);
}

static PyObject *attrmap_iter(TpAttrMap *m) {
  PyObject *keys = attrmap_list(m, 0);
  PyObject *it = keys ? PyObject_GetIter(keys) : NULL;
  Py_XDECREF(keys);
  return it;
}

static tpy_sig attrmap_get_sig =
    TPY_SIG("get(key: str, default: Attribute | None = None) -> Attribute | None",
            "The attribute named key, or default.");

/* get(key, default=None): the attribute named key, or default. */
static PyObject *attrmap_get(TpAttrMap *m, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&attrmap_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  if (!PyUnicode_Check(a[0])) return tpy_type_error("key", "a str", a[0]);
  int has = attrmap_contains(m, a[0]);
  if (has < 0) return NULL;
  if (!has) return Py_NewRef(a[1] ? a[1] : Py_None);
  return attrmap_subscript(m, a[0]);
}

static PyMethodDef attrmap_methods[] = {
    {"keys", (PyCFunction)attrmap_keys, METH_NOARGS,
     TPY_SIGDOC("keys() -> list[str]", "The attributes' names, as a list.")},
    {"values", (PyCFunction)attrmap_values, METH_NOARGS,
     TPY_SIGDOC("values() -> list[Attribute]", "The attributes, as a list.")},
    {"items", (PyCFunction)attrmap_items, METH_NOARGS,
     TPY_SIGDOC("items() -> list[tuple[str, Attribute]]", "(name, attribute) pairs, as a list.")},
    {"get", TPY_FASTFN(attrmap_get), TPY_FAST, TPY_DOC(attrmap_get_sig)},
    TPY_METHODS_END,
};
#endif

static PyType_Slot attrmap_slots[] = {
#if TETHER_MLIR_VERSION >= 22
    {Py_tp_iter, attrmap_iter},
    {Py_tp_methods, attrmap_methods},
#endif
    {Py_tp_dealloc, tpy_gc_dealloc},
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

int tpy_init_attrmap(PyObject *m) {
  return tpy_add_type(m, &attrmap_spec, NULL, &tpy.OpAttributeMap);
}
