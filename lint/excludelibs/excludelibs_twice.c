/* dialect-linked-twice: a project's static dialect library copied into two shared objects that one
 * Python process loads, typically its Python extension and its shared C-API (aggregate) library.
 *
 * Invariant: check_text only reads. Each CMake file and Bazel BUILD file becomes one fact
 * (excl_twice_collect): the targets it defines (name, kind, place) and the links it writes (from,
 * to, place), in its own spelling, unresolved. Everything that needs the other files happens in
 * run_end, in the driver, from the facts alone (so a run whose results came from worker processes
 * or the cache sees the same graph): CMake variables and Bazel packages are resolved, MLIR's Python
 * helpers are expanded (an extension's EMBED_CAPI_LINK_LIBS go into the aggregate that declares its
 * sources), and the static closure of every shared object is walked once, breadth-first, each node
 * at most once (cycles end), stopping at shared objects and at targets the run does not define. A
 * finding is a static library the run defines and calls a dialect library that two shared objects
 * both reach, when one process is taken to load both (tw_together); it is reported at the link of
 * the second one (the extension, when one of the two is one), once per link. Every list and walk
 * has a cap, so bad input costs bounded time. This file reads one file into its fact;
 * excludelibs_twice_graph.c is the cross-file pass. */
#include "lint/excludelibs/excludelibs_twice.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ==== reading one file ======================================================================= */

typedef struct tw_out {
  excl_ctx *c;
  tether_lint__lines li;
  tether_lint__buf b;
  uint32_t n;
} tw_out;

typedef struct tw_word {
  const char *s;
  size_t n;
} tw_word;

/* Case-insensitive (CMake command names); `lit` is lower-case. */
static int tw_ieq(const char *s, size_t n, const char *lit) {
  if (strlen(lit) != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
    if (ch != lit[i]) return 0;
  }
  return 1;
}

/* The line and column of `p` in the file's text (binary search in the line index). */
static void tw_pos(const tw_out *o, const char *p, unsigned *line, unsigned *col) {
  size_t off = 0;
  if (p >= o->c->text && p <= o->c->text + o->c->len) off = (size_t)(p - o->c->text);
  if (o->li.n == 0) {
    *line = 1;
    *col = (unsigned)off + 1;
    return;
  }
  size_t lo = 0, hi = o->li.n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (o->li.start[mid] <= off)
      lo = mid;
    else
      hi = mid;
  }
  *line = (unsigned)lo + 1;
  *col = (unsigned)(off - o->li.start[lo]) + 1;
}

/* One record: `a` is the target it is about, `b` what it names (empty for a definition); its place
 * is `at`. Dropped when a name is empty or too long, or the file has too many records. */
static void tw_emit(tw_out *o, uint32_t type, uint32_t kind, const char *at, const char *a,
                    size_t an, const char *b, size_t bn) {
  if (o->n >= TW_MAX_FILE_RECORDS || !tw_name_ok(a, an)) return;
  if (type != TW_DEF && !tw_name_ok(b, bn)) return;
  unsigned line, col;
  tw_pos(o, at, &line, &col);
  size_t keep = o->b.n;
  if (tether_lint__buf_put_u32(&o->b, type) | tether_lint__buf_put_u32(&o->b, kind) |
      tether_lint__buf_put_u32(&o->b, line) | tether_lint__buf_put_u32(&o->b, col) |
      tether_lint__buf_put_bytes(&o->b, a, an) | tether_lint__buf_put_bytes(&o->b, b, bn)) {
    o->b.n = keep;
    return;
  }
  o->n++;
}

/* ---- CMake ---------------------------------------------------------------------------------- */

/* The end of the element that starts at s[i]: the next `sep` outside $<...>. */
static size_t tw_elem_end(const char *s, size_t n, size_t i, char sep) {
  int depth = 0;
  for (; i < n; i++) {
    if (s[i] == '$' && i + 1 < n && s[i + 1] == '<') {
      depth++;
      i++;
    } else if (s[i] == '>' && depth > 0) {
      depth--;
    } else if (s[i] == sep && depth == 0) {
      break;
    }
  }
  return i;
}

static size_t tw_piece(const char *s, size_t n, tw_word *out, size_t cap, int depth);

