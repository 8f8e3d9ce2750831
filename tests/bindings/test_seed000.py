"""Seed 000: a child op wrapper outlives its module; freed addresses are reused by MLIR.

Upstream crashes (or asserts in the live-operations map) on both scenarios. Here:
1. dropping the module while holding `func` keeps the module's IR alive (the child keeps its
   root alive), so `print(func)` works after a collection;
2. parsing again in the same context, many times, while holding stale (erased) wrappers never
   asserts, never crashes, and never hands back a stale wrapper for a reused address.
"""

import gc

import pytest

import tether
from tether import ir

SEED_MODULE = r"""module @my_module {
  func.func @my_func() {
    return
  }
}"""


def _parse_and_take_func(ctx):
    module = ir.Module.parse(SEED_MODULE, ctx)
    func = module.body.operations[0]
    return module, func


def test_drop_module_keep_func_then_print(capfd, collect_until):
    ctx = ir.Context()
    module, func = _parse_and_take_func(ctx)
    # The seed's own assertions (upstream counts live Python objects).
    assert ctx._get_live_module_count() == 1
    assert ctx._get_live_operation_count() == 1

    module = None
    gc.collect()
    assert ctx._get_live_module_count() == 0
    assert ctx._get_live_operation_count() == 1
    tether.collect()

    # `func` keeps its root (the module's IR) alive: rule 2 of the ownership model. Collection
    # can't free it, however many times it runs.
    for _ in range(3):
        tether.collect()
        assert ctx._get_live_root_count() == 1
    assert ctx._get_live_operation_count() >= 1

    print(func)
    out = capfd.readouterr().out
    assert "func.func @my_func()" in out
    assert "return" in out

    func.print()
    out = capfd.readouterr().out
    assert "func.func @my_func()" in out

    assert func.operation.name == "func.func"
    assert "@my_func" in func.get_asm()
    assert func.verify() is True
    # The module is still reachable through the child, with its name and body intact.
    parent = func.parent
    assert parent is not None
    assert parent.name == "builtin.module"
    assert "module @my_module" in str(parent)
    assert parent.regions[0].blocks[0].operations[0] is func
    parent = None

    # Dropping the last reference frees the module eventually (bounded number of collections).
    func = None
    assert collect_until(lambda: ctx._get_live_root_count() == 0)
    assert collect_until(lambda: ctx._get_live_operation_count() == 0)


def test_drop_module_keep_nested_return_op(capfd, collect_until):
    ctx = ir.Context()
    module = ir.Module.parse(SEED_MODULE, ctx)
    ret = module.body.operations[0].regions[0].blocks[0].operations[0]
    assert ret.name == "func.return"
    module = None
    tether.collect()
    assert ctx._get_live_module_count() == 0
    assert ctx._get_live_root_count() == 1
    print(ret)
    assert "return" in capfd.readouterr().out
    assert ret.parent.name == "func.func"
    assert ret.parent.parent.name == "builtin.module"
    ret = None
    assert collect_until(lambda: ctx._get_live_root_count() == 0)


def _walk_ops(op):
    seen = []
    op.walk(lambda o: seen.append(o), walk_order=ir.WalkOrder.PRE_ORDER)
    return seen


ROUNDS = 400


def test_reparse_same_context_many_times_with_stale_wrappers():
    ctx = ir.Context()
    erased = []  # (wrapper, expected reason fragment, name it had)
    survivors = []  # lone children of dropped modules, still valid

    for i in range(ROUNDS):
        module = ir.Module.parse(SEED_MODULE, ctx)
        func = module.body.operations[0]
        ret = func.regions[0].blocks[0].operations[0]
        assert func.operation.name == "func.func"
        assert ret.name == "func.return"
        # None of the live wrappers we hand out may be a stale one.
        for op in (module.operation, func, ret):
            for old, _, _ in erased:
                assert op is not old
        if i % 3 == 0:
            # Erase the function: its memory goes back to the allocator now, and the next parse
            # is likely to reuse the same addresses while we keep the stale wrappers.
            func.erase()
            erased.append((func, "erased", "func.func"))
            erased.append((ret, "parent erased", "func.return"))
        elif i % 3 == 1 and len(survivors) < 20:
            survivors.append(ret)
        module = func = ret = None
        if i % 25 == 0:
            tether.collect()

        # A fresh, differently shaped module in the same context: the seed's second snippet.
        other = ir.Module.parse(r"module @my_module { }", ctx)
        assert other.operation.name == "builtin.module"
        assert len(other.body.operations) == 0
        for old, _, _ in erased:
            assert other.operation is not old
        other = None

    tether.collect()

    # Stale wrappers stay invalid, with the reason that applies to them.
    assert len(erased) >= 2 * (ROUNDS // 3)
    for old, reason, _ in erased:
        with pytest.raises(ir.InvalidatedError) as e:
            old.name
        msg = str(e.value)
        if reason == "erased":
            assert "erased" in msg and "parent" not in msg
        else:
            assert "parent" in msg and "erased" in msg
        with pytest.raises(ir.InvalidatedError):
            old.get_asm()
    # Lone children of dropped modules are still fully usable.
    for ret in survivors:
        assert ret.name == "func.return"
        assert ret.parent.name == "func.func"
        assert "return" in str(ret)

    # Fresh IR after all that: right names, nothing stale anywhere in it.
    module = ir.Module.parse(SEED_MODULE, ctx)
    stale_ids = {id(old) for old, _, _ in erased}
    for op in _walk_ops(module.operation):
        assert id(op) not in stale_ids
    assert [op.name for op in _walk_ops(module.operation)] == [
        "builtin.module",
        "func.func",
        "func.return",
    ]
    module = None

    # Bounded: only the survivors' modules (one per survivor) can still be alive.
    tether.collect()
    assert ctx._get_live_module_count() <= len(survivors) + 2
    survivors = None
    erased = None
    tether.collect()
    assert ctx._get_live_module_count() <= 4


def test_reparse_after_dropping_everything_no_assertion(collect_until):
    """The seed's exact second snippet: the first module is dropped and collected while `func` is
    held, then a new module is parsed in the same context (no explicit context: `with ctx`)."""
    ctx = ir.Context()
    module, func = _parse_and_take_func(ctx)
    module = None
    tether.collect()
    with ctx:
        for _ in range(200):
            module = ir.Module.parse(r"""module @my_module { }""")
            assert module.operation is not func
            assert module.operation.name == "builtin.module"
            assert func.operation.name == "func.func"
    module = None
    func = None
    assert collect_until(lambda: ctx._get_live_module_count() == 0)
