#!/usr/bin/env bash
# Benchmark of tether-lint's input layer and result cache (docs/benchmarks.md). A program that
# prints tables, never a timed test.
#
#   bazel run -c opt //tests/bench:lint_cache                      # the repository's own fixtures
#   bazel run -c opt //tests/bench:lint_cache -- --mlir-bindings DIR
#       DIR: mlir/lib/Bindings/Python of an LLVM 19 checkout (llvm-project, fetched, or the
#       Debian source package); it is copied and given a compilation database (the installed
#       LLVM 19 headers, pybind11, Python), then linted the same way.
#   bazel run -c opt //tests/bench:lint_cache -- --tree DIR --header REL [-p]
#       any tree (-p: DIR has a compile_commands.json); REL is the header touched in the third run.
#
# For each tree, wall times of: -j 1 and -j 2 without the cache, -j 1 --in-process (what a worker
# process per translation unit costs), the first run with an empty cache, the second run on the
# unchanged tree, a run after appending a comment to one header, a pre-commit run (only that header
# named), and the number of translation units parsed in each.
set -u
lint=$1
shift
repo=${BUILD_WORKSPACE_DIRECTORY:-$PWD}
[ -d "$repo/tests/lint/fixtures" ] || repo=$PWD
lint=$(cd "$(dirname "$lint")" && pwd)/$(basename "$lint")
work=$(mktemp -d "${TMPDIR:-/tmp}/tether-lint-cache-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
secs() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }

# bench NAME DIR HEADER USE_DB
bench() {
  local name=$1 dir=$2 header=$3 db=$4
  local p=() t0 t1 cache=$work/cache-$RANDOM
  [ "$db" = 1 ] && p=(-p .)
  local n
  n=$(cd "$dir" && "$lint" --config /dev/null --no-cache --cache-stats "${p[@]}" . 2>&1 >/dev/null |
    sed -n 's/.*cache: [0-9]* of \([0-9]*\) translation.*/\1/p')
  echo
  echo "### $name: $n translation units, $(nproc) CPU(s)"
  echo
  echo "| run | wall time | translation units parsed | vs. first run |"
  echo "|---|---|---|---|"
  row() { # LABEL ARGS...
    local label=$1
    shift
    t0=$(now)
    local st
    st=$(cd "$dir" && "$lint" --config /dev/null --cache-stats "$@" 2>&1 >/dev/null |
      sed -n 's/.*from the cache, \([0-9]*\) parsed.*/\1/p')
    t1=$(now)
    local s
    s=$(secs "$t0" "$t1")
    [ "$label" = "first run (empty cache), -j 2" ] && first=$s
    local pct=""
    [ -n "${first:-}" ] && pct=$(python3 -c "import sys; print('%.1f%%' % (100 * float(sys.argv[1]) / float(sys.argv[2])))" "$s" "$first")
    echo "| $label | $s s | $st | $pct |"
  }
  first=
  row "no cache, -j 1" --no-cache -j 1 "${p[@]}" .
  row "no cache, -j 1, --in-process" --no-cache --in-process -j 1 "${p[@]}" .
  row "no cache, -j 2" --no-cache -j 2 "${p[@]}" .
  row "first run (empty cache), -j 2" --cache-dir "$cache" -j 2 "${p[@]}" .
  row "second run, unchanged tree, -j 2" --cache-dir "$cache" -j 2 "${p[@]}" .
  cp "$dir/$header" "$work/header.keep"
  echo "// touched by the benchmark" >>"$dir/$header"
  row "after changing $header, -j 2" --cache-dir "$cache" -j 2 "${p[@]}" .
  echo "// touched again" >>"$dir/$header"
  row "pre-commit: only $header named, -j 2" --cache-dir "$cache" -j 2 "${p[@]}" "$header"
  cp "$work/header.keep" "$dir/$header"
}

mlir_tree() { # SRC DEST
  mkdir -p "$2"
  cp -r "$1"/. "$2"/
  local py
  py=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  (cd "$2" && python3 - "$py" <<'PY'
import glob, json, os, sys
d = os.getcwd()
entries = [{"directory": d, "file": f,
            "arguments": ["/usr/bin/c++", "-std=c++17", "-I/usr/lib/llvm-19/include", "-I" + sys.argv[1],
                          "-DMLIR_PYTHON_PACKAGE_PREFIX=mlir.", "-fPIC", "-O2", "-g", "-c", f,
                          "-o", "build/" + f + ".o", "-MD", "-MF", "build/" + f + ".d"]}
           for f in sorted(glob.glob("*.cpp"))]
json.dump(entries, open("compile_commands.json", "w"), indent=1)
PY
  )
}

echo "tether-lint cache benchmark ($("$lint" --version))"
if [ $# -eq 0 ]; then
  cp -r "$repo/tests/lint/fixtures" "$work/fixtures"
  rm -rf "$work/fixtures/exclude_libs"
  bench "the repository's own fixtures (tests/lint/fixtures, default flags)" "$work/fixtures" rawop/py_bindings.h 0
fi
while [ $# -gt 0 ]; do
  case $1 in
  --mlir-bindings)
    mlir_tree "$2" "$work/mlir-bindings"
    bench "upstream MLIR Python bindings (mlir/lib/Bindings/Python, LLVM 19, compile_commands.json)" "$work/mlir-bindings" PybindUtils.h 1
    shift 2
    ;;
  --tree)
    dir=$2 header=$4 db=0
    [ "${5:-}" = -p ] && db=1
    cp -r "$dir" "$work/tree"
    bench "$dir" "$work/tree" "$header" $db
    shift 4
    [ $db = 1 ] && shift
    ;;
  *)
    echo "unknown argument $1" >&2
    exit 2
    ;;
  esac
done
