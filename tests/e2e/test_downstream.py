"""Seed 002, end to end: a downstream dialect extension next to tether's own.

dstream/_dstream.so links the one shared C-API library (libtether_capi.so) and libMLIR.so, so a
type it defines is a valid memref element type for tether.ir. dstream_static/_dstream.so carries its
own static copy of MLIR's IR libraries (linked with --exclude-libs,ALL): two type universes in one
process, and the same program fails.
"""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "downstream"))

from tether import ir  # noqa: E402

import dstream  # noqa: E402

PROGRAM = """
import sys
from tether import ir
import {pkg} as ext
with ir.Context() as ctx, ir.Location.unknown():
    ext.register_dialect()
    pixel = ext.pixel_type()
    try:
        print("OK", ir.MemRefType.get([4], pixel))
    except ValueError as e:
        print("FAILED", e)
        sys.exit(3)
"""


def run(pkg):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "downstream"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", PROGRAM.format(pkg=pkg)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_memref_of_a_downstream_type():
    with ir.Context(), ir.Location.unknown():
        dstream.register_dialect()
        pixel = dstream.pixel_type()
        assert str(pixel) == "!dstream.pixel"
        assert dstream.is_pixel(pixel)
        memref = ir.MemRefType.get([4], pixel)
        assert str(memref) == "memref<4x!dstream.pixel>"
        assert memref.element_type == pixel
        # And in IR, verified by MLIR itself.
        m = ir.Module.parse("func.func @f() -> memref<4x!dstream.pixel> {\n"
                            "  %0 = memref.alloc() : memref<4x!dstream.pixel>\n"
                            "  return %0 : memref<4x!dstream.pixel>\n}")
        assert m.operation.verify()
        assert "memref<4x!dstream.pixel>" in str(m)


def test_a_downstream_op_takes_an_arith_result():
    # dstream's Python op classes come from tether_dialect_library, like tether's own dialects:
    # one program builds arith and dstream ops together.
    from tether.dialects import arith, func

    with ir.Context(), ir.Location.unknown():
        dstream.register_dialect()
        i32 = ir.IntegerType.get_signless(32)
        pixel = dstream.pixel_type()
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            f = func.FuncOp("make", ([], [pixel]))
            with ir.InsertionPoint(f.add_entry_block()):
                c = arith.ConstantOp(i32, 7)
                p = dstream.ToPixelOp(pixel, c)
                func.ReturnOp([p.result])
        m.operation.verify()
        text = str(m)
        assert '"dstream.to_pixel"(%c7_i32) : (i32) -> !dstream.pixel' in text, text
        op = f.entry_block.operations[1]
        assert isinstance(op, dstream.ToPixelOp) and op is p
        assert op.value.owner == c.operation
        with pytest.raises(ir.MLIRError):
            bad = dstream.ToPixelOp(pixel, arith.ConstantOp(ir.F32Type.get(), 1.0).result,
                                    ip=ir.InsertionPoint(f.entry_block.operations[2]))
            f.verify()


def test_both_extensions_agree_on_the_typeid():
    with ir.Context():
        dstream.register_dialect()
        pixel = dstream.pixel_type()
        # The TypeID the context registered the type under (seen through libtether_capi.so) is
        # the one the downstream extension defines.
        assert pixel.typeid == dstream.pixel_static_typeid()
        assert ir.Type.parse("!dstream.pixel").typeid == dstream.pixel_static_typeid()


def test_the_right_build_succeeds_in_a_fresh_process():
    r = run("dstream")
    assert r.returncode == 0, r.stderr
    assert "OK memref<4x!dstream.pixel>" in r.stdout


def test_a_static_copy_of_mlir_makes_the_same_program_fail():
    r = run("dstream_static")
    # Two universes: the static copy's MLIRContext code sees the context's builtin dialect under
    # another TypeID and LLVM stops the process; were it to get further, MemRefType.get would
    # refuse the type (its MemRefElementTypeInterface has another TypeID).
    assert r.returncode != 0
    assert "OK memref" not in r.stdout
    assert ("register different dialects" in r.stderr or "FAILED" in r.stdout), (r.stdout, r.stderr)


def test_two_copies_of_an_interface_typeid_in_one_process():
    import dstream_static
    # Loaded side by side (Python loads extensions RTLD_LOCAL): the static copy has its own
    # TypeID for MemRefElementTypeInterface; the right build shares libMLIR.so's.
    assert dstream_static.memref_interface_typeid() != dstream.memref_interface_typeid()
    # The downstream type's own TypeID is defined once per extension: each copy has its own.
    assert dstream_static.pixel_typeid() != dstream.pixel_typeid()


ROOT = os.path.dirname(os.path.dirname(HERE))
LINT = os.path.join(ROOT, "lint", "tether-lint")
TETHER_PKG = os.path.join(ROOT, "bindings", "python", "tether")


def lint(*paths):
    return subprocess.run([LINT, "--config", "/dev/null", *paths], capture_output=True, text=True,
                          timeout=120)


def test_typeid_elf_passes_the_right_build():
    r = lint(TETHER_PKG, os.path.join(HERE, "downstream", "dstream"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 finding(s)" in r.stdout


def test_typeid_elf_reports_the_static_copy():
    r = lint(TETHER_PKG, os.path.join(HERE, "downstream", "dstream_static"))
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert "[typeid-elf]" in out
    assert "dstream_static/_dstream.so" in out
    # Demangled, and about MLIR's own TypeIDs that the static copy duplicated.
    assert "mlir::detail::TypeIDResolver<mlir::" in out
    assert "LOCAL binding" in out


def test_typeid_elf_counts_a_symlinked_library_once(tmp_path):
    lib = os.path.join(TETHER_PKG, "libtether_capi.so")
    os.symlink(lib, tmp_path / "libtether_capi.so")
    os.symlink(lib, tmp_path / "libtether.so")
    # A directory (the walk sees one file) ...
    r = lint(str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 file(s) analysed" in r.stdout
    # ... and two paths named explicitly: one object, no "second copy".
    r = lint(str(tmp_path / "libtether_capi.so"), str(tmp_path / "libtether.so"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "also defined in" not in r.stdout
