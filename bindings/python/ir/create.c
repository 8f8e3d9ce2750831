/* create.c: Operation.create and OpView.build_generic (the generic builder dialect op classes
 * use, with operand/result segments and region counts from the class's _ODS_* metadata).
 *
 * Invariant (re-entrancy): every argument is converted first, holding the wrapper objects (so the
 * handles stay reachable); Python code (sequence iteration, __index__, caster calls) can only run
 * during that phase. The raw MLIR pointers are read from the handles after it, right before the
 * arena creates the operation: an operand erased by Python code meanwhile raises InvalidatedError
 * instead of reaching MLIR.
 */
#include "ir.h"

#include <mlir-c/BuiltinAttributes.h>
#include <stddef.h>
#include <string.h>

enum { MAX_REGIONS = 1 << 16, SMALL = 8 };

typedef struct {
  /* Everything up to the small arrays starts zeroed (op_args_init); the arrays need no init. */
  tether_value **operands; /* PyMem */
  Py_ssize_t n_operands;
  MlirType *results;
  Py_ssize_t n_results;
  tether_block **successors;
  Py_ssize_t n_successors;
  tether_region **regions;
  Py_ssize_t n_regions;
  MlirNamedAttribute *attrs;
  Py_ssize_t n_attrs;
  PyObject *operand_seq, *successor_seq, *region_seq; /* the sequences converted (held) */
  /* Storage for the common case (no allocation per call): the arrays above point here when
   * they have at most SMALL elements. */
  tether_value *operands_s[SMALL];
  MlirType results_s[SMALL];
  tether_block *successors_s[SMALL];
  tether_region *regions_s[SMALL];
  MlirNamedAttribute attrs_s[SMALL];
} op_args;

/* Field by field: gcc 12 turns a memset of these 14 words into `rep stosq`, whose start-up costs
 * more than the stores (perf: a struct copy compiled so was half of create_impl's time). */
static inline void op_args_init(op_args *a) {
  a->operand_seq = a->successor_seq = a->region_seq = NULL;
  a->operands = NULL;
  a->results = NULL;
  a->successors = NULL;
  a->regions = NULL;
  a->attrs = NULL;
  a->n_operands = a->n_results = a->n_successors = a->n_regions = a->n_attrs = 0;
}

/* a->field = room for n elements, in the struct's own storage when it fits. */
#define ARRAY(a, field, n)                                                                         \
  ((a)->field = (n) <= SMALL ? (a)->field##_s : PyMem_Malloc((size_t)(n) * sizeof *(a)->field))
#define ARRAY_FREE(a, field)                                                                       \
  do {                                                                                             \
    if ((a)->field != (a)->field##_s) PyMem_Free((a)->field);                                      \
  } while (0)

static void op_args_free(op_args *a) {
  Py_CLEAR(a->operand_seq);
  Py_CLEAR(a->successor_seq);
  Py_CLEAR(a->region_seq);
  ARRAY_FREE(a, operands);
  ARRAY_FREE(a, results);
  ARRAY_FREE(a, successors);
  ARRAY_FREE(a, regions);
  ARRAY_FREE(a, attrs);
}

static void raise_mixed_contexts(void) {
  PyErr_SetString(PyExc_ValueError, "objects of different contexts cannot be mixed");
}

static int same_arena(tether_arena *a, tether_arena *b) {
  if (a != b) raise_mixed_contexts();
  return a == b;
}

/* An operand: a Value, or an Operation / OpView with exactly one result (on MLIR 22 also an
 * OpResultList: its operation's one result, as upstream's builders take it). */
static int arg_operand(PyObject *o, tether_value **h, MlirValue *raw) {
  if (tpy_is(o, tpy.Value)) return tpy_arg_value(o, h, raw);
  tether_op *oh = NULL;
#if TETHER_MLIR_VERSION >= 22
  oh = tpy_results_list_op(o);
#endif
  if (!oh && tpy_is(o, tpy.OperationBase) && !(oh = TPY_OP(o)->h)) {
    PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");
    return 0;
  }
  if (oh) {
    intptr_t n;
    int rc = tether_op_num_results(oh, &n);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, oh), 0;
    if (n != 1) {
      PyErr_Format(PyExc_ValueError,
                   "an operation used as an operand must have exactly one result (it has %zd)",
                   (Py_ssize_t)n);
      return 0;
    }
    if ((rc = tether_op_result(oh, 0, h)) != TETHER_OK) return TPY_RAISE_RC(rc, oh), 0;
    return tether_value_get(*h, raw) == TETHER_OK;
  }
  tpy_type_error("operand", "a Value", o);
  return 0;
}

/* A list or tuple as it is (nothing converts it meanwhile: no Python code runs while the
 * elements are converted), any other iterable as a new list. */
static PyObject *as_list(PyObject *o, const char *what) {
  if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) return Py_NewRef(o);
  if (PyUnicode_Check(o) || PyBytes_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s must be a sequence, not %s", what, Py_TYPE(o)->tp_name);
    return NULL;
  }
  PyObject *l = PySequence_List(o);
  if (!l && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be a sequence, not %s", what, Py_TYPE(o)->tp_name);
  }
  return l;
}

