/* extension.c: the _tether module, above every layer (core/core.h has the map): it only assembles.
 * Each file adds its classes and functions to the module (tpy_init_*), in an order where a class
 * exists before the classes that refer to it at init; the arena's notifier is set last, once
 * everything it may reach exists.
 */
#include "dialects/dialects.h"

#include <string.h>

/* Each file's init, in order: a class exists before the classes that refer to it at init. */
static int (*const file_inits[])(PyObject *m) = {
    tpy_init_errors,
    tpy_init_collect,
    tpy_init_sig,
    tpy_init_typeid,
    tpy_init_classes,
    tpy_init_current,
    tpy_init_context,
    tpy_init_thread_pool,
    tpy_init_insertion_point,
    tpy_init_dialect_registry,
    tpy_init_locations,
    tpy_init_diagnostics,
    tpy_init_types,
    tpy_init_attributes,
    tpy_init_affine_expr,
    tpy_init_affine_map,
    tpy_init_integer_set,
    tpy_init_operation,
    tpy_init_opview,
    tpy_init_create,
    tpy_init_ods_builder,
    tpy_init_module,
    tpy_init_attrmap,
    tpy_init_printing,
    tpy_init_region,
    tpy_init_block,
    tpy_init_value,
    tpy_init_sequences,
    tpy_init_passmanager,
    tpy_init_symbols,
    tpy_init_interfaces,
    tpy_init_transform,
    tpy_init_pdl,
    tpy_init_gpu,
    tpy_init_llvm,
    tpy_init_arith,
    tpy_init_quant,
    tpy_init_sparse_tensor,
#if TETHER_MLIR_VERSION >= 22
    tpy_init_smt,
    tpy_init_amdgpu,
    tpy_init_irdl,
#endif
    tpy_init_execution_engine,
    tpy_init_transform_interpreter,
    tpy_init_linalg,
    tpy_init_rewrite,
};

static int exec_module(PyObject *m) {
  if (tpy.Context) {
    PyErr_SetString(PyExc_ImportError, "tether._tether can be loaded once per process");
    return -1;
  }
  /* The interpreter's static data holds no tether object (wrappers pin theirs), nor does this
   * extension's (its caches hold Python objects and MLIR pointers). */
  tether_skip_program_data();
  tether_skip_library_data((const void *)&tpy);
  /* The interpreter may be a shared library of its own (libpython3.x.so: 1.3 MB of data a
   * collection would otherwise scan, about a millisecond each time): a no-op when it is linked
   * into the program. */
  tether_skip_library_data((const void *)&PyExc_TypeError);
  /* Every wrapper's pin: the GIL serializes them, so the pool needs no lock of its own. */
  if (!(tpy_pins = tether_pin_pool_new())) {
    PyErr_NoMemory();
    return -1;
  }
  for (size_t i = 0; i < sizeof file_inits / sizeof file_inits[0]; i++)
    if (file_inits[i](m) < 0) return -1;
  /* Every table is in place: the docstrings and _signatures from their signature specs. */
  if (tpy_sig_publish(m) < 0) return -1;
  tether_set_notifier(tpy_collect_notifier);
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
