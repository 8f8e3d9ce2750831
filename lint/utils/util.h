/* util.h: the small utilities every part of tether-lint uses (containers, safe reading of files,
 * hashing, serialization and maps, paths), apart from the interface between the driver, the rule
 * families and the reporters (lint/lint.h, which includes this header). Defined in utils/util.c,
 * utils/safe_read.c and utils/paths.c.
 */
#ifndef TETHER_LINT_UTIL_H
#define TETHER_LINT_UTIL_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
/* ---- small containers (utils/util.c) --------------------------------------------------------- */

/// Makes room for element number `n` (0-based) of the growable array whose pointer is at `array`
/// (a `T **`), of `*cap` elements of `size` bytes: the capacity doubles (from 8) when full. 0, or
/// -1 when out of memory (the array is unchanged).
int tether_lint__grow(void *array, size_t *cap, size_t n, size_t size);

/// A growable list of owned strings.
typedef struct tether_lint__strlist {
  char **v;
  size_t n, cap;
} tether_lint__strlist;

/// Appends a copy of `s`. Returns 0, or -1 when out of memory (the list is unchanged).
int tether_lint__strlist_push(tether_lint__strlist *l, const char *s);
/// Appends a copy of `s` unless an equal string is present.
int tether_lint__strlist_add_unique(tether_lint__strlist *l, const char *s);
/// 1 when an equal string is in the list.
int tether_lint__strlist_has(const tether_lint__strlist *l, const char *s);
/// Frees every string and the array; the list is empty afterwards.
void tether_lint__strlist_free(tether_lint__strlist *l);
/// 1 when `s` ends with `suffix`.
int tether_lint__ends_with(const char *s, const char *suffix);
/// Sorts the list by strcmp (byte order).
void tether_lint__strlist_sort(tether_lint__strlist *l);

/// A growable byte buffer, always NUL-terminated once anything was written.
typedef struct tether_lint__buf {
  char *p;
  size_t n, cap;
} tether_lint__buf;

