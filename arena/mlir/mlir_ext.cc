// mlir_ext.cc: what the arena needs from MLIR that its C API cannot give. C++ because MLIR
// forces it; each function is the C API's own version with the one thing it lacks.
//
// Return-type inference (tether__infer_call, for tether_infer in guards/verdicts.c): LLVM 19's
// C-API inference functions (mlirInferTypeOpInterfaceInferReturnTypes and its shaped twin) take the
// operation's properties as an opaque pointer the C API gives no way to build, and hand the
// inference null regions (their region list is released before the call). Operations whose
// inherent attributes are properties (shape.const_shape, most ops of MLIR 19) then infer from
// default properties, and ops that infer from their regions read null. mlirOperationCreate gets
// both right, but it owns and destroys the caller's regions when inference fails. So this does
// what mlirOperationCreate does before it creates anything: properties built from the attribute
// dictionary (OperationName::setOpPropertiesFromAttribute), the real regions, then the op's
// InferTypeOpInterface or InferShapedTypeOpInterface; the caller keeps everything it passed.
//
// Whether a block ends in a terminator (tether__block_has_terminator): the trait looked up once
// per name (a few names cached), not per insertion.
//
// Never instantiate TypeID::get of a template (an op trait like OpTrait::IsTerminator, whose
// TypeID is resolved by its type's name) in this file: gcc spells that name differently from the
// clang that built libMLIR, and the linker merges this file's inline instantiation with the C-API
// archive's in libtether_capi.so, so MLIR's own mlirBlockGetTerminator would then look for a
// trait no op has (it did: every block seemed to have no terminator). Ask through the C API.
//
// Operation creation (tether__operation_create, for create.c): mlirOperationCreate frees the
// state's arrays (the caller must copy them first), looks the name up every time and uniques an
// attribute dictionary that an op with properties takes apart again; this one borrows the arrays,
// keeps the registered names the arena created last (a few) and puts inherent attributes straight
// into the properties.
#include "mlir_ext.h"

#include <memory>

#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/ThreadPool.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Parser/Parser.h"

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

