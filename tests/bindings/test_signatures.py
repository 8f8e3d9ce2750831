"""Issue 36: one source for every Python signature. Each callable and getter of the extension has a
signature spec (bindings/python/core/sig.c): one typed text from which the argument parser reads
its parameters, the member's docstring and __text_signature__ are made, and _tether._signatures
(what tools/gen_stubs.py types the stubs from) is published.

These check what a user observes of that: every member of the extension has a signature,
inspect.signature reads every callable with one form and agrees with the typed text, calls are
parsed as the text says (with CPython's messages), and the text parser (a parser the project
writes) refuses bad texts by name and agrees with Python's own parser on every text it accepts,
including random mutations of the real ones.
"""

import ast
import enum
import inspect
import random
import types
import warnings

import pytest

from tether import _tether, ir

P = inspect.Parameter


def c_members():
    """(key, object) of every callable and getter of the extension, keyed as core/sig.c keys
    _signatures: the module holding the class or function, then the names."""
    seen = set()

    def visit_class(prefix, c):
        if id(c) in seen:
            return
        seen.add(id(c))
        for n, o in vars(c).items():
            if isinstance(o, type):
                # A class defined in this one (not an enum tether/ir.py adds to it).
                if o.__qualname__ == f"{c.__qualname__}.{n}" and not issubclass(o, enum.Enum):
                    yield from visit_class(f"{prefix}.{n}", o)
                continue
            f = o.__func__ if isinstance(o, (staticmethod, classmethod)) else o
            if type(f).__name__ in ("method_descriptor", "classmethod_descriptor",
                                    "builtin_function_or_method", "getset_descriptor"):
                if n in ("__dict__", "__weakref__", "__new__") or \
                        (getattr(f, "__objclass__", c) is not c and n.startswith("__")):
                    continue
                yield f"{prefix}.{n}", f

    mods = [_tether] + [v for v in vars(_tether).values() if isinstance(v, types.ModuleType)]
    for m in mods:
        for n, o in list(vars(m).items()):
            if isinstance(o, type) and (o.__module__ or "").startswith(("tether", "_")) and \
                    not issubclass(o, BaseException) and type(o) is type:
                yield from visit_class(f"{m.__name__}.{n}", o)
            elif type(o).__name__ == "builtin_function_or_method":
                yield f"{m.__name__}.{n}", o


