/* demo.cc: a direct pybind11 binding of MLIR's C++ classes, written the way GPU kernel compilers
 * write theirs: py::class_<Operation>, <Block>, <Region>, <Value>, op classes through OpState, a
 * builder class that hands out values, ops, blocks and insertion points, block erase and merges,
 * a pass manager run. Built twice from this source (tests/cpp_bindings/BUILD):
 *   DEMO_TETHER=0  the style as it ships: every Python object is a raw pointer into IR;
 *   DEMO_TETHER=1  arena/tether.hpp adopted: holders are tether::ref<T>, and what frees, moves or
 *                  creates roots of IR goes through tether (the "route" namespace below).
 * Everything but the lines marked [migration] (and the test hook `collect`) is the same code in
 * both builds; the misuse suite (the programs in misuse/, test_cpp_bindings.py) runs against both.
 *
 * Invariant (tether build): no Python object of this module holds a raw pointer into IR; every
 * pointer the bound functions receive was read from a valid handle at the call.
 */
// The build (BUILD: DEMO_TETHER=0 and =1); alone, e.g. for tether-lint, the tether build.
#ifndef DEMO_TETHER
#define DEMO_TETHER 1
#endif

#include <llvm/Config/llvm-config.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Transforms/Passes.h>

#if DEMO_TETHER
#include "tether.hpp" // before pybind11 converts any MLIR class
#endif
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace mlir;

/* ---- [migration] holders, and the classes that keep IR pointers --------------------------- */
#if DEMO_TETHER
template <class T> using Borrowed = tether::ref<T>; // IR that other IR owns
template <class T> using Owned = tether::ref<T>;    // values, and the context
using BuilderBase = tether::OpBuilder;              // keeps its insertion point as handles
using SavedInsertPoint = tether::InsertPoint;
using ModuleOwner = tether::ref<ModuleOp>; // instead of OwningOpRef: the arena owns the root
using PassManagerT = tether::PassManager;  // keeps the context; run() goes through the arena
#else
template <class T> using Borrowed = std::unique_ptr<T, py::nodelete>;
template <class T> using Owned = std::unique_ptr<T>;
using BuilderBase = OpBuilder;
using SavedInsertPoint = OpBuilder::InsertPoint;
using ModuleOwner = OwningOpRef<ModuleOp>;
using PassManagerT = PassManager;
#endif

namespace {

/* A module Python owns (what parse and create_module return). */
struct Module {
  ModuleOwner m;
};

/* Creates OpTy at b's insertion point. [migration] tether::OpBuilder::create checks it first. */
template <class OpTy, class... Args> OpTy make(BuilderBase &b, Location loc, Args &&...args) {
#if DEMO_TETHER || LLVM_VERSION_MAJOR < 21
  return b.create<OpTy>(loc, std::forward<Args>(args)...);
#else
  return OpTy::create(b, loc, std::forward<Args>(args)...);
#endif
}

/* The builder class of the binding: an OpBuilder with a location. */
class Builder : public BuilderBase {
public:
  explicit Builder(MLIRContext *ctx) : BuilderBase(ctx), loc(UnknownLoc::get(ctx)) {}

  template <class OpTy, class... Args> OpTy make(Args &&...args) {
    return ::make<OpTy>(*this, loc, std::forward<Args>(args)...);
  }

  Location loc;
};

/* A builder class that holds its OpBuilder instead of being one, as some bindings write theirs. */
struct HoldingBuilder {
  explicit HoldingBuilder(MLIRContext *ctx)
      : builder(std::make_unique<BuilderBase>(ctx)), loc(UnknownLoc::get(ctx)) {}
  std::unique_ptr<BuilderBase> builder;
  Location loc;
};

} // namespace

#if DEMO_TETHER
// [migration] Its bound calls are bracketed as a builder's (tether::OpBuilder::enter / leave).
TETHER_PYBIND11_BUILDER(HoldingBuilder, *self.builder)
#endif

