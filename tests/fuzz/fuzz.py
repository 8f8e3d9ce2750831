"""tether's API fuzzer: random, type-correct programs over tether.ir, each run in a subprocess and
classified (ok / signal / abort / hang). Nothing a Python program does may take the interpreter
down (issue 12); this finds the sequences hand-written tests do not.

A program is a seed and a list of steps. Each step is an entry of STEPS: a function of the
program's state (pools of live objects by kind, and the program's own random generator) that calls
the API, perhaps adding objects to the pools. Python exceptions are the API doing its job; only a
dead or hung interpreter is a finding. But a step that mostly raises exercises little: every
program reports per step kind how many steps completed and how many raised, and a run in which a
kind raises more than its limit (RAISE_LIMITS) fails. A finding is shrunk (steps removed while the
same failure remains) and written as a corpus entry: the program as it ran (the definitions its
steps used and the run), with its seed, steps and fuzzer revision in comments; the replay runs
that text, whatever the steps have become since. docs/testing.md, "Fuzzing", has the format.

    fuzz.py --programs 10000 --seed 1 --jobs 2 --out /tmp/findings    # a campaign
    fuzz.py --test                                                   # the bazel test (fixed seed)
    fuzz.py --replay ENTRY...                                        # replay corpus entries
    fuzz.py --program ENTRY                                          # print an entry's program
    fuzz.py --rebuild ENTRY                     # the program today's steps make of its seed and steps

To fuzz a new API: add a function to STEPS (docs/testing.md, "Fuzzing").
"""

import argparse
import itertools
import os
import random
import subprocess
import sys
import time

# ---- the program side: the steps ----------------------------------------------------------------
# Everything from here to the "runner side" marker is also the prelude of every generated program.

PRELUDE_START = "# ---- prelude"
# ---- prelude


class State:
    def __init__(self, seed, revision):
        import tether
        from tether import ir
        from tether.passmanager import PassManager
        self.tether, self.ir, self.PassManager = tether, ir, PassManager
        self.rng = random.Random(seed)
        self.revision = revision  # the fuzzer revision the program runs under (REVISIONS)
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
        if s.revision >= 3 and s.rng.random() < 0.2:
            import io
            obj.write_bytecode(io.BytesIO())
        else:
            obj.get_asm(print_generic_op_form=s.rng.random() < 0.5,
                        enable_debug_info=s.rng.random() < 0.5, binary=s.rng.random() < 0.2)
    elif hasattr(obj, "get_name"):
        obj.get_name()


def step_resources(s):
    """A module whose constants are dense_resource blobs of any alignment (2^0 .. 2^31, or not a
    power of two), size and element type, for the other steps to print, write as bytecode,
    verify and run passes on."""
    rng = s.rng
    elt, width = rng.choice([("i8", 1), ("i32", 4), ("f32", 4), ("f64", 8), ("i1", 1), ("index", 8)])
    n = rng.randrange(1, 5)
    blobs, uses = [], []
    for i in range(rng.randrange(1, 4)):
        align = 1 << rng.randrange(32) if rng.random() < 0.9 else rng.randrange(1 << 32)
        size = n * width if rng.random() < 0.8 else rng.randrange(0, 3 * n * width + 1)
        data = bytes(rng.randrange(256) if elt != "i1" else rng.randrange(2) for _ in range(size))
        blobs.append('r%d: "0x%s%s"' % (i, align.to_bytes(4, "little").hex(), data.hex()))
        uses.append("  %%c%d = arith.constant dense_resource<r%d> : tensor<%dx%s>" % (i, i, n, elt))
    ret = "tensor<%dx%s>" % (n, elt)
    body = "\n".join(uses)
    if elt.startswith("i") and elt != "i1":
        body += "\n  %%s = arith.addi %%c0, %%c0 : %s" % ret
    text = ("func.func @res() -> %s {\n%s\n  return %%c0 : %s\n}\n{-#\n  dialect_resources: "
            "{ builtin: { %s } }\n#-}\n" % (ret, body, ret, ", ".join(blobs)))
    m = s.ir.Module.parse(text)
    s.add("module", m)
    _harvest(s, m.operation)


def step_bytecode(s):
    """The bytecode of a module of the pools (or of a fixed text), with nothing or one to four
    bytes changed, flipped, deleted or inserted, read back (MLIR's reader trusts its input; tether
    reads it in the trial helper and reads back MLIR's writing of what was read)."""
    import io
    rng = s.rng
    m = s.pick("module")
    if m is None or rng.random() < 0.3:
        m = s.ir.Module.parse(rng.choice(ASM[:4]))
    buf = io.BytesIO()
    m.operation.write_bytecode(buf)
    data = bytearray(buf.getvalue())
    for _ in range(rng.randrange(5)):
        k, i = rng.randrange(4), rng.randrange(len(data))
        if k == 0:
            data[i] = rng.randrange(256)
        elif k == 1:
            data[i] ^= 1 << rng.randrange(8)
        elif k == 2:
            del data[i:i + rng.randint(1, 8)]
        else:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    got = s.ir.Module.parse(bytes(data))
    s.add("module", got)
    _harvest(s, got.operation)


def step_diagnostics(s):
    """A diagnostic handler that misbehaves (keeps the Diagnostic and reads it after the callback,
    emits a diagnostic from inside, raises, returns a non-bool, collects, detaches itself, erases
    IR), then something that emits diagnostics, then the kept diagnostics read."""
    import gc
    ir, rng = s.ir, s.rng
    kept = getattr(s, "kept_diagnostics", None)
    if kept is None:
        kept = s.kept_diagnostics = []
    mode = rng.choice(["keep", "nested", "raise", "nonbool", "collect", "detach", "erase",
                       "notes", "true", "false"])
    box = {}

    def handler(d):
        if mode == "keep" or rng.random() < 0.3:
            kept.append(d)
        if mode == "nested":
            d.location.emit_error("nested from the handler")
        elif mode == "raise":
            raise RuntimeError("the handler raised")
        elif mode == "nonbool":
            return rng.choice([None, 1, "x", object(), [], 2 ** 70])
        elif mode == "collect":
            gc.collect()
            s.tether.collect()
        elif mode == "detach" and box.get("h") is not None:
            box["h"].detach()
        elif mode == "erase":
            op = s.pick("op")
            if op is not None:
                try:
                    op.erase()
                except Exception:
                    pass
        elif mode == "notes":
            for n in d.notes:
                kept.append(n)
                str(n.location), n.message
        str(d), d.severity, d.message
        return mode == "true"

    h = s.ctx.attach_diagnostic_handler(handler)
    box["h"] = h
    trigger = rng.choice(["parse", "verify", "emit", "type"])
    try:
        if trigger == "parse":
            ir.Module.parse(rng.choice(ASM[4:]))
        elif trigger == "verify":
            op = s.pick("op")
            if op is not None:
                op.verify()
        elif trigger == "emit":
            ir.Location.unknown().emit_error("emitted")
        else:
            ir.Type.parse("!not.a.type<")
    finally:
        if rng.random() < 0.7:
            try:
                h.detach()
            except Exception:
                pass
    for d in list(kept)[-4:]:
        for read in (lambda: str(d), lambda: d.message, lambda: d.severity,
                     lambda: str(d.location), lambda: list(d.notes)):
            try:
                read()
            except Exception:
                pass


def step_deep(s):
    """Text or IR nested to a random depth, around and far past what MLIR's recursion and tether's
    limits allow: parsed, printed, verified, walked; IR nested op by op from Python."""
    ir, rng = s.ir, s.rng
    depth = rng.choice([3, 50, 400, 990, 1001, 1500, 5000, 30000])
    kind = rng.choice(["tuple", "array", "dict", "region", "fused", "affine", "func_type", "build"])
    if kind == "build":
        region_op = None
        outer = ir.Operation.create("t.outer", regions=1)
        s.add("op", outer)
        block = outer.regions[0].blocks.append()
        for _ in range(min(depth, 1200)):
            with ir.InsertionPoint(block):
                region_op = ir.Operation.create("t.nest", regions=1)
            block = region_op.regions[0].blocks.append()
        s.add("op", region_op)
        return
    if kind == "tuple":
        text, parse = "tuple<" * depth + "i32" + ">" * depth, ir.Type.parse
    elif kind == "func_type":
        text, parse = "(" * depth + "i32" + ") -> i32" * depth, ir.Type.parse
    elif kind == "array":
        text, parse = "[" * depth + "1" + "]" * depth, ir.Attribute.parse
    elif kind == "dict":
        text, parse = "{a = " * depth + "1" + "}" * depth, ir.Attribute.parse
    elif kind == "fused":
        text, parse = "loc(" + "fused[" * depth + "unknown" + "]" * depth + ")", ir.Attribute.parse
    elif kind == "affine":
        text, parse = "affine_map<(d0) -> (" + "(" * depth + "d0" + " + 1)" * depth + ")>", \
            ir.Attribute.parse
    else:
        text = '"t.r"() ({' * depth + '"t.leaf"() : () -> ()' + "}) : () -> ()" * depth
        parse = ir.Module.parse
    obj = parse(text)
    if isinstance(obj, ir.Module):
        s.add("module", obj)
        _harvest(s, obj.operation)
        if rng.random() < 0.5:
            obj.operation.verify()
    elif isinstance(obj, ir.Type):
        s.add("type", obj)
    else:
        s.add("attr", obj)
    str(obj)


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