def parse_text(text):
    """A typed text as Python parses it: (name, [(name, kind, default source or None)])."""
    name, rest = text.split("(", 1)
    with warnings.catch_warnings():  # "invalid decimal literal" of a mutated text
        warnings.simplefilter("ignore", SyntaxWarning)
        fn = ast.parse(f"def {name}({rest}: pass").body[0]
    a = fn.args
    pos = a.posonlyargs + a.args
    dflt = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    out = [(x.arg, P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
            ast.unparse(d) if d is not None else None) for i, (x, d) in enumerate(zip(pos, dflt))]
    if a.vararg:
        out.append((a.vararg.arg, P.VAR_POSITIONAL, None))
    out += [(x.arg, P.KEYWORD_ONLY, ast.unparse(d) if d is not None else None)
            for x, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append((a.kwarg.arg, P.VAR_KEYWORD, None))
    return name, out


def test_every_member_of_the_extension_has_a_signature():
    missing = [k for k, _ in c_members() if k not in _tether._signatures]
    assert not missing, missing
    assert len(_tether._signatures) > 500


def test_inspect_reads_every_callable_as_its_typed_text():
    checked = 0
    for key, f in c_members():
        text = _tether._signatures[key]
        if type(f).__name__ == "getset_descriptor":
            assert text.startswith(key.rsplit(".", 1)[1]) and (": " in text or " -> " in text)
            continue
        forms = text.split("\n")
        if len(forms) > 1 and f.__text_signature__ is None:
            # Overloads: the docstring lists each form (inspect has none to give).
            assert f.__doc__.startswith(f"{f.__name__}("), key
            continue
        sig = inspect.signature(f)
        params = [p for p in sig.parameters.values()]
        if type(f).__name__ in ("method_descriptor", "classmethod_descriptor"):
            params = params[1:]  # $self, $type
        _, want = parse_text(forms[0])
        got = [(p.name, p.kind, None if p.default is P.empty else p.default) for p in params]
        assert [(n, k) for n, k, _ in got] == [(n, k) for n, k, _ in want], (key, sig, text)
        for (n, _, d), (_, _, wd) in zip(got, want):
            if wd is not None and d is not ...:  # a default that is not a literal is `...`
                assert d == ast.literal_eval(wd), (key, n, d, wd)
        checked += 1
    assert checked > 300


def test_calls_are_parsed_as_the_text_says():
    f = ir.IntegerType.get_signless
    assert "get_signless(width: int, context: Context | None = None)" in \
        _tether._signatures["tether._tether.IntegerType.get_signless"]
    with ir.Context():
        for _ in range(3):  # the same keyword-name tuple each time: mapped from the spec's cache
            assert str(f(width=8)) == "i8"
            assert str(f(16, context=None)) == "i16"
        with pytest.raises(TypeError, match=r"^get_signless\(\) missing required argument 'width'$"):
            f()
        with pytest.raises(TypeError, match=r"^get_signless\(\) takes at most 2 positional "
                                            r"arguments \(3 given\)$"):
            f(8, None, 3)
        with pytest.raises(TypeError, match=r"^get_signless\(\) got an unexpected keyword "
                                            r"argument 'bits'$"):
            f(bits=8)
        with pytest.raises(TypeError, match=r"^get_signless\(\) got multiple values for "
                                            r"argument 'width'$"):
            f(8, width=8)
        # Keyword-only: MemRefType.get's loc.
        i32 = ir.IntegerType.get_signless(32)
        assert "*, loc: Location | None = None" in \
            _tether._signatures["tether._tether.MemRefType.get"]
        with pytest.raises(TypeError, match=r"takes at most 4 positional arguments \(5 given\)"):
            ir.MemRefType.get([2], i32, None, None, ir.Location.unknown())
        # Positional only (METH_O): by keyword, CPython's own message.
        with pytest.raises(TypeError):
            ir.ComplexType.get(element_type=ir.F32Type.get())


def test_call_sites_that_alternate_keyword_orders_each_parse_right():
    # The parser remembers the last few keyword-name tuples of a callable (each maps its names to
    # parameters): call sites that alternate, and more orders than it remembers, must each get
    # their own arguments, and a cached tuple met with a positional duplicate must still raise.
    import itertools
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        i32 = ir.IntegerType.get_signless(32)
        m = ir.Module.create()
        ip = ir.InsertionPoint(m.body)
        create = ir.Operation.create
        kws = {"results": [i32], "attributes": {"n": ir.IntegerAttr.get(i32, 0)}, "ip": ip}
        orders = list(itertools.permutations(kws))  # 6 orders: more than the cache holds
        built = []
        for round_ in range(3):
            for k, order in enumerate(orders):
                v = ir.IntegerAttr.get(i32, 10 * round_ + k)
                args = {name: kws[name] for name in order}
                args["attributes"] = {"n": v}
                op = create("t.op", **args)
                built.append((op, 10 * round_ + k))
                # Two call sites alternating on one callable (a build loop's two kinds of op).
                w = create("t.other", results=[i32, i32], ip=ip)
                assert len(w.results) == 2
        for op, n in built:
            assert op.results[0].type == i32
            assert ir.IntegerAttr(op.attributes["n"]).value == n
        assert len(m.body.operations) == 2 * len(built)
        f = ir.IntegerType.get_signless
        for _ in range(2):
            assert str(f(context=ctx, width=4)) == "i4"
            with pytest.raises(TypeError, match=r"got multiple values for argument 'width'"):
                f(8, context=ctx, width=4)


@pytest.mark.parametrize("text, why", [
    ("get(", "unbalanced"),
    ("get(a=1, b)", "a required parameter after one with a default"),
    ("get(a, a)", "a parameter named twice"),
    ("(a)", "expected name(parameters)"),
    ("get(a, /, /)", "a misplaced /"),
    ("get(/, a)", "a misplaced /"),
    ("get(*, )", "an empty parameter"),
    ("get(*)", "a * without parameters after it"),
    ("get(*, a, *, b)", "a second *"),
    ("get(**k, a)", "a parameter after **kwargs"),
    ("get(a: )", "an empty annotation"),
    ("get(a=)", "an empty default"),
    ("get(a) junk", "expected `-> type` or nothing"),
    ("get(a) ->", "expected `-> type` or nothing"),
    ('get("a)', "unbalanced"),
    ("get(a, *b)", "parameters before *args"),
    ("get(1a)", "a parameter without a name"),
    ("get(" + ", ".join(f"a{i}" for i in range(17)) + ")", "more than 16 parameters"),
])
def test_a_bad_spec_is_refused_naming_it(text, why):
    with pytest.raises(SystemError) as e:
        _tether._parse_signature(text)
    assert f'"{text}"' in str(e.value) and why in str(e.value), e.value


def test_a_getter_spec_is_its_type():
    assert _tether._parse_signature("list[int] | None", True)["names"] == []
    with pytest.raises(SystemError, match="a getter's spec is its type"):
        _tether._parse_signature("list[int", True)


def agrees_with_python(text):
    """Parses text with the extension's spec parser; when it accepts, the text signature it makes
    of it is Python and reads as the parser does (annotations are the stubs' to check)."""
    try:
        got = _tether._parse_signature(text)
    except SystemError:
        return False
    plain = got["doc"].split("\n--\n")[0]
    name, want = parse_text(plain)
    named = [w for w in want if w[1] not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)]
    assert got["name"] == name, text
    assert got["names"] == [w[0] for w in named], text
    assert got["required"] == sum(1 for w in named if w[2] is None), text
    assert got["positional"] == sum(1 for w in named if w[1] != P.KEYWORD_ONLY), text
    assert got["positional_only"] == sum(1 for w in named if w[1] == P.POSITIONAL_ONLY), text
    assert got["star"] == (1 if any(w[1] == P.VAR_POSITIONAL for w in want) else 0) + \
        (2 if any(w[1] == P.VAR_KEYWORD for w in want) else 0), text
    try:  # and where Python reads the typed text, it reads the same parameters
        typed = parse_text(text)[1]
    except SyntaxError:
        return True
    assert [(n, k) for n, k, _ in typed] == [(n, k) for n, k, _ in want], text
    return True


def test_the_spec_parser_agrees_with_python():
    texts = [line for t in _tether._signatures.values() for line in t.split("\n") if "(" in line]
    assert all(agrees_with_python(t) for t in texts)
    # Random mutations of the real texts: refused, or read as Python reads them; never a crash.
    rng = random.Random(36)
    pieces = list("(),:=/*[]|'\" \\-.0e\t") + ["->", "None", "a", "b: int", "*, c", "= 1", "**kw",
                                                "*a", "'x'", "1.5e3", "lambda", "0x"]
    accepted = 0
    for _ in range(3000):
        t = list(rng.choice(texts))
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(t) + 1)
            if rng.random() < 0.5 and t:
                del t[min(i, len(t) - 1)]
            else:
                t.insert(i, rng.choice(pieces))
        accepted += agrees_with_python("".join(t))
    assert accepted > 100
