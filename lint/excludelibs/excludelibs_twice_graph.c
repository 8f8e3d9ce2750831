/* dialect-linked-twice, the cross-file pass: the run's link graph from every file's fact
 * (excludelibs_twice.h), CMake variables and Bazel labels resolved, MLIR's Python helpers expanded,
 * the static closure of every shared object walked (breadth-first, each node once: cycles end) and
 * the findings. excludelibs_twice.c reads the files. */
#include "lint/excludelibs/excludelibs_twice.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ==== the run's graph ==========================================================================
 */

typedef struct tw_rec {
  uint32_t type, kind, line, col, file;
  char *a, *b;
} tw_rec;

struct excl_twice {
  tether_lint__strlist files; /* as the user named them */
  unsigned char *bazel;       /* per file: a BUILD file */
  size_t capb;
  tw_rec *v;
  size_t n, cap;
};

excl_twice *excl_twice_new(void) { return calloc(1, sizeof(excl_twice)); }

void excl_twice_free(excl_twice *tw) {
  if (!tw) return;
  for (size_t i = 0; i < tw->n; i++) {
    free(tw->v[i].a);
    free(tw->v[i].b);
  }
  free(tw->v);
  free(tw->bazel);
  tether_lint__strlist_free(&tw->files);
  free(tw);
}

int excl_twice_take_fact(excl_twice *tw, const char *data, size_t len) {
  if (!tw) return -1;
  tether_lint__rd r = {(const unsigned char *)data, len, 0, 0};
  uint32_t magic = tether_lint__rd_u32(&r), bazel = tether_lint__rd_u32(&r);
  char *path = tether_lint__rd_str(&r);
  uint32_t n = tether_lint__rd_u32(&r);
  if (r.bad || magic != TW_MAGIC || bazel > 1 || n > TW_MAX_FILE_RECORDS) {
    free(path);
    return -1;
  }
  size_t file = tw->files.n;
  int rc = tether_lint__grow(&tw->bazel, &tw->capb, file, 1) != 0 ||
                   tether_lint__strlist_push(&tw->files, path) != 0
               ? -1
               : 0;
  free(path);
  if (rc) return -1;
  tw->bazel[file] = (unsigned char)bazel;
  for (uint32_t i = 0; i < n && !r.bad; i++) {
    tw_rec x = {0, 0, 0, 0, (uint32_t)file, NULL, NULL};
    x.type = tether_lint__rd_u32(&r);
    x.kind = tether_lint__rd_u32(&r);
    x.line = tether_lint__rd_u32(&r);
    x.col = tether_lint__rd_u32(&r);
    x.a = tether_lint__rd_str(&r);
    x.b = tether_lint__rd_str(&r);
    if (r.bad || x.type > TW_VAR || tw->n >= TW_MAX_RUN_RECORDS ||
        tether_lint__grow(&tw->v, &tw->cap, tw->n, sizeof *tw->v) != 0) {
      free(x.a);
      free(x.b);
      if (r.bad || x.type > TW_VAR) return -1;
      continue; /* over the run's cap: the rest of the graph is not read */
    }
    tw->v[tw->n++] = x;
  }
  return r.bad || r.off != len ? -1 : 0;
}

typedef struct tw_node {
  char *key;        /* "c:NAME", "b:WORKSPACE//PKG:NAME" or "b:@REPO//PKG:NAME" */
  char *show;       /* as messages name it */
  const char *bare; /* the target's own name, in `show` */
  int defined;
  uint32_t kind; /* TW_* with flags, when defined */
  int dialect;   /* tw_dialect(), once the graph is read */
  uint32_t file, line, col;
  size_t e0, ne; /* its edges, once sorted */
} tw_node;

typedef struct tw_edge {
  uint32_t from, to, kind, file, line, col;
  size_t seq;
} tw_edge;

typedef struct tw_graph {
  excl_twice *tw;
  const tether_lint_options *o;
  tw_node *n;
  size_t nn, capn;
  tether_lint__strmap ids; /* key -> node index + 1 */
  tw_edge *e;
  size_t ne, cape;
  tether_lint__strmap vars;    /* CMake variable -> tether_lint__strlist * of its values */
  tether_lint__strmap parents; /* MLIR Python sources: name -> its ADD_TO_PARENT (strdup) */
  tether_lint__strmap sources; /* aggregate node key -> tether_lint__strlist * */
  tether_lint__strmap repos;   /* a workspace's own name (workspace(), module()) -> its folder */
  tether_lint__strlist read;   /* the workspace files read for their names */
  char **ws, **pkg;            /* per file (BUILD files): workspace folder and package */
  uint64_t *memb;              /* declared extension << 32 | an aggregate it belongs to, sorted */
  size_t nmemb, capmemb;
  size_t steps;
  int oom;
} tw_graph;

static void tw_free_list(void *p) {
  tether_lint__strlist_free(p);
  free(p);
}

