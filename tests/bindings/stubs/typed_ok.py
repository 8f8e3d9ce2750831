"""A typed program in upstream `mlir` style, on tether: mypy accepts it with tether's stubs (no
error, under --strict), and it runs (test_stubs.py does both, on the MLIR 19 and 22 builds).

It builds a module with func and arith through tether.ir and tether.dialects, parses one, walks
operations, reads and writes attributes, makes types and runs a pass pipeline.
"""

from tether.dialects import arith, func
from tether.ir import (ArrayAttr, Attribute, Block, BlockArgument, Context, DictAttr, F32Type,
                       FloatAttr, FunctionType, IndexType, InsertionPoint, IntegerAttr,
                       IntegerType, Location, MLIRError, Module, Operation, OpResult, OpView,
                       RankedTensorType, ShapedType, StringAttr, SymbolTable, Type, TypeAttr,
                       UnitAttr, Value, WalkResult)
from tether.passmanager import PassManager

SOURCE = """
func.func @scale(%x: i32, %y: i32) -> i32 {
  %c2 = arith.constant 2 : i32
  %0 = arith.muli %x, %c2 : i32
  %1 = arith.addi %0, %y : i32
  %2 = arith.addi %1, %y : i32
  return %2 : i32
}
"""


def build_add_mul(i32: Type) -> func.FuncOp:
    """func.func @add_mul(a, b) -> (a + b) * 3, through the op classes."""
    fn = func.FuncOp("add_mul", ([i32, i32], [i32]))
    entry: Block = fn.add_entry_block()
    with InsertionPoint(entry):
        a: BlockArgument = entry.arguments[0]
        b: BlockArgument = entry.arguments[1]
        total = arith.AddIOp(a, b)
        three = arith.ConstantOp(i32, 3)
        product = arith.MulIOp(total.result, three.result)
        func.ReturnOp([product.result])
    return fn


def op_histogram(root: Operation) -> dict[str, int]:
    counts: dict[str, int] = {}

    def visit(op: Operation) -> WalkResult:
        counts[op.name] = counts.get(op.name, 0) + 1
        return WalkResult.ADVANCE

    root.walk(visit)
    return counts


def integer_width(value: Value) -> int:
    return IntegerType(value.type).width


def constant_values(block: Block) -> list[int]:
    out: list[int] = []
    for op in block.operations:
        if op.operation.name == "arith.constant":
            out.append(IntegerAttr(op.attributes["value"]).value)
    return out


def first_result(op: OpView) -> OpResult:
    return op.results[0]


def main() -> None:
    with Context() as ctx, Location.unknown():
        ctx.allow_unregistered_dialects = False
        i32 = IntegerType.get_signless(32)
        f32: Type = F32Type.get()
        index: Type = IndexType.get()

        # Build a module with the op classes.
        module = Module.create()
        with InsertionPoint(module.body):
            add_mul = build_add_mul(i32)
        add_mul.attributes["llvm.emit_c_interface"] = UnitAttr.get()
        assert module.operation.verify()
        fn_type: FunctionType = add_mul.type
        assert [str(t) for t in fn_type.inputs] == ["i32", "i32"]
        assert add_mul.name.value == "add_mul"
        assert integer_width(add_mul.arguments[0]) == 32
        assert constant_values(add_mul.entry_block) == [3]

        # Parse text, walk it, read its attributes and types.
        parsed = Module.parse(SOURCE)
        histogram = op_histogram(parsed.operation)
        assert histogram["arith.addi"] == 2 and histogram["func.func"] == 1
        scale: OpView = parsed.body.operations[0]
        sym_name = StringAttr(scale.attributes["sym_name"])
        assert sym_name.value == "scale"
        scale_type = FunctionType(TypeAttr(scale.attributes["function_type"]).value)
        assert len(scale_type.results) == 1
        region_ops = [op.operation.name for op in scale.regions[0].blocks[0]]
        assert region_ops[-1] == "func.return"
        mul = parsed.body.operations[0].regions[0].blocks[0].operations[1]
        assert first_result(mul).result_number == 0
        users = [use.owner.operation.name for use in mul.result.uses]
        assert users == ["arith.addi"]

        # Attributes and types built from Python values.
        attrs: dict[str, Attribute] = {
            "count": IntegerAttr.get(i32, 42),
            "ratio": FloatAttr.get(f32, 0.5),
            "names": ArrayAttr.get([StringAttr.get("a"), StringAttr.get("b")]),
        }
        table = DictAttr.get(attrs)
        assert IntegerAttr(table["count"]).value == 42
        assert len(ArrayAttr(table["names"])) == 2
        tensor = RankedTensorType.get([4, ShapedType.get_dynamic_size()], f32)
        assert tensor.rank == 2 and not tensor.has_static_shape
        assert tensor.element_type == f32 and str(index) == "index"
        assert Type.parse("i32") == i32

        # The symbol table and a pass pipeline.
        symbols = SymbolTable(parsed.operation)
        assert "scale" in symbols
        pm = PassManager.parse("builtin.module(canonicalize,cse)")
        pm.run(parsed.operation)
        after = op_histogram(parsed.operation)
        assert after.get("arith.addi", 0) <= histogram["arith.addi"]

        # Errors carry their diagnostics.
        try:
            Module.parse("func.func @broken(")
        except MLIRError as e:
            message: str = e.message
            assert message
        else:
            raise AssertionError("no MLIRError")


if __name__ == "__main__":
    main()
    print("typed_ok: ok")
