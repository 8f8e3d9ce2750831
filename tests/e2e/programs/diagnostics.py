# Diagnostics as a frontend reports them to its users: parse errors with MLIRError and
# error_diagnostics (notes included), verifier failures of built IR, a diagnostic handler that
# collects and another that declines, emit_error on locations, Context.emit_error_diagnostics.
from mlir.ir import *
from mlir.dialects import arith, func


def show(e):
    print("  type:", type(e).__name__, "message:", e.message)
    for d in e.error_diagnostics:
        print("  diag:", d.severity, d.location, repr(d.message))
        for n in d.notes:
            print("    note:", n.severity, n.location, repr(n.message))


with Context() as ctx:
    # 1. a parse error
    try:
        Module.parse("func.func @f() { %0 = arith.addi : i32 }", ctx)
    except MLIRError as e:
        print("parse error")
        show(e)
        print(str(e))

    # 2. a verifier error with a note, in a named file
    bad = """
    func.func @g(%x: i32) -> i64 {
      return %x : i32
    }"""
    try:
        Module.parse(bad)
    except MLIRError as e:
        print("verify error")
        show(e)

    # 3. built IR that does not verify
    with Location.file("model.py", 10, 4):
        m = Module.create()
        i32 = IntegerType.get_signless(32)
        with InsertionPoint(m.body):
            f = func.FuncOp("h", ([i32], [i32]))
            with InsertionPoint(f.add_entry_block()):
                with Location.name("the_add"):
                    s = arith.AddIOp(f.arguments[0], f.arguments[0])
                func.ReturnOp([])
    print("verify() of bad IR:")
    try:
        m.operation.verify()
    except MLIRError as e:
        show(e)

    # 4. handlers: the last attached runs first; returning True stops propagation
    collected = []

    def collect(d):
        collected.append((str(d.severity), str(d.location), d.message, [n.message for n in d.notes]))
        return True

    def decline(d):
        collected.append(("declined", d.message))
        return False

    h1 = ctx.attach_diagnostic_handler(collect)
    h2 = ctx.attach_diagnostic_handler(decline)
    loc = Location.file("input.mlir", 3, 7)
    loc.emit_error("custom error from the frontend")
    Location.name("node42", childLoc=Location.file("g.py", 1, 2)).emit_error("named location error")
    print("collected:")
    for c in collected:
        print("  ", c)
    print("handlers attached:", h1.attached, h2.attached, h1.had_error)
    h2.detach()
    collected.clear()
    with Location.unknown():
        try:
            Module.parse("func.func @p() { return %undefined : i32 }")
        except MLIRError as e:
            print("parse with handler attached still raises:", e.message, len(e.error_diagnostics))
    print("collected while parsing:", collected)
    h1.detach()
    print("after detach:", h1.attached)

    # 6. emit_error_diagnostics toggles whether errors go to handlers
    ctx.emit_error_diagnostics = True
    seen = []
    h3 = ctx.attach_diagnostic_handler(lambda d: seen.append(d.message) or True)
    try:
        Module.parse("func.func @q() -> i32 { return }")
    except MLIRError as e:
        print("with emit_error_diagnostics:", e.message, len(e.error_diagnostics))
    print("handler saw:", seen)
    h3.detach()
    ctx.emit_error_diagnostics = False

    # 7. diagnostics through a context manager
    with ctx.attach_diagnostic_handler(lambda d: seen.append(("cm", d.message)) or True):
        Location.unknown().emit_error("inside with")
    print("after with:", seen[-1])

    # 8. attribute/type parse errors
    for text in ["dense<[1, 2> : tensor<2xi32>", "i33x", "!unknown.type"]:
        try:
            if text.startswith("dense"):
                Attribute.parse(text)
            else:
                Type.parse(text)
        except MLIRError as e:
            print("parse %r:" % text, e.message, [d.message for d in e.error_diagnostics])
