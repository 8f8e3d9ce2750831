/* core.h: the object model of the _tether extension, the first of its layers (each folder of
 * bindings/python is one, and its header includes the one below it):
 *
 *   core/      the module and what every file uses: module state, errors, arguments, capsules
 *   context/   Context, the current Context / Location / InsertionPoint, diagnostics
 *   types/     values a context owns: types, attributes, locations, affine values
 *   ir/        IR wrappers: operations, OpView, Module, regions, blocks, values, their sequences
 *   passes/    PassManager, rewrites and patterns, the transform interpreter, the JIT
 *   dialects/  the C parts of single dialects' Python modules (_tether._quant, ._smt, ...)
 *
 * The extension converts between Python and the arena and holds no lifetime logic of its own:
 *  - IR objects (Operation, OpView, Region, Block, Value, Module) hold their tether handle
 *    (tether_handle_hold: the collector cannot see Python objects, which live in malloc memory)
 *    and are found again through the handle's user pointer, so each IR object has at most one
 *    Operation wrapper and at most one OpView while they live.
 *  - Context-owned values (Type, Attribute, Location, AffineExpr, AffineMap, IntegerSet, ...) hold
 *    the raw MLIR pointer and a strong reference to their Context object, whose pin keeps the arena
 *    (and so the MLIRContext) alive.
 *
 * Everything runs under the GIL, which serializes all arenas: that is the arena's threading rule.
 * Every loop over MLIR lists assumes Python code may run at any allocation (the cyclic collector,
 * __del__): it takes what it needs first, or checks the handle again after each call out.
 *
 * extension.c, above them all, assembles the module from every file's init.
 *
 * core/ (this header): state.c (the module state, tpy_add_type, tpy_gc_dealloc), errors.c
 * (InvalidatedError, CastError, MLIRError, statuses as exceptions), collect.c (collection and safe
 * points), sig.c (signature specs: every Python signature, its docstring, _signatures), args.c
 * (the argument parser over a spec, and the converters of plain values), strbuf.c (text out of
 * MLIR's print callbacks), capsule.c (`_CAPIPtr` capsules that keep their owner alive),
 * objects.c (the wrappers' free list, sequence helpers).
 * A function that is not static is declared in its layer's header first (-Wmissing-prototypes).
 */
#ifndef TETHER_PY_CORE_H
#define TETHER_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "mlir_compat.h"
#include "tether.h"

#include <mlir-c/AffineExpr.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/Diagnostics.h>

#include <stdbool.h>

/* ---- basics ---------------------------------------------------------------------------------- */

/* Pins of wrappers (and of Context objects' arenas): a pool of the arena's, serialized by the
 * GIL. */
extern tether_pin_pool *tpy_pins;
static inline intptr_t tpy_pin(void *obj) { return tether_pool_pin(tpy_pins, obj); }
static inline void tpy_unpin(intptr_t slot) { tether_pool_unpin(tpy_pins, slot); }
/* A wrapper's hold on its IR handle (tether_handle_hold: no pin slot per wrapper): 0, or -1 when
 * out of memory. The wrapper's `pin` field is 0 while it holds, -1 when it does not. */
static inline intptr_t tpy_hold(void *h) { return tether_handle_hold(h) == TETHER_OK ? 0 : -1; }
static inline void tpy_release(void *h) { tether_handle_release(h); }

/* PyObject_TypeCheck without a call in the common cases: the class and its tp_base chain
 * (IntegerType -> Type, arith.ConstantOp -> ... -> OpView -> _OperationBase) answer both ways when
 * every class on it has one base; a class with several asks PyType_IsSubtype (its MRO). */
/* A sequence's items as a tuple (new reference): PySequence_Fast, except that a list is copied.
 * Converting an item (its __index__, __float__, __bool__) runs Python code that may change the
 * list, and a C loop over the list's items would read past its end or freed items (SIGSEGV);
 * a tuple of the items cannot change under the loop. NULL with TypeError(msg). */
