/* tether.h: handles to MLIR IR that cannot dangle.
 *
 * Every MLIR object a binding hands out is reached through a handle allocated in a Boehm-GC heap.
 * A handle keeps its root (the operation, region or block that owns the tree it lives in) and its
 * arena (the MlirContext) alive; when nothing reaches a root any more, its IR is destroyed at the
 * next safe point. Erasing IR invalidates every handle into it. An invalid handle answers every
 * call with TETHER_EINVALID and a reason; no function dereferences freed IR.
 *
 * Conventions (after the MLIR C API and bdwgc):
 *  - Functions return a status: TETHER_OK (0) or a negative error. Results go through out-params,
 *    which are left untouched on failure.
 *  - A NULL handle or out-param is TETHER_EARG. An invalid handle is TETHER_EINVALID.
 *  - Handles are GC objects: keep them in memory the collector scans (stack, registers, GC heap).
 *    To store one in memory the collector does not scan (malloc, a Python object), pin it.
 *  - "Safe point": the call may first destroy IR of the same arena that no handle reaches. That
 *    never affects IR you can reach through a handle. Every function taking an arena or IR handle
 *    is a safe point unless marked [no safe point].
 *  - "May destroy IR": the call itself destroys IR it was asked to (erase).
 *  - Raw access: tether_op_get() & co. give the MLIR object for use with the MLIR C API. It stays
 *    valid while the handle is reachable and valid: keep the handle alive until the last use
 *    (tether_keep_alive). Structural changes (create, insert, move, detach, erase, clone, operand
 *    changes, passes) go through tether; after changing structure through the raw C API, call
 *    tether_revalidate().
 *
 * Threads: an arena and everything reached from it are used by one thread at a time (the caller
 * serializes, e.g. with the GIL). Different arenas may be used concurrently from different
 * threads. Any thread is registered with the collector on its first tether call and unregistered
 * when it exits. See docs/ownership.md.
 */
#ifndef TETHER_H
#define TETHER_H

#include <mlir-c/IR.h>
#include <mlir-c/Interfaces.h>
#include <mlir-c/Pass.h>
#include <mlir-c/Rewrite.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Status codes and invalidity reasons.
 */

#define TETHER_STATUS_LIST(X)                                                                      \
  X(TETHER_OK, 0, "ok")                                                                            \
  X(TETHER_EINVALID, -1, "the handle is invalid")                                                  \
  X(TETHER_EARG, -2, "invalid argument")                                                           \
  X(TETHER_EPARSE, -3, "MLIR could not parse the input")                                           \
  X(TETHER_EVERIFY, -4, "the operation does not verify")                                           \
  X(TETHER_ENOMEM, -5, "out of memory")                                                            \
  X(TETHER_ERANGE, -6, "index out of range")                                                       \
  X(TETHER_ESTATE, -7, "the object is not in a state that allows this")                            \
  X(TETHER_EBUSY, -8, "results of the operation are still used outside it")                        \
  X(TETHER_ECONTEXT, -9, "objects of different arenas or contexts were mixed")                     \
  X(TETHER_EPASS, -10, "the pass pipeline failed")                                                 \
  X(TETHER_ERUNNING, -11,                                                                          \
    "MLIR is running passes, a transform script or the verifier on IR of this arena")              \
  X(TETHER_ESUSPENDED, -12,                                                                        \
    "MLIR is suspended in a callback while it runs on this IR, which may not be removed, moved "   \
    "or rewritten meanwhile")                                                                      \
  X(TETHER_EDEPTH, -13,                                                                            \
    "the IR would nest operations deeper than TETHER_MAX_NESTING levels (MLIR's printer, "         \
    "verifier, walks and destructor recurse once per level)")

/// How deep operations may nest in IR built through libtether (an operation in a region of an
/// operation in a region ...: 1,000 levels). MLIR recurses once per level when it prints,
/// verifies, walks or destroys IR, about 4 KB of stack a level: deeper IR would overflow the
/// stack. Inserting, moving or creating what would nest deeper is TETHER_EDEPTH; text nested
/// deeper than the calling thread's stack holds does not parse (tether_parse_check).
#define TETHER_MAX_NESTING 1000

/// The largest alignment a resource blob may ask for (64 KiB): MLIR allocates a blob's copy at
/// its alignment and the bytecode writer pads to it, so a blob of a few bytes asking for 2 GB
/// (any power of two fits its 32-bit header) costs gigabytes, and where memory is limited ends the
/// process with LLVM's "out of memory". Text whose `dialect_resources` ask for more does not parse
/// (tether_parse_check), nor does text asking for an alignment of 0 (MLIR's allocation then asks
/// for all of memory); the Python bindings refuse both for DenseResourceElementsAttr too.
#define TETHER_MAX_RESOURCE_ALIGNMENT 65536

typedef enum {
#define TETHER__STATUS_ENUM(name, value, text) name = value,
  TETHER_STATUS_LIST(TETHER__STATUS_ENUM)
#undef TETHER__STATUS_ENUM
} tether_status;

/// Text for a status code; never NULL. [no safe point]
const char *tether_strerror(int status);
/// Name of a status code ("TETHER_EINVALID"); never NULL. [no safe point]
const char *tether_status_name(int status);

#define TETHER_REASON_LIST(X)                                                                      \
  X(TETHER_REASON_NONE, 0, "valid")                                                                \
  X(TETHER_REASON_ERASED, 1, "the object was erased")                                              \
  X(TETHER_REASON_PARENT_ERASED, 2, "an ancestor of the object was erased")                        \
  X(TETHER_REASON_REMOVED, 3, "the object was removed by a pass or another change to the IR")      \
  X(TETHER_REASON_DESTROYED, 4, "the IR the object belonged to was destroyed")

typedef enum {
#define TETHER__REASON_ENUM(name, value, text) name = value,
  TETHER_REASON_LIST(TETHER__REASON_ENUM)
#undef TETHER__REASON_ENUM
} tether_reason;

/// Text for a reason; never NULL. [no safe point]
const char *tether_reason_text(tether_reason reason);

/* ---------------------------------------------------------------------------------------------
 * Handle types. IR handles (op, region, block, value) are interned: at most one handle per MLIR
 * object while it is alive, so pointer equality of handles is identity of the IR. Context-owned
 * objects (type, attribute, location) are plain values that keep their arena alive.
 */

typedef struct tether_arena tether_arena;
typedef struct tether_op tether_op;
typedef struct tether_region tether_region;
typedef struct tether_block tether_block;
typedef struct tether_value tether_value;
typedef struct tether_type tether_type;
typedef struct tether_attr tether_attr;
typedef struct tether_loc tether_loc;

typedef enum {
  TETHER_KIND_OP = 0,
  TETHER_KIND_REGION = 1,
  TETHER_KIND_BLOCK = 2,
  TETHER_KIND_VALUE = 3,
  TETHER_KIND_COUNT = 4
} tether_kind;

