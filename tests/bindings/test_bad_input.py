"""Bad input: an exception, never a crash.

Two layers:
- subprocess checks: every risky group of calls runs in a fresh interpreter (`run_snippet`), so a
  crash (segfault, abort, fatal error) fails that one test instead of killing the run. Inside the
  snippet, `expect(E, fn, ...)` asserts the exact exception type where the API defines one, and
  `survive(fn, ...)` accepts any Exception (or success) where it does not (conftest.py's snippet
  helpers);
- in-process `pytest.raises` checks of the documented exception types.
"""

import pytest

from tether import ir
from tether.passmanager import PassManager

PRELUDE = r"""
import sys
import tether
from tether import ir
from tether.passmanager import PassManager

ASM = '''module {
  func.func @f(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    %1 = arith.muli %0, %b : i32
    return %1 : i32
  }
  func.func @g() {
    return
  }
}'''
ctx = ir.Context()
ctx.__enter__()
ir.Location.unknown().__enter__()
i32 = ir.IntegerType.get_signless(32)
f32 = ir.F32Type.get()

def fresh():
    m = ir.Module.parse(ASM)
    f = m.body.operations[0]
    block = f.regions[0].blocks[0]
    add, mul, ret = list(block.operations)
    return m, f, block, add, mul, ret
"""

EPILOGUE = r"""
report_failures()
"""

