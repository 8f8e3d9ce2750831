/* ods_builder.c: the builders of ODS-generated op classes, run in C (issue 37).
 *
 * mlir-tblgen generates each op class's `__init__` as a page of Python: collect the operands,
 * convert the attributes, derive or collect the result types, then call OpView.__init__. At build
 * time gen/ods_builders.py replaces each such function by `_ods_cext.ods_builder(PARAMS, NPOS,
 * ACTIONS)`, a spec of what its statements did (that script lists the actions). An OdsBuilder is
 * that spec, run here: the same parameters (NPOS positional, the rest keyword-only, default None),
 * the same actions in the same order, the same OpView.__init__ at the end (create.c's build), so
 * the same operation or the same exception as the generated Python.
 *
 * An OdsBuilder is a method descriptor in its class's dict: `super().__init__(...)` from a subclass
 * (upstream's extras, tether's dialect modules, a user's class) calls it with the instance first,
 * as it called the function. A class whose `__init__` is an OdsBuilder and whose `__new__` is
 * OpView's is called through class_vectorcall (set by OpView.__init_subclass__): the instance is
 * made and built without a Python frame, an argument tuple or a keyword dict.
 *
 * Invariants: a builder's spec never changes after it is made; the class metadata it reads
 * (OPERATION_NAME, _ODS_REGIONS, _ODS_OPERAND_SEGMENTS, _ODS_RESULT_SEGMENTS, as `self.X` in the
 * generated code) is cached per builder for one class while the class's version tag (which any
 * change to the class or a base replaces) stays the same. class_vectorcall checks at every call
 * that the class's `__init__` is still a builder and its `__new__` OpView's, and calls the class as
 * `type` would otherwise.
 */
#include "ir.h"

#include <mlir-c/BuiltinAttributes.h>
#include <string.h>
#include <structmember.h>

#if TETHER_MLIR_VERSION >=                                                                         \
    22 /* MLIR 19's generated builders call build_generic: they stay Python */

/* ---- the spec -------------------------------------------------------------------------------- */

enum {
  ACT_OPERAND,       /* operands.append(p) */
  ACT_OPERAND_OPT,   /* if p is not None: operands.append(p) */
  ACT_OPERANDS,      /* operands.extend(_get_op_results_or_values(p)) */
  ACT_OPERAND_GROUP, /* operands.append(_get_op_results_or_values(p)) */
  ACT_CONTEXT,       /* _ods_context = _ods_get_default_loc_context(loc) */
  ACT_ATTR,          /* attributes[name] = p, converted by AttrBuilder kind when not an Attribute */
  ACT_ATTR_OPT,      /* the same if p is not None */
  ACT_UNIT,          /* if bool(p): attributes[name] = UnitAttr.get(context) */
  ACT_SAME_TYPE,     /* if results is None: results = [operands[0].type] * n */
  ACT_ATTR_TYPE,     /* if results is None: results = [type of attributes[name]] * n */
  ACT_RESULTS,       /* results = [] */
  ACT_RESULT,        /* results.append(p) */
  ACT_RESULT_OPT,    /* if p is not None: results.append(p) */
  ACT_RESULT_LIST,   /* results.extend(p) */
  ACT_SUCCESSORS,    /* _ods_successors = [] */
  ACT_SUCCESSOR,     /* _ods_successors.append(p) */
  ACT_SUCCESSOR_LIST, /* _ods_successors.extend(p) */
  ACT_REGIONS,        /* regions = n + p */
  ACT_KINDS
};

/* By action: its name in the spec, and what follows the name (p: a parameter index, s: a str,
 * n: an int). */
static const struct {
  const char *name, *args;
} act_defs[ACT_KINDS] = {
    [ACT_OPERAND] = {"operand", "p"},
    [ACT_OPERAND_OPT] = {"operand?", "p"},
    [ACT_OPERANDS] = {"operands", "p"},
    [ACT_OPERAND_GROUP] = {"operand_group", "p"},
    [ACT_CONTEXT] = {"context", ""},
    [ACT_ATTR] = {"attr", "pss"},
    [ACT_ATTR_OPT] = {"attr?", "pss"},
    [ACT_UNIT] = {"unit", "ps"},
    [ACT_SAME_TYPE] = {"same_type", "n"},
    [ACT_ATTR_TYPE] = {"attr_type", "sn"},
    [ACT_RESULTS] = {"results", ""},
    [ACT_RESULT] = {"result", "p"},
    [ACT_RESULT_OPT] = {"result?", "p"},
    [ACT_RESULT_LIST] = {"result_list", "p"},
    [ACT_SUCCESSORS] = {"successors", ""},
    [ACT_SUCCESSOR] = {"successor", "p"},
    [ACT_SUCCESSOR_LIST] = {"successor_list", "p"},
    [ACT_REGIONS] = {"regions", "pn"},
};

typedef struct {
  int kind;
  int param;           /* the parameter's index, or -1 */
  Py_ssize_t n;        /* same_type, attr_type: how many results; regions: the fixed regions */
  PyObject *name;      /* attr, attr?, unit, attr_type: the attribute's name (interned) */
  PyObject *kind_name; /* attr, attr?: the attribute's ODS kind (AttrBuilder's key) */
} ods_action;

enum { KW_CACHE = 4, SMALL_PARAMS = 24 };

typedef struct {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject *spec;  /* (names, npos, actions) as given */
  PyObject *names; /* the parameters' names (interned strs), positional ones first */
  int nparams, npos;
  int p_loc, p_ip, p_results; /* the parameters loc, ip, results: indices, or -1 */
  ods_action *acts;
  int nacts;
  PyObject *qualname; /* "Class.__init__" once in a class (__set_name__), for messages */
  /* Keyword-name tuples of call sites (a code object's constant: the same tuple every call) and
   * the parameter each of their names is. */
  struct {
    PyObject *kwnames;
    signed char *map;
  } kw[KW_CACHE];
  int kw_next;
  /* The class metadata, for the class it was last read from while its version tag is tag. */
  PyTypeObject *cls;
  unsigned int tag;
  PyObject *opname, *rspec, *oseg, *rseg;
  /* Read from them: no segments (the fast path's), the region spec (_ODS_REGIONS). */
  int fast, no_variadic;
  intptr_t min_regions;
} TpOdsBuilder;

