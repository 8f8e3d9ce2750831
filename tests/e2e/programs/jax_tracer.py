# A JAX-like tracer: Python functions over traced scalars are staged into MLIR. fori_loop becomes
# scf.for with iter_args, cond becomes scf.if with results, while_loop becomes scf.while.
# e2e-mlir: 19 -- static Type.isinstance, removed in MLIR 22
from mlir.ir import *
from mlir.dialects import arith, func, math, scf


class Tracer:
    def __init__(self, value):
        self.value = value

    @property
    def type(self):
        return self.value.type

    def _lift(self, other):
        if isinstance(other, Tracer):
            return other.value
        if F32Type.isinstance(self.type):
            return arith.constant(self.type, float(other))
        return arith.constant(self.type, int(other))

    def _is_float(self):
        return FloatType.isinstance(self.type)

    def __add__(self, o):
        o = self._lift(o)
        return Tracer(arith.addf(self.value, o) if self._is_float() else arith.addi(self.value, o))

    def __mul__(self, o):
        o = self._lift(o)
        return Tracer(arith.mulf(self.value, o) if self._is_float() else arith.muli(self.value, o))

    def __sub__(self, o):
        o = self._lift(o)
        return Tracer(arith.subf(self.value, o) if self._is_float() else arith.subi(self.value, o))

    def __lt__(self, o):
        o = self._lift(o)
        if self._is_float():
            return Tracer(arith.cmpf(arith.CmpFPredicate.OLT, self.value, o))
        return Tracer(arith.cmpi(arith.CmpIPredicate.slt, self.value, o))


def fori_loop(lower, upper, body, init):
    idx = IndexType.get()
    lb = arith.constant(idx, lower)
    ub = arith.constant(idx, upper)
    step = arith.constant(idx, 1)
    inits = [t.value for t in init]
    loop = scf.ForOp(lb, ub, step, inits)
    with InsertionPoint(loop.body):
        i = Tracer(loop.induction_variable)
        carried = [Tracer(v) for v in loop.inner_iter_args]
        out = body(i, carried)
        scf.YieldOp([t.value for t in out])
    return [Tracer(r) for r in loop.results]


def cond(pred, true_fn, false_fn, operands):
    result_types = [t.type for t in operands]
    if_op = scf.IfOp(pred.value, result_types, hasElse=True)
    with InsertionPoint(if_op.then_block):
        scf.YieldOp([t.value for t in true_fn(*operands)])
    with InsertionPoint(if_op.else_block):
        scf.YieldOp([t.value for t in false_fn(*operands)])
    return [Tracer(r) for r in if_op.results]


def while_loop(cond_fn, body_fn, init):
    types = [t.type for t in init]
    w = scf.WhileOp(types, [t.value for t in init])
    before = w.before.blocks.append(*types)
    after = w.after.blocks.append(*types)
    with InsertionPoint(before):
        args = [Tracer(a) for a in before.arguments]
        scf.ConditionOp(cond_fn(*args).value, [a.value for a in args])
    with InsertionPoint(after):
        args = [Tracer(a) for a in after.arguments]
        scf.YieldOp([t.value for t in body_fn(*args)])
    return [Tracer(r) for r in w.results]


def jit(*arg_types):
    def deco(fn):
        with InsertionPoint(module.body):
            f = func.FuncOp(fn.__name__, (list(arg_types), []))
            with InsertionPoint(f.add_entry_block()):
                outs = fn(*[Tracer(a) for a in f.arguments])
                if not isinstance(outs, (list, tuple)):
                    outs = [outs]
                func.ReturnOp([o.value for o in outs])
            f.attributes["function_type"] = TypeAttr.get(
                FunctionType.get(list(arg_types), [o.type for o in outs])
            )
        return f

    return deco


with Context(), Location.unknown():
    module = Module.create()
    f32 = F32Type.get()
    i32 = IntegerType.get_signless(32)

    @jit(f32, i32)
    def poly(x, n):
        def body(i, carried):
            acc, k = carried
            return [acc * x + 1.0, k + 1]

        acc, k = fori_loop(0, 10, body, [x, n])
        pred = acc < 100.0
        (r,) = cond(pred, lambda a: [a * 2.0], lambda a: [a - 100.0], [acc])
        return r, k

    @jit(i32)
    def collatz_steps(n):
        zero = Tracer(arith.constant(i32, 0))

        def c(v, steps):
            return Tracer(arith.cmpi(arith.CmpIPredicate.sgt, v.value, arith.constant(i32, 1)))

        def b(v, steps):
            return [v - 1, steps + 1]

        v, s = while_loop(c, b, [n, zero])
        return s

    @jit(f32)
    def transcendental(x):
        y = Tracer(math.exp(x.value))
        z = Tracer(math.sqrt(y.value))
        return Tracer(math.tanh((z * x).value))

    print(module)
    print("verify:", module.operation.verify())
    for op in module.body.operations:
        print(op.sym_name.value, op.type, type(op).__name__)
    loop = poly.entry_block.operations[3]
    print(loop.name, type(loop).__name__, len(loop.results), len(loop.inner_iter_args))
    print("iv:", loop.induction_variable.get_name(), loop.induction_variable.type)
    for r in loop.results:
        print("  result", r.result_number, r.type, [str(u.owner.name) for u in r.uses])
    if_op = [o for o in poly.entry_block.operations if o.name == "scf.if"][0]
    print("if then ops:", [o.name for o in if_op.then_block.operations])
    print("if else ops:", [o.name for o in if_op.else_block.operations])
    print("if result uses:", [(u.owner.name, u.operand_number) for u in if_op.result.uses])
