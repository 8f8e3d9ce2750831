/* Benchmark: tether-lint against the libclang parse floor.
 *
 * Generates binding-like translation units (they include the MLIR C API and Python headers, the
 * way a real binding does, plus upstream-style wrapper classes and nanobind-style lambdas), then
 * prints per TU: (a) libclang alone (index, parse, dispose) with the same flags and options
 * tether-lint uses, on a fresh thread, (b) a whole tether-lint run on that TU with every rule (the
 * unit parsed in a worker process), their ratio, and (c) the same run with --in-process, so b-c is
 * what the worker process costs; then the wall time of one run over all TUs with -j 1 and -j 2.
 * Each time is the best of REPEATS runs. A program that prints a table, never a timed test. */
#include "lint/lint.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { NTU = 6, FUNCS = 400, REPEATS = 3 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char prelude[] =
    "#include <Python.h>\n"
    "#include \"mlir-c/IR.h\"\n"
    "#include \"mlir-c/BuiltinAttributes.h\"\n"
    "#include <vector>\n"
    "#include <string>\n"
    "#include <functional>\n"
    "template <typename T> struct PyObjectRef { T *operator->() const { return p; } T *p; };\n"
    "class PyOperation {\n"
    "public:\n"
    "  operator MlirOperation() const { return get(); }\n"
    "  MlirOperation get() const { checkValid(); return operation; }\n"
    "  void checkValid() const;\n"
    "  MlirOperation operation;\n"
    "  bool valid = true;\n"
    "};\n"
    "class PyBlock {\n"
    "public:\n"
    "  MlirBlock get() { return block; }\n"
    "  void checkValid() { parentOperation->checkValid(); }\n"
    "  PyObjectRef<PyOperation> parentOperation;\n"
    "  MlirBlock block;\n"
    "};\n"
    "class PyValue {\n"
    "public:\n"
    "  operator MlirValue() const { return value; }\n"
    "  MlirValue get() { return value; }\n"
    "  void checkValid() { parentOperation->checkValid(); }\n"
    "  PyObjectRef<PyOperation> parentOperation;\n"
    "  MlirValue value;\n"
    "};\n"
    "struct Module { template <typename F> Module &def(const char *, F) { return *this; } };\n";

static int generate(const char *dir, int tu) {
  char path[4200];
  snprintf(path, sizeof path, "%s/binding_%d.cc", dir, tu);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(prelude, f);
  for (int i = 0; i < FUNCS; i++) {
    switch (i % 4) {
    case 0:
      fprintf(f,
              "intptr_t numRegions%d(PyOperation &self) {\n"
              "  self.checkValid();\n"
              "  return mlirOperationGetNumRegions(self.operation);\n}\n",
              i);
      break;
    case 1:
      fprintf(f,
              "void bind%d(Module &m) {\n"
              "  m.def(\"first_op_%d\", [](PyBlock &self) {\n"
              "    self.checkValid();\n"
              "    MlirOperation op = mlirBlockGetFirstOperation(self.get());\n"
              "    return mlirOperationIsNull(op) ? 0 : 1;\n"
              "  });\n}\n",
              i, i);
      break;
    case 2:
      fprintf(f,
              "bool isBlockArg%d(PyValue &v, int n) {\n"
              "  std::vector<int> xs(n, %d);\n"
              "  if (!v.parentOperation->valid) return false;\n"
              "  for (int x : xs) if (x < 0) return false;\n"
              "  v.checkValid();\n"
              "  return mlirValueIsABlockArgument(v.get());\n}\n",
              i, i);
      break;
    default:
      fprintf(f,
              "std::string name%d(PyOperation &op) {\n"
              "  MlirIdentifier id = mlirOperationGetName(op.get());\n"
              "  MlirStringRef s = mlirIdentifierStr(id);\n"
              "  return std::string(s.data, s.length);\n}\n",
              i);
      break;
    }
  }
  return fclose(f);
}

typedef struct parse_job {
  const char *path;
  double seconds;
} parse_job;

/* What any libclang tool must do for one TU: create an index, parse, dispose. Run on a fresh
 * thread with the same stack size as tether-lint's workers, so both pay the same allocator and
 * thread start-up costs (glibc gives each new thread a fresh malloc arena). */
