/* context.c: arenas, their diagnostics, and context-owned objects (types, attributes, locations).
 *
 * Invariant: an arena's context is destroyed only after every tree of the arena was destroyed, at
 * a safe point, after the arena itself became unreachable; a type, attribute or location handle
 * points to its arena, so the context outlives every handle to anything it owns.
 */
#include "internal.h"

#include <mlir-c/Diagnostics.h>
#include <mlir-c/RegisterEverything.h>
#include <stdlib.h>
#include <string.h>

/* ---- diagnostics ----------------------------------------------------------------------------- */

static void diag_append(tether_arena *a, const char *s, size_t n) {
  if (a->diag_len + n + 1 > a->diag_cap) {
    size_t ncap = a->diag_cap ? a->diag_cap : 256;
    while (a->diag_len + n + 1 > ncap) ncap *= 2;
    char *p = realloc(a->diag, ncap);
    if (!p) return;
    a->diag = p;
    a->diag_cap = ncap;
  }
  memcpy(a->diag + a->diag_len, s, n);
  a->diag_len += n;
  a->diag[a->diag_len] = 0;
}

static void diag_piece(MlirStringRef s, void *ud) { diag_append(ud, s.data, s.length); }

static void diag_one(tether_arena *a, MlirDiagnostic d, const char *indent) {
  static const char *const sev[] = {"error", "warning", "note", "remark"};
  MlirDiagnosticSeverity s = mlirDiagnosticGetSeverity(d);
  diag_append(a, indent, strlen(indent));
  mlirLocationPrint(mlirDiagnosticGetLocation(d), diag_piece, a);
  diag_append(a, ": ", 2);
  const char *w = (unsigned)s < 4 ? sev[s] : "error";
  diag_append(a, w, strlen(w));
  diag_append(a, ": ", 2);
  mlirDiagnosticPrint(d, diag_piece, a);
  diag_append(a, "\n", 1);
  intptr_t n = mlirDiagnosticGetNumNotes(d);
  for (intptr_t i = 0; i < n; i++) diag_one(a, mlirDiagnosticGetNote(d, i), "  ");
}

static MlirLogicalResult diag_handler(MlirDiagnostic d, void *ud) {
  tether_arena *a = ud;
  pthread_mutex_lock(&a->lock);
  int capturing = a->capturing;
  if (capturing) diag_one(a, d, "");
  pthread_mutex_unlock(&a->lock);
  /* Outside tether calls that report errors, let MLIR's default handler print. */
  return capturing ? mlirLogicalResultSuccess() : mlirLogicalResultFailure();
}

void tether__diag_begin(tether_arena *a) {
  pthread_mutex_lock(&a->lock);
  a->capturing++;
  a->diag_len = 0;
  if (a->diag) a->diag[0] = 0;
  pthread_mutex_unlock(&a->lock);
}

void tether__diag_end(tether_arena *a) {
  pthread_mutex_lock(&a->lock);
  a->capturing--;
  pthread_mutex_unlock(&a->lock);
}

const char *tether_arena_last_error(tether_arena *a) {
  if (!a || !a->diag) return "";
  return a->diag;
}

/* ---- arenas ---------------------------------------------------------------------------------- */

static int arena_new(MlirContext ctx, bool owns, tether_arena **out) {
  tether_arena *a = tether__alloc(sizeof *a);
  if (!a) return TETHER_ENOMEM;
  a->ctx = ctx;
  a->owns_ctx = owns;
  a->epoch = 1; /* a tree never verified has verified_epoch 0 */
  a->state = TETHER__ARENA_LIVE;
  pthread_mutex_init(&a->lock, NULL);
  a->diag_id = mlirContextAttachDiagnosticHandler(ctx, diag_handler, a, NULL);
  GC_register_finalizer_no_order(a, tether__arena_finalizer, NULL, NULL, NULL);
  tether__arena_registered(a);
  *out = a;
  return TETHER_OK;
}

