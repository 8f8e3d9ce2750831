/* What an MLIR class is: the table of MLIR's classes the rules know, and the walk that finds a
 * class's category through its bases (op classes derive from `Op<...>`, which derives from
 * OpState; types from `StorageUserBase<..., Type, ...>`, which derives from its template argument).
 *
 * Invariant: a class's category is the first table entry met walking from the class itself
 * outwards (the class, then its bases in order, each through its template's pattern with the
 * arguments substituted), so the most specific entry wins (PatternRewriter is a rewriter before it
 * is a builder); a class of namespace tether is the arena's and never anything else. Nothing here
 * guesses from a spelling: names come from the declarations libclang resolved. */
#include "lint/direct/direct.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *qname;
  int cat;
} table[] = {
    {"mlir::Operation", DIRECT_OPERATION},
    {"mlir::Block", DIRECT_BLOCK},
    {"mlir::Region", DIRECT_REGION},
    {"mlir::OpState", DIRECT_OP},
    {"mlir::Op", DIRECT_OP},
    {"mlir::OpInterface", DIRECT_OP},
    {"mlir::Value", DIRECT_VALUE},
    {"mlir::detail::TypedValue", DIRECT_VALUE},
    {"mlir::OpOperand", DIRECT_OPERAND},
    {"mlir::BlockOperand", DIRECT_OPERAND},
    {"mlir::OpBuilder::InsertPoint", DIRECT_INSERTPOINT},
    {"mlir::RewriterBase", DIRECT_REWRITER},
    {"mlir::OpBuilder", DIRECT_BUILDER},
    {"mlir::IRMapping", DIRECT_IRVIEW},
    {"mlir::SymbolTable", DIRECT_IRVIEW},
    {"mlir::ValueRange", DIRECT_IRVIEW},
    {"mlir::OperandRange", DIRECT_IRVIEW},
    {"mlir::ResultRange", DIRECT_IRVIEW},
    {"mlir::BlockRange", DIRECT_IRVIEW},
    {"mlir::SuccessorRange", DIRECT_IRVIEW},
    {"mlir::RegionRange", DIRECT_IRVIEW},
    {"mlir::OpFoldResult", DIRECT_IRVIEW},
    {"mlir::Type", DIRECT_TYPE},
    {"mlir::LocationAttr", DIRECT_LOCATION},
    {"mlir::Location", DIRECT_LOCATION},
    {"mlir::Attribute", DIRECT_ATTRIBUTE},
    {"mlir::NamedAttribute", DIRECT_ATTRIBUTE},
    {"mlir::AffineMap", DIRECT_AFFINE},
    {"mlir::AffineExpr", DIRECT_AFFINE},
    {"mlir::IntegerSet", DIRECT_AFFINE},
    {"mlir::Dialect", DIRECT_DIALECT},
    {"mlir::OperationName", DIRECT_DIALECT},
    {"mlir::MLIRContext", DIRECT_CONTEXT},
    {"mlir::PassManager", DIRECT_PASSMANAGER},
    {"mlir::OpPassManager", DIRECT_PASSMANAGER},
};

