/* tether-lint driver.
 *
 * Invariant: the process never crashes on its input; every file it cannot handle is reported by
 * name with the reason, and the exit status says which of three things happened: 0 no findings,
 * 1 findings, 2 the tool could not do its job. */
#include <clang-c/Index.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define TETHER_LINT_VERSION "0.1.0"

static int print_version(void) {
  CXString v = clang_getClangVersion();
  printf("tether-lint %s (libclang: %s)\n", TETHER_LINT_VERSION, clang_getCString(v));
  clang_disposeString(v);
  return 0;
}

static void usage(FILE *f) { fprintf(f, "usage: tether-lint [--version] [--help] PATH...\n"); }

static int is_source(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return 0;
  static const char *const exts[] = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx"};
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
    if (strcmp(dot, exts[i]) == 0) return 1;
  return 0;
}

struct run {
  CXIndex index;
  int files;
  int errors;
};

static void lint_file(struct run *r, const char *path) {
  static const char *const args[] = {"-xc++", "-std=c++17"};
  CXTranslationUnit tu = NULL;
  enum CXErrorCode rc = clang_parseTranslationUnit2(r->index, path, args, 2, NULL, 0,
                                                    CXTranslationUnit_KeepGoing, &tu);
  if (rc != CXError_Success || !tu) {
    fprintf(stderr, "tether-lint: %s: libclang could not parse the file (error %d)\n", path, rc);
    r->errors++;
    return;
  }
  r->files++;
  clang_disposeTranslationUnit(tu);
}

static void walk(struct run *r, const char *path, int depth) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "tether-lint: %s: %s\n", path, strerror(errno));
    r->errors++;
    return;
  }
  if (S_ISREG(st.st_mode)) {
    if (depth == 0 || is_source(path)) lint_file(r, path);
    return;
  }
  if (!S_ISDIR(st.st_mode)) return;
  if (depth > 64) {
    fprintf(stderr, "tether-lint: %s: directory nesting too deep (symlink loop?)\n", path);
    r->errors++;
    return;
  }
  DIR *d = opendir(path);
  if (!d) {
    fprintf(stderr, "tether-lint: %s: %s\n", path, strerror(errno));
    r->errors++;
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char child[4096];
    if ((size_t)snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= sizeof child) continue;
    walk(r, child, depth + 1);
  }
  closedir(d);
}

int main(int argc, char **argv) {
  /* Under `bazel run`, resolve relative paths against the directory the user ran Bazel from. */
  const char *wd = getenv("BUILD_WORKING_DIRECTORY");
  if (wd && *wd && chdir(wd) != 0) {
    fprintf(stderr, "tether-lint: cannot enter %s: %s\n", wd, strerror(errno));
    return 2;
  }
  int npaths = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--version") == 0) return print_version();
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (argv[i][0] == '-') {
      fprintf(stderr, "tether-lint: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
    npaths++;
  }
  if (npaths == 0) {
    usage(stderr);
    return 2;
  }
  struct run r = {clang_createIndex(0, 0), 0, 0};
  for (int i = 1; i < argc; i++) walk(&r, argv[i], 0);
  clang_disposeIndex(r.index);
  printf("tether-lint: %d file(s) analysed, 0 finding(s)\n", r.files);
  return r.errors ? 2 : 0;
}
