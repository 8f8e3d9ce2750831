# Found by a 3,000-program campaign (seed 4415, tests/fuzz): erasing a function whose block a
# branch moved out of it still targeted (heap corruption when the branch was erased later). A
# standalone program: python3 THIS_FILE.
import random
# ---- prelude"
# ---- prelude


class State:
    def __init__(self, seed):
        import tether
        from tether import ir
        from tether.passmanager import PassManager
        self.tether, self.ir, self.PassManager = tether, ir, PassManager
        self.rng = random.Random(seed)
        self.ctx = ir.Context()
        self.ctx.allow_unregistered_dialects = True
        self.ctx.__enter__()
        ir.Location.unknown().__enter__()
        self.pools = {k: [] for k in ("module", "op", "block", "region", "value", "type", "attr")}
        self.i32 = ir.IntegerType.get_signless(32)
        self.pools["type"] += [self.i32, ir.IndexType.get(), ir.F32Type.get()]

    def pick(self, kind):
        pool = self.pools[kind]
        return self.rng.choice(pool) if pool else None

    def add(self, kind, obj):
        if obj is not None:
            self.pools[kind].append(obj)
            if len(self.pools[kind]) > 40:
                self.pools[kind].pop(self.rng.randrange(len(self.pools[kind])))
        return obj

    def drop(self, kind):
        pool = self.pools[kind]
        if pool:
            pool.pop(self.rng.randrange(len(pool)))


ASM = [
    "func.func @f(%a: i32, %b: i32) -> i32 { %0 = arith.addi %a, %b : i32\n"
    "  %1 = arith.muli %0, %b : i32\n  return %1 : i32 }\nfunc.func private @g() { return }",
    "func.func @h(%c: i1, %x: i32) -> i32 { cf.cond_br %c, ^bb1, ^bb2(%x : i32)\n"
    "^bb1:\n  %k = arith.constant 1 : i32\n  cf.br ^bb2(%k : i32)\n^bb2(%r: i32):\n  return %r : i32 }",
    '"t.a"() ({\n^bb0(%x: i32):\n  %y = "t.b"(%x) : (i32) -> i32\n  "t.c"(%y) : (i32) -> ()\n}) : () -> ()',
    "func.func @l(%n: index) { %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
    "  scf.for %i = %c0 to %n step %c1 { %z = arith.addi %i, %i : index }\n  return }",
    "module {",                       # broken on purpose
    "func.func @bad() -> i32 { return }",
]

PIPELINES = ["builtin.module(canonicalize)", "builtin.module(cse)", "builtin.module(symbol-dce)",
             "builtin.module(inline)", "builtin.module(sccp)", "builtin.module(canonicalize,cse)",
             "builtin.module(loop-invariant-code-motion)", "builtin.module(func.func(canonicalize))"]


def _harvest(s, op):
    """Adds an op, its regions, blocks, results and block arguments to the pools (a few)."""
    s.add("op", op)
    for r in list(op.regions)[:2]:
        s.add("region", r)
        for b in list(r.blocks)[:2]:
            s.add("block", b)
            for a in list(b.arguments)[:2]:
                s.add("value", a)
            for o in list(b.operations)[:4]:
                s.add("op", o)
                for v in list(o.results)[:2]:
                    s.add("value", v)


def step_parse(s):
    m = s.ir.Module.parse(s.rng.choice(ASM))
    s.add("module", m)
    _harvest(s, m.operation)


def step_navigate(s):
    op = s.pick("op")
    if op is None:
        return
    for v in list(op.operands) + list(op.results):
        s.add("value", v)
    if op.parent is not None:
        s.add("op", op.parent)
    if op.block is not None:
        s.add("block", op.block)
    _harvest(s, op)


def step_uses(s):
    v = s.pick("value")
    if v is not None:
        for use in list(v.uses):
            s.add("op", use.owner)
        str(v.type)


