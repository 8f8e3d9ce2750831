"""tether.dialects.scf: ForOp (with `induction_variable`, `inner_iter_args`), IfOp
(`then_block`, `else_block`), and the `for_` generator; on MLIR 22 also upstream 22's ForallOp,
InParallelOp, IndexSwitchOp and `index_switch` (and IfOp's keyword is `has_else`, MLIR 19's
`hasElse`)."""

from typing import Optional, Sequence, Union

from .._mlir_version import MLIR_VERSION as _MLIR_VERSION

from ._scf_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._scf_ops_gen import _Dialect
from ._scf_ops_gen import ForOp as _GeneratedForOp
from ._scf_ops_gen import IfOp as _GeneratedIfOp
from ._ods_common import _cext as _ods_cext
from ._ods_common import get_op_result_or_op_results as _get_op_result_or_op_results
from ._ods_common import get_op_result_or_value as _get_op_result_or_value
from ._ods_common import get_op_results_or_values as _get_op_results_or_values
from .arith import constant
from ..ir import (DenseI64ArrayAttr, IndexType, InsertionPoint, Operation, OpView, ShapedType,
                  Value)


@_ods_cext.register_operation(_Dialect, replace=True)
class ForOp(_GeneratedForOp):
    """`scf.for` from lower bound, upper bound, step and loop-carried values (or an op giving
    them); its body block is created, with the induction variable and the iter_args."""
    __slots__ = ()


    def __init__(self, lower_bound, upper_bound, step,
                 iter_args: Optional[Union[Operation, OpView, Sequence[Value]]] = None, *,
                 loc=None, ip=None):
        if iter_args is None:
            iter_args, results = [], []
        else:
            iter_args = _get_op_results_or_values(iter_args)
            results = [arg.type for arg in iter_args]
        if loc is None and ip is None and type(self) is ForOp:
            # The class's own builder, as super() finds it, without a super object or keywords.
            _GeneratedForOp.__init__(self, results, lower_bound, upper_bound, step, iter_args)
        else:
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
    """`scf.if` on an i1 condition, with result types; `has_else` (MLIR 19: `hasElse`) also makes
    the else block."""
    __slots__ = ()

    def _build(self, cond, results_, has_else, loc, ip):
        super().__init__(list(results_ or []), cond, loc=loc, ip=ip)
        self.regions[0].blocks.append()
        if has_else:
            self.regions[1].blocks.append()

    if _MLIR_VERSION >= 22:
        def __init__(self, cond, results_=None, *, has_else=False, loc=None, ip=None):
            self._build(cond, results_, has_else, loc, ip)
    else:
        def __init__(self, cond, results_=None, *, hasElse=False, loc=None, ip=None):
            self._build(cond, results_, hasElse, loc, ip)

    @property
    def then_block(self):
        return self.regions[0].blocks[0]

    @property
    def else_block(self):
        """The else block (MLIR 22: None when the op has none)."""
        if _MLIR_VERSION >= 22 and len(self.regions[1].blocks) == 0:
            return None
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


