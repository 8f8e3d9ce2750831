/* mlir_ext.h: the arena's calls into MLIR's C++ (mlir_ext.cc), for what the C API cannot do.
 * C and C++ both include it. */
#ifndef TETHER_MLIR_EXT_H
#define TETHER_MLIR_EXT_H

#include "../tether.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registered operation names an arena created, so the next creation of the same name needs no
 * lookup (an OperationName's opaque pointer lives as long as the context): a few, by a hash of the
 * name's text, as a frontend alternates between a handful of names (constant, addi, constant...).
 */
enum { TETHER__OPNAMES = 16 };
typedef struct {
  struct {
    void *opaque; /* NULL: empty */
    size_t len;
    char name[47];
    signed char infers; /* implements InferTypeOpInterface: 1, 0, or -1 not yet asked */
  } names[TETHER__OPNAMES];
  /* Default properties of the last few registered operation names created (malloc, made by the
   * op's own initialization): a new operation's properties are copied from these, so ODS defaults
   * that are uniqued attributes (arith's overflow flags) are not looked up again every time. */
  struct {
    void *name; /* OperationName's opaque pointer, or NULL */
    void *blob;
  } props[8];
  unsigned next_props;
  void *empty_dict; /* the context's empty DictionaryAttr (opaque pointer), once asked */
} tether__opname_cache;

/* mlir_ext.cc: destroys the cached default properties (before the context is destroyed). */
void tether__opname_cache_clear(tether__opname_cache *cache);

/* mlir_ext.cc: the inference call as mlirOperationCreate makes it (properties built from the
 * attributes, the real regions), without taking anything from the caller; its copies of the
 * operands and regions are padded with nulls past their counts. opname: the operation's
 * OperationName (opaque pointer), or NULL to look it up by c->name. */
MlirLogicalResult tether__infer_call(const tether_infer_call *c, void *opname,
                                     MlirTypesCallback types,
                                     MlirShapedTypeComponentsCallback components, void *user);
/* mlir_ext.cc: the OperationName (opaque pointer) of `name` in ctx, its dialect loaded first, when
 * it is registered and implements InferTypeOpInterface, else NULL; answered from the cache of
 * operation names after the first time. */
void *tether__opname_infers(MlirContext ctx, MlirStringRef name, tether__opname_cache *cache);
/* mlir_ext.cc: whether op is a registered operation (O(1)). */
bool tether__op_is_registered(MlirOperation op);
/* An operation on a cycle of uses among registered operations of one block of a graph region
 * (an operand defined, directly or through others, by the operation itself: valid IR in a
 * module's body), or null. MLIR's canonicalization does not terminate on some (MLIR 22:
 * arith.addi of a constant and itself). */
MlirOperation tether__registered_cycle(MlirOperation root);
/* mlir_ext.cc: mlirOperationCreate without taking the state's arrays (regions are taken, as
 * there; regions null: nRegions new empty ones), the dialect loaded first, the name looked up once
 * (tether__opname_cache). No result-type inference. */
MlirOperation tether__operation_create(const MlirOperationState *state,
                                       tether__opname_cache *cache);
/* Whether an operation name is a terminator: the names asked about, per arena, by their
 * OperationName's pointer (which lives as long as the context). */
enum { TETHER__TERMINATORS = 16 };
typedef struct {
  struct {
    void *name; /* an OperationName's opaque pointer, or NULL */
    bool is_terminator;
  } names[TETHER__TERMINATORS];
} tether__terminator_cache;

/* mlir_ext.cc: mlirBlockGetTerminator's answer (the last op has the IsTerminator trait), the
 * trait looked up once per name of last op. */
bool tether__block_has_terminator(MlirBlock block, tether__terminator_cache *cache);
/* mlir_ext.cc: a hash of the structure of op that MLIR's verifiers rely on (name, operand and
 * result counts and kinds of types, attribute names and kinds, regions' blocks); never 0. */
uint64_t tether__op_shape(MlirOperation op);
/* mlir_ext.cc: whether a terminator outside op branches to block. */
bool tether__block_used_from_outside(MlirBlock block, MlirOperation op);
/* mlir_ext.cc: appends reg to ctx's registry; with load, also loads each dialect reg names. */
void tether__append_registry(MlirContext ctx, MlirDialectRegistry reg, bool load);
/* mlir_ext.cc: whether multithreading is on in ctx (the C API cannot say). */
bool tether__multithreaded(MlirContext ctx);
/* mlir_ext.cc, around fork(): stops ctx's worker threads (multithreading off; an owned pool is
 * destroyed, its idle workers joined) and gives the pool it had; false when multithreading was
 * off. */
bool tether__fork_quiesce(MlirContext ctx, void **pool);
/* mlir_ext.cc, after fork(): multithreading on again. In the child, a pool given from outside
 * (pool, whose threads do not exist there) is not used: the context stays single-threaded. */
void tether__fork_restore(MlirContext ctx, void *pool, bool child);
/* mlir_ext.cc: the one operation text holds, parsed without verifying it, detached; null when
 * text does not parse to exactly one operation. */
MlirOperation tether__parse_unverified(MlirContext ctx, MlirStringRef text);
/// A module parsed as mlirModuleCreateParse parses one (top-level operations that are not a
/// module are put in one), without verifying it; null when it does not parse.
MlirOperation tether__parse_module_unverified(MlirContext ctx, MlirStringRef text);
/* mlir_ext.cc: fn(namespace, user) for each dialect loaded in ctx. */
void tether__loaded_dialects(MlirContext ctx, void (*fn)(MlirStringRef, void *), void *user);
/* mlir_ext.cc: the line and column of a file location; false for another kind. */
bool tether__file_line_col(MlirLocation loc, unsigned *line, unsigned *col);
/* mlir_ext.cc: emits a diagnostic of severity (MlirDiagnosticSeverity) at loc, with notes. */
void tether__emit_diagnostic(MlirLocation loc, int severity, MlirStringRef message,
                             intptr_t n_notes, const MlirLocation *note_locs,
                             const MlirStringRef *notes);
#ifdef __cplusplus
}
#endif

#endif
