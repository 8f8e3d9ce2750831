/* The run: configuration, input discovery, compile flags, parallel analysis, findings.
 *
 * Invariant: inputs are discovered single-threaded and in a fixed order; each input is analysed
 * by exactly one worker thread, which owns a CXIndex of its own and writes only to that input's
 * record; everything the user sees (messages, findings, summary) is emitted afterwards from those
 * records in input order, findings sorted by file, line, column, rule. So the output does not
 * depend on -j. Any problem with an input is recorded as an error (exit 2) and the run goes on. */
/* realpath() is an XSI interface. */
#define _XOPEN_SOURCE 700
#include "lint/lint.h"

#include <cjson/cJSON.h>
#include <clang-c/CXCompilationDatabase.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { INPUT_TU, INPUT_TEXT, INPUT_ELF };

struct tether_lint_file {
  tether_lint_run *run;
  char *path;    /* as the user named it (or as found under a named directory) */
  char *abspath; /* canonical, for the compilation database */
  int kind;
  const tether_lint_family *family; /* TEXT/ELF: the family that claimed it */
  tether_lint_finding *v;
  size_t n, cap;
  size_t suppressed;
  tether__buf msgs; /* messages for the user, printed in input order */
  int errors;
  int compile_errors;
  int analysed;
  const char *contents; /* TEXT inputs: for NOLINT */
  size_t contents_len;
};

struct tether_lint_run {
  const tether_lint_options *o;
  tether_lint_config cfg;
  tether_lint_profile profile;
  tether__strlist disabled;
  pthread_mutex_t lock;
  CXCompilationDatabase db;
  tether_lint_file *inputs;
  size_t ninputs, capinputs;
  size_t next; /* next input to analyse (under lock) */
  void **state;
  tether_lint_finding *v; /* run-level findings (cross-file passes) */
  size_t n, cap;
  tether__buf msgs;  /* run-level messages, printed first */
  size_t suppressed; /* run-level findings silenced by NOLINT */
  int errors;
  /* Walk state. */
  struct {
    dev_t dev;
    ino_t ino;
  } * seen, *stack;
  size_t nseen, capseen, nstack, capstack;
};

/* ---- accessors for rules ------------------------------------------------------------------ */

const char *tether__file_path(const tether_lint_file *f) { return f->path; }
const tether_lint_profile *tether__file_profile(const tether_lint_file *f) {
  return &f->run->profile;
}
int tether__file_rule_enabled(const tether_lint_file *f, const char *rule) {
  return !tether__strlist_has(&f->run->disabled, rule);
}
const tether_lint_config *tether__run_config(const tether_lint_run *run) { return &run->cfg; }
const struct tether_lint_options *tether__run_options(const tether_lint_run *run) { return run->o; }
int tether__run_whole_program(const tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (o->whole_program) return 1;
  if (!o->compile_db_dir && !o->compile_db_file) return 0;
  for (size_t i = 0; i < o->paths.n; i++) {
    struct stat st;
    if (stat(o->paths.v[i], &st) == 0 && S_ISDIR(st.st_mode)) return 1;
  }
  return 0;
}
void tether__run_lock(tether_lint_run *run) { pthread_mutex_lock(&run->lock); }
void tether__run_unlock(tether_lint_run *run) { pthread_mutex_unlock(&run->lock); }

/* ---- findings ----------------------------------------------------------------------------- */

static int push_finding(tether_lint_finding **v, size_t *n, size_t *cap, const char *file,
                        unsigned line, unsigned col, const char *rule, const char *msg) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    tether_lint_finding *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
  }
  const tether_lint_rule_info *info = tether__rule_find(rule, NULL);
  tether_lint_finding *f = &(*v)[*n];
  f->file = tether__strdup(file);
  f->line = line;
  f->col = col;
  f->rule = info ? info->id : "unknown";
  f->message = tether__strdup(msg);
  f->hint = info ? info->help : "";
  if (!f->file || !f->message) {
    free(f->file);
    free(f->message);
    return -1;
  }
  (*n)++;
  return 0;
}

/* Does the comment text on this line suppress `rule`? `next` selects NOLINTNEXTLINE. */
static int nolint_in(const char *line, size_t len, const char *rule, int next) {
  const char *key = next ? "NOLINTNEXTLINE(" : "NOLINT(";
  size_t kl = strlen(key);
  for (size_t i = 0; i + kl <= len; i++) {
    if (strncmp(line + i, key, kl) != 0) continue;
    size_t j = i + kl;
    while (j < len && line[j] != ')') {
      while (j < len && (line[j] == ' ' || line[j] == ',')) j++;
      size_t s = j;
      while (j < len && line[j] != ',' && line[j] != ')' && line[j] != ' ') j++;
      size_t tl = j - s;
      if (tl > 7 && strncmp(line + s, "tether-", 7) == 0) {
        const char *id = line + s + 7;
        size_t idl = tl - 7;
        if ((idl == 1 && id[0] == '*') || (idl == strlen(rule) && strncmp(id, rule, idl) == 0))
          return 1;
      }
    }
  }
  return 0;
}

