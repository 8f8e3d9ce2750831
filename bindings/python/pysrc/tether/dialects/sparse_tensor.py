"""tether.dialects.sparse_tensor: the `sparse_tensor` dialect's operations (generated from MLIR's
ODS), and upstream's `EncodingAttr`, `LevelFormat` and `LevelProperty`."""

from ._sparse_tensor_ops_gen import *  # noqa: F401,F403
from ._sparse_tensor_ops_gen import _Dialect  # noqa: F401
from ._sparse_tensor_enum_gen import *  # noqa: F401,F403
from tether._tether import _sparse_tensor as _cext
import enum as _enum

from tether._mlir_version import MLIR_VERSION as _MLIR_VERSION
from tether.ir import _Enum

# The members (names and values of MLIR's C API, in upstream's order) come from the extension.
if _MLIR_VERSION >= 22:
    # Upstream 22's LevelFormat is an IntFlag that prints as its value (a nanobind flag enum).
    LevelFormat = _enum.IntFlag("LevelFormat", _cext._level_formats, module=__name__)
    LevelFormat.__repr__ = LevelFormat.__str__ = int.__repr__
else:
    LevelFormat = _Enum("LevelFormat", _cext._level_formats, module=__name__)
LevelFormat.__doc__ = "The storage format of a level (without its properties)."
LevelProperty = _Enum("LevelProperty", _cext._level_properties, module=__name__)
LevelProperty.__doc__ = "A non-default property of a level (EncodingAttr.build_level_type)."
_cext._set_enums(LevelFormat, LevelProperty)

EncodingAttr = _cext.EncodingAttr