/* The link items of s[0..n) split at `sep` (outside generator expressions). */
static size_t tw_split(const char *s, size_t n, char sep, int skip_first, tw_word *out, size_t cap,
                       int depth) {
  size_t k = 0;
  for (size_t i = 0, first = 1; i <= n && k < cap; first = 0) {
    size_t e = tw_elem_end(s, n, i, sep);
    if (!(first && skip_first)) k += tw_piece(s + i, e - i, out + k, cap - k, depth);
    i = e + 1;
  }
  return k;
}

/* The link items of one list element: a target name, a `${VAR}` reference, or a generator
 * expression whose value holds such items ($<LINK_LIBRARY:FEATURE,a,b>, $<BUILD_INTERFACE:a>,
 * $<$<CONFIG:Debug>:a>). Flags, paths with spaces and other variable spellings are not items. */
static size_t tw_piece(const char *s, size_t n, tw_word *out, size_t cap, int depth) {
  while (n && excl_is_space(*s)) s++, n--;
  while (n && excl_is_space(s[n - 1])) n--;
  if (n == 0 || cap == 0 || depth > 8) return 0;
  if (n >= 3 && s[0] == '$' && s[1] == '<') {
    if (s[n - 1] != '>') return 0;
    const char *in = s + 2;
    size_t inn = n - 3, colon = tw_elem_end(in, inn, 0, ':');
    if (colon >= inn) return 0;
    int feature = tw_eq(in, colon, "LINK_LIBRARY") || tw_eq(in, colon, "LINK_GROUP");
    return tw_split(in + colon + 1, inn - colon - 1, ',', feature, out, cap, depth + 1);
  }
  if (memchr(s, '$', n) && !tw_var_ref(s, n)) return 0;
  if (s[0] == '-') return 0;
  for (size_t i = 0; i < n; i++)
    if (excl_is_space(s[i]) || s[i] == '"' || s[i] == '\'' || s[i] == '<' || s[i] == '>') return 0;
  out[0] = (tw_word){s, n};
  return 1;
}

static int tw_is(const excl_cm_arg *a, const char *kw) {
  return !a->quoted && tw_eq(a->s, a->n, kw);
}

/* A keyword of MLIR's and LLVM's helpers (AddMLIR.cmake, AddMLIRPython.cmake, AddLLVM.cmake): the
 * end of a section. Other words, upper-case ones included (a library may be called MLIR or
 * CAPI), are items of the section. */
static int tw_keyword(const excl_cm_arg *a) {
  static const char *const kws[] = {"ADDITIONAL_HEADERS",
                                    "ADDITIONAL_HEADER_DIRS",
                                    "ADD_TO_PARENT",
                                    "BUILDTREE_ONLY",
                                    "BUNDLE_PATH",
                                    "COMMON_CAPI_LINK_LIBS",
                                    "COMPONENT_LIB",
                                    "DECLARED_HEADERS",
                                    "DECLARED_SOURCES",
                                    "DEPENDS",
                                    "DISABLE_INSTALL",
                                    "DISABLE_LLVM_LINK_LLVM_DYLIB",
                                    "EMBED_CAPI_LINK_LIBS",
                                    "EMBED_LIBS",
                                    "ENABLE_AGGREGATION",
                                    "ENTITLEMENTS",
                                    "EXCLUDE_FROM_ALL",
                                    "EXCLUDE_FROM_LIBMLIR",
                                    "EXPORT_SYMBOLS",
                                    "GENERATE_TYPE_STUBS",
                                    "INSTALL_COMPONENT",
                                    "INSTALL_DESTINATION",
                                    "INSTALL_PREFIX",
                                    "INSTALL_WITH_TOOLCHAIN",
                                    "LINK_COMPONENTS",
                                    "LINK_LIBS",
                                    "MODULE",
                                    "MODULE_NAME",
                                    "NO_INSTALL_RPATH",
                                    "OBJECT",
                                    "OUTPUT_DIRECTORY",
                                    "OUTPUT_NAME",
                                    "PARTIAL_SOURCES_INTENDED",
                                    "PRIVATE_LINK_LIBS",
                                    "PUBLIC_LIBS",
                                    "PYTHON_BINDINGS_LIBRARY",
                                    "RELATIVE_INSTALL_ROOT",
                                    "ROOT_DIR",
                                    "ROOT_PREFIX",
                                    "SHARED",
                                    "SONAME",
                                    "SOURCES",
                                    "SOURCES_GLOB",
                                    "STATIC",
                                    "SUPPORT_LIB",
                                    NULL};
  if (a->quoted) return 0;
  for (size_t i = 0; kws[i]; i++)
    if (tw_eq(a->s, a->n, kws[i])) return 1;
  return 0;
}

