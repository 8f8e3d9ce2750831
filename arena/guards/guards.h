/* guards.h: the crash guards' private declarations (core/model.h has the map of arena/; tether.h,
 * "Crash guards", has the public ones). */
#ifndef TETHER_GUARDS_H
#define TETHER_GUARDS_H

#include "../core/internal.h"

/* ---- child.c: the one place libtether forks -------------------------------------------------- */

enum {
  TETHER__CHILD_QUIET = 1,           /* no core, no output, no diagnostics to the binding */
  TETHER__CHILD_DIE_WITH_PARENT = 2, /* killed when the process that forked it dies */
};
/* fork() with the child's set-up of flags: the pid in the parent (counted in tether__children),
 * 0 in the child, -1 when no child could be made. */
pid_t tether__child_fork(int flags);
/* Lets this process's data (RLIMIT_DATA, soft) grow by room bytes beyond its size now, and no
 * more (a trial child's or the trial helper's: an allocation past it fails as out of memory, a
 * verdict); room 0: as much again as now, at least TETHER__TRIAL_ROOM. Never above the soft limit
 * the process started with; nothing under AddressSanitizer. */
void tether__child_limit_memory(size_t room);
/* The least room of a trial (1 GiB). */
#define TETHER__TRIAL_ROOM ((size_t)1 << 30)
/* The trial helper's start: path run with argv in a process group of its own, stdin and stdout
 * stdio_fd, stderr /dev/null, no signal blocked, SIGPIPE, SIGSEGV and SIGABRT default. Its pid,
 * or -1. */
pid_t tether__child_spawn(const char *path, char *const argv[], int stdio_fd);
/* Waits for child pid (SIGKILL first when kill_first): its wait status. */
int tether__child_reap(pid_t pid, bool kill_first);
/* Waits up to timeout_ms for fd to be readable: 1 readable, 0 timed out, -1 error. */
int tether__child_poll(int fd, int timeout_ms);
/* Runs fn(ud) in a quiet child: 1 it returned (or the answer it gave through
 * tether__child_answer, >= 1), 0 it died, 2 it hung past timeout_ms (killed), -1 no child could
 * be made. */
int tether__in_child(void (*fn)(void *), void *ud, int timeout_ms);
void tether__child_answer(int answer);

/* ---- verdicts.c: keys and the process-wide cache of verdicts --------------------------------- */

/* Time limits of the children: a cached trial (inference, probes, parsers, orphan verifiers), the
 * verification of a suspect tree. */
#define TETHER__PROBE_TIMEOUT_MS 5000
#define TETHER__VERIFY_TIMEOUT_MS 30000

/* A key: words, each trial's own key space first. In its own storage while it fits (an inference's
 * key is a dozen words), else malloc; TETHER__KEY_INIT before use, tether__key_free after (the
 * verdict functions below free it themselves). */
enum { TETHER__KEY_SMALL = 32 };
typedef struct {
  uintptr_t *w;
  size_t n, cap;
  int oom;
  uintptr_t small[TETHER__KEY_SMALL];
} tether__key;
#define TETHER__KEY_INIT(k) ((k).w = (k).small, (k).n = 0, (k).cap = TETHER__KEY_SMALL, (k).oom = 0)
void tether__key_free(tether__key *k);
void tether__key_put(tether__key *k, uintptr_t x);
void tether__key_put_str(tether__key *k, MlirStringRef s);
/* The verdict for key k (freed here): cached, else the trial helper's (helper(ud), when given and
 * it has one), else tether__in_child's answer for fn(ud). The answers 0 (died) and 1 (returned)
 * are cached, 2 (hung) as 0 (the same call gets the same answer for the rest of the process);
 * -1 (no child, or no memory for the key) is not. */
int tether__cached_verdict(tether__key *k, int (*helper)(void *), void (*fn)(void *), void *ud);
int tether__cached_trial(tether__key *k, void (*fn)(void *), void *ud);

/* ---- text_guards.c, ir_guards.c, verdicts.c -------------------------------------------------- */

/* Whether text is MLIR bytecode (its magic number). */
static inline bool tether__is_bytecode(const char *text, size_t len) {
  return len >= 4 && memcmp(text, "ML\xefR", 4) == 0;
}
/* Reads bytecode (kind TETHER_PARSE_MODULE or TETHER_PARSE_OPERATION) where a malformed input
 * cannot crash this process: TETHER_OK with *out the bytecode to parse instead, MLIR's own writing
 * of what was read (malloc'ed, aligned; it needs no tether_parse_check), or
 * TETHER_EPARSE with diagnostics emitted (at source_name:0:0, as MLIR's reader reports). */
