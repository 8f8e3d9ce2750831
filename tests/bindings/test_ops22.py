"""Operations, builders, blocks and values as upstream 22's `mlir.ir` has them (MLIR 22 builds
only): OpView.__init__'s builder form, Value[...], result owners and printed forms, what 22 adds
to Operation, Value, BlockArgument, Block, InsertionPoint and Module, and creation locations from
loc_tracebacks. Each new entry point is also given hostile arguments and invalidated objects: it
raises, never crashes (the cases that could crash run in a fresh interpreter)."""

import os

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION

pytestmark = pytest.mark.skipif(MLIR_VERSION < 22, reason="upstream 22's API (MLIR 22 builds)")


@pytest.fixture
def m(ctx):
    ctx.allow_unregistered_dialects = True
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        yield module


def i32():
    return ir.IntegerType.get_signless(32)


def value(name="custom.v"):
    return ir.Operation.create(name, results=[i32()]).result


class Plain(ir.OpView):
    OPERATION_NAME = "custom.plain"


class Sized(ir.OpView):
    OPERATION_NAME = "custom.sized"
    _ODS_OPERAND_SEGMENTS = [1, -1, 0]
    _ODS_RESULT_SEGMENTS = [-1, 0, 1]


# ---- OpView.__init__ (the generated classes' builder) ---------------------------------------------


def test_opview_builder_form(m):
    v, w = value(), value()
    op = Plain("custom.plain", (0, True), None, None, results=[i32()], operands=[v, w])
    assert op.operation.name == "custom.plain"
    assert list(op.operands) == [v, w]
    assert op.operation.opview is op and op.operation.operation is op.operation  # identity
    assert m.body.operations[2] is op  # inserted at the current insertion point
    # Segments, with upstream's segment-size attributes.
    s = Sized("custom.sized", (1, True), [1, -1, 0], [-1, 0, 1], results=[[i32()], None, i32()],
              operands=[v, [w, v], None])
    assert str(s.attributes["operandSegmentSizes"]) == "array<i32: 1, 2, 0>"
    assert str(s.attributes["resultSegmentSizes"]) == "array<i32: 1, 0, 1>"
    assert len(s.regions) == 1
    # An OpView, an Operation or an OpResultList of one result is an operand too.
    p = Plain("custom.plain", (0, True), results=[], operands=[op, op.operation, op.results])
    assert list(p.operands) == [op.result] * 3
    # OpView(operation) is still the other form.
    view = ir.OpView(p.operation)
    assert view.operation is p.operation
    assert ir.OpView(operation=p.operation).operation is p.operation


def test_opview_builder_class_attributes():
    assert ir.OpView._ODS_REGIONS == (0, True)
    assert ir.OpView._ODS_OPERAND_SEGMENTS is None
    assert ir.OpView._ODS_RESULT_SEGMENTS is None


def test_opview_builder_errors(m):
    v = value()
    cases = [
        (dict(operands=[None]), ValueError,
         'Operand 0 of operation "custom.plain" must be a Value (contained a None item)'),
        (dict(operands=[1]), ValueError,
         'Operand 0 of operation "custom.plain" must be a Value (is not a Value)'),
        (dict(operands=[ir.Operation.create("custom.two", results=[i32(), i32()])]), ValueError,
         'Operand 0 of operation "custom.plain" must be a Value (Cannot call .result on operation '
         "custom.two which has 2 results (it is only valid for operations with a single "
         "result))"),
        (dict(regions=2**80), OverflowError, ""),
        (dict(regions=-1), ValueError, "requires a minimum of 0 regions"),
        (dict(attributes={"operandSegmentSizes": ir.UnitAttr.get()}), None, None),
        (dict(loc=3), TypeError, "loc must be a Location"),
        (dict(ip=3), TypeError, "ip must be an InsertionPoint"),
        (dict(successors=[v]), TypeError, "Block"),
    ]
    before = len(m.body.operations)
    for kw, exc, msg in cases:
        if exc is None:
            continue
        with pytest.raises(exc) as info:
            Plain("custom.plain", (0, True), **{"results": [], **kw})
        assert msg in str(info.value)
    with pytest.raises(ValueError, match="Manually setting"):
        Sized("custom.sized", (0, True), [1, -1, 0], [-1, 0, 1], results=[None, None, i32()],
              operands=[v, None, None], attributes={"operandSegmentSizes": ir.UnitAttr.get()})
    with pytest.raises(ValueError, match="requires 3 operand segments but was provided 1"):
        Sized("custom.sized", (0, True), [1, -1, 0], None, operands=[v])
    with pytest.raises(TypeError, match="_ODS_REGIONS"):
        Plain("custom.plain", 5)
    with pytest.raises(TypeError):
        Plain("custom.plain")  # opRegionSpec is required
    with pytest.raises(TypeError):
        Plain(b"custom.plain", (0, True))
    # Results inferred (results=None) need a registered operation, as upstream's.
    with pytest.raises(ir.MLIRError):
        Plain("custom.plain", (0, True))
    assert len(m.body.operations) == before  # nothing was made


