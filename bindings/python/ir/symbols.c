/* symbols.c: SymbolTable (upstream mlir.ir.SymbolTable) and _GlobalDebug's C side.
 *
 * Invariant: a SymbolTable object keeps no MLIR symbol table across calls. MLIR's table caches
 * operation pointers, which an erase elsewhere (or a pass) would leave dangling; each call builds
 * the table of the operation anew (O(symbols)), so a lookup can only see live operations. Symbols
 * are erased and moved through the arena, so their objects are invalidated as for any erase.
 */
#include "ir.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Debug.h>
#include <string.h>

typedef struct {
  PyObject_HEAD PyObject *op; /* the Operation that is the symbol table */
} TpSymbolTable;

/* A fresh MLIR symbol table of self's operation (destroy it before returning to Python). */
/* MLIR's SymbolTable reads the first block of the operation's one region (its constructor only
 * asserts there is one): an operation whose body was moved away (Block.append_to) crashed it.
 * 1, or 0 with ValueError. */
static int one_block(MlirOperation raw) {
  if (mlirOperationGetNumRegions(raw) != 1) return 1; /* not a symbol table: MLIR says so */
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(raw, 0));
  if (!mlirBlockIsNull(b) && mlirBlockIsNull(mlirBlockGetNextInRegion(b))) return 1;
  PyErr_SetString(PyExc_ValueError,
                  "a symbol table operation needs exactly one block in its region");
  return 0;
}

static int table_of(TpSymbolTable *self, tether_op **h, MlirSymbolTable *out) {
  MlirOperation raw;
  if (!tpy_arg_op(self->op, h, &raw) || !one_block(raw)) return 0;
  *out = mlirSymbolTableCreate(raw);
  if (mlirSymbolTableIsNull(*out)) {
    PyErr_SetString(tpy.CastError, "Operation is not a Symbol Table.");
    return 0;
  }
  return 1;
}

static tpy_sig symtab_new_sig = TPY_SIG("SymbolTable(symbol_table: _OperationBase)",
                                        "The symbols of an operation with the SymbolTable trait.");

static PyObject *symtab_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *op;
  if (!tpy_args(&symtab_new_sig, args, kw, &op, 1)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(op, &h, &raw) || !one_block(raw)) return NULL;
  MlirSymbolTable t = mlirSymbolTableCreate(raw);
  if (mlirSymbolTableIsNull(t))
    return PyErr_Format(tpy.CastError,
                        "Operation is not a Symbol Table."); /* upstream's cast_error */
  mlirSymbolTableDestroy(t);
  TpSymbolTable *self = (TpSymbolTable *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->op = tpy_wrap_operation(h);
  if (!self->op) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static int symtab_traverse(TpSymbolTable *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->op);
  return 0;
}

static int symtab_clear(TpSymbolTable *self) {
  Py_CLEAR(self->op);
  return 0;
}

/* The symbol named `name`, or NULL (no exception) when there is none. */
static int lookup(TpSymbolTable *self, PyObject *name, tether_op **found) {
  MlirStringRef s;
  if (!tpy_arg_str(name, "name", &s)) return 0;
  tether_op *h;
  MlirSymbolTable t;
  if (!table_of(self, &h, &t)) return 0;
  MlirOperation op = mlirSymbolTableLookup(t, s);
  mlirSymbolTableDestroy(t);
  *found = NULL;
  if (mlirOperationIsNull(op)) return 1;
  int rc = tether_op_wrap(tether_handle_arena(h), op, found);
  if (rc != TETHER_OK) return tpy_raise(rc, NULL, tether_handle_arena(h)), 0;
  return 1;
}

static PyObject *symtab_getitem(TpSymbolTable *self, PyObject *name) {
  tether_op *found;
  if (!lookup(self, name, &found)) return NULL;
  if (!found) return PyErr_Format(PyExc_KeyError, "Symbol '%S' not in the symbol table.", name);
  return tpy_wrap_op(found);
}

static int symtab_contains(TpSymbolTable *self, PyObject *name) {
  tether_op *found;
  if (!lookup(self, name, &found)) return -1;
  return found != NULL;
}

