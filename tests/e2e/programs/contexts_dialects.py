# Context and dialect management as a multi-session tool does: several contexts, Context.current,
# dialect descriptors and namespaces, registered-operation checks, unregistered dialects,
# DialectRegistry, op classes and OPERATION_NAME, OpView casting, build_generic, builtin.ModuleOp,
# isinstance checks on op views.
from mlir.ir import *
from mlir.dialects import arith, func, scf, builtin

c1 = Context()
c2 = Context()
with c1:
    print("current is c1:", Context.current is c1)
    with c2:
        print("nested current is c2:", Context.current is c2)
    print("restored:", Context.current is c1)
print("no current context:", Context.current)

with Context() as ctx, Location.unknown():
    print("arith registered:", ctx.is_registered_operation("arith.addi"), ctx.is_registered_operation("foo.bar"))
    d = ctx.dialects["arith"]
    print("dialect namespace:", d.descriptor.namespace)
    print("attr access:", ctx.dialects.func.descriptor.namespace, ctx.get_dialect_descriptor("scf").namespace)
    try:
        ctx.dialects["nonexistent"]
    except IndexError as e:
        print("unknown dialect:", type(e).__name__, e)
    print("allow unregistered default:", ctx.allow_unregistered_dialects)
    try:
        Module.parse('"foo.op"() : () -> ()')
    except MLIRError as e:
        print("unregistered refused:", e.error_diagnostics[0].message.splitlines()[0])
    ctx.allow_unregistered_dialects = True
    m = Module.parse('"foo.op"() {x = 1} : () -> ()')
    print("unregistered accepted:", m.body.operations[0].name, type(m.body.operations[0]).__name__)
    reg = DialectRegistry()
    ctx.append_dialect_registry(reg)
    ctx.load_all_available_dialects()
    print("num loaded > 10:", ctx._get_num_loaded_dialects() if hasattr(ctx, "_get_num_loaded_dialects") else True)

    # op classes
    print("OPERATION_NAME:", arith.AddIOp.OPERATION_NAME, func.FuncOp.OPERATION_NAME, scf.ForOp.OPERATION_NAME)
    print("_ODS_REGIONS:", func.FuncOp._ODS_REGIONS, scf.IfOp._ODS_REGIONS)
    i32 = IntegerType.get_signless(32)
    m2 = Module.create()
    with InsertionPoint(m2.body):
        c = arith.ConstantOp(i32, 3)
        a = arith.AddIOp(c, c)
        raw = Operation.create("arith.muli", results=[i32], operands=[a.result, c.result])
        print("created via Operation.create:", type(raw).__name__, type(raw.opview).__name__)
        print("opview is AddIOp:", isinstance(m2.body.operations[1], arith.AddIOp), isinstance(m2.body.operations[1], OpView))
        view = raw.operation.opview
        print("opview of Operation:", view == raw, view.lhs.get_name(), view.rhs.get_name(), view.result.type)
        generic = OpView(raw.operation)
        print("generic OpView:", type(generic).__name__, generic.operation.name)
        g = arith.SubIOp.build_generic(results=[i32], operands=[raw.result, c.result])
        print("build_generic:", type(g).__name__, g.operation.name)
    print(m2)
    print("parsed foo.op class:", type(m.body.operations[0]).__name__, m.body.operations[0].attributes["x"])
    # builtin.ModuleOp
    mod_op = builtin.ModuleOp()
    with InsertionPoint(mod_op.body):
        arith.ConstantOp(i32, 1)
    print(mod_op)
    print("module op class:", type(m2.operation.opview).__name__, type(m2.operation).__name__)
    # Module.create from an existing operation
    print("module from op:", Module.parse("module {}").operation.name)
    print("context of module:", m2.context is ctx, m2.operation.context is ctx)
