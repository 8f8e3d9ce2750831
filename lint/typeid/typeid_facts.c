/* The weak-typeid cross-file pass: every explicit TypeID declaration and definition of the run, and
 * what is wrong with them together.
 *
 * Invariant: facts reach the pass only through the driver (take_fact), in input order, from a
 * worker or from the cache; run_end sorts them by place, reports each place once, and reports
 * only what is the user's to fix: a fact in an input file or in a header under a project root,
 * never in MLIR's own headers (unless `system-headers = true`). "Declared, defined nowhere" is
 * reported only when the run has the whole program. */
#define _XOPEN_SOURCE 700
#include "lint/typeid/typeid.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Keeps a fact in the run's state (the driver's process: take_fact). */
static int fact_store(typeid_state *st, const typeid_fact *in) {
  typeid_fact nf = {in->kind,
                    tether_lint__strdup(in->key),
                    tether_lint__strdup(in->what),
                    tether_lint__strdup(in->file),
                    tether_lint__strdup(in->real),
                    in->line,
                    in->col,
                    in->degraded,
                    in->main_file};
  if (!nf.key || !nf.what || !nf.file || !nf.real) goto oom;
  if (tether_lint__grow(&st->v, &st->cap, st->n, sizeof *st->v) != 0) goto oom;
  st->v[st->n++] = nf;
  return 0;
oom:
  free(nf.key);
  free(nf.what);
  free(nf.file);
  free(nf.real);
  return -1;
}

/* Records a fact for the cross-file pass: check_tu runs in a worker process (or not at all, when
 * the driver takes the file's result from its cache), so facts travel through the driver
 * (tether_lint__file_fact) to typeid_take_fact. */
void typeid_fact_add(tether_lint_file *f, int kind, const char *key, const char *what,
                     const char *file, unsigned line, unsigned col, int degraded) {
  char abs[PATH_MAX];
  const char *real = realpath(file, abs) ? abs : file;
  tether_lint__buf b = {0};
  uint32_t main_file = strcmp(file, tether_lint__file_path(f)) == 0;
  int rc = tether_lint__buf_put_u32(&b, (uint32_t)kind) | tether_lint__buf_put_u32(&b, line) |
           tether_lint__buf_put_u32(&b, col) | tether_lint__buf_put_u32(&b, (uint32_t)degraded) |
           tether_lint__buf_put_u32(&b, main_file) | tether_lint__buf_put_str(&b, key) |
           tether_lint__buf_put_str(&b, what) | tether_lint__buf_put_str(&b, file) |
           tether_lint__buf_put_str(&b, real);
  if (rc == 0) tether_lint__file_fact(f, b.p, b.n);
  tether_lint__buf_free(&b);
}

int typeid_take_fact(tether_lint_run *run, void *state, const char *data, size_t len) {
  (void)run;
  typeid_state *st = state;
  if (!st) return -1;
  tether_lint__rd r = {(const unsigned char *)data, len, 0, 0};
  typeid_fact in;
  in.kind = (int)tether_lint__rd_u32(&r);
  in.line = tether_lint__rd_u32(&r);
  in.col = tether_lint__rd_u32(&r);
  in.degraded = (int)tether_lint__rd_u32(&r);
  in.main_file = (int)tether_lint__rd_u32(&r);
  in.key = tether_lint__rd_str(&r);
  in.what = tether_lint__rd_str(&r);
  in.file = tether_lint__rd_str(&r);
  in.real = tether_lint__rd_str(&r);
  int rc =
      r.bad || r.off != len || (in.kind != TYPEID_FACT_DECLARE && in.kind != TYPEID_FACT_DEFINE)
          ? -1
          : fact_store(st, &in);
  free(in.key);
  free(in.what);
  free(in.file);
  free(in.real);
  return rc;
}

/* "::a :: B< int >" -> "a::B<int>" */
char *typeid_norm_key(const char *s) {
  size_t n = strlen(s);
  char *r = malloc(n + 1);
  if (!r) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') r[k++] = s[i];
  r[k] = '\0';
  if (r[0] == ':' && r[1] == ':') memmove(r, r + 2, k - 1);
  /* Elaborated spellings from the AST ("struct a::B") never reach here: canonical C++ type
   * spellings carry no keyword. */
  return r;
}

