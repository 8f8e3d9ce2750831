/* The run's configuration: the .tether-lint in effect, the rules turned on, and the compile flags
 * of translation units without a database entry (and the database itself).
 *
 * Invariant: the configuration is read once, before any input, and is fixed from then on;
 * `flags`/`extra-flags` of a config file pass the compile-flag allow-list like a database's
 * (compdb.c). Rules are all on (but those off by default), then the config's `disable`, its
 * `enable`, --disable and --enable apply in that order. A config that cannot be read or parsed
 * stops the run (exit 2). */
#define _GNU_SOURCE /* realpath */
#include "lint/driver/engine.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Nearest .tether-lint upward from `start` (a file or directory). */
static char *find_config(const char *start) {
  char buf[PATH_MAX];
  if (!tether_lint__real_dir(start, buf) && !getcwd(buf, sizeof buf)) return NULL;
  if (!tether_lint__find_upward(buf, ".tether-lint", 1)) return NULL;
  tether_lint__buf b = {0};
  tether_lint__buf_printf(&b, "%s/.tether-lint", strcmp(buf, "/") == 0 ? "" : buf);
  return b.p;
}

/* /dev/null itself (the documented way to ask for the defaults), however it is spelled. */
static int is_dev_null(const char *path) {
  struct stat a, b;
  return stat(path, &a) == 0 && S_ISCHR(a.st_mode) && stat("/dev/null", &b) == 0 &&
         S_ISCHR(b.st_mode) && a.st_rdev == b.st_rdev;
}

/* Passes a config's flag list through the allow-list (once per run), with a note. */
static int filter_config_flags(tether_lint_run *run, tether_lint__strlist *l, const char *key) {
  if (!l->n) return 0;
  tether_lint__flagset fs = {0};
  if (tether_lint__flags_filter((const char *const *)l->v, l->n, NULL, &fs) != 0) {
    tether_lint__flagset_free(&fs);
    return -1;
  }
  tether_lint__buf note = {0};
  tether_lint__flagset_note(&fs, &note);
  if (note.n) tether_lint__run_msg(run, 0, "note: %s: %s: %s", run->cfg.path, key, note.p);
  tether_lint__buf_free(&note);
  tether_lint__strlist_free(l);
  *l = fs.args;
  fs.args = (tether_lint__strlist){0};
  tether_lint__flagset_free(&fs);
  return 0;
}

int tether_lint__load_config(tether_lint_run *run, unsigned char digest[32]) {
  const tether_lint_options *o = run->o;
  tether_lint__sha256_of(NULL, 0, digest);
  if (tether_lint__config_init(&run->cfg) != 0) {
    tether_lint__run_msg(run, 1, "out of memory");
    return -1;
  }
  char *path = NULL;
  if (o->config) {
    path = tether_lint__strdup(o->config);
  } else if (o->paths.n) {
    path = find_config(o->paths.v[0]);
  }
  if (path && is_dev_null(path)) {
    free(path);
    path = NULL;
  }
  if (path) {
    char *text = NULL;
    size_t len = 0;
    int e = tether_lint__read_file(path, &text, &len);
    if (e) {
      tether_lint__run_msg(run, 1, "cannot read config file %s: %s", path,
                           tether_lint__read_strerror(e));
      free(path);
      return -1;
    }
    tether_lint__sha256_of(text, len, digest);
    char err[512];
    if (tether_lint__config_parse(&run->cfg, path, text, len, err, sizeof err) != 0) {
      tether_lint__run_msg(run, 1, "bad config: %s", err);
      free(text);
      free(path);
      return -1;
    }
    free(text);
    run->cfg.path = path;
    char abs[PATH_MAX];
    run->cfg.dir = tether_lint__dir_name(realpath(path, abs) ? abs : path);
  }
  char err[512];
  if (tether_lint__config_validate(&run->cfg, err, sizeof err) != 0) {
    tether_lint__run_msg(run, 1, "bad config: %s", err);
    return -1;
  }
  if (!o->max_file_size && run->cfg.max_file_size)
    tether_lint__set_max_file_size(run->cfg.max_file_size);
  if (filter_config_flags(run, &run->cfg.flags, "flags") != 0 ||
      filter_config_flags(run, &run->cfg.extra_flags, "extra-flags") != 0 ||
      tether_lint__profile_merge(&run->cfg, &run->profile) != 0) {
    tether_lint__run_msg(run, 1, "out of memory");
    return -1;
  }
  /* Rules: all on but those off by default; then config disable, config enable, --disable,
   * --enable. */
  for (size_t fi = 0; fi < tether_lint__nfamilies; fi++)
    for (const char *const *r = tether_lint__families[fi]->off_by_default; r && *r; r++)
      tether_lint__strlist_add_unique(&run->disabled, *r);
  const tether_lint__strlist *layers[4] = {&run->cfg.disable, &run->cfg.enable, &o->disable,
                                           &o->enable};
  for (int layer = 0; layer < 4; layer++) {
    int disabling = layer % 2 == 0;
    for (size_t i = 0; i < layers[layer]->n; i++) {
      const char *r = layers[layer]->v[i];
      for (size_t fi = 0; fi < tether_lint__nfamilies; fi++)
        for (size_t ri = 0; ri < tether_lint__families[fi]->nrules; ri++) {
          const char *id = tether_lint__families[fi]->rules[ri].id;
          if (strcmp(r, "all") != 0 && strcmp(r, id) != 0) continue;
          if (disabling) {
            tether_lint__strlist_add_unique(&run->disabled, id);
          } else {
            for (size_t k = 0; k < run->disabled.n; k++)
              if (strcmp(run->disabled.v[k], id) == 0) {
                free(run->disabled.v[k]);
                run->disabled.v[k] = run->disabled.v[--run->disabled.n];
                break;
              }
          }
        }
    }
  }
  return 0;
}

