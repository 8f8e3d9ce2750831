# A TFLite-to-TOSA-like importer: a flat list of layers becomes tosa.const / conv2d / add / clamp /
# reshape / matmul / reduce_sum ops built with the generated op classes and their attributes,
# then lowered with the tosa-to-linalg pipelines; the op classes' accessors are read back.
# e2e-mlir: 19 -- tosa.Conv2DOp without MLIR 22's stride, dilation and acc_type
import numpy as np
from mlir.ir import *
from mlir.dialects import func, tosa
from mlir.passmanager import PassManager

LAYERS = [
    ("conv", {"out_channels": 4, "kernel": (3, 3), "stride": (1, 1), "pad": (1, 1, 1, 1)}),
    ("bias_add", {}),
    ("relu6", {}),
    ("reshape", {"shape": (1, 8 * 8 * 4)}),
    ("reduce_sum", {"axis": 1}),
]


def tensor(shape, et):
    return RankedTensorType.get(list(shape), et)


def i64_array(vals):
    return DenseI64ArrayAttr.get(list(vals))


with Context(), Location.unknown():
    f32 = F32Type.get()
    module = Module.create()
    in_type = tensor((1, 8, 8, 3), f32)
    with InsertionPoint(module.body):
        fn = func.FuncOp("net", ([in_type], []))
        entry = fn.add_entry_block()
    rng = np.random.RandomState(0)
    with InsertionPoint(entry):
        x = entry.arguments[0]
        shape = [1, 8, 8, 3]
        weights = None
        for kind, cfg in LAYERS:
            if kind == "conv":
                oc = cfg["out_channels"]
                kh, kw = cfg["kernel"]
                w = (rng.randint(-3, 4, size=(oc, kh, kw, shape[3])) / 2.0).astype(np.float32)
                wt = tosa.ConstOp(DenseElementsAttr.get(w))
                bias = tosa.ConstOp(DenseElementsAttr.get(np.zeros(oc, dtype=np.float32)))
                shape = [1, 8, 8, oc]
                x = tosa.Conv2DOp(tensor(shape, f32), x, wt, bias,
                                  i64_array(cfg["pad"]), i64_array(cfg["stride"]), i64_array([1, 1])).result
                weights = wt
            elif kind == "bias_add":
                b = tosa.ConstOp(DenseElementsAttr.get(np.full((1, 1, 1, shape[3]), 0.5, dtype=np.float32)))
                x = tosa.AddOp(tensor(shape, f32), x, b).result
            elif kind == "relu6":
                x = tosa.ClampOp(tensor(shape, f32), x,
                                 IntegerAttr.get(IntegerType.get_signless(64), 0),
                                 IntegerAttr.get(IntegerType.get_signless(64), 6),
                                 FloatAttr.get_f32(0.0), FloatAttr.get_f32(6.0)).result
            elif kind == "reshape":
                shape = list(cfg["shape"])
                x = tosa.ReshapeOp(x, i64_array(shape)).result
            elif kind == "reduce_sum":
                shape = [shape[0], 1]
                x = tosa.ReduceSumOp(x, IntegerAttr.get(IntegerType.get_signless(32), cfg["axis"])).result
        func.ReturnOp([x])
    fn.attributes["function_type"] = TypeAttr.get(FunctionType.get([in_type], [x.type]))
    print(module.operation.get_asm(large_elements_limit=8))
    print("verify:", module.operation.verify())
    conv = [o for o in entry.operations if o.name == "tosa.conv2d"][0]
    print("conv class:", type(conv).__name__, conv.pad, conv.stride, conv.dilation)
    print("conv operands:", conv.input.type, conv.weight.type, conv.bias.type, conv.output.type)
    print("weights sum:", float(np.array(weights.value).sum()))
    clamp = [o for o in entry.operations if o.name == "tosa.clamp"][0]
    print("clamp:", clamp.min_int, clamp.max_int, clamp.min_fp, clamp.max_fp)
    red = [o for o in entry.operations if o.name == "tosa.reduce_sum"][0]
    print("reduce axis:", red.axis, IntegerAttr(red.axis).value)

    pm = PassManager.parse(
        "builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize)"
    )
    pm.run(module.operation)
    kinds = {}

    def count(op):
        kinds[op.name] = kinds.get(op.name, 0) + 1
        return WalkResult.ADVANCE

    module.operation.walk(count)
    print("after lowering:", sorted(kinds.items()))
    print("still verifies:", module.operation.verify())
