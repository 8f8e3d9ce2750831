/* The complete example of docs/arena-api.md: a binding's "wrapper objects" in malloc memory, each
 * holding a pinned handle, the way a language runtime would. Kept as a test so the guide cannot
 * rot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tether.h"

/* A wrapper object of some language runtime: malloc memory, invisible to the collector. */
typedef struct wrapper {
  tether_op *op; /* the handle */
  intptr_t pin;  /* keeps it alive while the wrapper lives */
} wrapper;

/* One wrapper per operation: the handle's user pointer finds the existing one. */
static wrapper *wrap(tether_op *op) {
  if (!op) return NULL;
  wrapper *w = tether_handle_get_user(op);
  if (w) return w;
  w = malloc(sizeof *w);
  w->op = op;
  w->pin = tether_pin(op);
  tether_handle_set_user(op, w);
  return w;
}

static void release(wrapper *w) {
  tether_handle_set_user(w->op, NULL);
  tether_unpin(w->pin);
  free(w);
}

static void print_piece(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, (FILE *)user); }

/* Every call returns a status; an invalid handle is an error, never a crash. */
static const char *name_of(wrapper *w, char *buf, size_t n) {
  MlirOperation raw;
  int rc = tether_op_get(w->op, &raw);
  if (rc != TETHER_OK) {
    snprintf(buf, n, "<%s: %s>", tether_strerror(rc),
             tether_reason_text(tether_handle_reason(w->op)));
    return buf;
  }
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(raw));
  snprintf(buf, n, "%.*s", (int)s.length, s.data);
  tether_keep_alive(w->op); /* the raw object is used up to here */
  return buf;
}

int main(void) {
  tether_arena *arena;
  if (tether_arena_create(&arena) != TETHER_OK) return 1;

  const char *src = "func.func @f(%x: i32) -> i32 {\n"
                    "  %0 = arith.addi %x, %x : i32\n"
                    "  return %0 : i32\n"
                    "}\n";
  tether_op *module;
  if (tether_module_parse(arena, src, strlen(src), &module) != TETHER_OK) {
    fprintf(stderr, "parse error:\n%s", tether_arena_last_error(arena));
    return 1;
  }

  /* Navigate: module -> region 0 -> block 0 -> first op (the func). */
  tether_region *region;
  tether_block *block;
  tether_op *func_op;
  tether_op_region(module, 0, &region);
  tether_region_first_block(region, &block);
  tether_block_first_op(block, &func_op);
  wrapper *func = wrap(func_op);

  /* The module's own handle may go: the func keeps the whole module alive. */
  module = NULL;
  tether_collect(arena);
  tether_op_print(func->op, (MlirOpPrintingFlags){NULL}, print_piece, stdout);
  printf("\n");

  /* Identity: the same operation gives the same wrapper. */
  tether_op *again;
  tether_op_parent(func->op, &module);
  tether_op_region(module, 0, &region);
  tether_region_first_block(region, &block);
  tether_block_first_op(block, &again);
  if (wrap(again) != func) return 1;

  /* Erase: the wrapper survives, its handle is invalid, every call says why. */
  char buf[128];
  tether_op *body_first;
  tether_op_region(func->op, 0, &region);
  tether_region_first_block(region, &block);
  tether_block_first_op(block, &body_first);
  wrapper *add = wrap(body_first);
  printf("before: %s\n", name_of(add, buf, sizeof buf));
  if (tether_op_erase(add->op) != TETHER_EBUSY) return 1; /* its result is still returned */
  if (tether_op_erase(func->op) != TETHER_OK) return 1;
  printf("after:  %s\n", name_of(add, buf, sizeof buf));
  if (tether_handle_reason(add->op) != TETHER_REASON_PARENT_ERASED) return 1;

  release(add);
  release(func);
  tether_collect(arena);
  tether_arena_stats s;
  tether_arena_get_stats(arena, &s);
  printf("live roots: %ld\n", (long)s.roots);
  printf("1 passed, 0 failed\n");
  return 0;
}
