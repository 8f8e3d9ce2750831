/* dialect_quant.c: the quant dialect's types, upstream's `mlir.dialects.quant` classes
 * (QuantizedType, AnyQuantizedType, UniformQuantizedType, UniformQuantizedPerAxisType,
 * CalibratedQuantizedType; UniformQuantizedSubChannelType on MLIR 22), through the dialect's C API,
 * in `_tether._quant` (re-exported by tether.dialects.quant).
 *
 * The C API creates its types with the unchecked getters (`get`, not `getChecked`): MLIR's
 * verifier does not run, and a type it would reject is created anyway and crashes later (in the
 * printer, in a pass). So every constructor here checks first what QuantTypes.cpp's verifiers
 * check, and raises ValueError with the verifier's message instead; each loads the dialect first
 * (MLIR aborts when a type of an unloaded dialect is made). Arguments convert as upstream's
 * (pybind11): a value of the wrong kind or out of range is a TypeError.
 *
 * MLIR 19's C API has no TypeID getters: as upstream 19, there are no casters and no
 * `static_typeid` (a parsed `!quant.uniform<...>` is a plain Type; `UniformQuantizedType(t)` casts
 * it). On MLIR 22, as upstream 22: casters (types come out as their class), `type_name`, a
 * `context=None` keyword on every get (it must be the types' context), per-axis scales and zero
 * points as lists, and UniformQuantizedSubChannelType.
 */
#include "dialects.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/Quant.h>
#include <math.h>
#include <string.h>

#define T(o) ((MlirType){TPY_PTR(o)})

/* MLIR 22: every get() ends with upstream 22's `context=None` (Q: 1 there, else 0). */
#if TETHER_MLIR_VERSION >= 22
#define Q 1
#define QCTX ", context: Context | None = None"
#define SINCE_22(fn) fn
#else
#define Q 0
#define QCTX ""
#define SINCE_22(fn) NULL
#endif

/* The `context=` of a get (a[i] when Q): given (not None), it must be ctx, the types'. 1 or 0. */
static int context_is(PyObject *const *a, int i, PyObject *ctx) {
  if (!Q || !a[i] || a[i] == Py_None) return 1;
  TpContext *c = tpy_resolve_context(a[i]);
  if (!c) return 0;
  if (!tpy_same_context((PyObject *)c, ctx)) {
    PyErr_SetString(PyExc_ValueError, "context: not the context of the types given");
    return 0;
  }
  return 1;
}

/* ---- arguments ------------------------------------------------------------------------------- */

static int int64_arg(PyObject *o, const char *what, int64_t *out) {
  long long v;
  if (!tpy_arg_int_in(o, what, INT64_MIN, INT64_MAX, &v)) return 0;
  *out = (int64_t)v;
  return 1;
}

/* A float argument (a float, an int, or anything with __float__ / __index__). */
static int double_arg(PyObject *o, const char *what, double *out) {
  if (!PyFloat_Check(o) && !PyIndex_Check(o) &&
      !(Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float))
    return tpy_type_error(what, "a float", o), 0;
  double v = PyFloat_AsDouble(o);
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be a float, not %R", what, o);
    return 0;
  }
  *out = v;
  return 1;
}

/* A bool argument: True/False or an int (as upstream's conversion to bool). */
static int bool_arg(PyObject *o, const char *what, bool *out) {
  if (!PyBool_Check(o) && !PyIndex_Check(o)) return tpy_type_error(what, "a bool", o), 0;
  int v = PyObject_IsTrue(o);
  if (v < 0) return 0;
  *out = v;
  return 1;
}

/* A Type argument named `what`; of the context `in` unless it is NULL. ctx (may be NULL) receives
 * its Context (borrowed). */
static int type_arg(PyObject *o, const char *what, PyObject *in, MlirType *t, PyObject **ctx) {
  if (!tpy_is(o, tpy.Type)) return tpy_type_error(what, "a Type", o), 0;
  if (in && !tpy_same_context(TPY_CTX(o), in)) {
    PyErr_Format(PyExc_ValueError, "%s: a Type of another context cannot be used here", what);
    return 0;
  }
  t->ptr = TPY_PTR(o);
  if (ctx) *ctx = TPY_CTX(o);
  return 1;
}

/* A double as MLIR's diagnostics print it ("%e"), as a new str. */
static PyObject *fmt_double(double v) {
  char *s = PyOS_double_to_string(v, 'e', 6, 0, NULL);
  if (!s) return PyErr_NoMemory();
  PyObject *r = PyUnicode_FromString(s);
  PyMem_Free(s);
  return r;
}

/* ---- quant: checks of QuantTypes.cpp's verifiers --------------------------------------------- */

