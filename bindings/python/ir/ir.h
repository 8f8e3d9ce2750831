/* ir.h: the layer of IR wrappers (core.h has the map of the layers): each holds a tether handle.
 *
 *   handle.c           what Region, Block and Value wrappers share
 *   operation.c        operation wrappers (identity, live counts), _OperationBase, Operation
 *   opview.c           OpView and the registry of op classes
 *   module.c           Module (the builtin.module type)
 *   attrmap.c          OpAttributeMap (op.attributes)
 *   printing.c         printing operations (get_asm, print, bytecode), AsmState
 *   create.c           Operation.create, OpView.build_generic, OpView.__init__'s MLIR 22 form; the
 *                      location of a new operation (22's loc_tracebacks)
 *   ods_builder.c      the builders of ODS-generated op classes, from the specs
 *                      gen/ods_builders.py makes of the generated Python
 *   region.c, block.c, value.c   Region; Block; Value, OpResult, BlockArgument, OpOperand
 *   sequences.c        the IR sequences (OperationList, BlockList, ...) and their iterator
 *   insertion_point.c  InsertionPoint
 *   symbols.c          SymbolTable, _GlobalDebug
 *   interfaces.c       InferTypeOpInterface, InferShapedTypeOpInterface, ShapedTypeComponents
 */
#ifndef TETHER_PY_IR_H
#define TETHER_PY_IR_H

#include "../types/types.h"

/* ---- layouts --------------------------------------------------------------------------------- */

/* IR wrappers: Region, Block, Value and subclasses. */
typedef struct {
  PyObject_HEAD void *h;
  intptr_t pin;
} TpHandle;

#define TPY_H(o) (((TpHandle *)(o))->h)

/* Operation and OpView (both _OperationBase), and Module; the first fields are TpHandle's. The
 * handle's user pointer is the Operation object when one lives, else the OpView, else NULL. When
 * both live, the pair is recorded outside the wrappers (operation.c, tpy_op_pair): the OpView holds
 * a strong reference to its Operation object, the Operation a borrowed pointer to its latest
 * OpView. A field for it would cost every wrapper 16 bytes (the next pymalloc size class) for a
 * rare case. */
typedef struct TpOp {
  PyObject_HEAD void *h; /* tether_op */
  intptr_t pin;
} TpOp;

#define TPY_OP(o) ((TpOp *)(o))

/* Module: the handle of its module operation, and the list of live Module objects
 * (Context._get_live_module_count). The live operation objects need no list: they are the user
 * pointers of the arena's operation handles (tether_arena_foreach_user). */
typedef struct TpModule {
  PyObject_HEAD void *h; /* tether_op */
  intptr_t pin;
  struct TpModule *live_prev, *live_next;
} TpModule;

/* Sequences over an operation (its handle, pinned by the list: a view's lists stay with the
 * operation it had when they were made, as upstream's hold the Operation) or a block or region
 * (its wrapper). */
enum {
  TPY_LIST_OPERANDS,
  TPY_LIST_RESULTS,
  TPY_LIST_REGIONS,
  TPY_LIST_SUCCESSORS,
  TPY_LIST_BLOCK_OPS,
  TPY_LIST_BLOCK_ARGS,
  TPY_LIST_REGION_BLOCKS,
#if TETHER_MLIR_VERSION >= 22
  TPY_LIST_BLOCK_SUCCESSORS,   /* a block's successors (its terminator's) */
  TPY_LIST_BLOCK_PREDECESSORS, /* the blocks whose terminators branch to a block */
#endif
  TPY_LIST_KINDS
};
_Static_assert(TPY_LIST_KINDS <= sizeof tpy.sequence_types / sizeof tpy.sequence_types[0],
               "the module state holds a class per kind of sequence");

typedef struct {
  PyObject_HEAD PyObject *owner; /* the Block or Region; NULL for an operation's lists */
  void *op;                      /* an operation's lists: its handle (tether_op) */
  intptr_t pin;                  /* op's pin, or -1 */
  int kind;
  Py_ssize_t start, step, length; /* a slice of the owner's list; length -1: the whole list */
} TpList;

