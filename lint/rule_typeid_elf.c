/* Rule family "typeid-elf": MLIR TypeID storage in built shared objects (libelf).
 *
 * Invariant: check_elf reads one shared object's symbol table (.symtab, or .dynsym when the object
 * is stripped) through libelf only (never trusting offsets itself), reports TypeID storage that is
 * defined there with LOCAL binding or HIDDEN/INTERNAL visibility, and records every defined TypeID
 * storage symbol in the run's state (check_elf runs in the driver). run_end then reports, for each
 * storage symbol defined in more than one object, every copy after the first (objects ordered by
 * path), unless every copy has STB_GNU_UNIQUE binding, which glibc's dynamic loader unifies
 * process-wide even across dlopen(RTLD_LOCAL). Findings are about a whole file: line 0, column 0.
 */
#include "lint/lint.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RULE "typeid-elf"

/* libstdc++'s demangler (C ABI; linked with -lstdc++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

static const tether_lint_rule_info telf_rules[] = {
    {RULE, "MLIR TypeID storage a shared object keeps private, or carries a second copy of",
     "An MLIR TypeID is the address of a static variable (TypeIDResolver<T>::id for "
     "MLIR_DEFINE_EXPLICIT_TYPE_ID, a resolveTypeID()::id function-local static for the inline "
     "and fallback forms). In a shared object that variable must be defined once and exported: "
     "defined with LOCAL binding or HIDDEN visibility (what -Wl,--exclude-libs,ALL does to "
     "archive members, and -fvisibility=hidden to everything) it cannot be unified with the copy "
     "another object uses, and the same storage defined in two objects loaded with "
     "dlopen(RTLD_LOCAL), as Python loads extensions, gives each its own address: two type "
     "universes in one process, where isa<> and interface lookups fail across objects.",
     "define each TypeID (MLIR_DEFINE_EXPLICIT_TYPE_ID) in ONE shared library, exported with "
     "default visibility, and link every extension against it; drop -Wl,--exclude-libs and "
     "static copies of MLIR from the extensions"},
};

/* ---- which symbols are TypeID storage ---------------------------------------------------- */

/* Mangled-name test, used when the demangler cannot help (and as a cheap prefilter). */
static int mangled_candidate(const char *m) {
  if (strncmp(m, "_ZN4mlir6detail14TypeIDResolverI", 32) == 0)
    return tether_lint__ends_with(m, "2idE");
  if (strncmp(m, "_ZZ", 3) == 0) return strstr(m, "13resolveTypeIDEvE2id") != NULL;
  return 0;
}

/* 1 when `m` names TypeID storage; *shown gets a malloc'd demangled name (or a copy of m). */
static int typeid_storage(const char *m, char **shown) {
  *shown = NULL;
  if (!mangled_candidate(m)) return 0;
  int status = -1;
  char *d = __cxa_demangle(m, NULL, NULL, &status);
  if (status != 0 || !d) {
    free(d);
    *shown = tether_lint__strdup(m);
    return *shown != NULL;
  }
  int yes = 0;
  if (strncmp(d, "mlir::detail::TypeIDResolver<", 29) == 0 && tether_lint__ends_with(d, ">::id"))
    yes = 1; /* explicit (MLIR_DEFINE_EXPLICIT_TYPE_ID) and self-owning storage */
  else if (tether_lint__ends_with(d, "::resolveTypeID()::id"))
    yes = 1; /* inline (MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID) and fallback statics */
  /* Types in an anonymous namespace have internal linkage: their storage is private to one
   * object by construction and another object cannot name the same type. */
  if (yes && strstr(d, "(anonymous namespace)")) yes = 0;
  if (!yes) {
    free(d);
    return 0;
  }
  *shown = d;
  return 1;
}

/* ---- per-run state ----------------------------------------------------------------------- */

typedef struct telf_def {
  char *mangled;
  char *shown;
  char *file;
  int unique; /* STB_GNU_UNIQUE */
} telf_def;

typedef struct telf_file_id {
  dev_t dev;
  ino_t ino;
} telf_file_id;

typedef struct telf_state {
  tether_lint_run *run;
  telf_def *v;
  size_t n, cap;
  telf_file_id *seen; /* objects already read: the same file under two paths is one object */
  size_t nseen, capseen;
} telf_state;

