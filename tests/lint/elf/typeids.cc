// The one definition of Foo's TypeID storage: mlir::detail::TypeIDResolver<Foo>::id.
#include "tests/lint/elf/typeids.h"

MLIR_DEFINE_EXPLICIT_TYPE_ID(tether_test::Foo)
