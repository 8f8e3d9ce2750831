"""tether.dialects.linalg: the `linalg` dialect.

- The op classes generated from MLIR 19's ODS (``MatmulOp``, ``GenericOp``, ...) and its enums.
- The named ops as OpDSL callables (``linalg.matmul(lhs, rhs, outs=[init])``, ``linalg.fill``,
  ``linalg.conv_2d_nhwc_hwcf(..., strides=[2, 2])``, ``emit_generic=True`` for the
  ``linalg.generic`` form): ``opdsl.ops.core_named_ops``, generated at build time from the
  installed MLIR's own definitions.
- ``fill_builtin_region(op)``, ``transpose``, ``broadcast``, as upstream's.
- The OpDSL itself: ``tether.dialects.linalg.opdsl.lang`` (docs/python.md).
"""

from ..._tether import _linalg_fill_builtin_region
from .._linalg_ops_gen import *  # noqa: F401,F403
from .._linalg_ops_gen import _Dialect  # noqa: F401
from .._linalg_enum_gen import *  # noqa: F401,F403
from .._ods_common import get_op_result_or_value as _get_op_result_or_value
from ... import ir as _ir


def fill_builtin_region(op):
    """Builds the body of a named linalg op whose region is empty, as MLIR's own builder of the
    op does (``linalg.matmul``, ``linalg.fill``, ``linalg.transpose``, ...). ValueError for any
    other op, a region that has a body, the wrong number of operands, or operand types MLIR's
    builder cannot handle (where MLIR itself would crash)."""
    _linalg_fill_builtin_region(op)


from .opdsl.ops.core_named_ops import *  # noqa: E402,F401,F403

# As upstream's module: the OpDSL's names come with the named ops (upstream's core_named_ops
# star-imports them), after the generated enums, so `linalg.TypeFn.cast_unsigned` is the OpDSL's
# function that `cast=` takes and `linalg.index` the OpDSL's index; then mlir.ir's names.
from .opdsl.lang import *  # noqa: E402,F401,F403
from .opdsl.lang import TV as _TV  # noqa: E402
from ...ir import *  # noqa: E402,F401,F403

T1 = _TV.T1
T2 = _TV.T2


def _single_init(outs):
    if len(outs) != 1:
        raise ValueError(f"outs={outs!r} must have length 1.")
    return _get_op_result_or_value(outs[0])


def transpose(input, *, outs, permutation):
    """``linalg.transpose`` of ``input`` into ``outs[0]`` (upstream's helper)."""
    input = _get_op_result_or_value(input)
    init = _single_init(outs)
    result_types = [init.type] if isinstance(init.type, _ir.RankedTensorType) else []
    op = TransposeOp(result=result_types, input=input, init=init,  # noqa: F405
                     permutation=permutation)
    fill_builtin_region(op.operation)
    return op


def broadcast(input, *, outs, dimensions):
    """``linalg.broadcast`` of ``input`` into ``outs[0]`` along ``dimensions`` (upstream's)."""
    input = _get_op_result_or_value(input)
    init = _single_init(outs)
    result_types = [init.type] if isinstance(init.type, _ir.RankedTensorType) else []
    op = BroadcastOp(result=result_types, input=input, init=init,  # noqa: F405
                     dimensions=dimensions)
    fill_builtin_region(op.operation)
    return op
