/* The `.tether-lint` configuration file: parser, built-in profiles, merging.
 *
 * Invariant: the parser reads only the `len` bytes it is given (embedded NUL bytes are an
 * error, not a terminator), accepts or rejects a whole line at a time, and on any error leaves a
 * message "NAME:LINE: why" and returns -1; it never aborts. The built-in profiles are written in
 * the same syntax and go through the same parser, so what a user can write is exactly what the
 * built-ins use. */
#include "lint/lint.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char tether_lint__builtin_profiles[] =
    "# Upstream MLIR Python bindings (pybind11 era, LLVM 19 and older:\n"
    "# mlir/lib/Bindings/Python/IRModule.h and IRCore.cpp).\n"
    "[profile mlir-python]\n"
    "wrapper = PyOperation, PyBlock, PyRegion, PyValue\n"
    "# PyOperation::get() and its conversion operator call checkValid() themselves.\n"
    "guarded-accessor = PyOperation::get, PyOperation::operator MlirOperation\n"
    "# The `operation` member and PyBlock/PyRegion/PyValue::get() (and their conversion\n"
    "# operators) hand out the raw handle without any check.\n"
    "raw-field = PyOperation::operation, PyBlock::block, PyRegion::region, PyValue::value\n"
    "raw-accessor = PyBlock::get, PyRegion::get, PyRegion::operator MlirRegion\n"
    "raw-accessor = PyValue::get, PyValue::operator MlirValue\n"
    "# Each class has checkValid(), which throws when the owning operation is invalid.\n"
    "guard = PyOperation::checkValid, PyBlock::checkValid, PyRegion::checkValid\n"
    "guard = PyValue::checkValid\n"
    "valid-predicate = PyOperation::valid, PyOperation::isValid\n"
    "invalidator = PyOperation::erase\n"
    "# A block, region or value is valid exactly when its parent operation is: a guard on\n"
    "# `b.getParentOperation()` (or on the `parentOperation` member) guards `b`.\n"
    "parent = PyBlock::getParentOperation, PyBlock::parentOperation\n"
    "parent = PyRegion::getParentOperation, PyRegion::parentOperation\n"
    "parent = PyValue::getParentOperation, PyValue::parentOperation\n"
    "\n"
    "# Upstream MLIR Python bindings of LLVM 20 and later (nanobind era: the classes that\n"
    "# mlir/include/mlir/Bindings/Python/IRCore.h declares, used by IRCore.cpp and by\n"
    "# downstream projects). The four wrappers are as above; the collections and iterators\n"
    "# keep a raw handle next to the operation that owns it and check that operation.\n"
    "[profile mlir-python-nanobind]\n"
    "wrapper = PyOperation, PyBlock, PyRegion, PyValue\n"
    "wrapper = PyBlockList, PyOperationList, PyBlockIterator, PyOperationIterator\n"
    "wrapper = PyBlockArgumentList\n"
    "guarded-accessor = PyOperation::get, PyOperation::operator MlirOperation\n"
    "raw-field = PyOperation::operation, PyBlock::block, PyRegion::region, PyValue::value\n"
    "raw-field = PyBlockList::region, PyOperationList::block, PyBlockIterator::next\n"
    "raw-field = PyOperationIterator::next, PyBlockArgumentList::block\n"
    "raw-accessor = PyBlock::get, PyRegion::get, PyRegion::operator MlirRegion\n"
    "raw-accessor = PyValue::get, PyValue::operator MlirValue\n"
    "guard = PyOperation::checkValid, PyBlock::checkValid, PyRegion::checkValid\n"
    "guard = PyValue::checkValid\n"
    "valid-predicate = PyOperation::valid, PyOperation::isValid\n"
    "invalidator = PyOperation::erase\n"
    "parent = PyBlock::getParentOperation, PyBlock::parentOperation\n"
    "parent = PyRegion::getParentOperation, PyRegion::parentOperation\n"
    "parent = PyValue::getParentOperation, PyValue::parentOperation\n"
    "parent = PyBlockList::operation, PyOperationList::parentOperation\n"
    "parent = PyBlockIterator::operation, PyOperationIterator::parentOperation\n"
    "parent = PyBlockArgumentList::operation\n"
    "\n"
    "# tether's own C API (arena/tether.h): raw MLIR handles come out of status-returning\n"
    "# accessors; the guard is checking that status against TETHER_OK.\n"
    "[profile tether]\n"
    "wrapper = tether_op, tether_block, tether_region, tether_value\n"
    "status-accessor = tether_op_get(0, 1), tether_block_get(0, 1)\n"
    "status-accessor = tether_region_get(0, 1), tether_value_get(0, 1)\n"
    "ok-status = TETHER_OK\n";

