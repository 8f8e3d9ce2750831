/* tether_py.h: every declaration the files of the _tether extension share (and the only place for
 * them: a function that is not static is declared here first, -Wmissing-prototypes checks it).
 *
 * The extension converts between Python and the arena and holds no lifetime logic of its own:
 *  - IR objects (Operation, OpView, Region, Block, Value, Module) hold one pinned tether handle
 *    (the pin is what the collector sees, since Python objects live in malloc memory) and are found
 *    again through the handle's user pointer, so each IR object has at most one Operation wrapper
 *    and at most one OpView while they live.
 *  - Context-owned values (Type, Attribute, Location, AffineExpr, AffineMap, IntegerSet, ...) hold
 *    the raw MLIR pointer and a strong reference to their Context object, whose pin keeps the arena
 *    (and so the MLIRContext) alive.
 *
 * Everything runs under the GIL, which serializes all arenas: that is the arena's threading rule.
 * Every loop over MLIR lists assumes Python code may run at any allocation (the cyclic collector,
 * __del__): it takes what it needs first, or checks the handle again after each call out.
 *
 * Where things are (one file per Python type or tight family; the sections below follow it):
 *   extension.c      the module: assembles the files' inits; tp_add_type, tp_gc_dealloc
 *   errors.c         InvalidatedError, CastError, statuses as exceptions; _set_hooks (MLIRError)
 *   collect.c        collection and safe points: collect(), the arena's notifier
 *   args.c           the argument parser (tp_fastargs, tp_args) and the converters of plain values
 *   strbuf.c         text out of MLIR's print callbacks
 *   capsule.c        _CAPIPtr capsules that keep their owner alive
 *   ctxobj.c         what context-owned values share: layout, ==, hash, `context`, arguments
 *   classes.c        concrete classes from tables, casting by TypeID (register_*_caster)
 *   typeid.c         TypeID
 *   current.c        the thread's current Context / InsertionPoint / Location; class properties
 *   context.c        Context
 *   thread_pool.c    ThreadPool (MLIR 22)
 *   insertion_point.c  InsertionPoint
 *   dialect_registry.c DialectRegistry, DialectDescriptor
 *   locations.c      Location
 *   diagnostics.c    Diagnostic, DiagnosticInfo, DiagnosticHandler; MLIR errors into MLIRError
 *   types.c          Type and the builtin type classes
 *   attributes.c     Attribute, NamedAttribute and the builtin attribute classes
 *   dense.c          the dense elements and dense array attribute classes
 *   affine_expr.c    AffineExpr and its subclasses
 *   affine_map.c     AffineMap, AffineExprList, AffineMapAttr
 *   integer_set.c    IntegerSet, IntegerSetConstraint(List)
 *   operation.c      operation wrappers (identity, live counts), _OperationBase, Operation
 *   opview.c         OpView and the registry of op classes
 *   module.c         Module (the builtin.module type; the extension module is extension.c)
 *   attrmap.c        OpAttributeMap (op.attributes)
 *   printing.c       printing operations (get_asm, print, bytecode), AsmState
 *   create.c         Operation.create, OpView.build_generic, OpView.__init__'s MLIR 22 form;
 *                    the location of a new operation (22's loc_tracebacks)
 *   handle.c         what Region, Block and Value wrappers share
 *   region.c, block.c, value.c   Region; Block; Value, OpResult, BlockArgument, OpOperand
 *   sequences.c      the IR sequences (OperationList, BlockList, ...) and their iterator
 *   passmanager.c    PassManager
 *   symbols.c        SymbolTable, _GlobalDebug
 *   interfaces.c     InferTypeOpInterface, InferShapedTypeOpInterface, ShapedTypeComponents
 *   dialect_types.c  the transform, pdl, gpu, nvgpu and llvm types (_tether._transform, ...)
 *   dialect_quant.c, dialect_sparse_tensor.c   quant's types, sparse_tensor's EncodingAttr
 *   dialects22.c     the C parts of dialects new in MLIR 22's bindings (_tether._smt, ...)
 *   execution_engine.c, transform_interpreter.c, rewrite.c, linalg.c   _tether's submodules
 *   patterns.c       MLIR 22's Python rewrite patterns, PatternRewriter, GreedyRewriteConfig
 */
#ifndef TETHER_PY_H
#define TETHER_PY_H

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
extern tether_pin_pool *tp_pins;
static inline intptr_t tp_pin(void *obj) { return tether_pool_pin(tp_pins, obj); }
static inline void tp_unpin(intptr_t slot) { tether_pool_unpin(tp_pins, slot); }
/* A wrapper's hold on its IR handle (tether_handle_hold: no pin slot per wrapper): 0, or -1 when
 * out of memory. The wrapper's `pin` field is 0 while it holds, -1 when it does not. */
static inline intptr_t tp_hold(void *h) { return tether_handle_hold(h) == TETHER_OK ? 0 : -1; }
static inline void tp_release(void *h) { tether_handle_release(h); }

/* PyObject_TypeCheck without a call in the common cases: the class and its tp_base chain
 * (IntegerType -> Type, arith.ConstantOp -> ... -> OpView -> _OperationBase) answer both ways when
 * every class on it has one base; a class with several asks PyType_IsSubtype (its MRO). */
/* A sequence's items as a tuple (new reference): PySequence_Fast, except that a list is copied.
 * Converting an item (its __index__, __float__, __bool__) runs Python code that may change the
 * list, and a C loop over the list's items would read past its end or freed items (SIGSEGV);
 * a tuple of the items cannot change under the loop. NULL with TypeError(msg). */
static inline PyObject *tp_seq_fast(PyObject *o, const char *msg) {
  if (PyTuple_Check(o)) return Py_NewRef(o);
  PyObject *f = PySequence_Fast(o, msg);
  if (!f || PyTuple_Check(f)) return f;
  PyObject *t = PyList_AsTuple(f);
  Py_DECREF(f);
  return t;
}

