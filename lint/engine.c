/* The run: configuration, input discovery, compile flags, contained analysis, cache, findings.
 *
 * Invariant: inputs are discovered in a fixed order and each is analysed exactly once, into its
 * own record. The driver is one thread. Each translation unit is parsed and checked in a worker
 * process of its own (fork, a big stack, no core file, an address-space limit and a deadline),
 * which sends back a serialized result: findings, messages, the facts of the cross-file passes,
 * and the headers it read with their digests. A worker that dies or runs out of time costs that
 * one file an error line; the others are reported normally. The same serialized result is what
 * the cache stores, so a result taken from the cache is indistinguishable from a fresh one.
 * Build files and shared objects are read by the driver itself, between workers. Everything the
 * user sees (messages, findings, summary) is emitted at the end from the records, in input order,
 * findings sorted: the output does not depend on -j, on the cache, or on timing. Any problem with
 * an input is recorded as an error (exit 2) and the run goes on. */
/* realpath() is an XSI interface; pipe2() and strsignal() are GNU. */
#define _GNU_SOURCE
#include "lint/lint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define TETHER_LINT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TETHER_LINT_ASAN 1
#endif
#endif

enum { INPUT_TU, INPUT_TEXT, INPUT_ELF };

/* Defaults of the worker processes. */
#define WORKER_STACK_DEFAULT ((size_t)1 << 30)  /* the thread that parses: 1 GiB reserved */
#define WORKER_MEMORY_DEFAULT ((size_t)4 << 30) /* address space, stack included */
#define TIMEOUT_DEFAULT 300                     /* seconds per translation unit */
#define RESULT_MAX ((size_t)1 << 30)            /* a worker's serialized result */

struct tether_lint_file {
  tether_lint_run *run;
  char *path;    /* as the user named it (or as found under a named directory) */
  char *abspath; /* canonical, for the compilation database */
  int kind;
  int named;                            /* named on the command line (not found by the walk) */
  const tether_lint_family *family;     /* TEXT/ELF: the family that claimed it */
  const tether_lint_family *cur_family; /* the family being run (owner of its facts) */
  tether_lint_finding *v;
  size_t n, cap;
  size_t suppressed;
  tether_lint__buf msgs; /* messages for the user, printed in input order */
  int errors;
  int compile_errors;
  int analysed;
  const char *contents; /* TEXT inputs: for NOLINT */
  size_t contents_len;
  tether_lint__lines lines; /* line index of the text NOLINT comments are read from */
  tether_lint__buf facts;   /* records for the cross-file passes: family name, data */
  /* Translation units, in the driver. */
  char *text; /* the main file, read safely; libclang gets this copy */
  size_t text_len;
  char *source; /* the path libclang parses */
  tether_lint__strlist args;
  unsigned char key[32];
  int have_key;
  /* Translation units, in the worker. */
  tether_lint__buf incl; /* records: header path, digest */
  uint32_t nincl;
  tether_lint__strlist missing; /* includes that were not found */
  int cacheable;
};

typedef struct worker {
  pid_t pid;
  int fd;
  size_t input;
  tether_lint__buf out;
  double deadline; /* 0: none */
  int active;
  int overflow;
} worker;

struct tether_lint_run {
  const tether_lint_options *o;
  tether_lint_config cfg;
  tether_lint_profile profile;
  tether_lint__strlist disabled;
  tether_lint__cdb *db;
  tether_lint_file *inputs;
  size_t ninputs, capinputs;
  void **state;
  tether_lint_finding *v; /* run-level findings (cross-file passes) */
  size_t n, cap;
  tether_lint__buf msgs; /* run-level messages, printed first */
  size_t suppressed;     /* run-level findings silenced by NOLINT */
  int errors;
  /* Walk state. */
  tether_lint__strmap seen; /* "dev:ino" of every file taken */
  struct {
    dev_t dev;
    ino_t ino;
  } * stack;
  size_t nstack, capstack;
  /* Analysis. */
  int timeout;
  size_t worker_memory;
  size_t worker_stack;
  tether_lint__cache *cache;
  unsigned char run_key[32]; /* what every cache key of this run shares */
  unsigned char config_digest[32];
  int cache_tried; /* the cache is opened when the first translation unit needs it */
  size_t tus, tus_cached;
  tether_lint__strmap texts; /* files read for NOLINT of cross-file findings */
  worker *workers;
  int nworkers;
};

/* ---- accessors for rules ------------------------------------------------------------------ */

const char *tether_lint__file_path(const tether_lint_file *f) { return f->path; }
const tether_lint_profile *tether_lint__file_profile(const tether_lint_file *f) {
  return &f->run->profile;
}
int tether_lint__file_rule_enabled(const tether_lint_file *f, const char *rule) {
  return !tether_lint__strlist_has(&f->run->disabled, rule);
}
const tether_lint_config *tether_lint__run_config(const tether_lint_run *run) { return &run->cfg; }
const struct tether_lint_options *tether_lint__run_options(const tether_lint_run *run) {
  return run->o;
}
int tether_lint__run_whole_program(const tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (o->whole_program) return 1;
  if (!o->compile_db_dir && !o->compile_db_file) return 0;
  for (size_t i = 0; i < o->paths.n; i++) {
    struct stat st;
    if (stat(o->paths.v[i], &st) == 0 && S_ISDIR(st.st_mode)) return 1;
  }
  return 0;
}

/* ---- findings ----------------------------------------------------------------------------- */

