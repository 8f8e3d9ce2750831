"""tether.dialects.quant: the quant dialect has no operations in Python; its types
(`UniformQuantizedType` and friends) are not supported yet."""