#define SEQ_N(l) PySequence_Fast_GET_SIZE(l)
#define SEQ_AT(l, i) PySequence_Fast_GET_ITEM(l, i)

static int convert_operands(op_args *a, PyObject *operands, tether_arena *arena) {
  PyObject *l = as_list(operands, "operands");
  if (!l) return 0;
  Py_ssize_t n = SEQ_N(l);
  ARRAY(a, operands, n);
  if (!a->operands) {
    Py_DECREF(l);
    PyErr_NoMemory();
    return 0;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = SEQ_AT(l, i);
    MlirValue raw;
    if (v == Py_None) {
      PyErr_SetString(PyExc_ValueError, "operand value cannot be None");
      goto fail;
    }
    /* A Value's handle as it is: the arena checks it when it creates the operation (an invalid
     * one is reported then: raise_invalid_arg; another context's: create_from). */
    if (tpy_is(v, tpy.Value) && (a->operands[i] = ((TpHandle *)v)->h)) continue;
    if (!arg_operand(v, &a->operands[i], &raw) ||
        !same_arena(arena, tether_handle_arena(a->operands[i])))
      goto fail;
  }
  a->n_operands = n;
  a->operand_seq = l;
  return 1;
fail:
  Py_DECREF(l);
  return 0;
}

static int convert_results(op_args *a, PyObject *results, PyObject *ctx) {
  PyObject *l = as_list(results, "results");
  if (!l) return 0;
  Py_ssize_t n = SEQ_N(l);
  ARRAY(a, results, n);
  int ok = a->results != NULL;
  if (!ok) PyErr_NoMemory();
  for (Py_ssize_t i = 0; ok && i < n; i++) {
    if (SEQ_AT(l, i) == Py_None) {
      PyErr_SetString(PyExc_ValueError, "result type cannot be None");
      ok = 0;
    } else {
      ok = tpy_arg_type_in(SEQ_AT(l, i), ctx, &a->results[i]);
    }
  }
  a->n_results = n;
  Py_DECREF(l);
  return ok;
}

static int convert_successors(op_args *a, PyObject *succs, tether_arena *arena) {
  PyObject *l = as_list(succs, "successors");
  if (!l) return 0;
  Py_ssize_t n = SEQ_N(l);
  ARRAY(a, successors, n);
  int ok = a->successors != NULL;
  if (!ok) PyErr_NoMemory();
  for (Py_ssize_t i = 0; ok && i < n; i++) {
    MlirBlock raw;
    PyObject *b = SEQ_AT(l, i);
    if (b == Py_None) {
      PyErr_SetString(PyExc_ValueError, "successor block cannot be None");
      ok = 0;
    } else {
      ok = tpy_arg_block(b, &a->successors[i], &raw) &&
           same_arena(arena, tether_handle_arena(a->successors[i]));
    }
  }
  a->n_successors = n;
  a->successor_seq = l;
  return ok;
}

/* The number of new regions an int asks for: 1, or 0 with ValueError. */
static int region_count(PyObject *regions, intptr_t *n) {
  if (!tpy_arg_intptr(regions, "regions", n)) return 0;
  if (*n < 0) return PyErr_SetString(PyExc_ValueError, "number of regions must be >= 0"), 0;
  if (*n > MAX_REGIONS)
    return PyErr_Format(PyExc_ValueError, "number of regions must be <= %d", MAX_REGIONS), 0;
  return 1;
}

/* regions: an int (that many new empty regions: a->regions stays NULL, the arena makes them with
 * the operation) or a sequence of detached Regions. */
static int convert_regions(op_args *a, PyObject *regions, tether_arena *arena) {
  if (!regions || regions == Py_None) return 1;
  if (PyLong_Check(regions)) {
    intptr_t n;
    if (!region_count(regions, &n)) return 0;
    a->n_regions = n;
    return 1;
  }
  PyObject *l = as_list(regions, "regions");
  if (!l) return 0;
  Py_ssize_t n = SEQ_N(l);
  ARRAY(a, regions, n);
  int ok = a->regions != NULL;
  if (!ok) PyErr_NoMemory();
  for (Py_ssize_t i = 0; ok && i < n; i++) {
    MlirRegion raw;
    ok = tpy_arg_region(SEQ_AT(l, i), &a->regions[i], &raw) &&
         same_arena(arena, tether_handle_arena(a->regions[i]));
  }
  a->n_regions = n;
  a->region_seq = l;
  return ok;
}

