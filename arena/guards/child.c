/* child.c: the one file of libtether that starts processes. Every trial made in a forked child
 * (the guards' tries, the trial helper's reads of bytecode, reads without a helper) goes through
 * tether__child_fork, which gives the child the same set-up everywhere; the trial helper is
 * started by tether__child_spawn (posix_spawn: a vfork, whose cost does not grow with the
 * caller's memory).
 *
 * Invariant: a child of libtether never reaches a binding's diagnostic handler, never writes to
 * the caller's output, leaves no core file, and says what it saw through a descriptor (a byte, or
 * the helper's protocol) before it _exits; the parent always reaps it (killed first when it ran
 * out of time), so no child outlives its verdict.
 */
#define _GNU_SOURCE
#include "guards.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

bool tether_in_trial_child(void) { return tether__trial_child != 0; }

pid_t tether__child_spawn(const char *path, char *const argv[], int stdio_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, stdio_fd, 0);
  posix_spawn_file_actions_adddup2(&fa, stdio_fd, 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_init(&attr);
  sigset_t none, dflt;
  sigemptyset(&none);
  sigemptyset(&dflt);
  sigaddset(&dflt, SIGPIPE);
  sigaddset(&dflt, SIGSEGV);
  sigaddset(&dflt, SIGABRT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dflt);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid;
  int rc = posix_spawn(&pid, path, &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

/* A trial that allocates without end (ODS inference of a tosa op given a garbage rank built
 * tensors until the helper held 11 GB: two such tests side by side on a CI machine, and the kernel
 * killed one) must fail as MLIR fails out of memory, which is a verdict ("crashes"), long before
 * the machine runs out. The process's data (heap and private mappings, RLIMIT_DATA) may grow by
 * room beyond what it has now, never past the soft limit it started with (the caller's: inherited
 * through fork or spawn) nor the hard one. Not under AddressSanitizer, whose shadow memory counts
 * as data. */
void tether__child_limit_memory(size_t room) {
#if defined(__SANITIZE_ADDRESS__)
  (void)room;
#else
  static struct rlimit inherited;
  static int known;
  if (!known) {
    if (getrlimit(RLIMIT_DATA, &inherited) != 0) return;
    known = 1;
  }
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long pages[6] = {0};
  int n = f ? fscanf(f, "%llu %llu %llu %llu %llu %llu", &pages[0], &pages[1], &pages[2], &pages[3],
                     &pages[4], &pages[5])
            : 0;
  if (f) fclose(f);
  if (n != 6) return;
  unsigned long long now = pages[5] * (unsigned long long)sysconf(_SC_PAGESIZE);
  if (!room) room = now > TETHER__TRIAL_ROOM ? (size_t)now : TETHER__TRIAL_ROOM;
  unsigned long long want = now + room < now ? RLIM_INFINITY : now + room;
  if (inherited.rlim_cur != RLIM_INFINITY && want > inherited.rlim_cur) want = inherited.rlim_cur;
  struct rlimit r = {(rlim_t)want, inherited.rlim_max};
  setrlimit(RLIMIT_DATA, &r);
#endif
}

pid_t tether__child_fork(int flags) {
  pid_t pid = fork();
  if (pid > 0) atomic_fetch_add(&tether__children, 1);
  if (pid != 0) return pid;
  if (flags & TETHER__CHILD_DIE_WITH_PARENT) prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (flags & TETHER__CHILD_QUIET) {
    /* No core file, no output (diagnostics, a sanitizer's or a crash's report). */
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    tether__trial_child = 1;
    tether__silence_diagnostics();
    /* A trial may use as much again as the process had, and at least TETHER__TRIAL_ROOM. */
    tether__child_limit_memory(0);
  }
  return 0;
}

int tether__child_reap(pid_t pid, bool kill_first) {
  if (kill_first) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

int tether__child_poll(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  int r;
  do r = poll(&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  return r > 0 ? 1 : r == 0 ? 0 : -1;
}

/* In the child: what it answers when fn returns (child_answer may change it). */
static int child_answer_value;
void tether__child_answer(int answer) { child_answer_value = answer; }

/* Runs fn(ud) in a forked child (output discarded, no core): 1 it returned (or the answer it gave
 * through child_answer, >= 1), 0 it died, 2 it hung past timeout_ms (killed), -1 no child could be
 * made. */
int tether__in_child(void (*fn)(void *), void *ud, int timeout_ms) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = tether__child_fork(TETHER__CHILD_QUIET);
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) { /* the call, then a byte */
    close(fds[0]);
    child_answer_value = 1;
    fn(ud);
    char ok = (char)child_answer_value;
    ssize_t w = write(fds[1], &ok, 1);
    _exit(w == 1 ? 0 : 1);
  }
  close(fds[1]);
  char got = 0;
  int r = tether__child_poll(fds[0], timeout_ms);
  int answered = r > 0 && read(fds[0], &got, 1) == 1 && got >= 1;
  close(fds[0]);
  tether__child_reap(pid, r == 0);
  if (r == 0) return 2;
  return answered ? got : 0;
}
