# A kernel library written with the linalg OpDSL (as model compilers define fused ops): a batched
# reduction, a softmax-like exp/sum pair, a strided depthwise convolution with attributes, an op
# with a type-function attribute, index() in the body; emitted on tensors and memrefs, plus named
# ops (conv_2d_nhwc_hwcf with strides, pooling, batch_matmul, transpose, broadcast) and a
# linalg.generic built by hand with its region.
# e2e-mlir: 19 -- linalg.elemwise_binary, removed in MLIR 22
from mlir.ir import *
from mlir.dialects import arith, func, linalg, tensor
from mlir.dialects.linalg.opdsl.lang import *

T1 = TV.T1
T2 = TV.T2


@linalg_structured_op
def row_sum(A=TensorDef(T1, S.B, S.M, S.N), O=TensorDef(U, S.B, S.M, output=True)):
    domain(D.b, D.m, D.n)
    O[D.b, D.m] += TypeFn.cast_signed(U, A[D.b, D.m, D.n])


@linalg_structured_op
def row_max(A=TensorDef(T1, S.M, S.N), O=TensorDef(T1, S.M, output=True)):
    domain(D.m, D.n)
    O[D.m] = ReduceFn.max_signed[(D.n,)](A[D.m, D.n])


@linalg_structured_op
def exp_shift(A=TensorDef(T1, S.M, S.N), M=TensorDef(T1, S.M), O=TensorDef(T1, S.M, S.N, output=True)):
    domain(D.m, D.n)
    O[D.m, D.n] = UnaryFn.exp(A[D.m, D.n] - M[D.m])


@linalg_structured_op
def depthwise(
    I=TensorDef(T1, S.N, S.IH, S.IW, S.C),
    K=TensorDef(T2, S.KH, S.KW, S.C),
    O=TensorDef(U, S.N, S.OH, S.OW, S.C, output=True),
    strides=IndexAttrDef(S.SH, S.SW, default=[1, 1]),
    dilations=IndexAttrDef(S.DH, S.DW, default=[1, 1]),
):
    domain(D.n, D.oh, D.ow, D.kh, D.kw, D.c)
    O[D.n, D.oh, D.ow, D.c] += TypeFn.cast_signed(
        U, I[D.n, D.oh * S.SH + D.kh * S.DH, D.ow * S.SW + D.kw * S.DW, D.c]
    ) * TypeFn.cast_signed(U, K[D.kh, D.kw, D.c])


@linalg_structured_op
def scaled_copy(
    I=TensorDef(T1, S.M),
    scale=ScalarDef(T1),
    O=TensorDef(U, S.M, output=True),
    cast=TypeFnAttrDef(default=TypeFn.cast_signed),
):
    O[D.m] = cast(U, I[D.m] * scale)


@linalg_structured_op
def iota_2d(O=TensorDef(T1, S.M, S.N, output=True)):
    O[D.m, D.n] = (TypeFn.cast_signed(T1, index(D.m)) * TypeFn.cast_signed(T1, const(10))
                   + TypeFn.cast_signed(T1, index(D.n)))


with Context(), Location.unknown():
    module = Module.create()
    f32, i32, f16 = F32Type.get(), IntegerType.get_signless(32), F16Type.get()
    T = RankedTensorType.get
    with InsertionPoint(module.body):

        @func.FuncOp.from_py_func(T([2, 3, 4], f16), T([2, 3], f32))
        def sums(a, init):
            return row_sum(a, outs=[init])

        @func.FuncOp.from_py_func(T([4, 8], f32))
        def softmax_num(x):
            init = tensor.EmptyOp([4], f32)
            ninf = arith.constant(f32, float("-inf"))
            filled = linalg.fill(ninf, outs=[init])
            mx = row_max(x, outs=[filled])
            out = tensor.EmptyOp([4, 8], f32)
            return exp_shift(x, mx, outs=[out])

        @func.FuncOp.from_py_func(T([1, 9, 9, 3], f32), T([3, 3, 3], f32), T([1, 4, 4, 3], i32))
        def dw(i, k, o):
            return depthwise(i, k, outs=[o], strides=[2, 2])

        @func.FuncOp.from_py_func(T([8], f32), f32, T([8], i32))
        def scopy(i, s, o):
            return scaled_copy(i, s, outs=[o], cast=TypeFn.cast_unsigned)

        @func.FuncOp.from_py_func(T([3, 5], i32))
        def iota(o):
            return iota_2d(outs=[o])

        mref = MemRefType.get

        @func.FuncOp.from_py_func(mref([2, 3, 4], f32), mref([2, 3], f32))
        def sums_memref(a, o):
            row_sum(a, outs=[o])

        @func.FuncOp.from_py_func(T([1, 16, 16, 4], f32), T([3, 3, 4, 8], f32), T([1, 7, 7, 8], f32))
        def conv(i, k, o):
            return linalg.conv_2d_nhwc_hwcf(i, k, outs=[o], strides=[2, 2], dilations=[1, 1])

        @func.FuncOp.from_py_func(T([1, 8, 8, 2], f32), T([2, 2], f32), T([1, 4, 4, 2], f32))
        def pool(i, shape, o):
            return linalg.pooling_nhwc_max(i, shape, outs=[o], strides=[2, 2])

        @func.FuncOp.from_py_func(T([2, 4, 8], f32), T([2, 8, 3], f32), T([2, 4, 3], f32))
        def bmm(a, b, c):
            return linalg.batch_matmul(a, b, outs=[c])

        # the OpDSL's function enums through the linalg module, as `from mlir.dialects import
        # linalg` users write them
        @func.FuncOp.from_py_func(T([4, 8], IntegerType.get_signless(8)), T([8, 4], IntegerType.get_signless(8)), T([4, 4], f32))
        def mm_unsigned(a, b, c):
            return linalg.matmul(a, b, outs=[c], cast=linalg.TypeFn.cast_unsigned)

        @func.FuncOp.from_py_func(T([4], f32), T([4], f32), T([4], f32))
        def ew(a, b, c):
            m = linalg.elemwise_binary(a, b, outs=[c], fun=linalg.BinaryFn.max_signed)
            return linalg.elemwise_unary(m, outs=[c], fun=linalg.UnaryFn.log, emit_generic=True)

        @func.FuncOp.from_py_func(T([4, 8], f32), T([8, 4], f32))
        def transpose(a, b):
            return linalg.transpose(a, outs=[b], permutation=[1, 0])

        @func.FuncOp.from_py_func(T([8], f32), T([4, 8], f32))
        def bcast(a, b):
            return linalg.broadcast(a, outs=[b], dimensions=[0])

        @func.FuncOp.from_py_func(T([4, 8], f32), T([4, 8], f32))
        def generic_by_hand(a, b):
            ident = AffineMap.get_identity(2)
            par = Attribute.parse("#linalg.iterator_type<parallel>")
            g = linalg.GenericOp(
                [b.type], [a], [b],
                ArrayAttr.get([AffineMapAttr.get(ident), AffineMapAttr.get(ident)]),
                ArrayAttr.get([par, par]),
            )
            blk = g.regions[0].blocks.append(f32, f32)
            with InsertionPoint(blk):
                neg = arith.negf(blk.arguments[0])
                linalg.YieldOp([neg])
            return g.result

    print(module)
    print("verify:", module.operation.verify())
    names = {}

    def count(op):
        names[op.name] = names.get(op.name, 0) + 1
        return WalkResult.ADVANCE

    module.operation.walk(count)
    print(sorted(names.items()))
