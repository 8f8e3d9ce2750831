#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tether.h"

#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);                        \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

struct buf {
  char data[4096];
  size_t len;
};

static void append(MlirStringRef s, void *user) {
  struct buf *b = user;
  if (b->len + s.length < sizeof b->data) {
    memcpy(b->data + b->len, s.data, s.length);
    b->len += s.length;
    b->data[b->len] = 0;
  }
}

int main(void) {
  tether_arena *a = NULL;
  CHECK(tether_arena_create(&a) == TETHER_OK);
  const char *src = "func.func @f(%x: i32) -> i32 { return %x : i32 }";
  tether_op *m = NULL;
  CHECK(tether_module_parse(a, src, strlen(src), &m) == TETHER_OK);
  struct buf b = {{0}, 0};
  CHECK(tether_op_print(m, append, &b) == TETHER_OK);
  CHECK(strstr(b.data, "func.func @f(%arg0: i32) -> i32") != NULL);
  CHECK(strstr(b.data, "return %arg0 : i32") != NULL);

  tether_op *bad = NULL;
  CHECK(tether_module_parse(a, "func.func @", 11, &bad) == TETHER_EPARSE);
  CHECK(bad == NULL);
  printf("parse_test: 1 passed, 0 failed\n");
  return 0;
}
