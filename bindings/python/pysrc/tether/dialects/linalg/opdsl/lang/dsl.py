"""``@linalg_structured_op``: defines a structured op from a Python function whose parameters
are its operands, and gives a callable that emits it.

    @linalg_structured_op
    def matmul(A=TensorDef(T1, S.M, S.K), B=TensorDef(T2, S.K, S.N),
               C=TensorDef(U, S.M, S.N, output=True),
               cast=TypeFnAttrDef(default=TypeFn.cast_signed)):
        domain(D.m, D.n, D.k)
        C[D.m, D.n] += cast(U, A[D.m, D.k]) * cast(U, B[D.k, D.n])

    matmul(lhs, rhs, outs=[init])                      # linalg.matmul, when MLIR has it
    matmul(lhs, rhs, outs=[init], emit_generic=True)   # linalg.generic
"""

import contextlib
import functools
import inspect
import threading

from ..... import ir
from ....._mlir_version import MLIR_VERSION as _MLIR_VERSION
from .comprehension import (BinaryFnAttrDef, IndexAttrDef, LinalgOpDef, OpDefinitionDef,
                            OpInterfaceDef, ScalarDef, TensorDef, TernaryFnAttrDef,
                            TypeFnAttrDef, UnaryFnAttrDef)
from .config import LinalgOpConfig
from .emitter import emit_generic_structured_op, emit_named_structured_op

__all__ = ["linalg_structured_op", "DefinedOpCallable", "domain", "implements", "defines",
           "bind_op_def", "current_op_def"]
if _MLIR_VERSION >= 22:
    __all__.append("ir")  # upstream 22's programs use `ir.` from `opdsl.lang import *`

_CONTEXT = threading.local()
_OPERAND_CLASSES = (TensorDef, ScalarDef, IndexAttrDef, UnaryFnAttrDef, BinaryFnAttrDef,
                    TernaryFnAttrDef, TypeFnAttrDef)


@contextlib.contextmanager
def bind_op_def(op_def):
    """Makes ``op_def`` the op being defined on this thread (not re-entrant)."""
    if getattr(_CONTEXT, "current_op_def", None) is not None:
        raise ValueError("Cannot recursively define an operation")
    _CONTEXT.current_op_def = op_def
    try:
        yield op_def
    finally:
        _CONTEXT.current_op_def = None


def current_op_def():
    op_def = getattr(_CONTEXT, "current_op_def", None)
    if op_def is None:
        raise ValueError("Attempt to access the current op definition being defined but none is "
                         "set. Did you mean to call this in an op definition?")
    return op_def


class DefinedOpCallable:
    """An op defined with the DSL: calling it emits the op at the current insertion point."""

    def __init__(self, op_name, op_def):
        self.op_name = op_name
        self.op_def = op_def

    def _config(self, ctx):
        # Configured per call, in the caller's context (a cache would keep contexts alive).
        configs = LinalgOpConfig.from_linalg_op_def(self.op_def, context=ctx)
        if len(configs) != 1:
            raise NotImplementedError(f"Emission of composite linalg ops not supported: "
                                      f"{configs}")
        return configs[0]

    def __call__(self, *ins, outs, **kwargs):
        """Emits the op on ``ins`` into ``outs`` (values, ops or an op's results).

        Keyword arguments set the op's index and function attributes; ``emit_generic=True``
        emits ``linalg.generic`` even when MLIR has a named op of this name (which is emitted
        otherwise)."""
        emit_generic = kwargs.pop("emit_generic", False)
        if not isinstance(emit_generic, bool):
            raise ValueError(f"The named argument 'emit_generic' needs to be  of type bool but "
                             f"got {type(emit_generic)}")
        ctx = ir.Context.current
        if ctx is None:
            raise RuntimeError("An MLIR function requires a Context but none was provided in the "
                               "call or from the surrounding environment. Either pass to the "
                               "function with a 'context=' argument or establish a default "
                               "using 'with Context():'")
        config = self._config(ctx)
        if config.structured_op is None:
            raise NotImplementedError(f"Emission of linalg op type not supported: {config}")
        if not emit_generic and not ctx.is_registered_operation("linalg." + self.op_name):
            emit_generic = True
        if emit_generic:
            return emit_generic_structured_op(config.structured_op, *ins, outs=outs, **kwargs)
        return emit_named_structured_op(config.structured_op, self.op_name,
                                        self.op_def.metadata.cpp_class_name, *ins, outs=outs,
                                        **kwargs)

    def __repr__(self):
        return f"<linalg structured op '{self.op_name}'>"


def linalg_structured_op(dsl_func=None, *, op_name=None, op_class_name=None):
    """Decorator: the DefinedOpCallable of the op ``dsl_func`` defines (named after the
    function unless ``op_name`` is given; C++ class ``op_class_name``, by default the name in
    CamelCase + ``Op``)."""
    if dsl_func is None:
        return functools.partial(linalg_structured_op, op_name=op_name,
                                 op_class_name=op_class_name)
    if op_name is None:
        op_name = dsl_func.__name__
    if op_class_name is None:
        op_class_name = "".join(x.title() for x in op_name.split("_")) + "Op"
    op_def = LinalgOpDef(name=op_name, cpp_class_name=op_class_name,
                         doc=inspect.getdoc(dsl_func))
    args = []
    for name, param in inspect.signature(dsl_func).parameters.items():
        default = param.default
        if not isinstance(default, _OPERAND_CLASSES):
            raise ValueError(f"@linalg_structured_op function parameters must be defaulted as "
                             f"TensorDef(...), ScalarDef(...), or IndexAttrDef(...): Found "
                             f"{name}: {default}")
        op_def.add_operand(name, default.operand_def)
        args.append(default)
    with bind_op_def(op_def):
        dsl_func(*args)
    return DefinedOpCallable(op_name, op_def)


def domain(*dimensions):
    """The iteration domain's dims, in order (by name when not given)."""
    from .affine import DimDef
    if any(not isinstance(d, DimDef) for d in dimensions):
        raise ValueError(f"Expected dimensions of type DimDef but got {dimensions}")
    current_op_def().domain.extend(dimensions)


def implements(*interfaces):
    if any(not isinstance(i, OpInterfaceDef) for i in interfaces):
        raise ValueError(f"Expected interfaces of type OpInterfaceDef but got {interfaces}")
    current_op_def().metadata.implements.extend(interfaces)


def defines(*definitions):
    if any(not isinstance(d, OpDefinitionDef) for d in definitions):
        raise ValueError(f"Expected definitions of type OpDefinitionDef but got {definitions}")
    current_op_def().metadata.defines.extend(definitions)
