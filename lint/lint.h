/* tether-lint: the private interface between the driver, the rule families and the reporters.
 *
 * Invariant: a rule family never prints and never exits; it only reports findings through a
 * tether_lint_file (per input file) or a tether_lint_run (cross-file pass), and returns a status.
 * Everything a user sees (findings, errors, the summary) is produced by the driver and the
 * reporters, in a deterministic order, after every input has been analysed.
 *
 * Names: lint has its own prefix, apart from the arena's `tether_`/`tether__`: types shared by
 * lint's files are `tether_lint_xxx`, functions and data of this interface `tether_lint__xxx`,
 * macros `TETHER_LINT_XXX`. Functions shared by the files of one rule family carry the family's
 * name instead (`rawop_`, `typeid_`, `excl_`) and are declared in its private header.
 *
 * Where things are (docs/lint.md, "Internals: where things are", has the whole map), one folder per
 * part, as clang-tidy keeps one folder per check module:
 *   lint.h, rules.c  this header (the shared interface) and the table of rule families
 *   driver/          the run: command line, configuration, inputs, workers, cache, findings
 *                    (driver/engine.h: its records and files; driver/main.c: main())
 *   report/          the text, JSON and SARIF reporters
 *   utils/           containers, hashing, safe reading, paths (utils/util.h), and the libclang,
 *                    token and pybind11/nanobind helpers the families share (utils/clang_util.h,
 *                    utils/bind_util.h)
 *   rawop/ typeid/ typeid_elf/ excludelibs/ lifetime/ rtld/  one folder per rule family, each
 *                    with its private header when it has more than one file */
#ifndef TETHER_LINT_H
#define TETHER_LINT_H

#include <clang-c/Index.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#define TETHER_LINT_VERSION "0.2.0"

#include "lint/utils/util.h"

/* ---- compilation databases and the flag allow-list (driver/compdb.c, driver/compdb_flags.c) - */

/// Splits a command line into words the way a POSIX shell does (blanks separate; single quotes,
/// double quotes and backslashes quote), without any expansion. `gnu` is the response-file
/// dialect: inside double quotes a backslash escapes any character. 0, or -1 when out of memory.
int tether_lint__split_command(const char *s, size_t len, int gnu, tether_lint__strlist *out);

/// How the compile-flag allow-list classes an argument (compdb_flags.c).
enum {
  TETHER_LINT_FLAG_KEEP,    /* passed to libclang */
  TETHER_LINT_FLAG_IGNORE,  /* dropped quietly: a parse does not need it */
  TETHER_LINT_FLAG_DANGER,  /* dropped with a note: it writes files, loads code or reads inputs */
  TETHER_LINT_FLAG_UNKNOWN, /* dropped with a note: not on the allow-list */
};
/// Classes argv[i] (a flag): returns a TETHER_LINT_FLAG_* class, how many arguments it spans (1
/// or 2), its value (NULL when it has none) and the listed flag it matched (NULL for one judged
/// by its family: -f, -W, -m, -O, -g, -M). Reads nothing but argv.
int tether_lint__flag_class(const char *const *argv, size_t argc, size_t i, size_t *span,
                            const char **value, const char **name);

/// Compile flags after the allow-list.
typedef struct tether_lint__flagset {
  tether_lint__strlist args;    /* what libclang gets */
  tether_lint__strlist danger;  /* dropped: they write files, load code or read other inputs */
  tether_lint__strlist unknown; /* dropped: not on the allow-list */
  tether_lint__strlist
      problems; /* unreadable response files, -include of a file that is not regular */
  int has_x;    /* a -x was kept */
} tether_lint__flagset;

/// Expands @response files (paths relative to `cwd`, or to the current directory when NULL; read
/// with the safe reader, never executed) and passes each argument through the allow-list:
/// kept ones are appended to fs->args, dropped ones listed. Inputs (arguments that are not
/// flags) are dropped silently. 0, or -1 when out of memory.
int tether_lint__flags_filter(const char *const *argv, size_t argc, const char *cwd,
                              tether_lint__flagset *fs);
/// Appends one sentence about what was dropped (nothing when nothing was).
int tether_lint__flagset_note(const tether_lint__flagset *fs, tether_lint__buf *out);
void tether_lint__flagset_free(tether_lint__flagset *fs);

/// A compilation database (compile_commands.json), parsed by tether-lint itself.
typedef struct tether_lint__cdb tether_lint__cdb;