static inline int tp_is(PyObject *o, PyTypeObject *t) {
  int single = 1;
  for (PyTypeObject *x = Py_TYPE(o); x; x = x->tp_base) {
    if (x == t) return 1;
    if (!x->tp_bases || PyTuple_GET_SIZE(x->tp_bases) > 1) single = 0;
  }
  return single ? 0 : PyType_IsSubtype(Py_TYPE(o), t);
}

/* The sentinels that end a PyMethodDef and a PyGetSetDef table. */
#define TP_METHODS_END                                                                             \
  { NULL, NULL, 0, NULL }
#define TP_GETSET_END                                                                              \
  { NULL, NULL, NULL, NULL, NULL }
/* A METH_FASTCALL | METH_KEYWORDS method (arguments parsed by tp_fastargs). */
#define TP_FAST (METH_FASTCALL | METH_KEYWORDS)
#define TP_FASTFN(f) (PyCFunction)(void (*)(void))(f)
/* isa_<fn>: the `isa` of a tp_class_def (on the raw pointer) for the C-API predicate fn(Raw). */
#define TP_ISA(Raw, fn)                                                                            \
  static bool isa_##fn(void *p) { return fn((Raw){p}); }
/* In a function returning PyObject *: a tether call whose status other than TETHER_OK raises
 * (tp_raise, with the handle h explaining an invalid one) and returns NULL. */
#define TP_CALL(expr, h)                                                                           \
  do {                                                                                             \
    int rc_ = (expr);                                                                              \
    if (rc_ != TETHER_OK) return TP_RAISE_RC(rc_, (h));                                            \
  } while (0)

/* ---- object layouts -------------------------------------------------------------------------- */

/* IR wrappers: Region, Block, Value and subclasses. */
typedef struct {
  PyObject_HEAD void *h;
  intptr_t pin;
} TpHandle;

#define TP_H(o) (((TpHandle *)(o))->h)

/* Operation and OpView (both _OperationBase), and Module; the first fields are TpHandle's. The
 * handle's user pointer is the Operation object when one lives, else the OpView, else NULL. When
 * both live, the pair is recorded outside the wrappers (operation.c, tp_op_pair): the OpView holds
 * a strong reference to its Operation object, the Operation a borrowed pointer to its latest
 * OpView. A field for it would cost every wrapper 16 bytes (the next pymalloc size class) for a
 * rare case. */
typedef struct TpOp {
  PyObject_HEAD void *h; /* tether_op */
  intptr_t pin;
} TpOp;

#define TP_OP(o) ((TpOp *)(o))

/* Module: the handle of its module operation, and the list of live Module objects
 * (Context._get_live_module_count). The live operation objects need no list: they are the user
 * pointers of the arena's operation handles (tether_arena_foreach_user). */
typedef struct TpModule {
  PyObject_HEAD void *h; /* tether_op */
  intptr_t pin;
  struct TpModule *live_prev, *live_next;
} TpModule;

/* Context-owned values. ctx is a TpContext (strong), NULL only for context-free values (TypeID). */
typedef struct {
  PyObject_HEAD PyObject *ctx;
  void *ptr;
} TpCtxObj;

#define TP_PTR(o) (((TpCtxObj *)(o))->ptr)
#define TP_CTX(o) (((TpCtxObj *)(o))->ctx)

typedef struct TpContext {
  PyObject_HEAD tether_arena *arena;
  intptr_t pin;
  int emit_error_diagnostics;
  PyObject *handlers; /* list of attached DiagnosticHandler objects */
  /* Diagnostics being delivered to this context's handlers (MLIR is iterating its list of
   * handlers: none may be attached or detached until it is done), and the handlers detached
   * meanwhile, still registered with MLIR (a list, or NULL; diagnostics.c). */
  int diag_delivering;
  PyObject *diag_deferred;
  /* Attribute names recently made identifiers (tp_identifier), keyed by the str object (held). */
  struct {
    PyObject *key;
    MlirIdentifier id;
  } idents[16];
  /* Context.enable_multithreading(False) was called; MLIR's multithreading is also off while
   * threads_suspended > 0 (tp_context_threads_suspend). */
  bool threads_off;
  int threads_suspended;
  /* Every available dialect was loaded (the context left through a capsule), or the context was
   * made with load_on_create_dialects: tp_context_expose has nothing to do. */
  bool dialects_exposed;
} TpContext;

/* enable_ir_printing's options (MLIR 22's; MLIR 19 has one configuration). */
typedef struct {
  bool before_all, after_all, module_scope, after_change, after_failure, debug_info, generic;
  intptr_t elements_limit, resource_limit; /* -1: not elided */
  PyObject *tree_dir;                      /* str, or NULL: print to stderr */
} TpIRPrinting;

typedef struct {
  PyObject_HEAD MlirPassManager pm;
  PyObject *context; /* TpContext: keeps the arena alive while the pass manager lives */
  /* What a run on IR of another context carries over to the pipeline it rebuilds there (the C
   * API cannot read it back): enable_verifier's setting, enable_ir_printing and its options, and
   * whether a capsule was handed out (its holder may have changed anything). */
  bool verifier, ir_printing, capsule_given;
  TpIRPrinting printing;
  bool timing;        /* enable_timing (MLIR 22) */
  int statistics;     /* enable_statistics' display mode, -1: off (MLIR 22) */
  bool running;       /* run() is in progress: a pass of it cannot run it again */
  bool python_passes; /* PassManager.add(callable) added passes written in Python (MLIR 22) */
  uint64_t id;        /* what its passes written in Python know it by */
} TpPassManager;

/* Sequences over an operation (its handle, pinned by the list: a view's lists stay with the
 * operation it had when they were made, as upstream's hold the Operation) or a block or region
 * (its wrapper). */
