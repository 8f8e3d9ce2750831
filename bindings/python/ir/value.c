/* value.c: Value and its classes OpResult and BlockArgument (upstream mlir.ir), and OpOperand, a
 * use of a value (value.uses).
 *
 * Invariants: a value's interned object is an OpResult or a BlockArgument; a Value(v) (and, on
 * MLIR 19, an operand) is a plain Value that is not interned, and values compare by the value
 * whatever their class.
 * Values come out as the class registered for their type (register_value_caster). Every method
 * reaches the value through the arena's guarded access first.
 */
#include "ir.h"

#include <mlir-c/BuiltinAttributes.h>

#include <string.h>

static PyObject *value_cast(PyObject *v);

PyObject *tpy_wrap_value(tether_value *h) {
  if (!h) Py_RETURN_NONE;
  bool res = false;
  tether_value_is_result(h, &res);
  PyObject *v = tpy_wrap_handle(res ? tpy.OpResult : tpy.BlockArgument, h);
  if (v && PyDict_GET_SIZE(tpy.value_casters)) return value_cast(v);
  return v;
}

PyObject *tpy_wrap_result(tether_value *h) {
  if (!h) Py_RETURN_NONE;
  PyObject *v = tpy_wrap_handle(tpy.OpResult, h);
  if (v && PyDict_GET_SIZE(tpy.value_casters)) return value_cast(v);
  return v;
}

/* An operand, as upstream gives it: a plain Value (OpResult(v) / BlockArgument(v) cast it). Not
 * interned: the value's interned wrapper (if any) is an OpResult or BlockArgument; equality and
 * hashing go by the value, as upstream's. */
static PyObject *plain_value(tether_value *h, int cast) {
  if (!h) Py_RETURN_NONE;
  PyObject *v = tpy_handle_new(tpy.Value, h);
  if (v && cast && PyDict_GET_SIZE(tpy.value_casters)) return value_cast(v);
  return v;
}

#if TETHER_MLIR_VERSION >= 22
/* As upstream 22's: an operand is its value's OpResult or BlockArgument, as its caster makes it. */
PyObject *tpy_wrap_operand(tether_value *h) { return tpy_wrap_value(h); }
#else
PyObject *tpy_wrap_operand(tether_value *h) { return plain_value(h, 1); }
#endif

/* The value as the class registered (register_value_caster) for its type's TypeID. Steals v. */
static PyObject *value_cast(PyObject *v) {
  MlirValue raw;
  if (tether_value_get(TPY_H(v), &raw) != TETHER_OK) return v;
  MlirTypeID id = mlirTypeGetTypeID(mlirValueGetType(raw));
  PyObject *caster = tpy_caster_of(tpy.value_casters, id);
  if (!caster) {
    if (PyErr_Occurred()) Py_CLEAR(v);
    return v;
  }
  return tpy_call_caster(caster, v);
}

static tpy_sig value_new_sig =
    TPY_SIG("Value(value: Value)", "An SSA value: an OpResult or a BlockArgument.");
static tpy_sig opresult_new_sig = TPY_SIG("OpResult(value: Value)", "A result of an operation.");
static tpy_sig blockarg_new_sig = TPY_SIG("BlockArgument(value: Value)", "An argument of a block.");

