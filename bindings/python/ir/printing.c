/* printing.c: how operations are printed (get_asm, print, str, write_bytecode) and AsmState, the
 * printing state that names values (value.get_name(state=...)).
 *
 * Invariant: MLIR's printer runs the custom printers of operations and, to name values, their
 * OpAsmOpInterface, which may crash on IR that does not verify. So a print that would run them on
 * IR the arena cannot vouch for (IR that uses values of other IR, or does not verify) prints the
 * generic form, told it is verified, and bytecode is written only of verified, self-contained IR.
 */
#include "ir.h"

/* Printing: the flags of get_asm/print. */
typedef struct {
  PyObject *large_elements_limit, *large_resource_limit; /* NULL or None: no limit */
  int debug, pretty, generic, local, assume, skip_regions, binary, name_loc;
} print_opts;

/* An optional size limit: 1 with *set 0 for None (or not given), 0 with an error raised. */
static int limit_arg(PyObject *o, const char *name, int64_t *limit, int *set) {
  *set = o && o != Py_None;
  return !*set || tpy_arg_int64(o, name, limit);
}

static MlirOpPrintingFlags make_flags(print_opts *o, int *ok) {
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  int64_t limit;
  int set;
  if (!(*ok = limit_arg(o->large_elements_limit, "large_elements_limit", &limit, &set))) goto fail;
  if (set) mlirOpPrintingFlagsElideLargeElementsAttrs(f, (intptr_t)limit);
#if TETHER_MLIR_VERSION >= 22
  if (!(*ok = limit_arg(o->large_resource_limit, "large_resource_limit", &limit, &set))) goto fail;
  if (set) mlirOpPrintingFlagsElideLargeResourceString(f, (intptr_t)limit);
  if (o->name_loc) mlirOpPrintingFlagsPrintNameLocAsPrefix(f);
#endif
  if (o->debug) mlirOpPrintingFlagsEnableDebugInfo(f, true, o->pretty);
  if (o->generic) mlirOpPrintingFlagsPrintGenericOpForm(f);
  if (o->local) mlirOpPrintingFlagsUseLocalScope(f);
  if (o->assume) mlirOpPrintingFlagsAssumeVerified(f);
  if (o->skip_regions) mlirOpPrintingFlagsSkipRegions(f);
  return f;
fail:
  mlirOpPrintingFlagsDestroy(f);
  return f; /* *ok is 0: the caller does not use it */
}

typedef struct {
  PyObject_HEAD MlirAsmState state;
  PyObject *owner; /* the operation or value it was made for */
} TpAsmState;

/* Prints into b (text or bytecode); 0 with an exception set on failure. */
static int print_into(PyObject *self, print_opts *o, PyObject *state, tpy_strbuf *b) {
  tether_op *h = TPY_OP(self)->h;
  MlirOperation raw;
  if (!h) {
    PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");
    return 0;
  }
  int rc = tether_op_get(h, &raw);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h), 0;
  /* A state's names and flags were made for the IR as it was: printing with it runs the custom
   * printers, which may crash on operations that do not verify (added since, or IR MLIR's verifier
   * cannot run on). Then the operation is printed as without a state, in the generic form. */
  int stale = 0;
  if (state) {
    stale = tether_handle_has_foreign_uses(h) || tether_op_verify(h) != TETHER_OK;
    if (!stale) {
      mlirOperationPrintWithState(raw, ((TpAsmState *)state)->state, tpy_strbuf_append, b);
      return 1;
    }
  }
  int ok;
  MlirOpPrintingFlags f = make_flags(o, &ok);
  if (!ok) return 0;
  if (stale) mlirOpPrintingFlagsPrintGenericOpForm(f);
  /* binary=True is the same text, as bytes (upstream: write_bytecode is the bytecode). */
  rc = tether_op_print(h, f, tpy_strbuf_append, b);
  mlirOpPrintingFlagsDestroy(f);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h), 0;
  return 1;
}

/* get_asm's and print's options (upstream's, in its order). */
#if TETHER_MLIR_VERSION >= 22
#define LIMIT_OPTS                                                                                 \
  "large_elements_limit: int | None = None, large_resource_limit: int | None = None, "
#define NAME_LOC_OPT "use_name_loc_as_prefix: bool = False, "
#else
#define LIMIT_OPTS "large_elements_limit: int | None = None, "
#define NAME_LOC_OPT ""
#endif
#define FLAG_OPTS                                                                                  \
  "enable_debug_info: bool = False, pretty_debug_info: bool = False, "                             \
  "print_generic_op_form: bool = False, use_local_scope: bool = False, " NAME_LOC_OPT              \
  "assume_verified: bool = False, "