enum {
  TP_LIST_OPERANDS,
  TP_LIST_RESULTS,
  TP_LIST_REGIONS,
  TP_LIST_SUCCESSORS,
  TP_LIST_BLOCK_OPS,
  TP_LIST_BLOCK_ARGS,
  TP_LIST_REGION_BLOCKS,
#if TETHER_MLIR_VERSION >= 22
  TP_LIST_BLOCK_SUCCESSORS,   /* a block's successors (its terminator's) */
  TP_LIST_BLOCK_PREDECESSORS, /* the blocks whose terminators branch to a block */
#endif
  TP_LIST_KINDS
};

typedef struct {
  PyObject_HEAD PyObject *owner; /* the Block or Region; NULL for an operation's lists */
  void *op;                      /* an operation's lists: its handle (tether_op) */
  intptr_t pin;                  /* op's pin, or -1 */
  int kind;
  Py_ssize_t start, step, length; /* a slice of the owner's list; length -1: the whole list */
} TpList;

typedef struct {
  PyObject_HEAD PyObject *next; /* the wrapper to return next, or NULL at the end */
  int kind;                     /* TP_LIST_BLOCK_OPS or TP_LIST_REGION_BLOCKS */
} TpIter;

/* ---- module state (extension.c) -------------------------------------------------------------- */

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
} TpState;

extern TpState tp;

/* Adds a type from a spec to the module (under its short name); *out gets a reference. */
int tp_add_type(PyObject *m, PyType_Spec *spec, PyObject *base, PyTypeObject **out);
/* The tp_dealloc of the GC types whose tp_clear releases everything they hold: untrack, clear,
 * free, and release the (heap) type. */
void tp_gc_dealloc(PyObject *self);

/* Each file adds its classes and functions to the module (in extension.c's order). */
int tp_init_errors(PyObject *m);
int tp_init_collect(PyObject *m);
int tp_init_typeid(PyObject *m);
int tp_init_classes(PyObject *m);
int tp_init_current(PyObject *m);
int tp_init_context(PyObject *m);
int tp_init_thread_pool(PyObject *m);
int tp_init_insertion_point(PyObject *m);
int tp_init_dialect_registry(PyObject *m);
int tp_init_locations(PyObject *m);
int tp_init_diagnostics(PyObject *m);
int tp_init_types(PyObject *m);
int tp_init_attributes(PyObject *m);
int tp_init_dense(PyObject *m);
int tp_init_affine_expr(PyObject *m);
int tp_init_affine_map(PyObject *m);
int tp_init_integer_set(PyObject *m);
int tp_init_operation(PyObject *m);
int tp_init_opview(PyObject *m);
int tp_init_create(PyObject *m);
int tp_init_module(PyObject *m);
int tp_init_attrmap(PyObject *m);
int tp_init_printing(PyObject *m);
int tp_init_region(PyObject *m);
int tp_init_block(PyObject *m);
int tp_init_value(PyObject *m);
int tp_init_sequences(PyObject *m);
int tp_init_passmanager(PyObject *m);
int tp_init_symbols(PyObject *m);
int tp_init_interfaces(PyObject *m);
/* dialect_types.c: the classes of dialect types, in _tether._transform, ._pdl, ... */
int tp_init_dialect_types(PyObject *m);
/* dialect_quant.c, dialect_sparse_tensor.c: quant's types in _tether._quant, sparse_tensor's
 * EncodingAttr in _tether._sparse_tensor. */
int tp_init_dialect_quant(PyObject *m);
int tp_init_dialect_sparse_tensor(PyObject *m);
/* dialects22.c: _tether._smt, ._amdgpu, ._irdl (MLIR 22; nothing on 19). */
int tp_init_dialects22(PyObject *m);
/* execution_engine.c: _tether._ExecutionEngine. */
int tp_init_execution_engine(PyObject *m);
/* transform_interpreter.c: _tether._transform_interpreter. */
int tp_init_transform_interpreter(PyObject *m);
/* linalg.c: _tether._linalg_fill_builtin_region. */
int tp_init_linalg(PyObject *m);
/* rewrite.c: _tether._rewrite (PDLModule, FrozenRewritePatternSet, apply_patterns_...). */
int tp_init_rewrite(PyObject *m);
#if TETHER_MLIR_VERSION >= 22
/* patterns.c: MLIR 22's Python rewriting, in _tether._rewrite too (RewritePatternSet,
 * PatternRewriter, PDLResultList, GreedyRewriteConfig), and the callbacks MLIR makes into Python
 * while patterns apply (rewrite.c applies them). */
int tp_init_patterns(PyObject *rewrite_module);
/* A callable of a pattern set, as MLIR's user data of a pattern or PDL native function: it calls
 * Python only while tether applies the set it belongs to (id), on the thread that does. */
typedef struct {
  PyObject *fn;   /* strong */
  PyObject *name; /* str: a PDL function's name (messages), or NULL */
  uint64_t set_id;
  bool rewrite; /* a PDL rewrite function (MLIR cannot recover from its failure) */
} tp_pyfn;
/* An application of a pattern set in progress on this thread (tp_apply_begin/end around the
 * arena's call): the set's callbacks call Python meanwhile; error receives the first exception
 * one raised. */
typedef struct tp_apply_run {
  struct tp_apply_run *outer;
  uint64_t set_id;
  TpContext *ctx;
  int driver; /* tether_driver */
  PyObject *error;
} tp_apply_run;
void tp_apply_begin(tp_apply_run *r, uint64_t set_id, TpContext *ctx, int driver);
void tp_apply_end(tp_apply_run *r);
/* A new id for a pattern set (its callbacks know it). */
uint64_t tp_pattern_set_id(void);
/* A frozen set (new reference; takes set, pdl_state and fns: freed with it): id and whether its
 * patterns call Python; pdl_state (tether_pdl_freeze_ex) and fns (n PyMem-allocated tp_pyfn
 * structs, the PDL native functions' user data), NULL when none. */
