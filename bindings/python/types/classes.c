/* classes.c: the concrete classes of the value families (IntegerType, ArrayAttr, AffineAddExpr,
 * the dialects' types...), made from tables of tpy_class_def at module init, and the casting of a
 * value to the class registered for its TypeID (register_type_caster & co. add casters).
 *
 * Invariants: a concrete class's constructor is a cast: X(v) checks v with the class's isa and
 * copies it (ValueError otherwise). Casters are looked up by (casters dict, TypeID) through a cache
 * that every change to a casters dict invalidates (casters_changed); tether's own classes are
 * made directly, other casters are called with the base-class object.
 */
#include "types.h"

#include <string.h>

/* Bumped by every change to a casters dict: the cache of tpy_caster_of holds entries of its
 * generation only. */
static unsigned long casters_generation = 1;
static void casters_changed(void) { casters_generation++; }

/* ---- concrete classes from tables ------------------------------------------------------------ */

enum { MAX_DEFS = 256 };
static tpy_class_def *all_defs[MAX_DEFS];
static int n_defs;

/* The defs of classes asked about, by the class's address: a hit is checked against the def's own
 * class, so a slot never answers for another class (a subclass, or a class at a freed one's
 * address, is looked up in full). */
enum { DEF_CACHE = 128 };
static tpy_class_def *def_cache[DEF_CACHE];

tpy_class_def *tpy_class_def_of(PyTypeObject *cls) {
  size_t slot = ((uintptr_t)cls >> 4) % DEF_CACHE;
  tpy_class_def *hit = def_cache[slot];
  if (hit && hit->cls == cls) return hit;
  PyObject *mro = cls->tp_mro;
  Py_ssize_t n = mro ? PyTuple_GET_SIZE(mro) : 0;
  for (Py_ssize_t k = 0; k < n; k++) {
    PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, k);
    for (int i = 0; i < n_defs; i++)
      if (all_defs[i]->cls == c) {
        if (k == 0) def_cache[slot] = all_defs[i];
        return all_defs[i];
      }
  }
  return NULL;
}

static const char *family_word(PyTypeObject *family) {
  if (family == tpy.Type) return "type";
  if (family == tpy.Attribute) return "attribute";
  if (family == tpy.AffineExpr) return "affine expression";
  return "value";
}

static PyTypeObject *family_of(PyTypeObject *cls) {
  if (PyType_IsSubtype(cls, tpy.Type)) return tpy.Type;
  if (PyType_IsSubtype(cls, tpy.Attribute)) return tpy.Attribute;
  if (tpy.AffineExpr && PyType_IsSubtype(cls, tpy.AffineExpr)) return tpy.AffineExpr;
  return cls->tp_base;
}

/* X(cast_from): a copy of a value of the family, checked to be an X. */
static PyObject *concrete_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  tpy_class_def *def = tpy_class_def_of(type);
  PyTypeObject *family = family_of(type);
  PyObject *other;
  if ((kw && PyDict_GET_SIZE(kw)) || PyTuple_GET_SIZE(args) != 1) {
    PyErr_Format(PyExc_TypeError, "%s() takes exactly one positional argument (the %s to cast)",
                 def ? def->name : type->tp_name, family_word(family));
    return NULL;
  }
  other = PyTuple_GET_ITEM(args, 0);
  if (!tpy_is(other, family))
    return tpy_type_error("argument",
                          family == tpy.Type        ? "a Type"
                          : family == tpy.Attribute ? "an Attribute"
                                                    : "an AffineExpr",
                          other);
  if (def && def->isa && !def->isa(TPY_PTR(other))) {
    /* As upstream, the value is shown in its base class's form: Attribute(...), Type(...). */
    PyObject *base = tpy_ctxobj_new(family, TPY_CTX(other), TPY_PTR(other));
    PyObject *r = base ? PyObject_Repr(base) : NULL;
    Py_XDECREF(base);
    if (r) {
      PyErr_Format(PyExc_ValueError, "Cannot cast %s to %s (from %U)", family_word(family),
                   def->name, r);
      Py_DECREF(r);
    }
    return NULL;
  }
  return tpy_ctxobj_new(type, TPY_CTX(other), TPY_PTR(other));
}

