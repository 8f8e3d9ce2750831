"""The OpDSL's model of a structured op, as its definition function builds it.

An op is a ``LinalgOpDef``: its operands (``TensorDef``, ``ScalarDef``, ``IndexAttrDef`` and the
function attributes ``UnaryFnAttrDef``, ``BinaryFnAttrDef``, ``TernaryFnAttrDef``,
``TypeFnAttrDef``), its iteration domain and one comprehension: ``O[D.m, D.n] = <expression>``,
where the expression is made of tensor reads (``A[D.m, D.k]``), scalars, constants (``const``),
iteration indices (``index``) and functions (``UnaryFn``, ``BinaryFn``, ``TernaryFn``,
``TypeFn``, reductions ``ReduceFn.add[D.k](...)`` and ``+=``). ``config.py`` turns the model into
indexing maps, iterator types and scalar assignments.
"""

import enum
import threading

from ..... import ir as _ir
from .affine import AffineBuildState, AffineExprDef, DimDef
from .scalar_expr import ScalarArg, ScalarConst, ScalarFn, ScalarIndex
from .types import TypeVar
from .yaml_helper import YAMLObject

__all__ = [
    "TensorExpression", "TensorUse", "TensorFn", "TensorReduceFn", "const", "index",
    "FunctionKind", "UnaryFnType", "UnaryFn", "BinaryFnType", "BinaryFn", "TernaryFnType",
    "TernaryFn", "TypeFnType", "TypeFn", "ReduceFnUse", "ReduceFnType", "ReduceFn",
    "OperandKind", "OperandDef", "TensorDef", "ScalarDef", "IndexAttrDef", "UnaryFnAttrDef",
    "BinaryFnAttrDef", "TernaryFnAttrDef", "TypeFnAttrDef", "Comprehension", "OpInterfaceDef",
    "ContractionOpInterface", "ConvolutionOpInterface", "FillOpInterface", "OpDefinitionDef",
    "Canonicalizer", "OpMetadataDef", "LinalgOpDef",
]


# ---- expressions ------------------------------------------------------------------------------


class TensorExpression:
    """Something that can stand on the right of a comprehension."""

    def to_scalar_expression(self):
        raise NotImplementedError(type(self).__name__)

    def _children(self):
        return ()

    def visit_tensor_exprs(self, callback):
        """Calls ``callback`` on this expression and every expression inside it."""
        stack = [self]
        while stack:
            e = stack.pop()
            callback(e)
            stack.extend(reversed(e._children()))

    def collect_dim_uses(self, uses):
        """Adds to ``uses`` every DimDef the expression's tensor reads and reductions use."""

        def add_dims(expr):
            if isinstance(expr, DimDef):
                uses.add(expr)

        def visit(e):
            if isinstance(e, TensorUse):
                for ix in e.indices:
                    ix.visit_affine_exprs(add_dims)
            elif isinstance(e, TensorReduceFn):
                for d in e.reduce_use.reduce_dims:
                    d.visit_affine_exprs(add_dims)

        self.visit_tensor_exprs(visit)

    def _collect(self, cls, into):
        self.visit_tensor_exprs(lambda e: into.add(e) if isinstance(e, cls) else None)

    def collect_tensor_uses(self, uses):
        self._collect(TensorUse, uses)

    def collect_indices(self, indices):
        self._collect(index, indices)

    def collect_scalar_uses(self, uses):
        self._collect(ScalarDef, uses)

    def __add__(self, rhs):
        return BinaryFn.add(self, rhs)

    def __sub__(self, rhs):
        return BinaryFn.sub(self, rhs)

    def __mul__(self, rhs):
        return BinaryFn.mul(self, rhs)

    def __truediv__(self, rhs):
        return BinaryFn.div(self, rhs)

    def __hash__(self):
        return id(self)


def _expression(x, what):
    if not isinstance(x, TensorExpression):
        raise TypeError(f"{what} needs tensor expressions (a tensor read, a scalar, const(...), "
                        f"index(...) or a function of them), not {x!r}")
    return x


