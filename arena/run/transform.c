/* transform.c: the transform dialect's interpreter and symbol merging, on the arena.
 *
 * Invariant: as for passes (passes.c, tether_op_run_passes), MLIR changes IR here behind tether's
 * back, so the call is made only on IR MLIR can handle (it verifies, uses no value or block of
 * another tree, has no verifier known to crash), never while another tree uses IR the call may
 * erase, and every tree it may have changed is revalidated after it: handles of removed objects
 * become invalid, the others keep their identity.
 *
 * Transforms are not confined to the payload operation the way passes are to theirs:
 * transform.get_parent_op climbs out of it, so the whole tree of the payload is checked and
 * revalidated. And a script that lives in that tree could be changed while MLIR interprets it
 * (MLIR then reads freed memory: a transform.structured.replace of the running named_sequence
 * crashes upstream's bindings): such a script runs as a copy, outside the payload's tree.
 */
#include "run.h"
#include "../guards/guards.h"

#include <mlir-c/Dialect/Transform/Interpreter.h>
#include <stdlib.h>
#include <string.h>

static int has_parent(MlirOperation op) {
  return !mlirOperationIsNull(mlirOperationGetParentOperation(op));
}

/* 1 if op of tree t verifies: known (its tree verified and nothing of the arena changed since) or
 * checked now (then remembered when op is the tree's root). */
static int verifies(tether__tree *t, MlirOperation op) {
  if (t->verified_epoch == t->arena->epoch) return 1;
  if (!mlirOperationVerify(op)) return 0;
  if (t->root_kind == TETHER_KIND_OP && t->root == op.ptr) {
    t->verified_epoch = t->arena->epoch;
    t->suspect = 0;
  }
  return 1;
}

/* Calls fn on the top-level operations of tree t (its root operation, or the operations of its
 * root region or block) until one returns nonzero; returns that. */
static int each_top_op(tether__tree *t, int (*fn)(tether__tree *, MlirOperation)) {
  if (t->root_kind == TETHER_KIND_OP) return fn(t, (MlirOperation){t->root});
  int block = t->root_kind == TETHER_KIND_BLOCK;
  MlirBlock first = block ? (MlirBlock){t->root} : mlirRegionGetFirstBlock((MlirRegion){t->root});
  for (MlirBlock b = first; !mlirBlockIsNull(b);
       b = block ? (MlirBlock){NULL} : mlirBlockGetNextInRegion(b))
    for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
         o = mlirOperationGetNextInBlock(o)) {
      int r = fn(t, o);
      if (r) return r;
    }
  return 0;
}

static int top_unsafe(tether__tree *t, MlirOperation op) {
  return tether__unsafe_for_mlir(t, op, false);
}
static int top_unsafe_trusted(tether__tree *t, MlirOperation op) {
  return tether__unsafe_for_mlir(t, op, true);
}
static int top_unverified(tether__tree *t, MlirOperation op) { return !verifies(t, op); }
static int top_cycle(tether__tree *t, MlirOperation op) {
  (void)t;
  return tether__fold_cycle_error(op);
}

/* Whether op has the SymbolTable trait. mlirSymbolTableCreate answers, and builds the table from
 * the first block of the one region, which it assumes exist: checked first. */
static int is_symbol_table(MlirOperation op) {
  if (mlirOperationGetNumRegions(op) != 1 ||
      mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0))))
    return 0;
  MlirSymbolTable st = mlirSymbolTableCreate(op);
  if (mlirSymbolTableIsNull(st)) return 0;
  mlirSymbolTableDestroy(st);
  return 1;
}

/* SymbolTable::getNearestSymbolTable(op), which MLIR merges the transform module into: op or its
 * closest ancestor with the trait. Null where MLIR stops (an unregistered operation with one
 * region may be a symbol table MLIR does not know), and also, conservatively, at an unregistered
 * operation of a loaded dialect, which MLIR would climb past. */