/// Keeps `handle` reachable up to this point (use after the last use of a raw object taken from
/// it). [no safe point]
#define tether_keep_alive(handle) tether__keep_alive((const void *)(handle))
void tether__keep_alive(const void *handle);

/* ---------------------------------------------------------------------------------------------
 * Arenas. An arena owns (or adopts) one MlirContext and lives while any handle reaches it. When it
 * becomes unreachable, its remaining IR and then its context are destroyed at a later safe point.
 */

/// Creates an arena over a new MlirContext with every upstream dialect registered (loaded on
/// demand). The arena owns the context. On success sets *out.
int tether_arena_create(tether_arena **out);

/// Creates an arena over an existing context. With take_ownership the arena destroys the context
/// when it dies; otherwise the caller must keep the context alive longer than every handle.
/// A context must be adopted by at most one live arena.
int tether_arena_adopt(MlirContext ctx, bool take_ownership, tether_arena **out);

/// The arena's context (borrowed; valid while the arena is reachable). [no safe point]
MlirContext tether_arena_context(tether_arena *a);

/// Text of the MLIR diagnostics emitted by the last failing call on this arena ("" if none).
/// Valid until the next call on the arena. [no safe point]
const char *tether_arena_last_error(tether_arena *a);

/// Allows operations of unregistered dialects in the arena's context.
int tether_arena_allow_unregistered(tether_arena *a, bool allow);

/// Appends reg's dialects and extensions to the arena's context (reg stays the caller's); with
/// load, each dialect reg names is also loaded, as a context does on creation with what it was
/// given (an extension's dialect must be loaded before its C API makes its types).
int tether_arena_append_registry(tether_arena *a, MlirDialectRegistry reg, bool load);

/// Whether MLIR's multithreading is on in the arena's context (MLIR's C API cannot say; some of
/// its setups abort when it is on: IR printing at module scope). [no safe point]
bool tether_arena_multithreaded(tether_arena *a);

/// The live arena over ctx, or NULL if none (a linear search: for bindings that receive raw MLIR
/// objects from other extensions). [no safe point]
tether_arena *tether_arena_of_context(MlirContext ctx);

/// A binding's back-pointer on the arena (e.g. its context object), not traced. [no safe point]
void tether_arena_set_user(tether_arena *a, void *user);
void *tether_arena_get_user(tether_arena *a);

/// Calls cb(kind, raw root, user) for every live root of the arena (an MlirOperation, MlirRegion or
/// MlirBlock pointer by kind). cb must not call tether. [no safe point]
void tether_arena_foreach_root(tether_arena *a,
                               void (*cb)(tether_kind kind, void *root, void *user), void *user);

/// Calls cb(handle, its user pointer, user) for every valid handle of `kind` in the arena's live
/// trees that has a user pointer (tether_handle_set_user): a binding's live wrappers, without a
/// list of its own. cb may set or clear the handle's user pointer; it must not call anything else
/// of tether. Order unspecified. [no safe point]
void tether_arena_foreach_user(tether_arena *a, tether_kind kind,
                               void (*cb)(void *handle, void *handle_user, void *user), void *user);

/* ---------------------------------------------------------------------------------------------
 * Roots: parsing and creating IR. Every new root is owned by the returned handle.
 */

/// Parses a module (top-level operations are wrapped in an implicit builtin.module). The module
/// is a new root. TETHER_EPARSE on bad input (diagnostics in tether_arena_last_error).
int tether_module_parse(tether_arena *a, const char *text, size_t len, tether_op **out);

/// Parses exactly one operation (no implicit module). New root.
int tether_op_parse(tether_arena *a, const char *text, size_t len, tether_op **out);
/// tether_op_parse with the name diagnostics give the source (tether_op_parse: "<tether>"). Text
/// or MLIR bytecode.
int tether_op_parse_named(tether_arena *a, const char *text, size_t len, const char *source_name,
                          tether_op **out);

/// Creates an empty builtin.module at `loc` (NULL: unknown location). New root.
int tether_module_create(tether_arena *a, tether_loc *loc, tether_op **out);

/// Creates an operation from a full MlirOperationState. Operands must be values of IR alive in
/// this arena, successors blocks alive in this arena. Regions in the state must be detached
/// regions created by tether_region_create; ownership of them moves to the new operation and their
/// handles now refer to its regions. state->regions NULL with nRegions > 0: the operation gets that
/// many new empty regions (no detached region made and merged for each). The new operation is a
/// root. TETHER_ECONTEXT when anything
/// belongs to another context; TETHER_EARG when a region is not a detached tether region or
/// result types could not be inferred (diagnostics in tether_arena_last_error).
int tether_op_create(tether_arena *a, const MlirOperationState *state, tether_op **out);
/// The same, and the new operation is inserted into block before `before` (NULL: at the end of the
/// block), as tether_op_create followed by tether_op_move_before or tether_block_append_op, but
/// without the intermediate root (faster: the path of `Operation.create` at an insertion point).
/// TETHER_EARG when `before` is not in block or a region in the state holds block.
int tether_op_create_at(tether_arena *a, const MlirOperationState *state, tether_block *block,
                        tether_op *before, tether_op **out);

/// The same, with the operands and successors given as their handles (state->operands and
/// state->successors are ignored): what a binding holding handles passes. Each handle's tree is
/// known, so none is searched for. block may be NULL: the new operation is then a root, as with
/// tether_op_create. TETHER_EINVALID when an operand or successor is invalid.
int tether_op_create_from(tether_arena *a, const MlirOperationState *state,
                          tether_value *const *operands, tether_block *const *successors,
                          tether_block *block, tether_op *before, tether_op **out);

/// Creates a detached, empty region. Its handle owns it until it is attached to an operation.
int tether_region_create(tether_arena *a, tether_region **out);

/// Creates a detached block with n argument types and locations (locs may be NULL: unknown).
/// Its handle owns it until it is appended to a region.
int tether_block_create(tether_arena *a, intptr_t n, const MlirType *types,
                        const MlirLocation *locs, tether_block **out);

/* ---------------------------------------------------------------------------------------------
 * Guarded access and handle queries.
 */

/// The MLIR object behind a handle, or TETHER_EINVALID. [no safe point]
int tether_op_get(tether_op *op, MlirOperation *out);
int tether_region_get(tether_region *r, MlirRegion *out);
int tether_block_get(tether_block *b, MlirBlock *out);
int tether_value_get(tether_value *v, MlirValue *out);

/// TETHER_REASON_NONE for a valid handle of any IR kind, else why it is invalid. [no safe point]
tether_reason tether_handle_reason(const void *handle);
/// True if the IR handle is valid. [no safe point]
bool tether_handle_is_valid(const void *handle);
/// The kind of an IR handle. [no safe point]
tether_kind tether_handle_kind(const void *handle);
/// The arena of a valid IR handle, else NULL. [no safe point]
tether_arena *tether_handle_arena(const void *handle);

