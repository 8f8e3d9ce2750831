"""tether's system dependencies, for this workspace and for any workspace that uses @tether.

    load("@tether//tools/bazel:deps.bzl", "tether_dependencies")
    tether_dependencies()

declares @bdwgc, @mlir (MLIR 19 unless told otherwise), @libclang, @cjson, @libelf and @python (docs/building.md). The names are
fixed: tether's BUILD files refer to them.
"""

load(":system_repos.bzl", "mlir_repository", "python_repository", "system_library")

# The MLIR versions tether builds against, the default first. `--config=mlir19` (.bazelrc) picks
# another through TETHER_MLIR_VERSION; tether_dependencies(mlir_version = ...) pins one for another
# workspace. Each version is found at /usr/lib/llvm-V (Debian's packages, installed) or unpacked
# under $TETHER_MLIR_CACHE/mlir-V (tools/setup.sh: Debian's MLIR packages of different versions
# conflict, so only one can be installed; docs/building.md).
MLIR_VERSIONS = ["22", "19"]

# The LLVM toolchain whose libclang tether-lint uses (independent of the MLIR version built).
LLVM = "/usr/lib/llvm-19"

BDWGC_BUILD = """
# bdwgc 8.2 (threads). Every user must see GC_THREADS; it is not in pkg-config's cflags.
cc_library(
    name = "bdwgc",
    hdrs = glob(["include/gc/*.h"]) + ["include/gc.h"],
    defines = ["GC_THREADS"],
    includes = ["include"],
    linkopts = ["-lgc", "-lpthread", "-ldl"],
)
"""

MLIR_BUILD = """
# MLIR {version} C API headers (TETHER_MLIR_VERSION tells C code which one).
cc_library(
    name = "headers",
    # The C-API headers, and the generated pass declarations some of them include.
    hdrs = glob(["include/mlir-c/**/*.h", "include/mlir/**/*.capi.h.inc"]) + [
        "include/mlir/Config/mlir-config.h",
        "include/llvm/Config/llvm-config.h",  # LLVM_VERSION_MAJOR, to check TETHER_MLIR_VERSION
    ],
    defines = ["TETHER_MLIR_VERSION={version}"],
    includes = ["include"],
)

# libMLIR.so and libLLVM.so.{version}.1, which the C-API archives resolve against.
cc_library(
    name = "dylibs",
    linkopts = [
        "{mlir_lib}/libMLIR.so",
        "{libllvm}",
        "-lstdc++",
        "-Wl,-rpath,{mlir_lib}",
    ],
)

# The C API linked statically from the libMLIRCAPI*.a archives (one group). Every binary that
# uses this carries its own copy of the C-API glue: fine for a program, wrong for a Python
# extension next to others (seed 002). tether's own code links //arena:tether instead.
cc_library(
    name = "mlir",
    linkopts = ["-Wl,--start-group"] + [
        "{mlir_lib}/libMLIRCAPI%s.a" % a for a in {archives}
    ] + ["-Wl,--end-group"],
    deps = [":headers", ":dylibs"],
)

# Every C-API archive, whole: for the one shared C-API library (//arena:libtether_capi.so).
cc_library(
    name = "capi_whole_archive",
    linkopts = ["-Wl,--whole-archive"] + [
        "{mlir_lib}/libMLIRCAPI%s.a" % a for a in {archives}
    ] + ["-Wl,--no-whole-archive"],
    deps = [":headers", ":dylibs"],
)

# The MLIR C++ headers (with LLVM's), for C++ code that defines dialects.
cc_library(
    name = "mlir_cpp_headers",
    hdrs = glob(["include/mlir/**/*.h", "include/mlir/**/*.inc", "include/mlir/**/*.td", "include/llvm/**/*.h", "include/llvm/**/*.def", "include/llvm/**/*.inc", "include/llvm-c/**/*.h"]),
    includes = ["include"],
)

# linalg's named ops as MLIR generated them (for tether's OpDSL: bindings/python:core_named_ops).
filegroup(
    name = "linalg_named_op_defs",
    srcs = [
        "include/mlir/Dialect/Linalg/IR/LinalgNamedStructuredOps.yamlgen.td",
        "include/mlir/Dialect/Linalg/IR/LinalgNamedStructuredOps.yamlgen.cpp.inc",
        "include/mlir/Dialect/Linalg/IR/LinalgStructuredOps.h.inc",
    ],
)

# The TableGen sources of MLIR, for mlir-tblgen in dialects defined with ODS.
filegroup(
    name = "td_files",
    srcs = glob(["include/mlir/**/*.td"]),
)

exports_files(["bin/mlir-tblgen", "bin/mlir-opt", "bin/FileCheck"])
"""

LIBCLANG_BUILD = """
# libclang 19 (C API).
cc_library(
    name = "libclang",
    hdrs = glob(["include/clang-c/*.h"]),
    includes = ["include"],
    linkopts = ["{llvm}/lib/libclang.so", "-Wl,-rpath,{llvm}/lib"],
)
""".format(llvm = LLVM)

CJSON_BUILD = """
cc_library(
    name = "cjson",
    hdrs = ["include/cjson/cJSON.h"],
    includes = ["include"],
    linkopts = ["-lcjson"],
)
"""

LIBELF_BUILD = """
cc_library(
    name = "libelf",
    hdrs = ["include/gelf.h", "include/libelf.h"],
    includes = ["include"],
    linkopts = ["-lelf"],
)
"""

def tether_dependencies(mlir_version = None):
    """Declares the system libraries tether builds against, as local repositories.

    Args:
      mlir_version: "19" or "22" pins the MLIR version; None (the default) takes
        TETHER_MLIR_VERSION from the environment (`--repo_env`, as `--config=mlir19` sets it),
        else the first of MLIR_VERSIONS.
    """
    system_library(
        name = "bdwgc",
        build_file_content = BDWGC_BUILD,
        debian_package = "libgc-dev",
        required = [
            "/usr/include/gc/gc.h",
            "/usr/lib/x86_64-linux-gnu/libgc.so",
        ],
        symlinks = {
            "include/gc": "/usr/include/gc",
            "include/gc.h": "/usr/include/gc.h",
        },
    )

    mlir_repository(
        name = "mlir",
        build_file_content = MLIR_BUILD,
        version = mlir_version or "",
        versions = MLIR_VERSIONS,
    )

    system_library(
        name = "libclang",
        build_file_content = LIBCLANG_BUILD,
        debian_package = "libclang-19-dev",
        required = [
            LLVM + "/include/clang-c/Index.h",
            LLVM + "/lib/libclang.so",
        ],
        symlinks = {"include/clang-c": LLVM + "/include/clang-c"},
    )

    system_library(
        name = "cjson",
        build_file_content = CJSON_BUILD,
        debian_package = "libcjson-dev",
        required = [
            "/usr/include/cjson/cJSON.h",
            "/usr/lib/x86_64-linux-gnu/libcjson.so",
        ],
        symlinks = {"include/cjson": "/usr/include/cjson"},
    )

    system_library(
        name = "libelf",
        build_file_content = LIBELF_BUILD,
        debian_package = "libelf-dev",
        required = [
            "/usr/include/gelf.h",
            "/usr/lib/x86_64-linux-gnu/libelf.so",
        ],
        symlinks = {
            "include/gelf.h": "/usr/include/gelf.h",
            "include/libelf.h": "/usr/include/libelf.h",
        },
    )

    python_repository(name = "python")
