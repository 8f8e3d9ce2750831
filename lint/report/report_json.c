/* JSON reporter: a JSON array with one object per finding.
 *
 * Invariant: the output is one valid JSON document in UTF-8 whatever bytes the paths and messages
 * contain (invalid UTF-8 becomes U+FFFD); every object has file, line, column, rule, severity,
 * message and hint. */
#include "lint/lint.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static int add_string(cJSON *o, const char *key, const char *s) {
  char *clean = tether_lint__utf8_clean(s ? s : "");
  if (!clean) return -1;
  cJSON *v = cJSON_AddStringToObject(o, key, clean);
  free(clean);
  return v ? 0 : -1;
}

int tether_lint__report_json(const tether_lint_report *r, FILE *out) {
  cJSON *arr = cJSON_CreateArray();
  if (!arr) return -1;
  int rc = 0;
  for (size_t i = 0; i < r->n && rc == 0; i++) {
    const tether_lint_finding *f = &r->findings[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) {
      rc = -1;
      break;
    }
    cJSON_AddItemToArray(arr, o);
    if (add_string(o, "file", f->file) || !cJSON_AddNumberToObject(o, "line", f->line) ||
        !cJSON_AddNumberToObject(o, "column", f->col) || add_string(o, "rule", f->rule) ||
        add_string(o, "severity", "warning") || add_string(o, "message", f->message) ||
        add_string(o, "hint", f->hint))
      rc = -1;
  }
  char *text = rc == 0 ? cJSON_Print(arr) : NULL;
  cJSON_Delete(arr);
  if (!text) return -1;
  fputs(text, out);
  fputc('\n', out);
  free(text);
  return ferror(out) ? -1 : 0;
}
