"""tether.dialects.builtin: `builtin.module` (ModuleOp with `body`) and the `module` decorator."""

from typing import Dict, Optional

from ._builtin_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._builtin_ops_gen import _Dialect
from ._builtin_ops_gen import ModuleOp as _GeneratedModuleOp
from ._ods_common import _cext as _ods_cext
from ..extras.meta import region_op
from ..ir import Attribute


@_ods_cext.register_operation(_Dialect, replace=True)
class ModuleOp(_GeneratedModuleOp):
    """`builtin.module`, created with its (empty) body block."""
    __slots__ = ()


    def __init__(self, *, loc=None, ip=None):
        super().__init__(loc=loc, ip=ip)
        self.regions[0].blocks.append()

    @property
    def body(self):
        return self.regions[0].blocks[0]


@region_op
def module(*, sym_name=None, sym_visibility=None, attrs: Optional[Dict[str, Attribute]] = None,
           loc=None, ip=None):
    mod = _GeneratedModuleOp(sym_name=sym_name, sym_visibility=sym_visibility, loc=loc, ip=ip)
    for name, attr in (attrs or {}).items():
        mod.operation.attributes[name] = attr
    return mod