def step_create(s):
    ir = s.ir
    operands = [x for x in (s.pick("value") for _ in range(s.rng.randrange(3))) if x is not None]
    kw = dict(results=[s.pick("type") for _ in range(s.rng.randrange(3))], operands=operands)
    if s.rng.random() < 0.3:
        kw["attributes"] = {"value": s.pick("attr") or ir.IntegerAttr.get(s.i32, 1)}
    if s.rng.random() < 0.2:
        kw["regions"] = s.rng.randrange(3)
    b = s.pick("block")
    name = s.rng.choice(["t.x", "arith.addi", "arith.constant", "cf.br", "func.return"])
    if name == "cf.br" and b is not None:
        kw["successors"] = [b]
    if s.rng.random() < 0.3 and name.startswith("arith"):
        kw.pop("results")
        kw["infer_type"] = True
    if b is not None and s.rng.random() < 0.5:
        ops = list(b.operations)
        ip = s.ir.InsertionPoint(b) if not ops or s.rng.random() < 0.5 else \
            s.ir.InsertionPoint(s.rng.choice(ops))
        kw["ip"] = ip
    op = ir.Operation.create(name, **kw)
    _harvest(s, op)
    for v in op.results:
        s.add("value", v)


def step_move(s):
    op, ref = s.pick("op"), s.pick("op")
    if op is None or ref is None:
        return
    if s.rng.random() < 0.5:
        op.move_before(ref)
    else:
        op.move_after(ref)


def step_append(s):
    b, op = s.pick("block"), s.pick("op")
    if b is not None and op is not None:
        b.append(op)


def step_detach(s):
    op = s.pick("op")
    if op is not None:
        op.detach_from_parent()


def step_erase(s):
    op = s.pick("op")
    if op is not None:
        op.erase()


def step_clone(s):
    op = s.pick("op")
    if op is not None:
        _harvest(s, op.clone())


def step_rauw(s):
    a, b = s.pick("value"), s.pick("value")
    if a is not None and b is not None:
        a.replace_all_uses_with(b)


def step_set_operand(s):
    op, v = s.pick("op"), s.pick("value")
    if op is not None and v is not None and len(op.operands):
        op.operands[s.rng.randrange(len(op.operands))] = v


def step_attributes(s):
    op = s.pick("op")
    if op is None:
        return
    attrs = op.attributes
    r = s.rng.random()
    if r < 0.3:
        attrs["value"] = s.pick("attr") or s.ir.UnitAttr.get()
    elif r < 0.5:
        for name in list(attrs):
            del attrs[name.name if hasattr(name, "name") else name]
            break
    else:
        for a in attrs:
            s.add("attr", a.attr if hasattr(a, "attr") else None)
        len(attrs)


def step_regions_blocks(s):
    ir = s.ir
    r = s.rng.random()
    if r < 0.3:
        s.add("region", ir.Region())
    elif r < 0.6:
        reg = s.pick("region")
        if reg is not None:
            b = reg.blocks.append(*[s.pick("type") for _ in range(s.rng.randrange(2))])
            s.add("block", b)
            for a in b.arguments:
                s.add("value", a)
    elif r < 0.8:
        b, reg = s.pick("block"), s.pick("region")
        if b is not None and reg is not None:
            b.append_to(reg)
    else:
        b = s.pick("block")
        if b is not None:
            if len(b.arguments):
                b.erase_argument(s.rng.randrange(len(b.arguments)))
            else:
                s.add("block", b.create_after(s.i32))


def step_passes(s):
    m = s.pick("module")
    if m is None:
        return
    pm = s.PassManager.parse(s.rng.choice(PIPELINES))
    pm.run(m.operation)


