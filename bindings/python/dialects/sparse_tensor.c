/* dialect_sparse_tensor.c: the sparse_tensor dialect's encoding attribute, upstream's
 * `mlir.dialects.sparse_tensor` EncodingAttr and level types, through the dialect's C API, in
 * `_tether._sparse_tensor` (re-exported by tether.dialects.sparse_tensor).
 *
 * The C API creates the attribute with the unchecked getter (`get`, not `getChecked`): MLIR's
 * verifier does not run, and an encoding it would reject is created anyway and crashes later. So
 * EncodingAttr.get checks first what SparseTensorEncodingAttr::verify checks, and raises
 * ValueError with the verifier's message instead; it loads the dialect first. Arguments convert as
 * upstream's (pybind11): a value of the wrong kind or out of range is a TypeError. There is no
 * TypeID getter: no caster and no `static_typeid`, as upstream 19.
 */
#include "dialects.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/SparseTensor.h>
#include <string.h>

#define A(o) ((MlirAttribute){TPY_PTR(o)})

/* ---- sparse_tensor: level types -------------------------------------------------------------- */

#define LVL_FMT(lt) ((lt)&0xffff0000ull)
#define LVL_SOA 0x4ull

/* The enum classes tether.dialects.sparse_tensor defines (_set_enums), or NULL. */

/* LevelType::isValidLvlBits: a known format, and properties only on the formats that have them;
 * without its Undef format (0), which MLIR keeps for internal use (the parser has no word for
 * it). */
static int lvl_bits_valid(uint64_t lt) {
  uint64_t fmt = LVL_FMT(lt), props = lt & 0xffff;
  if (fmt == MLIR_SPARSE_TENSOR_LEVEL_DENSE || fmt == MLIR_SPARSE_TENSOR_LEVEL_BATCH ||
      fmt == MLIR_SPARSE_TENSOR_LEVEL_N_OUT_OF_M)
    return props == 0;
  return fmt == MLIR_SPARSE_TENSOR_LEVEL_COMPRESSED || fmt == MLIR_SPARSE_TENSOR_LEVEL_SINGLETON ||
         fmt == MLIR_SPARSE_TENSOR_LEVEL_LOOSE_COMPRESSED;
}

static tpy_sig build_level_type_sig = TPY_SIG(
    "build_level_type(lvl_fmt: Any, properties: Sequence[Any] = [], n: int = 0, m: int = 0) -> int",
    "The level type (an int) of a LevelFormat with LevelProperty values.");

