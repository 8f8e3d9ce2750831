/* locations.c: Location (upstream mlir.ir.Location): unknown, file, name,
 * callsite, fused, from_attr, attr, emit_error, the context manager and
 * Location.current; on MLIR 22 the file range form and what a location is made of (filename,
 * callee, name_str, locations, is_a_file, ...).
 *
 * Invariant: a Location holds its Context object, like every context-owned
 * value; locations combined into one (callsite, fused, name) must all belong to
 * the context of the result.
 */
#include "context.h"

#include <mlir-c/BuiltinAttributes.h>

PyObject *tpy_wrap_loc(PyObject *ctx, MlirLocation l) {
  if (mlirLocationIsNull(l)) Py_RETURN_NONE;
  return tpy_ctxobj_new(tpy.Location, ctx, l.ptr);
}

PyObject *tpy_wrap_loc_a(tether_arena *a, MlirLocation l) {
  PyObject *ctx = tpy_context_of(a);
  if (!ctx) return NULL;
  PyObject *r = tpy_wrap_loc(ctx, l);
  Py_DECREF(ctx);
  return r;
}

static tpy_sig loc_unknown_sig =
    TPY_SIG("unknown(context: Context | None = None) -> Location", "The unknown location.");

static PyObject *loc_unknown(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)cls;
  PyObject *a[1];
  if (!tpy_fastargs(&loc_unknown_sig, args, nargs, kwnames, a, 1)) return NULL;
  PyObject *c = a[0] ? a[0] : Py_None;
  TpContext *ctx = tpy_resolve_context(c);
  if (!ctx) return NULL;
  return tpy_wrap_loc((PyObject *)ctx, mlirLocationUnknownGet(tpy_ctx_raw((PyObject *)ctx)));
}

#if TETHER_MLIR_VERSION >= 22
/* Whether a call to Location.file is the range form (upstream 22's second overload): five
 * positional arguments, or a keyword of that form. */
static int file_is_range(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const range_kw[] = {"start_line", "start_col", "end_line", "end_col", NULL};
  if (nargs >= 5) return 1;
  for (const char *const *k = range_kw; *k; k++)
    if (tpy_kwarg(args, nargs, kwnames, *k)) return 1;
  return 0;
}

/* Location.file(filename, start_line, start_col, end_line, end_col, context=None) (MLIR 22). */
static tpy_sig loc_file_range_sig =
    TPY_SIG("file(filename: str, start_line: int, start_col: int, end_line: int, end_col: int, "
            "context: Context | None = None) -> Location",
            NULL);

static PyObject *loc_file_range(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a[6];
  if (!tpy_fastargs(&loc_file_range_sig, args, nargs, kwnames, a, 6)) return NULL;
  MlirStringRef fs;
  unsigned v[4];
  if (!tpy_arg_str(a[0], "filename", &fs)) return NULL;
  for (int i = 0; i < 4; i++)
    if (!tpy_arg_uint(a[1 + i], loc_file_range_sig.info->names[1 + i], &v[i])) return NULL;
  TpContext *ctx = tpy_resolve_context(a[5]);
  if (!ctx) return NULL;
  return tpy_wrap_loc((PyObject *)ctx, mlirLocationFileLineColRangeGet(tpy_ctx_raw((PyObject *)ctx),
                                                                       fs, v[0], v[1], v[2], v[3]));
}
#endif

#if TETHER_MLIR_VERSION >= 22
#define LOC_FILE_RANGE (&loc_file_range_sig)
#else
#define LOC_FILE_RANGE NULL
#endif
static tpy_sig loc_file_sig = TPY_SIG_OR(
    "file(filename: str, line: int, col: int, context: Context | None = None) -> Location",
    "A file location (or range).", LOC_FILE_RANGE);

static PyObject *loc_file(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  (void)cls;
#if TETHER_MLIR_VERSION >= 22
  if (file_is_range(args, nargs, kwnames)) return loc_file_range(args, nargs, kwnames);
#endif
  PyObject *a[4];
  if (!tpy_fastargs(&loc_file_sig, args, nargs, kwnames, a, 4)) return NULL;
  PyObject *f = a[0], *line = a[1], *col = a[2], *c = a[3] ? a[3] : Py_None;
  MlirStringRef fs;
  unsigned l, cl;
  if (!tpy_arg_str(f, "filename", &fs) || !tpy_arg_uint(line, "line", &l) ||
      !tpy_arg_uint(col, "col", &cl))
    return NULL;
  TpContext *ctx = tpy_resolve_context(c);
  if (!ctx) return NULL;
  return tpy_wrap_loc((PyObject *)ctx,
                      mlirLocationFileLineColGet(tpy_ctx_raw((PyObject *)ctx), fs, l, cl));
}

