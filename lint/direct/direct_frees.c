/* What frees IR: the calls of MLIR's C++ API after which IR is gone, and the walk that finds them
 * in a bound callable's body, through the helpers the main file defines.
 *
 * Freeing calls: Operation::erase and destroy, OpState::erase (every op class), Block::erase and
 * clear, Block::eraseArgument(s) and Operation::eraseOperand(s) (the values and operands Python
 * may hold); erase, clear and pop_* on a block's or region's list of operations or blocks
 * (llvm::iplist deletes what it unlinks); RewriterBase's eraseOp, eraseBlock, mergeBlocks (and the
 * older mergeBlockBefore), inlineBlockBefore, replaceOp, replaceOpWithNewOp, replaceOpWithMultiple
 * (each erases an operation or block); PassManager::run; and the drivers that rewrite IR with
 * patterns (applyPatternsGreedily, applyPatternsAndFoldGreedily, applyOpPatternsGreedily,
 * applyOpPatternsAndFold, applyPartialConversion, applyFullConversion) or simplify it
 * (simplifyRegions, eraseUnreachableBlocks, runRegionDCE). Moving IR (inlineRegionBefore,
 * moveBefore, splice) frees nothing and is not one.
 *
 * Invariant: a callee counts by what libclang resolved it to (its class's category, its qualified
 * name), never by a spelling; a helper counts when the main file defines it, followed three calls
 * deep and memoized by USR, so a recursive helper ends. */
#include "lint/direct/direct.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rewriter_frees[] = {
    "eraseOp",           "eraseBlock", "mergeBlocks",        "mergeBlockBefore",
    "inlineBlockBefore", "replaceOp",  "replaceOpWithNewOp", "replaceOpWithMultiple",
};

static const char *const function_frees[] = {
    "applyPatternsGreedily",  "applyPatternsAndFoldGreedily", "applyOpPatternsGreedily",
    "applyOpPatternsAndFold", "applyPartialConversion",       "applyFullConversion",
    "simplifyRegions",        "eraseUnreachableBlocks",       "runRegionDCE",
};

static int in_list(const char *s, const char *const *l, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, l[i]) == 0) return 1;
  return 0;
}

/* Is `cls` llvm::iplist (or its base iplist_impl) of MLIR operations or blocks? */
static int is_ir_list(direct_ctx *x, CXCursor cls) {
  char q[256];
  direct_qualified_name(cls, q, sizeof q);
  if (strcmp(q, "llvm::iplist_impl") != 0 && strcmp(q, "llvm::iplist") != 0) return 0;
  CXType t = clang_getCursorType(cls);
  int na = clang_Type_getNumTemplateArguments(t);
  for (int i = 0; i < na; i++) {
    CXType a = clang_Type_getTemplateArgumentAsType(t, (unsigned)i);
    /* simple_ilist<Operation>, ilist_traits<Operation>: the element is their first argument. */
    if (clang_Type_getNumTemplateArguments(a) > 0) a = clang_Type_getTemplateArgumentAsType(a, 0);
    int cat = direct_classify_type(x, a, NULL, 0);
    if (cat == DIRECT_OPERATION || cat == DIRECT_BLOCK) return 1;
  }
  return 0;
}

int direct_frees_callee(direct_ctx *x, CXCursor callee, char *why, size_t len) {
  enum CXCursorKind k = clang_getCursorKind(callee);
  char *name = tether_lint__cx_take(clang_getCursorSpelling(callee));
  int yes = 0;
  if (!name) return 0;
  if (k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate) {
    CXCursor cls = clang_getCursorSemanticParent(callee);
    if (tether_lint__is_class_kind(clang_getCursorKind(cls))) {
      int cat = direct_classify_decl(x, cls);
      char q[256];
      direct_qualified_name(cls, q, sizeof q);
      const char *shortq = strncmp(q, "mlir::", 6) == 0 ? q + 6 : q;
      if ((cat == DIRECT_OPERATION || cat == DIRECT_OP) &&
          (strcmp(name, "erase") == 0 || strcmp(name, "destroy") == 0)) {
        snprintf(why, len, "%s::%s erases the operation, its regions and everything in them",
                 shortq, name);
        yes = 1;
      } else if ((cat == DIRECT_BLOCK || cat == DIRECT_OPERATION || cat == DIRECT_OP) &&
                 (strcmp(name, "eraseArgument") == 0 || strcmp(name, "eraseArguments") == 0 ||
                  strcmp(name, "eraseOperand") == 0 || strcmp(name, "eraseOperands") == 0)) {
        snprintf(why, len, "%s::%s erases %s", shortq, name,
                 name[5] == 'A' ? "block arguments (values)" : "operands");
        yes = 1;
      } else if (cat == DIRECT_BLOCK &&
                 (strcmp(name, "erase") == 0 || strcmp(name, "clear") == 0)) {
        snprintf(why, len, "Block::%s erases %s", name,
                 name[0] == 'e' ? "the block and its operations" : "the block's operations");
        yes = 1;
      } else if (cat == DIRECT_REWRITER &&
                 in_list(name, rewriter_frees, sizeof rewriter_frees / sizeof rewriter_frees[0])) {
        snprintf(why, len, "RewriterBase::%s erases an operation or block", name);
        yes = 1;
      } else if (cat == DIRECT_PASSMANAGER && strcmp(name, "run") == 0) {
        snprintf(why, len,
                 "PassManager::run runs passes, which may erase or replace any operation "
                 "under the one it runs on");
        yes = 1;
      } else if ((strcmp(name, "erase") == 0 || strcmp(name, "clear") == 0 ||
                  strcmp(name, "pop_back") == 0 || strcmp(name, "pop_front") == 0) &&
                 is_ir_list(x, cls)) {
        snprintf(why, len, "%s on a list of operations or blocks deletes what it removes", name);
        yes = 1;
      }
    }
  } else if (k == CXCursor_FunctionDecl) {
    CXCursor ns = clang_getCursorSemanticParent(callee);
    char q[256];
    direct_qualified_name(ns, q, sizeof q);
    if (strcmp(q, "mlir") == 0 &&
        in_list(name, function_frees, sizeof function_frees / sizeof function_frees[0])) {
      snprintf(why, len, "mlir::%s rewrites the IR, erasing and replacing operations", name);
      yes = 1;
    }
  }
  free(name);
  return yes;
}

