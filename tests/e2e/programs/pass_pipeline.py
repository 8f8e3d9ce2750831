# A compiler driver: parse a pipeline, add to it, print it, enable IR printing and capture what
# MLIR writes to stderr (fd 2), lower a function from arith/scf/memref to the LLVM dialect, handle
# a pipeline that does not parse and a pass that fails.
import os
import sys
import tempfile

from mlir.ir import *
from mlir.passmanager import PassManager

SRC = """
func.func @sum(%buf: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %buf[%i] : memref<?xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  return %r : f32
}
func.func @unused() {
  %c = arith.constant 3 : i32
  %d = arith.addi %c, %c : i32
  return
}
"""


class CaptureFd2:
    """Captures what native code writes to file descriptor 2."""

    def __enter__(self):
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode()
        self.tmp.close()


with Context() as ctx:
    module = Module.parse(SRC)
    pm = PassManager.parse("builtin.module(canonicalize,cse)")
    pm.add("func.func(convert-scf-to-cf)")
    print("pipeline:", pm)
    ctx.enable_multithreading(False)  # MLIR requires it for IR printing
    pm.enable_ir_printing()
    with CaptureFd2() as cap:
        pm.run(module.operation)
    dumps = [l for l in cap.text.splitlines() if l.startswith("// -----// IR Dump")]
    print("IR dumps:", len(dumps))
    for d in dumps:
        print("  ", d)
    print("last dump contains cf.cond_br:", "cf.cond_br" in cap.text)
    print(module)

    lower = PassManager.parse(
        "builtin.module(func.func(convert-arith-to-llvm),convert-cf-to-llvm,"
        "finalize-memref-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)"
    )
    lower.run(module.operation)
    print(module)
    print("llvm funcs:", [op.name for op in module.body.operations],
          [op.attributes["sym_name"] for op in module.body.operations])

    # errors
    try:
        PassManager.parse("builtin.module(no-such-pass)")
    except ValueError as e:
        print("parse error:", e)
    try:
        pm2 = PassManager("builtin.module")
        pm2.add("func.func(not-a-pass)")
    except ValueError as e:
        print("add error:", e)
    # A pass that fails: the transform interpreter finds no entry point.
    bad = Module.parse("""
      func.func @f(%x: i32) -> i64 {
        %0 = builtin.unrealized_conversion_cast %x : i32 to i64
        return %0 : i64
      }""")
    try:
        PassManager.parse("builtin.module(transform-interpreter)").run(bad.operation)
        print("unexpectedly converted:", bad)
    except MLIRError as e:
        print("pass failure:", type(e).__name__)
        print(e)
        for d in e.error_diagnostics:
            print("  diag:", d.severity, d.location, d.message)

    # Run a nested pipeline on a single function with the anchor op name.
    m2 = Module.parse(SRC)
    fpm = PassManager("func.func")
    fpm.add("canonicalize")
    fn = m2.body.operations[1]
    fpm.run(fn.operation)
    print(fn)
    pm3 = PassManager()
    pm3.add("symbol-dce")
    print("pm3:", pm3)
    m3 = Module.parse("func.func private @dead() { return }\nfunc.func @live() { return }")
    pm3.run(m3.operation)
    print(m3)
