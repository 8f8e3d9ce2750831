/* Paths, lexically: joining, normalizing, the folder of a path, and the nearest folder upward
 * that holds a given name.
 *
 * Invariant: nothing here reads a file's contents. Joining and normalizing never resolve symlinks
 * (a path keeps the spelling the user gave it, as findings report it); only the upward search
 * looks at the file system, and only for the existence of one name per folder. */
#define _XOPEN_SOURCE 700
#include "lint/lint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `rel` joined to `base` when relative, then "." and ".." components and repeated slashes
 * removed lexically (no symlink resolution). malloc'd. */
char *tether_lint__path_join_norm(const char *base, const char *rel) {
  tether_lint__buf b = {0};
  if (rel[0] != '/' && base && *base) {
    if (tether_lint__buf_puts(&b, base) || tether_lint__buf_puts(&b, "/")) goto oom;
  }
  if (tether_lint__buf_puts(&b, rel)) goto oom;
  /* Normalize into `out`, a stack of components. */
  const char *p = b.p;
  size_t n = b.n;
  char *out = malloc(n + 2);
  if (!out) goto oom;
  int absolute = p[0] == '/';
  size_t o = 0;
  if (absolute) out[o++] = '/';
  size_t floor = o; /* components below this cannot be popped */
  for (size_t i = 0; i < n;) {
    while (i < n && p[i] == '/') i++;
    size_t s = i;
    while (i < n && p[i] != '/') i++;
    size_t cl = i - s;
    if (cl == 0 || (cl == 1 && p[s] == '.')) continue;
    if (cl == 2 && p[s] == '.' && p[s + 1] == '.') {
      if (o > floor) {
        size_t k = o;
        while (k > floor && out[k - 1] != '/') k--;
        if (!(o - k == 2 && out[k] == '.' && out[k + 1] == '.')) {
          o = k > floor ? k - 1 : floor;
          continue;
        }
      } else if (absolute) {
        continue; /* "/.." is "/" */
      }
    }
    if (o > floor) out[o++] = '/';
    memcpy(out + o, p + s, cl);
    o += cl;
  }
  if (o == 0) out[o++] = '.';
  out[o] = '\0';
  tether_lint__buf_free(&b);
  return out;
oom:
  tether_lint__buf_free(&b);
  return NULL;
}

const char *tether_lint__base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

char *tether_lint__dir_name(const char *path) {
  const char *s = strrchr(path, '/');
  if (!s) return tether_lint__strdup(".");
  if (s == path) return tether_lint__strdup("/");
  char *d = malloc((size_t)(s - path) + 1);
  if (d) {
    memcpy(d, path, (size_t)(s - path));
    d[s - path] = '\0';
  }
  return d;
}

char *tether_lint__lexical_abs(const char *path) {
  char cwd[PATH_MAX];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd)) return tether_lint__path_join_norm(NULL, path);
  return tether_lint__path_join_norm(cwd, path);
}

int tether_lint__real_dir(const char *path, char dir[PATH_MAX]) {
  if (!realpath(path, dir)) return 0;
  struct stat st;
  if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (!dir[0]) strcpy(dir, "/");
  }
  return 1;
}

int tether_lint__find_upward(char dir[PATH_MAX], const char *name, int no_follow) {
  for (;;) {
    char cand[PATH_MAX + 64];
    struct stat st;
    snprintf(cand, sizeof cand, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
    if ((no_follow ? lstat(cand, &st) : stat(cand, &st)) == 0) return 1;
    char *slash = strrchr(dir, '/');
    if (!slash || strcmp(dir, "/") == 0) return 0;
    if (slash == dir)
      strcpy(dir, "/");
    else
      *slash = '\0';
  }
}

int tether_lint__newest_llvm(const char *rel, char *out, size_t len) {
  for (int v = 99; v >= 10; v--) {
    char cand[PATH_MAX];
    snprintf(cand, sizeof cand, "/usr/lib/llvm-%d/%s", v, rel);
    if (access(cand, R_OK) == 0) {
      snprintf(out, len, "%s", cand);
      return v;
    }
  }
  if (len) out[0] = '\0';
  return -1;
}