if _MLIR_VERSION >= 22:
    def _dispatch_index_op_fold_results(ofrs):
        """(dynamic values, static ints with the dynamic marker where a value is) of a list of
        ints and values (MLIR's dispatchIndexOpFoldResults)."""
        dynamic, static = [], []
        for ofr in ofrs:
            if isinstance(ofr, (Operation, OpView, Value)):
                dynamic.append(_get_op_result_or_value(ofr))
                static.append(ShapedType.get_dynamic_size())
            else:
                static.append(ofr)
        return dynamic, static

    @_ods_cext.register_operation(_Dialect, replace=True)
    class ForallOp(ForallOp):  # noqa: F405
        """`scf.forall` from lower bounds, upper bounds and steps (ints or index values, as many
        each) and shared outputs (or an op giving them); its body block is created, with one
        index induction variable per dimension and the shared outputs."""
        __slots__ = ()

        def __init__(self, lower_bounds, upper_bounds, steps, shared_outs=None, *, mapping=None,
                     loc=None, ip=None):
            if not len(lower_bounds) == len(upper_bounds) == len(steps):
                raise ValueError("Mismatch in length of lower bounds, upper bounds, and steps")
            shared_outs = _get_op_results_or_values([] if shared_outs is None else shared_outs)
            dynamic_lbs, static_lbs = _dispatch_index_op_fold_results(lower_bounds)
            dynamic_ubs, static_ubs = _dispatch_index_op_fold_results(upper_bounds)
            dynamic_steps, static_steps = _dispatch_index_op_fold_results(steps)
            results = [v.type for v in shared_outs]
            super().__init__(results, dynamic_lbs, dynamic_ubs, dynamic_steps, static_lbs,
                             static_ubs, static_steps, shared_outs, mapping=mapping, loc=loc,
                             ip=ip)
            self.regions[0].blocks.append(*[IndexType.get()] * len(static_lbs), *results)

        @property
        def body(self):
            """The body block of the loop."""
            return self.regions[0].blocks[0]

        @property
        def rank(self) -> int:
            """The number of induction variables."""
            return len(self.staticLowerBound)

        @property
        def induction_variables(self):
            return self.body.arguments[:self.rank]

        @property
        def inner_iter_args(self):
            """The shared outputs as the body sees them (the operands are `outputs`)."""
            return self.body.arguments[self.rank:]

        def terminator(self):
            """The body's `scf.forall.in_parallel`, made at the body's end if it has none."""
            ops = self.body.operations
            with InsertionPoint(self.body):
                if len(ops) == 0:
                    return InParallelOp()
                last = ops[len(ops) - 1]
                return last if isinstance(last, InParallelOp) else InParallelOp()

    @_ods_cext.register_operation(_Dialect, replace=True)
    class InParallelOp(InParallelOp):  # noqa: F405
        """`scf.forall.in_parallel`, with its (empty) block."""
        __slots__ = ()

        def __init__(self, loc=None, ip=None):
            super().__init__(loc=loc, ip=ip)
            self.region.blocks.append()

        @property
        def block(self):
            return self.region.blocks[0]

    @_ods_cext.register_operation(_Dialect, replace=True)
    class IndexSwitchOp(IndexSwitchOp):  # noqa: F405
        """`scf.index_switch` on an index value, with one region per case value and a default
        region, each with a block; case_body_builder(op, i, case) and default_body_builder(op)
        fill them."""
        __slots__ = ()

        def __init__(self, results, arg, cases, case_body_builder=None, default_body_builder=None,
                     loc=None, ip=None):
            cases = DenseI64ArrayAttr.get(cases)
            super().__init__(results, arg, cases, num_caseRegions=len(cases), loc=loc, ip=ip)
            for region in self.regions:
                region.blocks.append()
            if default_body_builder is not None:
                with InsertionPoint(self.default_block):
                    default_body_builder(self)
            if case_body_builder is not None:
                for i in range(len(cases)):
                    with InsertionPoint(self.case_block(i)):
                        case_body_builder(self, i, self.cases[i])

        @property
        def default_region(self):
            return self.regions[0]

        @property
        def default_block(self):
            return self.default_region.blocks[0]

        @property
        def case_regions(self):
            return self.regions[1:]

        def case_region(self, i):
            return self.case_regions[i]

        @property
        def case_blocks(self):
            return [region.blocks[0] for region in self.case_regions]

        def case_block(self, i):
            return self.case_regions[i].blocks[0]

    def index_switch(results, arg, cases, case_body_builder=None, default_body_builder=None,
                     loc=None, ip=None):
        """`scf.index_switch` (IndexSwitchOp): its result, its results, or the op."""
        return _get_op_result_or_op_results(IndexSwitchOp(
            results=results, arg=arg, cases=cases, case_body_builder=case_body_builder,
            default_body_builder=default_body_builder, loc=loc, ip=ip))