static int suppressed(const char *text, size_t len, unsigned line, const char *rule) {
  if (!text || line == 0) return 0;
  const char *prev = NULL, *cur = text;
  size_t prev_len = 0;
  unsigned at = 1;
  while (at < line) {
    const char *nl = memchr(cur, '\n', len - (size_t)(cur - text));
    if (!nl) return 0;
    prev = cur;
    prev_len = (size_t)(nl - cur);
    cur = nl + 1;
    at++;
  }
  const char *nl = memchr(cur, '\n', len - (size_t)(cur - text));
  size_t cur_len = nl ? (size_t)(nl - cur) : len - (size_t)(cur - text);
  if (nolint_in(cur, cur_len, rule, 0)) return 1;
  return prev && nolint_in(prev, prev_len, rule, 1);
}

static void file_report(tether_lint_file *f, unsigned line, unsigned col, const char *rule,
                        const char *text, size_t len, const char *fmt, va_list ap) {
  if (!tether__file_rule_enabled(f, rule)) return;
  if (suppressed(text, len, line, rule)) {
    f->suppressed++;
    return;
  }
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (push_finding(&f->v, &f->n, &f->cap, f->path, line, col, rule, msg) != 0) f->errors++;
}

void tether__report_tu(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                       const char *rule, const char *fmt, ...) {
  CXFile file = NULL;
  unsigned line = 0, col = 0;
  clang_getExpansionLocation(loc, &file, &line, &col, NULL);
  if (!file) return;
  CXSourceLocation eloc = clang_getLocation(tu, file, line, col);
  if (!clang_Location_isFromMainFile(eloc)) return;
  size_t size = 0;
  const char *text = clang_getFileContents(tu, file, &size);
  va_list ap;
  va_start(ap, fmt);
  file_report(f, line, col, rule, text, size, fmt, ap);
  va_end(ap);
}

void tether__report_tu_spelled(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                               const char *rule, const char *fmt, ...) {
  CXFile file = NULL;
  unsigned line = 0, col = 0;
  clang_getSpellingLocation(loc, &file, &line, &col, NULL);
  if (!file || !clang_Location_isFromMainFile(clang_getLocation(tu, file, 1, 1))) return;
  size_t size = 0;
  const char *text = clang_getFileContents(tu, file, &size);
  va_list ap;
  va_start(ap, fmt);
  file_report(f, line, col, rule, text, size, fmt, ap);
  va_end(ap);
}

void tether__report_at(tether_lint_file *f, unsigned line, unsigned col, const char *rule,
                       const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  file_report(f, line, col, rule, f->contents, f->contents_len, fmt, ap);
  va_end(ap);
}

void tether__file_message(tether_lint_file *f, int is_error, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tether__buf_printf(&f->msgs, "tether-lint: %s%s: %s\n", is_error ? "error: " : "", f->path, msg);
  if (is_error) f->errors++;
}

void tether__report_run(tether_lint_run *run, const char *file, unsigned line, unsigned col,
                        const char *rule, const char *fmt, ...) {
  if (tether__strlist_has(&run->disabled, rule)) return;
  if (file && line) {
    char *text = NULL;
    size_t len = 0;
    if (tether__read_file(file, &text, &len) == 0) {
      int sup = suppressed(text, len, line, rule);
      free(text);
      if (sup) {
        run->suppressed++;
        return;
      }
    }
  }
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (push_finding(&run->v, &run->n, &run->cap, file, line, col, rule, msg) != 0) run->errors++;
}

static int finding_cmp(const void *pa, const void *pb) {
  const tether_lint_finding *a = pa, *b = pb;
  int c = strcmp(a->file, b->file);
  if (c) return c;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  if (a->col != b->col) return a->col < b->col ? -1 : 1;
  c = strcmp(a->rule, b->rule);
  if (c) return c;
  return strcmp(a->message, b->message);
}

/* ---- messages ----------------------------------------------------------------------------- */

