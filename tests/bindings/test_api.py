"""Broad coverage of the tether.ir API surface (upstream `mlir.ir` spelling and behaviour)."""

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION

FUNC = r"""module {
  func.func @f(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    %1 = arith.muli %0, %b : i32
    return %1 : i32
  }
}"""


def _i32():
    return ir.IntegerType.get_signless(32)


def _const(value, t=None, **kw):
    t = t or _i32()
    return ir.Operation.create("arith.constant", results=[t],
                               attributes={"value": ir.IntegerAttr.get(t, value)}, **kw)


# ---------------------------------------------------------------------------------------------
# Context


def test_context_current():
    assert ir.Context.current is None  # as upstream: None when no context is current
    with ir.Context() as c:
        assert ir.Context.current is c or ir.Context.current == c
        with ir.Context() as d:
            assert ir.Context.current == d
            assert ir.Context.current != c
        assert ir.Context.current == c
    assert ir.Context.current is None


def test_context_upstream_dialects_available(ctx):
    m = ir.Module.parse(r"""module {
      func.func @k(%m: memref<4xf32>, %t: tensor<4xf32>, %i: index) -> f32 {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %v = memref.load %m[%c0] : memref<4xf32>
        %e = tensor.extract %t[%c0] : tensor<4xf32>
        %r = scf.for %iv = %c0 to %i step %c1 iter_args(%acc = %v) -> (f32) {
          %s = arith.addf %acc, %e : f32
          scf.yield %s : f32
        }
        return %r : f32
      }
    }""")
    assert m.operation.verify()
    names = []
    m.operation.walk(lambda o: names.append(o.name))
    for n in ("memref.load", "tensor.extract", "scf.for", "scf.yield", "arith.addf"):
        assert n in names


def test_allow_unregistered_dialects(ctx):
    assert ctx.allow_unregistered_dialects is False
    with pytest.raises(ir.MLIRError):
        ir.Module.parse('"mydialect.op"() : () -> ()')
    ctx.allow_unregistered_dialects = True
    assert ctx.allow_unregistered_dialects is True
    m = ir.Module.parse('"mydialect.op"() {x = 1 : i32} : () -> ()')
    op = m.body.operations[0]
    assert op.name == "mydialect.op"
    assert ir.IntegerAttr(op.attributes["x"]).value == 1
    created = ir.Operation.create("mydialect.other", loc=ir.Location.unknown())
    assert created.name == "mydialect.other"


# ---------------------------------------------------------------------------------------------
# Location


def test_locations(ctx):
    assert str(ir.Location.unknown()) == "loc(unknown)"
    f = ir.Location.file("a.mlir", 3, 7)
    assert str(f) == 'loc("a.mlir":3:7)'
    n = ir.Location.name("nm")
    assert "nm" in str(n)
    nc = ir.Location.name("nm", childLoc=f)
    assert "nm" in str(nc) and "a.mlir" in str(nc)
    assert str(ir.Location.unknown(context=ctx)) == "loc(unknown)"
    assert str(ir.Location.file("b.mlir", 1, 2, context=ctx)) == 'loc("b.mlir":1:2)'


def test_location_is_context_manager(ctx):
    with ir.Location.file("here.mlir", 10, 2):
        op = _const(1)
        m = ir.Module.create()
    assert str(op.location) == 'loc("here.mlir":10:2)'
    assert str(m.operation.location) == 'loc("here.mlir":10:2)'
    op2 = _const(2, loc=ir.Location.name("x"))
    assert "x" in str(op2.location)


def test_location_without_context_raises():
    # Upstream raises RuntimeError ("An MLIR function requires a Context ..."); ValueError is fine.
    with pytest.raises((ValueError, RuntimeError)):
        ir.Location.unknown()


# ---------------------------------------------------------------------------------------------
# Module


def test_module_parse_and_create(ctx):
    m = ir.Module.parse(FUNC)
    assert m.operation.name == "builtin.module"
    assert isinstance(m.body, ir.Block)
    assert len(m.body.operations) == 1
    assert m.context == ctx
    assert str(m) == str(m.operation)
    assert "func.func @f" in str(m)
    e = ir.Module.create(loc=ir.Location.unknown())
    assert len(e.body.operations) == 0
    assert str(e).strip() == "module {\n}"
    with ir.Location.unknown():
        e2 = ir.Module.create()
    assert e2.operation.name == "builtin.module"