class TensorUse(TensorExpression):
    """A read of a tensor at affine indices: ``A[D.m, D.k]``."""

    def __init__(self, operand_def, indices):
        self.operand_def = operand_def
        self.indices = tuple(indices)

    @property
    def tensor_name(self):
        name = self.operand_def.name
        if name is None:
            raise ValueError("the TensorDef is not an operand of an op definition")
        return name

    def to_scalar_expression(self):
        return ScalarArg(self.tensor_name).expr()

    def _compute_reduce_dims(self, rhs):
        read, written = set(), set()
        rhs.collect_dim_uses(read)
        self.collect_dim_uses(written)
        return sorted(read - written, key=lambda d: d.dimname)

    def __iadd__(self, rhs):
        _expression(rhs, "+=")
        return ReduceFnUse(BinaryFn.add, None, *self._compute_reduce_dims(rhs))(rhs)

    def __repr__(self):
        return f"{self.operand_def.name}[{', '.join(map(repr, self.indices))}]"


class TensorFn(TensorExpression):
    """A function applied to expressions: named (``name``) or chosen by an attribute operand
    (``operand_def``)."""

    def __init__(self, kind, name, operand_def, type_var, args):
        if bool(name) == bool(operand_def):
            raise ValueError("One of 'name', 'operand_def' must be specified")
        if type_var is not None and not isinstance(type_var, TypeVar):
            raise TypeError(f"a type function needs a TypeVar (T, TV.x, F32, ...), "
                            f"not {type_var!r}")
        self.kind, self.name, self.operand_def = kind, name, operand_def
        self.type_var = type_var
        self.args = [_expression(a, f"{kind.name.lower()} function '{name or '?'}'")
                     for a in args]

    def _children(self):
        return self.args

    def to_scalar_expression(self):
        attr_name = None
        if self.operand_def is not None:
            if self.operand_def.name is None:
                raise ValueError("the function attribute is not an operand of an op definition")
            attr_name = self.operand_def.name
        return ScalarFn(self.kind, self.name, attr_name, self.type_var,
                        [a.to_scalar_expression() for a in self.args]).expr()

    def __repr__(self):
        name = self.operand_def.name if self.operand_def else self.name
        return (f"{self.kind.name}.{name}(type_var={self.type_var}, "
                f"args={', '.join(map(repr, self.args))})")


class TensorReduceFn(TensorExpression):
    """A reduction of its arguments into the comprehension's left-hand side (bound later)."""

    def __init__(self, reduce_use, args):
        self.reduce_use = reduce_use
        self.lhs = None
        self.args = [_expression(a, "a reduction") for a in args]

    def _children(self):
        return self.args

    def to_scalar_expression(self):
        if self.lhs is None:
            raise ValueError(f"Cannot scalarize a TensorReduceFn that has not been bound to its "
                             f"lhs: {self}")
        use = self.reduce_use
        fn_name = use.binary_fn.fn_name if use.binary_fn else None
        attr_name = use.binary_attr.operand_def.name if use.binary_attr else None
        operands = [self.lhs.to_scalar_expression()]
        operands += [a.to_scalar_expression() for a in self.args]
        return ScalarFn(FunctionKind.BINARY, fn_name, attr_name, None, operands).expr()

    def __repr__(self):
        return f"{self.reduce_use!r}({', '.join(map(repr, self.args))})"


_const_context = None
_const_lock = threading.Lock()


class const(TensorExpression):
    """A constant: an int becomes an i64, a float an f64 (cast them with TypeFn)."""

    def __init__(self, value):
        global _const_context
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"const requires int or float but got {type(value)}")
        with _const_lock:
            if _const_context is None:
                _const_context = _ir.Context()
            ctx = _const_context
        if isinstance(value, float):
            self.value = str(_ir.FloatAttr.get_f64(value, context=ctx))
        else:
            if not -(1 << 63) <= value < (1 << 64):
                raise ValueError(f"const({value}) does not fit in 64 bits")
            self.value = str(_ir.IntegerAttr.get(
                _ir.IntegerType.get_signless(64, context=ctx), value))

    def to_scalar_expression(self):
        return ScalarConst(self.value).expr()

    def __repr__(self):
        return f"const({self.value})"


