/* passes.h: the layer of what runs over IR (core.h has the map of the layers).
 *
 *   passmanager.c            PassManager (and passes written in Python, MLIR 22)
 *   rewrite.c                _tether._rewrite: PDLModule, FrozenRewritePatternSet, apply_patterns_*
 *   patterns.c               MLIR 22's Python rewrite patterns, PatternRewriter,
 * GreedyRewriteConfig transform_interpreter.c  _tether._transform_interpreter execution_engine.c
 * _tether._ExecutionEngine
 */
#ifndef TETHER_PY_PASSES_H
#define TETHER_PY_PASSES_H

#include "../ir/ir.h"

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

/* passes/: the inits of this layer's files. */
int tpy_init_passmanager(PyObject *m);
/* execution_engine.c: _tether._ExecutionEngine. */
int tpy_init_execution_engine(PyObject *m);
/* transform_interpreter.c: _tether._transform_interpreter. */
int tpy_init_transform_interpreter(PyObject *m);
/* rewrite.c: _tether._rewrite (PDLModule, FrozenRewritePatternSet, apply_patterns_...). */
int tpy_init_rewrite(PyObject *m);

#if TETHER_MLIR_VERSION >= 22
/* patterns.c: MLIR 22's Python rewriting, in _tether._rewrite too (RewritePatternSet,
 * PatternRewriter, PDLResultList, GreedyRewriteConfig), and the callbacks MLIR makes into Python
 * while patterns apply (rewrite.c applies them). */
int tpy_init_patterns(PyObject *rewrite_module);
/* A callable of a pattern set, as MLIR's user data of a pattern or PDL native function: it calls
 * Python only while tether applies the set it belongs to (id), on the thread that does. */
typedef struct {
  PyObject *fn;   /* strong */
  PyObject *name; /* str: a PDL function's name (messages), or NULL */
  uint64_t set_id;
  bool rewrite; /* a PDL rewrite function (MLIR cannot recover from its failure) */
} tpy_pyfn;
/* An application of a pattern set in progress on this thread (tpy_apply_begin/end around the
 * arena's call): the set's callbacks call Python meanwhile; error receives the first exception
 * one raised. */
typedef struct tpy_apply_run {
  struct tpy_apply_run *outer;
  uint64_t set_id;
  TpContext *ctx;
  int driver; /* tether_driver */
  PyObject *error;
} tpy_apply_run;
void tpy_apply_begin(tpy_apply_run *r, uint64_t set_id, TpContext *ctx, int driver);
void tpy_apply_end(tpy_apply_run *r);
/* A new id for a pattern set (its callbacks know it). */
uint64_t tpy_pattern_set_id(void);
/* A frozen set (new reference; takes set, pdl_state and fns: freed with it): id and whether its
 * patterns call Python; pdl_state (tether_pdl_freeze_ex) and fns (n PyMem-allocated tpy_pyfn
 * structs, the PDL native functions' user data), NULL when none. */
PyObject *tpy_frozen_set_new(MlirFrozenRewritePatternSet set, PyObject *ctx, uint64_t id,
                             bool python, void *pdl_state, tpy_pyfn *fns, Py_ssize_t n);
/* The PDL native functions' callback (tether_pdl_callback; user: a tpy_pyfn). */
MlirLogicalResult tpy_pdl_callback(MlirPatternRewriter rewriter, tether_pdl_results *results,
                                   size_t n, MlirPDLValue *values, void *user);
/* A GreedyRewriteConfig argument (None: null config). 1, or 0 with TypeError. */
int tpy_arg_greedy_config(PyObject *o, MlirGreedyRewriteDriverConfig *out);
#endif

#endif