/* The unqualified last component of a key ("a::B<int>" -> "B<int>"), for degraded matching. */
const char *typeid_last_component(const char *key) {
  const char *last = key;
  int depth = 0;
  for (const char *p = key; *p; p++) {
    if (*p == '<') depth++;
    if (*p == '>') depth--;
    if (depth == 0 && p[0] == ':' && p[1] == ':') last = p + 2;
  }
  return last;
}

int typeid_is_header_path(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 6 && strcmp(base + n - 6, ".h.inc") == 0) return 1;
  const char *dot = strrchr(base, '.');
  if (!dot) return 0;
  static const char *const exts[] = {".h", ".hh", ".hpp", ".hxx", ".h++", ".H", ".ipp", ".tcc"};
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
    if (strcmp(dot, exts[i]) == 0) return 1;
  return 0;
}

/* Lexically absolute (relative to the current directory), without "." components or a
 * trailing slash; symlinks are not resolved and ".." is kept as written (unlike
 * tether_lint__lexical_abs), since a project root is compared with paths as the user spelled
 * them. */
static void lexical_path(const char *path, char *out, size_t len) {
  char cwd[PATH_MAX];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
    snprintf(out, len, "%s", path);
  else
    snprintf(out, len, "%s/%s", cwd, path);
  char *p;
  while ((p = strstr(out, "/./")) != NULL) memmove(p, p + 2, strlen(p + 2) + 1);
  size_t n = strlen(out);
  while (n > 1 && out[n - 1] == '/') out[--n] = '\0';
  if (n > 2 && strcmp(out + n - 2, "/.") == 0) out[n - 2] = '\0';
}

/* A project root, both as written (made absolute) and canonical, so that a file is matched
 * whether it was reached through a symlink or not. */
static void add_root(typeid_state *st, const char *base, const char *dir) {
  char buf[PATH_MAX * 2 + 2];
  if (dir[0] == '/' || !base)
    snprintf(buf, sizeof buf, "%s", dir);
  else
    snprintf(buf, sizeof buf, "%s/%s", base, dir);
  char lex[PATH_MAX * 2 + 2];
  lexical_path(buf, lex, sizeof lex);
  tether_lint__strlist_add_unique(&st->roots, lex);
  char abs[PATH_MAX];
  if (realpath(buf, abs)) tether_lint__strlist_add_unique(&st->roots, abs);
}

int typeid_run_begin(tether_lint_run *run, void **state) {
  typeid_state *st = calloc(1, sizeof *st);
  if (!st) return -1;
  st->run = run;
  const tether_lint_config *cfg = tether_lint__run_config(run);
  const tether_lint_options *o = tether_lint__run_options(run);
  st->system_headers = cfg->system_headers;
  /* The project: `project-roots` (relative to the config file's folder), else the config file's
   * folder, else the repository (git top-level) of the first PATH, else the current directory. */
  struct stat sb;
  const char *cfg_dir =
      cfg->path && cfg->dir && stat(cfg->path, &sb) == 0 && S_ISREG(sb.st_mode) ? cfg->dir : NULL;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
  if (cfg->project_roots.n) {
    for (size_t i = 0; i < cfg->project_roots.n; i++)
      add_root(st, cfg_dir ? cfg_dir : cwd, cfg->project_roots.v[i]);
  } else if (cfg_dir) {
    add_root(st, NULL, cfg_dir);
  } else {
    char top[PATH_MAX];
    if (o->paths.n && tether_lint__real_dir(o->paths.v[0], top) &&
        tether_lint__find_upward(top, ".git", 0))
      add_root(st, NULL, top);
    else
      add_root(st, NULL, cwd);
  }
  *state = st;
  return 0;
}

/* MLIR's own headers (its include tree, installed or in a source checkout) are never the user's:
 * their TypeIDs are defined in libMLIR. */
static int mlir_own(const char *path) {
  return strstr(path, "/include/mlir/") != NULL || strstr(path, "/include/mlir-c/") != NULL;
}

/* Is a fact the user's to fix: in an input file, or in a header under a project root; never in
 * MLIR's own headers (unless `system-headers = true`, which also asks to check a vendored MLIR). */