def test_opview_builder_invalid_and_foreign_operands(m):
    v = value()
    v.owner.erase()
    with pytest.raises(ir.InvalidatedError):
        Plain("custom.plain", (0, True), results=[], operands=[v])
    other = ir.Context()
    other.allow_unregistered_dialects = True
    with other, ir.Location.unknown():
        foreign = value()
    with pytest.raises(ValueError, match="different contexts"):
        Plain("custom.plain", (0, True), results=[], operands=[foreign])
    with pytest.raises(ValueError, match="another context"):
        Plain("custom.plain", (0, True), results=[ir.IntegerType.get_signless(8, other)])


def test_opview_builder_reinit_and_new_object(m):
    a = Plain("custom.plain", (0, True), results=[])
    first = a.operation
    Plain.__init__(a, "custom.plain", (0, True), results=[])  # again: a views the new operation
    assert a.operation is not first and first.opview is not a
    assert m.body.operations[1] is a


def test_lists_stay_with_their_operation_when_the_view_changes(m):
    a = Plain("custom.plain", (0, True), results=[i32()])
    first = a.operation
    res, regions = a.results, a.regions
    Plain.__init__(a, "custom.plain", (1, True), results=[i32(), i32()])
    # The lists made before belong to the first operation, as upstream's (they hold it).
    assert len(res) == 1 and len(regions) == 0
    assert len(a.results) == 2 and len(a.regions) == 1
    assert res.owner.operation is first and res[0].owner.operation is first
    assert res[1:].owner.operation is first
    # A results list is an operand (upstream 22's builders take one): its operation's result.
    p = Plain("custom.plain", (0, True), results=[], operands=[res])
    assert list(p.operands) == [res[0]]
    p.erase()
    first.erase()
    with pytest.raises(ir.InvalidatedError):
        len(res)
    with pytest.raises(ir.InvalidatedError):
        Plain("custom.plain", (0, True), results=[], operands=[res])


class Built(ir.OpView):
    """As generated classes are: __init__ of its own, calling OpView's with keywords via super()."""

    OPERATION_NAME = "custom.built"
    __slots__ = ()

    def __init__(self, *operands, extra=None, loc=None, ip=None):
        kw = dict(results=[i32()], operands=list(operands), loc=loc, ip=ip)
        if extra:
            kw.update(extra)
        super().__init__(self.OPERATION_NAME, self._ODS_REGIONS, None, None, **kw)


def test_opview_init_through_super(m):
    v = value()
    b = Built(v, v)
    assert b.operation.name == "custom.built" and list(b.operands) == [v, v]
    assert m.body.operations[-1] is b and b.operation.opview is b
    # The same errors as a direct call, and nothing made.
    before = len(m.body.operations)
    for extra, exc, msg in [
        (dict(bogus=1), TypeError, "bogus"),
        (dict(results=[i32()], operation=b), TypeError, "operation"),
        (dict(regions=-1), ValueError, "requires a minimum of 0 regions"),
        (dict(ip=3), TypeError, "ip must be an InsertionPoint"),
    ]:
        with pytest.raises(exc, match=msg):
            Built(v, extra=extra)
    with pytest.raises(TypeError):
        ir.OpView.__init__(b, "custom.built", (0, True), None, None, None, None, None, None, None,
                           None, None, None)  # one positional too many
    with pytest.raises(TypeError):
        ir.OpView.__init__(3, b.operation)  # not an OpView
    assert len(m.body.operations) == before
    # OpView.__init__(view, operation): the view now shows that operation, by either spelling.
    w = Plain("custom.plain", (0, True), results=[])
    ir.OpView.__init__(w, b.operation)
    assert w.operation is b.operation
    ir.OpView.__init__(w, operation=v.owner.operation)
    assert w.operation is v.owner.operation