static pthread_once_t passes_once = PTHREAD_ONCE_INIT;
static void register_passes(void) { mlirRegisterAllPasses(); }

int tether_arena_create(tether_arena **out) {
  if (!out) return TETHER_EARG;
  tether__enter(NULL);
  /* Like upstream's Python package: every upstream pass can be named in a pipeline. */
  pthread_once(&passes_once, register_passes);
  MlirDialectRegistry reg = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(reg);
  MlirContext ctx = mlirContextCreateWithRegistry(reg, false);
  mlirDialectRegistryDestroy(reg);
  int rc = arena_new(ctx, true, out);
  if (rc != TETHER_OK) mlirContextDestroy(ctx);
  return rc;
}

int tether_arena_adopt(MlirContext ctx, bool take_ownership, tether_arena **out) {
  if (!out || mlirContextIsNull(ctx)) return TETHER_EARG;
  tether__enter(NULL);
  return arena_new(ctx, take_ownership, out);
}

MlirContext tether_arena_context(tether_arena *a) { return a ? a->ctx : (MlirContext){NULL}; }

int tether_arena_append_registry(tether_arena *a, MlirDialectRegistry reg, bool load) {
  if (!a || mlirDialectRegistryIsNull(reg)) return TETHER_EARG;
  tether__enter(a);
  tether__append_registry(a->ctx, reg, load);
  return TETHER_OK;
}

bool tether_arena_multithreaded(tether_arena *a) { return a && tether__multithreaded(a->ctx); }

int tether_arena_allow_unregistered(tether_arena *a, bool allow) {
  if (!a) return TETHER_EARG;
  tether__enter(a);
  mlirContextSetAllowUnregisteredDialects(a->ctx, allow);
  return TETHER_OK;
}

int tether__arena_destroy(tether_arena *a) {
  if (a->stats.roots > 0) return 0;
  if (!atomic_load(&tether__is_shutdown)) {
    tether__opname_cache_clear(&a->opname); /* properties of the context's operations */
    mlirContextDetachDiagnosticHandler(a->ctx, a->diag_id);
    if (a->owns_ctx) mlirContextDestroy(a->ctx);
  }
  a->ctx = (MlirContext){NULL};
  tether__roots_free(a);
  free(a->safe_shapes);
  a->safe_shapes = NULL;
  a->safe_cap = a->safe_used = 0;
  free(a->diag);
  a->diag = NULL;
  a->diag_len = a->diag_cap = 0;
  a->state = TETHER__ARENA_DEAD;
  pthread_mutex_destroy(&a->lock);
  tether__arena_unregistered(a);
  return 1;
}

void tether_arena_set_user(tether_arena *a, void *user) {
  if (a) a->user = user;
}

void *tether_arena_get_user(tether_arena *a) { return a ? a->user : NULL; }

void tether_arena_foreach_root(tether_arena *a, void (*cb)(tether_kind, void *, void *),
                               void *user) {
  if (!a || !cb) return;
  for (uint32_t i = 0; i < a->rcap; i++) {
    tether__tree *t = a->roots[i].tree;
    if (a->roots[i].key && t->state == TETHER__TREE_LIVE)
      cb((tether_kind)t->root_kind, t->root, user);
  }
}

void tether_arena_foreach_user(tether_arena *a, tether_kind kind,
                               void (*cb)(void *handle, void *handle_user, void *user),
                               void *user) {
  if (!a || !cb) return;
  for (uint32_t i = 0; i < a->rcap; i++) {
    tether__tree *t = a->roots[i].tree;
    if (!a->roots[i].key || t->state != TETHER__TREE_LIVE) continue;
    for (uint32_t j = 0; j < t->cap; j++) {
      tether__handle *h = t->slots[j];
      void *hu = h ? (void *)~h->huser : NULL;
      if (hu && tether__kind(h) == (int)kind && tether__raw(h)) cb(h, hu, user);
    }
  }
}

/* ---- context-owned objects ------------------------------------------------------------------- */