/* Records the object's identity; 0 when it was seen before (a symlink, a second path). */
static int first_sight(telf_state *s, const struct stat *st) {
  int first = 1;
  for (size_t i = 0; i < s->nseen && first; i++)
    if (s->seen[i].dev == st->st_dev && s->seen[i].ino == st->st_ino) first = 0;
  if (first && tether_lint__grow(&s->seen, &s->capseen, s->nseen, sizeof *s->seen) == 0)
    s->seen[s->nseen++] = (telf_file_id){st->st_dev, st->st_ino};
  return first;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int telf_run_begin(tether_lint_run *run, void **state) {
  telf_state *s = calloc(1, sizeof *s);
  if (!s) return -1;
  s->run = run;
  *state = s;
  return 0;
}

static int def_cmp(const void *pa, const void *pb) {
  const telf_def *a = pa, *b = pb;
  int c = strcmp(a->mangled, b->mangled);
  return c ? c : strcmp(a->file, b->file);
}

static int telf_run_end(tether_lint_run *run, void *state) {
  telf_state *s = state;
  if (!s) return 0;
  if (s->n > 1) qsort(s->v, s->n, sizeof *s->v, def_cmp);
  for (size_t i = 0; i < s->n;) {
    size_t j = i + 1;
    int all_unique = s->v[i].unique;
    while (j < s->n && strcmp(s->v[j].mangled, s->v[i].mangled) == 0) {
      all_unique &= s->v[j].unique;
      j++;
    }
    if (!all_unique)
      for (size_t k = i + 1; k < j; k++)
        tether_lint__report_run(
            run, s->v[k].file, 0, 0, RULE,
            "TypeID storage '%s' is also defined in %s: two copies in one process "
            "are two type universes (isa<> fails across them)",
            s->v[k].shown, s->v[i].file);
    i = j;
  }
  for (size_t i = 0; i < s->n; i++) {
    free(s->v[i].mangled);
    free(s->v[i].shown);
    free(s->v[i].file);
  }
  free(s->v);
  free(s->seen);
  free(s);
  return 0;
}

static int remember(telf_state *s, const char *mangled, const char *shown, const char *file,
                    int unique) {
  int rc = tether_lint__grow(&s->v, &s->cap, s->n, sizeof *s->v);
  if (rc == 0) {
    telf_def *d = &s->v[s->n];
    d->mangled = tether_lint__strdup(mangled);
    d->shown = tether_lint__strdup(shown);
    d->file = tether_lint__strdup(file);
    d->unique = unique;
    if (d->mangled && d->shown && d->file) {
      s->n++;
    } else {
      free(d->mangled);
      free(d->shown);
      free(d->file);
      rc = -1;
    }
  }
  return rc;
}

/* ---- one object -------------------------------------------------------------------------- */

static unsigned long long rd_uint(const unsigned char *p, int n, int little) {
  unsigned long long v = 0;
  for (int i = 0; i < n; i++) v |= (unsigned long long)p[little ? i : n - 1 - i] << (8 * i);
  return v;
}

static int telf_claims(const char *path, const char *head, size_t hl) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  /* By name: x.so, x.so.1, x.so.1.2, x.cpython-311-x86_64-linux-gnu.so. */
  const char *so = strstr(base, ".so");
  while (so) {
    const char *r = so + 3;
    while (*r == '.' || (*r >= '0' && *r <= '9')) r++;
    if (*r == '\0' && so != base) return 1;
    so = strstr(so + 1, ".so");
  }
  /* By content: an ELF shared object (ET_DYN without a PT_INTERP program header; a PIE
   * executable has one). */
  if (hl < 20 || memcmp(head,
                        "\x7f"
                        "ELF",
                        4) != 0)
    return 0;
  int little = head[5] == 1;
  unsigned type = little ? (unsigned char)head[16] | (unsigned char)head[17] << 8
                         : (unsigned char)head[17] | (unsigned char)head[16] << 8;
  if (type != ET_DYN) return 0;
  int is64 = head[4] == 2;
  /* e_phoff, e_phentsize, e_phnum, from the header in the first bytes. */
  size_t need = is64 ? 64 : 52;
  if (hl < need) return 1;
#define RD(off, sz) rd_uint((const unsigned char *)head + (off), (sz), little)
  unsigned long long phoff = is64 ? RD(32, 8) : RD(28, 4);
  unsigned long long phentsize = is64 ? RD(54, 2) : RD(42, 2);
  unsigned long long phnum = is64 ? RD(56, 2) : RD(44, 2);
  for (unsigned long long i = 0; i < phnum; i++) {
    unsigned long long off = phoff + i * phentsize;
    if (phentsize < 4 || off + 4 > hl) break;
    if (RD(off, 4) == PT_INTERP) return 0;
  }
#undef RD
  return 1;
}

