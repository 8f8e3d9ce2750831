/* The tether-lint command line.
 *
 * Invariant: tether_lint__cli_parse reads only argv[1..argc-1], keeps pointers into argv (it copies
 * nothing it does not own), and turns every malformed command line into a one-line message and
 * -1; it never prints and never exits, so it can be fuzzed. */
#include "lint/lint.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void tether_lint__cli_usage(FILE *f) {
  fputs("usage: tether-lint [options] PATH...\n"
        "\n"
        "Checks C/C++ binding sources for raw MLIR handles used without a validity guard.\n"
        "PATHs are files or directories (walked recursively).\n"
        "\n"
        "options:\n"
        "  -p DIR                      read compile flags from DIR/compile_commands.json\n"
        "  --compile-commands FILE     read compile flags from FILE (a compile_commands.json)\n"
        "  --format text|json|sarif    output format (default: text)\n"
        "  --config FILE               configuration file (default: nearest .tether-lint\n"
        "                              upward from the first PATH)\n"
        "  --enable RULE[,RULE]        enable rules (all but direct-raw-return are on by default)\n"
        "  --disable RULE[,RULE]       disable rules\n"
        "  --root DIR                  directory SARIF URIs are relative to (default: the git\n"
        "                              top-level of the current directory, else the current\n"
        "                              directory)\n"
        "  -j N, --jobs N              analyse N translation units in parallel (default: 1)\n"
        "  --whole-program             the inputs are the whole program: report TypeIDs declared\n"
        "                              and defined nowhere in the run (implied by -p or\n"
        "                              --compile-commands with a directory PATH)\n"
        "  --cache-dir DIR             result cache folder (default: $XDG_CACHE_HOME/tether-lint,\n"
        "                              else ~/.cache/tether-lint)\n"
        "  --no-cache                  neither read nor write the result cache\n"
        "  --cache-stats               say on stderr how many translation units came from the\n"
        "                              cache\n"
        "  --max-file-size SIZE        skip files larger than SIZE (default: 64M)\n"
        "  --timeout SECONDS           give up on a translation unit after SECONDS (default:\n"
        "                              300; 0: no limit)\n"
        "  --worker-memory SIZE        address-space limit of a worker process (default: 4G)\n"
        "  --worker-stack SIZE         stack of the thread that parses (default: 1G)\n"
        "  --in-process                parse in the linter's own process (no crash containment;\n"
        "                              for debugging)\n"
        "  --list-rules                print the rules and exit\n"
        "  --list-profiles             print the effective profiles (config syntax) and exit\n"
        "  --version                   print the version and the libclang version and exit\n"
        "  -h, --help                  print this help and exit\n"
        "\n"
        "exit status: 0 no findings, 1 findings, 2 the tool could not do its job.\n",
        f);
}

/* Takes the value of an option given as "--opt VALUE", "--opt=VALUE" or (short) "-pVALUE". */
static int take_value(int argc, char **argv, int *i, const char *opt, size_t optlen,
                      const char **val, char *err, size_t errlen) {
  const char *a = argv[*i];
  if (a[optlen] == '=' && optlen > 2) {
    *val = a + optlen + 1;
  } else if (a[optlen] != '\0') {
    *val = a + optlen; /* -pDIR, -j4 */
  } else if (*i + 1 < argc) {
    *val = argv[++*i];
  } else {
    snprintf(err, errlen, "option '%s' needs a value", opt);
    return -1;
  }
  if (!**val) {
    snprintf(err, errlen, "option '%s' needs a non-empty value", opt);
    return -1;
  }
  return 0;
}

/* Matches "--name", "--name=..." (long) or "-x", "-xVALUE" (short). Returns the option length. */
static size_t match(const char *a, const char *name, int takes_value) {
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '\0') return n;
  if (!takes_value) return 0;
  if (name[1] == '-') return a[n] == '=' ? n : 0;
  return n;
}

static int add_rules(tether_lint__strlist *l, const char *val, const char *opt, char *err,
                     size_t errlen) {
  char buf[512];
  if (strlen(val) >= sizeof buf) {
    snprintf(err, errlen, "%s: value too long", opt);
    return -1;
  }
  strcpy(buf, val);
  char *save = NULL;
  int any = 0;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "all") != 0 && !tether_lint__rule_find(t, NULL)) {
      snprintf(err, errlen, "%s: unknown rule '%.100s' (see --list-rules)", opt, t);
      return -1;
    }
    if (tether_lint__strlist_add_unique(l, t) != 0) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    any = 1;
  }
  if (!any) {
    snprintf(err, errlen, "%s: no rule named", opt);
    return -1;
  }
  return 0;
}

