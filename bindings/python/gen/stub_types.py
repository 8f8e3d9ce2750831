"""The annotation table of tether's type stubs (tools/gen_stubs.py; docs/python.md, "Type stubs"):
what the package cannot say itself.

Data only. The extension's members (written in C) are typed where they are defined, by their
signature specs (bindings/python/core/sig.c), which the package publishes: nothing here types
them, and an entry that does is an error. This table types the rest, members written in Python
(tether/ir.py, the dialect modules' builders) and the slot methods of the extension's classes
(`__getitem__`, `__iter__`, `__add__`: CPython makes those from the type's slots, no spec
documents them), in the spelling of a stub: names of the stubbed modules' classes (`Context`,
`OpView`, ...), typing's (`Any`, `Callable`, `Iterator`, `Sequence`, `Mapping`, `Literal`, ...),
builtins, `X | None`, and `Self` for the class the member is written in. What neither types is
`Any`.

A key ending in `@19` or `@22` applies only to the build of that MLIR version (the versions'
APIs differ); every other key must name something the build has: tools/gen_stubs.py fails on an
entry the package does not have (a removed or renamed member or parameter), so the table cannot
go stale.

- PARAMS: type by parameter name, for every function and method written in Python (dialect
  modules included) without a type of its own.
- PROPERTIES: type by property name, for every property written in Python without one.
- RETURNS: return type by method name (protocol methods), for every class.
- MEMBERS: by module (`ir`, `passmanager`, `dialects.func`, ...), then by `Class.member`
  (`Class.Nested.member`) or module-level name:
  - "T": the return type of a method or function, the type of a property or constant; for a
    getter of the extension that a class inherits typed `object` (the IR sequences' `owner`), its
    type in that class;
  - "(a: T, b: U = None) -> R": the signature with types; its names, kinds and defaults must be
    the package's;
  - {"a": "T", "return": "R"}: types by parameter name;
  - a list of those: one per overload (the package's forms, or one signature typed several ways).
"""

PARAMS = {
    "context": "Context | None",
    "loc": "Location | None",
    "ip": "InsertionPoint | None",
    "width": "int",
    "use_local_scope": "bool",
    "assume_verified": "bool",
    "skip_regions@22": "bool",
    "arg_locs": "Sequence[Location] | None",
    "scalable": "Sequence[bool] | None",
    "scalable_dims": "Sequence[int] | None",
}

PROPERTIES = {
    "static_typeid": "TypeID",
    "type_name@22": "str",
    "attr_name@22": "str",
    "current": "Self",
}

RETURNS = {
    "__len__": "int",
    "__bool__": "bool",
    "__int__": "int",
    "__index__": "int",
    "__float__": "float",
    "__contains__": "bool",
    "__setitem__": "None",
    "__delitem__": "None",
}

