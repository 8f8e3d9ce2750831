/* tether.hpp: the arena for C++ bindings of MLIR's C++ classes (pybind11). Header-only, over
 * tether.h and the MLIR C API's wrap/unwrap; C++17.
 *
 * Invariant: a Python object of a bound IR class (Operation, Block, Region, Value, an op class)
 * holds an interned tether handle, held (tether_handle_hold), never a raw pointer; every object of
 * a context-owned class (MLIRContext, Type, Attribute, Location) pins the arena of its context.
 * Every conversion from such an object to C++ reads the handle through tether's guarded access, so
 * a handle into erased IR raises (tether::error, a Python exception) instead of reaching freed
 * memory, and a handle keeps its tree, the IR's ancestors and the context alive. IR that the
 * binding frees, moves between trees or creates detached goes through the functions below, which
 * go through the arena: the handles into what was freed become invalid, and builders (tether::
 * OpBuilder) drop insertion points into it. docs/cpp-bindings.md is the guide; what this header
 * cannot observe (IR freed by C++ code that bypasses it) is listed there.
 *
 * A binding adopts it by (1) registering its IR classes with tether::ref<T> as holder,
 *   py::class_<mlir::Operation, tether::ref<mlir::Operation>>(m, "Operation")
 *   py::class_<mlir::scf::ForOp, mlir::OpState, tether::ref<mlir::scf::ForOp>>(m, "ForOp")
 * (2) routing what frees IR through tether::erase, tether::merge_blocks, tether::run_passes, ...,
 * what creates roots through tether::adopt and tether::new_block, (3) making its builder a
 * tether::OpBuilder and its saved insertion points tether::InsertPoint, and (4) calling
 * tether::init_module(m) once. Include this header, before anything converts those classes, in
 * every translation unit that binds or converts them: it specializes pybind11's type casters.
 *
 * Threads: as tether.h. pybind11 calls hold the GIL, which serializes every arena; a thread is
 * registered with the collector by its first tether call (every conversion below makes one).
 */
#ifndef TETHER_HPP
#define TETHER_HPP

#include "tether.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/TypeName.h>
#include <mlir/CAPI/IR.h>
#include <mlir/CAPI/Pass.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/OwningOpRef.h>
#include <mlir/Pass/PassManager.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifndef TETHER_HPP_NO_PYBIND11
#include <pybind11/pybind11.h>
#endif

// Hidden: each extension that includes this header has its own copy of everything here (the
// builder registry included), as pybind11 keeps its own namespace hidden.
#pragma GCC visibility push(hidden)
namespace tether {

/* ---------------------------------------------------------------------------------------------
 * Errors. Every function here reports failure by throwing tether::error (a std::runtime_error);
 * tether::init_module makes pybind11 raise InvalidatedError (a RuntimeError) for TETHER_EINVALID,
 * ValueError for TETHER_EARG and TETHER_ECONTEXT, IndexError for TETHER_ERANGE, MemoryError for
 * TETHER_ENOMEM, RuntimeError for the others.
 */

class error : public std::runtime_error {
public:
  error(int status, tether_reason reason, const std::string &message)
      : std::runtime_error(message), status_(status), reason_(reason) {}
  /// The tether status (TETHER_EINVALID, TETHER_EBUSY, ...).
  int status() const noexcept { return status_; }
  /// For TETHER_EINVALID: why the handle is invalid.
  tether_reason reason() const noexcept { return reason_; }

private:
  int status_;
  tether_reason reason_;
};

namespace detail {
inline const char *kind_name(const void *handle) {
  switch (tether_handle_kind(handle)) {
  case TETHER_KIND_OP:
    return "operation";
  case TETHER_KIND_REGION:
    return "region";
  case TETHER_KIND_BLOCK:
    return "block";
  default:
    return "value";
  }
}
} // namespace detail

/// Throws the error for status: for TETHER_EINVALID with an IR handle, the reason it recorded;
/// else `what` (or tether_strerror), then the arena's diagnostics when an arena is given.
[[noreturn]] inline void fail(int status, const void *handle = nullptr,
                              tether_arena *arena = nullptr, const char *what = nullptr) {
  if (status == TETHER_EINVALID && handle) {
    tether_reason r = tether_handle_reason(handle);
    throw error(status, r,
                std::string("the ") + detail::kind_name(handle) +
                    " has been invalidated: " + tether_reason_text(r));
  }
  std::string msg = what ? what : tether_strerror(status);
  const char *diag = arena ? tether_arena_last_error(arena) : "";
  if (diag && *diag) msg += std::string(":\n") + diag;
  throw error(status, TETHER_REASON_NONE, msg);
}

/// Throws unless status is TETHER_OK.
inline void check(int status, const void *handle = nullptr, tether_arena *arena = nullptr,
                  const char *what = nullptr) {
  if (status != TETHER_OK) fail(status, handle, arena, what);
}

/* ---------------------------------------------------------------------------------------------
 * Raw MLIR objects to handles (detail): the arena of a context, and the interned handle of an
 * object of IR the arena holds (tether_*_wrap: a walk up to the root). IR in no tree of the arena
 * (created detached by C++ and never adopted) is TETHER_EARG.
 */
namespace detail {

inline tether_arena *arena_of(mlir::MLIRContext *ctx) {
  tether_arena *a = ctx ? tether_arena_of_context(::wrap(ctx)) : nullptr;
  if (!a)
    fail(TETHER_ECONTEXT, nullptr, nullptr,
         "this MLIRContext has no tether arena: make contexts through the holder "
         "tether::ref<mlir::MLIRContext> (py::init) or tether::context_ref");
  return a;
}

/* The context of a block or region: MLIR asks their parent operation, which a detached one lacks;
 * then an operation or argument inside says it (NULL: an empty detached block or region). */
inline mlir::MLIRContext *context_of(mlir::Block *b);
inline mlir::MLIRContext *context_of(mlir::Region *r) {
  if (mlir::Operation *p = r->getParentOp()) return p->getContext();
  for (mlir::Block &b : *r)
    if (mlir::MLIRContext *c = context_of(&b)) return c;
  return nullptr;
}
inline mlir::MLIRContext *context_of(mlir::Block *b) {
  if (mlir::Operation *p = b->getParentOp()) return p->getContext();
  if (!b->empty()) return b->front().getContext();
  if (b->getNumArguments()) return b->getArgument(0).getContext();
  return nullptr;
}

inline const char *const kNotHeld =
    "is in no IR the arena holds: IR that C++ code creates detached must be adopted "
    "(tether::adopt, tether::new_block) before Python sees it";

inline tether_op *op_handle(mlir::Operation *op) {
  if (!op) fail(TETHER_EARG, nullptr, nullptr, "null operation");
  tether_op *h = nullptr;
  int rc = tether_op_wrap(arena_of(op->getContext()), ::wrap(op), &h);
  if (rc == TETHER_EARG)
    fail(rc, nullptr, nullptr, (std::string("the operation ") + kNotHeld).c_str());
  check(rc);
  return h;
}

inline tether_block *block_handle(mlir::Block *b, mlir::MLIRContext *hint = nullptr) {
  if (!b) fail(TETHER_EARG, nullptr, nullptr, "null block");
  mlir::MLIRContext *ctx = context_of(b);
  if (!ctx) ctx = hint;
  if (!ctx)
    fail(TETHER_EARG, nullptr, nullptr,
         "the arena of a detached, empty block without arguments cannot be found: hold it from "
         "its creation (tether::new_block)");
  tether_block *h = nullptr;
  int rc = tether_block_wrap(arena_of(ctx), ::wrap(b), &h);
  if (rc == TETHER_EARG) fail(rc, nullptr, nullptr, (std::string("the block ") + kNotHeld).c_str());
  check(rc);
  return h;
}

inline tether_region *region_handle(mlir::Region *r) {
  if (!r) fail(TETHER_EARG, nullptr, nullptr, "null region");
  mlir::MLIRContext *ctx = context_of(r);
  if (!ctx)
    fail(TETHER_EARG, nullptr, nullptr, "the arena of an empty detached region cannot be found");
  tether_region *h = nullptr;
  int rc = tether_region_wrap(arena_of(ctx), ::wrap(r), &h);
  if (rc == TETHER_EARG)
    fail(rc, nullptr, nullptr, (std::string("the region ") + kNotHeld).c_str());
  check(rc);
  return h;
}

inline tether_value *value_handle(mlir::Value v) {
  if (!v) fail(TETHER_EARG, nullptr, nullptr, "null value");
  tether_value *h = nullptr;
  int rc = tether_value_wrap(arena_of(v.getContext()), ::wrap(v), &h);
  if (rc == TETHER_EARG) fail(rc, nullptr, nullptr, (std::string("the value ") + kNotHeld).c_str());
  check(rc);
  return h;
}

/* The raw root object of the tree an object is in (an operation, block or region contained in no
 * other): two objects are in one tree when their roots are equal. */
inline const void *root_of(mlir::Operation *op) {
  for (;;) {
    mlir::Block *b = op->getBlock();
    if (!b) return op;
    mlir::Region *r = b->getParent();
    if (!r) return b;
    mlir::Operation *p = r->getParentOp();
    if (!p) return r;
    op = p;
  }
}
inline const void *root_of(mlir::Block *b) {
  mlir::Region *r = b->getParent();
  if (!r) return b;
  mlir::Operation *p = r->getParentOp();
  return p ? root_of(p) : static_cast<const void *>(r);
}
inline const void *root_of(mlir::Value v) {
  if (mlir::Operation *d = v.getDefiningOp()) return root_of(d);
  return root_of(llvm::cast<mlir::BlockArgument>(v).getOwner());
}

/* What a C++ class is to tether: an IR object reached through a handle (op, region, block,
 * value), or a context-owned one that pins its arena (context, type, attribute, location). */
enum class kind : uint8_t { none, op, region, block, value, context, type, attribute, location };

template <class T, class = void> struct kind_of : std::integral_constant<kind, kind::none> {};
template <> struct kind_of<mlir::Operation> : std::integral_constant<kind, kind::op> {};
template <> struct kind_of<mlir::Region> : std::integral_constant<kind, kind::region> {};
template <> struct kind_of<mlir::Block> : std::integral_constant<kind, kind::block> {};
template <> struct kind_of<mlir::MLIRContext> : std::integral_constant<kind, kind::context> {};
template <> struct kind_of<mlir::Location> : std::integral_constant<kind, kind::location> {};
template <class T>
struct kind_of<T, std::enable_if_t<std::is_base_of<mlir::OpState, T>::value>>
    : std::integral_constant<kind, kind::op> {};
template <class T>
struct kind_of<T, std::enable_if_t<std::is_base_of<mlir::Value, T>::value>>
    : std::integral_constant<kind, kind::value> {};
template <class T>
struct kind_of<T, std::enable_if_t<std::is_base_of<mlir::Type, T>::value>>
    : std::integral_constant<kind, kind::type> {};
template <class T>
struct kind_of<T, std::enable_if_t<std::is_base_of<mlir::Attribute, T>::value>>
    : std::integral_constant<kind, kind::attribute> {};

/* Classes Python holds by pointer (their objects live in IR or in the arena); the others are
 * values (MLIR's value-semantics wrappers) rebuilt from the handle at every use. */
template <class T>
constexpr bool by_pointer =
    std::is_same<T, mlir::Operation>::value || std::is_same<T, mlir::Region>::value ||
    std::is_same<T, mlir::Block>::value || std::is_same<T, mlir::MLIRContext>::value;

constexpr bool is_ir(kind k) {
  return k == kind::op || k == kind::region || k == kind::block || k == kind::value;
}

/* OpState's constructor from an operation is protected. */
struct opstate_access : mlir::OpState {
  explicit opstate_access(mlir::Operation *op) : mlir::OpState(op) {}
};

} // namespace detail

/* ---------------------------------------------------------------------------------------------
 * tether::ref<T>: a reference to an MLIR object that keeps what it needs alive and checks it at
 * every use. For an IR class (Operation, Block, Region, Value and its subclasses, OpState and
 * every op class) it holds the object's interned handle; for a context-owned class (MLIRContext,
 * Type, Attribute, Location and their subclasses) it pins the context's arena. It is the pybind11
 * holder of those classes (py::class_<T, tether::ref<T>>), and what C++ code keeps instead of a
 * raw pointer (a builder's insertion point, a module a class owns: instead of OwningOpRef).
 * Copying holds again; destroying releases. One hold costs no allocation (tether.h).
 */

/// The part of every ref<T> (one layout for all T: pybind11 reads holders of a base class).
class ref_base {
public:
  static constexpr uint32_t kMagic = 0x74657468u; // "teth": tells a tether holder from others