/// A binding's back-pointer on an IR handle (e.g. its wrapper object), not traced by the
/// collector. Invalidation keeps it. [no safe point]
void tether_handle_set_user(void *handle, void *user);
void *tether_handle_get_user(const void *handle);

/// Keeps an IR handle alive, as tether_pin does, and with it (while the handle is valid) its tree,
/// the IR's ancestors and the arena; for a binding's wrapper objects, which hold handles where the
/// collector cannot see them. Unlike a pin it takes no slot of its own: holds are counted on the
/// handle and on its tree (which takes one pin while any of its handles is held) and move with
/// the handle when its IR moves to another tree. A held handle that is invalidated is kept (with
/// its reason) until its last release. Each hold needs one tether_handle_release.
/// TETHER_ENOMEM when out of memory (or 2^32 - 1 holds). [no safe point]
int tether_handle_hold(void *handle);
void tether_handle_release(void *handle);

/// Raw-pointer wrapping: the interned handle of an MLIR object that belongs to IR alive in this
/// arena (found by walking up to its root). TETHER_EARG if the object is in no live root of the
/// arena. The object must not have been freed: this cannot be checked.
int tether_op_wrap(tether_arena *a, MlirOperation raw, tether_op **out);
int tether_block_wrap(tether_arena *a, MlirBlock raw, tether_block **out);
int tether_region_wrap(tether_arena *a, MlirRegion raw, tether_region **out);
int tether_value_wrap(tether_arena *a, MlirValue raw, tether_value **out);
/// Adoption: the handle of raw, an operation of the arena's context made outside tether (by
/// another binding, an importer, a C extension's mlirModuleCreateParse or mlirOperationCreate)
/// that is in no block. From then on tether owns it as a root of its own, with every lifetime
/// rule: whoever made it must not destroy it. An operation that is already in a live root of the
/// arena gets its interned handle, as tether_op_wrap gives it. TETHER_ECONTEXT for an operation of
/// another context; TETHER_EARG for one inside IR the arena does not hold (in a block of an
/// operation made elsewhere). [no safe point]
int tether_op_adopt(tether_arena *a, MlirOperation raw, tether_op **out);

/* ---------------------------------------------------------------------------------------------
 * Navigation. Every result is the interned handle (same pointer for the same IR object); "none"
 * results (no parent, end of list) are TETHER_OK with *out = NULL.
 */

/// The operation containing op, or NULL for a root.
int tether_op_parent(tether_op *op, tether_op **out);
/// The block containing op, or NULL.
int tether_op_block(tether_op *op, tether_block **out);
/// True if op is the root of its tree (it owns its IR).
int tether_op_is_root(tether_op *op, bool *out);
int tether_op_num_regions(tether_op *op, intptr_t *out);
int tether_op_region(tether_op *op, intptr_t i, tether_region **out);
int tether_op_num_operands(tether_op *op, intptr_t *out);
int tether_op_operand(tether_op *op, intptr_t i, tether_value **out);
int tether_op_num_results(tether_op *op, intptr_t *out);
int tether_op_result(tether_op *op, intptr_t i, tether_value **out);
int tether_op_num_successors(tether_op *op, intptr_t *out);
int tether_op_successor(tether_op *op, intptr_t i, tether_block **out);
/// The next / previous operation in the same block, or NULL.
int tether_op_next(tether_op *op, tether_op **out);
int tether_op_prev(tether_op *op, tether_op **out);

/// The operation owning region r, or NULL for a detached region.
int tether_region_parent(tether_region *r, tether_op **out);
int tether_region_num_blocks(tether_region *r, intptr_t *out);
/// Block i of the region (O(i)).
int tether_region_block(tether_region *r, intptr_t i, tether_block **out);
int tether_region_first_block(tether_region *r, tether_block **out);

/// The region containing block b, or NULL for a detached block.
int tether_block_parent(tether_block *b, tether_region **out);
/// The operation owning b's region, or NULL.
int tether_block_parent_op(tether_block *b, tether_op **out);
int tether_block_next(tether_block *b, tether_block **out);
int tether_block_num_ops(tether_block *b, intptr_t *out);
/// Operation i of the block (O(i)).
int tether_block_op(tether_block *b, intptr_t i, tether_op **out);
int tether_block_first_op(tether_block *b, tether_op **out);
/// The block's terminator, or NULL if its last operation is not one.
int tether_block_terminator(tether_block *b, tether_op **out);
/// Whether b ends in a terminator (what tether_block_terminator finds), without a handle for it;
/// cheap when asked again after same-named ops were appended (insertion at a block's end).
int tether_block_has_terminator(tether_block *b, bool *out);
int tether_block_num_args(tether_block *b, intptr_t *out);
int tether_block_arg(tether_block *b, intptr_t i, tether_value **out);
/// Appends an argument; returns its handle.
int tether_block_add_arg(tether_block *b, MlirType type, MlirLocation loc, tether_value **out);

/// True if v is an operation result (else a block argument).
int tether_value_is_result(tether_value *v, bool *out);
/// The operation defining a result, or NULL for a block argument.
int tether_value_owner_op(tether_value *v, tether_op **out);
/// The block owning an argument, or NULL for a result.
int tether_value_owner_block(tether_value *v, tether_block **out);
/// Result number or argument number.
int tether_value_index(tether_value *v, intptr_t *out);

typedef enum { TETHER_WALK_PRE_ORDER = 0, TETHER_WALK_POST_ORDER = 1 } tether_walk_order;
/// Calls cb on op and every operation nested in it. cb returns 0 to go on, nonzero to stop (the
/// walk then returns that value). cb may mutate the IR: operations it invalidated are skipped.
int tether_op_walk(tether_op *op, tether_walk_order order, int (*cb)(tether_op *, void *),
                   void *user);

/* ---------------------------------------------------------------------------------------------
 * Structural mutation. Ownership moves with the IR: a root inserted somewhere stops being a root
 * and its handles now keep the new tree alive; a detached operation becomes a root.
 */

/// Inserts root op at position pos of block b (pos == number of ops: append). op must be a root
/// (TETHER_ESTATE otherwise: detach it or use tether_op_move_*); TETHER_EARG if b is inside op.
int tether_block_insert_op(tether_block *b, intptr_t pos, tether_op *op);
int tether_block_append_op(tether_block *b, tether_op *op);
/// Moves op (a root or inside any tree of the arena) right before / after ref.
int tether_op_move_before(tether_op *op, tether_op *ref);
int tether_op_move_after(tether_op *op, tether_op *ref);
/// Removes op from its block; it becomes a root owned by its handle. No-op for a root.
int tether_op_detach(tether_op *op);
/// Detaches a block from its region: it becomes the root of a new tree (as a block made by
/// tether_block_create), with the handles of everything in it. Branches to it and uses of its
/// values from outside stay (the IR then fails verification until they are resolved).
int tether_block_detach(tether_block *b);
/// Appends detached block b to region r; the block's ownership moves to the region's tree.
/// TETHER_ESTATE if b already belongs to a region.
int tether_region_append_block(tether_region *r, tether_block *b);
/// Inserts detached block b at position pos of r.
int tether_region_insert_block(tether_region *r, intptr_t pos, tether_block *b);
/// Creates a block with n argument types and locations (locs may be NULL: unknown) at the end of
/// region r: tether_block_create then tether_region_append_block in one step, without the
/// detached block's tree (the cheap way to build bodies).
int tether_region_append_new_block(tether_region *r, intptr_t n, const MlirType *types,
                                   const MlirLocation *locs, tether_block **out);