namespace {

/* ---- [migration] what frees, moves, or makes roots of IR ------------------------------------ */
namespace route {
#if DEMO_TETHER
ModuleOwner own(OwningOpRef<ModuleOp> m) { return tether::adopt(std::move(m)); }
ModuleOwner own(ModuleOp m) { return tether::adopt(m); }
tether::ref<Block> new_block(Builder &b, TypeRange types) {
  return tether::new_block(b.getContext(), types);
}
void erase(Operation *op) { tether::erase(op); }
void erase(Block *b) { tether::erase(b); }
void merge_block_before(Block *src, Block *dst) { tether::merge_block_before(src, dst); }
void merge_blocks(Block *src, Block *dst, ValueRange args) { tether::merge_blocks(src, dst, args); }
void push_back(Region *r, Block *b) { tether::append(r, b); }
void move_before(Operation *op, Operation *ref) { tether::move_before(op, ref); }
void replace_all_uses_with(Value of, Value with) { tether::replace_all_uses_with(of, with); }
template <class F> void walk(Operation *op, F fn) { tether::walk(op, fn); }
void erase_argument(Block *b, unsigned i) { tether::erase_argument(b, i); }
void move_before(Block *b, Block *ref) { tether::move_before(b, ref); }
#else
ModuleOwner own(OwningOpRef<ModuleOp> m) { return m; }
ModuleOwner own(ModuleOp m) { return ModuleOwner(m); }
Block *new_block(Builder &b, TypeRange types) {
  Block *block = new Block();
  for (Type t : types) block->addArgument(t, b.loc);
  return block;
}
void erase(Operation *op) { op->erase(); }
void erase(Block *b) { b->erase(); }
void merge_block_before(Block *src, Block *dst) {
  dst->getOperations().splice(dst->begin(), src->getOperations());
  src->dropAllUses();
  src->erase();
}
void merge_blocks(Block *src, Block *dst, ValueRange args) {
  for (unsigned i = 0; i < src->getNumArguments(); ++i)
    src->getArgument(i).replaceAllUsesWith(args[i]);
  dst->getOperations().splice(dst->end(), src->getOperations());
  src->erase();
}
void push_back(Region *r, Block *b) { r->push_back(b); }
void move_before(Operation *op, Operation *ref) { op->moveBefore(ref); }
void replace_all_uses_with(Value of, Value with) { of.replaceAllUsesWith(with); }
template <class F> void walk(Operation *op, F fn) { op->walk(fn); }
void erase_argument(Block *b, unsigned i) { b->eraseArgument(i); }
void move_before(Block *b, Block *ref) {
  if (b->getParent())
    b->moveBefore(ref);
  else
    ref->getParent()->getBlocks().insert(Region::iterator(ref), b);
}
#endif
} // namespace route

/* ---- the binding (the same in both builds) ------------------------------------------------- */

template <class T> std::string str(T &x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  x.print(os);
  return s;
}

MLIRContext *new_context() {
  auto *ctx = new MLIRContext(MLIRContext::Threading::DISABLED);
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect, scf::SCFDialect>();
  return ctx;
}

void bind_ir(py::module_ &m) {
  py::class_<MLIRContext, Owned<MLIRContext>>(m, "context").def(py::init(&new_context));

  py::class_<Type, Owned<Type>>(m, "type")
      .def("__str__", [](Type &t) { return str(t); })
      .def("is_integer", [](Type &t) { return t.isInteger(); })
      .def("width", [](Type &t) { return t.getIntOrFloatBitWidth(); });

  py::class_<Value, Owned<Value>>(m, "value")
      .def("type", &Value::getType)
      .def("set_type", &Value::setType)
      .def("defining_op", [](Value &v) { return v.getDefiningOp(); })
      .def("owner_block",
           [](Value &v) -> Block * {
             if (auto arg = llvm::dyn_cast<BlockArgument>(v)) return arg.getOwner();
             return nullptr;
           })
      .def("replace_all_uses_with", [](Value &v, Value &w) { route::replace_all_uses_with(v, w); })
      .def("num_uses", [](Value &v) { return std::distance(v.use_begin(), v.use_end()); })
      .def("users",
           [](Value &v) {
             std::vector<Operation *> users;
             for (Operation *u : v.getUsers()) users.push_back(u);
             return users;
           })
      .def("__str__", [](Value &v) { return str(v); });

  py::class_<Operation, Borrowed<Operation>>(m, "operation")
      .def("name", [](Operation &op) { return op.getName().getStringRef().str(); })
      .def("num_results", &Operation::getNumResults)
      .def("result",
           [](Operation &op, unsigned i) -> Value {
             if (i >= op.getNumResults()) throw py::index_error();
             return op.getResult(i);
           })
      .def("num_operands", &Operation::getNumOperands)
      .def("operand",
           [](Operation &op, unsigned i) {
             if (i >= op.getNumOperands()) throw py::index_error();
             return op.getOperand(i);
           })
      .def("num_regions", &Operation::getNumRegions)
      .def("region",
           [](Operation &op, unsigned i) -> Region * {
             if (i >= op.getNumRegions()) throw py::index_error();
             return &op.getRegion(i);
           })
      .def("block", &Operation::getBlock)
      .def("parent_op", &Operation::getParentOp)
      .def("erase", [](Operation &op) { route::erase(&op); })
      .def("move_before", [](Operation &op, Operation &ref) { route::move_before(&op, &ref); })
      .def("verify", [](Operation &op) { return succeeded(verify(&op)); })
      .def("walk",
           [](Operation &op, py::function fn) { route::walk(&op, [&](Operation *o) { fn(o); }); })
      .def("__str__", [](Operation &op) { return str(op); });

  py::class_<Region, Borrowed<Region>>(m, "region")
      .def("num_blocks", [](Region &r) { return r.getBlocks().size(); })
      .def("front", [](Region &r) { return r.empty() ? nullptr : &r.front(); })
      .def("blocks",
           [](Region &r) {
             std::vector<Block *> blocks;
             for (Block &b : r) blocks.push_back(&b);
             return blocks;
           })
      .def("push_back", [](Region &r, Block &b) { route::push_back(&r, &b); })
      .def("parent_op", &Region::getParentOp);

  py::class_<Block, Borrowed<Block>>(m, "block")
      .def("num_args", &Block::getNumArguments)
      .def("arg",
           [](Block &b, unsigned i) -> Value {
             if (i >= b.getNumArguments()) throw py::index_error();
             return b.getArgument(i);
           })
      .def("add_arg",
           [](Block &b, Type &t) -> Value {
             return b.addArgument(t, UnknownLoc::get(t.getContext()));
           })
      .def("num_ops", [](Block &b) { return b.getOperations().size(); })
      .def("ops",
           [](Block &b) {
             std::vector<Operation *> ops;
             for (Operation &op : b) ops.push_back(&op);
             return ops;
           })
      .def("first_op", [](Block &b) { return b.empty() ? nullptr : &b.front(); })
      .def("parent_op", &Block::getParentOp)
      .def("region", &Block::getParent)
      .def("erase", [](Block &b) { route::erase(&b); })
      .def("erase_arg",
           [](Block &b, unsigned i) {
             if (i >= b.getNumArguments()) throw py::index_error();
             route::erase_argument(&b, i);
           })
      .def("move_before", [](Block &b, Block &ref) { route::move_before(&b, &ref); })
      .def("merge_block_before", [](Block &b, Block &dst) { route::merge_block_before(&b, &dst); })
      .def("merge_into",
           [](Block &b, Block &dst, std::vector<Value> args) {
             if (args.size() != b.getNumArguments())
               throw py::value_error("one value per argument");
             route::merge_blocks(&b, &dst, args);
           })
      .def("__str__", [](Block &b) { return str(b); });

  py::class_<OpState, Owned<OpState>>(m, "OpState")
      .def("operation", &OpState::getOperation)
      .def("__str__", [](OpState &s) { return str(*s.getOperation()); });
  py::class_<ModuleOp, OpState, Owned<ModuleOp>>(m, "ModuleOp").def("body", [](ModuleOp &mod) {
    return mod.getBody();
  });
  py::class_<func::FuncOp, OpState, Owned<func::FuncOp>>(m, "FuncOp")
      .def("arg",
           [](func::FuncOp &f, unsigned i) -> Value {
             if (i >= f.getNumArguments()) throw py::index_error();
             return f.getArgument(i);
           })
      .def("body", [](func::FuncOp &f) { return &f.getBody().front(); });
  py::class_<scf::ForOp, OpState, Owned<scf::ForOp>>(m, "ForOp")
      .def("body", [](scf::ForOp &f) { return f.getBody(); })
      .def("induction_var", [](scf::ForOp &f) -> Value { return f.getInductionVar(); });

  py::class_<Module>(m, "module")
      .def("op", [](Module &mod) { return mod.m.get(); })
      .def("body", [](Module &mod) { return mod.m->getBody(); })
      .def("operation", [](Module &mod) { return mod.m->getOperation(); })
      .def("__str__", [](Module &mod) { return str(*mod.m->getOperation()); });
  m.def("parse_module", [](MLIRContext &ctx, const std::string &text) {
    OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, ParserConfig(&ctx));
    if (!parsed) throw py::value_error("parse error");
    return Module{route::own(std::move(parsed))};
  });
}

