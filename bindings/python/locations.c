/* locations.c: Location (upstream mlir.ir.Location): unknown, file, name,
 * callsite, fused, from_attr, attr, emit_error, the context manager and
 * Location.current.
 *
 * Invariant: a Location holds its Context object, like every context-owned
 * value; locations combined into one (callsite, fused, name) must all belong to
 * the context of the result.
 */
#include "tether_py.h"

#include <mlir-c/BuiltinAttributes.h>

PyObject *tp_wrap_loc(PyObject *ctx, MlirLocation l) {
  if (mlirLocationIsNull(l)) Py_RETURN_NONE;
  return tp_ctxobj_new(tp.Location, ctx, l.ptr);
}

PyObject *tp_wrap_loc_a(tether_arena *a, MlirLocation l) {
  PyObject *ctx = tp_context_of(a);
  if (!ctx) return NULL;
  PyObject *r = tp_wrap_loc(ctx, l);
  Py_DECREF(ctx);
  return r;
}

static PyObject *loc_unknown(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"context", NULL};
  PyObject *a[1];
  if (!tp_fastargs("unknown", args, nargs, kwnames, names, 0, 1, a)) return NULL;
  PyObject *c = a[0] ? a[0] : Py_None;
  TpContext *ctx = tp_resolve_context(c);
  if (!ctx) return NULL;
  return tp_wrap_loc((PyObject *)ctx, mlirLocationUnknownGet(tp_ctx_raw((PyObject *)ctx)));
}

static PyObject *loc_file(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"filename", "line", "col", "context", NULL};
  PyObject *a[4];
  if (!tp_fastargs("file", args, nargs, kwnames, names, 3, 4, a)) return NULL;
  PyObject *f = a[0], *line = a[1], *col = a[2], *c = a[3] ? a[3] : Py_None;
  MlirStringRef fs;
  unsigned l, cl;
  if (!tp_arg_str(f, "filename", &fs) || !tp_arg_uint(line, "line", &l) ||
      !tp_arg_uint(col, "col", &cl))
    return NULL;
  TpContext *ctx = tp_resolve_context(c);
  if (!ctx) return NULL;
  return tp_wrap_loc((PyObject *)ctx,
                     mlirLocationFileLineColGet(tp_ctx_raw((PyObject *)ctx), fs, l, cl));
}

static PyObject *loc_name(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"name", "childLoc", "context", NULL};
  PyObject *a[3];
  if (!tp_fastargs("name", args, nargs, kwnames, names, 1, 3, a)) return NULL;
  PyObject *n = a[0], *child = a[1] ? a[1] : Py_None, *c = a[2] ? a[2] : Py_None;
  MlirStringRef ns;
  if (!tp_arg_str(n, "name", &ns)) return NULL;
  TpContext *ctx;
  if ((c == Py_None || !c) && child != Py_None && tp_is(child, tp.Location) &&
      !tp_current_context())
    ctx = (TpContext *)TP_CTX(child);
  else
    ctx = tp_resolve_context(c);
  if (!ctx) return NULL;
  MlirContext raw = tp_ctx_raw((PyObject *)ctx);
  MlirLocation cl = mlirLocationUnknownGet(raw);
  if (child != Py_None && !tp_arg_loc_in(child, (PyObject *)ctx, &cl)) return NULL;
  return tp_wrap_loc((PyObject *)ctx, mlirLocationNameGet(raw, ns, cl));
}

static PyObject *loc_callsite(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"callee", "frames", "context", NULL};
  PyObject *a[3];
  if (!tp_fastargs("callsite", args, nargs, kwnames, names, 2, 3, a)) return NULL;
  PyObject *callee = a[0], *frames = a[1], *c = a[2] ? a[2] : Py_None;
  MlirLocation ce;
  PyObject *cectx;
  if (!tp_arg_loc(callee, &ce, &cectx)) return NULL;
  TpContext *ctx =
      (c == Py_None && !tp_current_context()) ? (TpContext *)cectx : tp_resolve_context(c);
  if (!ctx) return NULL;
  if (!tp_arg_loc_in(callee, (PyObject *)ctx, &ce)) return NULL;
  intptr_t n;
  MlirLocation *fs;
  if (!tp_seq_locs(frames, (PyObject *)ctx, &n, &fs)) return NULL;
  if (n == 0) {
    PyMem_Free(fs);
    return PyErr_Format(PyExc_ValueError, "No caller frames provided");
  }
  /* callee called from frames[0], called from frames[1], ... */
  MlirLocation caller = fs[n - 1];
  for (intptr_t i = n - 2; i >= 0; i--) caller = mlirLocationCallSiteGet(fs[i], caller);
  PyMem_Free(fs);
  return tp_wrap_loc((PyObject *)ctx, mlirLocationCallSiteGet(ce, caller));
}

static PyObject *loc_fused(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"locations", "metadata", "context", NULL};
  PyObject *a[3];
  if (!tp_fastargs("fused", args, nargs, kwnames, names, 1, 3, a)) return NULL;
  PyObject *locs = a[0], *meta = a[1] ? a[1] : Py_None, *c = a[2] ? a[2] : Py_None;
  TpContext *ctx = tp_resolve_context(c);
  if (!ctx) return NULL;
  MlirAttribute m = mlirAttributeGetNull();
  if (meta != Py_None && !tp_arg_attr_in(meta, (PyObject *)ctx, &m)) return NULL;
  intptr_t n;
  MlirLocation *ls;
  if (!tp_seq_locs(locs, (PyObject *)ctx, &n, &ls)) return NULL;
  MlirLocation r = mlirLocationFusedGet(tp_ctx_raw((PyObject *)ctx), n, ls, m);
  PyMem_Free(ls);
  return tp_wrap_loc((PyObject *)ctx, r);
}

