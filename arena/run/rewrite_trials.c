/* rewrite_trials.c: PDL compilation and pattern application, tried in a forked child first
 * (guards/child.c), because MLIR crashes on patterns its PDL lowering does not expect and on IR
 * that a rewrite left without operands (docs/ownership.md, "Pattern rewrites (PDL)").
 *
 * Invariant: rewrite.c compiles and applies nothing the child did not survive: a compile once per
 * text of the module (cached through tether_probe), an application every time (it depends on the
 * whole IR); a crash, a hang or dropped uses leave the IR unchanged, with a diagnostic.
 */
#include "run.h"
#include "../guards/guards.h"

#include <stdlib.h>

/* 120 s: an application that runs that long in the child is refused. */
#define PATTERNS_TIMEOUT_MS 120000

/* Compiling crashes MLIR on modules its PDL lowering does not expect: tried in a child, once per
 * text of the module (its generic form), through tether_probe. */
typedef struct {
  char *text;
  size_t len, cap;
  int oom;
} key_text;

static void key_append(MlirStringRef s, void *ud) {
  key_text *k = ud;
  if (k->oom) return;
  if (k->len + s.length > k->cap) {
    size_t ncap = (k->len + s.length) * 2;
    char *p = realloc(k->text, ncap);
    if (!p) {
      k->oom = 1;
      return;
    }
    k->text = p;
    k->cap = ncap;
  }
  memcpy(k->text + k->len, s.data, s.length);
  k->len += s.length;
}

typedef struct {
  MlirOperation module;
  const void *fns;
  intptr_t n;
  void *state;
} compile_call;

static void compile_in_child(void *ud) {
  compile_call *c = ud;
  tether__pdl_compile(c->module, c->fns, c->n, c->state);
}

int tether__pdl_compile_crashes(MlirOperation module, const void *fns, intptr_t n, void *state) {
  key_text k = {NULL, 0, 0, 0};
  key_append(mlirStringRefCreateFromCString("tether_pdl_freeze\n"), &k);
#if TETHER_MLIR_VERSION >= 22
  /* The names registered decide what MLIR compiles. */
  const tether_pdl_function *fn = fns;
  for (intptr_t i = 0; i < n; i++) {
    key_append(mlirStringRefCreateFromCString(fn[i].rewrite ? "rewrite " : "constraint "), &k);
    key_append(fn[i].name, &k);
    key_append(mlirStringRefCreateFromCString("\n"), &k);
  }
#endif
  MlirOpPrintingFlags f = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsPrintGenericOpForm(f);
  mlirOpPrintingFlagsAssumeVerified(f);
  mlirOperationPrintWithFlags(module, f, key_append, &k);
  mlirOpPrintingFlagsDestroy(f);
  compile_call c = {module, fns, n, state};
  int safe = k.oom ? -1 : tether_probe(k.text, k.len, compile_in_child, &c);
  free(k.text);
  if (safe != 0) return 0;
  mlirEmitError(mlirOperationGetLocation(module),
                "MLIR crashes compiling these PDL patterns (tether compiled them in a child "
                "process first); they were not compiled");
  return 1;
}

/* A PDL rewrite builds operations from whatever the pattern says (an arith.muli with one operand,
 * an arith.constant without its value) and erases operations whose results are still used, and
 * MLIR's folders and inference then run on that IR in the same call, unverified: each application
 * is made in a child first (not cached: it depends on the whole IR). */
static void apply_in_child(void *ud) {
  const tether__apply *x = ud;
  tether__patterns_apply(x);
  /* MLIR 22's rewriter drops the uses of an operation erased while still used: the users are left
   * with null operands, which MLIR's printer and verifier then dereference. */
  if (tether__dropped_uses(x->op, 0)) tether__child_answer(3);
}

int tether__patterns_crash(const tether__apply *x) {
  int r = tether__in_child(apply_in_child, (void *)x, PATTERNS_TIMEOUT_MS);
  if (r == -1 || r == 1) return 0; /* -1: no child could be made; applied untried, as probes are */
  mlirEmitError(mlirOperationGetLocation(x->op),
                r == 3   ? "these patterns erase an operation whose results are still used (tether "
                           "applied them in a child process first): MLIR would leave its users "
                           "with operands that are gone; nothing was changed"
                : r == 0 ? "MLIR crashes applying these patterns to this IR (tether applied "
                           "them in a child process first): a rewrite builds an operation "
                           "MLIR's folders or inference cannot handle (operands or attributes "
                           "missing), or erases an operation whose results are still used; "
                           "nothing was changed"
                         : "applying these patterns to this IR did not finish within 120 s "
                           "in a trial run (tether applies them in a child process first; a "
                           "pattern that undoes another's rewrite never stops); nothing was "
                           "changed");
  return 1;
}
