/* affine.c: AffineExpr (and its subclasses), AffineMap, IntegerSet, and AffineMapAttr.
 *
 * Invariant: affine values are context-owned like types: each holds its Context object.
 */
#include "tether_py.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/IntegerSet.h>

static PyObject *affine_map_str(PyObject *self) {
  tp_strbuf b = {0};
  mlirAffineMapPrint((MlirAffineMap){TP_PTR(self)}, tp_strbuf_append, &b);
  return tp_strbuf_finish(&b);
}

static PyObject *affine_map_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  int eq = PyObject_TypeCheck(b, tp.AffineMap) && TP_PTR(a) == TP_PTR(b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t affine_map_hash(PyObject *a) { return _Py_HashPointer(TP_PTR(a)); }

static PyType_Slot affine_map_slots[] = {
    {Py_tp_dealloc, tp_ctxobj_dealloc},
    {Py_tp_str, affine_map_str},
    {Py_tp_richcompare, affine_map_richcompare},
    {Py_tp_hash, affine_map_hash},
    {Py_tp_doc, "An affine map."},
    {0, NULL},
};

static PyType_Spec affine_map_spec = {"tether.ir.AffineMap", sizeof(TpCtxObj), 0,
                                      Py_TPFLAGS_DEFAULT, affine_map_slots};

PyObject *tp_wrap_affine_map(PyObject *ctx, MlirAffineMap m) {
  if (mlirAffineMapIsNull(m)) Py_RETURN_NONE;
  return tp_ctxobj_new(tp.AffineMap, ctx, m.ptr);
}

int tp_init_affine(PyObject *m) { return tp_add_type(m, &affine_map_spec, NULL, &tp.AffineMap); }
