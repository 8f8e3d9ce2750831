"""tether.dialects.transform.pdl: the transform dialect's PDL extension (PDLMatchOp,
WithPDLPatternsOp with its body)."""

from typing import Union

from .._transform_pdl_extension_ops_gen import *  # noqa: F401,F403
from ...ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from .._transform_pdl_extension_ops_gen import _Dialect
from .._transform_pdl_extension_ops_gen import PDLMatchOp as _PDLMatchOp
from .._transform_pdl_extension_ops_gen import WithPDLPatternsOp as _WithPDLPatternsOp
from .._ods_common import _cext as _ods_cext
from .._ods_common import get_op_result_or_value as _value
from ...ir import Attribute, Block, Operation, Type, Value


@_ods_cext.register_operation(_Dialect, replace=True)
class PDLMatchOp(_PDLMatchOp):
    __slots__ = ()

    def __init__(self, result_type: Type, target: Union[Operation, Value],
                 pattern_name: Union[Attribute, str], *, loc=None, ip=None):
        super().__init__(result_type, _value(target), pattern_name, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class WithPDLPatternsOp(_WithPDLPatternsOp):
    __slots__ = ()

    def __init__(self, target: Union[Operation, Value, Type], *, loc=None, ip=None):
        root = None if isinstance(target, Type) else _value(target)
        super().__init__(root=root, loc=loc, ip=ip)
        self.regions[0].blocks.append(target if isinstance(target, Type) else root.type)

    @property
    def body(self) -> Block:
        return self.regions[0].blocks[0]

    @property
    def bodyTarget(self) -> Value:
        return self.body.arguments[0]