static char *vformat(const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

static int push_finding(tether_lint_finding **v, size_t *n, size_t *cap, const char *file,
                        unsigned line, unsigned col, const char *rule, const char *msg) {
  const tether_lint_rule_info *info = tether_lint__rule_find(rule, NULL);
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    tether_lint_finding *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
  }
  tether_lint_finding *f = &(*v)[*n];
  f->file = tether_lint__strdup(file);
  f->line = line;
  f->col = col;
  f->rule = info ? info->id : "unknown";
  f->message = tether_lint__strdup(msg);
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
  for (const char *p = line, *end = line + len; (p = memmem(p, (size_t)(end - p), key, kl)) != NULL;
       p++) {
    size_t j = (size_t)(p - line) + kl;
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

/* Line `line` of `li`, when it mentions NOLINT at all (the answer is kept per line, so a file with
 * many findings on many lines costs one scan of each line). */
static int nolint_line(tether_lint__lines *li, unsigned line, const char **s, size_t *n) {
  if (tether_lint__lines_get(li, line, s, n) != 0) return 0;
  unsigned char *m = &li->mark[line - 1];
  if (!*m) *m = memmem(*s, *n, "NOLINT", 6) ? 2 : 1;
  return *m == 2;
}

/* Linear in the file once: the line index is built on first use for a given text. */
static int suppressed_at(tether_lint__lines *li, const char *text, size_t len, unsigned line,
                         const char *rule) {
  if (!text || line == 0) return 0;
  if (li->text != text || li->len != len) {
    if (tether_lint__lines_build(li, text, len) != 0) return 0;
  }
  const char *s;
  size_t n;
  if (line > li->n) return 0;
  if (nolint_line(li, line, &s, &n) && nolint_in(s, n, rule, 0)) return 1;
  return line > 1 && nolint_line(li, line - 1, &s, &n) && nolint_in(s, n, rule, 1);
}

static void file_report(tether_lint_file *f, unsigned line, unsigned col, const char *rule,
                        const char *text, size_t len, const char *fmt, va_list ap) {
  if (!tether_lint__file_rule_enabled(f, rule)) return;
  if (suppressed_at(&f->lines, text, len, line, rule)) {
    f->suppressed++;
    return;
  }
  char *msg = vformat(fmt, ap);
  if (!msg || push_finding(&f->v, &f->n, &f->cap, f->path, line, col, rule, msg) != 0) f->errors++;
  free(msg);
}

void tether_lint__report_tu(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
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

void tether_lint__report_tu_spelled(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
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

void tether_lint__report_at(tether_lint_file *f, unsigned line, unsigned col, const char *rule,
                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  file_report(f, line, col, rule, f->contents, f->contents_len, fmt, ap);
  va_end(ap);
}

/* "tether-lint: [error: ]WHO: MSG\n" with control characters escaped: a file name or a compiler
 * message can never forge a line of its own. */
static void put_message(tether_lint__buf *b, int is_error, const char *who, const char *msg) {
  tether_lint__buf_puts(b, is_error ? "tether-lint: error: " : "tether-lint: ");
  if (who) {
    tether_lint__buf_put_escaped(b, who);
    tether_lint__buf_puts(b, ": ");
  }
  tether_lint__buf_put_escaped(b, msg ? msg : "out of memory");
  tether_lint__buf_puts(b, "\n");
}

void tether_lint__file_message(tether_lint_file *f, int is_error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = vformat(fmt, ap);
  va_end(ap);
  put_message(&f->msgs, is_error, f->path, msg);
  free(msg);
  if (is_error) f->errors++;
}

int tether_lint__file_fact(tether_lint_file *f, const void *data, size_t len) {
  const char *fam = f->cur_family ? f->cur_family->name : "";
  tether_lint__buf *b = &f->facts;
  size_t keep = b->n;
  if (tether_lint__buf_put_str(b, fam) != 0 || tether_lint__buf_put_bytes(b, data, len) != 0) {
    b->n = keep;
    return -1;
  }
  return 0;
}

typedef struct text_memo {
  char *text;
  size_t len;
  tether_lint__lines lines;
} text_memo;

static void free_text_memo(void *p) {
  text_memo *m = p;
  if (!m) return;
  free(m->text);
  tether_lint__lines_free(&m->lines);
  free(m);
}

void tether_lint__report_run(tether_lint_run *run, const char *file, unsigned line, unsigned col,
                             const char *rule, const char *fmt, ...) {
  if (tether_lint__strlist_has(&run->disabled, rule)) return;
  if (file && line) {
    /* Each file is read once per run, however many cross-file findings it has. */
    void **slot = tether_lint__strmap_get(&run->texts, file);
    if (!slot && (slot = tether_lint__strmap_put(&run->texts, file)) != NULL) {
      text_memo *m = calloc(1, sizeof *m);
      if (m && tether_lint__read_file(file, &m->text, &m->len) != 0) {
        free(m);
        m = NULL;
      }
      *slot = m;
    }
    text_memo *m = slot ? *slot : NULL;
    if (m && suppressed_at(&m->lines, m->text, m->len, line, rule)) {
      run->suppressed++;
      return;
    }
  }
  va_list ap;
  va_start(ap, fmt);
  char *msg = vformat(fmt, ap);
  va_end(ap);
  if (!msg || push_finding(&run->v, &run->n, &run->cap, file, line, col, rule, msg) != 0)
    run->errors++;
  free(msg);
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
  va_list ap;
  va_start(ap, fmt);
  char *msg = vformat(fmt, ap);
  va_end(ap);
  put_message(&run->msgs, is_error, NULL, msg);
  free(msg);
  if (is_error) run->errors++;
}

/* ---- configuration ------------------------------------------------------------------------ */

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
  if (note.n) run_msg(run, 0, "note: %s: %s: %s", run->cfg.path, key, note.p);
  tether_lint__buf_free(&note);
  tether_lint__strlist_free(l);
  *l = fs.args;
  fs.args = (tether_lint__strlist){0};
  tether_lint__flagset_free(&fs);
  return 0;
}

static int load_config(tether_lint_run *run, unsigned char digest[32]) {
  const tether_lint_options *o = run->o;
  tether_lint__sha256_of(NULL, 0, digest);
  if (tether_lint__config_init(&run->cfg) != 0) {
    run_msg(run, 1, "out of memory");
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
      run_msg(run, 1, "cannot read config file %s: %s", path, tether_lint__read_strerror(e));
      free(path);
      return -1;
    }
    tether_lint__sha256_of(text, len, digest);
    char err[512];
    if (tether_lint__config_parse(&run->cfg, path, text, len, err, sizeof err) != 0) {
      run_msg(run, 1, "bad config: %s", err);
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
    run_msg(run, 1, "bad config: %s", err);
    return -1;
  }
  if (!o->max_file_size && run->cfg.max_file_size)
    tether_lint__set_max_file_size(run->cfg.max_file_size);
  if (filter_config_flags(run, &run->cfg.flags, "flags") != 0 ||
      filter_config_flags(run, &run->cfg.extra_flags, "extra-flags") != 0 ||
      tether_lint__profile_merge(&run->cfg, &run->profile) != 0) {
    run_msg(run, 1, "out of memory");
    return -1;
  }
  /* Rules: all on; then config disable, config enable, --disable, --enable. */
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

/* ---- compile flags ------------------------------------------------------------------------ */

int tether_lint__default_args(const tether_lint_config *cfg, int lang_c,
                              tether_lint__strlist *args) {
  int rc = 0;
  if (cfg && cfg->flags_set) {
    for (size_t i = 0; i < cfg->flags.n; i++)
      rc |= tether_lint__strlist_push(args, cfg->flags.v[i]);
  } else {
    static char python_inc[PATH_MAX];
    static int probed;
    static int have_llvm;
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
    rc |= tether_lint__strlist_push(args, lang_c ? "-xc" : "-xc++");
    rc |= tether_lint__strlist_push(args, lang_c ? "-std=c11" : "-std=c++17");
    if (have_llvm) {
      rc |= tether_lint__strlist_push(args, "-isystem");
      rc |= tether_lint__strlist_push(args, "/usr/lib/llvm-19/include");
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

static int load_compile_db(tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (!o->compile_db_dir && !o->compile_db_file) return 0;
  tether_lint__buf file = {0};
  if (o->compile_db_dir) {
    struct stat st;
    if (stat(o->compile_db_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      run_msg(run, 1, "-p %s: not a directory", o->compile_db_dir);
      return -1;
    }
    tether_lint__buf_printf(&file, "%s/compile_commands.json", o->compile_db_dir);
  } else {
    tether_lint__buf_puts(&file, o->compile_db_file);
  }
  if (!file.p) {
    run_msg(run, 1, "out of memory");
    return -1;
  }
  char err[PATH_MAX + 512];
  if (tether_lint__cdb_load(file.p, &run->db, err, sizeof err) != 0) {
    run_msg(run, 1, "%s", err);
    tether_lint__buf_free(&file);
    return -1;
  }
  tether_lint__buf_free(&file);
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
  /* A regular file of a pseudo file system (a symlink into /proc, say) is never read. */
  int e = tether_lint__check_regular(path, NULL);
  if (e) {
    int kind = INPUT_TEXT;
    if (named)
      run_msg(run, 1, "%s: %s", path, tether_lint__read_strerror(e));
    else if (is_cxx_source(path) || claim_head(path, "", 0, &kind))
      run_msg(run, 0, "warning: %s: %s", path, tether_lint__read_strerror(e));
    return;
  }
  if (is_cxx_source(path)) {
    add_input(run, path, INPUT_TU, NULL, named);
    return;
  }
  char head[4096];
  size_t hl = 0;
  tether_lint__read_head(path, head, sizeof head, &hl);
  int kind = INPUT_TEXT;
  const tether_lint_family *fam = claim_head(path, head, hl, &kind);
  if (fam) {
    add_input(run, path, kind, fam, named);
  } else if (named) {
    /* A file the user named explicitly is analysed as C/C++ whatever its name. */
    add_input(run, path, INPUT_TU, NULL, named);
  }
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
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
    /* A FIFO, device or socket is never opened: opening one can block or have effects. */
    int kind = INPUT_TEXT;
    if (named)
      run_msg(run, 1, "%s: %s", path,
              tether_lint__read_strerror(tether_lint__check_regular(path, NULL)));
    else if (is_cxx_source(path) || claim_head(path, "", 0, &kind))
      run_msg(run, 0, "warning: %s: %s", path,
              tether_lint__read_strerror(tether_lint__check_regular(path, NULL)));
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
  tether_lint__strlist names = {0};
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;                  /* hidden entries, ".git", "." and ".." */
    if (strncmp(e->d_name, "bazel-", 6) == 0) continue; /* Bazel's output symlinks */
    tether_lint__strlist_push(&names, e->d_name);
  }
  closedir(d);
  /* Sorted, so the input order does not depend on the file system. */
  if (names.n > 1) qsort(names.v, names.n, sizeof *names.v, name_cmp);
  size_t pl = strlen(path);
  for (size_t i = 0; i < names.n; i++) {
    tether_lint__buf child = {0};
    tether_lint__buf_printf(&child, "%s%s%s", path, pl && path[pl - 1] == '/' ? "" : "/",
                            names.v[i]);
    if (!child.p) {
      run_msg(run, 1, "out of memory");
      break;
    }
    walk(run, child.p, 0);
    tether_lint__buf_free(&child);
  }
  tether_lint__strlist_free(&names);
  run->nstack--;
}

/* ---- worker results: serialization ------------------------------------------------------- */

static const char result_magic[4] = {'T', 'L', 'R', '1'};

/* Writes what analysing `w` produced. */
static int serialize_result(const tether_lint_file *w, tether_lint__buf *out) {
  int rc = tether_lint__buf_put(out, result_magic, 4);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->analysed);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->errors);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->compile_errors);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->cacheable);
  rc |= tether_lint__buf_put_u64(out, w->suppressed);
  rc |= tether_lint__buf_put_bytes(out, w->msgs.p, w->msgs.n);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->n);
  for (size_t i = 0; i < w->n && rc == 0; i++) {
    rc |= tether_lint__buf_put_u32(out, w->v[i].line);
    rc |= tether_lint__buf_put_u32(out, w->v[i].col);
    rc |= tether_lint__buf_put_str(out, w->v[i].rule);
    rc |= tether_lint__buf_put_str(out, w->v[i].message);
  }
  rc |= tether_lint__buf_put_bytes(out, w->facts.p, w->facts.n);
  rc |= tether_lint__buf_put_u32(out, w->nincl);
  rc |= tether_lint__buf_put(out, w->incl.p ? w->incl.p : "", w->incl.n);
  rc |= tether_lint__buf_put_u32(out, (uint32_t)w->missing.n);
  for (size_t i = 0; i < w->missing.n; i++) rc |= tether_lint__buf_put_str(out, w->missing.v[i]);
  return rc ? -1 : 0;
}

typedef struct result_view {
  uint32_t analysed, errors, compile_errors, cacheable;
  uint64_t suppressed;
  const char *msgs;
  size_t msgs_len;
  uint32_t nfindings;
  size_t findings_off;
  const char *facts;
  size_t facts_len;
  uint32_t nincl;
  size_t incl_off;
  uint32_t nmissing;
  size_t missing_off;
} result_view;

/* Checks the whole result and records where its parts are. 0, or -1 when malformed. */
static int parse_result(const char *data, size_t len, result_view *v) {
  memset(v, 0, sizeof *v);
  tether_lint__rd r = {(const unsigned char *)data, len, 0, 0};
  if (len < 4 || memcmp(data, result_magic, 4) != 0) return -1;
  r.off = 4;
  v->analysed = tether_lint__rd_u32(&r);
  v->errors = tether_lint__rd_u32(&r);
  v->compile_errors = tether_lint__rd_u32(&r);
  v->cacheable = tether_lint__rd_u32(&r);
  v->suppressed = tether_lint__rd_u64(&r);
  v->msgs = tether_lint__rd_bytes(&r, &v->msgs_len);
  if (v->msgs && memchr(v->msgs, '\0', v->msgs_len)) return -1;
  v->nfindings = tether_lint__rd_u32(&r);
  v->findings_off = r.off;
  for (uint32_t i = 0; i < v->nfindings && !r.bad; i++) {
    size_t n;
    tether_lint__rd_u32(&r);
    tether_lint__rd_u32(&r);
    const char *rule = tether_lint__rd_bytes(&r, &n);
    char id[64];
    if (!rule || n >= sizeof id) return -1;
    memcpy(id, rule, n);
    id[n] = '\0';
    if (!tether_lint__rule_find(id, NULL)) return -1;
    tether_lint__rd_bytes(&r, &n);
  }
  v->facts = tether_lint__rd_bytes(&r, &v->facts_len);
  v->nincl = tether_lint__rd_u32(&r);
  v->incl_off = r.off;
  for (uint32_t i = 0; i < v->nincl && !r.bad; i++) {
    size_t n;
    tether_lint__rd_bytes(&r, &n);
    tether_lint__rd_bytes(&r, &n);
    if (n != 32) r.bad = 1;
  }
  v->nmissing = tether_lint__rd_u32(&r);
  v->missing_off = r.off;
  for (uint32_t i = 0; i < v->nmissing && !r.bad; i++) {
    size_t n;
    tether_lint__rd_bytes(&r, &n);
  }
  return r.bad || r.off != len ? -1 : 0;
}

/* Adds a checked result to the input's record. */
static void apply_result(tether_lint_file *f, const char *data, size_t len, const result_view *v) {
  tether_lint__rd r = {(const unsigned char *)data, len, v->findings_off, 0};
  f->analysed |= (int)v->analysed;
  f->errors += (int)v->errors;
  f->compile_errors += (int)v->compile_errors;
  f->suppressed += v->suppressed;
  if (v->msgs_len) tether_lint__buf_put(&f->msgs, v->msgs, v->msgs_len);
  for (uint32_t i = 0; i < v->nfindings; i++) {
    unsigned line = tether_lint__rd_u32(&r);
    unsigned col = tether_lint__rd_u32(&r);
    char *rule = tether_lint__rd_str(&r);
    char *msg = tether_lint__rd_str(&r);
    if (!rule || !msg || push_finding(&f->v, &f->n, &f->cap, f->path, line, col, rule, msg) != 0)
      f->errors++;
    free(rule);
    free(msg);
  }
  if (v->facts_len) tether_lint__buf_put(&f->facts, v->facts, v->facts_len);
}

/* ---- the cache key and its validation ---------------------------------------------------- */

static void key_str(tether_lint__sha256 *s, const char *str) {
  uint32_t n = (uint32_t)strlen(str ? str : "");
  tether_lint__sha256_update(s, &n, sizeof n);
  tether_lint__sha256_update(s, str ? str : "", n);
}

/* What every key of this run shares: the linter itself, libclang, the configuration, the rules
 * and the options that can change an analysis. */
static void make_run_key(tether_lint_run *run, const unsigned char config_digest[32]) {
  tether_lint__sha256 s;
  tether_lint__sha256_init(&s);
  key_str(&s, "tether-lint result cache 1");
  key_str(&s, TETHER_LINT_VERSION);
  CXString v = clang_getClangVersion();
  key_str(&s, clang_getCString(v));
  clang_disposeString(v);
  /* The executable itself: a rebuilt or reinstalled linter starts afresh. */
  struct stat st;
  char id[160] = "";
  if (stat("/proc/self/exe", &st) == 0)
    snprintf(id, sizeof id, "%llu:%llu:%lld:%lld.%09ld", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
             (long)st.st_mtim.tv_nsec);
  key_str(&s, id);
  tether_lint__sha256_update(&s, config_digest, 32);
  tether_lint__strlist dis = {0};
  for (size_t i = 0; i < run->disabled.n; i++) tether_lint__strlist_push(&dis, run->disabled.v[i]);
  if (dis.n > 1) qsort(dis.v, dis.n, sizeof *dis.v, name_cmp);
  for (size_t i = 0; i < dis.n; i++) key_str(&s, dis.v[i]);
  tether_lint__strlist_free(&dis);
  key_str(&s, "--");
  for (size_t i = 0; i < run->o->key_args.n; i++) key_str(&s, run->o->key_args.v[i]);
  key_str(&s, "--");
  key_str(&s, run->db ? "db" : "no db");
  char cwd[PATH_MAX];
  key_str(&s, getcwd(cwd, sizeof cwd) ? cwd : "");
  tether_lint__sha256_final(&s, run->run_key);
}

static void make_key(tether_lint_run *run, tether_lint_file *f) {
  tether_lint__sha256 s;
  tether_lint__sha256_init(&s);
  tether_lint__sha256_update(&s, run->run_key, 32);
  key_str(&s, f->path);
  key_str(&s, f->named ? "named" : "walked");
  key_str(&s, f->source);
  for (size_t i = 0; i < f->args.n; i++) key_str(&s, f->args.v[i]);
  unsigned char d[32];
  tether_lint__sha256_of(f->text, f->text_len, d);
  tether_lint__sha256_update(&s, d, 32);
  tether_lint__sha256_final(&s, f->key);
  f->have_key = 1;
}

/* The folders a missing include could appear in: the source's own, and every include path. */
static void search_dirs(const tether_lint_file *f, tether_lint__strlist *out) {
  const char *wd = NULL;
  for (size_t i = 0; i + 1 < f->args.n; i++)
    if (strcmp(f->args.v[i], "-working-directory") == 0) wd = f->args.v[i + 1];
  char *d = tether_lint__dir_name(f->source);
  if (d) {
    char *p = tether_lint__path_join_norm(wd, d);
    if (p) tether_lint__strlist_add_unique(out, p);
    free(p);
    free(d);
  }
  static const char *const opts[] = {"-I", "-iquote", "-isystem", "-idirafter"};
  for (size_t i = 0; i < f->args.n; i++) {
    const char *a = f->args.v[i];
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
      size_t l = strlen(opts[k]);
      if (strncmp(a, opts[k], l) != 0) continue;
      const char *val = a[l] ? a + l : (i + 1 < f->args.n ? f->args.v[i + 1] : NULL);
      if (!val) continue;
      char *p = tether_lint__path_join_norm(wd, val);
      if (p) tether_lint__strlist_add_unique(out, p);
      free(p);
      break;
    }
  }
}

/* A cached result still holds when every header it read has the same contents and no include
 * that was missing has appeared in a folder it would have been found in. */
static int cached_result_holds(tether_lint_run *run, const tether_lint_file *f, const char *data,
                               size_t len, const result_view *v) {
  tether_lint__rd r = {(const unsigned char *)data, len, v->incl_off, 0};
  for (uint32_t i = 0; i < v->nincl; i++) {
    char *path = tether_lint__rd_str(&r);
    size_t n;
    const char *digest = tether_lint__rd_bytes(&r, &n);
    unsigned char now[32];
    int same = path && digest && tether_lint__cache_file_digest(run->cache, path, now) == 0 &&
               memcmp(now, digest, 32) == 0;
    free(path);
    if (!same) return 0;
  }
  if (!v->nmissing) return 1;
  tether_lint__strlist dirs = {0};
  search_dirs(f, &dirs);
  r.off = v->missing_off;
  int holds = 1;
  for (uint32_t i = 0; i < v->nmissing && holds; i++) {
    char *name = tether_lint__rd_str(&r);
    for (size_t k = 0; name && k < dirs.n && holds; k++) {
      char *p = tether_lint__path_join_norm(dirs.v[k], name);
      struct stat st;
      if (p && stat(p, &st) == 0) holds = 0;
      free(p);
    }
    free(name);
  }
  tether_lint__strlist_free(&dirs);
  return holds;
}

/* ---- analysing one translation unit (in a worker) --------------------------------------- */

static int lang_is_c(const char *path) {
  const char *dot = strrchr(path, '.');
  return dot && strcmp(dot, ".c") == 0;
}

/* Records each header the translation unit read, with a digest of what libclang read. */
typedef struct incl_ctx {
  tether_lint_file *w;
  CXTranslationUnit tu;
  CXFile main;
} incl_ctx;

static void record_inclusion(CXFile file, CXSourceLocation *stack, unsigned depth,
                             CXClientData data) {
  (void)stack;
  incl_ctx *c = data;
  if (depth == 0 || clang_File_isEqual(file, c->main)) return;
  CXString real = clang_File_tryGetRealPathName(file);
  CXString name = clang_getFileName(file);
  const char *p = clang_getCString(real);
  if (!p || !*p) p = clang_getCString(name);
  size_t size = 0;
  const char *text = clang_getFileContents(c->tu, file, &size);
  unsigned char d[32];
  int ok = p && *p &&
           (text ? (tether_lint__sha256_of(text, size, d), 0)
                 : tether_lint__cache_file_digest(NULL, p, d)) == 0;
  if (ok) {
    tether_lint__buf_put_str(&c->w->incl, p);
    tether_lint__buf_put_bytes(&c->w->incl, d, 32);
    c->w->nincl++;
  } else {
    c->w->cacheable = 0;
  }
  clang_disposeString(real);
  clang_disposeString(name);
}

/* "'foo/bar.h' file not found" -> foo/bar.h */
static void note_missing(tether_lint_file *w, CXDiagnostic d) {
  CXString s = clang_getDiagnosticSpelling(d);
  const char *t = clang_getCString(s);
  const char *end = t ? strstr(t, "' file not found") : NULL;
  if (t && t[0] == '\'' && end && end > t + 1) {
    char *name = strndup(t + 1, (size_t)(end - t - 1));
    if (name) tether_lint__strlist_add_unique(&w->missing, name);
    free(name);
  }
  clang_disposeString(s);
}

/* An error after which clang would have stopped: with CXTranslationUnit_KeepGoing libclang
 * reports those as plain errors and goes on, so they are recognised by what they say too. The tree
 * after such an error is partial (a missing include leaves everything it declares undeclared). */
static int is_fatal(CXDiagnostic d, enum CXDiagnosticSeverity sev) {
  if (sev == CXDiagnostic_Fatal) return 1;
  static const char *const stops[] = {"' file not found",       "too many errors emitted",
                                      "exceeded maximum depth", "cannot open file",
                                      "error reading '",        "module '",
                                      "could not build module"};
  CXString s = clang_getDiagnosticSpelling(d);
  const char *t = clang_getCString(s);
  int hit = 0;
  for (size_t i = 0; t && !hit && i < sizeof stops / sizeof stops[0]; i++)
    hit = strstr(t, stops[i]) != NULL;
  clang_disposeString(s);
  return hit;
}

/* Parses and checks `f` into the scratch record `w`, and serializes the result into `out`. */
static void analyse_tu(tether_lint_run *run, tether_lint_file *f, tether_lint__buf *out) {
  tether_lint_file w;
  memset(&w, 0, sizeof w);
  w.run = run;
  w.path = f->path;
  w.abspath = f->abspath;
  w.kind = INPUT_TU;
  w.named = f->named;
  w.cacheable = 1;
  const char **argv = malloc((f->args.n ? f->args.n : 1) * sizeof *argv);
  CXIndex index = clang_createIndex(0, 0);
  CXTranslationUnit tu = NULL;
  enum CXErrorCode rc = CXError_Failure;
  if (argv && index) {
    for (size_t i = 0; i < f->args.n; i++) argv[i] = f->args.v[i];
    /* libclang parses the copy the driver read (checked, size-limited), not the file again. */
    struct CXUnsavedFile main = {f->source, f->text, (unsigned long)f->text_len};
    rc = clang_parseTranslationUnit2(
        index, f->source, argv, (int)f->args.n, &main, 1,
        CXTranslationUnit_KeepGoing | CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles, &tu);
  }
  if (rc != CXError_Success || !tu) {
    static const char *const why[] = {"success", "failure", "crashed", "invalid arguments",
                                      "AST read error"};
    tether_lint__file_message(&w, 1, "libclang could not parse the file (%s)",
                              (unsigned)rc < sizeof why / sizeof why[0] ? why[rc]
                                                                        : "unknown error");
  } else {
    unsigned nd = clang_getNumDiagnostics(tu);
    int nerr = 0, nfatal = 0;
    char *first = NULL, *first_fatal = NULL;
    for (unsigned i = 0; i < nd; i++) {
      CXDiagnostic d = clang_getDiagnostic(tu, i);
      enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
      if (sev >= CXDiagnostic_Error) {
        int fatal = is_fatal(d, sev);
        if (fatal) note_missing(&w, d);
        if (!first || (fatal && !first_fatal)) {
          CXString s = clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation |
                                                     CXDiagnostic_DisplayColumn);
          if (!first) first = tether_lint__strdup(clang_getCString(s));
          if (fatal && !first_fatal) first_fatal = tether_lint__strdup(clang_getCString(s));
          clang_disposeString(s);
        }
        nerr++;
        nfatal += fatal;
      }
      clang_disposeDiagnostic(d);
    }
    if (nfatal) {
      tether_lint__file_message(
          &w, 0,
          "note: the syntax tree is partial: %s (%d compile error(s), analysed as "
          "far as the AST goes)",
          first_fatal ? first_fatal : "", nerr);
    } else if (nerr) {
      tether_lint__file_message(&w, 0,
                                "%d compile error(s), analysed as far as the AST goes; first: %s",
                                nerr, first ? first : "");
    }
    free(first);
    free(first_fatal);
    w.compile_errors = nerr;
    for (size_t i = 0; i < tether_lint__nfamilies; i++) {
      const tether_lint_family *fam = tether_lint__families[i];
      if (!(fam->inputs & TETHER_LINT_IN_TU) || !fam->check_tu) continue;
      int any = 0;
      for (size_t r = 0; r < fam->nrules; r++)
        if (tether_lint__file_rule_enabled(&w, fam->rules[r].id)) any = 1;
      if (!any) continue;
      w.cur_family = fam;
      if (fam->check_tu(&w, run->state[i], tu) != 0)
        tether_lint__file_message(&w, 1, "rule family %s failed", fam->name);
      w.cur_family = NULL;
    }
    w.analysed = 1;
    incl_ctx ic = {&w, tu, clang_getFile(tu, f->source)};
    clang_getInclusions(tu, record_inclusion, &ic);
  }
  if (w.errors) w.cacheable = 0;
  if (serialize_result(&w, out) != 0) tether_lint__buf_free(out);
  if (tu) clang_disposeTranslationUnit(tu);
  if (index) clang_disposeIndex(index);
  free(argv);
  for (size_t i = 0; i < w.n; i++) {
    free(w.v[i].file);
    free(w.v[i].message);
  }
  free(w.v);
  tether_lint__buf_free(&w.msgs);
  tether_lint__buf_free(&w.facts);
  tether_lint__buf_free(&w.incl);
  tether_lint__strlist_free(&w.missing);
  tether_lint__lines_free(&w.lines);
}