/* No Python code runs while the dict is read (keys are checked to be str, values Attribute; no
 * comparison or conversion is called), so PyDict_Next walks a dict that cannot change. */
static int convert_attributes(op_args *a, PyObject *attrs, PyObject *ctx, PyObject *name) {
  if (!attrs || attrs == Py_None) return 1;
  if (!PyDict_Check(attrs)) return tpy_type_error("attributes", "a dict", attrs), 0;
  Py_ssize_t n = PyDict_GET_SIZE(attrs);
  ARRAY(a, attrs, n);
  if (!a->attrs) return PyErr_NoMemory(), 0;
  Py_ssize_t pos = 0, i = 0;
  PyObject *k, *v;
  while (PyDict_Next(attrs, &pos, &k, &v)) {
    MlirStringRef ks;
    MlirAttribute av;
    if (!PyUnicode_Check(k)) {
      PyErr_Format(PyExc_TypeError,
                   "Invalid attribute key (not a string) when attempting to create the operation "
                   "\"%U\"",
                   name);
      return 0;
    }
    if (v == Py_None) {
      PyErr_Format(PyExc_TypeError,
                   "Found an invalid (`None`?) attribute value for the key \"%U\" when attempting "
                   "to create the operation \"%U\"",
                   k, name);
      return 0;
    }
    if (!tpy_is(v, tpy.Attribute)) {
      PyErr_Format(PyExc_TypeError,
                   "Invalid attribute value for the key \"%U\" when attempting to create the "
                   "operation \"%U\"",
                   k, name);
      return 0;
    }
    if (!tpy_arg_attr_in(v, ctx, &av)) return 0;
    MlirIdentifier id;
    if (!tpy_identifier_cached(ctx, k, &id)) {
      if (!tpy_arg_str(k, "key", &ks)) return 0;
      id = tpy_identifier(ctx, k, ks);
    }
    a->attrs[i++] = mlirNamedAttributeGet(id, av);
  }
  a->n_attrs = i;
  return 1;
}

/* An invalid operand or successor: InvalidatedError with its reason. */
static void raise_invalid_arg(op_args *a) {
  for (Py_ssize_t i = 0; i < a->n_operands; i++) {
    MlirValue raw;
    int rc = tether_value_get(a->operands[i], &raw);
    if (rc != TETHER_OK) {
      TPY_RAISE_RC(rc, a->operands[i]);
      return;
    }
  }
  for (Py_ssize_t i = 0; i < a->n_successors; i++) {
    MlirBlock raw;
    int rc = tether_block_get(a->successors[i], &raw);
    if (rc != TETHER_OK) {
      TPY_RAISE_RC(rc, a->successors[i]);
      return;
    }
  }
  tpy_raise(TETHER_EINVALID, NULL, NULL);
}

/* Creates the operation from converted arguments and inserts it at ip: 0 with its handle in *out
 * (the caller wraps it; the handle is on the stack, which the collector scans), or -1. */