static inline PyObject *tpy_seq_fast(PyObject *o, const char *msg) {
  if (PyTuple_Check(o)) return Py_NewRef(o);
  PyObject *f = PySequence_Fast(o, msg);
  if (!f || PyTuple_Check(f)) return f;
  PyObject *t = PyList_AsTuple(f);
  Py_DECREF(f);
  return t;
}

static inline int tpy_is(PyObject *o, PyTypeObject *t) {
  int single = 1;
  for (PyTypeObject *x = Py_TYPE(o); x; x = x->tp_base) {
    if (x == t) return 1;
    if (!x->tp_bases || PyTuple_GET_SIZE(x->tp_bases) > 1) single = 0;
  }
  return single ? 0 : PyType_IsSubtype(Py_TYPE(o), t);
}

/* The sentinels that end a PyMethodDef and a PyGetSetDef table. */
#define TPY_METHODS_END                                                                            \
  { NULL, NULL, 0, NULL }
#define TPY_GETSET_END                                                                             \
  { NULL, NULL, NULL, NULL, NULL }
/* A METH_FASTCALL | METH_KEYWORDS method (arguments parsed by tpy_fastargs). */
#define TPY_FAST (METH_FASTCALL | METH_KEYWORDS)
#define TPY_FASTFN(f) (PyCFunction)(void (*)(void))(f)
/* isa_<fn>: the `isa` of a tpy_class_def (on the raw pointer) for the C-API predicate fn(Raw). */
#define TPY_ISA(Raw, fn)                                                                           \
  static bool isa_##fn(void *p) { return fn((Raw){p}); }
/* In a function returning PyObject *: a tether call whose status other than TETHER_OK raises
 * (tpy_raise, with the handle h explaining an invalid one) and returns NULL. */
#define TPY_CALL(expr, h)                                                                          \
  do {                                                                                             \
    int rc_ = (expr);                                                                              \
    if (rc_ != TETHER_OK) return TPY_RAISE_RC(rc_, (h));                                           \
  } while (0)

/* ---- module state (state.c) ----------------------------------------------------------------- */

typedef struct {
  PyTypeObject *Context, *Module, *OperationBase, *Operation, *OpView, *Region, *Block, *Value,
      *OpResult, *BlockArgument;
  PyTypeObject *Type, *Attribute, *Location, *TypeID, *PassManager, *InsertionPoint;
  PyTypeObject *List, *Iter, *ClassProperty, *NamedAttribute, *OpAttributeMap, *OpOperand;
  PyTypeObject *Diagnostic, *DiagnosticInfo, *DiagnosticHandler;
  PyTypeObject *AffineExpr, *AffineMap, *IntegerSet;
  PyObject *MLIRError, *InvalidatedError, *CastError;
  PyObject *DiagnosticSeverity; /* the enum class, set by tether/ir.py */
  /* Casters by TypeID (dict: TypeID int -> callable): types, attributes, values. */
  PyObject *type_casters, *attr_casters, *value_casters;
  /* Registered OpView classes by operation name; dialect namespaces seen (dict: name -> bool). */
  PyObject *op_classes, *loaded_namespaces, *dialect_loader;
  /* AttrBuilder's builders by ODS attribute kind (dict, tether/ir.py), which op classes' builders
   * call (ir/ods_builder.c). */
  PyObject *attr_builders;
  /* The other classes and objects, by the layer that makes them (each set once, at init). */
  /* context/ */
  PyTypeObject *DialectRegistry, *DialectDescriptor, *ThreadPool;
  PyObject *global_registry; /* the DialectRegistry every new Context appends */
  /* types/ */
  PyTypeObject *IntegerType, *IntegerAttr, *DenseElementsAttr, *AffineExprList,
      *IntegerSetConstraintList, *IntegerSetConstraint;
  PyTypeObject *dense_array_iterators[8]; /* by element kind (dense.c) */
  /* ir/ */
  PyTypeObject *sequence_types[16]; /* by TPY_LIST_* kind (sequences.c) */
  PyTypeObject *AsmState, *SymbolTable, *InferTypeOpInterface, *InferShapedTypeOpInterface,
      *ShapedTypeComponents, *OdsBuilder;
  PyObject *traceback_loc_fn; /* MLIR 22's loc_tracebacks: the Python function that makes one */
  /* passes/ */
  PyTypeObject *ExternalPass, *PatternRewriter, *PDLResultList, *GreedyRewriteConfig,
      *FrozenRewritePatternSet, *TransformOptions;
  PyObject *PassDisplayMode, *GreedyRewriteStrictness, *GreedySimplifyRegionLevel; /* enums */
  /* dialects/ */
  PyTypeObject *ContractionDimensions, *ConvolutionDimensions;
  PyObject *LevelFormat; /* sparse_tensor's enum */
  /* core/sig.c: _signatures (dict: qualified name -> typed text), filled during the exec. */
  PyObject *signatures;
} TpState;