static PyObject *loc_from_attr(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"attribute", "context", NULL};
  PyObject *x[2];
  if (!tp_fastargs("from_attr", args, nargs, kwnames, names, 1, 2, x)) return NULL;
  PyObject *a = x[0], *c = x[1] ? x[1] : Py_None;
  MlirAttribute at;
  PyObject *actx;
  if (!tp_arg_attr(a, &at, &actx)) return NULL;
  TpContext *ctx = c == Py_None ? (TpContext *)actx : tp_resolve_context(c);
  if (!ctx || !tp_arg_attr_in(a, (PyObject *)ctx, &at)) return NULL;
  if (!mlirAttributeIsALocation(at))
    return PyErr_Format(PyExc_ValueError, "the attribute is not a location");
  return tp_wrap_loc((PyObject *)ctx, mlirLocationFromAttribute(at));
}

static PyObject *loc_attr(PyObject *self, void *c) {
  (void)c;
  return tp_wrap_attr(TP_CTX(self), mlirLocationGetAttribute((MlirLocation){TP_PTR(self)}));
}

static PyObject *loc_emit_error(PyObject *self, PyObject *msg) {
  if (!PyUnicode_Check(msg)) return tp_type_error("message", "a str", msg);
  const char *s = PyUnicode_AsUTF8(msg);
  if (!s) return NULL;
  mlirEmitError((MlirLocation){TP_PTR(self)}, s);
  Py_RETURN_NONE;
}

static PyObject *loc_repr(PyObject *self) {
  tp_strbuf b = {0};
  mlirLocationPrint((MlirLocation){TP_PTR(self)}, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *loc_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tp_capsule_owner(cap);
  if (owner && tp_is(owner, tp.Location))
    return tp_wrap_loc(TP_CTX(owner), (MlirLocation){TP_PTR(owner)});
  void *p = PyCapsule_GetPointer(cap, "mlir.ir.Location._CAPIPtr");
  if (!p) return NULL;
  MlirLocation l = {p};
  tether_arena *a = tether_arena_of_context(mlirLocationGetContext(l));
  if (!a)
    return PyErr_Format(PyExc_ValueError,
                        "the location belongs to a context that is not a tether Context");
  return tp_wrap_loc_a(a, l);
}

static PyObject *loc_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  if (tp_current_push(TP_FRAME_LOC, TP_CTX(self), NULL, self) < 0) return NULL;
  return Py_NewRef(self);
}

static PyObject *loc_exit(PyObject *self, PyObject *args) {
  (void)args;
  if (tp_current_pop(TP_FRAME_LOC, self, "Location") < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *loc_current(PyObject *cls) {
  (void)cls;
  PyObject *l = tp_current_loc();
  if (!l) return PyErr_Format(PyExc_ValueError, "No current Location");
  return Py_NewRef(l);
}

static PyObject *loc_new(PyTypeObject *t, PyObject *a, PyObject *k) {
  (void)t;
  (void)a;
  (void)k;
  PyErr_SetString(PyExc_TypeError, "Location objects come from Location.unknown(), .file(), "
                                   ".name(), .callsite(), .fused() or .from_attr()");
  return NULL;
}

#define KW(f) TP_FASTFN(f), TP_FAST | METH_STATIC

static PyMethodDef loc_methods[] = {
    {"unknown", KW(loc_unknown), "unknown(context=None): the unknown location."},
    {"file", KW(loc_file), "file(filename, line, col, context=None)."},
    {"name", KW(loc_name), "name(name, childLoc=None, context=None)."},
    {"callsite", KW(loc_callsite),
     "callsite(callee, frames, context=None): callee called from frames[0], "
     "called from "
     "frames[1], ..."},
    {"fused", KW(loc_fused), "fused(locations, metadata=None, context=None)."},
    {"from_attr", KW(loc_from_attr), "from_attr(attribute, context=None)."},
    {"_CAPICreate", (PyCFunction)loc_from_capsule, METH_O | METH_STATIC, NULL},
    {"emit_error", (PyCFunction)loc_emit_error, METH_O, "Emits an error diagnostic here."},
    {"__enter__", (PyCFunction)loc_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)loc_exit, METH_VARARGS, NULL},
    TP_METHODS_END,
};

static PyGetSetDef loc_getset[] = {
    {"attr", loc_attr, NULL, "The location as an attribute.", NULL},
    {"context", tp_ctxobj_context, NULL, NULL, NULL},
    {"_CAPIPtr", tp_ctxobj_capsule, NULL, NULL, "mlir.ir.Location._CAPIPtr"},
    TP_GETSET_END,
};

static PyType_Slot loc_slots[] = {
    {Py_tp_new, loc_new},
    {Py_tp_dealloc, tp_ctxobj_dealloc},
    {Py_tp_repr, loc_repr},
    {Py_tp_richcompare, tp_ctxobj_richcompare},
    {Py_tp_hash, tp_ctxobj_hash},
    {Py_tp_methods, loc_methods},
    {Py_tp_getset, loc_getset},
    {Py_tp_doc, "A source location; `with loc:` makes it the current one."},
    {0, NULL},
};

static PyType_Spec tp_location_spec = {"tether.ir.Location", sizeof(TpCtxObj), 0,
                                       Py_TPFLAGS_DEFAULT, loc_slots};

int tp_init_locations(PyObject *m) {
  if (tp_add_type(m, &tp_location_spec, NULL, &tp.Location) < 0) return -1;
  return tp_set_classprop(tp.Location, "current", loc_current);
}