static PyObject *build_level_type(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  (void)cls;
  PyObject *a[4];
  if (!tpy_fastargs(&build_level_type_sig, args, nargs, kwnames, a, 4)) return NULL;
  long long fmt;
  unsigned n = 0, m = 0;
  if (!tpy_arg_int_in(a[0], "lvl_fmt", 0, INT64_MAX, &fmt) ||
      (a[2] && !tpy_arg_uint_in(a[2], "n", &n)) || (a[3] && !tpy_arg_uint_in(a[3], "m", &m)))
    return NULL;
  if (fmt != MLIR_SPARSE_TENSOR_LEVEL_DENSE && fmt != MLIR_SPARSE_TENSOR_LEVEL_BATCH &&
      fmt != MLIR_SPARSE_TENSOR_LEVEL_COMPRESSED && fmt != MLIR_SPARSE_TENSOR_LEVEL_SINGLETON &&
      fmt != MLIR_SPARSE_TENSOR_LEVEL_LOOSE_COMPRESSED &&
      fmt != MLIR_SPARSE_TENSOR_LEVEL_N_OUT_OF_M)
    return PyErr_Format(PyExc_ValueError, "lvl_fmt must be a LevelFormat, not %R", a[0]);
  if (n > 0xff || m > 0xff) /* MLIR asserts this, else mixes the bits into other fields */
    return PyErr_Format(PyExc_ValueError, "n and m must be in [0, 255], not %u and %u", n, m);
  enum MlirSparseTensorLevelPropertyNondefault props[3];
  unsigned nprops = 0;
  uint64_t bits = (uint64_t)fmt | ((uint64_t)n << 32) | ((uint64_t)m << 40);
  if (a[1] && a[1] != Py_None) {
    PyObject *l = tpy_arg_seq(a[1], "properties");
    if (!l) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(l); i++) {
      long long p;
      char what[48];
      if (!tpy_arg_int_in(PyList_GET_ITEM(l, i), tpy_nth(what, sizeof what, "properties", i), 0,
                          INT64_MAX, &p)) {
        Py_DECREF(l);
        return NULL;
      }
      if (p != MLIR_SPARSE_PROPERTY_NON_UNIQUE && p != MLIR_SPARSE_PROPERTY_NON_ORDERED
#if TETHER_MLIR_VERSION >= 22
          && p != MLIR_SPARSE_PROPERTY_SOA /* MLIR 22's C API has it */
#endif
      ) {
        PyErr_Format(PyExc_ValueError, "properties must be LevelProperty values, not %R",
                     PyList_GET_ITEM(l, i));
        Py_DECREF(l);
        return NULL;
      }
      if (!(bits & (uint64_t)p)) props[nprops++] = (enum MlirSparseTensorLevelPropertyNondefault)p;
      bits |= (uint64_t)p;
    }
    Py_DECREF(l);
  }
  /* MLIR dereferences an empty optional for a combination it does not allow. */
  if (!lvl_bits_valid(bits))
    return PyErr_Format(PyExc_ValueError,
                        "the properties do not apply to level format %R (only compressed, "
                        "singleton and loose_compressed levels have properties)",
                        a[0]);
  return PyLong_FromUnsignedLongLong(mlirSparseTensorEncodingAttrBuildLvlType(
      (enum MlirSparseTensorLevelFormat)fmt, props, nprops, n, m));
}

/* ---- sparse_tensor: SparseTensorEncodingAttr::verify ----------------------------------------- */

typedef struct {
  intptr_t pos;
  int64_t coeff;
} dim_coeff;

static dim_coeff *find_dim(dim_coeff *d, intptr_t n, intptr_t pos) {
  for (intptr_t i = 0; i < n; i++)
    if (d[i].pos == pos) return &d[i];
  return NULL;
}

/* sparse_tensor::isBlockSparsity; *unsafe is set when MLIR's inverseBlockSparsity (which
 * inferring lvlToDim calls) would read past its data: a dimension with a floordiv and no mod. */
static int is_block_sparsity(MlirAffineMap map, int *unsafe) {
  intptr_t n = mlirAffineMapGetNumResults(map), nd = 0;
  *unsafe = 0;
  dim_coeff *d = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(dim_coeff));
  int *has_mod = PyMem_Calloc((size_t)(n ? n : 1), sizeof(int));
  int ok = d && has_mod, block = 0;
  for (intptr_t i = 0; ok && i < n; i++) {
    MlirAffineExpr e = mlirAffineMapGetResult(map, i);
    if (mlirAffineExprIsABinary(e)) {
      MlirAffineExpr l = mlirAffineBinaryOpExprGetLHS(e), r = mlirAffineBinaryOpExprGetRHS(e);
      if (!mlirAffineExprIsADim(l) || !mlirAffineExprIsAConstant(r) ||
          mlirAffineConstantExprGetValue(r) <= 0) {
        ok = 0;
        break;
      }
      intptr_t pos = mlirAffineDimExprGetPosition(l);
      int64_t c = mlirAffineConstantExprGetValue(r);
      dim_coeff *f = find_dim(d, nd, pos);
      if (mlirAffineExprIsAFloorDiv(e)) {
        if (f)
          ok = 0;
        else
          d[nd++] = (dim_coeff){pos, c};
      } else if (mlirAffineExprIsAMod(e)) {
        if (!f || f->coeff != c)
          ok = 0;
        else {
          has_mod[f - d] = 1;
          block = 1;
        }
      } else
        ok = 0;
    } else if (mlirAffineExprIsADim(e)) {
      intptr_t pos = mlirAffineDimExprGetPosition(e);
      if (find_dim(d, nd, pos))
        ok = 0;
      else {
        d[nd] = (dim_coeff){pos, 0};
        has_mod[nd++] = 1;
      }
    } else
      ok = 0;
  }
  ok = ok && block;
  for (intptr_t i = 0; ok && i < nd; i++)
    if (!has_mod[i]) *unsafe = 1;
  PyMem_Free(d);
  PyMem_Free(has_mod);
  return ok;
}

