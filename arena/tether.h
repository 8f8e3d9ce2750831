/* tether: handles to MLIR IR in a Boehm-GC heap. (Foundation version; see docs/arena-api.md.) */
#ifndef TETHER_H
#define TETHER_H

#include <mlir-c/IR.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TETHER_STATUS_LIST(X)                                                                      \
  X(TETHER_OK, 0, "ok")                                                                            \
  X(TETHER_EINVALID, -1, "handle is invalid")                                                      \
  X(TETHER_EARG, -2, "invalid argument")                                                           \
  X(TETHER_EPARSE, -3, "MLIR could not parse the input")                                           \
  X(TETHER_ENOMEM, -4, "out of memory")

typedef enum {
#define TETHER__ENUM(name, value, text) name = value,
  TETHER_STATUS_LIST(TETHER__ENUM)
#undef TETHER__ENUM
} tether_status;

/// Text for a status code; never NULL.
const char *tether_strerror(int status);

typedef struct tether_arena tether_arena;
typedef struct tether_op tether_op;

/// Creates an arena over a new MlirContext with every upstream dialect registered. The arena
/// lives while any handle reaches it. Returns TETHER_OK and sets *out, or an error (*out
/// untouched).
int tether_arena_create(tether_arena **out);

/// Parses `len` bytes of MLIR assembly into a new root operation owned by the returned handle.
int tether_module_parse(tether_arena *a, const char *asm_text, size_t len, tether_op **out);

/// Prints the operation through `cb`. TETHER_EINVALID on an invalid handle.
int tether_op_print(tether_op *op, MlirStringCallback cb, void *user);

/// Safe point: full collection, then destroys every root no handle reaches.
void tether_collect(void);

/// Number of live root operations across all arenas.
intptr_t tether_live_roots(void);

#ifdef __cplusplus
}
#endif
#endif