static void *parse_thread(void *arg) {
  parse_job *job = arg;
  tether_lint__strlist l = {0};
  tether_lint__default_args(NULL, 0, &l);
  tether_lint__strlist_push(&l, "-ferror-limit=0");
  const char *args[64];
  size_t n = 0;
  for (; n < l.n && n < 64; n++) args[n] = l.v[n];
  double t0 = now();
  CXIndex idx = clang_createIndex(0, 0);
  CXTranslationUnit tu = NULL;
  enum CXErrorCode rc = clang_parseTranslationUnit2(
      idx, job->path, args, (int)n, NULL, 0,
      CXTranslationUnit_KeepGoing | CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles, &tu);
  if (rc != CXError_Success) fprintf(stderr, "parse failed: %s\n", job->path);
  if (tu) clang_disposeTranslationUnit(tu);
  clang_disposeIndex(idx);
  job->seconds = now() - t0;
  tether_lint__strlist_free(&l);
  return NULL;
}

static double parse_only(const char *path) {
  double best = 1e9;
  for (int r = 0; r < REPEATS; r++) {
    parse_job job = {path, 0};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)64 << 20);
    pthread_t th;
    double t0 = now();
    if (pthread_create(&th, &attr, parse_thread, &job) != 0) abort();
    pthread_join(th, NULL);
    double t = now() - t0;
    pthread_attr_destroy(&attr);
    if (t < best) best = t;
  }
  return best;
}

static double lint_run(const char *path, int jobs, int in_process, FILE *sink, int *status) {
  double best = 1e9;
  for (int r = 0; r < REPEATS; r++) {
    tether_lint_options o;
    memset(&o, 0, sizeof o);
    o.action = TETHER_LINT_ACT_LINT;
    o.format = TETHER_LINT_FMT_JSON;
    o.config = "/dev/null";
    o.jobs = jobs;
    o.no_cache = 1;
    o.in_process = in_process;
    tether_lint__strlist_push(&o.paths, path);
    double t0 = now();
    *status = tether_lint__lint_main(&o, sink, sink);
    double t = now() - t0;
    tether_lint__cli_free(&o);
    if (t < best) best = t;
  }
  return best;
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tether-lint-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  for (int i = 0; i < NTU; i++)
    if (generate(dir, i) != 0) {
      fprintf(stderr, "cannot write the generated sources\n");
      return 1;
    }
  FILE *sink = fopen("/dev/null", "w");
  if (!sink) return 1;
  CXString v = clang_getClangVersion();
  printf("tether-lint benchmark: %d generated TUs x %d functions (Python.h + mlir-c/IR.h + "
         "<vector>/<string>), best of %d\n%s, %ld online CPU(s)\n\n",
         NTU, FUNCS, REPEATS, clang_getCString(v), sysconf(_SC_NPROCESSORS_ONLN));
  clang_disposeString(v);
  printf("| TU | (a) libclang parse only | (b) tether-lint, all rules | ratio b/a | (c) the same "
         "--in-process | worker process b-c |\n");
  printf("|---|---|---|---|---|---|\n");
  double sum_a = 0, sum_b = 0, sum_c = 0;
  int status = 0;
  for (int i = 0; i < NTU; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/binding_%d.cc", dir, i);
    double a = parse_only(path);
    double b = lint_run(path, 1, 0, sink, &status);
    if (status != 0) fprintf(stderr, "unexpected status %d for %s\n", status, path);
    double c = lint_run(path, 1, 1, sink, &status);
    if (status != 0) fprintf(stderr, "unexpected status %d for %s\n", status, path);
    sum_a += a;
    sum_b += b;
    sum_c += c;
    printf("| binding_%d.cc | %.1f ms | %.1f ms | %.3f | %.1f ms | %+.1f ms |\n", i, a * 1e3,
           b * 1e3, b / a, c * 1e3, (b - c) * 1e3);
  }
  printf("| total | %.1f ms | %.1f ms | %.3f | %.1f ms | %+.1f ms |\n\n", sum_a * 1e3, sum_b * 1e3,
         sum_b / sum_a, sum_c * 1e3, (sum_b - sum_c) * 1e3);
  double j1 = lint_run(dir, 1, 0, sink, &status);
  double j2 = lint_run(dir, 2, 0, sink, &status);
  printf("| run over all %d TUs | wall time | speed-up |\n|---|---|---|\n", NTU);
  printf("| -j 1 | %.1f ms | 1.00 |\n| -j 2 | %.1f ms | %.2f |\n", j1 * 1e3, j2 * 1e3, j1 / j2);
  fclose(sink);
  if (getenv("TETHER_BENCH_KEEP")) {
    printf("\ngenerated sources kept in %s\n", dir);
    return 0;
  }
  for (int i = 0; i < NTU; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/binding_%d.cc", dir, i);
    unlink(path);
  }
  rmdir(dir);
  return 0;
}
