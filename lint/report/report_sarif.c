/* SARIF 2.1.0 reporter, in the shape GitHub code scanning accepts.
 *
 * Invariant: the output is one valid JSON document in UTF-8; every rule of every family is listed
 * in tool.driver.rules (so ruleIndex is stable); artifact URIs are relative to the root
 * (uriBaseId %SRCROOT%) when the file is under it, and absolute file:// URIs otherwise; every
 * character outside RFC 3986's unreserved set and '/' is percent-encoded. */
#include "lint/lint.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static char *uri_encode(const char *s) {
  tether_lint__buf b = {0};
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        strchr("-._~/", *p))
      tether_lint__buf_put(&b, (const char *)p, 1);
    else
      tether_lint__buf_printf(&b, "%%%02X", *p);
  }
  if (!b.p) tether_lint__buf_puts(&b, "");
  return b.p;
}

/* Lexically normalised absolute path: no ".", "..", or doubled slashes (malloc'd). */
static char *normalise(const char *cwd, const char *path) {
  return tether_lint__path_join_norm(path[0] == '/' ? NULL : cwd, path);
}

static cJSON *text_obj(const char *s) {
  cJSON *o = cJSON_CreateObject();
  char *clean = tether_lint__utf8_clean(s);
  if (o && clean) cJSON_AddStringToObject(o, "text", clean);
  free(clean);
  return o;
}

int tether_lint__report_sarif(const tether_lint_report *r, FILE *out) {
  cJSON *doc = cJSON_CreateObject();
  if (!doc) return -1;
  cJSON_AddStringToObject(doc, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  cJSON_AddStringToObject(doc, "version", "2.1.0");
  cJSON *runs = cJSON_AddArrayToObject(doc, "runs");
  cJSON *run = cJSON_CreateObject();
  cJSON_AddItemToArray(runs, run);
  cJSON *tool = cJSON_AddObjectToObject(run, "tool");
  cJSON *driver = cJSON_AddObjectToObject(tool, "driver");
  cJSON_AddStringToObject(driver, "name", "tether-lint");
  cJSON_AddStringToObject(driver, "version", TETHER_LINT_VERSION);
  cJSON_AddStringToObject(driver, "informationUri",
                          "https://github.com/tether/tether/blob/main/docs/lint.md");
  cJSON *rules = cJSON_AddArrayToObject(driver, "rules");
  for (size_t i = 0; i < tether_lint__nfamilies; i++)
    for (size_t j = 0; j < tether_lint__families[i]->nrules; j++) {
      const tether_lint_rule_info *ri = &tether_lint__families[i]->rules[j];
      cJSON *rule = cJSON_CreateObject();
      cJSON_AddItemToArray(rules, rule);
      cJSON_AddStringToObject(rule, "id", ri->id);
      cJSON_AddStringToObject(rule, "name", ri->id);
      cJSON_AddItemToObject(rule, "shortDescription", text_obj(ri->short_desc));
      cJSON_AddItemToObject(rule, "fullDescription", text_obj(ri->full_desc));
      cJSON_AddItemToObject(rule, "help", text_obj(ri->help));
      cJSON *conf = cJSON_AddObjectToObject(rule, "defaultConfiguration");
      cJSON_AddStringToObject(conf, "level", "warning");
      for (const char *const *off = tether_lint__families[i]->off_by_default; off && *off; off++)
        if (strcmp(*off, ri->id) == 0) cJSON_AddBoolToObject(conf, "enabled", 0);
    }
  char *rootabs = normalise(r->cwd, r->root);
  tether_lint__buf rs = {0};
  tether_lint__buf_printf(&rs, "%s%s", rootabs ? rootabs : "/",
                          rootabs && rootabs[strlen(rootabs) - 1] == '/' ? "" : "/");
  free(rootabs);
  const char *rootslash = rs.p ? rs.p : "/";
  char *rooturi = uri_encode(rootslash);
  cJSON *bases = cJSON_AddObjectToObject(run, "originalUriBaseIds");
  cJSON *srcroot = cJSON_AddObjectToObject(bases, "%SRCROOT%");
  tether_lint__buf u = {0};
  tether_lint__buf_printf(&u, "file://%s", rooturi ? rooturi : "/");
  cJSON_AddStringToObject(srcroot, "uri", u.p ? u.p : "file:///");
  tether_lint__buf_free(&u);
  free(rooturi);
  cJSON *results = cJSON_AddArrayToObject(run, "results");
  for (size_t i = 0; i < r->n; i++) {
    const tether_lint_finding *f = &r->findings[i];
    cJSON *res = cJSON_CreateObject();
    cJSON_AddItemToArray(results, res);
    cJSON_AddStringToObject(res, "ruleId", f->rule);
    int index = 0, k = 0;
    for (size_t a = 0; a < tether_lint__nfamilies; a++)
      for (size_t b = 0; b < tether_lint__families[a]->nrules; b++, k++)
        if (strcmp(tether_lint__families[a]->rules[b].id, f->rule) == 0) index = k;
    cJSON_AddNumberToObject(res, "ruleIndex", index);
    cJSON_AddStringToObject(res, "level", "warning");
    cJSON_AddItemToObject(res, "message", text_obj(f->message));
    cJSON *locs = cJSON_AddArrayToObject(res, "locations");
    cJSON *loc = cJSON_CreateObject();
    cJSON_AddItemToArray(locs, loc);
    cJSON *phys = cJSON_AddObjectToObject(loc, "physicalLocation");
    cJSON *art = cJSON_AddObjectToObject(phys, "artifactLocation");
    char *abs = normalise(r->cwd, f->file);
    size_t rl = strlen(rootslash);
    if (!abs) {
      cJSON_AddStringToObject(art, "uri", "");
    } else if (strncmp(abs, rootslash, rl) == 0) {
      char *enc = uri_encode(abs + rl);
      char *clean = tether_lint__utf8_clean(enc ? enc : "");
      cJSON_AddStringToObject(art, "uri", clean ? clean : "");
      cJSON_AddStringToObject(art, "uriBaseId", "%SRCROOT%");
      free(clean);
      free(enc);
    } else {
      char *enc = uri_encode(abs);
      tether_lint__buf b = {0};
      tether_lint__buf_printf(&b, "file://%s", enc ? enc : "");
      cJSON_AddStringToObject(art, "uri", b.p ? b.p : "");
      tether_lint__buf_free(&b);
      free(enc);
    }
    free(abs);
    /* Line 0 is a finding about the whole file (a shared object): SARIF's startLine is 1-based,
     * so such a result has an artifact location and no region. */
    if (f->line) {
      cJSON *region = cJSON_AddObjectToObject(phys, "region");
      cJSON_AddNumberToObject(region, "startLine", f->line);
      cJSON_AddNumberToObject(region, "startColumn", f->col ? f->col : 1);
    }
  }
  tether_lint__buf_free(&rs);
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (!text) return -1;
  fputs(text, out);
  fputc('\n', out);
  free(text);
  return ferror(out) ? -1 : 0;
}