typedef struct big_stack_job {
  tether_lint_run *run;
  tether_lint_file *f;
  tether_lint__buf *out;
} big_stack_job;

static void *big_stack_main(void *arg) {
  big_stack_job *j = arg;
  analyse_tu(j->run, j->f, j->out);
  return NULL;
}

/* Runs analyse_tu on a thread with a big stack: deeply nested code makes libclang's parser and
 * the rules' walks recurse deeply. With LIBCLANG_NOTHREADS set, libclang parses on this thread
 * instead of one of its own with an 8 MiB stack. */
static int analyse_on_big_stack(tether_lint_run *run, tether_lint_file *f, tether_lint__buf *out) {
  big_stack_job j = {run, f, out};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, run->worker_stack);
  pthread_t th;
  int rc = pthread_create(&th, &attr, big_stack_main, &j);
  pthread_attr_destroy(&attr);
  if (rc != 0) return -1;
  pthread_join(th, NULL);
  return 0;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The worker process: analyse, send the result, exit without running anything else. */
static void worker_main(tether_lint_run *run, tether_lint_file *f, int fd) {
  struct rlimit rl = {0, 0};
  setrlimit(RLIMIT_CORE, &rl); /* a crash writes no core file into the user's tree */
#ifndef TETHER_LINT_ASAN
  /* Address space (ASan reserves terabytes of shadow, so not under ASan). */
  rl.rlim_cur = rl.rlim_max = run->worker_memory;
  setrlimit(RLIMIT_AS, &rl);
#endif
  /* libclang and LLVM may print crash reports: they must not reach the user's terminal. */
  int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (dn >= 0) {
    dup2(dn, 0);
    dup2(dn, 1);
    dup2(dn, 2);
  }
  setenv("LIBCLANG_NOTHREADS", "1", 1);
  tether_lint__buf out = {0};
  if (analyse_on_big_stack(run, f, &out) != 0) _exit(4);
  int ok = out.p && write_all(fd, out.p, out.n) == 0;
  _exit(ok ? 0 : 3);
}

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A result arrived (from a worker, in-process, or the cache): check it and take it. */
static int take_result(tether_lint_run *run, tether_lint_file *f, const char *data, size_t len) {
  result_view v;
  if (parse_result(data, len, &v) != 0) return -1;
  apply_result(f, data, len, &v);
  if (run->cache && f->have_key && v.cacheable)
    tether_lint__cache_put(run->cache, f->key, data, len);
  return 0;
}