static const struct {
  const char *noun, *owner;
} cats[DIRECT_NCATS] = {
    [DIRECT_NONE] = {"a class", ""},
    [DIRECT_OPERATION] = {"an operation", "its parent block"},
    [DIRECT_BLOCK] = {"a block", "its region"},
    [DIRECT_REGION] = {"a region", "its operation"},
    [DIRECT_OP] = {"an op (a raw Operation*)", "its parent block"},
    [DIRECT_VALUE] = {"a value", "its defining operation or block"},
    [DIRECT_OPERAND] = {"an operand", "its operation"},
    [DIRECT_INSERTPOINT] = {"an insertion point (a raw Block* and an iterator into it)",
                            "the block it points into"},
    [DIRECT_REWRITER] = {"a rewriter (its insertion point is a raw Block*)",
                         "the block it points into"},
    [DIRECT_BUILDER] = {"a builder (its insertion point is a raw Block*)",
                        "the block it points into"},
    [DIRECT_IRVIEW] = {"a view of IR (raw pointers into it)", "the IR it points into"},
    [DIRECT_TYPE] = {"a type", "its MLIRContext (uniqued there)"},
    [DIRECT_ATTRIBUTE] = {"an attribute", "its MLIRContext (uniqued there)"},
    [DIRECT_LOCATION] = {"a location", "its MLIRContext (uniqued there)"},
    [DIRECT_AFFINE] = {"an affine map or expression", "its MLIRContext (uniqued there)"},
    [DIRECT_DIALECT] = {"a dialect or operation name", "its MLIRContext"},
    [DIRECT_CONTEXT] = {"a context", ""},
    [DIRECT_PASSMANAGER] = {"a pass manager", ""},
    [DIRECT_TETHER] = {"a tether holder", ""},
};

int direct_is_ir(int cat) { return cat >= DIRECT_OPERATION && cat <= DIRECT_IRVIEW; }

int direct_is_ctx(int cat) { return cat >= DIRECT_TYPE && cat <= DIRECT_DIALECT; }

int direct_is_raw_ir(int cat) {
  return direct_is_ir(cat) && cat != DIRECT_BUILDER && cat != DIRECT_REWRITER;
}

const char *direct_cat_noun(int cat) {
  return cat >= 0 && cat < DIRECT_NCATS && cats[cat].noun ? cats[cat].noun : "a class";
}

const char *direct_cat_owner(int cat) {
  return cat >= 0 && cat < DIRECT_NCATS && cats[cat].owner ? cats[cat].owner : "";
}

int direct_cat_of_qualified(const char *qname) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].qname, qname) == 0) return table[i].cat;
  if (strncmp(qname, "tether::", 8) == 0) return DIRECT_TETHER;
  return DIRECT_NONE;
}

void direct_qualified_name(CXCursor decl, char *out, size_t len) {
  if (!len) return;
  out[0] = '\0';
  CXCursor tmpl = clang_getSpecializedCursorTemplate(decl);
  if (!clang_Cursor_isNull(tmpl)) decl = tmpl;
  char *parts[24];
  int np = 0;
  for (CXCursor c = decl;
       np < 24 && !clang_Cursor_isNull(c) && !clang_isInvalid(clang_getCursorKind(c));
       c = clang_getCursorSemanticParent(c)) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_TranslationUnit) break;
    if (k == CXCursor_LinkageSpec) continue;
    char *s = tether_lint__cx_take(clang_getCursorSpelling(c));
    if (!s) break;
    /* An inline namespace (std::__cxx11) is not part of the name a user writes. */
    if (k == CXCursor_Namespace && clang_Cursor_isInlineNamespace(c)) {
      free(s);
      continue;
    }
    parts[np++] = s;
  }
  size_t at = 0;
  for (int i = np - 1; i >= 0; i--) {
    int w =
        snprintf(out + at, len - at, "%s%s", parts[i][0] ? parts[i] : "(anonymous)", i ? "::" : "");
    if (w < 0 || (size_t)w >= len - at) {
      at = len - 1;
    } else {
      at += (size_t)w;
    }
    free(parts[i]);
  }
}

/* ---- the walk over bases --------------------------------------------------------------------- */

static int classify_type_at(direct_ctx *x, CXType t, int depth);

typedef struct bases {
  CXType v[32];
  int n;
} bases;

/* The base specifiers of a class or class template: they come first among its children. */
static enum CXChildVisitResult take_base(CXCursor k, CXCursor parent, CXClientData d) {
  (void)parent;
  bases *b = d;
  enum CXCursorKind kk = clang_getCursorKind(k);
  if (kk == CXCursor_CXXBaseSpecifier) {
    if (b->n < 32) b->v[b->n++] = clang_getCursorType(k);
    return CXChildVisit_Continue;
  }
  /* A template's parameters come before its bases; its members after them. */
  if (kk == CXCursor_TemplateTypeParameter || kk == CXCursor_NonTypeTemplateParameter ||
      kk == CXCursor_TemplateTemplateParameter)
    return CXChildVisit_Continue;
  return clang_isDeclaration(kk) ? CXChildVisit_Break : CXChildVisit_Continue;
}

