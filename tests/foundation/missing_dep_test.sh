#!/usr/bin/env bash
# A system dependency whose files are missing must fail the build with one line that names the
# Debian package, not a Starlark stack trace. Runs a nested Bazel on a scratch workspace that uses
# tools/bazel/system_repos.bzl with a library pointed at a path that does not exist.
set -euo pipefail
src="${TEST_SRCDIR}/tether"
ws="$TEST_TMPDIR/ws"
mkdir -p "$ws/tools/bazel"
cp -L "$src/tools/bazel/"*.bzl "$ws/tools/bazel/"
touch "$ws/tools/bazel/BUILD"
for r in rules_cc rules_java remote_coverage_tools; do
  cp -RL "$TEST_SRCDIR/$r" "$ws/tools/bazel/$r"
done
cat > "$ws/WORKSPACE" <<'WS'
workspace(name = "scratch")
local_repository(name = "rules_cc", path = "tools/bazel/rules_cc")
local_repository(name = "rules_java", path = "tools/bazel/rules_java")
local_repository(name = "remote_coverage_tools", path = "tools/bazel/remote_coverage_tools")
load("//tools/bazel:system_repos.bzl", "system_library")
system_library(
    name = "fakelib",
    debian_package = "libfake-dev",
    required = ["/nonexistent/tether-test/fake.h"],
    build_file_content = "cc_library(name = 'fakelib')",
)
WS
cat > "$ws/BUILD" <<'B'
cc_library(name = "user", srcs = ["user.c"], deps = ["@fakelib"])
B
echo 'int user(void) { return 0; }' > "$ws/user.c"
cd "$ws"
set +e
bazel --output_user_root="$TEST_TMPDIR/out" --nohome_rc build --nosandbox_debug --color=no --curses=no \
  --spawn_strategy=local //:user >"$TEST_TMPDIR/log" 2>&1
rc=$?
bazel --output_user_root="$TEST_TMPDIR/out" --nohome_rc shutdown >/dev/null 2>&1
set -e
cat "$TEST_TMPDIR/log"
echo "---- exit code $rc"
fail=0
[ $rc -ne 0 ] || { echo "FAIL: the build succeeded"; fail=1; }
grep -q "tether: missing system dependency @fakelib: /nonexistent/tether-test/fake.h not found; install the Debian package libfake-dev" "$TEST_TMPDIR/log" \
  || { echo "FAIL: no one-line message naming the package"; fail=1; }
if grep -q "Traceback" "$TEST_TMPDIR/log"; then echo "FAIL: a Starlark stack trace was printed"; fail=1; fi
[ $fail -eq 0 ] && echo "missing_dep_test: passed"
exit $fail