static PyObject *s_init, *s_type, *s_value, *s_context; /* interned names */
static PyObject *s_opname, *s_regions, *s_oseg, *s_rseg;

static void builder_clear_meta(TpOdsBuilder *b) {
  b->cls = NULL;
  Py_CLEAR(b->opname);
  Py_CLEAR(b->rspec);
  Py_CLEAR(b->oseg);
  Py_CLEAR(b->rseg);
}

static void builder_dealloc(TpOdsBuilder *b) {
  PyObject_GC_UnTrack(b);
  Py_CLEAR(b->spec);
  Py_CLEAR(b->names);
  Py_CLEAR(b->qualname);
  for (int i = 0; i < b->nacts; i++) {
    Py_CLEAR(b->acts[i].name);
    Py_CLEAR(b->acts[i].kind_name);
  }
  PyMem_Free(b->acts);
  for (int i = 0; i < KW_CACHE; i++) {
    Py_CLEAR(b->kw[i].kwnames);
    PyMem_Free(b->kw[i].map);
  }
  builder_clear_meta(b);
  PyTypeObject *t = Py_TYPE(b);
  t->tp_free(b);
  Py_DECREF(t);
}

static int builder_traverse(TpOdsBuilder *b, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(b));
  Py_VISIT(b->spec);
  Py_VISIT(b->opname);
  Py_VISIT(b->rspec);
  Py_VISIT(b->oseg);
  Py_VISIT(b->rseg);
  return 0;
}

static int spec_error(const char *what) {
  PyErr_Format(PyExc_ValueError, "ods_builder: %s", what);
  return 0;
}

/* One action of the spec (a tuple: its name, then what act_defs says) into *a. 1 or 0. */
static int parse_action(TpOdsBuilder *b, PyObject *t, ods_action *a) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(t, 0)))
    return spec_error("an action is a tuple starting with its name");
  const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0));
  if (!name) return 0;
  a->kind = -1;
  for (int k = 0; k < ACT_KINDS; k++)
    if (!strcmp(name, act_defs[k].name)) a->kind = k;
  if (a->kind < 0) return spec_error("unknown action");
  const char *args = act_defs[a->kind].args;
  if (PyTuple_GET_SIZE(t) != 1 + (Py_ssize_t)strlen(args)) return spec_error("wrong action length");
  for (Py_ssize_t i = 0; args[i]; i++) {
    PyObject *x = PyTuple_GET_ITEM(t, i + 1);
    if (args[i] == 's') {
      if (!PyUnicode_Check(x)) return spec_error("expected a str");
      Py_INCREF(x);
      PyUnicode_InternInPlace(&x);
      if (!a->name)
        a->name = x;
      else
        a->kind_name = x;
      continue;
    }
    Py_ssize_t v = PyLong_Check(x) ? PyLong_AsSsize_t(x) : -1;
    if (v < 0 || (args[i] == 'p' && v >= b->nparams)) {
      PyErr_Clear();
      return spec_error("expected a parameter index or a count");
    }
    if (args[i] == 'p')
      a->param = (int)v;
    else
      a->n = v;
  }
  return 1;
}

static int param_index(PyObject *names, const char *name) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++)
    if (!PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(names, i), name)) return (int)i;
  return -1;
}

static PyObject *builder_vectorcall(PyObject *o, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames);

/* ods_builder(names, npos, actions) */
static PyObject *fn_ods_builder(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  if (nargs != 3 || !PyTuple_Check(args[0]) || !PyLong_Check(args[1]) || !PyTuple_Check(args[2]))
    return PyErr_Format(PyExc_TypeError, "ods_builder(names: tuple, npos: int, actions: tuple)");
  Py_ssize_t n = PyTuple_GET_SIZE(args[0]), npos = PyLong_AsSsize_t(args[1]);
  if (npos < 0 || npos > n || n > 127) {
    PyErr_Clear();
    return PyErr_Format(PyExc_ValueError, "ods_builder: bad parameter counts");
  }
  TpOdsBuilder *b = PyObject_GC_New(TpOdsBuilder, tpy.OdsBuilder);
  if (!b) return NULL;
  memset((char *)b + offsetof(TpOdsBuilder, spec), 0, sizeof *b - offsetof(TpOdsBuilder, spec));
  b->vectorcall = builder_vectorcall;
  b->spec = tpy_tuple_of(args, 3);
  b->names = PyTuple_New(n);
  if (!b->spec || !b->names) goto fail;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = PyTuple_GET_ITEM(args[0], i);
    if (!PyUnicode_Check(x)) {
      spec_error("parameter names are strs");
      goto fail;
    }
    Py_INCREF(x);
    PyUnicode_InternInPlace(&x);
    PyTuple_SET_ITEM(b->names, i, x);
  }
  b->nparams = (int)n;
  b->npos = (int)npos;
  b->p_loc = param_index(b->names, "loc");
  b->p_ip = param_index(b->names, "ip");
  b->p_results = param_index(b->names, "results");
  Py_ssize_t na = PyTuple_GET_SIZE(args[2]);
  b->acts = PyMem_Calloc((size_t)(na ? na : 1), sizeof *b->acts);
  if (!b->acts) {
    PyErr_NoMemory();
    goto fail;
  }
  for (Py_ssize_t i = 0; i < na; i++) {
    b->acts[i].param = -1;
    b->nacts = (int)i + 1;
    if (!parse_action(b, PyTuple_GET_ITEM(args[2], i), &b->acts[i])) goto fail;
  }
  PyObject_GC_Track(b);
  return (PyObject *)b;
