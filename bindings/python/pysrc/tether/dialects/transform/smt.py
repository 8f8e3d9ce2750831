"""tether.dialects.transform.smt: the transform dialect's SMT extension (generated from MLIR's ODS;
MLIR 22), with upstream's ConstrainParamsOp / constrain_params (a body block with one argument
per parameter)."""

from .. import _require_mlir

_require_mlir(22, __name__)

from typing import Sequence  # noqa: E402

from .._transform_smt_extension_ops_gen import *  # noqa: F401,F403,E402
from .._transform_smt_extension_ops_gen import _Dialect  # noqa: E402
from .. import _transform_smt_extension_ops_gen as _gen  # noqa: E402
from .._ods_common import _cext as _ods_cext  # noqa: E402
from ...ir import Block, Type  # noqa: E402


@_ods_cext.register_operation(_Dialect, replace=True)
class ConstrainParamsOp(_gen.ConstrainParamsOp):
    """ConstrainParamsOp(results, params, arg_types): arg_types are the body's argument types,
    one per parameter."""
    __slots__ = ()

    def __init__(self, results: Sequence[Type], params, arg_types: Sequence[Type], loc=None,
                 ip=None):
        if len(params) != len(arg_types):
            raise ValueError(f"{params=} not same length as {arg_types=}")
        super().__init__(results, params, loc=loc, ip=ip)
        self.regions[0].blocks.append(*arg_types)

    @property
    def body(self) -> Block:
        return self.regions[0].blocks[0]


def constrain_params(results, params, arg_types, loc=None, ip=None):
    return ConstrainParamsOp(results, params, arg_types, loc=loc, ip=ip)