GROUPS = {
    "malformed_assembly": r"""
for bad in ["module {", "func.func @f(", "%0 = arith.addi", "}}}}", "module { func.func @f() { return %x : i32 } }",
            "\x00\x01\x02", "module attributes {x = } {}", "\"unregistered.op\"() : () -> ()",
            "module { func.func @f() -> i32 { return } }", "a" * 100000, "module {" * 200]:
    expect(ir.MLIRError, ir.Module.parse, bad)
expect(ir.MLIRError, ir.Type.parse, "tensor<2x")
expect(ir.MLIRError, ir.Type.parse, "")
expect(ir.MLIRError, ir.Attribute.parse, "{a = ")
expect(ir.MLIRError, ir.Attribute.parse, "")
e = raises(ir.MLIRError, ir.Module.parse, "module {")
assert [d.message for d in e.error_diagnostics] == ["expected operation name in quotes"], str(e)
assert '"-":1:7: expected operation name in quotes' in str(e), str(e)
expect((ir.MLIRError, ValueError), PassManager.parse, "builtin.module(nope-not-a-pass)")
expect((ir.MLIRError, ValueError), PassManager.parse, "builtin.module(canonicalize")
survive(PassManager.parse, "")
print("ok")
""",
    "wrong_types_constructors": r"""
STRING_TAKERS = (ir.Module.parse, ir.Type.parse, ir.Attribute.parse, ir.StringAttr.get,
                 ir.Location.name, PassManager.parse)
for x in (None, 3, 2.5, ["i32"], object()):
    for fn in STRING_TAKERS + (ir.TypeAttr.get, ir.ArrayAttr.get, ir.IntegerType):
        expect(TypeError, fn, x)
    if not isinstance(x, (int, float)):
        expect(TypeError, ir.FloatAttr.get_f32, x)
# bytes may or may not be accepted where a str is expected (upstream accepts some): no crash.
for fn in STRING_TAKERS:
    survive(fn, b"i32")
expect(TypeError, ir.Module.parse, "module {}", context="ctx")
expect(TypeError, ir.Module.parse, "module {}", 42)
expect(TypeError, ir.Type.parse, "i32", context=object())
expect(TypeError, ir.IntegerType.get_signless, "32")
expect(TypeError, ir.IntegerType.get_signless, None)
expect(TypeError, ir.IntegerType.get_signless, 3.5)
survive(ir.IntegerType.get_signless, -1)
survive(ir.IntegerType.get_signless, 1 << 40)
survive(ir.IntegerType.get_signless, 1 << 24)
expect(TypeError, ir.RankedTensorType.get, None, f32)
expect(TypeError, ir.RankedTensorType.get, [2], None)
expect(TypeError, ir.RankedTensorType.get, ["a"], f32)
expect(TypeError, ir.RankedTensorType.get, [None], f32)
survive(ir.RankedTensorType.get, [-5], f32)
survive(ir.RankedTensorType.get, [1 << 62, 1 << 62], f32)
expect(TypeError, ir.MemRefType.get, [2], None)
expect(TypeError, ir.MemRefType.get, None, f32)
expect(TypeError, ir.FunctionType.get, None, [])
expect(TypeError, ir.FunctionType.get, [None], [])
expect(TypeError, ir.FunctionType.get, [], [1])
expect(TypeError, ir.FunctionType.get, [i32], "i32")
expect(TypeError, ir.IntegerAttr.get, None, 1)
expect(TypeError, ir.IntegerAttr.get, i32, None)
expect(TypeError, ir.IntegerAttr.get, i32, "1")
survive(ir.IntegerAttr.get, f32, 1)
survive(ir.IntegerAttr.get, i32, 1 << 100)
expect(TypeError, ir.FloatAttr.get, None, 1.0)
expect(TypeError, ir.FloatAttr.get, f32, None)
survive(ir.FloatAttr.get, i32, 1.0)
expect(TypeError, ir.ArrayAttr.get, [None])
expect(TypeError, ir.ArrayAttr.get, [1, 2])
expect(TypeError, ir.ArrayAttr.get, [i32])
expect(TypeError, ir.Location.file, None, 1, 2)
expect(TypeError, ir.Location.file, "f", "1", 2)
expect(TypeError, ir.Location.file, "f", 1, None)
expect(TypeError, ir.Location.name, "n", childLoc="loc")
expect(TypeError, ir.Location.unknown, context="ctx")
expect(TypeError, ir.Region, context="ctx")
expect(TypeError, ir.Block, arg_types=[None])
survive(ir.Block, arg_types=None)
expect(TypeError, ir.Block, arg_types=["i32"])
expect(TypeError, ir.InsertionPoint, None)
expect(TypeError, ir.InsertionPoint, "block")
expect(TypeError, ir.InsertionPoint.at_block_begin, None)
expect(TypeError, ir.InsertionPoint.at_block_terminator, None)
expect(TypeError, ir.Block.create_at_start, None, [])
expect(TypeError, ir.F32Type, None)
expect(TypeError, ir.StringAttr, None)
expect((TypeError, ValueError), ir.IntegerType, i32.__class__)
print("ok")
""",
    "wrong_types_operation_create": r"""
m, f, block, add, mul, ret = fresh()
attr = ir.IntegerAttr.get(i32, 1)
expect(TypeError, ir.Operation.create, None)
expect(TypeError, ir.Operation.create, 42)
expect(ValueError, ir.Operation.create, "arith.constant", results=[None])  # upstream's
expect(TypeError, ir.Operation.create, "arith.constant", results=["i32"])
expect(TypeError, ir.Operation.create, "arith.constant", results=i32)
expect(ValueError, ir.Operation.create, "arith.addi", operands=[None, None])
# (an Operation with one result may be accepted as its value, as a convenience)
survive(ir.Operation.create, "arith.addi", results=[i32], operands=[add, add])
expect((TypeError, ValueError), ir.Operation.create, "arith.addi", operands=[f, f])
expect(TypeError, ir.Operation.create, "arith.addi", operands=[i32])
expect(TypeError, ir.Operation.create, "arith.addi", operands=add.result)
expect(TypeError, ir.Operation.create, "arith.constant", attributes={"value": None})
expect(TypeError, ir.Operation.create, "arith.constant", attributes={"value": 1})
expect(TypeError, ir.Operation.create, "arith.constant", attributes={None: attr})
expect(TypeError, ir.Operation.create, "arith.constant", attributes={1: attr})
expect(TypeError, ir.Operation.create, "arith.constant", attributes=[("value", attr)])
expect(ValueError, ir.Operation.create, "cf.br", successors=[None])
expect(TypeError, ir.Operation.create, "cf.br", successors=[add])
expect(TypeError, ir.Operation.create, "cf.br", successors=block)
expect(TypeError, ir.Operation.create, "scf.execute_region", regions=[None])
expect(TypeError, ir.Operation.create, "scf.execute_region", regions=["r"])
survive(ir.Operation.create, "scf.execute_region", regions=None)
expect((ValueError, TypeError), ir.Operation.create, "scf.execute_region", regions=-1)
expect(TypeError, ir.Operation.create, "arith.constant", loc="here")
expect(TypeError, ir.Operation.create, "arith.constant", ip="here")
expect(TypeError, ir.Operation.create, "arith.constant", ip=block)
# Ops that do not verify can still be created and printed; verify raises.
bad = ir.Operation.create("arith.addi", results=[f32], operands=[add.result])
expect(ir.MLIRError, bad.verify)
str(bad)
# Unknown op names: an exception (unregistered dialects are not allowed), never a crash.
survive(ir.Operation.create, "nodialect.op")
survive(ir.Operation.create, "")
survive(ir.Operation.create, "arith.")
survive(ir.Operation.create, "\x00")
print("ok")
""",
    "wrong_types_methods": r"""
m, f, block, add, mul, ret = fresh()
for x in (None, 1, "x", i32, block, object()):
    expect(TypeError, add.move_before, x)
    expect(TypeError, add.move_after, x)
    expect(TypeError, block.append, x)
    expect(TypeError, add.result.replace_all_uses_with, x)
    expect(TypeError, ir.InsertionPoint(block).insert, x)
    expect(TypeError, mul.operands.__setitem__, 0, x)
    expect(TypeError, f.walk, x) if not callable(x) else None
    expect(TypeError, f.attributes.__setitem__, "k", x)
    if x is not None and not isinstance(x, (str, int)):  # upstream allows int (positional) keys
        expect(TypeError, f.attributes.__getitem__, x)
        expect(TypeError, f.attributes.__setitem__, x, ir.UnitAttr.get())
expect(TypeError, f.attributes.__getitem__, None)
expect(TypeError, f.attributes.__delitem__, None)
expect(KeyError, f.attributes.__getitem__, "missing")
expect(KeyError, f.attributes.__delitem__, "missing")
expect(TypeError, f.regions[0].blocks.append, None)
expect(TypeError, f.regions[0].blocks.append, "i32")
expect(TypeError, ir.Block.create_at_start, f.regions[0], [None])
survive(ir.Block.create_at_start, f.regions[0], None)
expect(TypeError, block.operations.__getitem__, "0")
expect(TypeError, block.operations.__getitem__, None)
expect(TypeError, block.operations.__getitem__, 1.0)
expect(TypeError, add.operands.__getitem__, None)
pm = PassManager.parse("builtin.module(canonicalize)")
expect(TypeError, pm.run, None)
survive(pm.run, m)  # a Module may be accepted in place of its operation
expect(TypeError, pm.run, "module")
expect(TypeError, pm.run, block)
# Walk callbacks that misbehave.
survive(f.walk, lambda o: 42)
survive(f.walk, lambda o: "advance")
survive(f.walk, lambda: None)
survive(f.walk, lambda o: 1 / 0)
survive(f.walk, lambda o, p: None)
expect(TypeError, f.walk, lambda o: None, walk_order="post")
print("ok")
""",
    "none_everywhere": r"""
m, f, block, add, mul, ret = fresh()
for call in [
    lambda: ir.Module.parse(None), lambda: ir.Type.parse(None), lambda: ir.Attribute.parse(None),
    lambda: ir.Operation.create(None),
    lambda: ir.Operation.create("arith.constant", attributes={"value": None}),
    lambda: ir.Operation.create("scf.execute_region", regions=[None]),
    lambda: add.move_before(None), lambda: add.move_after(None), lambda: block.append(None),
    lambda: add.result.replace_all_uses_with(None), lambda: mul.operands.__setitem__(0, None),
    lambda: f.attributes.__setitem__("x", None), lambda: f.attributes.__getitem__(None),
    lambda: f.walk(None), lambda: ir.InsertionPoint(None), lambda: ir.InsertionPoint(block).insert(None),
    lambda: ir.InsertionPoint.at_block_begin(None), lambda: ir.InsertionPoint.at_block_terminator(None),
    lambda: ir.Block.create_at_start(None, [i32]), lambda: ir.Block(arg_types=[None]),
    lambda: f.regions[0].blocks.append(None),
    lambda: ir.IntegerType.get_signless(None), lambda: ir.FunctionType.get([None], [None]),
    lambda: ir.RankedTensorType.get([2], None), lambda: ir.MemRefType.get([2], None),
    lambda: ir.IntegerAttr.get(None, 1), lambda: ir.IntegerAttr.get(i32, None),
    lambda: ir.FloatAttr.get(None, 1.0), lambda: ir.StringAttr.get(None), lambda: ir.TypeAttr.get(None),
    lambda: ir.ArrayAttr.get([None]), lambda: ir.IntegerType(None), lambda: ir.Attribute.parse(None),
    lambda: ir.Location.file(None, 1, 1), lambda: ir.Location.name(None),
    lambda: PassManager.parse(None), lambda: PassManager.parse("builtin.module(canonicalize)").run(None),
]:
    expect(TypeError, call)
# None where None is allowed (defaults) is fine.
ir.Operation.create("arith.constant", results=[i32], operands=None, successors=None,
                    attributes={"value": ir.IntegerAttr.get(i32, 0)}, loc=None, ip=None)
ir.Module.parse("module {}", None)
ir.Module.create(loc=None)
ir.Location.name("n", childLoc=None)
print("ok")
""",
    "out_of_range": r"""
m, f, block, add, mul, ret = fresh()
for seq, n in [(block.operations, 3), (block.arguments, 2), (f.regions, 1), (f.regions[0].blocks, 1),
               (add.operands, 2), (add.results, 1), (ret.results, 0), (m.body.operations, 2),
               (ir.ArrayAttr.get([ir.UnitAttr.get()]), 1)]:
    assert len(seq) == n, (seq, n)
    for i in (n, n + 1, -n - 1, 1 << 40, -(1 << 40), 1 << 70, -(1 << 70)):
        expect((IndexError, OverflowError), seq.__getitem__, i)
    if n:
        seq[n - 1]
expect(IndexError, mul.operands.__setitem__, 2, add.result)
expect(IndexError, mul.operands.__setitem__, 1 << 40, add.result)
expect(ValueError, lambda: f.result)
expect(ValueError, lambda: ret.result)
expect(ValueError, ir.InsertionPoint.at_block_terminator, m.body)
fty = ir.FunctionType.get([i32], [])
expect(IndexError, lambda: fty.inputs[1])
expect(IndexError, lambda: fty.results[0])
print("ok")
""",
    "use_after_erase": r"""
m, f, block, add, mul, ret = fresh()
res = add.result
arg = block.arguments[0]
region = f.regions[0]
ops, regions, blocks, args, attrs = mul.operands, f.regions, region.blocks, block.arguments, f.attributes
g = m.body.operations[1]
f.erase()
E = ir.InvalidatedError
for o in (f, add, mul, ret):
    for attr in ("name", "operands", "results", "regions", "attributes", "parent", "block",
                 "location", "context", "result"):
        survive(getattr, o, attr)
    expect(E, lambda: o.name)
    expect(E, o.get_asm)
    expect(E, o.verify)
    expect(E, o.erase)
    expect(E, o.clone)
    expect(E, o.detach_from_parent)
    expect(E, o.move_before, g)
    expect(E, o.move_after, g)
    expect(E, g.move_before, o)
    expect(E, g.move_after, o)
    expect(E, o.walk, lambda x: None)
    expect(E, str, o)
    expect(E, o.print)
    expect(E, m.body.append, o)
    expect(E, lambda: ir.InsertionPoint(o).insert(ir.Operation.create("func.return")))
    survive(repr, o)
    survive(hash, o)
    survive(lambda: o == g)
for v in (res, arg):
    expect(E, lambda: v.type)
    expect(E, lambda: v.owner)
    expect(E, v.replace_all_uses_with, v)
    expect(E, ir.Operation.create, "arith.addi", results=[i32], operands=[v, v])
    survive(str, v)
for s in (ops, regions, blocks, args):
    expect(E, len, s)
    expect(E, s.__getitem__, 0)
    expect(E, list, s)
expect(E, attrs.__getitem__, "sym_name")
expect(E, attrs.__setitem__, "x", ir.UnitAttr.get())
expect(E, attrs.__delitem__, "sym_name")
expect(E, len, attrs)
expect(E, lambda: block.owner)
expect(E, block.append, ir.Operation.create("func.return"))
expect(E, lambda: region.owner)
expect(E, lambda: region.blocks.append(i32))
expect(E, lambda: region.blocks.append(ir.Block()))
expect(E, ir.Block.create_at_start, region, [])
expect(E, lambda: ir.InsertionPoint(block).insert(ir.Operation.create("func.return")))
expect(E, lambda: ir.InsertionPoint.at_block_begin(block).insert(ir.Operation.create("func.return")))
pm = PassManager.parse("func.func(canonicalize)")
expect(E, pm.run, f)
# Calls on an op whose module op was erased ("dead module").
m2, f2, block2, add2, mul2, ret2 = fresh()
mop = m2.operation
mop.erase()
survive(lambda: m2.operation)
for o in (mop, f2, add2):
    expect(E, lambda: o.name)
    expect(E, str, o)
expect(E, str, m2)
expect(E, lambda: len(m2.body.operations))
expect(E, pm.run, mop)
tether.collect()
expect(E, lambda: add2.name)
# The untouched op still works.
assert g.operation.name == "func.func" and m.body.operations[0] is g
print("ok")
""",
    "structural_misuse": r"""
m, f, block, add, mul, ret = fresh()
# Erasing an op whose result is still used elsewhere: refused, nothing changes.
survive(add.erase)
assert add.name == "arith.addi" and mul.operands[0] == add.result
# Inserting an op into itself / its own descendant.
survive(m.body.append, m.operation)
survive(f.move_before, add)
survive(f.move_after, ret)
survive(m.operation.move_before, f)
survive(ir.InsertionPoint(block).insert, f)
with ir.Location.unknown():
    survive(lambda: ir.InsertionPoint(add).insert(m.operation))
# Appending an attached op moves it (as upstream); into itself is refused.
survive(block.append, f)
assert f.parent is m.operation and add.parent is f.operation
assert m.operation.verify()
# Mixing contexts.
other = ir.Context()
om = ir.Module.parse(ASM, other)
of = om.body.operations[0]
oadd = of.regions[0].blocks[0].operations[0]
survive(ir.Operation.create, "arith.addi", results=[i32], operands=[oadd.result, oadd.result])
survive(oadd.move_before, add)
survive(m.body.append, om.body.operations[1].detach_from_parent())
survive(mul.operands.__setitem__, 0, oadd.result)
survive(add.result.replace_all_uses_with, oadd.result)
survive(lambda: f.attributes.__setitem__("x", ir.Attribute.parse("unit", context=other)))
survive(PassManager.parse("builtin.module(canonicalize)", context=other).run, m.operation)
assert m.operation.verify() and om.operation.verify()
# Block arguments from a detached block used, then the block dropped.
b = ir.Block(arg_types=[i32])
use = ir.Operation.create("arith.addi", results=[i32], operands=[b.arguments[0], b.arguments[0]])
b = None
tether.collect()
assert use.operands[0].owner.arguments[0] == use.operands[0]
str(use)
# Region given to two ops / block appended twice.
r = ir.Region()
ir.Operation.create("scf.execute_region", regions=[r])
survive(ir.Operation.create, "scf.execute_region", regions=[r])
survive(ir.Operation.create, "scf.execute_region", regions=[f.regions[0]])
bb = ir.Block()
ir.Region().blocks.append(bb)
survive(ir.Region().blocks.append, bb)
survive(ir.Operation.create, "scf.execute_region", regions=[ir.Region(), r])
print("ok")
""",
    "walk_mutation_callbacks": r"""
m, f, block, add, mul, ret = fresh()
def erase_everything(o):
    if o.name == "func.func":
        o.erase()
survive(m.operation.walk, erase_everything)
str(m)
m, f, block, add, mul, ret = fresh()
survive(f.walk, lambda o: f.erase() if o.name == "arith.muli" else None)
str(m)
m, f, block, add, mul, ret = fresh()
survive(m.operation.walk, lambda o: m.operation.erase())
survive(str, m)
m, f, block, add, mul, ret = fresh()
def drop_and_collect(o):
    global m
    m = None
    tether.collect()
survive(f.walk, drop_and_collect)
assert f.operation.name == "func.func"
m, f, block, add, mul, ret = fresh()
survive(f.walk, lambda o: o.detach_from_parent() if o.name == "func.return" else None)
survive(f.walk, lambda o: o.move_before(f) if o.name == "arith.muli" else None, walk_order=ir.WalkOrder.POST_ORDER)
str(m)
m, f, block, add, mul, ret = fresh()
survive(f.walk, lambda o: f.walk(lambda p: p.erase() if p.name == "func.return" else None))
str(m)
print("ok")
""",
    "uninitialized_wrappers": r"""
classes = [getattr(ir, n) for n in dir(ir) if isinstance(getattr(ir, n), type)]
for cls in classes:
    for make in (lambda: cls.__new__(cls), lambda: object.__new__(cls), lambda: cls()):
        try:
            obj = make()
        except Exception:
            continue
        for name in dir(obj):
            if name.startswith("__") and name not in ("__str__", "__repr__", "__len__", "__iter__",
                                                     "__hash__", "__enter__", "__exit__"):
                continue
            try:
                a = getattr(obj, name)
                if callable(a):
                    if name == "__exit__":
                        a(None, None, None)
                    else:
                        a()
            except Exception:
                pass
print("ok")
""",
    "pickling_and_copying": r"""
import copy, pickle, weakref
m, f, block, add, mul, ret = fresh()
for obj in (m, f, block, add.result, f.regions[0], i32, ir.IntegerAttr.get(i32, 1), ir.Location.unknown(), ctx):
    survive(pickle.dumps, obj)
    survive(copy.copy, obj)
    survive(copy.deepcopy, obj)
    survive(weakref.ref, obj)
print("ok")
""",
    "fuzz_methods": r"""
import io, contextlib, os, tempfile
# Methods given a string may write a file of that name (write_bytecode("x")): in a temporary
# folder, removed at the end, never in the tree (a file `x` written there was once committed).
home = os.getcwd()
home_before = sorted(os.listdir(home))
scratch = tempfile.TemporaryDirectory(prefix="tether-fuzz-methods-")
os.chdir(scratch.name)
def objects():
    m, f, block, add, mul, ret = fresh()
    pm = PassManager.parse("builtin.module(canonicalize)")
    return dict(module=m, op=f, child=add, block=block, region=f.regions[0], value=add.result,
                arg=block.arguments[0], operands=mul.operands, results=add.results,
                attrs=f.attributes, blocks=f.regions[0].blocks, ops=block.operations,
                type=ir.RankedTensorType.get([2], f32), attr=ir.ArrayAttr.get([ir.UnitAttr.get()]),
                loc=ir.Location.file("a", 1, 2), ip=ir.InsertionPoint(block), pm=pm,
                region_detached=ir.Region(), block_detached=ir.Block(arg_types=[i32]))
def pool():
    m, f, block, add, mul, ret = fresh()
    return [None, 0, -1, 1 << 70, 2.5, "x", b"x", [], [None], [i32], {}, {"a": None}, object(),
            f, block, add.result, i32, ir.UnitAttr.get(), f.regions[0], ir.Location.unknown()]
names = sorted({n for o in objects().values() for n in dir(o)
                if not n.startswith("__") or n in ("__getitem__", "__setitem__", "__delitem__",
                                                   "__contains__", "__eq__", "__init__")})
sink = io.StringIO()
calls = 0
with contextlib.redirect_stdout(sink):
    for key in sorted(objects()):
        for name in names:
            for args in [()] + [(p,) for p in range(len(pool()))] + [(0, 1), (5, 19), (13, 0)]:
                objs = objects()
                o = objs[key]
                try:
                    a = getattr(o, name)
                except AttributeError:
                    break
                except Exception:
                    continue  # e.g. a class property such as `current` with nothing current
                vals = pool()
                real = tuple(vals[i] for i in args)
                try:
                    if callable(a):
                        a(*real)
                        calls += 1
                except Exception:
                    pass
    # Static / class-level entry points.
    statics = [ir.Module.parse, ir.Module.create, ir.Type.parse, ir.Attribute.parse,
               ir.Operation.create, ir.Block.create_at_start, ir.InsertionPoint.at_block_begin,
               ir.InsertionPoint.at_block_terminator, ir.IntegerType.get_signless, ir.IndexType.get,
               ir.F32Type.get, ir.F64Type.get, ir.FunctionType.get, ir.RankedTensorType.get,
               ir.MemRefType.get, ir.IntegerAttr.get, ir.FloatAttr.get, ir.FloatAttr.get_f32,
               ir.StringAttr.get, ir.TypeAttr.get, ir.ArrayAttr.get, ir.UnitAttr.get,
               ir.Location.unknown, ir.Location.file, ir.Location.name, PassManager.parse,
               ir.Region, ir.Block, ir.Context, ir.InsertionPoint, ir.IntegerType, ir.StringAttr]
    for fn in statics:
        vals = pool()
        for args in [()] + [(v,) for v in vals] + [(a, b) for a in vals[:8] for b in vals[12:]]:
            try:
                fn(*args)
            except Exception:
                pass
tether.collect()
assert calls > 100, calls
os.chdir(home)
scratch.cleanup()
assert sorted(os.listdir(home)) == home_before, "the method calls wrote files where the test runs"
print("ok")
""",
}


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_no_crash_in_subprocess(group, run_snippet, snippet_helpers):
    # Exit status 0 (every `expect` held, nothing crashed) and no crash report on stderr.
    proc = run_snippet(snippet_helpers + PRELUDE + GROUPS[group] + EPILOGUE, timeout=300,
                       allow_stderr=True)
    assert proc.stdout.strip().splitlines()[-1] == "ok", proc.stdout


