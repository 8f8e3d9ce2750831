"""The attribute builders generated dialect classes use: ``AttrBuilder.get("I32Attr")(value,
context=ctx)`` turns a Python value into the attribute an op's ODS argument wants. The same kinds
as upstream's ``mlir.ir`` registers, under the same function names (``ir._i32Attr``, ...).
Imported by tether.ir at the end of its definition; the classes are looked up at call time.
"""

import array as _array

from tether import ir as _ir
from tether._mlir_version import MLIR_VERSION as _MLIR_VERSION


def _int_attr(make_type):
    def build(x, context):
        return _ir.IntegerAttr.get(make_type(context), x)
    return build


def _signless(width):
    return _int_attr(lambda c: _ir.IntegerType.get_signless(width, context=c))


def _signed(width):
    return _int_attr(lambda c: _ir.IntegerType.get_signed(width, context=c))


def _unsigned(width):
    return _int_attr(lambda c: _ir.IntegerType.get_unsigned(width, context=c))


def _each(element_builder):
    def build(x, context):
        return _ir.ArrayAttr.get([element_builder(v, context) for v in x], context=context)
    return build


def _affineMapAttr(x, context):
    return _ir.AffineMapAttr.get(x)


def _boolAttr(x, context):
    return _ir.BoolAttr.get(x, context=context)


def _dictAttr(x, context):
    return _ir.DictAttr.get(x, context=context)


_indexAttr = _int_attr(lambda c: _ir.IndexType.get(context=c))
_i1Attr, _i8Attr, _i16Attr, _i32Attr, _i64Attr = (_signless(w) for w in (1, 8, 16, 32, 64))
_si1Attr, _si8Attr, _si16Attr, _si32Attr, _si64Attr = (_signed(w) for w in (1, 8, 16, 32, 64))
_ui1Attr, _ui8Attr, _ui16Attr, _ui32Attr, _ui64Attr = (_unsigned(w) for w in (1, 8, 16, 32, 64))


def _f32Attr(x, context):
    return _ir.FloatAttr.get_f32(x, context=context)


def _f64Attr(x, context):
    return _ir.FloatAttr.get_f64(x, context=context)


def _stringAttr(x, context):
    return _ir.StringAttr.get(x, context=context)


_symbolNameAttr = _stringAttr


def _symbolRefAttr(x, context):
    if isinstance(x, list):
        return _ir.SymbolRefAttr.get(x, context=context)
    return _ir.FlatSymbolRefAttr.get(x, context=context)


def _flatSymbolRefAttr(x, context):
    return _ir.FlatSymbolRefAttr.get(x, context=context)


def _unitAttr(x, context):
    return _ir.UnitAttr.get(context=context) if x else None


def _arrayAttr(x, context):
    return _ir.ArrayAttr.get(x, context=context)


_affineMapArrayAttr = _each(_affineMapAttr)
_boolArrayAttr = _each(_boolAttr)
_dictArrayAttr = _each(_dictAttr)
_flatSymbolRefArrayAttr = _each(_flatSymbolRefAttr)
_i32ArrayAttr = _each(_i32Attr)
_i64ArrayAttr = _each(_i64Attr)
_i64SmallVectorArrayAttr = _i64ArrayAttr
_indexListArrayAttr = _each(_i64ArrayAttr)
_f32ArrayAttr = _each(_f32Attr)
_f64ArrayAttr = _each(_f64Attr)
_strArrayAttr = _each(_stringAttr)
_symbolRefArrayAttr = _each(_symbolRefAttr)


def _dense_array(cls_name):
    def build(x, context):
        return getattr(_ir, cls_name).get(x, context=context)
    return build


_denseF32ArrayAttr = _dense_array("DenseF32ArrayAttr")
_denseF64ArrayAttr = _dense_array("DenseF64ArrayAttr")
_denseI8ArrayAttr = _dense_array("DenseI8ArrayAttr")
_denseI16ArrayAttr = _dense_array("DenseI16ArrayAttr")
_denseI32ArrayAttr = _dense_array("DenseI32ArrayAttr")
_denseI64ArrayAttr = _dense_array("DenseI64ArrayAttr")
_denseBoolArrayAttr = _dense_array("DenseBoolArrayAttr")


def _typeAttr(x, context):
    return _ir.TypeAttr.get(x, context=context)


def _typeArrayAttr(x, context):
    return _arrayAttr([_ir.TypeAttr.get(t, context=context) for t in x], context)


_memref_type_attr = _typeAttr