#if TETHER_MLIR_VERSION < 22
/* X.isinstance(value): whether the value is an X (as a classmethod: works on subclasses). */
static PyObject *concrete_isinstance(PyObject *cls, PyObject *other) {
  tpy_class_def *def = tpy_class_def_of((PyTypeObject *)cls);
  PyTypeObject *family = family_of((PyTypeObject *)cls);
  if (!tpy_is(other, family)) Py_RETURN_FALSE;
  return PyBool_FromLong(!def || !def->isa || def->isa(TPY_PTR(other)));
}
#endif

/* ClassName(printed form), as upstream prints concrete values. */
static PyObject *concrete_repr(PyObject *self) {
  tpy_class_def *def = tpy_class_def_of(Py_TYPE(self));
  PyObject *s = PyObject_Str(self);
  if (!s) return NULL;
  PyObject *r = PyUnicode_FromFormat("%s(%U)", def ? def->name : _PyType_Name(Py_TYPE(self)), s);
  Py_DECREF(s);
  return r;
}

/* The static X.isinstance(value) of upstream 19's concrete classes; upstream 22 removed it
 * (Python's isinstance does: values come out of MLIR as their class). */
#if TETHER_MLIR_VERSION < 22
static PyMethodDef concrete_methods[] = {
    {"isinstance", concrete_isinstance, METH_O | METH_CLASS,
     TPY_SIGDOC("isinstance(other: object, /) -> bool",
                "Whether the value is an instance of this class.")},
    TPY_METHODS_END,
};
#else
static PyMethodDef concrete_methods[] = {TPY_METHODS_END};
#endif

/* The constructor of the concrete classes of each family, X(v) (concrete_new): the class's
 * docstring begins with it, named after the class. */
static tpy_sig type_cast_sig = TPY_SIG("Type(cast_from_type: Type, /)", NULL);
static tpy_sig attr_cast_sig = TPY_SIG("Attribute(cast_from_attr: Attribute, /)", NULL);
static tpy_sig expr_cast_sig = TPY_SIG("AffineExpr(expr: AffineExpr, /)", NULL);

static tpy_sig *cast_sig_of(PyTypeObject *family) {
  return family == tpy.Type         ? &type_cast_sig
         : family == tpy.Attribute  ? &attr_cast_sig
         : family == tpy.AffineExpr ? &expr_cast_sig
                                    : NULL;
}

static PyObject *add_methods(PyObject *cls, PyMethodDef *defs) {
  for (PyMethodDef *d = defs; d && d->ml_name; d++) {
    PyObject *f;
    if (d->ml_flags & METH_CLASS)
      f = PyDescr_NewClassMethod((PyTypeObject *)cls, d);
    else if (d->ml_flags & METH_STATIC) {
      PyObject *cf = PyCFunction_NewEx(d, NULL, NULL);
      f = cf ? PyStaticMethod_New(cf) : NULL;
      Py_XDECREF(cf);
    } else
      f = PyDescr_NewMethod((PyTypeObject *)cls, d);
    if (!f || PyObject_SetAttrString(cls, d->ml_name, f) < 0) {
      Py_XDECREF(f);
      return NULL;
    }
    Py_DECREF(f);
  }
  return cls;
}

