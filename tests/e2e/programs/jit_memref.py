# JIT-compiling small kernels with memref arguments and running them on numpy arrays through
# mlir.runtime's memref descriptors (as a numerics library prototype does): scalar results,
# in-place updates, a returned memref, a Python callback registered with the engine, and an
# unranked memref.
import ctypes

import numpy as np
from mlir.ir import *
from mlir.passmanager import PassManager
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import (
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    make_nd_memref_descriptor,
    ranked_memref_to_numpy,
    as_ctype,
)

SRC = """
func.func @saxpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %xi = memref.load %x[%i] : memref<?xf32>
    %yi = memref.load %y[%i] : memref<?xf32>
    %p = arith.mulf %a, %xi : f32
    %s = arith.addf %p, %yi : f32
    memref.store %s, %y[%i] : memref<?xf32>
  }
  return
}
func.func @trace(%m: memref<3x4xi64>) -> i64 attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0 : i64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> i64 {
    %v = memref.load %m[%i, %i] : memref<3x4xi64>
    %a = arith.addi %acc, %v : i64
    scf.yield %a : i64
  }
  return %r : i64
}
func.func @transpose(%m: memref<2x3xf64>) -> memref<3x2xf64> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %out = memref.alloc() : memref<3x2xf64>
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %v = memref.load %m[%i, %j] : memref<2x3xf64>
      memref.store %v, %out[%j, %i] : memref<3x2xf64>
    }
  }
  return %out : memref<3x2xf64>
}
func.func private @py_callback(i32) -> i32 attributes {llvm.emit_c_interface}
func.func @call_back(%x: i32) -> i32 attributes {llvm.emit_c_interface} {
  %r = call @py_callback(%x) : (i32) -> i32
  %c = arith.constant 1 : i32
  %s = arith.addi %r, %c : i32
  return %s : i32
}
func.func @fill_unranked(%u: memref<*xf32>) attributes {llvm.emit_c_interface} {
  %m = memref.cast %u : memref<*xf32> to memref<2x2xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant 9.5 : f32
  memref.store %v, %m[%c1, %c0] : memref<2x2xf32>
  return
}
"""

PIPELINE = (
    "builtin.module(convert-scf-to-cf,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)"
)

with Context():
    module = Module.parse(SRC)
    PassManager.parse(PIPELINE).run(module.operation)
    engine = ExecutionEngine(module, opt_level=2)
    # callbacks are registered before the first lookup materializes the module
    calls = []

    @ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)
    def py_callback(v):
        calls.append(v)
        return v * 10

    engine.register_runtime("py_callback", py_callback)

    # saxpy: in place on y
    x = np.arange(5, dtype=np.float32)
    y = np.ones(5, dtype=np.float32)
    a = ctypes.c_float(2.0)
    xd = ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x)))
    yd = ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(y)))
    engine.invoke("saxpy", ctypes.pointer(a), xd, yd)
    print("saxpy:", y.tolist())

    # trace: scalar result
    m = np.arange(12, dtype=np.int64).reshape(3, 4)
    res = ctypes.c_int64(-1)
    md = ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(m)))
    engine.invoke("trace", md, ctypes.pointer(res))
    print("trace:", res.value, "expected", int(np.trace(m[:, :3])))

    # transpose: a returned memref
    src = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float64)
    out_desc = make_nd_memref_descriptor(2, as_ctype(np.float64))()
    engine.invoke("transpose", ctypes.pointer(ctypes.pointer(out_desc)),
                  ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(src))))
    out = ranked_memref_to_numpy(ctypes.pointer(out_desc))
    print("transpose:", out.shape, out.tolist(), bool((out == src.T).all()))
    print("descriptor shape/strides:", list(out_desc.shape), list(out_desc.strides))

    # a Python callback
    r = ctypes.c_int32(0)
    engine.invoke("call_back", ctypes.pointer(ctypes.c_int32(4)), ctypes.pointer(r))
    print("callback:", r.value, calls)

    # unranked memref
    u = np.zeros((2, 2), dtype=np.float32)
    ud = ctypes.pointer(ctypes.pointer(get_unranked_memref_descriptor(u)))
    engine.invoke("fill_unranked", ud)
    print("unranked:", u.tolist())

    # lookup of a symbol that does not exist
    try:
        engine.invoke("nope")
    except RuntimeError as e:
        print("invoke missing:", e)
    print("lookup is nonzero:", engine.lookup("saxpy") != 0, engine.raw_lookup("_mlir_ciface_saxpy") != 0)
