/* dialect-linked-twice's private interface: the records of a fact, shared by the file reader
 * (excludelibs_twice.c: one CMake or Bazel BUILD file into one fact) and the cross-file pass
 * (excludelibs_twice_graph.c: the run's link graph, its closures and the findings). A fact is
 * TW_MAGIC, 1 for a BUILD file (else 0), the file's path, a record count, then per record: type,
 * kind, line, column (u32 each) and two strings, `a` the target it is about and `b` what it names
 * (empty for a definition). Names shared by the two files start with `tw_`/`TW_`. */
#ifndef TETHER_LINT_EXCLUDELIBS_TWICE_H
#define TETHER_LINT_EXCLUDELIBS_TWICE_H

#include "lint/excludelibs/excludelibs.h"

#include <string.h>

#define TW_MAGIC 0x31544c44u           /* "DLT1" */
#define TW_MAX_NAME 512                /* longer names and labels are dropped */
#define TW_MAX_FILE_RECORDS (1u << 17) /* per file */
#define TW_MAX_RUN_RECORDS (1u << 22)  /* per run */
#define TW_MAX_STEPS ((size_t)1 << 26) /* edges walked and list entries compared per run */
#define TW_MAX_EXPAND 4096             /* words one variable reference expands to */
#define TW_MAX_DEPTH 16                /* variables in variables, parents of parents */
#define TW_MAX_ITEMS 64                /* link items in one CMake argument */
#define TW_MAX_BZ ((size_t)1 << 16)    /* rule calls, variables and values of one BUILD file */

/* What a record of a fact says. */
enum { TW_DEF, TW_LINK, TW_PARENT, TW_SOURCES, TW_VAR };
/* What a target is (TW_DEF's kind, with flags). */
enum { TW_STATIC, TW_PASS, TW_SHARED, TW_EXT };
#define TW_KIND(k) ((k)&0xffu)
#define TW_F_DIALECT 0x100u  /* defined with add_mlir_dialect_library (or a wrapper of it) */
#define TW_F_AGG 0x200u      /* add_mlir_python_common_capi_library: embeds extensions' C API */
#define TW_F_DECLARED 0x400u /* declare_mlir_python_extension: built once per aggregate */
/* What a link does (TW_LINK's kind). */
enum { TW_L_LINK, TW_L_EMBED, TW_L_DYN };

static inline int tw_eq(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static inline int tw_ends(const char *s, size_t n, const char *suffix) {
  return excl_ends_with_n(s, n, suffix);
}

static inline int tw_name_ok(const char *s, size_t n) {
  return n > 0 && n <= TW_MAX_NAME && !memchr(s, '\0', n);
}

/* A `${NAME}` reference and nothing else. */
static inline int tw_var_ref(const char *s, size_t n) {
  if (n < 4 || s[0] != '$' || s[1] != '{' || s[n - 1] != '}') return 0;
  for (size_t i = 2; i + 1 < n; i++)
    if (strchr("${}\"' \t\r\n;", s[i])) return 0;
  return 1;
}
#endif
