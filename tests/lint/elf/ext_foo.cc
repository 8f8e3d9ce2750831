// An "extension": returns the address that is Foo's TypeID in this object's view.
#include "tests/lint/elf/typeids.h"

extern "C" __attribute__((visibility("default"))) const void *tether_test_foo_typeid(void) {
  return mlir::TypeID::get<tether_test::Foo>().getAsOpaquePointer();
}