static int users(const typeid_state *st, const typeid_fact *a) {
  if (mlir_own(a->real) && !st->system_headers) return 0;
  if (a->main_file || st->system_headers) return 1;
  char lex[PATH_MAX * 2 + 2];
  lexical_path(a->file, lex, sizeof lex);
  const char *paths[2] = {a->real, lex};
  for (size_t i = 0; i < st->roots.n; i++) {
    const char *r = st->roots.v[i];
    size_t n = strlen(r);
    if (strcmp(r, "/") == 0) return 1;
    for (int k = 0; k < 2; k++)
      if (strncmp(paths[k], r, n) == 0 && (paths[k][n] == '/' || paths[k][n] == '\0')) return 1;
  }
  return 0;
}

static int same_class(const typeid_fact *a, const typeid_fact *b) {
  if (strcmp(a->key, b->key) == 0) return 1;
  return (a->degraded || b->degraded) &&
         strcmp(typeid_last_component(a->key), typeid_last_component(b->key)) == 0;
}

static int same_place(const typeid_fact *a, const typeid_fact *b) {
  return a->line == b->line && strcmp(a->real, b->real) == 0;
}

/* Facts arrive in input order: sort them by place so that the output (which copy of a header's
 * fact is kept, which other definition a message names) depends on where facts are, not on which
 * translation unit saw them first. */
static int fact_cmp(const void *pa, const void *pb) {
  const typeid_fact *a = pa, *b = pb;
  int c = strcmp(a->real, b->real);
  if (c) return c;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  if (a->col != b->col) return a->col < b->col ? -1 : 1;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  if (a->degraded != b->degraded) return a->degraded < b->degraded ? -1 : 1;
  c = strcmp(a->key, b->key);
  if (c) return c;
  c = strcmp(a->file, b->file);
  if (c) return c;
  return strcmp(a->what, b->what);
}

int typeid_run_end(tether_lint_run *run, void *state) {
  typeid_state *st = state;
  if (!st) return 0;
  /* "Declared, defined nowhere" needs the whole program: a partial run (pre-commit passes the
   * changed files only) does not see the definitions in the files it was not given. */
  int whole = tether_lint__run_whole_program(run);
  if (st->n > 1) qsort(st->v, st->n, sizeof *st->v, fact_cmp);
  for (size_t i = 0; i < st->n; i++) {
    typeid_fact *a = &st->v[i];
    int dup = 0;
    for (size_t j = 0; j < i && !dup; j++)
      if (st->v[j].kind == a->kind && same_place(&st->v[j], a) && same_class(&st->v[j], a)) dup = 1;
    if (dup) continue;           /* the same header seen from several translation units */
    if (!users(st, a)) continue; /* still a definition for the declarations that need one */
    if (a->kind == TYPEID_FACT_DECLARE) {
      if (!whole) continue;
      int defined = 0;
      for (size_t j = 0; j < st->n && !defined; j++)
        if (st->v[j].kind == TYPEID_FACT_DEFINE && same_class(&st->v[j], a)) defined = 1;
      if (!defined)
        tether_lint__report_run(
            run, a->file, a->line, a->col, TYPEID_RULE,
            "%s declares TypeID storage for '%s' that no translation unit of this "
            "run defines: define it in exactly one .cpp (MLIR_DEFINE_EXPLICIT_TYPE_ID "
            "for the macro); until then the link fails, or each shared object "
            "resolves it on its own",
            a->what, a->key);
      continue;
    }
    if (typeid_is_header_path(a->file))
      tether_lint__report_run(
          run, a->file, a->line, a->col, TYPEID_RULE,
          "%s defines the TypeID storage of '%s' in a header: every translation "
          "unit that includes it defines it again (a link error in one shared "
          "object, a second copy of the TypeID in the next one); move it to one "
          ".cpp",
          a->what, a->key);
    for (size_t j = 0; j < st->n; j++) {
      typeid_fact *b = &st->v[j];
      if (j == i || b->kind != TYPEID_FACT_DEFINE || !same_class(a, b) || same_place(a, b))
        continue;
      tether_lint__report_run(
          run, a->file, a->line, a->col, TYPEID_RULE,
          "%s defines the TypeID storage of '%s', which %s:%u defines too: two "
          "definitions are two TypeIDs as soon as they end up in different shared "
          "objects; keep exactly one",
          a->what, a->key, b->file, b->line);
      break;
    }
  }
  for (size_t i = 0; i < st->n; i++) {
    free(st->v[i].key);
    free(st->v[i].what);
    free(st->v[i].file);
    free(st->v[i].real);
  }
  free(st->v);
  tether_lint__strlist_free(&st->roots);
  free(st);
  return 0;
}