typedef struct {
  PyObject_HEAD PyObject *next; /* the wrapper to return next, or NULL at the end */
  int kind;                     /* TPY_LIST_BLOCK_OPS or TPY_LIST_REGION_BLOCKS */
} TpIter;

_Static_assert(sizeof(TpHandle) == sizeof(TpWrapper) && sizeof(TpOp) == sizeof(TpWrapper),
               "IR wrappers share the wrappers' free list (core/objects.c)");

/* ir/: the inits of this layer's files. */
int tpy_init_insertion_point(PyObject *m);
int tpy_init_operation(PyObject *m);
int tpy_init_opview(PyObject *m);
int tpy_init_create(PyObject *m);
int tpy_init_ods_builder(PyObject *m);
int tpy_init_module(PyObject *m);
int tpy_init_attrmap(PyObject *m);
int tpy_init_printing(PyObject *m);
int tpy_init_region(PyObject *m);
int tpy_init_block(PyObject *m);
int tpy_init_value(PyObject *m);
int tpy_init_sequences(PyObject *m);
int tpy_init_symbols(PyObject *m);
int tpy_init_interfaces(PyObject *m);

/* ---- operations (operation.c, opview.c, module.c, attrmap.c, printing.c, create.c) ---------- */

/* In a method of an operation wrapper (self a TpOp) returning PyObject *: declares `raw`, the
 * operation through the arena's guarded access, or returns NULL with the exception (an OpView
 * never initialized: RuntimeError; an invalid handle: InvalidatedError). */