/* QuantizedType::verify, and that the expressed type (when there is one) is a float type. */
static int check_quantized(unsigned flags, MlirType storage, MlirType expressed, int64_t min,
                           int64_t max) {
  if (!mlirTypeIsAInteger(storage)) {
    PyErr_SetString(PyExc_ValueError, "storage type must be integral");
    return 0;
  }
  unsigned width = mlirIntegerTypeGetWidth(storage);
  if (width == 0 || width > 32) {
    PyErr_Format(PyExc_ValueError, "illegal storage type size: %u", width);
    return 0;
  }
  bool is_signed = (flags & mlirQuantizedTypeGetSignedFlag()) != 0;
  int64_t lo = mlirQuantizedTypeGetDefaultMinimumForInteger(is_signed, width);
  int64_t hi = mlirQuantizedTypeGetDefaultMaximumForInteger(is_signed, width);
  if (max <= min || min < lo || max > hi) {
    PyErr_Format(PyExc_ValueError, "illegal storage min and storage max: (%lld:%lld)",
                 (long long)min, (long long)max);
    return 0;
  }
  if (!mlirTypeIsNull(expressed) && !mlirTypeIsAFloat(expressed)) {
    PyErr_SetString(PyExc_ValueError, "expressed type must be floating point");
    return 0;
  }
  return 1;
}

static int check_scale(double scale) {
  if (scale > 0.0 && !isinf(scale) && !isnan(scale)) return 1;
  PyObject *s = fmt_double(scale);
  if (s) PyErr_Format(PyExc_ValueError, "illegal scale: %U", s);
  Py_XDECREF(s);
  return 0;
}

/* The common head of the get() arguments: flags, storage type, expressed type (one context, the
 * quant dialect loaded). ctx receives the storage type's Context (borrowed). */
static int quant_head(PyObject *const *a, unsigned *flags, MlirType *storage, MlirType *expressed,
                      PyObject **ctx) {
  if (!tpy_arg_uint_in(a[0], "flags", flags) ||
      !type_arg(a[1], "storage_type", NULL, storage, ctx) ||
      !type_arg(a[2], "expressed_type", *ctx, expressed, NULL))
    return 0;
  return tpy_load_dialect(mlirTypeGetContext(*storage), "quant");
}

/* ---- quant: QuantizedType -------------------------------------------------------------------- */

static PyObject *qt_default_bound(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames, int maximum) {
  PyObject *a[2];
  if (!tpy_fastargs(sig, args, nargs, kwnames, a, 2)) return NULL;
  bool is_signed;
  unsigned width;
  if (!bool_arg(a[0], "is_signed", &is_signed) || !tpy_arg_uint_in(a[1], "integral_width", &width))
    return NULL;
  if (width > 64) /* beyond 64 bits MLIR's computation is undefined */
    return PyErr_Format(PyExc_ValueError, "integral_width must be at most 64, not %u", width);
  return PyLong_FromLongLong(maximum
                                 ? mlirQuantizedTypeGetDefaultMaximumForInteger(is_signed, width)
                                 : mlirQuantizedTypeGetDefaultMinimumForInteger(is_signed, width));
}

static tpy_sig qt_default_min_sig =
    TPY_SIG("default_minimum_for_integer(is_signed: bool, integral_width: int) -> int",
            "The smallest value of an integer of that signedness and width.");

static PyObject *qt_default_min(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)m;
  return qt_default_bound(&qt_default_min_sig, args, nargs, kwnames, 0);
}

static tpy_sig qt_default_max_sig =
    TPY_SIG("default_maximum_for_integer(is_signed: bool, integral_width: int) -> int",
            "The largest value of an integer of that signedness and width.");

static PyObject *qt_default_max(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  (void)m;
  return qt_default_bound(&qt_default_max_sig, args, nargs, kwnames, 1);
}

/* The result of a cast: TypeError "Invalid cast." (upstream's) when MLIR gives none. */
static PyObject *cast_result(PyObject *ctx, MlirType t) {
  if (mlirTypeIsNull(t)) return PyErr_Format(PyExc_TypeError, "Invalid cast.");
  return tpy_wrap_type(ctx, t);
}

/* self.method(candidate): candidate is a Type of self's context. */
static int candidate_arg(tpy_sig *sig, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames, MlirType *candidate) {
  PyObject *a[1];
  return tpy_fastargs(sig, args, nargs, kwnames, a, 1) &&
         type_arg(a[0], "candidate", TPY_CTX(self), candidate, NULL);
}

static tpy_sig qt_is_compatible_sig =
    TPY_SIG("is_compatible_expressed_type(candidate: Type) -> bool",
            "Whether this type can express the candidate (or its element type).");

static PyObject *qt_is_compatible(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  MlirType c;
  if (!candidate_arg(&qt_is_compatible_sig, self, args, nargs, kwnames, &c)) return NULL;
  return PyBool_FromLong(mlirQuantizedTypeIsCompatibleExpressedType(T(self), c));
}

static tpy_sig qt_cast_from_storage_sig =
    TPY_SIG("cast_from_storage_type(candidate: Type) -> Type",
            "The type based on this quantized type for a type based on its storage type; TypeError "
            "when there is none.");