  ref_base() noexcept {}
  ref_base(const ref_base &o) noexcept
      : kind_(o.kind_), status_(o.status_), h_(o.h_), raw_(o.raw_) {
    acquire();
  }
  ref_base(ref_base &&o) noexcept
      : kind_(o.kind_), status_(o.status_), h_(o.h_), pin_(o.pin_), raw_(o.raw_) {
    o.h_ = nullptr;
    o.pin_ = -1;
  }
  ref_base &operator=(const ref_base &o) noexcept {
    ref_base t(o);
    swap(t);
    return *this;
  }
  ref_base &operator=(ref_base &&o) noexcept {
    swap(o);
    return *this;
  }
  ~ref_base() { release(); }

  /// Whether it refers to something (an IR handle, valid or not, or a pinned arena).
  bool empty() const noexcept { return h_ == nullptr; }
  /// Whether what it refers to may be used: a valid IR handle, or a pinned arena.
  bool valid() const noexcept {
    return h_ && (!detail::is_ir(kind_) || tether_handle_is_valid(h_));
  }
  /// TETHER_REASON_NONE, or why the IR handle is invalid. [no safe point]
  tether_reason reason() const noexcept {
    return h_ && detail::is_ir(kind_) ? tether_handle_reason(h_) : TETHER_REASON_NONE;
  }
  /// The tether IR handle (tether_op *, ... by kind), or NULL for a context-owned class.
  void *handle() const noexcept { return detail::is_ir(kind_) ? h_ : nullptr; }
  /// The arena: of a valid IR handle, or the pinned one; NULL otherwise.
  tether_arena *arena() const noexcept {
    if (!h_) return nullptr;
    return detail::is_ir(kind_) ? tether_handle_arena(h_) : static_cast<tether_arena *>(h_);
  }
  /// What identifies the object for as long as this ref lives (the pybind11 instance key): the
  /// handle of an IR object (interned, so one per object; kept while held, even invalid), the
  /// MLIR storage of a context-owned one (alive while its arena is pinned).
  const void *key() const noexcept { return detail::is_ir(kind_) ? h_ : raw_; }
  /// A tether holder (pybind11 reads holders of unknown classes through this). [no safe point]
  bool is_tether_ref() const noexcept { return magic_ == kMagic; }
  detail::kind kind() const noexcept { return kind_; }

  /// Throws unless valid: the handle's reason, or why nothing is held.
  void require() const {
    if (!h_)
      fail(status_ ? static_cast<int>(status_) : static_cast<int>(TETHER_EARG), nullptr, nullptr,
           status_ == TETHER_ENOMEM ? nullptr : "this object is not held by tether");
    if (detail::is_ir(kind_) && !tether_handle_is_valid(h_)) fail(TETHER_EINVALID, h_);
  }

  void swap(ref_base &o) noexcept {
    std::swap(kind_, o.kind_);
    std::swap(status_, o.status_);
    std::swap(h_, o.h_);
    std::swap(pin_, o.pin_);
    std::swap(raw_, o.raw_);
  }

protected:
  /* Takes hold of IR handle h (NULL: empty). */
  void set_ir(detail::kind k, void *h) noexcept {
    release();
    kind_ = k;
    h_ = h;
    status_ = 0;
    acquire();
  }
  /* Pins arena a for a context-owned object raw. */
  void set_pinned(detail::kind k, tether_arena *a, const void *raw) noexcept {
    release();
    kind_ = k;
    h_ = a;
    raw_ = raw;
    status_ = 0;
    acquire();
  }
  void set_failed(detail::kind k, int status) noexcept {
    release();
    kind_ = k;
    status_ = static_cast<int8_t>(status);
  }

  const void *raw() const noexcept { return raw_; }

private:
  void acquire() noexcept {
    if (!h_) return;
    if (detail::is_ir(kind_)) {
      if (tether_handle_hold(h_) != TETHER_OK) {
        h_ = nullptr;
        status_ = TETHER_ENOMEM;
      }
    } else if ((pin_ = tether_pin(h_)) < 0) {
      h_ = nullptr;
      pin_ = -1;
      status_ = TETHER_ENOMEM;
    }
  }
  void release() noexcept {
    if (!h_) return;
    if (detail::is_ir(kind_))
      tether_handle_release(h_);
    else
      tether_unpin(pin_);
    h_ = nullptr;
    pin_ = -1;
  }

