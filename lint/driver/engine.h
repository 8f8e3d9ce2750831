/* The driver's private interface: the records of a run and of each input, shared by the files of
 * the driver (engine.c and the files below), never by rules or reporters (they see lint.h only).
 *
 * Where things are:
 *   engine.c      the run in order: configuration, discovery, analysis, cross-file passes, report
 *   run_config.c  the .tether-lint in effect, the rules turned on, default compile flags
 *   discover.c    which files are inputs, in which order
 *   workers.c     the schedule and the worker processes (fork, limits, deadlines)
 *   analyse.c     analysing one input: a translation unit in a worker, other files in the driver
 *   result.c      a translation unit's result, serialized (what workers send and the cache keeps)
 *   findings.c    findings, NOLINT, messages; the sorted list the reporters get
 *   cache.c       the result cache: its keys, validation and entries */
#ifndef TETHER_LINT_ENGINE_H
#define TETHER_LINT_ENGINE_H

#include "lint/lint.h"

#include <sys/types.h>

/// The kinds of input (tether_lint_file.kind).
enum { TETHER_LINT_INPUT_TU, TETHER_LINT_INPUT_TEXT, TETHER_LINT_INPUT_ELF };

/* Defaults of the worker processes: the parsing thread's stack (reserved, not used), the address
 * space (stack included), the time per translation unit in seconds, a serialized result's size. */
#define TETHER_LINT_WORKER_STACK_DEFAULT ((size_t)1 << 30)
#define TETHER_LINT_WORKER_MEMORY_DEFAULT ((size_t)4 << 30)
#define TETHER_LINT_TIMEOUT_DEFAULT 300
#define TETHER_LINT_RESULT_MAX ((size_t)1 << 30)

/// One input and everything its analysis produced, in input order (run->inputs). A worker fills a
/// scratch copy of its translation unit's record and sends it back serialized (result.c).
struct tether_lint_file {
  tether_lint_run *run;
  char *path;                       /* as the user named it (or as found under a named directory) */
  char *abspath;                    /* canonical, for the compilation database */
  int kind;                         /* TETHER_LINT_INPUT_* */
  int named;                        /* named on the command line (not found by the walk) */
  const tether_lint_family *family; /* TEXT/ELF: the family that claimed it */
  const tether_lint_family *cur_family; /* the family being run (owner of its facts) */
  tether_lint_finding *v;
  size_t n, cap;
  size_t suppressed;
  tether_lint__buf msgs; /* messages for the user, printed in input order */
  int errors;
  int compile_errors;
  int analysed;
  const char *contents; /* TEXT inputs: for NOLINT */
  size_t contents_len;
  tether_lint__lines lines; /* line index of the text NOLINT comments are read from */
  tether_lint__buf facts;   /* records for the cross-file passes: family name, data */
  /* Translation units, in the driver. */
  char *text; /* the main file, read safely; libclang gets this copy */
  size_t text_len;
  char *source; /* the path libclang parses */
  tether_lint__strlist args;
  unsigned char key[32];
  int have_key;
  /* Translation units, in the worker. */
  tether_lint__buf incl; /* records: header path, digest */
  uint32_t nincl;
  tether_lint__strlist missing; /* includes that were not found */
  int cacheable;
};

/// A worker process analysing one translation unit (workers.c).
typedef struct tether_lint_worker {
  pid_t pid;
  int fd;
  size_t input;         /* index in run->inputs */
  tether_lint__buf out; /* the result read so far */
  double deadline;      /* 0: none */
  int active;
  int overflow; /* sent more than TETHER_LINT_RESULT_MAX: killed */
} tether_lint_worker;

