/* collect.c: collection and safe points, from Python's side.
 *
 * Invariant: MLIR IR is destroyed only at tether safe points, which the extension reaches with the
 * GIL held: inside tether calls, in tether.collect(), and in a pending call that the arena's
 * notifier schedules when the collector queued work. After interpreter shutdown begins, nothing is
 * destroyed (tether_shutdown).
 */
#include "core.h"

static int pending_scheduled;

static int pending_safepoint(void *arg) {
  (void)arg;
  pending_scheduled = 0;
  if (!_Py_IsFinalizing()) tether_safepoint_all();
  return 0;
}

/* A Context object went away: its MLIRContext (with everything MLIR keeps in it, e.g. the buffers
 * of DenseResourceElementsAttr) should go soon, as upstream's does when its last reference goes,
 * not at some later collection. One collection, run at the interpreter's next pending-call check
 * (never inside the deallocation that asked for it). */
static int collect_scheduled;

static int pending_collect(void *arg) {
  (void)arg;
  collect_scheduled = 0;
  if (!_Py_IsFinalizing()) tether_collect_all();
  return 0;
}

void tpy_schedule_collection(void) {
  if (collect_scheduled || _Py_IsFinalizing()) return;
  collect_scheduled = 1;
  if (Py_AddPendingCall(pending_collect, NULL) != 0) collect_scheduled = 0;
}

/* Called by the arena (maybe on a thread without the GIL) when the collector queued work. */
void tpy_collect_notifier(void) {
  if (__atomic_exchange_n(&pending_scheduled, 1, __ATOMIC_ACQ_REL)) return;
  if (Py_AddPendingCall(pending_safepoint, NULL) != 0) pending_scheduled = 0;
}

static int in_collect; /* mod_collect runs (nested: a __del__ may call it): its own Python
                        * collections schedule nothing */

static PyObject *mod_collect(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  /* Python first, so wrappers it frees unpin their handles; then the arena, twice around a second
   * Python collection for wrappers that only became garbage now. */
  in_collect++;
  for (int i = 0; i < 2; i++) {
    PyGC_Collect();
    tether_collect_all();
  }
  in_collect--;
  Py_RETURN_NONE;
}

/* An entry of gc.callbacks: after a full Python collection (generation 2: gc.collect(), or the
 * interpreter's own, rare, full collections), the arena's collection runs too, at the
 * interpreter's next pending-call check (never inside the collection, which may have started in
 * any allocation): what a program frees with gc.collect() under upstream's bindings (IR whose
 * last Python reference went), it frees under tether's too, and tables idle since are shrunk. */
static PyObject *mod_on_gc(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  if (nargs != 2 || in_collect || !PyUnicode_Check(args[0]) ||
      PyUnicode_CompareWithASCIIString(args[0], "stop") != 0 || !PyDict_Check(args[1]))
    Py_RETURN_NONE;
  PyObject *gen = PyDict_GetItemString(args[1], "generation"); /* borrowed */
  if (gen && PyLong_Check(gen) && PyLong_AsLong(gen) == 2) tpy_schedule_collection();
  PyErr_Clear();
  Py_RETURN_NONE;
}

static PyObject *mod_shutdown(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  tether_shutdown();
  Py_RETURN_NONE;
}

static PyObject *mod_stats(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  tether_global_stats g;
  tether_get_global_stats(&g);
  return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "arenas", g.arenas, "arenas_pending",
                       g.arenas_pending, "pins", g.pins, "threads", g.threads, "children",
                       g.children, "trial_requests", g.trial_requests, "trial_starts",
                       g.trial_starts);
}

static PyMethodDef collect_functions[] = {
    {"collect", mod_collect, METH_NOARGS,
     TPY_SIGDOC("collect() -> None",
                "Runs Python's collection, then the arena's, and destroys unreachable IR.")},
    {"_shutdown", mod_shutdown, METH_NOARGS,
     TPY_SIGDOC("_shutdown() -> None", "Stops all IR destruction (interpreter exit).")},
    {"_global_stats", mod_stats, METH_NOARGS,
     TPY_SIGDOC("_global_stats() -> dict[str, int]", "Process-wide arena counters.")},
    TPY_METHODS_END,
};

static PyMethodDef on_gc_def = {
    "_on_gc", (PyCFunction)(void (*)(void))mod_on_gc, METH_FASTCALL,
    TPY_SIGDOC("_on_gc(phase: str, info: dict, /) -> None",
               "gc.callbacks entry: a full Python collection schedules the arena's.")};

int tpy_init_collect(PyObject *m) {
  if (PyModule_AddFunctions(m, collect_functions) < 0) return -1;
  /* One entry per interpreter that initializes the module. */
  PyObject *fn = PyCFunction_NewEx(&on_gc_def, NULL, NULL);
  PyObject *gc = fn ? PyImport_ImportModule("gc") : NULL;
  PyObject *callbacks = gc ? PyObject_GetAttrString(gc, "callbacks") : NULL;
  int rc = callbacks ? (PyList_Check(callbacks) ? PyList_Append(callbacks, fn) : 0) : -1;
  Py_XDECREF(callbacks);
  Py_XDECREF(gc);
  Py_XDECREF(fn);
  return rc;
}