static int tw_has(const excl_cm_arg *a, size_t na, const char *kw) {
  for (size_t i = 1; i < na; i++)
    if (tw_is(&a[i], kw)) return 1;
  return 0;
}

/* A target name as written (no variable, list or space in it). */
static int tw_target(const excl_cm_arg *a) {
  if (a->n == 0) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (strchr("$;\"' \t\r\n<>", a->s[i])) return 0;
  return 1;
}

/* Records each item of a[from..to) as `type` of target t (links: `kind`). Link-list keywords of
 * target_link_libraries are skipped. */
static void tw_cm_items(tw_out *o, const excl_cm_arg *t, const excl_cm_arg *a, size_t from,
                        size_t to, uint32_t type, uint32_t kind) {
  static const char *const skip[] = {
      "PUBLIC", "PRIVATE",   "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE", "LINK_INTERFACE_LIBRARIES",
      "debug",  "optimized", "general",   NULL};
  for (size_t i = from; i < to; i++) {
    int kw = 0;
    for (size_t k = 0; skip[k] && !kw; k++) kw = tw_is(&a[i], skip[k]);
    if (kw) continue;
    tw_word w[TW_MAX_ITEMS];
    size_t nw = tw_split(a[i].s, a[i].n, ';', 0, w, TW_MAX_ITEMS, 0);
    for (size_t k = 0; k < nw; k++) tw_emit(o, type, kind, w[k].s, t->s, t->n, w[k].s, w[k].n);
  }
}

/* Every section `kw ...` of a helper's arguments (up to the next keyword), recorded as `type`. */
static void tw_cm_section(tw_out *o, const excl_cm_arg *a, size_t na, const char *kw, uint32_t type,
                          uint32_t kind) {
  for (size_t i = 1; i < na; i++) {
    if (!tw_is(&a[i], kw)) continue;
    size_t j = i + 1;
    while (j < na && !tw_keyword(&a[j])) j++;
    tw_cm_items(o, &a[0], a, i + 1, j, type, kind);
    i = j - 1;
  }
}

/* add_library(NAME [STATIC|SHARED|MODULE|OBJECT|INTERFACE] [EXCLUDE_FROM_ALL] ...), also with
 * IMPORTED (not the project's: ignored) or ALIAS TARGET (a name for another target). */
static void tw_cm_add_library(tw_out *o, const char *cmd, const excl_cm_arg *a, size_t na) {
  uint32_t kind = TW_STATIC;
  for (size_t i = 1; i < na && i < 5; i++) {
    if (tw_is(&a[i], "IMPORTED")) return;
    if (tw_is(&a[i], "ALIAS")) {
      if (i + 1 >= na) return;
      tw_emit(o, TW_DEF, TW_PASS, cmd, a[0].s, a[0].n, "", 0);
      tw_cm_items(o, &a[0], a, i + 1, i + 2, TW_LINK, TW_L_LINK);
      return;
    }
    if (tw_is(&a[i], "SHARED")) kind = TW_SHARED;
    if (tw_is(&a[i], "MODULE")) kind = TW_EXT;
    if (tw_is(&a[i], "INTERFACE")) kind = TW_PASS;
  }
  tw_emit(o, TW_DEF, kind, cmd, a[0].s, a[0].n, "", 0);
}

/* Python_add_library(NAME [STATIC|SHARED|MODULE] ...): MODULE when no type is given. */
static void tw_cm_python_library(tw_out *o, const char *cmd, const excl_cm_arg *a, size_t na) {
  uint32_t kind = TW_EXT;
  if (na > 1 && tw_is(&a[1], "SHARED")) kind = TW_SHARED;
  if (na > 1 && tw_is(&a[1], "STATIC")) kind = TW_STATIC;
  tw_emit(o, TW_DEF, kind, cmd, a[0].s, a[0].n, "", 0);
}

/* set(VAR values... [CACHE ...|PARENT_SCOPE]) and list(APPEND VAR values...): the values, for
 * `${VAR}` in link lists and in DECLARED_SOURCES. */
