"""Re-entrancy: Python code that runs inside a C loop over MLIR's lists (the cyclic collector,
`__del__`, `gc.callbacks`, a property read while converting arguments) and erases IR the loop is
walking makes the next access raise, never read freed memory. docs/ownership.md, "Re-entrancy".

Each program crashed the interpreter before its fix, so each runs in a fresh interpreter
(`run_checks`): a crash is one failing test with its signal, not a dead run. Inside, plain asserts
state what a user observes instead (an exception of a given type, a printed form, IR left intact).
"""


def test_uses_survive_python_code_erasing_users(run_checks):
    run_checks("""
    m = ir.Module.parse('%c = "t.def"() : () -> i32\\n' +
                        '\\n'.join('"t.use"(%c) : (i32) -> ()' for _ in range(50)))
    c = m.body.operations[0]
    ops = list(m.body.operations)[1:]
    class Eraser:
        def __del__(self):
            for o in ops:
                try:
                    o.erase()
                except Exception:
                    pass
    def cb(phase, info):
        if phase == "start":
            e = Eraser(); e.cyc = e
    gc.callbacks.append(cb)
    old = gc.get_threshold()
    gc.set_threshold(1)
    try:
        for _ in range(3):
            x = Eraser(); x.cyc = x; del x
            for use in list(c.result.uses):
                # Each use is either still there or reports its owner as gone: never freed memory.
                try:
                    use.owner.name
                except RuntimeError:
                    pass
    finally:
        gc.callbacks.remove(cb)
        gc.set_threshold(*old)
    assert len(list(c.result.uses)) == 0   # every user was erased by the callbacks
    """)


def test_conversion_survives_python_code_erasing_operands(run_checks):
    run_checks("""
    m = ir.Module.parse('%a = "t.a"() : () -> i32\\n%b = "t.b"() : () -> i32')
    a, b = list(m.body.operations)
    class Evil:
        @property
        def result(self):
            try:
                a.erase()
            except ValueError:
                pass
            return b.result
    try:
        op = ir.Operation.create("t.c", operands=[a.result, Evil()])
    except (RuntimeError, ValueError, TypeError):
        pass
    else:
        str(op)
    str(m)
    """)
