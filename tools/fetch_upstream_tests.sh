#!/usr/bin/env bash
# Fetches upstream MLIR's sources of one LLVM version for the conformance runner (tests/conformance)
# and the adaptor fixtures:
#   tools/fetch_upstream_tests.sh [--version 19|22] [DEST]
# (default 19: DEST /var/cache/tether/upstream-mlir-tests; 22: /var/cache/tether/upstream-mlir22).
# Fetches upstream LLVM's orig tarball from Debian's source archive (nothing is copied into the
# repository), keeps it next to DEST, and extracts the parts tether's tests and fixtures read:
# mlir/test/python (the conformance suite), mlir/python and mlir/lib/Bindings/Python (upstream's
# package sources, python_test.py & co.), mlir/examples/standalone, mlir/include/mlir/Bindings and
# mlir/include/mlir-c (binding/adaptor headers). Prints DEST/python (the test suite).
# Idempotent: does nothing when DEST/python/ir/module.py is there. Needs Debian's archive once.
set -euo pipefail
version=19
if [ "${1:-}" = "--version" ]; then version=$2; shift 2; fi
case $version in
  19) orig=19.1.7; suites="bookworm bookworm-updates"; def=/var/cache/tether/upstream-mlir-tests ;;
  22) orig=22.1.8; suites="trixie sid"; def=/var/cache/tether/upstream-mlir22 ;;
  *) echo "fetch_upstream_tests: --version 19 or 22" >&2; exit 2 ;;
esac
dest=${1:-${TETHER_UPSTREAM_CACHE:-$def}}
top=llvm-toolchain-${version}_$orig
# Done when the suite and the adaptor fixtures' sources are both there (caches made before the
# fixtures were read hold the suite alone, as a folder: they are completed).
if [ -f "$dest/python/ir/module.py" ] && [ -f "$dest/$top/mlir/test/python/lib/PythonTestCAPI.cpp" ] &&
   [ -f "$dest/$top/mlir/examples/standalone/python/CMakeLists.txt" ]; then
  echo "$dest/python"; exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo -n); fi
# 22: bookworm-security ships the binaries but its source package 404s; trixie/sid carry the same
# orig tarball. Source-only entries: they never change what `apt-get install` picks.
list=/etc/apt/sources.list.d/tether-deb-src-$version.sources
# (no `grep -q` under pipefail: an early exit of grep makes the pipeline fail)
if [ "$(apt-cache showsrc "llvm-toolchain-$version" 2>/dev/null | grep -c "^Version: 1:$orig-")" = 0 ]; then
  "${SUDO[@]}" tee "$list" >/dev/null <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suites
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  "${SUDO[@]}" apt-get update -qq
fi
"${SUDO[@]}" mkdir -p "$dest"
tarball="$dest/llvm-toolchain-${version}_$orig.orig.tar.xz"
if [ ! -f "$tarball" ]; then
  work=$(mktemp -d); chmod 755 "$work"; trap 'rm -rf "$work"' EXIT
  # The newest source revision's .dsc / .debian.tar.xz may 404 (apt-get then exits 100) while
  # the orig tarball comes through: judge by the tarball, not by apt-get's status.
  (cd "$work" && apt-get source --download-only -qq "llvm-toolchain-$version" >/dev/null 2>&1) || true
  got=$(ls "$work"/llvm-toolchain-${version}_$orig.orig.tar.xz 2>/dev/null | head -n 1)
  [ -n "$got" ] || { echo "fetch_upstream_tests: no llvm-toolchain-${version}_$orig.orig.tar.xz" >&2; exit 1; }
  # The .dsc may be missing, so apt could not check the tarball: compare with the Sources index.
  want=$(apt-cache showsrc "llvm-toolchain-$version" | awk -v f="llvm-toolchain-${version}_$orig.orig.tar.xz" \
         '/^Checksums-Sha256:/{s=1;next} /^[A-Z]/{s=0} s && $3==f && !w {w=$1} END {print w}')
  have=$(sha256sum "$got" | cut -d' ' -f1)
  [ -z "$want" ] || [ "$want" = "$have" ] || { echo "fetch_upstream_tests: checksum mismatch" >&2; exit 1; }
  "${SUDO[@]}" mv "$got" "$tarball"
fi
"${SUDO[@]}" tar -xJf "$tarball" -C "$dest" --wildcards \
  "$top/mlir/test/python/*" "$top/mlir/python/*" "$top/mlir/lib/Bindings/Python/*" \
  "$top/mlir/examples/standalone/*" "$top/mlir/include/mlir/Bindings/*" "$top/mlir/include/mlir-c/*"
# The layout the conformance runner reads (as the 19 script's --strip-components=3 gives).
if [ -d "$dest/python" ] && [ ! -L "$dest/python" ]; then "${SUDO[@]}" rm -rf "$dest/python"; fi
"${SUDO[@]}" ln -sfn "$top/mlir/test/python" "$dest/python"
echo "$dest/python"
