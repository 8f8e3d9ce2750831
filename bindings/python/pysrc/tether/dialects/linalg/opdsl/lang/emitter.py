"""Emits a configured structured op as IR, at the current insertion point and location:
``linalg.generic`` with its body built from the scalar assignments
(``emit_generic_structured_op``), or the named op the installed MLIR defines, its body filled by
MLIR's own region builder (``emit_named_structured_op``).

The body is built as upstream's emitter builds it: arith, math and complex ops for the functions,
casts only where the types differ (``cast_signed`` i8 -> i32 is ``arith.extsi``, f64 -> f32
``arith.truncf``, integers -> floats ``arith.sitofp`` ...), constants as ``arith.constant`` and
iteration indices as ``linalg.index``. Functions upstream's emitter lacks (``reciprocal``,
``round``, ``sqrt``, ``rsqrt``, ``square``, ``tanh``, ``erf``) are built as MLIR's own region
builder builds them.
"""

import array as _array
from collections.abc import Sequence as _Sequence

from ..... import ir as _ir
from ....._mlir_version import MLIR_VERSION as _MLIR_VERSION
from .... import arith, complex as _complex, linalg, math
from ...._ods_common import get_op_result_or_value as _value
from .comprehension import (BinaryFnType, FunctionKind, OperandKind, TernaryFnType, TypeFnType,
                            UnaryFnType)

__all__ = ["emit_generic_structured_op", "emit_named_structured_op", "ValueList"]

ValueList = _Sequence

_FN_ATTR_TYPES = {
    OperandKind.UNARY_FN_ATTR: UnaryFnType,
    OperandKind.BINARY_FN_ATTR: BinaryFnType,
    OperandKind.TERNARY_FN_ATTR: TernaryFnType,
    OperandKind.TYPE_FN_ATTR: TypeFnType,
}


class _Prepared:
    """What both emitters need: operands split by kind, maps with index attributes
    substituted, result types, type variables bound, attributes to set."""

    def __init__(self, op_config, ins, outs, attrs):
        defs = op_config.ordered_operands
        self.all_defs = defs
        self.in_defs = [d for d in defs if d.kind in (OperandKind.SCALAR,
                                                      OperandKind.INPUT_TENSOR)]
        self.out_defs = [d for d in defs if d.kind == OperandKind.OUTPUT_TENSOR]
        index_defs = [d for d in defs if d.kind == OperandKind.INDEX_ATTR]
        fn_defs = [d for d in defs if d.kind in _FN_ATTR_TYPES]

        known = {d.name for d in index_defs + fn_defs}
        unknown = sorted(set(attrs) - known)
        if unknown:
            raise TypeError(f"unexpected keyword argument(s) {', '.join(unknown)}: the op's "
                            f"attributes are {sorted(known) or 'none'}")
        if isinstance(outs, (_ir.Operation, _ir.OpView)):
            outs = list(outs.results)
        elif not isinstance(outs, (_Sequence, _ir.OpResultList)):
            raise ValueError(f"Expected named argument outs to have type Sequence or "
                             f"OpResultList but got {type(outs)}")
        if len(ins) != len(self.in_defs):
            raise ValueError(f"Expected {len(self.in_defs)} inputs but got {len(ins)} for "
                             f"{op_config}")
        if not outs:
            raise NotImplementedError("Output tensor inference not yet supported for "
                                      "structured ops: pass outs=[...]")
        if len(outs) != len(self.out_defs):
            raise ValueError(f"Expected {len(self.out_defs)} outputs but got {len(outs)} for "
                             f"{op_config}")
        self.ins = [_value(v) for v in ins]
        self.outs = [_value(v) for v in outs]

        # Index attributes: their symbols become the given (or default) integers.
        replaced = []
        self.index_attrs = {}
        for d in index_defs:
            given = attrs.get(d.name)
            values = d.operand_def.default_indices if given is None else given
            if isinstance(values, (str, bytes)) or not isinstance(values, _Sequence) or any(
                    isinstance(v, bool) or not isinstance(v, int) for v in values):
                raise ValueError(f"Attribute {d.name} needs to be of type Sequence[int] but got "
                                 f"{type(values)}")
            results = list(d.index_attr_map.results)
            if len(values) != len(results):
                raise ValueError(f"Attribute {d.name} has length {len(results)} but got "
                                 f"{len(values)} values")
            replaced += [(e, _ir.AffineConstantExpr.get(v)) for e, v in zip(results, values)]
            if given is not None and len(given):
                self.index_attrs[d.name] = _ir.DenseElementsAttr.get(
                    _array.array("q", given), type=_ir.IntegerType.get_signless(64))
        maps = []
        for m in op_config.indexing_maps:
            for expr, const in replaced:
                m = m.replace(expr, const, m.n_dims, m.n_symbols)
            maps.append(m)
        maps = _ir.AffineMap.compress_unused_symbols(maps, _ir.Context.current)
        if any(m.n_symbols for m in maps):
            raise ValueError(f"Expected indexing_maps to use no symbols after replacement and "
                             f"compression but got {maps}")
        self.indexing_maps = maps

        self.result_types = [v.type for v in self.outs
                             if isinstance(v.type, _ir.RankedTensorType)]
        self.type_mapping = {
            "F32": _ir.F32Type.get(), "F64": _ir.F64Type.get(),
            "I32": _ir.IntegerType.get_signless(32), "I64": _ir.IntegerType.get_signless(64),
        }
        self.block_arg_types = []
        for d, v in zip(self.in_defs + self.out_defs, self.ins + self.outs):
            t = v.type
            if d.shape_map is not None:
                if not isinstance(t, _ir.ShapedType):
                    raise ValueError(f"Expected ShapedType but got {t} for operand {d.name}")
                t = _ir.ShapedType(t).element_type
            elif isinstance(t, _ir.ShapedType):
                t = _ir.ShapedType(t).element_type
            name = d.type_var.name
            bound = self.type_mapping.get(name)
            if bound is not None and bound != t:
                raise ValueError(f"Cannot overwrite type mapping {name} = {bound} by type {t}")
            self.type_mapping[name] = t
            self.block_arg_types.append(t)

        self.iterator_types = list(op_config.iterator_types)

        self.fn_attrs = {}
        for d in fn_defs:
            fn_name = d.operand_def.default_fn
            if d.name in attrs:
                fn = attrs[d.name]
                want = _FN_ATTR_TYPES[d.kind]
                if not isinstance(fn, want):
                    raise ValueError(f"Attribute {d.name} needs to be of type {want.__name__} "
                                     f"but got {type(fn)}")
                fn_name = fn.fn_name
            self.fn_attrs[d.name] = (fn_name, d.kind)