static void run_msg(tether_lint_run *run, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void run_msg(tether_lint_run *run, int is_error, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tether__buf_printf(&run->msgs, "tether-lint: %s%s\n", is_error ? "error: " : "", msg);
  if (is_error) run->errors++;
}

/* ---- configuration ------------------------------------------------------------------------ */

static char *dir_of(const char *path) {
  char *d = tether__strdup(path);
  if (!d) return NULL;
  char *slash = strrchr(d, '/');
  if (!slash) {
    free(d);
    return tether__strdup(".");
  }
  if (slash == d)
    slash[1] = '\0';
  else
    *slash = '\0';
  return d;
}

/* Nearest .tether-lint upward from `start` (a file or directory). */
static char *find_config(const char *start) {
  char buf[PATH_MAX];
  if (!realpath(start, buf)) {
    if (!getcwd(buf, sizeof buf)) return NULL;
  }
  struct stat st;
  if (stat(buf, &st) == 0 && !S_ISDIR(st.st_mode)) {
    char *slash = strrchr(buf, '/');
    if (slash) *slash = '\0';
    if (!buf[0]) strcpy(buf, "/");
  }
  for (;;) {
    char cand[PATH_MAX + 16];
    snprintf(cand, sizeof cand, "%s/.tether-lint", strcmp(buf, "/") == 0 ? "" : buf);
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) return tether__strdup(cand);
    char *slash = strrchr(buf, '/');
    if (!slash || strcmp(buf, "/") == 0) return NULL;
    if (slash == buf)
      strcpy(buf, "/");
    else
      *slash = '\0';
  }
}

