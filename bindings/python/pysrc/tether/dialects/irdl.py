"""tether.dialects.irdl: the `irdl` dialect's operations and enums (generated from MLIR's ODS;
MLIR 22), with upstream's builders of the ops that hold a body (DialectOp, OperationOp, TypeOp,
AttributeOp: `dialect`, `operation_`, `type_`, `attribute`), the VariadicityArrayAttr builder and
`load_dialects(module)`."""

from . import _require_mlir

_require_mlir(22, __name__)

from typing import Sequence, Union  # noqa: E402

from ._irdl_ops_gen import *  # noqa: F401,F403,E402
from ._irdl_ops_gen import _Dialect  # noqa: E402
from ._irdl_enum_gen import *  # noqa: F401,F403,E402
from . import _irdl_ops_gen as _gen  # noqa: E402
from ._ods_common import _cext as _ods_cext  # noqa: E402
from tether import _tether  # noqa: E402
from ..ir import Attribute, Block, register_attribute_builder  # noqa: E402

# load_dialects(module): the C extension's (upstream's _mlirDialectsIRDL).
_cext_irdl = getattr(_tether, "_irdl", None)
if _cext_irdl is not None:
    globals().update({k: v for k, v in vars(_cext_irdl).items() if not k.startswith("_")})


def _with_body(base):
    """An op class of base's whose builder adds the region's one empty block (`.body`)."""

    class Op(base):
        __slots__ = ()
        __doc__ = base.__doc__

        def __init__(self, sym_name: Union[str, Attribute], *, loc=None, ip=None):
            super().__init__(sym_name, loc=loc, ip=ip)
            self.regions[0].blocks.append()

        @property
        def body(self) -> Block:
            return self.regions[0].blocks[0]

    Op.__name__ = Op.__qualname__ = base.__name__
    Op.__module__ = __name__
    return _ods_cext.register_operation(_Dialect, replace=True)(Op)


DialectOp = _with_body(_gen.DialectOp)
OperationOp = _with_body(_gen.OperationOp)
TypeOp = _with_body(_gen.TypeOp)
AttributeOp = _with_body(_gen.AttributeOp)


def dialect(sym_name, *, loc=None, ip=None) -> DialectOp:
    return DialectOp(sym_name=sym_name, loc=loc, ip=ip)


def operation_(sym_name, *, loc=None, ip=None) -> OperationOp:
    return OperationOp(sym_name=sym_name, loc=loc, ip=ip)


def type_(sym_name, *, loc=None, ip=None) -> TypeOp:
    return TypeOp(sym_name=sym_name, loc=loc, ip=ip)


def attribute(sym_name, *, loc=None, ip=None) -> AttributeOp:
    return AttributeOp(sym_name=sym_name, loc=loc, ip=ip)


@register_attribute_builder("VariadicityArrayAttr")
def _variadicity_array_attr(x: Sequence["Variadicity"], context) -> Attribute:
    return Attribute.parse(f"#irdl<variadicity_array [{', '.join(str(v) for v in x)}]>", context)