static PyObject *value_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *v;
  if (type == tpy.Value || type == tpy.OpResult || type == tpy.BlockArgument) {
    tpy_sig *sig = type == tpy.Value      ? &value_new_sig
                   : type == tpy.OpResult ? &opresult_new_sig
                                          : &blockarg_new_sig;
    if (!tpy_args(sig, args, kw, &v, 1)) return NULL;
  } else {
    /* A Python subclass: its __init__ takes its own arguments; the value is the first. */
    if (PyTuple_GET_SIZE(args) < 1)
      return PyErr_Format(PyExc_TypeError, "%s() needs the value to wrap", type->tp_name);
    v = PyTuple_GET_ITEM(args, 0);
  }
  tether_value *h;
  MlirValue raw;
  if (!tpy_arg_value(v, &h, &raw)) return NULL;
  if (PyType_IsSubtype(type, tpy.OpResult) && !mlirValueIsAOpResult(raw))
    return PyErr_Format(PyExc_ValueError, "Cannot cast value to OpResult (from %R)", v);
  if (PyType_IsSubtype(type, tpy.BlockArgument) && !mlirValueIsABlockArgument(raw))
    return PyErr_Format(PyExc_ValueError, "Cannot cast value to BlockArgument (from %R)", v);
  if (type == tpy.Value) return plain_value(h, 0); /* Value(v) is a Value, as upstream's */
  if (type == tpy.OpResult || type == tpy.BlockArgument) return tpy_wrap_handle(type, h);
  /* A Python subclass (a value caster's class): a new object over the same handle. */
  return tpy_handle_new(type, h);
}

static PyObject *value_type(PyObject *self, void *c) {
  (void)c;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  return tpy_wrap_type_a(tether_handle_arena(TPY_H(self)), mlirValueGetType(raw));
}

static PyObject *value_owner(PyObject *self, void *c) {
  (void)c;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  if (mlirValueIsAOpResult(raw)) {
    tether_op *o;
    TPY_CALL(tether_value_owner_op(TPY_H(self), &o), TPY_H(self));
#if TETHER_MLIR_VERSION >= 22
    return tpy_wrap_op(o); /* as upstream 22: the operation's OpView */
#else
    return tpy_wrap_operation(o); /* as upstream 19: the Operation, not its OpView */
#endif
  }
  tether_block *b;
  TPY_CALL(tether_value_owner_block(TPY_H(self), &b), TPY_H(self));
  return tpy_wrap_block(b);
}

static PyObject *value_context(PyObject *self, void *c) {
  (void)c;
  TPY_CHECK(tether_value_get, self, MlirValue);
  return tpy_context_of_handle(TPY_H(self));
}

static PyObject *value_index(PyObject *self, void *c) {
  (void)c;
  intptr_t i;
  TPY_CALL(tether_value_index(TPY_H(self), &i), TPY_H(self));
  return PyLong_FromSsize_t(i);
}

static PyObject *value_rauw(PyObject *self, PyObject *with) {
  tether_value *wh;
  MlirValue wraw;
  if (!tpy_arg_value(with, &wh, &wraw)) return NULL;
  TPY_CHECK(tether_value_get, self, MlirValue);
  if (tether_handle_arena(wh) != tether_handle_arena(TPY_H(self)))
    return PyErr_Format(PyExc_ValueError, "objects of different contexts cannot be mixed");
  if (wh == TPY_H(self)) Py_RETURN_NONE; /* replacing a value with itself changes nothing */
  TPY_CALL(tether_value_replace_all_uses(TPY_H(self), wh), TPY_H(self));
  Py_RETURN_NONE;
}

static tpy_sig value_set_type_sig =
    TPY_SIG("set_type(type: Type) -> None", "Changes the value's type in place.");

static PyObject *value_set_type(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  PyObject *type;
  if (!tpy_fastargs(&value_set_type_sig, args, nargs, kwnames, &type, 1)) return NULL;
  MlirType t;
  PyObject *tctx;
  if (!tpy_arg_type(type, &t, &tctx)) return NULL;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  if (((TpContext *)tctx)->arena != tether_handle_arena(TPY_H(self)))
    return PyErr_Format(PyExc_ValueError, "the type belongs to another context");
  tether_handle_mark_suspect(TPY_H(self)); /* verifiers may cast the old type */
  mlirValueSetType(raw, t);
  Py_RETURN_NONE;
}

/* OpOperand: a use of a value (owner: the user OpView, operand_number). */
typedef struct {
  PyObject_HEAD PyObject *owner;
  Py_ssize_t number;
} TpOpOperand;

static PyObject *operand_owner(TpOpOperand *self, void *c) {
  (void)c;
  return Py_NewRef(self->owner);
}

static PyObject *operand_number(TpOpOperand *self, void *c) {
  (void)c;
  return PyLong_FromSsize_t(self->number);
}