static MlirOperation nearest_symbol_table(MlirOperation op) {
  for (; !mlirOperationIsNull(op); op = mlirOperationGetParentOperation(op)) {
    if (mlirOperationGetNumRegions(op) == 1 &&
        !mlirContextIsRegisteredOperation(mlirOperationGetContext(op),
                                          mlirIdentifierStr(mlirOperationGetName(op))))
      break;
    if (is_symbol_table(op)) return op;
  }
  return (MlirOperation){NULL};
}

/* Whether root implements TransformOpInterface, which the C API cannot ask. Its
 * mlirTransformApplyNamedSequence checks that first, then that the module argument is a
 * builtin.module, and does nothing else when a check fails: called with root as the module, it
 * always fails, and the diagnostic (swallowed here) says which check did. */
typedef struct {
  char text[96];
  size_t len;
} probe_text;

static void probe_piece(MlirStringRef s, void *ud) {
  probe_text *p = ud;
  size_t n = s.length < sizeof p->text - 1 - p->len ? s.length : sizeof p->text - 1 - p->len;
  memcpy(p->text + p->len, s.data, n);
  p->len += n;
  p->text[p->len] = 0;
}

static MlirLogicalResult probe_handler(MlirDiagnostic d, void *ud) {
  probe_text *p = ud;
  if (p->len == 0) mlirDiagnosticPrint(d, probe_piece, p);
  return mlirLogicalResultSuccess();
}

static int is_transform_op(MlirOperation payload, MlirOperation root, MlirTransformOptions o) {
  MlirContext ctx = mlirOperationGetContext(root);
  probe_text p = {{0}, 0};
  MlirDiagnosticHandlerID id = mlirContextAttachDiagnosticHandler(ctx, probe_handler, &p, NULL);
  mlirTransformApplyNamedSequence(payload, root, root, o);
  mlirContextDetachDiagnosticHandler(ctx, id);
  return strstr(p.text, "TransformOpInterface") == NULL;
}

/* ---- the position of an operation below an ancestor, to find it again in a copy ------------ */

typedef struct {
  intptr_t region, block, op;
} step;

static intptr_t region_index(MlirOperation parent, MlirRegion r) {
  intptr_t n = mlirOperationGetNumRegions(parent);
  for (intptr_t i = 0; i < n; i++)
    if (mlirRegionEqual(mlirOperationGetRegion(parent, i), r)) return i;
  return -1;
}

static intptr_t block_index(MlirRegion r, MlirBlock b) {
  intptr_t i = 0;
  for (MlirBlock x = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(x);
       x = mlirBlockGetNextInRegion(x), i++)
    if (mlirBlockEqual(x, b)) return i;
  return -1;
}

static intptr_t op_index(MlirBlock b, MlirOperation op) {
  intptr_t i = 0;
  for (MlirOperation x = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(x);
       x = mlirOperationGetNextInBlock(x), i++)
    if (mlirOperationEqual(x, op)) return i;
  return -1;
}

/* The steps from x down to op, a strict descendant (malloc; NULL when out of memory). */
static step *path_from(MlirOperation x, MlirOperation op, intptr_t *n) {
  intptr_t depth = 0;
  for (MlirOperation o = op; !mlirOperationEqual(o, x); o = mlirOperationGetParentOperation(o))
    depth++;
  step *s = malloc((size_t)(depth ? depth : 1) * sizeof *s);
  if (!s) return NULL;
  intptr_t i = depth;
  for (MlirOperation o = op; !mlirOperationEqual(o, x);) {
    MlirBlock b = mlirOperationGetBlock(o);
    MlirRegion r = mlirBlockGetParentRegion(b);
    MlirOperation p = mlirBlockGetParentOperation(b);
    s[--i] = (step){region_index(p, r), block_index(r, b), op_index(b, o)};
    o = p;
  }
  *n = depth;
  return s;
}

