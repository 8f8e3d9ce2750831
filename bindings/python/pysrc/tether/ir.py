"""tether.ir: MLIR IR from Python, with upstream ``mlir.ir`` names, on tether's arena.

Every object here stands for MLIR IR through a handle of the arena: it keeps its ancestors and its
context alive, and raises ``InvalidatedError`` once its IR was erased or removed by a pass, instead
of crashing. See docs/python.md.
"""

import enum as _enum
import threading as _threading

from tether import _tether
from tether._tether import (  # noqa: F401  (re-exported)
    Attribute,
    Block,
    BlockArgument,
    Context,
    InvalidatedError,
    Location,
    MLIRError,
    Module,
    Operation,
    OpResult,
    Region,
    Type,
    Value,
)

__all__ = [
    "Context", "Location", "InsertionPoint", "Module", "Operation", "Region", "Block", "Value",
    "OpResult", "BlockArgument", "Type", "IntegerType", "IndexType", "F16Type", "BF16Type",
    "F32Type", "F64Type", "NoneType", "FunctionType", "RankedTensorType", "MemRefType",
    "VectorType", "ShapedType", "Attribute", "IntegerAttr", "FloatAttr", "BoolAttr", "StringAttr", "TypeAttr",
    "ArrayAttr", "UnitAttr", "DictAttr", "FlatSymbolRefAttr", "DenseElementsAttr", "MLIRError", "InvalidatedError", "WalkResult", "WalkOrder",
    "OpAttributeMap", "OpOperand",
]


class WalkResult(_enum.IntEnum):
    ADVANCE = 0
    INTERRUPT = 1
    SKIP = 2


class WalkOrder(_enum.IntEnum):
    PRE_ORDER = 0
    POST_ORDER = 1


# ---- thread-local stacks of current context, location, insertion point ------------------------

_local = _threading.local()


def _stack(name):
    s = getattr(_local, name, None)
    if s is None:
        s = []
        setattr(_local, name, s)
    return s


class _ClassProperty:
    def __init__(self, fget):
        self.fget = fget

    def __get__(self, obj, cls):
        return self.fget(cls)


def _current_context():
    s = _stack("contexts")
    if not s:
        raise ValueError("no current Context: use `with Context():` or pass context=")
    return s[-1]


def _resolve_context(context):
    if context is None:
        return _current_context()
    if not isinstance(context, Context):
        raise TypeError(f"context must be a Context, not {type(context).__name__}")
    return context


def _context_enter(self):
    _stack("contexts").append(self)
    return self


def _context_exit(self, *exc):
    s = _stack("contexts")
    if s and s[-1] is self:
        s.pop()
    return False


Context.__enter__ = _context_enter
Context.__exit__ = _context_exit
Context.current = _ClassProperty(lambda cls: _current_context())
_tether._set_context_hook(_current_context)


# ---- Location -----------------------------------------------------------------------------------


def _current_location(required=True):
    s = _stack("locations")
    if not s:
        if required:
            raise ValueError("no current Location: use `with Location.unknown():` or pass loc=")
        return None
    return s[-1]


def _loc_enter(self):
    _stack("locations").append(self)
    _stack("contexts").append(self.context)
    return self


def _loc_exit(self, *exc):
    for name in ("locations", "contexts"):
        s = _stack(name)
        if s:
            s.pop()
    return False


Location.__enter__ = _loc_enter
Location.__exit__ = _loc_exit
Location.current = _ClassProperty(lambda cls: _current_location())
Location.unknown = staticmethod(lambda context=None: _tether._make_loc(_resolve_context(context), "unknown"))


def _loc_file(filename, line, col, context=None):
    if not isinstance(filename, str):
        raise TypeError("filename must be a str")
    if not isinstance(line, int) or not isinstance(col, int):
        raise TypeError("line and col must be int")
    return _tether._make_loc(_resolve_context(context), "file", filename, int(line), int(col))


