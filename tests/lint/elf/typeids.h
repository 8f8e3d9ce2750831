// TypeIDs for typeid-elf's test objects: Foo's is declared here and defined once, in typeids.cc
// (MLIR_DEFINE_EXPLICIT_TYPE_ID); Bar's is inline (MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID),
// a function-local static with vague linkage in every object that uses it.
#ifndef TETHER_TESTS_LINT_ELF_TYPEIDS_H
#define TETHER_TESTS_LINT_ELF_TYPEIDS_H

#include "mlir/Support/TypeID.h"

namespace tether_test {
struct Foo {};
namespace ns {
struct Bar {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(Bar)
};
} // namespace ns
} // namespace tether_test

MLIR_DECLARE_EXPLICIT_TYPE_ID(tether_test::Foo)

#endif