def step_bulk(s):
    """A build loop: 50-300 operations made at the end of a block (before its terminator, if it
    has one) with their wrappers dropped as they go, a few kept; then maybe two collections, so
    that the block's tree, idle for a whole cycle, has its intern table shrunk under the handles
    the pools still hold (tether__shrink_tables)."""
    ir = s.ir
    b = s.pick("block")
    if b is None:
        m = ir.Module.create()
        s.add("module", m)
        b = m.body
    ops = list(b.operations)
    ip = ir.InsertionPoint.at_block_terminator(b) if ops and s.rng.random() < 0.5 else \
        ir.InsertionPoint(b)
    prev = s.pick("value")
    for k in range(s.rng.randrange(50, 300)):
        if prev is not None and s.rng.random() < 0.7:
            op = ir.Operation.create("arith.addi", results=[prev.type], operands=[prev, prev],
                                     ip=ip)
        else:
            op = ir.Operation.create("arith.constant", results=[s.i32],
                                     attributes={"value": ir.IntegerAttr.get(s.i32, k)}, ip=ip)
        prev = op.results[0]
        if s.rng.random() < 0.02:
            s.add("op", op)
            s.add("value", prev)
    if s.rng.random() < 0.5:
        import gc
        gc.collect()
        s.tether.collect()
        s.tether.collect()


def step_views(s):
    """Operation objects and OpViews of the same operations (the pairs tether records apart from
    the wrappers), made every way, a view re-initialized on another operation, some erased, all
    dropped in any order."""
    ir = s.ir
    held = []
    for _ in range(s.rng.randrange(1, 6)):
        o = s.pick("op")
        if o is None:
            return
        r = s.rng.random()
        if r < 0.3:
            x = o.operation
        elif r < 0.6:
            x = ir.OpView(o.operation if isinstance(o, ir.OpView) else o)
        else:
            x = o.operation.opview
        held.append(x)
        s.add("op", x)
    views = [x for x in held if isinstance(x, ir.OpView)]
    if views and s.rng.random() < 0.5:
        ir.OpView.__init__(s.rng.choice(views), s.rng.choice(held))
    if s.rng.random() < 0.3:
        s.rng.choice(held).erase()
    for x in held:
        x.operation.opview.operation
    s.rng.shuffle(held)
    while held:
        held.pop()
    if s.rng.random() < 0.3:
        import gc
        gc.collect()


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


# Texts whose operations have no Python objects yet when step_reentrant_wrap parses them.
WRAP_ASM = [
    '"a.x"() : () -> ()\n"a.y"() : () -> ()\n"a.z"() : () -> ()',
    '%0 = "a.p"() : () -> i32\n%1 = "a.q"(%0, %0) {k = 1 : i32, s = "x"} : (i32, i32) -> i32\n'
    '"a.r"(%1) ({\n^bb0(%x: i32):\n  "a.s"(%x, %1) : (i32, i32) -> ()\n}) : (i32) -> ()',
    '"a.t"() ({\n  "a.u"() [^bb1] : () -> ()\n^bb1:\n  "a.v"() : () -> ()\n}) : () -> ()',
] + ASM[:4]


def step_reentrant_wrap(s):
    """Issue 35's shape: Python code that changes IR runs inside a collection that allocating a
    wrapper started. A hook (the `__del__` of a cyclic object, re-armed for the next collection,
    or a `gc.callbacks` entry) erases, detaches or drops IR it finds by navigating when it runs
    (often the very operation being wrapped, the next one, or its block's owner), after skipping
    a few collections; the collector's threshold is lowered to 1, so that every tracked
    allocation collects; then paths that wrap IR run: a block's operations iterated, results,
    operands, uses, attributes, regions and blocks listed, printing, parent and owner
    navigation, a walk."""
    import gc
    ir, rng = s.ir, s.rng
    if rng.random() < 0.65 or s.pick("op") is None:
        m = ir.Module.parse(rng.choice(WRAP_ASM))  # no operation of it has an object yet
        s.add("module", m)
        root, blk = m.operation, m.body
    else:
        root = s.pick("op")
        root = root.operation if hasattr(root, "operation") else root
        regions = list(root.regions)
        blocks = list(regions[0].blocks) if regions else []
        blk = blocks[0] if blocks else root.block
        if blk is None:
            return
    # Sometimes a nested block: wrapping its parent only.
    if rng.random() < 0.4 and len(blk.operations):
        inner = blk.operations[0]
        if len(inner.regions) and len(inner.regions[0].blocks):
            blk = inner.regions[0].blocks[0]
    at = {"i": 0}  # the index of the operation the path is at
    arm = {"skip": rng.randrange(4), "left": rng.randint(1, 3)}
    mode = rng.choice(["erase_at", "erase_next", "erase_first", "erase_last", "erase_owner",
                       "detach_at", "erase_root", "erase_pool", "drop"])

    def act():
        if arm["skip"] > 0:
            arm["skip"] -= 1
            return
        if arm["left"] <= 0:
            return
        arm["left"] -= 1
        try:
            ops = blk.operations
            n = len(ops)
            if mode == "erase_at" and n:
                ops[min(at["i"], n - 1)].erase()
            elif mode == "erase_next" and n:
                ops[min(at["i"] + 1, n - 1)].erase()
            elif mode == "erase_first" and n:
                ops[0].erase()
            elif mode == "erase_last" and n:
                ops[n - 1].erase()
            elif mode == "erase_owner":
                blk.owner.erase()
            elif mode == "detach_at" and n:
                ops[min(at["i"], n - 1)].detach_from_parent()
            elif mode == "erase_root":
                root.erase()
            elif mode == "erase_pool":
                victim = s.pick("op")
                if victim is not None:
                    victim.erase()
            elif mode == "drop":
                for kind in ("op", "module", "block", "value"):
                    s.drop(kind)
        except Exception:
            pass

    class Holder:
        def __init__(self):
            self.me = self  # a cycle: only the cyclic collector frees it

        def __del__(self):
            act()
            if arm["left"] > 0:
                Holder()  # garbage again, for the next collection

    def callback(phase, info):
        if phase == "start":
            act()

    use_callback = rng.random() < 0.4
    paths = rng.sample(range(11), rng.randint(1, 3))
    old = gc.get_threshold()
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    if use_callback:
        gc.callbacks.append(callback)
    else:
        Holder()
    gc.set_threshold(1)
    gc.enable()
    try:
        for path in paths:
            if path == 0:  # the disclosed reproducer's loop
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    op.name
            elif path == 1:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    [(r.type, r.owner) for r in op.results]
                    [v.owner for v in op.operands]
            elif path == 2:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    for r in op.results:
                        [(u.owner, u.operand_number) for u in r.uses]
            elif path == 3:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    [(a.name, a.attr) for a in op.attributes]
                    len(op.attributes)
            elif path == 4:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    for reg in op.regions:
                        for b in reg.blocks:
                            list(b.arguments)
                            list(b.operations)
                            b.owner
            elif path == 5:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    str(op)
                str(root)
            elif path == 6:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    op.parent, op.block, op.operation.opview, blk.owner, blk.region.owner
            elif path == 7:
                root.walk(lambda o: (o.name, o.parent) and s.ir.WalkResult.ADVANCE)
            elif path == 8:
                n = len(blk.operations)
                for i in range(n):
                    at["i"] = i
                    blk.operations[i].name
                    list(blk.operations)
            elif path == 9:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    list(op.successors)
                    getattr(blk, "predecessors", None) is not None and list(blk.predecessors)
            else:
                for i, op in enumerate(blk.operations):
                    at["i"] = i
                    op.get_asm(print_generic_op_form=True)
                    [a.get_name() for a in blk.arguments]
    finally:
        arm["left"] = 0
        gc.set_threshold(*old)
        if use_callback:
            gc.callbacks.remove(callback)
        gc.collect()
        if not enabled:
            gc.disable()


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