static int create_from(op_args *a, PyObject *pyname, MlirStringRef name, PyObject *loc,
                       PyObject *ip, int infer, tether_op **out) {
  TpContext *ctx = (TpContext *)TPY_CTX(loc);
  MlirOperationState st = mlirOperationStateGet(name, (MlirLocation){TPY_PTR(loc)});
  /* Regions given (detached ones), or new ones (a->regions NULL: the arena makes them). */
  Py_ssize_t given = a->regions ? a->n_regions : 0;
  MlirRegion rg_s[SMALL];
  MlirRegion *rg = given <= SMALL ? rg_s : PyMem_Malloc((size_t)given * sizeof *rg);
  int result = -1;
  if (!rg) {
    PyErr_NoMemory();
    goto done;
  }
  /* No Python code runs from here on: the raw pointers stay what the handles say. Operands and
   * successors go to the arena as handles (it reads them, and knows their trees). */
  for (Py_ssize_t i = 0; i < given; i++) {
    int rc = tether_region_get(a->regions[i], &rg[i]);
    if (rc != TETHER_OK) {
      TPY_RAISE_RC(rc, a->regions[i]);
      goto done;
    }
  }
  st.nOperands = a->n_operands;
  st.nResults = a->n_results;
  st.results = a->results;
  st.nSuccessors = a->n_successors;
  st.nRegions = a->n_regions;
  st.regions = a->regions ? rg : NULL;
  st.nAttributes = a->n_attrs;
  st.attributes = a->attrs;
  st.enableResultTypeInference = infer;
  /* The insertion point is resolved first: the operation is created straight into its block. */
  tether_block *ipb = NULL;
  tether_op *ipref = NULL;
  if (ip != Py_False) {
    if (!ip || ip == Py_None)
      ip = tpy_current_ip();
    else if (!tpy_is(ip, tpy.InsertionPoint)) {
      tpy_type_error("ip", "an InsertionPoint", ip);
      goto done;
    }
    if (ip && tpy_ip_target(ip, &ipb, &ipref) < 0) goto done;
  }
  /* Only inference reports diagnostics, and only when it fails. The capture (a handler attached
   * to the context: 900 instructions) is made up front only when Python handlers are attached,
   * which must not see them; otherwise the arena's own handler takes them silently, and a failed
   * inference is made again under the capture for its diagnostics (it creates nothing, and it is
   * deterministic). */
  tpy_errcap cap = {0};
  int handlers = ctx->handlers && PyList_Check(ctx->handlers) && PyList_GET_SIZE(ctx->handlers);
  if (infer && handlers) tpy_errcap_begin(&cap, ctx);
  tether_op *op;
  int rc = tether_op_create_from(ctx->arena, &st, a->operands, a->successors, ipb, ipref, &op);
  if (rc == TETHER_EARG && infer && !handlers) {
    tpy_errcap_begin(&cap, ctx);
    rc = tether_op_create_from(ctx->arena, &st, a->operands, a->successors, ipb, ipref, &op);
  }
  if (rc != TETHER_OK) {
    PyObject *errs = cap.attached ? tpy_errcap_end(&cap) : PyList_New(0);
    if (rc == TETHER_EARG && infer) {
      PyObject *msg = PyUnicode_FromFormat("could not infer the result types of '%U'", pyname);
      if (msg && errs) tpy_raise_mlir_error(PyUnicode_AsUTF8(msg), errs);
      Py_XDECREF(msg);
    } else if (rc == TETHER_EARG) {
      PyErr_Format(PyExc_ValueError,
                   "invalid operation state for '%U': operands, successors and regions must be "
                   "alive in this context, and regions detached (each given once)",
                   pyname);
    } else if (rc == TETHER_EINVALID) {
      raise_invalid_arg(a);
    } else if (rc == TETHER_ECONTEXT) {
      raise_mixed_contexts(); /* an operand of another context (checked by the arena) */
    } else {
      tpy_raise(rc, NULL, ctx->arena);
    }
    Py_XDECREF(errs);
    goto done;
  }
  if (cap.attached) tpy_errcap_close(&cap);
  *out = op;
  result = 0;
done:
  if (rg != rg_s) PyMem_Free(rg);
  return result;
}

/* ---- the location of a new operation ------------------------------------------------------- */

/* MLIR 22's loc_tracebacks: while enabled, the function making a location from the Python call
 * stack (tether.dialects._ods_common._traceback_location(context)), else NULL. */

PyObject *tpy_creation_loc(PyObject *given) {
  if ((given && given != Py_None) || !tpy.traceback_loc_fn) {
    PyObject *loc = tpy_resolve_loc(given);
    return loc ? Py_NewRef(loc) : NULL;
  }
  TpContext *ctx = tpy_resolve_context(NULL);
  if (!ctx) return NULL;
  PyObject *loc = PyObject_CallOneArg(tpy.traceback_loc_fn, (PyObject *)ctx);
  if (loc && !tpy_is(loc, tpy.Location)) {
    tpy_type_error("the traceback location", "a Location", loc);
    Py_CLEAR(loc);
  }
  return loc;
}

#if TETHER_MLIR_VERSION >= 22
/* _set_loc_traceback_fn(fn): fn(context) makes creation locations from now on (None: no more). */
static PyObject *fn_set_loc_traceback_fn(PyObject *m, PyObject *fn) {
  (void)m;
  if (fn != Py_None && !PyCallable_Check(fn)) return tpy_type_error("fn", "callable or None", fn);
  Py_XSETREF(tpy.traceback_loc_fn, fn == Py_None ? NULL : Py_NewRef(fn));
  Py_RETURN_NONE;
}
#endif

/* Operation.create: an Operation on MLIR 22, its OpView on 19 (as upstream's). */
#if TETHER_MLIR_VERSION >= 22
#define CREATED "Operation"
#else
#define CREATED "OpView"
#endif
tpy_sig tpy_op_create_sig = TPY_SIG(
    "create(name: str, results: Sequence[Type] | None = None, "
    "operands: Sequence[Value] | None = None, attributes: Mapping[str, Attribute] | None = None, "
    "successors: Sequence[Block] | None = None, regions: int = 0, loc: Location | None = None, "
    "ip: InsertionPoint | None = None, infer_type: bool = False) -> " CREATED,
    NULL);

