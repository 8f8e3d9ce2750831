/* dialects.h: the C parts of single dialects' Python modules (core.h has the map of the layers),
 * each in a module object of _tether that tether.dialects.<name> re-exports.
 */
#ifndef TETHER_PY_DIALECTS_H
#define TETHER_PY_DIALECTS_H

#include "../passes/passes.h"

/* ---- what the dialect files share (dialects.c) --------------------------------------------- */

/* The TypeID getter the C API has on MLIR 22 only (upstream 22 registers these classes' casters):
 * NULL on 19. */
/* The TypeID getter the C API has on MLIR 22 only (upstream 22 registers these classes' casters):
 * NULL on 19. */
#if TETHER_MLIR_VERSION >= 22
#define SINCE_22(fn) fn
#else
#define SINCE_22(fn) NULL
#endif

#define T(o) ((MlirType){TPY_PTR(o)})

/* A type class without parameters: data points to one of these. */
typedef struct {
  const char *dialect;
  MlirType (*get)(MlirContext);
} simple_def;

/* The type as an object of cls: classes without a TypeID have no caster. */
PyObject *tpy_dialect_wrap_as(PyObject *cls, PyObject *ctx, MlirType t);
/* The Context object (borrowed) of a `context=` argument, with dialect loaded in it; NULL with an
 * exception (ValueError when the context knows no such dialect). */
PyObject *tpy_dialect_context(PyObject *c, const char *dialect, MlirContext *raw);
/* `get(context=None)` of the classes whose data is a simple_def. */
extern PyMethodDef tpy_dialect_simple_methods[];
/* An optional `context=` next to a value that determines the context: when given (not None), it
 * must be ctx's (ValueError). 1 or 0. */
int tpy_dialect_same_context(PyObject *c, PyObject *ctx);
/* A type argument (its context in *ctx), with dialect loaded in that context. 1 or 0. */
int tpy_dialect_element_arg(PyObject *o, const char *what, const char *dialect, MlirType *t,
                            PyObject **ctx);
/* The functions of a table added to the module `attr` of m (made by tpy_dialect_module). 0 or -1.
 */
int tpy_dialect_functions(PyObject *m, const char *attr, PyMethodDef *functions);
/* The Context object (borrowed) of a `context=` argument, with dialect loaded in it. */
static inline PyObject *tpy_dialect_ctx(PyObject *c, const char *dialect) {
  MlirContext raw;
  return tpy_dialect_context(c, dialect, &raw);
}
/* The module `attr` of m, with the type classes `defs` and the attribute classes `attr_defs`
 * (may be NULL). 0 or -1. */
int tpy_dialect_module(PyObject *m, const char *attr, tpy_class_def *defs,
                       tpy_class_def *attr_defs);

/* ---- the dialects -------------------------------------------------------------------------- */

/* transform.c, pdl.c, gpu.c, llvm.c: the types upstream defines in C++ (and gpu's ObjectAttr), in
 * _tether._transform, ._pdl, ._gpu and ._nvgpu, ._llvm. */
int tpy_init_transform(PyObject *m);
int tpy_init_pdl(PyObject *m);
int tpy_init_gpu(PyObject *m);
int tpy_init_llvm(PyObject *m);
int tpy_init_arith(PyObject *m);
/* quant.c, sparse_tensor.c: quant's types in _tether._quant, sparse_tensor's EncodingAttr in
 * _tether._sparse_tensor. */
int tpy_init_quant(PyObject *m);
int tpy_init_sparse_tensor(PyObject *m);
#if TETHER_MLIR_VERSION >= 22
/* smt.c, amdgpu.c, irdl.c: _tether._smt, ._amdgpu, ._irdl (the dialects whose Python bindings
 * upstream gained in MLIR 22; nothing on 19). */
int tpy_init_smt(PyObject *m);
int tpy_init_amdgpu(PyObject *m);
int tpy_init_irdl(PyObject *m);
#endif
/* linalg.c: _tether._linalg_fill_builtin_region. */
int tpy_init_linalg(PyObject *m);

#endif
