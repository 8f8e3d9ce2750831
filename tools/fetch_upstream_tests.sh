#!/usr/bin/env bash
# Fetches upstream MLIR's own Python test suite (LLVM 19, mlir/test/python) from Debian's source
# package into a cache folder, for the conformance runner (tests/conformance). Nothing of it is
# copied into the repository. Idempotent: does nothing when the folder is there.
#   tools/fetch_upstream_tests.sh [DEST]   (default /var/cache/tether/upstream-mlir-tests)
# Prints the path of mlir/test/python. Needs network access to Debian's archive once.
set -euo pipefail
dest=${1:-${TETHER_UPSTREAM_CACHE:-/var/cache/tether/upstream-mlir-tests}}
if [ -f "$dest/python/ir/module.py" ]; then
  echo "$dest/python"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo -n); fi
# A deb-src entry for the suites the binary packages come from.
if ! apt-get source --print-uris -qq llvm-toolchain-19 >/dev/null 2>&1; then
  "${SUDO[@]}" tee /etc/apt/sources.list.d/tether-deb-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  "${SUDO[@]}" apt-get update -qq
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source --download-only -qq llvm-toolchain-19 >/dev/null 2>&1)
tarball=$(ls "$work"/llvm-toolchain-19_*.orig.tar.xz | head -n 1)
"${SUDO[@]}" mkdir -p "$dest"
"${SUDO[@]}" tar -xJf "$tarball" -C "$dest" --strip-components=3 --wildcards '*/mlir/test/python/*'
echo "$dest/python"