extern TpState tpy;

/* Adds a type from a spec to the module (under its short name); *out gets a reference. */
int tpy_add_type(PyObject *m, PyType_Spec *spec, PyObject *base, PyTypeObject **out);
/* Adds the methods of defs (a PyMethodDef table) to a class made earlier: a layer above the one
 * that made the class defines methods it owns (ir/ adds the live-operation counts to Context). 0,
 * or -1 with an exception. */
int tpy_add_methods(PyTypeObject *type, PyMethodDef *defs);
/* The same for getters (a PyGetSetDef table): types/ adds Location.attr. */
int tpy_add_getset(PyTypeObject *type, PyGetSetDef *defs);
/* The tp_dealloc of the GC types whose tp_clear releases everything they hold: untrack, clear,
 * free, and release the (heap) type. */
void tpy_gc_dealloc(PyObject *self);

/* core/: the inits of this layer's files (extension.c calls every layer's, in order). */
int tpy_init_errors(PyObject *m);
int tpy_init_collect(PyObject *m);

/* ---- errors (errors.c) ----------------------------------------------------------------------- */

/* Raises the exception for a tether status; handle (may be NULL) explains an invalid handle,
 * arena (may be NULL) supplies MLIR's diagnostics. Returns NULL. */
PyObject *tpy_raise(int rc, const void *handle, tether_arena *arena);
#define TPY_RAISE_RC(rc, h) tpy_raise((rc), (h), tether_handle_arena(h))
/* Raises TypeError "<what> must be <expected>, not <type>". Returns NULL. */
PyObject *tpy_type_error(const char *what, const char *expected, PyObject *got);
/* Raises CastError (TypeError and RuntimeError) with upstream's "Invalid attribute ... when
 * attempting to create an ArrayAttribute" message for `got`. Returns NULL. */
PyObject *tpy_cast_error(PyObject *got);
/* The pending exception of a Python callback becomes upstream's RuntimeError("Exception raised in
 * callback: Type: message"), chained to it. */
void tpy_raise_callback_error(void);
/* Raises MLIRError(message, diagnostics) with diagnostics a list (borrowed). Returns NULL. */
PyObject *tpy_raise_mlir_error(const char *message, PyObject *diagnostics);

/* ---- collection (collect.c) ------------------------------------------------------------------ */

/* Asks for an arena collection at the interpreter's next pending-call check (coalesced). */
void tpy_schedule_collection(void);
/* The arena's notifier: schedules a safe point when the collector queued work. */
void tpy_collect_notifier(void);

/* ---- signatures (sig.c) ---------------------------------------------------------------------- */