static PyObject *qt_cast_from_storage(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  MlirType c;
  if (!candidate_arg(&qt_cast_from_storage_sig, self, args, nargs, kwnames, &c)) return NULL;
  return cast_result(TPY_CTX(self), mlirQuantizedTypeCastFromStorageType(T(self), c));
}

static tpy_sig qt_cast_from_expressed_sig =
    TPY_SIG("cast_from_expressed_type(candidate: Type) -> Type",
            "The type based on this quantized type for a type based on its expressed type; "
            "TypeError when there is none.");

static PyObject *qt_cast_from_expressed(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames) {
  MlirType c;
  if (!candidate_arg(&qt_cast_from_expressed_sig, self, args, nargs, kwnames, &c)) return NULL;
  return cast_result(TPY_CTX(self), mlirQuantizedTypeCastFromExpressedType(T(self), c));
}

static tpy_sig qt_cast_expressed_to_storage_sig =
    TPY_SIG("cast_expressed_to_storage_type(candidate: Type) -> Type",
            "The type based on the storage type for a type based on the expressed type; TypeError "
            "when there is none.");

static PyObject *qt_cast_expressed_to_storage(PyObject *self, PyObject *const *args,
                                              Py_ssize_t nargs, PyObject *kwnames) {
  MlirType c;
  if (!candidate_arg(&qt_cast_expressed_to_storage_sig, self, args, nargs, kwnames, &c))
    return NULL;
  return cast_result(TPY_CTX(self), mlirQuantizedTypeCastExpressedToStorageType(T(self), c));
}

/* The static casts take any type. */
static int static_type_arg(tpy_sig *sig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                           MlirType *t, PyObject **ctx) {
  PyObject *a[1];
  return tpy_fastargs(sig, args, nargs, kwnames, a, 1) && type_arg(a[0], "type", NULL, t, ctx);
}

static tpy_sig qt_cast_to_storage_sig =
    TPY_SIG("cast_to_storage_type(type: Type) -> Type",
            "The type based on the storage type for a type based on a quantized type; TypeError "
            "when there is none.");

static PyObject *qt_cast_to_storage(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)m;
  MlirType t;
  PyObject *ctx;
  if (!static_type_arg(&qt_cast_to_storage_sig, args, nargs, kwnames, &t, &ctx)) return NULL;
  return cast_result(ctx, mlirQuantizedTypeCastToStorageType(t));
}

static tpy_sig qt_cast_to_expressed_sig =
    TPY_SIG("cast_to_expressed_type(type: Type) -> Type",
            "The type based on the expressed type for a type based on a quantized type; TypeError "
            "when there is none.");

static PyObject *qt_cast_to_expressed(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  (void)m;
  MlirType t;
  PyObject *ctx;
  if (!static_type_arg(&qt_cast_to_expressed_sig, args, nargs, kwnames, &t, &ctx)) return NULL;
  /* A container of a quantized type without expressed type (!quant.any<i8>): MLIR would build
   * the container of a null element type. */
  if (mlirTypeIsAShaped(t)) {
    MlirType e = mlirShapedTypeGetElementType(t);
    if (mlirTypeIsAQuantizedType(e) && mlirTypeIsNull(mlirQuantizedTypeGetExpressedType(e)))
      return PyErr_Format(PyExc_TypeError, "Invalid cast.");
  }
  return cast_result(ctx, mlirQuantizedTypeCastToExpressedType(t));
}

static PyObject *qt_expressed(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirQuantizedTypeGetExpressedType(T(self)));
}

static PyObject *qt_flags(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(mlirQuantizedTypeGetFlags(T(self)));
}

static PyObject *qt_is_signed(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirQuantizedTypeIsSigned(T(self)));
}

static PyObject *qt_storage(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirQuantizedTypeGetStorageType(T(self)));
}

static PyObject *qt_storage_min(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(mlirQuantizedTypeGetStorageTypeMin(T(self)));
}

static PyObject *qt_storage_max(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(mlirQuantizedTypeGetStorageTypeMax(T(self)));
}

static PyObject *qt_storage_width(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(mlirQuantizedTypeGetStorageTypeIntegralWidth(T(self)));
}

static PyObject *qt_element(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_type(TPY_CTX(self), mlirQuantizedTypeGetQuantizedElementType(T(self)));
}