/* ---- a body and the helpers it calls ------------------------------------------------------- */

typedef struct body_ctx {
  direct_ctx *x;
  int depth;
  int found;
  char *why;
  size_t len;
} body_ctx;

static int helper_frees(direct_ctx *x, CXCursor fn, int depth, char *why, size_t len);

static enum CXChildVisitResult body_visit(CXCursor c, CXCursor parent, CXClientData d) {
  (void)parent;
  body_ctx *b = d;
  enum CXCursorKind k = clang_getCursorKind(c);
  if (k != CXCursor_CallExpr) return CXChildVisit_Recurse;
  CXCursor callee = clang_getCursorReferenced(c);
  if (clang_Cursor_isNull(callee)) return CXChildVisit_Recurse;
  if (direct_frees_callee(b->x, callee, b->why, b->len)) {
    b->found = 1;
    return CXChildVisit_Break;
  }
  /* A helper of the main file: what its body does. */
  CXCursor def = clang_getCursorDefinition(callee);
  enum CXCursorKind dk = clang_getCursorKind(def);
  if (b->depth < 3 && !clang_Cursor_isNull(def) &&
      (dk == CXCursor_FunctionDecl || dk == CXCursor_CXXMethod || dk == CXCursor_Constructor) &&
      tether_lint__in_main_file(b->x->tu, clang_getCursorLocation(def))) {
    char inner[256];
    if (helper_frees(b->x, def, b->depth + 1, inner, sizeof inner)) {
      char *hn = tether_lint__cx_take(clang_getCursorSpelling(def));
      snprintf(b->why, b->len, "through '%s': %s", hn ? hn : "a helper", inner);
      free(hn);
      b->found = 1;
      return CXChildVisit_Break;
    }
  }
  return CXChildVisit_Recurse;
}

static int walk_body(direct_ctx *x, CXCursor fn, int depth, char *why, size_t len) {
  body_ctx b = {x, depth, 0, why, len};
  clang_visitChildren(fn, body_visit, &b);
  return b.found;
}

/* Helpers are memoized by USR: "0" clean, "1<why>" frees. */
static int helper_frees(direct_ctx *x, CXCursor fn, int depth, char *why, size_t len) {
  char *usr = tether_lint__cx_take(clang_getCursorUSR(fn));
  if (usr && usr[0]) {
    void **slot = tether_lint__strmap_get(&x->frees_memo, usr);
    if (slot && *slot) {
      const char *m = *slot;
      free(usr);
      if (m[0] != '1') return 0;
      snprintf(why, len, "%s", m + 1);
      return 1;
    }
    /* Mark it clean while its body is walked, so that recursion ends. */
    slot = tether_lint__strmap_put(&x->frees_memo, usr);
    if (slot && !*slot) *slot = tether_lint__strdup("0");
  }
  int r = walk_body(x, fn, depth, why, len);
  if (usr && usr[0] && r) {
    void **slot = tether_lint__strmap_get(&x->frees_memo, usr);
    tether_lint__buf m = {0};
    tether_lint__buf_printf(&m, "1%s", why);
    if (slot && m.p) {
      free(*slot);
      *slot = m.p;
    } else {
      tether_lint__buf_free(&m);
    }
  }
  free(usr);
  return r;
}

int direct_body_frees(direct_ctx *x, CXCursor fn, char *why, size_t len) {
  if (len) why[0] = '\0';
  /* A bound method that is itself a freeing call (`.def("erase", &Operation::erase)`). */
  if (direct_frees_callee(x, fn, why, len)) return 1;
  CXCursor def = clang_getCursorDefinition(fn);
  if (clang_Cursor_isNull(def)) return 0;
  /* Only bodies the main file has (a lambda's operator() is where the lambda is written). */
  if (!tether_lint__in_main_file(x->tu, clang_getCursorLocation(def))) return 0;
  return walk_body(x, def, 0, why, len);
}

const char *direct_frees_by_name(const char *name) {
  if (in_list(name, rewriter_frees, sizeof rewriter_frees / sizeof rewriter_frees[0]))
    return "a rewriter's ";
  if (in_list(name, function_frees, sizeof function_frees / sizeof function_frees[0]))
    return "mlir::";
  if (!strcmp(name, "eraseArgument") || !strcmp(name, "eraseArguments")) return "";
  return NULL;
}