/* The node of `key`, created (undefined) when new. UINT32_MAX when out of memory. */
static uint32_t tw_node_of(tw_graph *g, const char *key, const char *show) {
  void **slot = tether_lint__strmap_get(&g->ids, key);
  if (slot) return (uint32_t)((uintptr_t)*slot - 1);
  if (g->nn >= UINT32_MAX - 1 || tether_lint__grow(&g->n, &g->capn, g->nn, sizeof *g->n) != 0 ||
      (slot = tether_lint__strmap_put(&g->ids, key)) == NULL) {
    g->oom = 1;
    return UINT32_MAX;
  }
  tw_node *x = &g->n[g->nn];
  memset(x, 0, sizeof *x);
  x->key = tether_lint__strdup(key);
  x->show = tether_lint__strdup(show);
  if (!x->key || !x->show) {
    free(x->key);
    free(x->show);
    g->oom = 1;
    return UINT32_MAX;
  }
  const char *colon = key[0] == 'b' ? strrchr(x->show, ':') : NULL;
  x->bare = colon ? colon + 1 : x->show;
  *slot = (void *)(uintptr_t)(g->nn + 1);
  return (uint32_t)g->nn++;
}

static void tw_edge_add(tw_graph *g, uint32_t from, uint32_t to, uint32_t kind, const tw_rec *at) {
  if (from == UINT32_MAX || to == UINT32_MAX) return;
  if (tether_lint__grow(&g->e, &g->cape, g->ne, sizeof *g->e) != 0) {
    g->oom = 1;
    return;
  }
  g->e[g->ne] = (tw_edge){from, to, kind, at->file, at->line, at->col, g->ne};
  g->ne++;
}

/* ---- names: CMake variables, Bazel labels ---------------------------------------------------- */

/* The words a CMake link item stands for: itself, or the values of `${VAR}` (every set() and
 * list(APPEND) of the run, recursively). An unresolved reference stays as written. */
static void tw_expand(tw_graph *g, const char *word, int depth, tether_lint__strlist *out) {
  if (out->n >= TW_MAX_EXPAND || g->steps >= TW_MAX_STEPS) return;
  g->steps++;
  size_t n = strlen(word);
  if (!tw_var_ref(word, n) || depth >= TW_MAX_DEPTH) {
    if (tether_lint__strlist_push(out, word) != 0) g->oom = 1;
    return;
  }
  char name[TW_MAX_NAME + 1];
  snprintf(name, sizeof name, "%.*s", (int)(n - 3), word + 2);
  void **slot = tether_lint__strmap_get(&g->vars, name);
  if (!slot) {
    if (tether_lint__strlist_push(out, word) != 0) g->oom = 1;
    return;
  }
  const tether_lint__strlist *vals = *slot;
  for (size_t i = 0; i < vals->n; i++) tw_expand(g, vals->v[i], depth + 1, out);
}

/* The name a WORKSPACE or MODULE.bazel gives its repository: workspace(name = "x"), module(name =
 * "x"). */
typedef struct tw_ws_scan {
  int depth, call, key;
  const char *prev;
  size_t prevn;
  char name[TW_MAX_NAME + 1];
} tw_ws_scan;

static void tw_ws_tok(const excl_tok *t, void *ud) {
  tw_ws_scan *w = ud;
  if (w->name[0]) return;
  if (t->kind == EXCL_TOK_OPEN) {
    if (w->depth == 0 && w->prev &&
        (tw_eq(w->prev, w->prevn, "workspace") || tw_eq(w->prev, w->prevn, "module")))
      w->call = 1;
    w->depth++;
  } else if (t->kind == EXCL_TOK_CLOSE) {
    if (w->depth > 0 && --w->depth == 0) w->call = 0;
  } else if (t->kind == EXCL_TOK_COMMA && w->depth == 1) {
    w->key = 0;
  } else if (t->kind == EXCL_TOK_OP && w->call && w->depth == 1 && tw_eq(t->s, t->n, "=")) {
    w->key = w->prev && tw_eq(w->prev, w->prevn, "name");
  } else if (t->kind == EXCL_TOK_STRING && w->call && w->key && w->depth == 1 &&
             tw_name_ok(t->s, t->n)) {
    snprintf(w->name, sizeof w->name, "%.*s", (int)t->n, t->s);
  }
  w->prev = t->kind == EXCL_TOK_NAME ? t->s : NULL;
  w->prevn = t->kind == EXCL_TOK_NAME ? t->n : 0;
}

/* Remembers the name the workspace file `path` of folder `ws` gives its repository. */
static void tw_repo_name(tw_graph *g, const char *path, const char *ws) {
  if (tether_lint__strlist_has(&g->read, path)) return;
  if (tether_lint__strlist_push(&g->read, path) != 0) g->oom = 1;
  char *text = NULL;
  size_t len = 0;
  if (tether_lint__read_file_max(path, 1u << 20, &text, &len) != 0) return;
  tw_ws_scan w;
  memset(&w, 0, sizeof w);
  excl_lex_starlark(text, len, tw_ws_tok, &w);
  free(text);
  if (!w.name[0] || tether_lint__strmap_get(&g->repos, w.name)) return;
  void **slot = tether_lint__strmap_put(&g->repos, w.name);
  if (!slot || !(*slot = tether_lint__strdup(ws))) g->oom = 1;
}

/* The workspace folder and package of a BUILD file: its folder relative to the nearest enclosing
 * folder with WORKSPACE, WORKSPACE.bazel, MODULE.bazel or REPO.bazel, else to the PATH of the run
 * that holds it. */
