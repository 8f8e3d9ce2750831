"""tether.dialects.transform.debug: the transform dialect's debug extension (generated from MLIR's
ODS; MLIR 22), with upstream's builders EmitParamAsRemarkOp / emit_param_as_remark and
EmitRemarkAtOp / emit_remark_at (messages given as str or StringAttr)."""

from .. import _require_mlir

_require_mlir(22, __name__)

from typing import Optional, Union  # noqa: E402

from .._transform_debug_extension_ops_gen import *  # noqa: F401,F403,E402
from .._transform_debug_extension_ops_gen import _Dialect  # noqa: E402
from .. import _transform_debug_extension_ops_gen as _gen  # noqa: E402
from .._ods_common import _cext as _ods_cext  # noqa: E402
from ...ir import Attribute, Operation, StringAttr, Value  # noqa: E402


def _message(message):
    return StringAttr.get(message) if isinstance(message, str) else message


@_ods_cext.register_operation(_Dialect, replace=True)
class EmitParamAsRemarkOp(_gen.EmitParamAsRemarkOp):
    """EmitParamAsRemarkOp(param, *, anchor=None, message=None)."""
    __slots__ = ()

    def __init__(self, param: Attribute, *, anchor: Optional[Operation] = None,
                 message: Optional[Union[StringAttr, str]] = None, loc=None, ip=None):
        super().__init__(param, anchor=anchor, message=_message(message), loc=loc, ip=ip)


def emit_param_as_remark(param, *, anchor=None, message=None, loc=None, ip=None):
    return EmitParamAsRemarkOp(param, anchor=anchor, message=message, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class EmitRemarkAtOp(_gen.EmitRemarkAtOp):
    """EmitRemarkAtOp(at, message=None)."""
    __slots__ = ()

    def __init__(self, at: Union[Operation, Value],
                 message: Optional[Union[StringAttr, str]] = None, *, loc=None, ip=None):
        super().__init__(at, _message(message), loc=loc, ip=ip)


def emit_remark_at(at, message=None, *, loc=None, ip=None):
    return EmitRemarkAtOp(at, message, loc=loc, ip=ip)
