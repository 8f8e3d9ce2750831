/* The direct-binding rule family's private interface: bindings that register MLIR's C++ classes
 * with pybind11 or nanobind themselves (`py::class_<Operation, ...>`, `nb::class_<Block>`) instead
 * of holding the IR through something that keeps it alive.
 *
 * The family reads a translation unit twice over: the AST where libclang resolved the binding
 * (registrations and `.def` calls into namespace pybind11 or nanobind), then, when the file does
 * not compile, its tokens for what the AST lost (a binding file read without its project's headers,
 * or without nanobind's), with the names in those tokens resolved through the declarations the
 * parse did see. Its files, in the order a reader meets them: rule_direct.c     the family: rules,
 * the entry point, messages, the degraded-mode note direct_classes.c  what an MLIR class is: the
 * table of MLIR's classes, the walk over bases direct_lookup.c   names written in tokens resolved
 * through the parse's declarations direct_ast.c      the AST pass: registrations and bound
 * callables libclang resolved direct_frees.c    what frees IR: calls in a callable's body (AST or
 * tokens), helpers followed direct_tokens.c   the token pass: registrations and `.def` chains the
 * AST does not have Names shared by these files start with `direct_`. */
#ifndef TETHER_LINT_DIRECT_H
#define TETHER_LINT_DIRECT_H

#include "lint/lint.h"
#include "lint/utils/clang_util.h"

#define DIRECT_RULE_IR "direct-ir-class"
#define DIRECT_RULE_CTX "direct-context-owned"
#define DIRECT_RULE_FREES "direct-frees-ir"
#define DIRECT_RULE_RAW "direct-raw-return"

/* What an MLIR class is, for the rules (direct_classes.c has the table). */
enum {
  DIRECT_NONE = 0,
  /* IR that other IR owns, or that points into it. */
  DIRECT_OPERATION,
  DIRECT_BLOCK,
  DIRECT_REGION,
  DIRECT_OP, /* OpState, every op class, op interfaces */
  DIRECT_VALUE,
  DIRECT_OPERAND,
  DIRECT_INSERTPOINT,
  DIRECT_REWRITER, /* RewriterBase and its subclasses (also builders) */
  DIRECT_BUILDER,  /* OpBuilder and its subclasses */
  DIRECT_IRVIEW,   /* IRMapping, SymbolTable, value and block ranges, OpFoldResult */
  /* Uniqued in (or owned by) an MLIRContext. */
  DIRECT_TYPE,
  DIRECT_ATTRIBUTE,
  DIRECT_LOCATION,
  DIRECT_AFFINE,
  DIRECT_DIALECT, /* Dialect, OperationName */
  /* Others the rules need to know. */
  DIRECT_CONTEXT, /* MLIRContext */
  DIRECT_PASSMANAGER,
  DIRECT_TETHER, /* a class of namespace tether: the arena's C++ holder */
  DIRECT_NCATS
};

/// 1 for a class that other IR owns or that points into IR (direct-ir-class).
int direct_is_ir(int cat);
/// 1 for a class its MLIRContext owns (direct-context-owned).
int direct_is_ctx(int cat);
/// 1 for IR that a bound function must not hand out raw (direct-raw-return): direct_is_ir but the
/// builders, which Python creates itself.
int direct_is_raw_ir(int cat);
/// A short noun for the category ("an operation", "a type"), and what owns it.
const char *direct_cat_noun(int cat);
const char *direct_cat_owner(int cat);
/// The category of an MLIR class by its qualified name ("mlir::Block"), DIRECT_NONE when the table
/// does not have it. Class templates are named without arguments ("mlir::Op").
int direct_cat_of_qualified(const char *qname);

/* ---- the per-file context ------------------------------------------------------------------- */

/// A class registration the file makes (AST or tokens), for the registrations' own findings and for
/// judging bound callables afterwards.
typedef struct direct_reg {
  char *written; /* as the file spells the class, qualifiers included ("scf::ForOp") */
  char *qname;   /* resolved ("mlir::scf::ForOp"), or NULL */
  char *display; /* for messages when the qualified name is a template's (a typedef of one) */
  int cat;
  int tether;      /* held through the arena (a holder or class of namespace tether) */
  int nodelete;    /* held by std::unique_ptr<T, py::nodelete>: Python never frees it */
  int lib;         /* TETHER_LINT_BIND_* */
  const char *how; /* how the category is known when not from the class: "(by its base ...)" */
  char *how_buf;   /* owns `how` when it is built */
  CXSourceLocation at;
} direct_reg;