/// The whole run: options, configuration, the inputs' records, the run-level findings and
/// messages, and the state of the walk, the workers and the cache.
struct tether_lint_run {
  const tether_lint_options *o;
  tether_lint_config cfg;
  tether_lint_profile profile;
  tether_lint__strlist disabled;
  tether_lint__cdb *db;
  tether_lint_file *inputs;
  size_t ninputs, capinputs;
  void **state;           /* per family (the table's order): what run_begin allocated */
  tether_lint_finding *v; /* run-level findings (cross-file passes) */
  size_t n, cap;
  tether_lint__buf msgs; /* run-level messages, printed first */
  size_t suppressed;     /* run-level findings silenced by NOLINT */
  int errors;
  /* Walk state. */
  tether_lint__strmap seen; /* "dev:ino" of every file taken */
  struct {
    dev_t dev;
    ino_t ino;
  } * stack;
  size_t nstack, capstack;
  /* Analysis. */
  int timeout;
  size_t worker_memory;
  size_t worker_stack;
  tether_lint__cache *cache;
  unsigned char run_key[32]; /* what every cache key of this run shares */
  unsigned char config_digest[32];
  int cache_tried; /* the cache is opened when the first translation unit needs it */
  size_t tus, tus_cached;
  tether_lint__strmap texts; /* files read for NOLINT of cross-file findings */
  tether_lint_worker *workers;
  int nworkers;
};

/// Where the parts of a checked serialized result are (result.c).
typedef struct tether_lint_result_view {
  uint32_t analysed, errors, compile_errors, cacheable;
  uint64_t suppressed;
  const char *msgs;
  size_t msgs_len;
  uint32_t nfindings;
  size_t findings_off;
  const char *facts;
  size_t facts_len;
  uint32_t nincl;
  size_t incl_off;
  uint32_t nmissing;
  size_t missing_off;
} tether_lint_result_view;

/* ---- findings and messages (findings.c) ------------------------------------------------------ */

/// Appends a finding to a growable array (the rule's id and hint from the table). 0 or -1.
int tether_lint__push_finding(tether_lint_finding **v, size_t *n, size_t *cap, const char *file,
                              unsigned line, unsigned col, const char *rule, const char *msg);
/// A message about the run (not about one input), printed before the inputs' messages.
void tether_lint__run_msg(tether_lint_run *run, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// Every input's and the run's findings moved into one array, sorted (file, line, column, rule,
/// message) with exact duplicates dropped; `*n` its length. NULL (records untouched) when out of
/// memory.
tether_lint_finding *tether_lint__findings_collect(tether_lint_run *run, size_t *n);
void tether_lint__findings_free(tether_lint_finding *v, size_t n);
/// Frees an entry of run->texts (the files read for NOLINT of cross-file findings).
void tether_lint__text_memo_free(void *p);

/* ---- the configuration of the run (run_config.c) ----------------------------------------------
 */

/// Finds (or takes --config), reads and parses the .tether-lint, turns rules on and off and merges
/// the active profiles into run->profile; `digest` receives the config file's SHA-256 (of no
/// bytes when there is none). 0, or -1 with a run message.
int tether_lint__load_config(tether_lint_run *run, unsigned char digest[32]);
/// Loads the compilation database of -p or --compile-commands, if any. 0, or -1 with a message.
int tether_lint__load_compile_db(tether_lint_run *run);

/* ---- discovery (discover.c) -------------------------------------------------------------------
 */

/// Adds `path` (`named`: given on the command line) and, for a directory, what is under it.
void tether_lint__walk(tether_lint_run *run, const char *path, int named);

/* ---- the schedule and the workers (workers.c), one input's analysis (analyse.c) ----------------
 */

/// Analyses every input, at most `jobs` translation units at a time.
void tether_lint__run_inputs(tether_lint_run *run, int jobs);
/// Parses and checks translation unit `f` on a thread with run->worker_stack bytes of stack, and
/// serializes the result into `out` (left empty when out of memory). -1 when the thread cannot
/// start.
int tether_lint__analyse_tu_on_big_stack(tether_lint_run *run, tether_lint_file *f,
                                         tether_lint__buf *out);
/// Analyses a build file or shared object with the family that claimed it.
void tether_lint__analyse_other(tether_lint_file *f);

/* ---- results (result.c) -----------------------------------------------------------------------
 */

/// Writes what analysing `w` produced. 0, or -1 when out of memory.
int tether_lint__result_serialize(const tether_lint_file *w, tether_lint__buf *out);
/// Checks a whole result and records where its parts are. 0, or -1 when malformed.
int tether_lint__result_parse(const char *data, size_t len, tether_lint_result_view *v);
/// Adds a checked result to the input's record.
void tether_lint__result_apply(tether_lint_file *f, const char *data, size_t len,
                               const tether_lint_result_view *v);

#endif
