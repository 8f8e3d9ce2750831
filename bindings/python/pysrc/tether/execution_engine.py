"""tether.execution_engine: MLIR's JIT (upstream's `mlir.execution_engine`).

    engine = ExecutionEngine(module)          # a module lowered to the LLVM dialect
    engine.invoke("main", ctypes.pointer(arg))

The engine keeps the module (and its context) alive while it exists. Calling into JIT'd code runs
native code the program generated: tether cannot check it (a wrong memref descriptor crashes as
it would in C).
"""

import ctypes

from tether._tether import _ExecutionEngine

__all__ = ["ExecutionEngine"]


class ExecutionEngine(_ExecutionEngine):
    def lookup(self, name):
        """The ctypes callable of a function emitted with `llvm.emit_c_interface`
        (`_mlir_ciface_<name>`'s packed wrapper); RuntimeError if there is none."""
        func = self.raw_lookup("_mlir_ciface_" + name)
        if not func:
            raise RuntimeError("Unknown function " + name)
        return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(func)

    def invoke(self, name, *ctypes_args):
        """Calls a function with ctypes arguments (each a pointer)."""
        func = self.lookup(name)
        packed = (ctypes.c_void_p * len(ctypes_args))()
        for i, arg in enumerate(ctypes_args):
            packed[i] = ctypes.cast(arg, ctypes.c_void_p)
        func(packed)

    def register_runtime(self, name, ctypes_callback):
        """Makes a ctypes callback available to the JIT'd code as `name` (kept alive by the
        engine)."""
        self.raw_register_runtime("_mlir_ciface_" + name,
                                  ctypes.cast(ctypes_callback, ctypes.c_void_p))
        self._callbacks = getattr(self, "_callbacks", []) + [ctypes_callback]
