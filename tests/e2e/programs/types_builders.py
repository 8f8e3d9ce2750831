# Type and attribute builders as a frontend's type converter uses them: ranked tensors with
# encodings, memrefs with strided/affine layouts and memory spaces, vectors (scalable), function,
# tuple, opaque, complex, none, index, float types; AffineMap / AffineExpr arithmetic and
# composition; IntegerSet; type equality, hashing, isinstance and casting.
# e2e-mlir: 19 -- static Type.isinstance, removed in MLIR 22
from mlir.ir import *

with Context() as ctx, Location.unknown():
    ctx.allow_unregistered_dialects = True
    f32, f16, bf16, f64 = F32Type.get(), F16Type.get(), BF16Type.get(), F64Type.get()
    i8 = IntegerType.get_signless(8)
    si4 = IntegerType.get_signed(4)
    ui16 = IntegerType.get_unsigned(16)
    idx = IndexType.get()
    print(f32, f16, bf16, f64, i8, si4, ui16, idx)
    print("widths:", f32.width, f16.width, i8.width, si4.is_signed, ui16.is_unsigned, i8.is_signless)
    print("float8s:", Float8E4M3FNType.get(), Float8E5M2Type.get(), FloatTF32Type.get())
    dyn = ShapedType.get_dynamic_size()

    # tensors
    t = RankedTensorType.get([2, dyn, 4], f32)
    print(t, t.rank, t.shape, t.has_static_shape, t.is_dynamic_dim(1), t.get_dim_size(2), t.element_type)
    enc = Attribute.parse('#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>')
    sp = RankedTensorType.get([8, 8], f32, enc)
    print(sp)
    print("encoding:", sp.encoding == enc)
    enc2 = RankedTensorType.get([3], i8, StringAttr.get("layout"))
    print(enc2, enc2.encoding)
    print(UnrankedTensorType.get(f16), RankedTensorType.get([], f64))
    print("static:", RankedTensorType.get([2, 3, 4], f32).has_static_shape, ShapedType.is_dynamic_size(dyn))

    # memrefs
    strided = StridedLayoutAttr.get(offset=dyn, strides=[dyn, 1])
    m1 = MemRefType.get([4, 8], f32, layout=strided)
    print(m1, m1.layout, m1.memory_space)
    m2 = MemRefType.get([4, 8], f32, memory_space=IntegerAttr.get(IntegerType.get_signless(64), 3))
    print(m2, m2.memory_space)
    amap = AffineMap.get(2, 0, [AffineDimExpr.get(1), AffineDimExpr.get(0)])
    m3 = MemRefType.get([4, 8], f32, layout=AffineMapAttr.get(amap))
    print(m3, m3.affine_map if hasattr(m3, "affine_map") else "")
    print("strided layout:", strided.offset, strided.strides, StridedLayoutAttr.get_fully_dynamic(2))
    print(UnrankedMemRefType.get(f32, Attribute.parse("2")))
    print("memref shape:", m1.shape, m1.rank)

    # vectors
    v = VectorType.get([4, 8], f32)
    sv = VectorType.get([4, 8], f32, scalable=[False, True])
    sv2 = VectorType.get([16], i8, scalable_dims=[0])
    print(v, sv, sv2, sv.scalable, sv.scalable_dims, v.scalable)

    # function, tuple, opaque, complex, none
    ft = FunctionType.get([i8, f32], [t])
    print(ft, ft.inputs, ft.results, len(ft.inputs))
    tup = TupleType.get_tuple([i8, TupleType.get_tuple([f32, idx])])
    print(tup, tup.num_types, tup.get_type(1))
    op = OpaqueType.get("mydialect", "widget<3>")
    print(op, op.dialect_namespace, op.data)
    print(ComplexType.get(f64), ComplexType.get(f64).element_type, NoneType.get())

    # equality, hashing, casting
    same = RankedTensorType.get([2, dyn, 4], f32)
    print("eq:", t == same, hash(t) == hash(same), t != sp)
    generic = Type.parse("tensor<2x?x4xf32>")
    print("parsed eq:", generic == t, type(generic).__name__, RankedTensorType.isinstance(generic), MemRefType.isinstance(generic))
    print("cast:", RankedTensorType(generic).shape, ShapedType(generic).rank)
    try:
        MemRefType(generic)
    except ValueError as e:
        print("bad cast:", e)
    print("typeid equal:", t.typeid == same.typeid, t.typeid == f32.typeid)
    print("static typeid:", RankedTensorType.static_typeid == t.typeid)
    d = {t: "tensor", f32: "f32"}
    print("dict lookup:", d[same], d[F32Type.get()])

    # affine maps and expressions
    d0, d1, d2 = AffineDimExpr.get(0), AffineDimExpr.get(1), AffineDimExpr.get(2)
    s0 = AffineSymbolExpr.get(0)
    e = d0 * 4 + d1 - s0
    print("expr:", e, (d0 + 1) * 2, d0 % 8, AffineExpr.get_floor_div(d1, 2), AffineExpr.get_ceil_div(d1, 3))
    print("const:", AffineConstantExpr.get(5), AffineConstantExpr.get(5).value, d1.position, s0.position)
    m = AffineMap.get(3, 1, [e, d2])
    print("map:", m, m.n_dims, m.n_symbols, len(m.results), m.is_permutation, m.is_projected_permutation)
    print("results:", [str(r) for r in m.results])
    perm = AffineMap.get_permutation([2, 0, 1])
    print("perm:", perm, perm.is_permutation)
    print("minor identity:", AffineMap.get_minor_identity(3, 2), AffineMap.get_constant(7), AffineMap.get_empty())
    comp = perm.get_submap([0, 2])
    print("submap:", comp, perm.get_major_submap(2), perm.get_minor_submap(1))
    print("compress:", AffineMap.compress_unused_symbols([AffineMap.get(2, 2, [d0, s0])], ctx))
    print("replace:", m.replace(d2, d0 + d1, 3, 1))
    print("expr compose:", (d0 + d1).compose(AffineMap.get(2, 0, [d1, AffineConstantExpr.get(4)])))
    print("isinstance:", AffineAddExpr.isinstance(e), AffineMulExpr.isinstance(d0 * 4), AffineBinaryExpr.isinstance(d0 % 8))
    print("add lhs/rhs:", AffineAddExpr(d0 + d1).lhs, AffineAddExpr(d0 + d1).rhs)
    print("attr:", AffineMapAttr.get(m), AffineMapAttr.get(m).value == m)

    # integer sets
    iset = IntegerSet.get(2, 1, [d0 - 1, s0 - d1, d0 - d1], [False, False, True])
    print("set:", iset, iset.n_dims, iset.n_symbols, len(iset.constraints), iset.n_equalities, iset.n_inequalities)
    for c in iset.constraints:
        print("  constraint:", c.expr, c.is_eq)
    print("empty set:", IntegerSet.get_empty(2, 0, ctx), IntegerSet.get_empty(2, 0, ctx).is_canonical_empty)
    print("replaced set:", iset.get_replaced([d1, d0], [AffineConstantExpr.get(10)], 2, 0))
    print("set attr:", Attribute.parse("affine_set<" + str(iset) + ">"))