def _loc_name(name, childLoc=None, context=None):
    if not isinstance(name, str):
        raise TypeError("name must be a str")
    if childLoc is not None and not isinstance(childLoc, Location):
        raise TypeError("childLoc must be a Location")
    ctx = childLoc.context if context is None and childLoc is not None else _resolve_context(context)
    return _tether._make_loc(ctx, "name", name, childLoc)


def _loc_callsite(callee, frames, context=None):
    if not isinstance(callee, Location):
        raise TypeError("callee must be a Location")
    frames = list(frames)
    if not frames or not all(isinstance(f, Location) for f in frames):
        raise TypeError("frames must be a non-empty sequence of Location")
    # Upstream: callee called from frames[0], called from frames[1], ...
    caller = frames[-1]
    for f in reversed(frames[:-1]):
        caller = _tether._make_loc(callee.context, "callsite", f, caller)
    return _tether._make_loc(callee.context, "callsite", callee, caller)


def _loc_fused(locations, metadata=None, context=None):
    locations = list(locations)
    if not all(isinstance(l, Location) for l in locations):
        raise TypeError("locations must be a sequence of Location")
    if metadata is not None:
        raise NotImplementedError("fused locations with metadata are not supported")
    ctx = locations[0].context if context is None and locations else _resolve_context(context)
    return _tether._make_loc(ctx, "fused", locations)


Location.file = staticmethod(_loc_file)
Location.name = staticmethod(_loc_name)
Location.callsite = staticmethod(_loc_callsite)
Location.fused = staticmethod(_loc_fused)


# ---- InsertionPoint -----------------------------------------------------------------------------


class InsertionPoint:
    """Where Operation.create puts new operations: the end of a block, or before an operation."""

    def __init__(self, beforeOperation_or_block):
        x = beforeOperation_or_block
        if isinstance(x, Block):
            self._block, self._ref = x, None
        elif isinstance(x, Operation):
            if x.block is None:
                raise ValueError("the operation is not in a block")
            self._block, self._ref = x.block, x
        else:
            raise TypeError(f"InsertionPoint takes a Block or an Operation, not {type(x).__name__}")
        self._at_begin = False

    @staticmethod
    def at_block_begin(block):
        if not isinstance(block, Block):
            raise TypeError("block must be a Block")
        ip = InsertionPoint(block)
        ops = block.operations
        if len(ops):
            ip._ref = ops[0]
        else:
            ip._at_begin = True
        return ip

    @staticmethod
    def at_block_terminator(block):
        if not isinstance(block, Block):
            raise TypeError("block must be a Block")
        term = block._terminator()
        if term is None:
            raise ValueError("the block has no terminator")
        ip = InsertionPoint(block)
        ip._ref = term
        return ip

    @property
    def block(self):
        return self._block

    @property
    def ref_operation(self):
        return self._ref

    def insert(self, operation):
        op = operation if isinstance(operation, Operation) else getattr(operation, "operation", None)
        if not isinstance(op, Operation):
            raise TypeError(f"insert takes an Operation, not {type(operation).__name__}")
        if self._ref is not None:
            op.move_before(self._ref)
        else:
            self._block.append(op)
            if self._at_begin:
                # The first operation inserted at the beginning becomes the reference.
                self._ref, self._at_begin = None, False
                ops = self._block.operations
                if len(ops) > 1:
                    self._ref = ops[1]

    def __enter__(self):
        _stack("ips").append(self)
        return self

    def __exit__(self, *exc):
        s = _stack("ips")
        if s and s[-1] is self:
            s.pop()
        return False

    current = _ClassProperty(lambda cls: _current_ip(required=True))


def _current_ip(required=False):
    s = _stack("ips")
    if not s:
        if required:
            raise ValueError("no current InsertionPoint")
        return None
    return s[-1]


# ---- Module -------------------------------------------------------------------------------------


def _module_parse(asm, context=None):
    if not isinstance(asm, (str, bytes)):
        raise TypeError(f"asm must be a str, not {type(asm).__name__}")
    return _tether._module_parse(_resolve_context(context), asm)


