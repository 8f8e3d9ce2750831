// The dstream C API: C++ behind a C interface (the MLIR C API's wrap/unwrap are header-only).
#include "dstream_capi.h"

#include "DStream.h"
#include "mlir/CAPI/IR.h"

void dstreamRegisterDialect(MlirContext ctx) {
  mlir::DialectRegistry registry;
  registry.insert<dstream::DStreamDialect>();
  unwrap(ctx)->appendDialectRegistry(registry);
  unwrap(ctx)->getOrLoadDialect<dstream::DStreamDialect>();
}

MlirType dstreamPixelTypeGet(MlirContext ctx) { return wrap(dstream::PixelType::get(unwrap(ctx))); }

bool dstreamTypeIsAPixel(MlirType t) { return llvm::isa<dstream::PixelType>(unwrap(t)); }

const void *dstreamPixelTypeID(void) {
  return mlir::TypeID::get<dstream::PixelType>().getAsOpaquePointer();
}

const void *dstreamMemRefElementInterfaceTypeID(void) {
  return mlir::TypeID::get<mlir::MemRefElementTypeInterface>().getAsOpaquePointer();
}
