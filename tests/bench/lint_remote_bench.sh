#!/usr/bin/env bash
# tether_lint_aspect on this repository's own targets, three ways, each from a fresh output root
# (a new clone, as far as Bazel can tell) at --jobs 2; prints a table (docs/benchmarks.md).
#
#   tests/bench/lint_remote_bench.sh [TARGET...]     (from the repository root; default: the
#                                                      arena and the Python extension)
#   tests/bench/lint_remote_bench.sh --workspace DIR TARGET...
#                                                    (another workspace that loads this one as
#                                                      @tether: a project's own tree)
#
#   cold         nothing cached: builds tether-lint and runs every lint action (uploading to a
#                local disk cache and to a remote HTTP cache: Debian's nginx on 127.0.0.1)
#   warm-local   another output root with the disk cache only
#   warm-remote  another output root with the remote cache only
# For each: wall time, lint actions run, lint results taken from a cache. A program that prints a
# table, never a timed test.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
ws=$repo
aspect=//lint:defs.bzl%tether_lint_aspect
if [ "${1:-}" = --workspace ]; then
  [ $# -ge 3 ] || { echo "usage: $0 --workspace DIR TARGET..." >&2; exit 2; }
  ws=$(cd "$2" && pwd)
  aspect=@tether//lint:defs.bzl%tether_lint_aspect
  shift 2
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(//arena:tether_objs //bindings/python:tether/_tether.so)
work=$(mktemp -d "${TMPDIR:-/tmp}/tether-lint-remote-bench.XXXXXX")
. "$repo/tests/lint/webdav_cache.bash"
roots=()
cleanup() {
  for r in "${roots[@]}"; do (cd "$ws" && bazel --output_user_root="$r" shutdown >/dev/null 2>&1) || true; done
  webdav_cache_stop
  rm -rf "$work"
}
trap cleanup EXIT
webdav_cache_start "$work/nginx"

# run NAME CACHE_FLAGS...: one build from a fresh output root; prints a table row.
run() {
  local name=$1
  shift
  local root="$work/out-$name"
  roots+=("$root")
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$ws" && bazel --output_user_root="$root" build --symlink_prefix=/ --jobs=2 --disk_cache= "$@" \
    --execution_log_json_file="$work/$name.json" \
    --aspects="$aspect" --output_groups=tether_lint "${targets[@]}") \
    >"$work/$name.log" 2>&1 || { tail -20 "$work/$name.log"; exit 1; }
  t1=$(date +%s.%N)
  python3 - "$work/$name.json" "$name" "$t0" "$t1" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, i, runs, hits, other = json.JSONDecoder(), 0, 0, 0, 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    spawn, i = dec.raw_decode(text, i)
    if spawn.get("mnemonic") == "TetherLint":
        if spawn.get("remoteCacheHit"):
            hits += 1
        else:
            runs += 1
    elif not spawn.get("remoteCacheHit"):
        other += 1
print("| %s | %.1f | %d | %d | %d |" % (sys.argv[2], float(sys.argv[4]) - float(sys.argv[3]), runs,
                                        hits, other))
PY
}

echo "workspace: $ws; targets: ${targets[*]}"
echo
echo "| run | wall s (server start, analysis, build) | lint actions run | lint results from a cache | other actions run |"
echo "|---|---|---|---|---|"
run cold --disk_cache="$work/disk" --remote_cache="http://127.0.0.1:$WEBDAV_PORT"
run warm-local --disk_cache="$work/disk"
run warm-remote --remote_cache="http://127.0.0.1:$WEBDAV_PORT"