int tether_lint__default_args(const tether_lint_config *cfg, int lang_c,
                              tether_lint__strlist *args) {
  int rc = 0;
  if (cfg && cfg->flags_set) {
    for (size_t i = 0; i < cfg->flags.n; i++)
      rc |= tether_lint__strlist_push(args, cfg->flags.v[i]);
  } else {
    static char python_inc[PATH_MAX];
    static int probed;
    static char llvm_inc[PATH_MAX];
    if (!probed) {
      /* The newest installed MLIR's headers (with LLVM's, in the same folder). */
      if (tether_lint__newest_llvm("include/mlir-c/IR.h", llvm_inc, sizeof llvm_inc) >= 0)
        *strstr(llvm_inc, "/mlir-c/IR.h") = '\0';
      glob_t g;
      if (glob("/usr/include/python3*/Python.h", 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        /* The highest version sorts last. */
        snprintf(python_inc, sizeof python_inc, "%s", g.gl_pathv[g.gl_pathc - 1]);
        char *slash = strrchr(python_inc, '/');
        if (slash) *slash = '\0';
        globfree(&g);
      }
      probed = 1;
    }
    rc |= tether_lint__strlist_push(args, lang_c ? "-xc" : "-xc++");
    rc |= tether_lint__strlist_push(args, lang_c ? "-std=c11" : "-std=c++17");
    if (llvm_inc[0]) {
      rc |= tether_lint__strlist_push(args, "-isystem");
      rc |= tether_lint__strlist_push(args, llvm_inc);
    }
    if (python_inc[0]) {
      rc |= tether_lint__strlist_push(args, "-isystem");
      rc |= tether_lint__strlist_push(args, python_inc);
    }
  }
  for (size_t i = 0; cfg && i < cfg->extra_flags.n; i++)
    rc |= tether_lint__strlist_push(args, cfg->extra_flags.v[i]);
  return rc ? -1 : 0;
}

int tether_lint__load_compile_db(tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (!o->compile_db_dir && !o->compile_db_file) return 0;
  tether_lint__buf file = {0};
  if (o->compile_db_dir) {
    struct stat st;
    if (stat(o->compile_db_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      tether_lint__run_msg(run, 1, "-p %s: not a directory", o->compile_db_dir);
      return -1;
    }
    tether_lint__buf_printf(&file, "%s/compile_commands.json", o->compile_db_dir);
  } else {
    tether_lint__buf_puts(&file, o->compile_db_file);
  }
  if (!file.p) {
    tether_lint__run_msg(run, 1, "out of memory");
    return -1;
  }
  char err[PATH_MAX + 512];
  if (tether_lint__cdb_load(file.p, &run->db, err, sizeof err) != 0) {
    tether_lint__run_msg(run, 1, "%s", err);
    tether_lint__buf_free(&file);
    return -1;
  }
  tether_lint__buf_free(&file);
  return 0;
}