void bind_builder(py::module_ &m) {
  py::class_<SavedInsertPoint>(m, "InsertPoint");

  py::class_<Builder>(m, "builder")
      .def(py::init<MLIRContext *>())
      .def("create_module", [](Builder &b) { return Module{route::own(ModuleOp::create(b.loc))}; })
      .def("get_insertion_block", &Builder::getInsertionBlock)
      .def("set_insertion_point_to_start",
           [](Builder &b, Block &x) { b.setInsertionPointToStart(&x); })
      .def("set_insertion_point_to_end", [](Builder &b, Block &x) { b.setInsertionPointToEnd(&x); })
      .def("set_insertion_point", [](Builder &b, Operation &op) { b.setInsertionPoint(&op); })
      .def("set_insertion_point_after",
           [](Builder &b, Operation &op) { b.setInsertionPointAfter(&op); })
      .def("get_insertion_point", [](Builder &b) { return b.saveInsertionPoint(); })
      .def("restore_insertion_point",
           [](Builder &b, SavedInsertPoint &ip) { b.restoreInsertionPoint(ip); })
      .def("i32", [](Builder &b) -> Type { return b.getI32Type(); })
      .def("index", [](Builder &b) -> Type { return b.getIndexType(); })
      .def(
          "create_func",
          [](Builder &b, const std::string &name, std::vector<Type> args, std::vector<Type> results,
             bool is_private) {
            auto f = b.make<func::FuncOp>(name, b.getFunctionType(args, results));
            if (is_private) f.setPrivate();
            f.addEntryBlock();
            return f;
          },
          py::arg("name"), py::arg("args"), py::arg("results"), py::arg("private") = false)
      .def("create_constant",
           [](Builder &b, int64_t v) -> Value { return b.make<arith::ConstantIntOp>(v, 32); })
      .def("create_index",
           [](Builder &b, int64_t v) -> Value { return b.make<arith::ConstantIndexOp>(v); })
      .def("create_add",
           [](Builder &b, Value &x, Value &y) -> Value { return b.make<arith::AddIOp>(x, y); })
      .def("create_mul",
           [](Builder &b, Value &x, Value &y) -> Value { return b.make<arith::MulIOp>(x, y); })
      .def("create_for", [](Builder &b, Value &lb, Value &ub,
                            Value &step) { return b.make<scf::ForOp>(lb, ub, step); })
      .def("create_return",
           [](Builder &b, std::vector<Value> values) {
             return b.make<func::ReturnOp>(ValueRange(values)).getOperation();
           })
      .def("create_block_in",
           [](Builder &b, Region &r, std::vector<Type> types) {
             std::vector<Location> locs(types.size(), b.loc);
             return b.createBlock(&r, r.end(), types, locs);
           })
      .def("new_block",
           [](Builder &b, std::vector<Type> types) { return route::new_block(b, types); });
}

