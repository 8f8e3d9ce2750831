#include <binding/binding.h>

/* The seed's bug: the raw operation is used without checking the handle's status. */
void binding_dump(binding_op *op) {
  MlirOperation raw;
  tether_op_get(op->h, &raw);
  mlirOperationDump(raw);
}
