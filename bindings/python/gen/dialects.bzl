"""Python op classes for a dialect, generated from its ODS at build time (docs/python.md, "Dialects").

    load("@tether//bindings/python:gen/dialects.bzl", "tether_dialect_library")

    tether_dialect_library(
        name = "arith",
        dialect = "arith",
        td_include = "mlir/Dialect/Arith/IR/ArithOps.td",  # an MLIR .td, or:
        # td = "MyDialect.td", includes = ["my/include/dir"],   # your own
        enums = True,
    )

makes `tether/dialects/_arith_ops_gen.py` (and `_arith_enum_gen.py`) with the mlir-tblgen of the
MLIR tether builds against (`@mlir`, 22 or 19: `-gen-python-op-bindings -bind-dialect=arith`,
`-gen-python-enum-bindings`), so the code is that version's upstream code. The generated code
imports `._ods_common` from its own folder (`tether.dialects._ods_common`, or a module of the same
name in a downstream package: `out_dir`), and `tether.ir`; `_ods_common` serves both versions'
code. Extensions of a dialect (transform's) pass `extension`; the file is then
`_<extension>_ops_gen.py`. `fix_ods_gen.py` corrects what the generators get wrong (19:
equally-sized variadic accessors; 19 and 22: optional results of ops with result segments, the
enum module's `..ir` import), then `ods_builders.py` turns each op class's generated builder into
a spec that runs in C (22; 19's stay Python); //tests/bindings/gen_rule tests the rule.
"""

_TBLGEN = "@mlir//:bin/mlir-tblgen"

# Corrects what the generators emit that cannot work (see the script); tether's own label, also
# when another workspace loads this file.
_FIX = str(Label("//bindings/python:gen/fix_ods_gen.py"))

# Turns each generated builder (`__init__`) into a spec its C builder runs (issue 37).
_BUILDERS = str(Label("//bindings/python:gen/ods_builders.py"))
_PYTHON = "@python//:python3"

def _gen(name, mode, out, dialect, extension, td_include, td, includes, tags, td_srcs = []):
    flags = mode
    if dialect and mode == "-gen-python-op-bindings":
        flags += " -bind-dialect=" + dialect
    if extension and mode == "-gen-python-op-bindings":
        flags += " -dialect-extension=" + extension
    incs = " ".join(["-I " + i for i in ["external/mlir/include"] + includes])
    if td_include:
        # A wrapper of include lines: the tool reads a file; the include path finds MLIR's .td.
        lines = td_include if type(td_include) == type([]) else [td_include]
        src = "$$T"
        prelude = "T=$$(mktemp -d)/wrap.td; " + " ".join(
            ["echo 'include \"%s\"' >> $$T;" % l for l in lines]
        ) + " "
    else:
        src = "$(location %s)" % td
        prelude = ""
    post = " && $(location %s) $(location %s) %s $@" % (
        _PYTHON,
        _FIX,
        "ops" if mode == "-gen-python-op-bindings" else "enums",
    )
    if mode == "-gen-python-op-bindings":
        # Op classes without an instance __dict__ or __weakref__ (as tether.ir.OpView): a wrapper
        # stays a plain, untracked object (half the bytes, and faster to make and free).
        post += " && sed -i 's/^  OPERATION_NAME = \\(.*\\)$$/  OPERATION_NAME = \\1\\n  __slots__ = ()/' $@"
        # Builders run in C (ods_builder.c): each __init__ made of the generator's templates becomes
        # `__init__ = _ods_cext.ods_builder(...)`; any other stays Python.
        post += " && $(location %s) $(location %s) $@" % (_PYTHON, _BUILDERS)
    native.genrule(
        name = name,
        srcs = ["@mlir//:td_files"] + ([td] if td else []) + td_srcs,
        outs = [out],
        cmd = prelude + "$(location %s) %s %s %s -o $@" % (_TBLGEN, flags, incs, src) + post,
        tools = [_TBLGEN, _FIX, _BUILDERS, _PYTHON],
        tags = tags,
    )

def tether_dialect_library(
        name,
        dialect = None,
        td_include = None,
        td = None,
        includes = [],
        enums = False,
        enum_td_include = None,
        extension = None,
        out_dir = "tether/dialects",
        module = None,
        td_srcs = [],
        tags = []):
    """Generates `<out_dir>/_<module>_ops_gen.py` (+ `_<module>_enum_gen.py` with enums).

    Args:
      name: target name; a filegroup of the generated files.
      dialect: the dialect's namespace, as ODS names it (`-bind-dialect`).
      td_include: a .td (or a list) to include from MLIR's installed headers (`mlir/Dialect/...`).
      td: or a .td file label of your own (with `includes` for its include folders).
      includes: extra include folders (relative to the workspace root).
      enums: also generate the enum classes and attribute builders.
      enum_td_include: the .td the enums come from, when not td_include.
      extension: a dialect extension's name (`-dialect-extension`), e.g. transform's.
      out_dir: the package folder the files go in.
      module: file name stem (default: extension, else name).
      td_srcs: the .td files of your own that td includes.
    """
    if not (td_include or td):
        fail("tether_dialect_library: give td_include or td")
    stem = module or extension or name
    outs = []
    ops = "%s/_%s_ops_gen.py" % (out_dir, stem)
    _gen(name + "_ops_gen", "-gen-python-op-bindings", ops, dialect, extension, td_include, td, includes, tags, td_srcs)
    outs.append(ops)
    if enums or enum_td_include:
        en = "%s/_%s_enum_gen.py" % (out_dir, stem)
        _gen(name + "_enum_gen", "-gen-python-enum-bindings", en, None, None, enum_td_include or td_include, None if enum_td_include else td, includes, tags, td_srcs)
        outs.append(en)
    native.filegroup(name = name, srcs = outs, tags = tags)

def _pyc(f, tag):
    folder, name = f.rsplit("/", 1)
    return "%s/__pycache__/%s.%s.pyc" % (folder, name[:-3], tag)

_COMPILE = "\n".join([
    "import py_compile, sys",
    "a = sys.argv[1:]",
    "for src, out in zip(a[0::2], a[1::2]):",
    "    py_compile.compile(src, cfile=out, dfile=src, doraise=True,",
    "                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
])

def tether_py_bytecode(name, srcs, cache_tag):
    """Unchecked-hash .pyc files for srcs (files of this package), in __pycache__ next to them:
    an installed package has them, and a read-only one compiles every module at every import
    without them. cache_tag: the interpreter's (load PY_CACHE_TAG from @python//:defs.bzl);
    None makes an empty placeholder."""
    if not cache_tag:
        native.genrule(name = name, outs = [name + ".none"], cmd = "touch $@")
        return
    native.genrule(
        name = name,
        srcs = srcs,
        outs = [_pyc(f, cache_tag) for f in srcs],
        cmd = "$(location @python//:python3) -c '%s' %s" % (
            _COMPILE,
            " ".join(["$(location %s) $(location %s)" % (f, _pyc(f, cache_tag)) for f in srcs]),
        ),
        tools = ["@python//:python3"],
    )
