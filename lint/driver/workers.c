/* The schedule of a run's analysis, and the worker processes that contain it.
 *
 * Invariant: inputs are taken in order; build files and shared objects are analysed by the driver
 * between workers; each translation unit is read, given its flags and looked up in the cache by
 * the driver, then (on a miss) parsed and checked in a worker process of its own: fork, no core
 * file, an address-space limit, stdin/out/err on /dev/null, the analysis on a big stack, and a
 * deadline after which the driver kills it. At most -j workers run at a time. A worker that
 * crashes, hangs, sends more than TETHER_LINT_RESULT_MAX bytes or a malformed result costs its
 * own file an error line and nothing else. A result is applied to its input's record and stored
 * in the cache only when it is whole and cacheable. */
#define _GNU_SOURCE /* pipe2, strsignal */
#include "lint/driver/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define TETHER_LINT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TETHER_LINT_ASAN 1
#endif
#endif

static int lang_is_c(const char *path) {
  const char *dot = strrchr(path, '.');
  return dot && strcmp(dot, ".c") == 0;
}

/* The worker process: analyse, send the result, exit without running anything else. */
static void worker_main(tether_lint_run *run, tether_lint_file *f, int fd) {
  struct rlimit rl = {0, 0};
  setrlimit(RLIMIT_CORE, &rl); /* a crash writes no core file into the user's tree */
#ifndef TETHER_LINT_ASAN
  /* Address space (ASan reserves terabytes of shadow, so not under ASan). */
  rl.rlim_cur = rl.rlim_max = run->worker_memory;
  setrlimit(RLIMIT_AS, &rl);
#endif
  /* libclang and LLVM may print crash reports: they must not reach the user's terminal. */
  int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (dn >= 0) {
    dup2(dn, 0);
    dup2(dn, 1);
    dup2(dn, 2);
  }
  setenv("LIBCLANG_NOTHREADS", "1", 1);
  tether_lint__buf out = {0};
  if (tether_lint__analyse_tu_on_big_stack(run, f, &out) != 0) _exit(4);
  int ok = out.p && tether_lint__write_all(fd, out.p, out.n) == 0;
  _exit(ok ? 0 : 3);
}

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A result arrived (from a worker, in-process, or the cache): check it and take it. */
static int take_result(tether_lint_run *run, tether_lint_file *f, const char *data, size_t len) {
  tether_lint_result_view v;
  if (tether_lint__result_parse(data, len, &v) != 0) return -1;
  tether_lint__result_apply(f, data, len, &v);
  if (run->cache && f->have_key && v.cacheable)
    tether_lint__cache_put(run->cache, f->key, data, len);
  return 0;
}

static void drop_tu_text(tether_lint_file *f) {
  free(f->text);
  f->text = NULL;
  f->text_len = 0;
}

static void finish_worker(tether_lint_run *run, tether_lint_worker *w, int timed_out) {
  tether_lint_file *f = &run->inputs[w->input];
  if (timed_out) kill(w->pid, SIGKILL);
  close(w->fd);
  int st = 0;
  while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    tether_lint__file_message(f, 1, "timed out after %d s (--timeout): not analysed", run->timeout);
  } else if (w->overflow) {
    tether_lint__file_message(f, 1, "the analysis produced more than %zu bytes: not analysed",
                              (size_t)TETHER_LINT_RESULT_MAX);
  } else if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    tether_lint__file_message(
        f, 1,
        "the analysis crashed (signal %d, %s): not analysed; libclang or a rule "
        "ran out of stack (--worker-stack) or memory (--worker-memory) on this "
        "file",
        sig, strsignal(sig));
  } else if (WIFEXITED(st) && WEXITSTATUS(st) == 4) {
    tether_lint__file_message(f, 1,
                              "cannot start the parsing thread (a %zu-byte stack within a %zu-byte "
                              "address space; see --worker-stack, --worker-memory): not analysed",
                              run->worker_stack, run->worker_memory);
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    tether_lint__file_message(f, 1, "the analysis failed (worker exit status %d): not analysed",
                              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  } else if (take_result(run, f, w->out.p, w->out.n) != 0) {
    tether_lint__file_message(f, 1, "the worker's result is malformed: not analysed");
  }
  tether_lint__buf_free(&w->out);
  w->active = 0;
}