static void tw_bazel_home(tw_graph *g, const char *file, char **ws, char **pkg) {
  const tether_lint_options *o = g->o;
  static const char *const marks[] = {"WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", "REPO.bazel"};
  char dir[PATH_MAX], cur[PATH_MAX], probe[PATH_MAX + 32];
  if (!tether_lint__real_dir(file, dir)) {
    char *d = tether_lint__dir_name(file), *abs = d ? tether_lint__lexical_abs(d) : NULL;
    snprintf(dir, sizeof dir, "%s", abs ? abs : ".");
    free(d);
    free(abs);
  }
  snprintf(cur, sizeof cur, "%s", dir);
  size_t root = (size_t)-1;
  for (int guard = 0; guard < PATH_MAX && root == (size_t)-1; guard++) {
    for (size_t i = 0; i < sizeof marks / sizeof marks[0] && root == (size_t)-1; i++) {
      struct stat st;
      snprintf(probe, sizeof probe, "%s/%s", strcmp(cur, "/") == 0 ? "" : cur, marks[i]);
      if (stat(probe, &st) == 0 && S_ISREG(st.st_mode)) {
        root = strlen(cur);
        tw_repo_name(g, probe, strcmp(cur, "/") == 0 ? "" : cur);
      }
    }
    if (root != (size_t)-1) break;
    char *slash = strrchr(cur, '/');
    if (!slash || slash == cur) break;
    *slash = '\0';
  }
  if (root == (size_t)-1) {
    /* No workspace: the longest PATH of the run (a folder) that holds the file. */
    root = 0;
    for (size_t i = 0; o && i < o->paths.n; i++) {
      char p[PATH_MAX];
      struct stat st;
      if (stat(o->paths.v[i], &st) != 0 || !S_ISDIR(st.st_mode) ||
          !tether_lint__real_dir(o->paths.v[i], p))
        continue;
      size_t pl = strlen(p);
      if (pl > root && strncmp(dir, p, pl) == 0 && (dir[pl] == '/' || dir[pl] == '\0')) root = pl;
    }
    if (root == 0) root = strlen(dir);
  }
  if (root == 1 && dir[0] == '/') root = 0; /* the file system's root */
  *ws = malloc(root + 1);
  if (*ws) snprintf(*ws, root + 1, "%s", dir);
  const char *p = dir + root;
  while (*p == '/') p++;
  *pkg = tether_lint__strdup(p);
}

/* The node key and display name of a Bazel label written in package `pkg` of workspace `ws`:
 * ":x", "x", "//pkg:x", "//pkg" (target "pkg"'s last component), "@repo//pkg:x", "@//pkg:x". 0,
 * or -1 when it names no target (empty name, too long). */
static int tw_label(tw_graph *g, const char *ws, const char *pkg, const char *label, char *key,
                    size_t kl, char *show, size_t sl) {
  const char *l = label;
  if (strncmp(l, "@@//", 4) == 0)
    l += 2;
  else if (strncmp(l, "@//", 3) == 0)
    l += 1;
  char repo[TW_MAX_NAME + 1] = "", tpkg[TW_MAX_NAME + 1], name[TW_MAX_NAME + 1];
  if (l[0] == '@') {
    const char *dd = strstr(l, "//");
    size_t rn = dd ? (size_t)(dd - l) : strlen(l);
    snprintf(repo, sizeof repo, "%.*s", (int)rn, l);
    l = dd ? dd : "//";
    /* The run's own workspace, by the name it gives itself. */
    void **slot = tether_lint__strmap_get(&g->repos, repo + (repo[1] == '@' ? 2 : 1));
    if (slot && *slot) {
      ws = *slot;
      repo[0] = '\0';
    }
  }
  if (strncmp(l, "//", 2) == 0) {
    const char *t = l + 2, *colon = strchr(t, ':');
    if (colon) {
      snprintf(tpkg, sizeof tpkg, "%.*s", (int)(colon - t), t);
      snprintf(name, sizeof name, "%s", colon + 1);
    } else {
      snprintf(tpkg, sizeof tpkg, "%s", t);
      const char *last = strrchr(t, '/');
      snprintf(name, sizeof name, "%s", last ? last + 1 : (t[0] ? t : repo[0] ? repo + 1 : ""));
    }
  } else {
    snprintf(tpkg, sizeof tpkg, "%s", pkg);
    snprintf(name, sizeof name, "%s", l[0] == ':' ? l + 1 : l);
  }
  if (!name[0]) return -1;
  int k = repo[0] ? snprintf(key, kl, "b:%s//%s:%s", repo, tpkg, name)
                  : snprintf(key, kl, "b:%s//%s:%s", ws, tpkg, name);
  int s = snprintf(show, sl, "%s//%s:%s", repo, tpkg, name);
  return k < 0 || (size_t)k >= kl || s < 0 || (size_t)s >= sl ? -1 : 0;
}

/* The node that `word`, written in the record's file, names; UINT32_MAX when it names none. */
static uint32_t tw_ref(tw_graph *g, const tw_rec *x, const char *word) {
  char key[PATH_MAX + 3 * TW_MAX_NAME], show[3 * TW_MAX_NAME + 8];
  if (!g->tw->bazel[x->file]) {
    snprintf(key, sizeof key, "c:%s", word);
    return tw_node_of(g, key, word);
  }
  const char *ws = g->ws[x->file] ? g->ws[x->file] : "",
             *pkg = g->pkg[x->file] ? g->pkg[x->file] : "";
  if (tw_label(g, ws, pkg, word, key, sizeof key, show, sizeof show) != 0) return UINT32_MAX;
  return tw_node_of(g, key, show);
}

/* ---- building the graph --------------------------------------------------------------------- */

