/* Minimal test harness for the arena's C tests: CHECK aborts the test with file:line, and every
 * test program ends with one "N passed, 0 failed" line. */
#ifndef TETHER_TEST_CHECK_H
#define TETHER_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tether.h"

static int check_passed;

#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);                        \
      printf("%d passed, 1 failed\n", check_passed);                                               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define CHECK_RC(expr, want)                                                                       \
  do {                                                                                             \
    int rc_ = (expr);                                                                              \
    if (rc_ != (want)) {                                                                           \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #expr,           \
              tether_status_name(rc_), tether_status_name(want));                                  \
      printf("%d passed, 1 failed\n", check_passed);                                               \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define OK(expr) CHECK_RC(expr, TETHER_OK)

#define RUN(test)                                                                                  \
  do {                                                                                             \
    test();                                                                                        \
    check_passed++;                                                                                \
    printf("ok: %s\n", #test);                                                                     \
  } while (0)

#define DONE()                                                                                     \
  do {                                                                                             \
    printf("%d passed, 0 failed\n", check_passed);                                                 \
    return 0;                                                                                      \
  } while (0)

/* Conservative collection: a pointer left in a register or a stale stack slot can keep one object
 * alive through a collection. Tests that need one object freed collect repeatedly (each
 * tether_collect clears the stack below it first) until the condition holds, at most 10 times. */
#define COLLECT_UNTIL(a, cond)                                                                     \
  do {                                                                                             \
    for (int i_ = 0; i_ < 10 && !(cond); i_++) tether_collect(a);                                  \
  } while (0)

typedef struct {
  char *data;
  size_t len, cap;
} strbuf;

static void strbuf_append(MlirStringRef s, void *user) {
  strbuf *b = (strbuf *)user;
  if (b->len + s.length + 1 > b->cap) {
    b->cap = (b->len + s.length + 1) * 2;
    b->data = (char *)realloc(b->data, b->cap);
  }
  memcpy(b->data + b->len, s.data, s.length);
  b->len += s.length;
  b->data[b->len] = 0;
}

/* The printed form of op (caller frees), or NULL if the handle is invalid. */
static inline char *print_op(tether_op *op) {
  strbuf b = {NULL, 0, 0};
  if (tether_op_print(op, (MlirOpPrintingFlags){NULL}, strbuf_append, &b) != TETHER_OK) {
    free(b.data);
    return NULL;
  }
  if (!b.data) b.data = (char *)calloc(1, 1);
  return b.data;
}

static inline int prints_containing(tether_op *op, const char *needle) {
  char *s = print_op(op);
  int ok = s && strstr(s, needle) != NULL;
  free(s);
  return ok;
}

/* Parses a module or fails the test. */
static inline tether_op *parse(tether_arena *a, const char *text) {
  tether_op *m = NULL;
  int rc = tether_module_parse(a, text, strlen(text), &m);
  if (rc != TETHER_OK)
    fprintf(stderr, "parse failed: %s\n%s", tether_strerror(rc), tether_arena_last_error(a));
  CHECK(rc == TETHER_OK && m);
  return m;
}

/* The i-th operation of the first block of op's first region. */
static inline tether_op *body_op(tether_op *op, intptr_t i) {
  tether_region *r;
  tether_block *b;
  tether_op *o;
  OK(tether_op_region(op, 0, &r));
  OK(tether_region_block(r, 0, &b));
  OK(tether_block_op(b, i, &o));
  return o;
}

/* Whether the arena's last error mentions needle. */
static inline int error_mentions(tether_arena *a, const char *needle) {
  return strstr(tether_arena_last_error(a), needle) != NULL;
}

/* Result i of op, as MLIR's value (an operand for create_op). The caller holds op, which keeps
 * the value alive for as long as the test uses it. */
static inline MlirValue raw_result(tether_op *op, intptr_t i) {
  tether_value *v;
  MlirValue raw;
  OK(tether_op_result(op, i, &v));
  OK(tether_value_get(v, &raw));
  // NOLINTNEXTLINE(tether-raw-op-escape)
  return raw;
}

/* A detached operation NAME with these operands and result types, made through tether_op_create
 * (at an unknown location), or fails the test. */
static inline tether_op *create_op(tether_arena *a, const char *name, intptr_t n_operands,
                                   const MlirValue *operands, intptr_t n_results,
                                   const MlirType *results) {
  MlirOperationState st = mlirOperationStateGet(mlirStringRefCreateFromCString(name),
                                                mlirLocationUnknownGet(tether_arena_context(a)));
  if (n_operands) mlirOperationStateAddOperands(&st, n_operands, operands);
  if (n_results) mlirOperationStateAddResults(&st, n_results, results);
  tether_op *op;
  OK(tether_op_create(a, &st, &op));
  return op;
}

/* Appends op to the first block of module's body. */
static inline void append_to_body(tether_op *module, tether_op *op) {
  tether_region *r;
  tether_block *b;
  OK(tether_op_region(module, 0, &r));
  OK(tether_region_first_block(r, &b));
  OK(tether_block_append_op(b, op));
}

static inline tether_arena_stats stats(tether_arena *a) {
  tether_arena_stats s;
  OK(tether_arena_get_stats(a, &s));
  return s;
}

#endif