/* Waits until at least one worker has finished (or timed out). */
static void pump(tether_lint_run *run) {
  struct pollfd *pf = calloc((size_t)run->nworkers, sizeof *pf);
  int *map = calloc((size_t)run->nworkers, sizeof *map);
  if (!pf || !map) {
    /* Out of memory: wait for the first active worker the slow way. */
    for (int i = 0; i < run->nworkers; i++)
      if (run->workers[i].active) {
        char buf[65536];
        ssize_t r;
        int fl = fcntl(run->workers[i].fd, F_GETFL);
        fcntl(run->workers[i].fd, F_SETFL, fl & ~O_NONBLOCK);
        while ((r = read(run->workers[i].fd, buf, sizeof buf)) > 0)
          tether_lint__buf_put(&run->workers[i].out, buf, (size_t)r);
        finish_worker(run, &run->workers[i], 0);
        break;
      }
    free(pf);
    free(map);
    return;
  }
  for (;;) {
    double now = mono_now(), next = 0;
    int np = 0, finished = 0;
    for (int i = 0; i < run->nworkers; i++) {
      tether_lint_worker *w = &run->workers[i];
      if (!w->active) continue;
      if (w->deadline && now >= w->deadline) {
        finish_worker(run, w, 1);
        finished = 1;
        continue;
      }
      pf[np].fd = w->fd;
      pf[np].events = POLLIN;
      pf[np].revents = 0;
      map[np++] = i;
      if (w->deadline && (!next || w->deadline < next)) next = w->deadline;
    }
    if (finished || np == 0) break;
    int ms = -1;
    if (next) {
      double d = (next - now) * 1000.0 + 1;
      ms = d > 1e9 ? 1000000000 : (int)d;
    }
    int r = poll(pf, (nfds_t)np, ms);
    if (r < 0 && errno != EINTR) break;
    for (int k = 0; r > 0 && k < np; k++) {
      if (!pf[k].revents) continue;
      tether_lint_worker *w = &run->workers[map[k]];
      for (;;) {
        char buf[65536];
        ssize_t got = read(w->fd, buf, sizeof buf);
        if (got > 0) {
          if (!w->overflow && (w->out.n + (size_t)got > TETHER_LINT_RESULT_MAX ||
                               tether_lint__buf_put(&w->out, buf, (size_t)got) != 0)) {
            w->overflow = 1;
            kill(w->pid, SIGKILL);
          }
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EAGAIN) break;
        finish_worker(run, w, 0); /* end of the result (or a read error) */
        finished = 1;
        break;
      }
    }
    if (finished) break;
  }
  free(pf);
  free(map);
}

static int active_workers(const tether_lint_run *run) {
  int n = 0;
  for (int i = 0; i < run->nworkers; i++) n += run->workers[i].active;
  return n;
}

