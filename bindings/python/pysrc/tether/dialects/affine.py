"""tether.dialects.affine: the affine dialect's operations (generated from MLIR's ODS), and
AffineForOp with upstream's signature (bounds as ints, values or affine maps with their operands;
`induction_variable`, `inner_iter_args`) and the `for_` generator; on MLIR 22 also AffineIfOp
(`then_block`, `else_block`). Like upstream's, the module does not import its enum module (the
enums are arith's, which registers them)."""

from typing import Optional, Sequence

from .._mlir_version import MLIR_VERSION as _MLIR_VERSION

from ._affine_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._affine_ops_gen import _Dialect
from ._affine_ops_gen import AffineForOp as _GeneratedAffineForOp
from ._ods_common import _cext as _ods_cext
from ._ods_common import get_op_result_or_value as _value
from ._ods_common import get_op_results_or_values as _values
from ..ir import AffineMap, AffineMapAttr, IndexType, InsertionPoint, Operation, OpView, Value

_RESULT_VALUES = (Operation, OpView, Value)


def _bound(bound, operands, name):
    """(AffineMap, operands) of a bound given as an int, a value or an AffineMap."""
    operands = list(operands or [])
    if isinstance(bound, int):
        bound = AffineMap.get_constant(bound)
    elif isinstance(bound, _RESULT_VALUES):
        if operands:
            raise ValueError(f"Either a concrete {name} bound or an AffineMap in combination "
                             f"with {name} bound operands, but not both, is supported.")
        if isinstance(bound, (OpView, Operation)) and len(bound.results) > 1:
            raise ValueError(f"Only a single concrete value is supported for {name} bound.")
        operands, bound = [_value(bound)], AffineMap.get_identity(1)
    if not isinstance(bound, AffineMap):
        raise ValueError(f"{name} bound must be int | ResultValueT | AffineMap.")
    if len(operands) != bound.n_inputs:
        raise ValueError(f"Wrong number of {name} bound operands passed to AffineForOp; "
                         f"Expected {bound.n_inputs}, got {len(operands)}.")
    return bound, operands


@_ods_cext.register_operation(_Dialect, replace=True)
class AffineForOp(_GeneratedAffineForOp):
    """affine.for from bounds (int, value, or AffineMap with `*_bound_operands`), a step and
    loop-carried values; the body block is created."""
    __slots__ = ()

    def __init__(self, lower_bound, upper_bound, step=None, iter_args=None, *,
                 lower_bound_operands=None, upper_bound_operands=None, loc=None, ip=None):
        lb, lb_ops = _bound(lower_bound, lower_bound_operands, "lower")
        ub, ub_ops = _bound(upper_bound, upper_bound_operands, "upper")
        iter_args = list(_values([] if iter_args is None else iter_args))
        results = [a.type for a in iter_args]
        super().__init__(results_=results, lowerBoundOperands=_values(lb_ops),
                         upperBoundOperands=_values(ub_ops), inits=iter_args,
                         lowerBoundMap=AffineMapAttr.get(lb), upperBoundMap=AffineMapAttr.get(ub),
                         step=1 if step is None else step, loc=loc, ip=ip)
        self.regions[0].blocks.append(IndexType.get(), *results)

    @property
    def body(self):
        return self.regions[0].blocks[0]

    @property
    def induction_variable(self):
        return self.body.arguments[0]

    @property
    def inner_iter_args(self):
        return self.body.arguments[1:]


def for_(start, stop, step=None, iter_args: Optional[Sequence[Value]] = None, *, loc=None,
         ip=None):
    """A generator for affine.for with the body as insertion point: yields the induction
    variable (and the iter_args inside when given)."""
    op = AffineForOp(start, stop, step, iter_args=iter_args, loc=loc, ip=ip)
    iv = op.induction_variable
    inner = tuple(op.inner_iter_args)
    with InsertionPoint(op.body):
        if len(inner) > 1:
            yield iv, inner
        elif len(inner) == 1:
            yield iv, inner[0]
        else:
            yield iv


if _MLIR_VERSION >= 22:
    @_ods_cext.register_operation(_Dialect, replace=True)
    class AffineIfOp(AffineIfOp):  # noqa: F405
        """affine.if on an IntegerSet whose dimensions and symbols `cond_operands` give, with
        result types; `has_else` also makes the else block."""
        __slots__ = ()

        def __init__(self, cond, results_=None, *, cond_operands=None, has_else=False, loc=None,
                     ip=None):
            cond_operands = [] if cond_operands is None else cond_operands
            if cond.n_inputs != len(cond_operands):
                raise ValueError(
                    f"expected {cond.n_inputs} condition operands, got {len(cond_operands)}")
            super().__init__(list(results_ or []), cond_operands, cond, loc=loc, ip=ip)
            self.regions[0].blocks.append()
            if has_else:
                self.regions[1].blocks.append()

        @property
        def then_block(self):
            return self.regions[0].blocks[0]

        @property
        def else_block(self):
            """The else block, or None when the op has none."""
            if len(self.regions[1].blocks) == 0:
                return None
            return self.regions[1].blocks[0]
