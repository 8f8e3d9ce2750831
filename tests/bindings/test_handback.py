"""Extensions that hand IR back (docs/python.md, "Capsules and extensions"): a C extension of
our own (tests/bindings/handback/handback.c) reads a Context or Block through `_CAPIPtr`, builds IR
with the MLIR C API and returns it through `Module._CAPICreate` / `Operation._CAPICreate`, as
extensions written against upstream's adaptor headers do. Their casters may not raise: a module
or operation made in C is adopted (tether owns it from then on), and what the extension builds on
a tether Context comes out registered, as it does on upstream's Context, which loads every
available dialect when it is made (tether loads dialects when first needed, and all of them
before a raw context leaves through a capsule).

The programs run in fresh interpreters: before adoption, the first aborted the process inside a
real extension's caster.
"""
import os
import textwrap

HANDBACK = """
import sys
sys.path.insert(0, %r)
import _handback
""" % os.path.join(os.path.dirname(os.path.abspath(__file__)), "handback")


def test_a_module_made_in_c_is_adopted(run_checks):
    run_checks(HANDBACK + textwrap.dedent("""
    m = _handback.parse_module(ctx, "func.func @f(%a: i32) -> i32 { return %a : i32 }")
    assert isinstance(m, ir.Module), type(m)
    assert m.operation.verify()
    f = m.body.operations[0]
    assert f.operation.name == "func.func" and "@f" in str(m)
    # It is tether's, with every lifetime rule: children keep it alive, erase invalidates.
    ret = f.regions[0].blocks[0].operations[0]
    del m, f
    for _ in range(3):
        gc.collect()
        tether.collect()
    assert ret.operation.name == "func.return"
    m2 = _handback.parse_module(ctx, '"a.x"() : () -> ()')
    x = m2.body.operations[0]
    x.erase()
    raises(ir.InvalidatedError, lambda: x.name)
    assert ir.Module._CAPICreate(m2._CAPIPtr) is m2
    # Many modules handed over and dropped: tether destroys them. Bounded, not exact: a stale
    # stack word may keep a few (conservative collection).
    for i in range(300):
        _handback.parse_module(ctx, '"a.x"() {n = %d : i32} : () -> ()' % i)
    roots = ctx._get_live_root_count()
    assert roots < 30, roots
    assert ctx._arena_stats()["destroyed"] >= 270, ctx._arena_stats()
    raises(ValueError, _handback.parse_module, ctx, "func.func @g( {")
    """), allow_stderr=True)  # MLIR's default handler prints the extension's parse error


def test_operations_made_in_c_on_a_fresh_context_are_registered(run_checks):
    run_checks(HANDBACK + textwrap.dedent("""
    fresh = ir.Context()
    with fresh, ir.Location.unknown():
        m = ir.Module.create()
        # Made detached in C, handed over, then inserted from Python.
        c = _handback.make_constant(fresh, 7)
        assert _handback.is_registered(c), "arith.constant made in C is unregistered"
        assert c.name == "arith.constant"
        raises(ValueError, lambda: c.parent, match="Detached operations have no parent")
        ir.InsertionPoint(m.body).insert(c)
        # Made in C straight into a block Python holds.
        d = _handback.append_constant(m.body, 8)
        assert _handback.is_registered(d)
        assert d.parent.name == "builtin.module"
        assert m.operation.verify()
        assert str(m).count("arith.constant") == 2, m
        # The constant made in C folds as a registered operation does.
        from tether.passmanager import PassManager
        PassManager.parse("builtin.module(canonicalize)").run(m.operation)
    """))


def test_a_detached_operation_made_in_c_is_owned_and_freed(run_checks):
    run_checks(HANDBACK + textwrap.dedent("""
    base = ctx._get_live_operation_count()
    ops = [_handback.make_constant(ctx, i) for i in range(100)]
    assert all(o.name == "arith.constant" for o in ops)
    assert ops[5] is ir.Operation._CAPICreate(ops[5]._CAPIPtr)
    ops[3].erase()
    raises(ir.InvalidatedError, lambda: ops[3].name)
    del ops
    gc.collect()
    assert ctx._get_live_operation_count() <= base + 1
    """))