def test_default_loc_context_of_generated_builders():
    from tether.dialects import _ods_common

    f = _ods_common.get_default_loc_context
    assert ir.Location.current is None
    assert f() is None and f(None) is None  # no current Location: None, as upstream 22's
    with ir.Context() as ctx, ir.Location.unknown():
        assert f() is ctx
    other = ir.Context()
    assert f(ir.Location.unknown(other)) is other
    assert f(location=ir.Location.unknown(other)) is other

    class Duck:
        context = "the context"

    assert f(Duck()) == "the context"
    with pytest.raises(AttributeError):
        f(3)
    with pytest.raises(TypeError):
        f(None, None)


def test_build_generic_gives_the_operation(m):
    # Upstream 22's build_generic returns the Operation; its opview is the dialect class.
    from tether.dialects import arith
    c = arith.ConstantOp(ir.IntegerType.get_signless(32), 3)
    op = arith.SubIOp.build_generic(results=[c.result.type], operands=[c.result, c.result])
    assert type(op) is ir.Operation and op.name == "arith.subi"
    assert type(op.opview) is arith.SubIOp and op.opview.operation is op


def test_opview_builder_survives_hostile_input(run_checks):
    run_checks("""
        class P(ir.OpView):
            OPERATION_NAME = "custom.p"
        m = ir.Module.create()
        ip = ir.InsertionPoint(m.body)
        v = ir.Operation.create("custom.v", results=[i32], ip=ip).result
        class Evil:
            def __len__(self):
                v.owner.erase()
                return 1
            def __getitem__(self, i):
                if i: raise IndexError
                return v
        expect(Exception, P, "custom.p", (0, True), operands=Evil(), results=[], ip=ip)
        expect(Exception, P, "custom.p", (0, True), [1, -1], None, operands=[None, Evil()],
               results=[], ip=ip)
        survive(P, "custom\\0p", (0, True), results=[], ip=ip)
        expect(TypeError, P, "custom.p", (0, True), [object()], None, operands=[None], ip=ip)
        expect(Exception, P, "custom.p", (2**70, True), ip=ip)
        expect(TypeError, P, "custom.p", None, ip=ip)
        expect(TypeError, P, 1, (0, True), ip=ip)
        view = ir.OpView.__new__(P)
        expect(RuntimeError, lambda: view.operation)
        expect(RuntimeError, P, "custom.p", (0, True), operands=[view], ip=ip)
        print(m)
    """)


# ---- Value[...], owners and printed forms ----------------------------------------------------------


def test_value_generic_alias():
    alias = ir.Value[ir.IntegerType]
    assert alias.__origin__ is ir.Value and alias.__args__ == (ir.IntegerType,)
    assert ir.OpResult[ir.F32Type].__origin__ is ir.OpResult
    assert ir.BlockArgument[ir.IndexType].__origin__ is ir.BlockArgument


def test_owners_and_printed_forms(m):
    r = value()
    op = r.owner
    assert isinstance(op, ir.OpView) and op.results.owner is op
    assert str(r) == 'OpResult(%0 = "custom.v"() : () -> i32)'
    assert str(ir.Value(r)) == 'Value(%0 = "custom.v"() : () -> i32)'
    b = ir.Block.create_at_start(ir.Operation.create("custom.r", regions=1).regions[0], [i32()])
    assert str(b.arguments[0]) == "BlockArgument(<block argument> of type 'i32' at index: 0)"
    user = ir.Operation.create("custom.u", operands=[r, b.arguments[0]])
    assert user.operands[0] is r and type(user.operands[1]) is ir.BlockArgument


def test_match_on_sequences(m):
    r = value()
    ir.Operation.create("custom.u", operands=[r, r])
    import collections.abc

    assert isinstance(m.body.operations, collections.abc.Sequence)
    match m.body:
        case ir.Block(operations=[_, ir.OpView(operands=[a, b])]):
            assert a is r and b is r
        case _:
            raise AssertionError("no match")


