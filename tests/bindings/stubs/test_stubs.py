"""Issue 24 item 5: the type stubs (tools/gen_stubs.py, bindings/python/stub_types.py).

Generates the stubs from the built package (the `tether` folder in $TETHER_PY_DIR, default: the
PYTHONPATH entry that has one), lays them over a copy of the package, and checks that:

- the generator succeeds (no table entry the package lacks) and writes valid, deterministic stub
  syntax for every module it should (tether.ir, .passmanager, .rewrite, .execution_engine, every
  tether.dialects module), with py.typed;
- every public class, function, constant and member of those modules is in its stub (so the
  stubs cannot drift from the package);
- mypy (Debian's /usr/bin/mypy) finds nothing in the stubs themselves, accepts typed_ok.py under
  --strict, and reports exactly the errors typed_bad.py marks (`# E: <code>`);
- typed_ok.py runs with the real package.

    PYTHONPATH=bazel-bin/bindings/python python3 -m pytest -q tests/bindings/stubs/test_stubs.py
"""

import ast
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
GENERATOR = os.path.join(ROOT, "tools", "gen_stubs.py")
TABLE = os.path.join(ROOT, "bindings", "python", "gen", "stub_types.py")
MYPY = os.environ.get("TETHER_MYPY", "/usr/bin/mypy")
# The modules with stubs besides tether.dialects' (those the build has).
CORE = ["tether.ir", "tether.passmanager", "tether.rewrite", "tether.execution_engine"]
# Protocol methods a class's stub must show when the class defines them.
DUNDERS = ("__getitem__", "__setitem__", "__delitem__", "__len__", "__iter__", "__next__",
           "__contains__", "__enter__", "__exit__", "__call__")


def package_dir():
    d = os.environ.get("TETHER_PY_DIR")
    if d:
        return os.path.abspath(d)
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and os.path.isfile(os.path.join(entry, "tether", "__init__.py")):
            return os.path.abspath(entry)
    pytest.fail("no built package: set TETHER_PY_DIR (or PYTHONPATH) to bindings/python of a "
                "build")


def env_with(pkg):
    env = dict(os.environ, PYTHONPATH=pkg, PYTHONDONTWRITEBYTECODE="1")
    env.pop("MYPYPATH", None)
    return env


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    """(package dir, stub dir, overlay dir): the generated stubs, and a copy of the package with
    the stubs laid over it."""
    pkg = package_dir()
    tmp = tmp_path_factory.mktemp("stubs")
    out = str(tmp / "out")
    r = subprocess.run([sys.executable, GENERATOR, out, "--types", TABLE],
                       env=env_with(pkg), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"gen_stubs.py failed:\n{r.stdout}\n{r.stderr}"
    overlay = str(tmp / "overlay")
    shutil.copytree(os.path.join(pkg, "tether"), os.path.join(overlay, "tether"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.runfiles",
                                                  "*.runfiles_manifest"))
    shutil.copytree(os.path.join(out, "tether"), os.path.join(overlay, "tether"),
                    dirs_exist_ok=True)
    return pkg, out, overlay


def stub_files(out):
    found = []
    for d, _, files in os.walk(out):
        found += [os.path.join(d, f) for f in files if f.endswith(".pyi")]
    return sorted(found)


def module_of(out, path):
    rel = os.path.relpath(path, out)[:-len(".pyi")].split(os.sep)
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join(rel)


def run_mypy(overlay, tmp_path, *args):
    if not os.access(MYPY, os.X_OK):
        pytest.fail(f"no mypy at {MYPY}: install Debian's (apt-get install mypy) or set "
                    "TETHER_MYPY")
    cmd = [MYPY, "--no-incremental", f"--cache-dir={tmp_path / 'mypy-cache'}",
           "--follow-imports=silent", "--show-error-codes", "--no-error-summary",
           "--no-color-output", *args]
    env = dict(os.environ, MYPYPATH=overlay)
    for var in ("PYTHONPATH", "LD_PRELOAD", "PYTHONMALLOC"):  # mypy needs none of the package's
        env.pop(var, None)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=overlay)
    errors = [line for line in r.stdout.splitlines() if ": error: " in line]
    return r, errors


