# A memref/affine loop-nest builder (a polyhedral-style frontend): a tiled matmul over memrefs with
# affine.for (constant and map bounds), affine.load/store with maps, affine.apply, memref.alloc,
# memref.subview, memref.cast and memref.dealloc; then lower-affine and print again.
# e2e-mlir: 19 -- an OpView passed where MLIR 22's generated builders want a Value (AffineLoadOp into arith.mulf)
from mlir.ir import *
from mlir.dialects import affine, arith, func, memref
from mlir.passmanager import PassManager

N, TILE = 8, 4

with Context(), Location.unknown():
    module = Module.create()
    f32 = F32Type.get()
    idx = IndexType.get()
    mat = MemRefType.get([N, N], f32)
    with InsertionPoint(module.body):
        f = func.FuncOp("matmul_tiled", ([mat, mat, mat], []))
        with InsertionPoint(f.add_entry_block()):
            A, B, C = f.arguments
            d0, d1 = AffineDimExpr.get(0), AffineDimExpr.get(1)
            plus_tile = AffineMap.get(1, 0, [d0 + TILE])
            ident = AffineMap.get_identity(1)
            outer_i = affine.AffineForOp(0, N, TILE)
            with InsertionPoint(outer_i.body):
                outer_j = affine.AffineForOp(0, N, TILE)
                with InsertionPoint(outer_j.body):
                    ii = affine.AffineForOp(
                        ident, plus_tile, 1,
                        lower_bound_operands=[outer_i.induction_variable],
                        upper_bound_operands=[outer_i.induction_variable],
                    )
                    with InsertionPoint(ii.body):
                        jj = affine.AffineForOp(
                            ident, plus_tile, 1,
                            lower_bound_operands=[outer_j.induction_variable],
                            upper_bound_operands=[outer_j.induction_variable],
                        )
                        with InsertionPoint(jj.body):
                            k = affine.AffineForOp(0, N, 1)
                            with InsertionPoint(k.body):
                                i, j, kk = ii.induction_variable, jj.induction_variable, k.induction_variable
                                m2 = AffineMap.get_identity(2)
                                a = affine.AffineLoadOp(f32, A, indices=[i, kk], map=m2)
                                b = affine.AffineLoadOp(f32, B, indices=[kk, j], map=m2)
                                c = affine.AffineLoadOp(f32, C, indices=[i, j], map=m2)
                                prod = arith.mulf(a, b)
                                s = arith.addf(c, prod)
                                affine.AffineStoreOp(s, C, indices=[i, j], map=m2)
                                affine.AffineYieldOp([])
                            affine.AffineYieldOp([])
                        affine.AffineYieldOp([])
                    affine.AffineYieldOp([])
                affine.AffineYieldOp([])
            func.ReturnOp([])

        g = func.FuncOp("scratch", ([idx], [f32]))
        with InsertionPoint(g.add_entry_block()):
            (n,) = g.arguments
            buf = memref.AllocOp(MemRefType.get([16, 16], f32), [], [])
            dyn = memref.AllocaOp(MemRefType.get([ShapedType.get_dynamic_size()], f32), [n], [])
            sv = memref.subview(buf.result, [2, 2], [4, 4], [1, 1])
            print("subview type:", sv.type)
            c0 = arith.constant(idx, 0)
            zero = arith.constant(f32, 0.0)
            memref.StoreOp(zero, sv, [c0, c0])
            apply = affine.AffineApplyOp(AffineMap.get(1, 0, [AffineDimExpr.get(0) * 2 + 1]), [n])
            v = memref.LoadOp(dyn, [apply.result])
            casted = memref.CastOp(MemRefType.get([ShapedType.get_dynamic_size(), 16], f32), buf)
            dim = memref.DimOp(casted, c0)
            memref.DeallocOp(buf)
            func.ReturnOp([v])

    print(module)
    print("verify:", module.operation.verify())
    loops = []

    def collect(op):
        if op.name == "affine.for":
            loops.append(op)
        return WalkResult.ADVANCE

    module.operation.walk(collect)
    for l in loops:
        fo = l.opview
        print("for:", type(fo).__name__, fo.attributes["lowerBoundMap"], fo.attributes["upperBoundMap"], fo.attributes["step"])
    PassManager.parse("builtin.module(func.func(lower-affine),canonicalize)").run(module.operation)
    print(module)