/// Reads (safely) and parses a database. 0, or -1 with a one-line message in `err`.
int tether_lint__cdb_load(const char *path, tether_lint__cdb **db, char *err, size_t errlen);
void tether_lint__cdb_free(tether_lint__cdb *db);

/// The flags for one file.
typedef struct tether_lint__cdb_flags {
  tether_lint__flagset fs; /* starts with -working-directory DIR */
  char *note;              /* how the entry was chosen, when worth a note; NULL otherwise */
  int found;               /* 0 no entry, 1 the file's own entry, 2 borrowed from a neighbour */
} tether_lint__cdb_flags;

/// Flags for the file whose canonical path is `real`: its own entry (the first in database order
/// when there are several), else the entry of the nearest source upward (clangd-style, for
/// headers), else found == 0. 0, or -1 when out of memory.
int tether_lint__cdb_flags_for(const tether_lint__cdb *db, const char *real,
                               tether_lint__cdb_flags *out);
void tether_lint__cdb_flags_free(tether_lint__cdb_flags *f);

/* ---- the result cache (driver/cache.c) ------------------------------------------------------- */

typedef struct tether_lint__cache tether_lint__cache;

/// $XDG_CACHE_HOME/tether-lint, else $HOME/.cache/tether-lint (malloc'd); NULL when neither
/// variable holds an absolute path.
char *tether_lint__cache_default_dir(void);
/// Opens the cache folder, creating it (mode 0700) when needed. 0, or -1 with a message.
int tether_lint__cache_open(const char *dir, tether_lint__cache **c, char *err, size_t errlen);
void tether_lint__cache_close(tether_lint__cache *c);
/// The payload stored under `key` when an intact entry exists: 0 and a malloc'd copy; -1 when
/// there is none or it is truncated or corrupt.
int tether_lint__cache_get(tether_lint__cache *c, const unsigned char key[32], char **data,
                           size_t *len);
/// Stores a payload under `key` atomically (temporary file, then rename). 0 or -1.
int tether_lint__cache_put(tether_lint__cache *c, const unsigned char key[32], const void *data,
                           size_t len);
/// SHA-256 of a file's contents (read safely), memoized for the life of `c` (which may be NULL).
/// 0, or -1 when the file cannot be read.
int tether_lint__cache_file_digest(tether_lint__cache *c, const char *path, unsigned char out[32]);
void tether_lint__cache_stats(const tether_lint__cache *c, size_t *hits, size_t *misses,
                              size_t *stores);
/// What every key of a run shares: the linter (version, executable, libclang), the config file's
/// digest, the rules turned off, the options that can change an analysis (`key_args`), whether
/// a compilation database is used, and the current directory.
void tether_lint__cache_run_key(const unsigned char config_digest[32],
                                const tether_lint__strlist *disabled,
                                const tether_lint__strlist *key_args, int have_db,
                                unsigned char out[32]);
/// The key of one translation unit's result: the run's key, the path as the user named it and
/// whether it was named or found by the walk, the path libclang parses, its arguments, and a
/// digest of the text.
void tether_lint__cache_tu_key(const unsigned char run_key[32], const char *path, int named,
                               const char *source, const tether_lint__strlist *args,
                               const char *text, size_t len, unsigned char out[32]);
/// 1 when a cached result still holds: each of the `nheaders` headers it read (path and digest
/// records, read from `headers`) has the same contents now, and none of the `nmissing` includes
/// that were not found (names read from `missing`) has appeared in a folder it would be found in
/// (the source's own and the include paths of `args`). File digests are memoized in `c`.
int tether_lint__cache_result_holds(tether_lint__cache *c, tether_lint__rd headers,
                                    uint32_t nheaders, tether_lint__rd missing, uint32_t nmissing,
                                    const char *source, const tether_lint__strlist *args);

/* ---- profiles and configuration (driver/config.c) -------------------------------------------- */

/// A raw accessor that is a free function returning a status: `name(wrapper, &raw)`.
typedef struct tether_lint_status_accessor {
  char *name;
  int wrapper_arg; /* index of the argument that is the wrapper (handle) */
  int out_arg;     /* index of the argument that receives the raw handle (`&raw`) */
} tether_lint_status_accessor;