def test_generator_output(stubs, tmp_path):
    pkg, out, _ = stubs
    assert os.path.isfile(os.path.join(out, "tether", "py.typed"))
    files = stub_files(out)
    modules = {module_of(out, f) for f in files}
    # The modules that should have a stub: the core ones and every dialect module this build has
    # (a module of a newer MLIR raises ImportError naming itself).
    r = subprocess.run([sys.executable, __file__, "--modules"], env=env_with(pkg),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    expected = set(r.stdout.split())
    assert "tether.ir" in expected and "tether.dialects.arith" in expected
    assert expected <= modules, f"no stub for {sorted(expected - modules)}"
    for f in files:
        with open(f) as fh:
            ast.parse(fh.read(), filename=f)
    # Deterministic: a second run writes the same files.
    again = str(tmp_path / "again")
    r = subprocess.run([sys.executable, GENERATOR, again, "--types", TABLE], env=env_with(pkg),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert [os.path.relpath(f, again) for f in stub_files(again)] == \
        [os.path.relpath(f, out) for f in files]
    for f in files:
        with open(f) as a, open(os.path.join(again, os.path.relpath(f, out))) as b:
            assert a.read() == b.read(), f"{f} differs between two runs"


def test_every_public_member_is_in_the_stubs(stubs):
    pkg, out, _ = stubs
    r = subprocess.run([sys.executable, __file__, "--coverage", out], env=env_with(pkg),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"missing from the stubs:\n{r.stdout}{r.stderr}"


def test_drift_is_an_error(stubs, tmp_path):
    """A table entry the package does not have (a member, a parameter) stops the generator."""
    pkg = stubs[0]
    with open(TABLE) as f:
        table = f.read()
    stale = table.replace('MEMBERS = {\n    "tether": {',
                          'MEMBERS = {\n    "tether": {\n        "no_such_function": "int",', 1)
    stale = stale.replace('PARAMS = {', 'PARAMS = {\n    "no_such_parameter": "int",', 1)
    assert stale != table
    path = tmp_path / "stale_types.py"
    path.write_text(stale)
    r = subprocess.run([sys.executable, GENERATOR, str(tmp_path / "o"), "--types", str(path)],
                       env=env_with(pkg), capture_output=True, text=True, timeout=600)
    assert r.returncode != 0
    assert "no_such_function" in r.stderr and "no_such_parameter" in r.stderr
    assert not os.path.exists(tmp_path / "o")


def test_mypy_accepts_the_stubs(stubs, tmp_path):
    _, out, overlay = stubs
    files = [os.path.relpath(f, out) for f in stub_files(out)]
    r, errors = run_mypy(overlay, tmp_path, "--strict", *files)
    assert not errors and r.returncode == 0, "\n".join(errors) or r.stderr


def test_typed_ok(stubs, tmp_path):
    _, _, overlay = stubs
    r, errors = run_mypy(overlay, tmp_path, "--strict", os.path.join(HERE, "typed_ok.py"))
    assert not errors and r.returncode == 0, "\n".join(errors) or r.stderr


def test_typed_bad(stubs, tmp_path):
    _, _, overlay = stubs
    bad = os.path.join(HERE, "typed_bad.py")
    expected = []
    with open(bad) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"# E: ([\w-]+(?:, *[\w-]+)*)\s*$", line)
            if m:
                expected += [(n, code.strip()) for code in m.group(1).split(",")]
    assert len(expected) >= 5
    r, errors = run_mypy(overlay, tmp_path, "--strict", bad)
    got = []
    for e in errors:
        m = re.match(r"(.*?):(\d+): error: .*\[([\w-]+)\]$", e)
        assert m and os.path.basename(m.group(1)) == "typed_bad.py", e
        got.append((int(m.group(2)), m.group(3)))
    assert sorted(got) == sorted(expected), "\n".join(errors)


def test_typed_ok_runs(stubs):
    pkg = stubs[0]
    r = subprocess.run([sys.executable, os.path.join(HERE, "typed_ok.py")], env=env_with(pkg),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "typed_ok: ok" in r.stdout


# ---- run with the package on PYTHONPATH (in a child process) ------------------------------------


def expected_modules():
    """The modules the stubs must cover: CORE (those this build has) and every dialect module."""
    out = []
    for name in CORE:
        try:
            importlib.import_module(name)
            out.append(name)
        except ImportError:
            pass

    def walk(pkgname):
        try:
            pkg = importlib.import_module(pkgname)
        except ImportError as e:
            if e.name == pkgname:  # tether.dialects._require_mlir
                return
            raise
        out.append(pkgname)
        for info in pkgutil.iter_modules(pkg.__path__):
            name = f"{pkgname}.{info.name}"
            if info.name.startswith("_") or name.startswith("tether.dialects.linalg.opdsl"):
                continue
            if info.ispkg:
                walk(name)
                continue
            try:
                importlib.import_module(name)
                out.append(name)
            except ImportError as e:
                if e.name != name:
                    raise

    walk("tether.dialects")
    return out


def stub_names(out, modname, cache={}):
    """The names a stub module binds (its definitions, imports and star imports) and its classes'
    bodies: ({name}, {class qualname: {member}})."""
    if modname in cache:
        return cache[modname]
    path = os.path.join(out, *modname.split("."))
    path = path + ".pyi" if os.path.isfile(path + ".pyi") else os.path.join(path, "__init__.pyi")
    with open(path) as f:
        tree = ast.parse(f.read())
    names, classes = set(), {}

    def body_names(body, prefix):
        found = set()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found.add(node.name)
                if isinstance(node, ast.ClassDef):
                    classes[prefix + node.name] = body_names(node.body, prefix + node.name + ".")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                found.add(node.target.id)
            elif isinstance(node, ast.Assign):
                found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name == "*":
                        found |= stub_names(out, node.module)[0] if node.module.startswith(
                            "tether") else set()
                    elif a.asname == a.name:  # what a stub re-exports (PEP 484)
                        found.add(a.asname)
        return found

    names = body_names(tree.body, "")
    all_ = next((n.value for n in tree.body if isinstance(n, ast.Assign) and
                 any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)), None)
    if all_ is not None:
        names &= {ast.literal_eval(e) for e in all_.elts}
    cache[modname] = (names, classes)
    return cache[modname]


def is_public_api(mod, name, obj):
    if isinstance(obj, types.ModuleType):
        return False
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__module__"):
        m = getattr(obj, "__module__", None)
        if m is None and isinstance(obj, types.BuiltinFunctionType):
            return True  # a C static method of tether's taken out of its class
        if not (m == "tether" or m.startswith("tether.")):
            return name in (getattr(mod, "__all__", None) or ())
    return getattr(type(obj), "__module__", "") != "typing"


def coverage(out):
    missing = []
    for modname in sorted(set(expected_modules())):
        mod = importlib.import_module(modname)
        names, classes = stub_names(out, modname)
        public = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        for n in sorted(set(public)):
            obj = getattr(mod, n)
            if not is_public_api(mod, n, obj):
                continue
            if n not in names:
                missing.append(f"{modname}.{n}")
                continue
            if isinstance(obj, type) and n in classes:
                check_class(modname, n, obj, classes, missing)
    print("\n".join(missing))
    return 1 if missing else 0


def check_class(modname, qual, cls, classes, missing):
    body = classes[qual]
    for m, o in vars(cls).items():
        if m.startswith("_") and m not in DUNDERS:
            continue
        if isinstance(o, type) and getattr(o, "__qualname__", "") == f"{cls.__qualname__}.{m}" \
                and f"{qual}.{m}" in classes:
            check_class(modname, f"{qual}.{m}", o, classes, missing)
        if m not in body:
            missing.append(f"{modname}.{qual}.{m}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--modules"]:
        print("\n".join(expected_modules()))
        sys.exit(0)
    if sys.argv[1:2] == ["--coverage"]:
        sys.exit(coverage(sys.argv[2]))
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