static int erase_symbol(TpSymbolTable *self, tether_op *sym) {
  tether_op *parent;
  int rc = tether_op_parent(sym, &parent);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, sym), -1;
  MlirOperation raw;
  tether_op *th;
  if (!tpy_arg_op(self->op, &th, &raw)) return -1;
  if (parent != th) {
    PyErr_SetString(PyExc_KeyError, "the operation is not a symbol of this symbol table");
    return -1;
  }
  rc = tether_op_erase(sym);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, sym), -1;
  return 0;
}

static int symtab_ass(TpSymbolTable *self, PyObject *name, PyObject *v) {
  if (v) {
    PyErr_SetString(PyExc_TypeError, "use SymbolTable.insert(op) to add a symbol");
    return -1;
  }
  tether_op *found;
  if (!lookup(self, name, &found)) return -1;
  if (!found) {
    PyErr_Format(PyExc_KeyError, "Symbol '%S' not in the symbol table.", name);
    return -1;
  }
  return erase_symbol(self, found);
}

static PyObject *symtab_erase(TpSymbolTable *self, PyObject *op) {
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(op, &h, &raw)) return NULL;
  if (erase_symbol(self, h) < 0) return NULL;
  Py_RETURN_NONE;
}

static MlirAttribute symbol_name_attr(MlirOperation op) {
  return mlirOperationGetAttributeByName(op, mlirSymbolTableGetSymbolAttributeName());
}

static PyObject *symtab_insert(TpSymbolTable *self, PyObject *op) {
  tether_op *h, *th;
  MlirOperation raw, traw;
  if (!tpy_arg_op(op, &h, &raw) || !tpy_arg_op(self->op, &th, &traw)) return NULL;
  MlirAttribute name = symbol_name_attr(raw);
  if (mlirAttributeIsNull(name) || !mlirAttributeIsAString(name))
    return PyErr_Format(PyExc_ValueError, "Expected operation to have a symbol name.");
  if (tether_handle_arena(h) != tether_handle_arena(th))
    return PyErr_Format(PyExc_ValueError, "objects of different contexts cannot be mixed");
  tether_op *parent;
  int rc = tether_op_parent(h, &parent);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h);
  if (parent != th) {
    /* Move it into the table's body first, through the arena (ownership moves with it). */
    tether_region *r;
    tether_block *body;
    rc = tether_op_region(th, 0, &r);
    if (rc == TETHER_OK) rc = tether_region_first_block(r, &body);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, th);
    if (!body) return PyErr_Format(PyExc_ValueError, "the symbol table has no body block");
    tether_op *term;
    rc = tether_block_terminator(body, &term);
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, body);
    bool root;
    rc = tether_op_is_root(h, &root);
    if (rc == TETHER_OK && !root) rc = tether_op_detach(h);
    if (rc == TETHER_OK)
      rc = term ? tether_op_move_before(h, term) : tether_block_append_op(body, h);
    if (rc == TETHER_EARG)
      return PyErr_Format(PyExc_ValueError, "cannot insert a symbol table into itself");
    if (rc != TETHER_OK) return TPY_RAISE_RC(rc, h);
  }
  MlirSymbolTable t;
  if (!table_of(self, &th, &t)) return NULL;
  if (tether_op_get(h, &raw) != TETHER_OK) {
    mlirSymbolTableDestroy(t);
    return TPY_RAISE_RC(TETHER_EINVALID, h);
  }
  tether_arena_touch(tether_handle_arena(h));
  MlirAttribute inserted = mlirSymbolTableInsert(t, raw);
  mlirSymbolTableDestroy(t);
  return tpy_wrap_attr_a(tether_handle_arena(h), inserted);
}

static PyObject *symtab_get_symbol_name(PyObject *cls, PyObject *op) {
  (void)cls;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(op, &h, &raw)) return NULL;
  MlirAttribute a = symbol_name_attr(raw);
  if (mlirAttributeIsNull(a))
    return PyErr_Format(PyExc_ValueError, "Expected operation to have a symbol name.");
  return tpy_wrap_attr_a(tether_handle_arena(h), a);
}