static tpy_sig get_asm_bytes_sig = TPY_SIG("get_asm(binary: Literal[True], " LIMIT_OPTS FLAG_OPTS
                                           "skip_regions: bool = False) -> bytes",
                                           NULL);
tpy_sig tpy_op_get_asm_sig =
    TPY_SIG_OR("get_asm(binary: Literal[False] = False, " LIMIT_OPTS FLAG_OPTS
               "skip_regions: bool = False) -> str",
               "The operation's text (bytes when binary).", &get_asm_bytes_sig);
static tpy_sig print_state_sig =
    TPY_SIG("print(state: AsmState, file: Any = None, binary: bool = False) -> None", NULL);
tpy_sig tpy_op_print_sig =
    TPY_SIG_OR("print(" LIMIT_OPTS FLAG_OPTS "file: Any = None, binary: bool = False, "
               "skip_regions: bool = False) -> None",
               "file: a file-like object, None (sys.stdout) or the path of a file to write.",
               &print_state_sig);

/* Where each of those goes (the parameters in order); NULL: an option that is not a flag (an
 * object: a limit, file). */
#define OPT_FLAGS(o) &(o).debug, &(o).pretty, &(o).generic, &(o).local
#if TETHER_MLIR_VERSION >= 22
enum { N_GET_ASM = 10, N_PRINT = 11, PRINT_FILE = 8 };
#define GET_ASM_FLAGS(o)                                                                           \
  { &(o).binary, NULL, NULL, OPT_FLAGS(o), &(o).name_loc, &(o).assume, &(o).skip_regions }
#define PRINT_FLAGS(o)                                                                             \
  { NULL, NULL, OPT_FLAGS(o), &(o).name_loc, &(o).assume, NULL, &(o).binary, &(o).skip_regions }
#define GET_ASM_LIMITS(a) (a)[1], (a)[2]
#define PRINT_LIMITS(a) (a)[0], (a)[1]
#else
enum { N_GET_ASM = 8, N_PRINT = 9, PRINT_FILE = 6 };
#define GET_ASM_FLAGS(o)                                                                           \
  { &(o).binary, NULL, OPT_FLAGS(o), &(o).assume, &(o).skip_regions }
#define PRINT_FLAGS(o)                                                                             \
  { NULL, OPT_FLAGS(o), &(o).assume, NULL, &(o).binary, &(o).skip_regions }
#define GET_ASM_LIMITS(a) (a)[1], NULL
#define PRINT_LIMITS(a) (a)[0], NULL
#endif

/* The flags of a get_asm or print call: a[] as parsed by those names, flags[] where each goes. */
static int read_flags(PyObject *const *a, int *const *flags, int n) {
  for (int i = 0; i < n; i++)
    if (flags[i] && a[i] && (*flags[i] = PyObject_IsTrue(a[i])) < 0) return 0;
  return 1;
}

PyObject *tpy_op_get_asm(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  PyObject *a[N_GET_ASM];
  if (!tpy_fastargs(&tpy_op_get_asm_sig, args, nargs, kwnames, a, N_GET_ASM)) return NULL;
  print_opts o = {GET_ASM_LIMITS(a), 0, 0, 0, 0, 0, 0, 0, 0};
  int *flags[N_GET_ASM] = GET_ASM_FLAGS(o);
  if (!read_flags(a, flags, N_GET_ASM)) return NULL;
  tpy_strbuf b = {0};
  if (!print_into(self, &o, NULL, &b)) {
    PyMem_RawFree(b.data);
    return NULL;
  }
  return o.binary ? tpy_strbuf_finish_bytes(&b) : tpy_strbuf_finish(&b);
}

/* Writes text (str or bytes) to file: a file-like object, None (sys.stdout) or, on MLIR 22, the
 * path of a file to write (as upstream 22's; the text as UTF-8). */
