"""tether.passmanager: run MLIR pass pipelines on tether IR (upstream mlir.passmanager names).

After ``PassManager.run(op)``, objects for IR a pass removed are invalid; the others keep their
identity. ``run`` refuses input that does not verify (MLIR's passes assume valid IR and crash on
IR that does not verify); IR known to verify (parsed or verified, unchanged since) is not verified
again. ``run(op, verify_input=False)`` skips the check for IR the caller has verified itself: on IR
that does not verify, a pass may then crash (the one documented way to crash through tether).
"""

from tether import _tether

PassManager = _tether.PassManager

__all__ = ["PassManager"]
