/* Unit tests of tether-lint's input layer: command-line splitting, path normalisation, the
 * compile-flag allow-list, response files, the safe reader, sizes, escaping, SHA-256, the string
 * map and the result cache. Each case is one check; the program prints "N passed, M failed". */
#define _GNU_SOURCE
#include "lint/lint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed, failed;

static void check(int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s", ok ? "ok:   " : "FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (ok)
    passed++;
  else
    failed++;
}

static char tmp[4096];

static void write_file(const char *name, const char *text) {
  char p[4200];
  snprintf(p, sizeof p, "%s/%s", tmp, name);
  FILE *f = fopen(p, "w");
  if (!f) abort();
  fputs(text, f);
  fclose(f);
}

/* "a|b|c" for a list. */
static char *joined(const tether_lint__strlist *l) {
  tether_lint__buf b = {0};
  for (size_t i = 0; i < l->n; i++) tether_lint__buf_printf(&b, "%s%s", i ? "|" : "", l->v[i]);
  if (!b.p) tether_lint__buf_puts(&b, "");
  return b.p;
}

/* ---- splitting ---------------------------------------------------------------------------- */

static void split_case(const char *in, int gnu, const char *want) {
  tether_lint__strlist l = {0};
  int rc = tether_lint__split_command(in, strlen(in), gnu, &l);
  char *got = joined(&l);
  check(rc == 0 && strcmp(got, want) == 0, "split%s [%s] -> [%s] (got [%s])", gnu ? "/gnu" : "", in,
        want, got);
  free(got);
  tether_lint__strlist_free(&l);
}

static void test_split(void) {
  split_case("c++ -c a.cpp", 0, "c++|-c|a.cpp");
  split_case("  c++\t-c\n a.cpp  ", 0, "c++|-c|a.cpp");
  split_case("c++ '-DA=a b' x", 0, "c++|-DA=a b|x");
  split_case("c++ \"-DA=\\\"q\\\"\"", 0, "c++|-DA=\"q\"");
  split_case("c++ -DA=\\\"q\\\"", 0, "c++|-DA=\"q\"");
  split_case("c++ \"a\\b\"", 0, "c++|a\\b"); /* shell: \b stays inside double quotes */
  split_case("c++ \"a\\b\"", 1, "c++|ab");   /* gnu: backslash escapes any character */
  split_case("a'b'\"c\"d", 0, "abcd");
  split_case("'' x", 0, "|x");
  split_case("x \"unterminated", 0, "x|unterminated");
  split_case("x 'unterminated", 0, "x|unterminated");
  split_case("x\\", 0, "x");
  split_case("a\\\nb", 0, "ab");
  split_case("", 0, "");
}

/* ---- paths -------------------------------------------------------------------------------- */

static void norm_case(const char *base, const char *rel, const char *want) {
  char *got = tether_lint__path_join_norm(base, rel);
  check(got && strcmp(got, want) == 0, "join(%s, %s) -> %s (got %s)", base ? base : "NULL", rel,
        want, got ? got : "NULL");
  free(got);
}

static void test_paths(void) {
  norm_case("/a/b", "c.cpp", "/a/b/c.cpp");
  norm_case("/a/b", "/x/y.cpp", "/x/y.cpp");
  norm_case("/a/b", "../c/./d.cpp", "/a/c/d.cpp");
  norm_case("/a/b", "../../../../c", "/c");
  norm_case("/", "..", "/");
  norm_case("/a//b/", ".//c", "/a/b/c");
  norm_case(NULL, "x/../../y", "../y");
  norm_case(NULL, "./x", "x");
  norm_case(NULL, ".", ".");
  norm_case("rel", "..", ".");
  norm_case("a/b", "../../..", "..");
}

/* ---- the allow-list ----------------------------------------------------------------------- */

typedef struct flag_case {
  const char *args; /* blank-separated, split with the shell rules */
  const char *keep, *danger, *unknown;
} flag_case;

