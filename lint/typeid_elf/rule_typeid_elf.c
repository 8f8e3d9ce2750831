/* Rule family "typeid-elf": MLIR TypeID storage in built shared objects (libelf).
 *
 * Invariant: check_elf reads one shared object's symbol table (.symtab, or .dynsym when the object
 * is stripped) through libelf only (never trusting offsets itself), reports TypeID storage that is
 * defined there with LOCAL binding or HIDDEN/INTERNAL visibility, and records every defined TypeID
 * storage symbol in the run's state (check_elf runs in the driver). run_end then reports, for each
 * storage symbol defined in more than one object, every copy after the first (objects ordered by
 * path), unless every copy has STB_GNU_UNIQUE binding, which glibc's dynamic loader unifies
 * process-wide even across dlopen(RTLD_LOCAL). Executables are read too: an executable's
 * TypeID storage is its own unless it is exported (.dynsym), and a shared object defining the
 * same storage (a dialect plugin the tool dlopens, a C-API library it loads) then uses another
 * copy in the same process; copies in two executables (two processes) are no finding, nor is the
 * executable's copy when it is exported (the dynamic linker binds the objects' references to it).
 * Findings are about a whole file: line 0, column 0.
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
    {RULE,
     "MLIR TypeID storage a shared object keeps private, or carries a second copy of (also an "
     "executable's unexported copy of a library's)",
     "An MLIR TypeID is the address of a static variable (TypeIDResolver<T>::id for "
     "MLIR_DEFINE_EXPLICIT_TYPE_ID, a resolveTypeID()::id function-local static for the inline "
     "and fallback forms). In a shared object that variable must be defined once and exported: "
     "defined with LOCAL binding or HIDDEN visibility (what -Wl,--exclude-libs,ALL does to "
     "archive members, and -fvisibility=hidden to everything) it cannot be unified with the copy "
     "another object uses, and the same storage defined in two objects loaded with "
     "dlopen(RTLD_LOCAL), as Python loads extensions, gives each its own address: two type "
     "universes in one process, where isa<> and interface lookups fail across objects.",
     "define each TypeID (MLIR_DEFINE_EXPLICIT_TYPE_ID) in ONE shared library, exported with "
     "default visibility, and link every extension and tool against it; drop -Wl,--exclude-libs "
     "and static copies of MLIR from the extensions (a tool that must carry its own copy exports "
     "it: -rdynamic)"},
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
  int unique;   /* STB_GNU_UNIQUE */
  int exec;     /* defined in an executable */
  int exported; /* (an executable's) in its .dynsym */
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

/* The copies of one storage symbol, v[0..n): shared objects' copies after the first are
 * reported (unless all are STB_GNU_UNIQUE), and an executable's copy it does not export when a
 * shared object defines it too. Executables' copies are not compared with each other. */
static void report_copies(tether_lint_run *run, const telf_def *v, size_t n) {
  const telf_def *first_so = NULL;
  int all_unique = 1;
  for (size_t k = 0; k < n; k++)
    if (!v[k].exec) {
      if (!first_so) first_so = &v[k];
      all_unique &= v[k].unique;
    }
  for (size_t k = 0; k < n && first_so; k++) {
    if (v[k].exec && !v[k].exported)
      tether_lint__report_run(
          run, v[k].file, 0, 0, RULE,
          "TypeID storage '%s' is defined in this executable, which does not export it, and "
          "in the shared object %s: when the executable loads that object (a dialect plugin, a "
          "C-API library), the two use different TypeIDs (isa<> fails across them)",
          v[k].shown, first_so->file);
    else if (!v[k].exec && &v[k] != first_so && !all_unique)
      tether_lint__report_run(run, v[k].file, 0, 0, RULE,
                              "TypeID storage '%s' is also defined in %s: two copies in one "
                              "process are two type universes (isa<> fails across them)",
                              v[k].shown, first_so->file);
  }
}