static PyObject *write_to(PyObject *file, PyObject *text) {
  if (!file || file == Py_None) {
    file = PySys_GetObject("stdout");
    if (!file) return PyErr_Format(PyExc_RuntimeError, "no sys.stdout");
  }
#if TETHER_MLIR_VERSION >= 22
  if (PyUnicode_Check(file)) {
    PyObject *bytes = PyUnicode_Check(text) ? PyUnicode_AsUTF8String(text) : Py_NewRef(text);
    if (!bytes) return NULL;
    PyObject *io = PyImport_ImportModule("io");
    PyObject *f = io ? PyObject_CallMethod(io, "open", "Os", file, "wb") : NULL;
    Py_XDECREF(io);
    if (!f) {
      Py_DECREF(bytes);
      if (!PyErr_ExceptionMatches(PyExc_OSError)) return NULL;
      PyObject *type, *exc, *tb;
      PyErr_Fetch(&type, &exc, &tb);
      PyErr_NormalizeException(&type, &exc, &tb);
      PyObject *why = exc ? PyObject_GetAttrString(exc, "strerror") : NULL;
      if (!why) PyErr_Clear();
      PyErr_Format(PyExc_ValueError, "Unable to open file for writing: %S",
                   why && why != Py_None ? why : exc);
      Py_XDECREF(why);
      Py_XDECREF(type);
      Py_XDECREF(exc);
      Py_XDECREF(tb);
      return NULL;
    }
    PyObject *r = PyObject_CallMethod(f, "write", "O", bytes);
    Py_DECREF(bytes);
    PyObject *c = PyObject_CallMethod(f, "close", NULL);
    Py_DECREF(f);
    if (!c) Py_CLEAR(r);
    Py_XDECREF(c);
    return r;
  }
#endif
  return PyObject_CallMethod(file, "write", "O", text);
}

PyObject *tpy_op_print(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  /* print(state, file=None, binary=False) or print(large_elements_limit=None, ...). */
  if (nargs >= 1 && tpy_is(args[0], tpy.AsmState)) {
    PyObject *a[3];
    if (!tpy_fastargs(&print_state_sig, args, nargs, kwnames, a, 3)) return NULL;
    int binary = a[2] ? PyObject_IsTrue(a[2]) : 0;
    if (binary < 0) return NULL;
    tpy_strbuf b = {0};
    print_opts o = {NULL, NULL, 0, 0, 0, 0, 0, 0, binary, 0};
    if (!print_into(self, &o, a[0], &b)) {
      PyMem_RawFree(b.data);
      return NULL;
    }
    PyObject *text = binary ? tpy_strbuf_finish_bytes(&b) : tpy_strbuf_finish(&b);
    if (!text) return NULL;
    PyObject *r = write_to(a[1], text);
    Py_DECREF(text);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
  }
  PyObject *a[N_PRINT];
  if (!tpy_fastargs(&tpy_op_print_sig, args, nargs, kwnames, a, N_PRINT)) return NULL;
  print_opts o = {PRINT_LIMITS(a), 0, 0, 0, 0, 0, 0, 0, 0};
  int *flags[N_PRINT] = PRINT_FLAGS(o);
  if (!read_flags(a, flags, N_PRINT)) return NULL;
  tpy_strbuf b = {0};
  if (!print_into(self, &o, NULL, &b)) {
    PyMem_RawFree(b.data);
    return NULL;
  }
  PyObject *text = o.binary ? tpy_strbuf_finish_bytes(&b) : tpy_strbuf_finish(&b);
  if (!text) return NULL;
  PyObject *r = write_to(a[PRINT_FILE], text);
  Py_DECREF(text);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

PyObject *tpy_op_str(PyObject *self) {
  print_opts o = {NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0};
  tpy_strbuf b = {0};
  if (!print_into(self, &o, NULL, &b)) {
    PyMem_RawFree(b.data);
    return NULL;
  }
  return tpy_strbuf_finish(&b);
}

tpy_sig tpy_op_write_bytecode_sig =
    TPY_SIG("write_bytecode(file: Any, desired_version: int | None = None) -> None",
            "MLIR bytecode into a binary file.");

PyObject *tpy_op_write_bytecode(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&tpy_op_write_bytecode_sig, args, nargs, kwnames, a, 2)) return NULL;
  int64_t version = -1;
  if (a[1] && a[1] != Py_None && !tpy_arg_int64(a[1], "desired_version", &version)) return NULL;
  TPY_SELF_OP(self, raw);
  /* MLIR's bytecode writer assumes valid, self-contained IR (it crashes numbering a value defined
   * outside, or an attribute of IR that does not verify). */
  int rc = tether_op_check_self_contained(TPY_OP(self)->h);
  if (rc == TETHER_ESTATE)
    return PyErr_Format(
        PyExc_ValueError,
        "cannot write bytecode: the operation uses values or blocks defined outside "
        "it, or IR outside it uses its values");
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, TPY_OP(self)->h);
  PyObject *ctx = tpy_context_of_handle(TPY_OP(self)->h);
  if (!ctx) return NULL;
  tpy_errcap cap;
  tpy_errcap_begin(&cap, (TpContext *)ctx);
  rc = tether_op_verify(TPY_OP(self)->h);
  if (rc == TETHER_EVERIFY) {
    tpy_errcap_raise(&cap, "cannot write bytecode of IR that does not verify");
    Py_DECREF(ctx);
    return NULL;
  }
  tpy_errcap_close(&cap);
  Py_DECREF(ctx);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, TPY_OP(self)->h);
  tpy_strbuf b = {0};
  if (version < 0) {
    mlirOperationWriteBytecode(raw, tpy_strbuf_append, &b);
  } else {
    MlirBytecodeWriterConfig cfg = mlirBytecodeWriterConfigCreate();
    mlirBytecodeWriterConfigDesiredEmitVersion(cfg, version);
    MlirLogicalResult r = mlirOperationWriteBytecodeWithConfig(raw, cfg, tpy_strbuf_append, &b);
    mlirBytecodeWriterConfigDestroy(cfg);
    if (mlirLogicalResultIsFailure(r)) {
      PyMem_RawFree(b.data);
      return PyErr_Format(PyExc_ValueError, "Unable to honor desired bytecode version %lld",
                          (long long)version);
    }
  }
  PyObject *bytes = tpy_strbuf_finish_bytes(&b);
  if (!bytes) return NULL;
  PyObject *r = write_to(a[0], bytes);
  Py_DECREF(bytes);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