/* CMake variables and the parents of MLIR's Python sources, before any name is resolved. */
static void tw_read_names(tw_graph *g) {
  for (size_t i = 0; i < g->tw->n && !g->oom; i++) {
    const tw_rec *x = &g->tw->v[i];
    if (g->tw->bazel[x->file] || (x->type != TW_VAR && x->type != TW_PARENT)) continue;
    tether_lint__strmap *m = x->type == TW_VAR ? &g->vars : &g->parents;
    void **slot = tether_lint__strmap_get(m, x->a);
    if (!slot) {
      if ((slot = tether_lint__strmap_put(m, x->a)) == NULL) {
        g->oom = 1;
        break;
      }
      *slot = x->type == TW_VAR ? calloc(1, sizeof(tether_lint__strlist))
                                : (void *)tether_lint__strdup(x->b);
      if (!*slot) g->oom = 1;
      if (x->type == TW_PARENT) continue;
    }
    if (x->type == TW_VAR && *slot && tether_lint__strlist_push(*slot, x->b) != 0) g->oom = 1;
  }
}

/* Definitions (the first of a name wins), then links, then the aggregates' declared sources. */
static void tw_read_graph(tw_graph *g) {
  for (size_t i = 0; i < g->tw->n && !g->oom; i++) {
    const tw_rec *x = &g->tw->v[i];
    if (x->type != TW_DEF) continue;
    uint32_t id = tw_ref(g, x, x->a);
    if (id == UINT32_MAX || g->n[id].defined) continue;
    tw_node *d = &g->n[id];
    d->defined = 1;
    d->kind = x->kind;
    d->file = x->file;
    d->line = x->line;
    d->col = x->col;
  }
  for (size_t i = 0; i < g->tw->n && !g->oom; i++) {
    const tw_rec *x = &g->tw->v[i];
    if (x->type != TW_LINK && x->type != TW_SOURCES) continue;
    uint32_t from = tw_ref(g, x, x->a);
    if (from == UINT32_MAX) continue;
    if (g->tw->bazel[x->file]) {
      tw_edge_add(g, from, tw_ref(g, x, x->b), x->kind, x);
      continue;
    }
    tether_lint__strlist words = {0};
    tw_expand(g, x->b, 0, &words);
    if (x->type == TW_LINK) {
      for (size_t k = 0; k < words.n; k++)
        tw_edge_add(g, from, tw_ref(g, x, words.v[k]), x->kind, x);
    } else {
      void **slot = tether_lint__strmap_get(&g->sources, g->n[from].key);
      if (!slot && (slot = tether_lint__strmap_put(&g->sources, g->n[from].key)) != NULL)
        *slot = calloc(1, sizeof(tether_lint__strlist));
      if (!slot || !*slot) g->oom = 1;
      for (size_t k = 0; k < words.n && !g->oom; k++)
        if (tether_lint__strlist_add_unique(*slot, words.v[k]) != 0) g->oom = 1;
    }
    tether_lint__strlist_free(&words);
  }
}

/* 1 when an aggregate whose DECLARED_SOURCES are `src` holds the extension `ext`: the sources name
 * it, one of its ADD_TO_PARENT ancestors, or a dotted prefix of either (MLIR's naming). */
static int tw_declares(tw_graph *g, const tether_lint__strlist *src, const char *ext) {
  char cur[TW_MAX_NAME + 1];
  snprintf(cur, sizeof cur, "%s", ext);
  for (int depth = 0; depth < TW_MAX_DEPTH && cur[0]; depth++) {
    char pre[TW_MAX_NAME + 1];
    snprintf(pre, sizeof pre, "%s", cur);
    for (char *dot;;) {
      if (tether_lint__strlist_has(src, pre)) return 1;
      if ((dot = strrchr(pre, '.')) == NULL) break;
      *dot = '\0';
    }
    void **slot = tether_lint__strmap_get(&g->parents, cur);
    if (!slot || !*slot) break;
    snprintf(cur, sizeof cur, "%s", (const char *)*slot);
  }
  return 0;
}

/* An aggregate with a source tether-lint could not resolve may hold any extension. */
static int tw_open_sources(const tether_lint__strlist *src) {
  for (size_t i = 0; i < src->n; i++)
    if (strchr(src->v[i], '$')) return 1;
  return 0;
}

static int tw_u64_cmp(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : a > b;
}

/* The first element of the sorted v[0..n) that is not below `key`. */
static size_t tw_lower(const uint64_t *v, size_t n, uint64_t key) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int tw_has_u64(const uint64_t *v, size_t n, uint64_t key) {
  size_t i = tw_lower(v, n, key);
  return i < n && v[i] == key;
}

/* The aggregates (add_mlir_python_common_capi_library) that a declared extension belongs to: those
 * whose DECLARED_SOURCES name it (tw_declares); when none does, those with unresolved sources,
 * else the run's only aggregate. */
