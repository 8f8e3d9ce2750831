/* handle.c: what the wrappers of regions, blocks and values (TpHandle) share: one object per
 * handle while it lives, found again through the handle's user pointer; the hold that keeps the
 * handle (and so its tree) alive while the object lives (tether_handle_hold); comparison and
 * hashing by handle; and the converters of such objects as arguments.
 *
 * Invariant: a handle's user pointer is its interned wrapper or NULL: the wrapper clears it when
 * it goes. Wrappers that are not interned (a plain Value of an operand, a value caster's object)
 * hold the handle without claiming the user pointer.
 */
#include "ir.h"

PyObject *tpy_handle_new(PyTypeObject *type, void *h) {
  TpHandle *self = (TpHandle *)tpy_obj_alloc(type);
  if (!self) return NULL;
  self->pin = tpy_hold(h);
  if (self->pin < 0) {
    self->pin = -1;
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->h = h;
  return (PyObject *)self;
}

PyObject *tpy_wrap_handle(PyTypeObject *type, void *h) {
  if (!h) Py_RETURN_NONE;
  PyObject *o = tether_handle_get_user(h);
  if (o) return Py_NewRef(o);
  o = tpy_handle_new(type, h);
  if (o) tether_handle_set_user(h, o);
  return o;
}

void tpy_handle_dealloc(TpHandle *self) {
  if (self->h && tether_handle_get_user(self->h) == self) tether_handle_set_user(self->h, NULL);
  if (self->h && self->pin >= 0) tpy_release(self->h);
  PyTypeObject *t = Py_TYPE(self);
  tpy_obj_free((PyObject *)self);
  Py_DECREF(t);
}

PyObject *tpy_handle_richcompare(PyObject *a, PyObject *b, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  /* Values compare by the value whatever their class (Value, OpResult, a caster's subclass);
   * regions and blocks by the object, within their own kind. */
  int av = tpy_is(a, tpy.Value), bv = tpy_is(b, tpy.Value);
  int eq = (av || bv) ? av && bv && TPY_H(a) == TPY_H(b)
                      : Py_TYPE(b)->tp_dealloc == Py_TYPE(a)->tp_dealloc && TPY_H(a) == TPY_H(b);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

Py_hash_t tpy_handle_hash(PyObject *a) { return _Py_HashPointer(TPY_H(a)); }

#define ARG_FN(name, ctype, rawtype, pytype, getter, what)                                         \
  int name(PyObject *o, ctype **h, rawtype *raw) {                                                 \
    if (!tpy_is(o, tpy.pytype)) return tpy_type_error("argument", what, o), 0;                     \
    ctype *x = TPY_H(o);                                                                           \
    int rc = getter(x, raw);                                                                       \
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, x), 0;                                            \
    *h = x;                                                                                        \
    return 1;                                                                                      \
  }

ARG_FN(tpy_arg_region, tether_region, MlirRegion, Region, tether_region_get, "a Region")
ARG_FN(tpy_arg_block, tether_block, MlirBlock, Block, tether_block_get, "a Block")
ARG_FN(tpy_arg_value, tether_value, MlirValue, Value, tether_value_get, "a Value")
