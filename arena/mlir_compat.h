/* The one place where tether's C meets the differences between the MLIR C APIs it builds against
 * (LLVM 19 and LLVM 22; docs/building.md). Every other file calls MLIR's C API as the version in
 * use spells it, or the tether_mlir_* function below that covers both.
 *
 * TETHER_MLIR_VERSION comes from the build (@mlir//:headers defines it); LLVM_VERSION_MAJOR from
 * the LLVM headers the MLIR headers belong to: they must agree, or the headers are not the version
 * the build was configured for. */
#ifndef TETHER_MLIR_COMPAT_H
#define TETHER_MLIR_COMPAT_H

#include <llvm/Config/llvm-config.h>
#include <mlir-c/ExecutionEngine.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <mlir-c/Rewrite.h>

#include <stdbool.h>

#ifndef TETHER_MLIR_VERSION
#define TETHER_MLIR_VERSION LLVM_VERSION_MAJOR
#endif
#if TETHER_MLIR_VERSION != LLVM_VERSION_MAJOR
#error "tether: the MLIR headers are not those of the MLIR version this build was configured for"
#endif
#if TETHER_MLIR_VERSION != 19 && TETHER_MLIR_VERSION != 22
#error "tether builds against MLIR 19 or MLIR 22"
#endif

/// What `PassManager.enable_ir_printing` asks for (upstream 22's keywords). MLIR 19's C API has
/// one configuration only: before and after every pass, module scope, only on change, to stderr
/// (tether_mlir_ir_printing_19).
typedef struct tether_mlir_ir_printing {
  bool before_all, after_all, module_scope, after_change, after_failure;
  MlirOpPrintingFlags flags; /// null: MLIR's defaults
  MlirStringRef tree_dir;    /// empty: print to stderr
} tether_mlir_ir_printing;

/// The one configuration MLIR 19 supports.
static inline tether_mlir_ir_printing tether_mlir_ir_printing_19(void) {
  tether_mlir_ir_printing p = {true, true, true, true, false, {NULL}, {NULL, 0}};
  return p;
}

/// Turns IR printing on. Returns false (and changes nothing) when this MLIR cannot print as asked.
static inline bool tether_mlir_pm_enable_ir_printing(MlirPassManager pm,
                                                     const tether_mlir_ir_printing *p) {
#if TETHER_MLIR_VERSION >= 22
  MlirOpPrintingFlags f = p->flags.ptr ? p->flags : mlirOpPrintingFlagsCreate();
  mlirPassManagerEnableIRPrinting(pm, p->before_all, p->after_all, p->module_scope, p->after_change,
                                  p->after_failure, f, p->tree_dir);
  if (!p->flags.ptr) mlirOpPrintingFlagsDestroy(f); /* copied into the instrumentation */
  return true;
#else
  tether_mlir_ir_printing d = tether_mlir_ir_printing_19();
  if (p->before_all != d.before_all || p->after_all != d.after_all ||
      p->module_scope != d.module_scope || p->after_change != d.after_change ||
      p->after_failure != d.after_failure || p->flags.ptr || p->tree_dir.length)
    return false;
  mlirPassManagerEnableIRPrinting(pm);
  return true;
#endif
}

/// Creates an execution engine. On MLIR 19 position-independent code cannot be asked for (the
/// result is null) and creation runs the global constructors; on 22 tether_mlir_ee_initialize
/// does.
static inline MlirExecutionEngine tether_mlir_ee_create(MlirModule m, int opt_level, int n_libs,
                                                        const MlirStringRef *libs, bool dump,
                                                        bool pic) {
#if TETHER_MLIR_VERSION >= 22
  return mlirExecutionEngineCreate(m, opt_level, n_libs, libs, dump, pic);
#else
  if (pic) return (MlirExecutionEngine){NULL};
  return mlirExecutionEngineCreate(m, opt_level, n_libs, libs, dump);
#endif
}

/// Runs the engine's global constructors (once; MLIR 19 ran them at creation).
static inline void tether_mlir_ee_initialize(MlirExecutionEngine e) {
#if TETHER_MLIR_VERSION >= 22
  mlirExecutionEngineInitialize(e);
#else
  (void)e;
#endif
}

/// MLIR's greedy pattern driver on the regions of op with config (null: MLIR's defaults; 22 reads
/// the configuration it is given, so it must not be null there). MLIR 19 applies to a
/// builtin.module only, with its defaults (config is ignored).
static inline MlirLogicalResult tether_mlir_apply_greedily(MlirOperation op,
                                                           MlirFrozenRewritePatternSet set,
                                                           MlirGreedyRewriteDriverConfig config) {
#if TETHER_MLIR_VERSION >= 22
  MlirGreedyRewriteDriverConfig c = config.ptr ? config : mlirGreedyRewriteDriverConfigCreate();
  MlirLogicalResult r = mlirApplyPatternsAndFoldGreedilyWithOp(op, set, c);
  if (!config.ptr) mlirGreedyRewriteDriverConfigDestroy(c);
  return r;
#else
  (void)config;
  return mlirApplyPatternsAndFoldGreedily(mlirModuleFromOperation(op), set,
                                          (MlirGreedyRewriteDriverConfig){NULL});
#endif
}

/// MLIR's walk pattern driver on the regions of op (MLIR 22); false on MLIR 19, which has none.
static inline bool tether_mlir_walk_and_apply(MlirOperation op, MlirFrozenRewritePatternSet set) {
#if TETHER_MLIR_VERSION >= 22
  mlirWalkAndApplyPatterns(op, set);
  return true;
#else
  (void)op;
  (void)set;
  return false;
#endif
}

#endif
