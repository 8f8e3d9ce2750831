"""tether.dialects.transform.xegpu: the XeGPU transform extension (generated from MLIR's ODS;
MLIR 22), with upstream's builders: GetDescOp / get_desc_op, SetDescLayoutOp / set_desc_layout,
SetOpLayoutAttrOp / set_op_layout_attr, SetGPULaunchThreadsOp / set_gpu_launch_threads,
InsertPrefetchOp / insert_prefetch, ConvertLayoutOp / convert_layout (layouts as mixed static
and dynamic index lists)."""

from .. import _require_mlir

_require_mlir(22, __name__)

from .._xegpu_transform_ops_gen import *  # noqa: F401,F403,E402
from .._xegpu_transform_ops_gen import _Dialect  # noqa: E402
from .. import _xegpu_transform_ops_gen as _gen  # noqa: E402
from ...ir import *  # noqa: F401,F403,E402  (as upstream's module, mlir.ir's names)
from ...ir import IntegerAttr, Operation, OpView, Value  # noqa: E402
from .. import transform  # noqa: E402
from .._ods_common import _cext as _ods_cext  # noqa: E402
from .._ods_common import _dispatch_dynamic_index_list  # noqa: E402
from .._ods_common import get_op_result_or_value as _value  # noqa: E402


def _index_lists(*lists):
    """(dynamic values, static ints) of each mixed index list (None: empty)."""
    out = []
    for indices in lists:
        dynamic, static, _ = _dispatch_dynamic_index_list([] if indices is None else indices)
        out.append((dynamic, static))
    return out


@_ods_cext.register_operation(_Dialect, replace=True)
class GetDescOp(_gen.GetDescOp):
    """GetDescOp(target): a !transform.any_op handle."""
    __slots__ = ()

    def __init__(self, target, *, loc=None, ip=None):
        super().__init__(transform.AnyOpType.get(), target, loc=loc, ip=ip)


def get_desc_op(target, *, loc=None, ip=None):
    return GetDescOp(target, loc=loc, ip=ip).result


@_ods_cext.register_operation(_Dialect, replace=True)
class SetDescLayoutOp(_gen.SetDescLayoutOp):
    """SetDescLayoutOp(target, sg_layout, sg_data, *, inst_data=None, slice_dims=None)."""
    __slots__ = ()

    def __init__(self, target, sg_layout, sg_data, *, inst_data=None, slice_dims=None,
                 loc=None, ip=None):
        target = _value(target)
        (dyn_layout, layout), (dyn_data, data), (dyn_inst, inst) = _index_lists(
            sg_layout, sg_data, inst_data)
        super().__init__(target.type, target, dyn_layout, dyn_data, dyn_inst,
                         static_sg_layout=layout, static_sg_data=data, static_inst_data=inst,
                         slice_dims=slice_dims, loc=loc, ip=ip)


def set_desc_layout(target, sg_layout, sg_data, *, inst_data=None, slice_dims=None, loc=None,
                    ip=None):
    return SetDescLayoutOp(target, sg_layout, sg_data, inst_data=inst_data,
                           slice_dims=slice_dims, loc=loc, ip=ip).result


@_ods_cext.register_operation(_Dialect, replace=True)
class SetOpLayoutAttrOp(_gen.SetOpLayoutAttrOp):
    """SetOpLayoutAttrOp(target, sg_layout, sg_data, *, inst_data=None, slice_dims=None,
    index=None, result=None)."""
    __slots__ = ()

    def __init__(self, target, sg_layout, sg_data, *, inst_data=None, slice_dims=None,
                 index=None, result=None, loc=None, ip=None):
        (dyn_layout, layout), (dyn_data, data), (dyn_inst, inst) = _index_lists(
            sg_layout, sg_data, inst_data)
        super().__init__(_value(target), dyn_layout, dyn_data, dyn_inst,
                         static_sg_layout=layout, static_sg_data=data, static_inst_data=inst,
                         slice_dims=slice_dims, index=index, result=result, loc=loc, ip=ip)


def set_op_layout_attr(target, sg_layout, sg_data, *, inst_data=None, slice_dims=None,
                       index=None, result=None, loc=None, ip=None):
    return SetOpLayoutAttrOp(target, sg_layout, sg_data, inst_data=inst_data,
                             slice_dims=slice_dims, index=index, result=result, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class SetGPULaunchThreadsOp(_gen.SetGPULaunchThreadsOp):
    """SetGPULaunchThreadsOp(launch_op, threads)."""
    __slots__ = ()

    def __init__(self, launch_op, threads, *, loc=None, ip=None):
        [(dynamic, static)] = _index_lists(threads)
        super().__init__(_value(launch_op), dynamic, static_threads=static, loc=loc, ip=ip)


def set_gpu_launch_threads(launch_op, threads, *, loc=None, ip=None):
    return SetGPULaunchThreadsOp(launch_op, threads, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class InsertPrefetchOp(_gen.InsertPrefetchOp):
    """InsertPrefetchOp(target, *, nb_prefetch=1): an int, IntegerAttr or a handle."""
    __slots__ = ()

    def __init__(self, target, *, nb_prefetch=1, loc=None, ip=None):
        static, dynamic = 1, None
        if isinstance(nb_prefetch, int):
            static = nb_prefetch
        elif isinstance(nb_prefetch, IntegerAttr):
            static = nb_prefetch.value
        elif isinstance(nb_prefetch, (Operation, Value, OpView)):
            dynamic = nb_prefetch
        super().__init__(transform.AnyOpType.get(), target, dynamic_nb_prefetch=dynamic,
                         static_nb_prefetch=static, loc=loc, ip=ip)


def insert_prefetch(target, *, nb_prefetch=1, loc=None, ip=None):
    return InsertPrefetchOp(target, nb_prefetch=nb_prefetch, loc=loc, ip=ip).result


@_ods_cext.register_operation(_Dialect, replace=True)
class ConvertLayoutOp(_gen.ConvertLayoutOp):
    """ConvertLayoutOp(target, input_sg_layout, input_sg_data, target_sg_layout, target_sg_data,
    *, input_inst_data=None, target_inst_data=None)."""
    __slots__ = ()

    def __init__(self, target, input_sg_layout, input_sg_data, target_sg_layout, target_sg_data,
                 *, input_inst_data=None, target_inst_data=None, loc=None, ip=None):
        lists = _index_lists(input_sg_layout, input_sg_data, input_inst_data, target_sg_layout,
                             target_sg_data, target_inst_data)
        (in_layout, in_data, in_inst, out_layout, out_data, out_inst) = [s for _, s in lists]
        super().__init__(transform.AnyOpType.get(), target, *[d for d, _ in lists],
                         static_input_sg_layout=in_layout, static_input_sg_data=in_data,
                         static_input_inst_data=in_inst, static_target_sg_layout=out_layout,
                         static_target_sg_data=out_data, static_target_inst_data=out_inst,
                         loc=loc, ip=ip)


def convert_layout(target, input_sg_layout, input_sg_data, target_sg_layout, target_sg_data, *,
                   input_inst_data=None, target_inst_data=None, loc=None, ip=None):
    return ConvertLayoutOp(target, input_sg_layout, input_sg_data, target_sg_layout,
                           target_sg_data, input_inst_data=input_inst_data,
                           target_inst_data=target_inst_data, loc=loc, ip=ip).result
