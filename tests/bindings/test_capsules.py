"""The capsule protocol of upstream's bindings (`_CAPIPtr` / `_CAPICreate`, mlir-c's Interop.h), the
way extensions built against upstream's adaptor headers talk to the core package.

What tether checks (docs/linking.md, "Capsules"): a capsule's kind (its name, in any installed
package prefix), that it is a capsule at all, and for owner objects (Context, Module, Operation,
PassManager, ...) that it is one of tether's own; a capsule tether handed out keeps its object alive,
so it never dangles. What it cannot check: the pointer inside a foreign capsule of the right name
(made by another binding with a raw pointer); that is the extension's contract, as upstream's.
"""
import subprocess
import sys
import textwrap

import pytest

from tether import ir
from tether.passmanager import PassManager


def samples(ctx):
    m = ir.Module.parse("func.func @f(%a: i32) -> i32 { return %a : i32 }")
    f = m.body.operations[0]
    t = ir.IntegerType.get_signless(8)
    return {
        "Context": ctx,
        "Module": m,
        "Operation": f.operation,
        "Location": ir.Location.unknown(),
        "Type": t,
        "Attribute": ir.UnitAttr.get(),
        "Value": f.regions[0].blocks[0].arguments[0],
        "TypeID": t.typeid,
        "AffineExpr": ir.AffineExpr.get_constant(3),
        "AffineMap": ir.AffineMap.get_identity(2),
        "IntegerSet": ir.IntegerSet.get_empty(1, 0),
        "DialectRegistry": ir.DialectRegistry(),
        "PassManager": PassManager(),
    }


def cls_of(name):
    return PassManager if name == "PassManager" else getattr(ir, name)


def test_every_capsule_comes_back_as_the_same_object_or_an_equal_one():
    with ir.Context() as ctx, ir.Location.unknown():
        for name, obj in samples(ctx).items():
            back = cls_of(name)._CAPICreate(obj._CAPIPtr)
            assert back == obj or back is obj, name
            if name in ("Context", "Module", "Operation", "DialectRegistry", "PassManager"):
                assert back is obj, name  # tether's identity: one object per IR entity


def test_capsule_names_are_upstreams():
    with ir.Context() as ctx, ir.Location.unknown():
        for name, obj in samples(ctx).items():
            mod = "passmanager" if name == "PassManager" else "ir"
            assert f'"mlir.{mod}.{name}._CAPIPtr"' in repr(obj._CAPIPtr), name


def test_a_capsule_of_the_wrong_kind_is_an_error_for_every_pair():
    # The whole matrix in a child: a crash would be a signal there, not a lost test run.
    code = textwrap.dedent("""
        import sys
        sys.path[:0] = %r
        from test_capsules import samples, cls_of
        from tether import ir
        with ir.Context() as ctx, ir.Location.unknown():
            objs = samples(ctx)
            n = 0
            for a in objs:
                for b, obj in objs.items():
                    if a == b or {a, b} <= {"Operation", "Module"}:
                        continue
                    try:
                        cls_of(a)._CAPICreate(obj._CAPIPtr)
                    except (TypeError, ValueError):
                        n += 1
                    else:
                        print("accepted", a, b)
                for bad in (None, 1, "x", b"x", object(), ctx):
                    try:
                        cls_of(a)._CAPICreate(bad)
                    except (TypeError, ValueError):
                        n += 1
                    else:
                        print("accepted", a, repr(bad))
            print("refused", n)
    """) % ([__import__("os").path.dirname(__file__)] + sys.path,)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "accepted" not in p.stdout, p.stdout
    assert "refused" in p.stdout


def test_a_module_capsule_and_an_operation_capsule_are_not_interchangeable():
    with ir.Context():
        m = ir.Module.parse("")
        with pytest.raises(ValueError):
            ir.Operation._CAPICreate(m._CAPIPtr)


def test_a_capsule_keeps_its_object_alive(run_checks):
    # Capsules are all that hold a module, a type and their contexts while tether's collector
    # runs and frees what nothing holds (a module and a context made beside them go): what a
    # capsule points to never dangles, and once the capsule goes, so does its context. In a child:
    # a capsule that dangled would crash the process.
    run_checks("""
    from tether import _tether

    def arenas():
        return _tether._global_stats()["arenas"]

    def collected_until(pred):  # the collector is conservative: at most 10 collections
        for _ in range(10):
            if pred():
                return True
            tether.collect()
        return pred()

    # A module held by its capsule alone, beside one nothing holds.
    c = ir.Context()
    def module_capsule():
        kept = ir.Module.parse("func.func @g() { return }", c)
        ir.Module.parse("func.func @h() { return }", c)
        return kept._CAPIPtr
    mcap = module_capsule()
    assert collected_until(lambda: c._get_live_root_count() == 1), c._get_live_root_count()
    back = ir.Module._CAPICreate(mcap)
    assert "func.func @g()" in str(back) and "@h" not in str(back), back

    # A type held by its capsule alone keeps its context; a context nothing holds goes.
    base = arenas()
    def type_capsule():
        held = ir.Context()
        ir.Module.parse("func.func @k() { return }", ir.Context())
        return ir.IntegerType.get_signless(4, context=held)._CAPIPtr
    tcap = type_capsule()
    assert collected_until(lambda: arenas() == base + 1), (arenas(), base)
    assert str(ir.Type._CAPICreate(tcap)) == "i4"
    del tcap
    assert collected_until(lambda: arenas() == base), (arenas(), base)
    """)