def test_module_parse_with_explicit_context():
    c = ir.Context()
    m = ir.Module.parse("module {}", c)
    assert m.context == c
    m2 = ir.Module.parse("module {}", context=c)
    assert m2.context == c


def test_module_parse_error_has_diagnostics(ctx):
    with pytest.raises(ir.MLIRError) as e:
        ir.Module.parse("func.func @f( {")
    assert "expected" in str(e.value)
    with pytest.raises(ir.MLIRError) as e:
        ir.Module.parse("%x = arith.addi %y, %y : i32")
    assert str(e.value)


# ---------------------------------------------------------------------------------------------
# Operation: properties and sequences


def test_operation_properties(ctx, capfd):
    m = ir.Module.parse(FUNC)
    f = m.body.operations[0]
    assert isinstance(f, ir.OpView) and isinstance(f.operation, ir.Operation)
    assert f.operation.name == "func.func"
    assert f.parent is m.operation
    assert f.block is m.body
    assert m.operation.parent is None
    assert m.operation.block is None
    assert f.context == ctx
    assert isinstance(f.location, ir.Location)
    assert len(f.regions) == 1
    assert len(f.operands) == 0
    assert len(f.results) == 0
    with pytest.raises(ValueError):
        f.result
    block = f.regions[0].blocks[0]
    add = block.operations[0]
    assert len(add.operands) == 2
    assert add.operands[0] == block.arguments[0]
    assert add.operands[1] == block.arguments[1]
    assert [str(v.type) for v in add.operands] == ["i32", "i32"]
    assert len(add.results) == 1
    assert add.results[0] == add.result
    assert str(add.result.type) == "i32"
    asm = add.get_asm()
    assert "arith.addi" in asm and asm == str(add)
    f.print()
    out = capfd.readouterr().out
    assert "func.func @f" in out and "arith.muli" in out


def test_block_operations_sequence(ctx):
    m = ir.Module.parse(FUNC)
    block = m.body.operations[0].regions[0].blocks[0]
    ops = block.operations
    assert len(ops) == 3
    assert [o.name for o in ops] == ["arith.addi", "arith.muli", "func.return"]
    assert ops[-1].name == "func.return"
    assert ops[-3] is ops[0]
    with pytest.raises(IndexError):
        ops[3]
    with pytest.raises(IndexError):
        ops[-4]
    with pytest.raises(IndexError):
        block.arguments[2]
    with pytest.raises(IndexError):
        m.body.operations[0].regions[1]
    with pytest.raises(IndexError):
        m.body.operations[0].regions[0].blocks[1]
    with pytest.raises(IndexError):
        ops[0].operands[2]
    with pytest.raises(IndexError):
        ops[0].results[1]


def test_set_operand(ctx):
    m = ir.Module.parse(FUNC)
    block = m.body.operations[0].regions[0].blocks[0]
    add, mul, ret = list(block.operations)
    mul.operands[0] = block.arguments[0]
    assert mul.operands[0] == block.arguments[0]
    assert "arith.muli %arg0, %arg1" in str(mul)
    ret.operands[0] = add.result
    assert "return %0" in str(ret)
    mul.erase()
    assert m.operation.verify()


def test_attributes_mapping(ctx):
    m = ir.Module.parse(FUNC)
    f = m.body.operations[0]
    attrs = f.attributes
    assert "sym_name" in attrs
    assert "nope" not in attrs
    assert len(attrs) == 2  # sym_name, function_type
    assert ir.StringAttr(attrs["sym_name"]).value == "f"
    assert isinstance(attrs["sym_name"], ir.StringAttr)
    fty = ir.TypeAttr(attrs["function_type"]).value
    assert isinstance(fty, ir.FunctionType)
    with pytest.raises(KeyError):
        attrs["nope"]
    attrs["my.note"] = ir.StringAttr.get("hello")
    assert "my.note" in f.attributes
    assert len(f.attributes) == 3
    assert ir.StringAttr(f.attributes["my.note"]).value == "hello"
    assert 'my.note = "hello"' in str(f)
    f.attributes["my.note"] = ir.IntegerAttr.get(_i32(), 4)
    assert ir.IntegerAttr(f.attributes["my.note"]).value == 4
    del f.attributes["my.note"]
    assert "my.note" not in f.attributes
    assert len(f.attributes) == 2
    with pytest.raises(KeyError):
        del f.attributes["my.note"]
    with pytest.raises(TypeError):
        f.attributes["x"] = "not an attribute"
    with pytest.raises(TypeError):
        f.attributes[3] = ir.UnitAttr.get()


