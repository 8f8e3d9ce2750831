"""tether.dialects.sparse_tensor: the `sparse_tensor` dialect's operations (generated from MLIR's
ODS), and upstream's `EncodingAttr`, `LevelFormat` and `LevelProperty`."""

from ._sparse_tensor_ops_gen import *  # noqa: F401,F403
from ._sparse_tensor_ops_gen import _Dialect  # noqa: F401
from ._sparse_tensor_enum_gen import *  # noqa: F401,F403
from tether._tether import _sparse_tensor as _cext
from tether.ir import _Enum

# The members (names and values of MLIR's C API, in upstream's order) come from the extension.
LevelFormat = _Enum("LevelFormat", _cext._level_formats, module=__name__)
LevelFormat.__doc__ = "The storage format of a level (without its properties)."
LevelProperty = _Enum("LevelProperty", _cext._level_properties, module=__name__)
LevelProperty.__doc__ = "A non-default property of a level (EncodingAttr.build_level_type)."
_cext._set_enums(LevelFormat, LevelProperty)

EncodingAttr = _cext.EncodingAttr
