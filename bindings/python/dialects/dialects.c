/* dialects.c: what the files of dialects/ share: a module object per dialect holding its classes,
 * the `get(context=None)` of types without parameters, and the arguments that name a dialect's
 * context (each loads the dialect first: MLIR makes a dialect's types only once it is loaded).
 */
#include "dialects.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

/* The type as an object of cls: classes without a TypeID have no caster. */
PyObject *tpy_dialect_wrap_as(PyObject *cls, PyObject *ctx, MlirType t) {
  return tpy_cast_to(cls, tpy_wrap_type(ctx, t));
}

PyObject *tpy_dialect_context(PyObject *c, const char *dialect, MlirContext *raw) {
  PyObject *ctx = (PyObject *)tpy_resolve_context(c);
  if (!ctx) return NULL;
  *raw = tpy_ctx_raw(ctx);
  return tpy_load_dialect(*raw, dialect) ? ctx : NULL;
}

static tpy_sig simple_get_sig = TPY_SIG("get(context: Context | None = None) -> Self", "The type.");

static PyObject *simple_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  PyObject *a[1];
  if (!tpy_fastargs(&simple_get_sig, args, nargs, kwnames, a, 1)) return NULL;
  tpy_class_def *def = tpy_class_def_of((PyTypeObject *)cls);
  if (!def || !def->data) return PyErr_Format(PyExc_TypeError, "not a simple dialect type");
  const simple_def *s = def->data;
  MlirContext raw;
  PyObject *ctx = tpy_dialect_context(a[0], s->dialect, &raw);
  return ctx ? tpy_dialect_wrap_as(cls, ctx, s->get(raw)) : NULL;
}

PyMethodDef tpy_dialect_simple_methods[] = {
    {"get", TPY_FASTFN(simple_get), TPY_FAST | METH_CLASS, TPY_DOC(simple_get_sig)},
    TPY_METHODS_END,
};

/* An optional `context=` argument next to a value that determines the context: when given (not
 * None), it must be ctx's (ValueError), as the result belongs to ctx. 1 or 0. */
int tpy_dialect_same_context(PyObject *c, PyObject *ctx) {
  if (!c || c == Py_None) return 1;
  TpContext *given = tpy_resolve_context(c);
  if (!given) return 0;
  if ((PyObject *)given != ctx && given->arena != ((TpContext *)ctx)->arena) {
    PyErr_SetString(PyExc_ValueError, "the context given is not the context of the arguments");
    return 0;
  }
  return 1;
}

/* The dialect's type from an element type (its context). */
int tpy_dialect_element_arg(PyObject *o, const char *what, const char *dialect, MlirType *t,
                            PyObject **ctx) {
  if (!tpy_arg_type(o, t, ctx)) return 0;
  (void)what;
  mlirContextGetOrLoadDialect(mlirTypeGetContext(*t), mlirStringRefCreateFromCString(dialect));
  return 1;
}

/* The module `attr` of m, with the type classes `defs` and the attribute classes `attr_defs`
 * (may be NULL). */
int tpy_dialect_module(PyObject *m, const char *attr, tpy_class_def *defs,
                       tpy_class_def *attr_defs) {
  PyObject *sub = PyModule_New(attr);
  if (!sub) return -1;
  if (tpy_define_classes(sub, tpy.Type, defs, tpy.type_casters) < 0 ||
      (attr_defs && tpy_define_classes(sub, tpy.Attribute, attr_defs, tpy.attr_casters) < 0) ||
      PyModule_AddObject(m, attr, sub) < 0) {
    Py_DECREF(sub);
    return -1;
  }
  return 0;
}

int tpy_dialect_functions(PyObject *m, const char *attr, PyMethodDef *functions) {
  PyObject *sub = PyObject_GetAttrString(m, attr);
  int bad = !sub || PyModule_AddFunctions(sub, functions) < 0;
  Py_XDECREF(sub);
  return bad ? -1 : 0;
}