/* ---- AsmState -------------------------------------------------------------------------------- */

void tpy_asm_flags_for(void *handle, MlirOpPrintingFlags f) {
  /* MLIR makes an AsmState by verifying its scope first (the generic form when that fails), then
   * asking every operation's OpAsmOpInterface for names, which may crash on operations that do
   * not verify. IR its verifier cannot run on (uses of other IR, a verifier that crashes) is
   * neither verified nor named: the generic form, told it is verified. */
  if (tether_handle_has_foreign_uses(handle)) {
    mlirOpPrintingFlagsAssumeVerified(f);
    mlirOpPrintingFlagsPrintGenericOpForm(f);
  }
}

static tpy_sig asmstate_new_sig =
    TPY_SIG("AsmState(value: Value | _OperationBase, use_local_scope: bool = False)",
            "Printing state for names (value: a Value or an operation).");

static PyObject *asmstate_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *a[2];
  int local = 0;
  if (!tpy_args(&asmstate_new_sig, args, kw, a, 2) || (a[1] && !tpy_arg_bool(a[1], &local)))
    return NULL;
  PyObject *o = a[0];
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  if (local) mlirOpPrintingFlagsUseLocalScope(f);
  MlirAsmState st;
  if (tpy_is(o, tpy.Value)) {
    tether_value *h;
    MlirValue raw;
    if (!tpy_arg_value(o, &h, &raw)) {
      mlirOpPrintingFlagsDestroy(f);
      return NULL;
    }
    /* An argument of a block no operation owns has no printing scope: MLIR would crash. */
    if (mlirValueIsABlockArgument(raw) &&
        mlirOperationIsNull(mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(raw)))) {
      mlirOpPrintingFlagsDestroy(f);
      return PyErr_Format(PyExc_ValueError,
                          "an argument of a block that no operation owns has no AsmState");
    }
    tpy_asm_flags_for(h, f);
    st = mlirAsmStateCreateForValue(raw, f);
  } else {
    tether_op *h;
    MlirOperation raw;
    if (!tpy_arg_op(o, &h, &raw)) {
      mlirOpPrintingFlagsDestroy(f);
      return NULL;
    }
    tpy_asm_flags_for(h, f);
    st = mlirAsmStateCreateForOperation(raw, f);
  }
  mlirOpPrintingFlagsDestroy(f);
  TpAsmState *self = (TpAsmState *)type->tp_alloc(type, 0);
  if (!self) {
    mlirAsmStateDestroy(st);
    return NULL;
  }
  self->state = st;
  self->owner = Py_NewRef(o);
  return (PyObject *)self;
}

static void asmstate_dealloc(TpAsmState *self) {
  if (self->state.ptr) mlirAsmStateDestroy(self->state);
  Py_CLEAR(self->owner);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

static PyType_Slot asmstate_slots[] = {
    {Py_tp_new, asmstate_new},
    {Py_tp_dealloc, asmstate_dealloc},
    {Py_tp_doc, TPY_DOC(asmstate_new_sig)},
    {0, NULL},
};

static PyType_Spec asmstate_spec = {"tether.ir.AsmState", sizeof(TpAsmState), 0, Py_TPFLAGS_DEFAULT,
                                    asmstate_slots};

/* The MlirAsmState of an AsmState object, or NULL with TypeError. */
MlirAsmState *tpy_arg_asm_state(PyObject *o) {
  if (!tpy_is(o, tpy.AsmState)) return tpy_type_error("state", "an AsmState", o), NULL;
  return &((TpAsmState *)o)->state;
}

int tpy_init_printing(PyObject *m) { return tpy_add_type(m, &asmstate_spec, NULL, &tpy.AsmState); }
