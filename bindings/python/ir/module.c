/* module.c: Module (upstream mlir.ir.Module), a builtin.module root: Module.parse, Module.create,
 * its operation and body. (The extension module itself is extension.c.)
 *
 * Invariant: a Module object pins the handle of its module operation, which keeps the whole tree
 * alive; it is not interned (each parse or create makes one object), and counts in
 * Context._get_live_module_count while it lives.
 */
#include "ir.h"

#include <string.h>

/* The live Module objects: a circular list through a head. */
static TpModule live_modules = {.live_prev = &live_modules, .live_next = &live_modules};

static void live_link(TpModule *o) {
  o->live_next = &live_modules;
  o->live_prev = live_modules.live_prev;
  live_modules.live_prev->live_next = o;
  live_modules.live_prev = o;
}

static void live_unlink(TpModule *o) {
  if (!o->live_next) return;
  o->live_prev->live_next = o->live_next;
  o->live_next->live_prev = o->live_prev;
  o->live_next = o->live_prev = NULL;
}

Py_ssize_t tpy_live_modules(tether_arena *a) {
  Py_ssize_t n = 0;
  for (TpModule *o = live_modules.live_next; o != &live_modules; o = o->live_next)
    if (o->h && tether_handle_arena(o->h) == a) n++;
  return n;
}

static PyObject *wrap_module(tether_op *h) {
  if (!h) Py_RETURN_NONE;
  TpModule *self = (TpModule *)tpy_handle_new(tpy.Module, h); /* begins as TpHandle does */
  if (self) live_link(self);
  return (PyObject *)self;
}

static void module_dealloc(TpModule *self) {
  live_unlink(self);
  if (self->h && self->pin >= 0) tpy_release(self->h);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static tpy_sig module_parse_sig = TPY_SIG(
    "parse(asm: str | bytes, context: Context | None = None) -> Module", "MLIRError on bad input.");

static PyObject *module_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  (void)cls;
  MlirStringRef s;
  TpContext *ctx;
  tpy_errcap cap;
  if (!tpy_parse_begin(&module_parse_sig, args, nargs, kwnames, &s, &ctx, &cap)) return NULL;
  tether_op *op;
  int rc = tether_module_parse(ctx->arena, s.data, s.length, &op);
  if (rc == TETHER_EPARSE) return tpy_errcap_raise(&cap, "Unable to parse module assembly");
  tpy_errcap_close(&cap);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, ctx->arena);
  return wrap_module(op);
}

/* A new empty module at location lo (a Location object). 0 with its handle, or -1. */
static int new_module(PyObject *lo, tether_op **op) {
  TpContext *ctx = (TpContext *)TPY_CTX(lo);
  tether_loc *l;
  int rc = tether_loc_wrap(ctx->arena, (MlirLocation){TPY_PTR(lo)}, &l);
  if (rc == TETHER_OK) rc = tether_module_create(ctx->arena, l, op);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, ctx->arena), -1;
  return 0;
}

static tpy_sig module_create_sig =
    TPY_SIG("create(loc: Location | None = None) -> Module", "An empty module.");

static PyObject *module_create(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
  (void)cls;
  PyObject *a[1];
  if (!tpy_fastargs(&module_create_sig, args, nargs, kwnames, a, 1)) return NULL;
  PyObject *lo = tpy_creation_loc(a[0]);
  if (!lo) return NULL;
  tether_op *op;
  int rc = new_module(lo, &op);
  Py_DECREF(lo);
  return rc < 0 ? NULL : wrap_module(op);
}

#if TETHER_MLIR_VERSION >= 22
/* The text of the file at path (bytes, new reference); NULL with the exception (OSError when it
 * cannot be read). */
static PyObject *read_file(PyObject *path) {
  PyObject *io = PyImport_ImportModule("io");
  PyObject *f = io ? PyObject_CallMethod(io, "open", "Os", path, "rb") : NULL;
  Py_XDECREF(io);
  if (!f) return NULL;
  PyObject *text = PyObject_CallMethod(f, "read", NULL);
  PyObject *c = PyObject_CallMethod(f, "close", NULL);
  Py_DECREF(f);
  if (!c) Py_CLEAR(text);
  Py_XDECREF(c);
  if (text && !PyBytes_Check(text)) {
    tpy_type_error("the file's content", "bytes", text);
    Py_CLEAR(text);
  }
  return text;
}

/* Whether the parse failed only for want of one top-level operation (MLIR's named parse makes one
 * operation; a file holding several, or none, is an implicit module). */
static int not_one_op(PyObject *errors) {
  for (Py_ssize_t i = 0; errors && i < PyList_GET_SIZE(errors); i++) {
    PyObject *m = PyObject_GetAttrString(PyList_GET_ITEM(errors, i), "message");
    const char *t = m && PyUnicode_Check(m) ? PyUnicode_AsUTF8(m) : NULL;
    int hit = t && strstr(t, "source must contain a single top-level operation") != NULL;
    Py_XDECREF(m);
    PyErr_Clear();
    if (hit) return 1;
  }
  return 0;
}

