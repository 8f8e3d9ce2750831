/* current.c: the thread's current Context, InsertionPoint and Location (upstream's `with`
 * semantics: Context.current, InsertionPoint.current, Location.current), what functions that take
 * `context=None` or `loc=None` resolve to, and the class-level property those `current`s are.
 *
 * Invariants: each thread has its own stack of frames; a frame holds strong references, so
 * whatever is current stays alive until its `with` ends, and `with` blocks end in the order they
 * began (else RuntimeError, as upstream). A frame of the same context inherits the insertion point
 * and location of the frame below it; entering another context starts afresh.
 */
#include "context.h"

/* ---- the thread's stack ---------------------------------------------------------------------- */

typedef struct {
  int kind;
  PyObject *ctx, *ip, *loc; /* strong; ip and loc may be NULL */
} frame;

/* Read on every call that resolves the current context, location or insertion point: the
 * initial-exec model is a plain %fs-relative load where a shared object's default calls
 * __tls_get_addr (the same choice as libtether's, docs/benchmarks.md). */
#define TPY_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static TPY_TLS frame *stack;
static TPY_TLS Py_ssize_t depth, cap;

int tpy_current_push(int kind, PyObject *ctx, PyObject *ip, PyObject *loc) {
  if (depth == cap) {
    Py_ssize_t ncap = cap ? cap * 2 : 16;
    frame *n = PyMem_RawRealloc(stack, (size_t)ncap * sizeof *n);
    if (!n) return PyErr_NoMemory(), -1;
    stack = n;
    cap = ncap;
  }
  /* As upstream: a frame of the same context inherits the insertion point and location of the
   * frame below it; entering another context starts afresh. */
  if (depth > 0 && stack[depth - 1].ctx == ctx) {
    if (!ip) ip = stack[depth - 1].ip;
    if (!loc) loc = stack[depth - 1].loc;
  }
  stack[depth++] = (frame){kind, Py_NewRef(ctx), Py_XNewRef(ip), Py_XNewRef(loc)};
  return 0;
}

int tpy_current_pop(int kind, PyObject *self, const char *what) {
  if (depth == 0) {
    PyErr_Format(PyExc_RuntimeError, "Unbalanced %s enter/exit", what);
    return -1;
  }
  frame *f = &stack[depth - 1];
  PyObject *top = kind == TPY_FRAME_CONTEXT ? f->ctx : kind == TPY_FRAME_IP ? f->ip : f->loc;
  if (f->kind != kind || top != self) {
    PyErr_Format(PyExc_RuntimeError, "Unbalanced %s enter/exit", what);
    return -1;
  }
  depth--;
  frame old = *f;
  Py_DECREF(old.ctx);
  Py_XDECREF(old.ip);
  Py_XDECREF(old.loc);
  return 0;
}

PyObject *tpy_current_context(void) { return depth ? stack[depth - 1].ctx : NULL; }
PyObject *tpy_current_loc(void) { return depth ? stack[depth - 1].loc : NULL; }
PyObject *tpy_current_ip(void) { return depth ? stack[depth - 1].ip : NULL; }

TpContext *tpy_resolve_context(PyObject *o) {
  if (o && o != Py_None) {
    if (!tpy_is(o, tpy.Context)) return tpy_type_error("context", "a Context", o), NULL;
    return (TpContext *)o;
  }
  PyObject *c = tpy_current_context();
  if (!c) {
    PyErr_SetString(PyExc_RuntimeError,
                    "An MLIR function requires a Context but none was provided in the call or "
                    "from the surrounding environment. Either pass to the function with a "
                    "'context=' argument or establish a default using 'with Context():'");
    return NULL;
  }
  return (TpContext *)c;
}

PyObject *tpy_resolve_loc(PyObject *o) {
  if (o && o != Py_None) {
    if (!tpy_is(o, tpy.Location)) return tpy_type_error("loc", "a Location", o);
    return o;
  }
  PyObject *l = tpy_current_loc();
  if (!l) {
    PyErr_SetString(PyExc_RuntimeError,
                    "An MLIR function requires a Location but none was provided in the call or "
                    "from the surrounding environment. Either pass to the function with a 'loc=' "
                    "argument or establish a default using 'with loc:'");
    return NULL;
  }
  return l;
}

/* ---- class-level properties ------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD PyObject *(*fn)(PyObject *cls);
} TpClassProp;

static PyObject *classprop_new(PyObject *(*fn)(PyObject *cls)) {
  TpClassProp *p = PyObject_New(TpClassProp, tpy.ClassProperty);
  if (p) p->fn = fn;
  return (PyObject *)p;
}

static PyObject *classprop_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)obj;
  return ((TpClassProp *)self)->fn(type);
}

static void classprop_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  PyObject_Free(self);
  Py_DECREF(t);
}

static PyType_Slot classprop_slots[] = {
    {Py_tp_descr_get, classprop_get},
    {Py_tp_dealloc, classprop_dealloc},
    {0, NULL},
};

static PyType_Spec tpy_classprop_spec = {"tether._tether._ClassProperty", sizeof(TpClassProp), 0,
                                         Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                         classprop_slots};

int tpy_set_classprop(PyTypeObject *cls, const char *name, PyObject *(*fn)(PyObject *)) {
  PyObject *p = classprop_new(fn);
  if (!p) return -1;
  int rc = PyObject_SetAttrString((PyObject *)cls, name, p);
  Py_DECREF(p);
  return rc;
}

int tpy_init_current(PyObject *m) {
  return tpy_add_type(m, &tpy_classprop_spec, NULL, &tpy.ClassProperty);
}