# ---- Operation -------------------------------------------------------------------------------------


def test_operation_attached_and_order(m):
    a, b = value().owner, value().owner
    assert a.attached and b.attached
    assert a.is_before_in_block(b) and not b.is_before_in_block(a)
    assert not a.is_before_in_block(other=a)
    detached = ir.Operation.create("custom.d", ip=False)
    assert not detached.attached and not m.operation.attached
    with pytest.raises(ValueError, match="not in the same block"):
        a.is_before_in_block(detached)
    with pytest.raises(ValueError, match="not in the same block"):
        detached.is_before_in_block(detached)
    with pytest.raises(TypeError):
        a.is_before_in_block(3)
    b.detach_from_parent()
    assert not b.attached
    b.erase()
    with pytest.raises(ir.InvalidatedError):
        b.attached
    with pytest.raises(ir.InvalidatedError):
        a.is_before_in_block(b)


def test_operation_replace_uses_of_with(m):
    x, y = value(), value()
    user = ir.Operation.create("custom.u", operands=[x, y, x])
    user.replace_uses_of_with(x, y)
    assert list(user.operands) == [y, y, y]
    user.operation.replace_uses_of_with(of=value(), with_=x)  # not used: nothing changes
    assert list(user.operands) == [y, y, y]
    with pytest.raises(TypeError):
        user.replace_uses_of_with(x, "y")
    other = ir.Context()
    other.allow_unregistered_dialects = True
    with other, ir.Location.unknown():
        foreign = value()
    with pytest.raises(ValueError, match="different contexts"):
        user.replace_uses_of_with(y, foreign)
    gone = value()
    gone.owner.erase()
    with pytest.raises(ir.InvalidatedError):
        user.replace_uses_of_with(y, gone)
    user.erase()
    with pytest.raises(ir.InvalidatedError):
        user.replace_uses_of_with(y, x)


def test_operation_location_setter(m):
    op = value().owner
    op.location = ir.Location.name("here")
    assert str(op.location) == 'loc("here")'
    with pytest.raises(TypeError):
        op.location = "here"
    with pytest.raises(AttributeError):
        del op.location
    with pytest.raises(ValueError, match="another context"):
        op.location = ir.Location.unknown(ir.Context())
    op.erase()
    with pytest.raises(ir.InvalidatedError):
        op.location = ir.Location.unknown()


def test_set_invalid_changes_nothing(m):
    op = value().owner
    assert op._set_invalid() is None and op.operation._set_invalid() is None
    assert op.name == "custom.v"  # tether invalidates by itself: nothing to do
    op.erase()
    op._set_invalid()
    with pytest.raises(ir.InvalidatedError, match="the operation has been invalidated"):
        str(op)


def test_print_options(m, tmp_path):
    op = ir.Operation.create("custom.loc", results=[i32()], loc=ir.Location.name("apple"))
    assert "%apple" in m.operation.get_asm(use_name_loc_as_prefix=True)
    assert "%apple" not in m.operation.get_asm()
    text = m.operation.get_asm(False, None, 4, False, False, False, False, True)  # positions
    assert "%apple" in text
    for bad in (2**80, "4"):
        with pytest.raises((OverflowError, TypeError)):
            m.operation.get_asm(large_resource_limit=bad)
    path = tmp_path / "out.mlir"
    m.operation.print(file=str(path), use_name_loc_as_prefix=True)
    assert "%apple" in path.read_text()
    op.print(file=str(path), binary=True)
    assert path.read_bytes().startswith(b"%0 =")
    bc = tmp_path / "out.mlirbc"
    m.operation.write_bytecode(str(bc))
    assert bc.read_bytes().startswith(b"ML\xefR")
    assert str(ir.Module.parseFile(str(bc)).operation).count("custom.loc") == 1
    with pytest.raises(ValueError, match="Unable to open file for writing"):
        m.operation.print(file=str(tmp_path / "no" / "such" / "dir"))
    with pytest.raises(ValueError, match="Unable to open file for writing"):
        m.operation.write_bytecode(str(tmp_path))
    with pytest.raises(ValueError):
        m.operation.print(file="a\0b")


# ---- Value and BlockArgument -----------------------------------------------------------------------


