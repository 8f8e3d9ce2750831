# A torch-FX-importer-like builder: a small graph of nodes (matmul, add, relu) lowered to
# func.func over ranked tensors with tensor.empty, linalg.fill, linalg.matmul and OpDSL
# elementwise ops, plus a second function built with func.FuncOp.from_py_func.
from mlir.ir import *
from mlir.dialects import arith, func, linalg, tensor
from mlir.dialects.linalg.opdsl.lang import *


# A graph as an FX GraphModule would give it: (name, op, args)
GRAPH = [
    ("x", "placeholder", (4, 8)),
    ("w", "placeholder", (8, 16)),
    ("b", "placeholder", (4, 16)),
    ("mm", "matmul", ("x", "w")),
    ("add", "add", ("mm", "b")),
    ("relu", "relu", ("add",)),
    ("out", "output", ("relu",)),
]


T1 = TV.T1


@linalg_structured_op
def relu_op(I=TensorDef(T1), O=TensorDef(T1, output=True)):
    O[None] = BinaryFn.max_signed(I[None], TypeFn.cast_signed(T1, const(0.0)))


def import_graph(module, graph):
    f32 = F32Type.get()
    placeholders = [n for n in graph if n[1] == "placeholder"]
    arg_types = [RankedTensorType.get(list(shape), f32) for _, _, shape in placeholders]
    # result type: matmul of x,w
    res_type = RankedTensorType.get([4, 16], f32)
    ftype = FunctionType.get(arg_types, [res_type])
    with InsertionPoint(module.body):
        fn = func.FuncOp("forward", ftype)
    fn.attributes["torch.debug_module_name"] = StringAttr.get("MyModule")
    entry = fn.add_entry_block()
    env = {}
    for (name, _, _), arg in zip(placeholders, entry.arguments):
        env[name] = arg
    with InsertionPoint(entry):
        for name, op, args in graph:
            if op == "placeholder":
                continue
            if op == "matmul":
                lhs, rhs = env[args[0]], env[args[1]]
                m = RankedTensorType(lhs.type).shape[0]
                n = RankedTensorType(rhs.type).shape[1]
                empty = tensor.EmptyOp([m, n], f32)
                zero = arith.ConstantOp(f32, 0.0)
                filled = linalg.fill(zero, outs=[empty])
                env[name] = linalg.matmul(lhs, rhs, outs=[filled])
            elif op == "add":
                a, b = env[args[0]], env[args[1]]
                init = tensor.EmptyOp(RankedTensorType(a.type).shape, f32)
                env[name] = linalg.add(a, b, outs=[init])
            elif op == "relu":
                a = env[args[0]]
                init = tensor.EmptyOp(RankedTensorType(a.type).shape, f32)
                env[name] = relu_op(a, outs=[init])
            elif op == "output":
                func.ReturnOp([env[args[0]]])
    return fn


with Context() as ctx, Location.unknown():
    module = Module.create()
    fn = import_graph(module, GRAPH)
    print("forward type:", fn.type)
    print("num args:", len(fn.arguments), [str(a.type) for a in fn.arguments])
    try:
        print("visibility:", fn.visibility)
    except KeyError as e:
        print("no visibility:", type(e).__name__, e)
    fn.attributes["sym_visibility"] = StringAttr.get("private")
    print("visibility:", fn.visibility)
    del fn.attributes["sym_visibility"]
    print("sym_name:", fn.sym_name.value, fn.name.value)

    f32 = F32Type.get()
    t = RankedTensorType.get([2, 2], f32)
    with InsertionPoint(module.body):

        @func.FuncOp.from_py_func(t, t, name="scaled_sum")
        def scaled_sum(a, b):
            init = tensor.EmptyOp([2, 2], f32)
            s = linalg.add(a, b, outs=[init])
            two = arith.ConstantOp(f32, 2.0)
            init2 = tensor.EmptyOp([2, 2], f32)
            filled = linalg.fill(two, outs=[init2])
            init3 = tensor.EmptyOp([2, 2], f32)
            return linalg.mul(s, filled, outs=[init3])

        @func.FuncOp.from_py_func(t)
        def two_results(a):
            init = tensor.EmptyOp([2, 2], f32)
            e = linalg.exp(a, outs=[init])
            return a, e

        @func.FuncOp.from_py_func(t, t)
        def generic_add(a, b):
            init = tensor.EmptyOp([2, 2], f32)
            return linalg.add(a, b, outs=[init], emit_generic=True)

    print("from_py_func op:", scaled_sum.func_op.name.value, scaled_sum.func_op.type)
    print("two_results type:", two_results.func_op.type)
    print(module)
    print("verify:", module.operation.verify())

    # walk the result, count ops by name
    counts = {}

    def count(op):
        counts[op.name] = counts.get(op.name, 0) + 1
        return WalkResult.ADVANCE

    module.operation.walk(count)
    for k in sorted(counts):
        print(k, counts[k])