def step_fork(s):
    """Multithreading on or off, then a fork whose child runs a few steps on the copied pools. A
    child that dies of a signal (or hangs: its alarm) makes the program die of the same signal."""
    import os
    import signal
    s.ctx.enable_multithreading(s.rng.random() < 0.7)
    child_steps = [s.rng.choice(["passes", "print", "verify", "create", "walk", "erase", "parse"])
                   for _ in range(s.rng.randrange(1, 4))]
    child_seed = s.rng.randrange(1 << 30)
    pid = os.fork()
    if pid == 0:
        signal.alarm(60)
        s.rng = random.Random(child_seed)
        for name in child_steps:
            try:
                STEPS[name](s)
            except Exception:
                pass
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        os.kill(os.getpid(), os.WTERMSIG(status))


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


# ---- api_surface: hostile arguments across the whole public API (issue 21) ---------------------
# A public callable of tether.ir (a class's constructor, static and class methods, methods,
# properties and their setters, `_CAPICreate`/`_CAPIPtr`, the module's functions), of PassManager
# or a builder of arith/func/scf, found by introspection (sorted names, cached per process), called
# on a receiver (from the pools, derived from them, fresh, or made by `__new__` alone) with
# arguments from a generator of hostile values. Everything is bounded: no size the step makes
# itself exceeds a few hundred thousand, every callback acts at most a few times.

_API = {}                   # the surface, found once per process (sorted, so deterministic)
_API_ARMED = [False]        # hostile objects act only during the call under test
_API_DUNDERS = ("__init__", "__getitem__", "__setitem__", "__delitem__", "__contains__",
                "__iter__", "__next__", "__len__", "__eq__", "__ne__", "__hash__", "__enter__",
                "__exit__", "__str__", "__repr__", "__bool__", "__call__")
_API_PRIVATE = ("_CAPICreate", "_CAPIPtr")
_API_NEVER = ("tree_printing_dir_path",)  # MLIR would create directories there: always None
_API_INTS = [2 ** 64, 2 ** 63, 2 ** 63 - 1, -2 ** 63, -2 ** 63 - 1, -1, 2 ** 32, 2 ** 32 + 1,
             -2 ** 31 - 1, 10 ** 30, -10 ** 30, 2 ** 24, 0, True]
_API_STRS = ["", "\0", "a\0b", "\udcff", "\u00e9\u2202\U0001F600", "%s%n%x", "t.x", "i32", "@",
             "builtin.module(", "^bb0", "#map = ", "\n\n", "tensor<", "func.func", "{-#", "x" * 70]


def _api_kind(d):
    """How a class attribute is called: 'static', 'method', 'attr', 'classattr', or None."""
    name = type(d).__name__
    if isinstance(d, (staticmethod, classmethod)) or name in ("classmethod_descriptor",
                                                              "builtin_function_or_method"):
        return "static"
    if name in ("method_descriptor", "wrapper_descriptor", "function"):
        return "method"
    if isinstance(d, property) or name in ("getset_descriptor", "member_descriptor"):
        return "attr"
    if name == "_ClassProperty":
        return "classattr"
    return None


def _api_surface():
    """{'classes', 'functions', 'builders'}: the public API found by introspection, cached."""
    if not _API:
        import enum
        from tether import ir
        from tether.dialects import arith, func, scf
        classes, functions = [], []
        for name in sorted(vars(ir)):
            obj = getattr(ir, name)
            if name.startswith("_") or type(obj).__name__ == "module":
                continue
            if isinstance(obj, type):
                if not issubclass(obj, (BaseException, enum.Enum)):
                    classes.append(obj)
            elif callable(obj):
                functions.append(obj)
        builders = []
        for mod in (arith, func, scf):
            for name in sorted(vars(mod)):
                obj = getattr(mod, name)
                if (not name.startswith("_") and callable(obj)
                        and getattr(obj, "__module__", "").startswith("tether.dialects.")
                        and (not isinstance(obj, type) or issubclass(obj, ir.OpView))):
                    builders.append(obj)
        _API.update(classes=classes, functions=functions, builders=builders, members={}, sigs={})
    return _API


def _api_members(cls):
    """[(name, kind, descriptor)] of cls's public members (and a few protocol methods)."""
    members = _api_surface()["members"]
    if cls not in members:
        out = []
        for name in dir(cls):
            if name.startswith("_") and name not in _API_DUNDERS + _API_PRIVATE:
                continue
            owner = next((k for k in cls.__mro__ if name in vars(k)), object)
            if owner is object:
                continue
            d = vars(owner)[name]
            kind = _api_kind(d)
            if kind:
                out.append((name, kind, d))
        members[cls] = out
    return members[cls]


def _api_signature(fn, doc_of=None):
    """[(name, required, keyword_only)] of fn, from inspect or its docstring's first line
    ('name(a, b=None, *, c=None)'), or None; cached."""
    sigs = _api_surface()["sigs"]
    key = (fn, doc_of)
    if key in sigs:
        return sigs[key]
    import inspect
    import re
    params = None
    try:
        if type(fn).__name__ in ("function", "method"):
            params = []
            for p in inspect.signature(fn).parameters.values():
                if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    continue
                params.append((p.name, p.default is p.empty, p.kind == p.KEYWORD_ONLY))
    except (TypeError, ValueError):
        params = None
    if params is None:
        doc = getattr(doc_of if doc_of is not None else fn, "__doc__", None)
        m = re.match(r"\s*\w+\((.*?)\)", doc if isinstance(doc, str) else "")
        if m:
            params, kwonly = [], False
            for part in m.group(1).split(","):
                part = part.strip()
                if part == "*":
                    kwonly = True
                name, eq, _ = part.partition("=")
                name = name.split(":")[0].strip()
                if name.isidentifier() and name != "self":
                    params.append((name, not eq, kwonly))
    sigs[key] = params
    return params


def _api_havoc(s, victims=()):
    """What a hostile callback does to the IR: erase or detach a victim or a pool operation,
    drop pool entries, or collect (Python's collector and tether's)."""
    import gc
    r = s.rng.random()
    target = s.rng.choice(list(victims)) if victims and r < 0.4 else s.pick("op")
    if r < 0.55 and target is not None:
        (getattr(target, "erase", None) or getattr(target, "detach_from_parent", None) or
         (lambda: None))()
    elif r < 0.75 and target is not None and hasattr(target, "detach_from_parent"):
        target.detach_from_parent()
    elif r < 0.85:
        for kind in s.rng.sample(sorted(s.pools), 2):
            s.drop(kind)
        gc.collect()
    else:
        gc.collect()
        s.tether.collect()


class _ApiEvil:
    """A hostile object: its protocol methods (index, int, float, len, iter, eq, hash, bool, str,
    getitem, call, write, fspath) raise, mutate the IR, collect, empty the container holding the
    object, or return a wrong or huge value, by mode. Acts only while armed, at most `budget`
    times; otherwise it behaves."""

    def __init__(self, s, mode, items=(), victims=()):
        self.s, self.mode, self.items, self.victims = s, mode, list(items), list(victims)
        self.budget, self.container = 3, None

    def _act(self, good, wrong):
        if not _API_ARMED[0] or self.budget <= 0:
            return good
        self.budget -= 1
        if self.mode == "raise":
            raise RuntimeError("hostile %s" % self.mode)
        if self.mode == "mutate":
            _api_havoc(self.s, self.victims)
        elif self.mode == "gc":
            import gc
            gc.collect()
            self.s.tether.collect()
        elif self.mode == "shrink" and self.container is not None:
            self.container.clear()
        elif self.mode == "wrong":
            return wrong
        return good

    def __index__(self):
        return self._act(1, 2 ** 64)

    def __int__(self):
        return self._act(1, -2 ** 63 - 1)

    def __float__(self):
        return self._act(1.0, float("nan"))

    def __len__(self):
        return self._act(len(self.items), 2 ** 62)

    def __iter__(self):
        return iter(self._act(self.items, self.items + [self] * 3))

    def __eq__(self, other):
        return self._act(False, self)

    def __hash__(self):
        return self._act(7, -1)

    def __bool__(self):
        return self._act(True, "yes")

    def __str__(self):
        return self._act("t.x", "\udcff\0")

    def __getitem__(self, i):
        self._act(None, None)
        if isinstance(i, int) and -len(self.items) <= i < len(self.items):
            return self.items[i]
        raise IndexError(i)

    def __call__(self, *args, **kwargs):
        return self._act(None, self)

    def write(self, data):
        return self._act(len(data) if hasattr(data, "__len__") else 0, -1)

    def __fspath__(self):
        return self._act("/nonexistent/tether-fuzz", b"\0")


