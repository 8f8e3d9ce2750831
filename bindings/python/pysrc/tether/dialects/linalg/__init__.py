"""tether.dialects.linalg: the `linalg` dialect.

- The op classes generated from the installed MLIR's ODS (``MatmulOp``, ``GenericOp``, ...) and
  its enums.
- The named ops as OpDSL callables (``linalg.fill``, ``linalg.conv_2d_nhwc_hwcf(...,
  strides=[2, 2])``, ``emit_generic=True`` for the ``linalg.generic`` form; on MLIR 19 also
  ``linalg.matmul(lhs, rhs, outs=[init])``): ``opdsl.ops.core_named_ops``, generated at build time
  from the installed MLIR's own definitions.
- ``fill_builtin_region(op)``, ``transpose``, ``broadcast``, as upstream's.
- On MLIR 22, upstream 22's builders of the ODS ops: ``matmul``, ``batch_matmul``,
  ``batch_reduce_matmul``, ``contract`` (``indexing_maps=``, ``cast=``), ``elementwise``
  (``kind=``), ``pack``, ``unpack``, and the region decorators ``generic``, ``reduce``, ``map``.
- The OpDSL itself: ``tether.dialects.linalg.opdsl.lang`` (docs/python.md).
"""

from ..._mlir_version import MLIR_VERSION as _MLIR_VERSION
from ..._tether import _linalg_fill_builtin_region
from .._linalg_ops_gen import *  # noqa: F401,F403
from .._linalg_ops_gen import _Dialect  # noqa: F401
from .._linalg_enum_gen import *  # noqa: F401,F403
from .._ods_common import get_op_result_or_value as _get_op_result_or_value
from ... import ir as _ir


def fill_builtin_region(op):
    """Builds the body of a named linalg op whose region is empty, as MLIR's own builder of the
    op does (``linalg.matmul``, ``linalg.fill``, ``linalg.transpose``, ...). ValueError for any
    other op, a region that has a body, the wrong number of operands, or operand types MLIR's
    builder cannot handle (where MLIR itself would crash)."""
    _linalg_fill_builtin_region(op)


from .opdsl.ops.core_named_ops import *  # noqa: E402,F401,F403

# As upstream's module: the OpDSL's names come with the named ops (upstream's core_named_ops
# star-imports them), after the generated enums, so `linalg.TypeFn.cast_unsigned` is the OpDSL's
# function that `cast=` takes and `linalg.index` the OpDSL's index; then mlir.ir's names.
from .opdsl.lang import *  # noqa: E402,F401,F403
from .opdsl.lang import TV as _TV  # noqa: E402
from ...ir import *  # noqa: E402,F401,F403

T1 = _TV.T1
T2 = _TV.T2


def _single_init(outs):
    if len(outs) != 1:
        raise ValueError(f"outs={outs!r} must have length 1.")
    return _get_op_result_or_value(outs[0])


def transpose(input, *, outs, permutation):
    """``linalg.transpose`` of ``input`` into ``outs[0]`` (upstream's helper)."""
    input = _get_op_result_or_value(input)
    init = _single_init(outs)
    result_types = [init.type] if isinstance(init.type, _ir.RankedTensorType) else []
    op = TransposeOp(result=result_types, input=input, init=init,  # noqa: F405
                     permutation=permutation)
    fill_builtin_region(op.operation)
    return op


def broadcast(input, *, outs, dimensions):
    """``linalg.broadcast`` of ``input`` into ``outs[0]`` along ``dimensions`` (upstream's)."""
    input = _get_op_result_or_value(input)
    init = _single_init(outs)
    result_types = [init.type] if isinstance(init.type, _ir.RankedTensorType) else []
    op = BroadcastOp(result=result_types, input=input, init=init,  # noqa: F405
                     dimensions=dimensions)
    fill_builtin_region(op.operation)
    return op