PyObject *tpy_op_create(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  (void)cls;
  PyObject *x[9];
  if (!tpy_fastargs(&tpy_op_create_sig, args, nargs, kwnames, x, 9)) return NULL;
  MlirStringRef name;
  if (!PyUnicode_Check(x[0])) return tpy_type_error("name", "a str", x[0]);
  if (!tpy_arg_str(x[0], "name", &name)) return NULL;
  int infer = x[8] ? PyObject_IsTrue(x[8]) : 0;
  if (infer < 0) return NULL;
  PyObject *loc = tpy_creation_loc(x[6]); /* held: the stack may change while arguments convert */
  if (!loc) return NULL;
  PyObject *ctx = TPY_CTX(loc);
  tether_arena *arena = ((TpContext *)ctx)->arena;
  op_args a;
  op_args_init(&a);
  PyObject *r = NULL;
  if (x[1] && x[1] != Py_None && !convert_results(&a, x[1], ctx)) goto done;
  if (x[2] && x[2] != Py_None && !convert_operands(&a, x[2], arena)) goto done;
  if (!convert_attributes(&a, x[3], ctx, x[0])) goto done;
  if (x[4] && x[4] != Py_None && !convert_successors(&a, x[4], arena)) goto done;
  if (!convert_regions(&a, x[5], arena)) goto done;
  tether_op *op;
#if TETHER_MLIR_VERSION >= 22
  /* The Operation, as upstream 22's (19's gave the OpView). */
  if (create_from(&a, x[0], name, loc, x[7], infer, &op) == 0) r = tpy_wrap_operation(op);
#else
  if (create_from(&a, x[0], name, loc, x[7], infer, &op) == 0) r = tpy_wrap_op(op);
#endif
done:
  op_args_free(&a);
  Py_DECREF(loc);
  return r;
}

/* ---- build_generic and OpView.__init__ ------------------------------------------------------ */

/* The element checks of the builders, with upstream's ValueErrors: "Operand 1 of operation "x.y"
 * must be a Value (detail)", "... must be a Sequence of Types (contained a None item)". An operand
 * is a Value, an operation with one result (Operation or OpView) or, on MLIR 22, an OpResultList
 * (its operation's one result); the element is converted later (convert_operands), which checks
 * it again, since Python code may run in between. */

/* Whether item may be an element of kind `operand` (else of results); 0 with *detail (a new str)
 * saying why not; -1 with an exception. */
static int element_check(PyObject *item, int operand, int sequence, PyObject **detail) {
  const char *kind = operand ? "Value" : "Type";
  *detail = NULL;
#if TETHER_MLIR_VERSION >= 22
  if (operand) {
    /* Upstream 22's getOpResultOrValue. */
    if (item == Py_None) {
      *detail = PyUnicode_FromString("contained a None item");
      return *detail ? 0 : -1;
    }
    if (tpy_is(item, tpy.Value)) return 1;
    tether_op *h = NULL;
    if (tpy_is(item, tpy.OperationBase))
      h = TPY_OP(item)->h;
    else if (!(h = tpy_results_list_op(item))) {
      *detail = PyUnicode_FromString("is not a Value");
      return *detail ? 0 : -1;
    }
    MlirOperation raw;
    if (!h) return PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized"), -1;
    int rc = tether_op_get(h, &raw);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h), -1;
    intptr_t n = mlirOperationGetNumResults(raw);
    if (n == 1) return 1;
    PyObject *nm = tpy_op_name_str(raw);
    if (!nm) return -1;
    *detail = PyUnicode_FromFormat("Cannot call .result on operation %U which has %zd results (it "
                                   "is only valid for operations with a single result)",
                                   nm, (Py_ssize_t)n);
    Py_DECREF(nm);
    return *detail ? 0 : -1;
  }
#endif
  if (operand ? tpy_is(item, tpy.Value) || tpy_is(item, tpy.OperationBase) : tpy_is(item, tpy.Type))
    return 1;
  *detail = item == Py_None
                ? PyUnicode_FromString(sequence ? "contained a None item" : "")
                : PyUnicode_FromFormat("Unable to cast Python instance of type %R to a %s",
                                       (PyObject *)Py_TYPE(item), kind);
  return *detail ? 0 : -1;
}

/* Checks one element (operand or result i, in a segment's sequence when `sequence`), raising
 * upstream's ValueError when it cannot be one. 1 or 0. */
