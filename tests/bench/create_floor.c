/* The floor of the side-by-side rows: the bare C-API calls each row makes, timed in C (issues 13
 * and 24). No binding can be faster than MLIR's own work for the same call.
 *
 *   bazel run -c opt //tests/bench:create_floor -- [N]
 *
 * Prints "KEY NS" lines, CPU ns per call:
 *   constant, addi  mlirOperationStateGet + add results (+ operands) + attributes +
 *                   mlirOperationCreate + mlirBlockAppendOwnedOperation, building arith.constant
 *                   (a result type, a `value` attribute) and arith.addi (two operands from an
 *                   earlier result) at the end of a module's block, as the Operation.create rows;
 *   inttype         mlirIntegerTypeGet(ctx, 32)                  (IntegerType.get_signless(32))
 *   intattr         mlirIntegerAttrGet(i32, k), k = 0..N-1       (IntegerAttr.get(i32, k))
 *   floatattr       mlirFloatAttrDoubleGet(ctx, f32, 1.5)        (FloatAttr.get(f32, 1.5))
 *   typeparse       mlirTypeParseGet of "tensor<4x?xf32>"        (Type.parse)
 *   attrparse       mlirAttributeParseGet of a dense attribute   (Attribute.parse)
 * with the same arguments as tests/bench/side_by_side.py's rows. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/IR.h>
#include <mlir-c/RegisterEverything.h>
#include <stdint.h>
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

  /* The value rows. `sink` keeps the calls from being optimised away. */
  uintptr_t sink = 0;
  double t = cpu_ns();
  for (long k = 0; k < n; k++) sink ^= (uintptr_t)mlirIntegerTypeGet(ctx, 32).ptr;
  printf("inttype %.0f\n", (cpu_ns() - t) / (double)n);
  t = cpu_ns();
  for (long k = 0; k < n; k++) sink ^= (uintptr_t)mlirIntegerAttrGet(i32, k).ptr;
  printf("intattr %.0f\n", (cpu_ns() - t) / (double)n);
  MlirType f32 = mlirF32TypeGet(ctx);
  t = cpu_ns();
  for (long k = 0; k < n; k++) sink ^= (uintptr_t)mlirFloatAttrDoubleGet(ctx, f32, 1.5).ptr;
  printf("floatattr %.0f\n", (cpu_ns() - t) / (double)n);
  MlirStringRef ttext = mlirStringRefCreateFromCString("tensor<4x?xf32>");
  t = cpu_ns();
  for (long k = 0; k < n; k++) sink ^= (uintptr_t)mlirTypeParseGet(ctx, ttext).ptr;
  printf("typeparse %.0f\n", (cpu_ns() - t) / (double)n);
  MlirStringRef atext = mlirStringRefCreateFromCString("dense<[1, 2, 3, 4]> : tensor<4xi32>");
  t = cpu_ns();
  for (long k = 0; k < n; k++) sink ^= (uintptr_t)mlirAttributeParseGet(ctx, atext).ptr;
  printf("attrparse %.0f\n", (cpu_ns() - t) / (double)n);
  if (sink == 1) printf("#\n");
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