static void profile_free(tether_lint_profile *p) {
  free(p->name);
  tether_lint__strlist_free(&p->wrappers);
  tether_lint__strlist_free(&p->raw_accessors);
  tether_lint__strlist_free(&p->raw_fields);
  tether_lint__strlist_free(&p->guarded_accessors);
  tether_lint__strlist_free(&p->guards);
  tether_lint__strlist_free(&p->predicates);
  tether_lint__strlist_free(&p->invalidators);
  tether_lint__strlist_free(&p->parents);
  tether_lint__strlist_free(&p->ok_status);
  for (size_t i = 0; i < p->nstatus; i++) free(p->status[i].name);
  free(p->status);
  memset(p, 0, sizeof *p);
}

void tether_lint__profile_free(tether_lint_profile *p) { profile_free(p); }

void tether_lint__config_free(tether_lint_config *cfg) {
  free(cfg->path);
  free(cfg->dir);
  tether_lint__strlist_free(&cfg->enable);
  tether_lint__strlist_free(&cfg->disable);
  tether_lint__strlist_free(&cfg->exclude);
  tether_lint__strlist_free(&cfg->flags);
  tether_lint__strlist_free(&cfg->extra_flags);
  tether_lint__strlist_free(&cfg->profiles_selected);
  tether_lint__strlist_free(&cfg->project_roots);
  tether_lint__strlist_free(&cfg->generated);
  free(cfg->mlir_cmake_dir);
  for (size_t i = 0; i < cfg->nprofiles; i++) profile_free(&cfg->profiles[i]);
  free(cfg->profiles);
  memset(cfg, 0, sizeof *cfg);
}

int tether_lint__config_init(tether_lint_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  char err[256];
  if (tether_lint__config_parse(cfg, "<built-in>", tether_lint__builtin_profiles,
                                sizeof tether_lint__builtin_profiles - 1, err, sizeof err) != 0)
    return -1;
  for (size_t i = 0; i < cfg->nprofiles; i++) cfg->profiles[i].builtin = 1;
  return 0;
}

static tether_lint_profile *profile_get(tether_lint_config *cfg, const char *name, int create) {
  for (size_t i = 0; i < cfg->nprofiles; i++)
    if (strcmp(cfg->profiles[i].name, name) == 0) return &cfg->profiles[i];
  if (!create) return NULL;
  tether_lint_profile *v = realloc(cfg->profiles, (cfg->nprofiles + 1) * sizeof *v);
  if (!v) return NULL;
  cfg->profiles = v;
  tether_lint_profile *p = &v[cfg->nprofiles];
  memset(p, 0, sizeof *p);
  p->name = tether_lint__strdup(name);
  if (!p->name) return NULL;
  cfg->nprofiles++;
  return p;
}

/* ---- the line parser ---------------------------------------------------------------------- */

typedef struct parser {
  tether_lint_config *cfg;
  const char *name;
  unsigned line;
  char *err;
  size_t errlen;
  tether_lint_profile *profile; /* current [profile X] section, NULL in [lint] */
  int in_section;
} parser;

static int fail(parser *ps, const char *fmt, const char *arg) {
  char msg[200];
  snprintf(msg, sizeof msg, fmt, arg ? arg : "");
  snprintf(ps->err, ps->errlen, "%s:%u: %s", ps->name, ps->line, msg);
  return -1;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
  return s;
}

static int is_ident_char(int c) { return isalnum((unsigned char)c) || c == '_'; }