static int element_ok(PyObject *item, int operand, Py_ssize_t i, PyObject *opname, int sequence) {
  PyObject *detail;
  int ok = element_check(item, operand, sequence, &detail);
  if (ok) return ok > 0;
  const char *kind = operand ? "Value" : "Type";
  PyErr_Format(PyExc_ValueError, "%s %zd of operation \"%U\" must be a %s%s%s (%U)",
               operand ? "Operand" : "Result", i, opname, sequence ? "Sequence of " : "", kind,
               sequence ? "s" : "", detail);
  Py_DECREF(detail);
  return 0;
}

/* Checks every element of a list without segments. */
static int check_elements(PyObject *list, int operand, PyObject *opname) {
  for (Py_ssize_t i = 0; i < SEQ_N(list); i++)
    if (!element_ok(SEQ_AT(list, i), operand, i, opname, 0)) return 0;
  return 1;
}

/* Flattens values (or types) by segment spec: -1 a sequence (None: empty), 0 optional, 1 one.
 * Appends to `flat` and the segment lengths to `sizes`. */
static int flatten_segments(PyObject *list, PyObject *spec, PyObject *flat, int32_t **sizes,
                            Py_ssize_t *nsizes, const char *what, PyObject *opname) {
  int operand = what[0] == 'o';
  PyObject *sp = tpy_seq_fast(spec, "segment spec must be a sequence");
  if (!sp) return 0;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(sp);
  if (SEQ_N(list) != n) {
    PyErr_Format(PyExc_ValueError, "Operation \"%U\" requires %zd %s segments but was provided %zd",
                 opname, n, what, SEQ_N(list));
    Py_DECREF(sp);
    return 0;
  }
  *sizes = PyMem_Malloc((size_t)(n ? n : 1) * sizeof **sizes);
  if (!*sizes) {
    Py_DECREF(sp);
    PyErr_NoMemory();
    return 0;
  }
  *nsizes = n;
  for (Py_ssize_t i = 0; i < n; i++) {
    long s = PyLong_AsLong(PySequence_Fast_GET_ITEM(sp, i));
    PyObject *item = SEQ_AT(list, i);
    if (s == -1 && PyErr_Occurred()) goto fail;
    if (s == 1 || s == 0) {
      if (item == Py_None) {
        if (s == 1) {
          PyErr_Format(PyExc_ValueError,
                       "%s %zd of operation \"%U\" must be a %s (was None and %s is not "
                       "optional)",
                       operand ? "Operand" : "Result", i, opname, operand ? "Value" : "Type", what);
          goto fail;
        }
        (*sizes)[i] = 0;
      } else {
        if (!element_ok(item, operand, i, opname, 0)) goto fail;
        if (PyList_Append(flat, item) < 0) goto fail;
        (*sizes)[i] = 1;
      }
    } else if (s == -1) {
      if (item == Py_None) {
        (*sizes)[i] = 0;
        continue;
      }
      PyObject *seg = PySequence_Check(item) ? tpy_seq_fast(item, "a sequence") : NULL;
      if (!seg) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "%s %zd of operation \"%U\" must be a Sequence of %ss (Object of type "
                     "'%s' is not an instance of 'sequence')",
                     operand ? "Operand" : "Result", i, opname, operand ? "Value" : "Type",
                     Py_TYPE(item)->tp_name);
        goto fail;
      }
      Py_ssize_t k = PySequence_Fast_GET_SIZE(seg);
      for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seg, j);
        if (!element_ok(e, operand, i, opname, 1) || PyList_Append(flat, e) < 0) {
          Py_DECREF(seg);
          goto fail;
        }
      }
      Py_DECREF(seg);
      if (k > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "segment too long");
        goto fail;
      }
      (*sizes)[i] = (int32_t)k;
    } else {
      PyErr_SetString(PyExc_ValueError, "Unexpected segment spec");
      goto fail;
    }
  }
  Py_DECREF(sp);
  return 1;
fail:
  Py_DECREF(sp);
  PyMem_Free(*sizes);
  *sizes = NULL;
  return 0;
}

/* The region spec (minimum count, whether there are no variadic regions). 1 or 0. */
static int region_spec(PyObject *rspec, long *min_regions, int *no_variadic) {
  PyObject *f = PySequence_Check(rspec) ? tpy_seq_fast(rspec, "") : NULL;
  if (!f || PySequence_Fast_GET_SIZE(f) != 2) {
    Py_XDECREF(f);
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "_ODS_REGIONS must be a (int, bool) tuple");
    return 0;
  }
  *min_regions = PyLong_AsLong(PySequence_Fast_GET_ITEM(f, 0));
  *no_variadic = PyObject_IsTrue(PySequence_Fast_GET_ITEM(f, 1));
  Py_DECREF(f);
  return !((*min_regions == -1 && PyErr_Occurred()) || *no_variadic < 0);
}