int tether_lint__buf_put(tether_lint__buf *b, const char *s, size_t n);
int tether_lint__buf_puts(tether_lint__buf *b, const char *s);
int tether_lint__buf_printf(tether_lint__buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tether_lint__buf_free(tether_lint__buf *b);

/// Appends `s` with every control character escaped (C0 as `\n`, `\r`, `\t` or `\xHH`, DEL as
/// `\x7f`, C1 as `\u00HH`, and bytes 0x80..0x9f that are not UTF-8 as `\xHH`), so a file name or
/// message can never start a line of its own or drive a terminal. Other bytes are kept.
int tether_lint__buf_put_escaped(tether_lint__buf *b, const char *s);
int tether_lint__fputs_escaped(const char *s, FILE *out);

/* ---- reading files safely (utils/safe_read.c) ------------------------------------------------ */

/// The default size limit of every file the linter reads itself (--max-file-size).
#define TETHER_LINT_DEFAULT_MAX_FILE_SIZE ((size_t)64 << 20)

/// Why a file was not read, beyond errno values (tether_lint__read_strerror has the text).
enum {
  TETHER_LINT_READ_FIFO = 100001,
  TETHER_LINT_READ_CHR,
  TETHER_LINT_READ_BLK,
  TETHER_LINT_READ_SOCK,
  TETHER_LINT_READ_DIR,
  TETHER_LINT_READ_OTHER,
  TETHER_LINT_READ_PSEUDO,    /* a file of /proc, /sys, ... */
  TETHER_LINT_READ_TOO_LARGE, /* over the size limit */
};

/// The process-wide size limit used by tether_lint__read_file (0 is taken as 1).
void tether_lint__set_max_file_size(size_t max);
/// 0 when `path` (symlinks followed) is a regular file on a real file system, without opening it;
/// else an errno value or TETHER_LINT_READ_*.
int tether_lint__check_regular(const char *path, struct stat *st);
/// Opens a regular file for reading (O_NONBLOCK, checked again with fstat/fstatfs after opening).
/// Returns 0 with the descriptor and the size fstat reports, or an errno value or
/// TETHER_LINT_READ_*.
int tether_lint__open_regular(const char *path, int *fd, size_t *size);
/// Reads a whole regular file of at most the size limit. Returns 0 and a malloc'd NUL-terminated
/// buffer, or an errno value or TETHER_LINT_READ_*. Never blocks on a FIFO, never reads a device.
int tether_lint__read_file(const char *path, char **out, size_t *len);
/// The same with an explicit limit.
int tether_lint__read_file_max(const char *path, size_t max, char **out, size_t *len);
/// Reads up to `cap` bytes from the start of a regular file (same checks). 0 or a code.
int tether_lint__read_head(const char *path, char *buf, size_t cap, size_t *got);
/// Text for a code returned by the functions above (errno values included).
const char *tether_lint__read_strerror(int e);

/* ---- hashing, serialization, maps (utils/util.c) --------------------------------------------- */

typedef struct tether_lint__sha256 {
  uint32_t h[8];
  uint64_t len;
  unsigned char buf[64];
  size_t nbuf;
} tether_lint__sha256;

void tether_lint__sha256_init(tether_lint__sha256 *s);
void tether_lint__sha256_update(tether_lint__sha256 *s, const void *data, size_t n);
void tether_lint__sha256_final(tether_lint__sha256 *s, unsigned char out[32]);
void tether_lint__sha256_of(const void *data, size_t n, unsigned char out[32]);
/// Writes 2*n hex digits and a NUL to `out`.
void tether_lint__hex(const unsigned char *d, size_t n, char *out);

/// Little-endian integers and length-prefixed byte strings, for worker results and the cache.
int tether_lint__buf_put_u32(tether_lint__buf *b, uint32_t v);
int tether_lint__buf_put_u64(tether_lint__buf *b, uint64_t v);
int tether_lint__buf_put_bytes(tether_lint__buf *b, const void *p, size_t n);
int tether_lint__buf_put_str(tether_lint__buf *b, const char *s);
/// Writes all `n` bytes to `fd` (retrying short writes and EINTR). 0, or -1 on a write error.
int tether_lint__write_all(int fd, const void *p, size_t n);

/// A bounds-checked reader of what the functions above wrote: any read past the end, or a string
/// with a NUL byte, sets `bad` and returns 0/NULL from then on.
typedef struct tether_lint__rd {
  const unsigned char *p;
  size_t n, off;
  int bad;
} tether_lint__rd;

uint32_t tether_lint__rd_u32(tether_lint__rd *r);
uint64_t tether_lint__rd_u64(tether_lint__rd *r);
/// A view into the buffer (not NUL-terminated).
const char *tether_lint__rd_bytes(tether_lint__rd *r, size_t *len);
/// A malloc'd copy (NULL and `bad` on error).
char *tether_lint__rd_str(tether_lint__rd *r);

/// A hash map from strings (copied) to pointers.
typedef struct tether_lint__strmap {
  char **keys;
  void **vals;
  size_t n, cap;
} tether_lint__strmap;

/// The value slot for `key`, or NULL when absent.
void **tether_lint__strmap_get(tether_lint__strmap *m, const char *key);
/// The value slot for `key`, inserted (value NULL) when absent; NULL when out of memory.
void **tether_lint__strmap_put(tether_lint__strmap *m, const char *key);
void tether_lint__strmap_free(tether_lint__strmap *m, void (*free_val)(void *));

/// Where each line of a text starts, so a line is found in O(1).
typedef struct tether_lint__lines {
  const char *text;
  size_t len;
  size_t *start;
  size_t n;
  unsigned char *mark; /* per line, for the caller (0 until set); allocated with the index */
} tether_lint__lines;

int tether_lint__lines_build(tether_lint__lines *li, const char *text, size_t len);
/// Line `line` (1-based) without its newline: 0, or -1 when there is no such line.
int tether_lint__lines_get(const tether_lint__lines *li, unsigned line, const char **s,
                           size_t *len);
void tether_lint__lines_free(tether_lint__lines *li);
/// A malloc'd copy of `s` in which every byte sequence that is not valid UTF-8 is replaced by
/// U+FFFD, so JSON and SARIF output is always valid UTF-8. NULL when out of memory.
char *tether_lint__utf8_clean(const char *s);
/// Parses a positive size: digits with an optional binary suffix K, M or G (KiB, MiB, GiB; "B"
/// and "iB" may follow). 0, or -1 when malformed, zero or too large.
int tether_lint__parse_size(const char *s, size_t *out);
/// A malloc'd copy of `s`; NULL when `s` is NULL or out of memory (never aborts).
char *tether_lint__strdup(const char *s);

/* ---- paths (utils/paths.c) ------------------------------------------------------------------- */

/// `rel` joined to `base` when relative, with "." and ".." removed lexically. malloc'd.
char *tether_lint__path_join_norm(const char *base, const char *rel);
/// The newest Debian LLVM (/usr/lib/llvm-N) holding `rel`: writes /usr/lib/llvm-N/rel to out and
/// returns N, or returns -1 with out "". The defaults that name installed MLIR files use it.
int tether_lint__newest_llvm(const char *rel, char *out, size_t len);
/// What follows the last '/' of `path` (all of it when there is none).
const char *tether_lint__base_name(const char *path);
/// The folder part of `path`: "." when it has no '/', "/" for a file of the root. malloc'd.
char *tether_lint__dir_name(const char *path);
/// `path` made absolute against the current directory and normalized lexically (no symlink
/// resolution), for matching excludes. malloc'd.
char *tether_lint__lexical_abs(const char *path);
/// The canonical path of `path` (symlinks resolved) in `dir`, or of its folder when it is not a
/// directory. 0 when it cannot be resolved (`dir` is then undefined).
int tether_lint__real_dir(const char *path, char dir[PATH_MAX]);
/// Walks from the folder `dir` up to the root: 1 with `dir` the first folder that has an entry
/// `name` (lstat when `no_follow`, else stat), or 0 (then `dir` is undefined).
int tether_lint__find_upward(char dir[PATH_MAX], const char *name, int no_follow);

#endif
