"""tether.dialects.transform: the transform dialect's operations and enums (generated from MLIR's
ODS), its types (AnyOpType, AnyParamType, AnyValueType, OperationType, ParamType), and
builders with upstream's signatures for the ops that hold a body (SequenceOp, NamedSequenceOp,
ApplyPatternsOp) or take handles (CastOp, GetParentOp, MergeHandlesOp, ReplicateOp, YieldOp).
On MLIR 22, upstream 22's: their new keywords (`loc`/`ip` everywhere, ApplyPatternsOp's
`apply_cse`, `max_iterations`, `max_num_rewrites`, GetParentOp's `allow_empty_results`,
MergeHandlesOp's `results`), NamedSequenceOp.apply, ApplyRegisteredPassOp, ForeachOp, and the
functions `cast`, `apply_patterns`, `get_parent_op`, `merge_handles`, `replicate`, `sequence`,
`named_sequence`, `yield_`, `apply_registered_pass`, `foreach`."""

from typing import Dict, NewType, Optional, Sequence, Union

from ..._mlir_version import MLIR_VERSION as _MLIR_VERSION

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

    if _MLIR_VERSION >= 22:
        def __init__(self, target: Union[Operation, Value, OpView], apply_cse: bool = False,
                     max_iterations=None, max_num_rewrites=None, *, loc=None, ip=None):
            super().__init__(target, apply_cse=apply_cse, max_iterations=max_iterations,
                             max_num_rewrites=max_num_rewrites, loc=loc, ip=ip)
            self.regions[0].blocks.append()
    else:
        def __init__(self, target: Union[Operation, Value, OpView], *, loc=None, ip=None):
            super().__init__(target, loc=loc, ip=ip)
            self.regions[0].blocks.append()

    @property
    def patterns(self) -> Block:
        return self.regions[0].blocks[0]


@_ods_cext.register_operation(_Dialect, replace=True)
class GetParentOp(_GetParentOp):
    __slots__ = ()

    if _MLIR_VERSION >= 22:
        def __init__(self, result_type: Type, target: Union[Operation, Value], *,
                     isolated_from_above: bool = False, allow_empty_results: bool = False,
                     op_name: Optional[str] = None, deduplicate: bool = False,
                     nth_parent: int = 1, loc=None, ip=None):
            super().__init__(result_type, _value(target),
                             isolated_from_above=isolated_from_above,
                             allow_empty_results=allow_empty_results, op_name=op_name,
                             deduplicate=deduplicate, nth_parent=nth_parent, loc=loc, ip=ip)
    else:
        def __init__(self, result_type: Type, target: Union[Operation, Value], *,
                     isolated_from_above: bool = False, op_name: Optional[str] = None,
                     deduplicate: bool = False, nth_parent: int = 1, loc=None, ip=None):
            super().__init__(result_type, _value(target),
                             isolated_from_above=isolated_from_above, op_name=op_name,
                             deduplicate=deduplicate, nth_parent=nth_parent, loc=loc, ip=ip)


@_ods_cext.register_operation(_Dialect, replace=True)
class MergeHandlesOp(_MergeHandlesOp):
    __slots__ = ()

    if _MLIR_VERSION >= 22:
        def __init__(self, handles: Sequence[Union[Operation, Value]], *,
                     deduplicate: bool = False, results: Optional[Sequence[Type]] = None,
                     loc=None, ip=None):
            super().__init__([_value(h) for h in handles], deduplicate=deduplicate,
                             results=results, loc=loc, ip=ip)
    else:
        def __init__(self, handles: Sequence[Union[Operation, Value]], *,
                     deduplicate: bool = False, loc=None, ip=None):
            super().__init__([_value(h) for h in handles], deduplicate=deduplicate, loc=loc,
                             ip=ip)


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


    if _MLIR_VERSION >= 22:
        def __init__(self, failure_propagation_mode, results: Sequence[Type],
                     target: Union[Operation, Value, Type],
                     extra_bindings: Optional[Union[Sequence[Value], Sequence[Type], Operation,
                                                    OpView]] = None, *, loc=None, ip=None):
            self._build(failure_propagation_mode, results, target, extra_bindings, loc=loc,
                        ip=ip)
    else:
        def __init__(self, failure_propagation_mode, results: Sequence[Type],
                     target: Union[Operation, Value, Type],
                     extra_bindings: Optional[Union[Sequence[Value], Sequence[Type], Operation,
                                                    OpView]] = None):
            self._build(failure_propagation_mode, results, target, extra_bindings)

    def _build(self, failure_propagation_mode, results, target, extra_bindings, **where):
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
                         root=root, extra_bindings=extra_bindings, **where)
        self.regions[0].blocks.append(root_type, *extra_types)