static void tw_members(tw_graph *g) {
  size_t nagg = 0, nopen = 0, last = 0;
  for (size_t i = 0; i < g->nn; i++) {
    if (!g->n[i].defined || !(g->n[i].kind & TW_F_AGG)) continue;
    void **slot = tether_lint__strmap_get(&g->sources, g->n[i].key);
    nagg++;
    last = i;
    if (slot && *slot && tw_open_sources(*slot)) nopen++;
  }
  for (size_t e = 0; e < g->nn && nagg && !g->oom; e++) {
    if (!g->n[e].defined || !(g->n[e].kind & TW_F_DECLARED)) continue;
    int placed = 0;
    for (int pass = 0; pass < 2 && !placed; pass++)
      for (size_t i = 0; i < g->nn && !g->oom; i++) {
        if (!g->n[i].defined || !(g->n[i].kind & TW_F_AGG)) continue;
        void **slot = tether_lint__strmap_get(&g->sources, g->n[i].key);
        const tether_lint__strlist *src = slot ? *slot : NULL;
        int holds = pass == 0 ? src && tw_declares(g, src, g->n[e].bare)
                              : (nopen ? src && tw_open_sources(src) : i == last && nagg == 1);
        if (!holds) continue;
        if (tether_lint__grow(&g->memb, &g->capmemb, g->nmemb, sizeof *g->memb) != 0) {
          g->oom = 1;
          break;
        }
        g->memb[g->nmemb++] = (uint64_t)e << 32 | (uint64_t)i;
        placed = 1;
      }
  }
  if (g->nmemb > 1) qsort(g->memb, g->nmemb, sizeof *g->memb, tw_u64_cmp);
}

/* add_mlir_python_common_capi_library embeds the EMBED_CAPI_LINK_LIBS of every extension it holds:
 * each such link becomes the aggregate's (at the extension's line). */
static void tw_embed(tw_graph *g) {
  tw_members(g);
  size_t ne = g->ne;
  for (size_t k = 0; k < ne && !g->oom; k++) {
    tw_edge x = g->e[k];
    if (x.kind != TW_L_EMBED) continue;
    for (size_t m = tw_lower(g->memb, g->nmemb, (uint64_t)x.from << 32);
         m < g->nmemb && g->memb[m] >> 32 == x.from; m++) {
      tw_rec at = {0, 0, x.line, x.col, x.file, NULL, NULL};
      tw_edge_add(g, (uint32_t)(g->memb[m] & 0xffffffffu), x.to, TW_L_LINK, &at);
    }
  }
}

