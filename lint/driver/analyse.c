/* Analysing one input: a translation unit (in a worker process, or in the driver with
 * --in-process), a build file or a shared object (in the driver).
 *
 * Invariant: a translation unit is parsed from the copy of the file the driver read (never read
 * again), with libclang told to keep going after errors; every rule family that has a rule on
 * runs on it, in table order, into a scratch record that is then serialized (result.c), so the
 * same bytes describe a fresh analysis and a cached one. The compile errors are summarized in one
 * message, and every header the unit read is recorded with a digest of what libclang read. A
 * header the project's build generates (the config's `generated-headers`) that is not found yet is
 * parsed as an empty in-memory file (never written): it is a missing include for the cache, not a
 * header read, and a file that needs more than nothing from it still gets its compile errors. */
#define _GNU_SOURCE /* strndup */
#include "lint/driver/engine.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Records each header the translation unit read, with a digest of what libclang read. */
typedef struct incl_ctx {
  tether_lint_file *w;
  CXTranslationUnit tu;
  CXFile main;
  const tether_lint__strlist *standins; /* paths of empty stand-ins: not headers read */
} incl_ctx;

static void record_inclusion(CXFile file, CXSourceLocation *stack, unsigned depth,
                             CXClientData data) {
  (void)stack;
  incl_ctx *c = data;
  if (depth == 0 || clang_File_isEqual(file, c->main)) return;
  CXString name = clang_getFileName(file);
  if (c->standins && clang_getCString(name) &&
      tether_lint__strlist_has(c->standins, clang_getCString(name))) {
    clang_disposeString(name);
    return;
  }
  CXString real = clang_File_tryGetRealPathName(file);
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

/* The scratch record of a worker's analysis of `f`. */
static void scratch_init(tether_lint_file *w, tether_lint_run *run, const tether_lint_file *f) {
  memset(w, 0, sizeof *w);
  w->run = run;
  w->path = f->path;
  w->abspath = f->abspath;
  w->kind = TETHER_LINT_INPUT_TU;
  w->named = f->named;
  w->cacheable = 1;
}

static void scratch_free(tether_lint_file *w) {
  for (size_t i = 0; i < w->n; i++) {
    free(w->v[i].file);
    free(w->v[i].message);
  }
  free(w->v);
  tether_lint__buf_free(&w->msgs);
  tether_lint__buf_free(&w->facts);
  tether_lint__buf_free(&w->incl);
  tether_lint__strlist_free(&w->missing);
  tether_lint__lines_free(&w->lines);
}

/* Parses the driver's copy of `f` (checked, size-limited: libclang does not read the file again)
 * with its flags, and an empty in-memory file at each path of `standins`. The translation unit, or
 * NULL with an error message in `w`. */
static CXTranslationUnit parse(CXIndex index, const tether_lint_file *f, tether_lint_file *w,
                               const tether_lint__strlist *standins) {
  const char **argv = malloc((f->args.n ? f->args.n : 1) * sizeof *argv);
  struct CXUnsavedFile *files = malloc((1 + standins->n) * sizeof *files);
  CXTranslationUnit tu = NULL;
  enum CXErrorCode rc = CXError_Failure;
  if (argv && files && index) {
    for (size_t i = 0; i < f->args.n; i++) argv[i] = f->args.v[i];
    files[0] = (struct CXUnsavedFile){f->source, f->text, (unsigned long)f->text_len};
    for (size_t i = 0; i < standins->n; i++)
      files[1 + i] = (struct CXUnsavedFile){standins->v[i], "", 0};
    rc = clang_parseTranslationUnit2(
        index, f->source, argv, (int)f->args.n, files, (unsigned)(1 + standins->n),
        CXTranslationUnit_KeepGoing | CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles, &tu);
  }
  free(argv);
  free(files);
  if (rc == CXError_Success && tu) return tu;
  static const char *const why[] = {"success", "failure", "crashed", "invalid arguments",
                                    "AST read error"};
  tether_lint__file_message(w, 1, "libclang could not parse the file (%s)",
                            (unsigned)rc < sizeof why / sizeof why[0] ? why[rc] : "unknown error");
  if (tu) clang_disposeTranslationUnit(tu);
  return NULL;
}

/* Generated headers the parse did not find: for each "'NAME' file not found" whose NAME matches
 * the config's `generated-headers`, a stand-in path next to the file that includes it (where a
 * quoted include is looked up first) is added to `standins` and NAME to the missing includes.
 * Returns how many were added. */
static size_t missing_generated(const tether_lint_run *run, CXTranslationUnit tu,
                                tether_lint_file *w, tether_lint__strlist *standins) {
  const tether_lint__strlist *gen = &run->cfg.generated;
  size_t added = 0;
  if (!gen->n) return 0;
  unsigned nd = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    CXString s = clang_getDiagnosticSpelling(d);
    const char *t = clang_getCString(s);
    const char *end = t ? strstr(t, "' file not found") : NULL;
    if (t && t[0] == '\'' && end && end > t + 1) {
      char *name = strndup(t + 1, (size_t)(end - t - 1));
      int match = 0;
      for (size_t g = 0; name && g < gen->n && !match; g++)
        match = fnmatch(gen->v[g], name, 0) == 0;
      CXFile includer = NULL;
      clang_getSpellingLocation(clang_getDiagnosticLocation(d), &includer, NULL, NULL, NULL);
      CXString in = clang_getFileName(includer);
      if (match && includer && clang_getCString(in)) {
        char *dir = tether_lint__dir_name(clang_getCString(in));
        tether_lint__buf p = {0};
        if (dir) tether_lint__buf_printf(&p, "%s/%s", dir, name);
        if (p.p && !tether_lint__strlist_has(standins, p.p) &&
            tether_lint__strlist_push(standins, p.p) == 0) {
          tether_lint__strlist_add_unique(&w->missing, name);
          added++;
        }
        tether_lint__buf_free(&p);
        free(dir);
      }
      clang_disposeString(in);
      free(name);
    }
    clang_disposeString(s);
    clang_disposeDiagnostic(d);
  }
  return added;
}

