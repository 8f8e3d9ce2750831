/* Rule family "direct": bindings that give Python MLIR's C++ objects themselves.
 *
 * GPU kernel compilers and many other projects bind MLIR's C++ IR classes with pybind11 or nanobind
 * directly (`py::class_<Operation, std::unique_ptr<Operation, py::nodelete>>`, `py::class_<Block>`,
 * op classes through `py::class_<scf::ForOp, OpState>`, a builder whose methods return `Value` and
 * `Block *`). Every such Python object is a raw pointer into IR with no tie to what owns it and no
 * way to check it: seed 000's bug in its purest form. Four rules:
 *   direct-ir-class       a registration of an IR class other IR owns (Operation, Block, Region,
 *                         OpState and every op class, Value and its subclasses, OpOperand) or that
 *                         points into IR (insertion points, builders, IRMapping, ranges)
 *   direct-context-owned  a registration of a class its MLIRContext owns (Type, Attribute, Location
 *                         and their subclasses, affine maps, dialects), with nothing that keeps the
 *                         context alive
 *   direct-frees-ir       a bound callable that frees IR other Python objects may still point to
 *                         (erase, merges, clear, a pass manager's run, pattern drivers)
 *   direct-raw-return     a bound callable that hands raw IR to Python (returns it, or calls a
 *                         Python callback with it); off by default
 * Every finding names the fix: hold the IR through tether's C++ holder (arena/tether.hpp,
 * docs/cpp-bindings.md), or the upstream pattern of a wrapper that keeps its parent alive and
 * checks validity before each use.
 *
 * Invariant: what the AST resolved is judged from the AST; what it lost (a file that does not
 * compile) is judged from tokens, never twice; the registrations of the whole file are known before
 * any is reported or any bound callable is judged; the file gets one note saying what was read from
 * tokens and what could not be judged. */
#include "lint/direct/direct.h"
#include "lint/utils/bind_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX_HOLDER "tether's C++ holder (arena/tether.hpp, docs/cpp-bindings.md)"

static const tether_lint_rule_info direct_rules[] = {
    {DIRECT_RULE_IR, "an MLIR IR class registered for Python directly: a raw pointer into IR",
     "A pybind11 or nanobind registration (py::class_<T>, nb::class_<T>) of an MLIR class that "
     "other "
     "IR owns (Operation, Block, Region, OpState and every op class, Value and its subclasses, "
     "OpOperand) or that points into IR (OpBuilder, OpBuilder::InsertPoint, IRMapping, ranges). "
     "Each "
     "Python object of the class is a raw pointer with no tie to the IR that owns it: erasing the "
     "IR, "
     "its parent, the module, running a pass or a rewrite frees it under the Python object, which "
     "cannot tell (a py::nodelete holder only stops Python from deleting it). Using it then reads "
     "freed memory.",
     "hold the IR through " FIX_HOLDER ", which keeps what a Python object points into alive and "
     "makes a use after erase raise; or register a wrapper the upstream way (a Python object that "
     "holds its parent operation and checks validity before each use, as mlir.ir's PyOperation)"},
    {DIRECT_RULE_CTX,
     "an MLIR class its context owns (Type, Attribute, Location) registered with nothing that "
     "keeps "
     "the context alive",
     "A registration of a class whose objects an MLIRContext owns (types, attributes and locations "
     "are uniqued in it; affine maps, dialects and operation names live in it). Nothing ties the "
     "Python object to the Python object of its context: once the context is freed (the last "
     "reference to it dropped), every such object dangles.",
     "hold it through " FIX_HOLDER ", which keeps its context alive; or a wrapper that holds a "
     "reference to the context's Python object (as mlir.ir's PyType holds its PyMlirContextRef); "
     "or "
     "make the context immortal (register MLIRContext with a py::nodelete holder and never free "
     "it)"},
    {DIRECT_RULE_FREES, "a bound callable frees IR that other Python objects may still point to",
     "A function or method bound for Python (def, def_static, properties, m.def) whose body frees "
     "IR: "
     "Operation::erase or destroy, an op's erase, Block::erase or clear, erasing from a block's or "
     "region's list, a rewriter's eraseOp, eraseBlock, mergeBlocks, inlineBlockBefore or "
     "replaceOp, "
     "PassManager::run, or a pattern or conversion driver (applyPatternsGreedily, "
     "applyPartialConversion...), directly or through a helper of the file. Python objects of the "
     "freed IR (the block, its operations, their values, a builder's insertion point) are left "
     "dangling with no way to know.",
     "route the IR the callable frees through " FIX_HOLDER ", which invalidates the Python objects "
     "that point into it (a later use raises); or invalidate their wrappers before freeing, as "
     "mlir.ir's PyOperation::erase does"},
    {DIRECT_RULE_RAW, "a bound callable hands raw IR to Python (off by default)",
     "A function or method bound for Python that returns raw IR (an Operation*, Block*, Region&, a "
     "Value, an op class, an insertion point, or a container of them), with any return value "
     "policy "
     "(reference, reference_internal, automatic...), or calls a Python callback with raw IR "
     "(std::function<void(Operation *)>). The Python object it creates is a raw pointer: it does "
     "not "
     "keep the IR alive and cannot tell when it is freed. Off by default (a direct binding has one "
     "per bound accessor); enable it with --enable direct-raw-return or `enable = "
     "direct-raw-return`.",
     "return the IR through " FIX_HOLDER " (a class registered with it converts a returned pointer "
     "into a held object), or an upstream-style wrapper that holds its parent"},
};

