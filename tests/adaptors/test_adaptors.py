"""Extensions written against upstream's adaptor headers (PybindAdaptors.h), built unchanged
against tether (//tests/adaptors:upstream_fixtures): upstream's python_test extension (prefix
``mlir``) and its standalone example (prefix ``mlir_standalone``). Every program runs in a child
process, on the package folder, as a user's would.
"""
import os
import subprocess
import sys
import textwrap

import pytest

FIXTURES = os.environ["TETHER_FIXTURES"]
UPSTREAM = os.environ["TETHER_UPSTREAM_SRC"]
FILECHECK = os.environ["TETHER_FILECHECK"]


def run(code, *args):
    env = dict(os.environ, PYTHONPATH=FIXTURES)
    p = subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode >= 0, f"signal {-p.returncode}\n{p.stderr}"
    return p


def ok(code, *args):
    p = run(code, *args)
    assert p.returncode == 0, p.stderr
    return p.stdout


def filecheck(path, *pre):
    env = dict(os.environ, PYTHONPATH=FIXTURES)
    p = subprocess.run([sys.executable, *pre, path], env=env, capture_output=True, text=True,
                       timeout=300, cwd=os.path.dirname(path))
    assert p.returncode == 0, p.stderr[-3000:]
    c = subprocess.run([FILECHECK, path], input=p.stdout, capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-3000:]


def test_upstream_python_test_runs_unchanged_through_the_alias():
    filecheck(os.path.join(UPSTREAM, "test/python/dialects/python_test.py"), "-m", "tether.run")


def test_upstream_standalone_smoketest_runs_unchanged():
    filecheck(os.path.join(UPSTREAM, "examples/standalone/test/python/smoketest.py"))


PRELUDE = """
import gc
import tether.alias
tether.alias.install()
from mlir.ir import *
import mlir.dialects.python_test as test
test.register_python_test_dialect(get_dialect_registry())
"""


def ok_test(code):
    """ok() of code after the python_test prelude (upstream's spelling, through the alias)."""
    return ok(PRELUDE + textwrap.dedent(code))


def test_extension_objects_come_back_as_tethers():
    out = ok_test("""
    with Context() as ctx, Location.unknown():
        t = test.TestType.get()
        assert isinstance(t, test.TestType) and isinstance(t, Type)
        assert t.context is ctx                       # tether's own Context object
        assert test.TestType.isinstance(t) and not test.TestType.isinstance(IntegerType.get_signless(8))
        # A type tether parses is the extension's too (isa both ways).
        parsed = Type.parse("!python_test.test_type")
        assert parsed == t and test.TestType.isinstance(parsed)
        # The extension's register_type_caster: tether's own factory gives its class.
        r = RankedTensorType.get([2, 3], IntegerType.get_signless(5))
        assert type(r).__name__ == "TestIntegerRankedTensorType", type(r)
        assert r.shape == [2, 3]
        # Its attribute class comes out of an op's attributes.
        op = test.CustomAttributedOp(test.TestAttr.get())
        assert type(op.test_attr).__name__ == "TestAttr"
        print("ok")
    """)
    assert out.strip() == "ok"


def test_extension_objects_keep_their_context_alive():
    ok_test("""
    def make():
        with Context():
            return test.TestType.get(), test.TestAttr.get()
    t, a = make()
    gc.collect(); gc.collect()
    assert str(t) == "!python_test.test_type" and str(a) == "#python_test.test_attr"
    assert str(t.context) .startswith("<")
    """)


def test_bad_arguments_to_the_extension_are_errors():
    out = ok_test("""
    with Context() as ctx:
        for bad in (42, "x", None, object(), ctx, Location.unknown()):
            try:
                test.TestType(bad)
            except (TypeError, ValueError, RuntimeError) as e:  # the extension's own words
                print("raised")
        other = Context()
        # An object of another context is accepted as MLIR accepts it (a cast), not a crash.
        i8 = IntegerType.get_signless(8, context=other)
        try:
            test.TestType(i8)
        except ValueError as e:
            print("ValueError", "Cannot cast type to TestType" in str(e))
    """)
    assert out.split().count("raised") == 6, out
    assert "ValueError True" in out


def test_prefix_package_capsules_carry_its_name():
    out = ok("""
    import mlir_standalone
    from mlir_standalone.ir import Context, Type
    import tether
    from tether import ir
    assert Context is ir.Context
    with Context() as ctx:
        cap = ctx._CAPIPtr
        print(type(cap).__name__, repr(cap).split('"')[1])
        assert Context._CAPICreate(cap) is ctx
        t = ir.IntegerType.get_signless(3)
        assert Type._CAPICreate(t._CAPIPtr) == t
        from mlir_standalone.dialects import standalone
        standalone.register_dialect()
        print(ir.Module.parse('%0 = arith.constant 2 : i32\\n%1 = standalone.foo %0 : i32'))
    """)
    assert "PyCapsule mlir_standalone.ir.Context._CAPIPtr" in out
    assert "standalone.foo" in out


def test_an_extension_of_another_prefix_fails_cleanly():
    # One capsule prefix per process: after mlir_standalone's package set its own, an extension
    # compiled for ``mlir.`` cannot read tether's capsules. A TypeError, not a crash.
    p = run("""
    import mlir_standalone
    import tether.alias
    tether.alias.install()
    from mlir.ir import *
    import mlir.dialects.python_test as test
    try:
        test.register_python_test_dialect(get_dialect_registry())
    except TypeError as e:
        print("TypeError")
    """)
    assert p.returncode == 0 and "TypeError" in p.stdout, p.stderr