def test_diagnostics_do_not_leak_to_stderr(run_snippet, snippet_helpers):
    """MLIR's diagnostics travel in the MLIRError, not on the process's stderr."""
    run_snippet(snippet_helpers + PRELUDE + GROUPS["malformed_assembly"] + EPILOGUE, timeout=300)


# Degenerate calls that crashed or hung before their fix, each in a fresh interpreter.


def test_rauw_with_itself_returns(run_checks):
    run_checks("""
    m = ir.Module.parse('func.func @f(%a: i32) -> i32 { %0 = arith.addi %a, %a : i32\\n return %0 : i32 }')
    add = m.body.operations[0].regions[0].blocks[0].operations[0]
    add.result.replace_all_uses_with(add.result)
    assert len(list(add.result.uses)) == 1
    m.operation.verify()
    """)


def test_huge_integers_are_range_errors(run_checks):
    run_checks("""
    for kw in [dict(regions=2**61), dict(regions=-1)]:
        raises((OverflowError, ValueError), ir.Operation.create, "t.x", **kw)
    m = ir.Module.parse("module {}")
    raises((OverflowError, ValueError), m.operation.get_asm, large_elements_limit=2**70)
    """)


def test_dense_array_addition_takes_an_array_and_a_list(run_checks):
    # The reflected `other + array` reaches the same C slot with `other` first: an attribute of
    # another kind was read as a dense array (a wrong error, or a crash).
    run_checks("""
    f32 = ir.DenseF32ArrayAttr.get([1.0, 2.0])
    i64 = ir.DenseI64ArrayAttr.get([1, 2])
    s = ir.StringAttr.get("x")
    for x, y in [(f32, i64), (i64, f32), (f32, s), (s, f32), (i64, s), (f32, (1.0,)), ([1.0], f32)]:
        raises(TypeError, lambda: x + y)
    assert f32.__radd__(s) is NotImplemented and f32.__radd__(i64) is NotImplemented
    assert list(f32 + [3.0]) == [1.0, 2.0, 3.0]
    assert list(i64 + [3]) == [1, 2, 3]
    raises(TypeError, lambda: i64 + [1.5])
    arr = ir.ArrayAttr.get([s])
    raises(TypeError, lambda: s + arr)
    raises(TypeError, lambda: f32 + arr)
    assert len(arr + [s]) == 2
    """)


