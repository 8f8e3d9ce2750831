/* opview.c: OpView (the base of dialect op classes) and the registry of op classes: which class an
 * operation's OpView has (the class registered for its name, loading its dialect's module first),
 * OpView(operation), OpView.parse and the cheaper instances of op classes that add no state.
 *
 * Invariant: the class of a name is looked up through a cache keyed by the name's identifier and
 * the registry's generation (every registration bumps it); a hit also compares the name's text, as
 * an identifier of a destroyed context may be reused for another name.
 */
#include "ir.h"

#include <string.h>

/* ---- the registry of op classes -------------------------------------------------------------- */

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
  PyObject *cls; /* borrowed from tpy.op_classes, or NULL for "none registered" */
} class_cache[CLASS_CACHE];

/* Loads the dialect module of a namespace once (tether.dialects.<ns>), so its classes register.
 * Runs Python code (an import, and whatever a collection during it runs). */
static void load_dialect(const char *name, Py_ssize_t length) {
  const char *dot = memchr(name, '.', (size_t)length);
  if (!dot || !tpy.dialect_loader || !tpy.loaded_namespaces) return;
  PyObject *ns = PyUnicode_FromStringAndSize(name, dot - name);
  if (!ns) {
    PyErr_Clear();
    return;
  }
  int seen = PyDict_Contains(tpy.loaded_namespaces, ns);
  if (seen == 0 && PyDict_SetItem(tpy.loaded_namespaces, ns, Py_True) == 0) {
    PyObject *exc_type, *exc, *tb;
    PyErr_Fetch(&exc_type, &exc, &tb);
    PyObject *r = PyObject_CallOneArg(tpy.dialect_loader, ns);
    if (!r) PyErr_WriteUnraisable(tpy.dialect_loader);
    Py_XDECREF(r);
    PyErr_Restore(exc_type, exc, tb);
  }
  Py_DECREF(ns);
}

PyObject *tpy_op_view_class(MlirOperation raw) {
  MlirIdentifier id = mlirOperationGetName(raw);
  size_t slot = ((uintptr_t)id.ptr >> 4) % CLASS_CACHE;
  MlirStringRef s = mlirIdentifierStr(id);
  if (class_cache[slot].id == id.ptr && class_cache[slot].gen == op_class_generation &&
      class_cache[slot].len == s.length && !memcmp(class_cache[slot].text, s.data, s.length))
    return class_cache[slot].cls ? class_cache[slot].cls : (PyObject *)tpy.OpView;
  /* Loading the dialect's module runs Python code, which may erase the operation: raw is not read
   * past this point. The name is copied into a str first (a str has no collector header: making
   * one runs no Python code). */
  PyObject *name = PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
  if (!name) {
    PyErr_Clear();
    return (PyObject *)tpy.OpView;
  }
  Py_ssize_t len;
  const char *text = PyUnicode_AsUTF8AndSize(name, &len);
  if (!text) {
    PyErr_Clear();
    Py_DECREF(name);
    return (PyObject *)tpy.OpView;
  }
  load_dialect(text, len);
  PyObject *cls = tpy.op_classes ? PyDict_GetItemWithError(tpy.op_classes, name) : NULL;
  if (PyErr_Occurred()) PyErr_Clear();
  /* The generation may have moved while the dialect loaded (it registers its classes): the entry
   * is made for the generation the lookup saw. */
  if ((size_t)len <= sizeof class_cache[slot].text) {
    memcpy(class_cache[slot].text, text, (size_t)len);
    class_cache[slot].len = (size_t)len;
    class_cache[slot].id = id.ptr;
    class_cache[slot].gen = op_class_generation;
    class_cache[slot].cls = cls;
  }
  Py_DECREF(name);
  return cls ? cls : (PyObject *)tpy.OpView;
}

static tpy_sig fn_register_operation_class_sig = TPY_SIG(
    "_register_operation_class(name: str, cls: type, replace: bool = False, /) -> None", NULL);

