/* The compile-flag allow-list: which compiler arguments may reach libclang, as tables.
 *
 * Invariant: an argument is kept only when a table here says it only changes how the source is
 * parsed (include paths, macros, language and standard, target, warnings, language-feature -f
 * flags); one that writes files, loads code or reads other inputs is DANGER, a known one that a
 * parse does not need is IGNORE (dropped quietly), anything else UNKNOWN. Listed flags are matched
 * by name (the longest match wins), the -f, -W, -m, -O, -g and -M families by the rules of
 * flag_lookup. The tables are data only: what is done with a class is compdb.c's business. */
#include "lint/lint.h"

#include <string.h>

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
    {"-I", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-isystem", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-iquote", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-idirafter", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-isysroot", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-iprefix", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-iwithprefix", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-iwithprefixbefore", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-isystem-after", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-cxx-isystem", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-iframework", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-F", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"--sysroot", TETHER_LINT_FLAG_KEEP, F_EQ_OR_SEP},
    {"-nostdinc", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-nostdinc++", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-nostdlibinc", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-nobuiltininc", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-stdlib=", TETHER_LINT_FLAG_KEEP, F_JOINED},
    {"--gcc-toolchain", TETHER_LINT_FLAG_KEEP, F_EQ_OR_SEP},
    {"-gcc-toolchain", TETHER_LINT_FLAG_KEEP, F_SEP},
    {"--gcc-install-dir=", TETHER_LINT_FLAG_KEEP, F_JOINED},
    /* Macros. */
    {"-D", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-U", TETHER_LINT_FLAG_KEEP, F_JOINED_OR_SEP},
    {"-undef", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-include", TETHER_LINT_FLAG_KEEP, F_SEP}, /* checked: only a regular file */
    {"-imacros", TETHER_LINT_FLAG_KEEP, F_SEP}, /* checked: only a regular file */
    /* Language and standard. */
    {"-std=", TETHER_LINT_FLAG_KEEP, F_JOINED},
    {"--std=", TETHER_LINT_FLAG_KEEP, F_JOINED},
    {"-x", TETHER_LINT_FLAG_KEEP,
     F_JOINED_OR_SEP}, /* checked: a source language, never "ast" or "pcm" */
    {"-ansi", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-trigraphs", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-pedantic", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"--pedantic", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-pthread", TETHER_LINT_FLAG_KEEP, F_EXACT},
    {"-w", TETHER_LINT_FLAG_KEEP, F_EXACT},
    /* Target. */
    {"--target=", TETHER_LINT_FLAG_KEEP, F_JOINED},
    {"-target", TETHER_LINT_FLAG_KEEP, F_SEP},
    /* Expected in every compile command, meaningless when only parsing: dropped quietly. */
    {"-c", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-o", TETHER_LINT_FLAG_IGNORE, F_JOINED_OR_SEP},
    {"-S", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-E", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-pipe", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-v", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-###", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-Q", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-H", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-P", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-C", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-CC", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-dM", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-dD", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-shared", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-static", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-static-libgcc", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-static-libstdc++", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-rdynamic", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-s", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-pie", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-no-pie", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-nostdlib", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-nostdlib++", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-nodefaultlibs", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-nostartfiles", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-pedantic-errors", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-l", TETHER_LINT_FLAG_IGNORE, F_JOINED_OR_SEP},
    {"-L", TETHER_LINT_FLAG_IGNORE, F_JOINED_OR_SEP},
    {"-u", TETHER_LINT_FLAG_IGNORE, F_JOINED_OR_SEP},
    {"-T", TETHER_LINT_FLAG_IGNORE, F_JOINED_OR_SEP},
    {"-z", TETHER_LINT_FLAG_IGNORE, F_JOINED_OR_SEP},
    {"-e", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"-arch", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"--param", TETHER_LINT_FLAG_IGNORE, F_EQ_OR_SEP},
    {"-Xlinker", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"-Xassembler", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"-Xcuda-fatbinary", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"-Xcuda-ptxas", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"-Xopenmp-target", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"-Xopenmp-target=", TETHER_LINT_FLAG_IGNORE, F_JOINED},
    {"-rpath", TETHER_LINT_FLAG_IGNORE, F_SEP},
    {"-working-directory", TETHER_LINT_FLAG_IGNORE, F_EQ_OR_SEP}, /* tether-lint sets its own */
    {"--driver-mode=", TETHER_LINT_FLAG_IGNORE, F_JOINED},        /* the compiler name decides */
    {"-resource-dir", TETHER_LINT_FLAG_IGNORE, F_EQ_OR_SEP},
    {"--no-default-config", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-rtlib=", TETHER_LINT_FLAG_IGNORE, F_JOINED},
    {"-unwindlib=", TETHER_LINT_FLAG_IGNORE, F_JOINED},
    {"-time", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-p", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-pg", TETHER_LINT_FLAG_IGNORE, F_EXACT},
    {"-print-", TETHER_LINT_FLAG_IGNORE, F_PREFIX},
    {"--print-", TETHER_LINT_FLAG_IGNORE, F_PREFIX},
    /* They write files, load code, or read inputs other than sources and headers. */
    {"-M", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-MM", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-MD", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-MMD", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-MG", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-MP", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-MV", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-MF", TETHER_LINT_FLAG_DANGER, F_JOINED_OR_SEP},
    {"-MT", TETHER_LINT_FLAG_DANGER, F_JOINED_OR_SEP},
    {"-MQ", TETHER_LINT_FLAG_DANGER, F_JOINED_OR_SEP},
    {"-MJ", TETHER_LINT_FLAG_DANGER, F_JOINED_OR_SEP},
    {"--write-dependencies", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"--write-user-dependencies", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"--user-dependencies", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"--dependencies", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-dependency-file", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-dependency-dot", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"--serialize-diagnostics", TETHER_LINT_FLAG_DANGER, F_EQ_OR_SEP},
    {"-serialize-diagnostics", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-save-temps", TETHER_LINT_FLAG_DANGER, F_PREFIX},
    {"--save-temps", TETHER_LINT_FLAG_DANGER, F_PREFIX},
    {"-save-stats", TETHER_LINT_FLAG_DANGER, F_PREFIX},
    {"--save-stats", TETHER_LINT_FLAG_DANGER, F_PREFIX},
    {"-Xclang", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-Xpreprocessor", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-Xanalyzer", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-Xarch_", TETHER_LINT_FLAG_DANGER,
     F_PREFIX}, /* takes the next argument too: handled in classify() */
    {"-mllvm", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-load", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-plugin", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-add-plugin", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-plugin-arg-", TETHER_LINT_FLAG_DANGER, F_PREFIX}, /* takes the next argument too */
    {"-B", TETHER_LINT_FLAG_DANGER, F_JOINED_OR_SEP},
    {"--prefix", TETHER_LINT_FLAG_DANGER, F_EQ_OR_SEP},
    {"--config", TETHER_LINT_FLAG_DANGER, F_EQ_OR_SEP},
    {"--config-system-dir=", TETHER_LINT_FLAG_DANGER, F_JOINED},
    {"--config-user-dir=", TETHER_LINT_FLAG_DANGER, F_JOINED},
    {"-include-pch", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-include-pth", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-ivfsoverlay", TETHER_LINT_FLAG_DANGER, F_JOINED_OR_SEP},
    {"-cc1", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-cc1as", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"--analyze", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"--analyzer-output", TETHER_LINT_FLAG_DANGER, F_SEP},
    {"-emit-", TETHER_LINT_FLAG_DANGER, F_PREFIX},
    {"-module-file-info", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"--precompile", TETHER_LINT_FLAG_DANGER, F_EXACT},
    {"-ftime-trace", TETHER_LINT_FLAG_DANGER, F_PREFIX},
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

/* Prefix families that must never get through, whatever follows the prefix. */
static const char *const f_danger_prefix[] = {
    "modules", "profile",       "plugin",
    "xray",    "time-trace",    "crash-diagnostics",
    "dump-",   "embed-bitcode", "save-optimization-record",
    "coverage"};

/* -f flag families about code generation, debug information or diagnostics' looks: nothing a
 * parse needs, dropped quietly. */
static const char *const f_quiet_prefix[] = {"diagnostics",
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

static int f_class(const char *arg) {
  const char *name = arg + 2; /* after "-f" */
  int negated = strncmp(name, "no-", 3) == 0;
  const char *base = negated ? name + 3 : name;
  size_t nd = sizeof f_danger / sizeof f_danger[0];
  for (size_t i = 0; i < sizeof f_danger_prefix / sizeof f_danger_prefix[0]; i++)
    if (strncmp(base, f_danger_prefix[i], strlen(f_danger_prefix[i])) == 0)
      return negated ? TETHER_LINT_FLAG_IGNORE : TETHER_LINT_FLAG_DANGER;
  if (name_in(base, f_danger, nd))
    return negated ? TETHER_LINT_FLAG_IGNORE : TETHER_LINT_FLAG_DANGER;
  if (strncmp(base, "sanitize", 8) == 0 && strstr(base, "list=")) return TETHER_LINT_FLAG_DANGER;
  if (name_in(base, f_keep, sizeof f_keep / sizeof f_keep[0])) return TETHER_LINT_FLAG_KEEP;
  /* The rest is about code generation, debug information or diagnostics' looks: nothing a parse
   * needs. Drop it quietly when it is a well-known family, else say so. */
  for (size_t i = 0; i < sizeof f_quiet_prefix / sizeof f_quiet_prefix[0]; i++)
    if (strncmp(base, f_quiet_prefix[i], strlen(f_quiet_prefix[i])) == 0)
      return TETHER_LINT_FLAG_IGNORE;
  return TETHER_LINT_FLAG_UNKNOWN;
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

/* Classifies argv[i]: returns the class and how many arguments it spans (1 or 2), where its
 * value is (NULL when it has none), and the listed name it matched (NULL for a family). */
static int flag_lookup(const char *const *argv, size_t argc, size_t i, size_t *span,
                       const char **value, const char **name) {
  const char *a = argv[i];
  *span = 1;
  *value = NULL;
  *name = NULL;
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
    *name = best->name;
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
        !*value && best->cls == TETHER_LINT_FLAG_KEEP)
      return TETHER_LINT_FLAG_IGNORE; /* a flag that needs a value, at the end: meaningless */
    return best->cls;
  }
  if (a[1] == 'f') return f_class(a);
  if (a[1] == 'W') {
    if (strncmp(a, "-Wl,", 4) == 0 || strncmp(a, "-Wa,", 4) == 0) return TETHER_LINT_FLAG_IGNORE;
    if (strncmp(a, "-Wp,", 4) == 0)
      return TETHER_LINT_FLAG_DANGER; /* preprocessor pass-through: -Wp,-MD,FILE */
    if (strcmp(a, "-Werror") == 0 || strncmp(a, "-Werror=", 8) == 0 ||
        strcmp(a, "-Wfatal-errors") == 0)
      return TETHER_LINT_FLAG_IGNORE; /* they would cut the parse short or turn warnings into errors
                                       */
    return TETHER_LINT_FLAG_KEEP;
  }
  if (a[1] == 'm')
    return TETHER_LINT_FLAG_KEEP; /* -m32, -m64, -march=, -mavx2, ... (-mllvm is listed above) */
  if (a[1] == 'O') return TETHER_LINT_FLAG_KEEP; /* __OPTIMIZE__ and friends */
  if (a[1] == 'g') return TETHER_LINT_FLAG_IGNORE;
  if (a[1] == 'M') return TETHER_LINT_FLAG_DANGER;
  return TETHER_LINT_FLAG_UNKNOWN;
}

int tether_lint__flag_class(const char *const *argv, size_t argc, size_t i, size_t *span,
                            const char **value, const char **name) {
  int cls = flag_lookup(argv, argc, i, span, value, name);
  /* -x selects how the file is read: a language that is not source loads something else. */
  if (cls == TETHER_LINT_FLAG_KEEP && *name && strcmp(*name, "-x") == 0 && !x_ok(*value))
    return TETHER_LINT_FLAG_DANGER;
  return cls;
}