# ---------------------------------------------------------------------------------------------
# Operation.create


def test_operation_create_detached(ctx):
    with ir.Location.unknown():
        i32 = _i32()
        c = _const(7)
        assert c.block is None
        with pytest.raises(ValueError, match="Detached"):
            c.parent
        assert c.name == "arith.constant"
        assert isinstance(c.result, ir.OpResult)
        assert c.result.type == i32
        assert ir.IntegerAttr(c.attributes["value"]).value == 7
        assert c.verify()
        d = _const(8)
        add = ir.Operation.create("arith.addi", results=[i32], operands=[c.result, d.result])
        assert add.operands[0] == c.result and add.operands[1] == d.result
        assert len(add.results) == 1


def test_operation_create_with_insertion_points(ctx):
    with ir.Location.unknown():
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            a = _const(1)
            b = _const(2)
        assert list(m.body.operations) == [a, b]
        assert a.parent is m.operation
        # ip= overrides.
        c = _const(3, ip=ir.InsertionPoint.at_block_begin(m.body))
        assert m.body.operations[0] is c.opview  # Operation.create gives the Operation on MLIR 22
        # Before an op.
        with ir.InsertionPoint(b):
            d = _const(4)
        assert [o for o in m.body.operations] == [c, a, d, b]
        # ip.insert of a detached op.
        e = _const(5)
        ir.InsertionPoint(m.body).insert(e)
        assert m.body.operations[-1] is e.opview
        assert e.parent is m.operation
        # InsertionPoint.current
        ip = ir.InsertionPoint(m.body)
        with ip:
            assert ir.InsertionPoint.current is ip
        values = [ir.IntegerAttr(o.attributes["value"]).value for o in m.body.operations]
        assert values == [3, 1, 4, 2, 5]


def test_insertion_point_at_block_terminator(ctx):
    m = ir.Module.parse(FUNC)
    block = m.body.operations[0].regions[0].blocks[0]
    with ir.Location.unknown(), ir.InsertionPoint.at_block_terminator(block):
        c = _const(9)
    assert block.operations[3].name == "func.return"
    assert block.operations[2] is c.opview  # Operation.create gives the Operation on MLIR 22
    with pytest.raises(ValueError):
        ir.InsertionPoint.at_block_terminator(m.body)  # builtin.module body has none


def test_operation_create_regions_int_and_successors(ctx):
    with ir.Location.unknown():
        i32 = _i32()
        fty = ir.FunctionType.get([i32], [i32])
        f = ir.Operation.create(
            "func.func",
            attributes={"sym_name": ir.StringAttr.get("br"),
                        "function_type": ir.TypeAttr.get(fty)},
            regions=1,
        )
        assert len(f.regions) == 1
        region = f.regions[0]
        assert region.owner is f.opview  # Operation.create gives the Operation on MLIR 22
        entry = region.blocks.append(i32)
        exit_ = region.blocks.append(i32)
        assert len(region.blocks) == 2
        assert entry.owner is f.opview
        with ir.InsertionPoint(entry):
            ir.Operation.create("cf.br", operands=[entry.arguments[0]], successors=[exit_])
        with ir.InsertionPoint(exit_):
            ir.Operation.create("func.return", operands=[exit_.arguments[0]])
        assert f.verify()
        asm = str(f)
        assert "cf.br ^bb1(%arg0 : i32)" in asm
        assert "return" in asm
        three = ir.Operation.create("scf.execute_region", regions=3)
        assert len(three.regions) == 3
        assert all(len(r.blocks) == 0 for r in three.regions)


def test_operation_create_argument_errors(ctx):
    with ir.Location.unknown():
        with pytest.raises(TypeError):
            ir.Operation.create("arith.constant", results=["i32"])
        with pytest.raises(TypeError):
            ir.Operation.create("arith.addi", operands=[1, 2])
        with pytest.raises(TypeError):
            ir.Operation.create("arith.constant", attributes={"value": 3})
        with pytest.raises(TypeError):
            ir.Operation.create(42)
        with pytest.raises(TypeError):
            ir.Operation.create("scf.execute_region", regions="two")