static int operand_traverse(TpOpOperand *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->owner);
  return 0;
}

static int operand_clear(TpOpOperand *self) {
  Py_CLEAR(self->owner);
  return 0;
}

static PyGetSetDef operand_getset[] = {
    {"owner", (getter)operand_owner, NULL, TPY_PROP("OpView", "The operation using the value."),
     NULL},
    {"operand_number", (getter)operand_number, NULL,
     TPY_PROP("int", "The operand's number in its owner."), NULL},
    TPY_GETSET_END,
};

static PyType_Slot operand_slots[] = {
    {Py_tp_dealloc, tpy_gc_dealloc},  {Py_tp_traverse, operand_traverse},
    {Py_tp_clear, operand_clear},     {Py_tp_getset, operand_getset},
    {Py_tp_doc, "A use of a value."}, {0, NULL},
};

static PyType_Spec operand_spec = {
    "tether.ir.OpOperand", sizeof(TpOpOperand), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC, operand_slots};

/* value.uses: an iterator of OpOperand. The owners are wrapped first (handles that keep their
 * trees alive), then the Python objects are made: Python code that runs meanwhile cannot make
 * the loop read a freed use. */
static PyObject *value_uses(PyObject *self, void *c) {
  (void)c;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  tether_arena *a = tether_handle_arena(TPY_H(self));
  Py_ssize_t n = 0;
  for (MlirOpOperand u = mlirValueGetFirstUse(raw); !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u))
    n++;
  PyObject *owners = PyList_New(0);
  PyObject *numbers = PyList_New(0);
  if (!owners || !numbers) goto fail;
  for (Py_ssize_t i = 0; i < n; i++) {
    /* Re-read the use list from the start each time: nothing of it is kept across calls. The
     * safe point first destroys what became unreachable, so the wrap below (whose own safe point
     * then has nothing queued) never meets a user that is being freed. */
    tether_safepoint(a);
    int rc = tether_value_get(TPY_H(self), &raw);
    if (rc != TETHER_OK) {
      TPY_RAISE_RC(rc, TPY_H(self));
      goto fail;
    }
    MlirOpOperand u = mlirValueGetFirstUse(raw);
    for (Py_ssize_t k = 0; k < i && !mlirOpOperandIsNull(u); k++) u = mlirOpOperandGetNextUse(u);
    if (mlirOpOperandIsNull(u)) break;
    tether_op *owner;
    rc = tether_op_wrap(a, mlirOpOperandGetOwner(u), &owner);
    if (rc != TETHER_OK) {
      tpy_raise(rc, NULL, a);
      goto fail;
    }
    Py_ssize_t num = (Py_ssize_t)mlirOpOperandGetOperandNumber(u);
    PyObject *o = tpy_wrap_op(owner);
    PyObject *nn = o ? PyLong_FromSsize_t(num) : NULL;
    if (!nn || PyList_Append(owners, o) < 0 || PyList_Append(numbers, nn) < 0) {
      Py_XDECREF(o);
      Py_XDECREF(nn);
      goto fail;
    }
    Py_DECREF(o);
    Py_DECREF(nn);
  }
  PyObject *result = PyList_New(PyList_GET_SIZE(owners));
  for (Py_ssize_t i = 0; result && i < PyList_GET_SIZE(owners); i++) {
    TpOpOperand *u = PyObject_GC_New(TpOpOperand, tpy.OpOperand);
    if (!u) {
      Py_CLEAR(result);
      break;
    }
    u->owner = Py_NewRef(PyList_GET_ITEM(owners, i));
    u->number = PyLong_AsSsize_t(PyList_GET_ITEM(numbers, i));
    PyObject_GC_Track(u);
    PyList_SET_ITEM(result, i, (PyObject *)u);
  }
  Py_DECREF(owners);
  Py_DECREF(numbers);
  if (!result) return NULL;
  PyObject *it = PyObject_GetIter(result);
  Py_DECREF(result);
  return it;
fail:
  Py_XDECREF(owners);
  Py_XDECREF(numbers);
  return NULL;
}