class index(TensorExpression):
    """The iteration index along a dimension of the domain."""

    def __init__(self, dim):
        if not isinstance(dim, DimDef):
            raise TypeError(f"index needs a dimension (D.x), not {dim!r}")
        self.dim_def = dim
        self.dim = -1

    def resolve_dimension_name(self, affine_state):
        self.dim = affine_state.get_dim(self.dim_def.dimname)

    def to_scalar_expression(self):
        if self.dim < 0:
            raise ValueError(f"index({self.dim_def}) is not resolved to a domain position")
        return ScalarIndex(self.dim).expr()

    def __repr__(self):
        return f"index({self.dim!r})"


# ---- functions --------------------------------------------------------------------------------


class FunctionKind(enum.Enum):
    UNARY = 0
    BINARY = 1
    TERNARY = 2
    TYPE = 3


class _FnType:
    _KIND = None

    def __init__(self, fn_name):
        self.fn_name = fn_name

    def _apply(self, *args, type_var=None):
        return TensorFn(self._KIND, self.fn_name, None, type_var, args)

    def __repr__(self):
        return self.fn_name


class UnaryFnType(_FnType):
    """A unary function of the body: ``UnaryFn.exp(x)``."""

    _KIND = FunctionKind.UNARY

    def __call__(self, arg):
        return self._apply(arg)


class BinaryFnType(_FnType):
    """A binary function of the body: ``BinaryFn.max_signed(x, y)``."""

    _KIND = FunctionKind.BINARY

    def __call__(self, arg0, arg1):
        return self._apply(arg0, arg1)


class TernaryFnType(_FnType):
    """A ternary function of the body: ``TernaryFn.select(c, x, y)``."""

    _KIND = FunctionKind.TERNARY

    def __call__(self, arg0, arg1, arg2):
        return self._apply(arg0, arg1, arg2)


class TypeFnType(_FnType):
    """A conversion to a type variable's type: ``TypeFn.cast_signed(U, x)``."""

    _KIND = FunctionKind.TYPE

    def __call__(self, type_var, arg):
        return self._apply(arg, type_var=type_var)


def _namespace(cls, kind, names, doc):
    attrs = {n: kind(n) for n in names}
    attrs["__doc__"] = doc
    return type(cls, (), attrs)


UnaryFn = _namespace("UnaryFn", UnaryFnType, [
    "exp", "log", "abs", "ceil", "floor", "negf", "reciprocal", "round", "sqrt", "rsqrt",
    "square", "tanh", "erf"], "Unary functions of a structured op's body.")
BinaryFn = _namespace("BinaryFn", BinaryFnType, [
    "add", "sub", "mul", "div", "div_unsigned", "max_signed", "min_signed", "max_unsigned",
    "min_unsigned", "powf"],
    "Binary functions. Integers are signless: signedness is in the function "
    "(max_signed -> arith.maxsi, max_unsigned -> arith.maxui).")
TernaryFn = _namespace("TernaryFn", TernaryFnType, ["select"], "Ternary functions.")
TypeFn = _namespace("TypeFn", TypeFnType, ["cast_signed", "cast_unsigned"],
                    "Type conversions (cast_signed(I64, i32 value) -> arith.extsi, "
                    "cast_unsigned -> arith.extui).")


def _dims(reduce_dims):
    if isinstance(reduce_dims, DimDef):
        return (reduce_dims,)
    dims = tuple(reduce_dims)
    if any(not isinstance(d, DimDef) for d in dims):
        raise TypeError(f"a reduction needs dimensions (D.x), not {reduce_dims!r}")
    return dims


class ReduceFnUse:
    """A reduction function with its reduction dimensions, ready to apply."""

    def __init__(self, binary_fn, binary_attr, *reduce_dims):
        if bool(binary_fn) == bool(binary_attr):
            raise ValueError("One of 'binary_fn', 'binary_attr' must be specified")
        self.binary_fn, self.binary_attr = binary_fn, binary_attr
        self.reduce_dims = _dims(reduce_dims)

    def __call__(self, *args):
        return TensorReduceFn(self, args)

    def __repr__(self):
        fn = self.binary_fn if self.binary_fn else self.binary_attr
        return f"reduce_{fn!r}({', '.join(map(repr, self.reduce_dims))})"