static tpy_sig symtab_set_symbol_name_sig =
    TPY_SIG("set_symbol_name(symbol: _OperationBase, name: str) -> None",
            "Sets the symbol's name (a str or StringAttr).");

static PyObject *symtab_set_symbol_name(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&symtab_set_symbol_name_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *op = a[0], *name = a[1];
  MlirStringRef s;
  if (!tpy_arg_str(name, "name", &s)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(op, &h, &raw)) return NULL;
  if (mlirAttributeIsNull(symbol_name_attr(raw)))
    return PyErr_Format(PyExc_ValueError, "Expected operation to have a symbol name.");
  MlirContext c = mlirOperationGetContext(raw);
  tether_arena_touch(tether_handle_arena(h));
  mlirOperationSetAttributeByName(raw, mlirSymbolTableGetSymbolAttributeName(),
                                  mlirStringAttrGet(c, s));
  Py_RETURN_NONE;
}

static PyObject *symtab_get_visibility(PyObject *cls, PyObject *op) {
  (void)cls;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(op, &h, &raw)) return NULL;
  MlirAttribute a =
      mlirOperationGetAttributeByName(raw, mlirSymbolTableGetVisibilityAttributeName());
  if (mlirAttributeIsNull(a))
    return PyErr_Format(PyExc_ValueError, "Expected operation to have a symbol visibility.");
  return tpy_wrap_attr_a(tether_handle_arena(h), a);
}

static tpy_sig symtab_set_visibility_sig =
    TPY_SIG("set_visibility(symbol: _OperationBase, visibility: str) -> None",
            "Sets the symbol's visibility (a str: public, private or nested).");

static PyObject *symtab_set_visibility(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  (void)cls;
  PyObject *a[2];
  if (!tpy_fastargs(&symtab_set_visibility_sig, args, nargs, kwnames, a, 2)) return NULL;
  PyObject *op = a[0], *vis = a[1];
  MlirStringRef s;
  if (!tpy_arg_str(vis, "visibility", &s)) return NULL;
  if (!(s.length == 6 && !memcmp(s.data, "public", 6)) &&
      !(s.length == 7 && !memcmp(s.data, "private", 7)) &&
      !(s.length == 6 && !memcmp(s.data, "nested", 6)))
    return PyErr_Format(PyExc_ValueError,
                        "Expected visibility to be 'public', 'private', or 'nested'");
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(op, &h, &raw)) return NULL;
  MlirStringRef vname = mlirSymbolTableGetVisibilityAttributeName();
  if (mlirAttributeIsNull(mlirOperationGetAttributeByName(raw, vname)))
    return PyErr_Format(PyExc_ValueError, "Expected operation to have a symbol visibility.");
  tether_arena_touch(tether_handle_arena(h));
  mlirOperationSetAttributeByName(raw, vname, mlirStringAttrGet(mlirOperationGetContext(raw), s));
  Py_RETURN_NONE;
}

static tpy_sig symtab_replace_uses_sig = TPY_SIG(
    "replace_all_symbol_uses(old_symbol: str, new_symbol: str, from_op: _OperationBase) -> None",
    "Renames every use of old_symbol to new_symbol in from_op's regions.");

static PyObject *symtab_replace_uses(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  if (!tpy_fastargs(&symtab_replace_uses_sig, args, nargs, kwnames, a, 3)) return NULL;
  PyObject *o = a[0], *n = a[1], *from = a[2];
  MlirStringRef os, ns;
  if (!tpy_arg_str(o, "old_symbol", &os) || !tpy_arg_str(n, "new_symbol", &ns)) return NULL;
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(from, &h, &raw)) return NULL;
  tether_arena_touch(tether_handle_arena(h));
  if (mlirLogicalResultIsFailure(mlirSymbolTableReplaceAllSymbolUses(os, ns, raw)))
    return PyErr_Format(PyExc_ValueError, "Symbol rename failed");
  Py_RETURN_NONE;
}

/* walk_symbol_tables(from_op, all_sym_uses_visible, callback): the tables are collected first
 * (as handles), then the callback runs for each one still valid: Python code never runs inside
 * MLIR's walk. */
