"""typed_ok.py's kind of program with mistakes mypy finds through tether's stubs: each line marked
`# E: <code>` is exactly one error of that mypy error code, and mypy reports nothing else
(test_stubs.py). Not meant to run."""

from tether.dialects import arith, func
from tether.ir import (Block, Context, FunctionType, InsertionPoint, IntegerAttr, IntegerType,
                       Location, Module, OpView, Type, Value, WalkResult)
from tether.passmanager import PassManager


def build(i32: Type) -> func.FuncOp:
    fn = func.FuncOp("f", ([i32], [i32]))
    entry: Block = fn.add_entry_block()
    with InsertionPoint(entry):
        arith.AddIOp(entry.arguments[0], entry.arguments[0])
    return entry  # E: return-value


def width_of(value: Value) -> int:
    return int(value.type.width)  # E: attr-defined


def main() -> None:
    with Context(), Location.unknown():
        i32 = IntegerType.get_signless("32")  # E: arg-type
        module = Module.parse("module {}", Context(), 3)  # E: call-arg
        fn = build(i32)
        name: int = fn.operation.name  # E: assignment
        attr = IntegerAttr.get(i32, 7)
        label = attr.value + "!"  # E: operator
        ip = InsertionPoint(42)  # E: call-overload
        fn_type = FunctionType.get([i32], i32)  # E: arg-type
        PassManager.parse("builtin.module(cse)").run("module")  # E: arg-type
        module.operation.walk(lambda op: None, walk_order=WalkResult.SKIP)  # E: arg-type
        first: OpView = module.body.operations[0]
        first.operation.erase(True)  # E: call-arg
        print(name, label, ip, fn_type, first, width_of(fn.arguments[0]))