/* Adds a DenseI32ArrayAttr of sizes to attrs under key. 1 or 0. */
static int add_segment_sizes(PyObject *attrs, const char *key, PyObject *ctx, Py_ssize_t n,
                             const int32_t *sizes) {
  PyObject *at = tpy_wrap_attr(ctx, mlirDenseI32ArrayGet(tpy_ctx_raw(ctx), n, sizes));
  int ok = at && PyDict_SetItemString(attrs, key, at) == 0;
  Py_XDECREF(at);
  return ok;
}

/* Upstream's buildGeneric: the operation `opname` of an op class with the class's metadata
 * (rspec: _ODS_REGIONS; oseg, rseg: _ODS_OPERAND_SEGMENTS, _ODS_RESULT_SEGMENTS, None or specs)
 * and x: results, operands, attributes, successors, regions, loc, ip (NULL: not given). 0 with
 * the new operation's handle in *out, or -1. */
static int build(PyObject *opname, PyObject *rspec, PyObject *oseg, PyObject *rseg,
                 PyObject *const *x, tether_op **out) {
  PyObject *ops = NULL, *res = NULL, *attrs = NULL, *loc = NULL;
  int32_t *osizes = NULL, *rsizes = NULL;
  Py_ssize_t nos = 0, nrs = 0;
  int r = -1;
  op_args a;
  op_args_init(&a);
  MlirStringRef name;
  if (!PyUnicode_Check(opname)) {
    tpy_type_error("OPERATION_NAME", "a str", opname);
    goto done;
  }
  if (!tpy_arg_str(opname, "OPERATION_NAME", &name)) goto done;
  long min_regions;
  int no_variadic;
  if (!region_spec(rspec, &min_regions, &no_variadic)) goto done;
  intptr_t nregions = min_regions;
  if (x[4] && x[4] != Py_None && !tpy_arg_intptr(x[4], "regions", &nregions)) goto done;
  if (nregions < min_regions) {
    PyErr_Format(PyExc_ValueError,
                 "Operation \"%U\" requires a minimum of %ld regions but was built with "
                 "regions=%zd",
                 opname, min_regions, (Py_ssize_t)nregions);
    goto done;
  }
  if (no_variadic && nregions > min_regions) {
    PyErr_Format(PyExc_ValueError,
                 "Operation \"%U\" requires a maximum of %ld regions but was built with "
                 "regions=%zd",
                 opname, min_regions, (Py_ssize_t)nregions);
    goto done;
  }
  /* Results. */
  int infer = !x[0] || x[0] == Py_None;
  if (!infer) {
    PyObject *l = as_list(x[0], "results");
    if (!l) goto done;
    if (rseg == Py_None) {
      res = l;
      if (!check_elements(res, 0, opname)) goto done;
    } else {
      res = PyList_New(0);
      int ok = res && flatten_segments(l, rseg, res, &rsizes, &nrs, "result", opname);
      Py_DECREF(l);
      if (!ok) goto done;
    }
  }
  /* Operands. */
  {
    PyObject *l = x[1] && x[1] != Py_None ? as_list(x[1], "operands") : PyList_New(0);
    if (!l) goto done;
    if (oseg == Py_None) {
      ops = l;
      if (!check_elements(ops, 1, opname)) goto done;
    } else {
      ops = PyList_New(0);
      int ok = ops && flatten_segments(l, oseg, ops, &osizes, &nos, "operand", opname);
      Py_DECREF(l);
      if (!ok) goto done;
    }
  }
  /* Location and context. */
  loc = tpy_creation_loc(x[5]);
  if (!loc) goto done;
  PyObject *ctx = TPY_CTX(loc);
  /* Attributes, with the segment sizes. */
  if (x[2] && x[2] != Py_None) {
    if (!PyDict_Check(x[2])) {
      tpy_type_error("attributes", "a dict", x[2]);
      goto done;
    }
    /* The caller's dict as it is, unless the segment sizes are added to it. */
    attrs = osizes || rsizes ? PyDict_Copy(x[2]) : Py_NewRef(x[2]);
  } else {
    attrs = PyDict_New();
  }
  if (!attrs) goto done;
  if (osizes || rsizes) {
    int has = PyDict_GetItemString(attrs, "resultSegmentSizes") ||
              PyDict_GetItemString(attrs, "operandSegmentSizes");
    if (has) {
      PyErr_SetString(PyExc_ValueError,
                      "Manually setting a 'resultSegmentSizes' or 'operandSegmentSizes' attribute "
                      "is unsupported. Use Operation.create for such low-level access.");
      goto done;
    }
    if (rsizes && !add_segment_sizes(attrs, "resultSegmentSizes", ctx, nrs, rsizes)) goto done;
    if (osizes && !add_segment_sizes(attrs, "operandSegmentSizes", ctx, nos, osizes)) goto done;
  }
  tether_arena *arena = ((TpContext *)ctx)->arena;
  if (res && !convert_results(&a, res, ctx)) goto done;
  if (!convert_operands(&a, ops, arena)) goto done;
  if (!convert_attributes(&a, attrs, ctx, opname)) goto done;
  if (x[3] && x[3] != Py_None && !convert_successors(&a, x[3], arena)) goto done;
  a.n_regions = nregions; /* new ones */
  r = create_from(&a, opname, name, loc, x[6], infer, out);
done:
  op_args_free(&a);
  PyMem_Free(osizes);
  PyMem_Free(rsizes);
  Py_XDECREF(loc);
  Py_XDECREF(ops);
  Py_XDECREF(res);
  Py_XDECREF(attrs);
  return r;
}

