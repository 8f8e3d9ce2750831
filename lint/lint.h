/* tether-lint: the private interface between the driver, the rule families and the reporters.
 *
 * Invariant: a rule family never prints and never exits; it only reports findings through a
 * tether_lint_file (per input file) or a tether_lint_run (cross-file pass), and returns a status.
 * Everything a user sees (findings, errors, the summary) is produced by the driver and the
 * reporters, in a deterministic order, after every input has been analysed. */
#ifndef TETHER_LINT_H
#define TETHER_LINT_H

#include <clang-c/Index.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define TETHER_LINT_VERSION "0.2.0"

/* ---- small containers (util.c) ------------------------------------------------------------ */

/// A growable list of owned strings.
typedef struct tether__strlist {
  char **v;
  size_t n, cap;
} tether__strlist;

/// Appends a copy of `s`. Returns 0, or -1 when out of memory (the list is unchanged).
int tether__strlist_push(tether__strlist *l, const char *s);
/// Appends a copy of `s` unless an equal string is present.
int tether__strlist_add_unique(tether__strlist *l, const char *s);
/// 1 when an equal string is in the list.
int tether__strlist_has(const tether__strlist *l, const char *s);
/// Frees every string and the array; the list is empty afterwards.
void tether__strlist_free(tether__strlist *l);

/// A growable byte buffer, always NUL-terminated once anything was written.
typedef struct tether__buf {
  char *p;
  size_t n, cap;
} tether__buf;

int tether__buf_put(tether__buf *b, const char *s, size_t n);
int tether__buf_puts(tether__buf *b, const char *s);
int tether__buf_printf(tether__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tether__buf_free(tether__buf *b);

/// Reads a whole file. Returns 0 and a malloc'd NUL-terminated buffer, or an errno value.
int tether__read_file(const char *path, char **out, size_t *len);
/// A malloc'd copy of `s` in which every byte sequence that is not valid UTF-8 is replaced by
/// U+FFFD, so JSON and SARIF output is always valid UTF-8. NULL when out of memory.
char *tether__utf8_clean(const char *s);
/// strdup that never returns NULL for a NULL input (returns NULL then) and aborts nothing.
char *tether__strdup(const char *s);

/* ---- profiles and configuration (config.c, profile.c) ------------------------------------- */

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
  tether__strlist wrappers;          /* wrapper class names */
  tether__strlist raw_accessors;     /* Class::method returning the raw handle unchecked */
  tether__strlist raw_fields;        /* Class::field holding the raw handle */
  tether__strlist guarded_accessors; /* Class::method that checks validity itself */
  tether__strlist guards;            /* Class::method that throws/aborts when invalid */
  tether__strlist predicates;        /* Class::field or Class::method that is true when valid */
  tether__strlist invalidators;      /* Class::method after which the wrapper is invalid */
  tether__strlist parents;           /* Class::member giving the parent whose validity is the
                                        wrapper's: a guard on `w.member` guards `w` */
  tether__strlist ok_status;         /* status constants meaning "valid" (e.g. TETHER_OK) */
  tether_lint_status_accessor *status;
  size_t nstatus;
} tether_lint_profile;

/// The effective configuration: the [lint] section and every known profile.
typedef struct tether_lint_config {
  char *path; /* the file it came from, NULL for built-in defaults only */
  char *dir;  /* directory of `path` (exclude patterns are relative to it) */
  tether__strlist enable, disable, exclude, flags, extra_flags, profiles_selected;
  int profiles_set; /* 1 when the config named the active profiles */
  int flags_set;
  int system_headers; /* [lint] system-headers: rules also look at code in system headers */
  tether__strlist project_roots; /* [lint] project-roots, as written (relative to `dir`) */
  char *mlir_cmake_dir; /* [lint] mlir-cmake-dir: where the project's AddMLIRPython.cmake is */
  tether_lint_profile *profiles;
  size_t nprofiles;
} tether_lint_config;

/// Fills `cfg` with the built-in profiles (`mlir-python`, `mlir-python-nanobind`, `tether`) and no
/// other setting.
/// Returns 0 or -1 (out of memory).
int tether__config_init(tether_lint_config *cfg);
/// Parses `len` bytes of `.tether-lint` text named `name` into `cfg` (on top of what is there).
/// Returns 0, or -1 with a message "NAME:LINE: why" in `err`. Never reads outside `text`.
int tether__config_parse(tether_lint_config *cfg, const char *name, const char *text, size_t len,
                         char *err, size_t errlen);
/// Checks cross-references (selected profiles exist, rule ids exist). 0 or -1 with `err`.
int tether__config_validate(const tether_lint_config *cfg, char *err, size_t errlen);
void tether__config_free(tether_lint_config *cfg);
/// Writes the profiles in config-file syntax (for --list-profiles).
void tether__config_print_profiles(const tether_lint_config *cfg, FILE *f);
/// The text of the built-in profiles, in config-file syntax.
extern const char tether__builtin_profiles[];

/// Merges the active profiles of `cfg` into one (union of every list). Returns 0 or -1.
int tether__profile_merge(const tether_lint_config *cfg, tether_lint_profile *out);
void tether__profile_free(tether_lint_profile *p);
/// 1 when "cls::member" (or "*::member") is in the list.
int tether__profile_match(const tether__strlist *l, const char *cls, const char *member);
/// The status accessor named `name`, or NULL.
const tether_lint_status_accessor *tether__profile_status(const tether_lint_profile *p,
                                                          const char *name);

