// dstream: a tiny out-of-tree dialect, as a downstream project writes one. One type, !dstream.pixel,
// that can be a memref element (it implements MemRefElementTypeInterface).
#ifndef DSTREAM_TD
#define DSTREAM_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/OpBase.td"

def DStream_Dialect : Dialect {
  let name = "dstream";
  let cppNamespace = "::dstream";
  let useDefaultTypePrinterParser = 1;
}

class DStream_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<DStream_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def DStream_PixelType : DStream_Type<"Pixel", "pixel", [MemRefElementTypeInterface]> {
  let summary = "a pixel: usable as a memref element";
}

// An operation: its Python class is generated with tether's tether_dialect_library, and it takes
// an arith result in one program (tests/e2e/test_downstream.py).
def DStream_ToPixelOp : Op<DStream_Dialect, "to_pixel"> {
  let summary = "an integer as a pixel";
  let arguments = (ins AnyInteger:$value);
  let results = (outs DStream_PixelType:$pixel);
}

#endif
