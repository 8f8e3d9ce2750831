/* report.c: the helper's diagnostics, in the caller: the records the helper sent (protocol.h) are
 * emitted at the caller's own operations and locations, with their notes, as MLIR's verifier
 * would have emitted them here.
 *
 * Invariant: a malformed or truncated report is read up to its last whole record and never past
 * its end; an index that names no operation of the caller's tree puts the diagnostic at the root.
 */
#include "protocol.h"

typedef struct {
  MlirOperation *ops;
  size_t n, cap;
} op_list;

static MlirWalkResult list_cb(MlirOperation op, void *ud) {
  op_list *l = ud;
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 256;
    MlirOperation *n = realloc(l->ops, ncap * sizeof *n);
    if (!n) return MlirWalkResultInterrupt;
    l->ops = n;
    l->cap = ncap;
  }
  l->ops[l->n++] = op;
  return MlirWalkResultAdvance;
}

typedef struct {
  uint32_t kind, severity;
  int64_t index;
  MlirStringRef text;
} record;

/* The record at *at of r, advancing *at; false at the end or on a malformed record. */
static bool next_record(const tether__trial_report *r, size_t *at, record *out) {
  enum { HEAD = 3 * sizeof(uint32_t) + sizeof(int64_t) };
  if (r->len - *at < HEAD) return false;
  const char *p = r->data + *at;
  uint32_t len;
  memcpy(&out->kind, p, 4);
  memcpy(&out->severity, p + 4, 4);
  memcpy(&out->index, p + 8, 8);
  memcpy(&len, p + 16, 4);
  if (r->len - *at - HEAD < len) return false;
  out->text = (MlirStringRef){p + HEAD, len};
  *at += HEAD + len;
  return true;
}

void tether__trial_report_emit(tether__trial_report *r) {
  op_list l = {NULL, 0, 0};
  if (!mlirOperationIsNull(r->root)) mlirOperationWalk(r->root, list_cb, &l, MlirWalkPreOrder);
  MlirLocation fallback =
      mlirOperationIsNull(r->root) ? r->at : mlirOperationGetLocation(r->target);
  size_t at = 0;
  record rec;
  bool more = next_record(r, &at, &rec);
  int emitted = 0;
  while (more) {
    record head = rec;
    /* Its notes: the records of kind 1 after it. */
    MlirLocation note_locs[16];
    MlirStringRef notes[16];
    intptr_t n = 0;
    while ((more = next_record(r, &at, &rec)) && rec.kind == 1)
      if (n < 16) {
        note_locs[n] = rec.index >= 0 && (size_t)rec.index < l.n
                           ? mlirOperationGetLocation(l.ops[rec.index])
                           : fallback;
        notes[n++] = rec.text;
      }
    MlirLocation loc = head.index >= 0 && (size_t)head.index < l.n
                           ? mlirOperationGetLocation(l.ops[head.index])
                           : fallback;
    tether__emit_diagnostic(loc, (int)head.severity, head.text, n, note_locs, notes);
    emitted += head.severity == MlirDiagnosticError;
  }
  if (!emitted) /* the helper's report was lost (no memory): still an error */
    mlirEmitError(fallback, mlirOperationIsNull(r->root)
                                ? "the bytecode could not be read (in tether's trial helper)"
                                : "this operation does not verify (in tether's trial helper)");
  free(l.ops);
}

void tether__trial_report_free(tether__trial_report *r) {
  free(r->data);
  r->data = NULL;
  r->len = 0;
}