PyObject *tp_frozen_set_new(MlirFrozenRewritePatternSet set, PyObject *ctx, uint64_t id,
                            bool python, void *pdl_state, tp_pyfn *fns, Py_ssize_t n);
/* The PDL native functions' callback (tether_pdl_callback; user: a tp_pyfn). */
MlirLogicalResult tp_pdl_callback(MlirPatternRewriter rewriter, tether_pdl_results *results,
                                  size_t n, MlirPDLValue *values, void *user);
/* A GreedyRewriteConfig argument (None: null config). 1, or 0 with TypeError. */
int tp_arg_greedy_config(PyObject *o, MlirGreedyRewriteDriverConfig *out);
#endif

/* ---- errors (errors.c) ----------------------------------------------------------------------- */

/* Raises the exception for a tether status; handle (may be NULL) explains an invalid handle,
 * arena (may be NULL) supplies MLIR's diagnostics. Returns NULL. */
PyObject *tp_raise(int rc, const void *handle, tether_arena *arena);
#define TP_RAISE_RC(rc, h) tp_raise((rc), (h), tether_handle_arena(h))
/* Raises TypeError "<what> must be <expected>, not <type>". Returns NULL. */
PyObject *tp_type_error(const char *what, const char *expected, PyObject *got);
/* Raises CastError (TypeError and RuntimeError) with upstream's "Invalid attribute ... when
 * attempting to create an ArrayAttribute" message for `got`. Returns NULL. */
PyObject *tp_cast_error(PyObject *got);
/* The pending exception of a Python callback becomes upstream's RuntimeError("Exception raised in
 * callback: Type: message"), chained to it. */
void tp_raise_callback_error(void);

/* ---- collection (collect.c) ------------------------------------------------------------------ */

/* Asks for an arena collection at the interpreter's next pending-call check (coalesced). */
void tp_schedule_collection(void);
/* The arena's notifier: schedules a safe point when the collector queued work. */
void tp_collect_notifier(void);

/* ---- arguments (args.c) ---------------------------------------------------------------------- */

/* Fast-call argument parsing: names[] (NULL-terminated, a static array) in positional order, the
 * first nreq required; at most npos positional (the rest keyword-only). out[i] is borrowed, NULL
 * when not given. 1, or 0 with TypeError. kwnames NULL: positional only (METH_FASTCALL). */
int tp_fastargs(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                const char *const *names, int nreq, int npos, PyObject **out);
/* The same for tp_new and tp_init (an argument tuple and a keyword dict, may be NULL). */
int tp_args(const char *fname, PyObject *args, PyObject *kw, const char *const *names, int nreq,
            int npos, PyObject **out);
/* The keyword arguments of a fast call to a function taking *args (args[0..nargs) are the *args;
 * names[] are keyword-only). */
static inline int tp_fastargs_star(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames, const char *const *names, PyObject **out) {
  return tp_fastargs(fname, args + nargs, 0, kwnames, names, 0, 0, out);
}
/* The *args of a fast call as a tuple (new reference). */
PyObject *tp_tuple_of(PyObject *const *items, Py_ssize_t n);
/* The keyword argument `name` of a fast call (borrowed), or NULL: for functions whose
 * signature depends on an argument (tp_fastargs then parses the one that applies). */
PyObject *tp_kwarg(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *name);

/* Converters: 1 on success, 0 with an exception set. A truth value (any object, as "p" of
 * PyArg_Parse*); integers range-checked (OverflowError, TypeError for a non-int); a str (or bytes)
 * as an MlirStringRef valid while o lives. */
int tp_arg_bool(PyObject *o, int *out);
int tp_arg_int64(PyObject *o, const char *what, int64_t *out);
int tp_arg_intptr(PyObject *o, const char *what, intptr_t *out);
int tp_arg_int(PyObject *o, const char *what, int *out);
int tp_arg_uint(PyObject *o, const char *what, unsigned *out);
int tp_arg_str(PyObject *o, const char *what, MlirStringRef *out);
/* Converters with pybind11's errors, for the classes upstream defines in C++: an int in [lo, hi]
 * (TypeError otherwise, also beyond the range); in [0, 2**32); a sequence that is not a str or
 * bytes, as a list (new reference). tp_nth writes "name[i]" into buf, for messages. */
int tp_arg_int_in(PyObject *o, const char *what, long long lo, long long hi, long long *out);
/* The first step of those: an int (TypeError otherwise) as a long long, *overflow set when it
 * does not fit. */
int tp_arg_index(PyObject *o, const char *what, long long *out, int *overflow);
int tp_arg_uint_in(PyObject *o, const char *what, unsigned *out);
PyObject *tp_arg_seq(PyObject *o, const char *what);
const char *tp_nth(char *buf, size_t size, const char *name, Py_ssize_t i);

/* ---- text out of MLIR (strbuf.c) ------------------------------------------------------------- */

/* A Python str built by an MLIR print callback: pass tp_strbuf_append and the buffer (zeroed),
 * then finish it (MemoryError if it failed to grow). */
typedef struct {
  char *data;
  size_t len, cap;
  int failed;
} tp_strbuf;
void tp_strbuf_append(MlirStringRef s, void *user);
PyObject *tp_strbuf_finish(tp_strbuf *b);
PyObject *tp_strbuf_finish_bytes(tp_strbuf *b);
/* A str of MLIR's text (invalid UTF-8 replaced). */
PyObject *tp_str_from_ref(MlirStringRef s);

/* ---- capsules (capsule.c) -------------------------------------------------------------------- */

/* Capsules tether hands out keep their owner alive (the capsule's context is a strong reference);
 * tp_capsule_owner gives that owner back (borrowed), or NULL for a capsule made elsewhere. */
