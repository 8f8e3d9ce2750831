/* verifier_gaps.c: IR that MLIR's verifiers accept and its passes crash on.
 *
 * Invariant: no tree reaches an MLIR pass, pattern application or transform (every caller of
 * tether__unsafe_for_mlir) while it holds an operation of this list; tether_op_verify reports
 * such an operation as not verifying, with a diagnostic at it, and printing (which verifies
 * first, and whose custom printers read the same operands) prints it unverified, in the generic
 * form (tether__verifier_crashes). Each entry is a check MLIR's
 * verifier leaves out, read through the C API only (the operation's inherent attributes and its
 * operand count), and costs nothing for operations of other names (one identifier comparison).
 *
 * The list (each found by a fuzzer and checked with MLIR 19 and 22):
 *   affine.for       operand segments that do not match the inputs of the bound maps (lower-affine
 *                    and affine-loop-normalize read past the operands: SIGSEGV, or LLVM's
 *                    "SmallVector unable to grow" abort); a step of 0 or less (affine-loop-unroll
 *                    divides by it: SIGFPE).
 *   affine.parallel  fewer or more operands than the bound maps' inputs together (lower-affine,
 *                    canonicalize and cse read past the operands: SIGSEGV; its own verifier,
 *                    which MLIR's parser runs, reads past them too: text that writes these
 *                    operations in the generic form is parsed unverified, held to this list, then
 *                    verified: tether__verifier_gap_mentioned).
 */
#define _GNU_SOURCE /* memmem */
#include "guards.h"
#include "../run/run.h"
#include "../trial/trial.h"

#include <mlir-c/BuiltinAttributes.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  MlirIdentifier affine_for, affine_parallel;
  MlirOperation bad;
  char why[240];
} gap_walk;

static MlirAttribute attr_of(MlirOperation op, const char *name) {
  return mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name));
}

/* The number of inputs of the affine map attribute name of op, or -1 when it has none (MLIR's
 * verifier reports a missing or mistyped attribute itself). */
static intptr_t map_inputs(MlirOperation op, const char *name) {
  MlirAttribute a = attr_of(op, name);
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAAffineMap(a)) return -1;
  return mlirAffineMapGetNumInputs(mlirAffineMapAttrGetValue(a));
}

static bool for_gap(MlirOperation op, gap_walk *w) {
  MlirAttribute seg = attr_of(op, "operandSegmentSizes");
  intptr_t lb = map_inputs(op, "lowerBoundMap"), ub = map_inputs(op, "upperBoundMap");
  if (!mlirAttributeIsNull(seg) && mlirAttributeIsADenseI32Array(seg) &&
      mlirDenseArrayGetNumElements(seg) == 3 && lb >= 0 && ub >= 0) {
    int32_t nlb = mlirDenseI32ArrayGetElement(seg, 0), nub = mlirDenseI32ArrayGetElement(seg, 1);
    if (nlb != lb || nub != ub) {
      snprintf(w->why, sizeof w->why,
               "'affine.for' op has %d lower and %d upper bound operands, but its bound maps take "
               "%ld and %ld (MLIR's passes read past the operands of such a loop)",
               (int)nlb, (int)nub, (long)lb, (long)ub);
      return true;
    }
  }
  MlirAttribute step = attr_of(op, "step");
  if (!mlirAttributeIsNull(step) && mlirAttributeIsAInteger(step) &&
      mlirIntegerAttrGetValueInt(step) <= 0) {
    snprintf(w->why, sizeof w->why,
             "'affine.for' op has step %lld; the step must be positive (MLIR's loop passes "
             "divide by it)",
             (long long)mlirIntegerAttrGetValueInt(step));
    return true;
  }
  return false;
}

static bool parallel_gap(MlirOperation op, gap_walk *w) {
  intptr_t lb = map_inputs(op, "lowerBoundsMap"), ub = map_inputs(op, "upperBoundsMap");
  intptr_t n = mlirOperationGetNumOperands(op);
  if (lb < 0 || ub < 0 || lb + ub == n) return false;
  snprintf(w->why, sizeof w->why,
           "'affine.parallel' op has %ld operands, but its bound maps take %ld and %ld (MLIR's "
           "passes read past the operands of such a loop)",
           (long)n, (long)lb, (long)ub);
  return true;
}

static MlirWalkResult gap_cb(MlirOperation op, void *ud) {
  gap_walk *w = ud;
  MlirIdentifier name = mlirOperationGetName(op);
  bool bad = mlirIdentifierEqual(name, w->affine_for)        ? for_gap(op, w)
             : mlirIdentifierEqual(name, w->affine_parallel) ? parallel_gap(op, w)
                                                             : false;
  if (!bad) return MlirWalkResultAdvance;
  w->bad = op;
  return MlirWalkResultInterrupt;
}

bool tether__verifier_gap(MlirOperation op, bool emit) {
  MlirContext ctx = mlirOperationGetContext(op);
  gap_walk w = {mlirIdentifierGet(ctx, mlirStringRefCreateFromCString("affine.for")),
                mlirIdentifierGet(ctx, mlirStringRefCreateFromCString("affine.parallel")),
                {NULL},
                {0}};
  mlirOperationWalk(op, gap_cb, &w, MlirWalkPreOrder);
  if (mlirOperationIsNull(w.bad)) return false;
  if (emit) mlirEmitError(mlirOperationGetLocation(w.bad), w.why);
  return true;
}

bool tether__verifier_gap_mentioned(const char *text, size_t len) {
  /* The generic form, the only one that can say operands and maps that disagree. */
  static const char *const names[] = {"\"affine.for\"", "\"affine.parallel\""};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (memmem(text, len, names[i], strlen(names[i]))) return true;
  return false;
}