static tpy_sig loc_name_sig = TPY_SIG(
    "name(name: str, childLoc: Location | None = None, context: Context | None = None) -> Location",
    NULL);

static PyObject *loc_name(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&loc_name_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *n = a[0], *child = a[1] ? a[1] : Py_None, *c = a[2] ? a[2] : Py_None;
  MlirStringRef ns;
  if (!tpy_arg_str(n, "name", &ns)) return NULL;
  TpContext *ctx;
  if ((c == Py_None || !c) && child != Py_None && tpy_is(child, tpy.Location) &&
      !tpy_current_context())
    ctx = (TpContext *)TPY_CTX(child);
  else
    ctx = tpy_resolve_context(c);
  if (!ctx) return NULL;
  MlirContext raw = tpy_ctx_raw((PyObject *)ctx);
  MlirLocation cl = mlirLocationUnknownGet(raw);
  if (child != Py_None && !tpy_arg_loc_in(child, (PyObject *)ctx, &cl)) return NULL;
  return tpy_wrap_loc((PyObject *)ctx, mlirLocationNameGet(raw, ns, cl));
}

static tpy_sig loc_callsite_sig =
    TPY_SIG("callsite(callee: Location, frames: Sequence[Location], context: Context | None = "
            "None) -> Location",
            "callee called from frames[0], called from frames[1], ...");

static PyObject *loc_callsite(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&loc_callsite_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *callee = a[0], *frames = a[1], *c = a[2] ? a[2] : Py_None;
  MlirLocation ce;
  PyObject *cectx;
  if (!tpy_arg_loc(callee, &ce, &cectx)) return NULL;
  TpContext *ctx =
      (c == Py_None && !tpy_current_context()) ? (TpContext *)cectx : tpy_resolve_context(c);
  if (!ctx) return NULL;
  if (!tpy_arg_loc_in(callee, (PyObject *)ctx, &ce)) return NULL;
  intptr_t n;
  MlirLocation *fs;
  if (!tpy_seq_locs(frames, (PyObject *)ctx, &n, &fs)) return NULL;
  if (n == 0) {
    PyMem_Free(fs);
    return PyErr_Format(PyExc_ValueError, "No caller frames provided");
  }
  /* callee called from frames[0], called from frames[1], ... */
  MlirLocation caller = fs[n - 1];
  for (intptr_t i = n - 2; i >= 0; i--) caller = mlirLocationCallSiteGet(fs[i], caller);
  PyMem_Free(fs);
  return tpy_wrap_loc((PyObject *)ctx, mlirLocationCallSiteGet(ce, caller));
}

static tpy_sig loc_fused_sig = TPY_SIG("fused(locations: Sequence[Location], metadata: Attribute | "
                                       "None = None, context: Context | None = None) -> Location",
                                       NULL);

static PyObject *loc_fused(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&loc_fused_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *locs = a[0], *meta = a[1] ? a[1] : Py_None, *c = a[2] ? a[2] : Py_None;
  TpContext *ctx = tpy_resolve_context(c);
  if (!ctx) return NULL;
  MlirAttribute m = mlirAttributeGetNull();
  if (meta != Py_None && !tpy_arg_attr_in(meta, (PyObject *)ctx, &m)) return NULL;
  intptr_t n;
  MlirLocation *ls;
  if (!tpy_seq_locs(locs, (PyObject *)ctx, &n, &ls)) return NULL;
  MlirLocation r = mlirLocationFusedGet(tpy_ctx_raw((PyObject *)ctx), n, ls, m);
  PyMem_Free(ls);
  return tpy_wrap_loc((PyObject *)ctx, r);
}

static tpy_sig loc_from_attr_sig =
    TPY_SIG("from_attr(attribute: Attribute, context: Context | None = None) -> Location", NULL);

