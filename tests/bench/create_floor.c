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
 *   buildloop       per op, the build loop of issue 37: an arith.constant with a `value` (its
 *                   name made an identifier each time, as from an attribute dict) and an
 *                   arith.addi of the previous result and the constant's, each appended at the
 *                   end of the block and its result taken (mlirOperationGetResult)
 *   odsconstant     mlirIntegerAttrGet(i32, k & 63) + the constant row  (arith.ConstantOp(i32, v))
 *   odsaddi         the addi row with its result taken               (arith.AddIOp(a, b).result)
 *   funcop          func.func with sym_name (a StringAttr) and function_type (a TypeAttr of
 *                   (i32, i32) -> i32) and one empty region           (func.FuncOp(name, type))
 *   forop           scf.for of three index operands with one region, and its body block (an
 *                   index argument) appended to it                    (scf.ForOp(lb, ub, step))
 *   inttype         mlirIntegerTypeGet(ctx, 32)                  (IntegerType.get_signless(32))
 *   intattr         mlirIntegerAttrGet(i32, k), k = 0..N-1       (IntegerAttr.get(i32, k))
 *   floatattr       mlirFloatAttrDoubleGet(ctx, f32, 1.5)        (FloatAttr.get(f32, 1.5))
 *   typeparse       mlirTypeParseGet of "tensor<4x?xf32>"        (Type.parse)
 *   attrparse       mlirAttributeParseGet of a dense attribute   (Attribute.parse)
 *   print           mlirOperationPrintWithFlags, told the IR verified, of a function of N
 *                   arith.constant ops, per op, in a context that loads dialects on demand
 *                                                                (str(module))
 *   pipeline        mlirModuleCreateParse of that function's text, then a pass manager parsed
 *                   from "builtin.module(canonicalize,cse)" run on it, per op
 *                                                                (canonicalize,cse pipeline)
 * with the same arguments as tests/bench/side_by_side.py's rows. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* What the printer wrote: its length only. */