/* A signature spec: the one source of a Python-visible callable's signature, as Argument Clinic's
 * spec blocks are CPython's. text is the signature as a stub writes it, types included:
 *   "get(shape: Sequence[int], element_type: Type, loc: Location | None = None) -> VectorType"
 * a class's constructor "Region(context: Context | None = None)", a getter its type alone
 * ("int"); doc is the docstring's body, or NULL. From the text, parsed once (tpy_sig_ready: at
 * import for every spec a table points at, else at first use):
 *  - the parser (tpy_fastargs, tpy_args) reads the parameters: their names, the required ones (no
 *    default: they come first), the positional-only ones (before `/`), the keyword-only ones
 *    (after `*` or `*args`); it keeps its caches here (the names as interned strs, the last
 *    keyword-name tuple and where each of its names goes);
 *  - a table entry's doc points at the spec (TPY_DOC, TPY_SIGDOC, TPY_PROP; a class's Py_tp_doc
 *    slot at its constructor's): tpy_sig_publish, at the end of the module's exec, replaces each
 *    with "name($self, /, shape, element_type, loc=None)\n--\n\n<doc>" (annotations dropped,
 *    as CPython's __text_signature__ wants; a default that is not a literal becomes `...`), so
 *    inspect.signature reads every callable, and publishes _tether._signatures, the typed texts
 *    tools/gen_stubs.py writes the stubs from.
 * next: another form of the same callable (an overload: the first form's doc is the docstring),
 * or NULL. A spec that does not parse fails the import (or its first call), naming it. */
enum { TPY_SIG_MAX = 16, TPY_SIG_KW = 4 };
typedef struct tpy_sig tpy_sig;
struct tpy_sig {
  char magic[8]; /* TPY_SIG_MAGIC: how a table's doc pointer is told from a docstring */
  const char *text, *doc;
  tpy_sig *next;
  /* From text: how many parameters (*args not counted), the first nreq required, the first npos
   * positional (npos -1 until parsed: no call takes the parser's fast path before), the first
   * nposonly positional-only; star: 1 with a *args first (the parameters after it keyword-only),
   * | 2 with a **kwargs (documented only: the parser refuses the spec). */
  signed char n, nreq, npos, nposonly, star, prop;
  /* The last TPY_SIG_KW keyword-name tuples (strong, or NULL): call sites that alternate (a
   * loop creating two kinds of operation) each keep theirs. kwnames[j][k] is parameter
   * kwmap[j][k]; kwnext: the entry the next new tuple replaces. */
  PyObject *kwnames[TPY_SIG_KW];
  signed char kwmap[TPY_SIG_KW][TPY_SIG_MAX];
  unsigned char kwnext;
  struct tpy_sig_info *info; /* the rest of what the text says, NULL until parsed */
};
/* What a spec's text says besides the counts (sig.c makes it; the parser reads the names). */
struct tpy_sig_info {
  char *name;                  /* the callable's name (NULL for a getter) */
  char *names[TPY_SIG_MAX];    /* the parameters' names, for messages */
  PyObject *objs[TPY_SIG_MAX]; /* the same as interned strs */
  char *plain;                 /* the parameters without annotations: "a, b=None, *, c=..." */
  char *docs[3];               /* the docstrings made from it, by kind of callable (sig.c) */
};
#define TPY_SIG_MAGIC "\177tpysig"
/* A spec (static tpy_sig x = TPY_SIG(...);), one with another form, a getter's. */
#define TPY_SIG(text_, doc_)                                                                       \
  { .magic = TPY_SIG_MAGIC, .text = (text_), .doc = (doc_), .npos = -1 }
#define TPY_SIG_OR(text_, doc_, next_)                                                             \
  { .magic = TPY_SIG_MAGIC, .text = (text_), .doc = (doc_), .next = (next_), .npos = -1 }
/* A table's doc (PyMethodDef, PyGetSetDef, Py_tp_doc) that is the spec s; one that is a spec no
 * parser reads (METH_NOARGS, METH_O); a getter's (its type, its doc). */