static const char *bind_name(int b) {
  switch (b) {
  case STB_LOCAL:
    return "LOCAL";
  case STB_GLOBAL:
    return "GLOBAL";
  case STB_WEAK:
    return "WEAK";
  case STB_GNU_UNIQUE:
    return "UNIQUE";
  default:
    return "other";
  }
}

/* Is `e` (read from `fd`) a whole shared object not seen before in this run? 0, or -1 with a
 * message (or a note, for a file seen before); `*shnum` its number of sections. */
static int check_object(tether_lint_file *f, telf_state *s, Elf *e, int fd, size_t *shnum) {
  if (!e || elf_kind(e) != ELF_K_ELF) {
    tether_lint__file_message(f, 1, "not an ELF file; not analysed");
    return -1;
  }
  GElf_Ehdr eh;
  if (!gelf_getehdr(e, &eh)) {
    tether_lint__file_message(f, 1, "truncated or malformed ELF header (%s); not analysed",
                              elf_errmsg(-1));
    return -1;
  }
  if (eh.e_type != ET_DYN) {
    tether_lint__file_message(f, 1, "ELF file is not a shared object (e_type %u); not analysed",
                              (unsigned)eh.e_type);
    return -1;
  }
  struct stat st;
  size_t shstrndx;
  if (fstat(fd, &st) == 0 && !first_sight(s, &st)) {
    tether_lint__file_message(f, 0, "note: the same file as an earlier input; checked once");
    return -1;
  }
  if (fstat(fd, &st) == 0 &&
      (eh.e_shoff > (GElf_Off)st.st_size ||
       (GElf_Off)eh.e_shnum * eh.e_shentsize > (GElf_Off)st.st_size - eh.e_shoff)) {
    tether_lint__file_message(
        f, 1,
        "truncated ELF file: the section headers (at byte %llu) lie past its end "
        "(%lld bytes); not analysed",
        (unsigned long long)eh.e_shoff, (long long)st.st_size);
    return -1;
  }
  if (elf_getshdrnum(e, shnum) != 0 || elf_getshdrstrndx(e, &shstrndx) != 0) {
    tether_lint__file_message(f, 1, "truncated or malformed ELF section headers (%s); not analysed",
                              elf_errmsg(-1));
    return -1;
  }
  return 0;
}

/* The full symbol table, else the dynamic one (a stripped object, with a note). 0 with the
 * section and its header, or -1 with a message (or a note when there is none). */
static int symbol_table(tether_lint_file *f, Elf *e, size_t shnum, Elf_Scn **out,
                        GElf_Shdr *out_sh) {
  Elf_Scn *symtab = NULL, *dynsym = NULL;
  GElf_Shdr symsh, dynsh;
  for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB && !symtab) {
      symtab = scn;
      symsh = sh;
    } else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
      dynsym = scn;
      dynsh = sh;
    }
  }
  if (elf_errno() != 0 && !symtab && !dynsym) {
    tether_lint__file_message(f, 1, "truncated or malformed ELF (%s); not analysed",
                              elf_errmsg(-1));
    return -1;
  }
  if (!symtab && !dynsym) {
    tether_lint__file_message(f, 0, "note: no symbol table (%zu sections); nothing to check",
                              shnum);
    return -1;
  }
  if (!symtab)
    tether_lint__file_message(
        f, 0,
        "note: stripped (no .symtab): only the exported symbols in .dynsym are "
        "checked; TypeID storage made local cannot be seen");
  *out = symtab ? symtab : dynsym;
  *out_sh = symtab ? symsh : dynsh;
  return 0;
}

/* Guard variables of dynamically initialised function-local statics, sorted. A
 * resolveTypeID()::id with a guard is initialised at run time: the fallback resolver, which gets
 * its value from MLIR's registry of implicit TypeIDs by type name, so private copies of the
 * variable still hold the one TypeID. Self-owning inline storage is constant-initialised: no
 * guard. The names point into the object's string table. */