static void drop_tu_text(tether_lint_file *f) {
  free(f->text);
  f->text = NULL;
  f->text_len = 0;
}

static void finish_worker(tether_lint_run *run, worker *w, int timed_out) {
  tether_lint_file *f = &run->inputs[w->input];
  if (timed_out) kill(w->pid, SIGKILL);
  close(w->fd);
  int st = 0;
  while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    tether_lint__file_message(f, 1, "timed out after %d s (--timeout): not analysed", run->timeout);
  } else if (w->overflow) {
    tether_lint__file_message(f, 1, "the analysis produced more than %zu bytes: not analysed",
                              (size_t)RESULT_MAX);
  } else if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    tether_lint__file_message(
        f, 1,
        "the analysis crashed (signal %d, %s): not analysed; libclang or a rule "
        "ran out of stack (--worker-stack) or memory (--worker-memory) on this "
        "file",
        sig, strsignal(sig));
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 4) {
    tether_lint__file_message(f, 1,
                              "cannot start the parsing thread (a %zu-byte stack within a %zu-byte "
                              "address space; see --worker-stack, --worker-memory): not analysed",
                              run->worker_stack, run->worker_memory);
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    tether_lint__file_message(f, 1, "the analysis failed (worker exit status %d): not analysed",
                              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  } else if (take_result(run, f, w->out.p, w->out.n) != 0) {
    tether_lint__file_message(f, 1, "the worker's result is malformed: not analysed");
  }
  tether_lint__buf_free(&w->out);
  w->active = 0;
}

