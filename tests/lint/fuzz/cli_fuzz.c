/* Fuzz target for the command-line parser: the input's lines are the arguments.
 *
 * Properties: never crashes; a rejected command line has a message; an accepted one that lints
 * has at least one path, a known format and -j in 0..256. */
#include "lint/lint.h"
#include "tests/lint/fuzz/fuzz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *copy = malloc(size + 1);
  if (!copy) abort();
  memcpy(copy, data, size);
  copy[size] = '\0';
  char *argv[65] = {"tether-lint"};
  int argc = 1;
  for (char *p = copy; argc < 64;) {
    char *nl = memchr(p, '\n', size - (size_t)(p - copy));
    if (!nl && !*p) break;
    argv[argc++] = p;
    if (!nl) break;
    *nl = '\0';
    p = nl + 1;
    if ((size_t)(p - copy) >= size) break;
  }
  argv[argc] = NULL;
  tether_lint_options o;
  char err[512] = "";
  int rc = tether_lint__cli_parse(argc, argv, &o, err, sizeof err);
  if (rc != 0 && !err[0]) abort();
  if (rc == 0) {
    if (o.action == TETHER_LINT_ACT_LINT && o.paths.n == 0) abort();
    if (o.format != TETHER_LINT_FMT_TEXT && o.format != TETHER_LINT_FMT_JSON &&
        o.format != TETHER_LINT_FMT_SARIF)
      abort();
    if (o.jobs < 0 || o.jobs > 256) abort();
  }
  tether_lint__cli_free(&o);
  free(copy);
  return 0;
}
