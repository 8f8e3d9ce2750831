"""tether-lint under Bazel.

    load("@tether//lint:defs.bzl", "tether_lint_test")

    tether_lint_test(
        name = "lint_test",
        targets = [":my_extension"],      # linted with each target's own compile flags
        srcs = ["CMakeLists.txt"],        # files linted as they are (sources, build files)
        shared_objects = [":my_ext.so"],  # ELF objects (typeid-elf)
    )

`tether_lint_aspect` lints the C/C++ sources of any cc_* target (and, along `deps`, of the targets it
depends on in the same workspace) with that target's own include paths, defines and copts: the
lint actions run where the build runs, remote execution included. Each target gets a report; a
`tether_lint_test` fails when any report, or the direct run on `srcs`/`shared_objects`, has
findings. `bazel build --aspects=@tether//lint:defs.bzl%tether_lint_aspect --output_groups=tether_lint
//...` produces the reports without a test. See docs/lint.md.
"""

_C_EXTS = ["c", "h"]
_CXX_EXTS = ["cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "inc"]

TetherLintInfo = provider(
    doc = "tether-lint reports of a target and of the targets it depends on.",
    fields = {"reports": "depset of report files"},
)

def _compilation_context(ctx, target):
    # A cc_binary's own context does not hold its deps' include paths: merge them.
    infos = [target[CcInfo]] + [d[CcInfo] for d in getattr(ctx.rule.attr, "deps", []) if CcInfo in d]
    return cc_common.merge_cc_infos(cc_infos = infos).compilation_context

def _flags(ctx, cc, is_cxx):
    args = ["-xc++", "-std=c++17"] if is_cxx else ["-xc", "-std=c11"]
    args += ["-D" + d for d in cc.defines.to_list()]
    args += ["-D" + d for d in getattr(cc, "local_defines", depset()).to_list()]
    args += ["-D" + d for d in getattr(ctx.rule.attr, "local_defines", [])]
    for i in cc.includes.to_list():
        args += ["-I", i]
    for i in cc.quote_includes.to_list():
        args += ["-iquote", i]
    for i in cc.system_includes.to_list():
        args += ["-isystem", i]
    args += ctx.fragments.cpp.copts
    args += ctx.fragments.cpp.cxxopts if is_cxx else ctx.fragments.cpp.conlyopts
    args += [c for c in getattr(ctx.rule.attr, "copts", []) if "$(" not in c]
    return args

def _aspect_impl(target, ctx):
    deps = getattr(ctx.rule.attr, "deps", [])
    transitive = [d[TetherLintInfo].reports for d in deps if TetherLintInfo in d]
    srcs = []
    if CcInfo in target and not target.label.workspace_root:
        for f in getattr(ctx.rule.files, "srcs", []):
            if f.extension in _C_EXTS + _CXX_EXTS and f.extension not in ["h", "hh", "hpp", "hxx", "inc"]:
                srcs.append(f)
    if not srcs:
        return [TetherLintInfo(reports = depset(transitive = transitive))]

    name = target.label.name.replace("/", "_")
    cc = _compilation_context(ctx, target)
    # The database names the execution root by a placeholder: the action writes the real one, which
    # libclang needs to match files, into a private copy.
    db = ctx.actions.declare_file("%s.tether_lint.compile_commands.json" % name)
    entries = []
    for f in srcs:
        entries.append({
            "directory": "__EXECROOT__",
            "file": f.path,
            "arguments": ["cc"] + _flags(ctx, cc, f.extension in _CXX_EXTS) + ["-c", f.path],
        })
    ctx.actions.write(db, json.encode(entries))

    report = ctx.actions.declare_file("%s.tether_lint.txt" % name)
    lint = ctx.executable._tether_lint
    config = ctx.file._config
    ctx.actions.run_shell(
        inputs = depset(srcs + [db, config], transitive = [cc.headers]),
        tools = [lint],
        outputs = [report],
        command = """
dbdir=$(mktemp -d)
sed "s|__EXECROOT__|$PWD|g" "$3" > "$dbdir/compile_commands.json"
"$1" --no-cache --config "$2" -p "$dbdir" "${@:5}" > "$4" 2>&1
echo "tether-lint exit status: $?" >> "$4"
rm -rf "$dbdir"
""",
        arguments = [lint.path, config.path, db.path, report.path] + [f.path for f in srcs],
        mnemonic = "TetherLint",
        progress_message = "tether-lint %s" % target.label,
    )
    return [
        TetherLintInfo(reports = depset([report], transitive = transitive)),
        OutputGroupInfo(tether_lint = depset([report])),
    ]

tether_lint_aspect = aspect(
    implementation = _aspect_impl,
    attr_aspects = ["deps"],
    fragments = ["cpp"],
    attrs = {
        "_tether_lint": attr.label(
            default = Label("//lint:tether-lint"),
            executable = True,
            cfg = "exec",
        ),
        "_config": attr.label(
            default = Label("//lint:aspect.tether-lint"),
            allow_single_file = True,
        ),
    },
    doc = "Lints the C/C++ sources of cc_* targets with their own compile flags.",
)

def _test_impl(ctx):
    reports = depset(transitive = [t[TetherLintInfo].reports for t in ctx.attr.targets]).to_list()
    lint = ctx.executable._tether_lint
    direct = ctx.files.srcs + ctx.files.shared_objects
    config = ctx.file.config
    lines = [
        "#!/usr/bin/env bash",
        "# Generated by tether_lint_test: fails on any tether-lint finding.",
        "status=0",
    ]
    for r in reports:
        lines += [
            "echo '== %s'" % r.short_path,
            "cat '%s'" % r.short_path,
            "grep -qx 'tether-lint exit status: 0' '%s' || status=1" % r.short_path,
        ]
    if direct:
        cfg = "--config '%s'" % config.short_path if config else "--config /dev/null"
        lines += [
            "echo '== tether-lint %s'" % " ".join([f.short_path for f in direct]),
            "'%s' --no-cache %s %s || status=1" % (lint.short_path, cfg, " ".join(["'%s'" % f.short_path for f in direct])),
        ]
    lines += [
        "if [ $status -eq 0 ]; then echo 'tether_lint_test: 1 passed, 0 failed'; else echo 'tether_lint_test: 0 passed, 1 failed'; fi",
        "exit $status",
    ]
    script = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(script, "\n".join(lines) + "\n", is_executable = True)
    files = reports + direct + ([config] if config else [])
    runfiles = ctx.runfiles(files = files).merge(ctx.attr._tether_lint[DefaultInfo].default_runfiles)
    return [DefaultInfo(executable = script, runfiles = runfiles)]

tether_lint_test = rule(
    implementation = _test_impl,
    test = True,
    attrs = {
        "targets": attr.label_list(
            aspects = [tether_lint_aspect],
            doc = "cc_* targets whose sources (and in-workspace deps' sources) are linted with their own flags",
        ),
        "srcs": attr.label_list(allow_files = True, doc = "files linted as they are"),
        "shared_objects": attr.label_list(allow_files = True, doc = "ELF shared objects (typeid-elf)"),
        "config": attr.label(allow_single_file = True, doc = "a .tether-lint file for srcs and shared_objects"),
        "_tether_lint": attr.label(
            default = Label("//lint:tether-lint"),
            executable = True,
            cfg = "target",
        ),
    },
    doc = "A test that fails when tether-lint reports anything.",
)