typedef struct direct_ctx direct_ctx;

/// Ranges of offsets in the main file, queried by offset (sorted on the first query).
typedef struct direct_ranges {
  size_t *v;      /* [2i] start, [2i+1] end (inclusive) */
  size_t *maxend; /* the largest end among ranges 0..i, once sorted */
  size_t n, cap;
  int sorted;
} direct_ranges;

/// Adds [from, to] (spelling locations in the main file; elsewhere: ignored).
void direct_ranges_add(direct_ctx *x, direct_ranges *r, CXSourceLocation from, CXSourceLocation to);
/// 1 when `offset` lies in one of the ranges.
int direct_ranges_has(direct_ranges *r, size_t offset);
void direct_ranges_free(direct_ranges *r);

/// The file's index of declarations for names written in tokens (direct_lookup.c).
typedef struct direct_lookup direct_lookup;

struct direct_ctx {
  tether_lint_file *f;
  CXTranslationUnit tu;
  CXFile main;
  int errors; /* the file has compile errors: the token pass reads what the AST lost */
  tether_lint__strmap class_memo; /* USR -> category + 1 (as a pointer-sized integer) */
  direct_reg *regs;
  size_t nregs, capregs;
  int immortal_context;    /* MLIRContext is registered with a nodelete holder: never freed */
  int tether_casters;      /* arena/tether.hpp's casters: -1 not known yet, 0 no, 1 yes */
  direct_ranges judged;    /* what the AST judged: registrations' extents, `def` names */
  direct_ranges templates; /* the main file's templates: their dependent calls are the tokens' */
  tether_lint__strlist template_params; /* the names of their type parameters */
  direct_lookup *lookup;
  struct direct_toks *toks;       /* the main file's tokens, for the token pass (direct_tokens.c) */
  tether_lint__strmap frees_memo; /* USR of a helper -> its summary (direct_frees.c) */
  /* What the token pass did, for the note. */
  size_t tok_regs, tok_defs;    /* registrations and bound callables judged from tokens */
  size_t by_name;               /* classes known only by their name or their base */
  size_t unknown_classes;       /* registrations of classes the parse does not declare */
  tether_lint__strlist unknown; /* their spellings (the first few, for the note) */
  size_t unjudged_returns;      /* bound lambdas whose return type is neither known nor written */
  size_t unjudged_pointers;     /* bound member pointers of classes the parse does not declare */
  tether_lint__strlist unknown_owners; /* those classes (the first few, for the note) */
  int unknown_owners_more;             /* ... and there were more */
};

/// 1 when the AST judged the registration or `.def` whose name token starts at `offset`.
int direct_ast_judged(direct_ctx *x, size_t offset);
/// Records that the AST judged what lies between `from` and `to` (spelling locations in the main
/// file; a `class_` registration's extent, a `def` name).
void direct_mark_judged(direct_ctx *x, CXSourceLocation from, CXSourceLocation to);
/// Records a registration (copies the strings; takes `how_buf`, which may be NULL). The record, or
/// NULL when out of memory.
direct_reg *direct_add_reg(direct_ctx *x, const char *written, const char *qname, int cat,
                           char *how_buf);
/// The registration of a class by its qualified or written name, or NULL.
const direct_reg *direct_find_reg(const direct_ctx *x, const char *name);
/// Does Python get a held object, not a raw pointer, when a bound callable hands out this class
/// (`name`, of category `cat`)? Yes when the file registers it with a tether holder, or when the
/// file uses arena/tether.hpp (a registration with a tether holder, or the parse declares
/// tether::ref), whose pybind11 casters convert Operation, Block, Region, every op class and Value
/// into held objects whatever the registration.
int direct_held(direct_ctx *x, const char *name, int cat);

/* ---- classes (direct_classes.c) -------------------------------------------------------------- */

/// The qualified name of a declaration ("mlir::scf::ForOp"; a specialization by its template's
/// name), written to `out`.
void direct_qualified_name(CXCursor decl, char *out, size_t len);
/// The category of a type's class (pointers, references, cv and typedefs stripped): the class
/// itself, else its bases, through templates. Its qualified name is written to `qname` when not
/// NULL.
int direct_classify_type(direct_ctx *x, CXType t, char *qname, size_t qlen);
/// The category of a class declaration (a definition or not).
int direct_classify_decl(direct_ctx *x, CXCursor decl);

