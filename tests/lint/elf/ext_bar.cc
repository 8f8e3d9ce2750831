// An "extension" using the inline TypeID of Bar: each object that uses it emits the static.
#include "tests/lint/elf/typeids.h"

extern "C" __attribute__((visibility("default"))) const void *tether_test_bar_typeid(void) {
  return mlir::TypeID::get<tether_test::ns::Bar>().getAsOpaquePointer();
}
