/* extension.c: the _tether module: it assembles the extension and holds nothing of its own but the
 * module state (tp), the pin pool of wrappers, and the two helpers every type uses (tp_add_type,
 * tp_gc_dealloc). Each file adds its classes and functions to the module (tp_init_*), in an order
 * where a class exists before the classes that refer to it at init; the arena's notifier is set
 * last, once everything it may reach exists.
 */
#include "tether_py.h"

#include <string.h>

TpState tp;
tether_pin_pool *tp_pins;

static int spec_has_slot(const PyType_Spec *spec, int slot) {
  for (const PyType_Slot *s = spec->slots; s->slot; s++)
    if (s->slot == slot) return 1;
  return 0;
}

int tp_add_type(PyObject *m, PyType_Spec *spec, PyObject *base, PyTypeObject **out) {
  PyObject *t = PyType_FromModuleAndSpec(m, spec, base);
  if (!t) return -1;
  /* A class from a spec without a dealloc gets CPython's generic one for subclasses
   * (subtype_dealloc: it looks for __dict__, slots, weak references and finalizers, then calls the
   * base's), about 120 instructions per object freed (OpResult, the IR sequences). A subclass that
   * adds nothing to the instance is freed by its base's own dealloc instead. */
  PyTypeObject *tt = (PyTypeObject *)t, *b = tt->tp_base;
  if (b && b != &PyBaseObject_Type && !spec_has_slot(spec, Py_tp_dealloc) &&
      tt->tp_basicsize == b->tp_basicsize && tt->tp_itemsize == b->tp_itemsize &&
      tt->tp_dictoffset == b->tp_dictoffset && tt->tp_weaklistoffset == b->tp_weaklistoffset &&
      PyType_IS_GC(tt) == PyType_IS_GC(b) && tt->tp_finalize == b->tp_finalize && !tt->tp_del)
    tt->tp_dealloc = b->tp_dealloc;
  const char *dot = strrchr(spec->name, '.');
  if (PyModule_AddObjectRef(m, dot ? dot + 1 : spec->name, t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  *out = (PyTypeObject *)t; /* the module state keeps this reference for the process */
  return 0;
}

void tp_gc_dealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  t->tp_clear(self);
  t->tp_free(self);
  Py_DECREF(t); /* heap types: each instance holds its type */
}

/* Each file's init, in order: a class exists before the classes that refer to it at init. */
static int (*const file_inits[])(PyObject *m) = {
    tp_init_errors,
    tp_init_collect,
    tp_init_typeid,
    tp_init_classes,
    tp_init_current,
    tp_init_context,
    tp_init_thread_pool,
    tp_init_insertion_point,
    tp_init_dialect_registry,
    tp_init_locations,
    tp_init_diagnostics,
    tp_init_types,
    tp_init_attributes,
    tp_init_affine_expr,
    tp_init_affine_map,
    tp_init_integer_set,
    tp_init_operation,
    tp_init_opview,
    tp_init_create,
    tp_init_module,
    tp_init_attrmap,
    tp_init_printing,
    tp_init_region,
    tp_init_block,
    tp_init_value,
    tp_init_sequences,
    tp_init_passmanager,
    tp_init_symbols,
    tp_init_interfaces,
    tp_init_dialect_types,
    tp_init_dialect_quant,
    tp_init_dialect_sparse_tensor,
    tp_init_dialects22,
    tp_init_execution_engine,
    tp_init_transform_interpreter,
    tp_init_linalg,
    tp_init_rewrite,
};

static int exec_module(PyObject *m) {
  if (tp.Context) {
    PyErr_SetString(PyExc_ImportError, "tether._tether can be loaded once per process");
    return -1;
  }
  /* The interpreter's static data holds no tether object (wrappers pin theirs). */
  tether_skip_program_data();
  /* Every wrapper's pin: the GIL serializes them, so the pool needs no lock of its own. */
  if (!(tp_pins = tether_pin_pool_new())) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < sizeof file_inits / sizeof file_inits[0]; i++)
    if (file_inits[i](m) < 0) return -1;
  tether_set_notifier(tp_collect_notifier);
  return 0;
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_tether",
    "tether's C extension: MLIR handles on a garbage-collected arena.",
    0,
    NULL,
    slots,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__tether(void);
PyMODINIT_FUNC PyInit__tether(void) { return PyModuleDef_Init(&module_def); }