def step_print(s):
    obj = s.pick(s.rng.choice(["module", "op", "block", "value"]))
    if obj is None:
        return
    if s.rng.random() < 0.5:
        str(obj)
    elif hasattr(obj, "get_asm"):
        if s.rng.random() < 0.2:
            import io
            obj.write_bytecode(io.BytesIO())
        else:
            obj.get_asm(print_generic_op_form=s.rng.random() < 0.5,
                        enable_debug_info=s.rng.random() < 0.5, binary=s.rng.random() < 0.2)
    elif hasattr(obj, "get_name"):
        obj.get_name()


def step_verify(s):
    op = s.pick(s.rng.choice(["module", "op"]))
    if op is not None:
        (op.operation if hasattr(op, "operation") else op).verify()


def step_walk(s):
    op = s.pick("op")
    if op is None:
        return
    victim = s.pick("op")
    mode = s.rng.randrange(3)

    def cb(o):
        if mode == 1 and victim is not None:
            victim.erase()
        elif mode == 2:
            o.detach_from_parent()
        return s.ir.WalkResult.ADVANCE

    op.walk(cb)


def step_types_attrs(s):
    ir = s.ir
    texts = ["i32", "tensor<2x?xf32>", "memref<4xi8>", "!t.x", "complex<f64>", "vector<4xf32>",
             "(i32) -> i1", "tensor<", "i99999999999"]
    t = ir.Type.parse(s.rng.choice(texts))
    s.add("type", t)
    a = ir.Attribute.parse(s.rng.choice(["1 : i32", "array<i64: 1, 2>", '"s"', "@sym", "unit",
                                          "dense<[1, 2]> : tensor<2xi32>", "{a = 1}", "[1, "]))
    s.add("attr", a)
    str(t.maybe_downcast() if hasattr(t, "maybe_downcast") else t)


def step_capsules(s):
    obj = s.pick(s.rng.choice(["type", "attr", "op", "value"]))
    if obj is None:
        return
    cap = obj._CAPIPtr
    type(obj)._CAPICreate(cap) if hasattr(type(obj), "_CAPICreate") else None


def step_drop(s):
    for kind in s.rng.sample(sorted(s.pools), 2):
        s.drop(kind)
    if s.rng.random() < 0.3:
        import gc
        gc.collect()
        s.tether.collect()


def step_reentrant_gc(s):
    import gc
    victims = [s.pick("op") for _ in range(3)]

    class Eraser:
        def __del__(self):
            for v in victims:
                try:
                    v.erase()
                except Exception:
                    pass

    e = Eraser()
    e.cycle = e
    del e
    old = gc.get_threshold()
    gc.set_threshold(1)
    try:
        v = s.pick("value")
        if v is not None:
            for use in list(v.uses):
                use.owner
        op = s.pick("op")
        if op is not None:
            list(op.attributes)
    finally:
        gc.set_threshold(*old)


def step_thread(s):
    import threading
    op = s.pick("op")

    def work():
        try:
            if op is not None:
                str(op)
                op.walk(lambda o: s.ir.WalkResult.ADVANCE)
        except Exception:
            pass

    t = threading.Thread(target=work)
    t.start()
    t.join(30)


def step_context_dies(s):
    ir = s.ir
    c = ir.Context()
    t = ir.IntegerType.get_signless(8, context=c)
    s.add("type", t)
    m = ir.Module.parse("func.func @k() { return }", c)
    _harvest(s, m.operation)
    del c


def step_dialect_builders(s):
    from tether.dialects import arith, func, scf
    ir = s.ir
    b = s.pick("block")
    ops = list(b.operations) if b is not None else []
    ip = ir.InsertionPoint(s.rng.choice(ops)) if ops else (ir.InsertionPoint(b) if b else None)
    r = s.rng.randrange(4)
    with (ip or ir.InsertionPoint(ir.Module.create().body)):
        if r == 0:
            c = arith.ConstantOp(s.pick("type") or s.i32, s.rng.choice([0, 1, 2.5, -7]))
            s.add("op", c.operation)
            s.add("value", c.result)
        elif r == 1:
            a, b2 = s.pick("value"), s.pick("value")
            if a is not None and b2 is not None:
                op = s.rng.choice([arith.AddIOp, arith.MulIOp, arith.AddFOp])(a, b2)
                s.add("value", op.result)
        elif r == 2:
            f = func.FuncOp("fz%d" % s.rng.randrange(1000), ([s.i32], [s.i32]))
            with ir.InsertionPoint(f.add_entry_block()):
                func.ReturnOp([f.arguments[0]])
            _harvest(s, f.operation)
        else:
            lb, ub = s.pick("value"), s.pick("value")
            if lb is not None and ub is not None:
                loop = scf.ForOp(lb, ub, lb)
                with ir.InsertionPoint(loop.body):
                    scf.YieldOp([])
                _harvest(s, loop.operation)


