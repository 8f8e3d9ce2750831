/* The result cache: what analysing one translation unit produced, stored under a key that says
 * everything the result depends on, and checked again before it is used.
 *
 * Invariant: an entry is a file DIR/XX/KEY (XX the key's first two hex digits) that holds a
 * magic, its own key, the payload's length, the payload and a SHA-256 of everything before it.
 * Entries are written to a temporary file in the same folder and renamed into place, so a reader
 * (another tether-lint running in parallel included) sees either no entry or a whole one; an entry
 * that fails any check (truncated, corrupt, another key, another format) is treated as absent.
 * The key covers the linter (version, executable, libclang), the configuration, the rules and
 * options that change an analysis, the file's name, flags and contents; what the key cannot
 * cover (the headers the unit read, includes that were missing) is checked when an entry is
 * found (tether_lint__cache_result_holds). The payload is the caller's (result.c). */
#define _GNU_SOURCE
#include "lint/lint.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char magic[4] = {'T', 'L', 'C', '1'};

struct tether_lint__cache {
  char *dir;
  unsigned counter;
  tether_lint__strmap digests; /* path -> 32-byte digest, or &no_digest */
  size_t hits, misses, stores;
};

static unsigned char no_digest;

char *tether_lint__cache_default_dir(void) {
  tether_lint__buf b = {0};
  const char *x = getenv("XDG_CACHE_HOME");
  const char *h = getenv("HOME");
  /* The XDG spec: a relative XDG_CACHE_HOME is invalid and must be ignored. */
  if (x && x[0] == '/')
    tether_lint__buf_printf(&b, "%s/tether-lint", x);
  else if (h && h[0] == '/')
    tether_lint__buf_printf(&b, "%s/.cache/tether-lint", h);
  return b.p;
}

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *dir) {
  char *p = tether_lint__strdup(dir);
  if (!p) return ENOMEM;
  int e = 0;
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, 0700) != 0 && errno != EEXIST) {
        e = errno;
        break;
      }
      *s = c;
      if (!c) break;
    }
  }
  free(p);
  if (e) return e;
  struct stat st;
  if (stat(dir, &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  if (access(dir, W_OK | X_OK) != 0) return errno;
  return 0;
}

int tether_lint__cache_open(const char *dir, tether_lint__cache **out, char *err, size_t errlen) {
  *out = NULL;
  int e = make_dirs(dir);
  if (e) {
    snprintf(err, errlen, "cannot use the cache folder %s: %s", dir, strerror(e));
    return -1;
  }
  tether_lint__cache *c = calloc(1, sizeof *c);
  if (!c || !(c->dir = tether_lint__strdup(dir))) {
    free(c);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  *out = c;
  return 0;
}

static void free_digest(void *v) {
  if (v != &no_digest) free(v);
}

void tether_lint__cache_close(tether_lint__cache *c) {
  if (!c) return;
  tether_lint__strmap_free(&c->digests, free_digest);
  free(c->dir);
  free(c);
}

void tether_lint__cache_stats(const tether_lint__cache *c, size_t *hits, size_t *misses,
                              size_t *stores) {
  *hits = c ? c->hits : 0;
  *misses = c ? c->misses : 0;
  *stores = c ? c->stores : 0;
}

static void entry_path(const tether_lint__cache *c, const unsigned char key[32],
                       tether_lint__buf *b, int dir_only) {
  char hex[65];
  tether_lint__hex(key, 32, hex);
  if (dir_only)
    tether_lint__buf_printf(b, "%s/%.2s", c->dir, hex);
  else
    tether_lint__buf_printf(b, "%s/%.2s/%s", c->dir, hex, hex);
}

int tether_lint__cache_get(tether_lint__cache *c, const unsigned char key[32], char **data,
                           size_t *len) {
  *data = NULL;
  *len = 0;
  if (!c) return -1;
  tether_lint__buf path = {0};
  entry_path(c, key, &path, 0);
  char *text = NULL;
  size_t n = 0;
  int e = path.p ? tether_lint__read_file_max(path.p, (size_t)1 << 30, &text, &n) : ENOMEM;
  tether_lint__buf_free(&path);
  if (e) {
    c->misses++;
    return -1;
  }
  int ok = n >= 4 + 32 + 8 + 32 && memcmp(text, magic, 4) == 0 && memcmp(text + 4, key, 32) == 0;
  uint64_t plen = 0;
  if (ok) {
    tether_lint__rd r = {(const unsigned char *)text + 36, 8, 0, 0};
    plen = tether_lint__rd_u64(&r);
    ok = plen == n - (4 + 32 + 8 + 32);
  }
  if (ok) {
    unsigned char sum[32];
    tether_lint__sha256_of(text, n - 32, sum);
    ok = memcmp(sum, text + n - 32, 32) == 0;
  }
  if (!ok) {
    free(text);
    c->misses++;
    return -1;
  }
  char *p = malloc(plen + 1);
  if (!p) {
    free(text);
    c->misses++;
    return -1;
  }
  memcpy(p, text + 44, plen);
  p[plen] = '\0';
  free(text);
  *data = p;
  *len = plen;
  c->hits++;
  return 0;
}

int tether_lint__cache_put(tether_lint__cache *c, const unsigned char key[32], const void *data,
                           size_t len) {
  if (!c) return -1;
  tether_lint__buf b = {0};
  tether_lint__buf_put(&b, magic, 4);
  tether_lint__buf_put(&b, (const char *)key, 32);
  tether_lint__buf_put_u64(&b, len);
  tether_lint__buf_put(&b, data, len);
  if (!b.p || b.n != 44 + len) {
    tether_lint__buf_free(&b);
    return -1;
  }
  unsigned char sum[32];
  tether_lint__sha256_of(b.p, b.n, sum);
  tether_lint__buf_put(&b, (const char *)sum, 32);
  tether_lint__buf dir = {0}, tmp = {0}, final = {0};
  entry_path(c, key, &dir, 1);
  entry_path(c, key, &final, 0);
  int rc = -1;
  if (!dir.p || !final.p || b.n != 76 + len) goto done;
  if (mkdir(dir.p, 0700) != 0 && errno != EEXIST) goto done;
  int fd = -1;
  for (int tries = 0; tries < 100 && fd < 0; tries++) {
    tmp.n = 0;
    tether_lint__buf_printf(&tmp, "%s/.tmp.%ld.%u", dir.p, (long)getpid(), c->counter++);
    if (!tmp.p) goto done;
    fd = open(tmp.p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) goto done;
  }
  if (fd < 0) goto done;
  int werr = tether_lint__write_all(fd, b.p, b.n);
  if (close(fd) != 0) werr = -1;
  if (werr != 0 || rename(tmp.p, final.p) != 0) {
    unlink(tmp.p);
    goto done;
  }
  c->stores++;
  rc = 0;
done:
  tether_lint__buf_free(&b);
  tether_lint__buf_free(&dir);
  tether_lint__buf_free(&tmp);
  tether_lint__buf_free(&final);
  return rc;
}

int tether_lint__cache_file_digest(tether_lint__cache *c, const char *path, unsigned char out[32]) {
  void **slot = c ? tether_lint__strmap_get(&c->digests, path) : NULL;
  if (slot) {
    if (*slot == &no_digest) return -1;
    memcpy(out, *slot, 32);
    return 0;
  }
  char *text = NULL;
  size_t n = 0;
  int e = tether_lint__read_file(path, &text, &n);
  unsigned char *d = NULL;
  if (!e) {
    d = malloc(32);
    if (d) tether_lint__sha256_of(text, n, d);
    free(text);
  }
  if (c && (slot = tether_lint__strmap_put(&c->digests, path)) != NULL)
    *slot = d ? (void *)d : (void *)&no_digest;
  if (!d) return -1;
  memcpy(out, d, 32);
  if (!c || !slot) free(d);
  return 0;
}

/* ---- keys and validation -------------------------------------------------------------------- */

static void key_str(tether_lint__sha256 *s, const char *str) {
  uint32_t n = (uint32_t)strlen(str ? str : "");
  tether_lint__sha256_update(s, &n, sizeof n);
  tether_lint__sha256_update(s, str ? str : "", n);
}

void tether_lint__cache_run_key(const unsigned char config_digest[32],
                                const tether_lint__strlist *disabled,
                                const tether_lint__strlist *key_args, int have_db,
                                unsigned char out[32]) {
  tether_lint__sha256 s;
  tether_lint__sha256_init(&s);
  key_str(&s, "tether-lint result cache 1");
  key_str(&s, TETHER_LINT_VERSION);
  CXString v = clang_getClangVersion();
  key_str(&s, clang_getCString(v));
  clang_disposeString(v);
  /* The executable itself: a rebuilt or reinstalled linter starts afresh. */
  struct stat st;
  char id[160] = "";
  if (stat("/proc/self/exe", &st) == 0)
    snprintf(id, sizeof id, "%llu:%llu:%lld:%lld.%09ld", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
             (long)st.st_mtim.tv_nsec);
  key_str(&s, id);
  tether_lint__sha256_update(&s, config_digest, 32);
  tether_lint__strlist dis = {0};
  for (size_t i = 0; i < disabled->n; i++) tether_lint__strlist_push(&dis, disabled->v[i]);
  tether_lint__strlist_sort(&dis);
  for (size_t i = 0; i < dis.n; i++) key_str(&s, dis.v[i]);
  tether_lint__strlist_free(&dis);
  key_str(&s, "--");
  for (size_t i = 0; i < key_args->n; i++) key_str(&s, key_args->v[i]);
  key_str(&s, "--");
  key_str(&s, have_db ? "db" : "no db");
  char cwd[PATH_MAX];
  key_str(&s, getcwd(cwd, sizeof cwd) ? cwd : "");
  tether_lint__sha256_final(&s, out);
}

void tether_lint__cache_tu_key(const unsigned char run_key[32], const char *path, int named,
                               const char *source, const tether_lint__strlist *args,
                               const char *text, size_t len, unsigned char out[32]) {
  tether_lint__sha256 s;
  tether_lint__sha256_init(&s);
  tether_lint__sha256_update(&s, run_key, 32);
  key_str(&s, path);
  key_str(&s, named ? "named" : "walked");
  key_str(&s, source);
  for (size_t i = 0; i < args->n; i++) key_str(&s, args->v[i]);
  unsigned char d[32];
  tether_lint__sha256_of(text, len, d);
  tether_lint__sha256_update(&s, d, 32);
  tether_lint__sha256_final(&s, out);
}

/* The folders a missing include could appear in: the source's own, and every include path. */
static void search_dirs(const char *source, const tether_lint__strlist *args,
                        tether_lint__strlist *out) {
  const char *wd = NULL;
  for (size_t i = 0; i + 1 < args->n; i++)
    if (strcmp(args->v[i], "-working-directory") == 0) wd = args->v[i + 1];
  char *d = tether_lint__dir_name(source);
  if (d) {
    char *p = tether_lint__path_join_norm(wd, d);
    if (p) tether_lint__strlist_add_unique(out, p);
    free(p);
    free(d);
  }
  static const char *const opts[] = {"-I", "-iquote", "-isystem", "-idirafter"};
  for (size_t i = 0; i < args->n; i++) {
    const char *a = args->v[i];
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
      size_t l = strlen(opts[k]);
      if (strncmp(a, opts[k], l) != 0) continue;
      const char *val = a[l] ? a + l : (i + 1 < args->n ? args->v[i + 1] : NULL);
      if (!val) continue;
      char *p = tether_lint__path_join_norm(wd, val);
      if (p) tether_lint__strlist_add_unique(out, p);
      free(p);
      break;
    }
  }
}

int tether_lint__cache_result_holds(tether_lint__cache *c, tether_lint__rd headers,
                                    uint32_t nheaders, tether_lint__rd missing, uint32_t nmissing,
                                    const char *source, const tether_lint__strlist *args) {
  for (uint32_t i = 0; i < nheaders; i++) {
    char *path = tether_lint__rd_str(&headers);
    size_t n;
    const char *digest = tether_lint__rd_bytes(&headers, &n);
    unsigned char now[32];
    int same = path && digest && tether_lint__cache_file_digest(c, path, now) == 0 &&
               memcmp(now, digest, 32) == 0;
    free(path);
    if (!same) return 0;
  }
  if (!nmissing) return 1;
  tether_lint__strlist dirs = {0};
  search_dirs(source, args, &dirs);
  int holds = 1;
  for (uint32_t i = 0; i < nmissing && holds; i++) {
    char *name = tether_lint__rd_str(&missing);
    for (size_t k = 0; name && k < dirs.n && holds; k++) {
      char *p = tether_lint__path_join_norm(dirs.v[k], name);
      struct stat st;
      if (p && stat(p, &st) == 0) holds = 0;
      free(p);
    }
    free(name);
  }
  tether_lint__strlist_free(&dirs);
  return holds;
}