@_ods_cext.register_operation(_Dialect, replace=True)
class NamedSequenceOp(_BodyMixin, _NamedSequenceOp):
    __slots__ = ()

    def _build(self, sym_name, input_types, result_types, sym_visibility, arg_attrs, res_attrs,
               **where):
        super().__init__(sym_name=sym_name,
                         function_type=TypeAttr.get(FunctionType.get(input_types, result_types)),
                         sym_visibility=sym_visibility, arg_attrs=arg_attrs, res_attrs=res_attrs,
                         **where)
        self.regions[0].blocks.append(*input_types)

    if _MLIR_VERSION >= 22:
        def __init__(self, sym_name, input_types: Sequence[Type], result_types: Sequence[Type],
                     *, sym_visibility=None, arg_attrs=None, res_attrs=None, loc=None, ip=None):
            self._build(sym_name, input_types, result_types, sym_visibility, arg_attrs,
                        res_attrs, loc=loc, ip=ip)

        def apply(self, payload, transform_options=None):
            """Runs this named sequence (in a module with `transform.with_named_sequence`) on
            payload with the transform interpreter; returns payload, changed in place."""
            parent = self.parent
            marker = "transform.with_named_sequence"
            if parent is None or marker not in parent.attributes or not isinstance(
                    parent.attributes[marker], UnitAttr):
                raise ValueError("NamedSequenceOp.apply needs the sequence in a module with the "
                                 "transform.with_named_sequence attribute")
            interpreter.apply_named_sequence(payload_root=payload, transform_root=self,
                                             transform_module=parent,
                                             transform_options=transform_options)
            return payload
    else:
        def __init__(self, sym_name, input_types: Sequence[Type], result_types: Sequence[Type],
                     sym_visibility=None, arg_attrs=None, res_attrs=None):
            self._build(sym_name, input_types, result_types, sym_visibility, arg_attrs,
                        res_attrs)


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