/* Waits until at least one worker has finished (or timed out). */
static void pump(tether_lint_run *run) {
  struct pollfd *pf = calloc((size_t)run->nworkers, sizeof *pf);
  int *map = calloc((size_t)run->nworkers, sizeof *map);
  if (!pf || !map) {
    /* Out of memory: wait for the first active worker the slow way. */
    for (int i = 0; i < run->nworkers; i++)
      if (run->workers[i].active) {
        char buf[65536];
        ssize_t r;
        int fl = fcntl(run->workers[i].fd, F_GETFL);
        fcntl(run->workers[i].fd, F_SETFL, fl & ~O_NONBLOCK);
        while ((r = read(run->workers[i].fd, buf, sizeof buf)) > 0)
          tether_lint__buf_put(&run->workers[i].out, buf, (size_t)r);
        finish_worker(run, &run->workers[i], 0);
        break;
      }
    free(pf);
    free(map);
    return;
  }
  for (;;) {
    double now = mono_now(), next = 0;
    int np = 0, finished = 0;
    for (int i = 0; i < run->nworkers; i++) {
      worker *w = &run->workers[i];
      if (!w->active) continue;
      if (w->deadline && now >= w->deadline) {
        finish_worker(run, w, 1);
        finished = 1;
        continue;
      }
      pf[np].fd = w->fd;
      pf[np].events = POLLIN;
      pf[np].revents = 0;
      map[np++] = i;
      if (w->deadline && (!next || w->deadline < next)) next = w->deadline;
    }
    if (finished || np == 0) break;
    int ms = -1;
    if (next) {
      double d = (next - now) * 1000.0 + 1;
      ms = d > 1e9 ? 1000000000 : (int)d;
    }
    int r = poll(pf, (nfds_t)np, ms);
    if (r < 0 && errno != EINTR) break;
    for (int k = 0; r > 0 && k < np; k++) {
      if (!pf[k].revents) continue;
      worker *w = &run->workers[map[k]];
      for (;;) {
        char buf[65536];
        ssize_t got = read(w->fd, buf, sizeof buf);
        if (got > 0) {
          if (!w->overflow && (w->out.n + (size_t)got > RESULT_MAX ||
                               tether_lint__buf_put(&w->out, buf, (size_t)got) != 0)) {
            w->overflow = 1;
            kill(w->pid, SIGKILL);
          }
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) break;
        finish_worker(run, w, 0); /* end of the result (or a read error) */
        finished = 1;
        break;
      }
    }
    if (finished) break;
  }
  free(pf);
  free(map);
}

