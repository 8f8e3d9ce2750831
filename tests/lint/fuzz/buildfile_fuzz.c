/* Fuzz target for the build-file lexers of exclude-libs (CMake, Bazel, Make, Meson, setup.py,
 * pyproject.toml, compile_commands.json): the first byte of the input picks the file name, the
 * rest is its content. Each input is also run truncated and with bytes flipped (deterministic
 * mutations), so the corpus replay covers broken shapes of every real file in it.
 *
 * Properties: tether-lint never crashes on it and exits 0, 1 or 2. */
#include "lint/lint.h"
#include "tests/lint/fuzz/fuzz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const names[] = {
    "CMakeLists.txt", "rules.cmake", "BUILD",    "defs.bzl",       "Makefile",
    "rules.mk",       "meson.build", "setup.py", "pyproject.toml", "compile_commands.json",
};

static void run_one(const char *name, const uint8_t *data, size_t size) {
  static int counter;
  const char *tmp = getenv("TEST_TMPDIR");
  char dir[4096], path[4200];
  snprintf(dir, sizeof dir, "%s/buildfile_fuzz_%d_%d", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
           counter++);
  if (mkdir(dir, 0700) != 0) abort();
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);

  tether_lint_options o;
  memset(&o, 0, sizeof o);
  o.action = TETHER_LINT_ACT_LINT;
  o.format = TETHER_LINT_FMT_TEXT;
  o.config = "/dev/null";
  o.jobs = 1;
  if (tether_lint__strlist_push(&o.enable, "exclude-libs") != 0) abort();
  if (tether_lint__strlist_push(&o.paths, dir) != 0) abort();
  FILE *devnull = fopen("/dev/null", "w");
  int rc = tether_lint__lint_main(&o, devnull, devnull);
  fclose(devnull);
  if (rc < 0 || rc > 2) abort();
  tether_lint__strlist_free(&o.enable);
  tether_lint__strlist_free(&o.paths);
  unlink(path);
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const char *name = names[data[0] % (sizeof names / sizeof names[0])];
  const uint8_t *body = data + 1;
  size_t n = size - 1;
  run_one(name, body, n);
  /* Deterministic mutations: truncations, and byte flips spread over the input. */
  run_one(name, body, n / 3);
  run_one(name, body, 2 * n / 3);
  uint8_t *m = malloc(n ? n : 1);
  if (!m) abort();
  static const uint8_t flips[] = {'"', '\'', '#', '[', ']', '(', ')', '\\', '\n', 0};
  for (size_t k = 0; k < sizeof flips && n; k++) {
    memcpy(m, body, n);
    m[(k * 7919u + 13u) % n] = flips[k];
    run_one(name, m, n);
  }
  free(m);
  return 0;
}
