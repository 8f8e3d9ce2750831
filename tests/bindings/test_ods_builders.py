"""Issue 37: the builders of the generated op classes run in C (bindings/python/ir/ods_builder.c)
from specs gen/ods_builders.py makes of the generated Python.

The generator checks each spec against the function it read (python_of_spec gives the function
back, statement for statement). Here every op class of every dialect module of the package is built
twice with the same arguments: by its C builder (`Cls(...)`) and by the Python its spec stands for
(python_of_spec, run on a fresh instance), and both must give the same operation (name, operands,
result types, attributes, regions, successors) or raise the same exception. The arguments come from
the spec (a Value per operand, a Type per result, an Attribute of a likely kind per attribute):
plausible or not, both must agree. Also: subclasses that call super().__init__ (upstream's extras,
tether's own, a user's), class calls after the class changed, introspection.
"""

import importlib
import os
import pkgutil
import sys

import pytest

from tether import ir
from tether._mlir_version import MLIR_VERSION

pytestmark = pytest.mark.skipif(MLIR_VERSION < 22, reason="MLIR 19's builders stay Python")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python", "gen"))
import ods_builders  # noqa: E402


def op_modules():
    import tether.dialects as d
    names = [m.name for m in pkgutil.iter_modules(d.__path__) if m.name.endswith("_ops_gen")]
    return sorted(names)


def builders_of(mod):
    for name, cls in sorted(vars(mod).items()):
        if isinstance(cls, type) and type(vars(cls).get("__init__")).__name__ == "_OdsBuilder":
            yield name, cls


def python_builder(mod, spec):
    """The generated Python the spec stands for, as a function of the module (super() becomes
    OpView.__init__: the function is not in its class)."""
    src = ods_builders.python_of_spec(spec).replace("super().__init__(",
                                                    "_ods_ir.OpView.__init__(self, ")
    scope = dict(vars(mod))
    exec(src, scope)
    return scope["__init__"]


class Args:
    """Arguments for a spec: values of a few types, attributes by ODS kind."""

    def __init__(self, block):
        self.i32 = ir.IntegerType.get_signless(32)
        self.index = ir.IndexType.get()
        self.f32 = ir.F32Type.get()
        self.values = list(block.add_argument(t, ir.Location.unknown())
                           for t in (self.i32, self.i32, self.index, self.f32))
        self.block = block

    def attr(self, kind):
        k = kind.lower()
        if "unit" in k:
            return ir.UnitAttr.get()
        if "bool" in k or k == "i1attr":
            return ir.BoolAttr.get(True)
        if "symbolref" in k or "flatsymbol" in k:
            return ir.FlatSymbolRefAttr.get("sym")
        if "str" in k or "symbolname" in k:
            return ir.StringAttr.get("name")
        if "typeattr" in k or "anonymous" in k or "type" in k:
            return ir.TypeAttr.get(ir.FunctionType.get([], []))
        if "f32" in k or "f64" in k or "float" in k:
            return ir.FloatAttr.get(self.f32, 1.5)
        if "densei64array" in k or "densei32array" in k or "dense" in k and "array" in k:
            return ir.DenseI64ArrayAttr.get([1, 2]) if "64" in k else ir.DenseI32ArrayAttr.get(
                [1, 2])
        if "array" in k:
            return ir.ArrayAttr.get([])
        if "index" in k:
            return ir.IntegerAttr.get(self.index, 3)
        if "i64" in k or "int" in k or "i32" in k or "i8" in k or "i16" in k:
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(64 if "64" in k else 32), 3)
        return ir.IntegerAttr.get(self.i32, 7)

    def for_spec(self, spec, variant):
        names, npos, actions = spec
        args = {}
        k = 0
        for a in actions:
            kind, p = a[0], (a[1] if len(a) > 1 and isinstance(a[1], int) else None)
            v = self.values[(k + variant) % len(self.values)]
            k += 1
            if kind in ("operand", "operand?"):
                args[p] = v
            elif kind in ("operands", "operand_group"):
                args[p] = [v, self.values[(k + 1) % len(self.values)]][:variant % 3]
            elif kind in ("attr", "attr?"):
                args[p] = self.attr(a[3])
            elif kind == "unit":
                args[p] = bool(variant % 2)
            elif kind in ("result", "result?"):
                args[p] = self.i32
            elif kind == "result_list":
                args[p] = [self.i32, self.f32][:variant % 3]
            elif kind in ("successor", "successor_list"):
                args[p] = self.block if kind == "successor" else [self.block]
            elif kind == "regions":
                args[p] = variant % 2
        pos = [args.get(i, None) for i in range(npos)]
        kw = {names[i]: args[i] for i in range(npos, len(names)) if i in args}
        if variant == 2 and "results" in names:
            kw["results"] = [self.i32]
        return pos, kw