/// Erases op and everything in it, now. op becomes invalid with TETHER_REASON_ERASED, every
/// handle into it with TETHER_REASON_PARENT_ERASED. TETHER_EBUSY (nothing changes) if a result
/// of op or of an op inside it is still used outside op. May destroy IR.
int tether_op_erase(tether_op *op);
/// Clones op (with its regions) into a new root.
int tether_op_clone(tether_op *op, tether_op **out);
/// Replaces operand i of op.
int tether_op_set_operand(tether_op *op, intptr_t i, tether_value *v);
/// Replaces every use of `of` with `with`.
int tether_value_replace_all_uses(tether_value *of, tether_value *with);
/// Replaces every use of `of` with `with` except the uses by the n_except operations of `except`
/// (which may be anywhere: a use by an operation that is not listed is replaced). TETHER_EARG for
/// a negative count or a null array with a positive one; each listed handle is checked as an
/// operation of the same arena (nothing changes when one is not).
int tether_value_replace_uses_except(tether_value *of, tether_value *with, tether_op *const *except,
                                     intptr_t n_except);
/// Replaces the uses of `of` among op's own operands with `with` (nothing when op does not use it).
int tether_op_replace_uses_of(tether_op *op, tether_value *of, tether_value *with);

/// After changing the structure of the tree containing `handle` through the raw C API:
/// invalidates (TETHER_REASON_REMOVED) the handles whose objects are no longer in the tree. An
/// object freed and replaced by another at the same address with the same operation name cannot
/// be told apart (docs/ownership.md).
int tether_revalidate(void *handle);
/// Tells the arena that IR of a was changed through the raw C API in a way that keeps every handle
/// right (attributes, types, locations, successors, block arguments): tether remembers which trees
/// are known to verify (parsed, or verified since the last change of the arena's IR) and skips
/// their verification; after this call nothing is known to verify. Structural changes need
/// tether_revalidate instead (which implies this). [no safe point]
void tether_arena_touch(tether_arena *a);

/* ---------------------------------------------------------------------------------------------
 * MLIR on the arena's IR: verification, printing, passes, transform scripts, pattern rewrites.
 * Each refuses IR MLIR would crash on (see "Crash guards"); those that let MLIR change IR verify
 * it first and revalidate what it changed.
 *
 * While MLIR verifies, runs passes or a transform script (tether_op_verify, tether_op_run_passes,
 * tether_op_apply_transform, tether_op_merge_symbols, tether_op_apply_patterns), code that a
 * diagnostic handler runs cannot use IR handles of that arena: every call taking one returns
 * TETHER_ERUNNING (guarded access too), as do tether_op_create, tether_op_create_at and the
 * tether_*_wrap functions. The IR may be half rewritten then, and handles to what was removed are
 * invalidated only when the call returns. Types, attributes, locations and new parses stay
 * available.
 */

/// Verifies op. TETHER_EVERIFY with diagnostics in tether_arena_last_error.
int tether_op_verify(tether_op *op);
/// Prints op through cb (flags may be NULL: default printing). IR MLIR's verifier would crash on
/// (tether_handle_has_foreign_uses) prints unverified, in the generic form; so does a tree built or
/// edited by hand that does not verify, even when flags assume it verified (MLIR's custom printers
/// read what is missing): flags then gains PrintGenericOpForm.
int tether_op_print(tether_op *op, MlirOpPrintingFlags flags, MlirStringCallback cb, void *user);

/// Runs pm on op, then revalidates op's tree: handles of objects a pass removed become invalid
/// (TETHER_REASON_REMOVED), the others keep their identity. TETHER_EPASS if the pipeline failed
/// (the tree is revalidated anyway). May destroy IR. Refused first: TETHER_EVERIFY when op does
/// not verify (skipped when its tree is known to verify), TETHER_EBUSY while other trees use its
/// IR, TETHER_EPASS for IR using other trees' values and for MLIR 19's inliner bug
/// (docs/ownership.md, "Cross-tree references, passes and re-entrancy").
int tether_op_run_passes(tether_op *op, MlirPassManager pm);
/// The same with flags. TETHER_PASSES_TRUSTED_INPUT skips the input's verification: the caller
/// vouches that it verifies (MLIR's passes may crash on IR that does not: the one way to crash
/// through this API, for callers that verified themselves).
#define TETHER_PASSES_TRUSTED_INPUT 1u
int tether_op_run_passes_ex(tether_op *op, MlirPassManager pm, unsigned flags);

/* The transform dialect's interpreter (mlirTransformApplyNamedSequence) and symbol merging
 * (mlirMergeSymbolsIntoFromClone), with the guarantees of tether_op_run_passes. */
typedef struct {
  bool expensive_checks;                      /* MLIR's default: true */
  bool enforce_single_top_level_transform_op; /* MLIR's default: true */
} tether_transform_options;

/// Applies the transform script starting at `root` (an operation implementing MLIR's
/// TransformOpInterface, e.g. transform.named_sequence) to `payload`. `module` is a builtin.module:
/// when it does not contain root, MLIR merges a copy of its symbols into root's nearest symbol
/// table first (that table changes). options NULL: MLIR's defaults. flags:
/// TETHER_PASSES_TRUSTED_INPUT skips verifying the inputs.
/// Afterwards the payload's tree (and root's, when symbols were merged into it) is revalidated:
/// handles of objects the transforms removed become invalid (TETHER_REASON_REMOVED), the others
/// keep their identity. A script held in the payload's own tree runs as a copy (the transforms
/// cannot modify the script while it runs; docs/ownership.md, "The transform interpreter").
/// TETHER_EPASS when MLIR reports a failure, or refuses the input: root is not a transform
/// operation, module not a builtin.module, root not nested in an operation, no symbol table to
/// merge into (diagnostics in tether_arena_last_error; the trees are revalidated anyway).
/// Refused first, as tether_op_run_passes: TETHER_ECONTEXT (different arenas), TETHER_EBUSY
/// (another tree uses IR of the payload's tree, or of root's when symbols are merged into it),
/// TETHER_EPASS (IR MLIR would crash on), TETHER_EVERIFY (the payload's tree, module or root's
/// symbol table does not verify). May destroy IR.
int tether_op_apply_transform(tether_op *payload, tether_op *root, tether_op *module,
                              const tether_transform_options *options, unsigned flags);