static void tw_cm_var(tw_out *o, const excl_cm_arg *var, const excl_cm_arg *a, size_t from,
                      size_t na) {
  size_t to = from;
  while (to < na && !tw_is(&a[to], "CACHE") && !tw_is(&a[to], "PARENT_SCOPE")) to++;
  tw_cm_items(o, var, a, from, to, TW_VAR, 0);
}

/* The MLIR-style library helpers: add_mlir_library(NAME [SHARED|MODULE] ... LINK_LIBS ...) and
 * its kin, including a project's own add_*_library wrappers that take LINK_LIBS. */
static void tw_cm_mlir_library(tw_out *o, const char *cmd, size_t nl, const excl_cm_arg *a,
                               size_t na) {
  static const char *const known[] = {"add_mlir_library",
                                      "add_mlir_dialect_library",
                                      "add_mlir_conversion_library",
                                      "add_mlir_translation_library",
                                      "add_mlir_extension_library",
                                      "add_mlir_public_c_api_library",
                                      "add_mlir_upstream_c_api_library",
                                      NULL};
  int is_known = 0;
  for (size_t i = 0; known[i] && !is_known; i++) is_known = tw_ieq(cmd, nl, known[i]);
  if (!is_known) {
    if (nl < 12 || !tw_ieq(cmd, 4, "add_") || !tw_ends(cmd, nl, "_library") ||
        !tw_has(a, na, "LINK_LIBS"))
      return;
  }
  int dialect = 0;
  for (size_t i = 0; i + 7 <= nl && !dialect; i++) dialect = tw_ieq(cmd + i, 7, "dialect");
  uint32_t kind = tw_has(a, na, "SHARED") || tw_has(a, na, "MODULE") ? TW_SHARED : TW_STATIC;
  tw_emit(o, TW_DEF, kind | (dialect ? TW_F_DIALECT : 0), cmd, a[0].s, a[0].n, "", 0);
  tw_cm_section(o, a, na, "LINK_LIBS", TW_LINK, TW_L_LINK);
}

static void tw_cmake_cb(excl_ctx *c, const char *cmd, size_t nl, const excl_cm_arg *a, size_t na,
                        void *ud) {
  tw_out *o = ud;
  (void)c;
  if (na == 0) return;
  if (tw_ieq(cmd, nl, "set")) {
    if (tw_target(&a[0])) tw_cm_var(o, &a[0], a, 1, na);
    return;
  }
  if (tw_ieq(cmd, nl, "list")) {
    if (na >= 2 && tw_is(&a[0], "APPEND") && tw_target(&a[1])) tw_cm_var(o, &a[1], a, 2, na);
    return;
  }
  if (!tw_target(&a[0])) return;
  if (tw_ieq(cmd, nl, "target_link_libraries") || tw_ieq(cmd, nl, "mlir_target_link_libraries")) {
    tw_cm_items(o, &a[0], a, 1, na, TW_LINK, TW_L_LINK);
  } else if (tw_ieq(cmd, nl, "add_library")) {
    tw_cm_add_library(o, cmd, a, na);
  } else if (tw_ieq(cmd, nl, "pybind11_add_module") || tw_ieq(cmd, nl, "nanobind_add_module")) {
    tw_emit(o, TW_DEF, TW_EXT, cmd, a[0].s, a[0].n, "", 0);
  } else if (tw_ieq(cmd, nl, "python_add_library") || tw_ieq(cmd, nl, "python3_add_library")) {
    tw_cm_python_library(o, cmd, a, na);
  } else if (tw_ieq(cmd, nl, "declare_mlir_python_extension")) {
    tw_emit(o, TW_DEF, TW_EXT | TW_F_DECLARED, cmd, a[0].s, a[0].n, "", 0);
    tw_cm_section(o, a, na, "ADD_TO_PARENT", TW_PARENT, 0);
    tw_cm_section(o, a, na, "PRIVATE_LINK_LIBS", TW_LINK, TW_L_LINK);
    tw_cm_section(o, a, na, "EMBED_CAPI_LINK_LIBS", TW_LINK, TW_L_EMBED);
  } else if (tw_ieq(cmd, nl, "declare_mlir_python_sources")) {
    tw_cm_section(o, a, na, "ADD_TO_PARENT", TW_PARENT, 0);
  } else if (tw_ieq(cmd, nl, "add_mlir_python_extension")) {
    tw_emit(o, TW_DEF, TW_EXT, cmd, a[0].s, a[0].n, "", 0);
    tw_cm_section(o, a, na, "LINK_LIBS", TW_LINK, TW_L_LINK);
  } else if (tw_ieq(cmd, nl, "add_mlir_python_common_capi_library")) {
    tw_emit(o, TW_DEF, TW_SHARED | TW_F_AGG, cmd, a[0].s, a[0].n, "", 0);
    tw_cm_section(o, a, na, "DECLARED_SOURCES", TW_SOURCES, 0);
    tw_cm_section(o, a, na, "EMBED_LIBS", TW_LINK, TW_L_LINK);
  } else if (tw_ieq(cmd, nl, "add_mlir_aggregate")) {
    tw_emit(o, TW_DEF, tw_has(a, na, "SHARED") ? TW_SHARED : TW_STATIC, cmd, a[0].s, a[0].n, "", 0);
    tw_cm_section(o, a, na, "EMBED_LIBS", TW_LINK, TW_L_LINK);
    tw_cm_section(o, a, na, "PUBLIC_LIBS", TW_LINK, TW_L_LINK);
  } else {
    tw_cm_mlir_library(o, cmd, nl, a, na);
  }
}

