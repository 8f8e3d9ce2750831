/* arith.c: `arith.ConstantOp(type, value)` without a Python frame for its common case, in
 * `_tether._arith` (used by tether.dialects.arith).
 *
 * The dialect's ConstantOp extends the generated class with `__init__(self, result, value=None, *,
 * loc=None, ip=None)` (upstream's extra): an int or a float becomes an IntegerAttr or FloatAttr of
 * the result type, arrays a dense attribute, and the generated builder makes the op. Frontends
 * make constants more than any other op, and that __init__ was half of the row's time above MLIR's
 * own work (issue 37). `_constant_init(generated, fallback, IntegerAttr.get, FloatAttr.get)` is the
 * __init__ of the class it is set
 * on: called as `ConstantOp(t, v)` on that very class, with v exactly an int or a float and no
 * keyword, it makes the attribute through IntegerAttr.get / FloatAttr.get and calls the generated
 * builder, as the Python __init__ does for that case; every other call (a subclass, keywords, an
 * attribute, arrays, bools) goes to `fallback`, the Python __init__, unchanged. `__wrapped__` is
 * the fallback, so inspect.signature and help show its signature and text.
 */
#include "dialects.h"

#include <stddef.h>
#include <structmember.h>

typedef struct {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject *generated;           /* the generated class's __init__ (the ODS builder) */
  PyObject *fallback;            /* the Python __init__ */
  PyObject *owner;               /* the class it was set on (__set_name__), or NULL */
  PyObject *int_get, *float_get; /* IntegerAttr.get and FloatAttr.get */
} TpConstantInit;

static PyTypeObject *constant_init_type;

static PyObject *constant_init_call(PyObject *o, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames) {
  TpConstantInit *c = (TpConstantInit *)o;
  if (!c->fallback) /* cleared by the cycle collector (its class is going) */
    return PyErr_Format(PyExc_RuntimeError, "ConstantOp.__init__ was cleared");
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs == 3 && !kwnames && c->owner && (PyObject *)Py_TYPE(args[0]) == c->owner) {
    PyObject *get = PyLong_CheckExact(args[2])    ? c->int_get
                    : PyFloat_CheckExact(args[2]) ? c->float_get
                                                  : NULL;
    if (get) {
      PyObject *attr = PyObject_Vectorcall(get, args + 1, 2, NULL);
      if (!attr) return NULL;
      PyObject *call[2] = {args[0], attr};
      PyObject *r = PyObject_Vectorcall(c->generated, call, 2, NULL);
      Py_DECREF(attr);
      return r;
    }
  }
  return PyObject_Vectorcall(c->fallback, args, nargsf, kwnames);
}

static PyObject *constant_init_get(PyObject *o, PyObject *obj, PyObject *type) {
  (void)type;
  if (!obj || obj == Py_None) return Py_NewRef(o);
  return PyMethod_New(o, obj);
}

static PyObject *constant_init_set_name(PyObject *o, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyType_Check(args[0]))
    return PyErr_Format(PyExc_TypeError, "__set_name__(owner, name)");
  Py_XSETREF(((TpConstantInit *)o)->owner, Py_NewRef(args[0]));
  Py_RETURN_NONE;
}

/* What the fallback says of itself: its name, text and signature (through __wrapped__). */
static PyObject *constant_init_getattro(PyObject *o, PyObject *name) {
  PyObject *r = PyObject_GenericGetAttr(o, name);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyObject *fallback = ((TpConstantInit *)o)->fallback;
  if (!fallback) return NULL; /* cleared: the AttributeError stands */
  PyErr_Clear();
  return PyObject_GetAttr(fallback, name);
}

static int constant_init_clear(TpConstantInit *c) {
  Py_CLEAR(c->generated);
  Py_CLEAR(c->fallback);
  Py_CLEAR(c->owner);
  Py_CLEAR(c->int_get);
  Py_CLEAR(c->float_get);
  return 0;
}

