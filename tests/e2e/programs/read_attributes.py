# Reading attributes of parsed IR, as a model importer/exporter round-trips weights: dense
# elements through numpy (splat, int, float, bool, i8/i16/i64/f16/f64/bf16), DictAttr, ArrayAttr
# iteration, FlatSymbolRefAttr / SymbolRefAttr, DenseArray attrs, resources, SymbolTable queries.
# e2e-mlir: 19 -- static Attribute.isinstance, removed in MLIR 22
import numpy as np
from mlir.ir import *

SRC = """
module attributes {torch.meta = {version = 3 : i64, names = ["conv", "fc"], scale = 2.5 : f32, enabled = true}} {
  func.func private @callee(%a: tensor<2x3xf32>) -> tensor<2x3xf32>
  func.func @main() -> tensor<2x3xf32> attributes {weights = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>,
      ints = dense<[1, -2, 3, -4]> : tensor<4xi64>, bools = dense<[true, false, true]> : tensor<3xi1>,
      splat = dense<7> : tensor<2x2xi32>, halves = dense<[0.5, 1.5]> : tensor<2xf16>,
      bytes = dense<[1, 2, 255]> : tensor<3xui8>, i16s = dense<[-1, 300]> : tensor<2xi16>,
      f64s = dense<[1.0e+100, -2.5]> : tensor<2xf64>,
      arr_i64 = array<i64: 1, 2, 3>, arr_f32 = array<f32: 0.5, 1.0>, arr_bool = array<i1: true, false>,
      callee_ref = @callee, nested_ref = @outer::@inner, strs = ["a", "bc"], ty = tensor<?x4xi8>,
      int_attr = 42 : i8, uint_attr = 200 : ui8, float_attr = 3.25 : f64, unit_attr, idx = 5 : index,
      opaque = #my.thing<"x">, loc_attr = "s"} {
    %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
    %r = call @callee(%w) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %r : tensor<2x3xf32>
  }
}
"""