class ReduceFnType:
    """A reduction by a binary function: ``ReduceFn.add[D.k](x)``."""

    def __init__(self, binary_fn):
        if not isinstance(binary_fn, BinaryFnType):
            raise ValueError(f"Reduce expected a BinaryFnType but got {binary_fn}")
        self.binary_fn = binary_fn

    def __getitem__(self, reduce_dims):
        return ReduceFnUse(self.binary_fn, None, *_dims(reduce_dims))

    def __repr__(self):
        return f"reduce_{self.binary_fn!r}"


ReduceFn = type("ReduceFn", (), dict(
    {n: ReduceFnType(getattr(BinaryFn, n)) for n in
     ["add", "mul", "max_signed", "min_signed", "max_unsigned", "min_unsigned"]},
    __doc__="Reductions: ReduceFn.<binary fn>[dims](expression)."))


# ---- operands ---------------------------------------------------------------------------------


class OperandKind(enum.Enum):
    INPUT_TENSOR = 0
    SCALAR = 1
    OUTPUT_TENSOR = 2
    INDEX_ATTR = 3
    UNARY_FN_ATTR = 4
    BINARY_FN_ATTR = 5
    TERNARY_FN_ATTR = 6
    TYPE_FN_ATTR = 7


_ATTRIBUTE_KINDS = (OperandKind.INDEX_ATTR, OperandKind.UNARY_FN_ATTR, OperandKind.BINARY_FN_ATTR,
                    OperandKind.TERNARY_FN_ATTR, OperandKind.TYPE_FN_ATTR)


class OperandDef:
    """An operand of an op: its kind, type variable, shape or index symbols, defaults; named and
    numbered when the op definition registers it."""

    def __init__(self, kind, type_var=None, size_exprs=None, index_dims=None,
                 default_indices=None, default_fn=None):
        if type_var is not None and not isinstance(type_var, TypeVar):
            raise ValueError(f"OperandDef requires a TypeVar but got {type_var!r}")
        self.kind, self.type_var = kind, type_var
        self.size_exprs, self.index_dims = size_exprs, index_dims
        self.default_indices, self.default_fn = default_indices, default_fn
        self.owner = None
        self.name = None
        self.registered_index = -1

    def attach(self, index, name, owner):
        if self.owner is not None:
            raise ValueError(f"OperandDef already registered with an op: {self}")
        self.registered_index, self.name, self.owner = index, name, owner

    def is_input(self):
        return self.kind in (OperandKind.SCALAR, OperandKind.INPUT_TENSOR)

    def is_tensor(self):
        return self.kind in (OperandKind.INPUT_TENSOR, OperandKind.OUTPUT_TENSOR)

    def is_attribute(self):
        return self.kind in _ATTRIBUTE_KINDS

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return (f"{self.name}:OperandDef(kind={self.kind.name}, type={self.type_var!r}, "
                f"size_exprs={self.size_exprs}, index_dims={self.index_dims}, "
                f"default_indices={self.default_indices}, default_fn={self.default_fn})")


class TensorDef:
    """A tensor operand: ``TensorDef(T, S.M, S.K)``; ``output=True`` for an output;
    ``index_dims`` maps a shape-only operand (never read) to domain dimensions."""

    def __init__(self, type_var, *shape, index_dims=None, output=False):
        for s in shape:
            if not isinstance(s, AffineExprDef):
                raise TypeError(f"a TensorDef's shape is made of symbols (S.x) and affine "
                                f"expressions of them, not {s!r}")
        if index_dims is not None:
            index_dims = list(index_dims)
            if len(shape) != len(index_dims):
                raise ValueError(f"Expected the shape rank {len(shape)} to match the number of "
                                 f"index_dims {len(index_dims)}")
            if any(not isinstance(d, DimDef) for d in index_dims):
                raise ValueError(f"TensorDef requires index dims of type DimDef but got "
                                 f"{index_dims}")
        kind = OperandKind.OUTPUT_TENSOR if output else OperandKind.INPUT_TENSOR
        self.operand_def = OperandDef(kind, type_var=type_var, size_exprs=shape,
                                      index_dims=index_dims or None)

    def __getitem__(self, dims):
        if self.operand_def.owner is None:
            raise ValueError("TensorDef is not registered with an op")
        if not isinstance(dims, tuple):
            dims = (dims,)
        if dims == (None,):
            dims = ()
        for d in dims:
            if not isinstance(d, AffineExprDef):
                raise KeyError("A TensorDef can only be subscripted by a tuple of affine dims")
        return TensorUse(self.operand_def, dims)

    def __setitem__(self, dims, value):
        if not isinstance(value, TensorExpression):
            raise ValueError(f"Only TensorExpressions can be assigned to TensorDefs. "
                             f"Got: {value!r}")
        self.operand_def.owner.comprehensions.append(Comprehension((self[dims], value)))