static int load_config(tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (tether__config_init(&run->cfg) != 0) {
    run_msg(run, 1, "out of memory");
    return -1;
  }
  char *path = NULL;
  if (o->config) {
    path = tether__strdup(o->config);
  } else if (o->paths.n) {
    path = find_config(o->paths.v[0]);
  }
  if (path) {
    char *text = NULL;
    size_t len = 0;
    int e = tether__read_file(path, &text, &len);
    if (e) {
      run_msg(run, 1, "cannot read config file %s: %s", path, strerror(e));
      free(path);
      return -1;
    }
    char err[512];
    if (tether__config_parse(&run->cfg, path, text, len, err, sizeof err) != 0) {
      run_msg(run, 1, "bad config: %s", err);
      free(text);
      free(path);
      return -1;
    }
    free(text);
    run->cfg.path = path;
    char abs[PATH_MAX];
    run->cfg.dir = dir_of(realpath(path, abs) ? abs : path);
  }
  char err[512];
  if (tether__config_validate(&run->cfg, err, sizeof err) != 0) {
    run_msg(run, 1, "bad config: %s", err);
    return -1;
  }
  if (tether__profile_merge(&run->cfg, &run->profile) != 0) {
    run_msg(run, 1, "out of memory");
    return -1;
  }
  /* Rules: all on; then config disable, config enable, --disable, --enable. */
  const tether__strlist *layers[4] = {&run->cfg.disable, &run->cfg.enable, &o->disable, &o->enable};
  for (int layer = 0; layer < 4; layer++) {
    int disabling = layer % 2 == 0;
    for (size_t i = 0; i < layers[layer]->n; i++) {
      const char *r = layers[layer]->v[i];
      for (size_t fi = 0; fi < tether__nfamilies; fi++)
        for (size_t ri = 0; ri < tether__families[fi]->nrules; ri++) {
          const char *id = tether__families[fi]->rules[ri].id;
          if (strcmp(r, "all") != 0 && strcmp(r, id) != 0) continue;
          if (disabling) {
            tether__strlist_add_unique(&run->disabled, id);
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

/* ---- compile flags ------------------------------------------------------------------------ */

static size_t base_args(const tether_lint_config *cfg, const char **args, size_t max);

/* The flags of a file without a compilation-database entry: the config's `flags`, else the
 * defaults; then the config's `extra-flags`. */
size_t tether__default_args(const tether_lint_config *cfg, const char **args, size_t max) {
  size_t n = base_args(cfg, args, max);
  for (size_t i = 0; cfg && i < cfg->extra_flags.n && n < max; i++)
    args[n++] = cfg->extra_flags.v[i];
  return n;
}

static size_t base_args(const tether_lint_config *cfg, const char **args, size_t max) {
  size_t n = 0;
  if (cfg && cfg->flags_set) {
    for (size_t i = 0; i < cfg->flags.n && n < max; i++) args[n++] = cfg->flags.v[i];
    return n;
  }
  static char python_inc[PATH_MAX];
  static int probed;
  static int have_llvm;
  static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&probe_lock);
  if (!probed) {
    struct stat st;
    have_llvm = stat("/usr/lib/llvm-19/include/mlir-c/IR.h", &st) == 0;
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
  pthread_mutex_unlock(&probe_lock);
  if (n + 2 <= max) {
    args[n++] = "-xc++";
    args[n++] = "-std=c++17";
  }
  if (have_llvm && n + 2 <= max) {
    args[n++] = "-isystem";
    args[n++] = "/usr/lib/llvm-19/include";
  }
  if (python_inc[0] && n + 2 <= max) {
    args[n++] = "-isystem";
    args[n++] = python_inc;
  }
  return n;
}

/* Checks a compile_commands.json well enough to say what is wrong with it. */
static int validate_compile_db(tether_lint_run *run, const char *file) {
  char *text = NULL;
  size_t len = 0;
  int e = tether__read_file(file, &text, &len);
  if (e) {
    run_msg(run, 1, "cannot read compilation database %s: %s", file, strerror(e));
    return -1;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    run_msg(run, 1, "malformed compilation database %s: invalid JSON near byte %zu", file, off);
    free(text);
    return -1;
  }
  int ok = 0;
  if (!cJSON_IsArray(root)) {
    run_msg(run, 1, "malformed compilation database %s: expected a JSON array of entries", file);
    ok = -1;
  } else {
    int i = 0;
    for (cJSON *it = root->child; it && ok == 0; it = it->next, i++) {
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
      if (why) {
        run_msg(run, 1, "malformed compilation database %s: entry %d %s", file, i, why);
        ok = -1;
      }
    }
  }
  cJSON_Delete(root);
  free(text);
  return ok;
}

static int load_compile_db(tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (!o->compile_db_dir && !o->compile_db_file) return 0;
  char file[PATH_MAX + 32];
  if (o->compile_db_dir) {
    struct stat st;
    if (stat(o->compile_db_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      run_msg(run, 1, "-p %s: not a directory", o->compile_db_dir);
      return -1;
    }
    snprintf(file, sizeof file, "%s/compile_commands.json", o->compile_db_dir);
  } else {
    snprintf(file, sizeof file, "%s", o->compile_db_file);
  }
  if (validate_compile_db(run, file) != 0) return -1;
  /* libclang loads "compile_commands.json" from a directory: give it one. */
  char abs[PATH_MAX];
  if (!realpath(file, abs)) {
    run_msg(run, 1, "cannot resolve %s: %s", file, strerror(errno));
    return -1;
  }
  char dir[PATH_MAX];
  const char *slash = strrchr(abs, '/');
  int named_right = slash && strcmp(slash + 1, "compile_commands.json") == 0;
  char tmpdir[PATH_MAX] = "";
  if (named_right) {
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - abs), abs);
    if (!dir[0]) strcpy(dir, "/");
  } else {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tether-lint-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
      run_msg(run, 1, "cannot create a temporary directory: %s", strerror(errno));
      return -1;
    }
    char link[PATH_MAX + 32];
    snprintf(link, sizeof link, "%s/compile_commands.json", tmpdir);
    if (symlink(abs, link) != 0) {
      run_msg(run, 1, "cannot link %s: %s", abs, strerror(errno));
      rmdir(tmpdir);
      return -1;
    }
    snprintf(dir, sizeof dir, "%s", tmpdir);
  }
  CXCompilationDatabase_Error err = CXCompilationDatabase_NoError;
  run->db = clang_CompilationDatabase_fromDirectory(dir, &err);
  if (tmpdir[0]) {
    char link[PATH_MAX + 32];
    snprintf(link, sizeof link, "%s/compile_commands.json", tmpdir);
    unlink(link);
    rmdir(tmpdir);
  }
  if (err != CXCompilationDatabase_NoError || !run->db) {
    run_msg(run, 1, "libclang could not load the compilation database %s", file);
    run->db = NULL;
    return -1;
  }
  return 0;
}

/* ---- input discovery ---------------------------------------------------------------------- */

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

/* Lexically absolute path (no symlink resolution), for matching excludes. */
static void lexical_abs(const char *path, char *out, size_t outlen) {
  char cwd[PATH_MAX];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd)) {
    snprintf(out, outlen, "%s", path);
  } else {
    snprintf(out, outlen, "%s/%s", cwd, path);
  }
  /* Remove "/./" components. */
  char *p;
  while ((p = strstr(out, "/./")) != NULL) memmove(p, p + 2, strlen(p + 2) + 1);
}

static int excluded(tether_lint_run *run, const char *path, int is_dir) {
  const tether__strlist *ex = &run->cfg.exclude;
  if (!ex->n) return 0;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char abs[PATH_MAX * 2];
  lexical_abs(path, abs, sizeof abs);
  const char *rel = NULL;
  if (run->cfg.dir) {
    size_t dl = strlen(run->cfg.dir);
    if (strncmp(abs, run->cfg.dir, dl) == 0 && abs[dl] == '/') rel = abs + dl + 1;
  }
  for (size_t i = 0; i < ex->n; i++) {
    char pat[PATH_MAX];
    snprintf(pat, sizeof pat, "%s", ex->v[i]);
    size_t pl = strlen(pat);
    int dir_only = pl > 1 && pat[pl - 1] == '/';
    if (dir_only) {
      if (!is_dir) continue;
      pat[--pl] = '\0';
    }
    const char *p = pat;
    int anchored = strchr(p, '/') != NULL;
    if (p[0] == '/') p++;
    if (!anchored) {
      if (fnmatch(p, base, 0) == 0) return 1;
    } else if (rel && fnmatch(p, rel, FNM_PATHNAME) == 0) {
      return 1;
    }
  }
  return 0;
}

static int seen_file(tether_lint_run *run, const struct stat *st) {
  for (size_t i = 0; i < run->nseen; i++)
    if (run->seen[i].dev == st->st_dev && run->seen[i].ino == st->st_ino) return 1;
  if (run->nseen == run->capseen) {
    size_t cap = run->capseen ? run->capseen * 2 : 64;
    void *v = realloc(run->seen, cap * sizeof *run->seen);
    if (!v) return 0;
    run->seen = v;
    run->capseen = cap;
  }
  run->seen[run->nseen].dev = st->st_dev;
  run->seen[run->nseen].ino = st->st_ino;
  run->nseen++;
  return 0;
}

static void add_input(tether_lint_run *run, const char *path, int kind,
                      const tether_lint_family *fam) {
  if (run->ninputs == run->capinputs) {
    size_t cap = run->capinputs ? run->capinputs * 2 : 64;
    tether_lint_file *v = realloc(run->inputs, cap * sizeof *v);
    if (!v) {
      run_msg(run, 1, "out of memory");
      return;
    }
    run->inputs = v;
    run->capinputs = cap;
  }
  tether_lint_file *f = &run->inputs[run->ninputs++];
  memset(f, 0, sizeof *f);
  f->run = run;
  f->path = tether__strdup(path);
  char abs[PATH_MAX];
  f->abspath = tether__strdup(realpath(path, abs) ? abs : path);
  f->kind = kind;
  f->family = fam;
}

/* Which family claims a non-C/C++ file, by name or by its first bytes. */
static const tether_lint_family *claim(const char *path, int *kind) {
  char head[4096];
  size_t hl = 0;
  FILE *fp = fopen(path, "rb");
  if (fp) {
    hl = fread(head, 1, sizeof head, fp);
    fclose(fp);
  }
  for (size_t i = 0; i < tether__nfamilies; i++) {
    const tether_lint_family *fam = tether__families[i];
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
        *kind = INPUT_ELF;
      else if (!(fam->inputs & TETHER_LINT_IN_ELF))
        *kind = INPUT_TEXT;
      else
        *kind = is_elf ? INPUT_ELF : INPUT_TEXT;
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
    run_msg(run, 1, "%s: cannot read: %s", path, strerror(errno));
    return;
  }
  if (is_cxx_source(path)) {
    add_input(run, path, INPUT_TU, NULL);
    return;
  }
  int kind = INPUT_TEXT;
  const tether_lint_family *fam = claim(path, &kind);
  if (fam) {
    add_input(run, path, kind, fam);
  } else if (named) {
    /* A file the user named explicitly is analysed as C/C++ whatever its name. */
    add_input(run, path, INPUT_TU, NULL);
  }
}

static void walk(tether_lint_run *run, const char *path, int named) {
  struct stat st;
  if (stat(path, &st) != 0) {
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
      if (errno == ELOOP) {
        run_msg(run, 0, "warning: %s: symlink loop, not followed", path);
      } else {
        run_msg(run, 0, "warning: %s: dangling symlink, skipped", path);
      }
      if (named) run_msg(run, 1, "%s: cannot follow the symlink", path);
      return;
    }
    run_msg(run, 1, "%s: %s", path, strerror(errno));
    return;
  }
  if (S_ISREG(st.st_mode)) {
    consider_file(run, path, &st, named);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (named) run_msg(run, 1, "%s: not a regular file or directory", path);
    return;
  }
  if (!named && excluded(run, path, 1)) return;
  for (size_t i = 0; i < run->nstack; i++)
    if (run->stack[i].dev == st.st_dev && run->stack[i].ino == st.st_ino) {
      run_msg(run, 0, "warning: %s: symlink loop (a directory containing itself), not followed",
              path);
      return;
    }
  if (run->nstack >= 256) {
    run_msg(run, 1, "%s: directories nested deeper than 256 levels, not walked", path);
    return;
  }
  DIR *d = opendir(path);
  if (!d) {
    run_msg(run, 1, "%s: cannot open directory: %s", path, strerror(errno));
    return;
  }
  if (run->nstack == run->capstack) {
    size_t cap = run->capstack ? run->capstack * 2 : 32;
    void *v = realloc(run->stack, cap * sizeof *run->stack);
    if (!v) {
      closedir(d);
      run_msg(run, 1, "out of memory");
      return;
    }
    run->stack = v;
    run->capstack = cap;
  }
  run->stack[run->nstack].dev = st.st_dev;
  run->stack[run->nstack].ino = st.st_ino;
  run->nstack++;
  tether__strlist names = {0};
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;                  /* hidden entries, ".git", "." and ".." */
    if (strncmp(e->d_name, "bazel-", 6) == 0) continue; /* Bazel's output symlinks */
    tether__strlist_push(&names, e->d_name);
  }
  closedir(d);
  /* Sorted, so the input order does not depend on the file system. */
  for (size_t i = 1; i < names.n; i++)
    for (size_t j = i; j > 0 && strcmp(names.v[j - 1], names.v[j]) > 0; j--) {
      char *t = names.v[j];
      names.v[j] = names.v[j - 1];
      names.v[j - 1] = t;
    }
  for (size_t i = 0; i < names.n; i++) {
    char child[PATH_MAX];
    int len = snprintf(child, sizeof child, "%s%s%s", path,
                       path[strlen(path) - 1] == '/' ? "" : "/", names.v[i]);
    if (len < 0 || (size_t)len >= sizeof child) {
      run_msg(run, 1, "%s/%s: path too long", path, names.v[i]);
      continue;
    }
    walk(run, child, 0);
  }
  tether__strlist_free(&names);
  run->nstack--;
}