def test_keyword_arguments_at_one_call_site(ctx):
    # A call site passes the same keyword names every time; tether remembers where they go. The
    # same site with a different number of positional arguments, other names (**kw), and another
    # site in between must still be parsed afresh.
    i32 = ir.IntegerType.get_signless(32)
    m = ir.Module.create(ir.Location.unknown())
    names = []
    with ir.Location.unknown(), ir.InsertionPoint(m.body):
        for args in [("arith.constant",), ("arith.constant", [i32]), ("arith.constant",)]:
            try:
                op = ir.Operation.create(*args, results=[i32],
                                         attributes={"value": ir.IntegerAttr.get(i32, 7)})
                names.append(op.name)
            except TypeError as e:
                names.append(str(e))
        for kw in [{"results": [i32]}, {"resluts": [i32]}, {"results": [i32], "ip": None}]:
            try:
                names.append(ir.Operation.create("test.op", **kw).name)
            except TypeError as e:
                names.append(str(e))
            with pytest.raises(TypeError, match="missing required argument 'name'"):
                ir.Operation.create(results=[i32])
    assert names == [
        "arith.constant",
        "create() got multiple values for argument 'results'",
        "arith.constant",
        "test.op",
        "create() got an unexpected keyword argument 'resluts'",
        "test.op",
    ]


# ---------------------------------------------------------------------------------------------
# Mutation


def test_move_before_after(ctx):
    with ir.Location.unknown():
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            a, b, c = _const(1), _const(2), _const(3)
        c.move_before(a)
        assert list(m.body.operations) == [c, a, b]
        c.move_after(b)
        assert list(m.body.operations) == [a, b, c]
        # Move a detached op into the block, and an op into another module.
        d = _const(4)
        d.move_after(a)
        assert list(m.body.operations) == [a, d, b, c]
        assert d.parent is m.operation
        m2 = ir.Module.create()
        with ir.InsertionPoint(m2.body):
            z = _const(0)
        a.move_before(z)
        assert a.parent is m2.operation
        assert list(m2.body.operations) == [a, z]
        assert list(m.body.operations) == [d, b, c]


def test_clone(ctx):
    m = ir.Module.parse(FUNC)
    f = m.body.operations[0]
    g = f.clone()
    with pytest.raises(ValueError, match="Detached"):
        g.parent
    assert str(g).strip() == str(f).strip()
    g.attributes["sym_name"] = ir.StringAttr.get("g")
    m.body.append(g)
    assert len(m.body.operations) == 2
    assert m.operation.verify()
    assert "@g" in str(m) and "@f" in str(m)
    # The clone is independent: erasing inside it leaves the original intact.
    gb = g.regions[0].blocks[0]
    gb.operations[2].erase()
    assert len(gb.operations) == 2
    assert len(f.regions[0].blocks[0].operations) == 3


def test_erase_and_detach(ctx):
    m = ir.Module.parse(FUNC)
    f = m.body.operations[0]
    f.detach_from_parent()
    assert len(m.body.operations) == 0
    with pytest.raises(ValueError, match="Detached"):
        f.parent
    m.body.append(f)
    assert f.parent is m.operation
    f.erase()
    assert len(m.body.operations) == 0


def test_replace_all_uses_with(ctx):
    m = ir.Module.parse(FUNC)
    block = m.body.operations[0].regions[0].blocks[0]
    add, mul, ret = list(block.operations)
    mul.result.replace_all_uses_with(add.result)
    assert ret.operands[0] == add.result
    mul.erase()
    assert "return %0 : i32" in str(m)
    block.arguments[1].replace_all_uses_with(block.arguments[0])
    assert add.operands[1] == block.arguments[0]
    assert m.operation.verify()


def test_values(ctx):
    m = ir.Module.parse(FUNC)
    f = m.body.operations[0]
    block = f.regions[0].blocks[0]
    add = block.operations[0]
    r = add.result
    a = block.arguments[1]
    assert isinstance(r, ir.Value) and isinstance(r, ir.OpResult)
    assert not isinstance(r, ir.BlockArgument)
    assert isinstance(a, ir.Value) and isinstance(a, ir.BlockArgument)
    assert not isinstance(a, ir.OpResult)
    # As upstream's: the owner is the OpView on MLIR 22, the Operation on 19.
    assert r.owner is (add if MLIR_VERSION >= 22 else add.operation) and r.owner == add
    assert a.owner is block
    assert r.result_number == 0
    assert a.arg_number == 1
    if MLIR_VERSION >= 22:  # as upstream 22's: operands are their OpResult or BlockArgument
        assert add.operands[0] is a.owner.arguments[0]
        assert type(block.operations[1].operands[0]) is ir.OpResult
    else:  # as upstream 19's: operands are plain Values
        assert type(add.operands[0]) is ir.Value
    assert isinstance(ir.BlockArgument(add.operands[0]), ir.BlockArgument)
    assert isinstance(ir.OpResult(block.operations[1].operands[0]), ir.OpResult)
    assert a.type == _i32()
    assert len(block.arguments) == 2
    assert [x.arg_number for x in block.arguments] == [0, 1]


