"""tether.execution_engine: MLIR's JIT over a lowered module (the engine keeps what it needs)."""

import ctypes
import gc

import pytest

import tether
from tether import ir
from tether.execution_engine import ExecutionEngine
from tether.passmanager import PassManager

ADD = r"""
func.func @add(%a: f32, %b: f32) -> f32 attributes { llvm.emit_c_interface } {
  %s = arith.addf %a, %b : f32
  return %s : f32
}"""

# convert-arith-to-llvm: MLIR 22's func-to-llvm no longer lowers arith on the way.
LOWER = ("builtin.module(convert-complex-to-llvm,finalize-memref-to-llvm,convert-arith-to-llvm,"
         "convert-func-to-llvm,reconcile-unrealized-casts)")


def _engine(context=None):
    module = ir.Module.parse(ADD, context)
    PassManager.parse(LOWER, context).run(module.operation)
    return ExecutionEngine(module, opt_level=2)


def test_invoke_after_the_module_and_context_are_dropped():
    engine = _engine(ir.Context())  # its module and context exist only through the engine now
    gc.collect()
    tether.collect()
    f = ctypes.c_float * 1
    a, b, r = f(40.5), f(1.5), f(0.0)
    engine.invoke("add", a, b, r)
    assert r[0] == 42.0
    assert engine.raw_lookup("_mlir_ciface_add") != 0
    assert engine.raw_lookup("no_such_function") == 0
    with pytest.raises(RuntimeError, match="Unknown function"):
        engine.lookup("no_such_function")


def test_a_module_that_does_not_translate_is_an_error():
    with ir.Context():
        module = ir.Module.parse(ADD)   # not lowered: func and arith do not translate
        with pytest.raises(RuntimeError, match="Failure while creating the ExecutionEngine"):
            ExecutionEngine(module)
        with pytest.raises(TypeError):
            ExecutionEngine(module.body.operations[0])   # not a module


def test_released_engine_and_capsule():
    with ir.Context():
        engine = _engine()
        assert ExecutionEngine._CAPICreate(engine._CAPIPtr) is engine
        engine._testing_release()
        with pytest.raises(RuntimeError, match="released"):
            engine.raw_lookup("_mlir_ciface_add")