#define TPY_SELF_OP(self, raw)                                                                     \
  MlirOperation raw;                                                                               \
  do {                                                                                             \
    if (!TPY_OP(self)->h) {                                                                        \
      PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");   \
      return NULL;                                                                                 \
    }                                                                                              \
    int rc_ = tether_op_get(TPY_OP(self)->h, &raw);                                                \
    if (rc_ != TETHER_OK) return TPY_RAISE_RC(rc_, TPY_OP(self)->h);                               \
  } while (0)

/* The same check without the raw operation, for methods that go on through the arena's handle
 * only. */
#define TPY_CHECK_OP(self)                                                                         \
  do {                                                                                             \
    if (!TPY_OP(self)->h) {                                                                        \
      PyErr_SetString(PyExc_RuntimeError, "the OpView was never initialized with an operation");   \
      return NULL;                                                                                 \
    }                                                                                              \
    MlirOperation raw_;                                                                            \
    int rc_ = tether_op_get(TPY_OP(self)->h, &raw_);                                               \
    if (rc_ != TETHER_OK) return TPY_RAISE_RC(rc_, TPY_OP(self)->h);                               \
  } while (0)

/* New references; a NULL handle gives None. tpy_wrap_op returns the operation's OpView (the
 * registered dialect class, or OpView), as upstream's navigation does; tpy_wrap_operation the
 * Operation object. */
PyObject *tpy_wrap_op(tether_op *h);
PyObject *tpy_wrap_operation(tether_op *h);
/* An operation argument (Operation, OpView, Module): its handle and raw operation, checked. */
int tpy_arg_op(PyObject *o, tether_op **h, MlirOperation *raw);

/* The Operation + OpView pairs (operation.c). tpy_op_pair_reserve makes room for one more pair
 * (0, or -1 with MemoryError) so that tpy_op_pair cannot fail: view then holds op (a reference
 * stolen) and is op's latest view. tpy_op_unpair_view forgets view's pair and returns its Operation
 * (a reference the caller owns), or NULL when view has none. */
int tpy_op_pair_reserve(void);
void tpy_op_pair(TpOp *view, TpOp *op);
TpOp *tpy_op_unpair_view(TpOp *view);

/* operation.c: the dealloc of every operation wrapper class; the interned str of an operation's
 * name; the getter and tp_new that Operation, OpView and Module share; Operation.parse. */
void tpy_op_dealloc(TpOp *self);
PyObject *tpy_op_name_str(MlirOperation raw);
PyObject *tpy_op_successors(PyObject *self, void *closure);
PyObject *tpy_opbase_new(PyTypeObject *type, PyObject *args, PyObject *kw);
PyObject *tpy_operation_parse(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames);
extern tpy_sig tpy_operation_parse_sig;
/* Operations and Module objects of arena a with a live Python object (operation.c, module.c);
 * append_to (may be NULL) receives their Operation objects. -1 with an exception. An operation
 * counts while its handle has the object as user pointer: not once it is erased (upstream drops it
 * from its live map then), nor after tpy_clear_live_operations. */
Py_ssize_t tpy_live_operations(tether_arena *a, PyObject *append_to);
Py_ssize_t tpy_live_modules(tether_arena *a);
/* Forgets the identity of the live operation objects of arena a (inside `inside` only, when not
 * NULL): they stay valid, but navigation makes new objects. Returns how many, -1 with an
 * exception. */
Py_ssize_t tpy_clear_live_operations(tether_arena *a, tether_op *inside);
/* opview.c: the class an operation's OpView has (a registered op class, else OpView; borrowed). */
PyObject *tpy_op_view_class(MlirOperation raw);
/* attrmap.c: the getter of op.attributes. */
PyObject *tpy_op_attributes(PyObject *self, void *closure);
/* printing.c: the printing methods of _OperationBase (and Module's str); the MlirAsmState of an
 * AsmState object (NULL with TypeError); the flags of an AsmState (or a print that names values)
 * over the IR holding handle, adjusted so that MLIR cannot crash making it. */
PyObject *tpy_op_get_asm(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *tpy_op_print(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *tpy_op_write_bytecode(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames);
extern tpy_sig tpy_op_get_asm_sig, tpy_op_print_sig, tpy_op_write_bytecode_sig;
PyObject *tpy_op_str(PyObject *self);
MlirAsmState *tpy_arg_asm_state(PyObject *o);
void tpy_asm_flags_for(void *handle, MlirOpPrintingFlags f);
/* create.c: Operation.create and OpView.build_generic, METH_FASTCALL | METH_KEYWORDS. */
PyObject *tpy_op_create(PyObject *cls, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *tpy_opview_build_generic(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames);
extern tpy_sig tpy_op_create_sig, tpy_opview_build_generic_sig;
#if TETHER_MLIR_VERSION >= 22
/* OpView.__init__'s MLIR 22 form: build_generic's work from x = (name, opRegionSpec,
 * operandSegmentSpecObj, resultSegmentSpecObj, results, operands, attributes, successors,
 * regions, loc, ip), each NULL when not given. 0 with the new operation's handle, or -1. */
int tpy_opview_build(PyObject *const *x, tether_op **out);
#endif
/* create.c: an operation from parts its caller converted (ods_builder.c): name (a str), loc (a
 * Location, as tpy_creation_loc gives it), ip (NULL or None: the current insertion point; False:
 * none), results (infer: none, inferred), operands and successors as handles, attributes of loc's
 * context, n_regions new empty regions. The checks and errors of Operation.create's last step. 0
 * with the new operation's handle in *out, or -1. */
typedef struct {
  PyObject *name, *loc, *ip;
  int infer;
  MlirType *results;
  Py_ssize_t n_results;
  tether_value **operands;
  Py_ssize_t n_operands;
  MlirNamedAttribute *attrs;
  Py_ssize_t n_attrs;
  tether_block **successors;
  Py_ssize_t n_successors;
  intptr_t n_regions;
} tpy_op_parts;
int tpy_create_parts(const tpy_op_parts *p, tether_op **out);
/* opview.c: self (an OpView) becomes the view of h, an operation just built (as OpView.__init__'s
 * MLIR 22 form makes it). 0, or -1 with an exception. */
int tpy_opview_take(PyObject *self, tether_op *h);
/* ods_builder.c: called for every new OpView subclass: a class whose __init__ is a builder (and
 * __new__ OpView's) is called without a Python frame. */
void tpy_ods_class_setup(PyTypeObject *t);
/* The location of an operation being created: `given` (a Location, or None / NULL), else on MLIR
 * 22 while loc_tracebacks are on one from the Python call stack, else the current Location. New
 * reference, or NULL with RuntimeError (no location) or TypeError. */
PyObject *tpy_creation_loc(PyObject *given);

/* operation.c: 1 if the operation verifies (tether_op_verify), else 0 with MLIRError("Verification
 * failed", diagnostics) or the handle's error. For calls into MLIR that crash on IR that does not
 * verify. */
int tpy_require_verified(tether_op *h);

/* Insertion points (insertion_point.c): where one inserts, its block and the operation to insert
 * before (NULL: the end, which must have no terminator: IndexError as upstream), 0 or -1; and the
 * insertion of a root operation there (ValueError/TypeError on misuse). */
int tpy_ip_target(PyObject *ip, tether_block **block, tether_op **before);
int tpy_ip_insert(PyObject *ip, tether_op *op);

/* ---- regions, blocks, values (handle.c, region.c, block.c, value.c, sequences.c) ------------- */

/* In a method of a region, block or value wrapper (self a TpHandle) returning PyObject *: declares
 * `raw` (of type Raw), the object through the arena's guarded access `getter` (tether_block_get,
 * ...), or returns NULL with InvalidatedError. */
#define TPY_SELF(getter, self, raw, Raw)                                                           \
  Raw raw;                                                                                         \
  do {                                                                                             \
    int rc_ = getter(TPY_H(self), &raw);                                                           \
    if (rc_ != TETHER_OK) return TPY_RAISE_RC(rc_, TPY_H(self));                                   \
  } while (0)

/* The same check without the raw object. */
#define TPY_CHECK(getter, self, Raw)                                                               \
  do {                                                                                             \
    Raw raw_;                                                                                      \
    int rc_ = getter(TPY_H(self), &raw_);                                                          \
    if (rc_ != TETHER_OK) return TPY_RAISE_RC(rc_, TPY_H(self));                                   \
  } while (0)

/* handle.c: the interned wrapper of `type` for handle h (new reference; NULL h: None); a new
 * wrapper that is not interned; what every TpHandle class shares. */
PyObject *tpy_wrap_handle(PyTypeObject *type, void *h);
PyObject *tpy_handle_new(PyTypeObject *type, void *h);
void tpy_handle_dealloc(TpHandle *self);
PyObject *tpy_handle_richcompare(PyObject *a, PyObject *b, int op);
Py_hash_t tpy_handle_hash(PyObject *a);

/* New references; a NULL handle gives None. A value is its interned OpResult or BlockArgument (as
 * the registered value caster makes it); an operand a plain Value, not interned, as upstream's. */
PyObject *tpy_wrap_region(tether_region *h);
PyObject *tpy_wrap_block(tether_block *h);
PyObject *tpy_wrap_value(tether_value *h);
/* tpy_wrap_value of a handle known to be an operation result. */
PyObject *tpy_wrap_result(tether_value *h);
PyObject *tpy_wrap_operand(tether_value *h);
/* Arguments: the handle and raw object, checked through the arena (TypeError, InvalidatedError). */
int tpy_arg_region(PyObject *o, tether_region **h, MlirRegion *raw);
int tpy_arg_block(PyObject *o, tether_block **h, MlirBlock *raw);
int tpy_arg_value(PyObject *o, tether_value **h, MlirValue *raw);
/* block.c: a new detached block of ctx with argument types and locations (locs NULL or None: the
 * current location). */
PyObject *tpy_new_block(PyObject *ctx, PyObject *types, PyObject *locs);
/* A new block of those argument types and locations (as tpy_new_block's) at the end of region r
 * (tether_region_append_new_block), wrapped. */
PyObject *tpy_append_new_block(tether_region *r, PyObject *ctx, PyObject *types, PyObject *locs);

/* sequences.c: a sequence of kind TPY_LIST_* over a block's or region's list (owner: its wrapper)
 * or an operation's (tpy_new_op_list: its handle); iter(sequence) (a block's operations and a
 * region's blocks follow the links, the others index). */
PyObject *tpy_new_list(PyObject *owner, int kind);
PyObject *tpy_new_op_list(tether_op *h, int kind);

/* The operation whose results o is (an OpResultList), or NULL. */
static inline tether_op *tpy_results_list_op(PyObject *o) {
  return tpy_is(o, tpy.List) && ((TpList *)o)->kind == TPY_LIST_RESULTS
             ? (tether_op *)((TpList *)o)->op
             : NULL;
}
PyObject *tpy_list_iter(PyObject *list);

#endif