# ---------------------------------------------------------------------------------------------
# In-process checks of the documented exception types.

ASM = r"""module {
  func.func @f(%a: i32, %b: i32) -> i32 {
    %0 = arith.addi %a, %b : i32
    return %0 : i32
  }
}"""


@pytest.fixture
def ir_objects(ctx):
    with ir.Location.unknown():
        m = ir.Module.parse(ASM)
        f = m.body.operations[0]
        block = f.regions[0].blocks[0]
        add, ret = list(block.operations)
        yield m, f, block, add, ret


@pytest.mark.parametrize("asm", ["module {", "func.func @f(", "%0 = arith.addi %1, %1 : i32",
                                 "module { func.func @f() -> i32 { return } }"])
def test_malformed_assembly_raises_mlir_error(ctx, asm):
    with pytest.raises(ir.MLIRError) as e:
        ir.Module.parse(asm)
    assert str(e.value)
    assert not isinstance(e.value, ir.InvalidatedError)


def test_mlir_error_text_contains_diagnostic(ctx):
    with pytest.raises(ir.MLIRError) as e:
        ir.Module.parse("module {")
    assert "1:7: expected operation name in quotes" in str(e.value), str(e.value)
    with pytest.raises(ir.MLIRError) as e:
        ir.Type.parse("tensor<2x")
    assert "expected non-function type" in str(e.value), str(e.value)