tpy_sig tpy_opview_build_generic_sig = TPY_SIG(
    "build_generic(results: Sequence[Type] | None = None, "
    "operands: Sequence[Value | Sequence[Value] | None] | None = None, "
    "attributes: Mapping[str, Attribute] | None = None, successors: Sequence[Block] | None = None, "
    "regions: int | None = None, loc: Location | None = None, ip: InsertionPoint | None = None) "
    "-> Self",
    "The operation of this class, from _ODS_* metadata.");

PyObject *tpy_opview_build_generic(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  PyObject *x[7];
  if (!tpy_fastargs(&tpy_opview_build_generic_sig, args, nargs, kwnames, x, 7)) return NULL;
  /* The class's metadata, looked up by interned names (the type's attribute cache answers). */
  static PyObject *k_name, *k_oseg, *k_rseg, *k_regions;
  if (!k_regions && (!(k_name = PyUnicode_InternFromString("OPERATION_NAME")) ||
                     !(k_oseg = PyUnicode_InternFromString("_ODS_OPERAND_SEGMENTS")) ||
                     !(k_rseg = PyUnicode_InternFromString("_ODS_RESULT_SEGMENTS")) ||
                     !(k_regions = PyUnicode_InternFromString("_ODS_REGIONS"))))
    return NULL;
  PyObject *opname = PyObject_GetAttr(cls, k_name);
  PyObject *oseg = opname ? PyObject_GetAttr(cls, k_oseg) : NULL;
  PyObject *rseg = oseg ? PyObject_GetAttr(cls, k_rseg) : NULL;
  PyObject *rspec = rseg ? PyObject_GetAttr(cls, k_regions) : NULL;
  PyObject *r = NULL;
  tether_op *op;
#if TETHER_MLIR_VERSION >= 22
  /* Upstream 22's build_generic gives the Operation (19's: the OpView). */
  if (rspec && build(opname, rspec, oseg, rseg, x, &op) == 0) r = tpy_wrap_operation(op);
#else
  if (rspec && build(opname, rspec, oseg, rseg, x, &op) == 0) r = tpy_wrap_op(op);
#endif
  Py_XDECREF(opname);
  Py_XDECREF(oseg);
  Py_XDECREF(rseg);
  Py_XDECREF(rspec);
  return r;
}

int tpy_create_parts(const tpy_op_parts *p, tether_op **out) {
  MlirStringRef name;
  if (!tpy_arg_str(p->name, "OPERATION_NAME", &name)) return -1;
  op_args a;
  op_args_init(&a);
  a.operands = p->operands;
  a.n_operands = p->n_operands;
  a.results = p->results;
  a.n_results = p->n_results;
  a.attrs = p->attrs;
  a.n_attrs = p->n_attrs;
  a.successors = p->successors;
  a.n_successors = p->n_successors;
  a.n_regions = p->n_regions; /* new ones */
  /* The arrays are the caller's: not op_args_free. */
  return create_from(&a, p->name, name, p->loc, p->ip, p->infer, out);
}

#if TETHER_MLIR_VERSION >= 22
int tpy_opview_build(PyObject *const *x, tether_op **out) {
  return build(x[0], x[1], x[2] ? x[2] : Py_None, x[3] ? x[3] : Py_None, x + 4, out);
}
#endif

static PyMethodDef create_functions[] = {
#if TETHER_MLIR_VERSION >= 22
    {"_set_loc_traceback_fn", fn_set_loc_traceback_fn, METH_O,
     TPY_SIGDOC("_set_loc_traceback_fn(fn: Callable[[Context], Location] | None, /) -> None",
                NULL)},
#endif
    TPY_METHODS_END,
};

int tpy_init_create(PyObject *m) { return PyModule_AddFunctions(m, create_functions); }
