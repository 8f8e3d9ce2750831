"""A package folder as a downstream project ships one: tether's package plus extension files."""

def _fixture_package_impl(ctx):
    out = ctx.actions.declare_directory(ctx.attr.name)
    strip = ctx.attr.strip_prefix.rstrip("/") + "/"
    lines = []
    for f in ctx.files.package:
        if not f.short_path.startswith(strip):
            fail("%s is not under %s" % (f.short_path, strip))
        lines.append("%s\t%s" % (f.path, f.short_path[len(strip):]))
    for target, dest in ctx.attr.files.items():
        files = target.files.to_list()
        if len(files) != 1:
            fail("%s: one file expected, got %d" % (target.label, len(files)))
        lines.append("%s\t%s" % (files[0].path, dest))
    manifest = ctx.actions.declare_file(ctx.attr.name + ".manifest")
    ctx.actions.write(manifest, "\n".join(lines) + "\n")
    ctx.actions.run_shell(
        inputs = ctx.files.package + ctx.files.files + [manifest],
        outputs = [out],
        command = 'while IFS="$(printf "\\t")" read -r src dst; do ' +
                  'mkdir -p "$1/$(dirname "$dst")" && cp "$src" "$1/$dst"; done < "$2"',
        arguments = [out.path, manifest.path],
        mnemonic = "FixturePackage",
        progress_message = "Assembling package folder %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

fixture_package = rule(
    implementation = _fixture_package_impl,
    doc = "A folder holding `package` (paths below strip_prefix) and `files` at their destinations.",
    attrs = {
        "package": attr.label_list(allow_files = True),
        "strip_prefix": attr.string(mandatory = True),
        "files": attr.label_keyed_string_dict(allow_files = True, doc = "file -> path in the folder"),
    },
)
