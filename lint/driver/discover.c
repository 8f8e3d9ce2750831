/* Input discovery: the files a run analyses, in the order it reports them.
 *
 * Invariant: every path named on the command line, and every file under a named directory
 * (hidden entries and Bazel's output links skipped, entries sorted by name), becomes at most one
 * input: a file reached twice (a symlink, a second spelling) is taken once, a directory that
 * contains itself is not followed, excludes of the config apply. C/C++ sources are taken by their
 * extension, build files and shared objects by the family that claims them (name or first bytes);
 * a named file nobody claims is analysed as C/C++. Nothing but regular files on real file systems
 * is ever opened, and only the first 4 KiB of a file is read here. */
#define _GNU_SOURCE /* realpath */
#include "lint/driver/engine.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_cxx_source(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  if (!dot) return 0;
  static const char *const exts[] = {".c",  ".cc",  ".cpp", ".cxx", ".c++", ".C",   ".h",
                                     ".hh", ".hpp", ".hxx", ".h++", ".H",   ".inc", ".ipp"};
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
    if (strcmp(dot, exts[i]) == 0) return 1;
  return 0;
}

static int excluded(tether_lint_run *run, const char *path, int is_dir) {
  const tether_lint__strlist *ex = &run->cfg.exclude;
  if (!ex->n) return 0;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char *abs = tether_lint__lexical_abs(path);
  if (!abs) return 0;
  const char *rel = NULL;
  if (run->cfg.dir) {
    size_t dl = strlen(run->cfg.dir);
    if (strncmp(abs, run->cfg.dir, dl) == 0 && abs[dl] == '/') rel = abs + dl + 1;
  }
  int hit = 0;
  for (size_t i = 0; i < ex->n && !hit; i++) {
    char *pat = tether_lint__strdup(ex->v[i]);
    if (!pat) break;
    size_t pl = strlen(pat);
    int dir_only = pl > 1 && pat[pl - 1] == '/';
    if (dir_only) pat[--pl] = '\0';
    if (!dir_only || is_dir) {
      const char *p = pat;
      int anchored = strchr(p, '/') != NULL;
      if (p[0] == '/') p++;
      if (!anchored)
        hit = fnmatch(p, base, 0) == 0;
      else
        hit = rel && fnmatch(p, rel, FNM_PATHNAME) == 0;
    }
    free(pat);
  }
  free(abs);
  return hit;
}

static int seen_file(tether_lint_run *run, const struct stat *st) {
  char key[64];
  snprintf(key, sizeof key, "%llu:%llu", (unsigned long long)st->st_dev,
           (unsigned long long)st->st_ino);
  if (tether_lint__strmap_get(&run->seen, key)) return 1;
  tether_lint__strmap_put(&run->seen, key);
  return 0;
}

static void add_input(tether_lint_run *run, const char *path, int kind,
                      const tether_lint_family *fam, int named) {
  if (tether_lint__grow(&run->inputs, &run->capinputs, run->ninputs, sizeof *run->inputs) != 0) {
    tether_lint__run_msg(run, 1, "out of memory");
    return;
  }
  tether_lint_file *f = &run->inputs[run->ninputs++];
  memset(f, 0, sizeof *f);
  f->run = run;
  f->path = tether_lint__strdup(path);
  char abs[PATH_MAX];
  f->abspath = tether_lint__strdup(realpath(path, abs) ? abs : path);
  f->kind = kind;
  f->family = fam;
  f->named = named;
}

/* Which family claims a non-C/C++ file, by name or by its first bytes (`head` may be empty). */
static const tether_lint_family *claim_head(const char *path, const char *head, size_t hl,
                                            int *kind) {
  for (size_t i = 0; i < tether_lint__nfamilies; i++) {
    const tether_lint_family *fam = tether_lint__families[i];
    if (!fam->claims || !(fam->inputs & (TETHER_LINT_IN_TEXT | TETHER_LINT_IN_ELF))) continue;
    if (fam->claims(path, head, hl)) {
      /* A family that takes only ELF inputs gets every file it claims as ELF (so a non-ELF or
       * truncated file it claimed by name reaches check_elf and is reported there); one that
       * takes both is told apart by the magic bytes. */
      int is_elf = hl >= 4 && memcmp(head,
                                     "\x7f"
                                     "ELF",
                                     4) == 0;
      if (!(fam->inputs & TETHER_LINT_IN_TEXT))
        *kind = TETHER_LINT_INPUT_ELF;
      else if (!(fam->inputs & TETHER_LINT_IN_ELF))
        *kind = TETHER_LINT_INPUT_TEXT;
      else
        *kind = is_elf ? TETHER_LINT_INPUT_ELF : TETHER_LINT_INPUT_TEXT;
      return fam;
    }
  }
  return NULL;
}

