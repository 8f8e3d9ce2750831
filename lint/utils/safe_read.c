/* Reading the files a repository names, safely.
 *
 * Invariant: no file is read unless it is a regular file on a real file system, both before it is
 * opened (stat, so a FIFO or a device is never even opened: opening a tape or a FIFO has effects)
 * and after (fstat and fstatfs on the open descriptor, so a symlink swapped in between is caught);
 * symlinks are followed, but only to such files. It is opened with O_NONBLOCK, and never more than
 * the size limit is read, whatever fstat said: files of pseudo file systems report size 0 and can
 * be endless. A file that fails any check is not read at all, and the caller gets a code that
 * says why (tether_lint__read_strerror). */
#define _GNU_SOURCE
#include "lint/lint.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static size_t max_file_size = TETHER_LINT_DEFAULT_MAX_FILE_SIZE;

void tether_lint__set_max_file_size(size_t max) { max_file_size = max ? max : 1; }

static int kind_error(mode_t m) {
  if (S_ISFIFO(m)) return TETHER_LINT_READ_FIFO;
  if (S_ISCHR(m)) return TETHER_LINT_READ_CHR;
  if (S_ISBLK(m)) return TETHER_LINT_READ_BLK;
  if (S_ISSOCK(m)) return TETHER_LINT_READ_SOCK;
  if (S_ISDIR(m)) return TETHER_LINT_READ_DIR;
  return TETHER_LINT_READ_OTHER;
}

/* File systems whose files are made up by the kernel: sizes lie, reads can be endless or block,
 * and some reads have effects. */
static int pseudo_fs(long type) {
  static const unsigned long magic[] = {
      0x9fa0,     /* proc */
      0x62656572, /* sysfs */
      0x64626720, /* debugfs */
      0x74726163, /* tracefs */
      0x73636673, /* securityfs */
      0x27e0eb,   /* cgroup */
      0x63677270, /* cgroup2 */
      0x62656570, /* configfs */
      0xde5e81e4, /* efivarfs */
      0xcafe4a11, /* bpf */
      0x6165676c, /* pstore */
      0x42494e4d, /* binfmt_misc */
      0x67596969, /* rpc_pipefs */
      0x1cd1,     /* devpts */
  };
  for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
    if ((unsigned long)type == magic[i]) return 1;
  return 0;
}

int tether_lint__check_regular(const char *path, struct stat *out) {
  struct stat st;
  if (stat(path, &st) != 0) return errno ? errno : EIO;
  if (!S_ISREG(st.st_mode)) return kind_error(st.st_mode);
  struct statfs sf;
  if (statfs(path, &sf) == 0 && pseudo_fs((long)sf.f_type)) return TETHER_LINT_READ_PSEUDO;
  if (out) *out = st;
  return 0;
}

int tether_lint__open_regular(const char *path, int *fd_out, size_t *size_out) {
  struct stat st;
  int e = tether_lint__check_regular(path, &st);
  if (e) return e;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno ? errno : EIO;
  struct stat fst;
  struct statfs sf;
  if (fstat(fd, &fst) != 0) {
    e = errno ? errno : EIO;
  } else if (!S_ISREG(fst.st_mode)) {
    e = kind_error(fst.st_mode);
  } else if (fstatfs(fd, &sf) == 0 && pseudo_fs((long)sf.f_type)) {
    e = TETHER_LINT_READ_PSEUDO;
  }
  if (e) {
    close(fd);
    return e;
  }
  *fd_out = fd;
  if (size_out) *size_out = fst.st_size > 0 ? (size_t)fst.st_size : 0;
  return 0;
}

/* Reads at most `max` bytes from `fd`; more than that is TETHER_LINT_READ_TOO_LARGE. */
static int read_capped(int fd, size_t hint, size_t max, char **out, size_t *len) {
  size_t cap = (hint < max ? hint : max) + 1;
  if (cap < 4096) cap = 4096;
  char *p = malloc(cap + 1);
  if (!p) return ENOMEM;
  size_t n = 0;
  for (;;) {
    if (n == cap) {
      if (cap > max) {
        free(p);
        return TETHER_LINT_READ_TOO_LARGE;
      }
      size_t nc = cap * 2 > max + 1 ? max + 1 : cap * 2;
      char *np = realloc(p, nc + 1);
      if (!np) {
        free(p);
        return ENOMEM;
      }
      p = np;
      cap = nc;
    }
    ssize_t got = read(fd, p + n, cap - n);
    if (got < 0) {
      if (errno == EINTR) continue;
      int e = errno == EAGAIN ? TETHER_LINT_READ_OTHER : errno;
      free(p);
      return e ? e : EIO;
    }
    if (got == 0) break;
    n += (size_t)got;
    if (n > max) {
      free(p);
      return TETHER_LINT_READ_TOO_LARGE;
    }
  }
  p[n] = '\0';
  *out = p;
  *len = n;
  return 0;
}

int tether_lint__read_file_max(const char *path, size_t max, char **out, size_t *len) {
  int fd = -1;
  size_t size = 0;
  int e = tether_lint__open_regular(path, &fd, &size);
  if (e) return e;
  if (size > max) {
    close(fd);
    return TETHER_LINT_READ_TOO_LARGE;
  }
  e = read_capped(fd, size, max, out, len);
  close(fd);
  return e;
}

int tether_lint__read_file(const char *path, char **out, size_t *len) {
  return tether_lint__read_file_max(path, max_file_size, out, len);
}

int tether_lint__read_head(const char *path, char *buf, size_t cap, size_t *got) {
  int fd = -1;
  *got = 0;
  int e = tether_lint__open_regular(path, &fd, NULL);
  if (e) return e;
  size_t n = 0;
  while (n < cap) {
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  close(fd);
  *got = n;
  return 0;
}

const char *tether_lint__read_strerror(int e) {
  switch (e) {
  case TETHER_LINT_READ_FIFO:
    return "not a regular file (a FIFO), not read";
  case TETHER_LINT_READ_CHR:
    return "not a regular file (a character device), not read";
  case TETHER_LINT_READ_BLK:
    return "not a regular file (a block device), not read";
  case TETHER_LINT_READ_SOCK:
    return "not a regular file (a socket), not read";
  case TETHER_LINT_READ_DIR:
    return "not a regular file (a directory), not read";
  case TETHER_LINT_READ_OTHER:
    return "not a regular file, not read";
  case TETHER_LINT_READ_PSEUDO:
    return "a file of a kernel pseudo file system (/proc, /sys, ...), not read";
  case TETHER_LINT_READ_TOO_LARGE: {
    static _Thread_local char msg[128];
    snprintf(msg, sizeof msg,
             "larger than the size limit of %zu bytes (--max-file-size, [lint] max-file-size), not "
             "read",
             max_file_size);
    return msg;
  }
  default:
    return strerror(e);
  }
}