def test_wrong_argument_types_raise_type_error(ir_objects):
    m, f, block, add, ret = ir_objects
    i32 = ir.IntegerType.get_signless(32)
    with pytest.raises(TypeError):
        ir.Module.parse(None)
    with pytest.raises(TypeError):
        ir.Module.parse(42)
    with pytest.raises(TypeError):
        ir.Type.parse(None)
    with pytest.raises(TypeError):
        ir.IntegerType.get_signless("32")
    with pytest.raises(TypeError):
        ir.Operation.create("arith.addi", results=[i32], operands=[i32, i32])
    with pytest.raises(TypeError):
        ir.Operation.create("arith.constant", results=[i32], attributes={"value": 1})
    with pytest.raises(TypeError):
        add.move_before("op")
    with pytest.raises(TypeError):
        block.append(i32)
    with pytest.raises(TypeError):
        add.result.replace_all_uses_with(i32)
    with pytest.raises(TypeError):
        ir.FunctionType.get([1], [])
    with pytest.raises(TypeError):
        ir.IntegerAttr.get(i32, "1")
    with pytest.raises(TypeError):
        ir.ArrayAttr.get([1])
    with pytest.raises(TypeError):
        f.walk(42)


@pytest.mark.parametrize("call", [
    lambda m, f, b, a, r: a.move_before(None),
    lambda m, f, b, a, r: a.move_after(None),
    lambda m, f, b, a, r: b.append(None),
    lambda m, f, b, a, r: a.result.replace_all_uses_with(None),
    lambda m, f, b, a, r: r.operands.__setitem__(0, None),
    lambda m, f, b, a, r: f.attributes.__setitem__("x", None),
    lambda m, f, b, a, r: ir.Operation.create("scf.execute_region", regions=[None]),
    lambda m, f, b, a, r: ir.InsertionPoint(None),
    lambda m, f, b, a, r: ir.InsertionPoint(b).insert(None),
    lambda m, f, b, a, r: ir.Block.create_at_start(None, []),
    lambda m, f, b, a, r: ir.IntegerAttr.get(None, 1),
    lambda m, f, b, a, r: ir.TypeAttr.get(None),
    lambda m, f, b, a, r: ir.RankedTensorType.get([1], None),
    lambda m, f, b, a, r: PassManager.parse(None),
    lambda m, f, b, a, r: f.walk(None),
])
def test_none_where_a_value_is_expected_raises_type_error(ir_objects, call):
    with pytest.raises(TypeError):
        call(*ir_objects)


