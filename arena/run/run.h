/* run.h: what run/ gives the other folders (core/model.h has the map of arena/). */
#ifndef TETHER_RUN_H
#define TETHER_RUN_H

#include "../core/internal.h"

/* ---- rewrite.c ----------------------------------------------------------------------------- */

/* Compiles a PDL module MLIR takes (it destroys it) into a frozen pattern set, with the native
 * functions fns (n of them: MLIR 22's tether_pdl_function, state what their calls need: rewrite.c;
 * none on MLIR 19). */
MlirFrozenRewritePatternSet tether__pdl_compile(MlirOperation module, const void *fns, intptr_t n,
                                                void *state);
/* An application of patterns: set to the regions of op, by driver, with config (null: defaults). */
typedef struct {
  MlirOperation op;
  MlirFrozenRewritePatternSet set;
  tether_driver driver;
  MlirGreedyRewriteDriverConfig config;
} tether__apply;
/* Makes the application (the walk driver's is always a success). */
MlirLogicalResult tether__patterns_apply(const tether__apply *x);
/* Whether operations in op (op itself included) have null operands, as MLIR 22's rewriter leaves
 * the users of an operation it erased while still used; with repair, each such operand is set to
 * the result of a new "tether.dropped_use" operation of type none inserted before its user (IR
 * that does not verify, but that MLIR's printer and verifier can read). */
int tether__dropped_uses(MlirOperation op, int repair);

/* ---- rewrite_trials.c: the PDL calls made in a child first ---------------------------------- */

/* Emits a diagnostic and returns 1 when compiling the PDL module (tether__pdl_compile) crashes
 * MLIR: tried in a child once per text of the module. */
int tether__pdl_compile_crashes(MlirOperation module, const void *fns, intptr_t n, void *state);
/* Emits a diagnostic and returns 1 when the application (tether__patterns_apply) crashes MLIR,
 * runs 120 s or leaves null operands (tether__dropped_uses): tried in a child every time; nothing
 * changed then. */
int tether__patterns_crash(const tether__apply *x);

#endif