  uint32_t magic_ = kMagic;
  detail::kind kind_ = detail::kind::none;
  int8_t status_ = 0;         /* why h_ is NULL, when a conversion failed */
  void *h_ = nullptr;         /* the held IR handle, or the pinned tether_arena */
  intptr_t pin_ = -1;         /* tether_pin slot of the arena */
  const void *raw_ = nullptr; /* the context-owned object (MLIRContext *, type/attribute storage) */
};

template <class T> class ref;

namespace detail {
template <class T> struct ref_access;
} // namespace detail

template <class T> class ref : public ref_base {
  static constexpr detail::kind K = detail::kind_of<T>::value;
  static_assert(K != detail::kind::none,
                "tether::ref<T>: T must be mlir::Operation, Block, Region, Value (or a subclass), "
                "an op class (an mlir::OpState), MLIRContext, Type, Attribute or Location");
  friend struct detail::ref_access<T>;

public:
  /// Whatever get() returns: T * for Operation, Block, Region, MLIRContext; T for the others.
  using result_type = std::conditional_t<detail::by_pointer<T>, T *, T>;

  ref() noexcept {}
  /// What pybind11 calls when it made an object itself and gives it to the holder (py::init of a
  /// context: the arena adopts it, owning it; py::init of a detached block or operation: adopted
  /// as a root). Never throws: on failure the ref is empty, and every use raises.
  explicit ref(T *p) noexcept;

  /// The ref of an object of IR the arena holds (T * for Operation/Block/Region/MLIRContext, T
  /// for the others). Throws tether::error: TETHER_EARG for IR in no tree of the arena (adopt
  /// it), TETHER_ECONTEXT for a context without an arena.
  static ref of(result_type x);
  /// The ref of an IR handle (tether_op * ... of T's kind), held.
  static ref from_handle(void *h) {
    ref r;
    if (h) r.set_ir(K, h);
    return r;
  }

  /// The object, checked: throws tether::error (TETHER_EINVALID with the handle's reason) for a
  /// handle into erased IR; for an op class, TETHER_EARG when the operation is not one.
  result_type get() const;
  /// Pointer classes: the object. Value classes: a proxy to call methods on.
  auto operator->() const {
    if constexpr (detail::by_pointer<T>) {
      return get();
    } else {
      struct arrow {
        T v;
        T *operator->() { return &v; }
      };
      return arrow{get()};
    }
  }
  decltype(auto) operator*() const {
    if constexpr (detail::by_pointer<T>)
      return *get();
    else
      return get();
  }
  /// Whether the object may be used.
  explicit operator bool() const noexcept { return valid(); }
};

namespace detail {

/* The MLIR object of an IR handle through tether's guarded access: tether::error for an invalid
 * handle (with its reason) or while MLIR runs on its arena's IR. */
inline mlir::Operation *raw_op(void *h) {
  tether_op *op = static_cast<tether_op *>(h);
  MlirOperation raw;
  int rc = tether_op_get(op, &raw);
  if (rc != TETHER_OK) fail(rc, op);
  return ::unwrap(raw);
}
inline mlir::Block *raw_block(void *h) {
  tether_block *b = static_cast<tether_block *>(h);
  MlirBlock raw;
  int rc = tether_block_get(b, &raw);
  if (rc != TETHER_OK) fail(rc, b);
  return ::unwrap(raw);
}
inline mlir::Region *raw_region(void *h) {
  tether_region *r = static_cast<tether_region *>(h);
  MlirRegion raw;
  int rc = tether_region_get(r, &raw);
  if (rc != TETHER_OK) fail(rc, r);
  return ::unwrap(raw);
}
inline mlir::Value raw_value(void *h) {
  tether_value *v = static_cast<tether_value *>(h);
  MlirValue raw;
  int rc = tether_value_get(v, &raw);
  if (rc != TETHER_OK) fail(rc, v);
  return ::unwrap(raw);
}

/* The object behind a held ref, checked (the casters use it on refs of base classes too). */
template <class T> typename ref<T>::result_type resolve(const ref_base &r) {
  r.require();
  constexpr kind K = kind_of<T>::value;
  if constexpr (K == kind::op) {
    mlir::Operation *op = raw_op(r.handle());
    if constexpr (std::is_same<T, mlir::Operation>::value) {
      return op;
    } else if constexpr (std::is_same<T, mlir::OpState>::value) {
      return opstate_access(op);
    } else {
      if (!llvm::isa<T>(op))
        fail(TETHER_EARG, nullptr, nullptr,
             ("the operation " + op->getName().getStringRef().str() + " is not a " +
              llvm::getTypeName<T>().str())
                 .c_str());
      return T(op);
    }
  } else if constexpr (K == kind::block) {
    return raw_block(r.handle());
  } else if constexpr (K == kind::region) {
    return raw_region(r.handle());
  } else if constexpr (K == kind::value) {
    mlir::Value v = raw_value(r.handle());
    if constexpr (std::is_same<T, mlir::Value>::value) {
      return v;
    } else {
      if (!llvm::isa<T>(v)) fail(TETHER_EARG, nullptr, nullptr, "the value is not of this class");
      return llvm::cast<T>(v);
    }
  } else if constexpr (K == kind::context) {
    return const_cast<mlir::MLIRContext *>(static_cast<const mlir::MLIRContext *>(r.key()));
  } else if constexpr (K == kind::location) {
    return mlir::Location::getFromOpaquePointer(r.key());
  } else {
    using Base = std::conditional_t<K == kind::type, mlir::Type, mlir::Attribute>;
    Base x = Base::getFromOpaquePointer(r.key());
    if constexpr (std::is_same<T, Base>::value) {
      return x;
    } else {
      if (!llvm::isa<T>(x)) fail(TETHER_EARG, nullptr, nullptr, "the object is not of this class");
      return llvm::cast<T>(x);
    }
  }
}

template <class T> struct ref_access {
  static void set_of(ref<T> &r, typename ref<T>::result_type x) {
    constexpr kind K = kind_of<T>::value;
    if constexpr (K == kind::op) {
      if constexpr (std::is_same<T, mlir::Operation>::value)
        r.set_ir(K, op_handle(x));
      else
        r.set_ir(K, op_handle(x.getOperation()));
    } else if constexpr (K == kind::block) {
      r.set_ir(K, block_handle(x));
    } else if constexpr (K == kind::region) {
      r.set_ir(K, region_handle(x));
    } else if constexpr (K == kind::value) {
      r.set_ir(K, value_handle(x));
    } else if constexpr (K == kind::context) {
      r.set_pinned(K, arena_of(x), x);
    } else {
      if (!x.getAsOpaquePointer())
        fail(TETHER_EARG, nullptr, nullptr, "null type, attribute or location");
      r.set_pinned(K, arena_of(x.getContext()), x.getAsOpaquePointer());
    }
    if (r.empty()) fail(TETHER_ENOMEM);
  }
  static void set_failed(ref<T> &r, int status) { r.set_failed(kind_of<T>::value, status); }
  static void set_pinned(ref<T> &r, tether_arena *a, const void *raw) {
    r.set_pinned(kind_of<T>::value, a, raw);
  }
};

} // namespace detail

template <class T> ref<T> ref<T>::of(result_type x) {
  ref r;
  detail::ref_access<T>::set_of(r, x);
  return r;
}

template <class T> typename ref<T>::result_type ref<T>::get() const {
  return detail::resolve<T>(*this);
}

/* ---------------------------------------------------------------------------------------------
 * Roots: IR that C++ code creates outside any tree the arena holds (an operation built without
 * an insertion point, a parsed module, `new Block`) is adopted: the arena owns it from then on
 * and destroys it when no ref reaches it. Never adopt IR that C++ still owns (an OwningOpRef you
 * keep: release it first) or that lives inside other IR.
 */

/// Adopts a detached operation (no parent block) as a new root, or returns the ref of an
/// operation already in the arena's IR.
inline ref<mlir::Operation> adopt(mlir::Operation *op) {
  if (!op) fail(TETHER_EARG, nullptr, nullptr, "null operation");
  tether_arena *a = detail::arena_of(op->getContext());
  tether_op *h = nullptr;
  int rc = tether_op_wrap(a, ::wrap(op), &h);
  if (rc == TETHER_OK) return ref<mlir::Operation>::from_handle(h);
  if (rc != TETHER_EARG) fail(rc);
  if (op->getBlock())
    fail(TETHER_EARG, nullptr, nullptr, "cannot adopt an operation that is inside other IR");
  /* tether.h makes roots only of what it creates or detaches: the operation is put in a new
   * detached block (a root), found there, and detached (its own root, with the dependencies its
   * operands make on other trees recorded). The block goes when unreachable. */
  tether_block *tmp = nullptr;
  check(tether_block_create(a, 0, nullptr, nullptr, &tmp));
  detail::raw_block(tmp)->push_back(op);
  tether_arena_touch(a);
  check(tether_op_wrap(a, ::wrap(op), &h));
  check(tether_op_detach(h), h);
  tether_keep_alive(tmp);
  return ref<mlir::Operation>::from_handle(h);
}

/// The same for an op class (ModuleOp::create(...), builder.create<...> without insertion point).
template <class OpTy, class = std::enable_if_t<std::is_base_of<mlir::OpState, OpTy>::value>>
ref<OpTy> adopt(OpTy op) {
  return ref<OpTy>::from_handle(adopt(op.getOperation()).handle());
}

/// Takes a root out of an OwningOpRef (parseSourceString, clone into OwningOpRef).
template <class OpTy> ref<OpTy> adopt(mlir::OwningOpRef<OpTy> &&owned) {
  if (!owned) fail(TETHER_EARG, nullptr, nullptr, "empty OwningOpRef");
  OpTy op = owned.get();
  ref<OpTy> r = adopt(op);
  (void)owned.release(); // the arena owns it now
  return r;
}

/// Adopts a detached block (`new Block`, no parent region) as a new root. ctx names the context
/// when the block is empty and has no arguments (MLIR cannot say it then).
inline ref<mlir::Block> adopt(mlir::Block *b, mlir::MLIRContext *ctx = nullptr) {
  if (!b) fail(TETHER_EARG, nullptr, nullptr, "null block");
  mlir::MLIRContext *c = detail::context_of(b);
  if (!c) c = ctx;
  if (!c)
    fail(TETHER_EARG, nullptr, nullptr,
         "adopting an empty block without arguments needs its context");
  tether_arena *a = detail::arena_of(c);
  tether_block *h = nullptr;
  int rc = tether_block_wrap(a, ::wrap(b), &h);
  if (rc == TETHER_OK) return ref<mlir::Block>::from_handle(h);
  if (rc != TETHER_EARG) fail(rc);
  if (b->getParent())
    fail(TETHER_EARG, nullptr, nullptr, "cannot adopt a block that is inside a region");
  tether_region *tmp = nullptr;
  check(tether_region_create(a, &tmp));
  detail::raw_region(tmp)->push_back(b);
  tether_arena_touch(a);
  check(tether_block_wrap(a, ::wrap(b), &h));
  check(tether_block_detach(h), h);
  tether_keep_alive(tmp);
  return ref<mlir::Block>::from_handle(h);
}

/// A new detached block with arguments of `types` (locations: unknown), owned by the arena: what
/// `new Block` becomes. Attach it with tether::append(region, block).
inline ref<mlir::Block> new_block(mlir::MLIRContext *ctx, mlir::TypeRange types = {}) {
  tether_arena *a = detail::arena_of(ctx);
  std::vector<MlirType> ts;
  for (mlir::Type t : types) {
    if (!t || t.getContext() != ctx)
      fail(TETHER_ECONTEXT, nullptr, nullptr, "a type of another context");
    ts.push_back(::wrap(t));
  }
  tether_block *h = nullptr;
  check(tether_block_create(a, static_cast<intptr_t>(ts.size()), ts.data(), nullptr, &h));
  return ref<mlir::Block>::from_handle(h);
}

/// The ref of a context, adopting it (owned: the arena destroys it when nothing reaches it) if no
/// arena has it yet.
inline ref<mlir::MLIRContext> context_ref(mlir::MLIRContext *ctx, bool take_ownership = true) {
  if (!ctx) fail(TETHER_EARG, nullptr, nullptr, "null context");
  tether_arena *a = tether_arena_of_context(::wrap(ctx));
  if (!a) check(tether_arena_adopt(::wrap(ctx), take_ownership, &a));
  ref<mlir::MLIRContext> r;
  detail::ref_access<mlir::MLIRContext>::set_pinned(r, a, ctx);
  if (r.empty()) fail(TETHER_ENOMEM);
  return r;
}

template <class T> ref<T>::ref(T *p) noexcept {
  try {
    if constexpr (detail::kind_of<T>::value == detail::kind::context) {
      *this = context_ref(p);
    } else if constexpr (std::is_same<T, mlir::Operation>::value) {
      *this = adopt(p);
    } else if constexpr (std::is_same<T, mlir::Block>::value) {
      *this = adopt(p);
    } else if constexpr (detail::by_pointer<T>) {
      *this = of(p);
    } else {
      *this = of(*p); /* a copy pybind11 made: it stays with the instance (a few bytes) */
    }
  } catch (const error &e) {
    detail::ref_access<T>::set_failed(*this, e.status());
  } catch (...) {
    detail::ref_access<T>::set_failed(*this, TETHER_EARG);
  }
}

/* ---------------------------------------------------------------------------------------------
 * Builders and insertion points. A tether::OpBuilder is an mlir::OpBuilder (use it as one) that
 * keeps its context alive and its insertion point as held refs: when IR is erased, merged or
 * removed by a pass through the functions below, every builder of the arena re-derives its
 * insertion point from them, and clears it when its block or operation is gone (creating then
 * throws, with the reason). Its listener records the dependencies of operations inserted with
 * operands of another tree (another module, a detached operation), so that tree stays alive.
 * pybind11's casters bracket every bound call that takes a builder: on entry the insertion point
 * is checked, on exit the one the call set is captured (held).
 */

class OpBuilder;
class InsertPoint;

namespace detail {
/* Live builders of this extension (hidden visibility: one registry per shared object). */
struct builder_registry {
  std::mutex lock;
  std::vector<OpBuilder *> all;
};
inline builder_registry &builders() {
  static builder_registry *r =
      new builder_registry; // never destroyed: builders may outlive statics
  return *r;
}
inline void builders_capture(tether_arena *a);
inline void builders_refresh(tether_arena *a);
/* The arena of the builder whose bound call is running on this thread (mixing contexts check). */
inline thread_local tether_arena *active_builder_arena = nullptr;
} // namespace detail

/// A saved insertion point (OpBuilder::saveInsertionPoint) that keeps its block alive and is
/// checked when restored: what mlir::OpBuilder::InsertPoint becomes.
class InsertPoint {
public:
  InsertPoint() = default;
  /// Whether it points somewhere.
  bool isSet() const noexcept { return !block_.empty(); }
  /// Its block, checked.
  mlir::Block *getBlock() const { return block_.empty() ? nullptr : block_.get(); }

private:
  friend class OpBuilder;
  ref<mlir::Block> block_;
  ref<mlir::Operation> before_; /* empty: the end of the block */
};

class OpBuilder : public mlir::OpBuilder {
public:
  explicit OpBuilder(mlir::MLIRContext *ctx)
      : mlir::OpBuilder(ctx), ctx_(ref<mlir::MLIRContext>::of(ctx)), listener_(this) {
    setListener(&listener_);
    enroll();
  }
  OpBuilder(const OpBuilder &o)
      : mlir::OpBuilder(o), ctx_(o.ctx_), ip_block_(o.ip_block_), ip_before_(o.ip_before_),
        last_block_(o.last_block_), last_before_(o.last_before_), cleared_(o.cleared_),
        listener_(this) {
    setListener(&listener_);
    enroll();
  }
  OpBuilder &operator=(const OpBuilder &) = delete;
  ~OpBuilder() {
    auto &r = detail::builders();
    std::lock_guard<std::mutex> g(r.lock);
    r.all.erase(std::remove(r.all.begin(), r.all.end(), this), r.all.end());
  }

