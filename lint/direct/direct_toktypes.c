/* Types written in tokens: `Block *`, `scf::ForOp`, `std::vector<Value>`,
 * `std::function<void(Operation *)>`, `OwningOpRef<ModuleOp>`, as a registration, a written return
 * type or a parameter spells them where the AST lost the code.
 *
 * Invariant: a class is classified by the declaration its name resolves to through the parse
 * (direct_lookup.c), else by the file's own registrations (a project's op known by its base), else,
 * only in a file that names MLIR, by MLIR's own class names; the standard library's and LLVM's
 * classes are never MLIR's; a container is what it holds, an owner (unique_ptr, shared_ptr,
 * OwningOpRef) hands nothing raw out. Nothing else is guessed from a spelling. */
#include "lint/direct/direct_tokens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tokens [from, to) joined as C++ would print them (a space only between two words). */
void direct_tok_join(const struct direct_toks *k, size_t from, size_t to, char *out, size_t len) {
  size_t at = 0;
  out[0] = '\0';
  for (size_t i = from; i < to && at + 1 < len; i++) {
    int space = i > from && direct_tok_ident(k, i) &&
                (direct_tok_ident(k, i - 1) || k->t[i - 1].kind == CXToken_Keyword);
    space |= i > from && k->t[i].kind == CXToken_Keyword && direct_tok_ident(k, i - 1);
    space |= i > from &&
             (direct_tok_is(k, i, "*") || direct_tok_is(k, i, "&") || direct_tok_is(k, i, "&&")) &&
             (direct_tok_ident(k, i - 1) || k->t[i - 1].kind == CXToken_Keyword ||
              direct_tok_is(k, i - 1, ">"));
    int w = snprintf(out + at, len - at, "%s%s", space ? " " : "", k->t[i].s);
    if (w < 0 || (size_t)w >= len - at) break;
    at += (size_t)w;
  }
}

/* The `>` closing the `<` at `lt` (depth counted, `>>` closing two), within [lt, end); NO_MATCH. */
size_t direct_tok_angle_close(const struct direct_toks *k, size_t lt, size_t end) {
  int depth = 0;
  for (size_t i = lt; i < end && i < k->n; i++) {
    if (k->skip[i]) return NO_MATCH;
    if (direct_tok_is(k, i, "<"))
      depth++;
    else if (direct_tok_is(k, i, ">"))
      depth--;
    else if (direct_tok_is(k, i, ">>"))
      depth -= 2;
    else if (direct_tok_is(k, i, "(") || direct_tok_is(k, i, "[")) {
      if (k->match[i] == NO_MATCH) return NO_MATCH;
      i = k->match[i];
    } else if (direct_tok_is(k, i, ";") || direct_tok_is(k, i, "{") || direct_tok_is(k, i, "}")) {
      return NO_MATCH;
    }
    if (depth <= 0) return i;
  }
  return NO_MATCH;
}

/* Splits [from, to) at commas outside brackets and angle brackets: up to `max` ranges. */
int direct_tok_split_args(const struct direct_toks *k, size_t from, size_t to, size_t (*r)[2],
                          int max) {
  int n = 0, angle = 0;
  size_t start = from;
  for (size_t i = from; i < to; i++) {
    if ((direct_tok_is(k, i, "(") || direct_tok_is(k, i, "[") || direct_tok_is(k, i, "{")) &&
        k->match[i] != NO_MATCH && k->match[i] < to) {
      i = k->match[i];
      continue;
    }
    if (direct_tok_is(k, i, "<") && i > from && direct_tok_ident(k, i - 1)) angle++;
    if (direct_tok_is(k, i, ">") && angle > 0) angle--;
    if (direct_tok_is(k, i, ">>")) angle = angle > 1 ? angle - 2 : 0;
    if (direct_tok_is(k, i, ",") && angle == 0) {
      if (n < max) {
        r[n][0] = start;
        r[n][1] = i;
        n++;
      }
      start = i + 1;
    }
  }
  if (start < to && n < max) {
    r[n][0] = start;
    r[n][1] = to;
    n++;
  }
  return n;
}

int direct_tok_qualifier_word(const struct direct_toks *k, size_t i) {
  return direct_tok_is(k, i, "const") || direct_tok_is(k, i, "volatile") ||
         direct_tok_is(k, i, "typename") || direct_tok_is(k, i, "struct") ||
         direct_tok_is(k, i, "class") || direct_tok_is(k, i, "&") || direct_tok_is(k, i, "&&") ||
         direct_tok_is(k, i, "*");
}

/* MLIR's class names, for a parse that has no MLIR at all (its headers were not found). */
static int cat_by_mlir_name(const char *name) {
  static const struct {
    const char *n;
    int cat;
  } names[] = {
      {"Operation", DIRECT_OPERATION}, {"Block", DIRECT_BLOCK},
      {"Region", DIRECT_REGION},       {"OpState", DIRECT_OP},
      {"Value", DIRECT_VALUE},         {"OpResult", DIRECT_VALUE},
      {"BlockArgument", DIRECT_VALUE}, {"OpOperand", DIRECT_OPERAND},
      {"Type", DIRECT_TYPE},           {"Attribute", DIRECT_ATTRIBUTE},
      {"Location", DIRECT_LOCATION},   {"PassManager", DIRECT_PASSMANAGER},
      {"MLIRContext", DIRECT_CONTEXT},
  };
  if (strncmp(name, "mlir::", 6) == 0) name += 6;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].n, name) == 0) return names[i].cat;
  if (strcmp(name, "OpBuilder::InsertPoint") == 0) return DIRECT_INSERTPOINT;
  return DIRECT_NONE;
}

