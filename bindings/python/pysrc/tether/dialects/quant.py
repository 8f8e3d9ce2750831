"""tether.dialects.quant: the quant dialect's types, as upstream's `mlir.dialects.quant`
(`QuantizedType` and its subclasses `AnyQuantizedType`, `UniformQuantizedType`,
`UniformQuantizedPerAxisType`, `CalibratedQuantizedType`; defined in C over MLIR's quant C API).
The dialect has no operations in Python."""

from tether._tether import _quant as _cext

QuantizedType = _cext.QuantizedType
AnyQuantizedType = _cext.AnyQuantizedType
UniformQuantizedType = _cext.UniformQuantizedType
UniformQuantizedPerAxisType = _cext.UniformQuantizedPerAxisType
CalibratedQuantizedType = _cext.CalibratedQuantizedType

__all__ = ["QuantizedType", "AnyQuantizedType", "UniformQuantizedType",
           "UniformQuantizedPerAxisType", "CalibratedQuantizedType"]

if hasattr(_cext, "UniformQuantizedSubChannelType"):  # MLIR 22
    UniformQuantizedSubChannelType = _cext.UniformQuantizedSubChannelType
    __all__.append("UniformQuantizedSubChannelType")
