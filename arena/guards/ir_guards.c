/* ir_guards.c: IR before MLIR verifies, prints or runs passes on it (verdicts.c has the map of the
 * guards): nesting deeper than MLIR's recursion, verifiers that need a parent, suspect trees (IR
 * built or edited by hand, verified in a trial first), uses of other trees, MLIR 19's inliner, and
 * what the bytecode writer needs.
 *
 * Invariant: tether__unsafe_for_mlir answers before MLIR runs on a tree; a verdict it gives from a
 * trial (the helper, else a child) is remembered per shape of operations and per arena.
 */
#define _GNU_SOURCE /* memmem, pthread_getattr_np */
#include "guards.h"
#include "../trial/trial.h"

#include <errno.h>
#include <fcntl.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Interfaces.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- IR nested deeper than MLIR's recursion ---------------------------------------------------
 *
 * IR built operation by operation can nest as deep as a program likes; MLIR then overflows the
 * stack printing, verifying, walking or destroying it (once per level, about 4 KB). Whatever would
 * nest past TETHER_MAX_NESTING is refused where it is attached (insertion, move, creation with
 * regions); the checks below recurse at most TETHER_MAX_NESTING deep themselves. */

int tether__ops_above(MlirBlock b) {
  int d = 0;
  MlirOperation op = mlirBlockIsNull(b) ? (MlirOperation){NULL} : mlirBlockGetParentOperation(b);
  for (; !mlirOperationIsNull(op) && d <= TETHER_MAX_NESTING; d++)
    op = mlirOperationGetParentOperation(op);
  return d;
}

static int op_exceeds(MlirOperation op, int budget);

/* Whether the operations of r nest deeper than budget levels (each counts one). */
static int region_exceeds(MlirRegion r, int budget) {
  for (MlirBlock b = mlirRegionGetFirstBlock(r); !mlirBlockIsNull(b);
       b = mlirBlockGetNextInRegion(b))
    for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
         o = mlirOperationGetNextInBlock(o))
      if (op_exceeds(o, budget)) return 1;
  return 0;
}

static int op_exceeds(MlirOperation op, int budget) {
  if (budget < 1) return 1;
  intptr_t n = mlirOperationGetNumRegions(op);
  for (intptr_t i = 0; i < n; i++)
    if (region_exceeds(mlirOperationGetRegion(op, i), budget - 1)) return 1;
  return 0;
}

int tether__nesting_exceeded(MlirBlock dest, int extra_above, MlirOperation op) {
  if (mlirOperationGetNumRegions(op) == 0) return 0;
  return op_exceeds(op, TETHER_MAX_NESTING - tether__ops_above(dest) - extra_above);
}

int tether__region_nesting_exceeded(MlirRegion r, int above) {
  return region_exceeds(r, TETHER_MAX_NESTING - above);
}

int tether__block_nesting_exceeded(MlirBlock b, int above) {
  for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o))
    if (op_exceeds(o, TETHER_MAX_NESTING - above)) return 1;
  return 0;
}

/* ---- verifiers that need a parent ------------------------------------------------------------ */

/* Some verifiers assume their operation's parent (func.return casts its parent to func.func):
 * verifying such an operation with no parent operation (detached, or at the top of a detached
 * region or block) crashes MLIR, and so does printing it (printing verifies first). Tried once per
 * operation name in a child, cached for the process. */
static void verify_in_child(void *op) { mlirOperationVerify(*(MlirOperation *)op); }

/* An operation with no parent block prints alone; one at the top of a detached block or region
 * may use its block's arguments, which its text cannot carry: a child tries that one. */
static int orphan_by_helper(void *op) {
  MlirOperation o = *(MlirOperation *)op;
  if (!mlirBlockIsNull(mlirOperationGetBlock(o))) return -1;
  return tether__trial_verify(o, o, TETHER__PROBE_TIMEOUT_MS, NULL);
}

