/* dialects.h: the C parts of single dialects' Python modules (core.h has the map of the layers),
 * each in a module object of _tether that tether.dialects.<name> re-exports.
 */
#ifndef TETHER_PY_DIALECTS_H
#define TETHER_PY_DIALECTS_H

#include "../passes/passes.h"

/* dialect_types.c: the classes of dialect types, in _tether._transform, ._pdl, ... */
int tpy_init_dialect_types(PyObject *m);
/* quant.c, sparse_tensor.c: quant's types in _tether._quant, sparse_tensor's EncodingAttr in
 * _tether._sparse_tensor. */
int tpy_init_quant(PyObject *m);
int tpy_init_sparse_tensor(PyObject *m);
/* dialects22.c: _tether._smt, ._amdgpu, ._irdl (MLIR 22; nothing on 19). */
int tpy_init_dialects22(PyObject *m);
/* linalg.c: _tether._linalg_fill_builtin_region. */
int tpy_init_linalg(PyObject *m);

#endif
