# A frontend's codegen context: a class that owns the module, a symbol->value environment keyed
# by names and by Value (hashing/equality), op result/operand navigation, value names through
# AsmState, printing options (generic form, local scope, large elements, debug info), printing to
# a file, bytecode round trip, Module.parse of bytes, Value.set_type, owner checks.
import io

import numpy as np
from mlir.ir import *
from mlir.dialects import arith, func


class CodegenContext:
    def __init__(self):
        self.ctx = Context()
        self.loc = Location.unknown(self.ctx)
        self.module = Module.create(self.loc)
        self.env = {}
        self.value_names = {}

    def function(self, name, args, results):
        with self.ctx, self.loc:
            with InsertionPoint(self.module.body):
                f = func.FuncOp(name, (args, results))
            entry = f.add_entry_block()
        return f, entry

    def bind(self, name, value):
        self.env[name] = value
        self.value_names[value] = name
        return value


cg = CodegenContext()
with cg.ctx, cg.loc:
    i64 = IntegerType.get_signless(64)
    f32 = F32Type.get()
    f, entry = cg.function("compute", [i64, i64], [i64])
    with InsertionPoint(entry):
        a = cg.bind("a", entry.arguments[0])
        b = cg.bind("b", entry.arguments[1])
        s = cg.bind("s", arith.addi(a, b))
        p = cg.bind("p", arith.muli(s, a))
        q = cg.bind("q", arith.subi(p, b))
        func.ReturnOp([q])

    print("env:", sorted(cg.env))
    print("reverse lookup:", cg.value_names[s], cg.value_names[entry.arguments[0]])
    print("value equality:", s == entry.operations[0].result, s == p, hash(s) == hash(entry.operations[0].result))
    print("is OpResult:", isinstance(s, OpResult), isinstance(a, BlockArgument), isinstance(s, Value))
    print("owner:", s.owner.name, type(s.owner).__name__, a.owner == entry)
    print("result_number / arg_number:", OpResult(s).result_number, BlockArgument(b).arg_number)
    print("str(value):", str(s))
    state = AsmState(f)
    print("names via AsmState:", [v.get_name(state) for v in (a, b, s, p, q)])
    print("names with use_local_scope:", s.get_name(use_local_scope=True), a.get_name())
    print("as operand:", s.get_name(), q.owner.operands[0].get_name())
    op = q.owner
    print("operands:", len(op.operands), [o.get_name() for o in op.operands])
    print("results types:", [str(t) for t in op.results.types])
    print("slices:", [v.get_name() for v in entry.arguments[0:2]], [v.get_name() for v in entry.arguments[-1:]])
    print("operation of result:", q.owner.operation.name, q.owner.operation.opview == q.owner)
    print("uses of a:", sorted((u.owner.name, u.operand_number) for u in a.uses))
    print("context identity:", f.context is cg.ctx, s.type.context is cg.ctx, s.owner.context is cg.ctx)

    # retype a block argument and see it printed
    g, gentry = cg.function("retype", [i64], [])
    with InsertionPoint(gentry):
        func.ReturnOp([])
    gentry.arguments[0].set_type(IntegerType.get_signless(32))
    print("verifies after set_type:", end=" ")
    try:
        print(g.verify())
    except MLIRError as e:
        print("no:", e.error_diagnostics[0].message)
    g.attributes["function_type"] = TypeAttr.get(FunctionType.get([IntegerType.get_signless(32)], []))
    print(g)

    # printing options
    with InsertionPoint(cg.module.body):
        cf = func.FuncOp("big", ([], [RankedTensorType.get([64], f32)]))
    with InsertionPoint(cf.add_entry_block()):
        big = arith.ConstantOp(RankedTensorType.get([64], f32), DenseElementsAttr.get(np.arange(64, dtype=np.float32)))
        func.ReturnOp([big.result])
    print(cf.get_asm(large_elements_limit=4))
    print(cf.get_asm(print_generic_op_form=True, large_elements_limit=4))
    print(big.get_asm(use_local_scope=True, large_elements_limit=2))
    print(entry.operations[1].get_asm(use_local_scope=True))
    print(cg.module.operation.get_asm(assume_verified=True, large_elements_limit=1))
    buf = io.StringIO()
    f.print(file=buf)
    print("printed to file:", len(buf.getvalue().splitlines()), "lines")
    buf2 = io.StringIO()
    f.operation.print(large_elements_limit=2, enable_debug_info=True, file=buf2)
    print(buf2.getvalue())
    print("binary asm:", type(f.get_asm(binary=True)).__name__)

    # bytecode round trip
    bc = io.BytesIO()
    cg.module.operation.write_bytecode(bc)
    data = bc.getvalue()
    print("bytecode magic:", data[:4])
    back = Module.parse(data)
    print("bytecode round trip equal:", str(back) == str(cg.module))
    print("parsed from bytes:", Module.parse(b"func.func @x() { return }").body.operations[0].sym_name)
    print("str of module equals str of op:", str(cg.module) == str(cg.module.operation))
