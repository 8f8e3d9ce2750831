"""tether.dialects.transform.loop: the `loop_transform` extension's transform operations (generated
from MLIR's ODS), with upstream's builders of LoopOutlineOp, LoopPeelOp, LoopPipelineOp and
LoopUnrollOp (their keyword names, defaults, and targets given as operations or values)."""

from .._loop_transform_ops_gen import *  # noqa: F401,F403
from .._loop_transform_ops_gen import _Dialect
from .. import _loop_transform_ops_gen as _gen
from .._ods_common import _cext as _ods_cext
from .._ods_common import get_op_result_or_value as _value
from ...ir import *  # noqa: F401,F403  (as upstream's module)
from ...ir import BoolAttr, StringAttr


def _bool_attr(value):
    return value if isinstance(value, BoolAttr) else BoolAttr.get(value)


@_ods_cext.register_operation(_Dialect, replace=True)
class LoopOutlineOp(_gen.LoopOutlineOp):
    """LoopOutlineOp(function_type, call_type, target, *, func_name)."""
    __slots__ = ()

    def __init__(self, function_type, call_type, target, *, func_name, ip=None, loc=None):
        if not isinstance(func_name, StringAttr):
            func_name = StringAttr.get(func_name)
        super().__init__(function_type, call_type, _value(target), func_name=func_name, ip=ip,
                         loc=loc)


@_ods_cext.register_operation(_Dialect, replace=True)
class LoopPeelOp(_gen.LoopPeelOp):
    """LoopPeelOp(main_loop_type, remainder_loop_type, target, *, peel_front=False,
    fail_if_already_divisible=False)."""
    __slots__ = ()

    def __init__(self, main_loop_type, remainder_loop_type, target, *, peel_front=False,
                 fail_if_already_divisible=False, ip=None, loc=None):
        super().__init__(main_loop_type, remainder_loop_type, _value(target),
                         peel_front=_bool_attr(peel_front),
                         fail_if_already_divisible=_bool_attr(fail_if_already_divisible),
                         ip=ip, loc=loc)


@_ods_cext.register_operation(_Dialect, replace=True)
class LoopPipelineOp(_gen.LoopPipelineOp):
    """LoopPipelineOp(result_type, target, *, iteration_interval=1, read_latency=10)."""
    __slots__ = ()

    def __init__(self, result_type, target, *, iteration_interval=None, read_latency=None,
                 ip=None, loc=None):
        super().__init__(result_type, _value(target),
                         iteration_interval=1 if iteration_interval is None else iteration_interval,
                         read_latency=10 if read_latency is None else read_latency, ip=ip, loc=loc)


@_ods_cext.register_operation(_Dialect, replace=True)
class LoopUnrollOp(_gen.LoopUnrollOp):
    """LoopUnrollOp(target, *, factor)."""
    __slots__ = ()

    def __init__(self, target, *, factor, ip=None, loc=None):
        super().__init__(_value(target), factor=factor, ip=ip, loc=loc)
