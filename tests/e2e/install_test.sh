#!/usr/bin/env bash
# bazel run //:install -- PREFIX, then build a C program of "another project" with
# pkg-config --cflags --libs tether and a C++ one with tether-cpp (tether.hpp), run them, and import
# the installed Python package.
set -euo pipefail
install=$1
case "$install" in /*) ;; *) install="$PWD/$install" ;; esac
python=$2
case "$python" in /*) ;; *) python="$PWD/$python" ;; esac
prefix="$TEST_TMPDIR/prefix"
"$install" "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs tether)
echo "pkg-config: $flags"
cc -std=c11 -Wall -Werror -o "$TEST_TMPDIR/hello" tests/e2e/install/hello.c $flags
out=$("$TEST_TMPDIR/hello")
echo "$out"
grep -q "func.func @hello()" <<<"$out"
grep -q "hello from an installed tether" <<<"$out"
# Nothing of the build tree is needed at run time.
deps=$(ldd "$TEST_TMPDIR/hello")
grep -q "$prefix/lib/libtether_capi.so" <<<"$deps"
# C++: tether.hpp (the arena for C++ bindings), named by tether-cpp.pc and by tether.pc.
[ "$(pkg-config --variable=header tether-cpp)" = "$prefix/include/tether/tether.hpp" ]
[ "$(pkg-config --variable=cpp_header tether)" = "$prefix/include/tether/tether.hpp" ]
cxxflags=$(pkg-config --cflags --libs tether-cpp)
echo "pkg-config tether-cpp: $cxxflags"
c++ -std=c++17 -Wall -Werror -o "$TEST_TMPDIR/hello_cpp" tests/e2e/install/hello_cpp.cc $cxxflags
out=$("$TEST_TMPDIR/hello_cpp")
echo "$out"
grep -q "the operation has been invalidated: the object was erased" <<<"$out"
grep -q "hello from an installed tether.hpp" <<<"$out"
py=$(cd "$TEST_TMPDIR" && PYTHONPATH="$prefix/lib/python" "$python" -c '
from tether import ir
with ir.Context():
    print(ir.Module.parse("func.func private @p()"))
')
echo "$py"
grep -q "func.func private @p()" <<<"$py"
"$install" 2>/dev/null && { echo "FAIL: install without PREFIX succeeded"; exit 1; }
echo "install_test: 1 passed, 0 failed"