class _ApiEvilInt(int):
    def __eq__(self, other):
        _API_ARMED[0] and _api_evil_effect()
        return int.__eq__(self, other)

    __hash__ = int.__hash__


class _ApiEvilStr(str):
    def __eq__(self, other):
        _API_ARMED[0] and _api_evil_effect()
        return str.__eq__(self, other)

    def __hash__(self):
        _API_ARMED[0] and _api_evil_effect()
        return str.__hash__(self)


class _ApiEvilList(list):
    """A list whose length lies, and whose iteration mutates it."""

    def __len__(self):
        return list.__len__(self) + (1000 if _API_ARMED[0] else 0)

    def __iter__(self):
        if _API_ARMED[0] and list.__len__(self):
            self.pop()
        return list.__iter__(self)


def _api_evil_effect():
    import gc
    gc.collect()


def _api_erased(s):
    """IR that is gone: an operation (with a region, a block, an inner operation) made, a piece
    of it taken, then erased (or only the inner operation erased), or detached."""
    ir, rng = s.ir, s.rng
    op = ir.Operation.create("t.e", results=[s.i32], regions=1, attributes={"a": ir.UnitAttr.get()},
                             ip=ir.InsertionPoint(ir.Module.create().body))  # whatever is pushed
    b = op.regions[0].blocks.append(s.i32)
    inner = ir.Operation.create("t.i", results=[s.i32], operands=[b.arguments[0]],
                                ip=ir.InsertionPoint(b))
    things = [op, op.results[0], op.regions[0], b, b.arguments[0], inner, inner.results[0],
              op.attributes, op.results, b.operations, op.regions, op.regions[0].blocks,
              inner.operands, b.arguments, op._CAPIPtr, inner._CAPIPtr, inner.results[0].uses,
              op.location]
    thing = rng.choice(things)
    r = rng.random()
    if r < 0.6:
        op.erase()
    elif r < 0.8:
        inner.erase()
    else:
        host = s.pick("block")
        if host is not None:
            host.append(op)
        op.detach_from_parent()
    return thing


def _api_foreign(s):
    """An object of another context (a fresh one, dropped by the caller or not)."""
    ir, rng = s.ir, s.rng
    c = ir.Context()
    c.allow_unregistered_dialects = True
    with c, ir.Location.unknown():
        m = ir.Module.parse(rng.choice(ASM[:4]))
        op = list(m.body.operations)[0]
        things = [c, ir.IntegerType.get_signless(8), ir.Location.unknown(), m, m.operation,
                  m.body, op, op.regions[0], ir.StringAttr.get("x"),
                  ir.Type.parse("tensor<2xf32>"), ir.InsertionPoint(m.body), c._CAPIPtr,
                  m._CAPIPtr, ir.AffineMap.get_identity(2), s.PassManager(),
                  ir.DenseI64ArrayAttr.get([1, 2])]
        blocks = list(op.regions[0].blocks)
        if blocks and len(blocks[0].arguments):
            things.append(blocks[0].arguments[0])
        return rng.choice(things)


def _api_capsule(s):
    """A capsule of the wrong kind, of another context, of erased IR, or of a dead object."""
    ir, rng = s.ir, s.rng
    r = rng.random()
    if r < 0.15:
        return _api_capptr(_api_foreign(s))
    if r < 0.3:
        cap = ir.Operation.create("t.dead", results=[s.i32],
                                  ip=ir.InsertionPoint(ir.Module.create().body))._CAPIPtr  # dies
        import gc
        gc.collect()
        s.tether.collect()
        return cap
    sources = [s.i32, s.ctx, s.pick("op"), s.pick("value"), s.pick("attr"), s.pick("module"),
               s.pick("type"), ir.Location.unknown(), ir.AffineMap.get_identity(1),
               ir.IntegerSet.get_empty(1, 1), ir.DialectRegistry(), s.i32.typeid, s.PassManager(),
               ir.AffineExpr.get_dim(0)]
    obj = rng.choice(sources)
    return obj._CAPIPtr if obj is not None else s.ctx._CAPIPtr


def _api_capptr(obj):
    """obj's capsule (obj itself when it is one already)."""
    return getattr(obj, "_CAPIPtr", obj)


def _api_numpy(s):
    """A numpy array (or scalar) of an odd dtype, shape or layout; a memoryview without numpy."""
    rng = s.rng
    which = rng.randrange(22)
    try:
        import numpy as np
    except ImportError:
        return rng.choice([memoryview(b"abcdefgh")[::2], memoryview(bytearray(16)).cast("d"),
                           memoryview(b"\0" * 12).cast("i", [3, 1])])
    if which == 0:
        return np.zeros((), dtype=np.int32)
    if which == 1:
        return np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]
    if which == 2:
        return np.zeros((2, 3), dtype=np.float16)
    if which == 3:
        return np.zeros(4, dtype=np.complex128)
    if which == 4:
        return np.array([True, False, True])
    if which == 5:
        return np.arange(3, dtype=">i4")
    if which == 6:
        return np.array([s.i32, None, 1], dtype=object)
    if which == 7:
        return np.array(["a", "bc"])
    if which == 8:
        return np.zeros((0, 3), dtype=np.float32)
    if which == 9:
        return np.asfortranarray(np.arange(6, dtype=np.int8).reshape(2, 3))
    if which == 10:
        a = np.arange(4, dtype=np.int32)
        a.setflags(write=False)
        return a
    if which == 11:
        return np.lib.stride_tricks.as_strided(np.zeros(1, np.int32), shape=(500, 500),
                                               strides=(0, 0))
    if which == 12:
        return np.zeros(3, dtype=[("a", "i4"), ("b", "f4")])
    if which == 13:
        return np.array(["2020-01-01"], dtype="datetime64[D]")
    if which == 14:
        return np.zeros((1,) * 32, dtype=np.int32)
    if which == 15:
        return np.array([2 ** 64 - 1], dtype=np.uint64)
    if which == 16:
        return np.arange(5, dtype=np.int32)[::-1]
    if which == 17:
        return np.zeros(16, np.uint8)[1:13].view(np.int32)
    if which == 18:
        return rng.choice([np.int64(5), np.float32("nan"), np.bool_(True), np.uint8(255)])
    if which == 19:
        return np.zeros((2, 2), dtype=np.float64).T
    if which == 20:
        return np.packbits(np.ones(8, dtype=bool))
    return np.zeros((3, 0, 2), dtype=np.int64)


def _api_hostile(s, depth=0):
    """A hostile value (see the section's comment)."""
    ir, rng = s.ir, s.rng
    r = rng.randrange(24 if depth < 2 else 12)
    if r == 0:
        return rng.choice(_API_INTS)
    if r == 1:
        return rng.choice([float("nan"), float("inf"), -float("inf"), -0.0, 1e308, 5e-324])
    if r == 2:
        return rng.choice(_API_STRS + ["x" * rng.choice([1000, 100000]), rng.choice(ASM)])
    if r == 3:
        return rng.choice([b"", b"\0", b"a\0b", b"\xff" * 1000, bytearray(b"\0\1\2\3"),
                           memoryview(b"abcdef")[::2], b"i32"])
    if r == 4:
        return rng.choice([None, Ellipsis, NotImplemented, object(), type, ir, 1j])
    if r == 5:
        return _api_foreign(s)
    if r == 6:
        return _api_erased(s)
    if r == 7:
        return s.pick(rng.choice(sorted(s.pools)))   # another kind of IR than expected
    if r == 8:
        return _ApiEvil(s, rng.choice(["raise", "mutate", "gc", "wrong"]),
                        [_api_plain(s) for _ in range(rng.randrange(3))],
                        [s.pick("op"), s.pick("block")])
    if r == 9:
        return _api_capsule(s)
    if r == 10:
        return rng.choice([_ApiEvilInt(rng.choice([0, 1, 2 ** 40])), _ApiEvilStr("value"),
                           _ApiEvilStr("t.x"), _ApiEvilList([s.pick("value"), s.i32, 1])])
    if r == 11:
        return _api_raw(s)
    if r in (12, 13):
        items = [_api_hostile(s, depth + 1) for _ in range(rng.randrange(4))]
        if rng.random() < 0.5:
            items.insert(rng.randrange(len(items) + 1), _api_plain(s))
        if rng.random() < 0.3:
            evil = _ApiEvil(s, "shrink")          # empties the list while it is converted
            evil.container = items
            items.insert(rng.randrange(len(items) + 1), evil)
            items.append(_api_plain(s))           # so that the conversion goes on after it
        return tuple(items) if rng.random() < 0.2 else items
    if r == 14:
        evil = _ApiEvil(s, rng.choice(["shrink", "mutate", "raise"]))
        d = {rng.choice(["value", "sym_name", "a", evil]): evil, "b": _api_hostile(s, depth + 1)}
        evil.container = d
        return d
    if r == 15:
        if rng.random() < 0.5:
            lst = [s.i32]
            lst.append(lst)
            return lst
        deep = []
        for _ in range(rng.choice([100, 100000])):
            deep = [deep]
        return deep
    if r == 16:
        return _api_numpy(s)
    if r == 17:
        return rng.choice([slice(None, None, 0), slice(-2 ** 63, 2 ** 64, -1),
                           slice(_ApiEvil(s, "mutate"), None), slice(1, -1, 2)])
    if r == 18:
        items = [_api_plain(s), _api_hostile(s, depth + 1)]
        return (x for x in items)                    # a generator, consumed once
    if r == 19:
        result = rng.choice([None, 5, "x", ir.WalkResult.INTERRUPT, s.i32, True])
        evil = _ApiEvil(s, rng.choice(["mutate", "raise", "gc"]), victims=[s.pick("op")])
        return rng.choice([lambda *a, **k: result, evil])   # a callback
    if r == 20:
        m = memoryview(b"abcd")
        m.release()
        return rng.choice([m, memoryview(b"\0" * 8).cast("B", [2, 4]), range(3),
                           {s.i32, 1}, frozenset()])
    if r == 21:
        t = s.pick("type") or s.i32
        return rng.choice([t, s.pick("attr"), s.pick("value")])   # right kind, wrong place
    return _api_plain(s)