def _module_create(loc=None):
    if loc is None:
        loc = _current_location(required=False)
    if loc is not None and not isinstance(loc, Location):
        raise TypeError("loc must be a Location")
    ctx = loc.context if loc is not None else _current_context()
    return _tether._module_create(ctx, loc)


Module.parse = staticmethod(_module_parse)
Module.create = staticmethod(_module_create)
Module.dump = lambda self: print(str(self), end="")


# ---- Operation ----------------------------------------------------------------------------------


class OpAttributeMap:
    """op.attributes: a mapping from names to Attribute."""

    __slots__ = ("_op",)

    def __init__(self, op):
        self._op = op

    def __getitem__(self, name):
        if isinstance(name, int):
            names = self._op._attr_names()
            return NamedAttribute(names[name], self._op._attr_get(names[name]))
        if not isinstance(name, str):
            raise TypeError("attribute names are str")
        return self._op._attr_get(name)

    def __setitem__(self, name, attr):
        if not isinstance(name, str):
            raise TypeError("attribute names are str")
        self._op._attr_set(name, attr)

    def __delitem__(self, name):
        if not isinstance(name, str):
            raise TypeError("attribute names are str")
        self._op._attr_del(name)

    def __contains__(self, name):
        return isinstance(name, str) and name in self._op._attr_names()

    def __len__(self):
        return len(self._op._attr_names())

    def __iter__(self):
        for n in self._op._attr_names():
            yield NamedAttribute(n, self._op._attr_get(n))

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def keys(self):
        return list(self._op._attr_names())


class NamedAttribute:
    __slots__ = ("name", "attr")

    def __init__(self, name, attr):
        self.name, self.attr = name, attr

    def __repr__(self):
        return f"NamedAttribute({self.name}={self.attr})"


def _op_create(name, results=None, operands=None, attributes=None, successors=None, regions=0,
               loc=None, ip=None, infer_type=False):
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    if loc is None:
        loc = _current_location(required=False)
    if loc is not None and not isinstance(loc, Location):
        raise TypeError("loc must be a Location")
    ctx = loc.context if loc is not None else _current_context()
    if loc is None:
        loc = Location.unknown(ctx)
    def as_list(seq, what):
        # Any sequence (a list, a tuple, block.arguments, op.results, ...), but not a str.
        if seq is None:
            return None
        if isinstance(seq, (str, bytes)) or not hasattr(seq, "__iter__"):
            raise TypeError(f"{what} must be a sequence, not {type(seq).__name__}")
        return list(seq)

    results = as_list(results, "results")
    operands = as_list(operands, "operands")
    successors = as_list(successors, "successors")
    if attributes is not None and not isinstance(attributes, dict):
        raise TypeError(f"attributes must be a dict, not {type(attributes).__name__}")
    if not isinstance(regions, int) and not isinstance(regions, (list, tuple)):
        raise TypeError("regions must be an int or a list of Region")
    _check_ip(ip)
    op = _tether._op_create(ctx, name, results, operands, attributes, successors, regions, loc,
                            bool(infer_type))
    if ip is None:
        ip = _current_ip()
    if ip is not None:
        ip.insert(op)
    return op


def _check_ip(ip):
    if ip is not None and not isinstance(ip, InsertionPoint):
        raise TypeError(f"ip must be an InsertionPoint, not {type(ip).__name__}")


Operation.create = staticmethod(_op_create)


def _op_parse(source, source_name="", context=None):
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, not {type(source).__name__}")
    return _tether._op_parse(_resolve_context(context), source)


Operation.parse = staticmethod(_op_parse)
def _op_attributes(self):
    self._attr_names()  # raises InvalidatedError for an invalid operation
    return OpAttributeMap(self)


Operation.attributes = property(_op_attributes, doc="The operation's attributes, by name.")


def _op_print(self, *args, file=None, **kw):
    text = self.get_asm(*args, **kw)
    print(text, file=file)


Operation.print = _op_print
Operation.dump = lambda self: print(self.get_asm())
Operation.opview = property(lambda self: self, doc="This tether has no OpView classes: the operation.")
Operation.__repr__ = lambda self: (
    f"<Operation {self.name}>" if self.is_valid else "<Operation (invalid)>"
)