static void constant_init_dealloc(TpConstantInit *c) {
  PyObject_GC_UnTrack(c);
  constant_init_clear(c);
  PyTypeObject *t = Py_TYPE(c);
  PyObject_GC_Del(c);
  Py_DECREF(t);
}

static int constant_init_traverse(TpConstantInit *c, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(c));
  Py_VISIT(c->generated);
  Py_VISIT(c->fallback);
  Py_VISIT(c->owner);
  Py_VISIT(c->int_get);
  Py_VISIT(c->float_get);
  return 0;
}

static PyMethodDef constant_init_methods[] = {
    {"__set_name__", TPY_FASTFN(constant_init_set_name), METH_FASTCALL,
     TPY_SIGDOC("__set_name__(owner: type, name: str, /) -> None",
                "Remembers the class: only its own instances take the fast path.")},
    TPY_METHODS_END,
};

static PyObject *constant_init_doc(PyObject *o, void *c) {
  (void)c;
  PyObject *fallback = ((TpConstantInit *)o)->fallback;
  if (!fallback) Py_RETURN_NONE;
  return PyObject_GetAttrString(fallback, "__doc__");
}

static PyGetSetDef constant_init_getset[] = {
    {"__doc__", constant_init_doc, NULL, TPY_PROP("str | None", "The fallback's."), NULL},
    TPY_GETSET_END,
};

static PyMemberDef constant_init_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(TpConstantInit, vectorcall), READONLY, NULL},
    {"__wrapped__", T_OBJECT, offsetof(TpConstantInit, fallback), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot constant_init_slots[] = {
    {Py_tp_dealloc, constant_init_dealloc}, {Py_tp_traverse, constant_init_traverse},
    {Py_tp_clear, constant_init_clear},     {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, constant_init_get},   {Py_tp_getattro, constant_init_getattro},
    {Py_tp_methods, constant_init_methods}, {Py_tp_members, constant_init_members},
    {Py_tp_getset, constant_init_getset},   {0, NULL},
};

static PyType_Spec constant_init_spec = {
    "tether.dialects.arith._ConstantInit", sizeof(TpConstantInit), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
        Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    constant_init_slots};

/* _constant_init(generated, fallback, int_get, float_get, /) */
static PyObject *fn_constant_init(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  int ok = nargs == 4;
  for (Py_ssize_t i = 0; ok && i < nargs; i++) ok = PyCallable_Check(args[i]);
  if (!ok)
    return PyErr_Format(PyExc_TypeError, "_constant_init(generated, fallback, int_get, "
                                         "float_get, /): four callables");
  TpConstantInit *c = PyObject_GC_New(TpConstantInit, constant_init_type);
  if (!c) return NULL;
  c->vectorcall = constant_init_call;
  c->generated = Py_NewRef(args[0]);
  c->fallback = Py_NewRef(args[1]);
  c->owner = NULL;
  c->int_get = Py_NewRef(args[2]);
  c->float_get = Py_NewRef(args[3]);
  PyObject_GC_Track(c);
  return (PyObject *)c;
}

static PyMethodDef arith_functions[] = {
    {"_constant_init", TPY_FASTFN(fn_constant_init), METH_FASTCALL,
     TPY_SIGDOC("_constant_init(generated: Callable[..., None], fallback: Callable[..., None], "
                "int_get: Callable[..., Attribute], float_get: Callable[..., Attribute], /) -> "
                "Callable[..., None]",
                "ConstantOp's __init__: the int and float case in C, the rest by fallback.")},
    TPY_METHODS_END,
};

int tpy_init_arith(PyObject *m) {
  constant_init_type = (PyTypeObject *)PyType_FromSpec(&constant_init_spec);
  if (!constant_init_type) return -1;
  PyObject *arith = PyModule_New("_arith");
  if (!arith) return -1;
  int bad = PyModule_AddFunctions(arith, arith_functions) < 0 ||
            PyModule_AddObjectRef(m, "_arith", arith) < 0;
  Py_DECREF(arith);
  return bad ? -1 : 0;
}
