"""tether.dialects.transform.structured: the Linalg structured transform ops (generated from
MLIR's ODS) and builders with upstream's signatures for MatchOp (`match_op_names`) and the
single-handle ops (DecomposeOp, GeneralizeOp, ScalarizeOp, InterchangeOp), tiling
(TileUsingForOp, TileUsingForallOp: sizes as ints, values, scalable [x] lists, or a packed
handle) and vectorizing (VectorizeOp, VectorizeChildrenAndApplyPatternsOp). The other builders
upstream writes by hand for padding, splitting, multi-tile sizes, fusion, copies to threads and
bufferize-to-allocation too; on MLIR 22 also FuseOp, and 22's signatures (PadOp's `nofold_flags`,
VectorizeChildrenAndApplyPatternsOp's `flatten_1d_depthwise_conv` and
`fold_type_extensions_into_contract`)."""

from typing import Optional, Sequence, Union

from ..._mlir_version import MLIR_VERSION as _MLIR_VERSION

from .._structured_transform_ops_gen import *  # noqa: F401,F403
from .._structured_transform_ops_gen import _Dialect
from .._structured_transform_ops_gen import DecomposeOp as _DecomposeOp
from .._structured_transform_ops_gen import GeneralizeOp as _GeneralizeOp
from .._structured_transform_ops_gen import InterchangeOp as _InterchangeOp
from .._structured_transform_ops_gen import MatchOp as _MatchOp
from .._structured_transform_ops_gen import ScalarizeOp as _ScalarizeOp
from .._structured_transform_ops_gen import TileUsingForOp as _TileUsingForOp
from .._structured_transform_ops_gen import TileUsingForallOp as _TileUsingForallOp
from .._structured_transform_ops_gen import VectorizeOp as _VectorizeOp
from .._structured_transform_ops_gen import (
    VectorizeChildrenAndApplyPatternsOp as _VectorizeChildrenAndApplyPatternsOp)
from .._structured_transform_enum_gen import *  # noqa: F401,F403
from ...ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from .._ods_common import _cext as _ods_cext
from .._ods_common import get_op_result_or_value as _value
from .._ods_common import _dispatch_dynamic_index_list, _dispatch_mixed_values
from .._ods_common import _get_int_array_array_attr
from .. import _structured_transform_ops_gen as _gen
from ...ir import ArrayAttr, Attribute, Operation, OpView, ShapedType, StringAttr, Type, Value
from tether._tether import _transform as _types


def _any_op():
    return _types.AnyOpType.get()


@_ods_cext.register_operation(_Dialect, replace=True)
class MatchOp(_MatchOp):
    __slots__ = ()

    @classmethod
    def match_op_names(cls, result_type_or_target: Union[Type, Operation, Value],
                       target_or_names, names_or_none=None, *, loc=None, ip=None):
        """MatchOp([result_type,] target, names): payload ops named `names` (a str or a list)."""
        if isinstance(result_type_or_target, Type):
            result_type, target, names = result_type_or_target, target_or_names, names_or_none
        else:
            result_type, target, names = _any_op(), result_type_or_target, target_or_names
        if isinstance(names, str):
            names = [names]
        return cls(result_type, _value(target),
                   ops=ArrayAttr.get([StringAttr.get(n) for n in names]), loc=loc, ip=ip)


def _single_handle(generated):
    @_ods_cext.register_operation(_Dialect, replace=True)
    class Op(generated):
        __slots__ = ()

        def __init__(self, target: Union[Operation, Value], *, loc=None, ip=None):
            super().__init__(_any_op(), _value(target), loc=loc, ip=ip)

    Op.__name__ = Op.__qualname__ = generated.__name__
    return Op


DecomposeOp = _single_handle(_DecomposeOp)
GeneralizeOp = _single_handle(_GeneralizeOp)
ScalarizeOp = _single_handle(_ScalarizeOp)


@_ods_cext.register_operation(_Dialect, replace=True)
class InterchangeOp(_InterchangeOp):
    __slots__ = ()

    def __init__(self, target: Union[Operation, Value], *,
                 iterator_interchange: Optional[Sequence[int]] = None, loc=None, ip=None):
        super().__init__(_any_op(), _value(target), iterator_interchange=iterator_interchange,
                         loc=loc, ip=ip)