#define TPY_DOC(s) ((char *)&(s))
#define TPY_SIGDOC(text_, doc_) ((char *)&(tpy_sig)TPY_SIG(text_, doc_))
#define TPY_PROP(type_, doc_)                                                                      \
  ((char *)&(tpy_sig){                                                                             \
      .magic = TPY_SIG_MAGIC, .text = (type_), .doc = (doc_), .npos = -1, .prop = 1})

/* The spec a table's doc points at, or NULL for a plain docstring (or none). */
tpy_sig *tpy_sig_of(const char *doc);
/* Parses s's text (and its other forms') once: 1, or 0 with SystemError naming the spec. */
int tpy_sig_ready(tpy_sig *s);
/* A class made from spec (with base, for module m, both may be NULL), PyType_FromModuleAndSpec's
 * new reference: a Py_tp_doc slot that points at the spec of the class's constructor gives the
 * class its docstring and __text_signature__ ("Name(a, b=None)\n--\n\n<doc>"), and
 * tpy_sig_add_ctor the spec. */
PyObject *tpy_type_from_spec(PyObject *m, PyType_Spec *spec, PyObject *base);
/* The docstring of a class named qualname ("tether.ir.IntegerType") whose constructor is s's
 * (shared by classes: X(a) for each), body its docstring's body (NULL: s's doc). PyMem_Malloc'd,
 * or NULL with an exception. */
char *tpy_sig_class_doc(tpy_sig *s, const char *qualname, const char *body);
/* Records that s is type's constructor, for _signatures. 0, or -1 with MemoryError. */
int tpy_sig_add_ctor(PyTypeObject *type, tpy_sig *s);
/* The end of the module's exec: every PyMethodDef and PyGetSetDef reachable from m (its
 * functions, its classes, its submodules' and their classes') whose doc is a spec gets its
 * docstring, and m gets _signatures (dict: "<module>.<name>" -> typed text, the module that holds
 * the function or class, "tether._tether.IntegerType.get_signless", "_quant.QuantizedType.flags",
 * "_llvm.translate_module_to_llvmir", "tether._tether.Region.__init__"; a callable's forms one a
 * line, named as the entry; a getter's "name: T", or "name -> T" without a setter). 0, or -1 with
 * an exception (a spec that does not parse, or names another member than the entry's). */
int tpy_sig_publish(PyObject *m);
/* Adds _tether._parse_signature (what the parser reads of a text; for tests). */
int tpy_init_sig(PyObject *m);

/* ---- arguments (args.c) ---------------------------------------------------------------------- */

/* Fast-call argument parsing by the spec s: out[0..nout) receives the parameters in s's order
 * (borrowed, NULL when not given); nout must be s's parameter count. 1, or 0 with TypeError as
 * CPython's own parsers word it (SystemError for a spec that does not parse or another count).
 * kwnames NULL: positional only (METH_FASTCALL). */
int tpy_fastargs(tpy_sig *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                 PyObject **out, int nout);
/* The same for tp_new and tp_init (an argument tuple and a keyword dict, may be NULL). */
int tpy_args(tpy_sig *s, PyObject *args, PyObject *kw, PyObject **out, int nout);
/* The keyword arguments of a fast call to a function whose spec takes *args (args[0..nargs) are
 * the *args; s's parameters are keyword-only). */
static inline int tpy_fastargs_star(tpy_sig *s, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames, PyObject **out, int nout) {
  return tpy_fastargs(s, args + nargs, 0, kwnames, out, nout);
}
/* The *args of a fast call as a tuple (new reference). */
PyObject *tpy_tuple_of(PyObject *const *items, Py_ssize_t n);
/* The keyword argument `name` of a fast call (borrowed), or NULL: for functions whose
 * signature depends on an argument (tpy_fastargs then parses the one that applies). */
PyObject *tpy_kwarg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *name);

/* Converters: 1 on success, 0 with an exception set. A truth value (any object, as "p" of
 * PyArg_Parse*); integers range-checked (OverflowError, TypeError for a non-int); a str (or bytes)
 * as an MlirStringRef valid while o lives. */
