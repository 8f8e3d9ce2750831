"""System dependencies of tether as local Bazel repositories.

Each repository exposes one cc_library named after the repository (@bdwgc, @mlir, @libclang, @cjson,
@libelf, @python). The files come from Debian packages installed by tools/setup.sh. When a file a
repository needs is missing, the repository still loads, but every target in it fails to build with
one line that names the Debian package to install; there is no Starlark stack trace.
"""

def _missing_build(ctx, missing, pkg = None):
    """A BUILD file whose every target fails with one clear line."""
    msg = "tether: missing system dependency @{repo}: {path} not found; install the Debian package {pkg} (tools/setup.sh installs everything)".format(
        repo = ctx.name,
        path = missing,
        pkg = pkg or ctx.attr.debian_package,
    )
    targets = [ctx.name] + ctx.attr.extra_targets
    lines = [
        'package(default_visibility = ["//visibility:public"])',
        "",
        "genrule(",
        '    name = "missing_dependency",',
        '    outs = ["missing_dependency.h"],',
        "    cmd = \"echo '%s' >&2; exit 1\"," % msg,
        ")",
    ]
    for t in targets:
        lines += [
            "",
            "cc_library(",
            '    name = "%s",' % t,
            '    hdrs = [":missing_dependency"],',
            ")",
        ]
    return "\n".join(lines) + "\n"

def _first_missing(ctx, paths):
    for p in paths:
        if not ctx.path(p).exists:
            return p
    return None

def _system_library_impl(ctx):
    missing = _first_missing(ctx, ctx.attr.required)
    if missing:
        ctx.file("BUILD.bazel", _missing_build(ctx, missing))
        ctx.file("defs.bzl", "")
        return
    for name, target in ctx.attr.symlinks.items():
        ctx.symlink(target, name)
    ctx.file("BUILD.bazel", 'package(default_visibility = ["//visibility:public"])\n\n' + ctx.attr.build_file_content)

system_library = repository_rule(
    implementation = _system_library_impl,
    doc = "A library installed by a Debian package, as a local repository.",
    local = True,
    attrs = {
        "debian_package": attr.string(mandatory = True, doc = "The package that provides the files."),
        "required": attr.string_list(doc = "Absolute paths that must exist."),
        "symlinks": attr.string_dict(doc = "Repository-relative name -> absolute path to link there."),
        "build_file_content": attr.string(mandatory = True),
        "extra_targets": attr.string_list(doc = "Targets besides the main one that must fail when missing."),
    },
)

_PY_QUERY = """
import sys, sysconfig
print(sys.executable)
print(sysconfig.get_paths()["include"])
print(sysconfig.get_config_var("EXT_SUFFIX"))
print("%d.%d" % sys.version_info[:2])
print(sys.implementation.cache_tag)
"""

def _python_impl(ctx):
    interpreter = ctx.os.environ.get("TETHER_PYTHON", "")
    if not interpreter:
        interpreter = "/usr/bin/python3"
        if not ctx.path(interpreter).exists:
            found = ctx.which("python3")
            interpreter = str(found) if found else interpreter
    if not ctx.path(interpreter).exists:
        ctx.file("BUILD.bazel", _missing_build(ctx, interpreter))
        ctx.file("defs.bzl", 'PYTHON = None\nPYTHON_VERSION = None\nEXT_SUFFIX = ".so"\nPY_CACHE_TAG = None\n')
        return
    res = ctx.execute([interpreter, "-c", _PY_QUERY])
    if res.return_code != 0:
        ctx.file("BUILD.bazel", _missing_build(ctx, interpreter + " (it did not run: " + res.stderr.strip().replace("'", "") + ")"))
        ctx.file("defs.bzl", 'PYTHON = None\nPYTHON_VERSION = None\nEXT_SUFFIX = ".so"\nPY_CACHE_TAG = None\n')
        return
    lines = res.stdout.strip().split("\n")
    info = {"executable": lines[0], "include": lines[1], "ext_suffix": lines[2], "version": lines[3], "cache_tag": lines[4]}
    header = info["include"] + "/Python.h"
    if not ctx.path(header).exists:
        ctx.file("BUILD.bazel", _missing_build(ctx, header))
        ctx.file("defs.bzl", 'PYTHON = "%s"\nPYTHON_VERSION = None\nEXT_SUFFIX = ".so"\nPY_CACHE_TAG = None\n' % info["executable"])
        return
    ctx.symlink(info["include"], "include")
    ctx.file("python3.sh", "#!/bin/sh\nexec '%s' \"$@\"\n" % info["executable"], executable = True)
    ctx.file("defs.bzl", 'PYTHON = "%s"\nPYTHON_VERSION = "%s"\nEXT_SUFFIX = "%s"\nPY_CACHE_TAG = "%s"\n' % (
        info["executable"],
        info["version"],
        info["ext_suffix"],
        info["cache_tag"],
    ))
    ctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])

