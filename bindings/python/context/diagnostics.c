/* diagnostics.c: Diagnostic, DiagnosticInfo, DiagnosticHandler (Context.attach_diagnostic_handler)
 * and the error capture that turns MLIR's error diagnostics into MLIRError, as upstream does.
 *
 * Invariants: a Diagnostic object is valid only inside the handler call that received it (it
 * then raises RuntimeError); a DiagnosticInfo is a plain copy. A handler is attached while its
 * Context lives: the context's list holds it, and the context detaches every handler before it
 * goes. Handlers may run on MLIR's threads: they take the GIL.
 */
#include "context.h"

#include <mlir-c/Diagnostics.h>

typedef struct {
  PyObject_HEAD MlirDiagnostic d;
  int valid;
  PyObject *ctx; /* the Context (strong) */
  PyObject *notes;
} TpDiagnostic;

typedef struct {
  PyObject_HEAD PyObject *severity, *location, *message, *notes;
} TpDiagnosticInfo;

typedef struct {
  PyObject_HEAD PyObject *callback;
  TpContext *ctx; /* borrowed: valid while attached (the context detaches us before it goes) */
  MlirDiagnosticHandlerID id;
  int attached, had_error;
  unsigned long running_in; /* the thread whose call of callback is running (0: none) */
} TpDiagnosticHandler;

static PyObject *severity_of(MlirDiagnostic d) {
  int s = (int)mlirDiagnosticGetSeverity(d);
  if (tpy.DiagnosticSeverity) return PyObject_CallFunction(tpy.DiagnosticSeverity, "i", s);
  return PyLong_FromLong(s);
}

static PyObject *message_of(MlirDiagnostic d) {
  tpy_strbuf b = {0};
  mlirDiagnosticPrint(d, tpy_strbuf_append, &b);
  return tpy_strbuf_finish(&b);
}

/* ---- DiagnosticInfo -------------------------------------------------------------------------- */

static PyObject *info_from(MlirDiagnostic d, PyObject *ctx) {
  TpDiagnosticInfo *i = PyObject_GC_New(TpDiagnosticInfo, tpy.DiagnosticInfo);
  if (!i) return NULL;
  i->severity = severity_of(d);
  i->location = tpy_wrap_loc(ctx, mlirDiagnosticGetLocation(d));
  i->message = message_of(d);
  intptr_t n = mlirDiagnosticGetNumNotes(d);
  i->notes = PyList_New(0);
  for (intptr_t k = 0; i->notes && k < n; k++) {
    PyObject *note = info_from(mlirDiagnosticGetNote(d, k), ctx);
    if (!note || PyList_Append(i->notes, note) < 0) Py_CLEAR(i->notes);
    Py_XDECREF(note);
  }
  PyObject_GC_Track(i);
  if (!i->severity || !i->location || !i->message || !i->notes) {
    Py_DECREF(i);
    return NULL;
  }
  return (PyObject *)i;
}

static int info_traverse(TpDiagnosticInfo *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->severity);
  Py_VISIT(self->location);
  Py_VISIT(self->message);
  Py_VISIT(self->notes);
  return 0;
}

static int info_clear(TpDiagnosticInfo *self) {
  Py_CLEAR(self->severity);
  Py_CLEAR(self->location);
  Py_CLEAR(self->message);
  Py_CLEAR(self->notes);
  return 0;
}

static int diag_check(TpDiagnostic *self);

static tpy_sig info_new_sig =
    TPY_SIG("DiagnosticInfo(diag: Diagnostic)", "A copy of a diagnostic, valid anywhere.");

static PyObject *info_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  (void)type;
  PyObject *d;
  if (!tpy_args(&info_new_sig, args, kw, &d, 1)) return NULL;
  if (!tpy_is(d, tpy.Diagnostic)) return tpy_type_error("diag", "a Diagnostic", d);
  if (diag_check((TpDiagnostic *)d) < 0) return NULL;
  return info_from(((TpDiagnostic *)d)->d, ((TpDiagnostic *)d)->ctx);
}

static PyObject *info_str(TpDiagnosticInfo *self) { return Py_NewRef(self->message); }