/* ---- analysing one input ------------------------------------------------------------------ */

static int looks_binary(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  char head[8192];
  size_t n = fread(head, 1, sizeof head, fp);
  fclose(fp);
  return memchr(head, '\0', n) != NULL;
}

static int lang_is_c(const char *path) {
  const char *dot = strrchr(path, '.');
  return dot && strcmp(dot, ".c") == 0;
}

static void analyse_tu(tether_lint_file *f, CXIndex index) {
  tether_lint_run *run = f->run;
  if (looks_binary(f->path)) {
    tether__file_message(f, 1, "binary file (contains NUL bytes), not C/C++ source; not analysed");
    return;
  }
  const char *args[512];
  size_t nargs = 0;
  const char *source = f->path;
  CXCompileCommands cmds = NULL;
  if (run->db) {
    cmds = clang_CompilationDatabase_getCompileCommands(run->db, f->abspath);
    if (cmds && clang_CompileCommands_getSize(cmds) == 0) {
      clang_CompileCommands_dispose(cmds);
      cmds = NULL;
    }
  }
  CXString owned[512];
  size_t nowned = 0;
  if (cmds) {
    CXCompileCommand cmd = clang_CompileCommands_getCommand(cmds, 0);
    owned[nowned] = clang_CompileCommand_getDirectory(cmd);
    args[nargs++] = "-working-directory";
    args[nargs++] = clang_getCString(owned[nowned++]);
    unsigned na = clang_CompileCommand_getNumArgs(cmd);
    CXString file = clang_CompileCommand_getFilename(cmd);
    const char *fname = clang_getCString(file);
    for (unsigned i = 1; i < na && nargs < 500 && nowned < 500; i++) {
      CXString a = clang_CompileCommand_getArg(cmd, i);
      const char *as = clang_getCString(a);
      /* The input file itself is passed separately; "-o X" and "-c" mean nothing here. */
      if (strcmp(as, fname) == 0 || strcmp(as, "-c") == 0) {
        clang_disposeString(a);
        continue;
      }
      if (strcmp(as, "-o") == 0) {
        clang_disposeString(a);
        i++;
        continue;
      }
      owned[nowned++] = a;
      args[nargs++] = as;
    }
    clang_disposeString(file);
    source = f->abspath;
  } else if (lang_is_c(f->path) && !run->cfg.flags_set) {
    args[nargs++] = "-xc";
    args[nargs++] = "-std=c11";
    const char *defs[64];
    size_t nd = tether__default_args(&run->cfg, defs, 60);
    for (size_t i = 2; i < nd; i++) args[nargs++] = defs[i];
  } else {
    nargs = tether__default_args(&run->cfg, args, 64);
  }
  CXTranslationUnit tu = NULL;
  enum CXErrorCode rc = clang_parseTranslationUnit2(
      index, source, args, (int)nargs, NULL, 0,
      CXTranslationUnit_KeepGoing | CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles, &tu);
  for (size_t i = 0; i < nowned; i++) clang_disposeString(owned[i]);
  if (cmds) clang_CompileCommands_dispose(cmds);
  if (rc != CXError_Success || !tu) {
    static const char *const why[] = {"success", "failure", "crashed", "invalid arguments",
                                      "AST read error"};
    tether__file_message(f, 1, "libclang could not parse the file (%s)",
                         (unsigned)rc < sizeof why / sizeof why[0] ? why[rc] : "unknown error");
    if (tu) clang_disposeTranslationUnit(tu);
    return;
  }
  unsigned nd = clang_getNumDiagnostics(tu);
  int nerr = 0;
  char first[1024] = "";
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error) {
      if (nerr++ == 0) {
        CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation |
                                                   CXDiagnostic_DisplayColumn);
        snprintf(first, sizeof first, "%s", clang_getCString(s));
        clang_disposeString(s);
      }
    }
    clang_disposeDiagnostic(d);
  }
  if (nerr) {
    f->compile_errors = nerr;
    tether__file_message(f, 0, "%d compile error(s), analysed as far as the AST goes; first: %s",
                         nerr, first);
  }
  for (size_t i = 0; i < tether__nfamilies; i++) {
    const tether_lint_family *fam = tether__families[i];
    if (!(fam->inputs & TETHER_LINT_IN_TU) || !fam->check_tu) continue;
    int any = 0;
    for (size_t r = 0; r < fam->nrules; r++)
      if (tether__file_rule_enabled(f, fam->rules[r].id)) any = 1;
    if (!any) continue;
    if (fam->check_tu(f, run->state[i], tu) != 0)
      tether__file_message(f, 1, "rule family %s failed", fam->name);
  }
  f->analysed = 1;
  clang_disposeTranslationUnit(tu);
}