/// What a type hands to Python when a bound function returns it.
typedef struct direct_ret {
  int cat;          /* the raw IR class found (direct_is_raw_ir), or DIRECT_NONE */
  int in_container; /* inside a std/llvm/mlir container (a list of values...) */
  char qname[256];  /* its class */
} direct_ret;

/// Looks for raw IR in a returned type: the type itself (by value, pointer or reference) or the
/// element of a container; owners (unique_ptr, shared_ptr, OwningOpRef) hand nothing raw out. 1
/// when found.
int direct_type_raw_ir(direct_ctx *x, CXType t, direct_ret *out);
/// For a parameter of type `std::function<R(A...)>`: 1 when one of A... is raw IR (the callback
/// Python passes is called with raw IR).
int direct_callback_raw_ir(direct_ctx *x, CXType t, direct_ret *out);

/* ---- names from tokens (direct_lookup.c) ----------------------------------------------------- */

/// The class declaration a name written in the main file designates (`Block`, `scf::ForOp`,
/// `mlir::OpBuilder::InsertPoint`), through the file's using-directives and namespace aliases: a
/// cursor, or the null cursor when the parse does not declare it.
CXCursor direct_lookup_class(direct_ctx *x, const char *written);
/// A member of a class (a method or a field) by name, in the class or its bases; null when none.
CXCursor direct_lookup_member(direct_ctx *x, CXCursor cls, const char *name);
/// A function defined in the main file by its (unqualified) name, or the null cursor.
CXCursor direct_lookup_file_function(direct_ctx *x, const char *name);
void direct_lookup_free(direct_lookup *l);

/* ---- the AST pass (direct_ast.c) ------------------------------------------------------------- */

/// The binding method `name` is ("def", "def_readonly", nanobind's "def_prop_ro", ...) as a static
/// string of the table, or NULL when it binds nothing.
const char *direct_def_method(const char *name);

/// Where a bound callable was bound, for its findings.
typedef struct direct_site {
  CXSourceLocation at; /* the `def` name */
  const char *method;  /* "def", "def_static", "def_prop_ro", ... */
  char name[128];      /* the Python name, or "" */
  char policy[32];     /* the return value policy written, or "" */
} direct_site;

/// The AST's registrations (when `defs` is 0) or its bound callables (when 1), judged and marked.
void direct_ast_pass(direct_ctx *x, int defs);
/// What was reported for a site already (one finding per rule per bound callable).
enum { DIRECT_DONE_FREES = 1, DIRECT_DONE_RAW = 2 };
/// Judges one resolved callable (or data member) bound at `site`: direct-frees-ir from its body,
/// direct-raw-return from its return type and callback parameters, each unless `*done` says it was
/// reported for the site; `*done` is updated.
void direct_judge_callable(direct_ctx *x, const direct_site *site, CXCursor decl, CXType result,
                           int *done);

/* ---- what frees IR (direct_frees.c) ---------------------------------------------------------- */

/// Does a call of `callee` free IR? 1 with a short description ("Block::erase") in `why`.
int direct_frees_callee(direct_ctx *x, CXCursor callee, char *why, size_t len);
/// Does the body of `fn` (a function, method or a lambda's operator()) free IR, directly or through
/// a helper of the main file? 1 with the description in `why`.
int direct_body_frees(direct_ctx *x, CXCursor fn, char *why, size_t len);

/// For the token pass: a call named `name` that frees IR whatever its receiver (a rewriter's
/// eraseOp, mlir::applyPatternsGreedily, eraseArgument...): a prefix for its name in messages
/// ("a rewriter's ", "mlir::", ""), else NULL.
const char *direct_frees_by_name(const char *name);

/* ---- the token pass (direct_tokens.c) -------------------------------------------------------- */

/// Registrations (`defs` 0) or `.def` calls (1) written in the main file that the AST did not
/// judge, read from tokens.
void direct_token_pass(direct_ctx *x, int defs);
void direct_tokens_free(direct_ctx *x);

/* ---- reporting (rule_direct.c) --------------------------------------------------------------- */

/// The findings, with the fix in each message. Registrations are reported once every one is
/// known (a context registered with a nodelete holder is never freed: its types do not dangle).
void direct_report_registrations(direct_ctx *x);
void direct_report_frees(direct_ctx *x, const direct_site *site, const char *why);
void direct_report_raw(direct_ctx *x, const direct_site *site, const char *type, int cat,
                       int callback, int in_container);

#endif
