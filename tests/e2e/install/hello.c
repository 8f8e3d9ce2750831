/* A program of another project, built against an installed tether with pkg-config. */
#include <stdio.h>
#include <string.h>

#include <tether.h>

static void out(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, (FILE *)user); }

int main(void) {
  tether_arena *a;
  if (tether_arena_create(&a) != TETHER_OK) return 1;
  const char *src = "func.func @hello() { return }";
  tether_op *m;
  if (tether_module_parse(a, src, strlen(src), &m) != TETHER_OK) return 2;
  if (tether_op_print(m, (MlirOpPrintingFlags){NULL}, out, stdout) != TETHER_OK) return 3;
  /* The MLIR C API comes from the same library. */
  MlirOperation raw;
  if (tether_op_get(m, &raw) != TETHER_OK || !mlirOperationVerify(raw)) return 4;
  tether_keep_alive(m);
  printf("hello from an installed tether\n");
  return 0;
}