/// One profile: which wrappers exist and how their raw handles are reached and guarded. Member
/// entries are "Class::member" (Class may be "*" for any class); free functions are bare names.
typedef struct tether_lint_profile {
  char *name;
  int builtin;
  tether_lint__strlist wrappers;          /* wrapper class names */
  tether_lint__strlist raw_accessors;     /* Class::method returning the raw handle unchecked */
  tether_lint__strlist raw_fields;        /* Class::field holding the raw handle */
  tether_lint__strlist guarded_accessors; /* Class::method that checks validity itself */
  tether_lint__strlist guards;            /* Class::method that throws/aborts when invalid */
  tether_lint__strlist predicates;   /* Class::field or Class::method that is true when valid */
  tether_lint__strlist invalidators; /* Class::method after which the wrapper is invalid */
  tether_lint__strlist parents;      /* Class::member giving the parent whose validity is the
                                   wrapper's: a guard on `w.member` guards `w` */
  tether_lint__strlist ok_status;    /* status constants meaning "valid" (e.g. TETHER_OK) */
  tether_lint_status_accessor *status;
  size_t nstatus;
} tether_lint_profile;

/// The effective configuration: the [lint] section and every known profile.
typedef struct tether_lint_config {
  char *path; /* the file it came from, NULL for built-in defaults only */
  char *dir;  /* directory of `path` (exclude patterns are relative to it) */
  tether_lint__strlist enable, disable, exclude, flags, extra_flags, profiles_selected;
  int profiles_set; /* 1 when the config named the active profiles */
  int flags_set;
  int system_headers; /* [lint] system-headers: rules also look at code in system headers */
  tether_lint__strlist project_roots; /* [lint] project-roots, as written (relative to `dir`) */
  /* [lint] generated-headers: includes the project's build generates (fnmatch patterns on the name
   * as written); one that is not found yet is parsed as an empty file, without a note */
  tether_lint__strlist generated;
  char *mlir_cmake_dir; /* [lint] mlir-cmake-dir: where the project's AddMLIRPython.cmake is */
  size_t max_file_size; /* [lint] max-file-size; 0 = not set */
  tether_lint_profile *profiles;
  size_t nprofiles;
} tether_lint_config;

/// Fills `cfg` with the built-in profiles (`mlir-python`, `mlir-python-nanobind`, `tether`) and no
/// other setting.
/// Returns 0 or -1 (out of memory).
int tether_lint__config_init(tether_lint_config *cfg);
/// Parses `len` bytes of `.tether-lint` text named `name` into `cfg` (on top of what is there).
/// Returns 0, or -1 with a message "NAME:LINE: why" in `err`. Never reads outside `text`.
int tether_lint__config_parse(tether_lint_config *cfg, const char *name, const char *text,
                              size_t len, char *err, size_t errlen);
/// The AddMLIRPython.cmake that `mlir-cmake-dir` names (relative to the config file's folder) in
/// `out`: 1, or 0 when the setting is absent.
int tether_lint__config_mlir_helpers(const tether_lint_config *cfg, char *out, size_t len);
/// Checks cross-references (selected profiles exist, rule ids exist). 0 or -1 with `err`.
int tether_lint__config_validate(const tether_lint_config *cfg, char *err, size_t errlen);
void tether_lint__config_free(tether_lint_config *cfg);
/// Writes the profiles in config-file syntax (for --list-profiles).
void tether_lint__config_print_profiles(const tether_lint_config *cfg, FILE *f);
/// The text of the built-in profiles, in config-file syntax.
extern const char tether_lint__builtin_profiles[];

/// Merges the active profiles of `cfg` into one (union of every list). Returns 0 or -1.
int tether_lint__profile_merge(const tether_lint_config *cfg, tether_lint_profile *out);
void tether_lint__profile_free(tether_lint_profile *p);
/// 1 when "cls::member" (or "*::member") is in the list.
int tether_lint__profile_match(const tether_lint__strlist *l, const char *cls, const char *member);
/// The status accessor named `name`, or NULL.
const tether_lint_status_accessor *tether_lint__profile_status(const tether_lint_profile *p,
                                                               const char *name);

/* ---- rules ----------------------------------------------------------------------------------- */

/// The kinds of input a rule family can take.
enum {
  TETHER_LINT_IN_TU = 1u,   /* C/C++ translation units, parsed by libclang */
  TETHER_LINT_IN_TEXT = 2u, /* build files (CMake, Bazel BUILD, ...), read as text */
  TETHER_LINT_IN_ELF = 4u,  /* built objects and shared libraries */
};