static int active_workers(const tether_lint_run *run) {
  int n = 0;
  for (int i = 0; i < run->nworkers; i++) n += run->workers[i].active;
  return n;
}

static void spawn_worker(tether_lint_run *run, size_t input) {
  tether_lint_file *f = &run->inputs[input];
  worker *w = NULL;
  for (int i = 0; i < run->nworkers && !w; i++)
    if (!run->workers[i].active) w = &run->workers[i];
  int p[2];
  if (!w || pipe2(p, O_CLOEXEC) != 0) {
    tether_lint__file_message(f, 1, "cannot start a worker process: %s", strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(p[0]);
    close(p[1]);
    tether_lint__file_message(f, 1, "cannot start a worker process: %s", strerror(e));
    return;
  }
  if (pid == 0) {
    close(p[0]);
    /* Read ends of the other workers' pipes are not this worker's business. */
    for (int i = 0; i < run->nworkers; i++)
      if (run->workers[i].active) close(run->workers[i].fd);
    worker_main(run, f, p[1]);
  }
  close(p[1]);
  fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
  memset(w, 0, sizeof *w);
  w->pid = pid;
  w->fd = p[0];
  w->input = input;
  w->active = 1;
  w->deadline = run->timeout > 0 ? mono_now() + run->timeout : 0;
  drop_tu_text(f); /* the worker has its own copy */
}

static void open_cache(tether_lint_run *run);

/* Reads the main file, chooses its flags and looks in the cache. 1: needs parsing. */
static int prepare_tu(tether_lint_run *run, tether_lint_file *f) {
  int e = tether_lint__read_file(f->path, &f->text, &f->text_len);
  if (e) {
    tether_lint__file_message(f, 1, "cannot read: %s", tether_lint__read_strerror(e));
    return 0;
  }
  if (memchr(f->text, '\0', f->text_len < 8192 ? f->text_len : 8192)) {
    tether_lint__file_message(f, 1,
                              "binary file (contains NUL bytes), not C/C++ source; not analysed");
    drop_tu_text(f);
    return 0;
  }
  int found = 0;
  if (run->db) {
    tether_lint__cdb_flags cf;
    if (tether_lint__cdb_flags_for(run->db, f->abspath, &cf) != 0) {
      tether_lint__file_message(f, 1, "out of memory");
      drop_tu_text(f);
      return 0;
    }
    if (cf.found) {
      found = 1;
      if (cf.note) tether_lint__file_message(f, 0, "%s", cf.note);
      tether_lint__buf note = {0};
      tether_lint__flagset_note(&cf.fs, &note);
      if (note.n) tether_lint__file_message(f, 0, "note: %s", note.p);
      tether_lint__buf_free(&note);
      f->args = cf.fs.args;
      cf.fs.args = (tether_lint__strlist){0};
      f->source = tether_lint__strdup(f->abspath);
    }
    tether_lint__cdb_flags_free(&cf);
  }
  if (!found) {
    tether_lint__default_args(&run->cfg, lang_is_c(f->path) && !run->cfg.flags_set, &f->args);
    f->source = tether_lint__strdup(f->path);
  }
  /* libclang stops building the tree after 20 errors unless told otherwise. */
  tether_lint__strlist_push(&f->args, "-ferror-limit=0");
  if (!f->source) {
    tether_lint__file_message(f, 1, "out of memory");
    drop_tu_text(f);
    return 0;
  }
  run->tus++;
  if (!run->cache_tried) {
    run->cache_tried = 1;
    open_cache(run);
  }
  if (!run->cache) return 1;
  make_key(run, f);
  char *data = NULL;
  size_t len = 0;
  if (tether_lint__cache_get(run->cache, f->key, &data, &len) != 0) return 1;
  result_view v;
  int hit =
      parse_result(data, len, &v) == 0 && v.cacheable && cached_result_holds(run, f, data, len, &v);
  if (hit) {
    apply_result(f, data, len, &v);
    run->tus_cached++;
    drop_tu_text(f);
  }
  free(data);
  return !hit;
}

/* ---- analysing build files and shared objects (in the driver) ---------------------------- */

static void analyse_other(tether_lint_file *f) {
  tether_lint_run *run = f->run;
  size_t idx = 0;
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    if (tether_lint__families[i] == f->family) idx = i;
  f->cur_family = f->family;
  if (f->kind == INPUT_TEXT) {
    char *text = NULL;
    size_t len = 0;
    int e = tether_lint__read_file(f->path, &text, &len);
    if (e) {
      tether_lint__file_message(f, 1, "cannot read: %s", tether_lint__read_strerror(e));
      return;
    }
    f->contents = text;
    f->contents_len = len;
    if (f->family->check_text && f->family->check_text(f, run->state[idx], text, len) != 0)
      tether_lint__file_message(f, 1, "rule family %s failed", f->family->name);
    f->contents = NULL;
    tether_lint__lines_free(&f->lines);
    free(text);
  } else if (f->family->check_elf && f->family->check_elf(f, run->state[idx]) != 0) {
    tether_lint__file_message(f, 1, "rule family %s failed", f->family->name);
  }
  f->cur_family = NULL;
  f->analysed = 1;
}

static void run_inputs(tether_lint_run *run, int jobs) {
  if (jobs < 1) jobs = 1;
  run->workers = calloc((size_t)jobs, sizeof *run->workers);
  if (!run->workers) {
    run_msg(run, 1, "out of memory");
    return;
  }
  run->nworkers = jobs;
  for (size_t i = 0; i < run->ninputs; i++) {
    tether_lint_file *f = &run->inputs[i];
    if (f->kind != INPUT_TU) {
      analyse_other(f);
      continue;
    }
    if (!prepare_tu(run, f)) continue;
    if (run->o->in_process) {
      tether_lint__buf out = {0};
      if (analyse_on_big_stack(run, f, &out) != 0 || !out.p ||
          take_result(run, f, out.p, out.n) != 0)
        tether_lint__file_message(f, 1, "the analysis failed: not analysed");
      tether_lint__buf_free(&out);
      drop_tu_text(f);
      continue;
    }
    while (active_workers(run) >= run->nworkers) pump(run);
    spawn_worker(run, i);
  }
  while (active_workers(run)) pump(run);
}

/* Hands each input's facts to its family, in input order. */
static void replay_facts(tether_lint_run *run) {
  for (size_t i = 0; i < run->ninputs; i++) {
    tether_lint_file *f = &run->inputs[i];
    tether_lint__rd r = {(const unsigned char *)f->facts.p, f->facts.n, 0, 0};
    while (r.off < r.n && !r.bad) {
      size_t nl = 0, dl = 0;
      const char *name = tether_lint__rd_bytes(&r, &nl);
      const char *data = tether_lint__rd_bytes(&r, &dl);
      if (r.bad) break;
      for (size_t k = 0; k < tether_lint__nfamilies; k++) {
        const tether_lint_family *fam = tether_lint__families[k];
        if (!fam->take_fact || strlen(fam->name) != nl || memcmp(fam->name, name, nl) != 0)
          continue;
        if (fam->take_fact(run, run->state[k], data, dl) != 0)
          tether_lint__file_message(f, 1, "rule family %s could not take a fact", fam->name);
      }
    }
  }
}

/* ---- output ------------------------------------------------------------------------------- */

static char *find_root(const tether_lint_options *o, const char *cwd) {
  char buf[PATH_MAX];
  if (o->root) {
    /* Lexical, like the paths of findings: no symlink resolution on either side. */
    if (o->root[0] == '/') return tether_lint__strdup(o->root);
    tether_lint__buf b = {0};
    if (tether_lint__buf_printf(&b, "%s/%s", cwd, o->root) != 0) return NULL;
    return b.p;
  }
  snprintf(buf, sizeof buf, "%s", cwd);
  return tether_lint__strdup(tether_lint__find_upward(buf, ".git", 0) ? buf : cwd);
}

static void free_findings(tether_lint_finding *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].file);
    free(v[i].message);
  }
  free(v);
}

