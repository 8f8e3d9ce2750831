// The fallback TypeID (no explicit definition: resolved by type name at run time) and an inline
// TypeID of a class in an anonymous namespace (private by construction: never reported).
#include "tests/lint/elf/typeids.h"

namespace tether_test {
struct Fallback {};
} // namespace tether_test

namespace {
struct Internal {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(Internal)
};
} // namespace

extern "C" __attribute__((visibility("default"))) const void *tether_test_fallback_typeid(void) {
  return mlir::TypeID::get<tether_test::Fallback>().getAsOpaquePointer();
}

extern "C" __attribute__((visibility("default"))) const void *tether_test_internal_typeid(void) {
  return mlir::TypeID::get<Internal>().getAsOpaquePointer();
}