/* ---- Bazel ---------------------------------------------------------------------------------- */

/* What the values at a rule call's level belong to. */
enum { BK_NONE, BK_NAME, BK_LINK, BK_DYN, BK_LINKSHARED };

typedef struct tw_bz_call {
  const char *rule, *name; /* the rule's name token; the value of name = "..." */
  size_t rn, nn;
  int linkshared;
  int kind; /* tw_bz_kind(), once the file is read */
} tw_bz_call;

typedef struct tw_bz_val {
  uint32_t owner; /* a call, or a variable when of_var */
  int of_var;
  int link;   /* TW_L_LINK or TW_L_DYN */
  int is_ref; /* a name: a variable of the file */
  const char *s;
  size_t n;
} tw_bz_val;

typedef struct tw_bz_var {
  const char *name;
  size_t n;
} tw_bz_var;

/* One scan of a BUILD file's tokens. A value (a string or a name) is held back for one token: a
 * string followed by ':' is a dict key (select()'s conditions), a name followed by '(' or '.' a
 * call or an attribute, and neither is a value. */
typedef struct tw_bz {
  int depth;
  const char *prev_name; /* the previous token was this name */
  size_t prev_n;
  int prev_dot;
  int in_call, in_var, key;
  tw_bz_call *calls;
  tw_bz_var *vars;
  tw_bz_val *vals;
  size_t ncalls, nvars, nvals, capc, capv, capl;
  tw_bz_val pending;
  int has_pending;
  size_t steps; /* variable expansion work */
} tw_bz;

static void tw_bz_push(tw_bz *z, const tw_bz_val *v) {
  if (z->nvals >= TW_MAX_BZ ||
      tether_lint__grow(&z->vals, &z->capl, z->nvals, sizeof *z->vals) != 0)
    return;
  z->vals[z->nvals++] = *v;
}

static int tw_bz_key(const char *s, size_t n) {
  if (tw_eq(s, n, "name")) return BK_NAME;
  if (tw_eq(s, n, "deps") || tw_eq(s, n, "implementation_deps") || tw_eq(s, n, "actual"))
    return BK_LINK;
  if (tw_eq(s, n, "dynamic_deps")) return BK_DYN;
  if (tw_eq(s, n, "linkshared")) return BK_LINKSHARED;
  return BK_NONE;
}

/* Where a string or a name goes now: a value of the call's link attribute, of a variable, or
 * nowhere (-1). */
static int tw_bz_value_ctx(const tw_bz *z) {
  if (z->in_call && z->depth >= 1 && (z->key == BK_LINK || z->key == BK_DYN)) return 1;
  if (z->in_var) return 1;
  return 0;
}

static void tw_bz_hold(tw_bz *z, const excl_tok *t, int is_ref) {
  tw_bz_val v = {0, 0, TW_L_LINK, is_ref, t->s, t->n};
  if (z->in_call) {
    v.owner = (uint32_t)(z->ncalls - 1);
    v.link = z->key == BK_DYN ? TW_L_DYN : TW_L_LINK;
  } else {
    v.owner = (uint32_t)(z->nvars - 1);
    v.of_var = 1;
  }
  z->pending = v;
  z->has_pending = 1;
}

