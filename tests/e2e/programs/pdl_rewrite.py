# Declarative rewrites with PDL, as a frontend's peephole optimizer ships them: patterns built with
# the pdl dialect's builders (@pdl.pattern, @pdl.rewrite), frozen through mlir.rewrite.PDLModule
# and applied with apply_patterns_and_fold_greedily to IR built with builtin.module / func.func
# decorators.
from mlir.ir import *
from mlir.dialects import arith, func, pdl
from mlir.dialects.builtin import module
from mlir.rewrite import PDLModule, apply_patterns_and_fold_greedily


def build_patterns():
    m = Module.create()
    with InsertionPoint(m.body):
        # x + x -> x * 2 is not expressible without constants here; use addi -> muli and
        # subi(x, y) -> addi(y, x) on index values.
        @pdl.pattern(benefit=2, sym_name="addi_to_muli")
        def pat():
            index_type = pdl.TypeOp(IndexType.get())
            a = pdl.OperandOp(index_type)
            b = pdl.OperandOp(index_type)
            op = pdl.OperationOp(name="arith.addi", args=[a, b], types=[index_type])

            @pdl.rewrite()
            def rew():
                new = pdl.OperationOp(name="arith.muli", args=[a, b], types=[index_type])
                pdl.ReplaceOp(op, with_op=new)

        @pdl.pattern(benefit=1, sym_name="swap_subi")
        def pat2():
            index_type = pdl.TypeOp(IndexType.get())
            a = pdl.OperandOp(index_type)
            b = pdl.OperandOp(index_type)
            op = pdl.OperationOp(name="arith.subi", args=[a, b], types=[index_type])

            @pdl.rewrite()
            def rew():
                new = pdl.OperationOp(name="arith.addi", args=[b, a], types=[index_type])
                pdl.ReplaceOp(op, with_op=new)

    print(m)
    return m


with Context(), Location.unknown():
    payload = Module.create()
    idx = IndexType.get()
    with InsertionPoint(payload.body):

        @module(sym_name="kernels")
        def kernels():
            @func.func(idx, idx)
            def f(a, b):
                s = arith.addi(a, b)
                t = arith.muli(s, a)
                return arith.subi(t, b)

            @func.func(IntegerType.get_signless(32), IntegerType.get_signless(32))
            def g(a, b):
                return arith.addi(a, b)

    print(payload)
    # PDLModule takes the pattern module's IR: keep the module referenced meanwhile (upstream
    # crashes when it is freed first).
    patterns = build_patterns()
    frozen = PDLModule(patterns).freeze()
    apply_patterns_and_fold_greedily(payload, frozen)
    print(payload)
    apply_patterns_and_fold_greedily(payload, frozen)
    print(payload)
    print("verify:", payload.operation.verify())
