/* context.h: the context layer of the _tether extension (core.h has the map of the layers): the
 * Context and what hangs off it directly.
 *
 *   context.c          Context
 *   current.c          the thread's current Context / InsertionPoint / Location; class properties
 *   thread_pool.c      ThreadPool (MLIR 22)
 *   dialect_registry.c DialectRegistry, DialectDescriptor
 *   diagnostics.c      Diagnostic, DiagnosticInfo, DiagnosticHandler; MLIR errors into MLIRError
 *   locations.c        Location (diagnostics carry them)
 *   ctxobj.c           what every context-owned value shares (Location here; Type, Attribute and
 *                      the affine values in types/): layout, ==, hash, `context`, arguments
 */
#ifndef TETHER_PY_CONTEXT_H
#define TETHER_PY_CONTEXT_H

#include "../core/core.h"

typedef struct TpContext {
  PyObject_HEAD tether_arena *arena;
  intptr_t pin;
  int emit_error_diagnostics;
  PyObject *handlers; /* list of attached DiagnosticHandler objects */
  /* Diagnostics being delivered to this context's handlers (MLIR is iterating its list of
   * handlers: none may be attached or detached until it is done), and the handlers detached
   * meanwhile, still registered with MLIR (a list, or NULL; diagnostics.c). */
  int diag_delivering;
  PyObject *diag_deferred;
  /* Attribute names recently made identifiers (tpy_identifier), keyed by the str object (held). */
  struct {
    PyObject *key;
    MlirIdentifier id;
  } idents[16];
  /* Context.enable_multithreading(False) was called; MLIR's multithreading is also off while
   * threads_suspended > 0 (tpy_context_threads_suspend). */
  bool threads_off;
  int threads_suspended;
  /* Every available dialect was loaded (the context left through a capsule), or the context was
   * made with load_on_create_dialects: tpy_context_expose has nothing to do. */
  bool dialects_exposed;
} TpContext;

/* Context-owned values. ctx is a TpContext (strong), NULL only for context-free values (TypeID). */
typedef struct {
  PyObject_HEAD PyObject *ctx;
  void *ptr;
} TpCtxObj;

#define TPY_PTR(o) (((TpCtxObj *)(o))->ptr)
#define TPY_CTX(o) (((TpCtxObj *)(o))->ctx)

/* context/: the inits of this layer's files. */
int tpy_init_locations(PyObject *m);
int tpy_init_current(PyObject *m);
int tpy_init_context(PyObject *m);
int tpy_init_thread_pool(PyObject *m);
int tpy_init_dialect_registry(PyObject *m);
int tpy_init_diagnostics(PyObject *m);

/* ---- contexts (current.c, context.c, dialect_registry.c, diagnostics.c) ---------------------- */

/* Borrowed current objects of this thread, or NULL (no exception). */
PyObject *tpy_current_context(void);
PyObject *tpy_current_loc(void);
PyObject *tpy_current_ip(void);
/* The TpContext (borrowed) of an explicit context argument, or of the current context when o is
 * NULL or None. NULL with RuntimeError (upstream's message) when there is none. */
TpContext *tpy_resolve_context(PyObject *o);
/* The same as a Context object (borrowed): the `context=` argument of a constructor. */
static inline PyObject *tpy_context_arg(PyObject *o) { return (PyObject *)tpy_resolve_context(o); }
/* The Location object (borrowed) given, or the current one; NULL with RuntimeError. */
PyObject *tpy_resolve_loc(PyObject *o);
/* The `with` of Context, InsertionPoint and Location: enter pushes a frame (ip and loc may be
 * NULL: inherited from the frame below when of the same context); exit pops the frame of `self`,
 * RuntimeError("Unbalanced <what> enter/exit") when it is not the top one. 0 or -1. */
enum { TPY_FRAME_CONTEXT, TPY_FRAME_IP, TPY_FRAME_LOC };
int tpy_current_push(int kind, PyObject *ctx, PyObject *ip, PyObject *loc);
int tpy_current_pop(int kind, PyObject *self, const char *what);
/* Sets a class-level read-only property on cls: fn(cls) computes its value (`X.current`). */
int tpy_set_classprop(PyTypeObject *cls, const char *name, PyObject *(*fn)(PyObject *cls));

/* The Context object of an arena (new reference): the one standing for it, else a new one. */
/* Before a raw MLIR object of arena a's context leaves through a capsule (`_CAPIPtr`): loads
 * every available dialect, as upstream's Context() does at once (tether loads a dialect when it is
 * first needed), so that what an extension builds through the C API is registered. */
void tpy_context_expose(tether_arena *a);
/* The arena of context c for a capsule handed to `_CAPICreate`: tether's own, or a new arena that
 * adopts a context another binding made (not owned: its maker keeps it alive). NULL with an
 * exception when none can be made. */
tether_arena *tpy_arena_for_capsule(MlirContext c);
PyObject *tpy_context_of(tether_arena *a);
/* The Context object of a handle's arena (new reference). */
static inline PyObject *tpy_context_of_handle(const void *h) {
  return tpy_context_of(tether_handle_arena(h));
}
static inline MlirContext tpy_ctx_raw(PyObject *ctx) {
  return tether_arena_context(((TpContext *)ctx)->arena);
}
/* The identifier of an attribute name `key` (a str whose text is s) in ctx (a TpContext):
 * mlirIdentifierGet, remembered per context for the str objects it last saw (names repeat: every
 * arith.constant has a "value"). */