static tpy_sig module_parse_file_sig =
    TPY_SIG("parseFile(path: str, context: Context | None = None) -> Module",
            "The module in a file; MLIRError on bad input.");

/* Module.parseFile(path, context=None): the module in the file, its locations naming the file
 * (MLIR's parseSourceFile). The file is read once and parsed from memory, through the arena's
 * guarded parse, as a named operation: a builtin.module is the module; another operation goes
 * into a new module located at the file (as MLIR does); a file whose top level is not one
 * operation is parsed as an implicit module, whose locations then name "-" (MLIR's C API has no
 * named module parse of text). */
static PyObject *module_parse_file(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&module_parse_file_sig, args, nargs, kwnames, a, 2)) return NULL;
  if (!PyUnicode_Check(a[0])) return tpy_type_error("path", "a str", a[0]);
  TpContext *ctx = tpy_resolve_context(a[1]);
  if (!ctx) return NULL;
  Py_INCREF(ctx); /* reading the file runs Python code */
  const char *cpath = PyUnicode_AsUTF8(a[0]);
  PyObject *text = cpath ? read_file(a[0]) : NULL, *r = NULL;
  tpy_errcap cap;
  if (!text) {
    if (!cpath || !PyErr_ExceptionMatches(PyExc_OSError)) goto done;
    /* As MLIR's parseSourceFile: an error diagnostic, and MLIRError. */
    PyErr_Clear();
    tpy_errcap_begin(&cap, ctx);
    MlirContext c = tether_arena_context(ctx->arena);
    PyObject *msg = PyUnicode_FromFormat("could not open input file %s", cpath);
    if (msg) mlirEmitError(mlirLocationUnknownGet(c), PyUnicode_AsUTF8(msg));
    Py_XDECREF(msg);
    tpy_errcap_raise(&cap, "Unable to parse module assembly");
    goto done;
  }
  tpy_errcap_begin(&cap, ctx);
  tether_op *op;
  int rc = tether_op_parse_named(ctx->arena, PyBytes_AS_STRING(text),
                                 (size_t)PyBytes_GET_SIZE(text), cpath, &op);
  if (rc == TETHER_EPARSE) {
    PyObject *errs = tpy_errcap_end(&cap);
    if (!not_one_op(errs)) {
      if (errs) tpy_raise_mlir_error("Unable to parse module assembly", errs);
      Py_XDECREF(errs);
      goto done;
    }
    Py_DECREF(errs);
    tpy_errcap_begin(&cap, ctx);
    rc = tether_module_parse(ctx->arena, PyBytes_AS_STRING(text), (size_t)PyBytes_GET_SIZE(text),
                             &op);
    if (rc == TETHER_EPARSE) {
      tpy_errcap_raise(&cap, "Unable to parse module assembly");
      goto done;
    }
  }
  tpy_errcap_close(&cap);
  if (rc != TETHER_OK) {
    tpy_raise(rc, NULL, ctx->arena);
    goto done;
  }
  MlirOperation raw;
  if ((rc = tether_op_get(op, &raw)) != TETHER_OK) {
    tpy_raise(rc, NULL, ctx->arena);
    goto done;
  }
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(raw));
  if (name.length == 14 && !memcmp(name.data, "builtin.module", 14)) {
    r = wrap_module(op);
    goto done;
  }
  /* One operation that is not a module: into a module located at the file, line 0, column 0. */
  MlirContext c = tether_arena_context(ctx->arena);
  PyObject *lo = tpy_wrap_loc(
      (PyObject *)ctx, mlirLocationFileLineColGet(c, mlirStringRefCreateFromCString(cpath), 0, 0));
  tether_op *m;
  tether_region *body_region;
  tether_block *body;
  if (!lo || new_module(lo, &m) < 0) {
    Py_XDECREF(lo);
    goto done;
  }
  Py_DECREF(lo);
  rc = tether_op_region(m, 0, &body_region);
  if (rc == TETHER_OK) rc = tether_region_first_block(body_region, &body);
  if (rc == TETHER_OK) rc = tether_block_append_op(body, op);
  if (rc != TETHER_OK) {
    TPY_RAISE_RC(rc, m);
    goto done;
  }
  r = wrap_module(m);
done:
  Py_XDECREF(text);
  Py_DECREF(ctx);
  return r;
}

/* Module == Module: the same module (upstream 22; tether's Module objects are not interned). */
static PyObject *module_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !tpy_is(b, tpy.Module)) Py_RETURN_NOTIMPLEMENTED;
  int eq = TPY_OP(a)->h && TPY_OP(a)->h == TPY_OP(b)->h;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t module_hash(PyObject *a) { return _Py_HashPointer(TPY_OP(a)->h); }

