"""Type shortcuts (upstream's `mlir.extras.types`): `T.i32()`, `T.tensor(2, 3, T.f32())`, ...

Each is a function of the current context (or `context=`)."""

from functools import partial

from .. import ir as _ir
from .._mlir_version import MLIR_VERSION as _MLIR_VERSION
from ..ir import (BF16Type, ComplexType, F16Type, F32Type, F64Type, Float8E4M3B11FNUZType,
                  Float8E4M3FNType, Float8E4M3Type, Float8E5M2Type, FunctionType, IndexType, IntegerType,
                  MemRefType, NoneType, OpaqueType, RankedTensorType, ShapedType, StridedLayoutAttr,
                  StringAttr, TupleType, Type, UnrankedMemRefType, UnrankedTensorType, VectorType)

index = lambda context=None: IndexType.get(context=context)  # noqa: E731


def i(width, context=None):
    return IntegerType.get_signless(width, context=context)


def si(width, context=None):
    return IntegerType.get_signed(width, context=context)


def ui(width, context=None):
    return IntegerType.get_unsigned(width, context=context)


bool = lambda context=None: IntegerType.get_signless(1, context=context)  # noqa: E731,A001
i8 = lambda context=None: IntegerType.get_signless(8, context=context)  # noqa: E731
i16 = lambda context=None: IntegerType.get_signless(16, context=context)  # noqa: E731
i32 = lambda context=None: IntegerType.get_signless(32, context=context)  # noqa: E731
i64 = lambda context=None: IntegerType.get_signless(64, context=context)  # noqa: E731
si8 = lambda context=None: IntegerType.get_signed(8, context=context)  # noqa: E731
si16 = lambda context=None: IntegerType.get_signed(16, context=context)  # noqa: E731
si32 = lambda context=None: IntegerType.get_signed(32, context=context)  # noqa: E731
si64 = lambda context=None: IntegerType.get_signed(64, context=context)  # noqa: E731
ui8 = lambda context=None: IntegerType.get_unsigned(8, context=context)  # noqa: E731
ui16 = lambda context=None: IntegerType.get_unsigned(16, context=context)  # noqa: E731
ui32 = lambda context=None: IntegerType.get_unsigned(32, context=context)  # noqa: E731
ui64 = lambda context=None: IntegerType.get_unsigned(64, context=context)  # noqa: E731
f16 = lambda context=None: F16Type.get(context=context)  # noqa: E731
f32 = lambda context=None: F32Type.get(context=context)  # noqa: E731
f64 = lambda context=None: F64Type.get(context=context)  # noqa: E731
bf16 = lambda context=None: BF16Type.get(context=context)  # noqa: E731
f8E5M2 = lambda context=None: Float8E5M2Type.get(context=context)  # noqa: E731
f8E4M3 = lambda context=None: Float8E4M3Type.get(context=context)  # noqa: E731
f8E4M3FN = lambda context=None: Float8E4M3FNType.get(context=context)  # noqa: E731
f8E4M3B11FNUZ = lambda context=None: Float8E4M3B11FNUZType.get(context=context)  # noqa: E731
none = lambda context=None: NoneType.get(context=context)  # noqa: E731

if _MLIR_VERSION >= 22:
    # MLIR 22's float types (looked up when called).
    tf32 = lambda context=None: _ir.FloatTF32Type.get(context=context)  # noqa: E731
    f8E3M4 = lambda context=None: _ir.Float8E3M4Type.get(context=context)  # noqa: E731
    f4E2M1FN = lambda context=None: _ir.Float4E2M1FNType.get(context=context)  # noqa: E731
    f6E2M3FN = lambda context=None: _ir.Float6E2M3FNType.get(context=context)  # noqa: E731
    f6E3M2FN = lambda context=None: _ir.Float6E3M2FNType.get(context=context)  # noqa: E731
    f8E8M0FNU = lambda context=None: _ir.Float8E8M0FNUType.get(context=context)  # noqa: E731


def complex(type, context=None):  # noqa: A001
    return ComplexType.get(type)


def opaque(dialect_namespace, type_data, context=None):
    return OpaqueType.get(dialect_namespace, type_data, context=context)


def _shaped(*shape, element_type=None, type_constructor=None):
    if type_constructor is None:
        raise ValueError("shaped is an abstract base class - cannot be constructed.")
    if (element_type is None and shape and not isinstance(shape[-1], Type)) or (
            shape and isinstance(shape[-1], Type) and element_type is not None):
        raise ValueError("Either element_type must be provided explicitly XOR last arg to "
                         "tensor type constructor must be the element type.")
    if element_type is not None:
        type = element_type
        sizes = shape
    else:
        type = shape[-1]
        sizes = shape[:-1]
    if sizes:
        return type_constructor(sizes, type)
    return type_constructor(type)


def vector(*shape, element_type=None, scalable=None, scalable_dims=None):
    ctor = partial(VectorType.get, scalable=scalable, scalable_dims=scalable_dims)
    return _shaped(*shape, element_type=element_type, type_constructor=ctor)


def tensor(*shape, element_type=None, encoding=None):
    # As upstream: `encoding` is a string (it becomes a StringAttr); no sizes means unranked.
    if encoding is not None:
        encoding = StringAttr.get(encoding)
    if not shape or (len(shape) == 1 and isinstance(shape[-1], Type)):
        if encoding is not None:
            raise ValueError("UnrankedTensorType does not support encoding.")
        return _shaped(*shape, element_type=element_type,
                       type_constructor=UnrankedTensorType.get)
    return _shaped(*shape, element_type=element_type,
                   type_constructor=partial(RankedTensorType.get, encoding=encoding))


def memref(*shape, element_type=None, memory_space=None, layout=None):
    if memory_space is not None and isinstance(memory_space, int):
        from ..ir import Attribute
        memory_space = Attribute.parse(str(memory_space))

    def ctor(*args):
        if len(args) == 1:
            return UnrankedMemRefType.get(*args, memory_space=memory_space)
        return MemRefType.get(*args, layout=layout, memory_space=memory_space)

    return _shaped(*shape, element_type=element_type, type_constructor=ctor)


def tuple(*elements):  # noqa: A001
    return TupleType.get_tuple(list(elements))


def function(*, inputs, results):
    return FunctionType.get(inputs, results)


def strided_layout(offset, strides, context=None):
    return StridedLayoutAttr.get(offset, strides, context=context)


dynamic = ShapedType.get_dynamic_size