@pytest.mark.parametrize("call, message", [
    (lambda: ir.Operation.create("arith.addi", operands=[None]), "operand value cannot be None"),
    (lambda: ir.Operation.create("arith.constant", results=[None]), "result type cannot be None"),
    (lambda: ir.Operation.create("cf.br", successors=[None]), "successor block cannot be None"),
])
def test_none_in_operation_create_lists_is_upstreams_value_error(ctx, call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_out_of_range_raises_index_error(ir_objects):
    m, f, block, add, ret = ir_objects
    with pytest.raises(IndexError):
        block.operations[2]
    with pytest.raises(IndexError):
        block.operations[-3]
    with pytest.raises(IndexError):
        block.arguments[2]
    with pytest.raises(IndexError):
        add.operands[2]
    with pytest.raises(IndexError):
        add.results[1]
    with pytest.raises(IndexError):
        f.regions[1]
    with pytest.raises(IndexError):
        f.regions[0].blocks[1]
    with pytest.raises(IndexError):
        ret.operands[1] = add.result
    with pytest.raises(ValueError):
        ret.result


def test_use_after_erase_raises_invalidated_error(ir_objects):
    m, f, block, add, ret = ir_objects
    res = add.result
    f.erase()
    with pytest.raises(ir.InvalidatedError, match="erased"):
        f.name
    with pytest.raises(ir.InvalidatedError, match="erased"):
        f.erase()
    with pytest.raises(ir.InvalidatedError) as e:
        add.get_asm()
    assert "parent" in str(e.value) and "erased" in str(e.value)
    with pytest.raises(ir.InvalidatedError):
        res.type
    with pytest.raises(RuntimeError):  # InvalidatedError is a RuntimeError
        ret.name
    assert len(m.body.operations) == 0


def test_erase_op_with_used_result_is_refused(ir_objects):
    m, f, block, add, ret = ir_objects
    with pytest.raises(ValueError, match="cannot erase: results or blocks of the operation are "
                                         "still used outside it"):
        add.erase()
    assert add.name == "arith.addi"
    assert ret.operands[0] == add.result
    assert f.verify()


def test_cyclic_insertion_is_refused(ir_objects):
    m, f, block, add, ret = ir_objects
    with pytest.raises((ValueError, RuntimeError)):
        f.move_before(add)
    with pytest.raises((ValueError, RuntimeError)):
        m.body.append(m.operation)
    assert f.parent is m.operation
    assert add.parent is f.operation
    assert m.operation.verify()


def test_mixing_contexts_is_refused(ir_objects):
    m, f, block, add, ret = ir_objects
    other = ir.Context()
    om = ir.Module.parse(ASM, other)
    oadd = om.body.operations[0].regions[0].blocks[0].operations[0]
    with pytest.raises((ValueError, RuntimeError, TypeError)):
        ir.Operation.create("arith.addi", results=[ir.IntegerType.get_signless(32)],
                            operands=[oadd.result, add.result])
    with pytest.raises((ValueError, RuntimeError, TypeError)):
        oadd.move_before(add)
    with pytest.raises((ValueError, RuntimeError, TypeError)):
        ret.operands[0] = oadd.result
    assert oadd.parent.parent is om.operation
    assert m.operation.verify() and om.operation.verify()