def _api_plain(s, name=""):
    """A plausible value for a parameter called name (so the hostile one gets through)."""
    ir, rng = s.ir, s.rng
    name = name.lower()
    if name in ("context", "ctx"):
        return s.ctx
    if name == "loc":
        return ir.Location.unknown()
    if name == "ip":
        b = s.pick("block")
        return ir.InsertionPoint(b) if b is not None else None
    if "type" in name or name in ("result", "results", "inputs", "t", "element_type"):
        t = s.pick("type") or s.i32
        return [t] if name.endswith("s") else t
    if name in ("asm", "pipeline", "text", "source"):
        return rng.choice(ASM + PIPELINES + ["i32", "1 : i32"])
    if name in ("name", "op_name", "sym_name", "namespace", "dialect_namespace", "data",
                "filename", "string", "symbol"):
        return rng.choice(["t.x", "arith.addi", "f", "value"])
    if name in ("operands", "values", "iter_args", "args"):
        return [v for v in (s.pick("value") for _ in range(2)) if v is not None]
    if name in ("attributes", "attrs"):
        return {"value": s.pick("attr") or ir.UnitAttr.get()}
    if "attr" in name:
        return s.pick("attr") or ir.UnitAttr.get()
    if name in ("operation", "op", "anchor_op", "from_op", "symbol_table_op"):
        return s.pick("op")
    if name in ("block", "dest", "successors"):
        b = s.pick("block")
        return [b] if name.endswith("s") and b is not None else b
    if name == "region":
        return s.pick("region")
    if name in ("shape", "strides", "values_list", "scalable_dims"):
        return [rng.randrange(1, 4) for _ in range(rng.randrange(3))]
    if name in ("lhs", "rhs", "value", "lower_bound", "upper_bound", "step", "operand", "cond",
                "condition", "with_", "val", "input"):
        return s.pick("value") or 1
    if name in ("callback", "run", "func", "caster", "builder", "body_builder", "fn"):
        return lambda *a, **k: None
    if name == "typeid":
        return s.i32.typeid
    r = rng.randrange(6)
    return [rng.randrange(4), None, "t.x", s.i32, s.pick("value"), True][r]


def _api_args(s, params):
    """(args, kwargs) for a callable with params (None: unknown): plausible values, one or two of
    them hostile; sometimes only hostile positional ones whatever the signature."""
    rng = s.rng
    if params is None or rng.random() < 0.15:
        n = rng.choice([0, 0, 0, 1, 1, 2, 3])
        return [_api_hostile(s) for _ in range(n)], {}
    chosen = [p for p in params if p[1] or rng.random() < 0.35]
    if not chosen:
        return ([_api_hostile(s)] if rng.random() < 0.5 else []), {}
    bad = set(rng.sample(range(len(chosen)), min(len(chosen), rng.choice([1, 1, 1, 2]))))
    args, kwargs, positional = [], {}, True
    it = iter(range(len(chosen)))
    for name, required, kwonly in params:
        if (name, required, kwonly) not in chosen:
            positional = False
            continue
        i = next(it)
        v = _api_hostile(s) if i in bad else _api_plain(s, name)
        if name in _API_NEVER:
            v = None
        if positional and not kwonly and rng.random() < 0.8:
            args.append(v)
        else:
            positional = False
            kwargs[name] = v
    if rng.random() < 0.05:
        kwargs["bogus"] = _api_hostile(s)
    return args, kwargs


def _api_fresh(s):
    """A new object to call methods on: a context, a location, an insertion point, affine maps,
    a pass manager, a symbol table, types and attributes from text, operations..."""
    ir, rng = s.ir, s.rng
    b = s.pick("block")
    m = s.pick("module")
    makers = [
        lambda: s.ctx,
        ir.Context,
        ir.Location.unknown,
        lambda: ir.Location.file("f.mlir", 1, 2),
        lambda: ir.Location.fused([ir.Location.name("n"), ir.Location.unknown()]),
        lambda: ir.InsertionPoint(b if b is not None else ir.Module.create().body),
        lambda: ir.InsertionPoint.at_block_terminator(b),
        lambda: ir.AffineMap.get_identity(2),
        lambda: ir.AffineMap.get(2, 1, [ir.AffineExpr.get_dim(0) + ir.AffineExpr.get_symbol(0)]),
        lambda: ir.AffineExpr.get_dim(1) * 3,
        lambda: ir.IntegerSet.get_empty(1, 1),
        ir.DialectRegistry,
        s.PassManager,
        lambda: s.PassManager.parse(rng.choice(PIPELINES)),
        lambda: s.ctx.dialects,
        lambda: s.ctx.dialects["arith"],
        lambda: ir.SymbolTable(m.operation),
        lambda: ir.AsmState(m.operation),
        ir.Module.create,
        ir.Region,
        lambda: s.ctx.attach_diagnostic_handler(lambda d: True),
        lambda: ir.Type.parse(rng.choice(["i32", "tensor<2x?xf32>", "memref<4xi8, strided<[2]>>",
                                          "vector<[4]x2xf32>", "(i32) -> i1", "tuple<i32, f32>",
                                          "complex<f64>", "!t.x", "none", "index"])
                              ).maybe_downcast(),
        lambda: ir.Attribute.parse(rng.choice(["1 : i32", "array<i64: 1, 2>", '"s"', "@a::@b",
                                               "dense<[1, 2]> : tensor<2xi32>", "{a = 1}",
                                               "affine_map<(d0) -> (d0)>", "1.5 : f32",
                                               "dense<1.0> : tensor<2xf32>", "[1, \"x\"]",
                                               "strided<[1, ?], offset: ?>", "unit", "true",
                                               "array<i1: true>", "array<f64: 1.0>",
                                               "affine_set<(d0) : (d0 >= 0)>"])).maybe_downcast(),
        lambda: ir.Operation.create("t.f", results=[s.i32], regions=1,
                                    ip=ir.InsertionPoint(ir.Module.create().body)),
        lambda: s.i32.typeid,
    ]
    try:
        return rng.choice(makers)()
    except Exception:
        return s.ctx


def _api_receiver(s):
    """Something to call a method of: from the pools (or one of its parts), fresh, or made by
    `__new__` and never initialised, or a hostile value."""
    rng = s.rng
    r = rng.random()
    if r < 0.45:
        obj = s.pick(rng.choice(sorted(s.pools)))
        if obj is not None:
            if rng.random() < 0.5:
                part = rng.choice(["operation", "opview", "operands", "results", "regions",
                                   "attributes", "successors", "location", "context", "owner",
                                   "uses", "type", "blocks", "arguments", "operations",
                                   "predecessors", "body", "typeid", "maybe_downcast", "parent",
                                   "block", "region", "result"])
                try:
                    obj = getattr(obj, part)
                    obj = obj() if part == "maybe_downcast" else obj
                    if rng.random() < 0.3 and len(obj):
                        obj = obj[rng.randrange(len(obj))]
                except Exception:
                    pass
            return obj
    if r < 0.8:
        return _api_fresh(s)
    if r < 0.9:
        return _api_raw(s)
    return _api_hostile(s)