def _walk(self, callback, walk_order=WalkOrder.POST_ORDER):
    if not isinstance(walk_order, int):
        raise TypeError(f"walk_order must be a WalkOrder, not {type(walk_order).__name__}")
    return Operation._c_walk(self, callback, int(walk_order))


Operation._c_walk = Operation.walk
Operation.walk = _walk


# ---- values -------------------------------------------------------------------------------------


class OpOperand:
    """A use of a value: the operation that uses it and the operand's number there."""

    __slots__ = ("owner", "operand_number")

    def __init__(self, owner, operand_number):
        self.owner, self.operand_number = owner, operand_number

    def __repr__(self):
        return f"OpOperand({self.owner.name}, {self.operand_number})"


Value.uses = property(lambda self: [OpOperand(o, n) for o, n in self._uses],
                      doc="The uses of the value (OpOperand: owner, operand_number).")

# ---- sequences ----------------------------------------------------------------------------------

# op.operands.types, op.results.types, block.arguments.types (upstream spelling).
_tether.IRSequence.types = property(lambda self: [v.type for v in self])

# ---- Region / Block -----------------------------------------------------------------------------

Block.__iter__ = lambda self: iter(self.operations)
Region.__iter__ = lambda self: iter(self.blocks)

Block.create_at_start = staticmethod(
    lambda parent, arg_types=(), arg_locs=None: _tether._block_create_at_start(parent, list(arg_types), arg_locs)
)


# ---- Types --------------------------------------------------------------------------------------


def _type_parse(text, context=None):
    if not isinstance(text, str):
        raise TypeError("type text must be a str")
    return _tether._type_parse(_resolve_context(context), text)


Type.parse = staticmethod(_type_parse)
Type._CAPICreate = staticmethod(lambda capsule: _tether._from_capsule(capsule, False))
Type.typeid = property(lambda self: _tether._type_typeid(self),
                       doc="The type's TypeID, as an int (its opaque pointer).")


class _Typed:
    """Base of the specific type and attribute classes: a checked copy of a generic value."""

    _kinds = ()

    def __new__(cls, cast_from):
        if not isinstance(cast_from, cls._family):
            raise TypeError(f"{cls.__name__}() takes a {cls._family.__name__}, "
                            f"not {type(cast_from).__name__}")
        if cls._kind_of(cast_from) not in cls._kinds:
            raise ValueError(f"cannot cast {cast_from!r} to {cls.__name__}")
        return cls._family.__new__(cls, cast_from)

    @classmethod
    def isinstance(cls, other):
        return isinstance(other, cls._family) and cls._kind_of(other) in cls._kinds


class IntegerType(_Typed, Type):
    _family, _kinds, _kind_of = Type, ("integer",), staticmethod(_tether._type_kind)

    @staticmethod
    def get_signless(width, context=None):
        return _tether._make_type(_resolve_context(context), "integer", width)

    @staticmethod
    def get_signed(width, context=None):
        return _tether._make_type(_resolve_context(context), "integer_signed", width)

    @staticmethod
    def get_unsigned(width, context=None):
        return _tether._make_type(_resolve_context(context), "integer_unsigned", width)

    width = property(lambda self: _tether._type_info(self, "width"))
    is_signless = property(lambda self: _tether._type_info(self, "signedness") == "signless")
    is_signed = property(lambda self: _tether._type_info(self, "signedness") == "signed")
    is_unsigned = property(lambda self: _tether._type_info(self, "signedness") == "unsigned")


def _simple_type(name, kind):
    cls = type(name, (_Typed, Type), {
        "_family": Type, "_kinds": (kind,), "_kind_of": staticmethod(_tether._type_kind),
        "get": staticmethod(lambda context=None: _tether._make_type(_resolve_context(context), kind)),
    })
    cls.__module__ = __name__
    return cls