MEMBERS = {
    "tether": {
        "collect": "None",
    },
    "ir": {
        # -- the IR sequences (tether.ir's _IRSequence): item, slice, iteration, `+` --
        "OperationList.__getitem__": [
            {"key": "int", "return": "OpView"},
            {"key": "slice", "return": "list[OpView]"},
        ],
        "OperationList.__iter__": "Iterator[OpView]",
        "OperationList.__add__": {"value": "Sequence[OpView]", "return": "list[OpView]"},
        "OperationList.__radd__": {"value": "Sequence[OpView]", "return": "list[OpView]"},
        "OperationList.owner": "Block",
        "BlockList.__getitem__": [
            {"key": "int", "return": "Block"},
            {"key": "slice", "return": "list[Block]"},
        ],
        "BlockList.__iter__": "Iterator[Block]",
        "BlockList.__add__": {"value": "Sequence[Block]", "return": "list[Block]"},
        "BlockList.__radd__": {"value": "Sequence[Block]", "return": "list[Block]"},
        "BlockList.owner": "Region",
        "RegionSequence.__getitem__": [
            {"key": "int", "return": "Region"},
            {"key": "slice", "return": "RegionSequence"},
        ],
        "RegionSequence.__iter__": "Iterator[Region]",
        "RegionSequence.__add__": {"value": "Sequence[Region]", "return": "list[Region]"},
        "RegionSequence.__radd__": {"value": "Sequence[Region]", "return": "list[Region]"},
        "RegionSequence.owner": "OpView",
        "BlockArgumentList.__getitem__": [
            {"key": "int", "return": "BlockArgument"},
            {"key": "slice", "return": "BlockArgumentList"},
        ],
        "BlockArgumentList.__iter__": "Iterator[BlockArgument]",
        "BlockArgumentList.__add__":
            {"value": "Sequence[BlockArgument]", "return": "list[BlockArgument]"},
        "BlockArgumentList.__radd__":
            {"value": "Sequence[BlockArgument]", "return": "list[BlockArgument]"},
        "BlockArgumentList.owner": "Block",
        "OpResultList.__getitem__": [
            {"key": "int", "return": "OpResult"},
            {"key": "slice", "return": "OpResultList"},
        ],
        "OpResultList.__iter__": "Iterator[OpResult]",
        "OpResultList.__add__": {"value": "Sequence[OpResult]", "return": "list[OpResult]"},
        "OpResultList.__radd__": {"value": "Sequence[OpResult]", "return": "list[OpResult]"},
        "OpResultList.owner": "OpView",
        "OpOperandList.__getitem__": [
            {"key": "int", "return": "Value"},
            {"key": "slice", "return": "OpOperandList"},
        ],
        "OpOperandList.__iter__": "Iterator[Value]",
        "OpOperandList.__add__": {"value": "Sequence[Value]", "return": "list[Value]"},
        "OpOperandList.__radd__": {"value": "Sequence[Value]", "return": "list[Value]"},
        "OpOperandList.owner": "OpView",
        "OpSuccessors.__getitem__": [
            {"key": "int", "return": "Block"},
            {"key": "slice", "return": "OpSuccessors"},
        ],
        "OpSuccessors.__iter__": "Iterator[Block]",
        "OpSuccessors.__add__": {"value": "Sequence[Block]", "return": "list[Block]"},
        "OpSuccessors.__radd__": {"value": "Sequence[Block]", "return": "list[Block]"},
        "OpSuccessors.owner": "OpView",
        "BlockSuccessors.__getitem__@22": [
            {"key": "int", "return": "Block"},
            {"key": "slice", "return": "BlockSuccessors"},
        ],
        "BlockSuccessors.__iter__@22": "Iterator[Block]",
        "BlockSuccessors.__add__@22": {"value": "Sequence[Block]", "return": "list[Block]"},
        "BlockSuccessors.__radd__@22": {"value": "Sequence[Block]", "return": "list[Block]"},
        "BlockSuccessors.owner@22": "Block",
        "BlockPredecessors.__getitem__@22": [
            {"key": "int", "return": "Block"},
            {"key": "slice", "return": "BlockPredecessors"},
        ],
        "BlockPredecessors.__iter__@22": "Iterator[Block]",
        "BlockPredecessors.__add__@22": {"value": "Sequence[Block]", "return": "list[Block]"},
        "BlockPredecessors.__radd__@22": {"value": "Sequence[Block]", "return": "list[Block]"},
        "BlockPredecessors.owner@22": "Block",
        # -- the Dense*ArrayAttr classes and their iterators (their __radd__, as ArrayAttr's, takes
        # nothing: `[1] + attr` raises TypeError) --
        "DenseBoolArrayAttr.__getitem__": {"key": "int", "return": "bool"},
        "DenseBoolArrayAttr.__iter__": "Iterator[bool]",
        "DenseBoolArrayAttr.__add__": {"value": "Sequence[bool]", "return": "DenseBoolArrayAttr"},
        "DenseBoolArrayAttr.__radd__": {"value": "NoReturn", "return": "DenseBoolArrayAttr"},
        "DenseBoolArrayIterator.__iter__": "Self",
        "DenseBoolArrayIterator.__next__": "bool",
        "DenseI8ArrayAttr.__getitem__": {"key": "int", "return": "int"},
        "DenseI8ArrayAttr.__iter__": "Iterator[int]",
        "DenseI8ArrayAttr.__add__": {"value": "Sequence[int]", "return": "DenseI8ArrayAttr"},
        "DenseI8ArrayAttr.__radd__": {"value": "NoReturn", "return": "DenseI8ArrayAttr"},
        "DenseI8ArrayIterator.__iter__": "Self",
        "DenseI8ArrayIterator.__next__": "int",
        "DenseI16ArrayAttr.__getitem__": {"key": "int", "return": "int"},
        "DenseI16ArrayAttr.__iter__": "Iterator[int]",
        "DenseI16ArrayAttr.__add__": {"value": "Sequence[int]", "return": "DenseI16ArrayAttr"},
        "DenseI16ArrayAttr.__radd__": {"value": "NoReturn", "return": "DenseI16ArrayAttr"},
        "DenseI16ArrayIterator.__iter__": "Self",
        "DenseI16ArrayIterator.__next__": "int",
        "DenseI32ArrayAttr.__getitem__": {"key": "int", "return": "int"},
        "DenseI32ArrayAttr.__iter__": "Iterator[int]",
        "DenseI32ArrayAttr.__add__": {"value": "Sequence[int]", "return": "DenseI32ArrayAttr"},
        "DenseI32ArrayAttr.__radd__": {"value": "NoReturn", "return": "DenseI32ArrayAttr"},
        "DenseI32ArrayIterator.__iter__": "Self",
        "DenseI32ArrayIterator.__next__": "int",
        "DenseI64ArrayAttr.__getitem__": {"key": "int", "return": "int"},
        "DenseI64ArrayAttr.__iter__": "Iterator[int]",
        "DenseI64ArrayAttr.__add__": {"value": "Sequence[int]", "return": "DenseI64ArrayAttr"},
        "DenseI64ArrayAttr.__radd__": {"value": "NoReturn", "return": "DenseI64ArrayAttr"},
        "DenseI64ArrayIterator.__iter__": "Self",
        "DenseI64ArrayIterator.__next__": "int",
        "DenseF32ArrayAttr.__getitem__": {"key": "int", "return": "float"},
        "DenseF32ArrayAttr.__iter__": "Iterator[float]",
        "DenseF32ArrayAttr.__add__": {"value": "Sequence[float]", "return": "DenseF32ArrayAttr"},
        "DenseF32ArrayAttr.__radd__": {"value": "NoReturn", "return": "DenseF32ArrayAttr"},
        "DenseF32ArrayIterator.__iter__": "Self",
        "DenseF32ArrayIterator.__next__": "float",
        "DenseF64ArrayAttr.__getitem__": {"key": "int", "return": "float"},
        "DenseF64ArrayAttr.__iter__": "Iterator[float]",
        "DenseF64ArrayAttr.__add__": {"value": "Sequence[float]", "return": "DenseF64ArrayAttr"},
        "DenseF64ArrayAttr.__radd__": {"value": "NoReturn", "return": "DenseF64ArrayAttr"},
        "DenseF64ArrayIterator.__iter__": "Self",
        "DenseF64ArrayIterator.__next__": "float",
        # -- context, location, insertion point --
        "Context.dialects": "Dialects",
        "Context.d": "Dialects",
        "Dialects.__init__": {"context": "Context"},
        "Dialects.__getitem__": {"name": "str", "return": "Dialect"},
        "Dialects.__getattr__": {"name": "str", "return": "Dialect"},
        "Dialect.__init__": {"descriptor": "DialectDescriptor"},
        "Dialect.descriptor": "DialectDescriptor",
        # -- diagnostics --
        "MLIRError.__init__": {"message": "str", "error_diagnostics": "Sequence[DiagnosticInfo]"},
        # -- modules and operations --
        "OpAttributeMap.__contains__": {"key": "str"},
        "OpAttributeMap.__delitem__": {"key": "str"},
        "OpAttributeMap.__getitem__": [{"key": "str", "return": "Attribute"},
                                       {"key": "int", "return": "NamedAttribute"}],
        "OpAttributeMap.__setitem__": {"key": "str", "value": "Attribute"},
        "OpAttributeMap.__iter__@22": "Iterator[str]",
        "SymbolTable.__contains__": {"key": "str"},
        "SymbolTable.__delitem__": {"key": "str"},
        "SymbolTable.__getitem__": {"key": "str", "return": "OpView"},
        "SymbolTable.__setitem__": {"key": "str", "value": "_OperationBase"},
        # -- regions, blocks, values --
        "Region.__iter__": "Iterator[Block]",
        "Block.__iter__": "Iterator[OpView]",
        "OpOperandList.__setitem__": {"key": "int", "value": "Value"},
        # -- attributes --
        "ArrayAttr.__getitem__": {"key": "int", "return": "Attribute"},
        "ArrayAttr.__iter__": "Iterator[Attribute]",
        "ArrayAttr.__add__": {"value": "Sequence[Attribute]", "return": "ArrayAttr"},
        "ArrayAttr.__radd__": {"value": "NoReturn", "return": "ArrayAttr"},
        "DictAttr.__contains__": {"key": "str"},
        "DictAttr.__getitem__": [{"key": "str", "return": "Attribute"},
                                 {"key": "int", "return": "NamedAttribute"}],
        "DenseIntElementsAttr.__getitem__": {"key": "int", "return": "int"},
        "DenseFPElementsAttr.__getitem__": {"key": "int", "return": "float"},
        # -- affine --
        "AffineExpr.__add__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExpr.__radd__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExpr.__sub__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExpr.__rsub__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExpr.__mul__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExpr.__rmul__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExpr.__mod__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExpr.__rmod__": {"value": "AffineExpr | int", "return": "AffineExpr"},
        "AffineExprList.__getitem__": [{"key": "int", "return": "AffineExpr"},
                                       {"key": "slice", "return": "AffineExprList"}],
        "AffineExprList.__add__": {"value": "Sequence[AffineExpr]", "return": "list[AffineExpr]"},
        "AffineExprList.__radd__": {"value": "Sequence[AffineExpr]",
                                    "return": "list[AffineExpr]"},
        "IntegerSetConstraintList.__getitem__": [
            {"key": "int", "return": "IntegerSetConstraint"},
            {"key": "slice", "return": "IntegerSetConstraintList"}],
        "IntegerSetConstraintList.__add__": {"value": "Sequence[IntegerSetConstraint]",
                                             "return": "list[IntegerSetConstraint]"},
        "IntegerSetConstraintList.__radd__": {"value": "Sequence[IntegerSetConstraint]",
                                              "return": "list[IntegerSetConstraint]"},
        # -- module-level functions and helpers --
        "AttrBuilder.contains": {"attribute_kind": "str", "return": "bool"},
        "AttrBuilder.get": {"attribute_kind": "str", "return": "Callable[..., Attribute]"},
        "AttrBuilder.insert": {"attribute_kind": "str", "attr_builder": "Callable[..., Attribute]",
                               "replace": "bool", "return": "None"},
        "register_attribute_builder": {
            "kind": "str", "replace": "bool",
            "return": "Callable[[Callable[..., Attribute]], Callable[..., Attribute]]"},
        "register_type_caster": {"typeid": "TypeID", "replace": "bool",
                                 "return": "Callable[[Callable[[Type], Type]], Any]"},
        "register_value_caster": {"typeid": "TypeID", "replace": "bool",
                                  "return": "Callable[[Callable[[Value], Value]], Any]"},
        "get_dialect_registry": "DialectRegistry",
        "append_load_on_create_dialect@22": {"dialect": "str", "return": "None"},
        "get_load_on_create_dialects@22": "list[str]",
        "loc_tracebacks@22": {"max_depth": "int | None", "return": "ContextManager[None]"},
        "_GlobalDebug.flag": "bool",
        "_GlobalDebug.set_types": {"types": "str | Sequence[str]", "return": "None"},
    },
    "execution_engine": {
        "ExecutionEngine.invoke": {"name": "str", "return": "None"},
        "ExecutionEngine.lookup": {"name": "str"},
        "ExecutionEngine.register_runtime": {"name": "str", "return": "None"},
    },
    "dialects.func": {
        "FunctionLike.__init__": {
            "name": "str", "type": "FunctionType | tuple[Sequence[Type], Sequence[Type]]",
            "visibility": "str | None", "body_builder": "Callable[[Any], None] | None"},
        "FunctionLike.add_entry_block": "Block",
        "FunctionLike.arg_attrs": "ArrayAttr",
        "FunctionLike.arguments": "BlockArgumentList",
        "FunctionLike.body": "Region",
        "FunctionLike.entry_block": "Block",
        "FunctionLike.is_external": "bool",
        "FunctionLike.result_attrs": "ArrayAttr",
        "FunctionLike.type": "FunctionType",
        "FunctionLike.visibility": "StringAttr",
        "ReturnOp.__init__": {"operands_": "Sequence[Value]"},
        "ConstantOp.type": "FunctionType",
    },
    # A class's `get` that tether/dialects/*.py wraps to return the class (*args, **kwargs).
    "dialects.llvm": {
        "PointerType.get": "PointerType",
    },
    "dialects.nvgpu": {
        "TensorMapDescriptorType.get": "TensorMapDescriptorType",
    },
    "dialects.arith": {
        "ConstantOp.__init__": {"result": "Type | Attribute", "value": "Any"},
        "ConstantOp.create_index": "ConstantOp",
        "ConstantOp.type": "Type",
        "ConstantOp.value": "Attribute",
        "constant": {"value": "Any", "return": "Value"},
    },
    "extras.types": {
        "i": "IntegerType",
        "si": "IntegerType",
        "ui": "IntegerType",
        "bool": "IntegerType",
        "i8": "IntegerType",
        "i16": "IntegerType",
        "i32": "IntegerType",
        "i64": "IntegerType",
        "si8": "IntegerType",
        "si16": "IntegerType",
        "si32": "IntegerType",
        "si64": "IntegerType",
        "ui8": "IntegerType",
        "ui16": "IntegerType",
        "ui32": "IntegerType",
        "ui64": "IntegerType",
        "index": "IndexType",
        "none": "NoneType",
        "bf16": "BF16Type",
        "f16": "F16Type",
        "f32": "F32Type",
        "f64": "F64Type",
        "tf32@22": "FloatTF32Type",
        "f4E2M1FN@22": "Float4E2M1FNType",
        "f6E2M3FN@22": "Float6E2M3FNType",
        "f6E3M2FN@22": "Float6E3M2FNType",
        "f8E3M4@22": "Float8E3M4Type",
        "f8E4M3": "Float8E4M3Type",
        "f8E4M3B11FNUZ": "Float8E4M3B11FNUZType",
        "f8E4M3FN": "Float8E4M3FNType",
        "f8E5M2": "Float8E5M2Type",
        "f8E8M0FNU@22": "Float8E8M0FNUType",
        "complex": {"type": "Type", "return": "ComplexType"},
        "opaque": {"dialect_namespace": "str", "type_data": "str", "return": "OpaqueType"},
        "vector": {"shape": "int | Type", "element_type": "Type | None", "return": "VectorType"},
        "tensor": {"shape": "int | Type", "element_type": "Type | None", "encoding": "str | None",
                   "return": "RankedTensorType | UnrankedTensorType"},
        "memref": {"shape": "int | Type", "element_type": "Type | None",
                   "memory_space": "Attribute | int | None", "layout": "Attribute | None",
                   "return": "MemRefType | UnrankedMemRefType"},
        "tuple": {"elements": "Type", "return": "TupleType"},
        "function": {"inputs": "Sequence[Type]", "results": "Sequence[Type]",
                     "return": "FunctionType"},
        "strided_layout": {"offset": "int", "strides": "Sequence[int]",
                           "return": "StridedLayoutAttr"},
    },
    "alias": {
        "install": {"prefix": "str", "return": "None"},
        "installed": {"prefix": "str", "return": "bool"},
        "uninstall": "None",
    },
    "run": {
        "main": {"argv": "Sequence[str] | None", "return": "int"},
    },
}