def raw_capsule(ptr, name):
    """A capsule as another binding makes it: a bare pointer and a name."""
    import ctypes

    f = ctypes.pythonapi.PyCapsule_New
    f.restype = ctypes.py_object
    f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    # A capsule keeps a pointer to its name: the bytes must outlive it.
    return f(ptr, _NAMES.setdefault(name, name.encode()), None)


_NAMES = {}


def pointer_of(cap, name):
    import ctypes

    f = ctypes.pythonapi.PyCapsule_GetPointer
    f.restype = ctypes.c_void_p
    f.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return f(cap, name.encode())


def test_owner_capsules_of_unknown_pointers_are_refused_without_reading_them():
    # DialectRegistry and PassManager capsules are checked against what tether holds (the pointer
    # is never followed): a pointer to anything else is a ValueError. (A Context capsule of a
    # context tether does not know is adopted, as upstream does: its pointer must be live.)
    import ctypes

    buf = ctypes.create_string_buffer(64)
    for cls, name in [(ir.DialectRegistry, "mlir.ir.DialectRegistry._CAPIPtr"),
                      (PassManager, "mlir.passmanager.PassManager._CAPIPtr")]:
        with pytest.raises(ValueError):
            cls._CAPICreate(raw_capsule(ctypes.addressof(buf), name))


def test_a_foreign_capsule_of_a_live_operation_gives_tethers_object():
    # As an extension hands back an operation it found or made: the same, tracked object.
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("func.func @h() { return }")
        f = m.body.operations[0].operation
        cap = raw_capsule(pointer_of(f._CAPIPtr, "mlir.ir.Operation._CAPIPtr"),
                          "mlir.ir.Operation._CAPIPtr")
        g = ir.Operation._CAPICreate(cap)
        assert g is f
        mcap = raw_capsule(pointer_of(m._CAPIPtr, "mlir.ir.Module._CAPIPtr"), "mlir.ir.Module._CAPIPtr")
        assert ir.Module._CAPICreate(mcap) is m
        g.erase()
        with pytest.raises(RuntimeError):  # erased through the object the capsule gave
            f.name
        # An operation the extension made and returns: owned and tracked like any other.
        made = ir.Operation.create("test.made", regions=1)
        cap2 = raw_capsule(pointer_of(made._CAPIPtr, "mlir.ir.Operation._CAPIPtr"),
                           "mlir.ir.Operation._CAPIPtr")
        assert ir.Operation._CAPICreate(cap2) is made.operation


PREFIX_PROGRAM = """
import tether.alias
from tether import ir
with ir.Context() as ctx:
    old = ctx._CAPIPtr
    tether.alias.install("myproject")
    import myproject.ir as pir
    assert pir is ir
    new = ctx._CAPIPtr
    print(repr(old).split('"')[1], repr(new).split('"')[1])
    # Capsules of both prefixes are read; one of a prefix never installed is not.
    assert ir.Context._CAPICreate(old) is ctx and ir.Context._CAPICreate(new) is ctx
    t = ir.IntegerType.get_signless(5)
    assert ir.Type._CAPICreate(t._CAPIPtr) == t
    import ctypes
    f = ctypes.pythonapi.PyCapsule_New
    f.restype = ctypes.py_object
    f.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    g = ctypes.pythonapi.PyCapsule_GetPointer
    g.restype = ctypes.c_void_p
    g.argtypes = [ctypes.py_object, ctypes.c_char_p]
    name = b"other.ir.Type._CAPIPtr"  # outlives the capsule
    stranger = f(g(t._CAPIPtr, b"myproject.ir.Type._CAPIPtr"), name, None)
    try:
        ir.Type._CAPICreate(stranger)
    except ValueError:
        print("refused")
"""


def test_a_package_prefix_names_the_capsules():
    p = subprocess.run([sys.executable, "-c", PREFIX_PROGRAM], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "mlir.ir.Context._CAPIPtr myproject.ir.Context._CAPIPtr" in p.stdout
    assert "refused" in p.stdout


@pytest.mark.parametrize("prefix", ["", "tether", "tether.ir", "a..b", "1x", 3, "x\0y"])
def test_bad_prefixes_are_refused(prefix):
    import tether.alias

    with pytest.raises(ValueError):
        tether.alias.install(prefix)
