"""tether's API fuzzer: random, type-correct programs over tether.ir, each run in a subprocess and
classified (ok / signal / abort / hang). Nothing a Python program does may take the interpreter
down (issue 12); this finds the sequences hand-written tests do not.

A program is a seed and a list of steps. Each step is an entry of STEPS: a function of the
program's state (pools of live objects by kind, and the program's own random generator) that calls
the API, perhaps adding objects to the pools. Python exceptions are the API doing its job and are
ignored; only a dead or hung interpreter is a finding. A finding is shrunk (steps removed while the
same failure remains) and written as a corpus entry: the seed, the steps and the fuzzer revision,
never the program's text. This file turns an entry back into its program (as SQLite's fuzzcheck
stores inputs, not copies of the harness); docs/testing.md, "Fuzzing", has the entry format.

    fuzz.py --programs 10000 --seed 1 --jobs 2 --out /tmp/findings    # a campaign
    fuzz.py --test                                                   # the bazel test (fixed seed)
    fuzz.py --replay ENTRY...                                        # replay corpus entries
    fuzz.py --program ENTRY                                          # print an entry's program

To fuzz a new API: add a function to STEPS (docs/testing.md, "Fuzzing").
"""

import argparse
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


STEPS = {name[5:]: fn for name, fn in list(globals().items()) if name.startswith("step_")}


def run_program(seed, steps, revision):
    """steps: (index, name) pairs. Each step draws from its own generator, seeded by the program's
    seed and the step's index in the original program: a shrunk program's remaining steps make
    the same choices as before (given the same pools). Revision 1 had one generator for the whole
    program, and its steps are names alone."""
    s = State(seed, revision)
    for step in steps:
        if revision >= 2:
            index, name = step
            s.rng = random.Random(seed * 1000003 + index)
        else:
            name = step
        try:
            STEPS[name](s)
        except Exception:
            pass


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
    return "import random\n" + text[start:text.index(PRELUDE_END)]


def program_text(seed, steps, revision=REVISION):
    """The standalone program of a seed and its steps, under a fuzzer revision."""
    return (_prelude() + "\n\nSTEPS_TO_RUN = %r\nrun_program(%d, STEPS_TO_RUN, %d)\nprint('END')\n"
            % (list(steps), seed, revision))


# ---- corpus entries ---------------------------------------------------------------------------
# An entry is a text file: '#' comment lines (what the program found, how it was fixed), then
#     fuzzer: REVISION
#     seed: SEED
#     steps:
# and one step a line, "INDEX NAME" (the step's index in the program it was shrunk from), or
# "NAME" alone in revision 1.


def entry_text(seed, steps, revision=REVISION, comments=()):
    lines = ["# " + c if c else "#" for c in comments]
    lines += ["fuzzer: %d" % revision, "seed: %d" % seed, "steps:"]
    lines += [step if revision == 1 else "%d %s" % step for step in steps]
    return "\n".join(lines) + "\n"


def parse_entry(text, where="entry"):
    """(seed, steps, revision) of an entry's text; ValueError naming the line of anything amiss."""
    fields, steps, in_steps = {}, [], False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue

        def bad(why):
            return ValueError("%s:%d: %s: %r" % (where, number, why, raw))

        if in_steps:
            parts = line.split()
            if fields["fuzzer"] == 1 and len(parts) == 1:
                step = parts[0]
            elif fields["fuzzer"] >= 2 and len(parts) == 2 and parts[0].isdigit():
                step = (int(parts[0]), parts[1])
            else:
                raise bad("a step is 'INDEX NAME' ('NAME' alone in revision 1)")
            if (step if fields["fuzzer"] == 1 else step[1]) not in STEPS:
                raise bad("no such step")
            steps.append(step)
            continue
        key, sep, value = line.partition(":")
        if not sep or key not in ("fuzzer", "seed", "steps") or key in fields:
            raise bad("expected 'fuzzer: N', 'seed: N', then 'steps:'")
        if key == "steps":
            if value.strip() or set(fields) != {"fuzzer", "seed"}:
                raise bad("'steps:' comes after 'fuzzer:' and 'seed:', the steps on the lines below")
            in_steps = True
            continue
        if not value.strip().isdigit():
            raise bad("not a number")
        fields[key] = int(value)
        if key == "fuzzer" and fields[key] not in REVISIONS:
            raise bad("unknown fuzzer revision (known: %s)" % ", ".join(map(str, REVISIONS)))
    if not in_steps or not steps:
        raise ValueError("%s: no steps" % where)
    return fields["seed"], steps, fields["fuzzer"]


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


