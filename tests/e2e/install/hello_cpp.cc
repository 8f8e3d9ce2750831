/* A C++ program of another project, built against an installed tether with pkg-config tether-cpp:
 * tether.hpp without pybind11 (TETHER_HPP_NO_PYBIND11), on MLIR's C++ classes. */
#define TETHER_HPP_NO_PYBIND11
#include <tether.hpp>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/Parser/Parser.h>

#include <cstdio>

int main() {
  // The arena adopts the context and owns it; refs keep it alive.
  tether::ref<mlir::MLIRContext> ctx = tether::context_ref(new mlir::MLIRContext());
  ctx->loadDialect<mlir::func::FuncDialect>();
  tether::ref<mlir::ModuleOp> mod = tether::adopt(mlir::parseSourceString<mlir::ModuleOp>(
      "func.func @hello() { return }", mlir::ParserConfig(ctx.get())));
  auto fn = tether::ref<mlir::Operation>::of(&mod->getBody()->front());
  std::printf("%s\n", tether::print(fn.get()).c_str());
  tether::erase(fn.get());
  try {
    fn.get();
    return 1;
  } catch (const tether::error &e) {
    std::printf("%s\n", e.what()); // the operation has been invalidated: the object was erased
  }
  std::printf("hello from an installed tether.hpp\n");
  return 0;
}