PyObject *tp_capsule_with_owner(void *ptr, const char *name, PyObject *owner);
PyObject *tp_capsule_owner(PyObject *cap);
/* Capsule names in the process's package prefix (capsule.c): tp_capsule_name("mlir.ir.X._CAPIPtr")
 * is the name tether's capsules carry; tp_capsule_pointer reads a capsule of that kind made for any
 * installed prefix (PyCapsule_GetPointer's error otherwise). */
const char *tp_capsule_name(const char *canonical);
void *tp_capsule_pointer(PyObject *cap, const char *canonical);
PyObject *tp_fn_capsule_prefix(PyObject *m, PyObject *const *args, Py_ssize_t nargs);

/* ---- context-owned values (ctxobj.c, classes.c, typeid.c) ------------------------------------ */

/* The wrappers (TpHandle, TpOp, TpCtxObj: a header and two words) of classes without the cyclic
 * collector's header come from one free list, as CPython keeps its own: iterating a block, reading
 * `.type`, an attribute or an operand makes one and most are dropped at once (ctxobj.c).
 * tp_obj_alloc gives a new object of type with both words zero (NULL with MemoryError);
 * tp_obj_free frees one whose fields are released (not the type's reference: the caller's). */
PyObject *tp_obj_alloc(PyTypeObject *type);
void tp_obj_free(PyObject *self);

/* A new value object of `type` (new reference). */
PyObject *tp_ctxobj_new(PyTypeObject *type, PyObject *ctx, const void *ptr);
void tp_ctxobj_dealloc(PyObject *self);
/* Py_tp_richcompare and Py_tp_hash of every value class: == when of the same family (Type,
 * Attribute, ...) and the same MLIR value; hashed by the MLIR pointer. */
PyObject *tp_ctxobj_richcompare(PyObject *a, PyObject *b, int op);
Py_hash_t tp_ctxobj_hash(PyObject *a);
/* Getters of every value class: `context`, and `_CAPIPtr` with the capsule's name as the
 * PyGetSetDef closure (a capsule that keeps the value alive). */
PyObject *tp_ctxobj_context(PyObject *self, void *closure);
PyObject *tp_ctxobj_capsule(PyObject *self, void *capsule_name);
/* "cls(str(self))", as upstream's repr of the affine values. */
PyObject *tp_ctxobj_repr(PyObject *self, const char *cls);
/* Whether two Context objects stand for one arena. */
int tp_same_context(PyObject *a, PyObject *b);

/* Value arguments: 1 on success, 0 with an exception set. ctx (may be NULL) receives the value's
 * Context object (borrowed). The _in forms: the value must belong to `ctx` (ValueError). */
int tp_arg_type(PyObject *o, MlirType *raw, PyObject **ctx);
int tp_arg_attr(PyObject *o, MlirAttribute *raw, PyObject **ctx);
int tp_arg_loc(PyObject *o, MlirLocation *raw, PyObject **ctx);
int tp_arg_type_in(PyObject *o, PyObject *ctx, MlirType *raw);
int tp_arg_attr_in(PyObject *o, PyObject *ctx, MlirAttribute *raw);
int tp_arg_loc_in(PyObject *o, PyObject *ctx, MlirLocation *raw);
/* Sequences of types / attributes / locations of ctx into a PyMem array (free with PyMem_Free). */
int tp_seq_types(PyObject *seq, PyObject *ctx, intptr_t *n, MlirType **out);
int tp_seq_attrs(PyObject *seq, PyObject *ctx, intptr_t *n, MlirAttribute **out);
int tp_seq_locs(PyObject *seq, PyObject *ctx, intptr_t *n, MlirLocation **out);

/* Concrete subclasses of a family (Type, Attribute, AffineExpr, ...): defined by a table, created
 * at module init (classes.c). `isa` receives the raw pointer; `type_id` (may be NULL) gives the
 * static TypeID registered as the class's caster and published as `static_typeid`. */
typedef struct tp_class_def {
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
} tp_class_def;

/* Creates every class of `defs` (NULL-name terminated) as subclasses of `family`, adds them to the
 * module and registers those with a typeid in `casters` (may be NULL). */
int tp_define_classes(PyObject *m, PyTypeObject *family, tp_class_def *defs, PyObject *casters);
#if TETHER_MLIR_VERSION >= 22
/* MLIR's name of a concrete class's values ("builtin.integer": the C API's mlirXGetName), which
 * upstream 22 publishes as the class property `type_name` or `attr_name`. */
typedef struct {
  const char *cls; /* a class of defs */
  MlirStringRef (*name)(void);
} tp_mlir_name;
/* Sets attribute `attr` of the classes of defs (created) named in names (NULL-cls terminated). */
int tp_set_mlir_names(tp_class_def *defs, const char *attr, const tp_mlir_name *names);
#endif
/* The class def of a class created by tp_define_classes (searching the MRO), or NULL. */
tp_class_def *tp_class_def_of(PyTypeObject *cls);
/* tp_init of classes whose tp_new did the work (a cast): a Python subclass's
 * super().__init__(x) must not reach object.__init__. */
int tp_init_noop(PyObject *self, PyObject *args, PyObject *kw);
/* The object of family `base` (tp.Type, tp.Attribute) for ptr, as the class registered for id in
 * casters: tether's own classes are made directly, other casters get the base object. */
PyObject *tp_wrap_cast(PyObject *casters, PyTypeObject *base, PyObject *ctx, const void *ptr,
                       MlirTypeID id);
/* The caster registered for id in casters (borrowed; cached), or NULL (error set, or none). */
PyObject *tp_caster_of(PyObject *casters, MlirTypeID id);
/* caster(obj): obj as a registered caster makes it (new reference; steals obj). */
PyObject *tp_call_caster(PyObject *caster, PyObject *obj);
/* Registers, for a TypeID several classes share, the tuple of those classes (most specific
 * first): values of that TypeID become the first class whose isa holds. */