  /// The builder itself, after checking that its insertion point was not invalidated (its block
  /// erased or merged away, the operation it was before erased or removed by a pass): then
  /// tether::error (TETHER_EINVALID, the reason). A builder never given an insertion point
  /// creates detached operations, as MLIR's does.
  mlir::OpBuilder &checked() {
    refresh();
    if (cleared_ != TETHER_REASON_NONE)
      throw error(TETHER_EINVALID, cleared_,
                  std::string("the builder's insertion point has been invalidated: ") +
                      tether_reason_text(cleared_));
    return *this;
  }

  /// Creates an operation at the insertion point, checked first (mlir::OpBuilder::create).
  template <typename OpTy, typename... Args> OpTy create(mlir::Location loc, Args &&...args) {
    checked();
#if LLVM_VERSION_MAJOR >= 21
    return OpTy::create(*this, loc, std::forward<Args>(args)...);
#else
    return mlir::OpBuilder::create<OpTy>(loc, std::forward<Args>(args)...);
#endif
  }

  /// The insertion point as refs (mlir::OpBuilder::saveInsertionPoint).
  tether::InsertPoint saveInsertionPoint() {
    checked();
    capture();
    tether::InsertPoint ip;
    ip.block_ = ip_block_;
    ip.before_ = ip_before_;
    return ip;
  }
  /// Restores a saved insertion point: tether::error (TETHER_EINVALID) when its block or
  /// operation has been erased since.
  void restoreInsertionPoint(const tether::InsertPoint &ip) {
    if (!ip.isSet()) {
      clearInsertionPoint();
    } else if (!ip.before_.empty()) {
      mlir::Operation *op = ip.before_.get();
      if (!op->getBlock()) fail(TETHER_EINVALID, ip.before_.handle());
      setInsertionPoint(op);
    } else {
      setInsertionPointToEnd(ip.block_.get());
    }
    capture();
  }

