/* trial.h: the trial helper's client, as the guards use it (core/model.h has the map of arena/);
 * trial/protocol.h has what goes over the socket. */
#ifndef TETHER_TRIAL_H
#define TETHER_TRIAL_H

#include "../core/internal.h"

/* ---- client.c, report.c --------------------------------------------------------------------- */

/* What a trial says, in a forked child (guards/child.c) or in the trial helper (server.c). */
enum {
  TETHER__TRIAL_DIED = 0,        /* the call crashed, aborted or exited */
  TETHER__TRIAL_RETURNED = 1,    /* it returned (verification: the IR verified) */
  TETHER__TRIAL_HUNG = 2,        /* it did not return within the time limit (killed) */
  TETHER__TRIAL_FAILED = 3,      /* verification returned, and the IR does not verify */
  TETHER__TRIAL_DECLINED = 4,    /* the helper could not make the same call (server.c) */
  TETHER__TRIAL_BYTES = 5,       /* a read of bytecode returned: its bytecode follows (server.c) */
  TETHER__TRIAL_TOO_DEEP = 6,    /* ... and what it read nests deeper than the request's limit */
  TETHER__TRIAL_TOO_ALIGNED = 7, /* ... or holds resource blobs aligned beyond tether's maximum */
};
/* What the helper reported when the IR failed to verify: its diagnostics, to be emitted here. */
typedef struct {
  char *data;
  size_t len;
  MlirOperation root, target; /* null root: every diagnostic at `at` (a read of bytecode) */
  MlirLocation at;
} tether__trial_report;
/* Verification of target (root or an operation inside it) tried in the trial helper, root sent in
 * the generic form: what it says, or -1 for no verdict (no helper, or it cannot reproduce the IR:
 * then try in a forked child). On TETHER__TRIAL_FAILED, *report (when given) holds the helper's
 * diagnostics (free with tether__trial_report_free). */
int tether__trial_verify(MlirOperation root, MlirOperation target, int timeout_ms,
                         tether__trial_report *report);
/* Emits the diagnostics of a report in the caller's context, at the caller's operations (the same
 * text as MLIR's verifier gives here); an error at the target when none came through. */
void tether__trial_report_emit(tether__trial_report *r);
void tether__trial_report_free(tether__trial_report *r);
/* A parse of text as kind in ctx tried in the trial helper: TETHER__TRIAL_RETURNED, DIED, HUNG,
 * or -1 for no verdict. */
int tether__trial_parse(MlirContext ctx, tether_parse_kind kind, MlirStringRef text,
                        int timeout_ms);
/* Bytecode read by the trial helper (or, without one, a forked child doing its part), which
 * sends back what it read written again by MLIR's own writer: TETHER__TRIAL_BYTES with *out that
 * bytecode (malloc'ed, aligned to TETHER_MAX_RESOURCE_ALIGNMENT), TOO_DEEP or TOO_ALIGNED
 * (tether__text_refusal of what it read, printed, against limit), FAILED with *report the reader's
 * diagnostics (report->at unset), DIED, HUNG, or -1 when no process could read it. */
int tether__trial_read(MlirContext ctx, tether_parse_kind kind, MlirStringRef bytecode,
                       size_t limit, int timeout_ms, char **out, size_t *out_len,
                       tether__trial_report *report);
#endif