int tp_register_choice(PyObject *casters, MlirTypeID id, PyObject *classes);
/* o (a new reference, or NULL) as an object of cls, upstream's `cls(o)`, for classes without a
 * caster (new reference; steals o). */
PyObject *tp_cast_to(PyObject *cls, PyObject *o);

/* Wrappers for MLIR values (new references; a null value gives None). Types and attributes are
 * cast to the most specific class registered for their TypeID. The _a forms take an arena instead
 * of a Context object. */
PyObject *tp_wrap_typeid(MlirTypeID id);
PyObject *tp_wrap_type(PyObject *ctx, MlirType t);
PyObject *tp_wrap_attr(PyObject *ctx, MlirAttribute a);
PyObject *tp_wrap_loc(PyObject *ctx, MlirLocation l);
PyObject *tp_wrap_type_a(tether_arena *a, MlirType t);
PyObject *tp_wrap_attr_a(tether_arena *a, MlirAttribute at);
PyObject *tp_wrap_loc_a(tether_arena *a, MlirLocation l);
/* A NamedAttribute for an MLIR one (attributes.c; new reference). */
PyObject *tp_wrap_named_attr(PyObject *ctx, MlirNamedAttribute na);

/* ---- contexts (current.c, context.c, dialect_registry.c, diagnostics.c) ---------------------- */

/* Borrowed current objects of this thread, or NULL (no exception). */
PyObject *tp_current_context(void);
PyObject *tp_current_loc(void);
PyObject *tp_current_ip(void);
/* The TpContext (borrowed) of an explicit context argument, or of the current context when o is
 * NULL or None. NULL with RuntimeError (upstream's message) when there is none. */
TpContext *tp_resolve_context(PyObject *o);
/* The same as a Context object (borrowed): the `context=` argument of a constructor. */
static inline PyObject *tp_context_arg(PyObject *o) { return (PyObject *)tp_resolve_context(o); }
/* The Location object (borrowed) given, or the current one; NULL with RuntimeError. */
PyObject *tp_resolve_loc(PyObject *o);
/* The `with` of Context, InsertionPoint and Location: enter pushes a frame (ip and loc may be
 * NULL: inherited from the frame below when of the same context); exit pops the frame of `self`,
 * RuntimeError("Unbalanced <what> enter/exit") when it is not the top one. 0 or -1. */
enum { TP_FRAME_CONTEXT, TP_FRAME_IP, TP_FRAME_LOC };
int tp_current_push(int kind, PyObject *ctx, PyObject *ip, PyObject *loc);
int tp_current_pop(int kind, PyObject *self, const char *what);
/* Sets a class-level read-only property on cls: fn(cls) computes its value (`X.current`). */
int tp_set_classprop(PyTypeObject *cls, const char *name, PyObject *(*fn)(PyObject *cls));

/* The Context object of an arena (new reference): the one standing for it, else a new one. */
/* Before a raw MLIR object of arena a's context leaves through a capsule (`_CAPIPtr`): loads
 * every available dialect, as upstream's Context() does at once (tether loads a dialect when it is
 * first needed), so that what an extension builds through the C API is registered. */
void tp_context_expose(tether_arena *a);
/* The arena of context c for a capsule handed to `_CAPICreate`: tether's own, or a new arena that
 * adopts a context another binding made (not owned: its maker keeps it alive). NULL with an
 * exception when none can be made. */
tether_arena *tp_arena_for_capsule(MlirContext c);
PyObject *tp_context_of(tether_arena *a);
/* The Context object of a handle's arena (new reference). */
static inline PyObject *tp_context_of_handle(const void *h) {
  return tp_context_of(tether_handle_arena(h));
}
static inline MlirContext tp_ctx_raw(PyObject *ctx) {
  return tether_arena_context(((TpContext *)ctx)->arena);
}
/* The identifier of an attribute name `key` (a str whose text is s) in ctx (a TpContext):
 * mlirIdentifierGet, remembered per context for the str objects it last saw (names repeat: every
 * arith.constant has a "value"). */
MlirIdentifier tp_identifier(PyObject *ctx, PyObject *key, MlirStringRef s);
/* The identifier of str key when ctx's cache holds it (1), else 0. */
int tp_identifier_cached(PyObject *ctx, PyObject *key, MlirIdentifier *out);
/* Loads dialect `name` into ctx: 1, or 0 with ValueError when the context does not know it. */
int tp_load_dialect(MlirContext ctx, const char *name);
/* Context methods whose logic is another file's: dialect_registry.c, diagnostics.c. */
PyObject *tp_context_append_dialect_registry(TpContext *self, PyObject *registry);
void tp_append_global_registry(tether_arena *a);
PyObject *tp_context_get_dialect_descriptor(TpContext *self, PyObject *name);
PyObject *tp_context_attach_diagnostic_handler(TpContext *self, PyObject *callback);
#if TETHER_MLIR_VERSION >= 22
/* thread_pool.c: a ThreadPool argument's pool, which is never destroyed from then on (1, or 0
 * with TypeError); a pool's address as upstream prints it (0x..., or 0). */
int tp_arg_thread_pool(PyObject *o, MlirLlvmThreadPool *out);
PyObject *tp_thread_pool_ptr_str(MlirLlvmThreadPool pool);
#endif
/* Detaches every handler of a Context that goes away. */
void tp_diagnostics_detach_all(TpContext *self);
/* Turns MLIR's multithreading off in ctx while code written in Python runs inside MLIR (passes,
 * rewrite patterns: MLIR would call it from its worker threads, without the GIL, and fork trial
 * children without them), and back to what Context.enable_multithreading asked for after. Nests. */
void tp_context_threads_suspend(TpContext *ctx);
void tp_context_threads_resume(TpContext *ctx);