static PyObject *fn_register_operation_class(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  PyObject *a[3];
  int replace = 0;
  if (!tpy_fastargs(&fn_register_operation_class_sig, args, nargs, NULL, a, 3)) return NULL;
  if (!PyUnicode_Check(a[0])) return tpy_type_error("name", "a str", a[0]);
  if (a[2] && !tpy_arg_bool(a[2], &replace)) return NULL;
  PyObject *name = a[0], *cls = a[1];
  if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, tpy.OpView))
    return tpy_type_error("operation class", "a subclass of OpView", cls);
  PyObject *old = PyDict_GetItemWithError(tpy.op_classes, name);
  if (old && !replace && old != cls)
    return PyErr_Format(PyExc_RuntimeError,
                        "Operation '%U' is already registered to %R. Use replace=True to replace.",
                        name, old);
  if (PyErr_Occurred() || PyDict_SetItem(tpy.op_classes, name, cls) < 0) return NULL;
  op_class_generation++;
  Py_RETURN_NONE;
}

static PyObject *fn_set_dialect_loader(PyObject *m, PyObject *fn) {
  (void)m;
  Py_XSETREF(tpy.dialect_loader, Py_NewRef(fn));
  op_class_generation++;
  Py_RETURN_NONE;
}

static PyMethodDef op_functions[] = {
    {"_register_operation_class", TPY_FASTFN(fn_register_operation_class), METH_FASTCALL,
     TPY_DOC(fn_register_operation_class_sig)},
    {"_set_dialect_loader", fn_set_dialect_loader, METH_O,
     TPY_SIGDOC("_set_dialect_loader(loader: Callable[[str], Any], /) -> None", NULL)},
    TPY_METHODS_END,
};

/* ---- OpView ---------------------------------------------------------------------------------- */

/* Lets go of the operation self is a view of (OpView.__init__ called again on it). */
static void opview_release(TpOp *self) {
  Py_XDECREF(tpy_op_unpair_view(self));
  if (tether_handle_get_user(self->h) == self) tether_handle_set_user(self->h, NULL);
  if (self->pin >= 0) tpy_release(self->h);
}

/* self becomes the view of h. op (a reference stolen, may be NULL) is h's Operation object, which
 * the view then holds; without one, self is the handle's wrapper (h has none: a new operation).
 * 0, or -1 with MemoryError. */
static int opview_attach(PyObject *self, tether_op *h, TpOp *op) {
  if (op && tpy_op_pair_reserve() < 0) {
    Py_DECREF(op);
    return -1;
  }
  intptr_t pin = tpy_hold(h);
  if (pin < 0) {
    Py_XDECREF(op);
    PyErr_NoMemory();
    return -1;
  }
  if (TPY_OP(self)->h) /* initialized before */
    opview_release(TPY_OP(self));
  TPY_OP(self)->h = h;
  TPY_OP(self)->pin = pin;
  if (op)
    tpy_op_pair(TPY_OP(self), op);
  else
    tether_handle_set_user(h, self);
  return 0;
}

/* OpView(operation): self becomes the view of that operation. */
static int opview_view_of(PyObject *self, PyObject *operation) {
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(operation, &h, &raw)) return -1;
  if (TPY_OP(self)->h == h) return 0;
  TpOp *op = (TpOp *)tpy_wrap_operation(h);
  if (!op) return -1;
  return opview_attach(self, h, op);
}

#if TETHER_MLIR_VERSION >= 22
/* OpView(name, opRegionSpec, ...): what generated op classes call on MLIR 22; self becomes the
 * view of the operation built as build_generic builds it. */
static tpy_sig init_build_sig = TPY_SIG(
    "OpView(name: str, opRegionSpec: tuple[int, bool], operandSegmentSpecObj: Any = None, "
    "resultSegmentSpecObj: Any = None, results: Sequence[Type] | None = None, "
    "operands: Sequence[Value | Sequence[Value] | None] | None = None, "
    "attributes: Mapping[str, Attribute] | None = None, successors: Sequence[Block] | None = None, "
    "regions: int | None = None, loc: Location | None = None, ip: InsertionPoint | None = None)",
    NULL);