static const char *const containers[] = {
    "vector",   "SmallVector", "SmallVectorImpl", "optional",  "pair",
    "tuple",    "ArrayRef",    "MutableArrayRef", "FailureOr", "iterator_range",
    "set",      "map",         "unordered_map",   "list",      "deque",
    "DenseMap", "SetVector",   "Optional",
};

static int in_names(const char *s, const char *const *l, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(s, l[i]) == 0) return 1;
  return 0;
}

/* The category of a class named by a qualified name written in tokens (without arguments). */
static int cat_of_name(direct_ctx *x, const struct direct_toks *k, const char *name,
                       int *resolved) {
  /* The standard library's and LLVM's classes are never MLIR's (and are not indexed). */
  if (!strncmp(name, "std::", 5) || !strncmp(name, "llvm::", 6)) {
    *resolved = 1;
    return DIRECT_NONE;
  }
  CXCursor c = direct_lookup_class(x, name);
  if (!clang_Cursor_isNull(c)) {
    *resolved = 1;
    return direct_classify_decl(x, c);
  }
  const direct_reg *r = direct_find_reg(x, name);
  if (r && r->cat != DIRECT_NONE) {
    *resolved = 1;
    return r->cat;
  }
  /* MLIR's own names, when the parse does not declare them (the headers were not found, or are of
   * another MLIR): only in a file that names MLIR, spelled mlir::X or after `using namespace mlir`
   * or inside namespace mlir (a game's `Block` is not MLIR's). */
  if (k->mlir_named && (!strncmp(name, "mlir::", 6) || (k->using_mlir && !strstr(name, "::")))) {
    int cat = cat_by_mlir_name(name);
    if (cat != DIRECT_NONE) *resolved = 1;
    return cat;
  }
  return DIRECT_NONE;
}

void direct_tok_classify(direct_ctx *x, const struct direct_toks *k, size_t from, size_t to,
                         direct_ttype *out, int depth) {
  memset(out, 0, sizeof *out);
  direct_tok_join(k, from, to, out->written, sizeof out->written);
  while (from < to && direct_tok_qualifier_word(k, from)) from++;
  while (to > from && direct_tok_qualifier_word(k, to - 1)) to--;
  if (from >= to || depth > 4) return;
  /* The qualified name, up to a `<`. */
  char *name = out->name;
  size_t i = from, at = 0;
  name[0] = '\0';
  if (direct_tok_is(k, i, "::")) i++;
  while (i < to && (direct_tok_ident(k, i) || direct_tok_is(k, i, "::"))) {
    int w = snprintf(name + at, sizeof out->name - at, "%s", k->t[i].s);
    if (w < 0 || (size_t)w >= sizeof out->name - at) return;
    at += (size_t)w;
    i++;
  }
  if (!name[0]) return;
  const char *last = strrchr(name, ':');
  last = last ? last + 1 : name;
  if (i < to && direct_tok_is(k, i, "<")) {
    /* A `>>` closing this and the enclosing list ends the range the caller gave. */
    size_t close = direct_tok_angle_close(k, i, to);
    if (close == NO_MATCH) close = to;
    if (!strcmp(last, "unique_ptr") || !strcmp(last, "shared_ptr") ||
        !strcmp(last, "OwningOpRef")) {
      out->resolved = 1; /* an owner: nothing raw */
      return;
    }
    size_t r[8][2];
    if (!strcmp(last, "function")) {
      /* std::function<R(A, B)>: the parameters the callback is given. */
      size_t lp = i + 1;
      while (lp < close && !direct_tok_is(k, lp, "(")) lp++;
      if (lp >= close || k->match[lp] == NO_MATCH || k->match[lp] > close) return;
      int na = direct_tok_split_args(k, lp + 1, k->match[lp], r, 8);
      for (int a = 0; a < na; a++) {
        direct_ttype e;
        direct_tok_classify(x, k, r[a][0], r[a][1], &e, depth + 1);
        if (direct_is_raw_ir(e.cat)) {
          out->cat = e.cat;
          out->resolved = 1;
          out->callback = 1;
          return;
        }
      }
      return;
    }
    if (in_names(last, containers, sizeof containers / sizeof containers[0])) {
      int na = direct_tok_split_args(k, i + 1, close, r, 8);
      for (int a = 0; a < na; a++) {
        direct_ttype e;
        direct_tok_classify(x, k, r[a][0], r[a][1], &e, depth + 1);
        if (direct_is_raw_ir(e.cat)) {
          out->cat = e.cat;
          out->resolved = 1;
          out->in_container = 1;
          return;
        }
      }
      out->resolved = 1;
      return;
    }
  }
  out->cat = cat_of_name(x, k, name, &out->resolved);
}