static void analyse_other(tether_lint_file *f) {
  tether_lint_run *run = f->run;
  size_t idx = 0;
  for (size_t i = 0; i < tether__nfamilies; i++)
    if (tether__families[i] == f->family) idx = i;
  if (f->kind == INPUT_TEXT) {
    char *text = NULL;
    size_t len = 0;
    int e = tether__read_file(f->path, &text, &len);
    if (e) {
      tether__file_message(f, 1, "cannot read: %s", strerror(e));
      return;
    }
    f->contents = text;
    f->contents_len = len;
    if (f->family->check_text && f->family->check_text(f, run->state[idx], text, len) != 0)
      tether__file_message(f, 1, "rule family %s failed", f->family->name);
    f->contents = NULL;
    free(text);
  } else if (f->family->check_elf && f->family->check_elf(f, run->state[idx]) != 0) {
    tether__file_message(f, 1, "rule family %s failed", f->family->name);
  }
  f->analysed = 1;
}

static void *worker(void *arg) {
  tether_lint_run *run = arg;
  CXIndex index = NULL;
  for (;;) {
    pthread_mutex_lock(&run->lock);
    size_t i = run->next++;
    pthread_mutex_unlock(&run->lock);
    if (i >= run->ninputs) break;
    tether_lint_file *f = &run->inputs[i];
    if (f->kind == INPUT_TU) {
      if (!index) index = clang_createIndex(0, 0);
      analyse_tu(f, index);
    } else {
      analyse_other(f);
    }
  }
  if (index) clang_disposeIndex(index);
  return NULL;
}