fail:
  Py_DECREF(b);
  return NULL;
}

/* ---- arguments ------------------------------------------------------------------------------- */

static PyObject *qualname(TpOdsBuilder *b) { return b->qualname ? b->qualname : s_init; }

static int missing(TpOdsBuilder *b, PyObject **p, Py_ssize_t nargs) {
  PyObject *names = PyList_New(0);
  if (!names) return 0;
  for (int i = (int)nargs; i < b->npos; i++)
    if (!p[i] && PyList_Append(names, PyTuple_GET_ITEM(b->names, i)) < 0) {
      Py_DECREF(names);
      return 0;
    }
  Py_ssize_t k = PyList_GET_SIZE(names);
  PyObject *text = NULL;
  if (k == 1) {
    text = PyUnicode_FromFormat("'%U'", PyList_GET_ITEM(names, 0));
  } else {
    /* CPython's form: 'a', 'b' and 'c'. */
    PyObject *parts = PyList_New(0);
    for (Py_ssize_t i = 0; parts && i < k; i++) {
      PyObject *q = PyUnicode_FromFormat(i == k - 1   ? "and '%U'"
                                         : i == k - 2 ? "'%U' "
                                                      : "'%U', ",
                                         PyList_GET_ITEM(names, i));
      if (!q || PyList_Append(parts, q) < 0) Py_CLEAR(parts);
      Py_XDECREF(q);
    }
    PyObject *empty = parts ? PyUnicode_FromString("") : NULL;
    text = empty ? PyUnicode_Join(empty, parts) : NULL;
    Py_XDECREF(empty);
    Py_XDECREF(parts);
  }
  if (text)
    PyErr_Format(PyExc_TypeError, "%U() missing %zd required positional argument%s: %U",
                 qualname(b), k, k == 1 ? "" : "s", text);
  Py_XDECREF(text);
  Py_DECREF(names);
  return 0;
}

/* The map of a keyword-name tuple: for each of its names, the parameter; built once per tuple. 1,
 * or 0 with TypeError (an unknown name). */
static signed char *kw_map(TpOdsBuilder *b, PyObject *kwnames) {
  for (int i = 0; i < KW_CACHE; i++)
    if (b->kw[i].kwnames == kwnames) return b->kw[i].map;
  Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
  signed char *map = PyMem_Malloc((size_t)nkw);
  if (!map) return PyErr_NoMemory(), NULL;
  for (Py_ssize_t k = 0; k < nkw; k++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int found = -1;
    for (int i = 0; i < b->nparams && found < 0; i++)
      if (PyTuple_GET_ITEM(b->names, i) == key) found = i;
    for (int i = 0; i < b->nparams && found < 0; i++) {
      int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(b->names, i), key, Py_EQ);
      if (eq < 0) {
        PyMem_Free(map);
        return NULL;
      }
      if (eq) found = i;
    }
    if (found < 0) {
      PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument '%S'", qualname(b),
                   key);
      PyMem_Free(map);
      return NULL;
    }
    map[k] = (signed char)found;
  }
  int slot = b->kw_next++ % KW_CACHE;
  Py_XSETREF(b->kw[slot].kwnames, Py_NewRef(kwnames));
  PyMem_Free(b->kw[slot].map);
  b->kw[slot].map = map;
  return map;
}

/* The arguments into p[0..nparams) (borrowed; a keyword-only one not given is None). 1, or 0 with
 * TypeError as CPython words it for the generated function. */
static int parse_args(TpOdsBuilder *b, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      PyObject **p) {
  if (nargs > b->npos) {
    PyErr_Format(PyExc_TypeError, "%U() takes %d positional argument%s but %zd were given",
                 qualname(b), b->npos + 1, b->npos ? "s" : "", nargs + 1);
    return 0;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) p[i] = args[i];
  for (int i = (int)nargs; i < b->nparams; i++) p[i] = NULL;
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    signed char *map = kw_map(b, kwnames);
    if (!map) return 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
      int i = map[k];
      if (p[i]) {
        PyErr_Format(PyExc_TypeError, "%U() got multiple values for argument '%U'", qualname(b),
                     PyTuple_GET_ITEM(b->names, i));
        return 0;
      }
      p[i] = args[nargs + k];
    }
  }
  for (int i = (int)nargs; i < b->npos; i++)
    if (!p[i]) return missing(b, p, nargs);
  for (int i = b->npos; i < b->nparams; i++)
    if (!p[i]) p[i] = Py_None;
  return 1;
}

/* ---- the class's metadata -------------------------------------------------------------------- */

/* The metadata of cls (self's class), read as the generated code reads `self.X`, cached while the
 * class's version tag holds. 1 or 0. */
static int class_meta(TpOdsBuilder *b, PyTypeObject *cls) {
  if (b->cls == cls && (cls->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) &&
      cls->tp_version_tag == b->tag)
    return 1;
  builder_clear_meta(b);
  PyObject *v[4];
  PyObject *const keys[4] = {s_opname, s_regions, s_oseg, s_rseg};
  for (int i = 0; i < 4; i++)
    if (!(v[i] = PyObject_GetAttr((PyObject *)cls, keys[i]))) {
      for (int j = 0; j < i; j++) Py_DECREF(v[j]);
      return 0;
    }
  b->opname = v[0];
  b->rspec = v[1];
  b->oseg = v[2];
  b->rseg = v[3];
  /* The fast path's: no segments, a (count, bool) region spec, a str name. */
  b->fast = b->oseg == Py_None && b->rseg == Py_None && PyUnicode_Check(b->opname) &&
            PyTuple_CheckExact(b->rspec) && PyTuple_GET_SIZE(b->rspec) == 2 &&
            PyLong_CheckExact(PyTuple_GET_ITEM(b->rspec, 0)) &&
            PyBool_Check(PyTuple_GET_ITEM(b->rspec, 1));
  if (b->fast) {
    b->min_regions = PyLong_AsSsize_t(PyTuple_GET_ITEM(b->rspec, 0));
    b->no_variadic = PyTuple_GET_ITEM(b->rspec, 1) == Py_True;
    if (b->min_regions < 0 || b->min_regions > 65536) {
      PyErr_Clear();
      b->fast = 0;
    }
  }
  /* The lookups above gave the class a valid version tag, unless it cannot have one. */
  if (cls->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) {
    b->cls = cls;
    b->tag = cls->tp_version_tag;
  }
  return 1;
}