if _MLIR_VERSION >= 22:
    from . import interpreter
    from .._transform_ops_gen import ApplyRegisteredPassOp as _ApplyRegisteredPassOp
    from .._transform_ops_gen import ForeachOp as _ForeachOp
    from ...ir import (ArrayAttr, AttrBuilder, Attribute, BoolAttr, Context, DictAttr,
                       IntegerAttr, IntegerType, StringAttr, UnitAttr, register_attribute_builder)

    def _one_or_many(op):
        """A builder function's return: the single result, the results, or the op."""
        results = op.results
        return results if len(results) > 1 else (results[0] if len(results) == 1 else op)

    @register_attribute_builder("ParamOperandAttr")
    def _paramOperandAttr(x: int, context) -> Attribute:
        return Attribute.parse(f"#transform.param_operand<index={x}>", context=context)

    def cast(result_type, target, *, loc=None, ip=None):
        return CastOp(result_type=result_type, target=target, loc=loc, ip=ip).result

    def apply_patterns(target, apply_cse=False, max_iterations=None, max_num_rewrites=None, *,
                       loc=None, ip=None):
        return ApplyPatternsOp(target=target, apply_cse=apply_cse,
                               max_iterations=max_iterations,
                               max_num_rewrites=max_num_rewrites, loc=loc, ip=ip)

    def get_parent_op(result_type, target, *, isolated_from_above=False,
                      allow_empty_results=False, op_name=None, deduplicate=False, nth_parent=1,
                      loc=None, ip=None):
        return GetParentOp(result_type=result_type, target=target,
                           isolated_from_above=isolated_from_above,
                           allow_empty_results=allow_empty_results, op_name=op_name,
                           deduplicate=deduplicate, nth_parent=nth_parent, loc=loc, ip=ip).result

    def merge_handles(handles, *, deduplicate=False, results=None, loc=None, ip=None):
        return MergeHandlesOp(handles=handles, deduplicate=deduplicate, results=results,
                              loc=loc, ip=ip).result

    def replicate(pattern, handles, *, loc=None, ip=None):
        return _one_or_many(ReplicateOp(pattern=pattern, handles=handles, loc=loc, ip=ip))

    def sequence(failure_propagation_mode, results, target, extra_bindings=None, *, loc=None,
                 ip=None):
        return _one_or_many(SequenceOp(failure_propagation_mode, results, target,
                                       extra_bindings, loc=loc, ip=ip))

    def named_sequence(sym_name, input_types, result_types, *, sym_visibility=None,
                       arg_attrs=None, res_attrs=None, loc=None, ip=None):
        return NamedSequenceOp(sym_name, input_types, result_types,
                               sym_visibility=sym_visibility, arg_attrs=arg_attrs,
                               res_attrs=res_attrs, loc=loc, ip=ip)

    def yield_(operands=None, *, loc=None, ip=None):
        return YieldOp(operands=operands, loc=loc, ip=ip)

    OptionValueTypes = Union[
        Sequence["OptionValueTypes"], Attribute, Value, Operation, OpView, str, int, bool]

    @_ods_cext.register_operation(_Dialect, replace=True)
    class ApplyRegisteredPassOp(_ApplyRegisteredPassOp):
        """transform.apply_registered_pass of pass_name on target; options map option names to
        attributes, Python values (bool, int, str, sequences of them) or handles (passed as
        parameters)."""
        __slots__ = ()

        def __init__(self, result, target, pass_name, *,
                     options: Optional[Dict[Union[str, StringAttr], OptionValueTypes]] = None,
                     loc=None, ip=None):
            param_operand = AttrBuilder.get("ParamOperandAttr")
            context = (loc and loc.context) or Context.current
            dynamic = []

            def to_attr(value):
                if isinstance(value, (Value, Operation, OpView)):
                    dynamic.append(value)
                    return param_operand(len(dynamic) - 1, context)
                if isinstance(value, Attribute):
                    return value
                if isinstance(value, bool):
                    return BoolAttr.get(value)
                if isinstance(value, int):
                    return IntegerAttr.get(IntegerType.get_signless(64, context), value)
                if isinstance(value, str):
                    return StringAttr.get(value)
                if isinstance(value, Sequence):
                    return ArrayAttr.get([to_attr(v) for v in value])
                raise TypeError(f"Unsupported option type: {type(value)}")

            attrs = {}
            for key, value in (options or {}).items():
                attrs[key.value if isinstance(key, StringAttr) else key] = to_attr(value)
            super().__init__(result, _value(target), pass_name, dynamic,
                             options=DictAttr.get(attrs), loc=loc, ip=ip)

    def apply_registered_pass(result, target, pass_name, *, options=None, loc=None, ip=None):
        return ApplyRegisteredPassOp(result=result, pass_name=pass_name, target=target,
                                     options=options, loc=loc, ip=ip).result

    @_ods_cext.register_operation(_Dialect, replace=True)
    class ForeachOp(_ForeachOp):
        """transform.foreach over targets (handles); the body block has one argument per
        target, of its type."""
        __slots__ = ()

        def __init__(self, results, targets, *, with_zip_shortest=False, loc=None, ip=None):
            targets = [_value(t) for t in targets]
            super().__init__(results_=results, targets=targets,
                             with_zip_shortest=with_zip_shortest, loc=loc, ip=ip)
            self.regions[0].blocks.append(*[t.type for t in targets])

        @property
        def body(self) -> Block:
            return self.regions[0].blocks[0]

        @property
        def bodyTargets(self):
            return self.regions[0].blocks[0].arguments

    def foreach(results, targets, *, with_zip_shortest=False, loc=None, ip=None):
        return _one_or_many(ForeachOp(results=results, targets=targets,
                                      with_zip_shortest=with_zip_shortest, loc=loc, ip=ip))
