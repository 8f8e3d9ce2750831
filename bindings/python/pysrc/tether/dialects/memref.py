"""tether.dialects.memref: the memref dialect's operations (generated from MLIR's ODS), and
`subview` with upstream's signature: offsets, sizes and strides mixed (ints, values, arith
constants), the result type inferred when they are static (`_infer_memref_subview_result_type`)."""

import operator
from itertools import accumulate
from typing import Optional

from ._memref_ops_gen import *  # noqa: F401,F403
from ._memref_ops_gen import _Dialect  # noqa: F401
from ._memref_ops_gen import subview as _generated_subview
from ._ods_common import _dispatch_mixed_values
from .arith import ConstantOp, _is_integer_like_type
from ..ir import MemRefType, Operation, ShapedType, StridedLayoutAttr, Value


def _defining_view(i):
    owner = i.owner  # MLIR 22: the op's OpView already; 19: an Operation (a Block: an argument)
    return owner.opview if isinstance(owner, Operation) else owner


def _is_constant_int_like(i):
    return (isinstance(i, Value) and isinstance(_defining_view(i), ConstantOp)
            and _is_integer_like_type(i.type))


def _is_static_int_like(i):
    return (isinstance(i, int) and not ShapedType.is_dynamic_size(i)) or _is_constant_int_like(i)


def _infer_memref_subview_result_type(source_memref_type, offsets, static_sizes, static_strides):
    """(offsets, sizes, strides as ints where constant, the subview's MemRefType): the layout is
    the source's strides times the subview's, offset by the offsets; none when that is the
    default row-major layout at offset 0."""
    source_strides, source_offset = source_memref_type.get_strides_and_offset()
    offsets, static_sizes, static_strides, source_strides = map(
        list, (offsets, static_sizes, static_strides, source_strides))
    if not all(all(_is_static_int_like(i) for i in s)
               for s in (static_sizes, static_strides, source_strides)):
        raise ValueError("Only inferring from python or mlir integer constant is supported.")
    for s in (offsets, static_sizes, static_strides):
        for k, i in enumerate(s):
            if _is_constant_int_like(i):
                s[k] = _defining_view(i).literal_value
    if any(not _is_static_int_like(i) for i in offsets + [source_offset]):
        target_offset = ShapedType.get_dynamic_size()
    else:
        target_offset = source_offset + sum(o * st for o, st in zip(offsets, source_strides))
    target_strides = [a * b for a, b in zip(source_strides, static_strides)]
    default = list(accumulate(static_sizes[1:][::-1], operator.mul))[::-1] + [1]
    layout = None if target_strides == default and target_offset == 0 else \
        StridedLayoutAttr.get(target_offset, target_strides)
    return offsets, static_sizes, static_strides, MemRefType.get(
        static_sizes, source_memref_type.element_type, layout, source_memref_type.memory_space)


def subview(source: Value, offsets, sizes, strides, *, result_type: Optional[MemRefType] = None,
            loc=None, ip=None):
    """memref.subview of source; result_type inferred for static offsets/sizes/strides."""
    offsets, sizes, strides = offsets or [], sizes or [], strides or []
    source_strides, _ = source.type.get_strides_and_offset()
    if result_type is None and all(all(_is_static_int_like(i) for i in s)
                                   for s in (sizes, strides, source_strides)):
        offsets, sizes, strides, result_type = _infer_memref_subview_result_type(
            source.type, offsets, sizes, strides)
    elif result_type is None:
        raise ValueError("mixed static/dynamic offset/sizes/strides requires explicit result "
                         "type.")
    offsets, _, static_offsets = _dispatch_mixed_values(offsets)
    sizes, _, static_sizes = _dispatch_mixed_values(sizes)
    strides, _, static_strides = _dispatch_mixed_values(strides)
    return _generated_subview(result_type, source, offsets, sizes, strides, static_offsets,
                              static_sizes, static_strides, loc=loc, ip=ip)