typedef struct {
  tether_arena *a;
  tether_op **ops;
  intptr_t *pins;
  bool *visible;
  Py_ssize_t n, cap;
  int failed;
} walk_tables;

/* Runs inside MLIR's walk: no Python object is made here (Python code could run and change the IR
 * being walked); the tables are kept as pinned handles. */
static void walk_tables_cb(MlirOperation op, bool visible, void *user) {
  walk_tables *w = user;
  if (w->failed) return;
  if (w->n == w->cap) {
    Py_ssize_t ncap = w->cap ? w->cap * 2 : 16;
    tether_op **o = PyMem_RawRealloc(w->ops, (size_t)ncap * sizeof *o);
    if (o) w->ops = o;
    intptr_t *p = o ? PyMem_RawRealloc(w->pins, (size_t)ncap * sizeof *p) : NULL;
    if (p) w->pins = p;
    bool *v = p ? PyMem_RawRealloc(w->visible, (size_t)ncap * sizeof *v) : NULL;
    if (v) w->visible = v;
    if (!o || !p || !v) {
      w->failed = 1;
      return;
    }
    w->cap = ncap;
  }
  tether_op *h;
  if (tether_op_wrap(w->a, op, &h) != TETHER_OK) {
    w->failed = 1;
    return;
  }
  intptr_t pin = tpy_pin(h);
  if (pin < 0) {
    w->failed = 1;
    return;
  }
  w->ops[w->n] = h;
  w->pins[w->n] = pin;
  w->visible[w->n] = visible;
  w->n++;
}

static tpy_sig symtab_walk_sig = TPY_SIG(
    "walk_symbol_tables(from_op: _OperationBase, all_sym_uses_visible: bool, callback: "
    "Callable[[Operation, bool], None]) -> None",
    "Calls callback(op, all_sym_uses_visible) for every symbol table operation from from_op down.");