#if TETHER_MLIR_VERSION >= 22
static tpy_sig value_get_name_state_sig = TPY_SIG("get_name(state: AsmState) -> str", NULL);
static tpy_sig value_get_name_sig = TPY_SIG_OR(
    "get_name(use_local_scope: bool = False, use_name_loc_as_prefix: bool = False) -> str",
    "The value's name as an operand (%0).", &value_get_name_state_sig);
#else
static tpy_sig value_get_name_sig =
    TPY_SIG("get_name(use_local_scope: bool = False, state: AsmState | None = None) -> str",
            "The value's name as an operand (%0).");
#endif

/* get_name(use_local_scope=False, state=None) on MLIR 19; on 22 get_name(use_local_scope=False,
 * use_name_loc_as_prefix=False) or get_name(state) (a first argument that is not a bool, or
 * `state=`, is the state). */
static PyObject *value_get_name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  int local = 0, name_loc = 0;
  PyObject *state = Py_None;
#if TETHER_MLIR_VERSION >= 22
  if ((nargs >= 1 && !PyBool_Check(args[0])) || tpy_kwarg(args, nargs, kwnames, "state")) {
    if (!tpy_fastargs(&value_get_name_state_sig, args, nargs, kwnames, &state, 1)) return NULL;
  } else {
    PyObject *a[2];
    if (!tpy_fastargs(&value_get_name_sig, args, nargs, kwnames, a, 2)) return NULL;
    if ((a[0] && !tpy_arg_bool(a[0], &local)) || (a[1] && !tpy_arg_bool(a[1], &name_loc)))
      return NULL;
  }
#else
  PyObject *a[2];
  if (!tpy_fastargs(&value_get_name_sig, args, nargs, kwnames, a, 2)) return NULL;
  if (a[0] && !tpy_arg_bool(a[0], &local)) return NULL;
  if (a[1]) state = a[1];
#endif
  MlirAsmState *given = NULL;
  if (state != Py_None && !(given = tpy_arg_asm_state(state))) return NULL;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  tpy_strbuf b = {0};
  if (given) {
    mlirValuePrintAsOperand(raw, *given, tpy_strbuf_append, &b);
  } else {
    /* An argument of a block no operation owns has no printing scope: MLIR would crash. */
    if (mlirValueIsABlockArgument(raw) &&
        mlirOperationIsNull(mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(raw))))
      return PyErr_Format(PyExc_ValueError,
                          "the value is an argument of a block that no operation owns: it has no "
                          "name yet");
    MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
    if (local) mlirOpPrintingFlagsUseLocalScope(f);
#if TETHER_MLIR_VERSION >= 22
    if (name_loc) mlirOpPrintingFlagsPrintNameLocAsPrefix(f);
#else
    (void)name_loc;
#endif
    tpy_asm_flags_for(TPY_H(self), f);
    MlirAsmState st = mlirAsmStateCreateForValue(raw, f);
    mlirValuePrintAsOperand(raw, st, tpy_strbuf_append, &b);
    mlirAsmStateDestroy(st);
    mlirOpPrintingFlagsDestroy(f);
  }
  tether_keep_alive(TPY_H(self));
  return tpy_strbuf_finish(&b);
}

static PyObject *value_str(PyObject *self) {
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  tpy_strbuf b = {0};
  const char *cls = "Value(";
#if TETHER_MLIR_VERSION >= 22
  /* As upstream 22: results and arguments print as their class. */
  if (tpy_is(self, tpy.OpResult))
    cls = "OpResult(";
  else if (tpy_is(self, tpy.BlockArgument))
    cls = "BlockArgument(";
#endif
  tpy_strbuf_append(mlirStringRefCreateFromCString(cls), &b);
  if (mlirValueIsAOpResult(raw) && tether_handle_has_foreign_uses(TPY_H(self))) {
    /* mlirValuePrint verifies the enclosing IR first, which crashes on IR using values of other
     * IR: print the defining operation unverified, generic form. */
    MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsAssumeVerified(f);
    mlirOpPrintingFlagsPrintGenericOpForm(f);
    mlirOperationPrintWithFlags(mlirOpResultGetOwner(raw), f, tpy_strbuf_append, &b);
    mlirOpPrintingFlagsDestroy(f);
  } else {
    mlirValuePrint(raw, tpy_strbuf_append, &b);
  }
  tpy_strbuf_append(mlirStringRefCreateFromCString(")"), &b);
  return tpy_strbuf_finish(&b);
}