/// Copies the symbols of `other` into `target` (both operations with the SymbolTable trait),
/// renaming private symbols on conflicts, as MLIR's mergeSymbolsInto does with a clone of other;
/// other does not change. target's tree is revalidated (external function declarations that a
/// definition replaces are erased). TETHER_EPASS with diagnostics when MLIR refuses (two public
/// symbols of one name), when either is not a symbol table, or when other uses values or blocks
/// defined outside it; TETHER_EVERIFY when either does not verify; TETHER_EBUSY while another
/// tree uses IR of target's tree; TETHER_ECONTEXT for different arenas. May destroy IR.
int tether_op_merge_symbols(tether_op *target, tether_op *other);

/* PDL pattern sets and greedy pattern application (mlir-c/Rewrite.h), with the guarantees of
 * tether_op_run_passes. */

/// Compiles the PDL patterns of `module` (a builtin.module holding only pdl.pattern operations)
/// into a frozen pattern set the caller owns (free it with mlirFrozenRewritePatternSetDestroy,
/// before the arena's context goes). MLIR is given a clone: module does not change and stays the
/// caller's (mlirPDLPatternModuleFromModule takes ownership of what it is given). A module with
/// no pattern gives a set that matches nothing. The dialects of the operations the patterns name
/// are loaded first (MLIR 19 frees the name a set holds when its dialect loads after it). The
/// compilation is tried in a forked child first, once per text of the module (tether_probe).
/// TETHER_EVERIFY (diagnostics) when module does not verify (tether_op_verify, with its guards);
/// TETHER_EARG for an operation that is no builtin.module, and, with a diagnostic, for a module
/// holding anything but pdl.pattern or patterns calling native constraint or rewrite functions
/// (none can be registered through the C API: MLIR 19 would call a function that does not exist);
/// TETHER_EPASS (diagnostic) when compiling crashes the child.
int tether_pdl_freeze(tether_op *module, MlirFrozenRewritePatternSet *out);

/// Applies `set` (made in set_context, which the C API cannot ask a set for) greedily to the
/// regions of `module_op`, a builtin.module, folding as it goes (mlirApplyPatternsAndFoldGreedily
/// with MLIR's default configuration), then revalidates module_op's tree: handles of objects the
/// rewrites removed become invalid (TETHER_REASON_REMOVED), the others keep their identity.
/// module_op itself is never replaced. TETHER_OK when the patterns were applied; *converged
/// (converged may be NULL) says whether MLIR reached a fixed point within its iteration limit
/// (false: the IR was rewritten all the same, and is valid as far as MLIR's rewriter goes).
/// A rewrite may build operations MLIR's folders or inference crash on in the same call
/// (operands or attributes missing), or erase operations still used: the application is made
/// first in a forked child, and refused with TETHER_EPASS and a diagnostic when the child dies or
/// runs for 120 s; nothing changes then. What the rewrites built may also crash MLIR's verifier
/// (a linalg op without its region): the tree is treated as holding operations built by hand,
/// its next verification (tether_op_verify, a print, a pass) tried in a child first.
/// flags: TETHER_PASSES_TRUSTED_INPUT skips verifying the input (MLIR's patterns may crash on
/// IR that does not verify); TETHER_PATTERNS_NO_TRIAL skips the child (the caller vouches for
/// the patterns). Refused first, as tether_op_run_passes: TETHER_EARG
/// (no builtin.module, null set or context), TETHER_ECONTEXT (set_context is not the arena's
/// context), TETHER_EBUSY (another tree uses a value or block inside module_op), TETHER_EPASS
/// (IR using other trees' values, a verifier known to crash), TETHER_EVERIFY (module_op does not
/// verify; skipped when its tree is known to verify). May destroy IR.
#define TETHER_PATTERNS_NO_TRIAL 2u
int tether_op_apply_patterns(tether_op *module_op, MlirFrozenRewritePatternSet set,
                             MlirContext set_context, unsigned flags, bool *converged);

/* What tether_op_apply_patterns_ex runs. */
typedef enum {
  TETHER_DRIVER_GREEDY = 0, /* MLIR's greedy driver, folding as it goes */
  TETHER_DRIVER_WALK = 1,   /* MLIR 22's walk driver (mlirWalkAndApplyPatterns): one walk, no
                             * folding; *converged is always true */
} tether_driver;

/// tether_op_apply_patterns on any operation: the patterns apply to the operations nested in op's
/// regions (op itself is never replaced), with the given driver and, for the greedy one, config
/// (config.ptr NULL: MLIR's defaults; used, not taken). On MLIR 19 only the greedy driver on a
/// builtin.module with the default configuration exists (TETHER_EARG otherwise). Flags as
/// tether_op_apply_patterns. A set that calls back into the binding (patterns or PDL functions
/// written in its language; tether_scope_enter) runs that code in the trial child too (output
/// discarded; side effects outside the process, such as files written, happen twice; skip the
/// trial with TETHER_PATTERNS_NO_TRIAL when the callbacks are known to build only valid IR).
/// Refused first as tether_op_apply_patterns, and with TETHER_ESUSPENDED while a callback of an
/// enclosing run forbids rewriting op (tether_scope_enter).
int tether_op_apply_patterns_ex(tether_op *op, MlirFrozenRewritePatternSet set,
                                MlirContext set_context, tether_driver driver,
                                MlirGreedyRewriteDriverConfig config, unsigned flags,
                                bool *converged);

#if defined(TETHER_MLIR_VERSION) && TETHER_MLIR_VERSION >= 22
/* Native functions PDL patterns call by name (pdl.apply_native_constraint,
 * pdl.apply_native_rewrite, pdl.rewrite with a name): MLIR 22's mlirPDLPatternModuleRegister*. MLIR
 * reads the results a function gives by the kinds the call sites declare, without checking them, so
 * a function hands its results over through tether_pdl_results_push, which refuses more results or
 * another kind than the patterns expect; a constraint that succeeds with fewer results is made to
 * fail. MLIR's greedy and walk drivers abort the process when a rewrite function fails, so a
 * rewrite function that fails or gives fewer results succeeds instead, the missing results made up
 * (a unit attribute, the none type, the first value or operation among its arguments), and the
 * caller reports the failure its own way; only when no argument can stand for a missing value or
 * operation does MLIR see the failure (and abort). A function that calls back into a binding
 * brackets its work with tether_scope_enter (TETHER_SCOPE_PDL). */
typedef enum {
  TETHER_PDL_ATTRIBUTE = 0,
  TETHER_PDL_OPERATION = 1,
  TETHER_PDL_TYPE = 2,
  TETHER_PDL_VALUE = 3,
} tether_pdl_kind;

/* The results of one call of a native function (on the stack of tether's call of it). */
typedef struct tether_pdl_results tether_pdl_results;

