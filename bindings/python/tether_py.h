/* Shared declarations of the _tether extension. The extension converts between Python and the
 * arena and holds no lifetime logic of its own: every Python object that stands for MLIR holds one
 * pinned tether handle (the pin is what the collector sees, since Python objects live in malloc
 * memory), and IR wrappers are found again through the handle's user pointer, so each IR object
 * has at most one wrapper while that wrapper lives.
 *
 * Everything runs under the GIL, which serializes all arenas: that is the arena's threading rule.
 */
#ifndef TETHER_PY_H
#define TETHER_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tether.h"

/* IR wrappers (Operation, Region, Block, Value and subclasses) and Module. */
typedef struct {
  PyObject_HEAD void *h;
  intptr_t pin;
} TpHandle;

/* Type, Attribute, Location: context-owned values. */
typedef struct {
  PyObject_HEAD void *h; /* tether_type / tether_attr / tether_loc */
  intptr_t pin;
} TpValueObj;

typedef struct {
  PyObject_HEAD tether_arena *arena;
  intptr_t pin;
} TpContext;

typedef struct {
  PyObject_HEAD MlirPassManager pm;
  PyObject *context; /* TpContext: keeps the arena alive while the pass manager lives */
} TpPassManager;

/* Sequences over an owner wrapper. */
enum {
  TP_LIST_OPERANDS,
  TP_LIST_RESULTS,
  TP_LIST_REGIONS,
  TP_LIST_SUCCESSORS,
  TP_LIST_BLOCK_OPS,
  TP_LIST_BLOCK_ARGS,
  TP_LIST_REGION_BLOCKS,
};

typedef struct {
  PyObject_HEAD PyObject *owner;
  int kind;
} TpList;

typedef struct {
  PyObject_HEAD PyObject *next; /* the wrapper to return next, or NULL at the end */
  int kind;                     /* TP_LIST_BLOCK_OPS or TP_LIST_REGION_BLOCKS */
} TpIter;

typedef struct {
  PyTypeObject *Context, *Module, *Operation, *Region, *Block, *Value, *OpResult, *BlockArgument;
  PyTypeObject *Type, *Attribute, *Location, *PassManager, *List, *Iter;
  PyObject *MLIRError, *InvalidatedError;
  PyObject *type_caster, *attr_caster; /* set by tether/ir.py: pick the most specific class */
} TpState;

extern TpState tp;

/* Raises the exception for a tether status; handle (may be NULL) explains an invalid handle,
 * arena (may be NULL) supplies MLIR's diagnostics. Returns NULL. */
PyObject *tp_raise(int rc, const void *handle, tether_arena *arena);
/* Raises TypeError "<what> must be <expected>, not <type>". Returns NULL. */
PyObject *tp_type_error(const char *what, const char *expected, PyObject *got);

/* Wrappers for IR handles (new references; NULL handle gives None). */
PyObject *tp_wrap_op(tether_op *h);
PyObject *tp_wrap_region(tether_region *h);
PyObject *tp_wrap_block(tether_block *h);
PyObject *tp_wrap_value(tether_value *h);
PyObject *tp_wrap_module(tether_op *h);
/* Context object of an arena: the one already standing for it, else a new one. */
PyObject *tp_context_of(tether_arena *a);
/* Type / Attribute / Location wrappers (cast to the most specific class for types and attrs). */
PyObject *tp_wrap_type(tether_arena *a, MlirType t);
PyObject *tp_wrap_attr(tether_arena *a, MlirAttribute t);
PyObject *tp_wrap_loc(tether_arena *a, MlirLocation l);

/* Argument conversion: 1 on success, 0 with an exception set. */
int tp_arg_context(PyObject *o, tether_arena **out);
int tp_arg_op(PyObject *o, tether_op **h, MlirOperation *raw);
int tp_arg_region(PyObject *o, tether_region **h, MlirRegion *raw);
int tp_arg_block(PyObject *o, tether_block **h, MlirBlock *raw);
int tp_arg_value(PyObject *o, tether_value **h, MlirValue *raw);
int tp_arg_type(PyObject *o, MlirType *raw, tether_arena **arena);
int tp_arg_attr(PyObject *o, MlirAttribute *raw, tether_arena **arena);
int tp_arg_loc(PyObject *o, MlirLocation *raw, tether_arena **arena);

/* A Python str built by an MLIR print callback. */
typedef struct {
  char *data;
  size_t len, cap;
  int failed;
} tp_strbuf;
void tp_strbuf_append(MlirStringRef s, void *user);
PyObject *tp_strbuf_finish(tp_strbuf *b);

PyObject *tp_new_list(PyObject *owner, int kind);

/* Type specs and module-level functions of each file. */
extern PyType_Spec tp_context_spec, tp_module_spec, tp_operation_spec, tp_region_spec,
    tp_block_spec, tp_value_spec, tp_opresult_spec, tp_blockarg_spec, tp_type_spec,
    tp_attribute_spec, tp_location_spec, tp_passmanager_spec, tp_list_spec, tp_iter_spec;
extern PyMethodDef tp_ir_functions[];   /* ir.c */
extern PyMethodDef tp_type_functions[]; /* types.c */

#endif