/* A C/C++ identifier, possibly namespace-qualified ("ns::f"). */
static int valid_ident(const char *s) {
  if (!*s || isdigit((unsigned char)*s)) return 0;
  for (; *s; s++) {
    if (is_ident_char(*s)) continue;
    if (s[0] == ':' && s[1] == ':' && s[2] && is_ident_char(s[2])) {
      s++;
      continue;
    }
    return 0;
  }
  return 1;
}

/* "Class::member", "*::member", "Class::operator Type" or a bare function name. */
static int valid_entry(const char *s) {
  const char *sep = strstr(s, "::");
  if (!sep) return valid_ident(s);
  const char *member = sep + 2;
  while (strstr(member, "::")) member = strstr(member, "::") + 2;
  size_t clen = (size_t)(member - 2 - s);
  char cls[256];
  if (clen == 0 || clen >= sizeof cls) return 0;
  memcpy(cls, s, clen);
  cls[clen] = '\0';
  if (strcmp(cls, "*") != 0 && !valid_ident(cls)) return 0;
  if (strncmp(member, "operator ", 9) == 0) {
    const char *t = member + 9;
    if (!*t) return 0;
    for (; *t; t++)
      if (!is_ident_char(*t) && !strchr(" :*&<>,", *t)) return 0;
    return 1;
  }
  return valid_ident(member);
}

