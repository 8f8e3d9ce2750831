"""Runs a program written for upstream ``mlir`` on tether (``import mlir`` resolves to
``tether``; see tether.alias):

    python3 -m tether.run PROGRAM.py [args...]
    python3 -m tether.run -m MODULE [args...]     (as python3 -m; mlir.X runs tether.X)
"""

import runpy
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    import tether.alias

    tether.alias.install()
    if argv[0] == "-m":
        module = argv[1]
        target = tether.alias._target_name(module) or module
        sys.argv = [module] + list(argv[2:])
        runpy.run_module(target, run_name="__main__", alter_sys=True)
        return 0
    program = argv[0]
    sys.argv = list(argv)
    runpy.run_path(program, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
