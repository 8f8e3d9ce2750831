"""For testing tether_lint_aspect itself: the aspect's reports of some targets, as files."""

load("//lint:defs.bzl", "TetherLintInfo", "tether_lint_aspect")

def _impl(ctx):
    reports = depset(transitive = [t[TetherLintInfo].reports for t in ctx.attr.targets])
    return [DefaultInfo(files = reports, runfiles = ctx.runfiles(transitive_files = reports))]

lint_reports = rule(
    implementation = _impl,
    attrs = {"targets": attr.label_list(aspects = [tether_lint_aspect])},
)