/* Whether MLIR can infer lvlToDim from dimToLvl (sparse_tensor::inferLvlToDim gives a map). */
static int inferable(MlirAffineMap map) {
  int unsafe;
  return mlirAffineMapGetNumSymbols(map) == 0 &&
         (mlirAffineMapIsPermutation(map) || is_block_sparsity(map, &unsafe));
}

static int verify_fail(const char *msg) {
  PyErr_SetString(PyExc_ValueError, msg);
  return 0;
}

/* SparseTensorEncodingAttr::verify, in its order and with its messages, for what the builder
 * makes of the arguments: dim_to_lvl the identity when not given, lvl_to_dim inferred when not
 * given (user_lvl_to_dim is then null). The attribute of an explicit lvl_to_dim is compared with
 * the one MLIR infers (made with the builder, once the inference is known to be safe). */
static int verify_encoding(MlirContext ctx, const uint64_t *lts, intptr_t n,
                           MlirAffineMap dim_to_lvl, MlirAffineMap user_lvl_to_dim,
                           unsigned pos_width, unsigned crd_width) {
  unsigned widths[2] = {pos_width, crd_width};
  for (int w = 0; w < 2; w++)
    if (widths[w] != 0 && widths[w] != 8 && widths[w] != 16 && widths[w] != 32 && widths[w] != 64) {
      PyErr_Format(PyExc_ValueError, "unexpected %s bitwidth: %u", w ? "coordinate" : "position",
                   widths[w]);
      return 0;
    }
  /* Every COO segment: singleton levels after a (loose) compressed one, one memory layout. */
  for (intptr_t i = 0; i < n; i++) {
    if (LVL_FMT(lts[i]) != MLIR_SPARSE_TENSOR_LEVEL_SINGLETON) continue;
    uint64_t prev = i ? LVL_FMT(lts[i - 1]) : 0;
    if (prev != MLIR_SPARSE_TENSOR_LEVEL_COMPRESSED &&
        prev != MLIR_SPARSE_TENSOR_LEVEL_LOOSE_COMPRESSED)
      return verify_fail("expected compressed or loose_compressed level before singleton level");
    intptr_t j = i;
    for (; j < n && LVL_FMT(lts[j]) == MLIR_SPARSE_TENSOR_LEVEL_SINGLETON; j++)
      if ((lts[j] & LVL_SOA) != (lts[i] & LVL_SOA))
        return verify_fail("expected all singleton lvlTypes stored in the same memory layout "
                           "(SoA vs AoS).");
    i = j;
  }
  intptr_t last_batch = -1;
  for (intptr_t i = 0; i < n; i++)
    if (LVL_FMT(lts[i]) == MLIR_SPARSE_TENSOR_LEVEL_BATCH) last_batch = i;
  for (intptr_t i = 0; i < last_batch; i++)
    if (LVL_FMT(lts[i]) != MLIR_SPARSE_TENSOR_LEVEL_BATCH)
      return verify_fail("Batch lvlType can only be leading levels.");
  for (intptr_t i = 0; i < n; i++)
    if ((lts[i] & LVL_SOA) && LVL_FMT(lts[i]) != MLIR_SPARSE_TENSOR_LEVEL_SINGLETON)
      return verify_fail("SoA is only applicable to singleton lvlTypes.");
  for (intptr_t i = 0; i < n; i++) {
    if (LVL_FMT(lts[i]) != MLIR_SPARSE_TENSOR_LEVEL_N_OUT_OF_M) continue;
    if (i != n - 1) return verify_fail("expected n_out_of_m to be the last level type");
    for (intptr_t k = 0; k < i; k++)
      if (LVL_FMT(lts[k]) != MLIR_SPARSE_TENSOR_LEVEL_DENSE)
        return verify_fail("expected all dense lvlTypes before a n_out_of_m level");
    if (mlirAffineMapGetNumDims(dim_to_lvl) != mlirAffineMapGetNumResults(dim_to_lvl)) {
      int unsafe;
      if (!is_block_sparsity(dim_to_lvl, &unsafe))
        return verify_fail("expected 1xm block structure for n_out_of_m level");
      /* sparse_tensor::getBlockSize: the mod's constant per mod, 0 per plain dimension. */
      unsigned coefficient = 0;
      for (intptr_t r = 0; r < mlirAffineMapGetNumResults(dim_to_lvl); r++) {
        MlirAffineExpr e = mlirAffineMapGetResult(dim_to_lvl, r);
        unsigned size = 0;
        if (mlirAffineExprIsABinary(e)) {
          if (!mlirAffineExprIsAMod(e)) continue;
          size = (unsigned)mlirAffineConstantExprGetValue(mlirAffineBinaryOpExprGetRHS(e));
        }
        if (size == 0) continue;
        if (size != coefficient && coefficient != 0)
          return verify_fail("expected only one blocked level with the same coefficients");
        coefficient = size;
      }
      if (coefficient != ((lts[i] >> 40) & 0xff))
        return verify_fail("expected coeffiencts of Affine expressions to be equal to m of "
                           "n_out_of_m level");
    }
    break;
  }
  if (n == 0) return verify_fail("expected a non-empty array for lvlTypes");
  intptr_t results = mlirAffineMapGetNumResults(dim_to_lvl);
  intptr_t dims = mlirAffineMapGetNumDims(dim_to_lvl);
  if (results != n) {
    PyErr_Format(PyExc_ValueError, "level-rank mismatch between dimToLvl and lvlTypes: %zd != %zd",
                 (Py_ssize_t)results, (Py_ssize_t)n);
    return 0;
  }
  int can_infer = inferable(dim_to_lvl);
  if (!can_infer && mlirAffineMapGetNumSymbols(dim_to_lvl) == 0)
    return verify_fail("failed to infer lvlToDim from dimToLvl");
  if (!mlirAffineMapIsNull(user_lvl_to_dim)) {
    int equal = 0;
    if (can_infer) {
      MlirAttribute inferred =
          mlirSparseTensorEncodingAttrGet(ctx, n, lts, dim_to_lvl, (MlirAffineMap){NULL}, 0, 0,
                                          (MlirAttribute){NULL}, (MlirAttribute){NULL});
      equal =
          mlirAffineMapEqual(mlirSparseTensorEncodingAttrGetLvlToDim(inferred), user_lvl_to_dim);
    }
    if (!equal) return verify_fail("expected lvlToDim to be an inverse of dimToLvl");
  }
  if (dims > n) {
    PyErr_Format(PyExc_ValueError, "unexpected dimToLvl mapping from %zd to %zd", (Py_ssize_t)dims,
                 (Py_ssize_t)n);
    return 0;
  }
  return 1;
}