/* One message about the unit's compile errors (the first fatal one, after which the tree is
 * partial, else the first one), and the includes that were not found. Returns the error count. */
static int note_compile_errors(tether_lint_file *w, CXTranslationUnit tu) {
  unsigned nd = clang_getNumDiagnostics(tu);
  int nerr = 0, nfatal = 0;
  char *first = NULL, *first_fatal = NULL;
  for (unsigned i = 0; i < nd; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error) {
      int fatal = is_fatal(d, sev);
      if (fatal) note_missing(w, d);
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
    tether_lint__file_message(w, 0,
                              "note: the syntax tree is partial: %s (%d compile error(s), analysed "
                              "as far as the AST goes)",
                              first_fatal ? first_fatal : "", nerr);
  } else if (nerr) {
    tether_lint__file_message(w, 0,
                              "%d compile error(s), analysed as far as the AST goes; first: %s",
                              nerr, first ? first : "");
  }
  free(first);
  free(first_fatal);
  return nerr;
}

/* Every family that takes translation units and has a rule on, in table order. */
static void run_families(tether_lint_run *run, tether_lint_file *w, CXTranslationUnit tu) {
  for (size_t i = 0; i < tether_lint__nfamilies; i++) {
    const tether_lint_family *fam = tether_lint__families[i];
    if (!(fam->inputs & TETHER_LINT_IN_TU) || !fam->check_tu) continue;
    int any = 0;
    for (size_t r = 0; r < fam->nrules; r++)
      if (tether_lint__file_rule_enabled(w, fam->rules[r].id)) any = 1;
    if (!any) continue;
    w->cur_family = fam;
    if (fam->check_tu(w, run->state[i], tu) != 0)
      tether_lint__file_message(w, 1, "rule family %s failed", fam->name);
    w->cur_family = NULL;
  }
}

/* Parses and checks `f` into a scratch record, and serializes the result into `out`. */
static void analyse_tu(tether_lint_run *run, tether_lint_file *f, tether_lint__buf *out) {
  tether_lint_file w;
  scratch_init(&w, run, f);
  CXIndex index = clang_createIndex(0, 0);
  tether_lint__strlist standins = {0};
  CXTranslationUnit tu = parse(index, f, &w, &standins);
  /* Generated headers not built yet: parse again with empty stand-ins (a stand-in's own generated
   * includes are found the next round, three rounds at most). */
  for (int round = 0; tu && round < 3 && missing_generated(run, tu, &w, &standins); round++) {
    clang_disposeTranslationUnit(tu);
    tu = parse(index, f, &w, &standins);
  }
  if (tu) {
    w.compile_errors = note_compile_errors(&w, tu);
    run_families(run, &w, tu);
    w.analysed = 1;
    incl_ctx ic = {&w, tu, clang_getFile(tu, f->source), &standins};
    clang_getInclusions(tu, record_inclusion, &ic);
  }
  tether_lint__strlist_free(&standins);
  if (w.errors) w.cacheable = 0;
  if (tether_lint__result_serialize(&w, out) != 0) tether_lint__buf_free(out);
  if (tu) clang_disposeTranslationUnit(tu);
  if (index) clang_disposeIndex(index);
  scratch_free(&w);
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
int tether_lint__analyse_tu_on_big_stack(tether_lint_run *run, tether_lint_file *f,
                                         tether_lint__buf *out) {
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

/* ---- build files and shared objects (in the driver) ------------------------------------- */

void tether_lint__analyse_other(tether_lint_file *f) {
  tether_lint_run *run = f->run;
  size_t idx = 0;
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    if (tether_lint__families[i] == f->family) idx = i;
  f->cur_family = f->family;
  if (f->kind == TETHER_LINT_INPUT_TEXT) {
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