with Context() as ctx, Location.unknown():
    ctx.allow_unregistered_dialects = True
    module = Module.parse(SRC)
    meta = DictAttr(module.operation.attributes["torch.meta"])
    print("meta len:", len(meta), "version" in meta, "missing" in meta)
    print("version:", IntegerAttr(meta["version"]).value)
    print("names:", [StringAttr(s).value for s in ArrayAttr(meta["names"])])
    print("scale:", FloatAttr(meta["scale"]).value)
    print("enabled:", BoolAttr(meta["enabled"]).value)
    for i in range(len(meta)):
        na = meta[i]
        print("  meta[%d] %s = %s" % (i, na.name, na.attr))

    table = SymbolTable(module.operation)
    main = table["main"]
    callee = table["callee"]
    print("main:", main.name, type(main).__name__, "callee" in table, "nope" in table)
    print("callee visibility:", SymbolTable.get_visibility(callee))
    print("symbol name:", SymbolTable.get_symbol_name(callee))
    attrs = main.attributes

    w = DenseElementsAttr(attrs["weights"])
    arr = np.array(w)
    print("weights:", arr.dtype, arr.shape, arr.tolist(), w.is_splat, len(w))
    fp = DenseFPElementsAttr(attrs["weights"])
    print("fp[4]:", fp[4], w.type, w.type.element_type)
    ints = DenseIntElementsAttr(attrs["ints"])
    print("ints:", np.array(ints).dtype, np.array(ints).tolist(), [ints[i] for i in range(len(ints))])
    bools = DenseElementsAttr(attrs["bools"])
    print("bools:", bools, bools.type.element_type, len(bools))
    splat = DenseElementsAttr(attrs["splat"])
    print("splat:", splat.is_splat, splat.get_splat_value(), splat.type)
    print("halves:", np.array(DenseElementsAttr(attrs["halves"])).tolist(), np.array(DenseElementsAttr(attrs["halves"])).dtype)
    print("bytes:", np.array(DenseElementsAttr(attrs["bytes"])).tolist(), np.array(DenseElementsAttr(attrs["bytes"])).dtype)
    print("i16s:", np.array(DenseElementsAttr(attrs["i16s"])).tolist())
    print("f64s:", np.array(DenseElementsAttr(attrs["f64s"])).tolist())
    print("arr_i64:", list(DenseI64ArrayAttr(attrs["arr_i64"])), len(DenseI64ArrayAttr(attrs["arr_i64"])))
    print("arr_f32:", list(DenseF32ArrayAttr(attrs["arr_f32"])))
    print("arr_bool:", list(DenseBoolArrayAttr(attrs["arr_bool"])))
    ref = FlatSymbolRefAttr(attrs["callee_ref"])
    print("callee_ref:", ref.value, ref)
    nested = SymbolRefAttr(attrs["nested_ref"])
    print("nested_ref:", nested.value, nested)
    print("strs:", [StringAttr(s).value for s in ArrayAttr(attrs["strs"])], len(ArrayAttr(attrs["strs"])))
    ty = TypeAttr(attrs["ty"]).value
    print("ty:", ty, RankedTensorType(ty).shape, RankedTensorType(ty).is_dynamic_dim(0))
    print("int_attr:", IntegerAttr(attrs["int_attr"]).value, IntegerAttr(attrs["int_attr"]).type)
    print("uint_attr:", IntegerAttr(attrs["uint_attr"]).value)
    print("float_attr:", FloatAttr(attrs["float_attr"]).value, float(FloatAttr(attrs["float_attr"])))
    print("unit_attr:", UnitAttr.isinstance(attrs["unit_attr"]), attrs["unit_attr"])
    print("idx:", int(IntegerAttr(attrs["idx"])), IntegerAttr(attrs["idx"]).type)
    print("opaque:", attrs["opaque"], OpaqueAttr.isinstance(attrs["opaque"]))
    print("isinstance checks:", DenseIntElementsAttr.isinstance(attrs["weights"]), DenseFPElementsAttr.isinstance(attrs["weights"]), ArrayAttr.isinstance(attrs["strs"]))
    # typed downcast via the attribute's own class (maybe_downcast)
    for name in ["weights", "ints", "strs", "callee_ref", "int_attr", "float_attr", "arr_i64", "ty", "unit_attr"]:
        print("  %s -> %s" % (name, type(attrs[name]).__name__))
    cst = main.regions[0].blocks[0].operations[0]
    val = cst.attributes["value"]
    print("constant value equal weights:", val == attrs["weights"], type(val).__name__)
    print("numpy sum:", float(np.array(val).sum()))

    # building attributes from numpy and reading them back
    data = np.arange(12, dtype=np.int32).reshape(3, 4)
    built = DenseElementsAttr.get(data)
    print("built:", built, built.type)
    back = np.array(built)
    print("roundtrip equal:", bool((back == data).all()), back.dtype)
    fdata = np.array([[1.5, -2.0]], dtype=np.float32)
    fbuilt = DenseElementsAttr.get(fdata, type=F32Type.get())
    print("fbuilt:", fbuilt)
    splat_built = DenseElementsAttr.get_splat(RankedTensorType.get([2, 2], F32Type.get()), FloatAttr.get_f32(0.25))
    print("splat built:", splat_built, splat_built.is_splat)
    try:
        DenseElementsAttr.get(np.array([True, False, True]))
    except ValueError as e:
        print("bool array refused:", e)
    packed = np.packbits(np.array([True, False, True]), bitorder="little")
    bool_built = DenseElementsAttr.get(packed, type=IntegerType.get_signless(1), shape=[3])
    print("bool built:", bool_built)
    # DictAttr.get / ArrayAttr concatenation
    d = DictAttr.get({"a": IntegerAttr.get(IntegerType.get_signless(32), 1), "b": StringAttr.get("x")})
    print("dict:", d, len(d), d["b"])
    a2 = ArrayAttr.get([StringAttr.get("p")]) + [StringAttr.get("q")]
    print("array concat:", a2)
    # SymbolTable mutation: rename, insert, erase, visibility
    SymbolTable.set_symbol_name(callee, "callee2")
    print("renamed:", SymbolTable.get_symbol_name(callee), "callee2" in SymbolTable(module.operation))
    SymbolTable.replace_all_symbol_uses("callee", "callee2", module.operation)
    try:
        SymbolTable.set_visibility(main, "private")
    except ValueError as e:
        print("set_visibility refused:", e)
    SymbolTable.set_visibility(callee, "nested")
    print("callee visibility:", SymbolTable.get_visibility(callee))
    print(module.body.operations[1].regions[0].blocks[0].operations[1])
    found = []

    def cb(op, all_uses_visible):
        found.append((op.name, all_uses_visible))

    SymbolTable.walk_symbol_tables(module.operation, True, cb)
    print("symbol tables:", found)
