/* Text reporter: one "file:line:col: warning: message [rule-id]" line per finding, then its hint.
 *
 * Invariant: one finding, two lines, in the order given; nothing else is written here. File names
 * and messages have their control characters escaped (tether_lint__buf_put_escaped), so a name with
 * a newline or an escape sequence can never forge a line a CI problem matcher would read. */
#include "lint/lint.h"

int tether_lint__report_text(const tether_lint_report *r, FILE *out) {
  tether_lint__buf b = {0};
  int rc = 0;
  for (size_t i = 0; i < r->n && rc == 0; i++) {
    const tether_lint_finding *f = &r->findings[i];
    b.n = 0;
    rc |= tether_lint__buf_put_escaped(&b, f->file);
    rc |= tether_lint__buf_printf(&b, ":%u:%u: warning: ", f->line, f->col);
    rc |= tether_lint__buf_put_escaped(&b, f->message);
    rc |= tether_lint__buf_printf(&b, " [%s]\n    hint: ", f->rule);
    rc |= tether_lint__buf_put_escaped(&b, f->hint);
    rc |= tether_lint__buf_puts(&b, "\n");
    if (rc == 0 && fputs(b.p, out) < 0) rc = -1;
  }
  tether_lint__buf_free(&b);
  return rc || ferror(out) ? -1 : 0;
}
