/* The runtime proof of typeid-elf: loads two shared objects the way Python loads extensions
 * (dlopen, RTLD_NOW | RTLD_LOCAL), calls SYMBOL in each (it returns the address that is the TypeID
 * in that object's view) and checks that the two are equal or differ, as expected.
 *
 * usage: typeid_dlopen same|differ SYMBOL A.so B.so
 * Exit 0 when the expectation holds, 1 when not, 2 on a loading error. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef const void *(*typeid_fn)(void);

static const void *call(const char *path, const char *sym) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return NULL;
  }
  typeid_fn fn;
  void *p = dlsym(h, sym);
  if (!p) {
    fprintf(stderr, "dlsym %s in %s: %s\n", sym, path, dlerror());
    return NULL;
  }
  memcpy(&fn, &p, sizeof fn); /* object pointer to function pointer, as POSIX allows */
  return fn();
}

int main(int argc, char **argv) {
  if (argc != 5 || (strcmp(argv[1], "same") != 0 && strcmp(argv[1], "differ") != 0)) {
    fprintf(stderr, "usage: typeid_dlopen same|differ SYMBOL A.so B.so\n");
    return 2;
  }
  const void *a = call(argv[3], argv[2]);
  const void *b = call(argv[4], argv[2]);
  if (!a || !b) return 2;
  int same = a == b;
  printf("%s: %s -> %p, %s -> %p: %s\n", argv[2], argv[3], a, argv[4], b,
         same ? "the same TypeID" : "two different TypeIDs");
  return same == (strcmp(argv[1], "same") == 0) ? 0 : 1;
}