static void count(MlirStringRef s, void *ud) { *(size_t *)ud += s.length; }

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

  /* The build loop and the builders' rows, each in a module of its own. */
  MlirModule bmod = mlirModuleCreateEmpty(loc);
  MlirBlock bbody = mlirModuleGetBody(bmod);
  double t = cpu_ns();
  MlirValue prev = first;
  for (long k = 0; k < n / 2; k++) {
    MlirOperationState st = mlirOperationStateGet(cname, loc);
    mlirOperationStateAddResults(&st, 1, &i32);
    MlirNamedAttribute na = mlirNamedAttributeGet(mlirIdentifierGet(ctx, vname), attrs[k & 63]);
    mlirOperationStateAddAttributes(&st, 1, &na);
    MlirOperation c = mlirOperationCreate(&st);
    mlirBlockAppendOwnedOperation(bbody, c);
    MlirValue args[2] = {prev, mlirOperationGetResult(c, 0)};
    st = mlirOperationStateGet(aname, loc);
    mlirOperationStateAddResults(&st, 1, &i32);
    mlirOperationStateAddOperands(&st, 2, args);
    MlirOperation add = mlirOperationCreate(&st);
    mlirBlockAppendOwnedOperation(bbody, add);
    prev = mlirOperationGetResult(add, 0);
  }
  printf("buildloop %.0f\n", (cpu_ns() - t) / (double)(n / 2 * 2));
  t = cpu_ns();
  for (long k = 0; k < n; k++) {
    MlirAttribute v = mlirIntegerAttrGet(i32, k & 63);
    MlirOperationState st = mlirOperationStateGet(cname, loc);
    mlirOperationStateAddResults(&st, 1, &i32);
    MlirNamedAttribute na = mlirNamedAttributeGet(mlirIdentifierGet(ctx, vname), v);
    mlirOperationStateAddAttributes(&st, 1, &na);
    mlirBlockAppendOwnedOperation(bbody, mlirOperationCreate(&st));
  }
  printf("odsconstant %.0f\n", (cpu_ns() - t) / (double)n);
  uintptr_t rsink = 0;
  t = cpu_ns();
  for (long k = 0; k < n; k++) {
    MlirOperationState st = mlirOperationStateGet(aname, loc);
    mlirOperationStateAddResults(&st, 1, &i32);
    mlirOperationStateAddOperands(&st, 2, ops);
    MlirOperation op = mlirOperationCreate(&st);
    mlirBlockAppendOwnedOperation(bbody, op);
    rsink ^= (uintptr_t)mlirOperationGetResult(op, 0).ptr;
  }
  printf("odsaddi %.0f\n", (cpu_ns() - t) / (double)n);
  MlirType fins[2] = {i32, i32};
  MlirType ftype = mlirFunctionTypeGet(ctx, 2, fins, 1, &i32);
  MlirStringRef fname = mlirStringRefCreateFromCString("func.func");
  MlirStringRef symname = mlirStringRefCreateFromCString("sym_name");
  MlirStringRef ftname = mlirStringRefCreateFromCString("function_type");
  t = cpu_ns();
  for (long k = 0; k < n; k++) {
    MlirOperationState st = mlirOperationStateGet(fname, loc);
    MlirNamedAttribute fa[2] = {
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, symname),
                              mlirStringAttrGet(ctx, mlirStringRefCreateFromCString("f"))),
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, ftname), mlirTypeAttrGet(ftype))};
    mlirOperationStateAddAttributes(&st, 2, fa);
    MlirRegion r = mlirRegionCreate();
    mlirOperationStateAddOwnedRegions(&st, 1, &r);
    mlirBlockAppendOwnedOperation(bbody, mlirOperationCreate(&st));
  }
  printf("funcop %.0f\n", (cpu_ns() - t) / (double)n);
  MlirType index = mlirIndexTypeGet(ctx);
  MlirStringRef forname = mlirStringRefCreateFromCString("scf.for");
  MlirValue bounds[3];
  for (int i = 0; i < 3; i++) {
    MlirOperationState st = mlirOperationStateGet(cname, loc);
    mlirOperationStateAddResults(&st, 1, &index);
    MlirNamedAttribute na =
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, vname), mlirIntegerAttrGet(index, i));
    mlirOperationStateAddAttributes(&st, 1, &na);
    MlirOperation c = mlirOperationCreate(&st);
    mlirBlockAppendOwnedOperation(bbody, c);
    bounds[i] = mlirOperationGetResult(c, 0);
  }
  t = cpu_ns();
  for (long k = 0; k < n; k++) {
    MlirOperationState st = mlirOperationStateGet(forname, loc);
    mlirOperationStateAddOperands(&st, 3, bounds);
    MlirRegion r = mlirRegionCreate();
    mlirOperationStateAddOwnedRegions(&st, 1, &r);
    MlirOperation op = mlirOperationCreate(&st);
    mlirBlockAppendOwnedOperation(bbody, op);
    MlirBlock b = mlirBlockCreate(1, &index, &loc);
    mlirRegionAppendOwnedBlock(mlirOperationGetRegion(op, 0), b);
  }
  printf("forop %.0f\n", (cpu_ns() - t) / (double)n);
  mlirModuleDestroy(bmod);

  /* The value rows. `sink` keeps the calls from being optimised away. */
  uintptr_t sink = rsink;
  t = cpu_ns();
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

  /* The module of side_by_side.py's str(module) and pipeline rows, in a context that loads
   * dialects as the text needs them (func, arith): every loaded dialect's printer interface is
   * asked about every attribute and type a print meets, so a context with all of them loaded
   * prints slower (upstream 22's Context() loads them all). */
  MlirContext pctx = mlirContextCreate();
  MlirDialectRegistry preg = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(preg);
  mlirContextAppendDialectRegistry(pctx, preg);
  mlirDialectRegistryDestroy(preg);
  size_t cap = (size_t)n * 48 + 128, len = 0;
  char *text = malloc(cap);
  if (!text) return 1;
  len += (size_t)snprintf(text + len, cap - len, "func.func @f() -> i32 {\n");
  for (long k = 0; k < n; k++)
    len += (size_t)snprintf(text + len, cap - len, "  %%c%ld = arith.constant %ld : i32\n", k, k);
  len += (size_t)snprintf(text + len, cap - len, "  return %%c0 : i32\n}");
  MlirStringRef mtext = mlirStringRefCreate(text, len);
  MlirModule parsed = mlirModuleCreateParse(pctx, mtext);
  if (mlirModuleIsNull(parsed)) return 1;
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsAssumeVerified(flags);
  size_t printed = 0;
  double best = 0;
  for (int r = 0; r < 3; r++) { /* the best of three: a process's first print is slower */
    t = cpu_ns();
    mlirOperationPrintWithFlags(mlirModuleGetOperation(parsed), flags, count, &printed);
    double dt = cpu_ns() - t;
    if (!r || dt < best) best = dt;
  }
  printf("print %.0f\n", best / (double)n);
  sink ^= printed;
  mlirOpPrintingFlagsDestroy(flags);
  mlirModuleDestroy(parsed);
  mlirRegisterAllPasses();
  t = cpu_ns();
  MlirModule m = mlirModuleCreateParse(pctx, mtext);
  MlirPassManager pm = mlirPassManagerCreate(pctx);
  MlirLogicalResult ok = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("builtin.module(canonicalize,cse)"), count, &printed);
  if (mlirModuleIsNull(m) || mlirLogicalResultIsFailure(ok) ||
      mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(m))))
    return 1;
  printf("pipeline %.0f\n", (cpu_ns() - t) / (double)n);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(m);
  mlirContextDestroy(pctx);
  free(text);
  if (sink == 1) printf("#\n");
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