/* "type-parameter-D-I" (a template type parameter, canonical): I, else -1. */
static int type_parameter_index(CXType t) {
  char *s = tether_lint__cx_take(clang_getTypeSpelling(clang_getCanonicalType(t)));
  int d = 0, i = -1;
  if (!s || sscanf(s, "type-parameter-%d-%d", &d, &i) != 2) i = -1;
  free(s);
  return i;
}

/* The category of the class (template) `decl`, met as the type `t` (whose template arguments
 * substitute the pattern's parameters). */
static int classify_decl_at(direct_ctx *x, CXCursor decl, CXType t, int depth) {
  if (depth > 12 || clang_Cursor_isNull(decl)) return DIRECT_NONE;
  char q[512];
  direct_qualified_name(decl, q, sizeof q);
  int cat = direct_cat_of_qualified(q);
  if (cat != DIRECT_NONE) return cat;
  enum CXCursorKind k = clang_getCursorKind(decl);
  CXCursor pattern = clang_getNullCursor();
  if (k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization) {
    pattern = decl;
  } else {
    CXCursor def = clang_getCursorDefinition(decl);
    if (!clang_Cursor_isNull(def)) decl = def;
    bases b = {.n = 0};
    clang_visitChildren(decl, take_base, &b);
    for (int i = 0; i < b.n; i++)
      if ((cat = classify_type_at(x, b.v[i], depth + 1)) != DIRECT_NONE) return cat;
    pattern = clang_getSpecializedCursorTemplate(decl);
  }
  if (clang_Cursor_isNull(pattern)) return DIRECT_NONE;
  bases b = {.n = 0};
  clang_visitChildren(pattern, take_base, &b);
  for (int i = 0; i < b.n; i++) {
    int p = type_parameter_index(b.v[i]);
    CXType bt = b.v[i];
    if (p >= 0) {
      /* `class X : public BaseT`: the argument the specialization gives BaseT. */
      if (p >= clang_Type_getNumTemplateArguments(t)) continue;
      bt = clang_Type_getTemplateArgumentAsType(t, (unsigned)p);
      if (bt.kind == CXType_Invalid) continue;
    }
    if ((cat = classify_type_at(x, bt, depth + 1)) != DIRECT_NONE) return cat;
  }
  return DIRECT_NONE;
}

static CXType strip_type(CXType t) {
  for (int i = 0; i < 8; i++) {
    t = clang_getCanonicalType(t);
    if (t.kind == CXType_Pointer || t.kind == CXType_LValueReference ||
        t.kind == CXType_RValueReference) {
      t = clang_getPointeeType(t);
      continue;
    }
    break;
  }
  return t;
}

static int classify_type_at(direct_ctx *x, CXType t, int depth) {
  t = strip_type(t);
  if (t.kind != CXType_Record && t.kind != CXType_Unexposed && t.kind != CXType_Elaborated)
    return DIRECT_NONE;
  CXCursor decl = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(decl)) return DIRECT_NONE;
  /* Plain classes are memoized by USR; specializations depend on their arguments. */
  int memo = clang_Cursor_isNull(clang_getSpecializedCursorTemplate(decl)) &&
             clang_getCursorKind(decl) != CXCursor_ClassTemplate;
  char *usr = memo ? tether_lint__cx_take(clang_getCursorUSR(decl)) : NULL;
  if (usr && usr[0]) {
    void **slot = tether_lint__strmap_get(&x->class_memo, usr);
    if (slot) {
      free(usr);
      return (int)(intptr_t)*slot - 1;
    }
  }
  int cat = classify_decl_at(x, decl, t, depth);
  if (usr && usr[0]) {
    void **slot = tether_lint__strmap_put(&x->class_memo, usr);
    if (slot) *slot = (void *)(intptr_t)(cat + 1);
  }
  free(usr);
  return cat;
}