static const char *const direct_off_by_default[] = {DIRECT_RULE_RAW, NULL};

/* ---- the per-file context ------------------------------------------------------------------- */

direct_reg *direct_add_reg(direct_ctx *x, const char *written, const char *qname, int cat,
                           char *how_buf) {
  if (tether_lint__grow(&x->regs, &x->capregs, x->nregs, sizeof *x->regs) != 0) {
    free(how_buf);
    return NULL;
  }
  direct_reg *r = &x->regs[x->nregs];
  memset(r, 0, sizeof *r);
  r->written = tether_lint__strdup(written ? written : "");
  r->qname = qname && qname[0] ? tether_lint__strdup(qname) : NULL;
  r->cat = cat;
  r->how_buf = how_buf;
  r->how = how_buf;
  r->at = clang_getNullLocation();
  if (!r->written) {
    free(r->qname);
    free(how_buf);
    return NULL;
  }
  x->nregs++;
  return r;
}

const direct_reg *direct_find_reg(const direct_ctx *x, const char *name) {
  if (!name || !name[0]) return NULL;
  for (size_t i = 0; i < x->nregs; i++) {
    const direct_reg *r = &x->regs[i];
    if ((r->qname && strcmp(r->qname, name) == 0) || strcmp(r->written, name) == 0) return r;
  }
  return NULL;
}

int direct_held(direct_ctx *x, const char *name, int cat) {
  const direct_reg *r = direct_find_reg(x, name);
  if (r && r->tether) return 1;
  if (cat != DIRECT_OPERATION && cat != DIRECT_BLOCK && cat != DIRECT_REGION && cat != DIRECT_OP &&
      cat != DIRECT_VALUE)
    return 0;
  if (x->tether_casters < 0) {
    x->tether_casters = 0;
    for (size_t i = 0; i < x->nregs && !x->tether_casters; i++)
      x->tether_casters = x->regs[i].tether;
    if (!x->tether_casters)
      x->tether_casters = !clang_Cursor_isNull(direct_lookup_class(x, "tether::ref"));
  }
  return x->tether_casters;
}

static size_t main_offset(const direct_ctx *x, CXSourceLocation loc, int *ok) {
  CXFile file = NULL;
  unsigned off = 0;
  clang_getSpellingLocation(loc, &file, NULL, NULL, &off);
  *ok = file && x->main && clang_File_isEqual(file, x->main);
  return off;
}

void direct_ranges_add(direct_ctx *x, direct_ranges *r, CXSourceLocation from,
                       CXSourceLocation to) {
  int ok1 = 0, ok2 = 0;
  size_t a = main_offset(x, from, &ok1), b = main_offset(x, to, &ok2);
  if (!ok1) return;
  if (!ok2 || b < a) b = a;
  if (tether_lint__grow(&r->v, &r->cap, r->n + 1, 2 * sizeof *r->v) != 0) return;
  r->v[2 * r->n] = a;
  r->v[2 * r->n + 1] = b;
  r->n++;
  r->sorted = 0;
}