extern "C" MlirLogicalResult tether__infer_call(const tether_infer_call *c, void *opname,
                                                MlirTypesCallback types,
                                                MlirShapedTypeComponentsCallback components,
                                                void *user) {
  MLIRContext *ctx = unwrap(c->ctx);
  std::optional<RegisteredOperationName> info;
  if (opname)
    info = OperationName::getFromOpaquePointer(opname).getRegisteredInfo();
  else
    info = RegisteredOperationName::lookup(unwrap(c->name), ctx);
  if (!info) return mlirLogicalResultFailure();
  Location loc = unwrap(c->location);

  // The operands and regions copied with nulls after their n entries: generated inference that
  // reads past the operands it was given (arith.addi given none reads operands[0]) reads a null,
  // and crashes the same way in a trial's process and here, instead of depending on what an
  // earlier call left in the copies' storage (guards/verdicts.c). The ranges hold exactly n.
  constexpr size_t kPad = 16;
  size_t nops = static_cast<size_t>(c->n_operands), nregs = static_cast<size_t>(c->n_regions);
  SmallVector<Value, 32> vals(nops + kPad);
  for (size_t i = 0; i < nops; i++) vals[i] = unwrap(c->operands[i]);
  SmallVector<Region *, 20> regs(nregs + kPad, nullptr);
  for (size_t i = 0; i < nregs; i++) regs[i] = unwrap(c->regions[i]);

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
    if (failed(iface->inferReturnTypes(
            ctx, loc, ValueRange(ArrayRef<Value>(vals.data(), nops)), attrs, props.get(),
            RegionRange(ArrayRef<Region *>(regs.data(), nregs)), inferred)))
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
  if (failed(iface->inferReturnTypeComponents(
          ctx, loc, ValueShapeRange(ValueRange(ArrayRef<Value>(vals.data(), nops))), attrs,
          props.get(), RegionRange(ArrayRef<Region *>(regs.data(), nregs)), inferred)))
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

// Whether op's name is registered with its context (an O(1) check; the C API only has the
// lookup by name, mlirContextIsRegisteredOperation).
extern "C" bool tether__op_is_registered(MlirOperation op) { return unwrap(op)->isRegistered(); }

/* Depth-first over the registered operations of each block of a graph region, along operands
 * defined in the same block by registered operations: an operation met again while on the path
 * closes a cycle. Iterative (a block may hold millions of operations). */
extern "C" MlirOperation tether__registered_cycle(MlirOperation root) {
  Operation *found = nullptr;
  unwrap(root)->walk([&](Block *block) {
    Region *region = block->getParent();
    if (!region || mlir::mayHaveSSADominance(*region)) return WalkResult::advance();
    llvm::DenseMap<Operation *, uint8_t> color; /* absent: unseen, 1: on the path, 2: done */
    SmallVector<std::pair<Operation *, unsigned>> path;
    for (Operation &start : *block) {
      if (!start.isRegistered() || color.count(&start)) continue;
      color[&start] = 1;
      path.push_back({&start, 0});
      while (!path.empty()) {
        Operation *op = path.back().first;
        unsigned i = path.back().second;
        if (i == op->getNumOperands()) {
          color[op] = 2;
          path.pop_back();
          continue;
        }
        path.back().second = i + 1;
        Operation *def = op->getOperand(i).getDefiningOp();
        if (!def || def->getBlock() != block || !def->isRegistered()) continue;
        auto it = color.find(def);
        if (it == color.end()) {
          color[def] = 1;
          path.push_back({def, 0});
        } else if (it->second == 1) {
          found = def;
          return WalkResult::interrupt();
        }
      }
    }
    return WalkResult::advance();
  });
  return wrap(found);
}

// A registered operation's default properties, made once per name (the cache keeps a few): the
// new operation's properties are copy-constructed from them, and the op's populateDefaultProperties
// then finds its defaults already set (ODS: `if (!properties.x) properties.x = ...get(...)`).
static OpaqueProperties defaultProperties(OperationName name, tether__opname_cache *cache) {
  if (!name.isRegistered()) return OpaqueProperties(nullptr);
  void *key = name.getAsOpaquePointer();
  for (auto &e : cache->props)
    if (e.name == key) return OpaqueProperties(e.blob);
  auto &e = cache->props[cache->next_props++ % (sizeof cache->props / sizeof cache->props[0])];
  if (e.name) {
    OperationName::getFromOpaquePointer(e.name).destroyOpProperties(OpaqueProperties(e.blob));
    free(e.blob);
    e.name = e.blob = nullptr;
  }
  int size = name.getOpPropertyByteSize();
  void *blob = size > 0 ? malloc(static_cast<size_t>(size)) : nullptr;
  if (!blob) return OpaqueProperties(nullptr);
  name.initOpProperties(OpaqueProperties(blob), OpaqueProperties(nullptr));
  e.name = key;
  e.blob = blob;
  return OpaqueProperties(blob);
}

extern "C" void tether__opname_cache_clear(tether__opname_cache *cache) {
  cache->empty_dict = nullptr;
  for (auto &e : cache->props) {
    if (!e.name) continue;
    OperationName::getFromOpaquePointer(e.name).destroyOpProperties(OpaqueProperties(e.blob));
    free(e.blob);
    e.name = e.blob = nullptr;
  }
}

// The cache slot of an operation name: its length and three of its bytes (names differ there:
// arith.constant, arith.addi, func.return ...).
static inline unsigned opnameSlot(StringRef name) {
  size_t n = name.size();
  if (!n) return 0;
  unsigned h = static_cast<unsigned>(n) * 31u + static_cast<unsigned char>(name[n - 1]) * 7u +
               static_cast<unsigned char>(name[n / 2]) * 131u +
               static_cast<unsigned char>(name[n - 2 < n ? n - 2 : 0]);
  return (h ^ (h >> 5)) % TETHER__OPNAMES;
}

static_assert(sizeof(MlirType) == sizeof(Type) && sizeof(MlirValue) == sizeof(Value) &&
                  sizeof(MlirBlock) == sizeof(Block *),
              "the C API's handles are one pointer, as MLIR's own");

extern "C" MlirOperation tether__operation_create(const MlirOperationState *st,
                                                  tether__opname_cache *cache) {
  MLIRContext *ctx = unwrap(mlirLocationGetContext(st->location));
  StringRef name = unwrap(st->name);
  std::optional<OperationName> opName;
  auto &slot = cache->names[opnameSlot(name)];
  if (slot.opaque && slot.len == name.size() && !memcmp(slot.name, name.data(), name.size()))
    opName = OperationName::getFromOpaquePointer(slot.opaque);
  else {
    // Load the op's dialect first, so that a registered op is not created as an unregistered one.
    size_t dot = name.find('.');
    if (dot != StringRef::npos) ctx->getOrLoadDialect(name.take_front(dot));
    opName = OperationName(name, ctx);
    // Only registered names are kept: an unregistered one may become registered when a dialect
    // is added to the context later.
    if (opName->isRegistered() && name.size() <= sizeof slot.name) {
      memcpy(slot.name, name.data(), name.size());
      slot.len = name.size();
      slot.opaque = opName->getAsOpaquePointer();
      slot.infers = -1;
    }
  }
  // Operation::create(const OperationState &) builds an attribute dictionary (uniqued: a hash
  // and a lookup under the context's lock) which, for an op whose inherent attributes are
  // properties, setAttrs takes apart again. Here an op with properties is created with the empty
  // dictionary and each attribute goes where setAttrs would put it: inherent ones straight into
  // the properties (setInherentAttr), the others into one dictionary of discardable attributes.
  // The state's arrays as MLIR's ranges, without copies: MlirType, MlirValue and MlirBlock are
  // one pointer each, as Type, Value and Block * are (static_asserts below).
  TypeRange types(ArrayRef<Type>(reinterpret_cast<const Type *>(st->results),
                                 static_cast<size_t>(st->nResults)));
  ValueRange operands(ArrayRef<Value>(reinterpret_cast<const Value *>(st->operands),
                                      static_cast<size_t>(st->nOperands)));
  BlockRange successors(ArrayRef<Block *>(reinterpret_cast<Block *const *>(st->successors),
                                          static_cast<size_t>(st->nSuccessors)));
  bool props = opName->getOpPropertyByteSize() > 0;
  if (!cache->empty_dict)
    cache->empty_dict = const_cast<void *>(DictionaryAttr::get(ctx, {}).getAsOpaquePointer());
  DictionaryAttr attrs =
      llvm::cast<DictionaryAttr>(Attribute::getFromOpaquePointer(cache->empty_dict));
  if (!props && st->nAttributes) {
    NamedAttrList list;
    for (intptr_t i = 0; i < st->nAttributes; i++)
      list.append(unwrap(st->attributes[i].name), unwrap(st->attributes[i].attribute));
    attrs = list.getDictionary(ctx);
  }
  Operation *op =
      Operation::create(unwrap(st->location), *opName, types, operands, attrs,
                        props ? defaultProperties(*opName, cache) : OpaqueProperties(nullptr),
                        successors, static_cast<unsigned>(st->nRegions));
  if (props && st->nAttributes) {
    // Inherent attributes by their names' identity (the op's attribute names are uniqued
    // StringAttrs, as the state's names are): no string comparison for the common case.
    ArrayRef<StringAttr> inherent = opName->getAttributeNames();
    SmallVector<NamedAttribute, 4> discardable;
    for (intptr_t i = 0; i < st->nAttributes; i++) {
      StringAttr name = unwrap(st->attributes[i].name);
      Attribute value = unwrap(st->attributes[i].attribute);
      if (llvm::is_contained(inherent, name) || op->getInherentAttr(name.getValue()))
        op->setInherentAttr(name, value);
      else
        discardable.emplace_back(name, value);
    }
    if (!discardable.empty()) op->setDiscardableAttrs(DictionaryAttr::get(ctx, discardable));
  }
  // As OperationState's regions: their blocks move into the op's, the detached regions are freed.
  // Without regions given (null), the op keeps the empty ones Operation::create made.
  for (intptr_t i = 0; st->regions && i < st->nRegions; i++) {
    Region *r = unwrap(st->regions[i]);
    op->getRegion(static_cast<unsigned>(i)).takeBody(*r);
    delete r;
  }
  return wrap(op);
}

extern "C" void *tether__opname_infers(MlirContext mctx, MlirStringRef mname,
                                       tether__opname_cache *cache) {
  MLIRContext *ctx = unwrap(mctx);
  StringRef name = unwrap(mname);
  auto &slot = cache->names[opnameSlot(name)];
  if (!(slot.opaque && slot.len == name.size() && !memcmp(slot.name, name.data(), name.size()))) {
    size_t dot = name.find('.');
    if (dot != StringRef::npos) ctx->getOrLoadDialect(name.take_front(dot));
    OperationName opName(name, ctx);
    if (!opName.isRegistered()) return nullptr; // not cached: a dialect added later may have it
    if (name.size() > sizeof slot.name)
      return opName.hasInterface<InferTypeOpInterface>() ? opName.getAsOpaquePointer() : nullptr;
    memcpy(slot.name, name.data(), name.size());
    slot.len = name.size();
    slot.opaque = opName.getAsOpaquePointer();
    slot.infers = -1;
  }
  if (slot.infers < 0)
    slot.infers =
        OperationName::getFromOpaquePointer(slot.opaque).hasInterface<InferTypeOpInterface>();
  return slot.infers ? slot.opaque : nullptr;
}

extern "C" bool tether__block_has_terminator(MlirBlock block, tether__terminator_cache *cache) {
  Block *b = unwrap(block);
  if (b->empty()) return false;
  Operation &last = b->back();
  void *name = last.getName().getAsOpaquePointer();
  auto &e = cache->names[(reinterpret_cast<uintptr_t>(name) >> 4) % TETHER__TERMINATORS];
  if (name != e.name) {
    e.name = name;
    // Through the C API, not hasTrait<OpTrait::IsTerminator>() here: see the note at the top.
    e.is_terminator = !mlirOperationIsNull(mlirBlockGetTerminator(block));
  }
  return e.is_terminator;
}

// The shape of an operation for the verifier-crash cache (guards/ir_guards.c, suspect trees): what
// MLIR's verifiers assume about an operation's structure. Types by TypeID (and rank, through the C
// API: no TypeID::get of an interface here), attributes by name and kind, regions by block count,
// and per block its argument count and last operation's name. Values (a constant's number, a
// symbol's name) are not part of it.
namespace {
inline void mix(uint64_t &h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 31;
}
inline void mixType(uint64_t &h, Type t) {
  mix(h, reinterpret_cast<uintptr_t>(t.getTypeID().getAsOpaquePointer()));
  MlirType c = wrap(t);
  if (mlirTypeIsAShaped(c) && mlirShapedTypeHasRank(c))
    mix(h, static_cast<uint64_t>(mlirShapedTypeGetRank(c)) + 1);
}
} // namespace

extern "C" uint64_t tether__op_shape(MlirOperation mop) {
  Operation *op = unwrap(mop);
  uint64_t h = 0x51ED270B27AC1F3Dull;
  mix(h, reinterpret_cast<uintptr_t>(op->getName().getAsOpaquePointer()));
  mix(h, op->getNumOperands());
  mix(h, op->getNumResults());
  mix(h, op->getNumSuccessors());
  mix(h, op->getNumRegions());
  for (Value v : op->getOperands()) mixType(h, v.getType());
  for (Type t : op->getResultTypes()) mixType(h, t);
  for (NamedAttribute a : op->getAttrDictionary()) {
    mix(h, reinterpret_cast<uintptr_t>(a.getName().getAsOpaquePointer()));
    mix(h, reinterpret_cast<uintptr_t>(a.getValue().getTypeID().getAsOpaquePointer()));
  }
  for (Region &r : op->getRegions()) {
    mix(h, 0xB10C5ull);
    for (Block &b : r) {
      mix(h, b.getNumArguments() + 1);
      mix(h, b.empty() ? 0 : reinterpret_cast<uintptr_t>(b.back().getName().getAsOpaquePointer()));
    }
  }
  return h ? h : 1; /* 0 marks an empty slot of the cache */
}

// Whether a terminator outside op branches to block (a successor use: the C API cannot list a
// block's uses). Erasing op would leave that branch pointing to freed memory.
extern "C" bool tether__block_used_from_outside(MlirBlock block, MlirOperation op) {
  Operation *anc = unwrap(op);
  for (BlockOperand &use : unwrap(block)->getUses())
    if (!anc->isAncestor(use.getOwner())) return true;
  return false;
}

// Appending a registry: the C API cannot list a registry's dialects, so it cannot load them.
extern "C" void tether__append_registry(MlirContext ctx, MlirDialectRegistry reg, bool load) {
  MLIRContext *c = unwrap(ctx);
  c->appendDialectRegistry(*unwrap(reg));
  if (!load) return;
  for (llvm::StringRef name : unwrap(reg)->getDialectNames()) c->getOrLoadDialect(name);
}

extern "C" bool tether__multithreaded(MlirContext ctx) {
  return unwrap(ctx)->isMultithreadingEnabled();
}

// fork(): MLIR's worker threads do not exist in a child, and its pool waits for them forever (a
// pass in the child hung). Before the fork the threads are stopped (multithreading off: MLIR
// destroys a pool it owns, joining its idle workers; a pool given from outside is left alone),
// after it multithreading is on again: in the parent as before, in the child with a fresh pool
// of its own, or off when the pool came from outside (its threads are the parent's).
extern "C" bool tether__fork_quiesce(MlirContext ctx, void **pool) {
  MLIRContext *c = unwrap(ctx);
  if (!c->isMultithreadingEnabled()) return false;
  *pool = &c->getThreadPool();
  c->disableMultithreading();
  return true;
}

extern "C" void tether__fork_restore(MlirContext ctx, void *pool, bool child) {
  MLIRContext *c = unwrap(ctx);
  // Keep the old pool's memory taken while MLIR makes a new one, so that a new pool cannot sit at
  // the old one's address (which would read as "the pool from outside" below).
  void *hold = child ? ::operator new(sizeof(llvm::DefaultThreadPool)) : nullptr;
  c->enableMultithreading();
  if (child && &c->getThreadPool() == pool) c->disableMultithreading();
  ::operator delete(hold);
}

// The trial helper (trial.c) parses what its client printed without verifying it (the C API's
// parsers always verify, and verification is what the helper is asked to try): the one operation
// of text, detached, or null when text does not parse to exactly one.
// As mlirModuleCreateParse (a module around top-level operations that are not one), unverified.
extern "C" MlirOperation tether__parse_module_unverified(MlirContext ctx, MlirStringRef text) {
  ParserConfig config(unwrap(ctx), /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(unwrap(text), config);
  return wrap(module ? module.release().getOperation() : nullptr);
}

extern "C" MlirOperation tether__parse_unverified(MlirContext ctx, MlirStringRef text) {
  Block block;
  ParserConfig config(unwrap(ctx), /*verifyAfterParse=*/false);
  if (failed(parseSourceString(unwrap(text), &block, config)) || !llvm::hasSingleElement(block))
    return {nullptr};
  Operation *op = &block.front();
  op->remove();
  return wrap(op);
}

// tether.h: an attribute implementing MemRefLayoutAttrInterface (the C API's memref constructors
// cast to it unchecked). The interface is a plain class: its TypeID is found by its name, which
// gcc and clang spell alike (unlike a template's: see above).
extern "C" bool tether_attr_is_memref_layout(MlirAttribute attr) {
  return attr.ptr && llvm::isa<MemRefLayoutAttrInterface>(unwrap(attr));
}

// The namespaces of the dialects loaded in ctx (the C API cannot list them).
extern "C" void tether__loaded_dialects(MlirContext ctx, void (*fn)(MlirStringRef, void *),
                                        void *user) {
  for (Dialect *d : unwrap(ctx)->getLoadedDialects()) fn(wrap(d->getNamespace()), user);
}

// The line and column of a file location (the trial helper maps its diagnostics back to the
// operations they are at); false for other locations.
extern "C" bool tether__file_line_col(MlirLocation loc, unsigned *line, unsigned *col) {
  auto flc = llvm::dyn_cast<FileLineColLoc>(unwrap(loc));
  if (!flc) return false;
  *line = flc.getLine();
  *col = flc.getColumn();
  return true;
}

// A diagnostic of the given severity (MlirDiagnosticSeverity) with notes, as MLIR's own would be
// (the C API emits errors only, without notes): the trial helper's, emitted in the caller.
extern "C" void tether__emit_diagnostic(MlirLocation loc, int severity, MlirStringRef message,
                                        intptr_t n_notes, const MlirLocation *note_locs,
                                        const MlirStringRef *notes) {
  Location l = unwrap(loc);
  InFlightDiagnostic d = severity == MlirDiagnosticWarning  ? emitWarning(l)
                         : severity == MlirDiagnosticRemark ? emitRemark(l)
                                                            : emitError(l);
  d << llvm::Twine(unwrap(message));
  for (intptr_t i = 0; i < n_notes; i++)
    d.attachNote(unwrap(note_locs[i])) << llvm::Twine(unwrap(notes[i]));
}
