# A tile-and-vectorize code generator: tensor.extract_slice / insert_slice with static and dynamic
# offsets, tensor.dim / cast / expand_shape / collapse_shape, vector.transfer_read / write,
# vector.broadcast / reduction / contract-free fma, bufferization.to_tensor; then
# one-shot-bufferize and lowering of vector to scf; result-type inference through ops' builders.
# e2e-mlir: 19 -- bufferization.ToTensorOp without MLIR 22's buffer argument
from mlir.ir import *
from mlir.dialects import arith, bufferization, func, tensor, vector
from mlir.passmanager import PassManager

with Context(), Location.unknown():
    f32, idx = F32Type.get(), IndexType.get()
    dyn = ShapedType.get_dynamic_size()
    T = RankedTensorType.get
    module = Module.create()
    with InsertionPoint(module.body):
        @func.FuncOp.from_py_func(T([16, 16], f32), T([16, 16], f32), idx)
        def tiled_scale(src, dst, off):
            c0 = arith.constant(idx, 0)
            two = arith.constant(f32, 2.0)
            slice_t = T([4, 4], f32)
            s = tensor.ExtractSliceOp(
                slice_t, src, [off], [], [], [0, dyn], [4, 4], [1, 1])
            tensor.DimOp(s.result, arith.constant(idx, 1))
            vt = VectorType.get([4, 4], f32)
            pad = arith.constant(f32, 0.0)
            perm = AffineMap.get_identity(2)
            v = vector.TransferReadOp(vt, s.result, [c0, c0], AffineMapAttr.get(perm), pad,
                                      ArrayAttr.get([BoolAttr.get(False), BoolAttr.get(False)]))
            b = vector.BroadcastOp(vt, two)
            prod = arith.mulf(v.result, b.result)
            w = vector.TransferWriteOp(slice_t, prod, s.result, [c0, c0], AffineMapAttr.get(perm),
                                       ArrayAttr.get([BoolAttr.get(False), BoolAttr.get(False)]))
            ins = tensor.InsertSliceOp(w.result, dst, [off], [], [], [0, dyn], [4, 4], [1, 1])
            return ins.result

        @func.FuncOp.from_py_func(T([2, 3, 4], f32))
        def reshapes(t):
            col = tensor.CollapseShapeOp(T([6, 4], f32), t, ArrayAttr.get([
                ArrayAttr.get([IntegerAttr.get(IntegerType.get_signless(64), 0), IntegerAttr.get(IntegerType.get_signless(64), 1)]),
                ArrayAttr.get([IntegerAttr.get(IntegerType.get_signless(64), 2)])]))
            casted = tensor.CastOp(T([dyn, 4], f32), col.result)
            back = tensor.CastOp(T([6, 4], f32), casted.result)
            return back.result

        @func.FuncOp.from_py_func(VectorType.get([8], f32))
        def vsum(v):
            return vector.ReductionOp(f32, vector.CombiningKind.ADD, v).result

        @func.FuncOp.from_py_func(MemRefType.get([8], f32))
        def from_memref(m):
            t = bufferization.ToTensorOp(m, restrict=True)
            c1 = arith.constant(idx, 1)
            e = tensor.ExtractOp(t.result, [c1])
            return e.result

    print(module)
    print("verify:", module.operation.verify())
    rs = module.body.operations[2]
    red = [o for o in rs.entry_block.operations if o.name == "vector.reduction"][0]
    print("reduction kind:", red.kind, type(red).__name__)
    fn0 = module.body.operations[0]
    xs = [o for o in fn0.entry_block.operations if o.name == "tensor.extract_slice"][0]
    print("extract_slice static:", xs.static_offsets, xs.static_sizes, xs.static_strides)
    print("extract_slice dynamic offsets:", [o.get_name() for o in xs.offsets])
    tr = [o for o in fn0.entry_block.operations if o.name == "vector.transfer_read"][0]
    print("transfer_read:", tr.permutation_map, tr.in_bounds, tr.vector.type)

    PassManager.parse(
        "builtin.module(one-shot-bufferize{bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map},"
        "canonicalize)"
    ).run(module.operation)
    print(module)
    PassManager.parse("builtin.module(func.func(convert-vector-to-scf,lower-affine),canonicalize)").run(module.operation)
    names = set()

    def visit(op):
        names.add(op.name)
        return WalkResult.ADVANCE

    module.operation.walk(visit)
    print("after vector-to-scf:", sorted(names))