int tpy_define_classes(PyObject *m, PyTypeObject *family, tpy_class_def *defs, PyObject *casters) {
  for (tpy_class_def *d = defs; d->name; d++) {
    PyTypeObject *base = family;
    if (d->base) {
      for (tpy_class_def *b = defs; b < d; b++)
        if (!strcmp(b->name, d->base)) base = b->cls;
      if (base == family) {
        PyErr_Format(PyExc_SystemError, "class %s: base %s not defined before it", d->name,
                     d->base);
        return -1;
      }
    }
    PyType_Slot slots[32];
    int k = 0;
    slots[k++] = (PyType_Slot){Py_tp_new, concrete_new};
    slots[k++] = (PyType_Slot){Py_tp_init, tpy_init_noop};
    slots[k++] = (PyType_Slot){Py_tp_repr, concrete_repr};
    slots[k++] = (PyType_Slot){Py_tp_dealloc, tpy_ctxobj_dealloc};
    if (d->getset) slots[k++] = (PyType_Slot){Py_tp_getset, d->getset};
    char name[128];
    snprintf(name, sizeof name, "tether.ir.%s", d->name);
    tpy_sig *cast = cast_sig_of(family);
    char *doc = cast ? tpy_sig_class_doc(cast, name, d->doc) : NULL;
    if (cast && !doc) return -1;
    if (doc || d->doc) slots[k++] = (PyType_Slot){Py_tp_doc, doc ? doc : (void *)d->doc};
    for (PyType_Slot *s = d->slots; s && s->slot && k < 30; s++) slots[k++] = *s;
    slots[k] = (PyType_Slot){0, NULL};
    PyType_Spec spec = {name, (int)sizeof(TpCtxObj), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                        slots};
    PyObject *cls = PyType_FromModuleAndSpec(m, &spec, (PyObject *)base);
    PyMem_Free(doc); /* the class has its copy */
    if (!cls || (cast && tpy_sig_add_ctor((PyTypeObject *)cls, cast) < 0)) {
      Py_XDECREF(cls);
      return -1;
    }
    if (!add_methods(cls, concrete_methods) || !add_methods(cls, d->methods)) {
      Py_DECREF(cls);
      return -1;
    }
    if (d->type_id) {
      PyObject *id = tpy_wrap_typeid(d->type_id());
      int bad = !id || PyObject_SetAttrString(cls, "static_typeid", id) < 0;
      if (!bad && casters) {
        PyObject *key = PyLong_FromVoidPtr((void *)d->type_id().ptr);
        bad = !key || PyDict_SetItem(casters, key, cls) < 0;
        Py_XDECREF(key);
        casters_changed();
      }
      Py_XDECREF(id);
      if (bad) {
        Py_DECREF(cls);
        return -1;
      }
    }
    if (PyModule_AddObjectRef(m, d->name, cls) < 0) {
      Py_DECREF(cls);
      return -1;
    }
    d->cls = (PyTypeObject *)cls; /* the module keeps the class for the process */
    if (n_defs == MAX_DEFS) {
      PyErr_SetString(PyExc_SystemError, "too many concrete classes");
      return -1;
    }
    all_defs[n_defs++] = d;
  }
  return 0;
}

#if TETHER_MLIR_VERSION >= 22
int tpy_set_mlir_names(tpy_class_def *defs, const char *attr, const tpy_mlir_name *names) {
  for (const tpy_mlir_name *n = names; n->cls; n++) {
    tpy_class_def *d = defs;
    while (d->name && strcmp(d->name, n->cls)) d++;
    if (!d->cls) {
      PyErr_Format(PyExc_SystemError, "%s: no class %s", attr, n->cls);
      return -1;
    }
    PyObject *s = tpy_str_from_ref(n->name());
    int rc = s ? PyObject_SetAttrString((PyObject *)d->cls, attr, s) : -1;
    Py_XDECREF(s);
    if (rc < 0) return -1;
  }
  return 0;
}
#endif

/* The value as an object of cls (upstream's `cls(value)`): these classes have no caster. */
PyObject *tpy_cast_to(PyObject *cls, PyObject *o) {
  if (!o || tpy_is(o, (PyTypeObject *)cls)) return o;
  PyObject *r = PyObject_CallOneArg(cls, o);
  Py_DECREF(o);
  return r;
}

/* ---- casting by TypeID ----------------------------------------------------------------------- */

/* The caster registered for a TypeID in one of the casters dicts (borrowed), or NULL (with an
 * error set, or none registered). Remembered in a direct-mapped cache keyed by (dict, TypeID):
 * TypeIDs are stable for the process, and every change to a casters dict bumps the generation
 * (casters_changed). */

enum { CASTER_CACHE = 64 };
static struct {
  PyObject *casters;
  const void *id;
  unsigned long gen;
  PyObject *caster; /* strong, or NULL for "none registered" */
} caster_cache[CASTER_CACHE];

