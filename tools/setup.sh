#!/usr/bin/env bash
# Installs every Debian package tether needs. Idempotent and non-interactive:
# when all packages are present it changes nothing and exits 0.
# Runs as root, or through sudo when started by another user.
#
# Two MLIR versions: Debian's MLIR packages of different versions conflict (libmlir-22 Conflicts
# libmlir-x.y), so MLIR 22 (the default build) is installed and MLIR 19 (--config=mlir19) is
# unpacked from Debian's own packages into $TETHER_MLIR_CACHE/mlir-19 (default
# /var/cache/tether/mlir-19), at the version of the installed llvm-19-dev. Everything else of 19
# (LLVM's headers and libLLVM, mlir-tblgen-19, FileCheck-19, libclang) co-installs with 22.
set -euo pipefail

PACKAGES=(
  build-essential        # gcc/g++ for Bazel's C/C++ toolchain
  bazel-bootstrap        # Bazel 4.2.3 (WORKSPACE mode)
  default-jdk-headless   # the JDK Bazel runs on
  libgc-dev              # bdwgc: the arena's heap
  libmlir-22-dev         # MLIR 22: C API archives and headers (removes an installed libmlir-19)
  mlir-22-tools          # mlir-opt-22, mlir-tblgen-22
  llvm-22-dev            # LLVM 22 headers the MLIR C++ headers include
  llvm-22-tools          # FileCheck-22 for the conformance runner (tests/conformance)
  mlir-19-tools          # mlir-tblgen-19 (linked statically: co-installs with MLIR 22)
  llvm-19-dev            # LLVM 19 headers and libLLVM.so.19.1, for the unpacked MLIR 19
  libclang-19-dev        # libclang C API for tether-lint
  libelf-dev             # ELF reading for the typeid-elf check
  libcjson-dev           # JSON (compile_commands.json, json/sarif output)
  python3-dev            # headers of /usr/bin/python3 for the extension
  python3-pytest         # the bindings' test runner
  pre-commit             # tether-lint's pre-commit hook is tested with it
  pkg-config             # used by the install test
  git                    # pre-commit and the lint tests need it
  clang-format           # the formatting check
  llvm-19-tools          # FileCheck-19 for the conformance runner on MLIR 19
  python3-numpy          # numpy arrays in DenseElementsAttr and tether.runtime (optional at import)
  python3-yaml           # linalg OpDSL's dump_oplib (optional at import)
  cmake                  # tether-lint's compdb_test: a compilation database as CMake writes it
  bear                   # tether-lint's compdb_test: a compilation database as Bear writes it
  pybind11-dev           # upstream's PybindAdaptors extensions built against tether (tests/adaptors)
  mypy                   # the type stubs checked against a typed program (tests/bindings/stubs)
  nginx-light            # tether-lint's remote_cache_test: a WebDAV server as Bazel's HTTP cache
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

here=$(cd "$(dirname "$0")" && pwd)
fetch_upstream_tests() {
  # Upstream MLIR's Python test suites for the conformance test (cache folders, not the repo).
  # Without them the conformance test fails: set-up stops here, unless the user asked to go
  # without them (TETHER_CONFORMANCE_SKIP=1, docs/testing.md).
  for v in 22 19; do
    if ! "$here/fetch_upstream_tests.sh" --version "$v" >/dev/null; then
      if [ "${TETHER_CONFORMANCE_SKIP:-}" = 1 ]; then
        echo "tools/setup.sh: could not fetch upstream's $v mlir/test/python; going on without it" \
             "(TETHER_CONFORMANCE_SKIP=1: run the tests with --test_env=TETHER_CONFORMANCE_SKIP=1)" >&2
      else
        echo "tools/setup.sh: could not fetch upstream's $v mlir/test/python, which the conformance" \
             "test needs (tools/fetch_upstream_tests.sh --version $v says why). Stopping; to go" \
             "on without it, run again with TETHER_CONFORMANCE_SKIP=1 (docs/testing.md)" >&2
        exit 1
      fi
    fi
  done
}

MLIR19_DIR=${TETHER_MLIR_CACHE:-/var/cache/tether}/mlir-19
mlir19_stamp() { echo "$MLIR19_DIR/.tether-mlir19-$(dpkg-query -W -f='${Version}' llvm-19-dev 2>/dev/null)"; }

# Unpacks libmlir-19 and libmlir-19-dev at the version of the installed llvm-19-dev (the MLIR
# headers include LLVM's: they must match) into $MLIR19_DIR, where tools/bazel/deps.bzl finds them.
# Idempotent, and atomic: a stamp names the version, a half-finished unpack is never used.
unpack_mlir19() {
  local ver tmp
  [ -f "$(mlir19_stamp)" ] && return 0
  ver=$(dpkg-query -W -f='${Version}' llvm-19-dev)
  tmp=$(mktemp -d)
  # apt downloads as its _apt user (it warns and falls back to root when _apt cannot write here)
  if id _apt >/dev/null 2>&1; then "${SUDO[@]}" chown _apt "$tmp"; fi
  (cd "$tmp" && "${SUDO[@]}" apt-get download -qq "libmlir-19=$ver" "libmlir-19-dev=$ver")
  "${SUDO[@]}" rm -rf "$MLIR19_DIR.new"
  "${SUDO[@]}" mkdir -p "$MLIR19_DIR.new"
  for d in "$tmp"/*.deb; do "${SUDO[@]}" dpkg -x "$d" "$MLIR19_DIR.new"; done
  "${SUDO[@]}" rm -rf "$tmp"
  for f in lib/libMLIR.so.19.1 lib/libMLIRCAPIIR.a include/mlir-c/IR.h; do
    [ -e "$MLIR19_DIR.new/usr/lib/llvm-19/$f" ] || {
      echo "tools/setup.sh: unpacking MLIR 19 gave no $f" >&2
      exit 1
    }
  done
  "${SUDO[@]}" touch "$MLIR19_DIR.new/.tether-mlir19-$ver"
  "${SUDO[@]}" rm -rf "$MLIR19_DIR"
  "${SUDO[@]}" mv "$MLIR19_DIR.new" "$MLIR19_DIR"
  echo "tools/setup.sh: MLIR 19 ($ver) unpacked into $MLIR19_DIR"
}

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo -n)
else
  SUDO=(false)
fi

if [ ${#missing[@]} -eq 0 ] && [ -f "$(mlir19_stamp)" ]; then
  echo "tools/setup.sh: all ${#PACKAGES[@]} packages and MLIR 19 present; nothing to install."
  fetch_upstream_tests
  exit 0
fi

if [ "${SUDO[*]}" = false ]; then
  echo "tools/setup.sh: must run as root or with sudo to install: ${missing[*]} (and MLIR 19)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
  echo "tools/setup.sh: installing ${missing[*]}"
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
unpack_mlir19
fetch_upstream_tests
echo "tools/setup.sh: done."