IndexType = _simple_type("IndexType", "index")
F16Type = _simple_type("F16Type", "f16")
BF16Type = _simple_type("BF16Type", "bf16")
F32Type = _simple_type("F32Type", "f32")
F64Type = _simple_type("F64Type", "f64")
NoneType = _simple_type("NoneType", "none")


class FunctionType(_Typed, Type):
    _family, _kinds, _kind_of = Type, ("function",), staticmethod(_tether._type_kind)

    @staticmethod
    def get(inputs, results, context=None):
        if context is None:
            for t in list(inputs) + list(results):
                if isinstance(t, Type):
                    context = t.context
                    break
        return _tether._make_type(_resolve_context(context), "function", list(inputs), list(results))

    inputs = property(lambda self: _tether._type_info(self, "inputs"))
    results = property(lambda self: _tether._type_info(self, "results"))


class ShapedType(_Typed, Type):
    _family, _kinds, _kind_of = Type, ("ranked_tensor", "unranked_tensor", "memref",
                                       "unranked_memref", "vector"), staticmethod(_tether._type_kind)
    element_type = property(lambda self: _tether._type_info(self, "element_type"))
    shape = property(lambda self: _tether._type_info(self, "shape"))
    rank = property(lambda self: _tether._type_info(self, "rank"))


def _shaped(name, kind):
    def get(shape, element_type, *args, loc=None, **kw):
        if not isinstance(element_type, Type):
            raise TypeError(f"element_type must be a Type, not {type(element_type).__name__}")
        return _tether._make_type(element_type.context, kind, list(shape), element_type)

    cls = type(name, (ShapedType,), {"_kinds": (kind,), "get": staticmethod(get)})
    cls.__module__ = __name__
    return cls


RankedTensorType = _shaped("RankedTensorType", "ranked_tensor")
MemRefType = _shaped("MemRefType", "memref")
VectorType = _shaped("VectorType", "vector")

_TYPE_CLASSES = {
    "integer": IntegerType, "index": IndexType, "f16": F16Type, "bf16": BF16Type,
    "f32": F32Type, "f64": F64Type, "none": NoneType, "function": FunctionType,
    "ranked_tensor": RankedTensorType, "memref": MemRefType, "vector": VectorType,
    "unranked_tensor": ShapedType, "unranked_memref": ShapedType,
}


def _cast_type(t):
    cls = _TYPE_CLASSES.get(_tether._type_kind(t))
    return Type.__new__(cls, t) if cls is not None else t


# ---- Attributes ---------------------------------------------------------------------------------


def _attr_parse(text, context=None):
    if not isinstance(text, str):
        raise TypeError("attribute text must be a str")
    return _tether._attr_parse(_resolve_context(context), text)


Attribute.parse = staticmethod(_attr_parse)
Attribute._CAPICreate = staticmethod(lambda capsule: _tether._from_capsule(capsule, True))


def _attr_class(name, kind, **members):
    cls = type(name, (_Typed, Attribute), dict(
        _family=Attribute, _kinds=(kind,), _kind_of=staticmethod(_tether._attr_kind), **members))
    cls.__module__ = __name__
    return cls


def _value(self):
    return _tether._attr_info(self, "value")


def _int_attr_get(type, value):
    if not isinstance(type, Type):
        raise TypeError(f"type must be a Type, not {type.__class__.__name__}")
    return _tether._make_attr(type.context, "integer", type, value)


def _float_attr_get(type, value, loc=None):
    if not isinstance(type, Type):
        raise TypeError(f"type must be a Type, not {type.__class__.__name__}")
    return _tether._make_attr(type.context, "float", type, value)


IntegerAttr = _attr_class("IntegerAttr", "integer", get=staticmethod(_int_attr_get),
                          value=property(_value))
FloatAttr = _attr_class(
    "FloatAttr", "float", get=staticmethod(_float_attr_get), value=property(_value),
    get_f32=staticmethod(lambda value, context=None: _float_attr_get(F32Type.get(context), value)),
    get_f64=staticmethod(lambda value, context=None: _float_attr_get(F64Type.get(context), value)))
