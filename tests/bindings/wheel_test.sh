#!/usr/bin/env bash
# The wheel installs with pip into a fresh venv, offline, and the installed package works without
# PYTHONPATH: tether.ir, a generated dialect, the `mlir` alias through the tether-run script, the
# shared library found through the extension's rpath, the type stubs (mypy); pip uninstall removes
# every file it put there.
set -euo pipefail
python=$1
wheel=$2
mlir_version=$3
tmp=${TEST_TMPDIR:-$(mktemp -d)}
export HOME=$tmp PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1
unset PYTHONPATH
passed=0
fail() { echo "wheel_test: FAILED: $*"; exit 1; }

name=$(basename "$wheel")
case "$name" in
tether-*+mlir"$mlir_version"-cp3*-cp3*-linux_x86_64.whl) ;;
*) fail "the wheel's name $name does not say MLIR $mlir_version and the platform" ;;
esac
passed=$((passed + 1))

"$python" -m venv "$tmp/venv"
venv=$tmp/venv/bin
"$venv/pip" install -q "$wheel" || fail "pip install"
passed=$((passed + 1))

# Outside the source tree and the build folders, with nothing on PYTHONPATH.
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere"
out=$("$venv/python" - "$name" <<'PY'
import os, sys
import tether
from tether import ir
from tether.dialects import arith, func
where = os.path.dirname(tether.__file__)
assert where.startswith(sys.prefix), (where, sys.prefix)
assert sys.argv[1].startswith("tether-%s-" % tether.__version__), (sys.argv[1], tether.__version__)
with ir.Context(), ir.Location.unknown():
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        i32 = ir.IntegerType.get_signless(32)
        f = func.FuncOp("f", ir.FunctionType.get([i32], [i32]))
        with ir.InsertionPoint(f.add_entry_block()):
            func.ReturnOp([arith.addi(f.arguments[0], f.arguments[0])])
    assert m.operation.verify()
    print(m)
# The hand-built module was verified in the trial helper installed beside the library.
from tether import _tether
assert os.access(os.path.join(where, "tether-trial"), os.X_OK)
stats = _tether._global_stats()
assert stats["trial_requests"] >= 1 and stats["trial_starts"] == 1, stats
PY
) || fail "the installed package does not run"
case "$out" in
*"arith.addi %arg0, %arg0 : i32"*) passed=$((passed + 1)) ;;
*) fail "unexpected output: $out" ;;
esac

# The console script runs a program written for upstream mlir.
cat > "$tmp/upstream.py" <<'PY'
from mlir import ir
from mlir.dialects import arith, func
with ir.Context(), ir.Location.unknown():
    m = ir.Module.create()
    with ir.InsertionPoint(m.body):
        @func.FuncOp.from_py_func(ir.F32Type.get())
        def twice(x):
            return arith.addf(x, x)
    print(m)
PY
out=$("$venv/tether-run" "$tmp/upstream.py") || fail "tether-run"
case "$out" in
*"func.func @twice(%arg0: f32) -> f32"*) passed=$((passed + 1)) ;;
*) fail "tether-run printed: $out" ;;
esac

# pip compiled the modules at install (the wheel carries no byte code).
[ -n "$(find "$tmp/venv/lib" -path '*tether/dialects/__pycache__/_arith_ops_gen.*.pyc' -print -quit)" ] \
  || fail "no byte code for the generated dialect modules after install"
passed=$((passed + 1))

# The installed package is typed (PEP 561: py.typed and the .pyi files): mypy, pointed at the venv,
# accepts a typed program and reports its one wrong call.
if [ -x /usr/bin/mypy ]; then
  cat > "$tmp/typed.py" <<'PY'
from tether import ir

def width(ctx: ir.Context) -> int:
    t: ir.IntegerType = ir.IntegerType.get_signless(32, context=ctx)
    return t.width

def wrong(ctx: ir.Context) -> None:
    ir.IntegerType.get_signless("32", context=ctx)
PY
  out=$(/usr/bin/mypy --no-incremental --cache-dir=/dev/null --python-executable "$venv/python" \
    "$tmp/typed.py" 2>&1) && fail "mypy accepted a wrong call: $out"
  case "$out" in
  *"typed.py:8: error:"*"[arg-type]"*"Found 1 error"*) passed=$((passed + 1)) ;;
  *) fail "mypy on the installed package: $out" ;;
  esac
fi

"$venv/pip" uninstall -q -y tether || fail "pip uninstall"
left=$(find "$tmp/venv/lib" -path '*site-packages/tether*' -not -path '*__pycache__*' | head -5)
[ -z "$left" ] || fail "pip uninstall left: $left"
"$venv/python" -c "import tether" 2>/dev/null && fail "tether still imports after uninstall"
passed=$((passed + 1))

echo "wheel_test: $passed passed, 0 failed"