static void open_cache(tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (o->no_cache) return;
  char *dir = o->cache_dir ? tether_lint__strdup(o->cache_dir) : tether_lint__cache_default_dir();
  if (!dir) return; /* no HOME, no XDG_CACHE_HOME: no cache */
  char err[PATH_MAX + 256];
  if (tether_lint__cache_open(dir, &run->cache, err, sizeof err) != 0)
    run_msg(run, 0, "note: result cache off: %s", err);
  else
    make_run_key(run, run->config_digest);
  free(dir);
}

int tether_lint__lint_main(const tether_lint_options *o, FILE *out, FILE *err) {
  tether_lint_run run;
  memset(&run, 0, sizeof run);
  run.o = o;
  int status = 2;
  tether_lint__set_max_file_size(o->max_file_size ? o->max_file_size
                                                  : TETHER_LINT_DEFAULT_MAX_FILE_SIZE);
  run.timeout = o->timeout >= 0 ? o->timeout : TIMEOUT_DEFAULT;
  run.worker_memory = o->worker_memory ? o->worker_memory : WORKER_MEMORY_DEFAULT;
  run.worker_stack = o->worker_stack ? o->worker_stack : WORKER_STACK_DEFAULT;
  if (o->root) {
    struct stat st;
    if (stat(o->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
      fprintf(err, "tether-lint: error: --root ");
      tether_lint__fputs_escaped(o->root, err);
      fprintf(err, ": not a directory\n");
      goto done;
    }
  }
  if (load_config(&run, run.config_digest) != 0 || load_compile_db(&run) != 0) {
    fputs(run.msgs.p ? run.msgs.p : "", err);
    goto done;
  }
  if (o->action == TETHER_LINT_ACT_LIST_PROFILES) {
    tether_lint__config_print_profiles(&run.cfg, out);
    status = 0;
    goto done;
  }
  if (o->action == TETHER_LINT_ACT_LIST_RULES) {
    for (size_t i = 0; i < tether_lint__nfamilies; i++)
      for (size_t j = 0; j < tether_lint__families[i]->nrules; j++) {
        const tether_lint_rule_info *r = &tether_lint__families[i]->rules[j];
        fprintf(out, "%-18s %-8s %s\n", r->id,
                tether_lint__strlist_has(&run.disabled, r->id) ? "disabled" : "enabled",
                r->short_desc);
      }
    status = 0;
    goto done;
  }
  for (size_t i = 0; i < o->paths.n; i++) walk(&run, o->paths.v[i], 1);
  run.state = calloc(tether_lint__nfamilies ? tether_lint__nfamilies : 1, sizeof *run.state);
  if (!run.state) goto done;
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    if (tether_lint__families[i]->run_begin &&
        tether_lint__families[i]->run_begin(&run, &run.state[i]) != 0)
      run_msg(&run, 1, "rule family %s could not start", tether_lint__families[i]->name);
  run_inputs(&run, o->jobs ? o->jobs : 1);
  replay_facts(&run);
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    if (tether_lint__families[i]->run_end &&
        tether_lint__families[i]->run_end(&run, run.state[i]) != 0)
      run_msg(&run, 1, "rule family %s failed in its cross-file pass",
              tether_lint__families[i]->name);
  if (o->cache_stats) {
    size_t hits, misses, stores;
    tether_lint__cache_stats(run.cache, &hits, &misses, &stores);
    run_msg(&run, 0,
            "cache: %zu of %zu translation unit(s) from the cache, %zu parsed, %zu stored%s",
            run.tus_cached, run.tus, run.tus - run.tus_cached, stores,
            run.cache ? "" : " (the cache is off)");
  }

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
  if (o->format == TETHER_LINT_FMT_TEXT)
    werr = tether_lint__report_text(&rep, out);
  else if (o->format == TETHER_LINT_FMT_JSON)
    werr = tether_lint__report_json(&rep, out);
  else
    werr = tether_lint__report_sarif(&rep, out);
  FILE *sumf = o->format == TETHER_LINT_FMT_TEXT ? out : err;
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
    tether_lint_file *f = &run.inputs[i];
    free(f->path);
    free(f->abspath);
    free_findings(f->v, f->n);
    tether_lint__buf_free(&f->msgs);
    tether_lint__buf_free(&f->facts);
    tether_lint__lines_free(&f->lines);
    free(f->text);
    free(f->source);
    tether_lint__strlist_free(&f->args);
  }
  free(run.inputs);
  free(run.state);
  free(run.workers);
  free_findings(run.v, run.n);
  tether_lint__strmap_free(&run.seen, NULL);
  tether_lint__strmap_free(&run.texts, free_text_memo);
  free(run.stack);
  tether_lint__buf_free(&run.msgs);
  tether_lint__strlist_free(&run.disabled);
  tether_lint__profile_free(&run.profile);
  tether_lint__config_free(&run.cfg);
  tether_lint__cdb_free(run.db);
  tether_lint__cache_close(run.cache);
  return status;
}