static PyMethodDef qt_methods[] = {
    {"default_minimum_for_integer", TPY_FASTFN(qt_default_min), TPY_FAST | METH_STATIC,
     TPY_DOC(qt_default_min_sig)},
    {"default_maximum_for_integer", TPY_FASTFN(qt_default_max), TPY_FAST | METH_STATIC,
     TPY_DOC(qt_default_max_sig)},
    {"is_compatible_expressed_type", TPY_FASTFN(qt_is_compatible), TPY_FAST,
     TPY_DOC(qt_is_compatible_sig)},
    {"cast_from_storage_type", TPY_FASTFN(qt_cast_from_storage), TPY_FAST,
     TPY_DOC(qt_cast_from_storage_sig)},
    {"cast_to_storage_type", TPY_FASTFN(qt_cast_to_storage), TPY_FAST | METH_STATIC,
     TPY_DOC(qt_cast_to_storage_sig)},
    {"cast_from_expressed_type", TPY_FASTFN(qt_cast_from_expressed), TPY_FAST,
     TPY_DOC(qt_cast_from_expressed_sig)},
    {"cast_to_expressed_type", TPY_FASTFN(qt_cast_to_expressed), TPY_FAST | METH_STATIC,
     TPY_DOC(qt_cast_to_expressed_sig)},
    {"cast_expressed_to_storage_type", TPY_FASTFN(qt_cast_expressed_to_storage), TPY_FAST,
     TPY_DOC(qt_cast_expressed_to_storage_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef qt_getset[] = {
    {"expressed_type", qt_expressed, NULL,
     TPY_PROP("Type | None", "The type this quantized type approximates (or None)."), NULL},
    {"flags", qt_flags, NULL,
     TPY_PROP("int", "The flags (FLAG_SIGNED); prefer the named properties."), NULL},
    {"is_signed", qt_is_signed, NULL, TPY_PROP("bool", "Whether the storage is signed."), NULL},
    {"storage_type", qt_storage, NULL,
     TPY_PROP("Type", "The integer type the values are stored in."), NULL},
    {"storage_type_min", qt_storage_min, NULL, TPY_PROP("int", "The smallest stored value."), NULL},
    {"storage_type_max", qt_storage_max, NULL, TPY_PROP("int", "The largest stored value."), NULL},
    {"storage_type_integral_width", qt_storage_width, NULL,
     TPY_PROP("int", "The width of the storage type."), NULL},
    {"quantized_element_type", qt_element, NULL,
     TPY_PROP("Type", "The element type, as a quantized type."), NULL},
    TPY_GETSET_END,
};

/* ---- quant: the concrete types --------------------------------------------------------------- */

static tpy_sig any_get_sig =
    TPY_SIG("get(flags: int, storage_type: Type, expressed_type: Type, storage_type_min: int, "
            "storage_type_max: int" QCTX ") -> Self",
            "!quant.any<...>, in the storage type's context.");

static PyObject *any_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  PyObject *a[6];
  if (!tpy_fastargs(&any_get_sig, args, nargs, kwnames, a, 5 + Q)) return NULL;
  unsigned flags;
  MlirType storage, expressed;
  PyObject *ctx;
  int64_t min, max;
  if (!quant_head(a, &flags, &storage, &expressed, &ctx) || !context_is(a, 5, ctx) ||
      !int64_arg(a[3], "storage_type_min", &min) || !int64_arg(a[4], "storage_type_max", &max) ||
      !check_quantized(flags, storage, expressed, min, max))
    return NULL;
  return tpy_cast_to(
      cls, tpy_wrap_type(ctx, mlirAnyQuantizedTypeGet(flags, storage, expressed, min, max)));
}

static PyMethodDef any_methods[] = {
    {"get", TPY_FASTFN(any_get), TPY_FAST | METH_CLASS, TPY_DOC(any_get_sig)},
    TPY_METHODS_END,
};

static tpy_sig uniform_get_sig =
    TPY_SIG("get(flags: int, storage_type: Type, expressed_type: Type, scale: float, "
            "zero_point: int, storage_type_min: int, storage_type_max: int" QCTX ") -> Self",
            "!quant.uniform<...>, in the storage type's context.");

static PyObject *uniform_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  PyObject *a[8];
  if (!tpy_fastargs(&uniform_get_sig, args, nargs, kwnames, a, 7 + Q)) return NULL;
  unsigned flags;
  MlirType storage, expressed;
  PyObject *ctx;
  double scale;
  int64_t zero, min, max;
  if (!quant_head(a, &flags, &storage, &expressed, &ctx) || !context_is(a, 7, ctx) ||
      !double_arg(a[3], "scale", &scale) || !int64_arg(a[4], "zero_point", &zero) ||
      !int64_arg(a[5], "storage_type_min", &min) || !int64_arg(a[6], "storage_type_max", &max) ||
      !check_quantized(flags, storage, expressed, min, max) || !check_scale(scale))
    return NULL;
  return tpy_cast_to(cls, tpy_wrap_type(ctx, mlirUniformQuantizedTypeGet(flags, storage, expressed,
                                                                         scale, zero, min, max)));
}

static PyObject *uniform_scale(PyObject *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(mlirUniformQuantizedTypeGetScale(T(self)));
}

static PyObject *uniform_zero_point(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(mlirUniformQuantizedTypeGetZeroPoint(T(self)));
}

static PyObject *uniform_fixed(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirUniformQuantizedTypeIsFixedPoint(T(self)));
}