/* Error capture (diagnostics.c): while attached, error diagnostics of the context are collected
 * as DiagnosticInfo objects (unless the context emits them: emit_error_diagnostics); other
 * severities go on to the context's handlers. */
typedef struct {
  TpContext *ctx;
  PyObject *errors; /* list of DiagnosticInfo */
  MlirDiagnosticHandlerID id;
  int attached;
} tp_errcap;
void tp_errcap_begin(tp_errcap *c, TpContext *ctx);
/* Detaches; returns the list of DiagnosticInfo (new reference; empty when no error came) or NULL
 * when out of memory. */
PyObject *tp_errcap_end(tp_errcap *c);
/* Detaches and drops what was captured (the success paths). */
void tp_errcap_close(tp_errcap *c);
/* Detaches and raises MLIRError(message, diagnostics). Returns NULL. */
PyObject *tp_errcap_raise(tp_errcap *c, const char *message);
/* The start of every parse(asm, context=None) (Module, Type, Attribute): the arguments parsed,
 * the context resolved and the capture begun. 1, or 0 with the exception (nothing to end). */
int tp_parse_begin(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, MlirStringRef *text,
                   TpContext **ctx, tp_errcap *cap);
/* Raises MLIRError(message, diagnostics) with diagnostics a list (borrowed). Returns NULL. */
PyObject *tp_raise_mlir_error(const char *message, PyObject *diagnostics);

/* ---- affine values (affine_expr.c, affine_map.c) --------------------------------------------- */

/* New references; a null value gives None. An expression comes out as its subclass. */
PyObject *tp_wrap_affine_expr(PyObject *ctx, MlirAffineExpr e);
PyObject *tp_wrap_affine_map(PyObject *ctx, MlirAffineMap m);
/* An AffineExpr argument of ctx (ctx NULL: of any context). 1, or 0 with TypeError/ValueError. */
int tp_arg_affine_expr(PyObject *o, PyObject *ctx, MlirAffineExpr *out);
/* The largest dimension and symbol positions an expression uses (-1 when none: start there). */
void tp_affine_max_positions(MlirAffineExpr e, intptr_t *dim, intptr_t *sym);
/* Expressions of ctx from a sequence, each within n_dims dimensions and n_syms symbols, into a
 * PyMem array (free with PyMem_Free); CastError names `action` for a non-expression. 1 or 0. */
int tp_affine_exprs_of(PyObject *list, PyObject *ctx, intptr_t n_dims, intptr_t n_syms,
                       const char *action, intptr_t *n, MlirAffineExpr **out);
/* A count of dimensions, symbols or results: an int in [0, 2**24] (ValueError beyond). */
int tp_affine_arg_count(PyObject *o, const char *what, intptr_t *out);
/* tp_new of the affine classes: they come from get() and its kin only (TypeError). */
PyObject *tp_affine_new_refused(PyTypeObject *t, PyObject *args, PyObject *kw);
/* A read-only sequence class over an AffineMap or IntegerSet (affine_map.c): item(owner, pos)
 * makes element pos; slices are sequences of the same class. */
int tp_affine_list_type(PyObject *m, const char *name, PyTypeObject **out);
PyObject *tp_affine_list_new(PyTypeObject *type, PyObject *owner,
                             PyObject *(*item)(PyObject *owner, intptr_t pos), Py_ssize_t length);

/* ---- operations (operation.c, opview.c, module.c, attrmap.c, printing.c, create.c) ---------- */

/* In a method of an operation wrapper (self a TpOp) returning PyObject *: declares `raw`, the
 * operation through the arena's guarded access, or returns NULL with the exception (an OpView
 * never initialized: RuntimeError; an invalid handle: InvalidatedError). */