int tether__orphan_verify_crashes(MlirOperation op) {
  if (!mlirOperationIsNull(mlirOperationGetParentOperation(op))) return 0;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if ((name.length == 14 && !memcmp(name.data, "builtin.module", 14)) ||
      !mlirContextIsRegisteredOperation(mlirOperationGetContext(op), name))
    return 0;
  tether__key k;
  TETHER__KEY_INIT(k);
  tether__key_put(&k, 0x6f727068616eull); /* "orphan": another key space than inference's */
  tether__key_put_str(&k, name);
  int r = tether__cached_verdict(&k, orphan_by_helper, verify_in_child, &op);
  return r == 0 || r == 2; /* died or hung; no child: trusted */
}

/* ---- suspect trees ----------------------------------------------------------------------------
 *
 * A tree is suspect (tether__tree.suspect) when it may hold IR that MLIR's verifier crashes on: a
 * registered operation built by hand (create.c), an inherent attribute removed or replaced by one
 * of another kind, a value's type changed (tether_handle_mark_suspect), what PDL rewrites built
 * (rewrite.c). Its verification is tried in a child first. When the child returns, the shape of
 * every registered operation it verified (tether__op_shape: name, operand and result counts and
 * kinds of types, attribute names and kinds, regions' blocks) is remembered for the arena, and a
 * later suspect tree made only of remembered shapes is verified without a child. A frontend that
 * builds and prints module after module of the same kinds of operations pays one child, not one
 * per print. A tree stops being suspect once it verifies as a whole (passes.c, transform.c). */

/* The children's answer when some operation failed to verify (TETHER__TRIAL_FAILED): then MLIR
 * stopped before verifying the rest, whose shapes are not known to be safe. */

static MlirWalkResult verify_top_cb(MlirOperation op, void *ud) {
  (void)ud;
  if (mlirOperationIsNull(mlirOperationGetParentOperation(op)) && !mlirOperationVerify(op))
    tether__child_answer(TETHER__TRIAL_FAILED);
  return MlirWalkResultAdvance;
}

static void verify_tree_in_child(void *t) { tether__tree_walk_ops(t, verify_top_cb, NULL); }

static void verify_op_in_child(void *op) {
  if (!mlirOperationVerify(*(MlirOperation *)op)) tether__child_answer(TETHER__TRIAL_FAILED);
}

static MlirWalkResult orphan_cb(MlirOperation op, void *ud) {
  if (tether__orphan_verify_crashes(op) || tether__verifier_gap(op, false)) {
    *(int *)ud = 1;
    return MlirWalkResultInterrupt;
  }
  return MlirWalkResultSkip;
}

/* The arena's set of safe shapes: open addressing over nonzero hashes, 0 = empty. */
static size_t shape_home(uint64_t s, size_t mask) { return (size_t)(s ^ s >> 29) & mask; }

static int shape_known(const tether_arena *a, uint64_t s) {
  if (!a->safe_cap) return 0;
  size_t mask = a->safe_cap - 1;
  for (size_t i = shape_home(s, mask);; i = (i + 1) & mask) {
    if (a->safe_shapes[i] == s) return 1;
    if (!a->safe_shapes[i]) return 0;
  }
}

static void shape_place(uint64_t *set, size_t mask, uint64_t s) {
  size_t i = shape_home(s, mask);
  while (set[i]) i = (i + 1) & mask;
  set[i] = s;
}

static void shape_add(tether_arena *a, uint64_t s) {
  if (shape_known(a, s)) return;
  if ((size_t)(a->safe_used + 1) * 2 > a->safe_cap) {
    uint32_t ncap = a->safe_cap ? a->safe_cap * 2 : 64;
    uint64_t *n = calloc(ncap, sizeof *n);
    if (!n) return; /* not remembered: the next tree of this shape is tried in a child again */
    for (uint32_t i = 0; i < a->safe_cap; i++)
      if (a->safe_shapes[i]) shape_place(n, ncap - 1, a->safe_shapes[i]);
    free(a->safe_shapes);
    a->safe_shapes = n;
    a->safe_cap = ncap;
  }
  shape_place(a->safe_shapes, a->safe_cap - 1, s);
  a->safe_used++;
}