/* Splits a comma-separated value and hands each trimmed item to `add`. */
static int for_each_item(parser *ps, char *value, int (*add)(parser *, void *, char *),
                         void *target) {
  char *save = NULL;
  int any = 0;
  for (char *tok = strtok_r(value, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *item = trim(tok);
    if (!*item) return fail(ps, "empty item in a comma-separated list", NULL);
    if (add(ps, target, item) != 0) return -1;
    any = 1;
  }
  if (!any) return fail(ps, "missing value", NULL);
  return 0;
}

static int add_plain(parser *ps, void *target, char *item) {
  if (tether_lint__strlist_add_unique(target, item) != 0) return fail(ps, "out of memory", NULL);
  return 0;
}

static int add_rule(parser *ps, void *target, char *item) {
  if (strcmp(item, "all") != 0 && !tether_lint__rule_find(item, NULL))
    return fail(ps, "unknown rule '%s' (see --list-rules)", item);
  return add_plain(ps, target, item);
}

static int add_profile_name(parser *ps, void *target, char *item) {
  for (const char *c = item; *c; c++)
    if (!is_ident_char(*c) && *c != '-' && *c != '.')
      return fail(ps, "invalid profile name '%s'", item);
  return add_plain(ps, target, item);
}

static int add_ident(parser *ps, void *target, char *item) {
  if (!valid_ident(item)) return fail(ps, "invalid name '%s'", item);
  return add_plain(ps, target, item);
}

static int add_entry(parser *ps, void *target, char *item) {
  if (!valid_entry(item))
    return fail(ps, "invalid entry '%s' (expected Class::member, *::member or function)", item);
  return add_plain(ps, target, item);
}

static int add_status(parser *ps, void *target, char *item) {
  (void)target;
  /* name(W, O) */
  char *open = strchr(item, '(');
  char *close = strrchr(item, ')');
  if (!open || !close || close < open || close[1] != '\0')
    return fail(ps, "status-accessor '%s' must look like name(WRAPPER_ARG, OUT_ARG)", item);
  *open = '\0';
  char *name = trim(item);
  if (!valid_ident(name)) return fail(ps, "invalid status-accessor name '%s'", name);
  *close = '\0';
  char *args = open + 1;
  char *comma = strchr(args, ',');
  if (!comma) return fail(ps, "status-accessor '%s' needs two argument indexes", name);
  *comma = '\0';
  char *a = trim(args), *b = trim(comma + 1);
  char *end1 = NULL, *end2 = NULL;
  long w = strtol(a, &end1, 10), o = strtol(b, &end2, 10);
  if (!*a || !*b || *end1 || *end2 || w < 0 || o < 0 || w > 31 || o > 31 || w == o)
    return fail(ps, "status-accessor '%s': argument indexes must be distinct numbers 0..31", name);
  tether_lint_profile *p = ps->profile;
  for (size_t i = 0; i < p->nstatus; i++)
    if (strcmp(p->status[i].name, name) == 0) {
      p->status[i].wrapper_arg = (int)w;
      p->status[i].out_arg = (int)o;
      return 0;
    }
  tether_lint_status_accessor *v = realloc(p->status, (p->nstatus + 1) * sizeof *v);
  if (!v) return fail(ps, "out of memory", NULL);
  p->status = v;
  v[p->nstatus].name = tether_lint__strdup(name);
  if (!v[p->nstatus].name) return fail(ps, "out of memory", NULL);
  v[p->nstatus].wrapper_arg = (int)w;
  v[p->nstatus].out_arg = (int)o;
  p->nstatus++;
  return 0;
}

static int split_words(parser *ps, tether_lint__strlist *l, char *value) {
  char *save = NULL;
  int any = 0;
  for (char *w = strtok_r(value, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
    if (tether_lint__strlist_push(l, w) != 0) return fail(ps, "out of memory", NULL);
    any = 1;
  }
  return any ? 0 : fail(ps, "missing value", NULL);
}

static int parse_section(parser *ps, char *s) {
  size_t n = strlen(s);
  if (n < 2 || s[n - 1] != ']') return fail(ps, "malformed section header (missing ']')", NULL);
  s[n - 1] = '\0';
  char *name = trim(s + 1);
  ps->in_section = 1;
  if (strcmp(name, "lint") == 0) {
    ps->profile = NULL;
    return 0;
  }
  if (strncmp(name, "profile", 7) == 0 && (name[7] == ' ' || name[7] == '\t')) {
    char *pname = trim(name + 7);
    if (!*pname) return fail(ps, "[profile] needs a name: [profile NAME]", NULL);
    for (const char *c = pname; *c; c++)
      if (!is_ident_char(*c) && *c != '-' && *c != '.')
        return fail(ps, "invalid profile name '%s'", pname);
    ps->profile = profile_get(ps->cfg, pname, 1);
    if (!ps->profile) return fail(ps, "out of memory", NULL);
    return 0;
  }
  return fail(ps, "unknown section [%s] (expected [lint] or [profile NAME])", name);
}

static int parse_pair(parser *ps, char *key, char *value) {
  tether_lint_config *cfg = ps->cfg;
  if (!ps->in_section) return fail(ps, "'%s' outside a section ([lint] or [profile NAME])", key);
  if (!ps->profile) {
    if (strcmp(key, "enable") == 0) return for_each_item(ps, value, add_rule, &cfg->enable);
    if (strcmp(key, "disable") == 0) return for_each_item(ps, value, add_rule, &cfg->disable);
    if (strcmp(key, "exclude") == 0) return for_each_item(ps, value, add_plain, &cfg->exclude);
    if (strcmp(key, "profiles") == 0) {
      cfg->profiles_set = 1;
      return for_each_item(ps, value, add_profile_name, &cfg->profiles_selected);
    }
    if (strcmp(key, "flags") == 0) {
      cfg->flags_set = 1;
      return split_words(ps, &cfg->flags, value);
    }
    if (strcmp(key, "extra-flags") == 0) {
      return split_words(ps, &cfg->extra_flags, value);
    }
    if (strcmp(key, "mlir-cmake-dir") == 0) {
      free(cfg->mlir_cmake_dir);
      cfg->mlir_cmake_dir = tether_lint__strdup(trim(value));
      return cfg->mlir_cmake_dir ? 0 : fail(ps, "out of memory", NULL);
    }
    if (strcmp(key, "project-roots") == 0)
      return for_each_item(ps, value, add_plain, &cfg->project_roots);
    if (strcmp(key, "generated-headers") == 0)
      return for_each_item(ps, value, add_plain, &cfg->generated);
    if (strcmp(key, "system-headers") == 0) {
      char *v = trim(value);
      if (strcmp(v, "true") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "1") == 0)
        cfg->system_headers = 1;
      else if (strcmp(v, "false") == 0 || strcmp(v, "no") == 0 || strcmp(v, "0") == 0)
        cfg->system_headers = 0;
      else
        return fail(ps, "system-headers: expected true or false, not '%s'", v);
      return 0;
    }
    if (strcmp(key, "max-file-size") == 0) {
      char *v = trim(value);
      if (tether_lint__parse_size(v, &cfg->max_file_size) != 0)
        return fail(ps, "max-file-size: expected a size such as 65536, 512K, 64M or 1G, not '%s'",
                    v);
      return 0;
    }
    return fail(ps, "unknown key '%s' in [lint]", key);
  }
  tether_lint_profile *p = ps->profile;
  if (strcmp(key, "wrapper") == 0) return for_each_item(ps, value, add_ident, &p->wrappers);
  if (strcmp(key, "raw-accessor") == 0)
    return for_each_item(ps, value, add_entry, &p->raw_accessors);
  if (strcmp(key, "raw-field") == 0) return for_each_item(ps, value, add_entry, &p->raw_fields);
  if (strcmp(key, "guarded-accessor") == 0)
    return for_each_item(ps, value, add_entry, &p->guarded_accessors);
  if (strcmp(key, "guard") == 0) return for_each_item(ps, value, add_entry, &p->guards);
  if (strcmp(key, "valid-predicate") == 0)
    return for_each_item(ps, value, add_entry, &p->predicates);
  if (strcmp(key, "invalidator") == 0) return for_each_item(ps, value, add_entry, &p->invalidators);
  if (strcmp(key, "parent") == 0) return for_each_item(ps, value, add_entry, &p->parents);
  if (strcmp(key, "ok-status") == 0) return for_each_item(ps, value, add_ident, &p->ok_status);
  if (strcmp(key, "status-accessor") == 0) {
    /* Items contain commas inside parentheses: split on commas at depth 0. */
    int depth = 0, any = 0;
    char *start = value;
    for (char *c = value;; c++) {
      if (*c == '(') depth++;
      if (*c == ')') depth--;
      if ((*c == ',' && depth == 0) || *c == '\0') {
        int last = *c == '\0';
        *c = '\0';
        char *item = trim(start);
        if (!*item) return fail(ps, "empty item in a comma-separated list", NULL);
        if (add_status(ps, NULL, item) != 0) return -1;
        any = 1;
        if (last) break;
        start = c + 1;
      }
    }
    return any ? 0 : fail(ps, "missing value", NULL);
  }
  return fail(ps, "unknown key '%s' in a [profile] section", key);
}

int tether_lint__config_parse(tether_lint_config *cfg, const char *name, const char *text,
                              size_t len, char *err, size_t errlen) {
  parser ps = {cfg, name, 0, err, errlen, NULL, 0};
  if (errlen) err[0] = '\0';
  size_t pos = 0;
  while (pos < len) {
    ps.line++;
    size_t end = pos;
    while (end < len && text[end] != '\n' && text[end] != '\0') end++;
    if (end < len && text[end] == '\0') return fail(&ps, "NUL byte in the file", NULL);
    size_t n = end - pos;
    if (n > 4096) return fail(&ps, "line longer than 4096 bytes", NULL);
    char line[4097];
    memcpy(line, text + pos, n);
    line[n] = '\0';
    pos = end + 1;
    char *s = trim(line);
    if (!*s || *s == '#' || *s == ';') continue;
    if (*s == '[') {
      if (parse_section(&ps, s) != 0) return -1;
      continue;
    }
    char *eq = strchr(s, '=');
    if (!eq) return fail(&ps, "expected 'key = value', '[section]' or a # comment", NULL);
    *eq = '\0';
    char *key = trim(s), *value = trim(eq + 1);
    if (!*key) return fail(&ps, "missing key before '='", NULL);
    if (!*value) return fail(&ps, "missing value for '%s'", key);
    if (parse_pair(&ps, key, value) != 0) return -1;
  }
  return 0;
}

static int check_members(const tether_lint_profile *p, const tether_lint__strlist *l,
                         const char *what, char *err, size_t errlen) {
  for (size_t i = 0; i < l->n; i++) {
    const char *e = l->v[i];
    const char *sep = strstr(e, "::");
    if (!sep) continue;
    char cls[256];
    size_t clen = (size_t)(sep - e);
    if (clen >= sizeof cls) clen = sizeof cls - 1;
    memcpy(cls, e, clen);
    cls[clen] = '\0';
    if (strcmp(cls, "*") == 0 || tether_lint__strlist_has(&p->wrappers, cls)) continue;
    /* Namespace-qualified classes: the last component names the wrapper. */
    const char *last = strrchr(cls, ':');
    if (last && tether_lint__strlist_has(&p->wrappers, last + 1)) continue;
    snprintf(err, errlen,
             "profile '%s': %s '%s' names class '%s', which is not a wrapper of the profile",
             p->name, what, e, cls);
    return -1;
  }
  return 0;
}

int tether_lint__config_mlir_helpers(const tether_lint_config *cfg, char *out, size_t len) {
  const char *d = cfg->mlir_cmake_dir;
  if (!d) return 0;
  if (d[0] == '/' || !cfg->dir)
    snprintf(out, len, "%s/AddMLIRPython.cmake", d);
  else
    snprintf(out, len, "%s/%s/AddMLIRPython.cmake", cfg->dir, d);
  return 1;
}

int tether_lint__config_validate(const tether_lint_config *cfg, char *err, size_t errlen) {
  const char *where = cfg->path ? cfg->path : "<built-in>";
  for (size_t i = 0; i < cfg->profiles_selected.n; i++) {
    int found = 0;
    for (size_t j = 0; j < cfg->nprofiles; j++)
      if (strcmp(cfg->profiles[j].name, cfg->profiles_selected.v[i]) == 0) found = 1;
    if (!found) {
      snprintf(err, errlen, "%s: profiles: unknown profile '%s'", where,
               cfg->profiles_selected.v[i]);
      return -1;
    }
  }
  char helper[4096];
  if (tether_lint__config_mlir_helpers(cfg, helper, sizeof helper)) {
    FILE *fp = fopen(helper, "r");
    if (!fp) {
      snprintf(err, errlen, "%s: mlir-cmake-dir: %s has no readable AddMLIRPython.cmake", where,
               cfg->mlir_cmake_dir);
      return -1;
    }
    fclose(fp);
  }
  for (size_t j = 0; j < cfg->nprofiles; j++) {
    const tether_lint_profile *p = &cfg->profiles[j];
    char msg[400];
    if (check_members(p, &p->raw_accessors, "raw-accessor", msg, sizeof msg) ||
        check_members(p, &p->raw_fields, "raw-field", msg, sizeof msg) ||
        check_members(p, &p->guarded_accessors, "guarded-accessor", msg, sizeof msg) ||
        check_members(p, &p->guards, "guard", msg, sizeof msg) ||
        check_members(p, &p->predicates, "valid-predicate", msg, sizeof msg) ||
        check_members(p, &p->invalidators, "invalidator", msg, sizeof msg) ||
        check_members(p, &p->parents, "parent", msg, sizeof msg)) {
      snprintf(err, errlen, "%s: %s", where, msg);
      return -1;
    }
    if (p->nstatus && !p->ok_status.n) {
      snprintf(err, errlen, "%s: profile '%s' has status-accessor entries but no ok-status", where,
               p->name);
      return -1;
    }
  }
  return 0;
}

static int union_list(tether_lint__strlist *dst, const tether_lint__strlist *src) {
  for (size_t i = 0; i < src->n; i++)
    if (tether_lint__strlist_add_unique(dst, src->v[i]) != 0) return -1;
  return 0;
}

int tether_lint__profile_merge(const tether_lint_config *cfg, tether_lint_profile *out) {
  memset(out, 0, sizeof *out);
  out->name = tether_lint__strdup("<merged>");
  if (!out->name) return -1;
  for (size_t j = 0; j < cfg->nprofiles; j++) {
    const tether_lint_profile *p = &cfg->profiles[j];
    if (cfg->profiles_set && !tether_lint__strlist_has(&cfg->profiles_selected, p->name)) continue;
    if (union_list(&out->wrappers, &p->wrappers) ||
        union_list(&out->raw_accessors, &p->raw_accessors) ||
        union_list(&out->raw_fields, &p->raw_fields) ||
        union_list(&out->guarded_accessors, &p->guarded_accessors) ||
        union_list(&out->guards, &p->guards) || union_list(&out->predicates, &p->predicates) ||
        union_list(&out->invalidators, &p->invalidators) ||
        union_list(&out->parents, &p->parents) || union_list(&out->ok_status, &p->ok_status))
      return -1;
    for (size_t i = 0; i < p->nstatus; i++) {
      if (tether_lint__profile_status(out, p->status[i].name)) continue;
      tether_lint_status_accessor *v = realloc(out->status, (out->nstatus + 1) * sizeof *v);
      if (!v) return -1;
      out->status = v;
      v[out->nstatus] = p->status[i];
      v[out->nstatus].name = tether_lint__strdup(p->status[i].name);
      if (!v[out->nstatus].name) return -1;
      out->nstatus++;
    }
  }
  return 0;
}

int tether_lint__profile_match(const tether_lint__strlist *l, const char *cls, const char *member) {
  size_t cl = cls ? strlen(cls) : 0;
  for (size_t i = 0; i < l->n; i++) {
    const char *e = l->v[i];
    const char *sep = strstr(e, "::");
    if (!sep) {
      if (!cls && strcmp(e, member) == 0) return 1;
      continue;
    }
    /* The member part is after the last "::" that is not inside "operator ...". */
    const char *op = strstr(e, "::operator ");
    const char *m = op ? op + 2 : NULL;
    if (!m) {
      m = e;
      for (const char *t = strstr(e, "::"); t; t = strstr(t + 2, "::")) m = t + 2;
    }
    if (strcmp(m, member) != 0 || !cls) continue;
    size_t elen = (size_t)(m - 2 - e);
    if (elen == 1 && e[0] == '*') return 1;
    if (elen == cl && strncmp(e, cls, cl) == 0) return 1;
    /* "ns::Class::m" matches class "Class"; "Class::m" matches class "ns::Class". */
    if (elen > cl && strncmp(e + elen - cl, cls, cl) == 0 && e[elen - cl - 1] == ':') return 1;
    if (cl > elen && strncmp(cls + cl - elen, e, elen) == 0 && cls[cl - elen - 1] == ':') return 1;
  }
  return 0;
}

const tether_lint_status_accessor *tether_lint__profile_status(const tether_lint_profile *p,
                                                               const char *name) {
  for (size_t i = 0; i < p->nstatus; i++)
    if (strcmp(p->status[i].name, name) == 0) return &p->status[i];
  return NULL;
}

static void print_list(FILE *f, const char *key, const tether_lint__strlist *l) {
  if (!l->n) return;
  fprintf(f, "%s = ", key);
  for (size_t i = 0; i < l->n; i++) fprintf(f, "%s%s", i ? ", " : "", l->v[i]);
  fputc('\n', f);
}

void tether_lint__config_print_profiles(const tether_lint_config *cfg, FILE *f) {
  for (size_t j = 0; j < cfg->nprofiles; j++) {
    const tether_lint_profile *p = &cfg->profiles[j];
    int active = !cfg->profiles_set || tether_lint__strlist_has(&cfg->profiles_selected, p->name);
    fprintf(f, "%s[profile %s]\n# %s, %s\n", j ? "\n" : "", p->name,
            p->builtin ? "built-in" : "from the config file", active ? "active" : "inactive");
    print_list(f, "wrapper", &p->wrappers);
    print_list(f, "raw-accessor", &p->raw_accessors);
    print_list(f, "raw-field", &p->raw_fields);
    print_list(f, "guarded-accessor", &p->guarded_accessors);
    print_list(f, "guard", &p->guards);
    print_list(f, "valid-predicate", &p->predicates);
    print_list(f, "invalidator", &p->invalidators);
    print_list(f, "parent", &p->parents);
    for (size_t i = 0; i < p->nstatus; i++)
      fprintf(f, "status-accessor = %s(%d, %d)\n", p->status[i].name, p->status[i].wrapper_arg,
              p->status[i].out_arg);
    print_list(f, "ok-status", &p->ok_status);
  }
}
