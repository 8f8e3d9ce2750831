"""tether.dialects.transform: the transform dialect's operations and enums (generated from MLIR
19's ODS), its types (AnyOpType, AnyParamType, AnyValueType, OperationType, ParamType), and
builders with upstream's signatures for the ops that hold a body (SequenceOp, NamedSequenceOp,
ApplyPatternsOp) or take handles (CastOp, GetParentOp, MergeHandlesOp, ReplicateOp, YieldOp)."""

from typing import NewType, Optional, Sequence, Union

from .._transform_enum_gen import *  # noqa: F401,F403
from .._transform_ops_gen import *  # noqa: F401,F403
from ...ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from .._transform_ops_gen import _Dialect
from .._transform_ops_gen import (ApplyPatternsOp as _ApplyPatternsOp, CastOp as _CastOp,
                                  GetParentOp as _GetParentOp,
                                  MergeHandlesOp as _MergeHandlesOp,
                                  NamedSequenceOp as _NamedSequenceOp,
                                  ReplicateOp as _ReplicateOp, SequenceOp as _SequenceOp,
                                  YieldOp as _YieldOp)
from .._ods_common import _cext as _ods_cext
from .._ods_common import get_op_result_or_value as _value
from .._ods_common import get_op_results_or_values as _values
from ...ir import Block, FunctionType, Operation, OpView, Type, TypeAttr, Value
from tether._tether import _transform as _types

globals().update({k: v for k, v in vars(_types).items() if not k.startswith("_")})
AnyOpType = _types.AnyOpType
OperationType = _types.OperationType


@_ods_cext.register_operation(_Dialect, replace=True)
class CastOp(_CastOp):
    __slots__ = ()

    def __init__(self, result_type: Type, target: Union[Operation, Value], *, loc=None, ip=None):
        super().__init__(result_type, _value(target), loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class ApplyPatternsOp(_ApplyPatternsOp):
    __slots__ = ()

    def __init__(self, target: Union[Operation, Value, OpView], *, loc=None, ip=None):
        super().__init__(target, loc=loc, ip=ip)
        self.regions[0].blocks.append()

    @property
    def patterns(self) -> Block:
        return self.regions[0].blocks[0]


@_ods_cext.register_operation(_Dialect, replace=True)
class GetParentOp(_GetParentOp):
    __slots__ = ()

    def __init__(self, result_type: Type, target: Union[Operation, Value], *,
                 isolated_from_above: bool = False, op_name: Optional[str] = None,
                 deduplicate: bool = False, nth_parent: int = 1, loc=None, ip=None):
        super().__init__(result_type, _value(target), isolated_from_above=isolated_from_above,
                         op_name=op_name, deduplicate=deduplicate, nth_parent=nth_parent,
                         loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class MergeHandlesOp(_MergeHandlesOp):
    __slots__ = ()

    def __init__(self, handles: Sequence[Union[Operation, Value]], *, deduplicate: bool = False,
                 loc=None, ip=None):
        super().__init__([_value(h) for h in handles], deduplicate=deduplicate, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class ReplicateOp(_ReplicateOp):
    __slots__ = ()

    def __init__(self, pattern: Union[Operation, Value], handles: Sequence[Union[Operation, Value]],
                 *, loc=None, ip=None):
        vals = [_value(h) for h in handles]
        super().__init__([v.type for v in vals], _value(pattern), vals, loc=loc, ip=ip)


class _BodyMixin:
    __slots__ = ()

    @property
    def body(self) -> Block:
        return self.regions[0].blocks[0]

    @property
    def bodyTarget(self) -> Value:
        return self.body.arguments[0]

    @property
    def bodyExtraArgs(self):
        return self.body.arguments[1:]


@_ods_cext.register_operation(_Dialect, replace=True)
class SequenceOp(_BodyMixin, _SequenceOp):
    """transform.sequence(failure_propagation_mode, results, target, extra_bindings=None):
    `target` is a handle (its type is the body's first argument's) or a type (a top-level
    sequence); extra_bindings are values or types of more body arguments."""
    __slots__ = ()


    def __init__(self, failure_propagation_mode, results: Sequence[Type],
                 target: Union[Operation, Value, Type],
                 extra_bindings: Optional[Union[Sequence[Value], Sequence[Type], Operation,
                                                OpView]] = None):
        root = _value(target) if isinstance(target, (Operation, OpView, Value)) else None
        root_type = target if isinstance(target, Type) else root.type
        if extra_bindings is None:
            extra_bindings = []
        if isinstance(extra_bindings, (Operation, OpView)):
            extra_bindings = list(_values(extra_bindings))
        extra_types = []
        if extra_bindings:
            if isinstance(extra_bindings[0], Type):
                extra_types, extra_bindings = list(extra_bindings), []
            else:
                extra_types = [v.type for v in extra_bindings]
        super().__init__(results_=results, failure_propagation_mode=failure_propagation_mode,
                         root=root, extra_bindings=extra_bindings)
        self.regions[0].blocks.append(root_type, *extra_types)


@_ods_cext.register_operation(_Dialect, replace=True)
class NamedSequenceOp(_BodyMixin, _NamedSequenceOp):
    __slots__ = ()

    def __init__(self, sym_name, input_types: Sequence[Type], result_types: Sequence[Type],
                 sym_visibility=None, arg_attrs=None, res_attrs=None):
        super().__init__(sym_name=sym_name,
                         function_type=TypeAttr.get(FunctionType.get(input_types, result_types)),
                         sym_visibility=sym_visibility, arg_attrs=arg_attrs, res_attrs=res_attrs)
        self.regions[0].blocks.append(*input_types)


@_ods_cext.register_operation(_Dialect, replace=True)
class YieldOp(_YieldOp):
    __slots__ = ()

    def __init__(self, operands: Optional[Union[Operation, Sequence[Value]]] = None, *, loc=None,
                 ip=None):
        super().__init__(_values([] if operands is None else operands), loc=loc, ip=ip)


AnyOpTypeT = NewType("AnyOpType", AnyOpType)


def any_op_t() -> AnyOpTypeT:
    return AnyOpTypeT(AnyOpType.get())


def _with_default_result_types(generated, dialect, *defaults):
    """A subclass of a generated transform op whose leading result type(s) may be left out:
    Op(types..., target, ...) as generated, or Op(target, ...) with `defaults` (callables giving
    the types), as upstream's hand-written builders of the extension ops."""

    @_ods_cext.register_operation(dialect, replace=True)
    class Op(generated):
        __slots__ = ()

        def __init__(self, *args, **kw):
            if args and isinstance(args[0], Type):
                super().__init__(*args, **kw)
            else:
                super().__init__(*[d() for d in defaults], *args, **kw)

    Op.__name__ = Op.__qualname__ = generated.__name__
    Op.__doc__ = generated.__doc__
    return Op
