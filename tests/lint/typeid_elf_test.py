"""typeid-elf on real shared objects built by Bazel (tests/lint/BUILD), on a package directory,
and on hostile inputs. Every run's findings are compared exactly with the expected list.

usage: typeid_elf_test.py LINT DIR_OF_THE_OBJECTS
"""
import json
import os
import shutil
import struct
import subprocess
import sys

LINT = sys.argv[1]
OBJ = sys.argv[2]
TMP = os.environ.get("TEST_TMPDIR", "/tmp")
FOO = "mlir::detail::TypeIDResolver<tether_test::Foo, void>::id"
BAR = "tether_test::ns::Bar::resolveTypeID()::id"
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("ok:   " if ok else "FAIL: ") + name)
    if not ok:
        failures += 1
        if detail:
            print("      " + detail.replace("\n", "\n      "))


def run(*paths, fmt="json"):
    proc = subprocess.run([LINT, "--config", "/dev/null", "--format", fmt, *paths],
                          capture_output=True, text=True)
    return proc


def local(path, name):
    return (path, "local", name)


def dup(path, name, first):
    return (path, "dup", name, first)


def classify(f):
    """A finding as a comparable tuple: (file, kind, demangled name[, first copy])."""
    m = f["message"]
    name = m.split("'")[1]
    if " is also defined in " in m:
        first = m.split(" is also defined in ")[1].split(":")[0]
        return (f["file"], "dup", name, first)
    if "is defined in this executable, which does not export it" in m:
        lib = m.split(" and in the shared object ")[1].split(": ")[0]
        return (f["file"], "exe", name, lib)
    assert "in this shared object" in m, m
    return (f["file"], "local", name)


def expect(title, paths, want, rc_want, err_has=()):
    proc = run(*paths)
    try:
        findings = json.loads(proc.stdout)
    except ValueError:
        check(title + ": JSON output", False, proc.stdout + proc.stderr)
        return None
    got = sorted(classify(f) for f in findings)
    check(title + ": exit %d" % rc_want, proc.returncode == rc_want,
          "exit %d\n%s" % (proc.returncode, proc.stderr))
    check(title + ": exactly the expected findings", got == sorted(want),
          "got:  %s\nwant: %s" % (got, sorted(want)))
    for f in findings:
        if not (f["line"] == 0 and f["column"] == 0 and f["rule"] == "typeid-elf"):
            check(title + ": findings at line 0, column 0, rule typeid-elf", False, str(f))
    for s in err_has:
        check(title + ": stderr says %r" % s, s in proc.stderr, proc.stderr)
    return proc


def o(name):
    return os.path.join(OBJ, name)


# ---- the objects Bazel built -----------------------------------------------------------------
core, good_a, good_b = o("libelf_good_core.so"), o("libelf_good_a.so"), o("libelf_good_b.so")
excl_a, excl_b = o("libelf_excl_a.so"), o("libelf_excl_b.so")
copy_a, copy_b = o("libelf_copy_a.so"), o("libelf_copy_b.so")
hidden = o("libelf_hidden.so")
uniq_a, uniq_b = o("libelf_inline_unique_a.so"), o("libelf_inline_unique_b.so")
weak_a, weak_b = o("libelf_inline_weak_a.so"), o("libelf_inline_weak_b.so")

expect("right: one exported definition, two extensions linking it", [core, good_a, good_b], [], 0)
expect("--exclude-libs,ALL: two LOCAL copies", [excl_a, excl_b],
       [local(excl_a, FOO), local(excl_b, FOO), dup(excl_b, FOO, excl_a)], 1)
expect("static copies without the flag: two exported copies", [copy_a, copy_b],
       [dup(copy_b, FOO, copy_a)], 1)
# The fallback's hidden static is initialised from MLIR's name registry (it has a guard
# variable): a private copy of the variable still holds the one TypeID, so it is not reported.
expect("-fvisibility=hidden: explicit storage hidden; fallback (name-registered) and anonymous "
       "namespace not reported", [hidden], [local(hidden, FOO)], 1)
expect("inline TypeID, STB_GNU_UNIQUE in both (glibc unifies them)", [uniq_a, uniq_b], [], 0)
expect("inline TypeID, -fno-gnu-unique: two WEAK copies", [weak_a, weak_b],
       [dup(weak_b, BAR, weak_a)], 1)
# Executables: their copy counts only against a shared object's, and only when not exported.
tool_copy, tool_exported = o("elf_tool_copy"), o("elf_tool_exported")
expect("an executable's unexported copy next to the library defining it",
       [tool_copy, core], [(tool_copy, "exe", FOO, core)], 1)
expect("an executable that exports its copy (-rdynamic): the library binds to it",
       [tool_exported, core], [], 0)
expect("an executable alone: its storage is its own", [tool_copy], [], 0)
expect("two executables: two processes", [tool_copy, tool_exported], [], 0)
expect("the executable against a pair of static copies: one finding each",
       [tool_copy, copy_a, copy_b],
       [(tool_copy, "exe", FOO, copy_a), dup(copy_b, FOO, copy_a)], 1)

