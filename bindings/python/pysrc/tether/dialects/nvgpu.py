"""tether.dialects.nvgpu: the `nvgpu` dialect's operations (generated from MLIR's ODS)."""

from ._nvgpu_ops_gen import *  # noqa: F401,F403
from ._nvgpu_ops_gen import _Dialect  # noqa: F401
from ._nvgpu_enum_gen import *  # noqa: F401,F403
from tether._tether import _nvgpu as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith('_')})


def _get_as(cls, getter):
    # As upstream's `get`, an instance of the class: these types have no caster (upstream's
    # have none either), so the C getter alone gives a plain Type.
    def get(*args, **kwargs):
        return cls(getter(*args, **kwargs))

    get.__doc__ = getter.__doc__
    return staticmethod(get)


_types.TensorMapDescriptorType.get = _get_as(_types.TensorMapDescriptorType,
                                              _types.TensorMapDescriptorType.get)