def test_value_location_and_names(m):
    r = ir.Operation.create("custom.op5", results=[i32()], loc=ir.Location.name("apple")).result
    assert str(r.location) == 'loc("apple")'
    assert r.get_name() == "%0"
    assert r.get_name(use_name_loc_as_prefix=True) == "%apple"
    assert r.get_name(False, True) == "%apple"
    assert r.get_name(ir.AsmState(m.operation)) == "%0"
    assert r.get_name(state=ir.AsmState(r)) == "%0"
    with pytest.raises(TypeError):
        r.get_name("x")
    with pytest.raises(TypeError):
        r.get_name(True, state=ir.AsmState(r))
    r.owner.erase()
    with pytest.raises(ir.InvalidatedError):
        r.location


def test_value_replace_all_uses_except(m):
    x, y = value(), value()
    u1 = ir.Operation.create("custom.u1", operands=[x])
    u2 = ir.Operation.create("custom.u2", operands=[x])
    u3 = ir.Operation.create("custom.u3", operands=[x])
    x.replace_all_uses_except(y, u1)
    assert u1.operands[0] == x and u2.operands[0] == y and u3.operands[0] == y
    y.replace_all_uses_except(with_=x, exceptions=[u2.operation])
    assert u2.operands[0] == y and u3.operands[0] == x
    y.replace_all_uses_except(x, ())
    assert u2.operands[0] == x
    for bad in (3, [3], "u1", [u1, None]):
        with pytest.raises(TypeError):
            x.replace_all_uses_except(y, bad)
    other = ir.Context()
    other.allow_unregistered_dialects = True
    with other, ir.Location.unknown():
        foreign = value()
        foreign_op = ir.Operation.create("custom.f", operands=[foreign])
    with pytest.raises(ValueError, match="different contexts"):
        x.replace_all_uses_except(foreign, [])
    with pytest.raises(ValueError, match="different contexts"):
        x.replace_all_uses_except(y, [foreign_op])
    u3.erase()
    with pytest.raises(ir.InvalidatedError):
        x.replace_all_uses_except(y, [u1, u3])
    assert u1.operands[0] == x and u2.operands[0] == x  # nothing changed
    gone = value()
    gone.owner.erase()
    with pytest.raises(ir.InvalidatedError):
        gone.replace_all_uses_except(y, [])
    with pytest.raises(ir.InvalidatedError):
        x.replace_all_uses_except(gone, [])


def test_replace_all_uses_except_with_a_list_that_erases(run_checks):
    run_checks("""
        m = ir.Module.create()
        ip = ir.InsertionPoint(m.body)
        x = ir.Operation.create("custom.v", results=[i32], ip=ip).result
        y = ir.Operation.create("custom.v", results=[i32], ip=ip).result
        u = ir.Operation.create("custom.u", operands=[x], ip=ip)
        class Evil:
            def __len__(self):
                return 1
            def __getitem__(self, i):
                if i: raise IndexError
                u.erase()
                return u
        expect(ir.InvalidatedError, x.replace_all_uses_except, y, Evil())
        print(m)
    """)


def test_block_argument_set_location(m):
    b = ir.Block.create_at_start(ir.Operation.create("custom.r", regions=1).regions[0], [i32()])
    arg = b.arguments[0]
    arg.set_location(ir.Location.name("new_loc"))
    assert str(arg.location) == 'loc("new_loc")'
    arg.set_location(loc=ir.Location.unknown())
    with pytest.raises(TypeError):
        arg.set_location("new_loc")
    with pytest.raises(ValueError, match="another context"):
        arg.set_location(ir.Location.unknown(ir.Context()))
    assert not hasattr(value(), "set_location")
    added = b.add_argument(i32(), ir.Location.unknown())
    assert type(added) is ir.BlockArgument and added is b.arguments[1]
    b.owner.erase()
    with pytest.raises(ir.InvalidatedError):
        arg.set_location(ir.Location.unknown())


# ---- Block, InsertionPoint -------------------------------------------------------------------------


CFG = """
func.func @f(%c: i1) {
  cf.cond_br %c, ^a, ^b
^a:
  cf.br ^b
^b:
  return
}
"""