static int run_workers(tether_lint_run *run, int jobs) {
  if (jobs < 1) jobs = 1;
  if ((size_t)jobs > run->ninputs) jobs = run->ninputs ? (int)run->ninputs : 1;
  pthread_t th[256];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  /* Deeply nested code makes the AST walk deep: give every worker a large stack. */
  pthread_attr_setstacksize(&attr, (size_t)64 << 20);
  int started = 0;
  for (int i = 0; i < jobs; i++) {
    if (pthread_create(&th[i], &attr, worker, run) != 0) break;
    started++;
  }
  pthread_attr_destroy(&attr);
  if (started == 0) {
    run_msg(run, 1, "cannot start a worker thread");
    return -1;
  }
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  return 0;
}

/* ---- output ------------------------------------------------------------------------------- */

static char *find_root(const tether_lint_options *o, const char *cwd) {
  char buf[PATH_MAX];
  if (o->root) {
    /* Lexical, like the paths of findings: no symlink resolution on either side. */
    if (o->root[0] == '/') return tether__strdup(o->root);
    tether__buf b = {0};
    if (tether__buf_printf(&b, "%s/%s", cwd, o->root) != 0) return NULL;
    return b.p;
  }
  snprintf(buf, sizeof buf, "%s", cwd);
  for (;;) {
    char cand[PATH_MAX + 8];
    struct stat st;
    snprintf(cand, sizeof cand, "%s/.git", strcmp(buf, "/") == 0 ? "" : buf);
    if (stat(cand, &st) == 0) return tether__strdup(buf);
    char *slash = strrchr(buf, '/');
    if (!slash || strcmp(buf, "/") == 0) break;
    if (slash == buf)
      strcpy(buf, "/");
    else
      *slash = '\0';
  }
  return tether__strdup(cwd);
}

static void free_findings(tether_lint_finding *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].file);
    free(v[i].message);
  }
  free(v);
}