def test_verify_failure_raises_mlir_error(ctx):
    with ir.Location.unknown():
        i64 = ir.IntegerType.get_signless(64)
        c = _const(1)
        bad = ir.Operation.create("arith.addi", results=[i64], operands=[c.result, c.result])
        with pytest.raises(ir.MLIRError) as e:
            bad.verify()
        # MLIR's verifier's own diagnostic, as upstream gives it.
        assert [d.message for d in e.value.error_diagnostics] == [
            "'arith.addi' op requires the same type for all operands and results"]
        assert str(e.value).startswith("Verification failed:")
        m = ir.Module.parse(FUNC)
        ret = m.body.operations[0].regions[0].blocks[0].operations[-1]
        ret.erase()  # block without terminator
        with pytest.raises(ir.MLIRError) as e:
            m.operation.verify()
        [d] = e.value.error_diagnostics
        assert d.message.startswith("block with no terminator, has %1 = "), d.message


# ---------------------------------------------------------------------------------------------
# Walk


def test_walk_orders_and_results(ctx):
    m = ir.Module.parse(FUNC)
    pre = []
    m.operation.walk(lambda o: pre.append(o.name), walk_order=ir.WalkOrder.PRE_ORDER)
    assert pre == ["builtin.module", "func.func", "arith.addi", "arith.muli", "func.return"]
    post = []
    m.operation.walk(lambda o: post.append(o.name), walk_order=ir.WalkOrder.POST_ORDER)
    assert post == ["arith.addi", "arith.muli", "func.return", "func.func", "builtin.module"]
    # The default order is upstream's: POST_ORDER.
    default = []
    m.operation.walk(lambda o: default.append(o.name))
    assert default == post

    seen = []

    def stop_at_mul(o):
        seen.append(o.name)
        return ir.WalkResult.INTERRUPT if o.name == "arith.muli" else ir.WalkResult.ADVANCE

    m.operation.walk(stop_at_mul, walk_order=ir.WalkOrder.PRE_ORDER)
    assert seen == ["builtin.module", "func.func", "arith.addi", "arith.muli"]
    seen.clear()
    m.operation.walk(stop_at_mul, walk_order=ir.WalkOrder.POST_ORDER)
    assert seen == ["arith.addi", "arith.muli"]

    skipped = []

    def skip_funcs(o):
        skipped.append(o.name)
        return ir.WalkResult.SKIP if o.name == "func.func" else ir.WalkResult.ADVANCE

    m.operation.walk(skip_funcs, walk_order=ir.WalkOrder.PRE_ORDER)
    assert skipped == ["builtin.module", "func.func"]


def test_walk_callback_exception_propagates(ctx):
    m = ir.Module.parse(FUNC)

    def boom(o):
        if o.name == "arith.addi":
            raise KeyError("boom")

    # As upstream: the callback's exception becomes a RuntimeError (chained to the original).
    with pytest.raises(RuntimeError, match="Exception raised in callback") as info:
        m.operation.walk(boom)
    assert isinstance(info.value.__cause__, KeyError)
    assert m.operation.verify()


# ---------------------------------------------------------------------------------------------
# Region / Block


def test_region_and_block(ctx):
    m = ir.Module.parse(FUNC)
    f = m.body.operations[0]
    region = f.regions[0]
    assert isinstance(region, ir.Region)
    assert region.owner is f
    assert len(region.blocks) == 1
    assert [b for b in region.blocks] == [region.blocks[0]]
    block = region.blocks[0]
    assert block.owner is f
    assert block.region is region
    assert m.body.owner == m.operation and m.body.owner.operation is m.operation
    with ir.Location.unknown():
        new = region.blocks.append(_i32(), ir.F32Type.get())
        assert len(region.blocks) == 2
        assert region.blocks[1] is new
        assert [str(a.type) for a in new.arguments] == ["i32", "f32"]
        first = ir.Block.create_at_start(region, [ir.IndexType.get()])
        assert region.blocks[0] is first
        assert region.blocks[1] is block
        c = _const(1)
        new.append(c)
        assert c.block is new
        assert new.operations[0] is c.opview  # Operation.create gives the Operation on MLIR 22