static void test_flags(void) {
  static const flag_case cases[] = {
      /* Kept: include paths in every spelling. */
      {"-Iinc -I inc -isystem /s -isystem/s -iquote q -idirafter d",
       "-Iinc|-I|inc|-isystem|/s|-isystem/s|-iquote|q|-idirafter|d", "", ""},
      {"--sysroot=/r --sysroot /r -isysroot /r -nostdinc -nostdinc++",
       "--sysroot=/r|--sysroot|/r|-isysroot|/r|-nostdinc|-nostdinc++", "", ""},
      {"-DA -D B=1 -UC -U D -undef", "-DA|-D|B=1|-UC|-U|D|-undef", "", ""},
      {"-std=c++17 --std=c11 -xc++ -x c -x c++-header -ansi",
       "-std=c++17|--std=c11|-xc++|-x|c|-x|c++-header|-ansi", "", ""},
      {"--target=x86_64-linux-gnu -target aarch64 -m32 -m64 -march=native -mavx2",
       "--target=x86_64-linux-gnu|-target|aarch64|-m32|-m64|-march=native|-mavx2", "", ""},
      {"-Wall -Wno-unused -w -pedantic -O2 -pthread", "-Wall|-Wno-unused|-w|-pedantic|-O2|-pthread",
       "", ""},
      {"-fno-exceptions -frtti -fms-extensions -fopenmp -fPIC -fsanitize=address -fno-rtti",
       "-fno-exceptions|-frtti|-fms-extensions|-fopenmp|-fPIC|-fsanitize=address|-fno-rtti", "",
       ""},
      /* Dropped quietly: what every compile command has, codegen and debug flags. */
      {"-c a.cpp -o a.o -g -ggdb3 -pipe -fdiagnostics-color=always -fno-omit-frame-pointer", "", "",
       ""},
      {"-Wl,--exclude-libs,ALL -Wa,-adhln=x -Werror -Werror=foo -Wfatal-errors -pedantic-errors",
       "", "", ""},
      {"-L/lib -lfoo -L /lib -Xlinker --x -shared -ferror-limit=5 -fmax-errors=3", "", "", ""},
      {"-- -MF x.d -Xclang -load", "", "", ""}, /* after --: inputs only */
      /* Dropped with a note: they write files. */
      {"-MD -MMD -M -MM -MG -MP", "", "-MD|-MMD|-M|-MM|-MG|-MP", ""},
      {"-MF dep.d -MFdep.d -MT t -MQ q -MJ j.json", "", "-MF dep.d|-MFdep.d|-MT t|-MQ q|-MJ j.json",
       ""},
      {"--serialize-diagnostics d.dia -save-temps -save-temps=obj -ftime-trace -ftime-trace=t.json",
       "",
       "--serialize-diagnostics d.dia|-save-temps|-save-temps=obj|-ftime-trace|-ftime-trace=t.json",
       ""},
      {"-fprofile-generate -fprofile-instr-generate=p -fcoverage-mapping -ftest-coverage "
       "-fcrash-diagnostics-dir=c",
       "",
       "-fprofile-generate|-fprofile-instr-generate=p|-fcoverage-mapping|-ftest-coverage|-fcrash-"
       "diagnostics-dir=c",
       ""},
      {"-fmodules -fmodules-cache-path=m -fcxx-modules -fmodule-file=x.pcm -fimplicit-modules", "",
       "-fmodules|-fmodules-cache-path=m|-fcxx-modules|-fmodule-file=x.pcm|-fimplicit-modules", ""},
      {"-Wp,-MD,x.d -fdump-tree-all -fstack-usage -fsave-optimization-record -emit-ast --analyze",
       "",
       "-Wp,-MD,x.d|-fdump-tree-all|-fstack-usage|-fsave-optimization-record|-emit-ast|--analyze",
       ""},
      /* Dropped with a note: they load code or read other inputs. */
      {"-Xclang -load -Xclang p.so -fplugin=p.so -fpass-plugin=q.so -load x.so -plugin y", "",
       "-Xclang -load|-Xclang p.so|-fplugin=p.so|-fpass-plugin=q.so|-load x.so|-plugin y", ""},
      {"-mllvm -x=1 -B/evil -B /evil --config c.cfg --config=d.cfg -Xpreprocessor -MD", "",
       "-mllvm -x=1|-B/evil|-B /evil|--config c.cfg|--config=d.cfg|-Xpreprocessor -MD", ""},
      {"-include-pch x.pch -ivfsoverlay o.yaml -x ast -xpcm -cc1 -Xarch_x86_64 -MD", "",
       "-include-pch x.pch|-ivfsoverlay o.yaml|-x ast|-xpcm|-cc1|-Xarch_x86_64 -MD", ""},
      {"-fsanitize-ignorelist=l.txt -fsanitize-blacklist=b.txt -fxray-attr-list=a", "",
       "-fsanitize-ignorelist=l.txt|-fsanitize-blacklist=b.txt|-fxray-attr-list=a", ""},
      /* Turning a dangerous feature off is harmless. */
      {"-fno-modules -fno-profile-arcs -fno-plugin", "", "", ""},
      /* Unknown flags: dropped, listed as not on the allow-list. */
      {"-fweird-thing --frobnicate -Z", "", "", "-fweird-thing|--frobnicate|-Z"},
      /* A flag that needs a value at the very end. */
      {"-I", "", "", ""},
      {"-MF", "", "-MF", ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tether_lint__strlist in = {0};
    tether_lint__split_command(cases[i].args, strlen(cases[i].args), 0, &in);
    tether_lint__flagset fs = {0};
    int rc = tether_lint__flags_filter((const char *const *)in.v, in.n, tmp, &fs);
    char *k = joined(&fs.args), *d = joined(&fs.danger), *u = joined(&fs.unknown);
    int ok = rc == 0 && strcmp(k, cases[i].keep) == 0 && strcmp(d, cases[i].danger) == 0 &&
             strcmp(u, cases[i].unknown) == 0;
    check(ok, "allow-list [%s]: keep [%s] drop [%s] unknown [%s]%s%s%s%s%s%s%s", cases[i].args,
          cases[i].keep, cases[i].danger, cases[i].unknown, ok ? "" : " -- got keep [", ok ? "" : k,
          ok ? "" : "] drop [", ok ? "" : d, ok ? "" : "] unknown [", ok ? "" : u, ok ? "" : "]");
    free(k);
    free(d);
    free(u);
    tether_lint__flagset_free(&fs);
    tether_lint__strlist_free(&in);
  }

  /* -include: only a regular file, relative to the working directory given. */
  write_file("pre.h", "#define PRE 1\n");
  char fifo[4200];
  snprintf(fifo, sizeof fifo, "%s/pipe.h", tmp);
  mkfifo(fifo, 0600);
  const char *argv[] = {"-include", "pre.h",     "-include", "pipe.h",
                        "-include", "/dev/zero", "-imacros", "missing.h"};
  tether_lint__flagset fs = {0};
  tether_lint__flags_filter(argv, 8, tmp, &fs);
  char *k = joined(&fs.args);
  char *p = joined(&fs.problems);
  check(strcmp(k, "-include|pre.h") == 0, "-include of a regular file kept, of others dropped (%s)",
        k);
  check(strstr(p, "-include pipe.h: not a regular file (a FIFO)") != NULL,
        "-include of a FIFO: a note (%s)", p);
  check(strstr(p, "-include /dev/zero: not a regular file (a character device)") != NULL,
        "-include of /dev/zero: a note");
  check(strstr(p, "-imacros missing.h: No such file or directory") != NULL,
        "-imacros of a missing file: a note");
  free(k);
  free(p);
  tether_lint__flagset_free(&fs);

  /* Response files: read relative to the directory, nested, never from a FIFO or device. */
  write_file("a.rsp", "-DA '-DB=b c' @b.rsp\n");
  write_file("b.rsp", "-MF x.d -Iinc\n");
  write_file("self.rsp", "@self.rsp -DS\n");
  const char *r1[] = {"@a.rsp", "-DZ"};
  memset(&fs, 0, sizeof fs);
  tether_lint__flags_filter(r1, 2, tmp, &fs);
  k = joined(&fs.args);
  char *d = joined(&fs.danger);
  check(strcmp(k, "-DA|-DB=b c|-Iinc|-DZ") == 0 && strcmp(d, "-MF x.d") == 0,
        "nested response files expanded in place, their flags filtered (%s / %s)", k, d);
  free(k);
  free(d);
  tether_lint__flagset_free(&fs);
  const char *r2[] = {"@self.rsp"};
  memset(&fs, 0, sizeof fs);
  tether_lint__flags_filter(r2, 1, tmp, &fs);
  p = joined(&fs.problems);
  check(fs.args.n == 16 && strstr(p, "nested deeper than 16 levels") != NULL,
        "a response file that includes itself stops at 16 levels (%zu args)", fs.args.n);
  free(p);
  tether_lint__flagset_free(&fs);
  const char *r3[] = {"@pipe.h", "@/dev/zero", "@/proc/self/status"};
  memset(&fs, 0, sizeof fs);
  tether_lint__flags_filter(r3, 3, tmp, &fs);
  p = joined(&fs.problems);
  check(fs.problems.n == 3 && strstr(p, "(a FIFO)") && strstr(p, "(a character device)") &&
            strstr(p, "pseudo file system"),
        "response files that are a FIFO, a device or a /proc file are not read (%s)", p);
  free(p);
  tether_lint__flagset_free(&fs);
  unlink(fifo);
}

/* ---- safe reading ------------------------------------------------------------------------- */

static void test_safe_read(void) {
  char path[4200], link[4200];
  char *text = NULL;
  size_t len = 0;
  write_file("small.txt", "hello");
  snprintf(path, sizeof path, "%s/small.txt", tmp);
  int e = tether_lint__read_file(path, &text, &len);
  check(e == 0 && len == 5 && strcmp(text, "hello") == 0, "a regular file is read whole");
  free(text);
  snprintf(link, sizeof link, "%s/link.txt", tmp);
  symlink(path, link);
  e = tether_lint__read_file(link, &text, &len);
  check(e == 0 && len == 5, "a symlink to a regular file is followed");
  free(text);
  e = tether_lint__read_file_max(path, 4, &text, &len);
  check(e == TETHER_LINT_READ_TOO_LARGE, "a file over the limit is not read");
  e = tether_lint__read_file_max(path, 5, &text, &len);
  check(e == 0 && len == 5, "a file of exactly the limit is read");
  free(text);
  check(tether_lint__read_file("/dev/zero", &text, &len) == TETHER_LINT_READ_CHR,
        "/dev/zero is not read");
  check(tether_lint__read_file("/dev/null", &text, &len) == TETHER_LINT_READ_CHR,
        "/dev/null is not read");
  check(tether_lint__read_file("/proc/self/status", &text, &len) == TETHER_LINT_READ_PSEUDO,
        "/proc/self/status is not read (size 0, made up by the kernel)");
  check(tether_lint__read_file("/proc/self/environ", &text, &len) == TETHER_LINT_READ_PSEUDO,
        "/proc/self/environ is not read");
  check(tether_lint__read_file("/sys/kernel/mm/transparent_hugepage/enabled", &text, &len) ==
                TETHER_LINT_READ_PSEUDO ||
            access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0,
        "a /sys file is not read");
  check(tether_lint__read_file(tmp, &text, &len) == TETHER_LINT_READ_DIR,
        "a directory is not read");
  snprintf(link, sizeof link, "%s/to-proc", tmp);
  symlink("/proc/self/environ", link);
  check(tether_lint__read_file(link, &text, &len) == TETHER_LINT_READ_PSEUDO,
        "a symlink to /proc/self/environ is not followed into /proc");
  snprintf(link, sizeof link, "%s/to-zero", tmp);
  symlink("/dev/zero", link);
  check(tether_lint__read_file(link, &text, &len) == TETHER_LINT_READ_CHR,
        "a symlink to /dev/zero is not followed");
  snprintf(path, sizeof path, "%s/fifo", tmp);
  mkfifo(path, 0600);
  check(tether_lint__read_file(path, &text, &len) == TETHER_LINT_READ_FIFO, "a FIFO is not opened");
  char head[16];
  size_t got = 0;
  check(tether_lint__read_head(path, head, sizeof head, &got) == TETHER_LINT_READ_FIFO && got == 0,
        "reading the head of a FIFO: refused, nothing read");
  unlink(path);
  check(tether_lint__read_file("/nonexistent/x", &text, &len) == ENOENT, "a missing file: ENOENT");
  check(strstr(tether_lint__read_strerror(TETHER_LINT_READ_TOO_LARGE), "size limit of") != NULL,
        "the size-limit message names the limit");
}

/* ---- sizes, escaping, hashing, the map ---------------------------------------------------- */

static void test_small(void) {
  static const struct {
    const char *in;
    long long want; /* -1: rejected */
  } sizes[] = {{"1", 1},          {"65536", 65536}, {"512K", 512 << 10},
               {"64M", 64 << 20}, {"1G", 1 << 30},  {"2GiB", 2ll << 30},
               {"10k", 10 << 10}, {"7B", 7},        {"0", -1},
               {"", -1},          {"-1", -1},       {"1T", -1},
               {"M", -1},         {"1 M", -1},      {"99999999999999999999", -1}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t v = 0;
    int rc = tether_lint__parse_size(sizes[i].in, &v);
    check(sizes[i].want < 0 ? rc != 0 : rc == 0 && v == (size_t)sizes[i].want, "size '%s'",
          sizes[i].in);
  }

  static const struct {
    const char *in, *want;
  } esc[] = {
      {"plain.cc", "plain.cc"},
      {"a\nb.cc", "a\\nb.cc"},
      {"a\rb", "a\\rb"},
      {"tab\there", "tab\\there"},
      {"\x1b[31mred", "\\x1b[31mred"},
      {"del\x7f", "del\\x7f"},
      {"bell\a", "bell\\x07"},
      {"caf\xc3\xa9", "caf\xc3\xa9"},           /* UTF-8 kept */
      {"\xc4\x81", "\xc4\x81"},                 /* a continuation byte in 0x80..0x9f is not C1 */
      {"csi\xc2\x9b", "csi\\u009b"},            /* C1 control in UTF-8 */
      {"latin1 \xe9t\xe9", "latin1 \xe9t\xe9"}, /* invalid UTF-8 above 0x9f kept */
      {"raw \x9b", "raw \\x9b"},                /* a lone byte a terminal reads as CSI */
  };
  for (size_t i = 0; i < sizeof esc / sizeof esc[0]; i++) {
    tether_lint__buf b = {0};
    tether_lint__buf_put_escaped(&b, esc[i].in);
    check(b.p && strcmp(b.p, esc[i].want) == 0, "escape case %zu (%s)", i, b.p ? b.p : "NULL");
    tether_lint__buf_free(&b);
  }

  static const struct {
    const char *in, *hex;
  } sha[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
  };
  for (size_t i = 0; i < sizeof sha / sizeof sha[0]; i++) {
    unsigned char d[32];
    char hex[65];
    tether_lint__sha256_of(sha[i].in, strlen(sha[i].in), d);
    tether_lint__hex(d, 32, hex);
    check(strcmp(hex, sha[i].hex) == 0, "SHA-256 of '%s'", sha[i].in);
  }
  /* One million 'a', fed in uneven pieces. */
  tether_lint__sha256 s;
  tether_lint__sha256_init(&s);
  char chunk[997];
  memset(chunk, 'a', sizeof chunk);
  size_t left = 1000000;
  while (left) {
    size_t n = left < sizeof chunk ? left : sizeof chunk;
    tether_lint__sha256_update(&s, chunk, n);
    left -= n;
  }
  unsigned char d[32];
  char hex[65];
  tether_lint__sha256_final(&s, d);
  tether_lint__hex(d, 32, hex);
  check(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
        "SHA-256 of a million 'a' in pieces");

  tether_lint__strmap m = {0};
  char key[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(key, sizeof key, "k%d", i);
    *tether_lint__strmap_put(&m, key) = (void *)(long)(i + 1);
  }
  int ok = m.n == 1000;
  for (int i = 0; i < 1000 && ok; i++) {
    snprintf(key, sizeof key, "k%d", i);
    void **v = tether_lint__strmap_get(&m, key);
    ok = v && *v == (void *)(long)(i + 1);
  }
  check(ok && !tether_lint__strmap_get(&m, "absent"),
        "string map: 1000 keys in, all found, no extra");
  tether_lint__strmap_free(&m, NULL);
}

/* ---- the cache ---------------------------------------------------------------------------- */

static void test_cache(void) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/cache/nested/dir", tmp);
  tether_lint__cache *c = NULL;
  char err[512];
  check(tether_lint__cache_open(dir, &c, err, sizeof err) == 0, "the cache folder is created");
  struct stat st;
  check(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700, "... with mode 0700");
  unsigned char key[32], other[32];
  tether_lint__sha256_of("key", 3, key);
  tether_lint__sha256_of("other", 5, other);
  char *data = NULL;
  size_t len = 0;
  check(tether_lint__cache_get(c, key, &data, &len) != 0, "an absent entry is a miss");
  check(tether_lint__cache_put(c, key, "payload", 7) == 0, "an entry is stored");
  check(tether_lint__cache_get(c, key, &data, &len) == 0 && len == 7 &&
            memcmp(data, "payload", 7) == 0,
        "and read back");
  free(data);
  char hex[65], path[4400], path2[4400];
  tether_lint__hex(key, 32, hex);
  snprintf(path, sizeof path, "%s/%.2s/%s", dir, hex, hex);
  /* Corrupt one byte of the payload. */
  int fd = open(path, O_RDWR);
  char ch;
  pread(fd, &ch, 1, 46);
  ch ^= 1;
  pwrite(fd, &ch, 1, 46);
  close(fd);
  check(tether_lint__cache_get(c, key, &data, &len) != 0, "a corrupt entry is a miss");
  tether_lint__cache_put(c, key, "payload", 7);
  truncate(path, 50);
  check(tether_lint__cache_get(c, key, &data, &len) != 0, "a truncated entry is a miss");
  truncate(path, 0);
  check(tether_lint__cache_get(c, key, &data, &len) != 0, "an empty entry is a miss");
  /* An intact entry of another key, renamed into this key's place. */
  tether_lint__cache_put(c, other, "other", 5);
  char ohex[65];
  tether_lint__hex(other, 32, ohex);
  snprintf(path2, sizeof path2, "%s/%.2s/%s", dir, ohex, ohex);
  unlink(path);
  snprintf(path, sizeof path, "%s/%.2s", dir, hex);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/%.2s/%s", dir, hex, hex);
  check(rename(path2, path) == 0 && tether_lint__cache_get(c, key, &data, &len) != 0,
        "an entry of another key in this key's place is a miss");
  unlink(path);
  mkfifo(path, 0600);
  check(tether_lint__cache_get(c, key, &data, &len) != 0,
        "an entry that is a FIFO is a miss, no hang");
  unlink(path);
  /* No temporary files left behind. */
  tether_lint__cache_put(c, key, "again", 5);
  char cmd[4500];
  snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -name '.tmp.*')\"", dir);
  check(system(cmd) == 0, "no temporary files are left behind");
  unsigned char d1[32], d2[32];
  write_file("hashme", "contents");
  snprintf(path, sizeof path, "%s/hashme", tmp);
  check(tether_lint__cache_file_digest(c, path, d1) == 0, "a file's digest");
  write_file("hashme", "changed!");
  check(tether_lint__cache_file_digest(c, path, d2) == 0 && memcmp(d1, d2, 32) == 0,
        "a file's digest is memoized for the life of the cache object (one run)");
  check(tether_lint__cache_file_digest(NULL, path, d2) == 0 && memcmp(d1, d2, 32) != 0,
        "without the memo the new contents count");
  check(tether_lint__cache_file_digest(c, "/dev/zero", d2) != 0, "no digest of a device");
  tether_lint__cache_close(c);
  snprintf(dir, sizeof dir, "%s/small.txt/sub", tmp);
  check(tether_lint__cache_open(dir, &c, err, sizeof err) != 0 && strstr(err, "cannot use"),
        "a cache folder that cannot be created: an error message (%s)", err);
}

int main(void) {
  const char *t = getenv("TEST_TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/input_unit_XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(tmp)) return 1;
  test_split();
  test_paths();
  test_flags();
  test_safe_read();
  test_small();
  test_cache();
  printf("input_unit_test: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