int direct_classify_type(direct_ctx *x, CXType t, char *qname, size_t qlen) {
  if (qname && qlen) {
    qname[0] = '\0';
    CXCursor decl = clang_getTypeDeclaration(strip_type(t));
    if (!clang_Cursor_isNull(decl)) direct_qualified_name(decl, qname, qlen);
  }
  return classify_type_at(x, t, 0);
}

int direct_classify_decl(direct_ctx *x, CXCursor decl) {
  CXType t = clang_getCursorType(decl);
  if (t.kind == CXType_Invalid) return classify_decl_at(x, decl, t, 0);
  return classify_type_at(x, t, 0);
}

/* ---- what a bound function hands to Python --------------------------------------------------- */

/* The qualified name of the template a type specializes, or "". */
static void template_of(CXType t, char *out, size_t len) {
  out[0] = '\0';
  CXCursor decl = clang_getTypeDeclaration(clang_getCanonicalType(t));
  if (clang_Cursor_isNull(decl)) return;
  CXCursor tmpl = clang_getSpecializedCursorTemplate(decl);
  if (clang_Cursor_isNull(tmpl)) return;
  direct_qualified_name(tmpl, out, len);
}

static int is_owner_template(const char *q) {
  return strcmp(q, "std::unique_ptr") == 0 || strcmp(q, "std::shared_ptr") == 0 ||
         strcmp(q, "mlir::OwningOpRef") == 0;
}

static int raw_ir_at(direct_ctx *x, CXType t, direct_ret *out, int depth) {
  if (depth > 4) return 0;
  CXType s = strip_type(t);
  char q[256];
  int cat = direct_classify_type(x, s, q, sizeof q);
  if (direct_is_raw_ir(cat)) {
    out->cat = cat;
    snprintf(out->qname, sizeof out->qname, "%s", q);
    return 1;
  }
  if (cat != DIRECT_NONE) return 0;
  char tq[256];
  template_of(s, tq, sizeof tq);
  if (!tq[0] || is_owner_template(tq) || strcmp(tq, "std::function") == 0) return 0;
  /* A container of the standard library, LLVM or MLIR (vector, SmallVector, optional, pair,
   * FailureOr, ArrayRef...): what it holds. */
  if (strncmp(tq, "std::", 5) != 0 && strncmp(tq, "llvm::", 6) != 0 &&
      strncmp(tq, "mlir::", 6) != 0)
    return 0;
  int na = clang_Type_getNumTemplateArguments(s);
  for (int i = 0; i < na && i < 8; i++) {
    CXType a = clang_Type_getTemplateArgumentAsType(s, (unsigned)i);
    if (a.kind == CXType_Invalid) continue;
    if (raw_ir_at(x, a, out, depth + 1)) {
      out->in_container = 1;
      return 1;
    }
  }
  return 0;
}

int direct_type_raw_ir(direct_ctx *x, CXType t, direct_ret *out) {
  memset(out, 0, sizeof *out);
  return raw_ir_at(x, t, out, 0);
}

int direct_callback_raw_ir(direct_ctx *x, CXType t, direct_ret *out) {
  memset(out, 0, sizeof *out);
  CXType s = strip_type(t);
  char tq[256];
  template_of(s, tq, sizeof tq);
  if (strcmp(tq, "std::function") != 0 || clang_Type_getNumTemplateArguments(s) < 1) return 0;
  CXType sig = clang_getCanonicalType(clang_Type_getTemplateArgumentAsType(s, 0));
  int na = clang_getNumArgTypes(sig);
  for (int i = 0; i < na; i++)
    if (raw_ir_at(x, clang_getArgType(sig, (unsigned)i), out, 1)) return 1;
  return 0;
}