  /// The arena of the builder's context.
  tether_arena *arena() const noexcept { return ctx_.arena(); }

  /// Called before a bound call uses the builder (pybind11: its caster): re-derives the
  /// insertion point from its refs, clearing it when they are invalid.
  void enter() { refresh(); }
  /// Called after the call: holds the insertion point the call left (valid: set in the call).
  void leave() noexcept {
    try {
      capture();
    } catch (...) {
    }
  }

  /// Takes the insertion point into refs if it changed since the last time (mlir::OpBuilder's
  /// own setters changed it): its block then is alive.
  void capture() {
    mlir::Block *b = getInsertionBlock();
    mlir::Operation *before =
        b && getInsertionPoint() != b->end() ? &*getInsertionPoint() : nullptr;
    if (b == last_block_ && before == last_before_) return;
    last_block_ = b;
    last_before_ = before;
    cleared_ = TETHER_REASON_NONE;
    ip_block_ = ref<mlir::Block>();
    ip_before_ = ref<mlir::Operation>();
    if (!b) return;
    try {
      ip_block_ = ref<mlir::Block>::of(b);
      if (before) ip_before_ = ref<mlir::Operation>::of(before);
    } catch (const error &) {
      /* An insertion point in IR the arena does not hold (never adopted): left as MLIR has it. */
      ip_block_ = ref<mlir::Block>();
      ip_before_ = ref<mlir::Operation>();
    }
  }

  /// After IR changed: the insertion point follows the operation it is before (to its block) or
  /// stays at the end of its block; when either is gone it is cleared, and checked() throws.
  void refresh() {
    capture();
    if (ip_block_.empty()) return;
    tether_reason gone = TETHER_REASON_NONE;
    if (!ip_block_.valid())
      gone = ip_block_.reason();
    else if (!ip_before_.empty() && !ip_before_.valid())
      gone = ip_before_.reason();
    mlir::Operation *before =
        gone == TETHER_REASON_NONE && !ip_before_.empty() ? ip_before_.get() : nullptr;
    if (before && !before->getBlock()) gone = TETHER_REASON_REMOVED; /* detached since */
    if (gone != TETHER_REASON_NONE) {
      clearInsertionPoint();
      ip_block_ = ref<mlir::Block>();
      ip_before_ = ref<mlir::Operation>();
      last_block_ = nullptr;
      last_before_ = nullptr;
      cleared_ = gone;
      return;
    }
    if (before) {
      setInsertionPoint(before);
      if (before->getBlock() != last_block_) ip_block_ = ref<mlir::Block>::of(before->getBlock());
    } else {
      setInsertionPointToEnd(ip_block_.get());
    }
    last_block_ = getInsertionBlock();
    last_before_ = before;
  }

private:
  /* After every insertion: the arena's IR changed (tether re-verifies before passes), and the
   * operands of another tree become dependencies of the operation's tree (tether_op_set_operand
   * with the same value records one), so that tree cannot be destroyed under it. Operands whose
   * IR the arena does not hold are left alone. Never throws (MLIR calls it). */
  struct listener : mlir::OpBuilder::Listener {
    explicit listener(OpBuilder *b) : owner(b) {}
    void notifyOperationInserted(mlir::Operation *op, mlir::OpBuilder::InsertPoint) override {
      tether_arena *a = owner->arena();
      if (!a) return;
      tether_arena_touch(a);
      const void *root = nullptr;
      for (unsigned i = 0, n = op->getNumOperands(); i < n; ++i) {
        mlir::Value v = op->getOperand(i);
        if (!v) continue;
        if (!root) root = detail::root_of(op);
        if (detail::root_of(v) == root) continue;
        tether_op *oh = nullptr;
        tether_value *vh = nullptr;
        if (tether_op_wrap(a, ::wrap(op), &oh) == TETHER_OK &&
            tether_value_wrap(a, ::wrap(v), &vh) == TETHER_OK)
          (void)tether_op_set_operand(oh, static_cast<intptr_t>(i), vh);
      }
    }
    OpBuilder *owner;
  };

  void enroll() {
    auto &r = detail::builders();
    std::lock_guard<std::mutex> g(r.lock);
    r.all.push_back(this);
  }