#define INIT_BUILD (&init_build_sig)
#else
#define INIT_BUILD NULL
#endif
/* OpView(operation): the view of an operation (tp_init, and the __init__ method). */
static tpy_sig init_sig = TPY_SIG_OR(
    "OpView(operation: _OperationBase)",
    "An operation seen through its dialect class; base of generated op classes.", INIT_BUILD);

#if TETHER_MLIR_VERSION >= 22

int tpy_opview_take(PyObject *self, tether_op *h) {
  /* A new operation has no wrapper (no Python code ran since it was made); should it have one,
   * self holds its Operation object as OpView(operation) does. */
  TpOp *op = NULL;
  if (tether_handle_get_user(h) && !(op = (TpOp *)tpy_wrap_operation(h))) return -1;
  return opview_attach(self, h, op);
}

static int opview_build(PyObject *self, PyObject *const *x) {
  tether_op *h;
  if (tpy_opview_build(x, &h) < 0) return -1;
  return tpy_opview_take(self, h);
}
#endif

/* OpView's tp_init: OpView(...) and the __init__ of subclasses that define none. One argument
 * (positional, or `operation=`) is OpView(operation); anything else (MLIR 22) the builder. */
static int opview_init(PyObject *self, PyObject *args, PyObject *kw) {
  PyObject *x[11];
#if TETHER_MLIR_VERSION >= 22
  Py_ssize_t nkw = kw ? PyDict_GET_SIZE(kw) : 0;
  if (PyTuple_GET_SIZE(args) + nkw != 1 || (nkw && !PyDict_GetItemString(kw, "operation"))) {
    if (!tpy_args(&init_build_sig, args, kw, x, 11)) return -1;
    return opview_build(self, x);
  }
#endif
  if (!tpy_args(&init_sig, args, kw, x, 1)) return -1;
  return opview_view_of(self, x[0]);
}

/* OpView.__init__ as a method (METH_COEXIST: it, not the slot's wrapper, is what the type's dict
 * holds): the same as tp_init, called as generated classes call it (super().__init__(name, ...,
 * results=..., ip=...)) without building a keyword dict. */
static PyObject *opview_init_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  PyObject *x[11];
#if TETHER_MLIR_VERSION >= 22
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + nkw != 1 ||
      (nkw && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "operation") != 0)) {
    if (!tpy_fastargs(&init_build_sig, args, nargs, kwnames, x, 11)) return NULL;
    return opview_build(self, x) < 0 ? NULL : Py_NewRef(Py_None);
  }
#endif
  if (!tpy_fastargs(&init_sig, args, nargs, kwnames, x, 1)) return NULL;
  return opview_view_of(self, x[0]) < 0 ? NULL : Py_NewRef(Py_None);
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
  TPY_CHECK_OP(self);
  return tpy_wrap_operation(TPY_OP(self)->h);
}

static PyObject *opview_opview(PyObject *self, void *c) {
  (void)c;
  return Py_NewRef(self);
}

/* OpView.parse: Operation.parse's parser (by that name), the result checked. */
static tpy_sig opview_parse_sig = TPY_SIG("parse(source: str | bytes, *, source_name: str = '', "
                                          "context: Context | None = None) -> Self",
                                          "One operation of this class.");

