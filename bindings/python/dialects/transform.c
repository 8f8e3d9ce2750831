/* transform.c: the types of the transform dialect (`_tether._transform`, re-exported by
 * tether.dialects.transform), which upstream defines in C++: AnyOpType, AnyParamType, AnyValueType,
 * OperationType, ParamType.
 */
#include "dialects.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Transform.h>

TPY_ISA(MlirType, mlirTypeIsATransformAnyOpType)
TPY_ISA(MlirType, mlirTypeIsATransformAnyParamType)
TPY_ISA(MlirType, mlirTypeIsATransformAnyValueType)
TPY_ISA(MlirType, mlirTypeIsATransformOperationType)
TPY_ISA(MlirType, mlirTypeIsATransformParamType)

static const simple_def any_op = {"transform", mlirTransformAnyOpTypeGet};
static const simple_def any_param = {"transform", mlirTransformAnyParamTypeGet};
static const simple_def any_value = {"transform", mlirTransformAnyValueTypeGet};

static tpy_sig operation_type_get_sig =
    TPY_SIG("get(operation_name: str, context: Context | None = None) -> OperationType",
            "!transform.op<\"name\">.");

static PyObject *operation_type_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&operation_type_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirStringRef name;
  if (!tpy_arg_str(a[0], "operation_name", &name)) return NULL;
  MlirContext raw;
  PyObject *ctx = tpy_dialect_context(a[1], "transform", &raw);
  return ctx ? tpy_wrap_type(ctx, mlirTransformOperationTypeGet(raw, name)) : NULL;
}

static PyObject *operation_type_name(PyObject *self, void *c) {
  (void)c;
  MlirStringRef s = mlirTransformOperationTypeGetOperationName(T(self));
  return PyUnicode_FromStringAndSize(s.data, (Py_ssize_t)s.length);
}

static PyMethodDef operation_type_methods[] = {
    {"get", TPY_FASTFN(operation_type_get), TPY_FAST | METH_STATIC,
     TPY_DOC(operation_type_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef operation_type_getset[] = {
    {"operation_name", operation_type_name, NULL,
     TPY_PROP("str", "The name of the payload operation."), NULL},
    TPY_GETSET_END,
};

static tpy_sig param_type_get_sig = TPY_SIG(
    "get(type: Type, context: Context | None = None) -> ParamType", "!transform.param<type>.");

static PyObject *param_type_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&param_type_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirType t;
  PyObject *tctx;
  if (!tpy_dialect_element_arg(a[0], "type", "transform", &t, &tctx)) return NULL;
  return tpy_wrap_type(tctx, mlirTransformParamTypeGet(mlirTypeGetContext(t), t));
}

static PyObject *param_type_type(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirTransformParamTypeGetType(T(self)));
}

static PyMethodDef param_type_methods[] = {
    {"get", TPY_FASTFN(param_type_get), TPY_FAST | METH_STATIC, TPY_DOC(param_type_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef param_type_getset[] = {
    {"type", param_type_type, NULL, TPY_PROP("Type", "The type of the parameter's values."), NULL},
    TPY_GETSET_END,
};

static tpy_class_def transform_defs[] = {
    {"AnyOpType", NULL, isa_mlirTypeIsATransformAnyOpType, mlirTransformAnyOpTypeGetTypeID,
     tpy_dialect_simple_methods, NULL, NULL, "!transform.any_op", (void *)&any_op, NULL},
    {"AnyParamType", NULL, isa_mlirTypeIsATransformAnyParamType, mlirTransformAnyParamTypeGetTypeID,
     tpy_dialect_simple_methods, NULL, NULL, "!transform.any_param", (void *)&any_param, NULL},
    {"AnyValueType", NULL, isa_mlirTypeIsATransformAnyValueType, mlirTransformAnyValueTypeGetTypeID,
     tpy_dialect_simple_methods, NULL, NULL, "!transform.any_value", (void *)&any_value, NULL},
    {"OperationType", NULL, isa_mlirTypeIsATransformOperationType,
     mlirTransformOperationTypeGetTypeID, operation_type_methods, operation_type_getset, NULL,
     "!transform.op<\"name\">", NULL, NULL},
    {"ParamType", NULL, isa_mlirTypeIsATransformParamType, mlirTransformParamTypeGetTypeID,
     param_type_methods, param_type_getset, NULL, "!transform.param<type>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#if TETHER_MLIR_VERSION >= 22
/* Upstream 22's `type_name` / `attr_name` of these classes. */
static const tpy_mlir_name transform_names[] = {
    {"AnyOpType", mlirTransformAnyOpTypeGetName},
    {"AnyParamType", mlirTransformAnyParamTypeGetName},
    {"AnyValueType", mlirTransformAnyValueTypeGetName},
    {"OperationType", mlirTransformOperationTypeGetName},
    {"ParamType", mlirTransformParamTypeGetName},
    {NULL, NULL}};
#endif

int tpy_init_transform(PyObject *m) {
  if (tpy_dialect_module(m, "_transform", transform_defs, NULL) < 0) return -1;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_set_mlir_names(transform_defs, "type_name", transform_names) < 0) return -1;
#endif
  return 0;
}