/* ---- running the actions ---------------------------------------------------------------------
 * The actions collect what the generated code put in its operands, results, attributes,
 * successors and regions variables (objects, in order). Then either the fast path converts them
 * straight into MLIR values and creates the operation (tpy_create_parts), when they are what it
 * takes (no segments, Values and Types and Attributes of the location's context, a region count
 * within the class's spec), or the collected objects become the lists and dict the generated code
 * passed to OpView.__init__, and create.c's build takes them as it took those (its checks, its
 * messages). */

/* _ods_common.get_default_loc_context(loc) (new reference; None without a location on MLIR 22). */
static PyObject *default_loc_context(PyObject *loc) {
  if (!loc || loc == Py_None) {
    loc = tpy_current_loc();
    if (!loc) Py_RETURN_NONE;
  }
  if (tpy_is(loc, tpy.Location)) return Py_NewRef(TPY_CTX(loc));
  return PyObject_GetAttr(loc, s_context);
}

/* _get_op_results_or_values(p) (new reference): an op's results, or p as it is. */
static PyObject *results_or_values(PyObject *p) {
  if (!tpy_is(p, tpy.OperationBase)) return Py_NewRef(p);
  if (!TPY_OP(p)->h)
    return PyErr_Format(PyExc_RuntimeError, "the OpView was never initialized with an operation");
  MlirOperation raw;
  int rc = tether_op_get(TPY_OP(p)->h, &raw);
  if (rc != TETHER_OK) return TPY_RAISE_RC(rc, TPY_OP(p)->h);
  return tpy_new_op_list(TPY_OP(p)->h, TPY_LIST_RESULTS);
}

/* AttrBuilder's conversion of attribute value p of ODS kind `kind` (new reference): p itself when
 * it is an Attribute or no builder is registered for the kind, else builder(p, context=ctx). */
static PyObject *convert_attr(PyObject *p, PyObject *kind, PyObject *ctx) {
  if (tpy_is(p, tpy.Attribute) || !tpy.attr_builders) return Py_NewRef(p);
  PyObject *f = PyDict_GetItemWithError(tpy.attr_builders, kind);
  if (!f) return PyErr_Occurred() ? NULL : Py_NewRef(p);
  Py_INCREF(f); /* the builder may change the dict */
  PyObject *argv[2] = {p, ctx ? ctx : Py_None};
  PyObject *kwn = PyTuple_Pack(1, s_context);
  PyObject *r = kwn ? PyObject_Vectorcall(f, argv, 1, kwn) : NULL;
  Py_XDECREF(kwn);
  Py_DECREF(f);
  return r;
}

/* UnitAttr.get(ctx) (ctx None: the current context). */
static PyObject *unit_attr(PyObject *ctx) {
  PyObject *c = tpy_context_arg(ctx);
  return c ? tpy_wrap_attr(c, mlirUnitAttrGet(tpy_ctx_raw(c))) : NULL;
}

/* The type an attribute gives its op's results (FirstAttrDerivedResultType): a TypeAttr's value,
 * else the attribute's type. */
static PyObject *attr_result_type(PyObject *attr) {
  int is_type_attr =
      tpy_is(attr, tpy.Attribute) && mlirAttributeIsAType((MlirAttribute){TPY_PTR(attr)});
  return PyObject_GetAttr(attr, is_type_attr ? s_value : s_type);
}

/* A growable array of owned references. */
typedef struct {
  PyObject **v;
  Py_ssize_t n, cap;
  PyObject *small[8];
} objvec;

static void vec_init(objvec *v) {
  v->v = v->small;
  v->n = 0;
  v->cap = 8;
}

static void vec_free(objvec *v) {
  for (Py_ssize_t i = 0; i < v->n; i++) Py_DECREF(v->v[i]);
  if (v->v != v->small) PyMem_Free(v->v);
}

/* Appends o (a reference stolen; NULL: fails). 1 or 0. */
static int vec_push_new(objvec *v, PyObject *o) {
  if (!o) return 0;
  if (v->n == v->cap) {
    Py_ssize_t ncap = v->cap * 2;
    PyObject **n = PyMem_Malloc((size_t)ncap * sizeof *n);
    if (!n) {
      Py_DECREF(o);
      PyErr_NoMemory();
      return 0;
    }
    memcpy(n, v->v, (size_t)v->n * sizeof *n);
    if (v->v != v->small) PyMem_Free(v->v);
    v->v = n;
    v->cap = ncap;
  }
  v->v[v->n++] = o;
  return 1;
}

static int vec_push(objvec *v, PyObject *o) { return vec_push_new(v, Py_NewRef(o)); }

/* Appends every item of an iterable (list.extend). 1 or 0. */
static int vec_extend(objvec *v, PyObject *items) {
  if (PyList_CheckExact(items) || PyTuple_CheckExact(items)) {
    /* Pushing runs no Python code: the list cannot change meanwhile. */
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++)
      if (!vec_push(v, PySequence_Fast_GET_ITEM(items, i))) return 0;
    return 1;
  }
  PyObject *it = PyObject_GetIter(items);
  if (!it) return 0;
  PyObject *x;
  while ((x = PyIter_Next(it)))
    if (!vec_push_new(v, x)) break;
  Py_DECREF(it);
  return !PyErr_Occurred();
}

