#!/usr/bin/env bash
# @tether//arena:tether from another Bazel workspace: a scratch workspace declares tether with
# local_repository, calls tether_dependencies(), and runs a cc_test against the arena with a
# nested Bazel (its own output root).
set -euo pipefail
src_root=$(dirname "$(readlink -f "$TEST_SRCDIR/tether/WORKSPACE")")
ws="$TEST_TMPDIR/consumer"
mkdir -p "$ws"
cp "$TEST_SRCDIR/tether/tests/e2e/external_ws/use_arena.c" "$ws/"
cat > "$ws/WORKSPACE" <<WS
workspace(name = "consumer")

local_repository(name = "tether", path = "$src_root")

# Offline Bazel 4 needs these three (docs/linking.md); tether ships small stand-ins.
local_repository(name = "rules_cc", path = "$src_root/tools/bazel/rules_cc")
local_repository(name = "rules_java", path = "$src_root/tools/bazel/rules_java")
local_repository(name = "remote_coverage_tools", path = "$src_root/tools/bazel/remote_coverage_tools")

load("@tether//tools/bazel:deps.bzl", "tether_dependencies")

tether_dependencies()
WS
cat > "$ws/BUILD" <<'B'
cc_test(
    name = "use_arena",
    srcs = ["use_arena.c"],
    deps = ["@tether//arena:tether"],
)
B
cd "$ws"
bazel_args=(--output_user_root="$TEST_TMPDIR/out" --nohome_rc)
set +e
bazel "${bazel_args[@]}" test --nosandbox_debug --color=no --curses=no --test_output=all //:use_arena >"$TEST_TMPDIR/log" 2>&1
rc=$?
bazel "${bazel_args[@]}" shutdown >/dev/null 2>&1
set -e
tail -25 "$TEST_TMPDIR/log"
[ $rc -eq 0 ] || { echo "external_ws_test: FAILED (nested bazel exit $rc)"; exit 1; }
grep -q "//:use_arena .*PASSED" "$TEST_TMPDIR/log" || { echo "external_ws_test: FAILED (no PASSED line)"; exit 1; }
echo "external_ws_test: 1 passed, 0 failed"