/* ---- sparse_tensor: EncodingAttr ------------------------------------------------------------- */

static int map_arg(PyObject *o, const char *what, PyObject *ctx, MlirAffineMap *out) {
  *out = (MlirAffineMap){NULL};
  if (!o || o == Py_None) return 1;
  if (!tpy_is(o, tpy.AffineMap)) return tpy_type_error(what, "an AffineMap or None", o), 0;
  if (!tpy_same_context(TPY_CTX(o), ctx)) {
    PyErr_Format(PyExc_ValueError, "%s: an AffineMap of another context cannot be used here", what);
    return 0;
  }
  out->ptr = TPY_PTR(o);
  return 1;
}

/* explicit_val / implicit_val: a number (what the parser accepts: FloatAttr, IntegerAttr or
 * complex.number), whose type MLIR reads when the encoding is put on a tensor. */
static int value_arg(PyObject *o, const char *what, PyObject *ctx, MlirAttribute *out) {
  *out = (MlirAttribute){NULL};
  if (!o || o == Py_None) return 1;
  if (!tpy_is(o, tpy.Attribute)) return tpy_type_error(what, "an Attribute or None", o), 0;
  if (!tpy_same_context(TPY_CTX(o), ctx)) {
    PyErr_Format(PyExc_ValueError, "%s: an Attribute of another context cannot be used here", what);
    return 0;
  }
  MlirAttribute a = A(o);
  int numeric = mlirAttributeIsAFloat(a) || mlirAttributeIsAInteger(a);
  if (!numeric) {
    MlirStringRef ns = mlirDialectGetNamespace(mlirAttributeGetDialect(a));
    numeric = ns.length == 7 && !memcmp(ns.data, "complex", 7) &&
              mlirTypeIsAComplex(mlirAttributeGetType(a));
  }
  if (!numeric) {
    PyErr_Format(PyExc_ValueError,
                 "%s must be a numeric attribute (FloatAttr, IntegerAttr or complex.number), not "
                 "%R",
                 what, o);
    return 0;
  }
  *out = a;
  return 1;
}