/* The shapes of a walk not known to be safe. */
typedef struct {
  tether_arena *a;
  uint64_t *v;
  size_t n, cap;
  int unknown; /* some shape is not known to be safe */
  int oom;
} shape_list;

static MlirWalkResult shape_cb(MlirOperation op, void *ud) {
  shape_list *l = ud;
  if (!tether__op_is_registered(op)) return MlirWalkResultAdvance;
  uint64_t s = tether__op_shape(op);
  if (shape_known(l->a, s)) return MlirWalkResultAdvance;
  l->unknown = 1;
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 64;
    uint64_t *n = realloc(l->v, ncap * sizeof *n);
    if (!n) {
      l->oom = 1;
      return MlirWalkResultInterrupt;
    }
    l->v = n;
    l->cap = ncap;
  }
  l->v[l->n++] = s;
  return MlirWalkResultAdvance;
}

/* 0 when safe (known shapes, or the trial returned: then the shapes of what it verified are
 * remembered); 1 when the trial found a crash (or a hang); 2 when the trial helper found that the
 * IR does not verify: then MLIR's verifier must not run on it here (a verifier of IR built by hand
 * may read past what the operation has, and what lies there differs between two processes), and
 * *report (when given) holds the helper's diagnostics. A forked child's answer needs no such care:
 * it ran on this process's own memory. The whole tree's shapes are checked even to verify one
 * operation inside it: a verifier reads its parents (func.return reads its function's type) and
 * what defines its operands, and none of those may have changed shape. */
static int verify_in_child_unless_known(tether__tree *t, MlirOperation op,
                                        tether__trial_report *report) {
  shape_list l = {t->arena, NULL, 0, 0, 0, 0};
  tether__tree_walk_ops(t, shape_cb, &l);
  if (!l.unknown && !l.oom) {
    free(l.v);
    return 0;
  }
  if (!mlirOperationIsNull(op) && !l.oom) {
    /* Only what the trial verifies is remembered: op and what it holds. */
    l.n = 0;
    l.unknown = 0;
    mlirOperationWalk(op, shape_cb, &l, MlirWalkPreOrder);
  }
  /* The trial helper when the tree prints as one operation (a tree rooted at a region or block
   * may use its arguments); a forked child when it gives no verdict. */
  int r = -1;
  if (t->root_kind == TETHER_KIND_OP && !mlirOperationIsNull(op))
    r = tether__trial_verify((MlirOperation){t->root}, op, TETHER__VERIFY_TIMEOUT_MS, report);
  if (r == TETHER__TRIAL_FAILED) {
    free(l.v);
    return 2;
  }
  if (r < 0)
    r = mlirOperationIsNull(op)
            ? tether__in_child(verify_tree_in_child, t, TETHER__VERIFY_TIMEOUT_MS)
            : tether__in_child(verify_op_in_child, &op, TETHER__VERIFY_TIMEOUT_MS);
  /* Remembered only when everything verified (a failure stops MLIR's verifier early). */
  if (r == 1 && !l.oom)
    for (size_t i = 0; i < l.n; i++) shape_add(t->arena, l.v[i]);
  free(l.v);
  return r == 0 ||
         r == 2; /* died or hung; -1 (no child): trusted; TETHER__TRIAL_FAILED: no crash */
}

/* tether__verifier_crashes with its three answers (0, 1, 2 as above). */
static int verifier_verdict(tether__tree *t, MlirOperation op, tether__trial_report *report) {
  if (mlirOperationIsNull(op)) {
    /* The whole tree, as printing verifies it: its top-level operations. */
    if (t->root_kind == TETHER_KIND_OP) {
      op = (MlirOperation){t->root};
    } else {
      int bad = 0;
      tether__tree_walk_ops(t, orphan_cb, &bad);
      if (bad) return 1;
      if (!t->suspect) return 0;
      return verify_in_child_unless_known(t, (MlirOperation){NULL}, report);
    }
  }
  if (tether__orphan_verify_crashes(op) || tether__verifier_gap(op, false)) return 1;
  if (!t->suspect) return 0;
  return verify_in_child_unless_known(t, op, report);
}