  ref<mlir::MLIRContext> ctx_;
  ref<mlir::Block> ip_block_;
  ref<mlir::Operation> ip_before_;
  mlir::Block *last_block_ = nullptr;      /* the raw insertion point the refs were made from */
  mlir::Operation *last_before_ = nullptr; /* (compared only, never read) */
  tether_reason cleared_ = TETHER_REASON_NONE;
  listener listener_;
};

namespace detail {
/* (What f does never makes or destroys a builder: the registry is not copied.) */
template <class F> void for_builders(tether_arena *a, F f) {
  auto &r = builders();
  std::lock_guard<std::mutex> g(r.lock);
  for (OpBuilder *b : r.all)
    if (b->arena() == a) f(b);
}
/* Before IR of arena a changes: every builder holds its current insertion point. */
inline void builders_capture(tether_arena *a) {
  for_builders(a, [](OpBuilder *b) { b->leave(); });
}
/* After: every builder re-derives it, or clears it. */
inline void builders_refresh(tether_arena *a) {
  for_builders(a, [](OpBuilder *b) {
    try {
      b->refresh();
    } catch (...) {
    }
  });
}

/* Brackets a change of arena a's IR made here: builders hold their insertion points before, and
 * re-derive them after (also when the change throws). */
struct mutation {
  explicit mutation(tether_arena *arena) : a(arena) { builders_capture(a); }
  ~mutation() { builders_refresh(a); }
  tether_arena *a;
};

/* Whether anything outside block b uses a value defined in it (its arguments, the results of
 * operations in it, at any depth) or branches to it or to a block nested in it. */
inline bool used_from_outside(mlir::Block *b) {
  auto outside = [b](mlir::Operation *user) { return !b->findAncestorOpInBlock(*user); };
  auto block_used = [&](mlir::Block *x) {
    for (mlir::BlockOperand &u : x->getUses())
      if (outside(u.getOwner())) return true;
    for (mlir::BlockArgument arg : x->getArguments())
      for (mlir::OpOperand &u : arg.getUses())
        if (outside(u.getOwner())) return true;
    return false;
  };
  if (block_used(b)) return true;
  for (mlir::Operation &op : *b) {
    bool found = false;
    op.walk([&](mlir::Operation *o) {
      for (mlir::Value r : o->getResults())
        for (mlir::OpOperand &u : r.getUses())
          if (outside(u.getOwner())) found = true;
      for (mlir::Region &reg : o->getRegions())
        for (mlir::Block &nb : reg)
          if (block_used(&nb)) found = true;
      return found ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
    });
    if (found) return true;
  }
  return false;
}

/* Erases block b now (its uses checked by the caller) and invalidates every handle into it.
 * tether.h erases operations only: the block is detached (its handles move to a tree of their
 * own), put into a new region, that region given to a new builtin.module, and that operation
 * erased; the handles of the block, of its arguments and of everything in it become invalid
 * (TETHER_REASON_PARENT_ERASED). The detach searches the block's old tree for branches into it
 * (the C API has no use lists of blocks): a walk of that tree, which a native tether_block_erase
 * would not need (docs/cpp-bindings.md, "Costs"). Revalidating the tree after MLIR's own
 * Block::erase also works, and walks it too (3x slower, measured). */
inline void erase_block(tether_arena *a, mlir::Block *b, tether_block *bh) {
  if (b->getParent()) check(tether_block_detach(bh), bh);
  tether_region *region = nullptr;
  check(tether_region_create(a, &region));
  check(tether_region_append_block(region, bh), bh);
  MlirRegion raw = ::wrap(raw_region(region));
  MlirOperationState st = mlirOperationStateGet(mlirStringRefCreateFromCString("builtin.module"),
                                                mlirLocationUnknownGet(tether_arena_context(a)));
  mlirOperationStateAddOwnedRegions(&st, 1, &raw);
  tether_op *holder = nullptr;
  check(tether_op_create(a, &st, &holder), nullptr, a);
  check(tether_op_erase(holder), holder);
  tether_keep_alive(region);
}

} // namespace detail

/* ---------------------------------------------------------------------------------------------
 * Changing IR through the arena. Each function checks its arguments' handles (tether::error for
 * erased IR), refuses what would leave uses of freed IR (TETHER_EBUSY), keeps the trees'
 * ownership and dependencies right when IR moves between trees, invalidates the handles into what
 * it frees, and updates the builders of the arena. Use them instead of Operation::erase,
 * Block::erase, RewriterBase::mergeBlocks/inlineBlockBefore, Region::push_back, Block::push_back,
 * PassManager::run.
 */

/// Erases op and everything in it (Operation::erase). TETHER_EBUSY (nothing changes) while a
/// result of op or of an operation inside it is used outside it. The handles into it become
/// invalid (TETHER_REASON_ERASED, TETHER_REASON_PARENT_ERASED).
inline void erase(mlir::Operation *op) {
  tether_op *h = detail::op_handle(op);
  tether_arena *a = tether_handle_arena(h);
  int rc;
  {
    detail::mutation m(a);
    rc = tether_op_erase(h);
  }
  if (rc == TETHER_EBUSY)
    fail(rc, h, nullptr,
         "cannot erase: results or blocks of the operation are still used outside it");
  check(rc, h);
}
template <class OpTy, class = std::enable_if_t<std::is_base_of<mlir::OpState, OpTy>::value>>
void erase(OpTy op) {
  erase(op.getOperation());
}

/// Erases block b and everything in it (Block::erase). TETHER_EBUSY (nothing changes) while it
/// is branched to, or a value defined in it is used, from outside it. The handles into it become
/// invalid (TETHER_REASON_PARENT_ERASED: tether.h erases blocks through an operation holding them).
/// Costs a walk of the block's tree (docs/cpp-bindings.md, "Costs").
inline void erase(mlir::Block *b) {
  tether_block *bh = detail::block_handle(b);
  tether_arena *a = tether_handle_arena(bh);
  if (detail::used_from_outside(b))
    fail(TETHER_EBUSY, bh, nullptr,
         "cannot erase the block: it is branched to, or values defined in it are used, from "
         "outside it");
  detail::mutation m(a);
  detail::erase_block(a, b, bh);
}

/// Moves the operations of `source` into `dest` before `before` (NULL: at the end of dest),
/// replacing each argument of source by the value of `args` at its position, then erases source
/// (RewriterBase::inlineBlockBefore / mergeBlocks). source may be in another tree than dest (a
/// detached block): its operations then change trees with their handles. TETHER_EARG for dest
/// inside source, `before` not in dest, or a count of args that is not source's; TETHER_EBUSY
/// while source is branched to; TETHER_ECONTEXT for values of another context.
inline void inline_block(mlir::Block *source, mlir::Block *dest, mlir::Operation *before,
                         mlir::ValueRange args) {
  tether_block *sh = detail::block_handle(source);
  tether_block *dh = detail::block_handle(dest);
  tether_arena *a = tether_handle_arena(sh);
  if (tether_handle_arena(dh) != a)
    fail(TETHER_ECONTEXT, nullptr, nullptr, "blocks of different contexts");
  if (source == dest) fail(TETHER_EARG, nullptr, nullptr, "cannot merge a block into itself");
  if (mlir::Operation *p = dest->getParentOp(); p && source->findAncestorOpInBlock(*p))
    fail(TETHER_EARG, nullptr, nullptr, "the destination block is inside the block merged");
  if (before && before->getBlock() != dest)
    fail(TETHER_EARG, nullptr, nullptr,
         "the operation to insert before is not in the destination block");
  if (args.size() != source->getNumArguments())
    fail(TETHER_EARG, nullptr, nullptr,
         "one value is needed for each argument of the merged block");
  if (!source->use_empty())
    fail(TETHER_EBUSY, sh, nullptr, "the merged block is still branched to");
  std::vector<tether_value *> with;
  for (mlir::Value v : args) with.push_back(detail::value_handle(v));
  for (tether_value *w : with)
    if (tether_handle_arena(w) != a)
      fail(TETHER_ECONTEXT, nullptr, nullptr, "a value of another context");
  detail::mutation m(a);
  for (unsigned i = 0; i < source->getNumArguments(); ++i) {
    mlir::BlockArgument arg = source->getArgument(i);
    if (!arg.use_empty()) check(tether_value_replace_all_uses(detail::value_handle(arg), with[i]));
  }
  if (detail::root_of(source) == detail::root_of(dest)) {
    /* One tree: MLIR moves the operations; their handles stay in the tree. */
    dest->getOperations().splice(before ? mlir::Block::iterator(before) : dest->end(),
                                 source->getOperations());
    tether_arena_touch(a);
  } else {
    /* Across trees: one operation at a time through tether, which moves its handles and records
     * the dependencies of its uses. */
    std::vector<mlir::Operation *> ops;
    for (mlir::Operation &op : *source) ops.push_back(&op);
    tether_op *bh = before ? detail::op_handle(before) : nullptr;
    for (mlir::Operation *op : ops) {
      tether_op *oh = detail::op_handle(op);
      if (bh) {
        check(tether_op_move_before(oh, bh), oh);
      } else if (!dest->empty()) {
        check(tether_op_move_after(oh, detail::op_handle(&dest->back())), oh);
      } else {
        check(tether_op_detach(oh), oh);
        check(tether_block_append_op(dh, oh), oh);
      }
    }
  }
  detail::erase_block(a, source, sh);
}

/// mergeBlocks: source's operations at the end of dest.
inline void merge_blocks(mlir::Block *source, mlir::Block *dest, mlir::ValueRange args = {}) {
  inline_block(source, dest, nullptr, args);
}
/// source's operations at the start of dest (the "merge_block_before" of some bindings).
inline void merge_block_before(mlir::Block *source, mlir::Block *dest, mlir::ValueRange args = {}) {
  inline_block(source, dest, dest->empty() ? nullptr : &dest->front(), args);
}

/// Appends a detached block (tether::new_block, tether::adopt) to region (Region::push_back).
/// TETHER_ESTATE when the block already belongs to a region.
inline void append(mlir::Region *region, mlir::Block *block) {
  tether_region *rh = detail::region_handle(region);
  tether_block *bh = detail::block_handle(block);
  tether_arena *a = tether_handle_arena(rh);
  detail::mutation m(a);
  check(tether_region_append_block(rh, bh), bh, nullptr,
        "the block must be detached (tether::new_block) and of the same context");
}

/// Appends op to block: a root (adopted) is inserted; an operation elsewhere is moved.
inline void append(mlir::Block *block, mlir::Operation *op) {
  tether_block *bh = detail::block_handle(block);
  tether_op *oh = detail::op_handle(op);
  tether_arena *a = tether_handle_arena(bh);
  detail::mutation m(a);
  if (op->getBlock()) check(tether_op_detach(oh), oh);
  check(tether_block_append_op(bh, oh), oh);
}

/// Moves op right before / after ref_op (Operation::moveBefore / moveAfter), across trees too.
inline void move_before(mlir::Operation *op, mlir::Operation *ref_op) {
  tether_op *oh = detail::op_handle(op);
  tether_op *rh = detail::op_handle(ref_op);
  tether_arena *a = tether_handle_arena(oh);
  detail::mutation m(a);
  check(tether_op_move_before(oh, rh), oh);
}
inline void move_after(mlir::Operation *op, mlir::Operation *ref_op) {
  tether_op *oh = detail::op_handle(op);
  tether_op *rh = detail::op_handle(ref_op);
  tether_arena *a = tether_handle_arena(oh);
  detail::mutation m(a);
  check(tether_op_move_after(oh, rh), oh);
}

/// Moves block b right before block `ref_block` (Block::moveBefore), across trees too: a block of
/// another tree (a detached one) changes trees with its handles. TETHER_EARG for a block moved
/// into itself or before itself, or a ref_block without a region.
inline void move_before(mlir::Block *b, mlir::Block *ref_block) {
  tether_block *bh = detail::block_handle(b);
  tether_block *rh = detail::block_handle(ref_block);
  tether_arena *a = tether_handle_arena(bh);
  if (tether_handle_arena(rh) != a)
    fail(TETHER_ECONTEXT, nullptr, nullptr, "blocks of different contexts");
  mlir::Region *region = ref_block->getParent();
  if (b == ref_block || !region)
    fail(TETHER_EARG, nullptr, nullptr, "no place to move the block to");
  if (mlir::Operation *p = region->getParentOp(); p && b->findAncestorOpInBlock(*p))
    fail(TETHER_EARG, nullptr, nullptr, "the block would be moved into itself");
  detail::mutation m(a);
  if (b->getParent() && detail::root_of(b) == detail::root_of(ref_block)) {
    b->moveBefore(ref_block); /* one tree: its handles stay */
    tether_arena_touch(a);
    return;
  }
  check(tether_block_detach(bh), bh);
  intptr_t pos = 0;
  for (mlir::Block &x : *region) {
    if (&x == ref_block) break;
    ++pos;
  }
  check(tether_region_insert_block(detail::region_handle(region), pos, bh), bh);
}

/// Erases argument i of block b (Block::eraseArgument). TETHER_EBUSY while it has uses, ERANGE
/// for no such argument. Its handle becomes invalid (TETHER_REASON_REMOVED).
inline void erase_argument(mlir::Block *b, unsigned i) {
  tether_block *bh = detail::block_handle(b);
  if (i >= b->getNumArguments())
    fail(TETHER_ERANGE, nullptr, nullptr, "block argument index out of range");
  if (!b->getArgument(i).use_empty())
    fail(TETHER_EBUSY, nullptr, nullptr, "cannot erase a block argument that still has uses");
  detail::mutation m(tether_handle_arena(bh));
  b->eraseArgument(i);
  check(tether_revalidate(bh), bh); /* at once: nothing is allocated at its address meanwhile */
}

/// Takes op out of its block; it becomes a root owned by the refs that reach it.
inline void detach(mlir::Operation *op) {
  tether_op *oh = detail::op_handle(op);
  tether_arena *a = tether_handle_arena(oh);
  detail::mutation m(a);
  check(tether_op_detach(oh), oh);
}

/// Replaces every use of `of` by `with` (Value::replaceAllUsesWith), recording the dependencies
/// of users in other trees.
inline void replace_all_uses_with(mlir::Value of, mlir::Value with) {
  tether_value *oh = detail::value_handle(of);
  tether_value *wh = detail::value_handle(with);
  check(tether_value_replace_all_uses(oh, wh), oh);
}

/// Runs pm on op (PassManager::run), then revalidates op's tree: handles of what the passes
/// removed become invalid (TETHER_REASON_REMOVED), builders' insertion points in it are cleared.
/// The IR is verified first (C++ code may have changed it): TETHER_EVERIFY; a failing pipeline
/// is TETHER_EPASS with MLIR's diagnostics; TETHER_EBUSY while other trees use op's IR.
inline void run_passes(mlir::PassManager &pm, mlir::Operation *op) {
  tether_op *h = detail::op_handle(op);
  tether_arena *a = tether_handle_arena(h);
  if (pm.getContext() != op->getContext())
    fail(TETHER_ECONTEXT, nullptr, nullptr, "the pass manager belongs to another context");
  int rc;
  {
    detail::mutation m(a);
    tether_arena_touch(a);
    rc = tether_op_run_passes(h, ::wrap(&pm));
  }
  check(rc, h, a, rc == TETHER_EPASS ? "the pass pipeline failed" : nullptr);
}
template <class OpTy, class = std::enable_if_t<std::is_base_of<mlir::OpState, OpTy>::value>>
void run_passes(mlir::PassManager &pm, OpTy op) {
  run_passes(pm, op.getOperation());
}

/// An mlir::PassManager that keeps its context alive and whose run() goes through the arena
/// (tether::run_passes): what a binding's pass manager class becomes. run() returns success or
/// throws tether::error (a failing pipeline: TETHER_EPASS with MLIR's diagnostics).
class PassManager : public mlir::PassManager {
public:
  explicit PassManager(mlir::MLIRContext *ctx)
      : mlir::PassManager(ctx), ctx_(ref<mlir::MLIRContext>::of(ctx)) {}
  mlir::LogicalResult run(mlir::Operation *op) {
    run_passes(*this, op);
    return mlir::success();
  }

private:
  ref<mlir::MLIRContext> ctx_;
};

/// After C++ code changed the structure of op's tree without these functions (a rewriter, a
/// pass run directly, Operation::erase): the handles of objects no longer in the tree become
/// invalid. Call it right after the change, before anything else allocates IR: an object freed
/// and another made at its address cannot be told apart. op must be alive, in the tree changed.
inline void revalidate(mlir::Operation *op) {
  tether_op *h = detail::op_handle(op);
  tether_arena *a = tether_handle_arena(h);
  detail::mutation m(a);
  check(tether_revalidate(h), h);
}

/// After C++ code created op with another builder than a tether::OpBuilder: records the
/// dependencies its operands make on other trees (as a tether::OpBuilder's listener does).
inline void track_uses(mlir::Operation *op) {
  tether_op *oh = detail::op_handle(op);
  tether_arena *a = tether_handle_arena(oh);
  tether_arena_touch(a);
  const void *root = detail::root_of(op);
  for (unsigned i = 0, n = op->getNumOperands(); i < n; ++i) {
    mlir::Value v = op->getOperand(i);
    if (v && detail::root_of(v) != root)
      check(tether_op_set_operand(oh, static_cast<intptr_t>(i), detail::value_handle(v)), oh);
  }
}

/// Calls fn(Operation *) on op and every operation nested in it (Operation::walk; post-order by
/// default) through the arena's walk: fn may erase, move or create IR (through these functions),
/// and operations it invalidated are skipped, where MLIR's own walk would visit freed memory. An
/// exception thrown by fn stops the walk and is rethrown.
template <class F>
void walk(mlir::Operation *op, F &&fn, mlir::WalkOrder order = mlir::WalkOrder::PostOrder) {
  tether_op *h = detail::op_handle(op);
  struct state {
    std::remove_reference_t<F> *fn;
    std::exception_ptr error;
  } st{&fn, nullptr};
  int rc = tether_op_walk(
      h, order == mlir::WalkOrder::PreOrder ? TETHER_WALK_PRE_ORDER : TETHER_WALK_POST_ORDER,
      [](tether_op *o, void *user) -> int {
        auto *s = static_cast<state *>(user);
        try {
          (*s->fn)(detail::raw_op(o));
          return 0;
        } catch (...) {
          s->error = std::current_exception();
          return 1;
        }
      },
      &st);
  if (st.error) std::rethrow_exception(st.error);
  check(rc, h);
}

/// Verifies op through tether (with its crash guards): true when it verifies; the diagnostics
/// are then in tether_arena_last_error.
inline bool verify(mlir::Operation *op) {
  tether_op *h = detail::op_handle(op);
  int rc = tether_op_verify(h);
  if (rc == TETHER_EVERIFY) return false;
  check(rc, h);
  return true;
}

/// Prints op through tether (IR MLIR's printer would crash on prints generically).
inline std::string print(mlir::Operation *op) {
  tether_op *h = detail::op_handle(op);
  std::string out;
  check(
      tether_op_print(
          h, MlirOpPrintingFlags{nullptr},
          [](MlirStringRef s, void *u) { static_cast<std::string *>(u)->append(s.data, s.length); },
          &out),
      h);
  return out;
}

/// How a binding's own builder class reaches its tether::OpBuilder: a class derived from it
/// needs nothing; one that holds it declares TETHER_PYBIND11_BUILDER(Class, expression).
template <class T, class = void> struct builder_access {
  static OpBuilder &get(T &b) { return b; }
};

} // namespace tether
#pragma GCC visibility pop

