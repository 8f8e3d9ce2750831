/* Findings and messages: the reporting half of the interface rules use (lint.h), NOLINT, and the
 * one sorted list of findings the reporters get.
 *
 * Invariant: a finding or message is recorded in the record of the input it is about (or of the
 * run, for cross-file passes), never printed here; a finding on a line that a NOLINT comment
 * (`NOLINT(tether-RULE)` on the line, `NOLINTNEXTLINE(tether-RULE)` on the line before) names is
 * counted as suppressed instead. Every message text is escaped before it is kept, so no file name
 * or compiler message can forge a line of its own. */
#define _GNU_SOURCE /* memmem */
#include "lint/driver/engine.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

int tether_lint__push_finding(tether_lint_finding **v, size_t *n, size_t *cap, const char *file,
                              unsigned line, unsigned col, const char *rule, const char *msg) {
  const tether_lint_rule_info *info = tether_lint__rule_find(rule, NULL);
  if (tether_lint__grow(v, cap, *n, sizeof **v) != 0) return -1;
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
  if (!msg || tether_lint__push_finding(&f->v, &f->n, &f->cap, f->path, line, col, rule, msg) != 0)
    f->errors++;
  free(msg);
}

/* A finding at line:col of `file`, a file of `tu` whose text (as libclang read it) holds the NOLINT
 * comments. */
static void tu_report(tether_lint_file *f, CXTranslationUnit tu, CXFile file, unsigned line,
                      unsigned col, const char *rule, const char *fmt, va_list ap) {
  size_t size = 0;
  const char *text = clang_getFileContents(tu, file, &size);
  file_report(f, line, col, rule, text, size, fmt, ap);
}

int tether_lint__in_main_file(CXTranslationUnit tu, CXSourceLocation loc) {
  CXFile file = NULL;
  clang_getExpansionLocation(loc, &file, NULL, NULL, NULL);
  /* Whether a file is the main file does not depend on where in it: its first byte decides.
   * (clang_getLocation from a line and column scans the line: on a 400 KB one-line source, once
   * per cursor, that took a minute.) */
  return file && clang_Location_isFromMainFile(clang_getLocationForOffset(tu, file, 0));
}

void tether_lint__report_tu(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                            const char *rule, const char *fmt, ...) {
  CXFile file = NULL;
  unsigned line = 0, col = 0;
  clang_getExpansionLocation(loc, &file, &line, &col, NULL);
  if (!file || !tether_lint__in_main_file(tu, loc)) return;
  va_list ap;
  va_start(ap, fmt);
  tu_report(f, tu, file, line, col, rule, fmt, ap);
  va_end(ap);
}

void tether_lint__report_tu_spelled(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                                    const char *rule, const char *fmt, ...) {
  CXFile file = NULL;
  unsigned line = 0, col = 0;
  clang_getSpellingLocation(loc, &file, &line, &col, NULL);
  if (!file || !clang_Location_isFromMainFile(clang_getLocation(tu, file, 1, 1))) return;
  va_list ap;
  va_start(ap, fmt);
  tu_report(f, tu, file, line, col, rule, fmt, ap);
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

void tether_lint__text_memo_free(void *p) {
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
  if (!msg ||
      tether_lint__push_finding(&run->v, &run->n, &run->cap, file, line, col, rule, msg) != 0)
    run->errors++;
  free(msg);
}

void tether_lint__run_msg(tether_lint_run *run, int is_error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = vformat(fmt, ap);
  va_end(ap);
  put_message(&run->msgs, is_error, NULL, msg);
  free(msg);
  if (is_error) run->errors++;
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

void tether_lint__findings_free(tether_lint_finding *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].file);
    free(v[i].message);
  }
  free(v);
}

tether_lint_finding *tether_lint__findings_collect(tether_lint_run *run, size_t *count) {
  size_t total = run->n;
  for (size_t i = 0; i < run->ninputs; i++) total += run->inputs[i].n;
  tether_lint_finding *all = calloc(total ? total : 1, sizeof *all);
  if (!all) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < run->ninputs; i++) {
    tether_lint_file *f = &run->inputs[i];
    if (f->n) memcpy(all + n, f->v, f->n * sizeof *all);
    n += f->n;
    free(f->v);
    f->v = NULL;
    f->n = 0;
  }
  if (run->n) memcpy(all + n, run->v, run->n * sizeof *all);
  n += run->n;
  free(run->v);
  run->v = NULL;
  run->n = 0;
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
  *count = k;
  return all;
}