#define INFO_FIELD(name)                                                                           \
  static PyObject *info_##name(TpDiagnosticInfo *self, void *c) {                                  \
    (void)c;                                                                                       \
    return Py_NewRef(self->name);                                                                  \
  }
INFO_FIELD(severity)
INFO_FIELD(location)
INFO_FIELD(message)
INFO_FIELD(notes)

static PyGetSetDef info_getset[] = {
    {"severity", (getter)info_severity, NULL, TPY_PROP("DiagnosticSeverity", NULL), NULL},
    {"location", (getter)info_location, NULL, TPY_PROP("Location", NULL), NULL},
    {"message", (getter)info_message, NULL, TPY_PROP("str", NULL), NULL},
    {"notes", (getter)info_notes, NULL, TPY_PROP("list[DiagnosticInfo]", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot info_slots[] = {
    {Py_tp_new, info_new},
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, info_traverse},
    {Py_tp_clear, info_clear},
    {Py_tp_str, info_str},
    {Py_tp_getset, info_getset},
    {Py_tp_doc, TPY_DOC(info_new_sig)},
    {0, NULL},
};

static PyType_Spec info_spec = {"tether.ir.DiagnosticInfo", sizeof(TpDiagnosticInfo), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, info_slots};

/* ---- Diagnostic (valid during its handler call) ---------------------------------------------- */

static int diag_check(TpDiagnostic *self) {
  if (!self->valid) {
    PyErr_SetString(PyExc_ValueError, "Diagnostic is invalid (used outside of callback)");
    return -1;
  }
  return 0;
}

static PyObject *diag_make(MlirDiagnostic d, PyObject *ctx) {
  TpDiagnostic *self = PyObject_GC_New(TpDiagnostic, tpy.Diagnostic);
  if (!self) return NULL;
  self->d = d;
  self->valid = 1;
  self->ctx = Py_NewRef(ctx);
  self->notes = NULL;
  PyObject_GC_Track(self);
  return (PyObject *)self;
}

static void diag_invalidate(PyObject *o) {
  TpDiagnostic *self = (TpDiagnostic *)o;
  self->valid = 0;
  if (self->notes)
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->notes); i++)
      diag_invalidate(PyTuple_GET_ITEM(self->notes, i));
}

static int diag_traverse(TpDiagnostic *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->ctx);
  Py_VISIT(self->notes);
  return 0;
}

static int diag_clear(TpDiagnostic *self) {
  Py_CLEAR(self->ctx);
  Py_CLEAR(self->notes);
  return 0;
}

static PyObject *diag_severity(TpDiagnostic *self, void *c) {
  (void)c;
  if (diag_check(self) < 0) return NULL;
  return severity_of(self->d);
}

static PyObject *diag_location(TpDiagnostic *self, void *c) {
  (void)c;
  if (diag_check(self) < 0) return NULL;
  return tpy_wrap_loc(self->ctx, mlirDiagnosticGetLocation(self->d));
}

static PyObject *diag_message(TpDiagnostic *self, void *c) {
  (void)c;
  if (diag_check(self) < 0) return NULL;
  return message_of(self->d);
}

static PyObject *diag_notes(TpDiagnostic *self, void *c) {
  (void)c;
  if (diag_check(self) < 0) return NULL;
  if (!self->notes) {
    intptr_t n = mlirDiagnosticGetNumNotes(self->d);
    PyObject *t = PyTuple_New(n);
    for (intptr_t k = 0; t && k < n; k++) {
      PyObject *note = diag_make(mlirDiagnosticGetNote(self->d, k), self->ctx);
      if (!note)
        Py_CLEAR(t);
      else
        PyTuple_SET_ITEM(t, k, note);
    }
    if (!t) return NULL;
    self->notes = t;
  }
  return Py_NewRef(self->notes);
}

static PyObject *diag_str(TpDiagnostic *self) {
  if (!self->valid) return PyUnicode_FromString("<Invalid Diagnostic>");
  return message_of(self->d);
}