/* _clear_mlir_module(): upstream 22's guard against freeing a module twice after
 * _CAPICreate; a tether Module from a capsule is the module's own object (nothing to clear). */
static PyObject *module_clear_mlir_module(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  Py_RETURN_NONE;
}
#endif

static PyObject *module_operation(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK_OP(self);
  return tpy_wrap_operation(TPY_OP(self)->h);
}

static PyObject *module_body(PyObject *self, void *c) {
  (void)c;
  tether_region *r;
  tether_block *b;
  TPY_CALL(tether_op_region(TPY_OP(self)->h, 0, &r), TPY_OP(self)->h);
  TPY_CALL(tether_region_first_block(r, &b), TPY_OP(self)->h);
  return tpy_wrap_block(b);
}

static PyObject *module_context(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK_OP(self);
  return tpy_context_of_handle(TPY_OP(self)->h);
}

static PyObject *module_capsule(PyObject *self, void *c) {
  (void)c;
  TPY_SELF_OP(self, raw);
  tether_arena_touch(tether_handle_arena(TPY_OP(self)->h));
  tpy_context_expose(tether_handle_arena(TPY_OP(self)->h));
  return tpy_capsule_with_owner(raw.ptr, "mlir.ir.Module._CAPIPtr", self);
}

static PyObject *module_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.Module)) return Py_NewRef(owner);
  void *p = tpy_capsule_pointer(cap, "mlir.ir.Module._CAPIPtr");
  if (!p) return NULL;
  MlirOperation raw = {p};
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(raw));
  if (name.length != 14 || memcmp(name.data, "builtin.module", 14))
    return PyErr_Format(PyExc_ValueError, "the capsule's operation is '%.*s', not a builtin.module",
                        (int)name.length, name.data);
  tether_arena *a = tpy_arena_for_capsule(mlirOperationGetContext(raw));
  if (!a) return NULL;
  /* A module made elsewhere (an extension's parse, importer or deserializer) is adopted: tether
   * owns it from now on, as upstream's Python object does. */
  tether_op *h;
  int rc = tether_op_adopt(a, raw, &h);
  if (rc == TETHER_EARG)
    return PyErr_Format(PyExc_ValueError,
                        "the capsule's module is inside IR that tether does not hold (an "
                        "operation made elsewhere): only a module in no block can be adopted");
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, a);
  /* The module's own object when it has one (an extension handing back a module it was given). */
  for (TpModule *o = live_modules.live_next; o != &live_modules; o = o->live_next)
    if (o->h == h) return Py_NewRef((PyObject *)o);
  return wrap_module(h);
}

static PyObject *module_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  TPY_SELF_OP(self, raw);
  mlirOperationDump(raw);
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"parse", TPY_FASTFN(module_parse), TPY_FAST | METH_STATIC, TPY_DOC(module_parse_sig)},
    {"create", TPY_FASTFN(module_create), TPY_FAST | METH_STATIC, TPY_DOC(module_create_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"parseFile", TPY_FASTFN(module_parse_file), TPY_FAST | METH_STATIC,
     TPY_DOC(module_parse_file_sig)},
    {"_clear_mlir_module", (PyCFunction)module_clear_mlir_module, METH_NOARGS,
     TPY_SIGDOC("_clear_mlir_module() -> None",
                "Accepted for upstream 22's programs; does nothing (a Module from a capsule is the "
                "module's own object).")},
#endif
    {"_CAPICreate", (PyCFunction)module_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> Module", NULL)},
    {"dump", (PyCFunction)module_dump, METH_NOARGS,
     TPY_SIGDOC("dump() -> None", "Prints the module to stderr.")},
    TPY_METHODS_END,
};

static PyGetSetDef module_getset[] = {
    {"operation", module_operation, NULL, TPY_PROP("Operation", "The builtin.module operation."),
     NULL},
    {"body", module_body, NULL, TPY_PROP("Block", "The module's block."), NULL},
    {"context", module_context, NULL, TPY_PROP("Context", NULL), NULL},
    {"_CAPIPtr", module_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot module_slots[] = {
    {Py_tp_new, tpy_opbase_new},
    {Py_tp_dealloc, module_dealloc},
    {Py_tp_str, tpy_op_str},
#if TETHER_MLIR_VERSION >= 22
    {Py_tp_richcompare, module_richcompare},
    {Py_tp_hash, module_hash},
#endif
    {Py_tp_methods, module_methods},
    {Py_tp_getset, module_getset},
    {Py_tp_doc, "A builtin.module: Module.parse(), Module.create()."},
    {0, NULL},
};

static PyType_Spec tpy_module_spec = {"tether.ir.Module", sizeof(TpModule), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, module_slots};

int tpy_init_module(PyObject *m) { return tpy_add_type(m, &tpy_module_spec, NULL, &tpy.Module); }
