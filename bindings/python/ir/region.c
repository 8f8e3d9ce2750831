/* region.c: Region (upstream mlir.ir.Region): its blocks, owner and context; Region(context=None)
 * creates a detached region, owned by its object until Operation.create takes it.
 *
 * Invariant: every method reaches the region through the arena's guarded access first, so an
 * invalid handle raises InvalidatedError before anything touches MLIR.
 */
#include "ir.h"

PyObject *tpy_wrap_region(tether_region *h) { return tpy_wrap_handle(tpy.Region, h); }

static tpy_sig region_new_sig =
    TPY_SIG("Region(context: Context | None = None)",
            "A region. A new one is detached, owned by this object until it is given to "
            "Operation.create.");

static PyObject *region_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *c;
  if (!tpy_args(&region_new_sig, args, kw, &c, 1)) return NULL;
  TpContext *ctx = tpy_resolve_context(c);
  if (!ctx) return NULL;
  tether_region *r;
  int rc = tether_region_create(ctx->arena, &r);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, ctx->arena);
  (void)type;
  return tpy_wrap_region(r);
}

static PyObject *region_blocks(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK(tether_region_get, self, MlirRegion);
  return tpy_new_list(self, TPY_LIST_REGION_BLOCKS);
}

static PyObject *region_owner(PyObject *self, void *c) {
  (void)c;
  tether_op *p;
  TPY_CALL(tether_region_parent(TPY_H(self), &p), TPY_H(self));
  return tpy_wrap_op(p);
}

static PyObject *region_context(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK(tether_region_get, self, MlirRegion);
  return tpy_context_of_handle(TPY_H(self));
}

static PyObject *region_iter(PyObject *self) {
  PyObject *l = region_blocks(self, NULL);
  if (!l) return NULL;
  PyObject *it = tpy_list_iter(l);
  Py_DECREF(l);
  return it;
}

static PyGetSetDef region_getset[] = {
    {"blocks", region_blocks, NULL, TPY_PROP("BlockList", "The region's blocks (BlockList)."),
     NULL},
    {"owner", region_owner, NULL,
     TPY_PROP("OpView | None", "The operation owning the region, or None if detached."), NULL},
    {"context", region_context, NULL, TPY_PROP("Context", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot region_slots[] = {
    {Py_tp_new, region_new},
    {Py_tp_dealloc, tpy_handle_dealloc},
    {Py_tp_richcompare, tpy_handle_richcompare},
    {Py_tp_hash, tpy_handle_hash},
    {Py_tp_iter, region_iter},
    {Py_tp_getset, region_getset},
    {Py_tp_doc, TPY_DOC(region_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_region_spec = {"tether.ir.Region", sizeof(TpHandle), 0,
                                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, region_slots};

int tpy_init_region(PyObject *m) { return tpy_add_type(m, &tpy_region_spec, NULL, &tpy.Region); }