def _loops_and_target(op_name, loop_types_or_target, target_or_none, num_loops):
    """(loop_types, target value) of the builders taking `(loop_types, target)` or `(target)`:
    one loop type for every loop, `!transform.any_op` when none is given."""
    if isinstance(loop_types_or_target, (Operation, OpView, Value)):
        if target_or_none is not None:
            raise ValueError(f"Cannot construct {op_name} with two targets.")
        loop_types, target = [_any_op()] * num_loops, loop_types_or_target
    else:
        loop_types = [loop_types_or_target] * num_loops if isinstance(
            loop_types_or_target, Type) else list(loop_types_or_target)
        target = target_or_none
    return loop_types, _value(target)


@_ods_cext.register_operation(_Dialect, replace=True)
class TileUsingForOp(_TileUsingForOp):
    """TileUsingForOp([loop_types,] target, *, sizes, interchange=None): one scf.for per
    non-zero size; loop_types a type (for every loop) or a list."""
    __slots__ = ()

    def __init__(self, loop_types_or_target, target_or_none=None, *, sizes, interchange=None,
                 loc=None, ip=None):
        dynamic, static, scalable = _dispatch_dynamic_index_list(sizes)
        num_loops = sum(1 for v in static if v != 0)
        loop_types, target = _loops_and_target("TileUsingForOp", loop_types_or_target,
                                               target_or_none, num_loops)
        super().__init__(target.type, loop_types, target, dynamic_sizes=dynamic,
                         static_sizes=static, interchange=interchange, scalable_sizes=scalable,
                         loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class TileUsingForallOp(_TileUsingForallOp):
    """TileUsingForallOp([loops_type, tiled_op_type,] target, *, num_threads=None,
    tile_sizes=None, mapping=None)."""
    __slots__ = ()

    def __init__(self, loops_type_or_target, tiled_op_type_or_none=None, target_or_none=None, *,
                 num_threads=None, tile_sizes=None, mapping=None, loc=None, ip=None):
        if isinstance(loops_type_or_target, Type):
            if not isinstance(tiled_op_type_or_none, Type):
                raise TypeError("If 'loops_type_or_target' is a type, then "
                                "'tiled_op_type_or_none' is expected to be one as well.")
            loops_type, tiled_op_type, target = (loops_type_or_target, tiled_op_type_or_none,
                                                 target_or_none)
        else:
            loops_type, tiled_op_type, target = _any_op(), _any_op(), loops_type_or_target
        dyn_threads, packed_threads, static_threads = _dispatch_mixed_values(num_threads)
        dyn_sizes, packed_sizes, static_sizes = _dispatch_mixed_values(tile_sizes)
        super().__init__(loops_type, tiled_op_type, target=target, tile_sizes=dyn_sizes,
                         packed_tile_sizes=packed_sizes, static_tile_sizes=static_sizes,
                         num_threads=dyn_threads, packed_num_threads=packed_threads,
                         static_num_threads=static_threads, mapping=mapping, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class VectorizeChildrenAndApplyPatternsOp(_VectorizeChildrenAndApplyPatternsOp):
    __slots__ = ()

    if _MLIR_VERSION >= 22:
        def __init__(self, target: Union[Operation, Value], *,
                     disable_multi_reduction_to_contract_patterns: bool = False,
                     disable_transfer_permutation_map_lowering_patterns: bool = False,
                     vectorize_nd_extract: bool = False, vectorize_padding: bool = False,
                     flatten_1d_depthwise_conv: bool = False,
                     fold_type_extensions_into_contract: bool = False, loc=None, ip=None):
            super().__init__(
                _any_op(), target,
                disable_multi_reduction_to_contract_patterns=(
                    disable_multi_reduction_to_contract_patterns),
                disable_transfer_permutation_map_lowering_patterns=(
                    disable_transfer_permutation_map_lowering_patterns),
                flatten_1d_depthwise_conv=flatten_1d_depthwise_conv,
                vectorize_nd_extract=vectorize_nd_extract, vectorize_padding=vectorize_padding,
                fold_type_extensions_into_contract=fold_type_extensions_into_contract,
                loc=loc, ip=ip)
    else:
        def __init__(self, target: Union[Operation, Value], *,
                     disable_multi_reduction_to_contract_patterns: bool = False,
                     disable_transfer_permutation_map_lowering_patterns: bool = False,
                     vectorize_nd_extract: bool = False, vectorize_padding: bool = False,
                     loc=None, ip=None):
            super().__init__(
                _any_op(), target,
                disable_multi_reduction_to_contract_patterns=(
                    disable_multi_reduction_to_contract_patterns),
                disable_transfer_permutation_map_lowering_patterns=(
                    disable_transfer_permutation_map_lowering_patterns),
                vectorize_nd_extract=vectorize_nd_extract, vectorize_padding=vectorize_padding,
                loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class VectorizeOp(_VectorizeOp):
    """VectorizeOp(target, vector_sizes=None, *, vectorize_nd_extract=None, scalable_sizes=None,
    static_vector_sizes=None): sizes mixed (ints, values, scalable [x] lists)."""
    __slots__ = ()

    def __init__(self, target: Union[Operation, OpView, Value], vector_sizes=None, *,
                 vectorize_nd_extract=None, scalable_sizes=None, static_vector_sizes=None,
                 loc=None, ip=None):
        if scalable_sizes is None and static_vector_sizes is None and vector_sizes is None:
            dynamic = []
        elif scalable_sizes is None and static_vector_sizes is None:
            dynamic, static_vector_sizes, scalable_sizes = _dispatch_dynamic_index_list(
                vector_sizes)
        elif scalable_sizes is None or static_vector_sizes is None:
            raise TypeError("'scalable_sizes' and 'static_vector_sizes' must either both be given "
                            "explicitly or both be given as part of 'vector_sizes'.")
        else:
            dynamic = vector_sizes
        super().__init__(target, vector_sizes=dynamic, static_vector_sizes=static_vector_sizes,
                         scalable_sizes=scalable_sizes, vectorize_nd_extract=vectorize_nd_extract,
                         loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class BufferizeToAllocationOp(_gen.BufferizeToAllocationOp):
    __slots__ = ()

    def __init__(self, target, *, memory_space=None, memcpy_op=None, alloc_op=None,
                 bufferize_destination_only=None, loc=None, ip=None):
        if isinstance(memory_space, int):
            memory_space = str(memory_space)
        if isinstance(memory_space, str):
            memory_space = Attribute.parse(memory_space)
        # MLIR 19's builder takes the two result types (!transform.any_value, any_op); 22's
        # infers them.
        types = [] if _MLIR_VERSION >= 22 else [_types.AnyValueType.get(), _any_op()]
        super().__init__(*types, target, memory_space=memory_space, memcpy_op=memcpy_op,
                         alloc_op=alloc_op, bufferize_destination_only=bufferize_destination_only,
                         loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class FuseIntoContainingOp(_gen.FuseIntoContainingOp):
    __slots__ = ()

    def __init__(self, fused_op_type_or_producer_op, new_containing_op_type_or_containing_op,
                 producer_op_or_none=None, containing_op_or_none=None, *, loc=None, ip=None):
        if isinstance(fused_op_type_or_producer_op, Type):
            if not isinstance(new_containing_op_type_or_containing_op, Type):
                raise TypeError("If 'fused_op_type_or_producer_op' is a type, then "
                                "'new_containing_op_type_or_containing_op' is expected to be one "
                                "as well.")
            types = [fused_op_type_or_producer_op, new_containing_op_type_or_containing_op]
            producer, containing = producer_op_or_none, containing_op_or_none
        else:
            types = [_any_op(), _any_op()]
            producer, containing = (fused_op_type_or_producer_op,
                                    new_containing_op_type_or_containing_op)
        super().__init__(*types, producer, containing, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class MapCopyToThreadsOp(_gen.MapCopyToThreadsOp):
    __slots__ = ()

    def __init__(self, forall_op_type_or_target, tiled_op_type_or_none=None, target_or_none=None,
                 *, total_num_threads, desired_bit_alignment, loc=None, ip=None):
        if isinstance(forall_op_type_or_target, Type):
            types = [forall_op_type_or_target, tiled_op_type_or_none]
            target = target_or_none
        else:
            types, target = [_any_op(), _any_op()], forall_op_type_or_target
        super().__init__(*types, target, total_num_threads=total_num_threads,
                         desired_bit_alignment=desired_bit_alignment, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class MultiTileSizesOp(_gen.MultiTileSizesOp):
    __slots__ = ()

    def __init__(self, result_type, target, *, dimension, target_size, divisor=None, loc=None,
                 ip=None):
        super().__init__(result_type, result_type, result_type, target, dimension=dimension,
                         target_size=target_size, divisor=divisor, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class PadOp(_gen.PadOp):
    """PadOp(target, *, pad_to_multiple_of=None, padding_values=None, padding_dimensions=None,
    nofold_flags=None (MLIR 19: pack_paddings), transpose_paddings=None, copy_back_op=None)."""
    __slots__ = ()

    def _build(self, target, pad_to_multiple_of, transpose_paddings, **kw):
        if pad_to_multiple_of is None:
            dynamic, static = [], None
        else:
            dynamic, static, _ = _dispatch_dynamic_index_list(pad_to_multiple_of)
        any_op = _any_op()
        super().__init__(any_op, any_op, any_op, target, pad_to_multiple_of=dynamic,
                         static_pad_to_multiple_of=static,
                         transpose_paddings=_get_int_array_array_attr(transpose_paddings), **kw)

    if _MLIR_VERSION >= 22:
        def __init__(self, target, *, pad_to_multiple_of=None, padding_values=None,
                     padding_dimensions=None, nofold_flags=None, transpose_paddings=None,
                     copy_back_op=None, loc=None, ip=None):
            self._build(target, pad_to_multiple_of, transpose_paddings,
                        padding_values=padding_values, padding_dimensions=padding_dimensions,
                        nofold_flags=nofold_flags, copy_back_op=copy_back_op, loc=loc, ip=ip)
    else:
        def __init__(self, target, *, pad_to_multiple_of=None, padding_values=None,
                     padding_dimensions=None, pack_paddings=None, transpose_paddings=None,
                     copy_back_op=None, loc=None, ip=None):
            self._build(target, pad_to_multiple_of, transpose_paddings,
                        padding_values=padding_values, padding_dimensions=padding_dimensions,
                        pack_paddings=pack_paddings, copy_back_op=copy_back_op, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class SplitOp(_gen.SplitOp):
    __slots__ = ()

    def __init__(self, target, dimension, chunk_sizes, *, loc=None, ip=None):
        if isinstance(chunk_sizes, int):
            static, dynamic = chunk_sizes, None
        else:
            static, dynamic = ShapedType.get_dynamic_size(), chunk_sizes
        target = _value(target)
        # MLIR 19: the two halves' types; 22: one (variadic) list of parts.
        types = [target.type] if _MLIR_VERSION >= 22 else [target.type, target.type]
        super().__init__(*types, target, dimension=dimension, static_chunk_sizes=static,
                         dynamic_chunk_sizes=dynamic, loc=loc, ip=ip)


if _MLIR_VERSION >= 22:
    @_ods_cext.register_operation(_Dialect, replace=True)
    class FuseOp(_gen.FuseOp):
        """FuseOp([loop_types,] target, *, tile_sizes=None, tile_interchange=None,
        apply_cleanup=False, use_forall=False): one loop per non-zero tile size (one scf.forall
        with use_forall); loop_types a type (for every loop) or a list."""
        __slots__ = ()

        def __init__(self, loop_types_or_target, target_or_none=None, *, tile_sizes=None,
                     tile_interchange=None, apply_cleanup=False, use_forall=False, loc=None,
                     ip=None):
            dyn_sizes, static_sizes, _ = _dispatch_dynamic_index_list(tile_sizes or [])
            dyn_interchange, static_interchange, _ = _dispatch_dynamic_index_list(
                tile_interchange or [])
            num_loops = 1 if use_forall else sum(1 for v in static_sizes if v != 0)
            loop_types, target = _loops_and_target("FuseOp", loop_types_or_target,
                                                   target_or_none, num_loops)
            super().__init__(target.type, loop_types, target, tile_sizes=dyn_sizes,
                             tile_interchange=dyn_interchange, static_tile_sizes=static_sizes,
                             static_tile_interchange=static_interchange,
                             apply_cleanup=apply_cleanup, use_forall=use_forall, loc=loc, ip=ip)
