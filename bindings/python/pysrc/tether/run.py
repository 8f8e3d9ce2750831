"""python3 -m tether.run PROGRAM.py [args...]: runs a program written for upstream ``mlir`` on
tether (``import mlir`` resolves to ``tether``; see tether.alias)."""

import runpy
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    import tether.alias

    tether.alias.install()
    program = argv[0]
    sys.argv = list(argv)
    runpy.run_path(program, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