static int cmp_range(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

int direct_ranges_has(direct_ranges *r, size_t offset) {
  if (!r->n) return 0;
  if (!r->sorted) {
    qsort(r->v, r->n, 2 * sizeof *r->v, cmp_range);
    free(r->maxend);
    r->maxend = malloc(r->n * sizeof *r->maxend);
    if (!r->maxend) return 0;
    for (size_t i = 0; i < r->n; i++)
      r->maxend[i] = i && r->maxend[i - 1] > r->v[2 * i + 1] ? r->maxend[i - 1] : r->v[2 * i + 1];
    r->sorted = 1;
  }
  /* The last range starting at or before `offset`, then back while one could still reach it. */
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->v[2 * mid] <= offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (size_t i = lo; i-- > 0 && r->maxend[i] >= offset;)
    if (r->v[2 * i + 1] >= offset) return 1;
  return 0;
}

void direct_ranges_free(direct_ranges *r) {
  free(r->v);
  free(r->maxend);
  memset(r, 0, sizeof *r);
}

void direct_mark_judged(direct_ctx *x, CXSourceLocation from, CXSourceLocation to) {
  direct_ranges_add(x, &x->judged, from, to);
}

int direct_ast_judged(direct_ctx *x, size_t offset) {
  return direct_ranges_has(&x->judged, offset);
}

/* ---- messages ------------------------------------------------------------------------------- */

static int owned(int cat) { return cat >= DIRECT_OPERATION && cat <= DIRECT_OPERAND; }

static const char *lib_class(int lib) {
  return lib == TETHER_LINT_BIND_NANOBIND ? "nb::class_" : "py::class_";
}

static void report_reg(direct_ctx *x, const direct_reg *r) {
  const char *cls = r->display ? r->display : r->qname ? r->qname : r->written;
  const char *how = r->how ? r->how : "";
  if (direct_is_ir(r->cat)) {
    tether_lint__report_tu(
        x->f, x->tu, r->at, DIRECT_RULE_IR,
        "%s<%s> registers %s%s%s%s: the Python object is a raw pointer with no tie to that IR, so "
        "erasing it or what owns it (a parent op, the module, a pass, a rewrite) leaves the object "
        "dangling, and nothing can check it%s; hold it through " FIX_HOLDER
        " or an upstream-style wrapper that keeps its parent alive and checks validity",
        lib_class(r->lib), cls, direct_cat_noun(r->cat), owned(r->cat) ? " owned by " : "",
        owned(r->cat) ? direct_cat_owner(r->cat) : "", how,
        r->nodelete ? " (py::nodelete only stops Python from deleting it; MLIR still frees it)"
                    : "");
  } else if (direct_is_ctx(r->cat)) {
    tether_lint__report_tu(x->f, x->tu, r->at, DIRECT_RULE_CTX,
                           "%s<%s> registers %s owned by %s%s: nothing ties the Python object to "
                           "the context, so once the context is freed the object dangles; hold it "
                           "through " FIX_HOLDER ", which keeps its context alive, or a wrapper "
                           "that holds the context's Python object",
                           lib_class(r->lib), cls, direct_cat_noun(r->cat),
                           direct_cat_owner(r->cat), how);
  }
}

void direct_report_registrations(direct_ctx *x) {
  for (size_t i = 0; i < x->nregs; i++) {
    const direct_reg *r = &x->regs[i];
    if (r->tether || clang_equalLocations(r->at, clang_getNullLocation())) continue;
    if (direct_is_ctx(r->cat) && x->immortal_context) continue;
    report_reg(x, r);
  }
}

static void site_name(const direct_site *site, char *out, size_t len) {
  if (site->name[0])
    snprintf(out, len, "'%s' (bound with %s)", site->name, site->method);
  else
    snprintf(out, len, "the callable bound with %s", site->method);
}

void direct_report_frees(direct_ctx *x, const direct_site *site, const char *why) {
  char who[200];
  site_name(site, who, sizeof who);
  tether_lint__report_tu(
      x->f, x->tu, site->at, DIRECT_RULE_FREES,
      "%s frees IR that other Python objects may still point to (%s): they are "
      "left dangling; route it through " FIX_HOLDER
      ", which invalidates them, or invalidate their wrappers first as mlir.ir's "
      "PyOperation::erase does",
      who, why);
}

void direct_report_raw(direct_ctx *x, const direct_site *site, const char *type, int cat,
                       int callback, int in_container) {
  char who[200], pol[64] = "";
  site_name(site, who, sizeof who);
  if (site->policy[0]) snprintf(pol, sizeof pol, " (policy %s)", site->policy);
  if (callback)
    tether_lint__report_tu(x->f, x->tu, site->at, DIRECT_RULE_RAW,
                           "%s calls a Python callback with raw IR ('%s': %s): the callback's "
                           "Python object does not keep the IR alive and cannot tell when it is "
                           "freed; pass it through " FIX_HOLDER " or an upstream-style wrapper",
                           who, type, direct_cat_noun(cat));
  else
    tether_lint__report_tu(x->f, x->tu, site->at, DIRECT_RULE_RAW,
                           "%s hands raw IR to Python: it returns '%s' (%s%s)%s; the Python object "
                           "does not keep the IR alive and cannot tell when it is freed; return it "
                           "through " FIX_HOLDER " or an upstream-style wrapper that holds its "
                           "parent",
                           who, type, in_container ? "a container of " : "", direct_cat_noun(cat),
                           pol);
}

/* One note for a file the token pass read: what came from tokens, what could not be judged. */
static void note(direct_ctx *x) {
  if (!x->tok_regs && !x->tok_defs && !x->unknown_classes && !x->unjudged_returns &&
      !x->unjudged_pointers)
    return;
  char hdr[512];
  tether_lint__missing_header(x->tu, NULL, hdr, sizeof hdr);
  tether_lint__buf b = {0};
  tether_lint__buf_printf(&b,
                          "direct: degraded mode: the file does not compile%s%s%s; from tokens: "
                          "%zu registration(s), %zu bound callable(s)",
                          hdr[0] ? " (missing header '" : "", hdr, hdr[0] ? "')" : "", x->tok_regs,
                          x->tok_defs);
  if (x->by_name) tether_lint__buf_printf(&b, " (%zu class(es) known by their base)", x->by_name);
  if (x->unknown_classes) {
    tether_lint__buf_printf(&b,
                            "; not judged: %zu registration(s) of classes the parse does not "
                            "declare (",
                            x->unknown_classes);
    for (size_t i = 0; i < x->unknown.n; i++)
      tether_lint__buf_printf(&b, "%s%s", i ? ", " : "", x->unknown.v[i]);
    tether_lint__buf_printf(&b, "%s)", x->unknown_classes > x->unknown.n ? ", ..." : "");
  }
  if ((x->unjudged_returns || x->unjudged_pointers) &&
      tether_lint__file_rule_enabled(x->f, DIRECT_RULE_RAW))
    tether_lint__buf_printf(&b,
                            "; not checked by direct-raw-return: %zu bound lambda(s) whose return "
                            "type is neither resolved nor written, %zu bound method(s) of classes "
                            "the parse does not declare",
                            x->unjudged_returns, x->unjudged_pointers);
  for (size_t i = 0;
       i < x->unknown_owners.n && tether_lint__file_rule_enabled(x->f, DIRECT_RULE_RAW); i++)
    tether_lint__buf_printf(&b, "%s%s", i ? ", " : " (", x->unknown_owners.v[i]);
  if (x->unknown_owners.n && tether_lint__file_rule_enabled(x->f, DIRECT_RULE_RAW))
    tether_lint__buf_printf(&b, "%s)", x->unknown_owners_more ? ", ..." : "");
  if (b.p) tether_lint__file_message(x->f, 0, "%s", b.p);
  tether_lint__buf_free(&b);
}

static void ctx_free(direct_ctx *x) {
  for (size_t i = 0; i < x->nregs; i++) {
    free(x->regs[i].written);
    free(x->regs[i].qname);
    free(x->regs[i].display);
    free(x->regs[i].how_buf);
  }
  free(x->regs);
  direct_ranges_free(&x->judged);
  direct_ranges_free(&x->templates);
  tether_lint__strmap_free(&x->class_memo, NULL);
  tether_lint__strmap_free(&x->frees_memo, free);
  tether_lint__strlist_free(&x->unknown);
  tether_lint__strlist_free(&x->unknown_owners);
  tether_lint__strlist_free(&x->template_params);
  direct_lookup_free(x->lookup);
  direct_tokens_free(x);
}

static int direct_check_tu(tether_lint_file *f, void *state, CXTranslationUnit tu) {
  (void)state;
  direct_ctx x;
  memset(&x, 0, sizeof x);
  x.f = f;
  x.tu = tu;
  x.main = tether_lint__main_file(tu);
  x.errors = tether_lint__error_count(tu) > 0;
  x.tether_casters = -1;
  /* Registrations first (all of them: a context registered anywhere decides for every type). */
  direct_ast_pass(&x, 0);
  direct_token_pass(&x, 0);
  direct_report_registrations(&x);
  direct_ast_pass(&x, 1);
  direct_token_pass(&x, 1);
  if (x.errors) note(&x);
  ctx_free(&x);
  return 0;
}

const tether_lint_family tether_lint__family_direct = {
    .name = "direct",
    .inputs = TETHER_LINT_IN_TU,
    .rules = direct_rules,
    .nrules = sizeof direct_rules / sizeof direct_rules[0],
    .off_by_default = direct_off_by_default,
    .check_tu = direct_check_tu,
};