static void consider_file(tether_lint_run *run, const char *path, const struct stat *st,
                          int named) {
  if (seen_file(run, st)) return;
  if (excluded(run, path, 0)) return;
  if (access(path, R_OK) != 0) {
    tether_lint__run_msg(run, 1, "%s: cannot read: %s", path, strerror(errno));
    return;
  }
  /* A regular file of a pseudo file system (a symlink into /proc, say) is never read. */
  int e = tether_lint__check_regular(path, NULL);
  if (e) {
    int kind = TETHER_LINT_INPUT_TEXT;
    if (named)
      tether_lint__run_msg(run, 1, "%s: %s", path, tether_lint__read_strerror(e));
    else if (is_cxx_source(path) || claim_head(path, "", 0, &kind))
      tether_lint__run_msg(run, 0, "warning: %s: %s", path, tether_lint__read_strerror(e));
    return;
  }
  if (is_cxx_source(path)) {
    add_input(run, path, TETHER_LINT_INPUT_TU, NULL, named);
    return;
  }
  char head[4096];
  size_t hl = 0;
  tether_lint__read_head(path, head, sizeof head, &hl);
  int kind = TETHER_LINT_INPUT_TEXT;
  const tether_lint_family *fam = claim_head(path, head, hl, &kind);
  if (fam) {
    add_input(run, path, kind, fam, named);
  } else if (named) {
    /* A file the user named explicitly is analysed as C/C++ whatever its name. */
    add_input(run, path, TETHER_LINT_INPUT_TU, NULL, named);
  }
}

void tether_lint__walk(tether_lint_run *run, const char *path, int named) {
  struct stat st;
  if (stat(path, &st) != 0) {
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
      if (errno == ELOOP) {
        tether_lint__run_msg(run, 0, "warning: %s: symlink loop, not followed", path);
      } else {
        tether_lint__run_msg(run, 0, "warning: %s: dangling symlink, skipped", path);
      }
      if (named) tether_lint__run_msg(run, 1, "%s: cannot follow the symlink", path);
      return;
    }
    tether_lint__run_msg(run, 1, "%s: %s", path, strerror(errno));
    return;
  }
  if (S_ISREG(st.st_mode)) {
    consider_file(run, path, &st, named);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    /* A FIFO, device or socket is never opened: opening one can block or have effects. */
    int kind = TETHER_LINT_INPUT_TEXT;
    if (named)
      tether_lint__run_msg(run, 1, "%s: %s", path,
                           tether_lint__read_strerror(tether_lint__check_regular(path, NULL)));
    else if (is_cxx_source(path) || claim_head(path, "", 0, &kind))
      tether_lint__run_msg(run, 0, "warning: %s: %s", path,
                           tether_lint__read_strerror(tether_lint__check_regular(path, NULL)));
    return;
  }
  if (!named && excluded(run, path, 1)) return;
  for (size_t i = 0; i < run->nstack; i++)
    if (run->stack[i].dev == st.st_dev && run->stack[i].ino == st.st_ino) {
      tether_lint__run_msg(
          run, 0, "warning: %s: symlink loop (a directory containing itself), not followed", path);
      return;
    }
  if (run->nstack >= 256) {
    tether_lint__run_msg(run, 1, "%s: directories nested deeper than 256 levels, not walked", path);
    return;
  }
  DIR *d = opendir(path);
  if (!d) {
    tether_lint__run_msg(run, 1, "%s: cannot open directory: %s", path, strerror(errno));
    return;
  }
  if (tether_lint__grow(&run->stack, &run->capstack, run->nstack, sizeof *run->stack) != 0) {
    closedir(d);
    tether_lint__run_msg(run, 1, "out of memory");
    return;
  }
  run->stack[run->nstack].dev = st.st_dev;
  run->stack[run->nstack].ino = st.st_ino;
  run->nstack++;
  tether_lint__strlist names = {0};
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;                  /* hidden entries, ".git", "." and ".." */
    if (strncmp(e->d_name, "bazel-", 6) == 0) continue; /* Bazel's output symlinks */
    tether_lint__strlist_push(&names, e->d_name);
  }
  closedir(d);
  /* Sorted, so the input order does not depend on the file system. */
  tether_lint__strlist_sort(&names);
  size_t pl = strlen(path);
  for (size_t i = 0; i < names.n; i++) {
    tether_lint__buf child = {0};
    tether_lint__buf_printf(&child, "%s%s%s", path, pl && path[pl - 1] == '/' ? "" : "/",
                            names.v[i]);
    if (!child.p) {
      tether_lint__run_msg(run, 1, "out of memory");
      break;
    }
    tether_lint__walk(run, child.p, 0);
    tether_lint__buf_free(&child);
  }
  tether_lint__strlist_free(&names);
  run->nstack--;
}