int tether__verifier_crashes(tether__tree *t, MlirOperation op) {
  return verifier_verdict(t, op, NULL) != 0;
}

int tether_handle_mark_suspect(void *handle) {
  if (!handle || !tether__valid(TETHER__H(handle))) return TETHER_EINVALID;
  tether__tree *t = tether__tree_of(TETHER__H(handle));
  t->suspect = 1;
  tether__touch(t->arena);
  return TETHER_OK;
}

/* ---- before MLIR verifies, prints or runs passes --------------------------------------------- */

/* IR that uses values or blocks of another tree (a detached operation, region or block, another
 * module) is invalid, and MLIR's verifier and passes assume it cannot happen (dominance is computed
 * from the region tree and dereferences a missing parent): report it as a verification error
 * instead. Emitted as an MLIR diagnostic at the user's location. */
static int foreign_uses_error(tether__tree *t, MlirOperation op) {
  MlirOperation user;
  intptr_t index;
  int succ;
  if (!tether__op_uses_other_trees(t, op, &user, &index, &succ)) return 0;
  char msg[200];
  snprintf(msg, sizeof msg,
           "%s #%ld of this operation is %s outside the IR it is in (in a detached operation, "
           "region or block, or another module)",
           succ ? "successor" : "operand", (long)index, succ ? "a block" : "defined");
  mlirEmitError(mlirOperationGetLocation(user), msg);
  return 1;
}

/* A tree MLIR's verifier crashes on (tether__verifier_crashes): TETHER_EPASS, with a diagnostic;
 * one the trial helper found not to verify: TETHER_EVERIFY with the helper's diagnostics, or 0
 * when the caller trusts its input (it asked MLIR to run without verifying it). */
static int unverifiable_error(tether__tree *t, MlirOperation op, bool trusted) {
  tether__trial_report report = {NULL, 0, {NULL}, {NULL}, {NULL}};
  int verdict = verifier_verdict(t, op, trusted ? NULL : &report);
  if (verdict == 2 && !trusted) tether__trial_report_emit(&report);
  tether__trial_report_free(&report);
  if (verdict == 2) return trusted ? 0 : TETHER_EVERIFY;
  if (!verdict) return 0;
  mlirEmitError(
      mlirOperationGetLocation(op),
      "MLIR's verifier crashes on this operation (it needs a parent operation it does not have, "
      "or an inherent attribute was removed or replaced by one of another kind, or a value's "
      "type changed)");
  return TETHER_EPASS;
}

/* A detached root whose own results it or its nested operations use: invalid (nothing dominates
 * the use), and MLIR's dominance check crashes on it (the root has no block to ask for its
 * parent). Reported as a verification error, at the user. */
static int own_results_error(tether__tree *t) {
  MlirOperation user;
  intptr_t index;
  if (!tether__root_uses_own_results(t, &user, &index)) return 0;
  char msg[200];
  snprintf(msg, sizeof msg,
           "operand #%ld of this operation is a result of an operation that contains it (an "
           "operation without a parent cannot define what its own regions use)",
           (long)index);
  mlirEmitError(mlirOperationGetLocation(user), msg);
  return 1;
}

int tether__fold_cycle_error(MlirOperation op) {
  MlirOperation on = tether__registered_cycle(op);
  if (mlirOperationIsNull(on)) return TETHER_OK;
  mlirEmitError(mlirOperationGetLocation(on),
                "this operation is on a cycle of uses (valid in a graph region such as a module's "
                "body), which MLIR's folders and canonicalization patterns may never finish "
                "rewriting: refused (TETHER_PASSES_TRUSTED_INPUT skips this check)");
  return TETHER_EPASS;
}