static PyObject *value_dump(PyObject *self, PyObject *unused) {
  (void)unused;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  if (tether_handle_has_foreign_uses(TPY_H(self))) {
    /* mlirValueDump verifies first (see value_str). */
    PyObject *s = value_str(self);
    if (!s) return NULL;
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(s, &n);
    const char *open = text ? memchr(text, '(', (size_t)n) : NULL; /* after "Value(" & co. */
    if (open && n - (open - text) >= 2)
      fprintf(stderr, "%.*s\n", (int)(n - (open - text) - 2), open + 1);
    Py_DECREF(s);
    Py_RETURN_NONE;
  }
  mlirValueDump(raw);
  Py_RETURN_NONE;
}

static PyObject *value_maybe_downcast(PyObject *self, PyObject *unused) {
  (void)unused;
  TPY_CHECK(tether_value_get, self, MlirValue);
  bool res = false;
  tether_value_is_result(TPY_H(self), &res);
  PyObject *v = tpy_wrap_handle(res ? tpy.OpResult : tpy.BlockArgument, TPY_H(self));
  return v ? value_cast(v) : NULL;
}

static PyObject *value_capsule(PyObject *self, void *c) {
  (void)c;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  tether_arena_touch(tether_handle_arena(TPY_H(self)));
  tpy_context_expose(tether_handle_arena(TPY_H(self)));
  return tpy_capsule_with_owner((void *)raw.ptr, "mlir.ir.Value._CAPIPtr", self);
}

static PyObject *value_from_capsule(PyObject *cls, PyObject *cap) {
  (void)cls;
  PyObject *owner = tpy_capsule_owner(cap);
  if (owner && tpy_is(owner, tpy.Value)) return Py_NewRef(owner);
  void *p = tpy_capsule_pointer(cap, "mlir.ir.Value._CAPIPtr");
  if (!p) return NULL;
  MlirValue raw = {p};
  tether_arena *a = tpy_arena_for_capsule(mlirTypeGetContext(mlirValueGetType(raw)));
  if (!a) return NULL;
  tether_value *h;
  if (tether_value_wrap(a, raw, &h) != TETHER_OK)
    return PyErr_Format(PyExc_ValueError,
                        "the capsule's value is not in IR a tether Context holds");
  return tpy_wrap_value(h);
}

static PyObject *value_isinstance(PyObject *cls, PyObject *other) {
  if (!tpy_is(other, tpy.Value)) Py_RETURN_FALSE;
  MlirValue raw;
  if (tether_value_get(TPY_H(other), &raw) != TETHER_OK) Py_RETURN_FALSE;
  if (PyType_IsSubtype((PyTypeObject *)cls, tpy.OpResult))
    return PyBool_FromLong(mlirValueIsAOpResult(raw));
  if (PyType_IsSubtype((PyTypeObject *)cls, tpy.BlockArgument))
    return PyBool_FromLong(mlirValueIsABlockArgument(raw));
  Py_RETURN_TRUE;
}

#if TETHER_MLIR_VERSION >= 22
/* ---- what MLIR 22 adds to Value and BlockArgument -------------------------------------------- */

static PyObject *value_location(PyObject *self, void *c) {
  (void)c;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  return tpy_wrap_loc_a(tether_handle_arena(TPY_H(self)), mlirValueGetLocation(raw));
}

static tpy_sig value_replace_all_uses_except_sig =
    TPY_SIG("replace_all_uses_except(with_: Value, exceptions: _OperationBase | "
            "Sequence[_OperationBase]) -> None",
            "Replaces every use of this value with `with_` except the uses by `exceptions` (an "
            "operation or a list of operations).");

