"""tether.dialects.gpu: the `gpu` dialect's operations (generated from MLIR's ODS); on MLIR 22 also
upstream 22's GPUFuncOp (with entry block and attributes), LaunchOp / `launch` (a region
decorator), LaunchFuncOp / `launch_func`, `wait`, `printf(format, *args)` and `gpu_async_token()`."""

from ..._mlir_version import MLIR_VERSION as _MLIR_VERSION
from .._gpu_ops_gen import *  # noqa: F401,F403
from .._gpu_ops_gen import _Dialect  # noqa: F401
from .._gpu_enum_gen import *  # noqa: F401,F403
from tether._tether import _gpu as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith('_')})

if _MLIR_VERSION >= 22:
    from collections.abc import Sequence as _Sequence

    from ...ir import (Block, DenseI32ArrayAttr, InsertionPoint, StringAttr, Type, TypeAttr,
                       UnitAttr, Value)
    from ...extras.meta import region_op
    from ...extras import types as _T
    from ..arith import ConstantOp, constant
    from .._ods_common import _cext as _ods_cext
    from .._ods_common import get_op_result_or_op_results as _get_op_result_or_op_results

    def gpu_async_token():
        """!gpu.async.token."""
        return Type.parse("!gpu.async.token")

    def _i32_array(value, name):
        if isinstance(value, DenseI32ArrayAttr):
            return value
        if isinstance(value, _Sequence):
            return DenseI32ArrayAttr.get(value)
        raise ValueError(f"{name} must be a list of integers or a DenseI32ArrayAttr")

    @_ods_cext.register_operation(_Dialect, replace=True)
    class GPUFuncOp(GPUFuncOp):  # noqa: F405
        """gpu.func from a function type and a name; `kernel` marks it a kernel, the known
        block and grid sizes are lists of ints (or DenseI32ArrayAttr); body_builder(op), when
        given, fills a new entry block."""
        __slots__ = ()

        KERNEL_ATTR_NAME = "gpu.kernel"
        KNOWN_BLOCK_SIZE_ATTR_NAME = "known_block_size"
        KNOWN_GRID_SIZE_ATTR_NAME = "known_grid_size"
        FUNCTION_TYPE_ATTR_NAME = "function_type"
        SYM_NAME_ATTR_NAME = "sym_name"

        def __init__(self, function_type, sym_name=None, arg_attrs=None, res_attrs=None,
                     kernel=None, workgroup_attrib_attrs=None, private_attrib_attrs=None,
                     known_block_size=None, known_grid_size=None, loc=None, ip=None,
                     body_builder=None):
            if not isinstance(function_type, TypeAttr):
                function_type = TypeAttr.get(function_type)
            super().__init__(function_type, arg_attrs=arg_attrs, res_attrs=res_attrs,
                             workgroup_attrib_attrs=workgroup_attrib_attrs,
                             private_attrib_attrs=private_attrib_attrs, loc=loc, ip=ip)
            if isinstance(sym_name, str):
                sym_name = StringAttr.get(sym_name)
            if not isinstance(sym_name, StringAttr):
                raise ValueError("sym_name must be a string or a StringAttr")
            self.attributes[self.SYM_NAME_ATTR_NAME] = sym_name
            if kernel:
                self.attributes[self.KERNEL_ATTR_NAME] = UnitAttr.get()
            if known_block_size is not None:
                self.attributes[self.KNOWN_BLOCK_SIZE_ATTR_NAME] = _i32_array(
                    known_block_size, "known_block_size")
            if known_grid_size is not None:
                self.attributes[self.KNOWN_GRID_SIZE_ATTR_NAME] = _i32_array(
                    known_grid_size, "known_grid_size")
            if body_builder is not None:
                with InsertionPoint(self.add_entry_block()):
                    body_builder(self)

        @property
        def name(self) -> StringAttr:
            return StringAttr(self.attributes[self.SYM_NAME_ATTR_NAME])

        @property
        def is_kernel(self) -> bool:
            return self.KERNEL_ATTR_NAME in self.attributes

        def add_entry_block(self) -> Block:
            """A new entry block with the function's argument types (at the op's location)."""
            if len(self.body.blocks) > 0:
                raise RuntimeError(f"Entry block already exists for {self.name.value}")
            inputs = self.function_type.value.inputs
            return self.body.blocks.append(*inputs, arg_locs=[self.location for _ in inputs])

        @property
        def entry_block(self) -> Block:
            if len(self.body.blocks) == 0:
                raise RuntimeError(
                    f"Entry block does not exist for {self.name.value}. Do you need to call the "
                    "add_entry_block() method on this GPUFuncOp?")
            return self.body.blocks[0]

        @property
        def arguments(self):
            """The function type's input types."""
            return self.function_type.value.inputs

    def _convert_literal_to_constant(value):
        """An index constant for an int; a value (or arith.constant op) as it is."""
        if isinstance(value, int):
            return constant(_T.index(), value)
        if isinstance(value, (ConstantOp, Value)):
            return value
        raise ValueError(f"Invalid value: {value}")

    def _sizes3(sizes):
        return list(map(_convert_literal_to_constant, sizes))

    @_ods_cext.register_operation(_Dialect, replace=True)
    class LaunchFuncOp(LaunchFuncOp):  # noqa: F405
        """gpu.launch_func of kernel ([module, function] symbol names) on a grid and a block
        size (three ints or index values each); an async token result when it has
        async_dependencies."""
        __slots__ = ()

        def __init__(self, kernel, grid_size, block_size, kernel_operands=None,
                     async_dependencies=None, dynamic_shared_memory_size=None, async_object=None,
                     *, loc=None, ip=None):
            async_dependencies = [] if async_dependencies is None else async_dependencies
            token = gpu_async_token() if len(async_dependencies) else None
            super().__init__(token, async_dependencies, kernel, *_sizes3(grid_size),
                             *_sizes3(block_size), kernel_operands,
                             dynamicSharedMemorySize=dynamic_shared_memory_size,
                             asyncObject=async_object, loc=loc, ip=ip)

    def launch_func(kernel, grid_size, block_size, kernel_operands=None, async_dependencies=None,
                    dynamic_shared_memory_size=None, async_object=None, *, loc=None, ip=None):
        """gpu.launch_func (LaunchFuncOp): its result, its results, or the op."""
        op = LaunchFuncOp(kernel=kernel, grid_size=grid_size, block_size=block_size,
                          kernel_operands=kernel_operands, async_dependencies=async_dependencies,
                          dynamic_shared_memory_size=dynamic_shared_memory_size,
                          async_object=async_object, loc=loc, ip=ip)
        results = op.results
        if len(results) == 1:
            return results[0]
        return results if len(results) > 1 else op

    def wait(async_dependencies=None, *, loc=None, ip=None):
        """gpu.wait with an async token result, after async_dependencies."""
        return _get_op_result_or_op_results(WaitOp(  # noqa: F405
            gpu_async_token(), [] if async_dependencies is None else async_dependencies, loc=loc,
            ip=ip))

    @_ods_cext.register_operation(_Dialect, replace=True)
    class LaunchOp(LaunchOp):  # noqa: F405
        """gpu.launch on a grid and a block size (three ints or index values each); its body
        block has the twelve index arguments (block and thread ids, grid and block sizes)."""
        __slots__ = ()

        def __init__(self, grid_size, block_size, async_dependencies=None,
                     dynamic_shared_memory_size=None, *, loc=None, ip=None):
            async_dependencies = [] if async_dependencies is None else async_dependencies
            token = gpu_async_token() if len(async_dependencies) else None
            super().__init__(token, async_dependencies, *_sizes3(grid_size),
                             *_sizes3(block_size),
                             dynamicSharedMemorySize=dynamic_shared_memory_size, loc=loc, ip=ip)
            self.regions[0].blocks.append(*[_T.index() for _ in range(12)])

    def launch_(grid_size, block_size, async_dependencies=None, dynamic_shared_memory_size=None,
                *, loc=None, ip=None):
        return LaunchOp(tuple(_sizes3(grid_size)), tuple(_sizes3(block_size)),
                        async_dependencies, dynamic_shared_memory_size, loc=loc, ip=ip)

    launch = region_op(launch_, terminator=lambda *_args: terminator())  # noqa: F405

    _printf = printf  # noqa: F405

    def printf(format, *args, loc=None, ip=None):
        """gpu.printf of a format string and its arguments."""
        return _printf(format=format, args=args, loc=loc, ip=ip)