def _results(op, result_types):
    return op.result if len(result_types) == 1 else op.results


def emit_generic_structured_op(op_config, *ins, outs, **attrs):
    """``linalg.generic`` computing the op on ``ins`` into ``outs``; its result(s)."""
    p = _Prepared(op_config, ins, outs, attrs)
    maps, iterators = p.indexing_maps, p.iterator_types
    if not iterators:
        # A definition without dims (O[None] = f(I[None])) applies elementwise at the output's
        # rank: rank-0 operands and scalars are broadcast.
        rank = _ir.ShapedType(p.outs[0].type).rank
        iterators = ["parallel"] * rank
        scalar, identity = _ir.AffineMap.get(rank, 0, []), _ir.AffineMap.get_identity(rank)
        maps = []
        for d in p.all_defs:
            if d.kind == OperandKind.SCALAR:
                maps.append(scalar)
            elif d.operand_def.is_tensor():
                i = d.operand_def.registered_index
                flat = i < len(p.ins) and isinstance(p.ins[i].type, _ir.ShapedType) and \
                    _ir.ShapedType(p.ins[i].type).rank == 0
                maps.append(scalar if flat else identity)
    op = linalg.GenericOp(
        result_tensors=p.result_types, inputs=p.ins, outputs=p.outs,
        indexing_maps=_ir.ArrayAttr.get([_ir.AffineMapAttr.get(m) for m in maps]),
        iterator_types=_ir.ArrayAttr.get(
            [_ir.Attribute.parse(f"#linalg.iterator_type<{t}>") for t in iterators]),
        doc=None, library_call=None)
    block = op.regions[0].blocks.append(*p.block_arg_types)
    names = [d.name for d in p.in_defs + p.out_defs]
    with _ir.InsertionPoint(block):
        body = _BodyBuilder(p.type_mapping, dict(zip(names, block.arguments)), p.fn_attrs)
        for assignment in op_config.assignments:
            body.assign(assignment)
        body.yield_outputs(*[d.name for d in p.out_defs])
    return _results(op, p.result_types)