static int ctxobj_new(tether_arena *a, void *raw, void **out) {
  tether__ctxobj *o = tether__alloc(sizeof *o);
  if (!o) return TETHER_ENOMEM;
  o->raw = raw;
  o->arena = a;
  *out = o;
  return TETHER_OK;
}

/* Parses a type or an attribute of the arena's context (diagnostics captured). */
static int parse_ctxobj(tether_arena *a, tether_parse_kind kind, const char *text, size_t len,
                        void **out) {
  if (!a || !text || !out) return TETHER_EARG;
  tether__enter(a);
  tether__diag_begin(a);
  const void *raw = NULL;
  if (tether_parse_check(a->ctx, kind, text, len) == TETHER_OK) {
    MlirStringRef s = {text, len};
    raw = kind == TETHER_PARSE_TYPE ? mlirTypeParseGet(a->ctx, s).ptr
                                    : mlirAttributeParseGet(a->ctx, s).ptr;
  }
  tether__diag_end(a);
  if (!raw) return TETHER_EPARSE;
  return ctxobj_new(a, (void *)raw, out);
}

int tether_type_parse(tether_arena *a, const char *text, size_t len, tether_type **out) {
  return parse_ctxobj(a, TETHER_PARSE_TYPE, text, len, (void **)out);
}

/* Wraps raw, an object of context c, when c is the arena's context. */
static int ctxobj_wrap(tether_arena *a, const void *raw, MlirContext c, void **out) {
  if (!a || !out) return TETHER_EARG;
  tether__enter(a);
  int rc = tether__check_ctx(a, c);
  return rc ? rc : ctxobj_new(a, (void *)raw, out);
}

static int ctxobj_get(const void *obj, const void **out) {
  if (!obj || !out) return TETHER_EARG;
  *out = ((const tether__ctxobj *)obj)->raw;
  return TETHER_OK;
}

int tether_type_wrap(tether_arena *a, MlirType raw, tether_type **out) {
  if (mlirTypeIsNull(raw)) return TETHER_EARG;
  return ctxobj_wrap(a, raw.ptr, mlirTypeGetContext(raw), (void **)out);
}

int tether_type_get(tether_type *t, MlirType *out) { return ctxobj_get(t, out ? &out->ptr : NULL); }

int tether_attr_parse(tether_arena *a, const char *text, size_t len, tether_attr **out) {
  return parse_ctxobj(a, TETHER_PARSE_ATTRIBUTE, text, len, (void **)out);
}

int tether_attr_wrap(tether_arena *a, MlirAttribute raw, tether_attr **out) {
  if (mlirAttributeIsNull(raw)) return TETHER_EARG;
  return ctxobj_wrap(a, raw.ptr, mlirAttributeGetContext(raw), (void **)out);
}

int tether_attr_get(tether_attr *t, MlirAttribute *out) {
  return ctxobj_get(t, out ? &out->ptr : NULL);
}

int tether_loc_wrap(tether_arena *a, MlirLocation raw, tether_loc **out) {
  if (mlirLocationIsNull(raw)) return TETHER_EARG;
  return ctxobj_wrap(a, raw.ptr, mlirLocationGetContext(raw), (void **)out);
}

int tether_loc_unknown(tether_arena *a, tether_loc **out) {
  if (!a || !out) return TETHER_EARG;
  tether__enter(a);
  return ctxobj_new(a, (void *)mlirLocationUnknownGet(a->ctx).ptr, (void **)out);
}

int tether_loc_get(tether_loc *t, MlirLocation *out) {
  return ctxobj_get(t, out ? &out->ptr : NULL);
}

tether_arena *tether_type_arena(tether_type *t) { return t ? ((tether__ctxobj *)t)->arena : NULL; }
tether_arena *tether_attr_arena(tether_attr *t) { return t ? ((tether__ctxobj *)t)->arena : NULL; }
tether_arena *tether_loc_arena(tether_loc *t) { return t ? ((tether__ctxobj *)t)->arena : NULL; }