def test_block_append_requires_detached_op(ctx):
    m = ir.Module.parse(FUNC)
    add = m.body.operations[0].regions[0].blocks[0].operations[0]
    # As upstream, append moves an attached operation to the end of the block.
    m.body.append(add)
    assert add.parent is m.operation
    assert m.body.operations[len(m.body.operations) - 1] is add


# ---------------------------------------------------------------------------------------------
# Types


def test_builtin_types(ctx):
    i32 = ir.IntegerType.get_signless(32)
    assert str(i32) == "i32" and i32.width == 32
    assert str(ir.IntegerType.get_signless(1)) == "i1"
    assert str(ir.IndexType.get()) == "index"
    assert str(ir.F32Type.get()) == "f32"
    assert str(ir.F64Type.get()) == "f64"
    f32 = ir.F32Type.get()
    fty = ir.FunctionType.get([i32, f32], [ir.IndexType.get()])
    assert str(fty) == "(i32, f32) -> index"
    assert list(fty.inputs) == [i32, f32]
    assert list(fty.results) == [ir.IndexType.get()]
    t = ir.RankedTensorType.get([2, 3], f32)
    assert str(t) == "tensor<2x3xf32>"
    assert list(t.shape) == [2, 3]
    assert t.element_type == f32
    mr = ir.MemRefType.get([4], ir.F64Type.get())
    assert str(mr) == "memref<4xf64>"
    assert ir.Type.parse("memref<4xf64>") == mr


def test_type_isinstance_and_casts(ctx):
    t = ir.Type.parse("i16")
    assert isinstance(t, ir.Type)
    assert isinstance(t, ir.IntegerType)
    if MLIR_VERSION >= 22:  # upstream 22 removed the static isinstance
        assert not hasattr(ir.IntegerType, "isinstance")
    else:
        assert ir.IntegerType.isinstance(t)
        assert not ir.F32Type.isinstance(t)
    assert ir.IntegerType(t).width == 16
    with pytest.raises(ValueError):
        ir.F32Type(t)
    with pytest.raises(ValueError):
        ir.IntegerType(ir.Type.parse("f32"))
    # The most specific class is returned from `.type` and `Type.parse`.
    m = ir.Module.parse(FUNC)
    arg = m.body.operations[0].regions[0].blocks[0].arguments[0]
    assert isinstance(arg.type, ir.IntegerType)
    assert isinstance(ir.Type.parse("tensor<2xf32>"), ir.RankedTensorType)
    assert isinstance(ir.Type.parse("memref<2xf32>"), ir.MemRefType)
    assert isinstance(ir.Type.parse("index"), ir.IndexType)
    assert isinstance(ir.Type.parse("f64"), ir.F64Type)
    assert isinstance(ir.Type.parse("(i32) -> ()"), ir.FunctionType)
    if MLIR_VERSION < 22:
        assert ir.RankedTensorType.isinstance(ir.Type.parse("tensor<2xf32>"))
        assert not ir.RankedTensorType.isinstance(ir.Type.parse("memref<2xf32>"))


def test_type_parse_error(ctx):
    with pytest.raises(ir.MLIRError):
        ir.Type.parse("not_a_type<")


# ---------------------------------------------------------------------------------------------
# Attributes


def test_attributes(ctx):
    i32 = _i32()
    ia = ir.IntegerAttr.get(i32, 42)
    assert ia.value == 42 and str(ia) == "42 : i32"
    assert ia.type == i32
    fa = ir.FloatAttr.get(ir.F64Type.get(), 2.5)
    assert fa.value == 2.5
    f32a = ir.FloatAttr.get_f32(1.5)
    assert f32a.value == 1.5 and "f32" in str(f32a)
    sa = ir.StringAttr.get("hi")
    assert sa.value == "hi" and str(sa) == '"hi"'
    ta = ir.TypeAttr.get(i32)
    assert ta.value == i32
    aa = ir.ArrayAttr.get([ia, sa, ir.UnitAttr.get()])
    assert len(aa) == 3
    assert aa[0] == ia
    assert ir.StringAttr(aa[1]).value == "hi"
    assert isinstance(aa[2], ir.UnitAttr)
    with pytest.raises(IndexError):
        aa[3]
    assert str(ir.UnitAttr.get()) == "unit"
    assert ir.Attribute.parse("42 : i32") == ia


