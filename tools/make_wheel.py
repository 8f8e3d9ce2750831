#!/usr/bin/env python3
"""Writes tether's wheel: the built package folder (bindings/python:package) as a PEP 427 archive.

    make_wheel.py [--tar FILES.tar] OUT.whl VERSION MLIR_VERSION ROOT FILE...

ROOT is the folder that holds tether/ (bazel-bin/bindings/python); FILEs elsewhere (build
intermediates such as a generated header) are not part of the package and are left out. Byte code (__pycache__) is left out: pip compiles the modules at install, for the
interpreter that installs them. --tar adds the regular files of a tar whose members are under
tether/ (the type stubs, //bindings/python:stubs). The archive is reproducible: sorted entries,
fixed timestamps.

The tags come from the interpreter that runs this script, the one the extension is built for
(cp311-cp311-linux_x86_64 on Debian bookworm); OUT.whl's name must agree with them, so a wheel
can never be named for an interpreter it does not load in.
"""

import base64
import hashlib
import os
import sys
import sysconfig
import tarfile
import zipfile

_EPOCH = (1980, 1, 1, 0, 0, 0)

_SUMMARY = "MLIR from Python on a garbage-collected arena of handles (upstream's mlir API)"


def _tags():
    py = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return py, py, plat


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _metadata(version, mlir_version):
    return "\n".join([
        "Metadata-Version: 2.1",
        "Name: tether",
        "Version: " + version,
        "Summary: " + _SUMMARY,
        "Requires-Python: ==%d.%d.*" % sys.version_info[:2],
        # Not a Python requirement: the system libraries the extension links (Debian packages).
        "Requires-External: libmlir-%s" % mlir_version,
        "Requires-External: libgc1",
        "",
        "tether is upstream MLIR's Python API (`mlir.ir`, `mlir.dialects`, `mlir.passmanager`)",
        "on a garbage-collected arena: no object dangles, erased IR raises InvalidatedError.",
        "Built for MLIR %s; it loads the system's libMLIR (Debian's libmlir-%s)." % (
            mlir_version, mlir_version),
        "Run a program written for upstream `mlir`: python3 -m tether.run PROGRAM.py",
        "",
    ])


def _tar_entries(path, entries):
    """The regular files of the tar at path, under tether/, into entries; an error text or None."""
    with tarfile.open(path) as t:
        for m in t.getmembers():
            if m.isdir():
                continue
            name = os.path.normpath(m.name)
            if not m.isfile() or not name.startswith("tether/") or ".." in name.split("/"):
                return "%s: %s is not a file under tether/" % (path, m.name)
            entries[name] = (t.extractfile(m).read(), False)
    return None


def main(argv):
    tars = []
    while len(argv) > 2 and argv[1] == "--tar":
        tars.append(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) < 6:
        sys.stderr.write(__doc__)
        return 2
    out, version, mlir_version, root = argv[1:5]
    files = argv[5:]
    py, abi, plat = _tags()
    dist = "tether-%s" % version
    expected = "%s-%s-%s-%s.whl" % (dist, py, abi, plat)
    if os.path.basename(out) != expected:
        sys.stderr.write("make_wheel: %s should be named %s for this interpreter\n" % (out, expected))
        return 1
    root = os.path.normpath(root)
    entries = {}
    for path in files:
        rel = os.path.relpath(os.path.normpath(path), root)
        if not rel.startswith("tether" + os.sep) or "__pycache__" in rel.split(os.sep):
            continue
        with open(path, "rb") as f:
            entries[rel.replace(os.sep, "/")] = (f.read(), os.access(path, os.X_OK))
    for t in tars:
        err = _tar_entries(t, entries)
        if err:
            sys.stderr.write("make_wheel: %s\n" % err)
            return 1
    if "tether/_tether.so" not in entries:
        sys.stderr.write("make_wheel: the package has no tether/_tether.so\n")
        return 1
    info = dist + ".dist-info/"
    entries[info + "METADATA"] = (_metadata(version, mlir_version).encode(), False)
    entries[info + "WHEEL"] = ("\n".join([
        "Wheel-Version: 1.0",
        "Generator: tether make_wheel.py",
        "Root-Is-Purelib: false",
        "Tag: %s-%s-%s" % (py, abi, plat),
        "",
    ]).encode(), False)
    entries[info + "top_level.txt"] = (b"tether\n", False)
    entries[info + "entry_points.txt"] = (
        b"[console_scripts]\ntether-run = tether.run:main\n", False)
    record = [_record_line(name, data) for name, (data, _) in sorted(entries.items())]
    record.append(info + "RECORD,,")
    entries[info + "RECORD"] = (("\n".join(record) + "\n").encode(), False)
    # .dist-info last, RECORD last of all, as installers expect.
    order = sorted(n for n in entries if not n.startswith(info))
    order += sorted(n for n in entries if n.startswith(info) and n != info + "RECORD")
    order.append(info + "RECORD")
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name in order:
            data, executable = entries[name]
            zi = zipfile.ZipInfo(name, _EPOCH)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100755 if executable else 0o100644) << 16
            z.writestr(zi, data)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