class ScalarDef(TensorExpression):
    """A scalar operand, used as it is in the body: ``ScalarDef(T)``."""

    def __init__(self, type_var):
        self.operand_def = OperandDef(OperandKind.SCALAR, type_var=type_var)

    @property
    def scalar_name(self):
        if self.operand_def.name is None:
            raise ValueError("the ScalarDef is not an operand of an op definition")
        return self.operand_def.name

    def to_scalar_expression(self):
        return ScalarArg(self.scalar_name).expr()


class IndexAttrDef:
    """An index attribute: symbols replaced by its integer values when the op is emitted
    (``strides=IndexAttrDef(S.SH, S.SW, default=[1, 1])``)."""

    def __init__(self, *sizes, default):
        from .affine import SymbolDef
        if any(not isinstance(s, SymbolDef) for s in sizes):
            raise ValueError(f"IndexAttrDef requires sizes of type SymbolDef but got {sizes}")
        default = list(default)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in default):
            raise ValueError(f"IndexAttrDef requires default values of type int but got "
                             f"{default}")
        if len(sizes) != len(default):
            raise ValueError(f"IndexAttrDef expects {len(sizes)} default values but got "
                             f"{len(default)}")
        self.operand_def = OperandDef(OperandKind.INDEX_ATTR, size_exprs=sizes,
                                      default_indices=default)


class _FnAttrDef:
    _KIND = _FN_TYPE = None

    def __init__(self, default):
        if not isinstance(default, self._FN_TYPE):
            raise ValueError(f"{type(self).__name__} requires default of type "
                             f"{self._FN_TYPE.__name__} but got {default}")
        self.operand_def = OperandDef(self._KIND, default_fn=default.fn_name)

    def _apply(self, kind, *args, type_var=None):
        return TensorFn(kind, None, self.operand_def, type_var, args)


class UnaryFnAttrDef(_FnAttrDef):
    """A unary function chosen when the op is emitted (``fun=UnaryFnAttrDef(default=...)``)."""

    _KIND, _FN_TYPE = OperandKind.UNARY_FN_ATTR, UnaryFnType

    def __call__(self, arg):
        return self._apply(FunctionKind.UNARY, arg)


class BinaryFnAttrDef(_FnAttrDef):
    """A binary function chosen when the op is emitted; also a reduction (``fn[D.k](x)``)."""

    _KIND, _FN_TYPE = OperandKind.BINARY_FN_ATTR, BinaryFnType

    def __call__(self, arg0, arg1):
        return self._apply(FunctionKind.BINARY, arg0, arg1)

    def __getitem__(self, reduce_dims):
        return ReduceFnUse(None, self, *_dims(reduce_dims))


class TernaryFnAttrDef(_FnAttrDef):
    """A ternary function chosen when the op is emitted."""

    _KIND, _FN_TYPE = OperandKind.TERNARY_FN_ATTR, TernaryFnType

    def __call__(self, arg0, arg1, arg2):
        return self._apply(FunctionKind.TERNARY, arg0, arg1, arg2)


class TypeFnAttrDef(_FnAttrDef):
    """A type conversion chosen when the op is emitted (``cast=TypeFnAttrDef(default=...)``)."""

    _KIND, _FN_TYPE = OperandKind.TYPE_FN_ATTR, TypeFnType

    def __call__(self, type_var, arg):
        return self._apply(FunctionKind.TYPE, arg, type_var=type_var)