def outcome(make):
    """What building gives: the operation's parts, or the exception. Types and attributes are
    compared as objects (uniqued: equal when the same), not printed: an op given operands of a
    type it does not expect may infer a type MLIR's printer crashes on (upstream's too)."""
    try:
        op = make()
    except Exception as e:  # noqa: BLE001: any exception, compared as it is
        return ("raised", type(e).__name__, str(e))
    o = op.operation
    return ("built", o.name, [id_of(v) for v in o.operands], [r.type for r in o.results],
            sorted(((n, o.attributes[n]) for n in o.attributes), key=lambda x: x[0]),
            len(o.regions), len(o.successors))


def id_of(value):
    return (value.type, value.owner.name if isinstance(value.owner, ir.OpView) else "block",
            value.arg_number if isinstance(value, ir.BlockArgument) else value.result_number)


@pytest.mark.parametrize("modname", op_modules())
def test_c_builders_build_what_the_generated_python_builds(modname):
    mod = importlib.import_module("tether.dialects." + modname)
    built = 0
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.create()
        fn = ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": ir.StringAttr.get("f"),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))},
            ip=ir.InsertionPoint(module.body))
        region = fn.regions[0]
        args = Args(region.blocks.append())
        for name, cls in builders_of(mod):
            py = python_builder(mod, cls.__init__._ods_spec)
            for variant in range(3):
                pos, kw = args.for_spec(cls.__init__._ods_spec, variant)

                def by_python():
                    self = cls.__new__(cls)
                    py(self, *pos, **kw)
                    return self

                # Each in a block of its own (a terminator ends a block).
                with ir.InsertionPoint(region.blocks.append()):
                    c = outcome(lambda: cls(*pos, **kw))
                with ir.InsertionPoint(region.blocks.append()):
                    p = outcome(by_python)
                assert c == p, f"{modname}.{name} variant {variant}: C {c} != Python {p}"
                built += c[0] == "built"
    assert built > 0 or not list(builders_of(mod))


def test_every_generated_builder_is_c():
    for modname in op_modules():
        mod = importlib.import_module("tether.dialects." + modname)
        tail = open(mod.__file__).read().rstrip().splitlines()[-1]
        assert tail.startswith("# ods_builders.py:") and tail.endswith(" 0 in Python"), \
            (modname, tail)


def test_super_init_from_subclasses(ctx):
    from tether.dialects import arith

    class Doubled(arith.AddIOp):
        __slots__ = ()

        def __init__(self, x, *, loc=None, ip=None):
            super().__init__(x, x, loc=loc, ip=ip)

    class Plain(arith.AddIOp):
        __slots__ = ()

    with ir.Location.unknown():
        m = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(m.body):
            c = arith.ConstantOp(i32, 2)  # tether's extra, on the C builder
            d = Doubled(c.result)
            p = Plain(c.result, d.result, overflowFlags=ir.Attribute.parse(
                "#arith.overflow<nsw>"))
            arith.AddIOp.__init__(arith.AddIOp.__new__(arith.AddIOp), c, c)
        assert type(d) is Doubled and d.lhs == c.result and d.rhs == c.result
        assert type(p) is Plain and p.rhs == d.result
        assert "overflow<nsw>" in str(p)
        assert len(m.body.operations) == 4


def test_class_call_follows_a_changed_init(ctx):
    from tether.dialects import arith

    class Mine(arith.AddIOp):
        __slots__ = ()

    calls = []

    def init(self, *a, **k):
        calls.append(a)
        arith.AddIOp.__init__(self, *a, **k)

    with ir.Location.unknown():
        m = ir.Module.create()
        i32 = ir.IntegerType.get_signless(32)
        with ir.InsertionPoint(m.body):
            c = arith.ConstantOp(i32, 2)
            Mine(c, c)
            Mine.__init__ = init
            Mine(c, c)
    assert len(calls) == 1


def test_argument_errors_are_pythons(ctx):
    from tether.dialects import arith

    with ir.Location.unknown(), ir.InsertionPoint(ir.Module.create().body):
        c = arith.ConstantOp(ir.IntegerType.get_signless(32), 2)
        with pytest.raises(TypeError, match=r"AddIOp.__init__\(\) missing 1 required positional "
                                            r"argument: 'rhs'"):
            arith.AddIOp(c)
        with pytest.raises(TypeError, match=r"takes 3 positional arguments but 4 were given"):
            arith.AddIOp(c, c, c)
        with pytest.raises(TypeError, match=r"unexpected keyword argument 'nope'"):
            arith.AddIOp(c, c, nope=1)
        with pytest.raises(TypeError, match=r"multiple values for argument 'lhs'"):
            arith.AddIOp(c, c, lhs=c)
        with pytest.raises(TypeError, match=r"missing 2 required positional arguments: 'lhs' "
                                            r"and 'rhs'"):
            arith.AddIOp()


def test_introspection():
    import inspect
    from tether.dialects import arith
    sig = inspect.signature(arith.AddIOp.__init__)
    assert str(sig) == "(self, lhs, rhs, *, overflowFlags=None, results=None, loc=None, ip=None)"
    assert str(inspect.signature(arith.AddIOp)) == \
        "(lhs, rhs, *, overflowFlags=None, results=None, loc=None, ip=None)"
    assert arith.AddIOp.__init__.__qualname__ == "AddIOp.__init__"
