/* Compilation databases and the compile-flag allow-list.
 *
 * Invariant: nothing a repository wrote (a compilation database, `flags`/`extra-flags` of a
 * .tether-lint, a response file) reaches libclang unless the allow-list below says it only changes
 * how the source is parsed: include paths, macros, language and standard, target, warnings,
 * language-feature -f flags. Flags that write files (-o, -M*, --serialize-diagnostics,
 * -ftime-trace, -save-temps, -fprofile-*), load code (-Xclang, -fplugin=, -load, -mllvm, -B) or
 * read other inputs behind the user's back (-include-pch, -ivfsoverlay, --config, -x ast,
 * modules) are dropped and listed for a note; unknown flags are dropped too. Response files are
 * read (never executed) with the safe reader, relative to the entry's directory. Every list here
 * grows as needed: there is no fixed-size argument array. */
#define _XOPEN_SOURCE 700
#include "lint/lint.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- splitting command lines ----------------------------------------------------------------- */

int tether_lint__split_command(const char *s, size_t len, int gnu, tether_lint__strlist *out) {
  tether_lint__buf w = {0};
  int in_word = 0;
  size_t i = 0;
  int rc = 0;
  while (i < len && rc == 0) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_word) {
        rc = tether_lint__strlist_push(out, w.p ? w.p : "");
        w.n = 0;
        if (w.p) w.p[0] = '\0';
        in_word = 0;
      }
      i++;
      continue;
    }
    in_word = 1;
    if (c == '\\') {
      if (i + 1 < len) {
        if (s[i + 1] != '\n') rc = tether_lint__buf_put(&w, s + i + 1, 1);
        i += 2;
      } else {
        i++;
      }
    } else if (c == '\'') {
      size_t j = i + 1;
      while (j < len && s[j] != '\'') j++;
      rc = tether_lint__buf_put(&w, s + i + 1, j - i - 1);
      i = j < len ? j + 1 : j;
    } else if (c == '"') {
      i++;
      while (i < len && s[i] != '"' && rc == 0) {
        if (s[i] == '\\' && i + 1 < len &&
            (gnu || s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$' || s[i + 1] == '`' ||
             s[i + 1] == '\n')) {
          if (s[i + 1] != '\n') rc = tether_lint__buf_put(&w, s + i + 1, 1);
          i += 2;
        } else {
          rc = tether_lint__buf_put(&w, s + i, 1);
          i++;
        }
      }
      if (i < len) i++; /* the closing quote; an unterminated one ends at the end of the text */
    } else {
      rc = tether_lint__buf_put(&w, s + i, 1);
      i++;
    }
    if (rc == 0 && !w.p) rc = tether_lint__buf_put(&w, "", 0);
  }
  if (rc == 0 && in_word) rc = tether_lint__strlist_push(out, w.p ? w.p : "");
  tether_lint__buf_free(&w);
  return rc ? -1 : 0;
}

static int has_ext(const char *path, const char *const *exts) {
  const char *b = tether_lint__base_name(path);
  const char *dot = strrchr(b, '.');
  if (!dot) return 0;
  for (; *exts; exts++)
    if (strcmp(dot, *exts) == 0) return 1;
  return 0;
}

static const char *const cxx_exts[] = {".cc",  ".cpp", ".cxx", ".c++", ".C",    ".cp",  ".CPP",
                                       ".hh",  ".hpp", ".hxx", ".h++", ".H",    ".ipp", ".tcc",
                                       ".inl", ".cu",  ".mm",  ".ixx", ".cppm", NULL};

/* ---- the allow-list ---------------------------------------------------------------------------
 */

enum { KEEP, IGNORE, DANGER, UNKNOWN };
enum {
  F_EXACT,         /* "-name" */
  F_SEP,           /* "-name" VALUE */
  F_JOINED,        /* "-nameVALUE" (the name includes any '=') */
  F_JOINED_OR_SEP, /* "-nameVALUE" or "-name" VALUE */
  F_EQ_OR_SEP,     /* "-name=VALUE" or "-name" VALUE */
  F_PREFIX,        /* anything starting with "-name" */
};

typedef struct flagdef {
  const char *name;
  unsigned char cls, form;
} flagdef;

/* Flags matched by name (the longest match wins). -f, -W, -m, -O, -g and -M flags not listed
 * here are classified by the rules in classify(). */
static const flagdef flags[] = {
    /* Include paths. */
    {"-I", KEEP, F_JOINED_OR_SEP},
    {"-isystem", KEEP, F_JOINED_OR_SEP},
    {"-iquote", KEEP, F_JOINED_OR_SEP},
    {"-idirafter", KEEP, F_JOINED_OR_SEP},
    {"-isysroot", KEEP, F_JOINED_OR_SEP},
    {"-iprefix", KEEP, F_JOINED_OR_SEP},
    {"-iwithprefix", KEEP, F_JOINED_OR_SEP},
    {"-iwithprefixbefore", KEEP, F_JOINED_OR_SEP},
    {"-isystem-after", KEEP, F_JOINED_OR_SEP},
    {"-cxx-isystem", KEEP, F_JOINED_OR_SEP},
    {"-iframework", KEEP, F_JOINED_OR_SEP},
    {"-F", KEEP, F_JOINED_OR_SEP},
    {"--sysroot", KEEP, F_EQ_OR_SEP},
    {"-nostdinc", KEEP, F_EXACT},
    {"-nostdinc++", KEEP, F_EXACT},
    {"-nostdlibinc", KEEP, F_EXACT},
    {"-nobuiltininc", KEEP, F_EXACT},
    {"-stdlib=", KEEP, F_JOINED},
    {"--gcc-toolchain", KEEP, F_EQ_OR_SEP},
    {"-gcc-toolchain", KEEP, F_SEP},
    {"--gcc-install-dir=", KEEP, F_JOINED},
    /* Macros. */
    {"-D", KEEP, F_JOINED_OR_SEP},
    {"-U", KEEP, F_JOINED_OR_SEP},
    {"-undef", KEEP, F_EXACT},
    {"-include", KEEP, F_SEP}, /* checked: only a regular file */
    {"-imacros", KEEP, F_SEP}, /* checked: only a regular file */
    /* Language and standard. */
    {"-std=", KEEP, F_JOINED},
    {"--std=", KEEP, F_JOINED},
    {"-x", KEEP, F_JOINED_OR_SEP}, /* checked: a source language, never "ast" or "pcm" */
    {"-ansi", KEEP, F_EXACT},
    {"-trigraphs", KEEP, F_EXACT},
    {"-pedantic", KEEP, F_EXACT},
    {"--pedantic", KEEP, F_EXACT},
    {"-pthread", KEEP, F_EXACT},
    {"-w", KEEP, F_EXACT},
    /* Target. */
    {"--target=", KEEP, F_JOINED},
    {"-target", KEEP, F_SEP},
    /* Expected in every compile command, meaningless when only parsing: dropped quietly. */
    {"-c", IGNORE, F_EXACT},
    {"-o", IGNORE, F_JOINED_OR_SEP},
    {"-S", IGNORE, F_EXACT},
    {"-E", IGNORE, F_EXACT},
    {"-pipe", IGNORE, F_EXACT},
    {"-v", IGNORE, F_EXACT},
    {"-###", IGNORE, F_EXACT},
    {"-Q", IGNORE, F_EXACT},
    {"-H", IGNORE, F_EXACT},
    {"-P", IGNORE, F_EXACT},
    {"-C", IGNORE, F_EXACT},
    {"-CC", IGNORE, F_EXACT},
    {"-dM", IGNORE, F_EXACT},
    {"-dD", IGNORE, F_EXACT},
    {"-shared", IGNORE, F_EXACT},
    {"-static", IGNORE, F_EXACT},
    {"-static-libgcc", IGNORE, F_EXACT},
    {"-static-libstdc++", IGNORE, F_EXACT},
    {"-rdynamic", IGNORE, F_EXACT},
    {"-s", IGNORE, F_EXACT},
    {"-pie", IGNORE, F_EXACT},
    {"-no-pie", IGNORE, F_EXACT},
    {"-nostdlib", IGNORE, F_EXACT},
    {"-nostdlib++", IGNORE, F_EXACT},
    {"-nodefaultlibs", IGNORE, F_EXACT},
    {"-nostartfiles", IGNORE, F_EXACT},
    {"-pedantic-errors", IGNORE, F_EXACT},
    {"-l", IGNORE, F_JOINED_OR_SEP},
    {"-L", IGNORE, F_JOINED_OR_SEP},
    {"-u", IGNORE, F_JOINED_OR_SEP},
    {"-T", IGNORE, F_JOINED_OR_SEP},
    {"-z", IGNORE, F_JOINED_OR_SEP},
    {"-e", IGNORE, F_SEP},
    {"-arch", IGNORE, F_SEP},
    {"--param", IGNORE, F_EQ_OR_SEP},
    {"-Xlinker", IGNORE, F_SEP},
    {"-Xassembler", IGNORE, F_SEP},
    {"-Xcuda-fatbinary", IGNORE, F_SEP},
    {"-Xcuda-ptxas", IGNORE, F_SEP},
    {"-Xopenmp-target", IGNORE, F_SEP},
    {"-Xopenmp-target=", IGNORE, F_JOINED},
    {"-rpath", IGNORE, F_SEP},
    {"-working-directory", IGNORE, F_EQ_OR_SEP}, /* tether-lint sets its own */
    {"--driver-mode=", IGNORE, F_JOINED},        /* the compiler name decides */
    {"-resource-dir", IGNORE, F_EQ_OR_SEP},
    {"--no-default-config", IGNORE, F_EXACT},
    {"-rtlib=", IGNORE, F_JOINED},
    {"-unwindlib=", IGNORE, F_JOINED},
    {"-time", IGNORE, F_EXACT},
    {"-p", IGNORE, F_EXACT},
    {"-pg", IGNORE, F_EXACT},
    {"-print-", IGNORE, F_PREFIX},
    {"--print-", IGNORE, F_PREFIX},
    /* They write files, load code, or read inputs other than sources and headers. */
    {"-M", DANGER, F_EXACT},
    {"-MM", DANGER, F_EXACT},
    {"-MD", DANGER, F_EXACT},
    {"-MMD", DANGER, F_EXACT},
    {"-MG", DANGER, F_EXACT},
    {"-MP", DANGER, F_EXACT},
    {"-MV", DANGER, F_EXACT},
    {"-MF", DANGER, F_JOINED_OR_SEP},
    {"-MT", DANGER, F_JOINED_OR_SEP},
    {"-MQ", DANGER, F_JOINED_OR_SEP},
    {"-MJ", DANGER, F_JOINED_OR_SEP},
    {"--write-dependencies", DANGER, F_EXACT},
    {"--write-user-dependencies", DANGER, F_EXACT},
    {"--user-dependencies", DANGER, F_EXACT},
    {"--dependencies", DANGER, F_EXACT},
    {"-dependency-file", DANGER, F_SEP},
    {"-dependency-dot", DANGER, F_SEP},
    {"--serialize-diagnostics", DANGER, F_EQ_OR_SEP},
    {"-serialize-diagnostics", DANGER, F_SEP},
    {"-save-temps", DANGER, F_PREFIX},
    {"--save-temps", DANGER, F_PREFIX},
    {"-save-stats", DANGER, F_PREFIX},
    {"--save-stats", DANGER, F_PREFIX},
    {"-Xclang", DANGER, F_SEP},
    {"-Xpreprocessor", DANGER, F_SEP},
    {"-Xanalyzer", DANGER, F_SEP},
    {"-Xarch_", DANGER, F_PREFIX}, /* takes the next argument too: handled in classify() */
    {"-mllvm", DANGER, F_SEP},
    {"-load", DANGER, F_SEP},
    {"-plugin", DANGER, F_SEP},
    {"-add-plugin", DANGER, F_SEP},
    {"-plugin-arg-", DANGER, F_PREFIX}, /* takes the next argument too */
    {"-B", DANGER, F_JOINED_OR_SEP},
    {"--prefix", DANGER, F_EQ_OR_SEP},
    {"--config", DANGER, F_EQ_OR_SEP},
    {"--config-system-dir=", DANGER, F_JOINED},
    {"--config-user-dir=", DANGER, F_JOINED},
    {"-include-pch", DANGER, F_SEP},
    {"-include-pth", DANGER, F_SEP},
    {"-ivfsoverlay", DANGER, F_JOINED_OR_SEP},
    {"-cc1", DANGER, F_EXACT},
    {"-cc1as", DANGER, F_EXACT},
    {"--analyze", DANGER, F_EXACT},
    {"--analyzer-output", DANGER, F_SEP},
    {"-emit-", DANGER, F_PREFIX},
    {"-module-file-info", DANGER, F_EXACT},
    {"--precompile", DANGER, F_EXACT},
    {"-ftime-trace", DANGER, F_PREFIX},
};

/* -f flags (written without "-f"/"-fno-") that change how a source is parsed or which macros are
 * predefined. A trailing '=' means "this prefix, with a value". */
static const char *const f_keep[] = {"exceptions",
                                     "cxx-exceptions",
                                     "objc-exceptions",
                                     "rtti",
                                     "rtti-data",
                                     "ms-extensions",
                                     "ms-compatibility",
                                     "ms-compatibility-version=",
                                     "msc-version=",
                                     "ms-volatile",
                                     "delayed-template-parsing",
                                     "char8_t",
                                     "coroutines",
                                     "coroutines-ts",
                                     "concepts-ts",
                                     "openmp",
                                     "openmp=",
                                     "openmp-simd",
                                     "openmp-version=",
                                     "blocks",
                                     "signed-char",
                                     "unsigned-char",
                                     "builtin",
                                     "builtin-",
                                     "gnu-keywords",
                                     "asm",
                                     "gnu89-inline",
                                     "short-wchar",
                                     "short-enums",
                                     "trigraphs",
                                     "dollars-in-identifiers",
                                     "digraphs",
                                     "operator-names",
                                     "access-control",
                                     "sized-deallocation",
                                     "aligned-allocation",
                                     "aligned-new",
                                     "aligned-new=",
                                     "new-alignment=",
                                     "threadsafe-statics",
                                     "declspec",
                                     "borland-extensions",
                                     "pascal-strings",
                                     "gnu-inline-asm",
                                     "wchar-type=",
                                     "signed-wchar",
                                     "input-charset=",
                                     "exec-charset=",
                                     "extended-identifiers",
                                     "constexpr-depth=",
                                     "constexpr-steps=",
                                     "constexpr-backtrace-limit=",
                                     "template-depth=",
                                     "bracket-depth=",
                                     "template-backtrace-limit=",
                                     "macro-backtrace-limit=",
                                     "permissive",
                                     "heinous-gnu-extensions",
                                     "elide-constructors",
                                     "freestanding",
                                     "hosted",
                                     "pic",
                                     "PIC",
                                     "pie",
                                     "PIE",
                                     "stack-protector",
                                     "stack-protector-all",
                                     "stack-protector-strong",
                                     "stack-protector-explicit",
                                     "sanitize=",
                                     "fast-math",
                                     "finite-math-only",
                                     "math-errno",
                                     "cf-protection",
                                     "cf-protection=",
                                     "gnuc-version=",
                                     "experimental-library",
                                     "lax-vector-conversions",
                                     "lax-vector-conversions=",
                                     "strict-flex-arrays=",
                                     "zvector",
                                     "altivec",
                                     "objc-arc",
                                     "objc-runtime=",
                                     "macro-prefix-map=",
                                     "file-prefix-map=",
                                     "gnu-mode",
                                     "ms-kernel",
                                     "relaxed-template-template-args",
                                     "char8-t",
                                     "double-square-bracket-attributes",
                                     "apple-pragma-pack",
                                     "pack-struct=",
                                     "max-type-align=",
                                     "fixed-point",
                                     "emulated-tls",
                                     "gnu-runtime",
                                     "next-runtime",
                                     "objc-gc",
                                     "reflection",
                                     "cuda-allow-variadic-functions",
                                     "unsafe-math-optimizations",
                                     "associative-math",
                                     "reciprocal-math",
                                     "signed-zeros",
                                     "honor-nans",
                                     "honor-infinities",
                                     "rounding-math",
                                     "wrapv",
                                     "trapv",
                                     "strict-overflow",
                                     "strict-aliasing",
                                     "visibility=",
                                     "visibility-inlines-hidden",
                                     "common",
                                     "strict-enums",
                                     "assume-sane-operator-new"};

/* -f flags dropped with a note: they write files, load code or read other inputs. */
static const char *const f_danger[] = {"plugin=",
                                       "plugin-arg-",
                                       "pass-plugin=",
                                       "profile-",
                                       "coverage-",
                                       "test-coverage",
                                       "cs-profile-",
                                       "memory-profile",
                                       "modules",
                                       "module-",
                                       "prebuilt-",
                                       "implicit-module",
                                       "implicit-modules",
                                       "cxx-modules",
                                       "builtin-module-map",
                                       "crash-diagnostics",
                                       "time-trace",
                                       "save-optimization-record",
                                       "optimization-record-",
                                       "proc-stat-report",
                                       "dump-",
                                       "embed-bitcode",
                                       "stack-usage",
                                       "callgraph-info",
                                       "opt-info",
                                       "compare-debug",
                                       "xray-",
                                       "build-session-file",
                                       "sanitize-blacklist",
                                       "sanitize-ignorelist",
                                       "sanitize-system-ignorelist",
                                       "sanitize-coverage-allowlist",
                                       "sanitize-coverage-ignorelist",
                                       "sanitize-coverage-blacklist",
                                       "sanitize-coverage-whitelist",
                                       "auto-profile",
                                       "record-marker",
                                       "apinotes-cache-path"};

/* Names matched exactly (no '=') or as a prefix (with a trailing '=' or '-'). */
static int name_in(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(list[i]);
    char last = list[i][l - 1];
    if (last == '=' || last == '-') {
      if (strncmp(name, list[i], l) == 0) return 1;
    } else if (strcmp(name, list[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

static int f_class(const char *arg) {
  const char *name = arg + 2; /* after "-f" */
  int negated = strncmp(name, "no-", 3) == 0;
  const char *base = negated ? name + 3 : name;
  size_t nd = sizeof f_danger / sizeof f_danger[0];
  /* Prefix families that must never get through, whatever follows the prefix. */
  static const char *const danger_prefix[] = {
      "modules", "profile",       "plugin",
      "xray",    "time-trace",    "crash-diagnostics",
      "dump-",   "embed-bitcode", "save-optimization-record",
      "coverage"};
  for (size_t i = 0; i < sizeof danger_prefix / sizeof danger_prefix[0]; i++)
    if (strncmp(base, danger_prefix[i], strlen(danger_prefix[i])) == 0)
      return negated ? IGNORE : DANGER;
  if (name_in(base, f_danger, nd)) return negated ? IGNORE : DANGER;
  if (strncmp(base, "sanitize", 8) == 0 && strstr(base, "list=")) return DANGER;
  if (name_in(base, f_keep, sizeof f_keep / sizeof f_keep[0])) return KEEP;
  /* The rest is about code generation, debug information or diagnostics' looks: nothing a
   * parse needs. Drop it quietly when it is a well-known family, else say so. */
  static const char *const quiet_prefix[] = {"diagnostics",
                                             "color-diagnostics",
                                             "caret-diagnostics",
                                             "show-",
                                             "message-length",
                                             "ansi-escape-codes",
                                             "spell-checking",
                                             "omit-frame-pointer",
                                             "function-sections",
                                             "data-sections",
                                             "unique-section-names",
                                             "lto",
                                             "thin-lto",
                                             "whole-program-vtables",
                                             "split-lto-unit",
                                             "use-ld=",
                                             "use-linker-plugin",
                                             "ident",
                                             "plt",
                                             "semantic-interposition",
                                             "stack-clash-protection",
                                             "zero-initialized-in-bss",
                                             "asynchronous-unwind-tables",
                                             "unwind-tables",
                                             "inline",
                                             "unroll-loops",
                                             "vectorize",
                                             "slp-vectorize",
                                             "tree-",
                                             "ipa-",
                                             "optimize-sibling-calls",
                                             "merge-all-constants",
                                             "jump-tables",
                                             "trivial-auto-var-init",
                                             "ms-runtime-lib",
                                             "debug-",
                                             "dwarf",
                                             "standalone-debug",
                                             "eliminate-unused-debug",
                                             "limit-debug-info",
                                             "record-command-line",
                                             "record-gcc-switches",
                                             "keep-inline-functions",
                                             "keep-static-consts",
                                             "sanitize",
                                             "max-errors",
                                             "error-limit",
                                             "syntax-only",
                                             "directives-only",
                                             "time-report",
                                             "verbose-asm",
                                             "strict-vtable-pointers",
                                             "delete-null-pointer-checks",
                                             "split-dwarf",
                                             "exceptions-",
                                             "cxx-static-destructors",
                                             "pch-",
                                             "PIC-",
                                             "addrsig",
                                             "align-",
                                             "fat-lto-objects",
                                             "gnu-unique",
                                             "stack-check",
                                             "instrument-functions",
                                             "finstrument",
                                             "reorder-",
                                             "schedule-",
                                             "gcse",
                                             "peel-loops",
                                             "prefetch-loop-arrays",
                                             "builtin-module",
                                             "apinotes",
                                             "experimental-",
                                             "emit-",
                                             "aligned-",
                                             "coverage-compilation-dir",
                                             "working-directory",
                                             "no-integrated-as",
                                             "integrated-as",
                                             "integrated-cc1",
                                             "pcc-struct-return",
                                             "reg-struct-return",
                                             "fine-grained",
                                             "data-",
                                             "threadsafe",
                                             "elide-type",
                                             "template-",
                                             "constexpr-",
                                             "ms-",
                                             "gnu-",
                                             "sized-",
                                             "char",
                                             "split-stack",
                                             "cx-",
                                             "fp-",
                                             "float-",
                                             "excess-precision",
                                             "finite-",
                                             "approx-",
                                             "protect-parens",
                                             "hip-",
                                             "gpu-",
                                             "cuda-",
                                             "openmp-",
                                             "offload-"};
  for (size_t i = 0; i < sizeof quiet_prefix / sizeof quiet_prefix[0]; i++)
    if (strncmp(base, quiet_prefix[i], strlen(quiet_prefix[i])) == 0) return IGNORE;
  return UNKNOWN;
}

/* Source languages -x may select; anything else ("ast", "pcm", "ir", "precompiled-header") loads
 * a file that is not source. */
static int x_ok(const char *v) {
  static const char *const langs[] = {"c",
                                      "c++",
                                      "c-header",
                                      "c++-header",
                                      "objective-c",
                                      "objective-c++",
                                      "objective-c-header",
                                      "objective-c++-header",
                                      "cuda",
                                      "hip",
                                      "cl",
                                      "c++-user-header",
                                      "c++-system-header",
                                      "none",
                                      NULL};
  for (const char *const *l = langs; *l; l++)
    if (strcmp(v, *l) == 0) return 1;
  return 0;
}

/* Classifies argv[i]: returns the class and how many arguments it spans (1 or 2), and where its
 * value is (NULL when it has none). */
static int classify(const char *const *argv, size_t argc, size_t i, size_t *span,
                    const char **value, const flagdef **def) {
  const char *a = argv[i];
  *span = 1;
  *value = NULL;
  *def = NULL;
  const flagdef *best = NULL;
  size_t best_len = 0;
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) {
    const flagdef *d = &flags[k];
    size_t l = strlen(d->name);
    if (strncmp(a, d->name, l) != 0) continue;
    int ok = 0;
    switch (d->form) {
    case F_EXACT:
      ok = a[l] == '\0';
      break;
    case F_SEP:
      ok = a[l] == '\0';
      break;
    case F_JOINED:
      ok = 1;
      break;
    case F_JOINED_OR_SEP:
      ok = 1;
      break;
    case F_EQ_OR_SEP:
      ok = a[l] == '\0' || a[l] == '=';
      break;
    case F_PREFIX:
      ok = 1;
      break;
    }
    if (ok && l > best_len) {
      best = d;
      best_len = l;
    }
  }
  if (best) {
    *def = best;
    size_t l = best_len;
    switch (best->form) {
    case F_SEP:
      if (i + 1 < argc) {
        *span = 2;
        *value = argv[i + 1];
      }
      break;
    case F_JOINED:
      *value = a + l;
      break;
    case F_JOINED_OR_SEP:
      if (a[l]) {
        *value = a + l;
      } else if (i + 1 < argc) {
        *span = 2;
        *value = argv[i + 1];
      }
      break;
    case F_EQ_OR_SEP:
      if (a[l] == '=') {
        *value = a + l + 1;
      } else if (i + 1 < argc) {
        *span = 2;
        *value = argv[i + 1];
      }
      break;
    case F_PREFIX:
      /* -Xarch_<arch> FLAG and -plugin-arg-<name> ARG take the next argument. */
      if ((strcmp(best->name, "-Xarch_") == 0 || strcmp(best->name, "-plugin-arg-") == 0) &&
          i + 1 < argc)
        *span = 2;
      break;
    }
    if ((best->form == F_SEP || best->form == F_JOINED_OR_SEP || best->form == F_EQ_OR_SEP) &&
        !*value && best->cls == KEEP)
      return IGNORE; /* a flag that needs a value, at the end: meaningless */
    return best->cls;
  }
  if (a[1] == 'f') return f_class(a);
  if (a[1] == 'W') {
    if (strncmp(a, "-Wl,", 4) == 0 || strncmp(a, "-Wa,", 4) == 0) return IGNORE;
    if (strncmp(a, "-Wp,", 4) == 0) return DANGER; /* preprocessor pass-through: -Wp,-MD,FILE */
    if (strcmp(a, "-Werror") == 0 || strncmp(a, "-Werror=", 8) == 0 ||
        strcmp(a, "-Wfatal-errors") == 0)
      return IGNORE; /* they would cut the parse short or turn warnings into errors */
    return KEEP;
  }
  if (a[1] == 'm') return KEEP; /* -m32, -m64, -march=, -mavx2, ... (-mllvm is listed above) */
  if (a[1] == 'O') return KEEP; /* __OPTIMIZE__ and friends */
  if (a[1] == 'g') return IGNORE;
  if (a[1] == 'M') return DANGER;
  return UNKNOWN;
}

void tether_lint__flagset_free(tether_lint__flagset *fs) {
  tether_lint__strlist_free(&fs->args);
  tether_lint__strlist_free(&fs->danger);
  tether_lint__strlist_free(&fs->unknown);
  tether_lint__strlist_free(&fs->problems);
  fs->has_x = 0;
}

enum { RSP_MAX_DEPTH = 16, RSP_MAX_ARGS = 1 << 20 };

/* Appends argv to `out`, replacing each @FILE by the words of FILE (recursively). */
static int expand_rsp(const char *const *argv, size_t argc, const char *cwd, int depth,
                      tether_lint__strlist *out, tether_lint__flagset *fs) {
  for (size_t i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (out->n >= RSP_MAX_ARGS) {
      tether_lint__buf m = {0};
      tether_lint__buf_printf(
          &m,
          "more than %d compile arguments (response files nested too deep?); the "
          "rest dropped",
          RSP_MAX_ARGS);
      if (m.p) tether_lint__strlist_add_unique(&fs->problems, m.p);
      tether_lint__buf_free(&m);
      return 0;
    }
    if (a[0] != '@' || !a[1]) {
      if (tether_lint__strlist_push(out, a) != 0) return -1;
      continue;
    }
    char *path = tether_lint__path_join_norm(cwd, a + 1);
    if (!path) return -1;
    tether_lint__buf m = {0};
    if (depth >= RSP_MAX_DEPTH) {
      tether_lint__buf_printf(&m, "response file %s: nested deeper than %d levels, not read", path,
                              RSP_MAX_DEPTH);
    } else {
      char *text = NULL;
      size_t len = 0;
      int e = tether_lint__read_file(path, &text, &len);
      if (e) {
        tether_lint__buf_printf(&m, "response file %s: %s; its arguments dropped", path,
                                tether_lint__read_strerror(e));
      } else {
        tether_lint__strlist words = {0};
        int rc = tether_lint__split_command(text, len, 1, &words);
        free(text);
        if (rc == 0)
          rc = expand_rsp((const char *const *)words.v, words.n, cwd, depth + 1, out, fs);
        tether_lint__strlist_free(&words);
        if (rc != 0) {
          free(path);
          return -1;
        }
      }
    }
    if (m.p) tether_lint__strlist_add_unique(&fs->problems, m.p);
    tether_lint__buf_free(&m);
    free(path);
  }
  return 0;
}

static int push_span(tether_lint__strlist *l, const char *const *argv, size_t i, size_t span) {
  if (span == 1) return tether_lint__strlist_push(l, argv[i]);
  tether_lint__buf b = {0};
  int rc = tether_lint__buf_printf(&b, "%s %s", argv[i], argv[i + 1]);
  if (rc == 0) rc = tether_lint__strlist_push(l, b.p);
  tether_lint__buf_free(&b);
  return rc;
}

int tether_lint__flags_filter(const char *const *in, size_t inc, const char *cwd,
                              tether_lint__flagset *fs) {
  tether_lint__strlist all = {0};
  if (expand_rsp(in, inc, cwd, 0, &all, fs) != 0) {
    tether_lint__strlist_free(&all);
    return -1;
  }
  const char *const *argv = (const char *const *)all.v;
  size_t argc = all.n;
  int rc = 0;
  int only_inputs = 0;
  for (size_t i = 0; i < argc && rc == 0;) {
    const char *a = argv[i];
    if (only_inputs || a[0] != '-' || a[1] == '\0') {
      i++; /* an input (the source itself, other sources, objects, libraries): not passed */
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_inputs = 1;
      i++;
      continue;
    }
    size_t span;
    const char *value;
    const flagdef *def;
    int cls = classify(argv, argc, i, &span, &value, &def);
    if (cls == KEEP && def &&
        (strcmp(def->name, "-include") == 0 || strcmp(def->name, "-imacros") == 0)) {
      char *p = tether_lint__path_join_norm(cwd, value);
      int e = p ? tether_lint__check_regular(p, NULL) : ENOMEM;
      if (e) {
        tether_lint__buf m = {0};
        tether_lint__buf_printf(&m, "%s %s: %s; dropped", def->name, value,
                                tether_lint__read_strerror(e));
        if (m.p) rc = tether_lint__strlist_add_unique(&fs->problems, m.p);
        tether_lint__buf_free(&m);
        cls = IGNORE;
      }
      free(p);
    }
    if (cls == KEEP && def && strcmp(def->name, "-x") == 0) {
      if (!x_ok(value))
        cls = DANGER;
      else
        fs->has_x = 1;
    }
    if (rc == 0) {
      if (cls == KEEP) {
        rc = tether_lint__strlist_push(&fs->args, argv[i]);
        if (rc == 0 && span == 2) rc = tether_lint__strlist_push(&fs->args, argv[i + 1]);
      } else if (cls == DANGER) {
        rc = push_span(&fs->danger, argv, i, span);
      } else if (cls == UNKNOWN) {
        rc = push_span(&fs->unknown, argv, i, span);
      }
    }
    i += span;
  }
  tether_lint__strlist_free(&all);
  return rc ? -1 : 0;
}

/* Appends the note about what was dropped (nothing when nothing was). */
int tether_lint__flagset_note(const tether_lint__flagset *fs, tether_lint__buf *out) {
  enum { SHOW = 40 };
  int rc = 0;
  const tether_lint__strlist *lists[2] = {&fs->danger, &fs->unknown};
  const char *what[2] = {"they write files, load code or read other inputs",
                         "not on the allow-list"};
  int any = 0;
  for (int k = 0; k < 2; k++) {
    const tether_lint__strlist *l = lists[k];
    if (!l->n) continue;
    rc |= tether_lint__buf_printf(out, "%s%s: ", any ? "; " : "compile flags dropped (", what[k]);
    tether_lint__strlist uniq = {0};
    for (size_t i = 0; i < l->n; i++) tether_lint__strlist_add_unique(&uniq, l->v[i]);
    for (size_t i = 0; i < uniq.n && i < SHOW; i++)
      rc |= tether_lint__buf_printf(out, "%s%s", i ? " " : "", uniq.v[i]);
    if (uniq.n > SHOW) rc |= tether_lint__buf_printf(out, " and %zu more", uniq.n - SHOW);
    tether_lint__strlist_free(&uniq);
    any = 1;
  }
  if (any) rc |= tether_lint__buf_puts(out, ")");
  for (size_t i = 0; i < fs->problems.n; i++)
    rc |= tether_lint__buf_printf(out, "%s%s", out->n ? "; " : "", fs->problems.v[i]);
  return rc ? -1 : 0;
}

/* ---- the database -----------------------------------------------------------------------------
 */

typedef struct cdb_entry {
  char *dir;  /* absolute working directory */
  char *file; /* absolute, lexically normalized */
  char *real; /* realpath of file, or `file` when it does not exist */
  tether_lint__strlist argv;
  size_t index;
} cdb_entry;

struct tether_lint__cdb {
  char *path;
  cdb_entry *v;
  size_t n;
  size_t *order; /* indices sorted by (real, index) */
};

static const cdb_entry *sort_base;
static int order_cmp(const void *pa, const void *pb) {
  const cdb_entry *a = &sort_base[*(const size_t *)pa], *b = &sort_base[*(const size_t *)pb];
  int c = strcmp(a->real, b->real);
  if (c) return c;
  return a->index < b->index ? -1 : a->index > b->index;
}

void tether_lint__cdb_free(tether_lint__cdb *db) {
  if (!db) return;
  for (size_t i = 0; i < db->n; i++) {
    free(db->v[i].dir);
    free(db->v[i].file);
    free(db->v[i].real);
    tether_lint__strlist_free(&db->v[i].argv);
  }
  free(db->v);
  free(db->order);
  free(db->path);
  free(db);
}

int tether_lint__cdb_load(const char *file, tether_lint__cdb **out, char *err, size_t errlen) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  int e = tether_lint__read_file(file, &text, &len);
  if (e) {
    snprintf(err, errlen, "cannot read compilation database %s: %s", file,
             tether_lint__read_strerror(e));
    return -1;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    snprintf(err, errlen, "malformed compilation database %s: invalid JSON near byte %zu", file,
             off);
    free(text);
    return -1;
  }
  free(text);
  if (!cJSON_IsArray(root)) {
    snprintf(err, errlen, "malformed compilation database %s: expected a JSON array of entries",
             file);
    cJSON_Delete(root);
    return -1;
  }
  tether_lint__cdb *db = calloc(1, sizeof *db);
  char abs[PATH_MAX];
  char *dbdir = NULL;
  if (!db) goto oom;
  db->path = tether_lint__strdup(file);
  dbdir = tether_lint__dir_name(realpath(file, abs) ? abs : file);
  if (!db->path || !dbdir) goto oom;
  size_t count = (size_t)cJSON_GetArraySize(root);
  db->v = calloc(count ? count : 1, sizeof *db->v);
  if (!db->v) goto oom;
  size_t i = 0;
  for (cJSON *it = root->child; it; it = it->next, i++) {
    const char *why = NULL;
    cJSON *dir = cJSON_GetObjectItemCaseSensitive(it, "directory");
    cJSON *fil = cJSON_GetObjectItemCaseSensitive(it, "file");
    cJSON *cmd = cJSON_GetObjectItemCaseSensitive(it, "command");
    cJSON *args = cJSON_GetObjectItemCaseSensitive(it, "arguments");
    if (!cJSON_IsObject(it))
      why = "is not an object";
    else if (!cJSON_IsString(dir))
      why = "has no \"directory\" string";
    else if (!cJSON_IsString(fil))
      why = "has no \"file\" string";
    else if (!cJSON_IsString(cmd) && !cJSON_IsArray(args))
      why = "has neither \"command\" nor \"arguments\"";
    else if (cJSON_IsArray(args)) {
      for (cJSON *a = args->child; a && !why; a = a->next)
        if (!cJSON_IsString(a)) why = "has an \"arguments\" element that is not a string";
    }
    if (why) {
      snprintf(err, errlen, "malformed compilation database %s: entry %zu %s", file, i, why);
      goto fail;
    }
    cdb_entry *en = &db->v[db->n++];
    en->index = i;
    /* "directory" relative to the database's own folder; "file" relative to "directory". */
    en->dir = tether_lint__path_join_norm(dbdir, dir->valuestring);
    if (!en->dir) goto oom;
    en->file = tether_lint__path_join_norm(en->dir, fil->valuestring);
    if (!en->file) goto oom;
    en->real = tether_lint__strdup(realpath(en->file, abs) ? abs : en->file);
    if (!en->real) goto oom;
    if (cJSON_IsArray(args)) {
      for (cJSON *a = args->child; a; a = a->next)
        if (tether_lint__strlist_push(&en->argv, a->valuestring) != 0) goto oom;
    } else if (tether_lint__split_command(cmd->valuestring, strlen(cmd->valuestring), 0,
                                          &en->argv) != 0) {
      goto oom;
    }
  }
  db->order = malloc((db->n ? db->n : 1) * sizeof *db->order);
  if (!db->order) goto oom;
  for (size_t k = 0; k < db->n; k++) db->order[k] = k;
  sort_base = db->v;
  qsort(db->order, db->n, sizeof *db->order, order_cmp);
  sort_base = NULL;
  free(dbdir);
  cJSON_Delete(root);
  *out = db;
  return 0;
oom:
  snprintf(err, errlen, "out of memory reading %s", file);
fail:
  free(dbdir);
  cJSON_Delete(root);
  tether_lint__cdb_free(db);
  return -1;
}

/* First position in `order` whose real path is >= key (or, with prefix, starts past it). */
static size_t lower_bound(const tether_lint__cdb *db, const char *key) {
  size_t lo = 0, hi = db->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(db->v[db->order[mid]].real, key) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int is_wrapper(const char *base) {
  static const char *const w[] = {"ccache",     "sccache",  "distcc", "icecc",
                                  "buildcache", "cachecc1", NULL};
  for (const char *const *p = w; *p; p++)
    if (strcmp(base, *p) == 0) return 1;
  return 0;
}

/* c++, g++, clang++, clang++-19, x86_64-linux-gnu-g++-12, CC: a driver that compiles every
 * input as C++ (headers and .c files included). */
static int is_cxx_driver(const char *base) {
  return strcmp(base, "c++") == 0 || strcmp(base, "CC") == 0 || strstr(base, "++") != NULL;
}

/* Flags for `target` (a real path) from entry `e`. */
static int entry_flags(const cdb_entry *e, int borrowed, tether_lint__cdb_flags *out) {
  size_t i = 0;
  const char *const *argv = (const char *const *)e->argv.v;
  size_t argc = e->argv.n;
  while (i < argc && is_wrapper(tether_lint__base_name(argv[i]))) i++;
  int cxx = 0;
  if (i < argc && argv[i][0] != '-') {
    cxx = is_cxx_driver(tether_lint__base_name(argv[i]));
    i++; /* the compiler */
  }
  tether_lint__flagset fs = {0};
  if (tether_lint__strlist_push(&fs.args, "-working-directory") ||
      tether_lint__strlist_push(&fs.args, e->dir))
    goto oom;
  if (tether_lint__flags_filter(argv + i, argc - i, e->dir, &fs) != 0) goto oom;
  /* The language: what the compiler would have used for the entry's file, given to the file being
   * analysed (a header borrowing the flags gets the language of the source it borrows from). */
  if (!fs.has_x && (cxx || (borrowed && has_ext(e->file, cxx_exts)))) {
    if (tether_lint__strlist_push(&fs.args, "-xc++")) goto oom;
  }
  out->fs = fs;
  return 0;
oom:
  tether_lint__flagset_free(&fs);
  return -1;
}

static const char *const header_exts[] = {".h",   ".hh",  ".hpp", ".hxx", ".h++", ".H",
                                          ".inc", ".ipp", ".tcc", ".inl", NULL};

static char *stem_of(const char *path) {
  const char *b = tether_lint__base_name(path);
  const char *dot = strrchr(b, '.');
  size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, b, n);
    s[n] = '\0';
  }
  return s;
}

/* The entry whose flags a file without an entry borrows: the nearest folder upward from the file
 * that holds (directly or below) a file with an entry; there, a file with the same stem first
 * (foo.h -> foo.cpp), then one directly in that folder, then the first by path. Never the root
 * folder "/" alone. -1 when there is none. */
static long nearest_entry(const tether_lint__cdb *db, const char *real) {
  char *dir = tether_lint__dir_name(real);
  char *stem = stem_of(real);
  long found = -1;
  if (!dir || !stem) goto done;
  for (;;) {
    if (strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0) break;
    size_t dl = strlen(dir);
    tether_lint__buf lo = {0};
    tether_lint__buf_printf(&lo, "%s/", dir);
    if (!lo.p) break;
    size_t k = lower_bound(db, lo.p);
    tether_lint__buf_free(&lo);
    long best = -1;
    int best_score = -1;
    for (; k < db->n; k++) {
      const cdb_entry *en = &db->v[db->order[k]];
      if (strncmp(en->real, dir, dl) != 0 || en->real[dl] != '/') break;
      const char *rest = en->real + dl + 1;
      char *s = stem_of(en->real);
      int score = (s && strcmp(s, stem) == 0 ? 4 : 0) + (strchr(rest, '/') ? 0 : 2) +
                  (has_ext(en->real, header_exts) ? 0 : 1);
      free(s);
      if (score > best_score) {
        best_score = score;
        best = (long)db->order[k];
      }
    }
    if (best >= 0) {
      found = best;
      break;
    }
    char *up = tether_lint__dir_name(dir);
    free(dir);
    dir = up;
    if (!dir) break;
  }
done:
  free(dir);
  free(stem);
  return found;
}

int tether_lint__cdb_flags_for(const tether_lint__cdb *db, const char *real,
                               tether_lint__cdb_flags *out) {
  memset(out, 0, sizeof *out);
  size_t k = lower_bound(db, real);
  size_t count = 0;
  while (k + count < db->n && strcmp(db->v[db->order[k + count]].real, real) == 0) count++;
  if (count) {
    /* Several entries for one file (several configurations, or the file built into several
     * targets): the first in the database's order, always. */
    const cdb_entry *e = &db->v[db->order[k]];
    if (entry_flags(e, 0, out) != 0) return -1;
    out->found = 1;
    if (count > 1) {
      tether_lint__buf m = {0};
      tether_lint__buf_printf(
          &m,
          "note: %zu entries in the compilation database; using the first (entry "
          "%zu, directory %s)",
          count, e->index, e->dir);
      out->note = m.p;
    }
    return 0;
  }
  long n = nearest_entry(db, real);
  if (n < 0) return 0;
  const cdb_entry *e = &db->v[n];
  if (entry_flags(e, 1, out) != 0) return -1;
  out->found = 2;
  tether_lint__buf m = {0};
  tether_lint__buf_printf(
      &m,
      "note: no entry in the compilation database; using the flags of %s (entry "
      "%zu, the nearest folder upward with one)",
      e->file, e->index);
  out->note = m.p;
  return 0;
}

void tether_lint__cdb_flags_free(tether_lint__cdb_flags *f) {
  tether_lint__flagset_free(&f->fs);
  free(f->note);
  memset(f, 0, sizeof *f);
}
