// The dstream dialect's C++ declarations. TypeIDs are declared here (by ODS) and defined in
// exactly one .cpp file: the strong way.
#ifndef DSTREAM_H
#define DSTREAM_H

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Types.h"

#include "DStreamDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "DStreamTypes.h.inc"

#define GET_OP_CLASSES
#include "DStreamOps.h.inc"

#endif
