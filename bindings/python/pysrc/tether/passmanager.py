"""tether.passmanager: run MLIR pass pipelines on tether IR (upstream mlir.passmanager names).

After ``PassManager.run(op)``, objects for IR a pass removed are invalid; the others keep their
identity. ``run`` verifies its input first (MLIR's passes assume valid IR and may crash on IR that
does not verify); ``run(op, verify_input=False)`` or ``pm.verify_input = False`` skips that.
"""

from tether import _tether

PassManager = _tether.PassManager

__all__ = ["PassManager"]