/* ---- rules ------------------------------------------------------------------------------- */

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

/// A rule family: one file in lint/, one entry in the table in rules.c. Every hook is optional
/// except that a family must take at least one kind of input.
typedef struct tether_lint_family {
  const char *name;
  unsigned inputs; /* TETHER_LINT_IN_* */
  const tether_lint_rule_info *rules;
  size_t nrules;
  /// For TEXT/ELF inputs: 1 when the family wants this file (by name or magic bytes).
  int (*claims)(const char *path, const char *head, size_t headlen);
  /// Called once before any input; may allocate per-run state (shared across threads: use
  /// tether__run_lock around updates).
  int (*run_begin)(tether_lint_run *run, void **state);
  int (*check_tu)(tether_lint_file *f, void *state, CXTranslationUnit tu);
  int (*check_text)(tether_lint_file *f, void *state, const char *text, size_t len);
  int (*check_elf)(tether_lint_file *f, void *state);
  /// Called once after every input (single-threaded): the cross-file pass. Frees `state`.
  int (*run_end)(tether_lint_run *run, void *state);
} tether_lint_family;

/// The one table of rule families (rules.c).
extern const tether_lint_family *const tether__families[];
extern const size_t tether__nfamilies;
/// The rule with this id and its family, or NULL.
const tether_lint_rule_info *tether__rule_find(const char *id, const tether_lint_family **fam);

/* ---- what rules may ask of a file / run (engine.c) ---------------------------------------- */

const char *tether__file_path(const tether_lint_file *f);
const tether_lint_profile *tether__file_profile(const tether_lint_file *f);
int tether__file_rule_enabled(const tether_lint_file *f, const char *rule);
/// Reports a finding at a libclang location (its expansion location). Findings outside the main
/// file of the translation unit are dropped; NOLINT comments are honoured here.
void tether__report_tu(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                       const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/// Like tether__report_tu, but at the spelling location of `loc` (for code written in a macro's
/// arguments in the main file, reported where it is written rather than at the macro's name).
void tether__report_tu_spelled(tether_lint_file *f, CXTranslationUnit tu, CXSourceLocation loc,
                               const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/// Reports a finding at a line/column of the file being analysed (text and ELF families).
void tether__report_at(tether_lint_file *f, unsigned line, unsigned col, const char *rule,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/// A message about the file being analysed, printed on stderr as "tether-lint: [error: ]PATH: MSG"
/// in input order; `is_error` counts as an error (exit status 2), otherwise it is a note.
void tether__file_message(tether_lint_file *f, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// Cross-file findings from run_end. NOLINT comments on `line` of `file` (when it can be read)
/// are honoured as for per-file findings.
void tether__report_run(tether_lint_run *run, const char *file, unsigned line, unsigned col,
                        const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/// The effective configuration of the run (for run_begin hooks).
const tether_lint_config *tether__run_config(const tether_lint_run *run);
/// The command line of the run.
const struct tether_lint_options *tether__run_options(const tether_lint_run *run);
/// 1 when the run's inputs are the whole program (--whole-program, or a compilation database
/// with a directory among the PATHs): cross-file passes may report what is missing from it.
int tether__run_whole_program(const tether_lint_run *run);
void tether__run_lock(tether_lint_run *run);
void tether__run_unlock(tether_lint_run *run);

/* ---- findings and reporters -------------------------------------------------------------- */

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

typedef enum { TETHER_FMT_TEXT, TETHER_FMT_JSON, TETHER_FMT_SARIF } tether_lint_format;

/// Everything a reporter needs. `root` is the absolute directory SARIF URIs are relative to.
typedef struct tether_lint_report {
  const tether_lint_finding *findings;
  size_t n;
  const tether_lint_summary *summary;
  const char *root;
  const char *cwd;
} tether_lint_report;

int tether__report_text(const tether_lint_report *r, FILE *out);
int tether__report_json(const tether_lint_report *r, FILE *out);
int tether__report_sarif(const tether_lint_report *r, FILE *out);

/* ---- command line (cli.c) ---------------------------------------------------------------- */

typedef enum {
  TETHER_ACT_LINT,
  TETHER_ACT_HELP,
  TETHER_ACT_VERSION,
  TETHER_ACT_LIST_RULES,
  TETHER_ACT_LIST_PROFILES,
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
  tether__strlist enable, disable, paths;
} tether_lint_options;

/// Parses argv[1..argc-1]. Returns 0, or -1 with a one-line message in `err`. Never exits,
/// never prints, never reads outside argv.
int tether__cli_parse(int argc, char **argv, tether_lint_options *o, char *err, size_t errlen);
void tether__cli_free(tether_lint_options *o);
void tether__cli_usage(FILE *f);

/* ---- the run (engine.c) ------------------------------------------------------------------ */

/// Runs the linter as the options say, writes the report to `out` and messages to `err`.
/// Returns the process exit status: 0 no findings, 1 findings, 2 the tool could not do its job.
int tether__lint_main(const tether_lint_options *o, FILE *out, FILE *err);

/// The compiler arguments used when no compilation database has an entry for a file.
/// Fills `args` (strings are static or owned by `cfg`); returns the count.
size_t tether__default_args(const tether_lint_config *cfg, const char **args, size_t max);

#endif