int tether__lint_main(const tether_lint_options *o, FILE *out, FILE *err) {
  tether_lint_run run;
  memset(&run, 0, sizeof run);
  run.o = o;
  pthread_mutex_init(&run.lock, NULL);
  int status = 2;
  if (o->root) {
    struct stat st;
    if (stat(o->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
      fprintf(err, "tether-lint: error: --root %s: not a directory\n", o->root);
      goto done;
    }
  }
  if (load_config(&run) != 0 || load_compile_db(&run) != 0) {
    fputs(run.msgs.p ? run.msgs.p : "", err);
    goto done;
  }
  if (o->action == TETHER_ACT_LIST_PROFILES) {
    tether__config_print_profiles(&run.cfg, out);
    status = 0;
    goto done;
  }
  if (o->action == TETHER_ACT_LIST_RULES) {
    for (size_t i = 0; i < tether__nfamilies; i++)
      for (size_t j = 0; j < tether__families[i]->nrules; j++) {
        const tether_lint_rule_info *r = &tether__families[i]->rules[j];
        fprintf(out, "%-18s %-8s %s\n", r->id,
                tether__strlist_has(&run.disabled, r->id) ? "disabled" : "enabled", r->short_desc);
      }
    status = 0;
    goto done;
  }
  for (size_t i = 0; i < o->paths.n; i++) walk(&run, o->paths.v[i], 1);
  run.state = calloc(tether__nfamilies ? tether__nfamilies : 1, sizeof *run.state);
  if (!run.state) goto done;
  for (size_t i = 0; i < tether__nfamilies; i++)
    if (tether__families[i]->run_begin && tether__families[i]->run_begin(&run, &run.state[i]) != 0)
      run_msg(&run, 1, "rule family %s could not start", tether__families[i]->name);
  run_workers(&run, o->jobs ? o->jobs : 1);
  for (size_t i = 0; i < tether__nfamilies; i++)
    if (tether__families[i]->run_end && tether__families[i]->run_end(&run, run.state[i]) != 0)
      run_msg(&run, 1, "rule family %s failed in its cross-file pass", tether__families[i]->name);

  /* Messages: run-level first, then each input's, in input order. */
  tether_lint_summary sum = {0};
  if (run.msgs.p) fputs(run.msgs.p, err);
  size_t total = run.n;
  for (size_t i = 0; i < run.ninputs; i++) {
    tether_lint_file *f = &run.inputs[i];
    if (f->msgs.p) fputs(f->msgs.p, err);
    sum.files += (size_t)f->analysed;
    sum.suppressed += f->suppressed;
    sum.errors += (size_t)f->errors;
    sum.compile_errors += (size_t)f->compile_errors;
    total += f->n;
  }
  sum.errors += (size_t)run.errors;
  sum.suppressed += run.suppressed;
  tether_lint_finding *all = calloc(total ? total : 1, sizeof *all);
  size_t n = 0;
  if (!all) {
    fprintf(err, "tether-lint: error: out of memory\n");
    goto done;
  }
  for (size_t i = 0; i < run.ninputs; i++) {
    tether_lint_file *f = &run.inputs[i];
    if (f->n) memcpy(all + n, f->v, f->n * sizeof *all);
    n += f->n;
    free(f->v);
    f->v = NULL;
    f->n = 0;
  }
  if (run.n) memcpy(all + n, run.v, run.n * sizeof *all);
  n += run.n;
  free(run.v);
  run.v = NULL;
  run.n = 0;
  qsort(all, n, sizeof *all, finding_cmp);
  size_t k = 0; /* drop exact duplicates */
  for (size_t i = 0; i < n; i++) {
    if (k && finding_cmp(&all[k - 1], &all[i]) == 0) {
      free(all[i].file);
      free(all[i].message);
      continue;
    }
    all[k++] = all[i];
  }
  n = k;
  sum.findings = n;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
  char *root = find_root(o, cwd);
  tether_lint_report rep = {all, n, &sum, root ? root : cwd, cwd};
  int werr = 0;
  if (o->format == TETHER_FMT_TEXT)
    werr = tether__report_text(&rep, out);
  else if (o->format == TETHER_FMT_JSON)
    werr = tether__report_json(&rep, out);
  else
    werr = tether__report_sarif(&rep, out);
  FILE *sumf = o->format == TETHER_FMT_TEXT ? out : err;
  fprintf(sumf, "tether-lint: %zu file(s) analysed, %zu finding(s), %zu suppressed, %zu error(s)\n",
          sum.files, sum.findings, sum.suppressed, sum.errors);
  if (fflush(out) != 0 || werr) {
    fprintf(err, "tether-lint: error: cannot write the report\n");
    sum.errors++;
  }
  free(root);
  free_findings(all, n);
  status = sum.errors ? 2 : sum.findings ? 1 : 0;
done:
  for (size_t i = 0; i < run.ninputs; i++) {
    free(run.inputs[i].path);
    free(run.inputs[i].abspath);
    free_findings(run.inputs[i].v, run.inputs[i].n);
    tether__buf_free(&run.inputs[i].msgs);
  }
  free(run.inputs);
  free(run.state);
  free_findings(run.v, run.n);
  free(run.seen);
  free(run.stack);
  tether__buf_free(&run.msgs);
  tether__strlist_free(&run.disabled);
  tether__profile_free(&run.profile);
  tether__config_free(&run.cfg);
  if (run.db) clang_CompilationDatabase_dispose(run.db);
  pthread_mutex_destroy(&run.lock);
  return status;
}