void tether_lint__cli_free(tether_lint_options *o) {
  tether_lint__strlist_free(&o->key_args);
  tether_lint__strlist_free(&o->enable);
  tether_lint__strlist_free(&o->disable);
  tether_lint__strlist_free(&o->paths);
}

/* Options without a value. 1 when `a` is one. */
static int flag_option(const char *a, tether_lint_options *o, int *only_paths, int *keyed) {
  if (strcmp(a, "--") == 0) {
    *only_paths = 1;
    *keyed = 0;
  } else if (strcmp(a, "--no-cache") == 0) {
    o->no_cache = 1;
    *keyed = 0;
  } else if (strcmp(a, "--cache-stats") == 0) {
    o->cache_stats = 1;
    *keyed = 0;
  } else if (strcmp(a, "--in-process") == 0) {
    o->in_process = 1;
    *keyed = 0;
  } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
    o->action = TETHER_LINT_ACT_HELP;
  } else if (strcmp(a, "--version") == 0) {
    o->action = TETHER_LINT_ACT_VERSION;
  } else if (strcmp(a, "--list-rules") == 0) {
    o->action = TETHER_LINT_ACT_LIST_RULES;
  } else if (strcmp(a, "--list-profiles") == 0) {
    o->action = TETHER_LINT_ACT_LIST_PROFILES;
  } else if (strcmp(a, "--whole-program") == 0) {
    o->whole_program = 1;
  } else {
    return 0;
  }
  return 1;
}

/* A size option's value: at least `min` bytes. 0, or -1 with a message. */
static int size_value(const char *opt, const char *val, size_t min, const char *expected,
                      size_t *out, char *err, size_t errlen) {
  if (tether_lint__parse_size(val, out) == 0 && *out >= min) return 0;
  snprintf(err, errlen, "%s: expected %s, got '%.50s'", opt, expected, val);
  return -1;
}