typedef MlirLogicalResult (*tether_pdl_callback)(MlirPatternRewriter rewriter,
                                                 tether_pdl_results *results, size_t n,
                                                 MlirPDLValue *values, void *user);

typedef struct {
  MlirStringRef name;
  bool rewrite; /* a rewrite function, else a constraint */
  tether_pdl_callback fn;
  void *user; /* passed to fn; must outlive the set */
} tether_pdl_function;

/// tether_pdl_freeze with the native functions the patterns may call (n of them; fns may be NULL
/// when n is 0). Refused with TETHER_EARG and a diagnostic: a call of a name that is not among
/// them (as a function of its kind; MLIR would call a function that does not exist), a name whose
/// call sites expect different results, results of a range type (which no C API can give) or more
/// than 16. On success *state receives what the set's calls need (the names' expected results):
/// free it with tether_pdl_state_free after destroying the set.
int tether_pdl_freeze_ex(tether_op *module, const tether_pdl_function *fns, intptr_t n,
                         MlirFrozenRewritePatternSet *out, void **state);
/// Frees what tether_pdl_freeze_ex gave (NULL: nothing). [no safe point]
void tether_pdl_state_free(void *state);
/// Gives the next result of a native function's call: raw is the MlirAttribute, MlirOperation,
/// MlirType or MlirValue pointer of that kind. TETHER_ERANGE when the call sites expect no more
/// results, TETHER_EARG for another kind than expected or a null raw. The caller checks that an
/// operation or value belongs to the IR being rewritten (tether_scope_check_result) and that a
/// type or attribute is of its context. [no safe point]
int tether_pdl_results_push(tether_pdl_results *r, tether_pdl_kind kind, const void *raw);
/// How many results the call sites expect, and how many were given so far. [no safe point]
intptr_t tether_pdl_results_expected(const tether_pdl_results *r);
intptr_t tether_pdl_results_given(const tether_pdl_results *r);
/// The kind of expected result i (0 <= i < expected). [no safe point]
tether_pdl_kind tether_pdl_results_kind(const tether_pdl_results *r, intptr_t i);
#endif

/* ---------------------------------------------------------------------------------------------
 * Callbacks: code of the binding that MLIR calls while it runs on IR of an arena, through
 * tether_op_run_passes (passes written in the binding's language: MLIR's external passes) or
 * tether_op_apply_patterns_ex (rewrite patterns and PDL native functions written in it).
 *
 * Such a callback brackets its work with tether_scope_enter and tether_scope_leave. Entering
 * revalidates the tree MLIR runs on (handles of objects MLIR removed so far become invalid, as
 * after a pass) and lifts TETHER_ERUNNING: the arena's handles work again, so the callback reads
 * and changes IR through tether, whose trees stay consistent. What MLIR, suspended, still holds
 * is protected until the callback leaves; what would free or move it is refused with
 * TETHER_ESUSPENDED:
 *  - a pass (TETHER_SCOPE_PASS, op: the operation the pass runs on): erasing, detaching or moving
 *    op or an operation or block enclosing it, and running MLIR (passes, patterns, a transform
 *    script, symbol merging) on an operation enclosing op. Leaving checks what the pass left for
 *    the rest of the pipeline, as tether_op_run_passes checks its input: TETHER_EBUSY when other
 *    trees now use values or blocks inside op, TETHER_EPASS when MLIR's verifier would crash on it,
 *    TETHER_EVERIFY when it does not verify (diagnostics emitted): the binding then fails the pass
 *    (mlirExternalPassSignalFailure), which stops the pipeline before MLIR meets that IR.
 *  - a rewrite pattern (TETHER_SCOPE_PATTERN under the greedy driver, TETHER_SCOPE_WALK under the
 *    walk driver, TETHER_SCOPE_PDL for a PDL native function; op: the operation matched, or any
 *    operation of the IR rewritten for PDL): in the whole tree being rewritten, any erasing,
 *    detaching or moving through tether (MLIR's driver holds its operations: the rewriter does it,
 *    tether_rewriter_*), any new use of its values or blocks by IR of another tree, and running
 *    MLIR on it. Everything else (reading, creating operations in it, changing attributes or
 *    operands within it, other trees) works.
 * A scope lives on the callback's stack, entered and left on the thread that started the run;
 * scopes nest (a callback may start another run on IR the scopes allow). A callback that MLIR
 * makes outside a run tether started (a pass manager or pattern set handed to other code) cannot
 * enter: TETHER_ESTATE.
 */
typedef enum {
  TETHER_SCOPE_PASS = 1,
  TETHER_SCOPE_PATTERN = 2,
  TETHER_SCOPE_WALK = 3,
  TETHER_SCOPE_PDL = 4,
} tether_scope_kind;

/* Opaque to the caller (fields for the arena). */
typedef struct tether_scope {
  struct tether_scope *outer;
  void *run;
  tether_arena *arena;
  MlirOperation op;
  MlirRewriterBase rewriter;
  int kind, running, left;
  uint64_t epoch;
} tether_scope;

/// Enters a callback scope of `kind` on arena a for op, the operation MLIR gave the callback (a
/// pass's operation, a pattern's match; any operation of the IR rewritten for TETHER_SCOPE_PDL),
/// with the pattern rewriter MLIR gave it (rewriter.ptr NULL for a pass). TETHER_ESTATE (nothing
/// entered) when no run of a's tether started on this thread is suspended in this callback: MLIR
/// runs a pass manager or pattern set that other code was given, or op is not in the IR it runs on.
int tether_scope_enter(tether_arena *a, tether_scope_kind kind, MlirOperation op,
                       MlirRewriterBase rewriter, tether_scope *s);
/// Leaves the scope (the innermost one of its arena): MLIR may go on. TETHER_OK, or for a pass the
/// statuses above (the scope is left all the same). Leaving twice is TETHER_EARG.
int tether_scope_leave(tether_scope *s);
/// TETHER_OK when s is entered and the innermost scope of its arena (its rewriter may be used),
/// else TETHER_ESTATE. [no safe point]
int tether_scope_check(const tether_scope *s);

/// The rewriter of a pattern scope (TETHER_SCOPE_PATTERN or TETHER_SCOPE_WALK, the innermost one)
/// erases op, which must be nested in the operation the patterns apply to (under the walk driver:
/// the matched operation itself), through MLIR's rewriter, which tells the driver; handles into op
/// become invalid first (TETHER_REASON_ERASED, TETHER_REASON_PARENT_ERASED). TETHER_EBUSY when a
/// result of op or of an operation inside it is still used outside op; TETHER_ESTATE for a scope
/// that is not the innermost or of another kind, TETHER_EARG for op out of reach.
int tether_rewriter_erase_op(tether_scope *s, tether_op *op);
/// The same, replacing op's results with n values first (one per result, TETHER_EARG otherwise),
/// which must be of the tree being rewritten, not defined inside op. TETHER_EBUSY when values or
/// blocks inside op (other than op's own results) are used outside op, or other trees use op.
int tether_rewriter_replace_op(tether_scope *s, tether_op *op, tether_value *const *values,
                               intptr_t n);