static PyMethodDef uniform_methods[] = {
    {"get", TPY_FASTFN(uniform_get), TPY_FAST | METH_CLASS, TPY_DOC(uniform_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef uniform_getset[] = {
    {"scale", uniform_scale, NULL,
     TPY_PROP("float", "The real difference between consecutive stored values."), NULL},
    {"zero_point", uniform_zero_point, NULL,
     TPY_PROP("int", "The stored value of the real value 0."), NULL},
    {"is_fixed_point", uniform_fixed, NULL,
     TPY_PROP("bool", "Whether values are real numbers divided by a scale."), NULL},
    TPY_GETSET_END,
};

static tpy_sig per_axis_get_sig =
    TPY_SIG("get(flags: int, storage_type: Type, expressed_type: Type, scales: Sequence[float], "
            "zero_points: Sequence[int], quantized_dimension: int, storage_type_min: int, "
            "storage_type_max: int" QCTX ") -> Self",
            "!quant.uniform<...:dim, {...}>, in the storage type's context.");

static PyObject *per_axis_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *a[9];
  if (!tpy_fastargs(&per_axis_get_sig, args, nargs, kwnames, a, 8 + Q)) return NULL;
  unsigned flags;
  MlirType storage, expressed;
  PyObject *ctx;
  long long dim;
  int64_t min, max;
  if (!quant_head(a, &flags, &storage, &expressed, &ctx) || !context_is(a, 8, ctx)) return NULL;
  PyObject *scales = tpy_arg_seq(a[3], "scales");
  if (!scales) return NULL;
  PyObject *zeros = tpy_arg_seq(a[4], "zero_points");
  if (!zeros) {
    Py_DECREF(scales);
    return NULL;
  }
  Py_ssize_t n = PyList_GET_SIZE(scales);
  double *s = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(double));
  int64_t *z = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  PyObject *r = NULL;
  char what[48];
  if (!s || !z) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++)
    if (!double_arg(PyList_GET_ITEM(scales, i), tpy_nth(what, sizeof what, "scales", i), &s[i]))
      goto done;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(zeros) && i < n; i++)
    if (!int64_arg(PyList_GET_ITEM(zeros, i), tpy_nth(what, sizeof what, "zero_points", i), &z[i]))
      goto done;
  if (PyList_GET_SIZE(zeros) != n) {
    PyErr_SetString(PyExc_ValueError, "Mismatching number of scales and zero points.");
    goto done;
  }
  if (n > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "too many scales");
    goto done;
  }
  if (!tpy_arg_int_in(a[5], "quantized_dimension", INT32_MIN, INT32_MAX, &dim) ||
      !int64_arg(a[6], "storage_type_min", &min) || !int64_arg(a[7], "storage_type_max", &max) ||
      !check_quantized(flags, storage, expressed, min, max))
    goto done;
  for (Py_ssize_t i = 0; i < n; i++)
    if (!check_scale(s[i])) goto done;
  r = tpy_cast_to(
      cls, tpy_wrap_type(ctx, mlirUniformQuantizedPerAxisTypeGet(flags, storage, expressed, n, s, z,
                                                                 (int32_t)dim, min, max)));
done:
  PyMem_Free(s);
  PyMem_Free(z);
  Py_DECREF(scales);
  Py_DECREF(zeros);
  return r;
}

#if TETHER_MLIR_VERSION >= 22
/* The scales (closure NULL) or zero points (non-NULL) of a per-axis type, as a list. */
static PyObject *per_axis_list(PyObject *self, void *zeros) {
  intptr_t n = mlirUniformQuantizedPerAxisTypeGetNumDims(T(self));
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++) {
    PyObject *v = zeros
                      ? PyLong_FromLongLong(mlirUniformQuantizedPerAxisTypeGetZeroPoint(T(self), i))
                      : PyFloat_FromDouble(mlirUniformQuantizedPerAxisTypeGetScale(T(self), i));
    if (!v)
      Py_CLEAR(l);
    else
      PyList_SET_ITEM(l, i, v);
  }
  return l;
}
#else
/* Upstream 19's `scales` and `zero_points` return None (its bindings build the list and drop it);
 * tether returns the same, so that programs print what they print upstream. */
static PyObject *per_axis_none(PyObject *self, void *c) {
  (void)self;
  (void)c;
  Py_RETURN_NONE;
}
#endif

static PyObject *per_axis_dim(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(mlirUniformQuantizedPerAxisTypeGetQuantizedDimension(T(self)));
}

static PyObject *per_axis_fixed(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(mlirUniformQuantizedPerAxisTypeIsFixedPoint(T(self)));
}

