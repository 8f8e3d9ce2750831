"""tether.dialects.transform: the transform dialect's operations and enums (generated from MLIR
19's ODS). Its types (`AnyOpType`, `OperationType`, ...) are not supported yet: parse them
(`ir.Type.parse("!transform.any_op")`)."""

from .._transform_ops_gen import *  # noqa: F401,F403
from .._transform_ops_gen import _Dialect  # noqa: F401
from .._transform_enum_gen import *  # noqa: F401,F403
