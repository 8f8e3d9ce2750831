#!/usr/bin/env bash
# bazel run //:install -- PREFIX
# Installs libtether for other projects: PREFIX/include/tether/tether.h, PREFIX/lib/libtether_capi.so
# (the MLIR C API and libtether in one shared library) and its trial helper PREFIX/lib/tether-trial,
# PREFIX/lib/pkgconfig/tether.pc, the header for C++ bindings PREFIX/include/tether/tether.hpp with
# PREFIX/lib/pkgconfig/tether-cpp.pc (docs/cpp-bindings.md), and the Python package in
# PREFIX/lib/python/tether. Use: pkg-config --cflags --libs tether (C), tether-cpp (C++: adds
# libMLIR.so and libLLVM.so); `pkg-config --variable=mlir_version tether` says which MLIR the
# build links.
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
fi
prefix=$1
# Under `bazel run`, a relative PREFIX means relative to where the user ran Bazel.
case "$prefix" in
/*) ;;
*) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;;
esac
if [ -n "${RUNFILES_DIR:-}" ] && [ -d "$RUNFILES_DIR/tether" ]; then
  src="$RUNFILES_DIR/tether"
elif [ -d "$0.runfiles/tether" ]; then
  src="$0.runfiles/tether"
else
  echo "install: cannot find the built files (run me with bazel run //:install -- PREFIX)" >&2
  exit 2
fi
# mlir_version, mlir_include, llvm_include, mlir_lib, llvm_lib: the MLIR this build links
# (//:mlir_info).
. "$src/mlir_info.sh"
lib="$src/arena/libtether_capi.so"
for f in "$lib" "$src/arena/tether.h" "$src/arena/tether.hpp" "$src/arena/tether-trial" "$src/bindings/python/tether/_tether.so"; do
  [ -f "$f" ] || { echo "install: missing $f" >&2; exit 2; }
done
# (cp, not install(1): under Bazel this script itself is an "install" on PATH.)
put() { cp -f "$2" "$3" && chmod "$1" "$3"; }
mkdir -p "$prefix/include/tether" "$prefix/lib/pkgconfig" "$prefix/lib/python/tether"
put 0644 "$src/arena/tether.h" "$prefix/include/tether/tether.h"
put 0644 "$src/arena/mlir_compat.h" "$prefix/include/tether/mlir_compat.h"
put 0644 "$src/arena/tether.hpp" "$prefix/include/tether/tether.hpp"
put 0755 "$lib" "$prefix/lib/libtether_capi.so"
ln -sf libtether_capi.so "$prefix/lib/libtether.so"
for f in "$src"/bindings/python/tether/*.py "$src"/bindings/python/tether/_tether*.so; do
  put 0644 "$f" "$prefix/lib/python/tether/$(basename "$f")"
done
# The extension finds the C-API library next to itself ($ORIGIN); the library finds its trial
# helper next to itself (docs/ownership.md, "Where the trials run"), which finds the library the
# same way.
put 0755 "$lib" "$prefix/lib/python/tether/libtether_capi.so"
put 0755 "$src/arena/tether-trial" "$prefix/lib/tether-trial"
put 0755 "$src/arena/tether-trial" "$prefix/lib/python/tether/tether-trial"
cat > "$prefix/lib/pkgconfig/tether.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include
mlir_version=$mlir_version
cpp_header=\${includedir}/tether/tether.hpp

Name: tether
Description: Handles to MLIR IR in a Boehm-GC heap, and the MLIR $mlir_version C API in one shared library
Version: 0.1.0
Requires.private: bdw-gc
Cflags: -I\${includedir}/tether -isystem $mlir_include$([ "$llvm_include" = "$mlir_include" ] || echo " -isystem $llvm_include") -DTETHER_MLIR_VERSION=$mlir_version
Libs: -L\${libdir} -ltether_capi -Wl,-rpath,\${libdir}
PC
# MLIR's and LLVM's headers are system headers to the user's build (-isystem): their warnings (MLIR
# 19's C++ headers have some) are not the user's to fix under -Werror.
# tether.hpp (C++ bindings of MLIR's C++ classes) also needs MLIR's and LLVM's C++ libraries; a
# pybind11 binding adds pybind11's and Python's flags (python3-config --includes).
cat > "$prefix/lib/pkgconfig/tether-cpp.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
mlir_libdir=$mlir_lib
llvm_libdir=$llvm_lib
header=\${includedir}/tether/tether.hpp

Name: tether-cpp
Description: tether.hpp, the arena for C++ (pybind11) bindings of MLIR's C++ classes, C++17, over libtether
Version: 0.1.0
Requires: tether
Libs: -L\${mlir_libdir} -lMLIR -L\${llvm_libdir} -lLLVM -Wl,-rpath,\${mlir_libdir}
PC
echo "installed tether (built against MLIR $mlir_version) into $prefix"
echo "  C:      pkg-config --cflags --libs tether   (PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"
echo "  C++:    pkg-config --cflags --libs tether-cpp (tether.hpp)"
echo "  Python: PYTHONPATH=$prefix/lib/python"
