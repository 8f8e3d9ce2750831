"""tether.dialects.scf: ForOp (with `induction_variable`, `inner_iter_args`), IfOp
(`then_block`, `else_block`), and the `for_` generator."""

from typing import Optional, Sequence, Union

from ._scf_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._scf_ops_gen import _Dialect
from ._scf_ops_gen import ForOp as _GeneratedForOp
from ._scf_ops_gen import IfOp as _GeneratedIfOp
from ._ods_common import _cext as _ods_cext
from ._ods_common import get_op_results_or_values as _get_op_results_or_values
from .arith import constant
from ..ir import IndexType, InsertionPoint, Operation, OpView, Value


@_ods_cext.register_operation(_Dialect, replace=True)
class ForOp(_GeneratedForOp):
    """`scf.for` from lower bound, upper bound, step and loop-carried values (or an op giving
    them); its body block is created, with the induction variable and the iter_args."""
    __slots__ = ()


    def __init__(self, lower_bound, upper_bound, step,
                 iter_args: Optional[Union[Operation, OpView, Sequence[Value]]] = None, *,
                 loc=None, ip=None):
        iter_args = _get_op_results_or_values([] if iter_args is None else iter_args)
        results = [arg.type for arg in iter_args]
        super().__init__(results, lower_bound, upper_bound, step, iter_args, loc=loc, ip=ip)
        self.regions[0].blocks.append(self.operands[0].type, *results)

    @property
    def body(self):
        """The body block of the loop."""
        return self.regions[0].blocks[0]

    @property
    def induction_variable(self):
        return self.body.arguments[0]

    @property
    def inner_iter_args(self):
        """The loop-carried values as the body sees them (the operands are `iter_args`)."""
        return self.body.arguments[1:]


@_ods_cext.register_operation(_Dialect, replace=True)
class IfOp(_GeneratedIfOp):
    """`scf.if` on an i1 condition, with result types; `hasElse` also makes the else block."""
    __slots__ = ()


    def __init__(self, cond, results_=None, *, hasElse=False, loc=None, ip=None):
        super().__init__(list(results_ or []), cond, loc=loc, ip=ip)
        self.regions[0].blocks.append()
        if hasElse:
            self.regions[1].blocks.append()

    @property
    def then_block(self):
        return self.regions[0].blocks[0]

    @property
    def else_block(self):
        return self.regions[1].blocks[0]


def for_(start, stop=None, step=None, iter_args: Optional[Sequence[Value]] = None, *, loc=None,
         ip=None):
    """A generator for `scf.for`: `for i in for_(10): ...` (ints become index constants), with
    the body as insertion point; with iter_args it yields (iv, args, results)."""
    if step is None:
        step = 1
    if stop is None:
        start, stop = 0, start
    bounds = []
    for p in (start, stop, step):
        if isinstance(p, float):
            raise ValueError(f"{p=} must be int.")
        bounds.append(constant(IndexType.get(), p) if isinstance(p, int) else p)
    for_op = ForOp(*bounds, iter_args, loc=loc, ip=ip)
    iv = for_op.induction_variable
    inner = tuple(for_op.inner_iter_args)
    with InsertionPoint(for_op.body):
        if len(inner) > 1:
            yield iv, inner, for_op.results
        elif len(inner) == 1:
            yield iv, inner[0], for_op.results[0]
        else:
            yield iv