/* replace_all_uses_except(with_, exceptions): every use of this value becomes `with_` except the
 * uses by `exceptions`, an operation or a sequence of operations. */
static PyObject *value_replace_all_uses_except(PyObject *self, PyObject *const *args,
                                               Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a[2];
  if (!tpy_fastargs(&value_replace_all_uses_except_sig, args, nargs, kwnames, a, 2)) return NULL;
  tether_value *with;
  MlirValue wraw;
  if (!tpy_arg_value(a[0], &with, &wraw)) return NULL;
  int one = tpy_is(a[1], tpy.OperationBase);
  PyObject *seq = one ? NULL : tpy_arg_seq(a[1], "exceptions");
  if (!one && !seq) return NULL;
  Py_ssize_t n = one ? 1 : PyList_GET_SIZE(seq);
  tether_op **ex = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *ex);
  PyObject *r = NULL;
  if (!ex) {
    PyErr_NoMemory();
    goto done;
  }
  /* The handles only (no Python code runs from here on): the arena checks each. */
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = one ? a[1] : PyList_GET_ITEM(seq, i);
    MlirOperation oraw;
    if (!tpy_arg_op(o, &ex[i], &oraw)) goto done;
  }
  MlirValue raw;
  int rc = tether_value_get(TPY_H(self), &raw);
  if (rc == TETHER_OK) rc = tether_value_replace_uses_except(TPY_H(self), with, ex, n);
  if (rc == TETHER_EINVALID && tether_handle_is_valid(TPY_H(self)))
    TPY_RAISE_RC(rc, with);
  else if (rc != TETHER_OK)
    TPY_RAISE_RC(rc, TPY_H(self));
  else
    r = Py_NewRef(Py_None);
done:
  PyMem_Free(ex);
  Py_XDECREF(seq);
  return r;
}

static tpy_sig blockarg_set_location_sig =
    TPY_SIG("set_location(loc: Location | None) -> None", "Sets the argument's location.");

static PyObject *blockarg_set_location(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  PyObject *loc;
  if (!tpy_fastargs(&blockarg_set_location_sig, args, nargs, kwnames, &loc, 1)) return NULL;
  MlirLocation l;
  PyObject *lctx;
  if (!tpy_arg_loc(loc, &l, &lctx)) return NULL;
  TPY_SELF(tether_value_get, self, raw, MlirValue);
  if (((TpContext *)lctx)->arena != tether_handle_arena(TPY_H(self)))
    return PyErr_Format(PyExc_ValueError, "the location belongs to another context");
  if (!mlirValueIsABlockArgument(raw))
    return PyErr_Format(PyExc_ValueError, "the value is not a block argument");
  mlirBlockArgumentSetLocation(raw, l);
  Py_RETURN_NONE;
}
#endif

static PyMethodDef value_methods[] = {
    {"replace_all_uses_with", (PyCFunction)value_rauw, METH_O,
     TPY_SIGDOC("replace_all_uses_with(with_: Value, /) -> None",
                "Replaces every use of this value with another one.")},
    {"set_type", TPY_FASTFN(value_set_type), TPY_FAST, TPY_DOC(value_set_type_sig)},
#if TETHER_MLIR_VERSION >= 22
    {"get_name", TPY_FASTFN(value_get_name), TPY_FAST, TPY_DOC(value_get_name_sig)},
    {"replace_all_uses_except", TPY_FASTFN(value_replace_all_uses_except), TPY_FAST,
     TPY_DOC(value_replace_all_uses_except_sig)},
#else
    {"get_name", TPY_FASTFN(value_get_name), TPY_FAST, TPY_DOC(value_get_name_sig)},
#endif
    {"dump", (PyCFunction)value_dump, METH_NOARGS,
     TPY_SIGDOC("dump() -> None", "Prints the value to stderr.")},
    {"maybe_downcast", (PyCFunction)value_maybe_downcast, METH_NOARGS,
     TPY_SIGDOC("maybe_downcast() -> Value", NULL)},
    {"_CAPICreate", (PyCFunction)value_from_capsule, METH_O | METH_STATIC,
     TPY_SIGDOC("_CAPICreate(capsule: object, /) -> Value", NULL)},
    {"isinstance", (PyCFunction)value_isinstance, METH_O | METH_CLASS,
     TPY_SIGDOC("isinstance(other: Value, /) -> bool", NULL)},
#if TETHER_MLIR_VERSION >= 22
    {"__class_getitem__", Py_GenericAlias, METH_O | METH_CLASS,
     TPY_SIGDOC(
         "__class_getitem__(item: Any, /) -> Any",
         "Value[T]: a Value whose type is T (typing only; upstream 22's Value is generic).")},
#endif
    TPY_METHODS_END,
};