def _flatten(x):
    """(flat list, shape) of a scalar or nested lists (numpy arrays work through tolist)."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if not isinstance(x, (list, tuple)):
        return [x], []
    if not x:
        return [], [0]
    parts = [_flatten(e) for e in x]
    shape = parts[0][1]
    if any(p[1] != shape for p in parts):
        raise ValueError("elements of different shapes cannot form a dense attribute")
    return [v for p in parts for v in p[0]], [len(x)] + shape


def _elements(typecode, make_type):
    def build(x, context):
        flat, shape = _flatten(x)
        return _ir.DenseElementsAttr.get(_array.array(typecode, flat), type=make_type(context),
                                         shape=shape, context=context)
    return build


_f64ElementsAttr = _elements("d", lambda c: _ir.F64Type.get(context=c))
_i32ElementsAttr = _elements("i", lambda c: _ir.IntegerType.get_signless(32, context=c))
_i64ElementsAttr = _elements("q", lambda c: _ir.IntegerType.get_signless(64, context=c))
_indexElementsAttr = _elements("q", lambda c: _ir.IndexType.get(context=c))

_KINDS = {
    "AffineMapAttr": _affineMapAttr, "BoolAttr": _boolAttr, "DictionaryAttr": _dictAttr,
    "IndexAttr": _indexAttr,
    "I1Attr": _i1Attr, "I8Attr": _i8Attr, "I16Attr": _i16Attr, "I32Attr": _i32Attr,
    "I64Attr": _i64Attr,
    "SI1Attr": _si1Attr, "SI8Attr": _si8Attr, "SI16Attr": _si16Attr, "SI32Attr": _si32Attr,
    "SI64Attr": _si64Attr,
    "UI1Attr": _ui1Attr, "UI8Attr": _ui8Attr, "UI16Attr": _ui16Attr, "UI32Attr": _ui32Attr,
    "UI64Attr": _ui64Attr,
    "F32Attr": _f32Attr, "F64Attr": _f64Attr, "StrAttr": _stringAttr,
    "SymbolNameAttr": _symbolNameAttr, "SymbolRefAttr": _symbolRefAttr,
    "FlatSymbolRefAttr": _flatSymbolRefAttr, "UnitAttr": _unitAttr, "ArrayAttr": _arrayAttr,
    "AffineMapArrayAttr": _affineMapArrayAttr, "BoolArrayAttr": _boolArrayAttr,
    "DictArrayAttr": _dictArrayAttr, "FlatSymbolRefArrayAttr": _flatSymbolRefArrayAttr,
    "I32ArrayAttr": _i32ArrayAttr, "I64ArrayAttr": _i64ArrayAttr,
    "I64SmallVectorArrayAttr": _i64SmallVectorArrayAttr,
    "IndexListArrayAttr": _indexListArrayAttr, "F32ArrayAttr": _f32ArrayAttr,
    "F64ArrayAttr": _f64ArrayAttr, "StrArrayAttr": _strArrayAttr,
    "SymbolRefArrayAttr": _symbolRefArrayAttr,
    "DenseF32ArrayAttr": _denseF32ArrayAttr, "DenseF64ArrayAttr": _denseF64ArrayAttr,
    "DenseI8ArrayAttr": _denseI8ArrayAttr, "DenseI16ArrayAttr": _denseI16ArrayAttr,
    "DenseI32ArrayAttr": _denseI32ArrayAttr, "DenseI64ArrayAttr": _denseI64ArrayAttr,
    "DenseBoolArrayAttr": _denseBoolArrayAttr,
    "TypeAttr": _typeAttr, "TypeArrayAttr": _typeArrayAttr, "MemRefTypeAttr": _memref_type_attr,
    "F64ElementsAttr": _f64ElementsAttr, "I32ElementsAttr": _i32ElementsAttr,
    "I64ElementsAttr": _i64ElementsAttr, "IndexElementsAttr": _indexElementsAttr,
}

if _MLIR_VERSION >= 22:
    def _integerSetAttr(x, context):
        return _ir.IntegerSetAttr.get(x)

    _KINDS["IntegerSetAttr"] = _integerSetAttr

for _kind, _builder in _KINDS.items():
    _ir.AttrBuilder.insert(_kind, _builder)

# Upstream's names (``ir._i32Attr``), exported into tether.ir.
__all__ = [n for n in list(globals())
           if n.startswith("_") and not n.startswith("__") and n.endswith(("Attr", "_attr"))
           and n != "_int_attr"]
