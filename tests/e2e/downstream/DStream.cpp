// The dstream dialect: the one translation unit that defines its TypeIDs.
#include "DStream.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/TypeSwitch.h"

#include "DStreamDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "DStreamTypes.cpp.inc"

#define GET_OP_CLASSES
#include "DStreamOps.cpp.inc"

void dstream::DStreamDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "DStreamTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "DStreamOps.cpp.inc"
      >();
}
