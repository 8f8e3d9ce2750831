#!/usr/bin/env bash
# pre-commit with this repository's .pre-commit-hooks.yaml, in a temporary git repository:
# committing a file with an unguarded raw handle fails and shows the finding; a fixed file commits.
set -u
lint=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
hooks=$PWD/.pre-commit-hooks.yaml
header=$PWD/tests/lint/fixtures/rawop/py_bindings.h
t=$TEST_TMPDIR
export HOME=$t/home PRE_COMMIT_HOME=$t/pre-commit-cache
export GIT_AUTHOR_NAME=test GIT_AUTHOR_EMAIL=test@example.com
export GIT_COMMITTER_NAME=test GIT_COMMITTER_EMAIL=test@example.com
export GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME" "$t/bin"
fail=0
check() { if eval "$2"; then echo "ok:   $1"; else echo "FAIL: $1"; fail=1; fi; }

command -v pre-commit >/dev/null || { echo "FAIL: pre-commit is not installed (tools/setup.sh)"; exit 1; }
command -v git >/dev/null || { echo "FAIL: git is not installed"; exit 1; }

# The hook finds tether-lint on PATH (the documented way for `id: tether-lint`).
ln -s "$lint" "$t/bin/tether-lint"
export PATH=$t/bin:$PATH

# A hook repository: what other projects point `repo:` at (here, a local clone of the hooks file).
hookrepo=$t/hookrepo
mkdir -p "$hookrepo"
cp "$hooks" "$hookrepo/.pre-commit-hooks.yaml"
git -C "$hookrepo" init -q
git -C "$hookrepo" add .pre-commit-hooks.yaml
git -C "$hookrepo" commit -qm hooks
rev=$(git -C "$hookrepo" rev-parse HEAD)

# The project that uses the hook.
proj=$t/project
mkdir -p "$proj"
cd "$proj"
git init -q
cat >.pre-commit-config.yaml <<YAML
repos:
  - repo: $hookrepo
    rev: $rev
    hooks:
      - id: tether-lint
YAML
cp "$header" py_bindings.h
printf '[lint]\n' >.tether-lint
git add .pre-commit-config.yaml py_bindings.h .tether-lint
git commit -qm setup --no-verify
pre-commit install >"$t/install.log" 2>&1
check "pre-commit install" "[ -x .git/hooks/pre-commit ]"

cat >bad.cc <<'CC'
#include "py_bindings.h"
void dump(PyBlock &self) { mlirBlockDump(self.get()); }
CC
git add bad.cc
git commit -m "bad" >"$t/bad.log" 2>&1
rc=$?
check "committing an unguarded raw handle fails" "[ $rc -ne 0 ]"
check "the finding is shown" "grep -q 'bad.cc:2:42: warning: raw handle taken from .self. through PyBlock::get() .*\[raw-op-unguarded\]' $t/bad.log"
check "the hook is named" "grep -q '^tether-lint\.*Failed' $t/bad.log"
check "nothing was committed" "[ \$(git rev-list --count HEAD) -eq 1 ]"

cat >bad.cc <<'CC'
#include "py_bindings.h"
void dump(PyBlock &self) {
  self.checkValid();
  mlirBlockDump(self.get());
}
CC
git add bad.cc
git commit -m "good" >"$t/good.log" 2>&1
rc=$?
check "committing the guarded version passes" "[ $rc -eq 0 ] && grep -q '^tether-lint\.*Passed' $t/good.log"
check "the commit exists" "[ \$(git rev-list --count HEAD) -eq 2 ]"

if [ $fail -ne 0 ]; then
  echo "--- bad commit log"; cat "$t/bad.log"; echo "--- good commit log"; cat "$t/good.log"
fi
[ $fail -eq 0 ] && echo "precommit_test: passed" || echo "precommit_test: FAILED"
exit $fail