static PyObject *vec_list(const objvec *v) {
  PyObject *l = PyList_New(v->n);
  for (Py_ssize_t i = 0; l && i < v->n; i++) PyList_SET_ITEM(l, i, Py_NewRef(v->v[i]));
  return l;
}

/* What the actions collected. */
typedef struct {
  objvec operands;
  objvec attr_names, attr_values; /* in order of assignment (each name once: ODS names) */
  PyObject *results;   /* the results variable when it is not a list made here (a parameter) */
  objvec result_items; /* the list made here (results_list) */
  int results_list;
  Py_ssize_t same_type; /* > 0: results = [operands[0].type] * same_type, not yet evaluated */
  objvec successor_items;
  int successors_list;
  PyObject *regions; /* NULL: None */
  PyObject *ctx;     /* _ods_context */
} collected;

static void collected_init(collected *c) {
  vec_init(&c->operands);
  vec_init(&c->attr_names);
  vec_init(&c->attr_values);
  vec_init(&c->result_items);
  vec_init(&c->successor_items);
  c->results = NULL;
  c->results_list = 0;
  c->same_type = 0;
  c->successors_list = 0;
  c->regions = NULL;
  c->ctx = NULL;
}

static void collected_free(collected *c) {
  vec_free(&c->operands);
  vec_free(&c->attr_names);
  vec_free(&c->attr_values);
  vec_free(&c->result_items);
  vec_free(&c->successor_items);
  Py_XDECREF(c->results);
  Py_XDECREF(c->regions);
  Py_XDECREF(c->ctx);
}

/* attributes[name] (borrowed), or NULL. */
static PyObject *attr_get(const collected *c, PyObject *name) {
  for (Py_ssize_t i = c->attr_names.n - 1; i >= 0; i--)
    if (c->attr_names.v[i] == name) return c->attr_values.v[i];
  return NULL;
}

/* The results variable as a new list: `[...]`. */
static int set_results_list(collected *c, PyObject *items) {
  Py_CLEAR(c->results);
  vec_free(&c->result_items);
  vec_init(&c->result_items);
  c->results_list = 1;
  c->same_type = 0;
  return !items || vec_extend(&c->result_items, items);
}

/* Runs the actions on the parameters p. 1, or 0 with the exception the generated code raises. */
static int collect(TpOdsBuilder *b, PyObject **p, collected *c) {
  if (b->p_results >= 0) c->results = Py_NewRef(p[b->p_results]);
  for (int i = 0; i < b->nacts; i++) {
    const ods_action *a = &b->acts[i];
    PyObject *x = a->param >= 0 ? p[a->param] : NULL, *v = NULL;
    int ok = 1;
    switch (a->kind) {
    case ACT_OPERAND:
      ok = vec_push(&c->operands, x);
      break;
    case ACT_OPERAND_OPT:
      if (x != Py_None) ok = vec_push(&c->operands, x);
      break;
    case ACT_OPERANDS:
      ok = (v = results_or_values(x)) && vec_extend(&c->operands, v);
      break;
    case ACT_OPERAND_GROUP:
      ok = vec_push_new(&c->operands, results_or_values(x));
      break;
    case ACT_CONTEXT:
      Py_XSETREF(c->ctx, default_loc_context(b->p_loc >= 0 ? p[b->p_loc] : NULL));
      ok = c->ctx != NULL;
      break;
    case ACT_ATTR:
    case ACT_ATTR_OPT:
      if (a->kind == ACT_ATTR || x != Py_None)
        ok = vec_push_new(&c->attr_values, convert_attr(x, a->kind_name, c->ctx)) &&
             vec_push(&c->attr_names, a->name);
      break;
    case ACT_UNIT: {
      int t = PyObject_IsTrue(x);
      ok = t >= 0 && (!t || (vec_push_new(&c->attr_values, unit_attr(c->ctx)) &&
                             vec_push(&c->attr_names, a->name)));
      break;
    }
    case ACT_SAME_TYPE:
      if (c->results_list || (c->results && c->results != Py_None)) break;
      if (!c->operands.n) {
        PyErr_SetString(PyExc_IndexError, "list index out of range");
        ok = 0;
        break;
      }
      ok = set_results_list(c, NULL);
      c->same_type = a->n; /* the type is read when it is used (ready_results) */
      break;
    case ACT_ATTR_TYPE: {
      if (c->results_list || (c->results && c->results != Py_None)) break;
      PyObject *src = attr_get(c, a->name);
      if (!src) {
        PyErr_SetObject(PyExc_KeyError, a->name);
        ok = 0;
        break;
      }
      PyObject *t = attr_result_type(src);
      ok = t && set_results_list(c, NULL);
      for (Py_ssize_t k = 0; ok && k < a->n; k++) ok = vec_push(&c->result_items, t);
      Py_XDECREF(t);
      break;
    }
    case ACT_RESULTS:
      ok = set_results_list(c, NULL);
      break;
    case ACT_RESULT:
    case ACT_RESULT_OPT:
    case ACT_RESULT_LIST:
      if (!c->results_list) {
        /* results.append on what is not a list (a results parameter): as the generated code. */
        PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%s'",
                     Py_TYPE(c->results ? c->results : Py_None)->tp_name,
                     a->kind == ACT_RESULT_LIST ? "extend" : "append");
        ok = 0;
      } else if (a->kind == ACT_RESULT_LIST) {
        ok = vec_extend(&c->result_items, x);
      } else if (a->kind == ACT_RESULT || x != Py_None) {
        ok = vec_push(&c->result_items, x);
      }
      break;
    case ACT_SUCCESSORS:
      c->successors_list = 1;
      break;
    case ACT_SUCCESSOR:
      ok = vec_push(&c->successor_items, x);
      break;
    case ACT_SUCCESSOR_LIST:
      ok = vec_extend(&c->successor_items, x);
      break;
    case ACT_REGIONS: {
      PyObject *k = PyLong_FromSsize_t(a->n);
      Py_XSETREF(c->regions, k ? PyNumber_Add(k, x) : NULL);
      Py_XDECREF(k);
      ok = c->regions != NULL;
      break;
    }
    }
    Py_XDECREF(v);
    if (!ok) return 0;
  }
  return 1;
}