void bind_holding_builder(py::module_ &m) {
  py::class_<HoldingBuilder>(m, "holding_builder")
      .def(py::init<MLIRContext *>())
      .def("set_insertion_point_to_end",
           [](HoldingBuilder &h, Block &x) { h.builder->setInsertionPointToEnd(&x); })
      .def("get_insertion_block", [](HoldingBuilder &h) { return h.builder->getInsertionBlock(); })
      .def("create_constant", [](HoldingBuilder &h, int64_t v) -> Value {
        return make<arith::ConstantIntOp>(*h.builder, h.loc, v, 32);
      });
}

void bind_passes(py::module_ &m) {
  py::class_<PassManagerT>(m, "pass_manager")
      .def(py::init<MLIRContext *>())
      .def("add_canonicalizer", [](PassManagerT &pm) { pm.addPass(createCanonicalizerPass()); })
      .def("add_cse", [](PassManagerT &pm) { pm.addPass(createCSEPass()); })
      .def("add_symbol_dce", [](PassManagerT &pm) { pm.addPass(createSymbolDCEPass()); })
      .def("run", [](PassManagerT &pm, Operation &op) {
        if (failed(pm.run(&op))) throw std::runtime_error("the pass pipeline failed");
      });
}

} // namespace

PYBIND11_MODULE(demo, m) {
#if DEMO_TETHER
  tether::init_module(m); // [migration] InvalidatedError & co.
#endif
  m.attr("TETHER") = bool(DEMO_TETHER);
  // For the tests: destroy now what no handle reaches (the raw build frees at once anyway).
  m.def("collect", [] {
#if DEMO_TETHER
    tether_collect_all();
#endif
  });
  bind_ir(m);
  bind_builder(m);
  bind_holding_builder(m);
  bind_passes(m);
}
