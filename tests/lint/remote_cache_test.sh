#!/usr/bin/env bash
# tether_lint_aspect's results shared through Bazel's remote cache (docs/lint.md, "A team's
# results"): Debian's nginx serves a WebDAV folder on 127.0.0.1 as a standard HTTP cache; a
# workspace that uses @tether lints its targets with --remote_cache (every lint action runs and is
# uploaded); a second clone of that workspace, at another path with another output root (another
# machine, as far as Bazel can tell), gets every lint result from the remote cache and runs none,
# and its reports are the same.
set -euo pipefail
src_root=$(dirname "$(readlink -f "$TEST_SRCDIR/tether/WORKSPACE")")
fixtures="$TEST_SRCDIR/tether/tests/lint/bazel"
tmp=$TEST_TMPDIR
fail() {
  echo "remote_cache_test: FAILED: $*"
  exit 1
}

# ---- the cache server -----------------------------------------------------------------------
. "$TEST_SRCDIR/tether/tests/lint/webdav_cache.bash"
bazel_roots=()
cleanup() {
  for root in "${bazel_roots[@]}"; do
    (cd "$root/ws" && bazel --output_user_root="$root/out" --nohome_rc shutdown >/dev/null 2>&1) || true
  done
  webdav_cache_stop
}
trap cleanup EXIT
webdav_cache_start "$tmp/nginx" || fail "no cache server"
port=$WEBDAV_PORT

# ---- a workspace that uses @tether, in two clones -----------------------------------------------
make_clone() {
  local root=$1
  mkdir -p "$root/ws"
  cp -r "$fixtures/bad_binding.c" "$fixtures/good_binding.c" "$fixtures/include" "$root/ws/"
  cat > "$root/ws/WORKSPACE" <<WS
workspace(name = "consumer")

local_repository(name = "tether", path = "$src_root")

local_repository(name = "rules_cc", path = "$src_root/tools/bazel/rules_cc")
local_repository(name = "rules_java", path = "$src_root/tools/bazel/rules_java")
local_repository(name = "remote_coverage_tools", path = "$src_root/tools/bazel/remote_coverage_tools")

load("@tether//tools/bazel:deps.bzl", "tether_dependencies")

tether_dependencies()
WS
  cat > "$root/ws/BUILD" <<'B'
cc_library(
    name = "binding_headers",
    hdrs = ["include/binding/binding.h"],
    includes = ["include"],
    deps = ["@tether//arena:tether"],
)

cc_library(
    name = "bad_binding",
    srcs = ["bad_binding.c"],
    local_defines = ["BINDING_API_LEVEL=2"],
    deps = [":binding_headers"],
)

cc_library(
    name = "good_binding",
    srcs = ["good_binding.c"],
    local_defines = ["BINDING_API_LEVEL=2"],
    deps = [":binding_headers"],
)
B
}

# Lints the clone at $1 through the aspect with the remote cache; the execution log in $1/exec.json.
lint_clone() {
  local root=$1
  bazel_roots+=("$root")
  (cd "$root/ws" && bazel --output_user_root="$root/out" --nohome_rc build --color=no --curses=no \
    --remote_cache="http://127.0.0.1:$port" --execution_log_json_file="$root/exec.json" \
    --aspects=@tether//lint:defs.bzl%tether_lint_aspect --output_groups=tether_lint \
    //:bad_binding //:good_binding) >"$root/log" 2>&1 || {
    tail -30 "$root/log"
    fail "the nested bazel build in $root failed"
  }
}

# "executed remotely-cached" counts of the TetherLint spawns in an execution log.
lint_spawns() {
  python3 - "$1" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, i, hits, runs = json.JSONDecoder(), 0, 0, 0
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
print(runs, hits)
PY
}

make_clone "$tmp/first"
lint_clone "$tmp/first"
read -r runs hits < <(lint_spawns "$tmp/first/exec.json")
echo "first clone: $runs lint action(s) run, $hits from the remote cache"
[ "$runs" -eq 2 ] && [ "$hits" -eq 0 ] || fail "the first clone should run both lint actions (ran $runs, cached $hits)"
[ -n "$(ls "$tmp/nginx/cache/ac" 2>/dev/null)" ] || fail "nothing was uploaded to the cache"

make_clone "$tmp/second"
lint_clone "$tmp/second"
read -r runs hits < <(lint_spawns "$tmp/second/exec.json")
echo "second clone: $runs lint action(s) run, $hits from the remote cache"
[ "$runs" -eq 0 ] && [ "$hits" -eq 2 ] || fail "the second clone should get both lint results from the remote cache (ran $runs, cached $hits)"

for r in bad_binding good_binding; do
  a="$tmp/first/ws/bazel-bin/$r.tether_lint.txt"
  b="$tmp/second/ws/bazel-bin/$r.tether_lint.txt"
  cmp -s "$a" "$b" || fail "the reports of $r differ between the clones"
done
grep -q "bad_binding.c:6:.*\[raw-op-unguarded\]" "$tmp/second/ws/bazel-bin/bad_binding.tether_lint.txt" \
  || fail "the cached report lost the finding"
echo "remote_cache_test: 3 passed, 0 failed"