/* The results of same_type, evaluated now as the generated code did: [operands[0].type] * n. */
static int ready_results(collected *c) {
  if (!c->same_type) return 1;
  PyObject *t = PyObject_GetAttr(c->operands.v[0], s_type);
  int ok = t != NULL;
  for (Py_ssize_t k = 0; ok && k < c->same_type; k++) ok = vec_push(&c->result_items, t);
  Py_XDECREF(t);
  c->same_type = 0;
  return ok;
}

/* The generic path: OpView.__init__'s arguments as the generated code made them. */
static int build_generic(TpOdsBuilder *b, PyObject **p, collected *c, tether_op **out) {
  if (!ready_results(c)) return -1;
  PyObject *operands = vec_list(&c->operands), *attributes = PyDict_New();
  PyObject *results =
      c->results_list ? vec_list(&c->result_items) : Py_NewRef(c->results ? c->results : Py_None);
  PyObject *successors = c->successors_list ? vec_list(&c->successor_items) : Py_NewRef(Py_None);
  int rc = -1;
  for (Py_ssize_t i = 0; attributes && i < c->attr_names.n; i++)
    if (PyDict_SetItem(attributes, c->attr_names.v[i], c->attr_values.v[i]) < 0)
      Py_CLEAR(attributes);
  if (operands && attributes && results && successors) {
    PyObject *x[11] = {b->opname,
                       b->rspec,
                       b->oseg,
                       b->rseg,
                       results,
                       operands,
                       attributes,
                       successors,
                       c->regions ? c->regions : Py_None,
                       b->p_loc >= 0 ? p[b->p_loc] : NULL,
                       b->p_ip >= 0 ? p[b->p_ip] : NULL};
    rc = tpy_opview_build(x, out);
  }
  Py_XDECREF(operands);
  Py_XDECREF(attributes);
  Py_XDECREF(results);
  Py_XDECREF(successors);
  return rc;
}

enum { FAST_SMALL = 8 };

/* The fast path: 1 with the operation made (0 in rc) or an exception raised by creation (-1 in
 * rc); 0 when the collected objects are not what it takes (nothing done, no exception: the
 * generic path makes the same operation, or says what is wrong as it always did). */
static int build_fast(TpOdsBuilder *b, PyObject **p, collected *c, tether_op **out, int *rc) {
  if (!b->fast || c->successors_list) return 0;
  intptr_t nregions = b->min_regions;
  if (c->regions) {
    if (!PyLong_CheckExact(c->regions)) return 0;
    int overflow;
    long long r = PyLong_AsLongLongAndOverflow(c->regions, &overflow);
    if (overflow || r < b->min_regions || (b->no_variadic && r > b->min_regions) || r > 65536)
      return 0;
    nregions = (intptr_t)r;
  }
  PyObject *loc = tpy_creation_loc(b->p_loc >= 0 ? p[b->p_loc] : NULL);
  if (!loc) {
    PyErr_Clear();
    return 0;
  }
  PyObject *ctx = TPY_CTX(loc);
  tether_arena *arena = ((TpContext *)ctx)->arena;
  tether_value *ops_s[FAST_SMALL];
  MlirType res_s[FAST_SMALL];
  MlirNamedAttribute attrs_s[FAST_SMALL];
  Py_ssize_t nops = c->operands.n, nattrs = c->attr_names.n;
  Py_ssize_t nres = c->same_type ? c->same_type : c->result_items.n;
  int fast = nops <= FAST_SMALL && nattrs <= FAST_SMALL && nres <= FAST_SMALL;
  /* Operands: Values of the arena, or an op with one result (its result). */
  for (Py_ssize_t i = 0; fast && i < nops; i++) {
    PyObject *o = c->operands.v[i];
    tether_value *h = NULL;
    if (tpy_is(o, tpy.Value)) {
      h = TPY_H(o);
    } else if (tpy_is(o, tpy.OperationBase) && TPY_OP(o)->h) {
      intptr_t n;
      if (tether_op_num_results(TPY_OP(o)->h, &n) != TETHER_OK || n != 1 ||
          tether_op_result(TPY_OP(o)->h, 0, &h) != TETHER_OK)
        h = NULL;
    }
    fast = h && tether_handle_arena(h) == arena && tether_handle_is_valid(h);
    ops_s[i] = h;
  }
  /* Results: Types of the context; same_type: the first operand's. */
  if (fast && c->same_type) {
    MlirValue v;
    if (tether_value_get(ops_s[0], &v) != TETHER_OK) {
      fast = 0;
    } else {
      MlirType t = mlirValueGetType(v);
      for (Py_ssize_t i = 0; i < nres; i++) res_s[i] = t;
    }
  }
  for (Py_ssize_t i = 0; fast && !c->same_type && i < nres; i++) {
    PyObject *t = c->result_items.v[i];
    fast = tpy_is(t, tpy.Type) && TPY_CTX(t) == ctx;
    if (fast) res_s[i] = (MlirType){TPY_PTR(t)};
  }
  int infer = !c->results_list && (!c->results || c->results == Py_None);
  if (!infer && !c->results_list) fast = 0; /* a results parameter given: the generic path */
  /* Attributes: Attributes of the context. */
  for (Py_ssize_t i = 0; fast && i < nattrs; i++) {
    PyObject *v = c->attr_values.v[i], *k = c->attr_names.v[i];
    fast = tpy_is(v, tpy.Attribute) && TPY_CTX(v) == ctx;
    if (!fast) break;
    MlirIdentifier id;
    if (!tpy_identifier_cached(ctx, k, &id)) {
      MlirStringRef ks;
      if (!tpy_arg_str(k, "key", &ks)) {
        PyErr_Clear();
        fast = 0;
        break;
      }
      id = tpy_identifier(ctx, k, ks);
    }
    attrs_s[i] = mlirNamedAttributeGet(id, (MlirAttribute){TPY_PTR(v)});
  }
  if (!fast) {
    Py_DECREF(loc);
    return 0;
  }
  tpy_op_parts parts = {b->opname, loc,   b->p_ip >= 0 ? p[b->p_ip] : NULL,
                        infer,     res_s, infer ? 0 : nres,
                        ops_s,     nops,  attrs_s,
                        nattrs,    NULL,  0,
                        nregions};
  *rc = tpy_create_parts(&parts, out);
  Py_DECREF(loc);
  return 1;
}