/// The same with the results of with (an operation of the tree being rewritten, not op or inside
/// it, with as many results).
int tether_rewriter_replace_op_with(tether_scope *s, tether_op *op, tether_op *with);
/// Whether the object of an IR handle may be handed to MLIR from inside scope s (a PDL native
/// function's result): TETHER_OK when it is in the tree being rewritten; TETHER_ECONTEXT for
/// another arena; TETHER_ESUSPENDED for IR of another tree (MLIR would make the rewritten IR use
/// it); TETHER_ESTATE for a scope that is not the innermost.
int tether_scope_check_result(const tether_scope *s, const void *handle);

/* ---------------------------------------------------------------------------------------------
 * Crash guards. MLIR 19 aborts or reads memory it does not own on some input its C API gives no
 * way to check. tether's own calls guard themselves (docs/ownership.md, "Inference" and
 * "Verifiers and parsers that crash"); these are the guards for a binding that calls the MLIR C
 * API itself. Where only the call can tell, it is made first in a trial, and for real only when
 * the trial returned: the verification of IR built by hand and risky parses go to the trial
 * helper (`tether-trial` next to libtether_capi.so, a process of its own fed the IR's generic
 * form); the rest, and what the helper cannot reproduce, to a forked child (no output, no core
 * file, a time limit). Verdicts are cached; tether_get_global_stats counts both kinds of trial.
 * What each guard protects against:
 *  - tether_infer: return-type inference reading operands, attributes or regions that are not
 *    there (arith.addi with no operand).
 *  - tether_probe: any other call a binding names by a key (a dialect's region builder).
 *  - tether_parse_check: texts MLIR 19's own parser crashes on; text nested deeper than the
 *    stack holds; resource blobs whose alignment is 0 or more than
 *    TETHER_MAX_RESOURCE_ALIGNMENT.
 *  - tether_handle_has_foreign_uses: verifiers (and printers that verify) climbing from IR that
 *    uses another tree's values into a detached region without a parent; verifiers that need a
 *    parent operation, or that IR built or edited by hand breaks.
 *  - tether_handle_mark_suspect: verifiers assuming what an edit through the raw C API broke.
 *  - tether_op_check_self_contained: the bytecode writer meeting values it did not number.
 * Inside tether, the same machinery (arena/guards/) also guards the inline pass
 * (tether_op_run_passes) and compiling and applying PDL patterns (tether_pdl_freeze,
 * tether_op_apply_patterns).
 */

/* A call of MLIR's return-type inference (mlirInferTypeOpInterfaceInferReturnTypes, or
 * mlirInferShapedTypeOpInterfaceInferReturnTypes when shaped). */
typedef struct {
  MlirContext ctx;
  MlirStringRef name;
  MlirLocation location;
  intptr_t n_operands;
  const MlirValue *operands;
  MlirAttribute attributes; /* a DictionaryAttr, or null */
  intptr_t n_regions;
  const MlirRegion *regions;
  bool shaped;
} tether_infer_call;

/* Makes that call, safely: MLIR's generated inference reads operands, attributes and regions
 * without checking that they exist (arith.addi with no operands reads operands[0]), so the call is
 * tried first in a forked child, once per shape (name, the kinds of the operands' types and of the
 * attributes, the regions' outline), the answer cached for the process; docs/ownership.md,
 * "Inference". types (or components when shaped) receives the result. TETHER_OK; TETHER_EVERIFY
 * when the inference failed (its diagnostics were emitted); TETHER_EARG for bad arguments or when
 * the call would crash (a diagnostic says so at the location). Set TETHER_NO_INFER_PROBE in the
 * environment to skip the child. [no safe point] */
int tether_infer(const tether_infer_call *call, MlirTypesCallback types,
                 MlirShapedTypeComponentsCallback components, void *user);

/* Whether this process is a forked child of a trial (the process that made the call being tried,
 * copied). A binding's callbacks that call into a language runtime should do nothing there: the
 * child of a multithreaded process cannot run Python, for one (its interpreter waits for threads
 * the child does not have). Diagnostics never reach a binding's handlers in such a child. */
bool tether_in_trial_child(void);

/* The trial helper's work: reads requests from in_fd and answers on out_fd until in_fd closes
 * (arena/trial/server.c). The whole of `tether-trial`'s main; a binding does not call it. Returns
 * 0. */
int tether_trial_serve(int in_fd, int out_fd);

/* Runs fn(user) first in a forked child (no output, no core file, killed after 5 s), once per key
 * for the process, and caches the verdict: 1 the call returned there, so the caller may make it
 * for real; 0 it crashed or hung; -1 no child could be made (the verdict is unknown). For calls
 * into MLIR that abort or crash on input the C API cannot check (a dialect's region builder that
 * meets an element type it does not handle). The key must determine whether the call crashes:
 * name the call and print what it depends on into it. Keys never collide with tether_infer's.
 * [no safe point] */
int tether_probe(const void *key, size_t key_len, void (*fn)(void *), void *user);

/* What a text is parsed as, for tether_parse_check. */
typedef enum {
  TETHER_PARSE_TYPE = 1,
  TETHER_PARSE_ATTRIBUTE = 2,
  TETHER_PARSE_MODULE = 3,
  TETHER_PARSE_OPERATION = 4,
} tether_parse_kind;

/* Whether parsing text as kind is safe: TETHER_OK, or TETHER_EPARSE (a diagnostic emitted at an
 * unknown location of ctx) when MLIR's own parser crashes on it. Text nested deeper than the
 * calling thread's free stack allows (8 KB per level of ( [ { < together: about 1,000 levels on
 * an 8 MB stack) is refused: MLIR's parser, printer and verifier recurse once per level. Texts
 * that mention what MLIR 19 is known to crash on are parsed in a child first (tether_probe, once
 * per text); everything else is TETHER_OK at once. tether's parse functions call it; call it before
 * parsing with the C API yourself (mlirTypeParseGet, mlirAttributeParseGet, ...). [no safe point]
 */
int tether_parse_check(MlirContext ctx, tether_parse_kind kind, const char *text, size_t len);

/* True if the IR holding handle (its whole tree) uses a value or a block of another tree (a
 * detached operation, region or block, or another module): a transient state while IR is being
 * assembled. MLIR's verifier, and every printer that verifies first (mlirOperationPrint,
 * mlirBlockPrint, mlirValuePrint, mlirAsmStateCreateFor*), may crash on such IR: print it with
 * mlirOpPrintingFlagsAssumeVerified. tether_op_print and tether_op_verify do this themselves. */