static MlirOperation follow(MlirOperation x, const step *s, intptr_t n) {
  for (intptr_t i = 0; i < n; i++) {
    MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(x, s[i].region));
    for (intptr_t k = 0; k < s[i].block; k++) b = mlirBlockGetNextInRegion(b);
    x = mlirBlockGetFirstOperation(b);
    for (intptr_t k = 0; k < s[i].op; k++) x = mlirOperationGetNextInBlock(x);
  }
  return x;
}

/* ---- the interpreter ------------------------------------------------------------------------ */

/* A transform may replace or erase any payload operation, also the root of the payload's tree,
 * which MLIR then frees (transform.structured.replace of the payload module; upstream's bindings
 * crash on it): while the script runs, an operation at the root of that tree is held in a
 * builtin.module made for it. Afterwards it is the root again, or, when the transforms replaced it
 * or put operations next to it, that module becomes the tree's root (with what they left there). */
static MlirOperation hold_root(tether__tree *t) {
  if (t->root_kind != TETHER_KIND_OP) return (MlirOperation){NULL};
  MlirOperation root = {t->root};
  MlirModule m = mlirModuleCreateEmpty(mlirOperationGetLocation(root));
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(m), root);
  return mlirModuleGetOperation(m);
}

static void release_root(tether__tree *t, MlirOperation holder) {
  if (mlirOperationIsNull(holder)) return;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(holder, 0));
  MlirOperation first =
      mlirBlockIsNull(body) ? (MlirOperation){NULL} : mlirBlockGetFirstOperation(body);
  if (first.ptr == t->root && mlirOperationIsNull(mlirOperationGetNextInBlock(first))) {
    mlirOperationRemoveFromParent(first);
    mlirOperationDestroy(holder);
    return;
  }
  tether__tree_set_root(t, holder.ptr);
}

static const MlirLogicalResult kFailure = {0};

/* The script is in the payload's tree: it runs as a copy. x is the operation copied: the
 * transform module when it holds root, else root's nearest symbol table s, into which the
 * module's symbols are merged first, on the original, as MLIR does (upstream's users see them
 * there afterwards); the copy then has everything the script refers to. */
static MlirLogicalResult apply_on_copy(MlirOperation payload, MlirOperation root,
                                       MlirOperation module, MlirOperation s, int inside,
                                       MlirTransformOptions o) {
  MlirOperation x = module;
  if (!inside) {
    if (mlirLogicalResultIsFailure(mlirMergeSymbolsIntoFromClone(s, module))) {
      mlirEmitError(mlirOperationGetLocation(payload), "failed to merge symbols");
      return kFailure;
    }
    x = s;
  }
  int x_is_module = tether__op_named(x, "builtin.module");
  if (mlirOperationEqual(x, root) || (!x_is_module && tether__op_uses_outside(x))) {
    mlirEmitError(mlirOperationGetLocation(x),
                  "tether runs a transform script held in the payload's IR as a copy, and cannot "
                  "copy this symbol table (it is the transform root, or it uses values defined "
                  "outside it): keep the script in a separate module");
    return kFailure;
  }
  intptr_t n;
  step *path = path_from(x, root, &n);
  if (!path) {
    mlirEmitError(mlirOperationGetLocation(root), "out of memory");
    return kFailure;
  }
  MlirOperation copy = mlirOperationClone(x);
  MlirOperation copy_root = follow(copy, path, n);
  free(path);
  MlirOperation with = copy, empty = {NULL};
  if (!x_is_module) {
    /* The C API takes a builtin.module: an empty one, whose merge into the copy (root's nearest
     * symbol table) adds nothing but verifies the copy, which has no parent. */
    if (tether__orphan_verify_crashes(copy)) {
      mlirOperationDestroy(copy);
      mlirEmitError(mlirOperationGetLocation(x),
                    "tether runs a transform script held in the payload's IR as a copy, and "
                    "MLIR's verifier crashes on a copy of this symbol table (it needs its parent): "
                    "keep the script in a separate module");
      return kFailure;
    }
    empty = mlirModuleGetOperation(mlirModuleCreateEmpty(mlirOperationGetLocation(x)));
    with = empty;
  }
  MlirLogicalResult r = mlirTransformApplyNamedSequence(payload, copy_root, with, o);
  mlirOperationDestroy(copy);
  if (!mlirOperationIsNull(empty)) mlirOperationDestroy(empty);
  return r;
}

