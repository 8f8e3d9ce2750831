"""Arguments and IR that MLIR's C API trusts and MLIR crashes on, refused before MLIR sees them
(docs/python.md, "Crashes refused"). Upstream's package crashes on each of these in the same way
(the crash is MLIR's); tether raises the exception upstream's API documents for bad arguments
(ValueError / TypeError), or MLIRError where IR is parsed or verified.

Each program crashed the interpreter before its check existed, so each runs in a fresh interpreter
(`run_checks`), with freed memory overwritten; inside, asserts state what a user observes.
"""

import textwrap

import pytest

from tether import ir



def test_memref_layout_must_be_a_layout(run_checks):
    # mlirMemRefTypeGetChecked casts the layout to MemRefLayoutAttrInterface unchecked: SIGSEGV.
    run_checks("""
    for bad in (ir.StringAttr.get("x"), ir.IntegerAttr.get(i32, 3), ir.UnitAttr.get(),
                ir.ArrayAttr.get([])):
        e = raises(ValueError, ir.MemRefType.get, [2, 3], i32, layout=bad)
        assert "layout" in str(e) and str(bad) in str(e), e
    ident = ir.AffineMapAttr.get(ir.AffineMap.get_identity(2))
    assert str(ir.MemRefType.get([2, 3], i32, layout=ident)) == "memref<2x3xi32>"
    strided = ir.StridedLayoutAttr.get(0, [3, 1])
    assert str(ir.MemRefType.get([2, 3], i32, layout=strided)) == "memref<2x3xi32, strided<[3, 1]>>"
    parsed = ir.Attribute.parse("strided<[3, 1], offset: ?>")
    t = ir.MemRefType.get([2, 3], i32, layout=parsed)
    assert str(t) == "memref<2x3xi32, strided<[3, 1], offset: ?>>", t
    assert t.layout == parsed
    """)


def test_dense_elements_of_types_without_a_width(run_checks):
    # MLIR computes the storage width of any element type as an integer's or a float's: an opaque
    # element type (a numpy datetime64 array given an explicit opaque type) crashed (SIGSEGV).
    pytest.importorskip("numpy")
    run_checks("""
    import numpy as np
    opaque = ir.OpaqueType.get("foo", "bar")
    for arr in (np.array(["2020-01-01"], dtype="datetime64[D]"), np.array([1, 2], dtype=np.int32)):
        e = raises(ValueError, ir.DenseElementsAttr.get, arr, type=opaque)
        assert "!foo.bar" in str(e) and "integers, index, floats or complex" in str(e), e
        shaped = ir.RankedTensorType.get([len(arr)], opaque)
        e = raises(ValueError, ir.DenseElementsAttr.get, arr, type=shaped)
        assert "!foo.bar" in str(e), e
    # What MLIR can store still works, with an explicit element type or a shaped one.
    a = ir.DenseElementsAttr.get(np.array([1, 2], dtype=np.int32), type=i32)
    assert str(a) == "dense<[1, 2]> : tensor<2xi32>", a
    c = ir.ComplexType.get(ir.F32Type.get())
    z = ir.DenseElementsAttr.get(np.array([1 + 2j], dtype=np.complex64), type=c)
    assert str(z.type) == "tensor<1xcomplex<f32>>", z
    """)


def test_resource_blob_alignment_in_text(run_checks):
    # A blob's first four bytes are its alignment; 0, which MLIR's parser does not check, made it
    # ask for all of memory: "LLVM ERROR: out of memory", abort. Python's constructor refused it already.
    run_checks("""
    def blob(align_hex):
        return ('module attributes {a.x = dense_resource<b> : tensor<1xi32>} {}\\n'
                '{-#\\n  dialect_resources: {\\n    builtin: {\\n      b: "0x%s01000000"\\n'
                '    }\\n  }\\n#-}' % align_hex)
    e = raises(ir.MLIRError, ir.Module.parse, blob("00000000"))
    assert "alignment 0; an alignment must be a power of two" in str(e), e
    e = raises(ir.MLIRError, ir.Module.parse, blob("03000000"))   # MLIR's own check
    assert "power-of-2" in str(e), e
    e = raises(ir.MLIRError, ir.Module.parse, blob("00000001"))   # 2^24: too much
    assert "alignment 16777216" in str(e), e
    m = ir.Module.parse(blob("04000000"))
    assert "dense_resource<b" in str(m)  # b_1 ... when the context has b
    """)


AFFINE = """
F = '''func.func @f(%n: index, %m: index) {
  {op}
  return
}'''
FOR = ('"affine.for"({operands}) <{{lowerBoundMap = affine_map<{lb}>, upperBoundMap = '
       'affine_map<() -> (10)>, step = {step} : index, operandSegmentSizes = array<i32: {seg}>}}> ({{'
       ' ^bb0(%i: index): "affine.yield"() : () -> () }}) : ({types}) -> ()')
PAR = ('"affine.parallel"({operands}) <{{lowerBoundsGroups = dense<1> : tensor<1xi32>, '
       'lowerBoundsMap = affine_map<{lb}>, reductions = [], steps = [1], upperBoundsGroups = '
       'dense<1> : tensor<1xi32>, upperBoundsMap = affine_map<() -> (10)>}}> ({{ ^bb0(%i: index): '
       '"affine.yield"() : () -> () }}) : ({types}) -> ()')
def text(op):
    return F.replace("{op}", op)
"""