# ---- the op -----------------------------------------------------------------------------------


class Comprehension:
    """Assignments of expressions to tensor uses (one per output)."""

    def __init__(self, *bindings):
        self.definitions, self.values = [], []
        for use, value in bindings:
            if isinstance(value, TensorReduceFn):
                if value.lhs is not None:
                    raise ValueError(f"Reduction expression already assigns: {value}")
                value.lhs = use
            self.definitions.append(use)
            self.values.append(value)

    @property
    def all_reduction_dims(self):
        """The set of reduction-dimension tuples of the assignments (one when well formed)."""
        return {v.reduce_use.reduce_dims if isinstance(v, TensorReduceFn) else ()
                for v in self.values}

    def __repr__(self):
        if len(self.definitions) == 1:
            return f"{self.definitions[0]!r} = {self.values[0]!r}"
        return (f"({', '.join(map(repr, self.definitions))}) = "
                f"({', '.join(map(repr, self.values))})")


class OpInterfaceDef:
    """An interface the op implements (``implements(ContractionOpInterface)``)."""

    def __init__(self, cpp_name):
        self.cpp_name = cpp_name


ContractionOpInterface = OpInterfaceDef("LinalgContractionOpInterface")
ConvolutionOpInterface = OpInterfaceDef("LinalgConvolutionOpInterface")
FillOpInterface = OpInterfaceDef("LinalgFillOpInterface")


class OpDefinitionDef:
    """A method the op defines (``defines(Canonicalizer)``)."""

    def __init__(self, def_name):
        self.def_name = def_name


Canonicalizer = OpDefinitionDef("hasCanonicalizer")


class OpMetadataDef(YAMLObject):
    """Name, C++ class name, documentation, interfaces and definitions of an op."""

    yaml_tag = "!LinalgOpMetadata"

    def __init__(self, name, cpp_class_name, doc):
        self.name = name
        self.cpp_class_name = name if cpp_class_name is None else cpp_class_name
        self.doc = doc
        self.implements = []
        self.defines = []

    def to_yaml_custom_dict(self):
        d = {"name": self.name, "cpp_class_name": self.cpp_class_name, "doc": self.doc}
        if self.implements:
            d["implements"] = [i.cpp_name for i in self.implements]
        if self.defines:
            d["defines"] = [x.def_name for x in self.defines]
        return d


# Names a structured op already uses for its accessors: no attribute may take them.
_RESERVED = {"inputs", "outputs", "result_tensors", "region", "iterator_types",
             "indexing_maps", "getRegionBuilder", "getLibraryCallName"}


class LinalgOpDef:
    """An op being defined: metadata, operands (inputs, then outputs, then attributes), domain
    and comprehensions."""

    def __init__(self, name, cpp_class_name=None, doc=None):
        self.metadata = OpMetadataDef(name=name, cpp_class_name=cpp_class_name, doc=doc)
        self.registered_operands = {}
        self.domain = []
        self.comprehensions = []
        self._affine_state = AffineBuildState()

    def add_operand(self, name, operand):
        if name in self.registered_operands:
            raise ValueError(f"The operand {name} is already registered to "
                             f"{self.registered_operands[name]}")
        if operand.is_attribute() and name in _RESERVED:
            raise ValueError(f"The attribute name {name} conflicts with a structured op "
                             f"method name")
        known = self.registered_operands.values()
        if operand.is_input() and any(not o.is_input() for o in known):
            raise ValueError(f"Input {name} registered after an output or attribute")
        if operand.kind == OperandKind.OUTPUT_TENSOR and any(o.is_attribute() for o in known):
            raise ValueError(f"Output {name} registered after an attribute")
        operand.attach(len(self.registered_operands), name, self)
        self.registered_operands[name] = operand

    def __repr__(self):
        lines = [f"LinalgOpDef({self.metadata.name} -> {self.metadata.cpp_class_name},"]
        lines += [f"  {o}" for o in self.registered_operands.values()]
        if self.comprehensions:
            lines[-1] += " {"
            lines += [f"    {c}" for c in self.comprehensions]
            lines.append("}")
        return "\n".join(lines)
