/* Fuzz target for the .tether-lint parser (libFuzzer entry point; replayed by replay_main.c).
 *
 * Properties checked on every input: the parser never crashes or reads out of bounds; a rejected
 * input gets a "NAME:LINE: why" message; an accepted input's profiles, printed back in config
 * syntax, parse again to the same profiles (print, parse, print is a fixed point). */
#include "lint/lint.h"
#include "tests/lint/fuzz/fuzz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static char *print_profiles(const tether_lint_config *cfg) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) abort();
  tether_lint__config_print_profiles(cfg, f);
  fclose(f);
  /* Drop comment lines: they say "built-in" or "from the config file". */
  char *out = malloc(len + 1), *w = out;
  if (!out) abort();
  for (char *line = buf; *line;) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
    if (line[0] != '#') {
      memcpy(w, line, n);
      w += n;
    }
    line += n;
  }
  *w = '\0';
  free(buf);
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tether_lint_config cfg;
  memset(&cfg, 0, sizeof cfg);
  char err[512];
  int rc = tether_lint__config_parse(&cfg, "fuzz", (const char *)data, size, err, sizeof err);
  if (rc != 0) {
    if (strncmp(err, "fuzz:", 5) != 0 || strlen(err) < 8) {
      fprintf(stderr, "rejected input without a located message: '%s'\n", err);
      abort();
    }
  } else {
    (void)tether_lint__config_validate(&cfg, err, sizeof err);
    char *first = print_profiles(&cfg);
    tether_lint_config again;
    memset(&again, 0, sizeof again);
    if (tether_lint__config_parse(&again, "printed", first, strlen(first), err, sizeof err) != 0) {
      fprintf(stderr, "printed profiles do not parse: %s\n---\n%s", err, first);
      abort();
    }
    char *second = print_profiles(&again);
    if (strcmp(first, second) != 0) {
      fprintf(stderr, "print/parse/print is not a fixed point:\n%s---\n%s", first, second);
      abort();
    }
    free(first);
    free(second);
    tether_lint__config_free(&again);
  }
  tether_lint__config_free(&cfg);
  return 0;
}