static PyGetSetDef value_getset[] = {
    {"type", value_type, NULL, TPY_PROP("Type", NULL), NULL},
    {"owner", value_owner, NULL,
     TPY_PROP("OpView | Block", "The defining operation, or the owning Block."), NULL},
    {"uses", value_uses, NULL,
     TPY_PROP("Iterator[OpOperand]", "The uses of the value: an iterator of OpOperand."), NULL},
    {"context", value_context, NULL, TPY_PROP("Context", NULL), NULL},
#if TETHER_MLIR_VERSION >= 22
    {"location", value_location, NULL, TPY_PROP("Location", "The value's location."), NULL},
#endif
    {"_CAPIPtr", value_capsule, NULL, TPY_PROP("object", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot value_slots[] = {
    {Py_tp_new, value_new},
    {Py_tp_init, tpy_init_noop},
    {Py_tp_dealloc, tpy_handle_dealloc},
    {Py_tp_str, value_str},
    {Py_tp_richcompare, tpy_handle_richcompare},
    {Py_tp_hash, tpy_handle_hash},
    {Py_tp_methods, value_methods},
    {Py_tp_getset, value_getset},
    {Py_tp_doc, TPY_DOC(value_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_value_spec = {"tether.ir.Value", sizeof(TpHandle), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, value_slots};

static PyGetSetDef opresult_getset[] = {
    {"result_number", value_index, NULL, TPY_PROP("int", NULL), NULL},
    TPY_GETSET_END,
};

static PyType_Slot opresult_slots[] = {
    {Py_tp_getset, opresult_getset},
    {Py_tp_doc, TPY_DOC(opresult_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_opresult_spec = {"tether.ir.OpResult", sizeof(TpHandle), 0,
                                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, opresult_slots};

static PyGetSetDef blockarg_getset[] = {
    {"arg_number", value_index, NULL, TPY_PROP("int", NULL), NULL},
    TPY_GETSET_END,
};

#if TETHER_MLIR_VERSION >= 22
static PyMethodDef blockarg_methods[] = {
    {"set_location", TPY_FASTFN(blockarg_set_location), TPY_FAST,
     TPY_DOC(blockarg_set_location_sig)},
    TPY_METHODS_END,
};
#endif

static PyType_Slot blockarg_slots[] = {
#if TETHER_MLIR_VERSION >= 22
    {Py_tp_methods, blockarg_methods},
#endif
    {Py_tp_getset, blockarg_getset},
    {Py_tp_doc, TPY_DOC(blockarg_new_sig)},
    {0, NULL},
};

static PyType_Spec tpy_blockarg_spec = {"tether.ir.BlockArgument", sizeof(TpHandle), 0,
                                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, blockarg_slots};

int tpy_init_value(PyObject *m) {
  if (tpy_add_type(m, &tpy_value_spec, NULL, &tpy.Value) < 0 ||
      tpy_add_type(m, &tpy_opresult_spec, (PyObject *)tpy.Value, &tpy.OpResult) < 0 ||
      tpy_add_type(m, &tpy_blockarg_spec, (PyObject *)tpy.Value, &tpy.BlockArgument) < 0 ||
      tpy_add_type(m, &operand_spec, NULL, &tpy.OpOperand) < 0)
    return -1;
  return 0;
}