def test_block_successors_and_predecessors(ctx):
    m = ir.Module.parse(CFG)
    entry, a, b = m.body.operations[0].regions[0].blocks
    assert list(entry.successors) == [a, b] and len(entry.predecessors) == 0
    assert list(a.successors) == [b] and list(a.predecessors) == [entry]
    assert set(b.predecessors) == {entry, a} and len(b.successors) == 0
    assert entry.successors[-1] is b and list(entry.successors[1:]) == [b]
    assert type(b.predecessors).__name__ == "BlockPredecessors"
    with pytest.raises(IndexError):
        entry.successors[2]
    preds = b.predecessors
    a.operations[0].erase()
    assert list(preds) == [entry]  # a view: read at each access
    m.body.operations[0].erase()
    with pytest.raises(ir.InvalidatedError):
        len(preds)
    with pytest.raises(ir.InvalidatedError):
        entry.successors


def test_predecessor_in_no_block(run_checks):
    run_checks("""
        region_op = ir.Operation.create("custom.r", regions=1)
        target = ir.Block.create_at_start(region_op.regions[0])
        br = ir.Operation.create("custom.br", successors=[target])  # in no block
        assert list(target.predecessors) == [None], list(target.predecessors)
        assert len(ir.Block.create_at_start(region_op.regions[0]).successors) == 0
        detached = ir.Block()
        assert len(detached.successors) == 0 and len(detached.predecessors) == 0
    """)


def test_insertion_point_after(m):
    a, b = value().owner, value().owner
    ip = ir.InsertionPoint.after(a)
    assert ip.ref_operation is b.operation and ip.block is m.body
    c = ir.Operation.create("custom.c", ip=ip)
    assert list(m.body.operations) == [a, c, b]
    end = ir.InsertionPoint.after(operation=b)
    assert end.ref_operation is None
    d = ir.Operation.create("custom.d", ip=end)
    assert m.body.operations[-1] == d
    with pytest.raises(ValueError, match="no parent block"):
        ir.InsertionPoint.after(ir.Operation.create("custom.x", ip=False))
    with pytest.raises(TypeError):
        ir.InsertionPoint.after(m.body)
    d.erase()
    with pytest.raises(ir.InvalidatedError):
        ir.InsertionPoint.after(d)
    # The constructors' keywords name which one (upstream's `block` and `beforeOperation`).
    assert ir.InsertionPoint(block=m.body).ref_operation is None
    assert ir.InsertionPoint(beforeOperation=b).ref_operation is b.operation
    with pytest.raises(TypeError):
        ir.InsertionPoint(block=b)
    with pytest.raises(TypeError):
        ir.InsertionPoint(beforeOperation=m.body)
    with pytest.raises(TypeError):
        ir.InsertionPoint(block=m.body, beforeOperation=b)


def test_block_named_arguments(m):
    r = ir.Operation.create("custom.r", regions=1).regions[0]
    b = ir.Block.create_at_start(r)
    b2 = b.create_after(i32(), arg_locs=[ir.Location.unknown()])
    b.append(operation=ir.Operation.create("custom.x", ip=False))
    b2.erase_argument(index=0)
    assert len(b2.arguments) == 0
    other = ir.Block()
    other.append_to(region=r)
    assert len(r.blocks) == 3


# ---- Module ----------------------------------------------------------------------------------------


def test_module_parse_file(ctx, tmp_path):
    ctx.allow_unregistered_dialects = True
    path = tmp_path / "m.mlir"
    path.write_text("module @successfulParse {\n  \"custom.a\"() : () -> ()\n}\n")
    mod = ir.Module.parseFile(str(path))
    assert mod.context is ctx and "@successfulParse" in str(mod)
    assert str(path) in mod.operation.get_asm(enable_debug_info=True)  # locations name the file
    # An implicit module (several top-level operations), and one top-level operation.
    path.write_text('"custom.a"() : () -> ()\n"custom.b"() : () -> ()\n')
    assert str(ir.Module.parseFile(path=str(path), context=ctx)).count("custom.") == 2
    path.write_text('"custom.a"() : () -> ()\n')
    one = ir.Module.parseFile(str(path))
    assert one.operation.name == "builtin.module" and len(one.body.operations) == 1
    assert str(path) in one.operation.get_asm(enable_debug_info=True)
    path.write_text("")
    assert len(ir.Module.parseFile(str(path)).body.operations) == 0
    path.write_text("}SYNTAX ERROR{")
    with pytest.raises(ir.MLIRError, match="Unable to parse module assembly") as info:
        ir.Module.parseFile(str(path))
    assert "expected operation name" in str(info.value)
    with pytest.raises(ir.MLIRError, match="could not open input file"):
        ir.Module.parseFile(str(tmp_path / "missing.mlir"))
    with pytest.raises(ir.MLIRError, match="could not open input file"):
        ir.Module.parseFile(str(tmp_path))
    with pytest.raises(ValueError):
        ir.Module.parseFile("a\0b")
    with pytest.raises(TypeError):
        ir.Module.parseFile(path)  # a str, as upstream's
    with pytest.raises(TypeError):
        ir.Module.parseFile(str(path), context=3)