def test_affine_loops_that_verify_but_crash_passes(run_checks):
    # affine.for whose operand segments do not match its bound maps verified, then lower-affine
    # crashed (SIGSEGV) and affine-loop-normalize aborted; a step of 0 made affine-loop-unroll
    # divide by zero (SIGFPE); a generic affine.parallel with fewer operands than its maps take
    # crashed MLIR's own verifier inside the parser (such text is parsed unverified, checked, then
    # verified). Each is refused where MLIR would first meet it.
    run_checks(AFFINE + textwrap.dedent("""
    bad_for = FOR.format(operands="%n, %m", lb="(d0) -> (d0)", step=1, seg="0, 2, 0",
                         types="index, index")
    e = raises(ir.MLIRError, ir.Module.parse, text(bad_for))
    assert "has 0 lower and 2 upper bound operands, but its bound maps take 1 and 0" in str(e), e
    step0 = FOR.format(operands="", lb="() -> (0)", step=0, seg="0, 0, 0", types="")
    e = raises(ir.MLIRError, ir.Module.parse, text(step0))
    assert "step 0; the step must be positive" in str(e), e
    bad_par = PAR.format(operands="", lb="(d0) -> (d0)", types="")
    e = raises(ir.MLIRError, ir.Module.parse, text(bad_par))
    assert "'affine.parallel' op has 0 operands, but its bound maps take 1 and 0" in str(e), e
    # The same loops written correctly parse, verify and lower.
    good_for = FOR.format(operands="%n", lb="(d0) -> (d0)", step=2, seg="1, 0, 0", types="index")
    good_par = PAR.format(operands="%n", lb="(d0) -> (d0)", types="index")
    for good in (good_for, good_par):
        m = ir.Module.parse(text(good))
        PassManager.parse("builtin.module(lower-affine)").run(m.operation)
        assert "scf." in str(m) and "affine." not in str(m), m
    """))


def test_affine_loops_built_in_python_are_refused_by_verify_and_passes(run_checks):
    # The same loops made operation by operation (no parser to stop them): verify() reports them,
    # printing falls back to the generic form, and passes refuse to run on them.
    run_checks(AFFINE + textwrap.dedent("""
    m = ir.Module.parse(text(""))
    func = m.body.operations[0]
    n = func.regions[0].blocks[0].arguments[0]
    index = ir.IndexType.get()
    lb = ir.AffineMapAttr.get(ir.AffineMap.get_identity(1))
    ub = ir.AffineMapAttr.get(ir.AffineMap.get_constant(10))
    loop = ir.Operation.create(
        "affine.for", operands=[n], regions=1,
        attributes={"lowerBoundMap": lb, "upperBoundMap": ub,
                    "step": ir.IntegerAttr.get(index, 1),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 1, 0])},
        ip=ir.InsertionPoint.at_block_begin(func.regions[0].blocks[0]))
    body = loop.regions[0].blocks.append(index)
    ir.Operation.create("affine.yield", ip=ir.InsertionPoint(body))
    e = raises(ir.MLIRError, m.operation.verify)
    assert "has 0 lower and 1 upper bound operands" in str(e), e
    assert '"affine.for"' in str(m), "printed in the generic form"
    e = raises(ir.MLIRError, PassManager.parse("builtin.module(lower-affine)").run, m.operation)
    assert "bound operands" in str(e), e
    assert '"affine.for"' in str(m), "the pass did not run"
    # Fixed by hand, the same loop verifies and lowers.
    loop.attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([1, 0, 0])
    assert m.operation.verify()
    PassManager.parse("builtin.module(lower-affine)").run(m.operation)
    assert "scf.for" in str(m), m
    """))


def test_an_undefined_name_and_a_redefinition_in_one_text(run_checks):
    # MLIR 19's parser, rejecting a text that uses a value name nothing defines and defines that
    # name twice later, writes into the operations it just freed: the heap is corrupted and a
    # later, unrelated allocation aborts. Such text is tried in a separate process first (which
    # exercises the heap after the parse); on MLIR 22 it is MLIR's own error.
    run_checks("""
    bad = ('func.func @a() -> i32 {\\n  return %x : i32\\n}\\n'
           'func.func @b() {\\n  %x = arith.constant 1 : i32\\n  %x = arith.constant 2 : i32\\n'
           '  return\\n}')
    for _ in range(3):
        e = raises(ir.MLIRError, ir.Module.parse, bad)
        assert ("redefinition of SSA value '%x'" in str(e) or
                "MLIR 19's parser corrupts its heap" in str(e)), e
    for i in range(300):  # the heap is intact: allocations after it work
        ir.Module.parse('func.func @ok%d() { return }' % i)
    # Valid text with a forward reference and names reused across functions still parses.
    good = ('func.func @f() {\\n  cf.br ^bb2\\n^bb1:\\n  "t.use"(%v) : (i32) -> ()\\n  return\\n'
            '^bb2:\\n  %v = "t.def"() : () -> i32\\n  cf.br ^bb1\\n}\\n'
            'func.func @g() {\\n  %v = "t.def"() : () -> i32\\n  return\\n}')
    m = ir.Module.parse(good)
    assert str(m).count('"t.def"') == 2, m
    """)


def test_the_permutation_of_nothing(run_checks):
    # MLIR takes the largest element of a permutation as its number of dimensions: with none it
    # read past the array (undefined; it hung, or made a map of garbage dimensions). Found by an
    # API-surface campaign (issue 35's siblings).
    run_checks("""
    for empty in ([], (), {}):
        assert str(ir.AffineMap.get_permutation(empty)) == "() -> ()"
    assert str(ir.AffineMap.get_permutation([1, 0])) == "(d0, d1) -> (d1, d0)"
    raises(ir.CastError, ir.AffineMap.get_permutation, [0, 0])
    """, timeout=60)
