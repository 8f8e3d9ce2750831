# Location tracking as a source-level frontend does: file/line/col locations per statement, name
# locations for variables, callsite locations for inlined calls, fused locations with metadata;
# printing with debug info, reading locations back from ops and from parsed IR.
from mlir.ir import *
from mlir.dialects import arith, func

with Context() as ctx:
    f_loc = Location.file("kernel.py", 12, 5)
    print(f_loc, f_loc.context is ctx)
    n_loc = Location.name("acc", childLoc=f_loc)
    print(n_loc)
    bare = Location.name("bare")
    print(bare)
    cs = Location.callsite(Location.file("lib.py", 3, 1), [Location.file("main.py", 20, 8), Location.file("main.py", 30, 2)])
    print(cs)
    fused = Location.fused([f_loc, n_loc], metadata=StringAttr.get("inlined"))
    print(fused)
    fused_no_meta = Location.fused([Location.file("a.py", 1, 1), Location.file("b.py", 2, 2)])
    print(fused_no_meta)
    single = Location.fused([f_loc])
    print("fused of one:", single)
    unk = Location.unknown()
    print(unk, unk == Location.unknown(), f_loc == Location.file("kernel.py", 12, 5))
    print("attr:", f_loc.attr, type(f_loc.attr).__name__)
    print("from attr:", Location.from_attr(f_loc.attr))

    i32 = IntegerType.get_signless(32)
    with Location.file("kernel.py", 1, 1):
        module = Module.create()
        with InsertionPoint(module.body):
            fn = func.FuncOp("kernel", ([i32, i32], [i32]))
            entry = fn.add_entry_block([Location.name("x"), Location.name("y")])
            with InsertionPoint(entry):
                with Location.file("kernel.py", 2, 3):
                    s = arith.addi(entry.arguments[0], entry.arguments[1])
                with Location.name("prod", childLoc=Location.file("kernel.py", 3, 3)):
                    p = arith.muli(s, s)
                c = arith.ConstantOp(i32, 7, loc=cs)
                q = arith.AddIOp(p, c.result, loc=fused)
                func.ReturnOp([q.result], loc=Location.current)
    print("current in with:", Location.current if False else "n/a")
    print(module.operation.get_asm(enable_debug_info=True))
    print(module.operation.get_asm(enable_debug_info=True, pretty_debug_info=True))
    for op in entry.operations:
        print(op.name, op.location)
    print("arg locs:", [str(a.location) for a in entry.arguments] if hasattr(entry.arguments[0], "location") else "n/a")
    print("module loc:", module.operation.location)

    parsed = Module.parse("""
    #loc1 = loc("src.c":4:2)
    module {
      func.func @f() {
        return loc(#loc1)
      } loc(fused<"meta">["src.c":1:1, "src.c":2:2])
    } loc(unknown)
    """)
    pf = parsed.body.operations[0]
    print("parsed func loc:", pf.location)
    print("parsed return loc:", pf.regions[0].blocks[0].operations[0].location)
    print("context of loc:", pf.location.context is ctx)
    try:
        Location.current
    except ValueError as e:
        print("no current location:", e)
    with Location.name("outer"):
        print("current:", Location.current)
        with Location.file("inner.py", 9, 9):
            print("current:", Location.current)
        print("current:", Location.current)