def test_attribute_isinstance_and_casts(ctx):
    a = ir.Attribute.parse('"text"')
    assert isinstance(a, ir.Attribute)
    assert isinstance(a, ir.StringAttr)
    if MLIR_VERSION >= 22:
        assert not hasattr(ir.StringAttr, "isinstance")
    else:
        assert ir.StringAttr.isinstance(a)
        assert not ir.IntegerAttr.isinstance(a)
    assert ir.StringAttr(a).value == "text"
    with pytest.raises(ValueError):
        ir.IntegerAttr(a)
    assert isinstance(ir.Attribute.parse("[1, 2]"), ir.ArrayAttr)
    assert isinstance(ir.Attribute.parse("unit"), ir.UnitAttr)
    assert isinstance(ir.Attribute.parse("1.0 : f32"), ir.FloatAttr)
    assert isinstance(ir.Attribute.parse("i32"), ir.TypeAttr)
    assert isinstance(ir.Attribute.parse("7 : i8"), ir.IntegerAttr)


def test_attribute_parse_error(ctx):
    with pytest.raises(ir.MLIRError):
        ir.Attribute.parse("[1, 2")


def test_dict_and_symbol_ref_attributes(ctx):
    d = ir.DictAttr.get({"a": ir.UnitAttr.get(), "b": ir.StringAttr.get("x")})
    assert len(d) == 2 and "a" in d and "z" not in d
    assert isinstance(d["b"], ir.StringAttr) and d["b"].value == "x"
    with pytest.raises(KeyError):
        d["z"]
    with pytest.raises(TypeError):
        ir.DictAttr.get({"a": 1})
    f = ir.FlatSymbolRefAttr.get("foo")
    assert str(f) == "@foo" and f.value == "foo"
    # As upstream: a parsed flat reference comes back as a FlatSymbolRefAttr, a nested one as a
    # SymbolRefAttr (they share a TypeID).
    assert isinstance(ir.Attribute.parse("@bar"), ir.FlatSymbolRefAttr)
    nested = ir.Attribute.parse("@a::@b")
    assert isinstance(nested, ir.SymbolRefAttr) and nested.value == ["a", "b"]
    assert isinstance(ir.Attribute.parse("{x = 1 : i32}"), ir.DictAttr)


def test_enable_multithreading_and_opview(ctx):
    ctx.enable_multithreading(False)
    m = ir.Module.parse("func.func private @f()")
    op = m.body.operations[0]
    assert op.opview is op


def test_upstream_builder_idiom(ctx):
    # The shape of upstream examples: a function built with Operation.create, block arguments
    # passed straight as operands, nested insertion points.
    with ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.F32Type.get()
        with ir.InsertionPoint(module.body):
            ftype = ir.FunctionType.get([f32, f32], [f32])
            func = ir.Operation.create(
                "func.func", regions=1,
                attributes={"function_type": ir.TypeAttr.get(ftype),
                            "sym_name": ir.StringAttr.get("add")})
            entry = func.regions[0].blocks.append(f32, f32)
            with ir.InsertionPoint(entry):
                add = ir.Operation.create("arith.addf", results=[f32], operands=entry.arguments)
                ir.Operation.create("func.return", operands=add.results)
        assert module.operation.verify()
        text = str(module)
        assert "func.func @add(%arg0: f32, %arg1: f32) -> f32" in text
        assert "arith.addf %arg0, %arg1 : f32" in text
        with pytest.raises(TypeError):
            ir.Operation.create("func.return", operands="abc")


def test_block_and_region_iterate_like_upstream(ctx):
    m = ir.Module.parse("func.func @f() {\n  return\n}\nfunc.func private @g()")
    names = [op.operation.name for op in m.body]
    assert names == ["func.func", "func.func"]
    f = m.body.operations[0]
    blocks = list(f.regions[0])
    assert len(blocks) == 1 and blocks[0] is f.regions[0].blocks[0]
    assert [op.name for op in blocks[0]] == ["func.return"]


def test_dense_elements_splat(ctx):
    f32 = ir.F32Type.get()
    t = ir.RankedTensorType.get([2, 2], f32)
    d = ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(f32, 1.5))
    assert str(d) == "dense<1.500000e+00> : tensor<2x2xf32>"
    assert d.is_splat and d.type == t
    assert isinstance(ir.Attribute.parse("dense<[1, 2]> : tensor<2xi32>"), ir.DenseElementsAttr)
    with pytest.raises(ValueError):
        ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1))
    with pytest.raises(TypeError):
        ir.DenseElementsAttr.get_splat(t, 1.5)