if _MLIR_VERSION >= 22:
    from ... import _tether
    from .._linalg_enum_gen import _iteratortypeenum
    from .._ods_common import _dispatch_mixed_values
    from .._ods_common import get_op_result_or_op_results as _get_op_result_or_op_results
    from ...extras.meta import region_op

    # isa_contraction_op, isa_convolution_op, infer_contraction_dimensions[_from_maps],
    # infer_convolution_dimensions, get_indexing_maps, ContractionDimensions,
    # ConvolutionDimensions: the C extension's (upstream's _mlirDialectsLinalg).
    _cext_linalg = getattr(_tether, "_linalg", None)
    if _cext_linalg is not None:
        globals().update({k: v for k, v in vars(_cext_linalg).items() if not k.startswith("_")})

    @register_attribute_builder("IteratorTypeArrayAttr")  # noqa: F405
    def _IteratorTypeArrayAttr(x, context):
        return ArrayAttr.get([_iteratortypeenum(v, context) for v in x])  # noqa: F405

    def _result_types(init):
        return [init.type] if isinstance(init.type, _ir.RankedTensorType) else []

    class GenericOp_(GenericOp):  # noqa: F405
        """linalg.generic whose result types are the outputs' (tensors) and whose body block has
        the operands' element types as arguments (`generic` fills it)."""
        __slots__ = ()

        def __init__(self, inputs, outputs, indexing_maps, iterator_types, *, doc=None,
                     library_call=None, loc=None, ip=None):
            result_types = []
            if isinstance(outputs[0].type, _ir.RankedTensorType):
                result_types = [o.type for o in outputs]
            super().__init__(result_types, inputs, outputs, indexing_maps, iterator_types,
                             doc=doc, library_call=library_call, loc=loc, ip=ip)
            self.regions[0].blocks.append(
                *[v.type.element_type for v in list(inputs) + list(outputs)])

    generic = region_op(GenericOp_, terminator=YieldOp)  # noqa: F405

    def _create_matmul_like_op(op_type, *ins, outs, indexing_maps=None, cast=None):
        ins = [_get_op_result_or_value(i) for i in ins]
        if len(outs) > 1:
            raise ValueError(f"{outs=} must have length 1.")
        init = _get_op_result_or_value(outs[0])
        op = op_type(result_tensors=_result_types(init), inputs=ins, outputs=[init],
                     indexing_maps=indexing_maps, cast=cast)
        fill_builtin_region(op.operation)
        return op

    def matmul(*ins, outs, indexing_maps=None, cast=None):
        """linalg.matmul of ins into outs[0]: its result (tensors), or the op (memrefs)."""
        return _get_op_result_or_op_results(_create_matmul_like_op(
            MatmulOp, *ins, outs=outs, indexing_maps=indexing_maps, cast=cast))  # noqa: F405

    def batch_matmul(*ins, outs, indexing_maps=None, cast=None):
        """linalg.batch_matmul, as `matmul`."""
        return _get_op_result_or_op_results(_create_matmul_like_op(
            BatchMatmulOp, *ins, outs=outs, indexing_maps=indexing_maps,  # noqa: F405
            cast=cast))

    def batch_reduce_matmul(*ins, outs, indexing_maps=None, cast=None):
        """linalg.batch_reduce_matmul, as `matmul`."""
        return _get_op_result_or_op_results(_create_matmul_like_op(
            BatchReduceMatmulOp, *ins, outs=outs, indexing_maps=indexing_maps,  # noqa: F405
            cast=cast))

    def contract(*ins, outs, indexing_maps, cast=None):
        """linalg.contract with the given indexing maps, as `matmul`."""
        return _get_op_result_or_op_results(_create_matmul_like_op(
            ContractOp, *ins, outs=outs, indexing_maps=indexing_maps, cast=cast))  # noqa: F405

    class ElementwiseOp_(ElementwiseOp):  # noqa: F405
        """linalg.elementwise; without indexing_maps, identity maps (the inputs and the output
        of one type)."""
        __slots__ = ()

        def __init__(self, result_tensors, inputs, outputs, kind, *, indexing_maps=None,
                     loc=None, ip=None):
            if indexing_maps is None:
                inputs = [_get_op_result_or_value(i) for i in inputs]
                output = _get_op_result_or_value(outputs[0])
                if any(i.type != output.type for i in inputs):
                    raise ValueError("elementwise without indexing_maps needs inputs and output "
                                     "of one type")
                indexing_maps = [AffineMap.get_identity(output.type.rank)] * (  # noqa: F405
                    len(inputs) + 1)
            super().__init__(result_tensors=result_tensors, inputs=inputs, outputs=outputs,
                             kind=kind, indexing_maps=indexing_maps, loc=loc, ip=ip)

    ElementwiseOp = ElementwiseOp_

    def elementwise(*ins, outs, kind, indexing_maps=None):
        """linalg.elementwise of `kind` (ElementwiseKind) on ins into outs[0]: its result
        (tensors), or the op (memrefs)."""
        ins = [_get_op_result_or_value(i) for i in ins]
        if len(outs) != 1:
            raise ValueError(f"{outs=} must have length 1.")
        init = _get_op_result_or_value(outs[0])
        op = ElementwiseOp(result_tensors=_result_types(init), inputs=ins, outputs=[init],
                           kind=kind, indexing_maps=indexing_maps)
        fill_builtin_region(op.operation)
        return _get_op_result_or_op_results(op)

    def pack(source, dest, inner_dims_pos, inner_tiles, *, padding_value=None,
             outer_dims_perm=None, loc=None, ip=None):
        """The result of linalg.pack; inner_tiles mixes ints and values."""
        dynamic_tiles, _, static_tiles = _dispatch_mixed_values(inner_tiles)
        return _get_op_result_or_op_results(PackOp(  # noqa: F405
            source=source, dest=dest, inner_dims_pos=inner_dims_pos, inner_tiles=dynamic_tiles,
            static_inner_tiles=static_tiles, padding_value=padding_value,
            outer_dims_perm=outer_dims_perm, loc=loc, ip=ip))

    def unpack(source, dest, inner_dims_pos, inner_tiles, *, outer_dims_perm=None, loc=None,
               ip=None):
        """The result of linalg.unpack; inner_tiles mixes ints and values."""
        dynamic_tiles, _, static_tiles = _dispatch_mixed_values(inner_tiles)
        return _get_op_result_or_op_results(UnPackOp(  # noqa: F405
            source=source, dest=dest, inner_dims_pos=inner_dims_pos, inner_tiles=dynamic_tiles,
            static_inner_tiles=static_tiles, outer_dims_perm=outer_dims_perm, loc=loc, ip=ip))

    reduce = region_op(ReduceOp, terminator=YieldOp)  # noqa: F405
    map = region_op(MapOp, terminator=YieldOp)  # noqa: F405