/* Runs the builder on self with the parsed parameters p. 0, or -1 with an exception. */
static int run(TpOdsBuilder *b, PyObject *self, PyObject **p) {
  collected c;
  collected_init(&c);
  int rc = -1;
  tether_op *h;
  if (collect(b, p, &c) && class_meta(b, Py_TYPE(self)) &&
      (build_fast(b, p, &c, &h, &rc) || (rc = build_generic(b, p, &c, &h)) == 0 || 1) && rc == 0)
    rc = tpy_opview_take(self, h);
  collected_free(&c);
  return rc;
}

/* Parses and runs: self.__init__(*args, **kwargs). 0 or -1. */
static int build_into(TpOdsBuilder *b, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames) {
  if (!tpy_is(self, tpy.OpView)) {
    PyErr_Format(PyExc_TypeError, "%U() needs an OpView to build, not %s", qualname(b),
                 Py_TYPE(self)->tp_name);
    return -1;
  }
  PyObject *p_small[SMALL_PARAMS];
  PyObject **p =
      b->nparams <= SMALL_PARAMS ? p_small : PyMem_Malloc((size_t)b->nparams * sizeof *p);
  if (!p) return PyErr_NoMemory(), -1;
  int rc = parse_args(b, args, nargs, kwnames, p) ? run(b, self, p) : -1;
  if (p != p_small) PyMem_Free(p);
  return rc;
}

/* ---- calls ----------------------------------------------------------------------------------- */

/* Cls.__init__(self, ...): the unbound call (a bound one is a method object over it). */
static PyObject *builder_vectorcall(PyObject *o, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames) {
  TpOdsBuilder *b = (TpOdsBuilder *)o;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (nargs < 1)
    return PyErr_Format(PyExc_TypeError, "%U() missing the OpView to build", qualname(b));
  return build_into(b, args[0], args + 1, nargs - 1, kwnames) < 0 ? NULL : Py_NewRef(Py_None);
}

static PyObject *builder_get(PyObject *o, PyObject *obj, PyObject *type) {
  (void)type;
  if (!obj || obj == Py_None) return Py_NewRef(o);
  return PyMethod_New(o, obj);
}

/* The class called as `type` calls it, with a tuple and a dict of the arguments. */
static PyObject *call_as_type(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  PyObject *t = tpy_tuple_of(args, nargs), *kw = NULL;
  if (!t) return NULL;
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    kw = PyDict_New();
    for (Py_ssize_t k = 0; kw && k < PyTuple_GET_SIZE(kwnames); k++)
      if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) Py_CLEAR(kw);
    if (!kw) {
      Py_DECREF(t);
      return NULL;
    }
  }
  PyObject *r = PyType_Type.tp_call(cls, t, kw);
  Py_DECREF(t);
  Py_XDECREF(kw);
  return r;
}

/* Cls(...) for a class whose __init__ is a builder: the instance made and built here. */
static PyObject *class_vectorcall(PyObject *cls, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
  PyTypeObject *t = (PyTypeObject *)cls;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject *init = _PyType_Lookup(t, s_init); /* borrowed */
  if (!init || Py_TYPE(init) != tpy.OdsBuilder || t->tp_new != tpy.OpView->tp_new)
    return call_as_type(cls, args, nargs, kwnames);
  PyObject *self = t->tp_alloc(t, 0);
  if (!self) return NULL;
  TPY_OP(self)->pin = -1; /* what OpView's tp_new does */
  Py_INCREF(init);        /* the build may run Python code that changes the class */
  int rc = build_into((TpOdsBuilder *)init, self, args, nargs, kwnames);
  Py_DECREF(init);
  if (rc < 0) Py_CLEAR(self);
  return self;
}

void tpy_ods_class_setup(PyTypeObject *t) {
  PyObject *init = _PyType_Lookup(t, s_init);
  if (init && Py_TYPE(init) == tpy.OdsBuilder && t->tp_new == tpy.OpView->tp_new)
    t->tp_vectorcall = class_vectorcall;
}

/* ---- the descriptor's other faces ------------------------------------------------------------ */

static PyObject *builder_set_name(PyObject *o, PyObject *const *args, Py_ssize_t nargs) {
  TpOdsBuilder *b = (TpOdsBuilder *)o;
  if (nargs != 2 || !PyType_Check(args[0]))
    return PyErr_Format(PyExc_TypeError, "__set_name__(owner, name)");
  PyObject *q = PyObject_GetAttrString(args[0], "__qualname__");
  if (!q) return NULL;
  Py_XSETREF(b->qualname, PyUnicode_FromFormat("%S.%S", q, args[1]));
  Py_DECREF(q);
  return b->qualname ? Py_NewRef(Py_None) : NULL;
}