int tether__unsafe_for_mlir(tether__tree *t, MlirOperation op, bool trusted) {
  /* Uses of other trees first: a cheap and final answer, and IR whose text cannot carry them
   * (an operand printed as <<UNKNOWN SSA VALUE>>) would only send the trial to a fork. */
  if (foreign_uses_error(t, op)) return TETHER_EPASS;
  if (own_results_error(t)) return TETHER_EPASS;
  if (tether__verifier_gap(op, true)) return TETHER_EVERIFY;
  return unverifiable_error(t, op, trusted);
}

bool tether_handle_has_foreign_uses(const void *handle) {
  if (!handle || !tether__valid(TETHER__H(handle))) return false;
  tether__tree *t = tether__tree_of(TETHER__H(handle));
  MlirOperation user;
  intptr_t index;
  return tether__tree_uses_other_trees(t) || tether__root_uses_own_results(t, &user, &index) ||
         tether__verifier_crashes(t, (MlirOperation){NULL});
}

/* MLIR 19's inliner dereferences a null interface on an operation of an unregistered dialect that
 * has regions (mlir-opt-19 --allow-unregistered-dialect --inline crashes the same way): a pipeline
 * with `inline` is refused on such IR, with a diagnostic saying why. */
typedef struct {
  char *text;
  size_t len, cap;
} pipe_text;

static void pipe_append(MlirStringRef s, void *ud) {
  pipe_text *p = ud;
  if (p->len + s.length + 1 > p->cap) {
    size_t ncap = (p->len + s.length + 1) * 2;
    char *n = realloc(p->text, ncap);
    if (!n) return;
    p->text = n;
    p->cap = ncap;
  }
  memcpy(p->text + p->len, s.data, s.length);
  p->len += s.length;
  p->text[p->len] = 0;
}

static MlirWalkResult unregistered_region_cb(MlirOperation op, void *ud) {
  if (mlirOperationGetNumRegions(op) == 0) return MlirWalkResultAdvance;
  MlirContext ctx = mlirOperationGetContext(op);
  if (mlirContextIsRegisteredOperation(ctx, mlirIdentifierStr(mlirOperationGetName(op))))
    return MlirWalkResultAdvance;
  *(MlirOperation *)ud = op;
  return MlirWalkResultInterrupt;
}

int tether__inliner_unsafe(MlirPassManager pm, MlirOperation root) {
  pipe_text p = {NULL, 0, 0};
  mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), pipe_append, &p);
  int has_inline = 0;
  for (const char *s = p.text; s && (s = strstr(s, "inline")); s += 6) {
    char before = s == p.text ? ',' : s[-1], after = s[6];
    if ((before == ',' || before == '(' || before == ' ') &&
        (after == 0 || after == ',' || after == ')' || after == '{' || after == ' '))
      has_inline = 1;
  }
  free(p.text);
  if (!has_inline) return 0;
  MlirOperation bad = {NULL};
  mlirOperationWalk(root, unregistered_region_cb, &bad, MlirWalkPreOrder);
  if (mlirOperationIsNull(bad)) return 0;
  mlirEmitError(mlirOperationGetLocation(bad),
                "the inline pass cannot run on IR holding an operation of an unregistered dialect "
                "with regions (MLIR 19's inliner crashes on it)");
  return 1;
}

/* ---- bytecode -------------------------------------------------------------------------------- */

int tether_op_check_self_contained(tether_op *op) {
  tether__handle *h;
  tether__tree *t;
  TETHER__CHECK(op, TETHER_KIND_OP, h, t);
  /* Both ways: the writer numbers what op uses, and records the order of each value's uses. */
  return tether__op_uses_outside(OP(h)) || tether__op_used_from_outside(OP(h)) ? TETHER_ESTATE
                                                                               : TETHER_OK;
}
