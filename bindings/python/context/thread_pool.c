/* thread_pool.c: ThreadPool (upstream 22's mlir.ir.ThreadPool): an LLVM thread pool that contexts
 * can share (Context.set_thread_pool, Context(thread_pool=...)). Nothing on an MLIR 19 build.
 *
 * Invariant: a pool that was given to a context is never destroyed. MLIR keeps a context's external
 * pool for the context's whole life (disabling multithreading keeps it too), and an arena's context
 * may outlive every Python object: destroying the pool with its ThreadPool object would leave
 * contexts running tasks on freed threads (upstream 22's documented hazard). A pool never given
 * away is destroyed with its object.
 */
#include "context.h"

#if TETHER_MLIR_VERSION >= 22

typedef struct {
  PyObject_HEAD MlirLlvmThreadPool pool;
  bool given;       /* installed in a context at least once: never destroyed */
  unsigned threads; /* the pool's maximum concurrency, 0 until asked */
} TpThreadPool;

static PyObject *pool_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw)))
    return PyErr_Format(PyExc_TypeError, "ThreadPool() takes no arguments");
  TpThreadPool *self = (TpThreadPool *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->pool = mlirLlvmThreadPoolCreate();
  if (!self->pool.ptr) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void pool_dealloc(TpThreadPool *self) {
  PyTypeObject *t = Py_TYPE(self);
  if (self->pool.ptr && !self->given) mlirLlvmThreadPoolDestroy(self->pool);
  t->tp_free(self);
  Py_DECREF(t);
}

/* The C API cannot ask a pool for its concurrency: a scratch context using it can. */
static PyObject *pool_max_concurrency(TpThreadPool *self, PyObject *unused) {
  (void)unused;
  if (!self->threads) {
    MlirContext c = mlirContextCreateWithThreading(false);
    mlirContextSetThreadPool(c, self->pool);
    self->threads = mlirContextGetNumThreads(c);
    mlirContextDestroy(c); /* a context does not own an external pool */
  }
  return PyLong_FromUnsignedLong(self->threads);
}

PyObject *tpy_thread_pool_ptr_str(MlirLlvmThreadPool pool) {
  /* As C++ prints a pointer (upstream's): 0x... or 0. */
  if (!pool.ptr) return PyUnicode_FromString("0");
  return PyUnicode_FromFormat("%p", pool.ptr);
}

static PyObject *pool_ptr(TpThreadPool *self, PyObject *unused) {
  (void)unused;
  return tpy_thread_pool_ptr_str(self->pool);
}

int tpy_arg_thread_pool(PyObject *o, MlirLlvmThreadPool *out) {
  if (!tpy.ThreadPool || !tpy_is(o, tpy.ThreadPool))
    return tpy_type_error("pool", "a ThreadPool", o), 0;
  TpThreadPool *p = (TpThreadPool *)o;
  p->given = true;
  *out = p->pool;
  return 1;
}

static PyMethodDef pool_methods[] = {
    {"get_max_concurrency", (PyCFunction)pool_max_concurrency, METH_NOARGS,
     TPY_SIGDOC("get_max_concurrency() -> int", "The most threads the pool runs at once.")},
    {"_mlir_thread_pool_ptr", (PyCFunction)pool_ptr, METH_NOARGS,
     TPY_SIGDOC("_mlir_thread_pool_ptr() -> str",
                "The address of the LLVM thread pool, as a str.")},
    TPY_METHODS_END,
};

static PyType_Slot pool_slots[] = {
    {Py_tp_new, pool_new},
    {Py_tp_dealloc, pool_dealloc},
    {Py_tp_methods, pool_methods},
    {Py_tp_doc, TPY_SIGDOC("ThreadPool()",
                           "An LLVM thread pool (default concurrency) that contexts can share.")},
    {0, NULL},
};

static PyType_Spec pool_spec = {"tether.ir.ThreadPool", sizeof(TpThreadPool), 0, Py_TPFLAGS_DEFAULT,
                                pool_slots};

int tpy_init_thread_pool(PyObject *m) { return tpy_add_type(m, &pool_spec, NULL, &tpy.ThreadPool); }

#else

int tpy_init_thread_pool(PyObject *m) {
  (void)m;
  return 0;
}

#endif
