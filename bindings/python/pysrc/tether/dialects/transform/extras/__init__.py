"""tether.dialects.transform.extras: handles with chainable methods over the transform dialect
(upstream's `transform.extras`): OpHandle (`match_ops`, `get_result`, `print`), ValueHandle
(`get_defining_op`), ParamHandle, `constant_param`, `insert_transform_script`, and the region
builders `sequence`, `named_sequence`, `apply_patterns`."""

from typing import Callable, Optional, Sequence, Union

from .... import ir
from ...._mlir_version import MLIR_VERSION as _MLIR_VERSION
from ....extras.meta import region_op
from .. import (AnyOpType, AnyParamType, AnyValueType, ApplyPatternsOp, NamedSequenceOp,
                OperationType, ParamType, SequenceOp, YieldOp)
from ... import transform
from .. import structured
from ..._transform_ops_gen import SequenceOp as _GeneratedSequenceOp


class Handle(ir.Value):
    """A transform handle (a Value) that remembers the handles derived from it: `parent` and
    `children` describe how the payload ops nest."""

    def __init__(self, v: ir.Value, *, parent: Optional["Handle"] = None,
                 children: Optional[Sequence["Handle"]] = None):
        super().__init__(v)
        self.parent = parent
        self.children = list(children) if children is not None else []


@ir.register_value_caster(AnyOpType.static_typeid)
@ir.register_value_caster(OperationType.static_typeid)
class OpHandle(Handle):
    """A handle to payload operations."""

    def get_result(self, indices: Sequence[int] = [0]) -> "ValueHandle":  # noqa: B006
        """transform.get_result: handles to results of the payload ops."""
        return transform.GetResultOp(AnyValueType.get(), self, indices).result

    def match_ops(self, ops) -> "OpHandle":
        """transform.structured.match: the payload ops nested in this handle's that have the given
        name(s) (str, op class, or a list of them) or interface (MatchInterfaceEnum or its name)."""
        enum = structured.MatchInterfaceEnum
        if isinstance(ops, enum) or (isinstance(ops, str) and ops in enum.__members__):
            op = structured.MatchOp(AnyOpType.get(), self,
                                    interface=enum[ops] if isinstance(ops, str) else ops)
        else:
            if isinstance(ops, str):
                op_type, names = OperationType.get(ops), [ops]
            elif isinstance(ops, (list, tuple)):
                op_type = AnyOpType.get()
                names = [o if isinstance(o, str) else o.OPERATION_NAME for o in ops]
            else:
                op_type, names = OperationType.get(ops.OPERATION_NAME), [ops.OPERATION_NAME]
            op = structured.MatchOp.match_op_names(op_type, self, names)
        handle = OpHandle(op.results_, parent=self)
        self.children.append(handle)
        return handle

    def print(self, name: Optional[str] = None) -> "OpHandle":
        """transform.print of this handle; returns it for chaining."""
        transform.PrintOp(target=self, name=name)
        return self


@ir.register_value_caster(AnyParamType.static_typeid)
@ir.register_value_caster(ParamType.static_typeid)
class ParamHandle(Handle):
    """A handle to transform parameters."""


@ir.register_value_caster(AnyValueType.static_typeid)
class ValueHandle(Handle):
    """A handle to payload values."""

    def get_defining_op(self) -> OpHandle:
        """transform.get_defining_op."""
        return transform.GetDefiningOp(AnyOpType.get(), self).result


def constant_param(value: Union[ir.Attribute, int]) -> ParamHandle:
    """transform.param.constant: an int becomes an i64 attribute; an integer attribute gives a
    !transform.param<iN>, any other attribute a !transform.any_param."""
    if isinstance(value, int):
        value = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    t = getattr(value, "type", None)
    if _MLIR_VERSION >= 22:  # types come back as their class (no static isinstance)
        is_integer = isinstance(t, ir.IntegerType)
    else:
        is_integer = t is not None and ir.IntegerType.isinstance(t)
    param_type = ParamType.get(t) if is_integer else AnyParamType.get()
    return transform.ParamConstantOp(param_type, value).param


def insert_transform_script(block_or_insertion_point: Union[ir.Block, ir.InsertionPoint],
                            script: Callable[[OpHandle], None],
                            dump_script: bool = False) -> None:
    """Inserts `transform.named_sequence @__transform_main` (at the block's start, or at the
    insertion point) whose body is built by script(handle of the payload root)."""
    if isinstance(block_or_insertion_point, ir.Block):
        context = block_or_insertion_point.owner.context
        ip = ir.InsertionPoint.at_block_begin(block_or_insertion_point)
    else:
        context = block_or_insertion_point.block.owner.context
        ip = block_or_insertion_point
    with context, ir.Location.unknown(context):
        with ip:
            seq = NamedSequenceOp("__transform_main", [AnyOpType.get()], [])
        with ir.InsertionPoint(seq.body):
            script(seq.bodyTarget)
            YieldOp([])
    if dump_script:
        print(seq)


sequence = region_op(_GeneratedSequenceOp, terminator=YieldOp)
named_sequence = region_op(NamedSequenceOp, terminator=YieldOp)
apply_patterns = region_op(ApplyPatternsOp)
