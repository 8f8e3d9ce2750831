/* Foundation version of the arena: an arena owns an MlirContext, a root handle owns its IR; both
 * are destroyed at safe points (tether_collect) once unreachable. */
#include "tether_internal.h"

#include <mlir-c/RegisterEverything.h>
#include <pthread.h>
#include <string.h>

struct tether_arena {
  MlirContext ctx;
};

struct tether_op {
  tether_arena *arena;
  MlirOperation raw;
};

static pthread_once_t gc_once = PTHREAD_ONCE_INIT;
static intptr_t live_roots;

static void gc_init(void) {
  GC_INIT();
  GC_allow_register_threads();
  GC_set_finalize_on_demand(1);
}

const char *tether_strerror(int status) {
  switch (status) {
#define TETHER__CASE(name, value, text)                                                            \
  case value:                                                                                      \
    return text;
    TETHER_STATUS_LIST(TETHER__CASE)
#undef TETHER__CASE
  }
  return "unknown status";
}

static void arena_finalize(void *obj, void *cd) {
  (void)cd;
  tether_arena *a = obj;
  mlirContextDestroy(a->ctx);
}

int tether_arena_create(tether_arena **out) {
  if (!out) return TETHER_EARG;
  pthread_once(&gc_once, gc_init);
  tether_arena *a = GC_MALLOC(sizeof *a);
  if (!a) return TETHER_ENOMEM;
  MlirDialectRegistry reg = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(reg);
  a->ctx = mlirContextCreateWithRegistry(reg, false);
  mlirDialectRegistryDestroy(reg);
  GC_register_finalizer(a, arena_finalize, NULL, NULL, NULL);
  *out = a;
  return TETHER_OK;
}

static void op_finalize(void *obj, void *cd) {
  (void)cd;
  tether_op *op = obj;
  mlirOperationDestroy(op->raw);
  live_roots--;
}

int tether_module_parse(tether_arena *a, const char *asm_text, size_t len, tether_op **out) {
  if (!a || !asm_text || !out) return TETHER_EARG;
  MlirOperation raw = mlirOperationCreateParse(a->ctx, (MlirStringRef){asm_text, len},
                                               mlirStringRefCreateFromCString("parse"));
  if (mlirOperationIsNull(raw)) return TETHER_EPARSE;
  tether_op *op = GC_MALLOC(sizeof *op);
  if (!op) {
    mlirOperationDestroy(raw);
    return TETHER_ENOMEM;
  }
  op->arena = a;
  op->raw = raw;
  live_roots++;
  GC_register_finalizer(op, op_finalize, NULL, NULL, NULL);
  *out = op;
  return TETHER_OK;
}

int tether_op_print(tether_op *op, MlirStringCallback cb, void *user) {
  if (!op || !cb) return TETHER_EARG;
  mlirOperationPrint(op->raw, cb, user);
  return TETHER_OK;
}

void tether_collect(void) {
  pthread_once(&gc_once, gc_init);
  for (int i = 0; i < 4; i++) {
    GC_gcollect();
    GC_invoke_finalizers();
  }
}

intptr_t tether_live_roots(void) { return live_roots; }
