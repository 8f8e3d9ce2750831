"""tether.dialects.transform.interpreter: upstream's ``mlir.dialects.transform.interpreter``.

``apply_named_sequence`` runs MLIR's transform interpreter on a payload and
``copy_symbols_and_merge_into`` merges symbol tables, through tether's arena: like
``PassManager.run``, the input must verify and must not be used by other IR, and afterwards the
objects of IR the transforms removed raise ``InvalidatedError`` while the others keep their
identity. A script held in the payload's own IR runs as a copy (docs/python.md). Failures raise
``TransformInterpreterError``: a ``ValueError`` worded as upstream's, and an ``MLIRError`` with
MLIR's diagnostics.
"""

from ....ir import MLIRError, Operation
from tether._mlir_version import MLIR_VERSION as _MLIR_VERSION
from tether._tether import _transform_interpreter as _cext

TransformOptions = _cext.TransformOptions


class TransformInterpreterError(MLIRError, ValueError):
    """A failure of the transform interpreter or of a symbol merge: ``str()`` is upstream's
    ValueError text ("Failed to apply named transform sequence.\\nDiagnostic message at LOC:
    MESSAGE"); ``message`` and ``error_diagnostics`` as ``MLIRError``'s."""

    def __str__(self):
        return self.message + "\nDiagnostic message " + "".join(
            _describe(d) for d in self.error_diagnostics)


def _describe(d):
    """A diagnostic as upstream's scope collects it: MLIR 22's lists its notes after it, one per
    line, recursively."""
    text = f"at {d.location}: {d.message}"
    if _MLIR_VERSION >= 22:
        for note in d.notes:
            text += "\n" + _describe(note)
    return text


def _unpack_operation(op, what):
    if isinstance(op, Operation):
        return op
    try:
        return op.operation
    except AttributeError:
        raise TypeError(f"{what} must be an Operation, an OpView or a Module, not "
                        f"{type(op).__name__}") from None


def apply_named_sequence(payload_root, transform_root, transform_module, transform_options=None):
    """Applies the transformation script starting at the given transform root
    operation to the given payload operation. The module containing the
    transform root as well as the transform options should be provided.
    The transform operation must implement TransformOpInterface and the module
    must be a ModuleOp."""
    args = (_unpack_operation(payload_root, "payload_root"),
            _unpack_operation(transform_root, "transform_root"),
            _unpack_operation(transform_module, "transform_module"))
    try:
        _cext.apply_named_sequence(*args, transform_options)
    except MLIRError as e:
        raise TransformInterpreterError(e.message, e.error_diagnostics) from None


def copy_symbols_and_merge_into(target, other):
    """Copies symbols from other into target, renaming private symbols to avoid
    duplicates. Raises an error if copying would lead to duplicate public
    symbols."""
    try:
        _cext.copy_symbols_and_merge_into(_unpack_operation(target, "target"),
                                          _unpack_operation(other, "other"))
    except MLIRError as e:
        raise TransformInterpreterError(e.message, e.error_diagnostics) from None


__all__ = ["TransformOptions", "TransformInterpreterError", "apply_named_sequence",
           "copy_symbols_and_merge_into"]