def _api_raw(s):
    """An object made by `__new__` alone, never initialised (or the context, if refused)."""
    cls = s.rng.choice(_api_surface()["classes"])
    try:
        return cls.__new__(cls)
    except Exception:
        return s.ctx


def _api_keep(s, obj):
    """Puts what a call returned into the pools (and prints it half of the time)."""
    ir = s.ir
    for kind, cls in (("op", (ir._OperationBase, ir.OpView)), ("block", ir.Block),
                      ("region", ir.Region), ("value", ir.Value), ("type", ir.Type),
                      ("attr", ir.Attribute), ("module", ir.Module)):
        if isinstance(obj, cls):
            s.add(kind, obj)
            if s.rng.random() < 0.5:
                str(obj)
            return


def _api_call(s, fn, args=(), kwargs=None):
    """fn(*args, **kwargs) with the hostile objects armed; the result, or None on Exception."""
    _API_ARMED[0] = True
    try:
        return fn(*args, **(kwargs or {}))
    except Exception:
        return None
    finally:
        _API_ARMED[0] = False


def _api_restore(s):
    """A hostile `__exit__` may have popped the program's context or location: push them again."""
    ir = s.ir
    for cls, push in ((ir.Context, s.ctx.__enter__),
                      (ir.Location, lambda: ir.Location.unknown(s.ctx).__enter__())):
        try:
            missing = cls.current is None
        except Exception:  # ValueError("No current Location") on some builds
            missing = True
        if missing:
            push()


def _api_one_call(s):
    ir, rng = s.ir, s.rng
    api = _api_surface()
    mode = rng.random()
    result = None
    if mode < 0.3:
        # class level: a constructor, a static or class method, _CAPICreate with a capsule
        cls = rng.choice(api["classes"])
        statics = [m for m in _api_members(cls) if m[1] in ("static", "classattr")]
        if rng.random() < 0.35 or not statics:
            args, kwargs = _api_args(s, _api_signature(cls, cls))
            result = _api_call(s, cls, args, kwargs)
        else:
            name, kind, d = rng.choice(statics)
            if kind == "classattr":
                result = _api_call(s, getattr, (cls, name))
            elif name == "_CAPICreate" and rng.random() < 0.7:
                result = _api_call(s, getattr(cls, name), (_api_capsule(s),))
            else:
                fn = getattr(d, "__func__", d)
                args, kwargs = _api_args(s, _api_signature(fn))
                result = _api_call(s, getattr(cls, name), args, kwargs)
    elif mode < 0.85:
        # instance level: a method, a property (get, set, delete), iteration while mutating
        obj = _api_receiver(s)
        if not type(obj).__module__.startswith("tether"):
            obj = _api_fresh(s)                        # a hostile value of the step's own
        members = [m for m in _api_members(type(obj)) if m[1] in ("method", "attr")]
        if not members:
            return
        name, kind, d = rng.choice(members)
        if kind == "attr":
            r = rng.random()
            if r < 0.55:
                result = _api_call(s, getattr, (obj, name))
            elif r < 0.9:
                _api_call(s, setattr, (obj, name, _api_hostile(s)))
            else:
                _api_call(s, delattr, (obj, name))
        elif name == "__iter__" and rng.random() < 0.5:
            it = _api_call(s, iter, (obj,))
            for _ in range(rng.randrange(1, 20) if it is not None else 0):
                x = _api_call(s, next, (it, None))
                if x is None:
                    break
                if rng.random() < 0.3:
                    _api_call(s, _api_havoc, (s, [x]))
        else:
            sig = _api_signature(d, type(obj) if name == "__init__" else None)
            args, kwargs = _api_args(s, sig)
            if rng.random() < 0.1:
                # unbound, on a receiver of another class
                result = _api_call(s, getattr(type(obj), name), [_api_receiver(s)] + args, kwargs)
            else:
                result = _api_call(s, getattr(obj, name), args, kwargs)
    elif mode < 0.92:
        # the module's functions (casters, builders, collect...)
        fn = rng.choice(api["functions"])
        args, kwargs = _api_args(s, _api_signature(fn))
        result = _api_call(s, fn, args, kwargs)
        if callable(result) and rng.random() < 0.5:    # a decorator: decorate something hostile
            result = _api_call(s, result, (_api_hostile(s),))
    else:
        # a builder of arith, func or scf at an insertion point of the pools or a new module
        fn = rng.choice(api["builders"])
        params = _api_signature(fn.__init__ if isinstance(fn, type) else fn)
        args, kwargs = _api_args(s, params)
        b = s.pick("block")
        with ir.InsertionPoint(b if b is not None else ir.Module.create().body):
            result = _api_call(s, fn, args, kwargs)
    _api_keep(s, result)


def step_api_surface(s):
    """Two to six calls of the public API with hostile arguments (issue 21), in a scratch working
    directory of the step's own: hostile strings are file names too (print(file=...) and
    write_bytecode(...) write to a path)."""
    import os
    import shutil
    import tempfile
    home = os.getcwd()
    scratch = tempfile.mkdtemp(prefix="tether-fuzz-")
    os.chdir(scratch)
    try:
        for _ in range(s.rng.randrange(2, 7)):
            try:
                _api_one_call(s)
            finally:
                _api_restore(s)
    finally:
        os.chdir(home)
        shutil.rmtree(scratch, ignore_errors=True)


STEPS = {name[5:]: fn for name, fn in list(globals().items()) if name.startswith("step_")}


STEP_COUNTS = "STEP-COUNTS "  # the line a program prints before END: how its steps ended


def run_program(seed, steps, revision):
    """steps: (index, name) pairs. Each step draws from its own generator, seeded by the program's
    seed and the step's index in the original program: a shrunk program's remaining steps make
    the same choices as before (given the same pools). Revision 1 had one generator for the whole
    program, and its steps are names alone. At the end, a line says per step kind how many steps
    ran to completion and how many raised (and what), for the runner to count."""
    import json
    s = State(seed, revision)
    counts = {}
    for step in steps:
        if revision >= 2:
            index, name = step
            s.rng = random.Random(seed * 1000003 + index)
        else:
            name = step
        done, raised, kinds = counts.setdefault(name, [0, 0, {}])
        try:
            STEPS[name](s)
            counts[name][0] += 1
        except Exception as e:
            counts[name][1] += 1
            kinds[type(e).__name__] = kinds.get(type(e).__name__, 0) + 1
    print(STEP_COUNTS + json.dumps(counts, sort_keys=True))


# ---- runner side ------------------------------------------------------------------------------

PRELUDE_END = "# ---- runner side"

# How a program's steps run, by fuzzer revision. A corpus entry names the revision it was found
# with and replays under it, so it runs the same statements in the same order as when it was found.
# A change to a step that alters what an existing program does (another draw from the generator,
# another call) adds a revision here and keeps the old behaviour for entries of earlier revisions
# (`s.revision` in the step).
REVISIONS = {
    1: "one generator for the whole program; steps are names alone; print never writes bytecode",
    2: "each step draws from its own generator, seeded by the program's seed and the step's index",
    3: "print writes bytecode (write_bytecode) one time in five instead of printing",
}
REVISION = max(REVISIONS)


def _prelude():
    with open(os.path.abspath(__file__)) as f:
        text = f.read()
    start = text.index(PRELUDE_START)
    return text[start:text.index(PRELUDE_END)]


