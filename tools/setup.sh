#!/usr/bin/env bash
# Installs every Debian package tether needs. Idempotent and non-interactive:
# when all packages are present it changes nothing and exits 0.
# Runs as root, or through sudo when started by another user.
set -euo pipefail

PACKAGES=(
  build-essential        # gcc/g++ for Bazel's C/C++ toolchain
  bazel-bootstrap        # Bazel 4.2.3 (WORKSPACE mode)
  default-jdk-headless   # the JDK Bazel runs on
  libgc-dev              # bdwgc: the arena's heap
  libmlir-19-dev         # MLIR C API archives and headers
  mlir-19-tools          # mlir-opt-19, mlir-tblgen-19
  llvm-19-dev            # LLVM headers the MLIR C++ headers include
  libclang-19-dev        # libclang C API for tether-lint
  libelf-dev             # ELF reading for the typeid-elf check
  libcjson-dev           # JSON (compile_commands.json, json/sarif output)
  python3-dev            # headers of /usr/bin/python3 for the extension
  python3-pytest         # the bindings' test runner
  pre-commit             # tether-lint's pre-commit hook is tested with it
  pkg-config             # used by the install test
  git                    # pre-commit and the lint tests need it
  clang-format           # the formatting check
  llvm-19-tools          # FileCheck-19 for the conformance runner (tests/conformance)
  python3-numpy          # numpy arrays in DenseElementsAttr and tether.runtime (optional at import)
  python3-yaml           # linalg OpDSL's dump_oplib (optional at import)
  cmake                  # tether-lint's compdb_test: a compilation database as CMake writes it
  bear                   # tether-lint's compdb_test: a compilation database as Bear writes it
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

here=$(cd "$(dirname "$0")" && pwd)
fetch_upstream_tests() {
  # Upstream MLIR's Python test suite for the conformance test (a cache folder, not the repo).
  if ! "$here/fetch_upstream_tests.sh" >/dev/null; then
    echo "tools/setup.sh: could not fetch upstream's mlir/test/python; the conformance test will" \
         "say it is skipped" >&2
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "tools/setup.sh: all ${#PACKAGES[@]} packages present; nothing to install."
  fetch_upstream_tests
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo -n)
else
  echo "tools/setup.sh: must run as root or with sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "tools/setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fetch_upstream_tests
echo "tools/setup.sh: done."
