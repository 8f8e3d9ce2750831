/* amdgpu.c: the amdgpu dialect's TDM types (TDMBaseType, TDMDescriptorType, TDMGatherBaseType), in
 * `_tether._amdgpu` (tether.dialects.amdgpu re-exports them); MLIR 22 only.
 *
 * Invariant: a type is made once the dialect is loaded, with parameters its verifier accepts.
 */
#include "dialects.h"

#if TETHER_MLIR_VERSION >= 22

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Dialect/AMDGPU.h>

TPY_ISA(MlirType, mlirTypeIsAAMDGPUTDMBaseType)
TPY_ISA(MlirType, mlirTypeIsAAMDGPUTDMDescriptorType)
TPY_ISA(MlirType, mlirTypeIsAAMDGPUTDMGatherBaseType)

static const simple_def tdm_descriptor = {"amdgpu", mlirAMDGPUTDMDescriptorTypeGet};

static tpy_sig tdm_base_get_sig =
    TPY_SIG("get(element_type: Type, context: Context | None = None) -> Self",
            "!amdgpu.tdm_base<element_type>.");

/* TDMBaseType.get(element_type, context=None) */
static PyObject *tdm_base_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&tdm_base_get_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *ctx = tpy_dialect_ctx(a[1], "amdgpu");
  MlirType e;
  if (!ctx || !tpy_arg_type_in(a[0], ctx, &e)) return NULL;
  return tpy_cast_to(cls, tpy_wrap_type(ctx, mlirAMDGPUTDMBaseTypeGet(tpy_ctx_raw(ctx), e)));
}

static tpy_sig tdm_gather_get_sig =
    TPY_SIG("get(element_type: Type, index_type: Type, context: Context | None = None) -> Self",
            "!amdgpu.tdm_gather_base<element_type, index_type>.");

/* TDMGatherBaseType.get(element_type, index_type, context=None). The type has a verifier, which
 * the C API's getter does not run: the type is made by parsing it (which does), MLIRError with the
 * verifier's diagnostics when it refuses. */
static PyObject *tdm_gather_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  PyObject *a[3];
  if (!tpy_fastargs(&tdm_gather_get_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *ctx = tpy_dialect_ctx(a[2], "amdgpu");
  MlirType e, i;
  if (!ctx || !tpy_arg_type_in(a[0], ctx, &e) || !tpy_arg_type_in(a[1], ctx, &i)) return NULL;
  tpy_strbuf b = {0};
  tpy_strbuf_append(mlirStringRefCreateFromCString("!amdgpu.tdm_gather_base<"), &b);
  mlirTypePrint(e, tpy_strbuf_append, &b);
  tpy_strbuf_append(mlirStringRefCreateFromCString(", "), &b);
  mlirTypePrint(i, tpy_strbuf_append, &b);
  tpy_strbuf_append(mlirStringRefCreateFromCString(">"), &b);
  if (b.failed) {
    PyMem_RawFree(b.data);
    return PyErr_NoMemory();
  }
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  MlirType t = {NULL};
  if (tether_parse_check(tpy_ctx_raw(ctx), TETHER_PARSE_TYPE, b.data, b.len) == TETHER_OK)
    t = mlirTypeParseGet(tpy_ctx_raw(ctx), mlirStringRefCreate(b.data, b.len));
  PyMem_RawFree(b.data);
  if (mlirTypeIsNull(t) || !mlirTypeIsAAMDGPUTDMGatherBaseType(t))
    return tpy_errcap_raise(&cap, "Invalid type");
  tpy_errcap_close(&cap);
  return tpy_cast_to(cls, tpy_wrap_type(ctx, t));
}

static PyMethodDef tdm_base_methods[] = {
    {"get", TPY_FASTFN(tdm_base_get), TPY_FAST | METH_CLASS, TPY_DOC(tdm_base_get_sig)},
    TPY_METHODS_END,
};

static PyMethodDef tdm_gather_methods[] = {
    {"get", TPY_FASTFN(tdm_gather_get), TPY_FAST | METH_CLASS, TPY_DOC(tdm_gather_get_sig)},
    TPY_METHODS_END,
};

static tpy_class_def amdgpu_defs[] = {
    {"TDMBaseType", NULL, isa_mlirTypeIsAAMDGPUTDMBaseType, mlirAMDGPUTDMBaseTypeGetTypeID,
     tdm_base_methods, NULL, NULL, "!amdgpu.tdm_base<element_type>", NULL, NULL},
    {"TDMDescriptorType", NULL, isa_mlirTypeIsAAMDGPUTDMDescriptorType,
     mlirAMDGPUTDMDescriptorTypeGetTypeID, tpy_dialect_simple_methods, NULL, NULL,
     "!amdgpu.tdm_descriptor", (void *)&tdm_descriptor, NULL},
    {"TDMGatherBaseType", NULL, isa_mlirTypeIsAAMDGPUTDMGatherBaseType,
     mlirAMDGPUTDMGatherBaseTypeGetTypeID, tdm_gather_methods, NULL, NULL,
     "!amdgpu.tdm_gather_base<element_type, index_type>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const tpy_mlir_name amdgpu_names[] = {
    {"TDMBaseType", mlirAMDGPUTDMBaseTypeGetName},
    {"TDMDescriptorType", mlirAMDGPUTDMDescriptorTypeGetName},
    {"TDMGatherBaseType", mlirAMDGPUTDMGatherBaseTypeGetName},
    {NULL, NULL}};

int tpy_init_amdgpu(PyObject *m) {
  return tpy_dialect_module(m, "_amdgpu", amdgpu_defs, NULL) < 0 ||
                 tpy_set_mlir_names(amdgpu_defs, "type_name", amdgpu_names) < 0
             ? -1
             : 0;
}

#endif