# Headers of {exe} (Python {ver}), the interpreter that runs the tests.
cc_library(
    name = "python",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
)

# The interpreter itself, for tests: `$(location @python//:python3) -m pytest ...`.
sh_binary(
    name = "python3",
    srcs = ["python3.sh"],
)
""".format(exe = info["executable"], ver = info["version"]))

python_repository = repository_rule(
    implementation = _python_impl,
    doc = "Headers and interpreter of the python3 that runs the tests ($TETHER_PYTHON, else /usr/bin/python3, else python3 on PATH).",
    local = True,
    environ = ["TETHER_PYTHON", "PATH"],
    attrs = {
        "debian_package": attr.string(default = "python3-dev"),
        "extra_targets": attr.string_list(default = ["python3"]),
    },
)

def _mlir_candidates(ctx, version):
    """Where MLIR `version` may be: Debian's installed packages, then tools/setup.sh's unpacked copy."""
    cache = ctx.os.environ.get("TETHER_MLIR_CACHE", "") or "/var/cache/tether"
    return [
        "/usr/lib/llvm-%s" % version,
        "%s/mlir-%s/usr/lib/llvm-%s" % (cache, version, version),
    ]

def _mlir_impl(ctx):
    version = ctx.attr.version or ctx.os.environ.get("TETHER_MLIR_VERSION", "") or ctx.attr.versions[0]
    pkg = "libmlir-%s-dev, mlir-%s-tools, llvm-%s-dev and llvm-%s-tools" % (version, version, version, version)
    if version not in ctx.attr.versions:
        ctx.file("BUILD.bazel", _missing_build(ctx, "MLIR %s (tether builds against MLIR %s)" % (version, " or ".join(ctx.attr.versions)), pkg))
        ctx.file("defs.bzl", 'MLIR_VERSION = "%s"\nMLIR_ROOT = ""\nLLVM_ROOT = ""\n' % version)
        return

    # The MLIR files (headers, C-API archives, libMLIR.so, mlir-tblgen) come from one root; LLVM's
    # headers, libLLVM and FileCheck from Debian's llvm-V-dev, libllvmV and llvm-V-tools.
    llvm = "/usr/lib/llvm-%s" % version
    root = None
    for r in _mlir_candidates(ctx, version):
        if ctx.path(r + "/include/mlir-c/IR.h").exists and ctx.path(r + "/lib/libMLIRCAPIIR.a").exists:
            root = r
            break
    libllvm = "/lib/x86_64-linux-gnu/libLLVM.so.%s.1" % version
    # mlir-V-tools: installed (19's tools are linked statically and co-install with MLIR 22's
    # libraries) or unpacked next to the libraries.
    tools = root + "/bin" if root and ctx.path(root + "/bin/mlir-tblgen").exists else llvm + "/bin"
    if root == None:
        missing = llvm + "/include/mlir-c/IR.h"
    else:
        missing = _first_missing(ctx, [
            root + "/lib/libMLIR.so",
            tools + "/mlir-tblgen",  # mlir-V-tools
            libllvm,  # libllvmV
            llvm + "/include/llvm/Support/Compiler.h",  # llvm-V-dev
            llvm + "/bin/FileCheck",  # llvm-V-tools
        ])
    if missing:
        ctx.file("BUILD.bazel", _missing_build(ctx, missing, pkg))
        ctx.file("defs.bzl", 'MLIR_VERSION = "%s"\nMLIR_ROOT = ""\nLLVM_ROOT = ""\n' % version)
        return

    for d in ["mlir", "mlir-c"]:
        ctx.symlink(root + "/include/" + d, "include/" + d)
    for d in ["llvm", "llvm-c"]:
        ctx.symlink(llvm + "/include/" + d, "include/" + d)
    for tool in ["mlir-tblgen", "mlir-opt"]:
        ctx.symlink(tools + "/" + tool, "bin/" + tool)
    ctx.symlink(llvm + "/bin/FileCheck", "bin/FileCheck")

    # Every C-API archive the version ships (22 has more than 19).
    archives = sorted([
        f.basename[len("libMLIRCAPI"):-len(".a")]
        for f in ctx.path(root + "/lib").readdir()
        if f.basename.startswith("libMLIRCAPI") and f.basename.endswith(".a")
    ])
    ctx.file("defs.bzl", 'MLIR_VERSION = "%s"\nMLIR_ROOT = "%s"\nLLVM_ROOT = "%s"\n' % (version, root, llvm))
    ctx.file("BUILD.bazel", 'package(default_visibility = ["//visibility:public"])\n\n' + ctx.attr.build_file_content.format(
        version = version,
        mlir_lib = root + "/lib",
        libllvm = libllvm,
        archives = repr(archives),
    ))

mlir_repository = repository_rule(
    implementation = _mlir_impl,
    doc = "MLIR's C API, C++ headers and tools of one version (TETHER_MLIR_VERSION), as @mlir.",
    local = True,
    environ = ["TETHER_MLIR_VERSION", "TETHER_MLIR_CACHE"],
    attrs = {
        "version": attr.string(doc = "The MLIR version; empty: $TETHER_MLIR_VERSION, else versions[0]."),
        "versions": attr.string_list(mandatory = True, doc = "The versions tether supports, the default first."),
        "build_file_content": attr.string(mandatory = True, doc = "With {version}, {mlir_lib}, {libllvm}, {archives}."),
        "extra_targets": attr.string_list(default = ["mlir_cpp_headers", "headers", "dylibs", "capi_whole_archive"]),
    },
)

def _upstream_source_impl(ctx):
    version = ctx.os.environ.get("TETHER_MLIR_VERSION", "") or ctx.attr.versions[0]
    dest = ctx.os.environ.get("TETHER_UPSTREAM_CACHE", "") or ctx.attr.caches.get(version, "")
    src = None
    if dest and ctx.path(dest).exists:
        for d in ctx.path(dest).readdir():
            if d.basename.startswith("llvm-toolchain-%s_" % version) and ctx.path(str(d) + "/mlir/test/python/lib").exists:
                src = str(d) + "/mlir"
                break
    if src == None:
        ctx.file("defs.bzl", 'UPSTREAM_MLIR_VERSION = "%s"\nUPSTREAM_MLIR_SOURCE = ""\n' % version)
        ctx.file("BUILD.bazel", "# upstream MLIR %s's sources not found under %s (tools/fetch_upstream_tests.sh --version %s)\n" % (version, dest, version))
        return
    ctx.symlink(src, "mlir")
    ctx.file("defs.bzl", 'UPSTREAM_MLIR_VERSION = "%s"\nUPSTREAM_MLIR_SOURCE = "%s"\n' % (version, src))
    ctx.file("BUILD.bazel", """package(default_visibility = ["//visibility:public"])

# Upstream MLIR {version}'s own sources (Debian's orig tarball, tools/fetch_upstream_tests.sh).
filegroup(name = "python_test_lib", srcs = glob(["mlir/test/python/lib/*.cpp", "mlir/test/python/lib/*.h"]))
filegroup(name = "python_test_py", srcs = ["mlir/python/mlir/dialects/python_test.py"])
filegroup(name = "standalone", srcs = glob(["mlir/examples/standalone/**"]))
exports_files(glob(["mlir/test/python/*.td", "mlir/examples/standalone/**"]))
""".format(version = version))

upstream_source_repository = repository_rule(
    implementation = _upstream_source_impl,
    doc = "Upstream MLIR's sources of the version built (tools/fetch_upstream_tests.sh), for tests.",
    local = True,
    environ = ["TETHER_MLIR_VERSION", "TETHER_UPSTREAM_CACHE"],
    attrs = {
        "versions": attr.string_list(mandatory = True),
        "caches": attr.string_dict(mandatory = True, doc = "version -> the fetch script's folder"),
    },
)