/* =============================================================================================
 * pybind11: holders and casters. Define TETHER_HPP_NO_PYBIND11 to use the C++ part alone.
 */
#ifndef TETHER_HPP_NO_PYBIND11
#pragma GCC visibility push(hidden)
namespace tether {
namespace pybind {

namespace py = ::pybind11;

/* The tether holder of an instance, or tether::error when its class was registered with another
 * holder (or it has none: made by a path of pybind11 that does not construct one). */
inline const ref_base &holder_of(const py::detail::value_and_holder &v_h) {
  /* (pybind11 leaves v_h.type NULL for an exact match: the instance's class says it.) */
  const py::detail::type_info *ti =
      v_h.type ? v_h.type
               : py::detail::get_type_info(Py_TYPE(reinterpret_cast<PyObject *>(v_h.inst)));
  if (!ti || !v_h.holder_constructed() || ti->default_holder ||
      ti->holder_size_in_ptrs * sizeof(void *) < sizeof(ref_base) ||
      !v_h.holder<ref_base>().is_tether_ref())
    fail(TETHER_EARG, nullptr, nullptr,
         "this object is not held by tether (register its class with tether::ref<T> as holder)");
  return v_h.holder<ref_base>();
}

/* The pybind11 class of T, or of the nearest bound base MLIR offers (a ForOp returned where only
 * OpState is bound, an OpResult where Value is). */
template <class T> const py::detail::type_info *class_of() {
  if (auto *ti = py::detail::get_type_info(typeid(T))) return ti;
  constexpr detail::kind K = detail::kind_of<T>::value;
  if constexpr (K == detail::kind::op)
    return py::detail::get_type_info(typeid(mlir::OpState));
  else if constexpr (K == detail::kind::value)
    return py::detail::get_type_info(typeid(mlir::Value));
  else if constexpr (K == detail::kind::type)
    return py::detail::get_type_info(typeid(mlir::Type));
  else if constexpr (K == detail::kind::attribute)
    return py::detail::get_type_info(typeid(mlir::Attribute));
  return nullptr;
}

/// The Python object of a ref: the live one of that class for the same object (one per IR object
/// and class: the key is the interned handle), else a new one that holds a copy of the ref.
template <class T> py::handle cast_ref(const ref_base &r) {
  r.require();
  const py::detail::type_info *ti = class_of<T>();
  if (!ti) throw py::type_error("tether: this MLIR class is not bound with pybind11");
  if (ti->default_holder || ti->holder_size_in_ptrs * sizeof(void *) < sizeof(ref_base))
    throw py::type_error("tether: a bound MLIR class must use tether::ref<T> as its holder");
  return py::detail::type_caster_generic::cast(r.key(), py::return_value_policy::take_ownership,
                                               py::handle(), ti, nullptr, nullptr, &r);
}

/* Mixing contexts: while a bound call of a builder runs, the objects it is given must be of the
 * builder's context. */
inline void check_builder_context(const ref_base &r) {
  tether_arena *b = detail::active_builder_arena;
  if (b && r.arena() && r.arena() != b)
    fail(TETHER_ECONTEXT, nullptr, nullptr,
         "an object of another MLIRContext was passed to a builder of this one");
}

/// The caster of a bound MLIR class: Python to C++ reads the instance's tether holder and gives
/// the object checked (never the instance's stored pointer); C++ to Python makes or finds the
/// held instance (cast_ref). Objects of other extensions' module-local classes are refused.
template <class T> class caster : public py::detail::type_caster_base<T> {
  using base = py::detail::type_caster_base<T>;
  using stored = typename ref<T>::result_type;

public:
  bool load(py::handle src, bool convert) {
    loaded_ = false;
    if (!base::template load_impl<caster>(src, convert)) return false;
    if (!loaded_ && this->value) { /* another module's object, or an implicit conversion */
      this->value = nullptr;
      return false;
    }
    return true;
  }

  /* load_impl's hooks (called on this class). */
  void load_value(py::detail::value_and_holder &&v_h) {
    const ref_base &r = holder_of(v_h);
    stored x = detail::resolve<T>(r);
    check_builder_context(r);
    if constexpr (detail::by_pointer<T>) {
      this->value = x;
    } else {
      storage_.emplace(x);
      this->value = &*storage_;
    }
    loaded_ = true;
  }
  bool try_implicit_casts(py::handle, bool) { return false; }
  bool try_direct_conversions(py::handle) { return false; }

  static py::handle cast(const T *src, py::return_value_policy, py::handle) {
    if (!src) return py::none().release();
    if constexpr (detail::by_pointer<T>) {
      return cast_ref<T>(ref<T>::of(const_cast<T *>(src)));
    } else {
      if (is_null(*src)) return py::none().release(); /* Value(), Type(), a null op class */
      return cast_ref<T>(ref<T>::of(*src));
    }
  }
  static py::handle cast(const T &src, py::return_value_policy p, py::handle parent) {
    return cast(&src, p, parent);
  }
  static py::handle cast(T &&src, py::return_value_policy p, py::handle parent) {
    return cast(&src, p, parent);
  }

private:
  template <class U> static bool is_null(const U &x) {
    if constexpr (std::is_base_of<mlir::OpState, U>::value)
      return !const_cast<U &>(x).getOperation();
    else
      return !x.getAsOpaquePointer();
  }

  bool loaded_ = false;
  std::optional<std::conditional_t<detail::by_pointer<T>, char, T>> storage_;
};

/// The caster of tether::ref<T> (a bound function taking or returning the holder itself).
template <class T> class ref_caster : public py::detail::copyable_holder_caster<T, ref<T>> {
  using base = py::detail::copyable_holder_caster<T, ref<T>>;

public:
  bool load(py::handle src, bool convert) {
    return base::template load_impl<ref_caster>(src, convert);
  }
  void load_value(py::detail::value_and_holder &&v_h) {
    const ref_base &r = holder_of(v_h);
    r.require();
    check_builder_context(r);
    static_cast<ref_base &>(this->holder) = r;
    this->value = v_h.value_ptr();
  }
  bool try_implicit_casts(py::handle, bool) { return false; }
  static py::handle cast(const ref<T> &src, py::return_value_policy, py::handle) {
    return cast_ref<T>(src);
  }
};

/// The caster of a binding's builder class: the builder's enter() when the call's argument is
/// loaded, its leave() when the call returned (the caster lives as long as the call).
template <class T> class builder_caster : public py::detail::type_caster_base<T> {
  using base = py::detail::type_caster_base<T>;

public:
  builder_caster() = default;
  builder_caster(const builder_caster &o) : base(o) {}
  builder_caster &operator=(const builder_caster &) = delete;
  ~builder_caster() {
    if (!b_) return;
    b_->leave();
    detail::active_builder_arena = saved_;
  }
  bool load(py::handle src, bool convert) {
    if (!base::load(src, convert)) return false;
    if (!this->value || b_) return true;
    OpBuilder &b = builder_access<T>::get(*static_cast<T *>(this->value));
    b.enter();
    b_ = &b;
    saved_ = detail::active_builder_arena;
    detail::active_builder_arena = b.arena();
    return true;
  }

private:
  OpBuilder *b_ = nullptr;
  tether_arena *saved_ = nullptr;
};

} // namespace pybind

/// Registers the exceptions (InvalidatedError, a RuntimeError, as module attribute) and tells the
/// collector that the interpreter's static data holds no handle. Call once in PYBIND11_MODULE.
inline void init_module(::pybind11::module_ &m) {
  static PyObject *invalidated = nullptr; /* one per extension, kept for the process */
  if (!invalidated) {
    std::string name =
        ::pybind11::str(m.attr("__name__")).cast<std::string>() + ".InvalidatedError";
    invalidated = PyErr_NewException(name.c_str(), PyExc_RuntimeError, nullptr);
    if (!invalidated) throw ::pybind11::error_already_set();
  }
  m.attr("InvalidatedError") = ::pybind11::handle(invalidated);
  ::pybind11::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const error &e) {
      PyObject *type = PyExc_RuntimeError;
      switch (e.status()) {
      case TETHER_EINVALID:
        type = invalidated;
        break;
      case TETHER_EARG:
      case TETHER_ECONTEXT:
        type = PyExc_ValueError;
        break;
      case TETHER_ERANGE:
        type = PyExc_IndexError;
        break;
      case TETHER_ENOMEM:
        type = PyExc_MemoryError;
        break;
      default:
        break;
      }
      PyErr_SetString(type, e.what());
    }
  });
  tether_skip_program_data();
}

} // namespace tether
#pragma GCC visibility pop