def emit_named_structured_op(op_config, op_name, op_class_name, *ins, outs, **attrs):
    """The named op ``linalg.<op_name>`` (class ``op_class_name`` of tether.dialects.linalg),
    its region filled by MLIR; its result(s)."""
    p = _Prepared(op_config, ins, outs, attrs)
    ctx = _ir.Context.current
    cls = getattr(linalg, op_class_name, None)
    if not ctx.is_registered_operation("linalg." + op_name) or not isinstance(cls, type):
        raise NotImplementedError(f"Unknown named op_name / op_class_name: {op_name} / "
                                  f"{op_class_name}")
    op = cls(p.result_types, p.ins, p.outs)
    for name, value in p.index_attrs.items():
        op.operation.attributes[name] = value
    for name, (fn_name, kind) in p.fn_attrs.items():
        enum_name = kind.name.lower()[:-len("_attr")]
        op.operation.attributes[name] = _ir.Attribute.parse(f"#linalg.{enum_name}<{fn_name}>")
    linalg.fill_builtin_region(op.operation)
    return _results(op, p.result_types)


def _is_float(t):
    return isinstance(t, _ir.FloatType)


def _is_int(t):
    return isinstance(t, _ir.IntegerType)


def _is_index(t):
    return isinstance(t, _ir.IndexType)


def _is_complex(t):
    return isinstance(t, _ir.ComplexType)


