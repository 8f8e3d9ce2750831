"""tether.dialects.func: FuncOp (with entry blocks and `from_py_func`), CallOp's three forms."""

import inspect
from typing import List, Optional, Sequence, Union

from .._mlir_version import MLIR_VERSION as _MLIR_VERSION
from ._func_ops_gen import *  # noqa: F401,F403
from ..ir import *  # noqa: F401,F403  (as upstream's module, mlir.ir's names)
from ._func_ops_gen import _Dialect
from ._func_ops_gen import CallOp as _GeneratedCallOp
from ._func_ops_gen import ConstantOp as _GeneratedConstantOp
from ._func_ops_gen import FuncOp as _GeneratedFuncOp
from ._func_ops_gen import ReturnOp
from ._ods_common import _cext as _ods_cext
from ._ods_common import get_default_loc_context as _get_default_loc_context
from ..ir import (ArrayAttr, DictAttr, FlatSymbolRefAttr, FunctionType, InsertionPoint, Location,
                  OpView, Operation, StringAttr, Type, TypeAttr, Value)

ARGUMENT_ATTRIBUTE_NAME = "arg_attrs"
RESULT_ATTRIBUTE_NAME = "res_attrs"


@_ods_cext.register_operation(_Dialect, replace=True)
class ConstantOp(_GeneratedConstantOp):
    __slots__ = ()

    @property
    def type(self):
        return self.results[0].type


class FunctionLike:
    """What func.func and ml_program.func share: the constructor from (name, type) and the
    accessors of a function-like op (entry block, arguments, type, visibility, ...)."""
    __slots__ = ()

    def __init__(self, name, type, *, visibility=None, body_builder=None, loc=None, ip=None):
        """`type` is a FunctionType or an (inputs, results) pair; `body_builder(op)` fills a new
        entry block."""
        sym_name = StringAttr.get(str(name))
        if isinstance(type, tuple):
            type = FunctionType.get(inputs=type[0], results=type[1])
        sym_visibility = StringAttr.get(str(visibility)) if visibility is not None else None
        super().__init__(sym_name, TypeAttr.get(type), sym_visibility=sym_visibility, loc=loc,
                         ip=ip)
        if body_builder:
            with InsertionPoint(self.add_entry_block()):
                body_builder(self)

    @property
    def is_external(self):
        return len(self.regions[0].blocks) == 0

    @property
    def body(self):
        return self.regions[0]

    @property
    def type(self):
        return FunctionType(TypeAttr(self.attributes["function_type"]).value)

    @property
    def visibility(self):
        return self.attributes["sym_visibility"]

    @property
    def name(self) -> StringAttr:
        return StringAttr(self.attributes["sym_name"])

    @property
    def entry_block(self):
        if self.is_external:
            raise IndexError("External function does not have a body")
        return self.regions[0].blocks[0]

    def add_entry_block(self, arg_locs: Optional[Sequence[Location]] = None):
        """Adds the entry block, its arguments typed from the signature; returns it."""
        if not self.is_external:
            raise IndexError("The function already has an entry block!")
        self.body.blocks.append(*self.type.inputs, arg_locs=arg_locs)
        return self.body.blocks[0]

    @property
    def arg_attrs(self):
        """The arguments' attribute dictionaries (MLIR 22: empty ones when the function has
        none)."""
        if _MLIR_VERSION >= 22 and ARGUMENT_ATTRIBUTE_NAME not in self.attributes:
            return ArrayAttr.get([DictAttr.get({}) for _ in self.type.inputs])
        return ArrayAttr(self.attributes[ARGUMENT_ATTRIBUTE_NAME])

    @arg_attrs.setter
    def arg_attrs(self, attribute: Union[ArrayAttr, list]):
        if not isinstance(attribute, ArrayAttr):
            attribute = ArrayAttr.get(attribute, context=self.context)
        self.attributes[ARGUMENT_ATTRIBUTE_NAME] = attribute

    @property
    def arguments(self):
        return self.entry_block.arguments

    @property
    def result_attrs(self):
        return self.attributes[RESULT_ATTRIBUTE_NAME]

    @result_attrs.setter
    def result_attrs(self, attribute: ArrayAttr):
        self.attributes[RESULT_ATTRIBUTE_NAME] = attribute