typedef struct tether_lint_rule_info {
  const char *id;
  const char *short_desc; /* one line */
  const char *full_desc;  /* a paragraph */
  const char *help;       /* how to fix it; also the text format's hint line */
} tether_lint_rule_info;

typedef struct tether_lint_file tether_lint_file; /* one input file being analysed */
typedef struct tether_lint_run tether_lint_run;   /* the whole run */

/// A rule family: a folder of lint/, one entry in the table in rules.c. Every hook is optional
/// except that a family must take at least one kind of input.
typedef struct tether_lint_family {
  const char *name;
  unsigned inputs; /* TETHER_LINT_IN_* */
  const tether_lint_rule_info *rules;
  size_t nrules;
  /// The ids of its rules that are off unless enabled (--enable, or `enable` in the config), NULL
  /// or NULL-terminated.
  const char *const *off_by_default;
  /// For TEXT/ELF inputs: 1 when the family wants this file (by name or magic bytes).
  int (*claims)(const char *path, const char *head, size_t headlen);
  /// Called once before any input, in the driver; may allocate per-run state. check_text and
  /// check_elf may update it directly; check_tu may not (see take_fact).
  int (*run_begin)(tether_lint_run *run, void **state);
  int (*check_tu)(tether_lint_file *f, void *state, CXTranslationUnit tu);
  int (*check_text)(tether_lint_file *f, void *state, const char *text, size_t len);
  int (*check_elf)(tether_lint_file *f, void *state);
  /// Called once after every input, in the driver: the cross-file pass. Frees `state`.
  int (*run_end)(tether_lint_run *run, void *state);
  /// Receives, in the driver's process, each fact the family recorded with tether_lint__file_fact
  /// while analysing an input: called after every input was analysed, in input order, before
  /// run_end. A family with a cross-file pass over translation units must collect its facts this
  /// way: check_tu runs in a worker process (its writes to `state` are lost), and a result taken
  /// from the cache runs no check_tu at all.
  int (*take_fact)(tether_lint_run *run, void *state, const char *data, size_t len);
} tether_lint_family;

/// The one table of rule families (rules.c).
extern const tether_lint_family *const tether_lint__families[];
extern const size_t tether_lint__nfamilies;
/// The rule with this id and its family, or NULL.
const tether_lint_rule_info *tether_lint__rule_find(const char *id, const tether_lint_family **fam);

/* ---- what rules may ask of a file / run (driver/engine.c, driver/findings.c) ----------------- */