static int width_arg(PyObject *o, const char *what, const char *word, unsigned *out) {
  long long v;
  int overflow;
  if (!tpy_arg_index(o, what, &v, &overflow)) return 0;
  if (overflow || (v != 0 && v != 8 && v != 16 && v != 32 && v != 64)) {
    PyErr_Format(PyExc_ValueError, "unexpected %s bitwidth: %R", word, o);
    return 0;
  }
  *out = (unsigned)v;
  return 1;
}

static tpy_sig encoding_get_sig = TPY_SIG(
    "get(lvl_types: Sequence[int], dim_to_lvl: AffineMap | None, lvl_to_dim: AffineMap | None, "
    "pos_width: int, crd_width: int, explicit_val: Attribute | None = None, implicit_val: "
    "Attribute | None = None, context: Context | None = None) -> Self",
    "#sparse_tensor.encoding<...>; ValueError where MLIR's verifier rejects the parameters.");

static PyObject *encoding_get(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *a[8];
  if (!tpy_fastargs(&encoding_get_sig, args, nargs, kwnames, a, 8)) return NULL;
  /* A strong reference: converting the arguments may run Python code (__index__) that leaves a
   * `with Context()` and drops the current context. */
  PyObject *ctx = Py_XNewRef((PyObject *)tpy_resolve_context(a[7]));
  if (!ctx) return NULL;
  MlirAffineMap dim_to_lvl, lvl_to_dim;
  MlirAttribute explicit_val, implicit_val;
  unsigned pos_width, crd_width;
  PyObject *l = NULL, *r = NULL;
  uint64_t *lts = NULL;
  if (!map_arg(a[1], "dim_to_lvl", ctx, &dim_to_lvl) ||
      !map_arg(a[2], "lvl_to_dim", ctx, &lvl_to_dim) ||
      !width_arg(a[3], "pos_width", "position", &pos_width) ||
      !width_arg(a[4], "crd_width", "coordinate", &crd_width) ||
      !value_arg(a[5], "explicit_val", ctx, &explicit_val) ||
      !value_arg(a[6], "implicit_val", ctx, &implicit_val) || !(l = tpy_arg_seq(a[0], "lvl_types")))
    goto done;
  Py_ssize_t n = PyList_GET_SIZE(l);
  if (!(lts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(uint64_t)))) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyList_GET_ITEM(l, i);
    if (!PyIndex_Check(o)) {
      char what[48];
      tpy_type_error(tpy_nth(what, sizeof what, "lvl_types", i), "an int", o);
      goto done;
    }
    PyObject *v = PyNumber_Index(o);
    if (!v) goto done;
    lts[i] = PyLong_AsUnsignedLongLong(v);
    Py_DECREF(v);
    if (lts[i] == (uint64_t)-1 && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "lvl_types[%zd] must be an int in [0, 2**64), not %R", i, o);
      goto done;
    }
    if (!lvl_bits_valid(lts[i])) {
      PyErr_Format(PyExc_ValueError, "lvl_types[%zd] is not a level type: %R", i, o);
      goto done;
    }
  }
  MlirContext raw = tpy_ctx_raw(ctx);
  if (!tpy_load_dialect(raw, "sparse_tensor")) goto done;
  MlirAffineMap eff =
      mlirAffineMapIsNull(dim_to_lvl) ? mlirAffineMapMultiDimIdentityGet(raw, n) : dim_to_lvl;
  int unsafe = 0;
  if (mlirAffineMapGetNumSymbols(eff) == 0 && !mlirAffineMapIsPermutation(eff) &&
      is_block_sparsity(eff, &unsafe) && unsafe) {
    /* MLIR's inference reads past its data there (the parser crashes on it too). */
    PyErr_SetString(PyExc_ValueError, "failed to infer lvlToDim from dimToLvl: a dimension has a "
                                      "floordiv level and no mod level");
    goto done;
  }
  if (!verify_encoding(raw, lts, n, eff, lvl_to_dim, pos_width, crd_width)) goto done;
  r = tpy_cast_to(cls, tpy_wrap_attr(ctx, mlirSparseTensorEncodingAttrGet(
                                              raw, n, lts, dim_to_lvl, lvl_to_dim, (int)pos_width,
                                              (int)crd_width, explicit_val, implicit_val)));