static void tw_bz_start_call(tw_bz *z) {
  z->in_call = 0;
  if (z->ncalls >= TW_MAX_BZ ||
      tether_lint__grow(&z->calls, &z->capc, z->ncalls, sizeof *z->calls) != 0)
    return;
  z->calls[z->ncalls++] = (tw_bz_call){z->prev_name, NULL, z->prev_n, 0, 0, -1};
  z->in_call = 1;
  z->key = BK_NONE;
}

static void tw_bz_start_var(tw_bz *z) {
  z->in_var = 0;
  if (z->nvars >= TW_MAX_BZ ||
      tether_lint__grow(&z->vars, &z->capv, z->nvars, sizeof *z->vars) != 0)
    return;
  z->vars[z->nvars++] = (tw_bz_var){z->prev_name, z->prev_n};
  z->in_var = 1;
}

static void tw_bz_op(tw_bz *z, const excl_tok *t) {
  int assign = tw_eq(t->s, t->n, "="), append = tw_eq(t->s, t->n, "+=");
  if (assign && z->in_call && z->depth == 1 && z->prev_name) {
    z->key = tw_bz_key(z->prev_name, z->prev_n);
  } else if ((assign || append) && z->depth == 0 && z->prev_name && !z->in_call && !z->in_var) {
    tw_bz_start_var(z);
  } else if (z->in_call && z->key == BK_LINKSHARED && tw_eq(t->s, t->n, "1")) {
    z->calls[z->ncalls - 1].linkshared = 1;
  }
}

static void tw_bz_tok(const excl_tok *t, void *ud) {
  tw_bz *z = ud;
  if (z->has_pending) {
    int colon = t->kind == EXCL_TOK_OP && tw_eq(t->s, t->n, ":");
    int call = t->kind == EXCL_TOK_OPEN && t->s[0] == '(';
    int dot = t->kind == EXCL_TOK_OP && tw_eq(t->s, t->n, ".");
    if (!(z->pending.is_ref ? call || dot : colon)) tw_bz_push(z, &z->pending);
    z->has_pending = 0;
  }
  const char *name = NULL;
  size_t name_n = 0;
  switch (t->kind) {
  case EXCL_TOK_NEWLINE:
    if (z->depth > 0) return; /* inside brackets a newline means nothing */
    z->in_var = 0;
    break;
  case EXCL_TOK_OPEN:
    if (t->s[0] == '(' && z->depth == 0 && z->prev_name && !z->in_call && !z->in_var)
      tw_bz_start_call(z);
    z->depth++;
    break;
  case EXCL_TOK_CLOSE:
    if (z->depth > 0) z->depth--;
    if (z->depth == 0) z->in_call = 0;
    break;
  case EXCL_TOK_COMMA:
    if (z->in_call && z->depth == 1) z->key = BK_NONE;
    break;
  case EXCL_TOK_OP:
    tw_bz_op(z, t);
    break;
  case EXCL_TOK_NAME:
    name = t->s;
    name_n = t->n;
    if (z->in_call && z->key == BK_LINKSHARED && tw_eq(t->s, t->n, "True"))
      z->calls[z->ncalls - 1].linkshared = 1;
    else if (tw_bz_value_ctx(z) && !z->prev_dot && !tw_eq(t->s, t->n, "True") &&
             !tw_eq(t->s, t->n, "False") && !tw_eq(t->s, t->n, "None"))
      tw_bz_hold(z, t, 1);
    break;
  case EXCL_TOK_STRING:
    if (z->in_call && z->key == BK_NAME && z->depth == 1 && !z->calls[z->ncalls - 1].name) {
      z->calls[z->ncalls - 1].name = t->s;
      z->calls[z->ncalls - 1].nn = t->n;
    } else if (tw_bz_value_ctx(z)) {
      tw_bz_hold(z, t, 0);
    }
    break;
  }
  z->prev_name = name;
  z->prev_n = name_n;
  z->prev_dot = t->kind == EXCL_TOK_OP && tw_eq(t->s, t->n, ".");
}