# The copy first in path order is "the first"; every other copy is reported.
expect("the right core next to a static copy", [core, copy_a], [dup(core, FOO, copy_a)], 1)

# ---- a Python package directory: found by name and by ELF magic, next to build files ----------
pkg = os.path.join(TMP, "badpkg")
shutil.rmtree(pkg, ignore_errors=True)
os.makedirs(os.path.join(pkg, "native"))
pa = os.path.join(pkg, "_a.cpython-311-x86_64-linux-gnu.so")
pb = os.path.join(pkg, "_b.cpython-311-x86_64-linux-gnu.so")
pc = os.path.join(pkg, "native", "plugin.bin")
shutil.copy(excl_a, pa)
shutil.copy(excl_b, pb)
shutil.copy(copy_b, pc)
open(os.path.join(pkg, "__init__.py"), "w").write("from ._a import *\n")
open(os.path.join(pkg, "CMakeLists.txt"), "w").write(
    "add_library(_a MODULE a.cpp)\ntarget_link_options(_a PRIVATE -Wl,--exclude-libs,ALL)\n")
proc = run(pkg)
findings = json.loads(proc.stdout)
elf = sorted(classify(f) for f in findings if f["rule"] == "typeid-elf")
want = sorted([local(pa, FOO), local(pb, FOO), dup(pb, FOO, pa), dup(pc, FOO, pa)])
check("package directory: exit 1", proc.returncode == 1, proc.stderr)
check("package directory: the ELF findings (a file without .so found by its magic)", elf == want,
      "got:  %s\nwant: %s" % (elf, want))
other = [(f["file"], f["line"], f["rule"]) for f in findings if f["rule"] != "typeid-elf"]
check("package directory: the build file's exclude-libs finding too",
      other == [(os.path.join(pkg, "CMakeLists.txt"), 2, "exclude-libs")], str(other))
check("package directory: 5 files analysed (3 objects, CMakeLists.txt, and __init__.py for "
      "rtld-global; nothing else is taken for C++)", "5 file(s) analysed" in proc.stderr,
      proc.stderr)

# ---- SARIF: a finding about a whole file has no region ---------------------------------------
proc = run(excl_a, fmt="sarif")
res = json.loads(proc.stdout)["runs"][0]["results"]
phys = res[0]["locations"][0]["physicalLocation"]
check("SARIF: an ELF finding has an artifact location and no region",
      len(res) == 1 and "region" not in phys and phys["artifactLocation"]["uri"].endswith(
          "libelf_excl_a.so"), json.dumps(res))
proc = run(excl_a, fmt="text")
check("text: file:0:0: warning with the demangled name",
      "libelf_excl_a.so:0:0: warning: TypeID storage '%s' is defined with LOCAL binding" % FOO
      in proc.stdout, proc.stdout)

# ---- stripped objects: only .dynsym ----------------------------------------------------------
sd = os.path.join(TMP, "stripped")
shutil.rmtree(sd, ignore_errors=True)
os.makedirs(sd)
stripped = {}
for src in (excl_a, excl_b, copy_a, copy_b):
    dst = os.path.join(sd, os.path.basename(src))
    subprocess.run(["strip", "-o", dst, src], check=True)
    stripped[src] = dst
expect("stripped --exclude-libs pair: the local copies cannot be seen (noted)",
       [stripped[excl_a], stripped[excl_b]], [], 0, err_has=("stripped (no .symtab)",))
expect("stripped exported copies: still found through .dynsym",
       [stripped[copy_a], stripped[copy_b]],
       [dup(stripped[copy_b], FOO, stripped[copy_a])], 1)

# ---- hostile inputs --------------------------------------------------------------------------
hd = os.path.join(TMP, "hostile")
shutil.rmtree(hd, ignore_errors=True)
os.makedirs(hd)


