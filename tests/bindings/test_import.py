import tether
from tether import _tether, ir


def test_extension_is_the_built_one():
    assert _tether.__file__.endswith("_tether.so")
    assert tether.__file__.startswith(_tether.__file__.rsplit("/", 2)[0])


def test_parse_roundtrip_goes_through_mlir():
    with ir.Context():
        m = ir.Module.parse("func.func @f(%x: i32) -> i32 { return %x : i32 }")
        out = str(m)
    assert "func.func @f(%arg0: i32) -> i32" in out
    assert "return %arg0 : i32" in out


def test_parse_error_is_an_mlir_error():
    with ir.Context():
        try:
            ir.Module.parse("func.func @")
        except ir.MLIRError as e:
            assert "error" in str(e)
        else:
            raise AssertionError("no exception")