@_ods_cext.register_operation(_Dialect, replace=True)
class FuncOp(FunctionLike, _GeneratedFuncOp):
    """`func.func`: FuncOp(name, type, visibility=None, body_builder=None)."""
    __slots__ = ()

    @classmethod
    def from_py_func(cls, *inputs: Type, results: Optional[Sequence[Type]] = None,
                     name: Optional[str] = None):
        """Decorator: the Python function's body builds the FuncOp's entry block (its arguments
        are the block's). Without `results`, the returned values are returned by an implicit
        `func.return` and set the function type. Calling the decorated function emits a
        `func.call` at the current insertion point; `.func_op` is the FuncOp."""

        def decorator(f):
            params = inspect.signature(f).parameters.values()
            wants_func_op = any(
                p.kind == p.VAR_KEYWORD or (p.name == "func_op" and p.kind in (
                    p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)) for p in params)
            implicit_return = results is None
            symbol_name = name or f.__name__
            func_op = cls(name=symbol_name, type=FunctionType.get(
                inputs=inputs, results=[] if implicit_return else results))
            with InsertionPoint(func_op.add_entry_block()):
                kwargs = {"func_op": func_op} if wants_func_op else {}
                returned = f(*func_op.entry_block.arguments, **kwargs)
                if not implicit_return:
                    if returned is not None:
                        raise AssertionError("Capturing a python function with explicit "
                                             "`results=` requires that the wrapped function "
                                             "returns None.")
                    return_types = list(results)
                else:
                    if returned is None:
                        returned = []
                    elif isinstance(returned, Value):
                        returned = [returned]
                    elif isinstance(returned, OpView):
                        returned = list(returned.operation.results)
                    elif isinstance(returned, Operation):
                        returned = list(returned.results)
                    else:
                        returned = list(returned)
                    ReturnOp(returned)
                    return_types = [v.type for v in returned]
                    func_op.attributes["function_type"] = TypeAttr.get(
                        FunctionType.get(inputs=inputs, results=return_types))

            def emit_call_op(*call_args):
                call = CallOp(return_types, FlatSymbolRefAttr.get(symbol_name), list(call_args))
                if len(return_types) == 0:
                    return None
                if len(return_types) == 1:
                    return call.result
                return call.results

            emit_call_op.__name__ = f.__name__
            emit_call_op.func_op = func_op
            return emit_call_op

        return decorator


func = FuncOp.from_py_func


@_ods_cext.register_operation(_Dialect, replace=True)
class CallOp(_GeneratedCallOp):
    """`func.call`: CallOp(func_op, args), CallOp(result_types, "name", args) or
    CallOp(result_types, FlatSymbolRefAttr, args)."""
    __slots__ = ()


    def __init__(self, calleeOrResults: Union[FuncOp, List[Type]],
                 argumentsOrCallee: Union[List, FlatSymbolRefAttr, str],
                 arguments: Optional[List] = None, *, loc=None, ip=None):
        if isinstance(calleeOrResults, FuncOp):
            if not isinstance(argumentsOrCallee, list):
                raise ValueError(
                    "when constructing a call to a function, expected the second argument to be "
                    f"a list of call arguments, got {type(argumentsOrCallee)}")
            if arguments is not None:
                raise ValueError("unexpected third argument when constructing a call to a "
                                 "function")
            super().__init__(calleeOrResults.type.results, FlatSymbolRefAttr.get(
                calleeOrResults.name.value, context=_get_default_loc_context(loc)),
                argumentsOrCallee, loc=loc, ip=ip)
            return
        if isinstance(argumentsOrCallee, list):
            raise ValueError(
                "when constructing a call to a function by name, expected the second argument "
                f"to be a string or a FlatSymbolRefAttr, got {type(argumentsOrCallee)}")
        if isinstance(argumentsOrCallee, str):
            argumentsOrCallee = FlatSymbolRefAttr.get(
                argumentsOrCallee, context=_get_default_loc_context(loc))
        super().__init__(calleeOrResults, argumentsOrCallee, arguments, loc=loc, ip=ip)
