// infer.cc: return-type inference as MLIR's own op creation does it, for tether_infer (probe.c).
//
// C++ because MLIR forces it: the C API's inference entry points
// (mlirInferTypeOpInterfaceInferReturnTypes and its shaped twin) in LLVM 19 take the operation's
// properties as an opaque pointer the C API gives no way to build, and hand the inference null
// regions (their region list is released before the call). Operations whose inherent attributes
// are properties (shape.const_shape, most ops of MLIR 19) then infer from default properties, and
// ops that infer from their regions read null. mlirOperationCreate gets both right, but it owns
// and destroys the caller's regions when inference fails. So this file does what
// mlirOperationCreate does before it creates anything: properties built from the attribute
// dictionary (OperationName::setOpPropertiesFromAttribute), the real regions, then the op's
// InferTypeOpInterface or InferShapedTypeOpInterface; the caller keeps everything it passed.
#include "tether.h"

#include <memory>

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

namespace {

// Default-initialized properties of an operation, filled from its attribute dictionary; destroyed
// with the object. Empty (null) when the operation has no properties.
class Properties {
public:
  Properties(const RegisteredOperationName &name) : name_(name) {
    int size = name.getOpPropertyByteSize();
    if (size <= 0) return;
    storage_ = std::make_unique<char[]>(static_cast<size_t>(size));
    name.initOpProperties(OpaqueProperties(storage_.get()), OpaqueProperties(nullptr));
  }
  ~Properties() {
    if (storage_) name_.destroyOpProperties(OpaqueProperties(storage_.get()));
  }
  Properties(const Properties &) = delete;
  Properties &operator=(const Properties &) = delete;

  LogicalResult fill(DictionaryAttr attrs, Location loc) {
    if (!storage_ || attrs.empty()) return success();
    return name_.setOpPropertiesFromAttribute(name_, OpaqueProperties(storage_.get()), attrs, [&] {
      return emitError(loc) << "tether: the attributes of '" << name_.getStringRef()
                            << "' do not make its properties: ";
    });
  }
  OpaqueProperties get() const { return OpaqueProperties(storage_.get()); }

private:
  RegisteredOperationName name_;
  std::unique_ptr<char[]> storage_;
};

} // namespace

// Declared for probe.c in tether_internal.h (which is C only).
extern "C" MlirLogicalResult tether__infer_call(const tether_infer_call *c,
                                                const MlirValue *operands,
                                                const MlirRegion *regions, MlirTypesCallback types,
                                                MlirShapedTypeComponentsCallback components,
                                                void *user) {
  MLIRContext *ctx = unwrap(c->ctx);
  std::optional<RegisteredOperationName> info =
      RegisteredOperationName::lookup(unwrap(c->name), ctx);
  if (!info) return mlirLogicalResultFailure();
  Location loc = unwrap(c->location);

  // operands and regions come padded with nulls after their n entries (probe.c: reads past the
  // end are deterministic); the ranges themselves hold exactly n.
  SmallVector<Value> vals;
  vals.reserve(static_cast<size_t>(c->n_operands));
  for (intptr_t i = 0; i < c->n_operands; i++) vals.push_back(unwrap(operands[i]));
  SmallVector<Region *> regs;
  regs.reserve(static_cast<size_t>(c->n_regions));
  for (intptr_t i = 0; i < c->n_regions; i++) regs.push_back(unwrap(regions[i]));

  DictionaryAttr attrs;
  if (!mlirAttributeIsNull(c->attributes))
    attrs = llvm::dyn_cast<DictionaryAttr>(unwrap(c->attributes));
  if (!attrs) attrs = DictionaryAttr::get(ctx);

  Properties props(*info);
  if (failed(props.fill(attrs, loc))) return mlirLogicalResultFailure();

  if (!c->shaped) {
    auto *iface = info->getInterface<InferTypeOpInterface>();
    if (!iface) return mlirLogicalResultFailure();
    SmallVector<Type> inferred;
    if (failed(iface->inferReturnTypes(ctx, loc, ValueRange(vals), attrs, props.get(),
                                       RegionRange(ArrayRef<Region *>(regs)), inferred)))
      return mlirLogicalResultFailure();
    SmallVector<MlirType> out;
    out.reserve(inferred.size());
    for (Type t : inferred) out.push_back(wrap(t));
    types(static_cast<intptr_t>(out.size()), out.data(), user);
    return mlirLogicalResultSuccess();
  }

  auto *iface = info->getInterface<InferShapedTypeOpInterface>();
  if (!iface) return mlirLogicalResultFailure();
  SmallVector<ShapedTypeComponents> inferred;
  if (failed(iface->inferReturnTypeComponents(ctx, loc, ValueShapeRange(ValueRange(vals)), attrs,
                                              props.get(), RegionRange(ArrayRef<Region *>(regs)),
                                              inferred)))
    return mlirLogicalResultFailure();
  for (const ShapedTypeComponents &t : inferred) {
    if (t.hasRank())
      components(true, static_cast<intptr_t>(t.getDims().size()), t.getDims().data(),
                 wrap(t.getElementType()), wrap(t.getAttribute()), user);
    else
      components(false, 0, nullptr, wrap(t.getElementType()), wrap(t.getAttribute()), user);
  }
  return mlirLogicalResultSuccess();
}