static PyGetSetDef diag_getset[] = {
    {"severity", (getter)diag_severity, NULL, TPY_PROP("DiagnosticSeverity", NULL), NULL},
    {"location", (getter)diag_location, NULL, TPY_PROP("Location", NULL), NULL},
    {"message", (getter)diag_message, NULL, TPY_PROP("str", NULL), NULL},
    {"notes", (getter)diag_notes, NULL, TPY_PROP("Sequence[Diagnostic]", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot diag_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, diag_traverse},
    {Py_tp_clear, diag_clear},
    {Py_tp_str, diag_str},
    {Py_tp_getset, diag_getset},
    {Py_tp_doc, "A diagnostic, valid only inside the handler call that received it."},
    {0, NULL},
};

static PyType_Spec diag_spec = {
    "tether.ir.Diagnostic", sizeof(TpDiagnostic), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, diag_slots};

/* ---- DiagnosticHandler ----------------------------------------------------------------------- */

/* A diagnostic emitted from inside a handler's own call (its callback emits one, or runs what
 * emits one) is not given to that handler again on that thread: MLIR would call it recursively,
 * one level per diagnostic, until Python's recursion limit; and with several such handlers
 * attached, each level not handled by one goes to the next, which recurses too (exponential: a
 * hang). The diagnostic goes on to the other handlers, as when this one returns False. */
/* MLIR walks its list of handlers while it delivers a diagnostic, and attaching or detaching one
 * meanwhile (a handler that detaches itself, or calls what captures errors) changes the list
 * under it: a crash at the next diagnostic (found by tests/fuzz). While a context's handlers run,
 * a detached handler stays registered with MLIR (inert: it declines every diagnostic) and is
 * unregistered at the next attach, detach or error capture outside delivery; error captures made
 * meanwhile do not register a handler (the nested call's errors go unreported in its MLIRError). */
static void flush_deferred(TpContext *ctx) {
  if (ctx->diag_delivering || !ctx->diag_deferred) return;
  PyObject *list = ctx->diag_deferred;
  ctx->diag_deferred = NULL;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
    TpDiagnosticHandler *h = (TpDiagnosticHandler *)PyList_GET_ITEM(list, i);
    mlirContextDetachDiagnosticHandler(tether_arena_context(ctx->arena), h->id);
  }
  Py_DECREF(list);
}

static MlirLogicalResult handler_cb(MlirDiagnostic d, void *user) {
  TpDiagnosticHandler *h = user;
  PyGILState_STATE g = PyGILState_Ensure();
  int handled = 0;
  unsigned long me = PyThread_get_thread_ident();
  if (h->attached && h->ctx && h->running_in != me) {
    unsigned long outer = h->running_in;
    h->running_in = me;
    TpContext *ctx = (TpContext *)Py_NewRef(h->ctx);
    ctx->diag_delivering++;
    Py_INCREF(h);
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    PyObject *pd = diag_make(d, (PyObject *)h->ctx);
    PyObject *r = pd ? PyObject_CallOneArg(h->callback, pd) : NULL;
    if (r) {
      handled = PyObject_IsTrue(r) == 1;
      Py_DECREF(r);
    }
    if (PyErr_Occurred()) {
      PyObject *t2, *e, *tb2;
      PyErr_Fetch(&t2, &e, &tb2);
      PyErr_NormalizeException(&t2, &e, &tb2);
      PyObject *s = e ? PyObject_Str(e) : NULL;
      fprintf(stderr, "MLIR Python Diagnostic handler raised exception: %s\n",
              s && PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : "?");
      PyErr_Clear();
      Py_XDECREF(s);
      Py_XDECREF(e);
      Py_XDECREF(t2);
      Py_XDECREF(tb2);
      h->had_error = 1;
      handled = 0;
    }
    if (pd) {
      diag_invalidate(pd);
      Py_DECREF(pd);
    }
    PyErr_Restore(et, ev, etb);
    h->running_in = outer;
    ctx->diag_delivering--;
    Py_DECREF(ctx);
    Py_DECREF(h);
  }
  PyGILState_Release(g);
  return handled ? mlirLogicalResultSuccess() : mlirLogicalResultFailure();
}

