"""tether.rewrite: upstream's ``mlir.rewrite``: PDL patterns, applied greedily.

``PDLModule(module)`` takes the ``pdl.pattern`` operations of a Module (MLIR is given a verified
copy: the module stays yours, unchanged, and may be printed, changed or dropped at any time);
``freeze()`` gives the ``FrozenRewritePatternSet``; ``apply_patterns_and_fold_greedily(module,
set)`` applies it to a Module (or the operation of a ``builtin.module``) through tether's arena, as
``PassManager.run`` runs passes: the payload must verify and must not be used by other IR (else
``MLIRError`` / ``ValueError``, nothing runs), and afterwards objects of IR the rewrites removed
raise ``InvalidatedError`` while the others keep their identity. Rewrites MLIR would crash on (an
operation built without the operands or attributes its folder needs) are found in a child
process first and refused with ``MLIRError``. ``ValueError`` "pattern application failed to
converge" as upstream's.
"""

from tether._tether import _rewrite as _cext

PDLModule = _cext.PDLModule
FrozenRewritePatternSet = _cext.FrozenRewritePatternSet
apply_patterns_and_fold_greedily = _cext.apply_patterns_and_fold_greedily

__all__ = ["PDLModule", "FrozenRewritePatternSet", "apply_patterns_and_fold_greedily"]