/* inspect.signature's: (self, <positional>, *, <keyword-only>=None). */
static PyObject *builder_signature(PyObject *o, void *c) {
  (void)c;
  TpOdsBuilder *b = (TpOdsBuilder *)o;
  PyObject *inspect = PyImport_ImportModule("inspect");
  if (!inspect) return NULL;
  PyObject *param = PyObject_GetAttrString(inspect, "Parameter");
  PyObject *sig = param ? PyObject_GetAttrString(inspect, "Signature") : NULL;
  PyObject *pos = sig ? PyObject_GetAttrString(param, "POSITIONAL_OR_KEYWORD") : NULL;
  PyObject *kwo = pos ? PyObject_GetAttrString(param, "KEYWORD_ONLY") : NULL;
  PyObject *params = kwo ? PyList_New(0) : NULL, *r = NULL;
  for (int i = -1; params && i < b->nparams; i++) {
    PyObject *name =
        i < 0 ? PyUnicode_FromString("self") : Py_NewRef(PyTuple_GET_ITEM(b->names, i));
    PyObject *kw = PyDict_New();
    int ok = name && kw && (i < b->npos || !PyDict_SetItemString(kw, "default", Py_None));
    PyObject *argv[2] = {name, i < b->npos ? pos : kwo};
    PyObject *x = ok ? PyObject_VectorcallDict(param, argv, 2, kw) : NULL;
    if (!x || PyList_Append(params, x) < 0) Py_CLEAR(params);
    Py_XDECREF(x);
    Py_XDECREF(kw);
    Py_XDECREF(name);
  }
  if (params) r = PyObject_CallOneArg(sig, params);
  Py_XDECREF(params);
  Py_XDECREF(kwo);
  Py_XDECREF(pos);
  Py_XDECREF(sig);
  Py_XDECREF(param);
  Py_DECREF(inspect);
  return r;
}

static PyObject *builder_get_qualname(PyObject *o, void *c) {
  (void)c;
  return Py_NewRef(qualname((TpOdsBuilder *)o));
}

static PyObject *builder_get_spec(PyObject *o, void *c) {
  (void)c;
  return Py_NewRef(((TpOdsBuilder *)o)->spec);
}

static PyObject *builder_repr(PyObject *o) {
  return PyUnicode_FromFormat("<ods builder %U>", qualname((TpOdsBuilder *)o));
}

static PyMethodDef builder_methods[] = {
    {"__set_name__", TPY_FASTFN(builder_set_name), METH_FASTCALL,
     TPY_SIGDOC("__set_name__(owner: type, name: str, /) -> None",
                "Names the builder after its class (for messages).")},
    TPY_METHODS_END,
};

static PyGetSetDef builder_getset[] = {
    {"__signature__", builder_signature, NULL,
     TPY_PROP("inspect.Signature", "The generated __init__'s signature."), NULL},
    {"__qualname__", builder_get_qualname, NULL, TPY_PROP("str", "Class.__init__."), NULL},
    {"_ods_spec", builder_get_spec, NULL,
     TPY_PROP("tuple[tuple[str, ...], int, tuple[object, ...]]",
              "(names, npos, actions): what the builder runs."),
     NULL},
    TPY_GETSET_END,
};

static PyMemberDef builder_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(TpOdsBuilder, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot builder_slots[] = {
    {Py_tp_dealloc, builder_dealloc},
    {Py_tp_traverse, builder_traverse},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, builder_get},
    {Py_tp_methods, builder_methods},
    {Py_tp_getset, builder_getset},
    {Py_tp_members, builder_members},
    {Py_tp_repr, builder_repr},
    {Py_tp_doc, "The builder of an ODS-generated op class, run in C (gen/ods_builders.py)."},
    {0, NULL},
};

static PyType_Spec builder_spec = {"tether.ir._OdsBuilder", sizeof(TpOdsBuilder), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                                       Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR |
                                       Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                   builder_slots};

/* _set_attr_builders(d): AttrBuilder's dict of builders by ODS kind (tether/ir.py). */
static PyObject *fn_set_attr_builders(PyObject *m, PyObject *d) {
  (void)m;
  if (!PyDict_Check(d)) return tpy_type_error("attribute builders", "a dict", d);
  Py_XSETREF(tpy.attr_builders, Py_NewRef(d));
  Py_RETURN_NONE;
}

static PyMethodDef ods_functions[] = {
    {"_ods_builder", TPY_FASTFN(fn_ods_builder), METH_FASTCALL,
     TPY_SIGDOC("_ods_builder(names: tuple[str, ...], npos: int, actions: tuple[object, ...], /) "
                "-> _OdsBuilder",
                "An op class's builder from its spec (gen/ods_builders.py).")},
    {"_set_attr_builders", fn_set_attr_builders, METH_O,
     TPY_SIGDOC("_set_attr_builders(builders: dict[str, object], /) -> None",
                "AttrBuilder's builders by ODS kind (tether/ir.py).")},
    TPY_METHODS_END,
};

int tpy_init_ods_builder(PyObject *m) {
  struct {
    PyObject **s;
    const char *text;
  } names[] = {{&s_init, "__init__"},
               {&s_type, "type"},
               {&s_value, "value"},
               {&s_context, "context"},
               {&s_opname, "OPERATION_NAME"},
               {&s_regions, "_ODS_REGIONS"},
               {&s_oseg, "_ODS_OPERAND_SEGMENTS"},
               {&s_rseg, "_ODS_RESULT_SEGMENTS"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(*names[i].s = PyUnicode_InternFromString(names[i].text))) return -1;
  if (tpy_add_type(m, &builder_spec, NULL, &tpy.OdsBuilder) < 0) return -1;
  return PyModule_AddFunctions(m, ods_functions);
}

#else

void tpy_ods_class_setup(PyTypeObject *t) { (void)t; }
int tpy_init_ods_builder(PyObject *m) {
  (void)m;
  return 0;
}

#endif
