/* The run: what tether_lint__lint_main does, in order.
 *
 * Invariant: inputs are discovered in a fixed order and each is analysed exactly once, into its
 * own record. The driver is one thread. Each translation unit is parsed and checked in a worker
 * process of its own (workers.c), which sends back a serialized result (result.c): findings,
 * messages, the facts of the cross-file passes, and the headers it read with their digests. A
 * worker that dies or runs out of time costs that one file an error line; the others are reported
 * normally. The same serialized result is what the cache stores (cache.c), so a result taken from
 * the cache is indistinguishable from a fresh one. Build files and shared objects are read by the
 * driver itself, between workers. Everything the user sees (messages, findings, summary) is
 * emitted at the end from the records, in input order, findings sorted: the output does not
 * depend on -j, on the cache, or on timing. Any problem with an input is recorded as an error
 * (exit 2) and the run goes on. engine.h lists the driver's files. */
#include "lint/driver/engine.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- what rules may ask of a file or the run --------------------------------------------- */

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

/* ---- the steps of a run ------------------------------------------------------------------ */

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

/* Limits of the run from the options, before anything is read. */
static void run_init(tether_lint_run *run, const tether_lint_options *o) {
  memset(run, 0, sizeof *run);
  run->o = o;
  tether_lint__set_max_file_size(o->max_file_size ? o->max_file_size
                                                  : TETHER_LINT_DEFAULT_MAX_FILE_SIZE);
  run->timeout = o->timeout >= 0 ? o->timeout : TETHER_LINT_TIMEOUT_DEFAULT;
  run->worker_memory = o->worker_memory ? o->worker_memory : TETHER_LINT_WORKER_MEMORY_DEFAULT;
  run->worker_stack = o->worker_stack ? o->worker_stack : TETHER_LINT_WORKER_STACK_DEFAULT;
}

/* --root names a directory (0), or the run stops with a message (-1). */
static int check_root(const tether_lint_options *o, FILE *err) {
  if (!o->root) return 0;
  struct stat st;
  if (stat(o->root, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
  fprintf(err, "tether-lint: error: --root ");
  tether_lint__fputs_escaped(o->root, err);
  fprintf(err, ": not a directory\n");
  return -1;
}

/* --list-rules: every rule of the table, enabled or not after the configuration. */
static void list_rules(const tether_lint_run *run, FILE *out) {
  int width = 0;
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    for (size_t j = 0; j < tether_lint__families[i]->nrules; j++) {
      int n = (int)strlen(tether_lint__families[i]->rules[j].id);
      if (n > width) width = n;
    }
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    for (size_t j = 0; j < tether_lint__families[i]->nrules; j++) {
      const tether_lint_rule_info *r = &tether_lint__families[i]->rules[j];
      fprintf(out, "%-*s %-8s %s\n", width, r->id,
              tether_lint__strlist_has(&run->disabled, r->id) ? "disabled" : "enabled",
              r->short_desc);
    }
}

/* Discovery, every input's analysis and the cross-file passes. -1 when out of memory. */
static int analyse_all(tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  for (size_t i = 0; i < o->paths.n; i++) tether_lint__walk(run, o->paths.v[i], 1);
  run->state = calloc(tether_lint__nfamilies ? tether_lint__nfamilies : 1, sizeof *run->state);
  if (!run->state) return -1;
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    if (tether_lint__families[i]->run_begin &&
        tether_lint__families[i]->run_begin(run, &run->state[i]) != 0)
      tether_lint__run_msg(run, 1, "rule family %s could not start",
                           tether_lint__families[i]->name);
  tether_lint__run_inputs(run, o->jobs ? o->jobs : 1);
  replay_facts(run);
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    if (tether_lint__families[i]->run_end &&
        tether_lint__families[i]->run_end(run, run->state[i]) != 0)
      tether_lint__run_msg(run, 1, "rule family %s failed in its cross-file pass",
                           tether_lint__families[i]->name);
  if (o->cache_stats) {
    size_t hits, misses, stores;
    tether_lint__cache_stats(run->cache, &hits, &misses, &stores);
    tether_lint__run_msg(
        run, 0, "cache: %zu of %zu translation unit(s) from the cache, %zu parsed, %zu stored%s",
        run->tus_cached, run->tus, run->tus - run->tus_cached, stores,
        run->cache ? "" : " (the cache is off)");
  }
  return 0;
}

/* Messages (the run's first, then each input's, in input order) to `err`, the report to `out`,
 * the summary line. Returns the exit status. */
static int report(tether_lint_run *run, FILE *out, FILE *err) {
  const tether_lint_options *o = run->o;
  tether_lint_summary sum = {0};
  if (run->msgs.p) fputs(run->msgs.p, err);
  for (size_t i = 0; i < run->ninputs; i++) {
    tether_lint_file *f = &run->inputs[i];
    if (f->msgs.p) fputs(f->msgs.p, err);
    sum.files += (size_t)f->analysed;
    sum.suppressed += f->suppressed;
    sum.errors += (size_t)f->errors;
    sum.compile_errors += (size_t)f->compile_errors;
  }
  sum.errors += (size_t)run->errors;
  sum.suppressed += run->suppressed;
  size_t n = 0;
  tether_lint_finding *all = tether_lint__findings_collect(run, &n);
  if (!all) {
    fprintf(err, "tether-lint: error: out of memory\n");
    return 2;
  }
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
  tether_lint__findings_free(all, n);
  return sum.errors ? 2 : sum.findings ? 1 : 0;
}

static void run_free(tether_lint_run *run) {
  for (size_t i = 0; i < run->ninputs; i++) {
    tether_lint_file *f = &run->inputs[i];
    free(f->path);
    free(f->abspath);
    tether_lint__findings_free(f->v, f->n);
    tether_lint__buf_free(&f->msgs);
    tether_lint__buf_free(&f->facts);
    tether_lint__lines_free(&f->lines);
    free(f->text);
    free(f->source);
    tether_lint__strlist_free(&f->args);
  }
  free(run->inputs);
  free(run->state);
  free(run->workers);
  tether_lint__findings_free(run->v, run->n);
  tether_lint__strmap_free(&run->seen, NULL);
  tether_lint__strmap_free(&run->texts, tether_lint__text_memo_free);
  free(run->stack);
  tether_lint__buf_free(&run->msgs);
  tether_lint__strlist_free(&run->disabled);
  tether_lint__profile_free(&run->profile);
  tether_lint__config_free(&run->cfg);
  tether_lint__cdb_free(run->db);
  tether_lint__cache_close(run->cache);
}

int tether_lint__lint_main(const tether_lint_options *o, FILE *out, FILE *err) {
  tether_lint_run run;
  run_init(&run, o);
  int status = 2;
  if (check_root(o, err) != 0) {
    /* status 2 */
  } else if (tether_lint__load_config(&run, run.config_digest) != 0 ||
             tether_lint__load_compile_db(&run) != 0) {
    fputs(run.msgs.p ? run.msgs.p : "", err);
  } else if (o->action == TETHER_LINT_ACT_LIST_PROFILES) {
    tether_lint__config_print_profiles(&run.cfg, out);
    status = 0;
  } else if (o->action == TETHER_LINT_ACT_LIST_RULES) {
    list_rules(&run, out);
    status = 0;
  } else if (analyse_all(&run) == 0) {
    status = report(&run, out, err);
  }
  run_free(&run);
  return status;
}