done:
  PyMem_Free(lts);
  Py_XDECREF(l);
  Py_DECREF(ctx);
  return r;
}

static PyObject *enc_lvl_types(PyObject *self, void *c) {
  (void)c;
  intptr_t n = mlirSparseTensorEncodingGetLvlRank(A(self));
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++) {
    PyObject *v = PyLong_FromUnsignedLongLong(mlirSparseTensorEncodingAttrGetLvlType(A(self), i));
    if (!v) {
      Py_CLEAR(l);
      break;
    }
    PyList_SET_ITEM(l, i, v);
  }
  return l;
}

static PyObject *enc_formats(PyObject *self, void *c) {
  (void)c;
  intptr_t n = mlirSparseTensorEncodingGetLvlRank(A(self));
  PyObject *l = PyList_New(n);
  for (intptr_t i = 0; l && i < n; i++) {
    PyObject *v = PyLong_FromUnsignedLongLong(mlirSparseTensorEncodingAttrGetLvlFmt(A(self), i));
    if (v && tpy.LevelFormat) {
      /* A format the enum does not name (batch, as upstream 19's has none) stays an int. */
      PyObject *e = PyObject_CallOneArg(tpy.LevelFormat, v);
      if (e)
        Py_SETREF(v, e);
      else if (PyErr_ExceptionMatches(PyExc_ValueError))
        PyErr_Clear();
      else
        Py_CLEAR(v);
    }
    if (!v) {
      Py_CLEAR(l);
      break;
    }
    PyList_SET_ITEM(l, i, v);
  }
  return l;
}

static PyObject *enc_dim_to_lvl(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_affine_map(TPY_CTX(self), mlirSparseTensorEncodingAttrGetDimToLvl(A(self)));
}