def write(name, data):
    path = os.path.join(hd, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


text_so = write("linker-script.so", b"/* GNU ld script */\nGROUP ( libc.so.6 )\n")
empty_so = write("empty.so", b"")
data = open(excl_a, "rb").read()
trunc_hdr = write("trunc10.so", data[:10])
trunc_100 = write("trunc100.so", data[:100])
trunc_half = write("trunc_half.so", data[: len(data) // 2])
for path, msg in ((text_so, "not an ELF file"), (empty_so, "not an ELF file"),
                  (trunc_hdr, "not an ELF file"), (trunc_100, "truncated ELF file"),
                  (trunc_half, "truncated ELF file")):
    proc = run(path)
    name = os.path.basename(path)
    check("%s: exit 2, no crash, says %r" % (name, msg),
          proc.returncode == 2 and msg in proc.stderr and json.loads(proc.stdout) == [],
          "exit %d\n%s" % (proc.returncode, proc.stderr))
# Corrupt section headers (offsets past the end, a huge symbol table size).
bad = bytearray(data)
is64 = bad[4] == 2
shoff = struct.unpack_from("<Q", bad, 0x28)[0]
shnum = struct.unpack_from("<H", bad, 0x3C)[0]
for i in range(shnum):
    off = shoff + i * 64
    sh_type = struct.unpack_from("<I", bad, off + 4)[0]
    if sh_type == 2:  # SHT_SYMTAB: claim a size far past the end of the file
        struct.pack_into("<Q", bad, off + 0x20, 1 << 40)
corrupt = write("corrupt_symtab.so", bytes(bad))
proc = run(corrupt)
check("corrupt symbol table size: exit 2, no crash", proc.returncode == 2, proc.stderr)


def elf_with_typeid(cls64, big, bind_local):
    """A minimal ET_DYN with .symtab/.strtab/.shstrtab and one TypeID storage symbol."""
    e = ">" if big else "<"
    name = b"_ZN4mlir6detail14TypeIDResolverIN11tether_test3FooEvE2idE"
    strtab = b"\0" + name + b"\0"
    shstr = b"\0.symtab\0.strtab\0.shstrtab\0.bss\0"
    info = (0 if bind_local else 1) << 4 | 1  # LOCAL/GLOBAL, STT_OBJECT
    if cls64:
        sym0 = b"\0" * 24
        sym1 = struct.pack(e + "IBBHQQ", 1, info, 0, 4, 0x1000, 8)
        ehsize, shentsize, syment = 64, 64, 24
    else:
        sym0 = b"\0" * 16
        sym1 = struct.pack(e + "IIIBBH", 1, 0x1000, 8, info, 0, 4)
        ehsize, shentsize, syment = 52, 40, 16
    symtab = sym0 + sym1
    off_sym = ehsize
    off_str = off_sym + len(symtab)
    off_shs = off_str + len(strtab)
    shoff = (off_shs + len(shstr) + 7) & ~7
    body = symtab + strtab + shstr
    body += b"\0" * (shoff - ehsize - len(body))
    secs = [  # name, type, flags, offset, size, link, info, align, entsize
        (0, 0, 0, 0, 0, 0, 0, 0, 0),
        (1, 2, 0, off_sym, len(symtab), 2, 1, 8, syment),
        (9, 3, 0, off_str, len(strtab), 0, 0, 1, 0),
        (17, 3, 0, off_shs, len(shstr), 0, 0, 1, 0),
        (27, 8, 3, 0x1000, 8, 0, 0, 8, 0),
    ]
    shdrs = b""
    for n, t, fl, of, sz, ln, inf, al, es in secs:
        if cls64:
            shdrs += struct.pack(e + "IIQQQQIIQQ", n, t, fl, of if t != 8 else 0x1000, of, sz,
                                 ln, inf, al, es)
        else:
            shdrs += struct.pack(e + "IIIIIIIIII", n, t, fl, of if t != 8 else 0x1000, of, sz,
                                 ln, inf, al, es)
    ident = b"\x7fELF" + bytes([2 if cls64 else 1, 2 if big else 1, 1, 0]) + b"\0" * 8
    machine = 62 if cls64 else 3
    if cls64:
        hdr = ident + struct.pack(e + "HHIQQQIHHHHHH", 3, machine, 1, 0, 0, shoff, 0, ehsize, 0,
                                  0, shentsize, len(secs), 3)
    else:
        hdr = ident + struct.pack(e + "HHIIIIIHHHHHH", 3, machine, 1, 0, 0, shoff, 0, ehsize, 0,
                                  0, shentsize, len(secs), 3)
    return hdr + body + shdrs


for cls64, big, tag in ((False, False, "32-bit little-endian"), (False, True, "32-bit big-endian"),
                        (True, True, "64-bit big-endian")):
    p_local = write("tiny_%s_local.bin" % tag.replace(" ", "_"), elf_with_typeid(cls64, big, True))
    p_global = write("tiny_%s.so" % tag.replace(" ", "_"), elf_with_typeid(cls64, big, False))
    expect("%s ELF, found by magic: LOCAL storage reported" % tag, [p_local],
           [local(p_local, FOO)], 1)
    expect("%s ELF: GLOBAL storage is fine alone" % tag, [p_global], [], 0)

nodir = os.path.join(TMP, "no_objects")
os.makedirs(nodir, exist_ok=True)
open(os.path.join(nodir, "README"), "w").write("nothing here\n")
proc = run(nodir)
check("a directory without objects: exit 0", proc.returncode == 0 and
      json.loads(proc.stdout) == [], proc.stderr)
proc = run(o("libelf_good_core.so"), "--disable", "typeid-elf")
check("--disable typeid-elf: exit 0", proc.returncode == 0, proc.stderr)

print("typeid_elf_test: %s" % ("FAILED (%d)" % failures if failures else "passed"))
sys.exit(1 if failures else 0)