BoolAttr = _attr_class(
    "BoolAttr", "bool", value=property(_value),
    get=staticmethod(lambda value, context=None: _tether._make_attr(_resolve_context(context), "bool", value)))


def _string_attr_get(value, context=None):
    if not isinstance(value, str):
        raise TypeError(f"value must be a str, not {type(value).__name__}")
    return _tether._make_attr(_resolve_context(context), "string", value)


StringAttr = _attr_class("StringAttr", "string", get=staticmethod(_string_attr_get),
                         value=property(_value))


def _type_attr_get(value, context=None):
    if not isinstance(value, Type):
        raise TypeError(f"value must be a Type, not {type(value).__name__}")
    return _tether._make_attr(value.context, "type", value)


TypeAttr = _attr_class("TypeAttr", "type", get=staticmethod(_type_attr_get), value=property(_value))
UnitAttr = _attr_class(
    "UnitAttr", "unit",
    get=staticmethod(lambda context=None: _tether._make_attr(_resolve_context(context), "unit")))


def _array_attr_get(attributes, context=None):
    attributes = list(attributes)
    if context is None and attributes and isinstance(attributes[0], Attribute):
        context = attributes[0].context
    return _tether._make_attr(_resolve_context(context), "array", attributes)


ArrayAttr = _attr_class(
    "ArrayAttr", "array", get=staticmethod(_array_attr_get),
    __len__=lambda self: _tether._attr_info(self, "len"),
    __getitem__=lambda self, i: _tether._attr_info(self, "item", i),
    __iter__=lambda self: (_tether._attr_info(self, "item", i) for i in range(len(self))))

def _flat_symbol_ref_get(value, context=None):
    if not isinstance(value, str):
        raise TypeError(f"value must be a str, not {type(value).__name__}")
    return _tether._make_attr(_resolve_context(context), "flat_symbol_ref", value)


FlatSymbolRefAttr = _attr_class("FlatSymbolRefAttr", "flat_symbol_ref",
                                get=staticmethod(_flat_symbol_ref_get), value=property(_value))


def _dict_attr_get(value=None, context=None):
    value = {} if value is None else value
    if not isinstance(value, dict):
        raise TypeError(f"value must be a dict, not {type(value).__name__}")
    return _tether._make_attr(_resolve_context(context), "dictionary", value)


def _dict_getitem(self, key):
    return _tether._attr_info(self, "get", key)


def _dict_contains(self, key):
    try:
        _tether._attr_info(self, "get", key)
        return True
    except KeyError:
        return False


DictAttr = _attr_class("DictAttr", "dictionary", get=staticmethod(_dict_attr_get),
                       __len__=lambda self: _tether._attr_info(self, "len"),
                       __getitem__=_dict_getitem, __contains__=_dict_contains)

def _dense_splat(shaped_type, element_attr):
    if not isinstance(shaped_type, Type):
        raise TypeError(f"shaped_type must be a Type, not {type(shaped_type).__name__}")
    if not isinstance(element_attr, Attribute):
        raise TypeError(f"element_attr must be an Attribute, not {type(element_attr).__name__}")
    return _tether._make_attr(shaped_type.context, "dense_splat", shaped_type, element_attr)


DenseElementsAttr = _attr_class(
    "DenseElementsAttr", "dense_elements", get_splat=staticmethod(_dense_splat),
    is_splat=property(lambda self: _tether._attr_info(self, "is_splat")))

_ATTR_CLASSES = {
    "integer": IntegerAttr, "float": FloatAttr, "bool": BoolAttr, "string": StringAttr,
    "type": TypeAttr, "unit": UnitAttr, "array": ArrayAttr, "flat_symbol_ref": FlatSymbolRefAttr,
    "dictionary": DictAttr, "dense_elements": DenseElementsAttr,
}


def _cast_attr(a):
    cls = _ATTR_CLASSES.get(_tether._attr_kind(a))
    return Attribute.__new__(cls, a) if cls is not None else a


_tether._set_casters(_cast_type, _cast_attr)