static PyMethodDef per_axis_methods[] = {
    {"get", TPY_FASTFN(per_axis_get), TPY_FAST | METH_CLASS, TPY_DOC(per_axis_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef per_axis_getset[] = {
#if TETHER_MLIR_VERSION >= 22
    {"scales", per_axis_list, NULL,
     TPY_PROP("list[float]", "The scales, one per slice of the quantized dimension."), NULL},
    {"zero_points", per_axis_list, NULL,
     TPY_PROP("list[int]", "The zero points, one per slice of the quantized dimension."),
     (void *)1},
#else
    {"scales", per_axis_none, NULL,
     TPY_PROP("None", "None, as upstream 19 (the scales are in the printed form)."), NULL},
    {"zero_points", per_axis_none, NULL,
     TPY_PROP("None", "None, as upstream 19 (the zero points are in the printed form)."), NULL},
#endif
    {"quantized_dimension", per_axis_dim, NULL,
     TPY_PROP("int", "The dimension of the shape the scales and zero points follow."), NULL},
    {"is_fixed_point", per_axis_fixed, NULL,
     TPY_PROP("bool", "Whether values are real numbers divided by a scale."), NULL},
    TPY_GETSET_END,
};

/* ---- quant: UniformQuantizedSubChannelType (MLIR 22) ----------------------------------------- */

#if TETHER_MLIR_VERSION >= 22
/* DenseElementsAttr, set at init: the class of the scales and zero points (upstream's). */

/* Integers in [lo, hi] from a sequence, into a PyMem array (free with PyMem_Free). 1 or 0. */
static int ints_arg(PyObject *o, const char *what, long long lo, long long hi, Py_ssize_t *n,
                    long long **out) {
  PyObject *l = tpy_arg_seq(o, what);
  if (!l) return 0;
  *n = PyList_GET_SIZE(l);
  *out = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof **out);
  if (!*out) {
    Py_DECREF(l);
    PyErr_NoMemory();
    return 0;
  }
  char name[48];
  for (Py_ssize_t i = 0; i < *n; i++)
    if (!tpy_arg_int_in(PyList_GET_ITEM(l, i), tpy_nth(name, sizeof name, what, i), lo, hi,
                        &(*out)[i])) {
      PyMem_Free(*out);
      *out = NULL;
      Py_DECREF(l);
      return 0;
    }
  Py_DECREF(l);
  return 1;
}

/* What UniformQuantizedSubChannelType's verifier checks of the scales and zero points (dense
 * float and integer elements of the expressed and storage types, of one shape), and what its
 * printer needs (a shape of rank 1 at least). */
static int check_sub_channel_params(MlirType storage, MlirType expressed, MlirAttribute scales,
                                    MlirAttribute zeros) {
  if (!mlirAttributeIsADenseFPElements(scales) || !mlirAttributeIsADenseIntElements(zeros)) {
    PyErr_SetString(PyExc_ValueError, "scales and zero points must be dense float and integer "
                                      "elements attributes");
    return 0;
  }
  MlirType st = mlirAttributeGetType(scales), zt = mlirAttributeGetType(zeros);
  if (!mlirTypeEqual(mlirShapedTypeGetElementType(st), expressed)) {
    PyErr_SetString(PyExc_ValueError, "type of scale values must match the expressed type");
    return 0;
  }
  if (!mlirTypeEqual(mlirShapedTypeGetElementType(zt), storage)) {
    PyErr_SetString(PyExc_ValueError, "type of zero point values must match the storage type");
    return 0;
  }
  intptr_t rank = mlirShapedTypeGetRank(st);
  int same = rank == mlirShapedTypeGetRank(zt);
  for (intptr_t i = 0; same && i < rank; i++)
    same = mlirShapedTypeGetDimSize(st, i) == mlirShapedTypeGetDimSize(zt, i);
  if (!same) {
    PyErr_SetString(PyExc_ValueError, "shape of scales and zeroPoints does not match");
    return 0;
  }
  if (rank < 1) {
    PyErr_SetString(PyExc_ValueError, "scales and zero points must have a rank of 1 at least");
    return 0;
  }
  return 1;
}

static tpy_sig sub_channel_get_sig = TPY_SIG(
    "get(flags: int, storage_type: Type, expressed_type: Type, scales: DenseElementsAttr, "
    "zero_points: DenseElementsAttr, quantized_dimensions: Sequence[int], "
    "block_sizes: Sequence[int], storage_type_min: int, storage_type_max: int, "
    "context: Context | None = None) -> Self",
    "!quant.uniform<storage:expressed:{dim:block, ...}, {...}>, in the storage type's context.");

static PyObject *sub_channel_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  PyObject *a[10];
  if (!tpy_fastargs(&sub_channel_get_sig, args, nargs, kwnames, a, 10)) return NULL;
  unsigned flags;
  MlirType storage, expressed;
  MlirAttribute scales, zeros;
  PyObject *ctx;
  int64_t min, max;
  if (!quant_head(a, &flags, &storage, &expressed, &ctx) || !context_is(a, 9, ctx) ||
      !tpy_arg_attr_in(a[3], ctx, &scales) || !tpy_arg_attr_in(a[4], ctx, &zeros))
    return NULL;
  Py_ssize_t nd, nb;
  long long *dims = NULL, *blocks = NULL;
  int32_t *dims32 = NULL;
  int64_t *blocks64 = NULL;
  PyObject *r = NULL;
  if (!ints_arg(a[5], "quantized_dimensions", INT32_MIN, INT32_MAX, &nd, &dims) ||
      !ints_arg(a[6], "block_sizes", INT64_MIN, INT64_MAX, &nb, &blocks) ||
      !int64_arg(a[7], "storage_type_min", &min) || !int64_arg(a[8], "storage_type_max", &max) ||
      !check_quantized(flags, storage, expressed, min, max) ||
      !check_sub_channel_params(storage, expressed, scales, zeros))
    goto done;
  if (nd != nb) {
    PyErr_Format(PyExc_ValueError,
                 "number of quantized dimensions and block sizes (%zd vs %zd) does not match", nd,
                 nb);
    goto done;
  }
  dims32 = PyMem_Malloc((size_t)(nd ? nd : 1) * sizeof *dims32);
  blocks64 = PyMem_Malloc((size_t)(nd ? nd : 1) * sizeof *blocks64);
  if (!dims32 || !blocks64) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < nd; i++) {
    if (dims[i] < 0) {
      PyErr_Format(PyExc_ValueError, "illegal quantized dimension: %lld", dims[i]);
      goto done;
    }
    if (blocks[i] <= 0) {
      PyErr_Format(PyExc_ValueError, "illegal block size: %lld", blocks[i]);
      goto done;
    }
    dims32[i] = (int32_t)dims[i];
    blocks64[i] = (int64_t)blocks[i];
  }
  r = tpy_cast_to(cls, tpy_wrap_type(ctx, mlirUniformQuantizedSubChannelTypeGet(
                                              flags, storage, expressed, scales, zeros, nd, dims32,
                                              blocks64, min, max)));
done:
  PyMem_Free(dims);
  PyMem_Free(blocks);
  PyMem_Free(dims32);
  PyMem_Free(blocks64);
  return r;
}

