/* linalg.c: _tether._linalg_fill_builtin_region, upstream's `linalg.fill_builtin_region(op)`:
 * MLIR builds the body of a named linalg op (mlirLinalgFillBuiltinNamedOpRegion).
 *
 * MLIR checks nothing there: it casts the op to a linalg op (any other op is undefined
 * behaviour), indexes block arguments by the op's definition (too few operands read past them)
 * and reaches llvm_unreachable on element types its region builder does not handle (matmul of
 * index tensors, a float div_unsigned). So: the op must be one of the ops MLIR has a region builder
 * for (the table generated from MLIR's headers), with one empty region and the operand count its
 * region takes; and the call is made in a child first, once per operation name, operand types and
 * attributes (tether_probe). */
#include "tether_py.h"

#include <mlir-c/Dialect/Linalg.h>
#include <string.h>

typedef struct {
  const char *name;
  int nargs; /* operands the region builder takes; 0: not known (not checked) */
} region_op;

#define TP_LINALG_REGION_OP(name, nargs) {name, nargs},
static const region_op region_ops[] = {
#include "bindings/python/linalg_region_ops.h"
    {NULL, 0},
};
#undef TP_LINALG_REGION_OP

static const region_op *find_region_op(MlirStringRef name) {
  for (const region_op *r = region_ops; r->name; r++)
    if (strlen(r->name) == name.length && !memcmp(r->name, name.data, name.length)) return r;
  return NULL;
}

static void fill_in_child(void *op) { mlirLinalgFillBuiltinNamedOpRegion(*(MlirOperation *)op); }

static void key_sep(tp_strbuf *b) { tp_strbuf_append(mlirStringRefCreate("\x1f", 1), b); }

/* What the region builder's behaviour depends on: the op, its operands' types, its attributes. */
static void make_key(tp_strbuf *b, MlirOperation op, MlirStringRef name) {
  tp_strbuf_append(mlirStringRefCreateFromCString("linalg.fill_builtin_region"), b);
  key_sep(b);
  tp_strbuf_append(name, b);
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n; i++) {
    key_sep(b);
    mlirTypePrint(mlirValueGetType(mlirOperationGetOperand(op, i)), tp_strbuf_append, b);
  }
  intptr_t na = mlirOperationGetNumAttributes(op);
  for (intptr_t i = 0; i < na; i++) {
    MlirNamedAttribute a = mlirOperationGetAttribute(op, i);
    key_sep(b);
    tp_strbuf_append(mlirIdentifierStr(a.name), b);
    key_sep(b);
    mlirAttributePrint(a.attribute, tp_strbuf_append, b);
  }
}

static PyObject *fill_builtin_region(PyObject *module, PyObject *arg) {
  (void)module;
  tether_op *h;
  MlirOperation op;
  if (!tp_arg_op(arg, &h, &op)) return NULL;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  const region_op *r = find_region_op(name);
  if (!r || !mlirContextIsRegisteredOperation(mlirOperationGetContext(op), name))
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: '%.*s' is not a named linalg op whose region MLIR "
                        "builds (linalg.matmul, linalg.fill, linalg.transpose, ...)",
                        (int)name.length, name.data);
  if (mlirOperationGetNumRegions(op) != 1)
    return PyErr_Format(PyExc_ValueError, "fill_builtin_region: '%s' must have one region",
                        r->name);
  if (!mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0))))
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: the region of this '%s' already has a body", r->name);
  intptr_t n = mlirOperationGetNumOperands(op);
  if (r->nargs && n != r->nargs)
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: the region of '%s' takes %d operands (its inputs "
                        "and outputs), but this op has %zd",
                        r->name, r->nargs, (Py_ssize_t)n);
  if (n < 1)
    return PyErr_Format(PyExc_ValueError, "fill_builtin_region: this '%s' has no operands",
                        r->name);
  tp_strbuf key = {0};
  make_key(&key, op, name);
  if (key.failed) {
    PyMem_RawFree(key.data);
    return PyErr_NoMemory();
  }
  int safe = tether_probe(key.data, key.len, fill_in_child, &op);
  PyMem_RawFree(key.data);
  if (safe == 0)
    return PyErr_Format(PyExc_ValueError,
                        "fill_builtin_region: MLIR's region builder of '%s' crashes on these "
                        "operand types and attributes (an element type or function it does not "
                        "handle)",
                        r->name);
  mlirLinalgFillBuiltinNamedOpRegion(op);
  tether_arena_touch(tether_handle_arena(h));
  Py_RETURN_NONE;
}

static PyMethodDef functions[] = {
    {"_linalg_fill_builtin_region", fill_builtin_region, METH_O,
     "_linalg_fill_builtin_region(op): builds the body of a named linalg op (MLIR's region "
     "builder), as upstream's linalg.fill_builtin_region."},
    TP_METHODS_END,
};

int tp_init_linalg(PyObject *m) { return PyModule_AddFunctions(m, functions); }