#define TP_SELF_OP(self, raw)                                                                      \
  MlirOperation raw;                                                                               \
  do {                                                                                             \
    if (!TP_OP(self)->h) {                                                                         \
      PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");   \
      return NULL;                                                                                 \
    }                                                                                              \
    int rc_ = tether_op_get(TP_OP(self)->h, &raw);                                                 \
    if (rc_ != TETHER_OK) return TP_RAISE_RC(rc_, TP_OP(self)->h);                                 \
  } while (0)

/* New references; a NULL handle gives None. tp_wrap_op returns the operation's OpView (the
 * registered dialect class, or OpView), as upstream's navigation does; tp_wrap_operation the
 * Operation object. */
PyObject *tp_wrap_op(tether_op *h);
PyObject *tp_wrap_operation(tether_op *h);
/* An operation argument (Operation, OpView, Module): its handle and raw operation, checked. */
int tp_arg_op(PyObject *o, tether_op **h, MlirOperation *raw);

/* The Operation + OpView pairs (operation.c). tp_op_pair_reserve makes room for one more pair
 * (0, or -1 with MemoryError) so that tp_op_pair cannot fail: view then holds op (a reference
 * stolen) and is op's latest view. tp_op_unpair_view forgets view's pair and returns its Operation
 * (a reference the caller owns), or NULL when view has none. */
int tp_op_pair_reserve(void);
void tp_op_pair(TpOp *view, TpOp *op);
TpOp *tp_op_unpair_view(TpOp *view);

/* operation.c: the dealloc of every operation wrapper class; the interned str of an operation's
 * name; the getter and tp_new that Operation, OpView and Module share; Operation.parse. */
void tp_op_dealloc(TpOp *self);
PyObject *tp_op_name_str(MlirOperation raw);
PyObject *tp_op_successors(PyObject *self, void *closure);
PyObject *tp_opbase_new(PyTypeObject *type, PyObject *args, PyObject *kw);
PyObject *tp_operation_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames);
/* Operations and Module objects of arena a with a live Python object (operation.c, module.c);
 * append_to (may be NULL) receives their Operation objects. -1 with an exception. An operation
 * counts while its handle has the object as user pointer: not once it is erased (upstream drops it
 * from its live map then), nor after tp_clear_live_operations. */
Py_ssize_t tp_live_operations(tether_arena *a, PyObject *append_to);
Py_ssize_t tp_live_modules(tether_arena *a);
/* Forgets the identity of the live operation objects of arena a (inside `inside` only, when not
 * NULL): they stay valid, but navigation makes new objects. Returns how many, -1 with an
 * exception. */
Py_ssize_t tp_clear_live_operations(tether_arena *a, tether_op *inside);
/* opview.c: the class an operation's OpView has (a registered op class, else OpView; borrowed). */
PyObject *tp_op_view_class(MlirOperation raw);
/* attrmap.c: the getter of op.attributes. */
PyObject *tp_op_attributes(PyObject *self, void *closure);
/* printing.c: the printing methods of _OperationBase (and Module's str); the MlirAsmState of an
 * AsmState object (NULL with TypeError); the flags of an AsmState (or a print that names values)
 * over the IR holding handle, adjusted so that MLIR cannot crash making it. */
PyObject *tp_op_get_asm(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *tp_op_print(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *tp_op_write_bytecode(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames);
PyObject *tp_op_str(PyObject *self);
MlirAsmState *tp_arg_asm_state(PyObject *o);
void tp_asm_flags_for(void *handle, MlirOpPrintingFlags f);
/* create.c: Operation.create and OpView.build_generic, METH_FASTCALL | METH_KEYWORDS. */
PyObject *tp_op_create(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *tp_opview_build_generic(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames);
#if TETHER_MLIR_VERSION >= 22
/* OpView.__init__'s MLIR 22 form: build_generic's work from x = (name, opRegionSpec,
 * operandSegmentSpecObj, resultSegmentSpecObj, results, operands, attributes, successors,
 * regions, loc, ip), each NULL when not given. 0 with the new operation's handle, or -1. */
int tp_opview_build(PyObject *const *x, tether_op **out);
#endif
/* The location of an operation being created: `given` (a Location, or None / NULL), else on MLIR
 * 22 while loc_tracebacks are on one from the Python call stack, else the current Location. New
 * reference, or NULL with RuntimeError (no location) or TypeError. */
PyObject *tp_creation_loc(PyObject *given);

/* dialects22.c: 1 if the operation verifies (tether_op_verify), else 0 with MLIRError("Verification
 * failed", diagnostics) or the handle's error. For calls into MLIR that crash on IR that does not
 * verify. */
int tp_require_verified(tether_op *h);

/* Insertion points (insertion_point.c): where one inserts, its block and the operation to insert
 * before (NULL: the end, which must have no terminator: IndexError as upstream), 0 or -1; and the
 * insertion of a root operation there (ValueError/TypeError on misuse). */
int tp_ip_target(PyObject *ip, tether_block **block, tether_op **before);
int tp_ip_insert(PyObject *ip, tether_op *op);

/* ---- regions, blocks, values (handle.c, region.c, block.c, value.c, sequences.c) ------------- */

/* In a method of a region, block or value wrapper (self a TpHandle) returning PyObject *: declares
 * `raw` (of type Raw), the object through the arena's guarded access `getter` (tether_block_get,
 * ...), or returns NULL with InvalidatedError. */
#define TP_SELF(getter, self, raw, Raw)                                                            \
  Raw raw;                                                                                         \
  do {                                                                                             \
    int rc_ = getter(TP_H(self), &raw);                                                            \
    if (rc_ != TETHER_OK) return TP_RAISE_RC(rc_, TP_H(self));                                     \
  } while (0)

/* handle.c: the interned wrapper of `type` for handle h (new reference; NULL h: None); a new
 * wrapper that is not interned; what every TpHandle class shares. */
PyObject *tp_wrap_handle(PyTypeObject *type, void *h);
PyObject *tp_handle_new(PyTypeObject *type, void *h);
void tp_handle_dealloc(TpHandle *self);
PyObject *tp_handle_richcompare(PyObject *a, PyObject *b, int op);
Py_hash_t tp_handle_hash(PyObject *a);

/* New references; a NULL handle gives None. A value is its interned OpResult or BlockArgument (as
 * the registered value caster makes it); an operand a plain Value, not interned, as upstream's. */
PyObject *tp_wrap_region(tether_region *h);
PyObject *tp_wrap_block(tether_block *h);
PyObject *tp_wrap_value(tether_value *h);
PyObject *tp_wrap_operand(tether_value *h);
/* Arguments: the handle and raw object, checked through the arena (TypeError, InvalidatedError). */
int tp_arg_region(PyObject *o, tether_region **h, MlirRegion *raw);
int tp_arg_block(PyObject *o, tether_block **h, MlirBlock *raw);
int tp_arg_value(PyObject *o, tether_value **h, MlirValue *raw);
/* block.c: a new detached block of ctx with argument types and locations (locs NULL or None: the
 * current location). */
PyObject *tp_new_block(PyObject *ctx, PyObject *types, PyObject *locs);

/* sequences.c: a sequence of kind TP_LIST_* over a block's or region's list (owner: its wrapper)
 * or an operation's (tp_new_op_list: its handle); iter(sequence) (a block's operations and a
 * region's blocks follow the links, the others index); a + b of read-only sequences, a list of
 * both (as upstream's sliceable lists). */
PyObject *tp_new_list(PyObject *owner, int kind);
PyObject *tp_new_op_list(tether_op *h, int kind);

/* The operation whose results o is (an OpResultList), or NULL. */
static inline tether_op *tp_results_list_op(PyObject *o) {
  return tp_is(o, tp.List) && ((TpList *)o)->kind == TP_LIST_RESULTS
             ? (tether_op *)((TpList *)o)->op
             : NULL;
}
PyObject *tp_list_iter(PyObject *list);
PyObject *tp_concat_as_lists(PyObject *a, PyObject *b);

#endif