def test_value_sequences_have_types(ctx):
    m = ir.Module.parse("func.func @f(%a: i32, %b: f32) -> (i32, f32) {\n"
                        "  return %a, %b : i32, f32\n}")
    f = m.body.operations[0]
    block = f.regions[0].blocks[0]
    assert [str(t) for t in block.arguments.types] == ["i32", "f32"]
    ret = block.operations[0]
    assert [str(t) for t in ret.operands.types] == ["i32", "f32"]
    assert isinstance(ret.operands.types[0], ir.IntegerType)


def test_operation_parse(ctx):
    op = ir.Operation.parse('func.func private @p()')
    with pytest.raises(ValueError, match="Detached"):
        op.operation.name == "func.func" and op.parent
    with pytest.raises(ir.MLIRError):
        ir.Operation.parse("func.func @")
    with pytest.raises(TypeError):
        ir.Operation.parse(None)


def test_value_uses_and_names(ctx):
    m = ir.Module.parse("func.func @f(%x: i32) -> i32 {\n"
                        "  %0 = arith.addi %x, %x : i32\n"
                        "  %1 = arith.muli %0, %x : i32\n"
                        "  return %1 : i32\n}")
    block = m.body.operations[0].regions[0].blocks[0]
    add, mul, ret = list(block.operations)
    x = block.arguments[0]
    uses = list(x.uses)
    assert sorted((u.owner.name, u.operand_number) for u in uses) == [
        ("arith.addi", 0), ("arith.addi", 1), ("arith.muli", 1)]
    assert all(u.owner is add or u.owner is mul for u in uses)
    assert [u.owner for u in add.result.uses] == [mul]
    assert add.result.get_name() == "%0"
    assert x.get_name() == "%arg0"
    mul_uses = list(mul.result.uses)
    assert len(mul_uses) == 1 and mul_uses[0].owner is ret


def test_callsite_and_fused_locations(ctx):
    a = ir.Location.file("a.py", 1, 2)
    b = ir.Location.file("b.py", 3, 4)
    cs = ir.Location.callsite(a, [b])
    assert str(cs) == 'loc(callsite("a.py":1:2 at "b.py":3:4))'
    fused = ir.Location.fused([a, b])
    assert str(fused) == 'loc(fused["a.py":1:2, "b.py":3:4])'
    with pytest.raises(ValueError):
        ir.Location.callsite(a, [])
    with pytest.raises(TypeError):
        ir.Location.fused([a, "b"])


def test_array_attr_iterates(ctx):
    # Upstream's ArrayAttr has __iter__ (its ArrayAttributeIterator); typed code iterates it.
    arr = ir.ArrayAttr.get([ir.UnitAttr.get(), ir.StringAttr.get("x"), ir.BoolAttr.get(True)])
    it = iter(arr)
    assert [str(a) for a in it] == ["unit", '"x"', "true"]
    assert next(it, None) is None
    assert [type(a).__name__ for a in arr] == ["UnitAttr", "StringAttr", "BoolAttr"]
    assert list(ir.ArrayAttr.get([])) == []


def test_enums_behave_as_enums():
    """tether's enums read their members as plain class attributes (CPython 3.11's EnumType
    __getattr__ hook is bypassed): everything an enum does still works."""
    from tether import _tether
    for cls in (ir.WalkResult, ir.WalkOrder, ir.DiagnosticSeverity):
        for name, member in cls.__members__.items():
            assert getattr(cls, name) is member is cls[name] is cls(int(member))
            assert str(member) == f"{cls.__name__}.{name}" and f"{member}" == str(member)
        assert list(cls) == list(cls.__members__.values())
        with pytest.raises(AttributeError):
            cls.NO_SUCH_MEMBER
        with pytest.raises(AttributeError):
            cls.__no_such_dunder__
        with pytest.raises(KeyError):
            cls["NO_SUCH_MEMBER"]
        with pytest.raises(ValueError):
            cls(99)
    assert ir.WalkResult.ADVANCE == 0 and isinstance(ir.WalkResult.SKIP, int)
    assert ir.WalkResult.__name__ == "WalkResult" and ir.WalkResult.__module__ == "tether.ir"
    # Only a metaclass defined in Python is accepted.
    for bad in (3, type, int, ir.WalkResult.ADVANCE):
        with pytest.raises(TypeError):
            _tether._plain_class_getattr(bad)