namespace pybind11 {
namespace detail {

template <> class type_caster<mlir::Operation> : public tether::pybind::caster<mlir::Operation> {};
template <> class type_caster<mlir::Block> : public tether::pybind::caster<mlir::Block> {};
template <> class type_caster<mlir::Region> : public tether::pybind::caster<mlir::Region> {};
template <>
class type_caster<mlir::MLIRContext> : public tether::pybind::caster<mlir::MLIRContext> {};
template <> class type_caster<mlir::Location> : public tether::pybind::caster<mlir::Location> {};
template <class T>
class type_caster<T, enable_if_t<std::is_base_of<mlir::OpState, T>::value>>
    : public tether::pybind::caster<T> {};
template <class T>
class type_caster<T, enable_if_t<std::is_base_of<mlir::Value, T>::value>>
    : public tether::pybind::caster<T> {};
template <class T>
class type_caster<T, enable_if_t<std::is_base_of<mlir::Type, T>::value>>
    : public tether::pybind::caster<T> {};
template <class T>
class type_caster<T, enable_if_t<std::is_base_of<mlir::Attribute, T>::value>>
    : public tether::pybind::caster<T> {};
template <class T>
class type_caster<T, enable_if_t<std::is_base_of<tether::OpBuilder, T>::value>>
    : public tether::pybind::builder_caster<T> {};

template <class T> class type_caster<tether::ref<T>> : public tether::pybind::ref_caster<T> {};
template <class T> struct holder_helper<tether::ref<T>> {
  static T *get(const tether::ref<T> &r) {
    return const_cast<T *>(reinterpret_cast<const T *>(r.key()));
  }
};

} // namespace detail
} // namespace pybind11

/// For a builder class that holds its tether::OpBuilder instead of deriving from it: `builder`
/// is an expression of `self` (a Class &) that gives it, e.g.
///   TETHER_PYBIND11_BUILDER(TritonOpBuilder, *self.builder)
/// at namespace scope. Its bound calls are then bracketed as a builder's.
#define TETHER_PYBIND11_BUILDER(Class, builder)                                                    \
  template <> struct tether::builder_access<Class> {                                               \
    static tether::OpBuilder &get(Class &self) { return builder; }                                 \
  };                                                                                               \
  template <>                                                                                      \
  class pybind11::detail::type_caster<Class> : public tether::pybind::builder_caster<Class> {};

#endif /* TETHER_HPP_NO_PYBIND11 */
#endif /* TETHER_HPP */
