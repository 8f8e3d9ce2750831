# Building IR with the generic Operation.create only (as a frontend without generated op classes
# does): func.func with a region, multiple blocks, cf.br / cf.cond_br with successors and block
# arguments, unregistered ops, attributes and properties of every kind.
# e2e-mlir: 19 -- iterating op.attributes gives NamedAttributes on 19, names on MLIR 22 (a Mapping)
from mlir.ir import *

with Context() as ctx, Location.unknown():
    ctx.allow_unregistered_dialects = True
    i32 = IntegerType.get_signless(32)
    i1 = IntegerType.get_signless(1)
    module = Module.create()
    ftype = FunctionType.get([i32, i32], [i32])
    with InsertionPoint(module.body):
        fn = Operation.create(
            "func.func",
            attributes={
                "sym_name": StringAttr.get("select_max"),
                "function_type": TypeAttr.get(ftype),
            },
            regions=1,
        )
    region = fn.regions[0]
    entry = region.blocks.append(i32, i32)
    then_b = entry.create_after()
    else_b = then_b.create_after()
    exit_b = region.blocks.append(i32)
    print("blocks:", len(region.blocks))

    with InsertionPoint(entry):
        a, b = entry.arguments
        cmp = Operation.create(
            "arith.cmpi",
            results=[i1],
            operands=[a, b],
            attributes={"predicate": IntegerAttr.get(IntegerType.get_signless(64), 4)},
        )
        Operation.create("cf.cond_br", operands=[cmp.result], successors=[then_b, else_b],
                         attributes={"operandSegmentSizes": DenseI32ArrayAttr.get([1, 0, 0])})
    with InsertionPoint(then_b):
        Operation.create("cf.br", operands=[a], successors=[exit_b])
    with InsertionPoint(else_b):
        Operation.create("cf.br", operands=[b], successors=[exit_b])
    with InsertionPoint(exit_b):
        note = Operation.create("my.note", results=[i32], operands=[exit_b.arguments[0]],
                                attributes={"tag": StringAttr.get("max"), "weights": ArrayAttr.get([IntegerAttr.get(i32, 1), FloatAttr.get_f32(0.5)])})
        Operation.create("func.return", operands=[note.result])

    print(module)
    print("verify:", module.operation.verify())
    br = entry.operations[1]
    print("cond_br:", br.name, "successors:", len(br.successors))
    for s in br.successors:
        print("  succ", s == then_b, s == else_b, len(s.arguments))
    print("then succ arg count:", len(then_b.operations[0].successors[0].arguments))
    print("exit preds use count:", len(list(exit_b.arguments[0].uses)))
    print("note attrs:", len(note.attributes))
    for na in note.attributes:
        print("  ", na.name, na.attr)
    print("tag" in note.attributes, "nope" in note.attributes)
    print("owner of then block:", then_b.owner.name, then_b.region == region)
    print("block index via iteration:", [i for i, blk in enumerate(region.blocks) if blk == exit_b])

    # A second function: an unregistered op with two regions and results inferred by nobody.
    with InsertionPoint(module.body):
        f2 = Operation.create("func.func", attributes={
            "sym_name": StringAttr.get("regions"),
            "function_type": TypeAttr.get(FunctionType.get([], [])),
            "sym_visibility": StringAttr.get("private")}, regions=1)
    b0 = f2.regions[0].blocks.append()
    with InsertionPoint(b0):
        multi = Operation.create("test.multi", results=[i32, i32], regions=2,
                                 attributes={"unit": UnitAttr.get()})
        r0 = multi.regions[0].blocks.append(i32)
        r1 = multi.regions[1].blocks.append()
        with InsertionPoint(r0):
            Operation.create("test.yield", operands=[r0.arguments[0]])
        with InsertionPoint(r1):
            Operation.create("test.yield")
        Operation.create("test.use", operands=list(multi.results))
        Operation.create("func.return")
    print(f2)
    print("multi results:", len(multi.results), [r.get_name() for r in multi.results])
    print("result owner is multi:", multi.results[1].owner == multi)
    print("region count:", len(multi.regions), [len(r.blocks) for r in multi.regions])
    print("generic form:")
    print(multi.get_asm(print_generic_op_form=True))
    print("verify all:", module.operation.verify())
    # Block.create_at_start and block arguments manipulation
    extra = Block.create_at_start(f2.regions[0], [i32, i1])
    print("blocks now:", len(f2.regions[0].blocks), [len(b.arguments) for b in f2.regions[0].blocks])
    arg = extra.add_argument(i32, Location.unknown())
    print("added arg:", BlockArgument(arg).arg_number, arg.type, len(extra.arguments))
    extra.erase_argument(0)
    print("after erase:", [str(a.type) for a in extra.arguments])
    extra.append(Operation.create("test.term"))
    print(f2.regions[0].blocks[0])
