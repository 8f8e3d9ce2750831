# A small Pythonic DSL over mlir.extras: types from mlir.extras.types (T.i32(), T.tensor(...),
# T.memref(...)), loops with scf.for_ / affine.for_ generators and iter_args, tensor.generate via
# region_op, arith.constant with Python values, func.FuncOp with body_builder, func.CallOp forms.
# e2e-mlir: 19 -- an OpView passed where MLIR 22's generated builders want a Value (AffineLoadOp)
from mlir.ir import *
import mlir.extras.types as T
from mlir.dialects import affine, arith, func, scf, tensor

with Context(), Location.unknown():
    print(T.i32(), T.i(7), T.si8(), T.ui64(), T.bool(), T.index(), T.f16(), T.bf16(), T.f64(), T.none())
    print(T.tensor(2, 3, T.f32()), T.tensor(T.f32()), T.tensor(4, element_type=T.i8()))
    print(T.tensor(S := ShapedType.get_dynamic_size(), 4, T.f32(), encoding="enc"))
    print(T.memref(8, T.f32()), T.memref(2, 2, T.f32(), memory_space=1), T.memref(T.f32()))
    print(T.memref(4, 4, T.f32(), layout=StridedLayoutAttr.get(0, [8, 1])))
    print(T.vector(4, T.f32()), T.vector(2, 8, T.f32(), scalable=[False, True]))
    print(T.complex(T.f32()), T.opaque("foo", "bar"), T.tuple(T.i32(), T.f32()))
    print(T.function(inputs=[T.i32()], results=[T.f32(), T.index()]))
    print(T.f8E5M2(), T.f8E4M3FN())
    try:
        T.tensor(2, 3)
    except ValueError as e:
        print("tensor without element type:", e)
    try:
        T.tensor(T.f32(), encoding="enc")
    except ValueError as e:
        print("unranked with encoding:", e)

    module = Module.create()
    with InsertionPoint(module.body):
        # scf.for_ with one iter_arg: sum 0..n
        @func.FuncOp.from_py_func(T.index())
        def triangle(n):
            zero = arith.constant(T.index(), 0)
            for i, acc, res in scf.for_(0, n, 1, iter_args=[zero]):
                nxt = arith.addi(acc, i)
                scf.yield_([nxt])
            return res

        # two iter_args
        @func.FuncOp.from_py_func(T.i32())
        def fib(n):
            a0 = arith.constant(T.i32(), 0)
            b0 = arith.constant(T.i32(), 1)
            for i, (a, b), results in scf.for_(0, 10, iter_args=[a0, b0]):
                scf.yield_([b, arith.addi(a, b)])
            return results[0]

        # affine.for_ over a memref
        @func.FuncOp.from_py_func(T.memref(16, T.f32()))
        def scale(buf):
            two = arith.constant(T.f32(), 2.0)
            for i in affine.for_(0, 16, 2):
                v = affine.AffineLoadOp(T.f32(), buf, indices=[i], map=AffineMap.get_identity(1))
                affine.AffineStoreOp(arith.mulf(v, two), buf, indices=[i], map=AffineMap.get_identity(1))
                affine.AffineYieldOp([])

        # tensor.generate through region_op
        @func.FuncOp.from_py_func(T.index())
        def iota(n):
            @tensor.generate(T.tensor(ShapedType.get_dynamic_size(), 3, T.index()), dynamic_extents=[n])
            def g(i: T.index(), j: T.index()):
                return arith.addi(i, j)

            return g

        # a function built with body_builder, then called three ways
        callee = func.FuncOp("double", ([T.f32()], [T.f32()]), visibility="private")
        with InsertionPoint(callee.add_entry_block()):
            func.ReturnOp([arith.addf(callee.arguments[0], callee.arguments[0])])

        @func.FuncOp.from_py_func(T.f32())
        def caller(x):
            a = func.CallOp(callee, [x])
            b = func.CallOp([T.f32()], "double", [a.result])
            c = func.CallOp([T.f32()], FlatSymbolRefAttr.get("double"), [b.result])
            return c.result

        # an scf.if without else and with results
        @func.FuncOp.from_py_func(T.i1() if hasattr(T, "i1") else T.bool(), T.f32())
        def select(c, x):
            if_op = scf.IfOp(c, [T.f32()], hasElse=True)
            with InsertionPoint(if_op.then_block):
                scf.YieldOp([x])
            with InsertionPoint(if_op.else_block):
                scf.YieldOp([arith.negf(x)])
            side = scf.IfOp(c)
            with InsertionPoint(side.then_block):
                scf.YieldOp([])
            return if_op.result

        # arith.constant with Python values of many types
        @func.FuncOp.from_py_func()
        def constants():
            vals = [
                arith.constant(T.i64(), 123456789012),
                arith.constant(T.f64(), 0.1),
                arith.constant(T.index(), -1),
                arith.constant(T.i1() if hasattr(T, "i1") else T.bool(), 1),
                arith.constant(T.tensor(2, T.i32()), DenseElementsAttr.get_splat(T.tensor(2, T.i32()), IntegerAttr.get(T.i32(), 5))),
                arith.ConstantOp.create_index(42).result,
            ]
            for v in vals:
                cst = v.owner.opview
                try:
                    lit = cst.literal_value
                except ValueError as e:
                    lit = "ValueError: %s" % e
                print("constant:", type(cst).__name__, cst.value, type(cst.value).__name__, lit)
            return

    print(module)
    print("verify:", module.operation.verify())
    print("fib type:", fib.func_op.type, "triangle args:", [str(a.type) for a in triangle.func_op.arguments])