def step_linalg(s):
    """Named linalg ops through the OpDSL and through their ODS classes with fill_builtin_region:
    random element types, shapes, operand counts, attributes and forms."""
    from tether.dialects import linalg, tensor
    from tether.dialects.linalg.opdsl import lang
    from tether.dialects.linalg.opdsl.ops import core_named_ops
    ir, rng = s.ir, s.rng
    elements = [s.i32, ir.F32Type.get(), ir.IndexType.get(), ir.IntegerType.get_signless(1),
                ir.F16Type.get(), ir.ComplexType.get(ir.F32Type.get())]
    b = s.pick("block")
    with ir.InsertionPoint(b if b is not None and rng.random() < 0.5
                           else ir.Module.create().body):
        def operand():
            if rng.random() < 0.2:
                return s.pick("value")
            if rng.random() < 0.2:
                return rng.choice(elements) and tensor.EmptyOp([], rng.choice(elements)).result
            shape = [rng.choice([1, 2, 3, 4]) for _ in range(rng.randrange(5))]
            return tensor.EmptyOp(shape, rng.choice(elements)).result
        name = rng.choice(core_named_ops.__all__)
        ins = [operand() for _ in range(rng.randrange(4))]
        outs = [operand() for _ in range(rng.choice([0, 1, 1, 1, 2]))]
        kwargs = {}
        if rng.random() < 0.3:
            kwargs[rng.choice(["strides", "dilations", "cast", "fun", "bogus"])] = rng.choice(
                [[1, 1], [2], [1, 2, 3], lang.TypeFn.cast_unsigned, lang.BinaryFn.div_unsigned,
                 lang.UnaryFn.erf, "x", None])
        if rng.random() < 0.5:
            kwargs["emit_generic"] = rng.random() < 0.5
        if rng.random() < 0.7:
            r = getattr(linalg, name)(*ins, outs=outs, **kwargs)
            if isinstance(r, ir.Value):
                s.add("value", r)
                s.add("op", r.owner)
        else:
            cls = getattr(linalg, "".join(x.title() for x in name.split("_")) + "Op", None)
            if cls is not None:
                results = [o.type for o in outs if isinstance(o.type, ir.RankedTensorType)]
                op = cls(results, ins, outs)
                s.add("op", op.operation)
        target = s.pick("op")
        if target is not None and rng.random() < 0.5:
            linalg.fill_builtin_region(target)


STEPS = {name[5:]: fn for name, fn in list(globals().items()) if name.startswith("step_")}


def run_program(seed, steps):
    """steps: (index, name) pairs. Each step draws from its own generator, seeded by the program's
    seed and the step's index in the original program: a shrunk program's remaining steps make
    the same choices as before (given the same pools)."""
    s = State(seed)
    for index, name in steps:
        s.rng = random.Random(seed * 1000003 + index)
        try:
            STEPS[name](s)
        except Exception:
            pass




STEPS_TO_RUN = [(0, 'parse'), (1, 'clone'), (2, 'regions_blocks'), (3, 'regions_blocks'), (5, 'append'), (6, 'walk'), (10, 'reentrant_gc'), (23, 'parse')]
run_program(792684309, STEPS_TO_RUN)
print('END')
