/* types.h: the layer of values a context owns (core.h has the map of the layers): each holds its
 * raw MLIR pointer and a strong reference to its Context object (context/ctxobj.c).
 *
 *   classes.c       concrete classes from tables, casting by TypeID (register_*_caster)
 *   typeid.c        TypeID
 *   types.c         Type and the builtin type classes
 *   attributes.c    Attribute, NamedAttribute and the builtin attribute classes
 *   dense.c         the dense elements and dense array attribute classes
 *   affine_expr.c   AffineExpr and its subclasses
 *   affine_map.c    AffineMap, AffineExprList, AffineMapAttr
 *   integer_set.c   IntegerSet, IntegerSetConstraint(List)
 */
#ifndef TETHER_PY_TYPES_H
#define TETHER_PY_TYPES_H

#include "../context/context.h"

/* types/: the inits of this layer's files. */
int tpy_init_typeid(PyObject *m);
int tpy_init_classes(PyObject *m);
int tpy_init_types(PyObject *m);
int tpy_init_attributes(PyObject *m);
int tpy_init_dense(PyObject *m);
int tpy_init_affine_expr(PyObject *m);
int tpy_init_affine_map(PyObject *m);
int tpy_init_integer_set(PyObject *m);

/* ---- classes by table (classes.c) ----------------------------------------------------------- */

/* Concrete subclasses of a family (Type, Attribute, AffineExpr, ...): defined by a table, created
 * at module init (classes.c). `isa` receives the raw pointer; `type_id` (may be NULL) gives the
 * static TypeID registered as the class's caster and published as `static_typeid`. */
typedef struct tpy_class_def {
  const char *name; /* "IntegerType": the class is tether.ir.IntegerType */
  const char *base; /* name of the base class among the family's classes, NULL: the family */
  bool (*isa)(void *ptr);
  MlirTypeID (*type_id)(void);
  PyMethodDef *methods;
  PyGetSetDef *getset;
  PyType_Slot *slots; /* extra slots (number, sequence, mapping protocols, repr), may be NULL */
  const char *doc;
  void *data;        /* for the class's own methods (e.g. the C-API getter of a simple type) */
  PyTypeObject *cls; /* set at init */
} tpy_class_def;

/* Creates every class of `defs` (NULL-name terminated) as subclasses of `family`, adds them to the
 * module and registers those with a typeid in `casters` (may be NULL). */
int tpy_define_classes(PyObject *m, PyTypeObject *family, tpy_class_def *defs, PyObject *casters);
#if TETHER_MLIR_VERSION >= 22
/* MLIR's name of a concrete class's values ("builtin.integer": the C API's mlirXGetName), which
 * upstream 22 publishes as the class property `type_name` or `attr_name`. */
typedef struct {
  const char *cls; /* a class of defs */
  MlirStringRef (*name)(void);
} tpy_mlir_name;
/* Sets attribute `attr` of the classes of defs (created) named in names (NULL-cls terminated). */
int tpy_set_mlir_names(tpy_class_def *defs, const char *attr, const tpy_mlir_name *names);
#endif
/* The class def of a class created by tpy_define_classes (searching the MRO), or NULL. */
tpy_class_def *tpy_class_def_of(PyTypeObject *cls);
/* tp_init of classes whose tp_new did the work (a cast): a Python subclass's
 * super().__init__(x) must not reach object.__init__. */
int tpy_init_noop(PyObject *self, PyObject *args, PyObject *kw);
/* The object of family `base` (tpy.Type, tpy.Attribute) for ptr, as the class registered for id in
 * casters: tether's own classes are made directly, other casters get the base object. */
PyObject *tpy_wrap_cast(PyObject *casters, PyTypeObject *base, PyObject *ctx, const void *ptr,
                        MlirTypeID id);
/* The caster registered for id in casters (borrowed; cached), or NULL (error set, or none). */
PyObject *tpy_caster_of(PyObject *casters, MlirTypeID id);
/* caster(obj): obj as a registered caster makes it (new reference; steals obj). */
PyObject *tpy_call_caster(PyObject *caster, PyObject *obj);
/* Registers, for a TypeID several classes share, the tuple of those classes (most specific
 * first): values of that TypeID become the first class whose isa holds. */
int tpy_register_choice(PyObject *casters, MlirTypeID id, PyObject *classes);
/* o (a new reference, or NULL) as an object of cls, upstream's `cls(o)`, for classes without a
 * caster (new reference; steals o). */
PyObject *tpy_cast_to(PyObject *cls, PyObject *o);

/* Wrappers for MLIR values (new references; a null value gives None). Types and attributes are
 * cast to the most specific class registered for their TypeID. The _a forms take an arena instead
 * of a Context object. */
PyObject *tpy_wrap_typeid(MlirTypeID id);
PyObject *tpy_wrap_type(PyObject *ctx, MlirType t);
PyObject *tpy_wrap_attr(PyObject *ctx, MlirAttribute a);
PyObject *tpy_wrap_type_a(tether_arena *a, MlirType t);
PyObject *tpy_wrap_attr_a(tether_arena *a, MlirAttribute at);
/* A NamedAttribute for an MLIR one (attributes.c; new reference). */
PyObject *tpy_wrap_named_attr(PyObject *ctx, MlirNamedAttribute na);

/* ---- affine values (affine_expr.c, affine_map.c) --------------------------------------------- */

/* New references; a null value gives None. An expression comes out as its subclass. */
PyObject *tpy_wrap_affine_expr(PyObject *ctx, MlirAffineExpr e);
PyObject *tpy_wrap_affine_map(PyObject *ctx, MlirAffineMap m);
/* An AffineExpr argument of ctx (ctx NULL: of any context). 1, or 0 with TypeError/ValueError. */
int tpy_arg_affine_expr(PyObject *o, PyObject *ctx, MlirAffineExpr *out);
/* The largest dimension and symbol positions an expression uses (-1 when none: start there). */
void tpy_affine_max_positions(MlirAffineExpr e, intptr_t *dim, intptr_t *sym);
/* Expressions of ctx from a sequence, each within n_dims dimensions and n_syms symbols, into a
 * PyMem array (free with PyMem_Free); CastError names `action` for a non-expression. 1 or 0. */
int tpy_affine_exprs_of(PyObject *list, PyObject *ctx, intptr_t n_dims, intptr_t n_syms,
                        const char *action, intptr_t *n, MlirAffineExpr **out);
/* A count of dimensions, symbols or results: an int in [0, 2**24] (ValueError beyond). */
int tpy_affine_arg_count(PyObject *o, const char *what, intptr_t *out);
/* tp_new of the affine classes: they come from get() and its kin only (TypeError). */
PyObject *tpy_affine_new_refused(PyTypeObject *t, PyObject *args, PyObject *kw);
/* A read-only sequence class over an AffineMap or IntegerSet (affine_map.c): item(owner, pos)
 * makes element pos; slices are sequences of the same class. */
int tpy_affine_list_type(PyObject *m, const char *name, PyTypeObject **out);
PyObject *tpy_affine_list_new(PyTypeObject *type, PyObject *owner,
                              PyObject *(*item)(PyObject *owner, intptr_t pos), Py_ssize_t length);

#endif