PyObject *tpy_caster_of(PyObject *casters, MlirTypeID id) {
  size_t slot = (((uintptr_t)id.ptr >> 3) ^ ((uintptr_t)casters >> 4)) % CASTER_CACHE;
  if (caster_cache[slot].gen == casters_generation && caster_cache[slot].id == id.ptr &&
      caster_cache[slot].casters == casters)
    return caster_cache[slot].caster;
  PyObject *key = PyLong_FromVoidPtr((void *)id.ptr);
  if (!key) return NULL;
  PyObject *caster = PyDict_GetItemWithError(casters, key);
  Py_DECREF(key);
  if (!caster && PyErr_Occurred()) return NULL;
  /* The entry is rewritten before the old caster is released (its release may run Python code
   * that registers casters: the generation then moves on). */
  PyObject *old = caster_cache[slot].caster;
  caster_cache[slot].casters = casters;
  caster_cache[slot].id = id.ptr;
  caster_cache[slot].gen = casters_generation;
  caster_cache[slot].caster = Py_XNewRef(caster);
  Py_XDECREF(old);
  return caster;
}

/* obj (a new reference of the family's base class) as the class its caster gives. */
static PyObject *cast_with(PyObject *caster, PyObject *obj) {
  if (!caster) return obj;
  if (PyTuple_CheckExact(caster)) {
    /* Several classes share the TypeID (tpy_register_choice): the first whose isa holds. */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(caster); i++) {
      PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(caster, i);
      tpy_class_def *d = tpy_class_def_of(cls);
      if (d && d->isa && d->isa(TPY_PTR(obj))) {
        PyObject *r = tpy_ctxobj_new(cls, TPY_CTX(obj), TPY_PTR(obj));
        Py_DECREF(obj);
        return r;
      }
    }
    return obj;
  }
  if (PyType_Check(caster) && Py_TYPE(obj) != (PyTypeObject *)caster &&
      ((PyTypeObject *)caster)->tp_new == concrete_new) {
    /* One of ours (or a Python subclass of one): no call needed. */
    PyObject *r = tpy_ctxobj_new((PyTypeObject *)caster, TPY_CTX(obj), TPY_PTR(obj));
    Py_DECREF(obj);
    return r;
  }
  return tpy_call_caster(caster, obj);
}

PyObject *tpy_call_caster(PyObject *caster, PyObject *obj) {
  Py_INCREF(caster); /* the call may replace the registration that holds it */
  PyObject *r = PyObject_CallOneArg(caster, obj);
  Py_DECREF(caster);
  Py_DECREF(obj);
  return r;
}

PyObject *tpy_wrap_cast(PyObject *casters, PyTypeObject *base, PyObject *ctx, const void *ptr,
                        MlirTypeID id) {
  PyObject *caster = mlirTypeIDIsNull(id) ? NULL : tpy_caster_of(casters, id);
  if (!caster && PyErr_Occurred()) return NULL;
  /* One of tether's classes: made directly, without the base-class object first. */
  if (caster && PyType_Check(caster) && ((PyTypeObject *)caster)->tp_new == concrete_new)
    return tpy_ctxobj_new((PyTypeObject *)caster, ctx, (void *)ptr);
  PyObject *obj = tpy_ctxobj_new(base, ctx, (void *)ptr);
  return obj ? cast_with(caster, obj) : NULL;
}

static tpy_sig fn_register_caster_sig =
    TPY_SIG("_register_caster(kind: int, typeid: TypeID, caster: Callable[[Any], Any], replace: "
            "bool, /) -> None",
            NULL);

/* _register_caster(kind, typeid, caster, replace): kind 0 types, 1 attributes, 2 values. The
 * decorators (register_type_caster, ...) are in tether/ir.py. */