/* quantized_dimensions (closure NULL) or block_sizes (non-NULL), as a list. */
static PyObject *sub_channel_list(PyObject *self, void *blocks) {
  intptr_t n = mlirUniformQuantizedSubChannelTypeGetNumBlockSizes(T(self));
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++) {
    PyObject *v =
        blocks
            ? PyLong_FromLongLong(mlirUniformQuantizedSubChannelTypeGetBlockSize(T(self), i))
            : PyLong_FromLong(mlirUniformQuantizedSubChannelTypeGetQuantizedDimension(T(self), i));
    if (!v)
      Py_CLEAR(l);
    else
      PyList_SET_ITEM(l, i, v);
  }
  return l;
}

/* scales (closure NULL) or zero_points (non-NULL): a DenseElementsAttr, as upstream's. */
static PyObject *sub_channel_attr(PyObject *self, void *zeros) {
  MlirAttribute a = zeros ? mlirUniformQuantizedSubChannelTypeGetZeroPoints(T(self))
                          : mlirUniformQuantizedSubChannelTypeGetScales(T(self));
  return tpy_ctxobj_new(tpy.DenseElementsAttr, TPY_CTX(self), a.ptr);
}

static PyMethodDef sub_channel_methods[] = {
    {"get", TPY_FASTFN(sub_channel_get), TPY_FAST | METH_CLASS, TPY_DOC(sub_channel_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef sub_channel_getset[] = {
    {"quantized_dimensions", sub_channel_list, NULL,
     TPY_PROP("list[int]", "The quantized dimensions, in the order of block_sizes."), NULL},
    {"block_sizes", sub_channel_list, NULL,
     TPY_PROP("list[int]", "The block size of each quantized dimension."), (void *)1},
    {"scales", sub_channel_attr, NULL,
     TPY_PROP("DenseElementsAttr", "The scales (a DenseElementsAttr)."), NULL},
    {"zero_points", sub_channel_attr, NULL,
     TPY_PROP("DenseElementsAttr", "The zero points (a DenseElementsAttr)."), (void *)1},
    TPY_GETSET_END,
};
#endif

static tpy_sig calibrated_get_sig =
    TPY_SIG("get(expressed_type: Type, min: float, max: float" QCTX ") -> Self",
            "!quant.calibrated<...>, in the expressed type's context.");

static PyObject *calibrated_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  PyObject *a[4];
  if (!tpy_fastargs(&calibrated_get_sig, args, nargs, kwnames, a, 3 + Q)) return NULL;
  MlirType expressed;
  PyObject *ctx;
  double min, max;
  if (!type_arg(a[0], "expressed_type", NULL, &expressed, &ctx) || !context_is(a, 3, ctx) ||
      !double_arg(a[1], "min", &min) || !double_arg(a[2], "max", &max))
    return NULL;
  if (!mlirTypeIsAFloat(expressed))
    return PyErr_Format(PyExc_ValueError, "expressed type must be floating point");
  if (max <= min) {
    PyObject *lo = fmt_double(min), *hi = lo ? fmt_double(max) : NULL;
    if (hi) PyErr_Format(PyExc_ValueError, "illegal min and max: (%U:%U)", lo, hi);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    return NULL;
  }
  if (!tpy_load_dialect(mlirTypeGetContext(expressed), "quant")) return NULL;
  return tpy_cast_to(cls, tpy_wrap_type(ctx, mlirCalibratedQuantizedTypeGet(expressed, min, max)));
}

static PyObject *calibrated_min(PyObject *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(mlirCalibratedQuantizedTypeGetMin(T(self)));
}

static PyObject *calibrated_max(PyObject *self, void *c) {
  (void)c;
  return PyFloat_FromDouble(mlirCalibratedQuantizedTypeGetMax(T(self)));
}

static PyMethodDef calibrated_methods[] = {
    {"get", TPY_FASTFN(calibrated_get), TPY_FAST | METH_CLASS, TPY_DOC(calibrated_get_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef calibrated_getset[] = {
    {"min", calibrated_min, NULL, TPY_PROP("float", "The smallest calibrated value."), NULL},
    {"max", calibrated_max, NULL, TPY_PROP("float", "The largest calibrated value."), NULL},
    TPY_GETSET_END,
};

TPY_ISA(MlirType, mlirTypeIsAQuantizedType)
TPY_ISA(MlirType, mlirTypeIsAAnyQuantizedType)
TPY_ISA(MlirType, mlirTypeIsAUniformQuantizedType)
TPY_ISA(MlirType, mlirTypeIsAUniformQuantizedPerAxisType)
TPY_ISA(MlirType, mlirTypeIsACalibratedQuantizedType)
#if TETHER_MLIR_VERSION >= 22
TPY_ISA(MlirType, mlirTypeIsAUniformQuantizedSubChannelType)
#endif

static tpy_class_def quant_defs[] = {
    {"QuantizedType", NULL, isa_mlirTypeIsAQuantizedType, NULL, qt_methods, qt_getset, NULL,
     "A type of the quant dialect.", NULL, NULL},
    {"AnyQuantizedType", "QuantizedType", isa_mlirTypeIsAAnyQuantizedType,
     SINCE_22(mlirAnyQuantizedTypeGetTypeID), any_methods, NULL, NULL,
     "!quant.any<storage:expressed>", NULL, NULL},
    {"UniformQuantizedType", "QuantizedType", isa_mlirTypeIsAUniformQuantizedType,
     SINCE_22(mlirUniformQuantizedTypeGetTypeID), uniform_methods, uniform_getset, NULL,
     "!quant.uniform<storage:expressed, scale:zero_point>", NULL, NULL},
    {"UniformQuantizedPerAxisType", "QuantizedType", isa_mlirTypeIsAUniformQuantizedPerAxisType,
     SINCE_22(mlirUniformQuantizedPerAxisTypeGetTypeID), per_axis_methods, per_axis_getset, NULL,
     "!quant.uniform<storage:expressed:dim, {scale:zero_point, ...}>", NULL, NULL},
#if TETHER_MLIR_VERSION >= 22
    {"UniformQuantizedSubChannelType", "QuantizedType",
     isa_mlirTypeIsAUniformQuantizedSubChannelType, mlirUniformQuantizedSubChannelTypeGetTypeID,
     sub_channel_methods, sub_channel_getset, NULL,
     "!quant.uniform<storage:expressed:{dim:block, ...}, {...}>", NULL, NULL},
#endif
    {"CalibratedQuantizedType", "QuantizedType", isa_mlirTypeIsACalibratedQuantizedType,
     SINCE_22(mlirCalibratedQuantizedTypeGetTypeID), calibrated_methods, calibrated_getset, NULL,
     "!quant.calibrated<expressed<min:max>>", NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#if TETHER_MLIR_VERSION >= 22
static const tpy_mlir_name quant_names[] = {
    {"AnyQuantizedType", mlirAnyQuantizedTypeGetName},
    {"UniformQuantizedType", mlirUniformQuantizedTypeGetName},
    {"UniformQuantizedPerAxisType", mlirUniformQuantizedPerAxisTypeGetName},
    {"UniformQuantizedSubChannelType", mlirUniformQuantizedSubChannelTypeGetName},
    {"CalibratedQuantizedType", mlirCalibratedQuantizedTypeGetName},
    {NULL, NULL}};
#endif

int tpy_init_quant(PyObject *m) {
  PyObject *quant = PyModule_New("_quant");
  if (!quant) return -1;
  PyObject *flag = NULL;
#if TETHER_MLIR_VERSION >= 22
  PyObject *casters = tpy.type_casters;
#else
  PyObject *casters = NULL;
#endif
  int bad = tpy_define_classes(quant, tpy.Type, quant_defs, casters) < 0 ||
#if TETHER_MLIR_VERSION >= 22
            tpy_set_mlir_names(quant_defs, "type_name", quant_names) < 0 ||
#endif
            !(flag = PyLong_FromUnsignedLong(mlirQuantizedTypeGetSignedFlag())) ||
            PyObject_SetAttrString((PyObject *)quant_defs[0].cls, "FLAG_SIGNED", flag) < 0 ||
            PyModule_AddObjectRef(m, "_quant", quant) < 0;
  Py_XDECREF(flag);
  Py_DECREF(quant);
  return bad ? -1 : 0;
}