static void handler_detach(TpDiagnosticHandler *self) {
  if (!self->attached) return;
  self->attached = 0;
  TpContext *ctx = self->ctx;
  if (ctx->diag_delivering) {
    /* Unregistered later (flush_deferred); kept alive meanwhile: MLIR holds its pointer. */
    if (!ctx->diag_deferred) ctx->diag_deferred = PyList_New(0);
    if (!ctx->diag_deferred || PyList_Append(ctx->diag_deferred, (PyObject *)self) < 0) {
      PyErr_Clear();
      Py_INCREF(self); /* leaked rather than freed while registered */
    }
  } else {
    flush_deferred(ctx);
    mlirContextDetachDiagnosticHandler(tether_arena_context(ctx->arena), self->id);
  }
  if (self->ctx->handlers) {
    Py_ssize_t n = PyList_GET_SIZE(self->ctx->handlers);
    for (Py_ssize_t i = 0; i < n; i++)
      if (PyList_GET_ITEM(self->ctx->handlers, i) == (PyObject *)self) {
        PySequence_DelItem(self->ctx->handlers, i);
        break;
      }
  }
  self->ctx = NULL;
}

void tpy_diagnostics_detach_all(TpContext *ctx) {
  int delivering = ctx->diag_delivering;
  ctx->diag_delivering = 0; /* the context goes: nothing of it is delivered any more */
  flush_deferred(ctx);
  ctx->diag_delivering = delivering;
  if (!ctx->handlers) return;
  while (PyList_GET_SIZE(ctx->handlers) > 0) {
    PyObject *h = Py_NewRef(PyList_GET_ITEM(ctx->handlers, 0));
    handler_detach((TpDiagnosticHandler *)h);
    if (PyList_GET_SIZE(ctx->handlers) > 0 && PyList_GET_ITEM(ctx->handlers, 0) == h)
      PySequence_DelItem(ctx->handlers, 0);
    Py_DECREF(h);
  }
}

PyObject *tpy_context_attach_diagnostic_handler(TpContext *ctx, PyObject *callback) {
  if (!PyCallable_Check(callback)) return tpy_type_error("callback", "callable", callback);
  if (ctx->diag_delivering) {
    PyErr_SetString(PyExc_RuntimeError,
                    "cannot attach a diagnostic handler from inside a diagnostic handler (MLIR is "
                    "delivering a diagnostic to the context's handlers)");
    return NULL;
  }
  flush_deferred(ctx);
  TpDiagnosticHandler *h = PyObject_GC_New(TpDiagnosticHandler, tpy.DiagnosticHandler);
  if (!h) return NULL;
  h->callback = Py_NewRef(callback);
  h->ctx = ctx;
  h->attached = 1;
  h->had_error = 0;
  PyObject_GC_Track(h);
  if (PyList_Append(ctx->handlers, (PyObject *)h) < 0) {
    h->attached = 0;
    Py_DECREF(h);
    return NULL;
  }
  h->id = mlirContextAttachDiagnosticHandler(tether_arena_context(ctx->arena), handler_cb, h, NULL);
  return (PyObject *)h;
}

static int handler_traverse(TpDiagnosticHandler *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->callback);
  return 0;
}

static int handler_clear(TpDiagnosticHandler *self) {
  Py_CLEAR(self->callback);
  return 0;
}

static void handler_dealloc(TpDiagnosticHandler *self) {
  PyObject_GC_UnTrack(self);
  /* Attached handlers are in their context's list, so they cannot be deallocated. */
  handler_clear(self);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyObject *handler_detach_m(TpDiagnosticHandler *self, PyObject *unused) {
  (void)unused;
  handler_detach(self);
  Py_RETURN_NONE;
}

static PyObject *handler_enter(TpDiagnosticHandler *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *handler_exit(TpDiagnosticHandler *self, PyObject *args) {
  (void)args;
  handler_detach(self);
  Py_RETURN_NONE;
}

static PyObject *handler_attached(TpDiagnosticHandler *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->attached);
}

static PyObject *handler_had_error(TpDiagnosticHandler *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->had_error);
}

