/* Compilation databases and the compile-flag allow-list.
 *
 * Invariant: nothing a repository wrote (a compilation database, `flags`/`extra-flags` of a
 * .tether-lint, a response file) reaches libclang unless the allow-list (compdb_flags.c) says it
 * only changes how the source is parsed: include paths, macros, language and standard, target,
 * warnings, language-feature -f flags. Flags that write files (-o, -M*, --serialize-diagnostics,
 * -ftime-trace, -save-temps, -fprofile-*), load code (-Xclang, -fplugin=, -load, -mllvm, -B) or
 * read other inputs behind the user's back (-include-pch, -ivfsoverlay, --config, -x ast,
 * modules) are dropped and listed for a note; unknown flags are dropped too. Response files are
 * read (never executed) with the safe reader, relative to the entry's directory. Every list here
 * grows as needed: there is no fixed-size argument array. */
#define _XOPEN_SOURCE 700
#include "lint/lint.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- splitting command lines ----------------------------------------------------------------- */

int tether_lint__split_command(const char *s, size_t len, int gnu, tether_lint__strlist *out) {
  tether_lint__buf w = {0};
  int in_word = 0;
  size_t i = 0;
  int rc = 0;
  while (i < len && rc == 0) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_word) {
        rc = tether_lint__strlist_push(out, w.p ? w.p : "");
        w.n = 0;
        if (w.p) w.p[0] = '\0';
        in_word = 0;
      }
      i++;
      continue;
    }
    in_word = 1;
    if (c == '\\') {
      if (i + 1 < len) {
        if (s[i + 1] != '\n') rc = tether_lint__buf_put(&w, s + i + 1, 1);
        i += 2;
      } else {
        i++;
      }
    } else if (c == '\'') {
      size_t j = i + 1;
      while (j < len && s[j] != '\'') j++;
      rc = tether_lint__buf_put(&w, s + i + 1, j - i - 1);
      i = j < len ? j + 1 : j;
    } else if (c == '"') {
      i++;
      while (i < len && s[i] != '"' && rc == 0) {
        if (s[i] == '\\' && i + 1 < len &&
            (gnu || s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$' || s[i + 1] == '`' ||
             s[i + 1] == '\n')) {
          if (s[i + 1] != '\n') rc = tether_lint__buf_put(&w, s + i + 1, 1);
          i += 2;
        } else {
          rc = tether_lint__buf_put(&w, s + i, 1);
          i++;
        }
      }
      if (i < len) i++; /* the closing quote; an unterminated one ends at the end of the text */
    } else {
      rc = tether_lint__buf_put(&w, s + i, 1);
      i++;
    }
    if (rc == 0 && !w.p) rc = tether_lint__buf_put(&w, "", 0);
  }
  if (rc == 0 && in_word) rc = tether_lint__strlist_push(out, w.p ? w.p : "");
  tether_lint__buf_free(&w);
  return rc ? -1 : 0;
}

static int has_ext(const char *path, const char *const *exts) {
  const char *b = tether_lint__base_name(path);
  const char *dot = strrchr(b, '.');
  if (!dot) return 0;
  for (; *exts; exts++)
    if (strcmp(dot, *exts) == 0) return 1;
  return 0;
}

static const char *const cxx_exts[] = {".cc",  ".cpp", ".cxx", ".c++", ".C",    ".cp",  ".CPP",
                                       ".hh",  ".hpp", ".hxx", ".h++", ".H",    ".ipp", ".tcc",
                                       ".inl", ".cu",  ".mm",  ".ixx", ".cppm", NULL};

void tether_lint__flagset_free(tether_lint__flagset *fs) {
  tether_lint__strlist_free(&fs->args);
  tether_lint__strlist_free(&fs->danger);
  tether_lint__strlist_free(&fs->unknown);
  tether_lint__strlist_free(&fs->problems);
  fs->has_x = 0;
}

enum { RSP_MAX_DEPTH = 16, RSP_MAX_ARGS = 1 << 20 };

/* Appends argv to `out`, replacing each @FILE by the words of FILE (recursively). */
static int expand_rsp(const char *const *argv, size_t argc, const char *cwd, int depth,
                      tether_lint__strlist *out, tether_lint__flagset *fs) {
  for (size_t i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (out->n >= RSP_MAX_ARGS) {
      tether_lint__buf m = {0};
      tether_lint__buf_printf(
          &m,
          "more than %d compile arguments (response files nested too deep?); the "
          "rest dropped",
          RSP_MAX_ARGS);
      if (m.p) tether_lint__strlist_add_unique(&fs->problems, m.p);
      tether_lint__buf_free(&m);
      return 0;
    }
    if (a[0] != '@' || !a[1]) {
      if (tether_lint__strlist_push(out, a) != 0) return -1;
      continue;
    }
    char *path = tether_lint__path_join_norm(cwd, a + 1);
    if (!path) return -1;
    tether_lint__buf m = {0};
    if (depth >= RSP_MAX_DEPTH) {
      tether_lint__buf_printf(&m, "response file %s: nested deeper than %d levels, not read", path,
                              RSP_MAX_DEPTH);
    } else {
      char *text = NULL;
      size_t len = 0;
      int e = tether_lint__read_file(path, &text, &len);
      if (e) {
        tether_lint__buf_printf(&m, "response file %s: %s; its arguments dropped", path,
                                tether_lint__read_strerror(e));
      } else {
        tether_lint__strlist words = {0};
        int rc = tether_lint__split_command(text, len, 1, &words);
        free(text);
        if (rc == 0)
          rc = expand_rsp((const char *const *)words.v, words.n, cwd, depth + 1, out, fs);
        tether_lint__strlist_free(&words);
        if (rc != 0) {
          free(path);
          return -1;
        }
      }
    }
    if (m.p) tether_lint__strlist_add_unique(&fs->problems, m.p);
    tether_lint__buf_free(&m);
    free(path);
  }
  return 0;
}

static int push_span(tether_lint__strlist *l, const char *const *argv, size_t i, size_t span) {
  if (span == 1) return tether_lint__strlist_push(l, argv[i]);
  tether_lint__buf b = {0};
  int rc = tether_lint__buf_printf(&b, "%s %s", argv[i], argv[i + 1]);
  if (rc == 0) rc = tether_lint__strlist_push(l, b.p);
  tether_lint__buf_free(&b);
  return rc;
}

int tether_lint__flags_filter(const char *const *in, size_t inc, const char *cwd,
                              tether_lint__flagset *fs) {
  tether_lint__strlist all = {0};
  if (expand_rsp(in, inc, cwd, 0, &all, fs) != 0) {
    tether_lint__strlist_free(&all);
    return -1;
  }
  const char *const *argv = (const char *const *)all.v;
  size_t argc = all.n;
  int rc = 0;
  int only_inputs = 0;
  for (size_t i = 0; i < argc && rc == 0;) {
    const char *a = argv[i];
    if (only_inputs || a[0] != '-' || a[1] == '\0') {
      i++; /* an input (the source itself, other sources, objects, libraries): not passed */
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_inputs = 1;
      i++;
      continue;
    }
    size_t span;
    const char *value;
    const char *name;
    int cls = tether_lint__flag_class(argv, argc, i, &span, &value, &name);
    if (cls == TETHER_LINT_FLAG_KEEP && name &&
        (strcmp(name, "-include") == 0 || strcmp(name, "-imacros") == 0)) {
      char *p = tether_lint__path_join_norm(cwd, value);
      int e = p ? tether_lint__check_regular(p, NULL) : ENOMEM;
      if (e) {
        tether_lint__buf m = {0};
        tether_lint__buf_printf(&m, "%s %s: %s; dropped", name, value,
                                tether_lint__read_strerror(e));
        if (m.p) rc = tether_lint__strlist_add_unique(&fs->problems, m.p);
        tether_lint__buf_free(&m);
        cls = TETHER_LINT_FLAG_IGNORE;
      }
      free(p);
    }
    if (cls == TETHER_LINT_FLAG_KEEP && name && strcmp(name, "-x") == 0) fs->has_x = 1;
    if (rc == 0) {
      if (cls == TETHER_LINT_FLAG_KEEP) {
        rc = tether_lint__strlist_push(&fs->args, argv[i]);
        if (rc == 0 && span == 2) rc = tether_lint__strlist_push(&fs->args, argv[i + 1]);
      } else if (cls == TETHER_LINT_FLAG_DANGER) {
        rc = push_span(&fs->danger, argv, i, span);
      } else if (cls == TETHER_LINT_FLAG_UNKNOWN) {
        rc = push_span(&fs->unknown, argv, i, span);
      }
    }
    i += span;
  }
  tether_lint__strlist_free(&all);
  return rc ? -1 : 0;
}

/* Appends the note about what was dropped (nothing when nothing was). */
int tether_lint__flagset_note(const tether_lint__flagset *fs, tether_lint__buf *out) {
  enum { SHOW = 40 };
  int rc = 0;
  const tether_lint__strlist *lists[2] = {&fs->danger, &fs->unknown};
  const char *what[2] = {"they write files, load code or read other inputs",
                         "not on the allow-list"};
  int any = 0;
  for (int k = 0; k < 2; k++) {
    const tether_lint__strlist *l = lists[k];
    if (!l->n) continue;
    rc |= tether_lint__buf_printf(out, "%s%s: ", any ? "; " : "compile flags dropped (", what[k]);
    tether_lint__strlist uniq = {0};
    for (size_t i = 0; i < l->n; i++) tether_lint__strlist_add_unique(&uniq, l->v[i]);
    for (size_t i = 0; i < uniq.n && i < SHOW; i++)
      rc |= tether_lint__buf_printf(out, "%s%s", i ? " " : "", uniq.v[i]);
    if (uniq.n > SHOW) rc |= tether_lint__buf_printf(out, " and %zu more", uniq.n - SHOW);
    tether_lint__strlist_free(&uniq);
    any = 1;
  }
  if (any) rc |= tether_lint__buf_puts(out, ")");
  for (size_t i = 0; i < fs->problems.n; i++)
    rc |= tether_lint__buf_printf(out, "%s%s", out->n ? "; " : "", fs->problems.v[i]);
  return rc ? -1 : 0;
}

/* ---- the database -----------------------------------------------------------------------------
 */

typedef struct cdb_entry {
  char *dir;  /* absolute working directory */
  char *file; /* absolute, lexically normalized */
  char *real; /* realpath of file, or `file` when it does not exist */
  tether_lint__strlist argv;
  size_t index;
} cdb_entry;

struct tether_lint__cdb {
  char *path;
  cdb_entry *v;
  size_t n;
  size_t *order; /* indices sorted by (real, index) */
};

static const cdb_entry *sort_base;
static int order_cmp(const void *pa, const void *pb) {
  const cdb_entry *a = &sort_base[*(const size_t *)pa], *b = &sort_base[*(const size_t *)pb];
  int c = strcmp(a->real, b->real);
  if (c) return c;
  return a->index < b->index ? -1 : a->index > b->index;
}

void tether_lint__cdb_free(tether_lint__cdb *db) {
  if (!db) return;
  for (size_t i = 0; i < db->n; i++) {
    free(db->v[i].dir);
    free(db->v[i].file);
    free(db->v[i].real);
    tether_lint__strlist_free(&db->v[i].argv);
  }
  free(db->v);
  free(db->order);
  free(db->path);
  free(db);
}

int tether_lint__cdb_load(const char *file, tether_lint__cdb **out, char *err, size_t errlen) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  int e = tether_lint__read_file(file, &text, &len);
  if (e) {
    snprintf(err, errlen, "cannot read compilation database %s: %s", file,
             tether_lint__read_strerror(e));
    return -1;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    snprintf(err, errlen, "malformed compilation database %s: invalid JSON near byte %zu", file,
             off);
    free(text);
    return -1;
  }
  free(text);
  if (!cJSON_IsArray(root)) {
    snprintf(err, errlen, "malformed compilation database %s: expected a JSON array of entries",
             file);
    cJSON_Delete(root);
    return -1;
  }
  tether_lint__cdb *db = calloc(1, sizeof *db);
  char abs[PATH_MAX];
  char *dbdir = NULL;
  if (!db) goto oom;
  db->path = tether_lint__strdup(file);
  dbdir = tether_lint__dir_name(realpath(file, abs) ? abs : file);
  if (!db->path || !dbdir) goto oom;
  size_t count = (size_t)cJSON_GetArraySize(root);
  db->v = calloc(count ? count : 1, sizeof *db->v);
  if (!db->v) goto oom;
  size_t i = 0;
  for (cJSON *it = root->child; it; it = it->next, i++) {
    const char *why = NULL;
    cJSON *dir = cJSON_GetObjectItemCaseSensitive(it, "directory");
    cJSON *fil = cJSON_GetObjectItemCaseSensitive(it, "file");
    cJSON *cmd = cJSON_GetObjectItemCaseSensitive(it, "command");
    cJSON *args = cJSON_GetObjectItemCaseSensitive(it, "arguments");
    if (!cJSON_IsObject(it))
      why = "is not an object";
    else if (!cJSON_IsString(dir))
      why = "has no \"directory\" string";
    else if (!cJSON_IsString(fil))
      why = "has no \"file\" string";
    else if (!cJSON_IsString(cmd) && !cJSON_IsArray(args))
      why = "has neither \"command\" nor \"arguments\"";
    else if (cJSON_IsArray(args)) {
      for (cJSON *a = args->child; a && !why; a = a->next)
        if (!cJSON_IsString(a)) why = "has an \"arguments\" element that is not a string";
    }
    if (why) {
      snprintf(err, errlen, "malformed compilation database %s: entry %zu %s", file, i, why);
      goto fail;
    }
    cdb_entry *en = &db->v[db->n++];
    en->index = i;
    /* "directory" relative to the database's own folder; "file" relative to "directory". */
    en->dir = tether_lint__path_join_norm(dbdir, dir->valuestring);
    if (!en->dir) goto oom;
    en->file = tether_lint__path_join_norm(en->dir, fil->valuestring);
    if (!en->file) goto oom;
    en->real = tether_lint__strdup(realpath(en->file, abs) ? abs : en->file);
    if (!en->real) goto oom;
    if (cJSON_IsArray(args)) {
      for (cJSON *a = args->child; a; a = a->next)
        if (tether_lint__strlist_push(&en->argv, a->valuestring) != 0) goto oom;
    } else if (tether_lint__split_command(cmd->valuestring, strlen(cmd->valuestring), 0,
                                          &en->argv) != 0) {
      goto oom;
    }
  }
  db->order = malloc((db->n ? db->n : 1) * sizeof *db->order);
  if (!db->order) goto oom;
  for (size_t k = 0; k < db->n; k++) db->order[k] = k;
  sort_base = db->v;
  qsort(db->order, db->n, sizeof *db->order, order_cmp);
  sort_base = NULL;
  free(dbdir);
  cJSON_Delete(root);
  *out = db;
  return 0;
oom:
  snprintf(err, errlen, "out of memory reading %s", file);
fail:
  free(dbdir);
  cJSON_Delete(root);
  tether_lint__cdb_free(db);
  return -1;
}

/* First position in `order` whose real path is >= key (or, with prefix, starts past it). */
static size_t lower_bound(const tether_lint__cdb *db, const char *key) {
  size_t lo = 0, hi = db->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(db->v[db->order[mid]].real, key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int is_wrapper(const char *base) {
  static const char *const w[] = {"ccache",     "sccache",  "distcc", "icecc",
                                  "buildcache", "cachecc1", NULL};
  for (const char *const *p = w; *p; p++)
    if (strcmp(base, *p) == 0) return 1;
  return 0;
}

/* c++, g++, clang++, clang++-19, x86_64-linux-gnu-g++-12, CC: a driver that compiles every
 * input as C++ (headers and .c files included). */
static int is_cxx_driver(const char *base) {
  return strcmp(base, "c++") == 0 || strcmp(base, "CC") == 0 || strstr(base, "++") != NULL;
}

/* Flags for `target` (a real path) from entry `e`. */
static int entry_flags(const cdb_entry *e, int borrowed, tether_lint__cdb_flags *out) {
  size_t i = 0;
  const char *const *argv = (const char *const *)e->argv.v;
  size_t argc = e->argv.n;
  while (i < argc && is_wrapper(tether_lint__base_name(argv[i]))) i++;
  int cxx = 0;
  if (i < argc && argv[i][0] != '-') {
    cxx = is_cxx_driver(tether_lint__base_name(argv[i]));
    i++; /* the compiler */
  }
  tether_lint__flagset fs = {0};
  if (tether_lint__strlist_push(&fs.args, "-working-directory") ||
      tether_lint__strlist_push(&fs.args, e->dir))
    goto oom;
  if (tether_lint__flags_filter(argv + i, argc - i, e->dir, &fs) != 0) goto oom;
  /* The language: what the compiler would have used for the entry's file, given to the file being
   * analysed (a header borrowing the flags gets the language of the source it borrows from). */
  if (!fs.has_x && (cxx || (borrowed && has_ext(e->file, cxx_exts)))) {
    if (tether_lint__strlist_push(&fs.args, "-xc++")) goto oom;
  }
  out->fs = fs;
  return 0;
oom:
  tether_lint__flagset_free(&fs);
  return -1;
}

static const char *const header_exts[] = {".h",   ".hh",  ".hpp", ".hxx", ".h++", ".H",
                                          ".inc", ".ipp", ".tcc", ".inl", NULL};

static char *stem_of(const char *path) {
  const char *b = tether_lint__base_name(path);
  const char *dot = strrchr(b, '.');
  size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, b, n);
    s[n] = '\0';
  }
  return s;
}

/* The entry whose flags a file without an entry borrows: the nearest folder upward from the file
 * that holds (directly or below) a file with an entry; there, a file with the same stem first
 * (foo.h -> foo.cpp), then one directly in that folder, then the first by path. Never the root
 * folder "/" alone. -1 when there is none. */
static long nearest_entry(const tether_lint__cdb *db, const char *real) {
  char *dir = tether_lint__dir_name(real);
  char *stem = stem_of(real);
  long found = -1;
  if (!dir || !stem) goto done;
  for (;;) {
    if (strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0) break;
    size_t dl = strlen(dir);
    tether_lint__buf lo = {0};
    tether_lint__buf_printf(&lo, "%s/", dir);
    if (!lo.p) break;
    size_t k = lower_bound(db, lo.p);
    tether_lint__buf_free(&lo);
    long best = -1;
    int best_score = -1;
    for (; k < db->n; k++) {
      const cdb_entry *en = &db->v[db->order[k]];
      if (strncmp(en->real, dir, dl) != 0 || en->real[dl] != '/') break;
      const char *rest = en->real + dl + 1;
      char *s = stem_of(en->real);
      int score = (s && strcmp(s, stem) == 0 ? 4 : 0) + (strchr(rest, '/') ? 0 : 2) +
                  (has_ext(en->real, header_exts) ? 0 : 1);
      free(s);
      if (score > best_score) {
        best_score = score;
        best = (long)db->order[k];
      }
    }
    if (best >= 0) {
      found = best;
      break;
    }
    char *up = tether_lint__dir_name(dir);
    free(dir);
    dir = up;
    if (!dir) break;
  }
done:
  free(dir);
  free(stem);
  return found;
}

int tether_lint__cdb_flags_for(const tether_lint__cdb *db, const char *real,
                               tether_lint__cdb_flags *out) {
  memset(out, 0, sizeof *out);
  size_t k = lower_bound(db, real);
  size_t count = 0;
  while (k + count < db->n && strcmp(db->v[db->order[k + count]].real, real) == 0) count++;
  if (count) {
    /* Several entries for one file (several configurations, or the file built into several
     * targets): the first in the database's order, always. */
    const cdb_entry *e = &db->v[db->order[k]];
    if (entry_flags(e, 0, out) != 0) return -1;
    out->found = 1;
    if (count > 1) {
      tether_lint__buf m = {0};
      tether_lint__buf_printf(
          &m,
          "note: %zu entries in the compilation database; using the first (entry "
          "%zu, directory %s)",
          count, e->index, e->dir);
      out->note = m.p;
    }
    return 0;
  }
  long n = nearest_entry(db, real);
  if (n < 0) return 0;
  const cdb_entry *e = &db->v[n];
  if (entry_flags(e, 1, out) != 0) return -1;
  out->found = 2;
  tether_lint__buf m = {0};
  tether_lint__buf_printf(
      &m,
      "note: no entry in the compilation database; using the flags of %s (entry "
      "%zu, the nearest folder upward with one)",
      e->file, e->index);
  out->note = m.p;
  return 0;
}

void tether_lint__cdb_flags_free(tether_lint__cdb_flags *f) {
  tether_lint__flagset_free(&f->fs);
  free(f->note);
  memset(f, 0, sizeof *f);
}