class _BodyBuilder:
    """Builds a structured op's body from scalar assignments, at the current insertion point."""

    def __init__(self, type_mapping, block_arg_mapping, fn_attr_mapping):
        self.type_mapping = type_mapping
        self.block_arg_mapping = block_arg_mapping
        self.fn_attr_mapping = fn_attr_mapping
        self.yield_mapping = {}

    def assign(self, assignment):
        if assignment.arg in self.yield_mapping:
            raise ValueError(f"Multiple assignments to the same argument are forbidden: "
                             f"{assignment}")
        self.yield_mapping[assignment.arg] = self.expression(assignment.value)

    def expression(self, expr):
        if expr.scalar_arg is not None:
            try:
                return self.block_arg_mapping[expr.scalar_arg.arg]
            except KeyError:
                raise ValueError(f"Argument {expr.scalar_arg.arg} is not bound for this "
                                 f"structured op.") from None
        if expr.scalar_const is not None:
            value = _ir.Attribute.parse(expr.scalar_const.value)
            return arith.ConstantOp(value.type, value).result
        if expr.scalar_index is not None:
            dim = _ir.IntegerAttr.get(_ir.IntegerType.get_signless(64), expr.scalar_index.dim)
            return linalg.IndexOp(dim).result
        fn = expr.scalar_fn
        fn_name = fn.fn_name
        if fn.attr_name:
            fn_name = self.fn_attr_mapping[fn.attr_name][0]
        method = getattr(self, f"_{fn.kind.name.lower()}_{fn_name}", None)
        if method is None:
            raise ValueError(f"Function '_{fn.kind.name.lower()}_{fn_name}' is not a known "
                             f"function")
        operands = [self.expression(o) for o in fn.operands]
        if fn.kind == FunctionKind.TYPE:
            return method(fn.type_var.name, *operands)
        return method(*operands)

    def yield_outputs(self, *names):
        values = []
        for n in names:
            if n not in self.yield_mapping:
                raise ValueError(f"Body assignments do not assign all outputs: missing '{n}'")
            values.append(self.yield_mapping[n])
        linalg.YieldOp(values)

    # ---- casts ----

    def _cast(self, type_var_name, operand, unsigned):
        to = self.type_mapping.get(type_var_name)
        if to is None:
            raise ValueError(f"Unbound type variable '{type_var_name}' (expected one of "
                             f"{self.type_mapping.keys()})")
        frm = operand.type
        if frm == to:
            return operand
        if _is_int(to):
            if _is_float(frm):
                return (arith.FPToUIOp if unsigned else arith.FPToSIOp)(to, operand).result
            if _is_index(frm):
                return arith.IndexCastOp(to, operand).result
            if _is_int(frm):
                tw, fw = _ir.IntegerType(to).width, _ir.IntegerType(frm).width
                if tw > fw:
                    return (arith.ExtUIOp if unsigned else arith.ExtSIOp)(to, operand).result
                if tw < fw:
                    return arith.TruncIOp(to, operand).result
        elif _is_float(to):
            if _is_int(frm):
                return (arith.UIToFPOp if unsigned else arith.SIToFPOp)(to, operand).result
            if _is_float(frm):
                tw, fw = _ir.FloatType(to).width, _ir.FloatType(frm).width
                if tw > fw:
                    return arith.ExtFOp(to, operand).result
                if tw < fw:
                    return arith.TruncFOp(to, operand).result
        elif _is_index(to) and _is_int(frm):
            return (arith.IndexCastUIOp if unsigned else arith.IndexCastOp)(to, operand).result
        raise ValueError(f"Unable to cast body expression from {frm} to {to}")

    def _type_cast_signed(self, type_var_name, operand):
        return self._cast(type_var_name, operand, False)

    def _type_cast_unsigned(self, type_var_name, operand):
        return self._cast(type_var_name, operand, True)

    # ---- unary ----

    def _float_only(self, name, x, build):
        if not _is_float(x.type):
            raise NotImplementedError(f"Unsupported '{name}' operand: {x}")
        return build(x).result

    def _unary_exp(self, x):
        return self._float_only("exp", x, math.ExpOp)

    def _unary_log(self, x):
        return self._float_only("log", x, math.LogOp)

    def _unary_abs(self, x):
        return self._float_only("abs", x, math.AbsFOp)

    def _unary_ceil(self, x):
        return self._float_only("ceil", x, math.CeilOp)

    def _unary_floor(self, x):
        return self._float_only("floor", x, math.FloorOp)

    def _unary_round(self, x):
        return self._float_only("round", x, math.RoundOp)

    def _unary_sqrt(self, x):
        return self._float_only("sqrt", x, math.SqrtOp)

    def _unary_rsqrt(self, x):
        return self._float_only("rsqrt", x, math.RsqrtOp)

    def _unary_tanh(self, x):
        return self._float_only("tanh", x, math.TanhOp)

    def _unary_erf(self, x):
        return self._float_only("erf", x, math.ErfOp)

    def _unary_square(self, x):
        return self._float_only("square", x, lambda v: arith.MulFOp(v, v))

    def _unary_reciprocal(self, x):
        def build(v):
            one = arith.ConstantOp(v.type, _ir.FloatAttr.get(v.type, 1.0))
            return arith.DivFOp(one, v)
        return self._float_only("reciprocal", x, build)

    def _unary_negf(self, x):
        if _is_float(x.type):
            return arith.NegFOp(x).result
        if _is_complex(x.type):
            return _complex.NegOp(x).result
        raise NotImplementedError(f"Unsupported 'negf' operand: {x}")

    # ---- binary ----

    def _binary(self, name, lhs, rhs, f=None, i=None, c=None):
        t = lhs.type
        if f and _is_float(t):
            return f(lhs, rhs).result
        if i and (_is_int(t) or _is_index(t)):
            return i(lhs, rhs).result
        if c and _is_complex(t):
            return c(lhs, rhs).result
        raise NotImplementedError(f"Unsupported '{name}' operands: {lhs}, {rhs}")

    def _binary_add(self, lhs, rhs):
        return self._binary("add", lhs, rhs, arith.AddFOp, arith.AddIOp, _complex.AddOp)

    def _binary_sub(self, lhs, rhs):
        return self._binary("sub", lhs, rhs, arith.SubFOp, arith.SubIOp, _complex.SubOp)

    def _binary_mul(self, lhs, rhs):
        return self._binary("mul", lhs, rhs, arith.MulFOp, arith.MulIOp, _complex.MulOp)

    def _binary_div(self, lhs, rhs):
        return self._binary("div", lhs, rhs, arith.DivFOp, arith.DivSIOp, _complex.DivOp)

    def _binary_div_unsigned(self, lhs, rhs):
        return self._binary("div_unsigned", lhs, rhs, None, arith.DivUIOp)

    def _binary_max_signed(self, lhs, rhs):
        return self._binary("max", lhs, rhs, arith.MaximumFOp, arith.MaxSIOp)

    def _unsigned_min_max(self, name, lhs, rhs, f, i):
        # MLIR 22: integers (not i1) and indices only; 19 also takes floats (as signed).
        if _MLIR_VERSION >= 22:
            t = lhs.type
            if (_is_int(t) and _ir.IntegerType(t).width != 1) or _is_index(t):
                return i(lhs, rhs).result
            raise NotImplementedError(f"Unsupported '{name}' operands: {lhs}, {rhs}")
        return self._binary(name, lhs, rhs, f, i)

    def _binary_max_unsigned(self, lhs, rhs):
        return self._unsigned_min_max("max_unsigned", lhs, rhs, arith.MaximumFOp, arith.MaxUIOp)

    def _binary_min_signed(self, lhs, rhs):
        return self._binary("min", lhs, rhs, arith.MinimumFOp, arith.MinSIOp)

    def _binary_min_unsigned(self, lhs, rhs):
        return self._unsigned_min_max("min_unsigned", lhs, rhs, arith.MinimumFOp, arith.MinUIOp)

    def _binary_powf(self, lhs, rhs):
        return self._binary("powf", lhs, rhs, math.PowFOp)

    # ---- ternary ----

    def _ternary_select(self, cond, lhs, rhs):
        return arith.SelectOp(cond, lhs, rhs).result