/* A number option's value in [lo, hi]. 0, or -1 with a message. */
static int number_value(const char *opt, const char *val, long lo, long hi, const char *expected,
                        int *out, char *err, size_t errlen) {
  char *end = NULL;
  long v = strtol(val, &end, 10);
  if (*end || v < lo || v > hi) {
    snprintf(err, errlen, "%s: expected %s, got '%.50s'", opt, expected, val);
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* The limits of the run: --max-file-size, --worker-memory, --worker-stack, --timeout, -j. None of
 * them changes what one file's analysis produces (they are not in the cache key). 1 when argv[*i]
 * is one of them, 0 when not, -1 with a message. */
static int limit_option(int argc, char **argv, int *i, tether_lint_options *o, char *err,
                        size_t errlen) {
  const char *a = argv[*i], *val = NULL;
  size_t n;
  int rc;
  if ((n = match(a, "--max-file-size", 1))) {
    rc = take_value(argc, argv, i, "--max-file-size", n, &val, err, errlen) ||
         size_value("--max-file-size", val, 1, "a size such as 65536, 512K, 64M or 1G",
                    &o->max_file_size, err, errlen);
  } else if ((n = match(a, "--worker-memory", 1))) {
    rc = take_value(argc, argv, i, "--worker-memory", n, &val, err, errlen) ||
         size_value("--worker-memory", val, (size_t)64 << 20, "a size of at least 64M",
                    &o->worker_memory, err, errlen);
  } else if ((n = match(a, "--worker-stack", 1))) {
    rc = take_value(argc, argv, i, "--worker-stack", n, &val, err, errlen) ||
         size_value("--worker-stack", val, (size_t)64 << 10, "a size of at least 64K",
                    &o->worker_stack, err, errlen);
  } else if ((n = match(a, "--timeout", 1))) {
    rc = take_value(argc, argv, i, "--timeout", n, &val, err, errlen) ||
         number_value("--timeout", val, 0, 86400, "seconds from 0 to 86400", &o->timeout, err,
                      errlen);
  } else if ((n = match(a, "--jobs", 1)) || (n = match(a, "-j", 1))) {
    const char *opt = a[1] == '-' ? "--jobs" : "-j";
    rc = take_value(argc, argv, i, opt, n, &val, err, errlen) ||
         number_value(opt, val, 1, 256, "a number from 1 to 256", &o->jobs, err, errlen);
  } else {
    return 0;
  }
  return rc ? -1 : 1;
}

/* Options with a value that say what to read and where to write: --cache-dir,
 * --compile-commands, -p, --format, --config, --root, --enable, --disable. `*keyed` is cleared
 * for those that cannot change one file's analysis. 1 when argv[*i] is one of them, 0 when not,
 * -1 with a message. */
static int value_option(int argc, char **argv, int *i, tether_lint_options *o, int *keyed,
                        char *err, size_t errlen) {
  const char *a = argv[*i], *val = NULL;
  size_t n;
  static const struct {
    const char *name;
    size_t offset; /* of the `const char *` field in tether_lint_options */
  } paths[] = {
      {"--cache-dir", offsetof(tether_lint_options, cache_dir)},
      {"--compile-commands", offsetof(tether_lint_options, compile_db_file)},
      {"-p", offsetof(tether_lint_options, compile_db_dir)},
      {"--config", offsetof(tether_lint_options, config)},
      {"--root", offsetof(tether_lint_options, root)},
  };
  for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
    if (!(n = match(a, paths[k].name, 1))) continue;
    if (take_value(argc, argv, i, paths[k].name, n, &val, err, errlen)) return -1;
    *(const char **)((char *)o + paths[k].offset) = val;
    *keyed = 0;
    return 1;
  }
  if ((n = match(a, "--format", 1))) {
    if (take_value(argc, argv, i, "--format", n, &val, err, errlen)) return -1;
    *keyed = 0;
    if (strcmp(val, "text") == 0) {
      o->format = TETHER_LINT_FMT_TEXT;
    } else if (strcmp(val, "json") == 0) {
      o->format = TETHER_LINT_FMT_JSON;
    } else if (strcmp(val, "sarif") == 0) {
      o->format = TETHER_LINT_FMT_SARIF;
    } else {
      snprintf(err, errlen, "--format: unknown format '%.100s' (expected text, json or sarif)",
               val);
      return -1;
    }
    return 1;
  }
  int enable = (n = match(a, "--enable", 1)) != 0;
  if (enable || (n = match(a, "--disable", 1))) {
    const char *opt = enable ? "--enable" : "--disable";
    if (take_value(argc, argv, i, opt, n, &val, err, errlen) ||
        add_rules(enable ? &o->enable : &o->disable, val, opt, err, errlen))
      return -1;
    return 1;
  }
  return 0;
}

int tether_lint__cli_parse(int argc, char **argv, tether_lint_options *o, char *err,
                           size_t errlen) {
  memset(o, 0, sizeof *o);
  o->action = TETHER_LINT_ACT_LINT;
  o->format = TETHER_LINT_FMT_TEXT;
  o->timeout = -1;
  int only_paths = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int start = i;
    if (!a) break;
    if (only_paths || a[0] != '-' || strcmp(a, "-") == 0) {
      if (!*a) {
        snprintf(err, errlen, "empty path argument");
        return -1;
      }
      if (tether_lint__strlist_push(&o->paths, a) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
      }
      continue;
    }
    /* Options that cannot change what the analysis of one file produces are left out of the
     * cache key; any other option (a new one included) is in it. */
    int keyed = 1;
    int rc = flag_option(a, o, &only_paths, &keyed);
    if (!rc && (rc = limit_option(argc, argv, &i, o, err, errlen)) > 0) keyed = 0;
    if (!rc) rc = value_option(argc, argv, &i, o, &keyed, err, errlen);
    if (!rc) snprintf(err, errlen, "unknown option '%.100s' (see --help)", a);
    if (rc <= 0) return -1;
    for (int k = start; keyed && k <= i; k++)
      if (tether_lint__strlist_push(&o->key_args, argv[k]) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
      }
  }
  if (o->compile_db_dir && o->compile_db_file) {
    snprintf(err, errlen, "-p and --compile-commands cannot be used together");
    return -1;
  }
  if (o->action == TETHER_LINT_ACT_LINT && o->paths.n == 0) {
    snprintf(err, errlen, "no PATH given (see --help)");
    return -1;
  }
  return 0;
}