def test_module_parse_file_of_crashing_input(run_checks, tmp_path):
    # Input MLIR's parser is known to crash on goes through the arena's guarded parse.
    path = tmp_path / "bad.mlir"
    path.write_bytes(b'"custom.a"() {x = dense<[1, 2]> : tensor<3xi32>} : () -> ()\n' * 2)
    run_checks(f"""
        survive(ir.Module.parseFile, {str(path)!r})
    """)


def test_module_eq_hash(ctx):
    a = ir.Module.parse("module {}")
    b = ir.Module._CAPICreate(a._CAPIPtr)
    assert a == b and hash(a) == hash(b)
    assert a != ir.Module.parse("module {}")
    assert (a == 3) is False and a != "module"
    assert a._clear_mlir_module() is None and str(a) == "module {\n}\n"


# ---- creation locations from the call stack --------------------------------------------------------


def test_loc_tracebacks(m):
    # Upstream 22's Location.file(filename, start_line, start_col, end_line, end_col), which the
    # traceback locations are made of (locations.c).
    assert str(ir.Location.file("f.py", 1, 2, 1, 5)) == 'loc("f.py":1:2 to :5)'
    with ir.loc_tracebacks():
        op = ir.Operation.create("custom.t")
        module = ir.Module.create()
    here = os.path.basename(__file__)
    assert here in str(op.location) and "test_loc_tracebacks" in str(op.location)
    assert here in str(module.operation.location)
    with ir.loc_tracebacks(max_depth=0):
        assert str(ir.Operation.create("custom.t").location) == "loc(unknown)"
    assert str(ir.Operation.create("custom.t").location) == "loc(unknown)"  # off again
    with ir.loc_tracebacks():
        assert here in str(Plain("custom.plain", (0, True), results=[]).location)
        named = Plain("custom.plain", (0, True), results=[], loc=ir.Location.name("x"))
        assert str(named.location) == 'loc("x")'


def test_loc_tracebacks_without_a_context():
    with ir.loc_tracebacks():
        with pytest.raises(RuntimeError):
            ir.Operation.create("custom.t")


def test_creation_location_hook(m):
    # What loc_tracebacks installs (tether.dialects._ods_common._traceback_location): op and
    # module creation without a location asks it; a failing or wrong answer raises.
    from tether import _tether

    calls = []

    def hook(context):
        calls.append(context)
        return ir.Location.name("from_hook", context=context)

    _tether._set_loc_traceback_fn(hook)
    try:
        op = ir.Operation.create("custom.t")
        view = Plain("custom.plain", (0, True), results=[])
        module = ir.Module.create()
        assert [str(x.location) for x in (op, view, module.operation)] == ['loc("from_hook")'] * 3
        assert calls[0] is m.context
        assert str(ir.Operation.create("custom.t", loc=ir.Location.name("given")).location) == \
            'loc("given")'
        _tether._set_loc_traceback_fn(lambda context: "not a location")
        with pytest.raises(TypeError, match="a Location"):
            ir.Operation.create("custom.t")

        def fail(context):
            raise KeyError("hook")

        _tether._set_loc_traceback_fn(fail)
        with pytest.raises(KeyError):
            Plain("custom.plain", (0, True), results=[])
        with pytest.raises(TypeError):
            _tether._set_loc_traceback_fn(3)
    finally:
        _tether._set_loc_traceback_fn(None)
    assert str(ir.Operation.create("custom.t").location) == "loc(unknown)"