MlirIdentifier tpy_identifier(PyObject *ctx, PyObject *key, MlirStringRef s);
/* The identifier of str key when ctx's cache holds it (1), else 0. */
int tpy_identifier_cached(PyObject *ctx, PyObject *key, MlirIdentifier *out);
/* Loads dialect `name` into ctx: 1, or 0 with ValueError when the context does not know it. */
int tpy_load_dialect(MlirContext ctx, const char *name);
/* Context methods whose logic is another file's: dialect_registry.c, diagnostics.c. */
PyObject *tpy_context_append_dialect_registry(TpContext *self, PyObject *registry);
void tpy_append_global_registry(tether_arena *a);
PyObject *tpy_context_get_dialect_descriptor(TpContext *self, PyObject *name);
PyObject *tpy_context_attach_diagnostic_handler(TpContext *self, PyObject *callback);
#if TETHER_MLIR_VERSION >= 22
/* thread_pool.c: a ThreadPool argument's pool, which is never destroyed from then on (1, or 0
 * with TypeError); a pool's address as upstream prints it (0x..., or 0). */
int tpy_arg_thread_pool(PyObject *o, MlirLlvmThreadPool *out);
PyObject *tpy_thread_pool_ptr_str(MlirLlvmThreadPool pool);
#endif
/* Detaches every handler of a Context that goes away. */
void tpy_diagnostics_detach_all(TpContext *self);
/* Turns MLIR's multithreading off in ctx while code written in Python runs inside MLIR (passes,
 * rewrite patterns: MLIR would call it from its worker threads, without the GIL, and fork trial
 * children without them), and back to what Context.enable_multithreading asked for after. Nests. */
void tpy_context_threads_suspend(TpContext *ctx);
void tpy_context_threads_resume(TpContext *ctx);

/* Error capture (diagnostics.c): while attached, error diagnostics of the context are collected
 * as DiagnosticInfo objects (unless the context emits them: emit_error_diagnostics); other
 * severities go on to the context's handlers. */
typedef struct {
  TpContext *ctx;
  PyObject *errors; /* list of DiagnosticInfo */
  MlirDiagnosticHandlerID id;
  int attached;
} tpy_errcap;
void tpy_errcap_begin(tpy_errcap *c, TpContext *ctx);
/* Detaches; returns the list of DiagnosticInfo (new reference; empty when no error came) or NULL
 * when out of memory. */
PyObject *tpy_errcap_end(tpy_errcap *c);
/* Detaches and drops what was captured (the success paths). */
void tpy_errcap_close(tpy_errcap *c);
/* Detaches and raises MLIRError(message, diagnostics). Returns NULL. */
PyObject *tpy_errcap_raise(tpy_errcap *c, const char *message);
/* The start of every parse(asm, context=None) (Module, Type, Attribute): the arguments parsed by
 * the caller's spec s, the context resolved and the capture begun. 1, or 0 with the exception
 * (nothing to end). */
int tpy_parse_begin(tpy_sig *s, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    MlirStringRef *text, TpContext **ctx, tpy_errcap *cap);

/* ---- context-owned values (ctxobj.c) --------------------------------------------------------- */

/* A new value object of `type` (new reference). */
PyObject *tpy_ctxobj_new(PyTypeObject *type, PyObject *ctx, const void *ptr);
void tpy_ctxobj_dealloc(PyObject *self);
/* Py_tp_richcompare and Py_tp_hash of every value class: == when of the same family (Type,
 * Attribute, ...) and the same MLIR value; hashed by the MLIR pointer. */
PyObject *tpy_ctxobj_richcompare(PyObject *a, PyObject *b, int op);
Py_hash_t tpy_ctxobj_hash(PyObject *a);
/* Getters of every value class: `context`, and `_CAPIPtr` with the capsule's name as the
 * PyGetSetDef closure (a capsule that keeps the value alive). */
PyObject *tpy_ctxobj_context(PyObject *self, void *closure);
PyObject *tpy_ctxobj_capsule(PyObject *self, void *capsule_name);
/* "cls(str(self))", as upstream's repr of the affine values. */
PyObject *tpy_ctxobj_repr(PyObject *self, const char *cls);
/* Whether two Context objects stand for one arena. */
int tpy_same_context(PyObject *a, PyObject *b);

/* Value arguments: 1 on success, 0 with an exception set. ctx (may be NULL) receives the value's
 * Context object (borrowed). The _in forms: the value must belong to `ctx` (ValueError). */
int tpy_arg_type(PyObject *o, MlirType *raw, PyObject **ctx);
int tpy_arg_attr(PyObject *o, MlirAttribute *raw, PyObject **ctx);
int tpy_arg_loc(PyObject *o, MlirLocation *raw, PyObject **ctx);
int tpy_arg_type_in(PyObject *o, PyObject *ctx, MlirType *raw);
int tpy_arg_attr_in(PyObject *o, PyObject *ctx, MlirAttribute *raw);
int tpy_arg_loc_in(PyObject *o, PyObject *ctx, MlirLocation *raw);
/* Sequences of types / attributes / locations of ctx into a PyMem array (free with PyMem_Free). */
int tpy_seq_types(PyObject *seq, PyObject *ctx, intptr_t *n, MlirType **out);
int tpy_seq_attrs(PyObject *seq, PyObject *ctx, intptr_t *n, MlirAttribute **out);
int tpy_seq_locs(PyObject *seq, PyObject *ctx, intptr_t *n, MlirLocation **out);

/* Location objects (locations.c; new references; a null location gives None). The _a form takes an
 * arena instead of a Context object. */
PyObject *tpy_wrap_loc(PyObject *ctx, MlirLocation l);
PyObject *tpy_wrap_loc_a(tether_arena *a, MlirLocation l);

#endif
