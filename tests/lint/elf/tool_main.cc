// An "-opt tool": an executable with its own copy of Foo's TypeID (the dialect library linked in
// statically), next to a shared library that defines it too (typeids.cc in libelf_good_core.so).
#include "tests/lint/elf/typeids.h"

MLIR_DEFINE_EXPLICIT_TYPE_ID(tether_test::Foo)

int main() { return mlir::TypeID::get<tether_test::Foo>().getAsOpaquePointer() == nullptr; }
