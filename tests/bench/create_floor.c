/* The floor of Operation.create: the bare C-API calls it makes, timed in C (issue 13).
 *
 *   bazel run -c opt //tests/bench:create_floor -- [N]
 *
 * Prints two lines, "constant NS" and "addi NS": CPU ns per operation for
 * mlirOperationStateGet + add results (+ operands) + attributes + mlirOperationCreate +
 * mlirBlockAppendOwnedOperation, building arith.constant (a result type, a `value` attribute)
 * and arith.addi (two operands from an earlier result) at the end of a module's block, as
 * tests/bench/side_by_side.py's Operation.create rows do from Python. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/IR.h>
#include <mlir-c/RegisterEverything.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000;
  if (n <= 0) n = 20000;
  MlirContext ctx = mlirContextCreate();
  MlirDialectRegistry reg = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(reg);
  mlirContextAppendDialectRegistry(ctx, reg);
  mlirDialectRegistryDestroy(reg);
  mlirContextLoadAllAvailableDialects(ctx);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirType i32 = mlirIntegerTypeGet(ctx, 32);
  MlirAttribute attrs[64];
  for (int k = 0; k < 64; k++) attrs[k] = mlirIntegerAttrGet(i32, k);
  MlirModule module = mlirModuleCreateEmpty(loc);
  MlirBlock body = mlirModuleGetBody(module);
  MlirStringRef cname = mlirStringRefCreateFromCString("arith.constant");
  MlirStringRef vname = mlirStringRefCreateFromCString("value");

  double t0 = cpu_ns();
  MlirValue first = {NULL};
  for (long k = 0; k < n; k++) {
    MlirOperationState st = mlirOperationStateGet(cname, loc);
    mlirOperationStateAddResults(&st, 1, &i32);
    MlirNamedAttribute na = mlirNamedAttributeGet(mlirIdentifierGet(ctx, vname), attrs[k & 63]);
    mlirOperationStateAddAttributes(&st, 1, &na);
    MlirOperation op = mlirOperationCreate(&st);
    mlirBlockAppendOwnedOperation(body, op);
    if (!first.ptr) first = mlirOperationGetResult(op, 0);
  }
  double t1 = cpu_ns();
  MlirStringRef aname = mlirStringRefCreateFromCString("arith.addi");
  MlirValue ops[2] = {first, first};
  for (long k = 0; k < n; k++) {
    MlirOperationState st = mlirOperationStateGet(aname, loc);
    mlirOperationStateAddResults(&st, 1, &i32);
    mlirOperationStateAddOperands(&st, 2, ops);
    MlirOperation op = mlirOperationCreate(&st);
    mlirBlockAppendOwnedOperation(body, op);
  }
  double t2 = cpu_ns();
  printf("constant %.0f\naddi %.0f\n", (t1 - t0) / (double)n, (t2 - t1) / (double)n);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