static PyObject *loc_from_attr(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  PyObject *x[2];
  if (!tpy_fastargs(&loc_from_attr_sig, args, nargs, kwnames, x, 2)) return NULL;
  PyObject *a = x[0], *c = x[1] ? x[1] : Py_None;
  MlirAttribute at;
  PyObject *actx;
  if (!tpy_arg_attr(a, &at, &actx)) return NULL;
  TpContext *ctx = c == Py_None ? (TpContext *)actx : tpy_resolve_context(c);
  if (!ctx || !tpy_arg_attr_in(a, (PyObject *)ctx, &at)) return NULL;
  if (!mlirAttributeIsALocation(at))
    return PyErr_Format(PyExc_ValueError, "the attribute is not a location");
  return tpy_wrap_loc((PyObject *)ctx, mlirLocationFromAttribute(at));
}

static PyObject *loc_emit_error(PyObject *self, PyObject *msg) {
  if (!PyUnicode_Check(msg)) return tpy_type_error("message", "a str", msg);
  const char *s = PyUnicode_AsUTF8(msg);
  if (!s) return NULL;
  mlirEmitError((MlirLocation){TPY_PTR(self)}, s);
  Py_RETURN_NONE;
}

static PyObject *loc_repr(PyObject *self) {
  tpy_strbuf b = {0};
  mlirLocationPrint((MlirLocation){TPY_PTR(self)}, tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *loc_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.Location))
    return tpy_wrap_loc(TPY_CTX(owner), (MlirLocation){TPY_PTR(owner)});
  void *p = tpy_capsule_pointer(cap, "mlir.ir.Location._CAPIPtr");
  if (!p) return NULL;
  MlirLocation l = {p};
  tether_arena *a = tpy_arena_for_capsule(mlirLocationGetContext(l));
  if (!a) return NULL;
  return tpy_wrap_loc_a(a, l);
}

static PyObject *loc_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  if (tpy_current_push(TPY_FRAME_LOC, TPY_CTX(self), NULL, self) < 0) return NULL;
  return Py_NewRef(self);
}

static PyObject *loc_exit(PyObject *self, PyObject *args) {
  (void)args;
  if (tpy_current_pop(TPY_FRAME_LOC, self, "Location") < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *loc_current(PyObject *cls) {
  (void)cls;
  PyObject *l = tpy_current_loc();
#if TETHER_MLIR_VERSION >= 22
  if (!l) Py_RETURN_NONE; /* upstream 22: None when there is none */
#else
  if (!l) return PyErr_Format(PyExc_ValueError, "No current Location");
#endif
  return Py_NewRef(l);
}

/* ---- what a location is made of (MLIR 22) ---------------------------------------------------- */

#if TETHER_MLIR_VERSION >= 22
#define L(o) ((MlirLocation){TPY_PTR(o)})

static PyObject *loc_is_a_file(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(mlirLocationIsAFileLineColRange(L(self)));
}
static PyObject *loc_is_a_name(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(mlirLocationIsAName(L(self)));
}
static PyObject *loc_is_a_callsite(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(mlirLocationIsACallSite(L(self)));
}
static PyObject *loc_is_a_fused(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(mlirLocationIsAFused(L(self)));
}

/* The accessors of one kind of location on another kind are undefined behaviour in MLIR's C API
 * (a null cast followed): ValueError instead. 1 when self is of the kind (isa). */
static int require_kind(PyObject *self, bool (*isa)(MlirLocation), const char *kind) {
  if (isa(L(self))) return 1;
  PyErr_Format(PyExc_ValueError, "the location is not a %s", kind);
  return 0;
}

static PyObject *loc_filename(PyObject *self, void *c) {
  (void)c;
  if (!require_kind(self, mlirLocationIsAFileLineColRange, "FileLineColLoc")) return NULL;
  return tpy_str_from_ref(mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(L(self))));
}

/* start_line, start_col, end_line, end_col: -1 for a location that is not a file location (as
 * the C API answers). closure: which. */
static PyObject *loc_range_part(PyObject *self, void *which) {
  int (*get[])(MlirLocation) = {
      mlirLocationFileLineColRangeGetStartLine, mlirLocationFileLineColRangeGetStartColumn,
      mlirLocationFileLineColRangeGetEndLine, mlirLocationFileLineColRangeGetEndColumn};
  return PyLong_FromLong(get[(intptr_t)which](L(self)));
}

static PyObject *loc_callee(PyObject *self, void *c) {
  (void)c;
  if (!require_kind(self, mlirLocationIsACallSite, "CallSiteLoc")) return NULL;
  return tpy_wrap_loc(TPY_CTX(self), mlirLocationCallSiteGetCallee(L(self)));
}

static PyObject *loc_caller(PyObject *self, void *c) {
  (void)c;
  if (!require_kind(self, mlirLocationIsACallSite, "CallSiteLoc")) return NULL;
  return tpy_wrap_loc(TPY_CTX(self), mlirLocationCallSiteGetCaller(L(self)));
}

static PyObject *loc_name_str(PyObject *self, void *c) {
  (void)c;
  if (!require_kind(self, mlirLocationIsAName, "NameLoc")) return NULL;
  return tpy_str_from_ref(mlirIdentifierStr(mlirLocationNameGetName(L(self))));
}

static PyObject *loc_child_loc(PyObject *self, void *c) {
  (void)c;
  if (!require_kind(self, mlirLocationIsAName, "NameLoc")) return NULL;
  return tpy_wrap_loc(TPY_CTX(self), mlirLocationNameGetChildLoc(L(self)));
}

/* The locations a fused location is made of ([] for another kind, as the C API answers). */
static PyObject *loc_locations(PyObject *self, void *c) {
  (void)c;
  unsigned n = mlirLocationFusedGetNumLocations(L(self));
  MlirLocation *ls = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *ls);
  if (!ls) return PyErr_NoMemory();
  if (n) mlirLocationFusedGetLocations(L(self), ls);
  PyObject *r = PyList_New(n);
  for (unsigned i = 0; r && i < n; i++) {
    PyObject *e = tpy_wrap_loc(TPY_CTX(self), ls[i]);
    if (!e)
      Py_CLEAR(r);
    else
      PyList_SET_ITEM(r, i, e);
  }
  PyMem_Free(ls);
  return r;
}
#endif

