"""tether.passmanager: run MLIR pass pipelines on tether IR (upstream mlir.passmanager names)."""

from tether import _tether, ir

__all__ = ["PassManager"]


class PassManager(_tether.PassManager):
    """A pass pipeline. After run(op), objects for IR a pass removed are invalid; the others keep
    their identity."""

    def __new__(cls, anchor_op="any", context=None):
        if not isinstance(anchor_op, str):
            raise TypeError("anchor_op must be a str")
        return super().__new__(cls, ir._resolve_context(context), anchor_op)

    def __init__(self, anchor_op="any", context=None):
        pass

    @staticmethod
    def parse(pipeline, context=None):
        if not isinstance(pipeline, str):
            raise TypeError(f"pipeline must be a str, not {type(pipeline).__name__}")
        pm = _tether.PassManager.__new__(PassManager, ir._resolve_context(context), "any")
        pm._parse_into(pipeline)
        return pm

    def run(self, operation):
        _tether._run_passes(self, operation)
