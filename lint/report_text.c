/* Text reporter: one "file:line:col: warning: message [rule-id]" line per finding, then its hint.
 *
 * Invariant: one finding, two lines, in the order given; nothing else is written here. */
#include "lint/lint.h"

int tether__report_text(const tether_lint_report *r, FILE *out) {
  for (size_t i = 0; i < r->n; i++) {
    const tether_lint_finding *f = &r->findings[i];
    fprintf(out, "%s:%u:%u: warning: %s [%s]\n    hint: %s\n", f->file, f->line, f->col, f->message,
            f->rule, f->hint);
  }
  return ferror(out) ? -1 : 0;
}