def run_text(text, timeout, env):
    """The verdict of a program ('hang' when it outlives timeout), and its stderr's tail."""
    try:
        p = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "hang", ""
    v = verdict(p.returncode, p.stdout)
    return v, "" if v == "ok" else p.stderr[-2000:]


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


def run_programs(programs, jobs, timeout, env):
    """Runs (seed, steps) programs, `jobs` at a time: the count of each verdict, and the findings
    as (seed, steps, verdict, stderr tail)."""
    counts, findings, running = {}, [], []
    idx = 0
    while idx < len(programs) or running:
        while idx < len(programs) and len(running) < jobs:
            s, st = programs[idx]
            p = subprocess.Popen([sys.executable, "-c", program_text(s, st)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env)
            running.append((p, s, st, time.time()))
            idx += 1
        for item in list(running):
            p, s, st, started = item
            if p.poll() is None:
                if time.time() - started > timeout:
                    p.kill()
                    p.communicate()
                    running.remove(item)
                    counts["hang"] = counts.get("hang", 0) + 1
                    findings.append((s, st, "hang", ""))
                continue
            running.remove(item)
            out_s, err_s = p.communicate()
            v = verdict(p.returncode, out_s)
            counts[v] = counts.get(v, 0) + 1
            if v != "ok":
                findings.append((s, st, v, err_s[-2000:]))
        time.sleep(0.005)
    return counts, findings


def campaign(n, seed, jobs, timeout, out, env, log=sys.stdout):
    rng = random.Random(seed)
    programs = [make_program(rng) for _ in range(n)]
    t0 = time.time()
    counts, findings = run_programs(programs, jobs, timeout, env)
    elapsed = time.time() - t0
    print("| verdict | programs |", file=log)
    print("|---|---|", file=log)
    for v in sorted(counts):
        print("| %s | %d |" % (v, counts[v]), file=log)
    print("%d programs in %.1f s (%.1f per second, %d jobs)" % (n, elapsed, n / elapsed, jobs),
          file=log)
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
            seed, steps, revision = read_entry(path)
        except (OSError, ValueError) as e:
            print("corpus %s: unreadable: %s" % (os.path.basename(path), e), file=log)
            failed += 1
            continue
        v, err = run_text(program_text(seed, steps, revision), timeout, env)
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
                    help="print the standalone program of a corpus entry (python3 -c or a file)")
    a = ap.parse_args(argv)
    FOCUS[:] = [f for f in a.focus.split(",") if f]
    unknown = [f for f in FOCUS if f not in STEPS]
    if unknown:
        ap.error("unknown step kind(s): %s (known: %s)" % (", ".join(unknown), ", ".join(STEPS)))
    if a.program:
        sys.stdout.write(program_text(*read_entry(a.program)))
        return 0
    env = dict(os.environ)
    if a.tether_py:
        env["PYTHONPATH"] = os.pathsep.join([a.tether_py, env.get("PYTHONPATH", "")])
    if a.replay:
        return 1 if replay(a.replay, a.timeout, env) else 0
    if a.test:
        # The corpus first: every finding of earlier campaigns, rebuilt from its entry.
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
            print("\n==== %s (%s): its program is `fuzz.py --program %s`\n%s"
                  % (path, v, path, open(path).read()))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
