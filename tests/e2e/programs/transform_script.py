# A transform-dialect schedule built from Python (as a scheduling DSL does): a named sequence that
# matches linalg.matmul and linalg.fill, tiles the matmul with scf.for loops, fuses, interchanges,
# applies canonicalization patterns, and runs it with transform.interpreter on a payload module.
# Also a transform.sequence printed (not applied) and a failing script.
from mlir.ir import *
from mlir.dialects import transform
from mlir.dialects.transform import structured, loop
from mlir.dialects.transform import interpreter

PAYLOAD = """
func.func @mm(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %m : tensor<64x48xf32>
}
"""


def build_schedule(tile_sizes):
    script = Module.create()
    script.operation.attributes["transform.with_named_sequence"] = UnitAttr.get()
    with InsertionPoint(script.body):
        seq = transform.NamedSequenceOp(
            "__transform_main", [transform.AnyOpType.get()], [],
            arg_attrs=[{"transform.readonly": UnitAttr.get()}],
        )
        with InsertionPoint(seq.body):
            root = seq.bodyTarget
            mm = structured.MatchOp.match_op_names(root, ["linalg.matmul"])
            structured.MatchOp.match_op_names(root, "linalg.fill")
            tiled = structured.TileUsingForOp(mm.result, sizes=tile_sizes)
            print("tile op loops:", len(tiled.loops), "tiled type:", tiled.tiled_linalg_op.type)
            func_h = transform.GetParentOp(transform.AnyOpType.get(), tiled.tiled_linalg_op,
                                           op_name="func.func")
            with InsertionPoint(transform.ApplyPatternsOp(func_h).patterns):
                transform.ApplyCanonicalizationPatternsOp()
            transform.YieldOp([])
    return script, seq


with Context(), Location.unknown():
    payload = Module.parse(PAYLOAD)
    script, seq = build_schedule([8, 16, 0])
    print(script)
    print("script verifies:", script.operation.verify())
    fn = payload.body.operations[0]
    matmul = [o for o in fn.entry_block.operations if o.name == "linalg.matmul"][0]
    fill = [o for o in fn.entry_block.operations if o.name == "linalg.fill"][0]
    interpreter.apply_named_sequence(payload, seq, script)
    print(payload)
    loops = []

    def collect(op):
        if op.name == "scf.for":
            loops.append(op)
        return WalkResult.ADVANCE

    payload.operation.walk(collect)
    print("scf.for loops:", len(loops))

    # A transform.sequence (the older form), only built and printed.
    with InsertionPoint(script.body):
        s = transform.SequenceOp(transform.FailurePropagationMode.Propagate, [], transform.AnyOpType.get())
        with InsertionPoint(s.body):
            ops = structured.MatchOp.match_op_names(s.bodyTarget, ["linalg.fill"])
            structured.GeneralizeOp(ops)
            transform.YieldOp()
    print(s)

    # loop transforms with upstream's builders (keywords, defaults)
    with InsertionPoint(script.body):
        s2 = transform.SequenceOp(transform.FailurePropagationMode.Propagate, [], transform.AnyOpType.get())
        with InsertionPoint(s2.body):
            any_t = transform.AnyOpType.get()

            for_t = transform.OperationType.get("scf.for")

            def fors():
                match = structured.MatchOp.match_op_names(s2.bodyTarget, ["scf.for"])
                return transform.CastOp(for_t, match)

            loop.LoopPeelOp(main_loop_type=for_t, remainder_loop_type=for_t, target=fors(), peel_front=True)
            loop.LoopPipelineOp(result_type=any_t, target=fors(), iteration_interval=2)
            loop.LoopOutlineOp(any_t, any_t, fors(), func_name="outlined")
            loop.LoopUnrollOp(fors(), factor=4)
            transform.YieldOp()
    try:
        s2.verify()
    except MLIRError as e:
        print("loop sequence does not verify:", e.error_diagnostics[0].message)
    print(s2)

    # A schedule that fails: tiling something that is not tileable.
    script2 = Module.create()
    script2.operation.attributes["transform.with_named_sequence"] = UnitAttr.get()
    with InsertionPoint(script2.body):
        seq2 = transform.NamedSequenceOp("__transform_main", [transform.AnyOpType.get()], [])
        with InsertionPoint(seq2.body):
            ret = structured.MatchOp.match_op_names(seq2.bodyTarget, ["func.return"])
            structured.TileUsingForOp(ret.result, sizes=[4])
            transform.YieldOp([])
    p2 = Module.parse(PAYLOAD)
    try:
        interpreter.apply_named_sequence(p2, seq2, script2)
        print("no error?")
    except Exception as e:
        print("error type:", type(e).__name__, isinstance(e, ValueError))
        print(e)
