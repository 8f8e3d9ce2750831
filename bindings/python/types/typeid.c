/* typeid.c: TypeID, the identity of a type or attribute class (X.static_typeid, x.typeid). A
 * TypeID is process-wide: its object holds no Context (ctx is NULL), and compares and hashes by the
 * MLIR TypeID.
 */
#include "types.h"

PyObject *tpy_wrap_typeid(MlirTypeID id) {
  if (mlirTypeIDIsNull(id)) Py_RETURN_NONE;
  return tpy_ctxobj_new(tpy.TypeID, NULL, id.ptr);
}

/* Hashed as MLIR hashes TypeIDs (compared as every value is). */
static Py_hash_t typeid_hash(PyObject *a) {
  return (Py_hash_t)mlirTypeIDHashValue((MlirTypeID){TPY_PTR(a)});
}

static PyObject *typeid_capsule(PyObject *self, void *c) {
  (void)c;
  return PyCapsule_New(TPY_PTR(self), tpy_capsule_name("mlir.ir.TypeID._CAPIPtr"), NULL);
}

static PyObject *typeid_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  void *p = tpy_capsule_pointer(cap, "mlir.ir.TypeID._CAPIPtr");
  if (!p) return NULL;
  return tpy_wrap_typeid((MlirTypeID){p});
}

static PyObject *typeid_new(PyTypeObject *t, PyObject *a, PyObject *k) {
  (void)t;
  (void)a;
  (void)k;
  PyErr_SetString(PyExc_TypeError, "TypeID objects come from static_typeid, .typeid or "
                                   "TypeID._CAPICreate");
  return NULL;
}

static PyMethodDef typeid_methods[] = {
    {"_CAPICreate", typeid_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> TypeID", NULL)},
    TPY_METHODS_END,
};

static PyGetSetDef typeid_getset[] = {
    {"_CAPIPtr", typeid_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot typeid_slots[] = {
    {Py_tp_new, typeid_new},
    {Py_tp_dealloc, tpy_ctxobj_dealloc},
    {Py_tp_richcompare, tpy_ctxobj_richcompare},
    {Py_tp_hash, typeid_hash},
    {Py_tp_methods, typeid_methods},
    {Py_tp_getset, typeid_getset},
    {Py_tp_doc, "The identity of a type or attribute class."},
    {0, NULL},
};

static PyType_Spec tpy_typeid_spec = {"tether.ir.TypeID", sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT,
                                      typeid_slots};

int tpy_init_typeid(PyObject *m) { return tpy_add_type(m, &tpy_typeid_spec, NULL, &tpy.TypeID); }