const char *tether_lint__file_path(const tether_lint_file *f);
const tether_lint_profile *tether_lint__file_profile(const tether_lint_file *f);
int tether_lint__file_rule_enabled(const tether_lint_file *f, const char *rule);
/// Whether `loc` is in the translation unit's main file once macros are expanded: a declaration
/// whose name comes from a macro (`namespace MLIR_BINDINGS_PYTHON_DOMAIN {`, a function a macro
/// defines) counts where the macro is used. (clang_Location_isFromMainFile says no for any
/// location inside a macro expansion.)
int tether_lint__in_main_file(CXTranslationUnit tu, CXSourceLocation loc);
/// Reports a finding at a libclang location (its expansion location). Findings outside the main
/// file of the translation unit are dropped; NOLINT comments are honoured here.
void tether_lint__report_tu(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                            const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/// Like tether_lint__report_tu, but at the spelling location of `loc` (for code written in a
/// macro's arguments in the main file, reported where it is written rather than at the macro's
/// name).
void tether_lint__report_tu_spelled(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                                    const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/// Reports a finding at a line/column of the file being analysed (text and ELF families).
void tether_lint__report_at(tether_lint_file *f, unsigned line, unsigned col, const char *rule,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/// A message about the file being analysed, printed on stderr as "tether-lint: [error: ]PATH: MSG"
/// in input order; `is_error` counts as an error (exit status 2), otherwise it is a note.
void tether_lint__file_message(tether_lint_file *f, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// Records a fact about the file being analysed for the family's cross-file pass: `len` bytes the
/// family encodes itself. The driver carries it from the worker process, and through the result
/// cache, to the family's take_fact hook. Only from check_tu/check_text/check_elf. 0 or -1.
int tether_lint__file_fact(tether_lint_file *f, const void *data, size_t len);
/// Cross-file findings from run_end. NOLINT comments on `line` of `file` (when it can be read)
/// are honoured as for per-file findings.
void tether_lint__report_run(tether_lint_run *run, const char *file, unsigned line, unsigned col,
                             const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/// The effective configuration of the run (for run_begin hooks).
const tether_lint_config *tether_lint__run_config(const tether_lint_run *run);
/// The command line of the run.
const struct tether_lint_options *tether_lint__run_options(const tether_lint_run *run);
/// 1 when the run's inputs are the whole program (--whole-program, or a compilation database
/// with a directory among the PATHs): cross-file passes may report what is missing from it.
int tether_lint__run_whole_program(const tether_lint_run *run);

/* ---- findings and reporters (report/) -------------------------------------------------------- */

typedef struct tether_lint_finding {
  char *file; /* as the user named it (relative to the current directory when given so) */
  unsigned line, col;
  const char *rule; /* static rule id */
  char *message;
  const char *hint; /* static: the rule's help */
} tether_lint_finding;

typedef struct tether_lint_summary {
  size_t files, findings, suppressed, errors, compile_errors;
} tether_lint_summary;

typedef enum {
  TETHER_LINT_FMT_TEXT,
  TETHER_LINT_FMT_JSON,
  TETHER_LINT_FMT_SARIF
} tether_lint_format;

/// Everything a reporter needs. `root` is the absolute directory SARIF URIs are relative to.
typedef struct tether_lint_report {
  const tether_lint_finding *findings;
  size_t n;
  const tether_lint_summary *summary;
  const char *root;
  const char *cwd;
} tether_lint_report;

int tether_lint__report_text(const tether_lint_report *r, FILE *out);
int tether_lint__report_json(const tether_lint_report *r, FILE *out);
int tether_lint__report_sarif(const tether_lint_report *r, FILE *out);

/* ---- command line (driver/cli.c) ------------------------------------------------------------- */

typedef enum {
  TETHER_LINT_ACT_LINT,
  TETHER_LINT_ACT_HELP,
  TETHER_LINT_ACT_VERSION,
  TETHER_LINT_ACT_LIST_RULES,
  TETHER_LINT_ACT_LIST_PROFILES,
} tether_lint_action;

typedef struct tether_lint_options {
  tether_lint_action action;
  tether_lint_format format;
  const char *compile_db_dir;  /* -p DIR */
  const char *compile_db_file; /* --compile-commands FILE */
  const char *config;          /* --config FILE */
  const char *root;            /* --root DIR */
  int jobs;                    /* -j N; 0 = not given */
  int whole_program;           /* --whole-program */
  tether_lint__strlist enable, disable, paths;
  const char *cache_dir; /* --cache-dir DIR; NULL = the default folder */
  int no_cache;          /* --no-cache */
  size_t max_file_size;  /* --max-file-size; 0 = not given */
  int timeout;           /* --timeout SECONDS per translation unit; -1 = not given, 0 = none */
  size_t worker_memory;  /* --worker-memory; 0 = not given */
  size_t worker_stack;   /* --worker-stack; 0 = not given */
  int in_process;        /* --in-process: no worker processes (no crash containment) */
  int cache_stats;       /* --cache-stats: one line on stderr about the cache */
  /// Every option that can change what one file's analysis produces, as written (for the
  /// cache key). Options that cannot (-j, --format, --root, the cache's, ...) are left out.
  tether_lint__strlist key_args;
} tether_lint_options;

/// Parses argv[1..argc-1]. Returns 0, or -1 with a one-line message in `err`. Never exits,
/// never prints, never reads outside argv.
int tether_lint__cli_parse(int argc, char **argv, tether_lint_options *o, char *err, size_t errlen);
void tether_lint__cli_free(tether_lint_options *o);
void tether_lint__cli_usage(FILE *f);

/* ---- the run (driver/engine.c, driver/run_config.c) ------------------------------------------ */

/// Runs the linter as the options say, writes the report to `out` and messages to `err`.
/// Returns the process exit status: 0 no findings, 1 findings, 2 the tool could not do its job.
int tether_lint__lint_main(const tether_lint_options *o, FILE *out, FILE *err);

/// The compiler arguments used when no compilation database has an entry for a file (`lang_c`:
/// the file is C): the config's `flags`, else the defaults, then `extra-flags`. Appends to
/// `args`; 0 or -1 when out of memory.
int tether_lint__default_args(const tether_lint_config *cfg, int lang_c,
                              tether_lint__strlist *args);

#endif
