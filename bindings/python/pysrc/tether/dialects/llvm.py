"""tether.dialects.llvm: the `llvm` dialect's operations (generated from MLIR's ODS)."""

from ._llvm_ops_gen import *  # noqa: F401,F403
from ._llvm_ops_gen import _Dialect  # noqa: F401
from ._llvm_enum_gen import *  # noqa: F401,F403
from tether._tether import _llvm as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith('_')})


def _get_as(cls, getter):
    # As upstream's `get`, an instance of the class: these types have no caster (upstream's
    # have none either), so the C getter alone gives a plain Type.
    def get(*args, **kwargs):
        return cls(getter(*args, **kwargs))

    get.__doc__ = getter.__doc__
    return staticmethod(get)


_types.PointerType.get = _get_as(_types.PointerType, _types.PointerType.get)


def mlir_constant(value, *, loc=None, ip=None):
    """llvm.mlir.constant of an attribute, its type the attribute's."""
    from ._ods_common import get_op_result_or_op_results
    return get_op_result_or_op_results(ConstantOp(res=value.type, value=value, loc=loc, ip=ip))
