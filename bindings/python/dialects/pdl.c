/* pdl.c: the types of the pdl dialect (`_tether._pdl`, re-exported by tether.dialects.pdl), which
 * upstream defines in C++.
 */
#include "dialects.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/PDL.h>

static tpy_class_def pdl_defs[];

TPY_ISA(MlirType, mlirTypeIsAPDLType)
TPY_ISA(MlirType, mlirTypeIsAPDLAttributeType)
TPY_ISA(MlirType, mlirTypeIsAPDLOperationType)
TPY_ISA(MlirType, mlirTypeIsAPDLRangeType)
TPY_ISA(MlirType, mlirTypeIsAPDLTypeType)
TPY_ISA(MlirType, mlirTypeIsAPDLValueType)

static const simple_def pdl_attribute = {"pdl", mlirPDLAttributeTypeGet};
static const simple_def pdl_operation = {"pdl", mlirPDLOperationTypeGet};
static const simple_def pdl_type = {"pdl", mlirPDLTypeTypeGet};
static const simple_def pdl_value = {"pdl", mlirPDLValueTypeGet};

/* context=: upstream 22's parameter; on MLIR 19 tether takes it by keyword only. */
#if TETHER_MLIR_VERSION >= 22
#define RANGE_CONTEXT "context: Context | None = None"
#else
#define RANGE_CONTEXT "*, context: Context | None = None"
#endif
static tpy_sig range_get_sig =
    TPY_SIG("get(element_type: Type, " RANGE_CONTEXT ") -> Self", "!pdl.range<...>.");

static PyObject *range_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&range_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  MlirType t;
  PyObject *tctx;
  if (!tpy_dialect_element_arg(a[0], "element_type", "pdl", &t, &tctx) ||
      !tpy_dialect_same_context(a[1], tctx))
    return NULL;
  if (!mlirTypeIsAPDLType(t))
    return PyErr_Format(PyExc_ValueError, "a pdl range holds pdl types (attribute, operation, "
                                          "type or value)");
  return tpy_dialect_wrap_as(cls, tctx, mlirPDLRangeTypeGet(t));
}

static PyObject *range_element(PyObject *self, void *c) {
  (void)c;
  /* The element is a pdl type: of its class (pdl types have no TypeID to find it by). */
  MlirType e = mlirPDLRangeTypeGetElementType(T(self));
  PyTypeObject *cls = NULL;
  for (tpy_class_def *d = pdl_defs + 1; d->name; d++)
    if (d->isa((void *)e.ptr)) cls = d->cls;
  return cls ? tpy_dialect_wrap_as((PyObject *)cls, TPY_CTX(self), e)
             : tpy_wrap_type(TPY_CTX(self), e);
}

static PyMethodDef range_methods[] = {
    {"get", TPY_FASTFN(range_get), TPY_FAST | METH_CLASS, TPY_DOC(range_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef range_getset[] = {
    {"element_type", range_element, NULL, TPY_PROP("Type", NULL), NULL},
    TPY_GETSET_END,
};

static tpy_class_def pdl_defs[] = {
    {"PDLType", NULL, isa_mlirTypeIsAPDLType, NULL, NULL, NULL, NULL, "Any pdl type.", NULL, NULL},
    {"AttributeType", "PDLType", isa_mlirTypeIsAPDLAttributeType,
     SINCE_22(mlirPDLAttributeTypeGetTypeID), tpy_dialect_simple_methods, NULL, NULL,
     "!pdl.attribute", (void *)&pdl_attribute, NULL},
    {"OperationType", "PDLType", isa_mlirTypeIsAPDLOperationType,
     SINCE_22(mlirPDLOperationTypeGetTypeID), tpy_dialect_simple_methods, NULL, NULL,
     "!pdl.operation", (void *)&pdl_operation, NULL},
    {"RangeType", "PDLType", isa_mlirTypeIsAPDLRangeType, SINCE_22(mlirPDLRangeTypeGetTypeID),
     range_methods, range_getset, NULL, "!pdl.range<element_type>", NULL, NULL},
    {"TypeType", "PDLType", isa_mlirTypeIsAPDLTypeType, SINCE_22(mlirPDLTypeTypeGetTypeID),
     tpy_dialect_simple_methods, NULL, NULL, "!pdl.type", (void *)&pdl_type, NULL},
    {"ValueType", "PDLType", isa_mlirTypeIsAPDLValueType, SINCE_22(mlirPDLValueTypeGetTypeID),
     tpy_dialect_simple_methods, NULL, NULL, "!pdl.value", (void *)&pdl_value, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#if TETHER_MLIR_VERSION >= 22
/* Upstream 22's `type_name` / `attr_name` of these classes. */
static const tpy_mlir_name pdl_names[] = {
    {"AttributeType", mlirPDLAttributeTypeGetName}, {"OperationType", mlirPDLOperationTypeGetName},
    {"RangeType", mlirPDLRangeTypeGetName},         {"TypeType", mlirPDLTypeTypeGetName},
    {"ValueType", mlirPDLValueTypeGetName},         {NULL, NULL}};
#endif

int tpy_init_pdl(PyObject *m) {
  if (tpy_dialect_module(m, "_pdl", pdl_defs, NULL) < 0) return -1;
#if TETHER_MLIR_VERSION >= 22
  if (tpy_set_mlir_names(pdl_defs, "type_name", pdl_names) < 0) return -1;
#endif
  return 0;
}