int tether__read_bytecode(MlirContext ctx, tether_parse_kind kind, const char *bytecode, size_t len,
                          const char *source_name, char **out, size_t *out_len);

/* Whether op, put into dest (a block; null: as a root), would nest operations deeper than
 * TETHER_MAX_NESTING; extra_above: operations above dest that are not there yet (1 for a region
 * of an operation being created). Operations without regions add no nesting anyone builds on and
 * are always accepted. */
int tether__nesting_exceeded(MlirBlock dest, int extra_above, MlirOperation op);
/* The same for the operations of region r, or of block b, put where `above` operations are
 * above them. */
int tether__region_nesting_exceeded(MlirRegion r, int above);
int tether__block_nesting_exceeded(MlirBlock b, int above);
/* Operations above block b: its parent operation and theirs (0 for a detached block). */
int tether__ops_above(MlirBlock b);
/* Whether verifying op, which has no parent operation, crashes MLIR (a verifier that needs its
 * parent); per operation name, in a child, cached. */
int tether__orphan_verify_crashes(MlirOperation op);
/* Whether MLIR's verifier must not run on op of tree t here (null op: the tree's top-level
 * operations, as printing verifies them): an op without a parent whose verifier needs one
 * (cached per name), or, in trees marked suspect (an inherent attribute removed or replaced by
 * one of another kind; a value's type changed; a registered operation built by hand), a trial
 * verification (the trial helper, else a forked child) that crashed, hung, or, in the helper,
 * found that the IR does not verify. */
int tether__verifier_crashes(tether__tree *t, MlirOperation op);
/* Emits a diagnostic and returns 1 when MLIR's verifier would crash on op of tree t, or IR inside
 * op uses values or blocks of another tree (what tether_op_verify and tether_op_run_passes refuse
 * before calling MLIR); 0 otherwise. */
int tether__unsafe_for_mlir(tether__tree *t, MlirOperation op, bool trusted);
/* Before passes, greedy rewrites and transforms (not verification: the IR is valid): registered
 * operations of a graph region on a cycle of uses (tether__registered_cycle) are refused with
 * TETHER_EPASS and a diagnostic at one of them. MLIR 22's canonicalize never ends on
 * arith.addi of a constant and itself (mlir-opt too). */
int tether__fold_cycle_error(MlirOperation op);
/* Emits a diagnostic and returns 1 when pm holds the inline pass and IR inside root an operation
 * of an unregistered dialect with regions (MLIR 19's inliner crashes on it). */
int tether__inliner_unsafe(MlirPassManager pm, MlirOperation root);
/* text_guards.c: why text must not be parsed: 1 it nests deeper than limit, 2 a resource blob's
 * alignment is 0 or more than TETHER_MAX_RESOURCE_ALIGNMENT (*align, when
 * given, says which), 0 none. */
int tether__text_refusal(const char *text, size_t len, size_t limit, uint64_t *align);
/* text_guards.c: allocates, writes and frees a block of every small size, twice: in a trial
 * process, after a call that may have corrupted the heap without crashing (MLIR 19's parser on
 * some text it rejects), so that the trial dies instead of answering "returned". */
void tether__heap_shake(void);
/* ssa_names.c: true when text may use a value name nothing defines before it (a forward
 * reference) and define a value name twice (also when out of memory: the answer is "maybe"). */
bool tether__ssa_forward_ref_and_redefinition(const char *text, size_t len);
/* verifier_gaps.c: true when op or an operation inside it is IR MLIR's verifier accepts and its
 * passes crash on (verifier_gaps.c has the list); with emit, a diagnostic at that operation says
 * why. */
bool tether__verifier_gap(MlirOperation op, bool emit);
/* verifier_gaps.c: true when text writes an operation of the list in the generic form (the only
 * form that can disagree with itself): tether's parses then parse it unverified and check first. */
bool tether__verifier_gap_mentioned(const char *text, size_t len);
/* Return-type inference of c tried in the trial helper (calls with regions are declined):
 * TETHER__TRIAL_RETURNED, DIED, HUNG, or -1 for no verdict. */
int tether__trial_infer(const tether_infer_call *c, int timeout_ms);
/* verdicts.c: the inference tether_infer tries, made deterministically, the types it gives read (a
 * garbage type crashes the trial; in a trial child or the helper). */
void tether__infer_try(const tether_infer_call *c);
/* verdicts.c: tether_infer, with the operation's OperationName (opaque pointer) when the caller has
 * it (NULL: looked up by c->name). */
int tether__infer(const tether_infer_call *c, void *opname, MlirTypesCallback types,
                  MlirShapedTypeComponentsCallback components, void *user);

#endif