static PyObject *loc_new(PyTypeObject *t, PyObject *a, PyObject *k) {
  (void)t;
  (void)a;
  (void)k;
  PyErr_SetString(PyExc_TypeError, "Location objects come from Location.unknown(), .file(), "
                                   ".name(), .callsite(), .fused() or .from_attr()");
  return NULL;
}

#define KW(f) TPY_FASTFN(f), TPY_FAST | METH_STATIC

static PyMethodDef loc_methods[] = {
    {"unknown", KW(loc_unknown), TPY_DOC(loc_unknown_sig)},
    {"file", KW(loc_file), TPY_DOC(loc_file_sig)},
    {"name", KW(loc_name), TPY_DOC(loc_name_sig)},
    {"callsite", KW(loc_callsite), TPY_DOC(loc_callsite_sig)},
    {"fused", KW(loc_fused), TPY_DOC(loc_fused_sig)},
    {"from_attr", KW(loc_from_attr), TPY_DOC(loc_from_attr_sig)},
    {"_CAPICreate", (PyCFunction)loc_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> Location", NULL)},
    {"emit_error", (PyCFunction)loc_emit_error, METH_O,
     TPY_SIGDOC("emit_error(message: str, /) -> None", "Emits an error diagnostic here.")},
#if TETHER_MLIR_VERSION >= 22
    {"is_a_file", loc_is_a_file, METH_NOARGS,
     TPY_SIGDOC("is_a_file() -> bool", "Whether this is a file location (FileLineColLoc).")},
    {"is_a_name", loc_is_a_name, METH_NOARGS,
     TPY_SIGDOC("is_a_name() -> bool", "Whether this is a NameLoc.")},
    {"is_a_callsite", loc_is_a_callsite, METH_NOARGS,
     TPY_SIGDOC("is_a_callsite() -> bool", "Whether this is a CallSiteLoc.")},
    {"is_a_fused", loc_is_a_fused, METH_NOARGS,
     TPY_SIGDOC("is_a_fused() -> bool", "Whether this is a FusedLoc.")},
#endif
    {"__enter__", (PyCFunction)loc_enter, METH_NOARGS, TPY_SIGDOC("__enter__() -> Location", NULL)},
    {"__exit__", (PyCFunction)loc_exit, METH_VARARGS,
     TPY_SIGDOC("__exit__(*args: object) -> None", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef loc_getset[] = {
    {"context", tpy_ctxobj_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"_CAPIPtr", tpy_ctxobj_capsule, NULL, TPY_PROP("object", NULL), "mlir.ir.Location._CAPIPtr"},
#if TETHER_MLIR_VERSION >= 22
    {"filename", loc_filename, NULL, TPY_PROP("str", "The file name of a FileLineColLoc."), NULL},
    {"start_line", loc_range_part, NULL,
     TPY_PROP("int", "The start line of a FileLineColLoc (-1 otherwise)."), (void *)0},
    {"start_col", loc_range_part, NULL,
     TPY_PROP("int", "The start column of a FileLineColLoc (-1 otherwise)."), (void *)1},
    {"end_line", loc_range_part, NULL,
     TPY_PROP("int", "The end line of a FileLineColLoc (-1 otherwise)."), (void *)2},
    {"end_col", loc_range_part, NULL,
     TPY_PROP("int", "The end column of a FileLineColLoc (-1 otherwise)."), (void *)3},
    {"callee", loc_callee, NULL, TPY_PROP("Location", "The callee of a CallSiteLoc."), NULL},
    {"caller", loc_caller, NULL, TPY_PROP("Location", "The caller of a CallSiteLoc."), NULL},
    {"name_str", loc_name_str, NULL, TPY_PROP("str", "The name of a NameLoc."), NULL},
    {"child_loc", loc_child_loc, NULL, TPY_PROP("Location", "The child location of a NameLoc."),
     NULL},
    {"locations", loc_locations, NULL,
     TPY_PROP("list[Location]", "The locations of a FusedLoc ([] otherwise)."), NULL},
#endif
    TPY_GETSET_END,
};

static PyType_Slot loc_slots[] = {
    {Py_tp_new, loc_new},
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_repr, loc_repr},
    {Py_tp_richcompare, tpy_ctxobj_richcompare},
    {Py_tp_hash, tpy_ctxobj_hash},
    {Py_tp_methods, loc_methods},
    {Py_tp_getset, loc_getset},
    {Py_tp_doc, "A source location; `with loc:` makes it the current one."},
    {0, NULL},
};

static PyType_Spec tpy_location_spec = {"tether.ir.Location", sizeof(TpCtxObj), 0,
                                        Py_TPFLAGS_DEFAULT, loc_slots};

/* Registered as _get_default_loc_context; its messages name it as _ods_common does. */
static tpy_sig fn_default_loc_context_sig =
    TPY_SIG("get_default_loc_context(location: Location | None = None) -> Context | None",
            "The context of location, or of the current one.");

/* _ods_common.get_default_loc_context(location=None), which every generated builder calls: the
 * context of location, or of the current Location. Without one: None on MLIR 22 (upstream 22's
 * Location.current is None), ValueError on 19 (its Location.current raises). */
static PyObject *fn_default_loc_context(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames) {
  (void)m;
  PyObject *l;
  if (!tpy_fastargs(&fn_default_loc_context_sig, args, nargs, kwnames, &l, 1)) return NULL;
  if (!l || l == Py_None) {
    l = tpy_current_loc();
#if TETHER_MLIR_VERSION >= 22
    if (!l) Py_RETURN_NONE;
#else
    if (!l) return PyErr_Format(PyExc_ValueError, "No current Location");
#endif
  }
  if (tpy_is(l, tpy.Location)) return Py_NewRef(TPY_CTX(l));
  return PyObject_GetAttrString(l, "context");
}

static PyMethodDef loc_functions[] = {
    {"_get_default_loc_context", TPY_FASTFN(fn_default_loc_context), TPY_FAST,
     TPY_DOC(fn_default_loc_context_sig)},
    TPY_METHODS_END,
};

int tpy_init_locations(PyObject *m) {
  if (tpy_add_type(m, &tpy_location_spec, NULL, &tpy.Location) < 0) return -1;
  if (PyModule_AddFunctions(m, loc_functions) < 0) return -1;
  return tpy_set_classprop(tpy.Location, "current", loc_current);
}