static PyMethodDef handler_methods[] = {
    {"detach", (PyCFunction)handler_detach_m, METH_NOARGS, TPY_SIGDOC("detach() -> None", NULL)},
    {"__enter__", (PyCFunction)handler_enter, METH_NOARGS,
     TPY_SIGDOC("__enter__() -> DiagnosticHandler", NULL)},
    {"__exit__", (PyCFunction)handler_exit, METH_VARARGS,
     TPY_SIGDOC("__exit__(*args: object) -> None", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef handler_getset[] = {
    {"attached", (getter)handler_attached, NULL, TPY_PROP("bool", NULL), NULL},
    {"had_error", (getter)handler_had_error, NULL,
     TPY_PROP(
         "bool",
         "Whether the callback raised (the exception was printed and the diagnostic not handled)."),
     NULL},
    TPY_GETSET_END,
};

static PyType_Slot handler_slots[] = {
    {Py_tp_dealloc, handler_dealloc},
    {Py_tp_traverse, handler_traverse},
    {Py_tp_clear, handler_clear},
    {Py_tp_methods, handler_methods},
    {Py_tp_getset, handler_getset},
    {Py_tp_doc, "A diagnostic handler attached to a context."},
    {0, NULL},
};

static PyType_Spec handler_spec = {
    "tether.ir.DiagnosticHandler", sizeof(TpDiagnosticHandler), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, handler_slots};

/* ---- error capture --------------------------------------------------------------------------- */

static MlirLogicalResult errcap_cb(MlirDiagnostic d, void *user) {
  tpy_errcap *c = user;
  if (c->ctx->emit_error_diagnostics || mlirDiagnosticGetSeverity(d) != MlirDiagnosticError)
    return mlirLogicalResultFailure();
  PyGILState_STATE g = PyGILState_Ensure();
  c->ctx->diag_delivering++; /* a collection here may run finalizers that detach handlers */
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyObject *info = info_from(d, (PyObject *)c->ctx);
  if (info && !c->errors) c->errors = PyList_New(0); /* made on the first error only */
  if (info && c->errors) {
    if (PyList_Append(c->errors, info) < 0) PyErr_Clear();
    Py_DECREF(info);
  } else {
    PyErr_Clear();
  }
  PyErr_Restore(et, ev, etb);
  c->ctx->diag_delivering--;
  PyGILState_Release(g);
  return mlirLogicalResultSuccess();
}

void tpy_errcap_begin(tpy_errcap *c, TpContext *ctx) {
  c->ctx = ctx;
  c->errors = NULL; /* the list is made by the first error: most captures see none */
  flush_deferred(ctx);
  c->attached = !ctx->diag_delivering; /* see flush_deferred */
  if (c->attached)
    c->id =
        mlirContextAttachDiagnosticHandler(tether_arena_context(ctx->arena), errcap_cb, c, NULL);
}

int tpy_parse_begin(tpy_sig *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    MlirStringRef *text, TpContext **ctx, tpy_errcap *cap) {
  PyObject *a[2];
  if (!tpy_fastargs(s, args, nargs, kwnames, a, 2) || !tpy_arg_str(a[0], "asm", text)) return 0;
  if (!(*ctx = tpy_resolve_context(a[1]))) return 0;
  tpy_errcap_begin(cap, *ctx);
  return 1;
}

PyObject *tpy_errcap_end(tpy_errcap *c) {
  if (c->attached) mlirContextDetachDiagnosticHandler(tether_arena_context(c->ctx->arena), c->id);
  c->attached = 0;
  PyObject *e = c->errors;
  c->errors = NULL;
  return e ? e : PyList_New(0);
}

void tpy_errcap_close(tpy_errcap *c) {
  if (c->attached) mlirContextDetachDiagnosticHandler(tether_arena_context(c->ctx->arena), c->id);
  c->attached = 0;
  Py_CLEAR(c->errors);
}

PyObject *tpy_errcap_raise(tpy_errcap *c, const char *message) {
  PyObject *errs = tpy_errcap_end(c);
  if (!errs) return NULL;
  tpy_raise_mlir_error(message, errs);
  Py_DECREF(errs);
  return NULL;
}

int tpy_init_diagnostics(PyObject *m) {
  if (tpy_add_type(m, &diag_spec, NULL, &tpy.Diagnostic) < 0 ||
      tpy_add_type(m, &info_spec, NULL, &tpy.DiagnosticInfo) < 0 ||
      tpy_add_type(m, &handler_spec, NULL, &tpy.DiagnosticHandler) < 0)
    return -1;
  return 0;
}