static void spawn_worker(tether_lint_run *run, size_t input) {
  tether_lint_file *f = &run->inputs[input];
  tether_lint_worker *w = NULL;
  for (int i = 0; i < run->nworkers && !w; i++)
    if (!run->workers[i].active) w = &run->workers[i];
  int p[2];
  if (!w || pipe2(p, O_CLOEXEC) != 0) {
    tether_lint__file_message(f, 1, "cannot start a worker process: %s", strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(p[0]);
    close(p[1]);
    tether_lint__file_message(f, 1, "cannot start a worker process: %s", strerror(e));
    return;
  }
  if (pid == 0) {
    close(p[0]);
    /* Read ends of the other workers' pipes are not this worker's business. */
    for (int i = 0; i < run->nworkers; i++)
      if (run->workers[i].active) close(run->workers[i].fd);
    worker_main(run, f, p[1]);
  }
  close(p[1]);
  fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
  memset(w, 0, sizeof *w);
  w->pid = pid;
  w->fd = p[0];
  w->input = input;
  w->active = 1;
  w->deadline = run->timeout > 0 ? mono_now() + run->timeout : 0;
  drop_tu_text(f); /* the worker has its own copy */
}

static void open_cache(tether_lint_run *run) {
  const tether_lint_options *o = run->o;
  if (o->no_cache) return;
  char *dir = o->cache_dir ? tether_lint__strdup(o->cache_dir) : tether_lint__cache_default_dir();
  if (!dir) return; /* no HOME, no XDG_CACHE_HOME: no cache */
  char err[PATH_MAX + 256];
  if (tether_lint__cache_open(dir, &run->cache, err, sizeof err) != 0)
    tether_lint__run_msg(run, 0, "note: result cache off: %s", err);
  else
    tether_lint__cache_run_key(run->config_digest, &run->disabled, &run->o->key_args,
                               run->db != NULL, run->run_key);
  free(dir);
}

/* Reads the main file, chooses its flags and looks in the cache. 1: needs parsing. */
static int prepare_tu(tether_lint_run *run, tether_lint_file *f) {
  int e = tether_lint__read_file(f->path, &f->text, &f->text_len);
  if (e) {
    tether_lint__file_message(f, 1, "cannot read: %s", tether_lint__read_strerror(e));
    return 0;
  }
  if (memchr(f->text, '\0', f->text_len < 8192 ? f->text_len : 8192)) {
    tether_lint__file_message(f, 1,
                              "binary file (contains NUL bytes), not C/C++ source; not analysed");
    drop_tu_text(f);
    return 0;
  }
  int found = 0;
  if (run->db) {
    tether_lint__cdb_flags cf;
    if (tether_lint__cdb_flags_for(run->db, f->abspath, &cf) != 0) {
      tether_lint__file_message(f, 1, "out of memory");
      drop_tu_text(f);
      return 0;
    }
    if (cf.found) {
      found = 1;
      if (cf.note) tether_lint__file_message(f, 0, "%s", cf.note);
      tether_lint__buf note = {0};
      tether_lint__flagset_note(&cf.fs, &note);
      if (note.n) tether_lint__file_message(f, 0, "note: %s", note.p);
      tether_lint__buf_free(&note);
      f->args = cf.fs.args;
      cf.fs.args = (tether_lint__strlist){0};
      f->source = tether_lint__strdup(f->abspath);
    }
    tether_lint__cdb_flags_free(&cf);
  }
  if (!found) {
    tether_lint__default_args(&run->cfg, lang_is_c(f->path) && !run->cfg.flags_set, &f->args);
    f->source = tether_lint__strdup(f->path);
  }
  /* libclang stops building the tree after 20 errors unless told otherwise. */
  tether_lint__strlist_push(&f->args, "-ferror-limit=0");
  if (!f->source) {
    tether_lint__file_message(f, 1, "out of memory");
    drop_tu_text(f);
    return 0;
  }
  run->tus++;
  if (!run->cache_tried) {
    run->cache_tried = 1;
    open_cache(run);
  }
  if (!run->cache) return 1;
  tether_lint__cache_tu_key(run->run_key, f->path, f->named, f->source, &f->args, f->text,
                            f->text_len, f->key);
  f->have_key = 1;
  char *data = NULL;
  size_t len = 0;
  if (tether_lint__cache_get(run->cache, f->key, &data, &len) != 0) return 1;
  tether_lint_result_view v;
  int hit = tether_lint__result_parse(data, len, &v) == 0 && v.cacheable;
  if (hit) {
    tether_lint__rd headers = {(const unsigned char *)data, len, v.incl_off, 0};
    tether_lint__rd missing = {(const unsigned char *)data, len, v.missing_off, 0};
    hit = tether_lint__cache_result_holds(run->cache, headers, v.nincl, missing, v.nmissing,
                                          f->source, &f->args);
  }
  if (hit) {
    tether_lint__result_apply(f, data, len, &v);
    run->tus_cached++;
    drop_tu_text(f);
  }
  free(data);
  return !hit;
}

void tether_lint__run_inputs(tether_lint_run *run, int jobs) {
  if (jobs < 1) jobs = 1;
  run->workers = calloc((size_t)jobs, sizeof *run->workers);
  if (!run->workers) {
    tether_lint__run_msg(run, 1, "out of memory");
    return;
  }
  run->nworkers = jobs;
  for (size_t i = 0; i < run->ninputs; i++) {
    tether_lint_file *f = &run->inputs[i];
    if (f->kind != TETHER_LINT_INPUT_TU) {
      tether_lint__analyse_other(f);
      continue;
    }
    if (!prepare_tu(run, f)) continue;
    if (run->o->in_process) {
      tether_lint__buf out = {0};
      if (tether_lint__analyse_tu_on_big_stack(run, f, &out) != 0 || !out.p ||
          take_result(run, f, out.p, out.n) != 0)
        tether_lint__file_message(f, 1, "the analysis failed: not analysed");
      tether_lint__buf_free(&out);
      drop_tu_text(f);
      continue;
    }
    while (active_workers(run) >= run->nworkers) pump(run);
    spawn_worker(run, i);
  }
  while (active_workers(run)) pump(run);
}