def _used_definitions(prelude, names):
    """The prelude cut down to what steps `names` use: its top-level statements that define a
    name the steps, State or run_program reach (transitively, by name; a step named in a string,
    as fork's child steps are, counts), in their order, with the comment lines just above
    them. Every program is this text: what a corpus entry keeps is what ran."""
    import ast
    tree = ast.parse(prelude)
    lines = prelude.splitlines(keepends=True)
    defines, uses = [], []
    for node in tree.body:
        targets = set()
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            targets.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                targets |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        loads |= {"step_" + c.value for c in ast.walk(node)
                  if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        defines.append(targets)
        uses.append(loads)
    need = {"State", "run_program", "STEPS", "STEP_COUNTS"} | {"step_" + n for n in names}
    while True:
        more = set()
        for targets, loads in zip(defines, uses):
            if targets & need:
                more |= loads
        if more <= need:
            break
        need |= more
    out = []
    for node, targets in zip(tree.body, defines):
        if not targets & need:
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1
        out.append("".join(lines[first:node.end_lineno]) + "\n")
    return "\n".join(out)


def program_text(seed, steps, revision=REVISION):
    """The standalone program of a seed and its steps, under a fuzzer revision: the definitions
    its steps use, then the run."""
    names = sorted({step if revision == 1 else step[1] for step in steps})
    return ("import random\n\n" + _used_definitions(_prelude(), names) +
            "\nSTEPS_TO_RUN = %r\nrun_program(%d, STEPS_TO_RUN, %d)\nprint('END')\n"
            % (list(steps), seed, revision))


# ---- corpus entries ---------------------------------------------------------------------------
# An entry is the program a campaign found, as it ran: a Python program (run it with the tether
# package on PYTHONPATH), opening with '#' comment lines that say what it found, how it was fixed
# and which test covers the class, then where it came from:
#     # fuzzer: REVISION
#     # seed: SEED
#     # steps: INDEX NAME, INDEX NAME, ...      (several such lines may follow each other)
# then the program's text: the definitions its steps used when it was found, and the run. The
# replay runs that text, so an entry keeps doing what it did when it was found whatever the steps
# become; `--rebuild ENTRY` prints the program today's steps make of the same seed and steps.


def _steps_text(steps, revision):
    return [step if revision == 1 else "%d %s" % step for step in steps]


def entry_text(seed, steps, revision=REVISION, comments=(), program=None):
    """An entry: comments, where it came from, and its program (by default the one today's
    steps make of the seed and steps)."""
    lines = ["# " + c if c else "#" for c in comments]
    lines += ["# fuzzer: %d" % revision, "# seed: %d" % seed]
    line = []
    for step in _steps_text(steps, revision):
        if line and len(", ".join(line + [step])) > 88:
            lines.append("# steps: " + ", ".join(line))
            line = []
        line.append(step)
    lines.append("# steps: " + ", ".join(line))
    return "\n".join(lines) + "\n" + (program or program_text(seed, steps, revision))


def parse_entry(text, where="entry"):
    """(seed, steps, revision, program) of an entry's text; ValueError naming the line of
    anything amiss."""
    fields, steps = {}, []
    body = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            body = number
            break

        def bad(why):
            return ValueError("%s:%d: %s: %r" % (where, number, why, raw))

        key, sep, value = line[1:].strip().partition(":")
        if not sep or key not in ("fuzzer", "seed", "steps"):
            continue
        if key == "steps":
            if set(fields) != {"fuzzer", "seed"}:
                raise bad("'# steps:' comes after '# fuzzer:' and '# seed:'")
            for part in value.split(","):
                words = part.split()
                if not words:
                    continue
                if fields["fuzzer"] == 1 and len(words) == 1:
                    step = words[0]
                elif fields["fuzzer"] >= 2 and len(words) == 2 and words[0].isdigit():
                    step = (int(words[0]), words[1])
                else:
                    raise bad("a step is 'INDEX NAME' ('NAME' alone in revision 1)")
                if (step if fields["fuzzer"] == 1 else step[1]) not in STEPS:
                    raise bad("no such step")
                steps.append(step)
            continue
        if key in fields:
            raise bad("'# %s:' twice" % key)
        if not value.strip().isdigit():
            raise bad("not a number")
        fields[key] = int(value)
        if key == "fuzzer" and fields[key] not in REVISIONS:
            raise bad("unknown fuzzer revision (known: %s)" % ", ".join(map(str, REVISIONS)))
    if set(fields) != {"fuzzer", "seed"} or not steps:
        raise ValueError("%s: no '# fuzzer:', '# seed:' and '# steps:' lines" % where)
    if body is None or "\nrun_program(" not in text:
        raise ValueError("%s: no program after the comments (an entry keeps its program's text)"
                         % where)
    try:
        compile(text, where, "exec")
    except SyntaxError as e:
        raise ValueError("%s: the program does not compile: %s" % (where, e))
    return fields["seed"], steps, fields["fuzzer"], text


def read_entry(path):
    with open(path) as f:
        return parse_entry(f.read(), path)


# ---- running programs -------------------------------------------------------------------------

FOCUS = []  # step kinds that make half of every program's steps (--focus)


def make_program(rng):
    names = sorted(STEPS)
    n = rng.randrange(5, 40)
    pick = (lambda: rng.choice(FOCUS) if FOCUS and rng.random() < 0.5 else rng.choice(names))
    return rng.randrange(1 << 30), [(i, pick()) for i in range(n)]


def verdict(returncode, stdout):
    """'ok', 'exception' (the program itself broke: a fuzzer bug), 'signal N', 'abort'."""
    if returncode == 0 and stdout.rstrip().endswith("END"):
        return "ok"
    if returncode in (-6, 134):
        return "abort"
    if returncode < 0:
        return "signal %d" % -returncode
    return "exception"


def read_step_counts(stdout):
    """{kind: [completed, raised, {exception name: count}]} from a program's STEP_COUNTS line
    ({} when it printed none: it died first)."""
    import json
    for line in reversed(stdout.splitlines()):
        if line.startswith(STEP_COUNTS):
            try:
                return json.loads(line[len(STEP_COUNTS):])
            except ValueError:
                return {}
    return {}


def add_step_counts(total, counts):
    for kind, (done, raised, kinds) in counts.items():
        t = total.setdefault(kind, [0, 0, {}])
        t[0] += done
        t[1] += raised
        for name, n in kinds.items():
            t[2][name] = t[2].get(name, 0) + n


# A run fails when more than this share of the steps of a kind raised (of kinds that ran at
# least MIN_JUDGED steps): such a step mostly stops at an exception and exercises little. Most
# kinds raise in well under half of their steps (measured on the 500 programs of the test, seed
# 12, docs/testing.md "What a fuzz run counts"); the kinds below raise more by design, and their
# limit sits a margin above what they raise today.
RAISE_LIMIT = 0.5
RAISE_LIMITS = {
    # kind: limit, # share raised in the test's 500 programs (seed 12, MLIR 22, 2026-11-28): why
    "bytecode": 0.9,        # 0.82: mutated bytecode is refused (MLIRError): what the step tries
    "resources": 0.9,       # 0.74: blobs of alignments and sizes MLIR cannot take are refused
    "diagnostics": 0.8,     # 0.60: what makes MLIR report is an error (parse, bad type, verify)
    "linalg": 0.97,         # 0.89: the builders refuse most random operand lists; this limit
                            # only catches a step that never completes
    "reentrant_gc": 0.75,   # 0.57: the hook erased what the loop reads (InvalidatedError)
    "reentrant_wrap": 0.8,  # 0.36: likewise
    "append": 0.65,         # 0.38: the operation is erased, detached elsewhere or the block's own
    "detach": 0.65,         # 0.46: the operation is erased or already detached
    "move": 0.65,           # 0.43: likewise, or the move would nest an operation in itself
    "deep": 0.65,           # 0.40: text nested past tether's limit is refused (MLIRError)
    "bulk": 0.65,           # 0.46 (2026-12-08): the block picked is erased (InvalidatedError),
                            # of a context that died or another one (ValueError), or ends in a
                            # terminator where the step inserts at its end (IndexError)
}
MIN_JUDGED = 20


def judge_step_counts(total, log=sys.stdout):
    """Prints per step kind how many steps completed and raised (and the most common
    exceptions); the kinds whose share of raising steps is over their limit."""
    print("| step | completed | raised | share raised | limit | most raised |", file=log)
    print("|---|---|---|---|---|---|", file=log)
    over = []
    for kind in sorted(total):
        done, raised, kinds = total[kind]
        n = done + raised
        share = raised / n if n else 0.0
        limit = RAISE_LIMITS.get(kind, RAISE_LIMIT)
        top = ", ".join("%s %d" % kv for kv in sorted(kinds.items(), key=lambda kv: -kv[1])[:3])
        verdict = ""
        if n < MIN_JUDGED:
            verdict = " (too few to judge)"
        elif share > limit:
            verdict = " OVER THE LIMIT"
            over.append(kind)
        print("| %s | %d | %d | %.2f%s | %.2f | %s |" % (kind, done, raised, share, verdict, limit,
                                                         top), file=log)
    for kind in over:
        print("steps: %d%% of the %s steps raised (limit %d%%): the step mostly stops at an "
              "exception; see the exceptions above" % (
                  100 * total[kind][1] / sum(total[kind][:2]), kind,
                  100 * RAISE_LIMITS.get(kind, RAISE_LIMIT)), file=log)
    return over


def run_text(text, timeout, env):
    """The verdict of a program ('hang' when it outlives timeout), its stderr's tail, and its
    step counts."""
    try:
        p = subprocess.run([sys.executable, "-c", text], capture_output=True, timeout=timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        return "hang", "", {}
    out, err = (b.decode("utf-8", "replace") for b in (p.stdout, p.stderr))  # MLIR's bytes
    v = verdict(p.returncode, out)
    return v, "" if v == "ok" else err[-2000:], read_step_counts(out)


def shrink(seed, steps, want, timeout, env, budget=60):
    """Removes steps (halves, then single steps) while the same verdict remains."""
    steps = list(steps)
    tries = 0
    chunk = max(1, len(steps) // 2)
    while chunk >= 1 and tries < budget:
        i, changed = 0, False
        while i < len(steps) and tries < budget:
            cand = steps[:i] + steps[i + chunk:]
            tries += 1
            if cand and run_text(program_text(seed, cand), timeout, env)[0] == want:
                steps, changed = cand, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return steps


def _read_back(f):
    """The text a program wrote to the temporary file f (closed after)."""
    f.seek(0)
    text = f.read().decode("utf-8", "replace")
    f.close()
    return text


def run_programs(programs, jobs, timeout, env, progress=None):
    """Runs (seed, steps) programs, `jobs` at a time: the count of each verdict, the findings
    as (seed, steps, verdict, stderr tail), and the step counts of all programs (add_step_counts).
    With `progress` (a file), a line there every 500 programs: how many ran, the verdicts so far,
    the time."""
    import tempfile
    counts, findings, running, steps = {}, [], [], {}
    idx, done, t0 = 0, 0, time.time()
    while idx < len(programs) or running:
        while idx < len(programs) and len(running) < jobs:
            s, st = programs[idx]
            # Files, not pipes: a program writing more than a pipe holds (a diagnostic naming a
            # long location) would block on a pipe read only at its end, and look hung.
            out_f, err_f = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            p = subprocess.Popen([sys.executable, "-c", program_text(s, st)],
                                 stdout=out_f, stderr=err_f, env=env)
            running.append((p, s, st, time.time(), out_f, err_f))
            idx += 1
        for item in list(running):
            p, s, st, started, out_f, err_f = item
            if p.poll() is None:
                if time.time() - started > timeout:
                    p.kill()
                    p.wait()
                    out_f.close()
                    err_f.close()
                    running.remove(item)
                    counts["hang"] = counts.get("hang", 0) + 1
                    findings.append((s, st, "hang", ""))
                    done += 1
                continue
            running.remove(item)
            out_s, err_s = (_read_back(f) for f in (out_f, err_f))
            v = verdict(p.returncode, out_s)
            add_step_counts(steps, read_step_counts(out_s))
            counts[v] = counts.get(v, 0) + 1
            if v != "ok":
                findings.append((s, st, v, err_s[-2000:]))
            done += 1
            if progress is not None and done % 500 == 0:
                print("%d of %d programs, %.0f s: %s" % (done, len(programs), time.time() - t0,
                                                         dict(sorted(counts.items()))),
                      file=progress, flush=True)
        time.sleep(0.005)
    return counts, findings, steps


def campaign(n, seed, jobs, timeout, out, env, log=sys.stdout):
    rng = random.Random(seed)
    programs = [make_program(rng) for _ in range(n)]
    t0 = time.time()
    counts, findings, steps = run_programs(programs, jobs, timeout, env, progress=log)
    elapsed = time.time() - t0
    print("| verdict | programs |", file=log)
    print("|---|---|", file=log)
    for v in sorted(counts):
        print("| %s | %d |" % (v, counts[v]), file=log)
    print("%d programs in %.1f s (%.1f per second, %d jobs)" % (n, elapsed, n / elapsed, jobs),
          file=log)
    over = judge_step_counts(steps, log)
    if over:
        counts["step kinds over their raise limit"] = len(over)
    written = []
    for k, (s, st, v, err) in enumerate(findings[:20]):
        small = shrink(s, st, v, timeout, env) if v != "exception" else st
        path = os.path.join(out, "finding_%03d.txt" % k)
        os.makedirs(out, exist_ok=True)
        comments = ["verdict: %s (campaign of %d programs, seed %d%s)" % (
                        v, n, seed, ", --focus " + ",".join(FOCUS) if FOCUS else ""),
                    "stderr tail:"] + err.splitlines()[-15:]
        with open(path, "w") as f:
            f.write(entry_text(s, small, REVISION, comments))
        written.append((path, v))
        print("finding: %s -> %s (%d steps: %s)" % (v, path, len(small), small), file=log)
    return counts, written


def replay(paths, timeout, env, log=sys.stdout):
    """Runs corpus entries, each in its own interpreter; the number that failed (a malformed entry
    counts), each reported with its stderr (with the Python stack of a crash: faulthandler)."""
    env = dict(env, PYTHONFAULTHANDLER="1")
    failed = 0
    for path in paths:
        try:
            program = read_entry(path)[3]
        except (OSError, ValueError) as e:
            print("corpus %s: unreadable: %s" % (os.path.basename(path), e), file=log)
            failed += 1
            continue
        v, err = run_text(program, timeout, env)[:2]
        print("corpus %s: %s" % (os.path.basename(path), v), file=log)
        if v != "ok":
            print(err, file=log)
            failed += 1
    return failed


def corpus_entries():
    """Every file of corpus/, next to this file; a test of an empty corpus fails."""
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    names = sorted(os.listdir(corpus)) if os.path.isdir(corpus) else []
    return [os.path.join(corpus, name) for name in names]


PROGRAM_ENV = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "MALLOC_PERTURB_": "165"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--out", default="fuzz-findings")
    ap.add_argument("--tether-py", help="folder holding the tether package (PYTHONPATH)")
    ap.add_argument("--focus", default="",
                    help="comma-separated step kinds making half of every program (campaigns "
                         "on a new API)")
    ap.add_argument("--test", action="store_true",
                    help="the bazel test: the corpus, then 500 programs of seed 12, failing on "
                         "any finding")
    ap.add_argument("--replay", nargs="+", metavar="ENTRY",
                    help="run these corpus entries, failing on any that does not end ok")
    ap.add_argument("--program", metavar="ENTRY",
                    help="print the program of a corpus entry, as it was found (the entry is "
                         "that program, with its comments)")
    ap.add_argument("--rebuild", metavar="ENTRY",
                    help="print the program today's steps make of an entry's seed and steps")
    a = ap.parse_args(argv)
    FOCUS[:] = [f for f in a.focus.split(",") if f]
    unknown = [f for f in FOCUS if f not in STEPS]
    if unknown:
        ap.error("unknown step kind(s): %s (known: %s)" % (", ".join(unknown), ", ".join(STEPS)))
    if a.program:
        sys.stdout.write(read_entry(a.program)[3])
        return 0
    if a.rebuild:
        sys.stdout.write(program_text(*read_entry(a.rebuild)[:3]))
        return 0
    env = dict(os.environ)
    # glibc's allocator without its thread cache, filling freed memory: a read of freed IR then
    # reads garbage and crashes, instead of finding the old bytes and going on (issue 35: the
    # re-entrant collections' reads of erased operations were silent without this). Under ASan
    # its own allocator does that.
    for name, value in PROGRAM_ENV.items():
        env.setdefault(name, value)
    if a.tether_py:
        env["PYTHONPATH"] = os.pathsep.join([a.tether_py, env.get("PYTHONPATH", "")])
    if a.replay:
        return 1 if replay(a.replay, a.timeout, env) else 0
    if a.test:
        # The corpus first: every finding of earlier campaigns, its program as it was found.
        entries = corpus_entries()
        failed = replay(entries, a.timeout, env) if entries else 1
        if not entries:
            print("corpus: no entries next to %s" % os.path.abspath(__file__))
        out = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or os.environ.get("TEST_TMPDIR") or "/tmp"
        counts, written = campaign(500, 12, a.jobs, a.timeout, os.path.join(out, "findings"), env)
        if failed:
            counts["corpus failures"] = failed
    else:
        counts, written = campaign(a.programs, a.seed, a.jobs, a.timeout, a.out, env)
    bad = {k: v for k, v in counts.items() if k != "ok"}
    if bad:
        for path, v in written:
            with open(path) as f:
                head = "".join(itertools.takewhile(lambda line: line.startswith("#"), f))
            print("\n==== %s (%s): the program is the file itself (run it with the package on "
                  "PYTHONPATH)\n%s" % (path, v, head))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