/* What a rule call defines: a TW_* kind, or -1 when it is not a library or shared object. */
static int tw_bz_kind(const tw_bz_call *k) {
  const char *r = k->rule;
  size_t n = k->rn;
  if (tw_eq(r, n, "cc_library") || tw_ends(r, n, "_cc_library") || tw_eq(r, n, "pybind_library") ||
      tw_eq(r, n, "nanobind_library"))
    return TW_STATIC;
  if (tw_eq(r, n, "alias")) return TW_PASS;
  if (tw_eq(r, n, "cc_shared_library")) return TW_SHARED;
  if (tw_ends(r, n, "pybind_extension") || tw_ends(r, n, "nanobind_extension") ||
      tw_ends(r, n, "py_extension"))
    return TW_EXT;
  if (tw_eq(r, n, "cc_binary") && k->linkshared)
    return k->nn >= 3 && memcmp(k->name, "lib", 3) == 0 ? TW_SHARED : TW_EXT;
  return -1;
}

/* Records the strings a value stands for, at `at`: itself, or the values of every assignment to
 * the variable it names (recursively, within the caps). */
static void tw_bz_expand(tw_out *o, tw_bz *z, const tw_bz_call *k, const tw_bz_val *v,
                         const char *at, int depth, size_t *emitted) {
  if (!v->is_ref) {
    if (*emitted < TW_MAX_EXPAND) {
      tw_emit(o, TW_LINK, (uint32_t)v->link, at, k->name, k->nn, v->s, v->n);
      ++*emitted;
    }
    return;
  }
  if (depth >= TW_MAX_DEPTH) return;
  for (size_t i = 0; i < z->nvals && z->steps < TW_MAX_STEPS; i++, z->steps++) {
    const tw_bz_val *w = &z->vals[i];
    if (!w->of_var) continue;
    const tw_bz_var *var = &z->vars[w->owner];
    if (var->n != v->n || memcmp(var->name, v->s, v->n) != 0) continue;
    tw_bz_val x = *w;
    x.link = v->link;
    tw_bz_expand(o, z, k, &x, at, depth + 1, emitted);
  }
}

static void tw_collect_bazel(tw_out *o) {
  tw_bz z;
  memset(&z, 0, sizeof z);
  excl_lex_starlark(o->c->text, o->c->len, tw_bz_tok, &z);
  if (z.has_pending) tw_bz_push(&z, &z.pending);
  for (size_t i = 0; i < z.ncalls; i++) {
    tw_bz_call *k = &z.calls[i];
    k->kind = k->name ? tw_bz_kind(k) : -1;
    if (k->kind >= 0) tw_emit(o, TW_DEF, (uint32_t)k->kind, k->rule, k->name, k->nn, "", 0);
  }
  for (size_t j = 0; j < z.nvals; j++) {
    const tw_bz_val *v = &z.vals[j];
    if (v->of_var || z.calls[v->owner].kind < 0) continue;
    size_t emitted = 0;
    tw_bz_expand(o, &z, &z.calls[v->owner], v, v->s, 0, &emitted);
  }
  free(z.calls);
  free(z.vars);
  free(z.vals);
}

/* ---- the fact ------------------------------------------------------------------------------- */

void excl_twice_collect(excl_ctx *c, int bazel) {
  if (!c->f || !tether_lint__file_rule_enabled(c->f, EXCL_TWICE_RULE)) return;
  tw_out o;
  memset(&o, 0, sizeof o);
  o.c = c;
  if (tether_lint__lines_build(&o.li, c->text, c->len) != 0) return;
  if (bazel)
    tw_collect_bazel(&o);
  else
    excl_cmake_parse(c, tw_cmake_cb, &o);
  if (o.n) {
    tether_lint__buf f = {0};
    if ((tether_lint__buf_put_u32(&f, TW_MAGIC) | tether_lint__buf_put_u32(&f, (uint32_t)bazel) |
         tether_lint__buf_put_str(&f, tether_lint__file_path(c->f)) |
         tether_lint__buf_put_u32(&f, o.n) | tether_lint__buf_put(&f, o.b.p, o.b.n)) == 0)
      tether_lint__file_fact(c->f, f.p, f.n);
    tether_lint__buf_free(&f);
  }
  tether_lint__buf_free(&o.b);
  tether_lint__lines_free(&o.li);
}
