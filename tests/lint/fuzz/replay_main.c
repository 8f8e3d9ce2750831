/* Replays a fuzz corpus through LLVMFuzzerTestOneInput, as an ordinary test (SQLite's
 * fuzzcheck idea): every file under the directories given, in sorted order. Fails when nothing
 * was replayed, so an empty or missing corpus cannot pass. */
#include "lint/lint.h"
#include "tests/lint/fuzz/fuzz.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; i++) {
    DIR *d = opendir(argv[i]);
    if (!d) {
      fprintf(stderr, "cannot open corpus %s\n", argv[i]);
      return 1;
    }
    tether_lint__strlist names = {0};
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
      if (e->d_name[0] != '.') tether_lint__strlist_push(&names, e->d_name);
    closedir(d);
    tether_lint__strlist_sort(&names);
    for (size_t j = 0; j < names.n; j++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], names.v[j]);
      char *data = NULL;
      size_t len = 0;
      if (tether_lint__read_file(path, &data, &len) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
      }
      LLVMFuzzerTestOneInput((const uint8_t *)data, len);
      free(data);
      replayed++;
    }
    tether_lint__strlist_free(&names);
  }
  printf("replayed %zu input(s)\n", replayed);
  return replayed ? 0 : 1;
}
