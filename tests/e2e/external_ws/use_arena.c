/* A test of another Bazel workspace that depends on @tether//arena:tether. */
#include <stdio.h>
#include <string.h>

#include "tether.h"

int main(void) {
  tether_arena *a;
  if (tether_arena_create(&a) != TETHER_OK) return 1;
  const char *src = "func.func private @from_another_workspace()";
  tether_op *m;
  if (tether_module_parse(a, src, strlen(src), &m) != TETHER_OK) return 2;
  if (tether_op_verify(m) != TETHER_OK) return 3;
  printf("1 passed, 0 failed\n");
  return 0;
}
