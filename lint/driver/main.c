/* tether-lint driver.
 *
 * Invariant: the process never crashes on its input; every file it cannot handle is reported by
 * name with the reason, and the exit status says which of three things happened: 0 no findings,
 * 1 findings, 2 the tool could not do its job. Everything but argument parsing and --version lives
 * in the run (engine.c and the files engine.h lists), so the driver stays thin. */
#include "lint/lint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int print_version(void) {
  CXString v = clang_getClangVersion();
  printf("tether-lint %s (libclang: %s)\n", TETHER_LINT_VERSION, clang_getCString(v));
  clang_disposeString(v);
  return 0;
}

int main(int argc, char **argv) {
  /* Under `bazel run`, resolve relative paths against the directory the user ran Bazel from. */
  const char *wd = getenv("BUILD_WORKING_DIRECTORY");
  if (wd && *wd && chdir(wd) != 0) {
    fprintf(stderr, "tether-lint: error: cannot enter %s: %s\n", wd, strerror(errno));
    return 2;
  }
  tether_lint_options o;
  char err[512];
  if (tether_lint__cli_parse(argc, argv, &o, err, sizeof err) != 0) {
    fprintf(stderr, "tether-lint: error: %s\n", err);
    tether_lint__cli_free(&o);
    return 2;
  }
  int status;
  switch (o.action) {
  case TETHER_LINT_ACT_HELP:
    tether_lint__cli_usage(stdout);
    status = 0;
    break;
  case TETHER_LINT_ACT_VERSION:
    status = print_version();
    break;
  default:
    status = tether_lint__lint_main(&o, stdout, stderr);
    break;
  }
  tether_lint__cli_free(&o);
  if (fflush(stdout) != 0 && status == 0) status = 2;
  return status;
}