static PyObject *opview_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *op = tpy_operation_parse(NULL, args, nargs, kwnames);
  if (!op) return NULL;
  PyObject *want = PyObject_GetAttrString(cls, "OPERATION_NAME");
  tether_op *h;
  MlirOperation raw;
  PyObject *r = NULL;
  if (want && tpy_arg_op(op, &h, &raw)) {
    PyObject *got = tpy_op_name_str(raw);
    if (got) {
      int same = PyObject_RichCompareBool(want, got, Py_EQ);
      if (same == 1) {
        PyObject *view = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
        if (view) {
          TPY_OP(view)->pin = -1;
          if (opview_view_of(view, op) < 0) Py_CLEAR(view);
        }
        r = view;
      } else if (same == 0) {
        PyObject *msg = PyUnicode_FromFormat("Expected a '%U' op, got: '%U'", want, got);
        if (msg) {
          PyObject *e = PyList_New(0);
          if (e) tpy_raise_mlir_error(PyUnicode_AsUTF8(msg), e);
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
  PyTypeObject *base = tpy.OpView;
  if ((t->tp_flags & Py_TPFLAGS_HEAPTYPE) && PyType_IS_GC(t) && !PyType_IS_GC(base) &&
      t->tp_dictoffset == 0 && t->tp_weaklistoffset == base->tp_weaklistoffset &&
      t->tp_basicsize == base->tp_basicsize && t->tp_itemsize == 0 && !t->tp_finalize &&
      !t->tp_del) {
    t->tp_flags &= ~Py_TPFLAGS_HAVE_GC;
    t->tp_free = PyObject_Free; /* PyType_GenericAlloc's non-GC path is PyObject_Malloc */
    t->tp_traverse = NULL;
    t->tp_clear = NULL;
    /* subtype_dealloc would only find and call OpView's: no dict, slots, finalizer to handle. */
    t->tp_dealloc = (destructor)tpy_op_dealloc;
    /* No PyType_Modified: no attribute changed (the version tag keeps its caches). */
  }
#if TETHER_MLIR_VERSION >= 22
  tpy_ods_class_setup(t);
#endif
  Py_RETURN_NONE;
}

static PyMethodDef opview_methods[] = {
    {"__init__", TPY_FASTFN(opview_init_method), TPY_FAST | METH_COEXIST, TPY_DOC(init_sig)},
    {"__init_subclass__", (PyCFunction)(void (*)(void))opview_init_subclass,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     TPY_SIGDOC(
         "__init_subclass__(**kwargs: Any) -> None",
         "Makes op classes that add no instance state cheaper to instantiate (no GC header).")},
    {"build_generic", TPY_FASTFN(tpy_opview_build_generic), TPY_FAST | METH_CLASS,
     TPY_DOC(tpy_opview_build_generic_sig)},
    {"parse", TPY_FASTFN(opview_parse), TPY_FAST | METH_CLASS, TPY_DOC(opview_parse_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef opview_getset[] = {
    {"operation", opview_operation, NULL, TPY_PROP("Operation", "The Operation object."), NULL},
    {"opview", opview_opview, NULL, TPY_PROP("OpView", "The OpView itself."), NULL},
    {"successors", tpy_op_successors, NULL, TPY_PROP("OpSuccessors", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot opview_slots[] = {
    {Py_tp_new, opview_new},
    {Py_tp_init, opview_init},
    {Py_tp_dealloc, tpy_op_dealloc},
    {Py_tp_methods, opview_methods},
    {Py_tp_getset, opview_getset},
    {Py_tp_doc, TPY_DOC(init_sig)},
    {0, NULL},
};

static PyType_Spec tpy_opview_spec = {"tether.ir.OpView", sizeof(TpOp), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, opview_slots};

int tpy_init_opview(PyObject *m) {
  if (tpy_add_type(m, &tpy_opview_spec, (PyObject *)tpy.OperationBase, &tpy.OpView) < 0) return -1;
  PyObject *regions = Py_BuildValue("(iO)", 0, Py_True);
  if (!regions || PyObject_SetAttrString((PyObject *)tpy.OpView, "_ODS_REGIONS", regions) < 0 ||
      PyObject_SetAttrString((PyObject *)tpy.OpView, "_ODS_OPERAND_SEGMENTS", Py_None) < 0 ||
      PyObject_SetAttrString((PyObject *)tpy.OpView, "_ODS_RESULT_SEGMENTS", Py_None) < 0) {
    Py_XDECREF(regions);
    return -1;
  }
  Py_DECREF(regions);
  tpy.op_classes = PyDict_New();
  tpy.loaded_namespaces = PyDict_New();
  if (!tpy.op_classes || !tpy.loaded_namespaces) return -1;
  return PyModule_AddFunctions(m, op_functions);
}