static int tw_edge_cmp(const void *pa, const void *pb) {
  const tw_edge *a = pa, *b = pb;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Each node's edges, in the order they were written. */
static void tw_index_edges(tw_graph *g) {
  if (g->ne > 1) qsort(g->e, g->ne, sizeof *g->e, tw_edge_cmp);
  for (size_t i = 0; i < g->ne;) {
    size_t j = i;
    while (j < g->ne && g->e[j].from == g->e[i].from) j++;
    g->n[g->e[i].from].e0 = i;
    g->n[g->e[i].from].ne = j - i;
    i = j;
  }
}

/* ---- closures ------------------------------------------------------------------------------- */

/* A library whose copy is what goes wrong: the project's own, static, and a dialect by its helper
 * or by its name (MLIR*Dialect, *Dialect, *Dialects, *IR). */
static int tw_dialect(const tw_node *d) {
  if (!d->defined || TW_KIND(d->kind) != TW_STATIC) return 0;
  size_t n = strlen(d->bare);
  return (d->kind & TW_F_DIALECT) || tw_ends(d->bare, n, "Dialect") ||
         tw_ends(d->bare, n, "Dialects") || tw_ends(d->bare, n, "IR");
}

/* Copied into whatever links it: a static library or a name for one (alias, interface). */
static int tw_copied(const tw_node *d) {
  return d->defined && (TW_KIND(d->kind) == TW_STATIC || TW_KIND(d->kind) == TW_PASS);
}

static int tw_root(const tw_node *d) {
  return d->defined && (TW_KIND(d->kind) == TW_SHARED || TW_KIND(d->kind) == TW_EXT);
}

/* A shared object holding a dialect library, through one of its links. */
typedef struct tw_copy {
  uint32_t lib, root, edge;
} tw_copy;

typedef struct tw_walk {
  uint32_t *seen, *given, *label, *queue; /* per node: stamps, the link that reached it, BFS */
  uint32_t stamp;
} tw_walk;

/* Marks the static closure of node `v` as provided by a dynamic dependency (Bazel's dynamic_deps:
 * what a shared object in it holds is not linked again). */
static void tw_provide(tw_graph *g, tw_walk *w, uint32_t v) {
  size_t head = 0, tail = 0;
  if (tw_root(&g->n[v])) {
    for (size_t k = 0; k < g->n[v].ne; k++) {
      uint32_t t = g->e[g->n[v].e0 + k].to;
      if (tw_copied(&g->n[t]) && w->given[t] != w->stamp) {
        w->given[t] = w->stamp;
        w->queue[tail++] = t;
      }
    }
  } else if (tw_copied(&g->n[v]) && w->given[v] != w->stamp) {
    w->given[v] = w->stamp;
    w->queue[tail++] = v;
  }
  while (head < tail && g->steps < TW_MAX_STEPS) {
    const tw_node *u = &g->n[w->queue[head++]];
    for (size_t k = 0; k < u->ne; k++, g->steps++) {
      uint32_t t = g->e[u->e0 + k].to;
      if (!tw_copied(&g->n[t]) || w->given[t] == w->stamp) continue;
      w->given[t] = w->stamp;
      w->queue[tail++] = t;
    }
  }
}

/* Appends to `v` the dialect libraries copied into root `r`, each with the link of r it came
 * through: breadth-first from r's links in their order, each node once. */
static int tw_closure(tw_graph *g, tw_walk *w, uint32_t r, tw_copy **v, size_t *n, size_t *cap) {
  const tw_node *root = &g->n[r];
  w->stamp++;
  for (size_t k = 0; k < root->ne; k++)
    if (g->e[root->e0 + k].kind == TW_L_DYN) tw_provide(g, w, g->e[root->e0 + k].to);
  size_t head = 0, tail = 0;
  for (size_t k = 0; k < root->ne; k++) {
    const tw_edge *x = &g->e[root->e0 + k];
    if (x->kind != TW_L_LINK || !tw_copied(&g->n[x->to])) continue;
    if (w->seen[x->to] == w->stamp || w->given[x->to] == w->stamp) continue;
    w->seen[x->to] = w->stamp;
    w->label[x->to] = (uint32_t)(root->e0 + k);
    w->queue[tail++] = x->to;
  }
  while (head < tail && g->steps < TW_MAX_STEPS) {
    uint32_t u = w->queue[head++];
    const tw_node *un = &g->n[u];
    for (size_t k = 0; k < un->ne; k++, g->steps++) {
      const tw_edge *x = &g->e[un->e0 + k];
      if (x->kind != TW_L_LINK || !tw_copied(&g->n[x->to])) continue;
      if (w->seen[x->to] == w->stamp || w->given[x->to] == w->stamp) continue;
      w->seen[x->to] = w->stamp;
      w->label[x->to] = w->label[u];
      w->queue[tail++] = x->to;
    }
  }
  for (size_t i = 0; i < tail && *n < TW_MAX_RUN_RECORDS; i++) {
    uint32_t d = w->queue[i];
    if (!g->n[d].dialect) continue;
    if (tether_lint__grow(v, cap, *n, sizeof **v) != 0) return -1;
    (*v)[(*n)++] = (tw_copy){d, r, w->label[d]};
  }
  return 0;
}

/* ---- pairs and findings --------------------------------------------------------------------- */

/* A finding: the link of the second object, the library, the first object and how many other
 * objects hold the library too. */
typedef struct tw_hit {
  uint32_t edge, lib, other;
  size_t nothers;
} tw_hit;

typedef struct tw_pass {
  tw_graph *g;
  uint32_t *roots; /* in declaration order (file, line, column) */
  size_t nroots;
  uint32_t *rank; /* per node: its place in `roots` */
  tw_copy *copies;
  size_t ncopies, capcopies;
  tw_hit *hits;
  size_t nhits, caphits;
  uint64_t
      *co; /* two shared libraries (not extensions) one extension loads, lower << 32 | higher */
  size_t nco, capco;
} tw_pass;

static const tw_graph *tw_sort_graph; /* for the qsort comparators below */
static const tw_pass *tw_sort_pass;

static int tw_place_cmp(const tw_node *a, const tw_node *b) {
  int c = strcmp(tw_sort_graph->tw->files.v[a->file], tw_sort_graph->tw->files.v[b->file]);
  if (c) return c;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  if (a->col != b->col) return a->col < b->col ? -1 : 1;
  return strcmp(a->key, b->key);
}

static int tw_root_cmp(const void *pa, const void *pb) {
  const uint32_t *a = pa, *b = pb;
  return tw_place_cmp(&tw_sort_graph->n[*a], &tw_sort_graph->n[*b]);
}

static int tw_copy_cmp(const void *pa, const void *pb) {
  const tw_copy *a = pa, *b = pb;
  if (a->lib != b->lib) return a->lib < b->lib ? -1 : 1;
  uint32_t ra = tw_sort_pass->rank[a->root], rb = tw_sort_pass->rank[b->root];
  return ra < rb ? -1 : ra > rb;
}

static int tw_hit_cmp(const void *pa, const void *pb) {
  const tw_hit *a = pa, *b = pb;
  if (a->edge != b->edge) return a->edge < b->edge ? -1 : 1;
  int c = strcmp(tw_sort_graph->n[a->lib].show, tw_sort_graph->n[b->lib].show);
  if (c) return c;
  return a->lib < b->lib ? -1 : a->lib > b->lib;
}

static int tw_is_ext(const tw_node *d) { return TW_KIND(d->kind) == TW_EXT; }

/* Whether one process is taken to load both shared objects x and y:
 *  - two extensions: yes, unless both are declared with MLIR's helpers for different packages
 *    (add_mlir_python_modules builds a declared extension once per aggregate it belongs to);
 *  - an extension and a shared library: yes, unless the extension is declared with MLIR's helpers
 *    and the library is an aggregate of another package;
 *  - two shared libraries: when one extension links both (directly or through what it links):
 *    separate packages and plugins of other programs (a Tcl module, an mlir-opt plugin) are not
 *    assumed to meet. */
static int tw_together(const tw_pass *p, uint32_t x, uint32_t y) {
  const tw_graph *g = p->g;
  const tw_node *nx = &g->n[x], *ny = &g->n[y];
  if (tw_is_ext(ny) && !tw_is_ext(nx)) {
    uint32_t t = x;
    x = y;
    y = t;
    nx = &g->n[x];
    ny = &g->n[y];
  }
  if (tw_is_ext(nx) && tw_is_ext(ny)) {
    if (!(nx->kind & TW_F_DECLARED) || !(ny->kind & TW_F_DECLARED)) return 1;
    size_t n = g->nmemb, ix = tw_lower(g->memb, n, (uint64_t)x << 32),
           iy = tw_lower(g->memb, n, (uint64_t)y << 32);
    if (ix >= n || g->memb[ix] >> 32 != x || iy >= n || g->memb[iy] >> 32 != y) return 1;
    for (; ix < n && g->memb[ix] >> 32 == x; ix++)
      if (tw_has_u64(g->memb, n, (uint64_t)y << 32 | (g->memb[ix] & 0xffffffffu))) return 1;
    return 0; /* packages of their own */
  }
  if (tw_is_ext(nx)) {
    if (!(nx->kind & TW_F_DECLARED) || !(ny->kind & TW_F_AGG)) return 1;
    return tw_has_u64(g->memb, g->nmemb, (uint64_t)x << 32 | y);
  }
  uint64_t key = x < y ? (uint64_t)x << 32 | y : (uint64_t)y << 32 | x;
  return tw_has_u64(p->co, p->nco, key);
}

/* 1 when of the pair (b, a) the finding goes to b: the extension when exactly one is one, else
 * the one declared later. */
static int tw_second(const tw_pass *p, uint32_t b, uint32_t a) {
  int eb = tw_is_ext(&p->g->n[b]), ea = tw_is_ext(&p->g->n[a]);
  if (eb != ea) return eb;
  return p->rank[b] > p->rank[a];
}

/* The shared objects c[0..n) that hold one library: each that is the second of a pair loaded
 * together gets one hit, naming the first object it pairs with (a shared library before an
 * extension, then the first declared) and how many it pairs with. */
static int tw_lib_hits(tw_pass *p, const tw_copy *c, size_t n) {
  tw_graph *g = p->g;
  for (size_t i = 0; i < n; i++) {
    size_t nothers = 0, best = n;
    for (size_t j = 0; j < n && g->steps < TW_MAX_STEPS; j++, g->steps++) {
      if (j == i || !tw_second(p, c[i].root, c[j].root) || !tw_together(p, c[i].root, c[j].root))
        continue;
      nothers++;
      if (best == n || tw_is_ext(&g->n[c[best].root]) > tw_is_ext(&g->n[c[j].root])) best = j;
    }
    if (!nothers) continue;
    if (tether_lint__grow(&p->hits, &p->caphits, p->nhits, sizeof *p->hits) != 0) return -1;
    p->hits[p->nhits++] = (tw_hit){c[i].edge, c[i].lib, c[best].root, nothers};
  }
  return 0;
}

/* The shared libraries (not extensions) extension `r` loads: what its links reach through static
 * libraries and other shared objects, dynamic dependencies included. Each pair of them is one
 * process's (p->co). */
static int tw_loads(tw_pass *p, tw_walk *w, uint32_t r) {
  tw_graph *g = p->g;
  w->stamp++;
  size_t head = 0, tail = 0;
  uint32_t *libs = NULL;
  size_t nlibs = 0, cap = 0;
  w->seen[r] = w->stamp;
  w->queue[tail++] = r;
  while (head < tail && g->steps < TW_MAX_STEPS) {
    const tw_node *u = &g->n[w->queue[head++]];
    for (size_t k = 0; k < u->ne; k++, g->steps++) {
      const tw_edge *x = &g->e[u->e0 + k];
      const tw_node *t = &g->n[x->to];
      if (x->kind == TW_L_EMBED || w->seen[x->to] == w->stamp || !t->defined) continue;
      if (!tw_copied(t) && !tw_root(t)) continue;
      w->seen[x->to] = w->stamp;
      w->queue[tail++] = x->to;
      if (tw_root(t) && !tw_is_ext(t)) {
        if (tether_lint__grow(&libs, &cap, nlibs, sizeof *libs) != 0) goto oom;
        libs[nlibs++] = x->to;
      }
    }
  }
  for (size_t i = 0; i < nlibs; i++)
    for (size_t j = i + 1; j < nlibs && g->steps < TW_MAX_STEPS; j++, g->steps++) {
      if (tether_lint__grow(&p->co, &p->capco, p->nco, sizeof *p->co) != 0) goto oom;
      uint32_t a = libs[i] < libs[j] ? libs[i] : libs[j], b = libs[i] ^ libs[j] ^ a;
      p->co[p->nco++] = (uint64_t)a << 32 | b;
    }
  free(libs);
  return 0;
oom:
  free(libs);
  return -1;
}

static const char *tw_what(const tw_node *d) {
  return tw_is_ext(d) ? "the Python extension" : "the shared library";
}

/* One finding for the hits [h0, h1) of one link (sorted by library name): it names the library
 * the link itself names when that is one of them, else the first. */
static void tw_report(tether_lint_run *run, tw_pass *p, size_t h0, size_t h1) {
  tw_graph *g = p->g;
  const tw_edge *e = &g->e[p->hits[h0].edge];
  const tw_hit *h = &p->hits[h0];
  for (size_t k = h0; k < h1; k++)
    if (p->hits[k].lib == e->to) h = &p->hits[k];
  const tw_node *b = &g->n[e->from], *lib = &g->n[h->lib], *via = &g->n[e->to];
  const tw_node *a = &g->n[h->other];
  size_t nlibs = h1 - h0;
  tether_lint__buf more = {0}, through = {0}, others = {0};
  if (nlibs > 1)
    tether_lint__buf_printf(&more, " and %zu other dialect librar%s", nlibs - 1,
                            nlibs == 2 ? "y" : "ies");
  if (via != lib) tether_lint__buf_printf(&through, " through '%s'", via->show);
  if (h->nothers > 1)
    tether_lint__buf_printf(&others, " (as %s %zu other shared object%s)",
                            h->nothers == 2 ? "does" : "do", h->nothers - 1,
                            h->nothers == 2 ? "" : "s");
  tether_lint__report_run(
      run, g->tw->files.v[e->file], e->line, e->col, EXCL_TWICE_RULE,
      "this link copies the static dialect library '%s' (%s:%u)%s into %s '%s'%s, and %s '%s' "
      "(%s:%u) holds a copy too%s: each carries its own TypeIDs and dialect registration, so in "
      "one process MLIR aborts (\"storage uniquer isn't initialized\", \"not registered\") or "
      "isa<> fails across them",
      lib->show, g->tw->files.v[lib->file], lib->line, more.p ? more.p : "", tw_what(b), b->show,
      through.p ? through.p : "", tw_what(a), a->show, g->tw->files.v[a->file], a->line,
      others.p ? others.p : "");
  tether_lint__buf_free(&more);
  tether_lint__buf_free(&through);
  tether_lint__buf_free(&others);
}

/* The dialect libraries of every shared object's closure, grouped by library; one finding per
 * link. */
static int tw_find(tether_lint_run *run, tw_graph *g) {
  tw_pass p;
  memset(&p, 0, sizeof p);
  p.g = g;
  tw_walk w;
  memset(&w, 0, sizeof w);
  int rc = -1;
  size_t nn = g->nn ? g->nn : 1;
  p.roots = malloc(nn * sizeof *p.roots);
  p.rank = calloc(nn, sizeof *p.rank);
  w.seen = calloc(nn, sizeof *w.seen);
  w.given = calloc(nn, sizeof *w.given);
  w.label = calloc(nn, sizeof *w.label);
  w.queue = malloc(nn * sizeof *w.queue);
  if (!p.roots || !p.rank || !w.seen || !w.given || !w.label || !w.queue) goto done;
  for (size_t i = 0; i < g->nn; i++) {
    g->n[i].dialect = tw_dialect(&g->n[i]);
    if (tw_root(&g->n[i]) && g->n[i].ne) p.roots[p.nroots++] = (uint32_t)i;
  }
  tw_sort_graph = g;
  tw_sort_pass = &p;
  if (p.nroots > 1) qsort(p.roots, p.nroots, sizeof *p.roots, tw_root_cmp);
  for (size_t i = 0; i < p.nroots; i++) p.rank[p.roots[i]] = (uint32_t)i;
  for (size_t i = 0; i < p.nroots && g->steps < TW_MAX_STEPS; i++)
    if (tw_closure(g, &w, p.roots[i], &p.copies, &p.ncopies, &p.capcopies) != 0) goto done;
  for (size_t i = 0; i < p.nroots && g->steps < TW_MAX_STEPS; i++)
    if (tw_is_ext(&g->n[p.roots[i]]) && tw_loads(&p, &w, p.roots[i]) != 0) goto done;
  if (p.nco > 1) qsort(p.co, p.nco, sizeof *p.co, tw_u64_cmp);
  if (p.ncopies > 1) qsort(p.copies, p.ncopies, sizeof *p.copies, tw_copy_cmp);
  for (size_t i = 0; i < p.ncopies;) {
    size_t j = i;
    while (j < p.ncopies && p.copies[j].lib == p.copies[i].lib) j++;
    if (j - i > 1 && tw_lib_hits(&p, p.copies + i, j - i) != 0) goto done;
    i = j;
  }
  if (p.nhits > 1) qsort(p.hits, p.nhits, sizeof *p.hits, tw_hit_cmp);
  for (size_t i = 0; i < p.nhits;) {
    size_t j = i;
    while (j < p.nhits && p.hits[j].edge == p.hits[i].edge) j++;
    tw_report(run, &p, i, j);
    i = j;
  }
  rc = 0;
done:
  free(p.copies);
  free(p.hits);
  free(p.co);
  free(p.roots);
  free(p.rank);
  free(w.seen);
  free(w.given);
  free(w.label);
  free(w.queue);
  return rc;
}

static void tw_graph_free(tw_graph *g) {
  for (size_t i = 0; i < g->nn; i++) {
    free(g->n[i].key);
    free(g->n[i].show);
  }
  free(g->n);
  free(g->e);
  tether_lint__strmap_free(&g->ids, NULL);
  tether_lint__strmap_free(&g->vars, tw_free_list);
  tether_lint__strmap_free(&g->parents, free);
  tether_lint__strmap_free(&g->sources, tw_free_list);
  tether_lint__strmap_free(&g->repos, free);
  tether_lint__strlist_free(&g->read);
  for (size_t i = 0; g->ws && i < g->tw->files.n; i++) {
    free(g->ws[i]);
    free(g->pkg[i]);
  }
  free(g->ws);
  free(g->pkg);
  free(g->memb);
}

int excl_twice_run_end(tether_lint_run *run, excl_twice *tw) {
  if (!tw || !tw->n) return 0;
  tw_graph g;
  memset(&g, 0, sizeof g);
  g.tw = tw;
  g.o = tether_lint__run_options(run);
  size_t nf = tw->files.n ? tw->files.n : 1;
  g.ws = calloc(nf, sizeof *g.ws);
  g.pkg = calloc(nf, sizeof *g.pkg);
  int rc = -1;
  if (!g.ws || !g.pkg) goto done;
  for (size_t i = 0; i < tw->files.n; i++)
    if (tw->bazel[i]) tw_bazel_home(&g, tw->files.v[i], &g.ws[i], &g.pkg[i]);
  tw_read_names(&g);
  tw_read_graph(&g);
  tw_embed(&g);
  if (g.oom) goto done;
  tw_index_edges(&g);
  rc = tw_find(run, &g);
done:
  tw_graph_free(&g);
  return rc;
}
