"""tether.dialects.ml_program: the ml_program dialect's operations (generated from MLIR's
ODS), and FuncOp(name, type, visibility=None, body_builder=None) as func.FuncOp's."""

from ._ml_program_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._ml_program_ops_gen import _Dialect
from ._ml_program_ops_gen import FuncOp as _GeneratedFuncOp
from ._ods_common import _cext as _ods_cext
from .func import ARGUMENT_ATTRIBUTE_NAME, RESULT_ATTRIBUTE_NAME, FunctionLike  # noqa: F401


@_ods_cext.register_operation(_Dialect, replace=True)
class FuncOp(FunctionLike, _GeneratedFuncOp):
    """`ml_program.func`: FuncOp(name, type, visibility=None, body_builder=None)."""
    __slots__ = ()
