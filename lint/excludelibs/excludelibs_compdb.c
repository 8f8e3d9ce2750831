/* exclude-libs in compile_commands.json: the entries that link.
 *
 * Invariant: an entry's "arguments" or "command" is scanned as link flags unless it stops before
 * linking (-c, -S, -E, -fsyntax-only, -M, -MM); a finding is placed at the JSON string it is in
 * (its escapes decoded, so the column is the string's). A file that is not a JSON array is a
 * message, not a finding. */
#include "lint/excludelibs/excludelibs.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* The line and column of every JSON string token (keys included), in document order: the same
 * order as a depth-first walk of cJSON's tree, so the k-th string of the walk is at offs[k]. */
typedef struct json_strs {
  size_t *offs;
  size_t n, cap;
} json_strs;

static int json_collect(const char *t, size_t len, json_strs *js) {
  for (size_t i = 0; i < len; i++) {
    if (t[i] != '"') continue;
    if (tether_lint__grow(&js->offs, &js->cap, js->n, sizeof *js->offs) != 0) return -1;
    js->offs[js->n++] = i;
    for (i++; i < len && t[i] != '"'; i++)
      if (t[i] == '\\') i++;
  }
  return 0;
}

/* Counts the strings of `node` (its value and, recursively, its children's keys and values) in
 * document order, starting at index k; returns the index after them. */
static size_t json_count(const cJSON *node, size_t k) {
  if (cJSON_IsString(node)) k++;
  for (const cJSON *ch = node->child; ch; ch = ch->next) {
    if (ch->string) k++;
    k = json_count(ch, k);
  }
  return k;
}

/* Does this argument stop the driver before linking? */
static int no_link_arg(const char *a, size_t n) {
  static const char *const stop[] = {"-c", "-S", "-E", "-fsyntax-only", "-M", "-MM", NULL};
  for (size_t i = 0; stop[i]; i++)
    if (strlen(stop[i]) == n && memcmp(stop[i], a, n) == 0) return 1;
  return 0;
}

static int command_links(const char *cmd) {
  const char *p = cmd;
  while (*p) {
    while (*p && excl_is_space(*p)) p++;
    const char *w = p;
    char q = 0;
    while (*p && (q || !excl_is_space(*p))) {
      if (q && *p == q)
        q = 0;
      else if (!q && (*p == '"' || *p == '\''))
        q = *p;
      p++;
    }
    if (p > w && no_link_arg(w, (size_t)(p - w))) return 0;
  }
  return 1;
}

int excl_check_compdb(excl_ctx *c) {
  const char *endp = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(c->text, c->len, &endp, 0);
  if (!root) {
    size_t off = endp && endp >= c->text ? (size_t)(endp - c->text) : 0;
    tether_lint__file_message(c->f, 1, "malformed JSON near byte %zu; not analysed", off);
    return 0;
  }
  json_strs js = {0};
  if (json_collect(c->text, c->len, &js) != 0) {
    cJSON_Delete(root);
    return -1;
  }
  if (!cJSON_IsArray(root)) {
    tether_lint__file_message(c->f, 1,
                              "not a compilation database (expected a JSON array); not "
                              "analysed");
  } else {
    size_t k = 0; /* index of the next string token */
    for (cJSON *ent = root->child; ent; ent = ent->next) {
      if (!cJSON_IsObject(ent)) {
        k = json_count(ent, k);
        continue;
      }
      for (cJSON *it = ent->child; it; it = it->next) {
        k++; /* the key */
        if (it->string && strcmp(it->string, "arguments") == 0 && cJSON_IsArray(it)) {
          int links = 1;
          for (cJSON *a = it->child; a; a = a->next)
            if (cJSON_IsString(a) && no_link_arg(a->valuestring, strlen(a->valuestring))) links = 0;
          for (cJSON *a = it->child; a; a = a->next) {
            if (cJSON_IsString(a) && links && k < js.n)
              excl_scan_value(c, a->valuestring, strlen(a->valuestring), EXCL_CTX_LINK, js.offs[k]);
            k = json_count(a, k);
          }
        } else {
          if (it->string && strcmp(it->string, "command") == 0 && cJSON_IsString(it) &&
              command_links(it->valuestring) && k < js.n)
            excl_scan_value(c, it->valuestring, strlen(it->valuestring), EXCL_CTX_LINK, js.offs[k]);
          k = json_count(it, k);
        }
      }
    }
  }
  free(js.offs);
  cJSON_Delete(root);
  return 0;
}