static int telf_run_end(tether_lint_run *run, void *state) {
  telf_state *s = state;
  if (!s) return 0;
  if (s->n > 1) qsort(s->v, s->n, sizeof *s->v, def_cmp);
  for (size_t i = 0; i < s->n;) {
    size_t j = i + 1;
    while (j < s->n && strcmp(s->v[j].mangled, s->v[i].mangled) == 0) j++;
    report_copies(run, s->v + i, j - i);
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
                    int unique, int exec, int exported) {
  int rc = tether_lint__grow(&s->v, &s->cap, s->n, sizeof *s->v);
  if (rc == 0) {
    telf_def *d = &s->v[s->n];
    d->mangled = tether_lint__strdup(mangled);
    d->shown = tether_lint__strdup(shown);
    d->file = tether_lint__strdup(file);
    d->unique = unique;
    d->exec = exec;
    d->exported = exported;
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
  /* By content: an ELF shared object or executable (ET_DYN, ET_EXEC; relocatable objects and
   * core files are not linked programs). */
  if (hl < 20 || memcmp(head,
                        "\x7f"
                        "ELF",
                        4) != 0)
    return 0;
  int little = head[5] == 1;
  unsigned type = little ? (unsigned char)head[16] | (unsigned char)head[17] << 8
                         : (unsigned char)head[17] | (unsigned char)head[16] << 8;
  return type == ET_DYN || type == ET_EXEC;
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

/* Whether e is an executable: ET_EXEC, or ET_DYN with a program interpreter (PIE). */
static int is_executable(Elf *e, const GElf_Ehdr *eh) {
  if (eh->e_type == ET_EXEC) return 1;
  size_t n = 0;
  if (elf_getphdrnum(e, &n) != 0) return 0;
  for (size_t i = 0; i < n; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP) return 1;
  }
  return 0;
}

/* Is `e` (read from `fd`) a whole shared object or executable not seen before in this run? 0, or
 * -1 with a message (or a note, for a file seen before); `*shnum` its number of sections, `*exec`
 * whether it is an executable. */
static int check_object(tether_lint_file *f, telf_state *s, Elf *e, int fd, size_t *shnum,
                        int *exec) {
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
  if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) {
    tether_lint__file_message(
        f, 1, "ELF file is neither a shared object nor an executable (e_type %u); not analysed",
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
  *exec = is_executable(e, &eh);
  return 0;
}

/* The full symbol table, else the dynamic one (a stripped object, with a note). 0 with the
 * section and its header (and the dynamic table, or NULL, in *dyn), or -1 with a message (or a
 * note when there is none). */
static int symbol_table(tether_lint_file *f, Elf *e, size_t shnum, Elf_Scn **out, GElf_Shdr *out_sh,
                        Elf_Scn **dyn) {
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
  *dyn = dynsym;
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

/* The names an executable exports (defined in .dynsym, default or protected visibility), sorted;
 * they point into the object's string table. */
static size_t exported_names(Elf *e, Elf_Scn *dyn, char ***out) {
  *out = NULL;
  GElf_Shdr sh;
  Elf_Data *data = dyn && gelf_getshdr(dyn, &sh) ? elf_getdata(dyn, NULL) : NULL;
  if (!data || sh.sh_entsize == 0) return 0;
  size_t nsyms = data->d_size / gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT), n = 0;
  char **names = NULL;
  for (size_t i = 1; i < nsyms; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(data, (int)i, &sym)) break;
    int vis = GELF_ST_VISIBILITY(sym.st_other);
    if (sym.st_shndx == SHN_UNDEF || GELF_ST_BIND(sym.st_info) == STB_LOCAL || vis == STV_HIDDEN ||
        vis == STV_INTERNAL)
      continue;
    const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
    if (!name) continue;
    char **g = realloc(names, (n + 1) * sizeof *g);
    if (!g) break;
    names = g;
    names[n++] = (char *)name;
  }
  if (n > 1) qsort(names, n, sizeof *names, str_cmp);
  *out = names;
  return n;
}

/* Every TypeID storage symbol the object defines: reported when it is private to a shared
 * object, remembered for the cross-object pass (with, for an executable, whether it exports it).
 * -1 when out of memory. */
static int check_symbols(tether_lint_file *f, telf_state *s, Elf *e, Elf_Scn *scn,
                         const GElf_Shdr *sh, Elf_Scn *dyn, int exec) {
  Elf_Data *data = elf_getdata(scn, NULL);
  if (!data || sh->sh_entsize == 0) {
    tether_lint__file_message(f, 1, "truncated or malformed symbol table (%s); not analysed",
                              elf_errmsg(-1));
    return 0;
  }
  size_t nsyms = data->d_size / gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
  char **guards = NULL, **exports = NULL;
  size_t nguards = static_guards(e, data, sh, nsyms, &guards);
  size_t nexports = exec ? exported_names(e, dyn, &exports) : 0;
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
    const char *np = name;
    int exported =
        exec && nexports && bsearch(&np, exports, nexports, sizeof *exports, str_cmp) != NULL;
    if (!exec && (bind == STB_LOCAL || vis == STV_HIDDEN || vis == STV_INTERNAL))
      tether_lint__report_at(f, 0, 0, RULE,
                             "TypeID storage '%s' is defined %s%s in this shared object: no other "
                             "object can share it, so this object has a private copy of the TypeID",
                             shown, bind == STB_LOCAL ? "with LOCAL binding" : bind_name(bind),
                             vis == STV_HIDDEN     ? " and HIDDEN visibility"
                             : vis == STV_INTERNAL ? " and INTERNAL visibility"
                                                   : "");
    if (remember(s, name, shown, tether_lint__file_path(f), bind == STB_GNU_UNIQUE, exec,
                 exported) != 0)
      rc = -1;
    free(shown);
  }
  free(guards);
  free(exports);
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
  Elf_Scn *scn = NULL, *dyn = NULL;
  GElf_Shdr sh;
  int rc = 0, exec = 0;
  if (check_object(f, state, e, fd, &shnum, &exec) == 0 &&
      symbol_table(f, e, shnum, &scn, &sh, &dyn) == 0)
    rc = check_symbols(f, state, e, scn, &sh, dyn, exec);
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
