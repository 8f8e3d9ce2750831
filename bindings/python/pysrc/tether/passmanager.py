"""tether.passmanager: run MLIR pass pipelines on tether IR (upstream mlir.passmanager names).

After ``PassManager.run(op)``, objects for IR a pass removed are invalid; the others keep their
identity. ``run`` refuses input that does not verify (MLIR's passes assume valid IR and crash on
IR that does not verify); IR known to verify (parsed or verified, unchanged since) is not verified
again. ``run(op, verify_input=False)`` skips the check for IR the caller has verified itself: on IR
that does not verify, a pass may then crash (the one documented way to crash through tether).

On MLIR 22, as upstream 22: ``enable_timing()``, ``enable_statistics(PassDisplayMode)`` and passes
written in Python, ``PassManager.add(run, name=None, argument="", description="", op_name="")``:
``run(op, pass_)`` gets the operation the pass runs on and an ``ExternalPass`` whose
``signal_pass_failure()`` fails the pass. While it runs, the callable may read and change IR
through tether (objects of IR earlier passes removed are already invalid), except that the
operation it runs on and everything enclosing it cannot be erased or moved, and passes or patterns
cannot run on what encloses it (RuntimeError); what it leaves must verify, or the pass fails with
MLIR's diagnostics before the pipeline goes on. An exception it raises fails the pass and comes out
of ``run()``. A pass manager cannot be changed or run again from one of its passes.
"""

from tether import _tether
from tether._mlir_version import MLIR_VERSION as _MLIR_VERSION

PassManager = _tether.PassManager

__all__ = ["PassManager"]

if _MLIR_VERSION >= 22:
    from tether.ir import _Enum

    class PassDisplayMode(_Enum):
        LIST = 0
        PIPELINE = 1

    ExternalPass = _tether.ExternalPass
    PassManager._set_enums(PassDisplayMode)
    __all__ += ["ExternalPass", "PassDisplayMode"]
