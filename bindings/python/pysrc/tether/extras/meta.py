"""Region-building decorators (upstream's `mlir.extras.meta`)."""

import functools
import inspect

from ..dialects._ods_common import get_op_result_or_op_results
from ..ir import InsertionPoint, Type


def op_region_builder(op, op_region, terminator=None):
    """A decorator that fills op_region from a Python function: block arguments come from the
    function's type annotations (if the region has no block yet), the returned values go to
    `terminator` (a callable taking a list)."""

    def builder_wrapper(body_builder):
        if len(op_region.blocks) == 0:
            params = list(inspect.signature(body_builder).parameters.values())
            types = [p.annotation for p in params]
            if not all(isinstance(t, Type) for t in types):
                raise ValueError(
                    f"every argument of {body_builder.__name__} needs an MLIR Type annotation")
            op_region.blocks.append(*types)
        with InsertionPoint(op_region.blocks[0]):
            results = body_builder(*list(op_region.blocks[0].arguments))
        with InsertionPoint(list(op_region.blocks)[-1]):
            if terminator is not None:
                if isinstance(results, (tuple, list)):
                    terminator(list(results))
                elif results is not None:
                    terminator([results])
                else:
                    terminator([])
        return get_op_result_or_op_results(op)

    return builder_wrapper


def region_op(op_constructor, terminator=None):
    """Turns an op constructor into a decorator building the op's first region from a function
    (also usable without parentheses when the constructor needs no arguments)."""

    def op_decorator(*args, **kwargs):
        op = op_constructor(*args, **kwargs)
        return op_region_builder(op, op.regions[0], terminator)

    @functools.wraps(op_decorator)
    def maybe_no_args(*args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return op_decorator()(args[0])
        return op_decorator(*args, **kwargs)

    return maybe_no_args