static PyObject *enc_lvl_to_dim(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_affine_map(TPY_CTX(self), mlirSparseTensorEncodingAttrGetLvlToDim(A(self)));
}

static PyObject *enc_pos_width(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(mlirSparseTensorEncodingAttrGetPosWidth(A(self)));
}

static PyObject *enc_crd_width(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(mlirSparseTensorEncodingAttrGetCrdWidth(A(self)));
}

static PyObject *enc_explicit(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_attr(TPY_CTX(self), mlirSparseTensorEncodingAttrGetExplicitVal(A(self)));
}

static PyObject *enc_implicit(PyObject *self, void *c) {
  (void)c;
  return tpy_wrap_attr(TPY_CTX(self), mlirSparseTensorEncodingAttrGetImplicitVal(A(self)));
}

/* n or m of the last level (0 unless it is n_out_of_m). */
static PyObject *enc_structured(PyObject *self, int want_m) {
  intptr_t n = mlirSparseTensorEncodingGetLvlRank(A(self));
  if (n == 0) return PyLong_FromLong(0);
  uint64_t lt = mlirSparseTensorEncodingAttrGetLvlType(A(self), n - 1);
  if (LVL_FMT(lt) != MLIR_SPARSE_TENSOR_LEVEL_N_OUT_OF_M) return PyLong_FromLong(0);
  return PyLong_FromUnsignedLong(want_m ? mlirSparseTensorEncodingAttrGetStructuredM(lt)
                                        : mlirSparseTensorEncodingAttrGetStructuredN(lt));
}

static PyObject *enc_structured_n(PyObject *self, void *c) {
  (void)c;
  return enc_structured(self, 0);
}

static PyObject *enc_structured_m(PyObject *self, void *c) {
  (void)c;
  return enc_structured(self, 1);
}

static PyMethodDef encoding_methods[] = {
    {"get", TPY_FASTFN(encoding_get), TPY_FAST | METH_CLASS, TPY_DOC(encoding_get_sig)},
    {"build_level_type", TPY_FASTFN(build_level_type), TPY_FAST | METH_CLASS,
     TPY_DOC(build_level_type_sig)},
    TPY_METHODS_END,
};

static PyGetSetDef encoding_getset[] = {
    {"lvl_types", enc_lvl_types, NULL,
     TPY_PROP("list[int]", "The level types (ints), one per level."), NULL},
    {"dim_to_lvl", enc_dim_to_lvl, NULL,
     TPY_PROP("AffineMap | None", "The dimension-to-level map (or None)."), NULL},
    {"lvl_to_dim", enc_lvl_to_dim, NULL,
     TPY_PROP("AffineMap | None", "The level-to-dimension map (or None)."), NULL},
    {"pos_width", enc_pos_width, NULL, TPY_PROP("int", "The bit width of positions (0: index)."),
     NULL},
    {"crd_width", enc_crd_width, NULL, TPY_PROP("int", "The bit width of coordinates (0: index)."),
     NULL},
    {"explicit_val", enc_explicit, NULL,
     TPY_PROP("Attribute | None", "The value of the stored entries (or None)."), NULL},
    {"implicit_val", enc_implicit, NULL,
     TPY_PROP("Attribute | None", "The value of the entries not stored (or None)."), NULL},
    {"structured_n", enc_structured_n, NULL,
     TPY_PROP("int", "n of the last level when it is n_out_of_m, else 0."), NULL},
    {"structured_m", enc_structured_m, NULL,
     TPY_PROP("int", "m of the last level when it is n_out_of_m, else 0."), NULL},
    {"lvl_formats_enum", enc_formats, NULL, TPY_PROP("list[Any]", "The LevelFormat of each level."),
     NULL},
    TPY_GETSET_END,
};

TPY_ISA(MlirAttribute, mlirAttributeIsASparseTensorEncodingAttr)