/* With diagnostics captured. pt, rt, mt: the trees of payload, root and module. */
static int apply_checked(tether__tree *pt, MlirOperation payload, tether__tree *rt,
                         MlirOperation root, tether__tree *mt, MlirOperation module,
                         MlirTransformOptions o, unsigned flags) {
  /* Not a builtin.module: MLIR says so (or that root is no transform operation) and stops. */
  if (!tether__op_named(module, "builtin.module")) {
    mlirTransformApplyNamedSequence(payload, root, module, o);
    return TETHER_EPASS;
  }
  int inside = !mlirOperationEqual(root, module) && tether__op_is_inside(root, module);
  MlirOperation s = {NULL};
  const char *why = NULL;
  if (!has_parent(root))
    why = "the transform root must be nested in an operation (the transform module, or a symbol "
          "table to merge the transform module into); it is the top of its IR";
  else if (!inside && mlirOperationIsNull(s = nearest_symbol_table(root)))
    why = "the transform root is neither inside the transform module nor inside a symbol table "
          "to merge the transform module into";
  if (why) {
    /* MLIR's first check, and upstream's message, come first. */
    if (!is_transform_op(payload, root, o))
      why = "must implement TransformOpInterface to be used as transform root";
    mlirEmitError(mlirOperationGetLocation(root), why);
    return TETHER_EPASS;
  }
  /* Transforms may erase anything in the payload's tree; merging erases declarations in s. */
  if (tether__tree_used_from_other_trees(pt) ||
      (!inside && rt != pt && tether__tree_used_from_other_trees(rt)))
    return TETHER_EBUSY;
  bool trusted = flags & TETHER_PASSES_TRUSTED_INPUT;
  int unsafe = each_top_op(pt, trusted ? top_unsafe_trusted : top_unsafe);
  if (!unsafe) unsafe = tether__unsafe_for_mlir(mt, module, trusted);
  if (!unsafe && !inside) unsafe = tether__unsafe_for_mlir(rt, s, trusted);
  if (!unsafe && !trusted) unsafe = each_top_op(pt, top_cycle);
  if (unsafe) return unsafe;
  /* MLIR's transforms, and its interpreter, assume valid IR. */
  if (!(flags & TETHER_PASSES_TRUSTED_INPUT) &&
      (each_top_op(pt, top_unverified) || !verifies(mt, module) || (!inside && !verifies(rt, s))))
    return TETHER_EVERIFY;
  tether__touch(pt->arena);
  MlirOperation holder = hold_root(pt);
  MlirLogicalResult r = rt == pt ? apply_on_copy(payload, root, module, s, inside, o)
                                 : mlirTransformApplyNamedSequence(payload, root, module, o);
  release_root(pt, holder);
  tether__tree_revalidate(pt);
  if (!inside && rt != pt) tether__tree_revalidate(rt);
  return mlirLogicalResultIsSuccess(r) ? TETHER_OK : TETHER_EPASS;
}