static PyObject *symtab_walk(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  (void)cls;
  PyObject *a[3];
  int visible;
  if (!tpy_fastargs(&symtab_walk_sig, args, nargs, kwnames, a, 3) || !tpy_arg_bool(a[1], &visible))
    return NULL;
  PyObject *from = a[0], *cb = a[2];
  if (!PyCallable_Check(cb)) return tpy_type_error("callback", "callable", cb);
  tether_op *h;
  MlirOperation raw;
  if (!tpy_arg_op(from, &h, &raw)) return NULL;
  walk_tables w = {tether_handle_arena(h), NULL, NULL, NULL, 0, 0, 0};
  mlirSymbolTableWalkSymbolTables(raw, visible, walk_tables_cb, &w);
  PyObject *result = NULL;
  if (w.failed) {
    PyErr_SetString(PyExc_MemoryError, "walking the symbol tables failed");
    goto done;
  }
  for (Py_ssize_t i = 0; i < w.n; i++) {
    /* Erased by an earlier callback: InvalidatedError, as any use of an erased operation. */
    PyObject *op = tpy_wrap_operation(w.ops[i]);
    MlirOperation oraw;
    tether_op *oh;
    if (!op || !tpy_arg_op(op, &oh, &oraw)) {
      Py_XDECREF(op);
      goto done;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(cb, op, w.visible[i] ? Py_True : Py_False, NULL);
    Py_DECREF(op);
    if (!r) {
      tpy_raise_callback_error();
      goto done;
    }
    Py_DECREF(r);
  }
  result = Py_NewRef(Py_None);
done:
  for (Py_ssize_t i = 0; i < w.n; i++) tpy_unpin(w.pins[i]);
  PyMem_RawFree(w.ops);
  PyMem_RawFree(w.pins);
  PyMem_RawFree(w.visible);
  return result;
}

#define KW(f) TPY_FASTFN(f), TPY_FAST | METH_STATIC

static PyMethodDef symtab_methods[] = {
    {"insert", (PyCFunction)symtab_insert, METH_O,
     TPY_SIGDOC("insert(operation: _OperationBase, /) -> StringAttr",
                "Inserts a symbol operation (moving it into the table), renaming it if its name is "
                "taken; returns its name (StringAttr).")},
    {"erase", (PyCFunction)symtab_erase, METH_O,
     TPY_SIGDOC("erase(operation: _OperationBase, /) -> None",
                "Erases a symbol operation of the table.")},
    {"get_symbol_name", (PyCFunction)symtab_get_symbol_name, METH_O | METH_STATIC,
     TPY_SIGDOC("get_symbol_name(symbol: _OperationBase, /) -> StringAttr",
                "The symbol's name (StringAttr).")},
    {"set_symbol_name", KW(symtab_set_symbol_name), TPY_DOC(symtab_set_symbol_name_sig)},
    {"get_visibility", (PyCFunction)symtab_get_visibility, METH_O | METH_STATIC,
     TPY_SIGDOC("get_visibility(symbol: _OperationBase, /) -> StringAttr",
                "The symbol's visibility (StringAttr).")},
    {"set_visibility", KW(symtab_set_visibility), TPY_DOC(symtab_set_visibility_sig)},
    {"replace_all_symbol_uses", KW(symtab_replace_uses), TPY_DOC(symtab_replace_uses_sig)},
    {"walk_symbol_tables", KW(symtab_walk), TPY_DOC(symtab_walk_sig)},
    TPY_METHODS_END,
};

static PyType_Slot symtab_slots[] = {
    {Py_tp_new, symtab_new},
    {Py_tp_dealloc, tpy_gc_dealloc},
    {Py_tp_traverse, symtab_traverse},
    {Py_tp_clear, symtab_clear},
    {Py_mp_subscript, symtab_getitem},
    {Py_mp_ass_subscript, symtab_ass},
    {Py_sq_contains, symtab_contains},
    {Py_tp_methods, symtab_methods},
    {Py_tp_doc, TPY_DOC(symtab_new_sig)},
    {0, NULL},
};

static PyType_Spec symtab_spec = {"tether.ir.SymbolTable", sizeof(TpSymbolTable), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, symtab_slots};

/* ---- _GlobalDebug ---------------------------------------------------------------------------- */

static tpy_sig fn_debug_flag_sig =
    TPY_SIG("_debug_flag(enabled: bool | None = None, /) -> bool", NULL);

static PyObject *fn_debug_flag(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  PyObject *v;
  if (!tpy_fastargs(&fn_debug_flag_sig, args, nargs, NULL, &v, 1)) return NULL;
  if (v && v != Py_None) {
    int on = PyObject_IsTrue(v);
    if (on < 0) return NULL;
    mlirEnableGlobalDebug(on);
  }
  return PyBool_FromLong(mlirIsGlobalDebugEnabled());
}

static PyObject *fn_debug_set_types(PyObject *m, PyObject *types) {
  (void)m;
  if (PyUnicode_Check(types)) {
    const char *s = PyUnicode_AsUTF8(types);
    if (!s) return NULL;
    mlirSetGlobalDebugType(s);
    Py_RETURN_NONE;
  }
  PyObject *f = tpy_seq_fast(types, "types must be a str or a sequence of str");
  if (!f) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  const char **v = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) {
    Py_DECREF(f);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *s = PySequence_Fast_GET_ITEM(f, i);
    v[i] = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
    if (!v[i]) {
      if (!PyErr_Occurred()) tpy_type_error("debug type", "a str", s);
      PyMem_Free(v);
      Py_DECREF(f);
      return NULL;
    }
  }
  mlirSetGlobalDebugTypes(v, n);
  PyMem_Free(v);
  Py_DECREF(f);
  Py_RETURN_NONE;
}

static PyMethodDef symbol_functions[] = {
    {"_debug_flag", TPY_FASTFN(fn_debug_flag), METH_FASTCALL, TPY_DOC(fn_debug_flag_sig)},
    {"_debug_set_types", fn_debug_set_types, METH_O,
     TPY_SIGDOC("_debug_set_types(types: str | Sequence[str], /) -> None", NULL)},
    TPY_METHODS_END,
};

int tpy_init_symbols(PyObject *m) {
  if (tpy_add_type(m, &symtab_spec, NULL, &tpy.SymbolTable) < 0) return -1;
  return PyModule_AddFunctions(m, symbol_functions);
}