static PyObject *fn_register_caster(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  PyObject *a[4];
  int kind, replace;
  if (!tpy_fastargs(&fn_register_caster_sig, args, nargs, NULL, a, 4) ||
      !tpy_arg_int(a[0], "kind", &kind) || !tpy_arg_bool(a[3], &replace))
    return NULL;
  PyObject *id = a[1], *caster = a[2];
  PyObject *casters = kind == 0   ? tpy.type_casters
                      : kind == 1 ? tpy.attr_casters
                                  : tpy.value_casters;
  const char *what = kind == 0 ? "Type" : kind == 1 ? "Attribute" : "Value";
  if (!tpy_is(id, tpy.TypeID)) return tpy_type_error("typeid", "a TypeID", id);
  if (!PyCallable_Check(caster)) return tpy_type_error("caster", "callable", caster);
  PyObject *key = PyLong_FromVoidPtr(TPY_PTR(id));
  if (!key) return NULL;
  /* Upstream keeps one map for types and attributes (an extension's mlir_attribute_subclass
   * registers its attribute class with register_type_caster): kind 0 serves both. A TypeID is of
   * a type or of an attribute, never both, so the two dicts cannot disagree. */
  PyObject *old = PyDict_GetItemWithError(casters, key);
  if (!old && !PyErr_Occurred() && kind == 0) old = PyDict_GetItemWithError(tpy.attr_casters, key);
  if (!old && PyErr_Occurred()) {
    Py_DECREF(key);
    return NULL;
  }
  if (old && !replace) {
    Py_DECREF(key);
    PyObject *r = PyObject_Repr(old);
    if (r) {
      /* Upstream's words differ by family. */
      if (!strcmp(what, "Value"))
        PyErr_Format(PyExc_RuntimeError, "Value caster is already registered: %U", r);
      else
        PyErr_Format(PyExc_RuntimeError, "%s caster is already registered with caster: %U", what,
                     r);
      Py_DECREF(r);
    }
    return NULL;
  }
  int rc = PyDict_SetItem(casters, key, caster);
  if (rc == 0 && kind == 0) rc = PyDict_SetItem(tpy.attr_casters, key, caster);
  Py_DECREF(key);
  casters_changed();
  if (rc < 0) return NULL;
  return Py_NewRef(caster);
}

int tpy_register_choice(PyObject *casters, MlirTypeID id, PyObject *classes) {
  PyObject *key = PyLong_FromVoidPtr((void *)id.ptr);
  if (!key) return -1;
  int rc = PyDict_SetItem(casters, key, classes);
  Py_DECREF(key);
  casters_changed();
  return rc;
}

int tpy_init_noop(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self;
  (void)args;
  (void)kw;
  return 0;
}

/* _plain_class_getattr(metaclass): reads of attributes of metaclass's classes as any class's
 * (type's own tp_getattro). For tether/ir.py's enum metaclass: CPython 3.11's EnumType defines
 * __getattr__, so every `WalkResult.ADVANCE` went through the slow __getattr__ hook (a bound
 * __getattribute__ made and called per read), though every member is in its class's dict (the
 * metaclass checks). Refused for anything but a subclass of type defined in Python. */
static PyObject *fn_plain_class_getattr(PyObject *m, PyObject *meta) {
  (void)m;
  if (!PyType_Check(meta) || !PyType_IsSubtype((PyTypeObject *)meta, &PyType_Type) ||
      !(((PyTypeObject *)meta)->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return tpy_type_error("metaclass", "a metaclass defined in Python", meta);
  ((PyTypeObject *)meta)->tp_getattro = PyType_Type.tp_getattro;
  Py_RETURN_NONE;
}

static PyMethodDef class_functions[] = {
    {"_plain_class_getattr", fn_plain_class_getattr, METH_O,
     TPY_SIGDOC("_plain_class_getattr(metaclass: type, /) -> None", NULL)},
    {"_register_caster", TPY_FASTFN(fn_register_caster), METH_FASTCALL,
     TPY_DOC(fn_register_caster_sig)},
    {"_capsule_prefix", TPY_FASTFN(tpy_fn_capsule_prefix), METH_FASTCALL,
     TPY_SIGDOC("_capsule_prefix(prefix: str | None = None, /) -> str", NULL)},
    TPY_METHODS_END,
};

int tpy_init_classes(PyObject *m) {
  tpy.type_casters = PyDict_New();
  tpy.attr_casters = PyDict_New();
  tpy.value_casters = PyDict_New();
  if (!tpy.type_casters || !tpy.attr_casters || !tpy.value_casters) return -1;
  return PyModule_AddFunctions(m, class_functions);
}