int tpy_arg_bool(PyObject *o, int *out);
int tpy_arg_int64(PyObject *o, const char *what, int64_t *out);
int tpy_arg_intptr(PyObject *o, const char *what, intptr_t *out);
int tpy_arg_int(PyObject *o, const char *what, int *out);
int tpy_arg_uint(PyObject *o, const char *what, unsigned *out);
int tpy_arg_str(PyObject *o, const char *what, MlirStringRef *out);
/* Converters with pybind11's errors, for the classes upstream defines in C++: an int in [lo, hi]
 * (TypeError otherwise, also beyond the range); in [0, 2**32); a sequence that is not a str or
 * bytes, as a list (new reference). tpy_nth writes "name[i]" into buf, for messages. */
int tpy_arg_int_in(PyObject *o, const char *what, long long lo, long long hi, long long *out);
/* The first step of those: an int (TypeError otherwise) as a long long, *overflow set when it
 * does not fit. */
int tpy_arg_index(PyObject *o, const char *what, long long *out, int *overflow);
int tpy_arg_uint_in(PyObject *o, const char *what, unsigned *out);
PyObject *tpy_arg_seq(PyObject *o, const char *what);
const char *tpy_nth(char *buf, size_t size, const char *name, Py_ssize_t i);

/* ---- text out of MLIR (strbuf.c) ------------------------------------------------------------- */

/* A Python str built by an MLIR print callback: pass tpy_strbuf_append and the buffer (zeroed),
 * then finish it (MemoryError if it failed to grow). */
typedef struct {
  char *data;
  size_t len, cap;
  int failed;
} tpy_strbuf;
void tpy_strbuf_append(MlirStringRef s, void *user);
PyObject *tpy_strbuf_finish(tpy_strbuf *b);
PyObject *tpy_strbuf_finish_bytes(tpy_strbuf *b);
/* A str of MLIR's text (invalid UTF-8 replaced). */
PyObject *tpy_str_from_ref(MlirStringRef s);

/* ---- capsules (capsule.c) -------------------------------------------------------------------- */

/* Capsules tether hands out keep their owner alive (the capsule's context is a strong reference);
 * tpy_capsule_owner gives that owner back (borrowed), or NULL for a capsule made elsewhere. */
PyObject *tpy_capsule_with_owner(void *ptr, const char *name, PyObject *owner);
PyObject *tpy_capsule_owner(PyObject *cap);
/* Capsule names in the process's package prefix (capsule.c): tpy_capsule_name("mlir.ir.X._CAPIPtr")
 * is the name tether's capsules carry; tpy_capsule_pointer reads a capsule of that kind made for
 * any installed prefix (PyCapsule_GetPointer's error otherwise). */
const char *tpy_capsule_name(const char *canonical);
void *tpy_capsule_pointer(PyObject *cap, const char *canonical);
PyObject *tpy_fn_capsule_prefix(PyObject *m, PyObject *const *args, Py_ssize_t nargs);

/* ---- wrapper objects (objects.c) ------------------------------------------------------------ */

/* The wrappers (TpHandle, TpOp, TpCtxObj: a header and two words) of classes without the cyclic
 * collector's header come from one free list, as CPython keeps its own: iterating a block, reading
 * `.type`, an attribute or an operand makes one and most are dropped at once (core/objects.c).
 * tpy_obj_alloc gives a new object of type with both words zero (NULL with MemoryError);
 * tpy_obj_free frees one whose fields are released (not the type's reference: the caller's). */
/* The layout every such wrapper has (ir.h and types.h check theirs against it). */
typedef struct {
  PyObject_HEAD void *first;
  intptr_t second;
} TpWrapper;
PyObject *tpy_obj_alloc(PyTypeObject *type);
void tpy_obj_free(PyObject *self);
/* a + b of read-only sequences (IR sequences, affine lists): a list of both, as upstream's
 * sliceable lists. */
PyObject *tpy_concat_as_lists(PyObject *a, PyObject *b);

#endif
