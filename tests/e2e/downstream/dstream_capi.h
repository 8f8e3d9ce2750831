/* The dstream dialect's C API, as a downstream project exposes it. */
#ifndef DSTREAM_CAPI_H
#define DSTREAM_CAPI_H

#include <mlir-c/IR.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Registers and loads the dstream dialect in ctx.
void dstreamRegisterDialect(MlirContext ctx);
/// !dstream.pixel in ctx (the dialect must be loaded).
MlirType dstreamPixelTypeGet(MlirContext ctx);
/// True if t is !dstream.pixel.
bool dstreamTypeIsAPixel(MlirType t);
/// The address of PixelType's TypeID, as this shared object sees it.
const void *dstreamPixelTypeID(void);
/// The address of MemRefElementTypeInterface's TypeID, as this shared object sees it.
const void *dstreamMemRefElementInterfaceTypeID(void);

#ifdef __cplusplus
}
#endif
#endif
