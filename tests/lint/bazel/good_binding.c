#include <binding/binding.h>

int binding_dump(binding_op *op) {
  MlirOperation raw;
  if (tether_op_get(op->h, &raw) != TETHER_OK) return -1;
  mlirOperationDump(raw);
  return 0;
}