static tpy_class_def sparse_defs[] = {
    {"EncodingAttr", NULL, isa_mlirAttributeIsASparseTensorEncodingAttr, NULL, encoding_methods,
     encoding_getset, NULL, "#sparse_tensor.encoding<{...}>: how a tensor's elements are stored.",
     NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static tpy_sig set_enums_sig =
    TPY_SIG("_set_enums(LevelFormat: type, LevelProperty: type, /) -> None",
            "The enum classes tether.dialects.sparse_tensor defines (lvl_formats_enum returns "
            "LevelFormat members).");

static PyObject *set_enums(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  PyObject *a[2];
  if (!tpy_fastargs(&set_enums_sig, args, nargs, NULL, a, 2)) return NULL;
  Py_XSETREF(tpy.LevelFormat, Py_NewRef(a[0]));
  Py_RETURN_NONE;
}

static PyMethodDef sparse_functions[] = {
    {"_set_enums", TPY_FASTFN(set_enums), METH_FASTCALL, TPY_DOC(set_enums_sig)},
    TPY_METHODS_END,
};

/* ---- module ---------------------------------------------------------------------------------- */

/* The enums' members, in upstream's order, for tether.dialects.sparse_tensor to define them. */
static PyObject *members(const char *const *names, const long long *values, int n) {
  PyObject *l = PyList_New(n);
  for (int i = 0; l && i < n; i++) {
    PyObject *t = Py_BuildValue("(sL)", names[i], values[i]);
    if (!t)
      Py_CLEAR(l);
    else
      PyList_SET_ITEM(l, i, t);
  }
  return l;
}

static int add_enum_members(PyObject *sub) {
  static const char *const fmt_names[] = {"dense", "n_out_of_m", "compressed", "singleton",
                                          "loose_compressed"};
  static const long long fmt_values[] = {
      MLIR_SPARSE_TENSOR_LEVEL_DENSE, MLIR_SPARSE_TENSOR_LEVEL_N_OUT_OF_M,
      MLIR_SPARSE_TENSOR_LEVEL_COMPRESSED, MLIR_SPARSE_TENSOR_LEVEL_SINGLETON,
      MLIR_SPARSE_TENSOR_LEVEL_LOOSE_COMPRESSED};
#if TETHER_MLIR_VERSION >= 22
  static const char *const prop_names[] = {"non_ordered", "non_unique", "soa"};
  static const long long prop_values[] = {
      MLIR_SPARSE_PROPERTY_NON_ORDERED, MLIR_SPARSE_PROPERTY_NON_UNIQUE, MLIR_SPARSE_PROPERTY_SOA};
#else
  static const char *const prop_names[] = {"non_ordered", "non_unique"};
  static const long long prop_values[] = {MLIR_SPARSE_PROPERTY_NON_ORDERED,
                                          MLIR_SPARSE_PROPERTY_NON_UNIQUE};
#endif
  PyObject *f = members(fmt_names, fmt_values, 5);
  if (!f || PyModule_AddObject(sub, "_level_formats", f) < 0) {
    Py_XDECREF(f);
    return -1;
  }
  PyObject *p = members(prop_names, prop_values, (int)(sizeof prop_values / sizeof prop_values[0]));
  if (!p || PyModule_AddObject(sub, "_level_properties", p) < 0) {
    Py_XDECREF(p);
    return -1;
  }
  return 0;
}

int tpy_init_sparse_tensor(PyObject *m) {
  PyObject *sparse = PyModule_New("_sparse_tensor");
  if (!sparse) return -1;
  int bad = tpy_define_classes(sparse, tpy.Attribute, sparse_defs, NULL) < 0 ||
            PyModule_AddFunctions(sparse, sparse_functions) < 0 || add_enum_members(sparse) < 0 ||
            PyModule_AddObjectRef(m, "_sparse_tensor", sparse) < 0;
  Py_DECREF(sparse);
  return bad ? -1 : 0;
}