int tether_op_apply_transform(tether_op *payload, tether_op *root, tether_op *module,
                              const tether_transform_options *options, unsigned flags) {
  tether__handle *ph, *rh, *mh;
  tether__tree *pt, *rt, *mt;
  TETHER__CHECK(payload, TETHER_KIND_OP, ph, pt);
  TETHER__CHECK(root, TETHER_KIND_OP, rh, rt);
  TETHER__CHECK(module, TETHER_KIND_OP, mh, mt);
  tether_arena *a = pt->arena;
  if (rt->arena != a || mt->arena != a) return TETHER_ECONTEXT;
  /* Callbacks of an enclosing run may forbid MLIR changing these trees. */
  int src = tether__scope_rewrite(pt, OP(ph));
  if (src == TETHER_OK) src = tether__scope_rewrite(rt, OP(rh));
  if (src != TETHER_OK) return src;
  MlirTransformOptions o = mlirTransformOptionsCreate();
  if (options) {
    mlirTransformOptionsEnableExpensiveChecks(o, options->expensive_checks);
    mlirTransformOptionsEnforceSingleTopLevelTransformOp(
        o, options->enforce_single_top_level_transform_op);
  }
  tether__diag_begin(a);
  tether__run_begin(a);
  int rc = apply_checked(pt, OP(ph), rt, OP(rh), mt, OP(mh), o, flags);
  tether__run_end(a);
  tether__diag_end(a);
  mlirTransformOptionsDestroy(o);
  tether_keep_alive(ph);
  tether_keep_alive(rh);
  tether_keep_alive(mh);
  return rc;
}

/* ---- merging symbols ------------------------------------------------------------------------ */

static int merge_checked(tether__tree *tt, MlirOperation target, tether__tree *ot,
                         MlirOperation other) {
  /* MLIR asserts (and without assertions, reads a region that is not there) otherwise. */
  if (!is_symbol_table(target) || !is_symbol_table(other)) {
    MlirOperation bad = is_symbol_table(target) ? other : target;
    mlirEmitError(mlirOperationGetLocation(bad),
                  "symbols merge between operations with the SymbolTable trait (such as "
                  "builtin.module); this one has not");
    return TETHER_EPASS;
  }
  int unsafe = tether__unsafe_for_mlir(tt, target, false);
  if (!unsafe) unsafe = tether__unsafe_for_mlir(ot, other, false);
  if (unsafe) return unsafe;
  /* MLIR moves a copy of other's symbols into target: what they use must come with them. */
  if (tether__op_uses_outside(other)) {
    mlirEmitError(mlirOperationGetLocation(other),
                  "the symbols to merge use values or blocks defined outside this operation");
    return TETHER_EPASS;
  }
  if (!verifies(tt, target) || !verifies(ot, other)) return TETHER_EVERIFY;
  /* MLIR verifies the copy, which has no parent: some verifiers crash then (cached per name). */
  if (has_parent(other)) {
    MlirOperation copy = mlirOperationClone(other);
    int crashes = tether__orphan_verify_crashes(copy);
    mlirOperationDestroy(copy);
    if (crashes) {
      mlirEmitError(mlirOperationGetLocation(other),
                    "MLIR's verifier crashes on a copy of this operation (it needs a parent "
                    "operation)");
      return TETHER_EPASS;
    }
  }
  tether__touch(tt->arena);
  MlirLogicalResult r = mlirMergeSymbolsIntoFromClone(target, other);
  tether__tree_revalidate(tt);
  return mlirLogicalResultIsSuccess(r) ? TETHER_OK : TETHER_EPASS;
}

int tether_op_merge_symbols(tether_op *target, tether_op *other) {
  tether__handle *th, *oh;
  tether__tree *tt, *ot;
  TETHER__CHECK(target, TETHER_KIND_OP, th, tt);
  TETHER__CHECK(other, TETHER_KIND_OP, oh, ot);
  if (ot->arena != tt->arena) return TETHER_ECONTEXT;
  int src = tether__scope_rewrite(tt, OP(th));
  if (src != TETHER_OK) return src;
  /* Merging erases the external declarations a definition replaces. */
  if (tether__tree_used_from_other_trees(tt)) return TETHER_EBUSY;
  tether__diag_begin(tt->arena);
  tether__run_begin(tt->arena);
  int rc = merge_checked(tt, OP(th), ot, OP(oh));
  tether__run_end(tt->arena);
  tether__diag_end(tt->arena);
  tether_keep_alive(th);
  tether_keep_alive(oh);
  return rc;
}