static size_t static_guards(Elf *e, Elf_Data *data, const GElf_Shdr *sh, size_t nsyms,
                            char ***out) {
  char **guards = NULL;
  size_t nguards = 0;
  for (size_t i = 1; i < nsyms; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(data, (int)i, &sym)) break;
    const char *name = elf_strptr(e, sh->sh_link, sym.st_name);
    if (!name || strncmp(name, "_ZGVZ", 5) != 0 || !strstr(name, "13resolveTypeIDEvE2id")) continue;
    char **g = realloc(guards, (nguards + 1) * sizeof *g);
    if (!g) break;
    guards = g;
    guards[nguards++] = (char *)name;
  }
  if (nguards > 1) qsort(guards, nguards, sizeof *guards, str_cmp);
  *out = guards;
  return nguards;
}

/* Every TypeID storage symbol the object defines: reported when it is private to the object,
 * remembered for the cross-object pass. -1 when out of memory. */
static int check_symbols(tether_lint_file *f, telf_state *s, Elf *e, Elf_Scn *scn,
                         const GElf_Shdr *sh) {
  Elf_Data *data = elf_getdata(scn, NULL);
  if (!data || sh->sh_entsize == 0) {
    tether_lint__file_message(f, 1, "truncated or malformed symbol table (%s); not analysed",
                              elf_errmsg(-1));
    return 0;
  }
  size_t nsyms = data->d_size / gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
  char **guards = NULL;
  size_t nguards = static_guards(e, data, sh, nsyms, &guards);
  int rc = 0, bad_names = 0;
  for (size_t i = 1; i < nsyms; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(data, (int)i, &sym)) break;
    if (sym.st_shndx == SHN_UNDEF) continue; /* a reference, not a definition */
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_OBJECT && type != STT_TLS && type != STT_NOTYPE && type != STT_COMMON) continue;
    const char *name = elf_strptr(e, sh->sh_link, sym.st_name);
    if (!name) {
      bad_names++;
      continue;
    }
    if (nguards && strncmp(name, "_ZZ", 3) == 0) {
      char key[4096];
      if ((size_t)snprintf(key, sizeof key, "_ZGV%s", name + 2) < sizeof key) {
        const char *kp = key;
        if (bsearch(&kp, guards, nguards, sizeof *guards, str_cmp)) continue; /* fallback */
      }
    }
    char *shown = NULL;
    if (!typeid_storage(name, &shown)) continue;
    int bind = GELF_ST_BIND(sym.st_info);
    int vis = GELF_ST_VISIBILITY(sym.st_other);
    if (bind == STB_LOCAL || vis == STV_HIDDEN || vis == STV_INTERNAL)
      tether_lint__report_at(f, 0, 0, RULE,
                             "TypeID storage '%s' is defined %s%s in this shared object: no other "
                             "object can share it, so this object has a private copy of the TypeID",
                             shown, bind == STB_LOCAL ? "with LOCAL binding" : bind_name(bind),
                             vis == STV_HIDDEN     ? " and HIDDEN visibility"
                             : vis == STV_INTERNAL ? " and INTERNAL visibility"
                                                   : "");
    if (remember(s, name, shown, tether_lint__file_path(f), bind == STB_GNU_UNIQUE) != 0) rc = -1;
    free(shown);
  }
  free(guards);
  if (bad_names)
    tether_lint__file_message(f, 1, "%d symbol name(s) outside the string table (truncated?)",
                              bad_names);
  return rc;
}

static int telf_check_elf(tether_lint_file *f, void *state) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    tether_lint__file_message(f, 1, "libelf is unusable: %s", elf_errmsg(-1));
    return 0;
  }
  /* A regular file on a real file system only (no FIFO, device or /proc file). */
  int fd = -1;
  int oe = tether_lint__open_regular(tether_lint__file_path(f), &fd, NULL);
  if (oe) {
    tether_lint__file_message(f, 1, "cannot read: %s", tether_lint__read_strerror(oe));
    return 0;
  }
  Elf *e = elf_begin(fd, ELF_C_READ, NULL);
  size_t shnum = 0;
  Elf_Scn *scn = NULL;
  GElf_Shdr sh;
  int rc = 0;
  if (check_object(f, state, e, fd, &shnum) == 0 && symbol_table(f, e, shnum, &scn, &sh) == 0)
    rc = check_symbols(f, state, e, scn, &sh);
  if (e) elf_end(e);
  close(fd);
  return rc;
}

const tether_lint_family tether_lint__family_typeid_elf = {
    .name = "typeid-elf",
    .inputs = TETHER_LINT_IN_ELF,
    .rules = telf_rules,
    .nrules = sizeof telf_rules / sizeof telf_rules[0],
    .claims = telf_claims,
    .run_begin = telf_run_begin,
    .check_elf = telf_check_elf,
    .run_end = telf_run_end,
};
