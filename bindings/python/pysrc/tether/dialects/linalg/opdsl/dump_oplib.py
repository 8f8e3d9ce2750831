"""Dumps the ops defined in OpDSL modules or files, as YAML documents (one per op, each
starting with ``---``; needs PyYAML) or as their Python repr.

    python3 -m tether.dialects.linalg.opdsl.dump_oplib [MODULE...] [--file FILE...]
                                                       [--format yaml|repr]

MODULEs are module names, relative to this package when they start with a dot
(``.ops.core_named_ops``). Through the alias, upstream's spelling works unchanged:
``python3 -m tether.run -m mlir.dialects.linalg.opdsl.dump_oplib ...``.
"""

import argparse
import importlib
import importlib.util
import sys

from .lang.config import LinalgOpConfig
from .lang.dsl import DefinedOpCallable
from .lang.yaml_helper import yaml_dump_all


def create_arg_parser():
    p = argparse.ArgumentParser(description="Dump an oplib in various formats")
    p.add_argument("modules", metavar="M", type=str, nargs="*", help="Op module to dump")
    p.add_argument("--file", metavar="F", type=str, nargs="*", help="Python op file to dump")
    p.add_argument("--format", type=str, dest="format", default="yaml", choices=("yaml", "repr"),
                   help="Format in which to dump")
    return p


def load_module_from_file(module_name, file_path):
    spec = importlib.util.spec_from_file_location(module_name, file_path)
    if spec is None:
        raise ValueError(f"{file_path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(args):
    package = __package__ or __name__.rpartition(".")[0]
    modules = [importlib.import_module(m, package=package) for m in args.modules]
    modules += [load_module_from_file(f"_tether_eval_oplib{i}", path)
                for i, path in enumerate(args.file or [])]
    configs = []
    for m in modules:
        for value in list(vars(m).values()):
            if isinstance(value, DefinedOpCallable):
                try:
                    configs += LinalgOpConfig.from_linalg_op_def(value.op_def)
                except Exception as e:
                    raise ValueError(f"Could not create LinalgOpConfig from {value.op_def}") from e
    if args.format == "yaml":
        print(yaml_dump_all(configs))
    else:
        for c in configs:
            print(repr(c))


if __name__ == "__main__":
    main(create_arg_parser().parse_args())
    sys.exit(0)