bool tether_handle_has_foreign_uses(const void *handle);
/// Marks the IR holding handle as possibly crashing MLIR's verifier, after an edit through the raw
/// C API that can break what verifiers assume of their parents (an inherent attribute removed or
/// replaced by one of another kind, a value's type changed). Before the next verification, print
/// or pass on that tree, the verifier runs once in a forked child; if it crashes there, tether
/// reports the IR as not verifying (and prints it unverified) instead. Also counts as a change
/// (tether_arena_touch). [no safe point]
int tether_handle_mark_suspect(void *handle);
/// TETHER_OK if op and everything inside it use only values and branch only to blocks defined
/// inside op, and nothing outside uses op's values; TETHER_ESTATE otherwise. MLIR's bytecode writer
/// numbers only what is inside the operation it writes and crashes on anything else. [safe point]
int tether_op_check_self_contained(tether_op *op);
/// True when attr can be the layout of a memref type: it implements MLIR's
/// MemRefLayoutAttrInterface (an affine map, a strided layout, or a dialect's own layout).
/// mlirMemRefTypeGet and mlirMemRefTypeGetChecked crash on any other attribute. [no safe point]
bool tether_attr_is_memref_layout(MlirAttribute attr);

/* ---------------------------------------------------------------------------------------------
 * Context-owned objects. A handle keeps its arena alive; the MLIR value is immortal within it.
 */

int tether_type_parse(tether_arena *a, const char *text, size_t len, tether_type **out);
/// Wraps a type of the arena's context (TETHER_ECONTEXT for another context).
int tether_type_wrap(tether_arena *a, MlirType raw, tether_type **out);
int tether_type_get(tether_type *t, MlirType *out);
int tether_attr_parse(tether_arena *a, const char *text, size_t len, tether_attr **out);
int tether_attr_wrap(tether_arena *a, MlirAttribute raw, tether_attr **out);
int tether_attr_get(tether_attr *t, MlirAttribute *out);
int tether_loc_wrap(tether_arena *a, MlirLocation raw, tether_loc **out);
int tether_loc_unknown(tether_arena *a, tether_loc **out);
int tether_loc_get(tether_loc *t, MlirLocation *out);
/// The arena of a type/attribute/location handle. [no safe point]
tether_arena *tether_type_arena(tether_type *t);
tether_arena *tether_attr_arena(tether_attr *t);
tether_arena *tether_loc_arena(tether_loc *t);

/* ---------------------------------------------------------------------------------------------
 * Pins: keep a handle (of any kind, or an arena) alive from memory the collector does not scan.
 * Thread-safe. [no safe point]
 */

/// Pins obj; returns a slot id (>= 0) for tether_unpin, or TETHER_ENOMEM / TETHER_EARG.
intptr_t tether_pin(void *obj);
/// Releases a pin. Unknown slots are ignored.
void tether_unpin(intptr_t slot);

/// A pin pool: pins without a lock, for a caller that serializes every use of the pool itself (a
/// binding under its interpreter lock pins each wrapper's handle). A pool is never freed; its
/// slots are ids of that pool only. NULL when out of memory.
typedef struct tether_pin_pool tether_pin_pool;
tether_pin_pool *tether_pin_pool_new(void);
/// Pins obj in pool p; returns a slot id (>= 0) for tether_pool_unpin, or TETHER_ENOMEM /
/// TETHER_EARG.
intptr_t tether_pool_pin(tether_pin_pool *p, void *obj);
/// Releases a pin of pool p. Unknown slots are ignored.
void tether_pool_unpin(tether_pin_pool *p, intptr_t slot);

/* ---------------------------------------------------------------------------------------------
 * Collection, safe points, counters.
 */

/// The collector scans the static data of the main program, of tether and of every library except
/// LLVM's, MLIR's and a few others that never hold tether objects. A host whose main program keeps
/// no handle or arena in its static data (a language runtime: the Python binding calls this when
/// imported) calls this once: collections then skip that data (1.4 MB for CPython). Ignored when
/// the main program links libtether_capi.so or has tether linked in: its data may hold handles.
void tether_skip_program_data(void);

/// The same for a shared library, named by the address of anything in it (a function, a
/// variable): its static data holds no handle or arena, and collections skip it (a binding's own
/// extension module, whose statics are caches of its language's objects: 160 KB for the Python
/// binding's, scanned at every collection before). Up to 8 libraries; ignored for libtether.
void tether_skip_library_data(const void *addr);

/// Safe point for arena a (NULL: only what needs no arena): runs queued finalizations and destroys
/// the unreachable IR of a, and of arenas that are themselves unreachable. Cheap when nothing is
/// queued. May destroy IR.
void tether_safepoint(tether_arena *a);

/// For runtimes in which one lock serializes every arena (Python's GIL): a safe point for all
/// live arenas at once. May destroy IR.
void tether_safepoint_all(void);

/// Full collection: collects repeatedly (clearing what it can of the stack) until no more roots
/// or arenas become unreachable, destroying them; a may be NULL. May destroy IR. Conservative GC:
/// an object referenced from a stale stack slot may survive; see docs/ownership.md.
void tether_collect(tether_arena *a);

/// tether_collect for all live arenas at once (same condition as tether_safepoint_all).
void tether_collect_all(void);

/// Called (from the thread that ran a collection, without locks) when finalizations were queued:
/// bindings use it to schedule a safe point (Python: Py_AddPendingCall). NULL: none.
void tether_set_notifier(void (*fn)(void));

typedef struct {
  intptr_t handles[TETHER_KIND_COUNT]; /* live interned IR handles by kind */
  intptr_t roots;                      /* live roots (trees) */
  intptr_t pending;                    /* roots queued for destruction at the next safe point */
  intptr_t stuck;                      /* unreachable roots kept because of a cycle of uses */
  intptr_t destroyed;                  /* roots destroyed so far */
  intptr_t table_slots; /* slots of its trees' intern tables (a pointer each): tables grow with
                         * the handles made between two collections and shrink when their tree
                         * stays idle for a collection cycle (docs/ownership.md) */
} tether_arena_stats;

/// Counters of one arena. [no safe point]
int tether_arena_get_stats(tether_arena *a, tether_arena_stats *out);

typedef struct {
  intptr_t arenas;         /* arenas not yet destroyed */
  intptr_t arenas_pending; /* unreachable arenas waiting for a safe point */
  intptr_t pins;           /* live pins (tether_pin and every pin pool) */
  intptr_t threads;        /* threads tether registered with the collector and that still run */
  intptr_t children;       /* trial calls made in a forked child so far (docs/ownership.md) */
  intptr_t trial_requests; /* trial calls sent to the trial helper so far */
  intptr_t trial_starts;   /* trial helpers started so far (one, unless one died) */
} tether_global_stats;

/// Process-wide counters. [no safe point]
void tether_get_global_stats(tether_global_stats *out);

/// Stops all IR destruction for the rest of the process (called at exit automatically; bindings
/// call it when their runtime shuts down). [no safe point]
void tether_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif /* TETHER_H */
