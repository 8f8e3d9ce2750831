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

On MLIR 22, as upstream 22: ``apply_patterns_and_fold_greedily(module | op, set, config=None)``
(``RuntimeError`` when it does not converge), ``walk_and_apply_patterns(op, set)``,
``GreedyRewriteConfig`` with ``GreedyRewriteStrictness`` and ``GreedySimplifyRegionLevel``,
patterns written in Python (``RewritePatternSet(context=None).add(root, fn, benefit=1)``,
``fn(op, rewriter)`` with a ``PatternRewriter``: ``ip``, ``replace_op``, ``erase_op``) and PDL
native functions written in Python (``PDLModule.register_rewrite_function`` /
``register_constraint_function``, ``fn(rewriter, results, values)`` with a ``PDLResultList``).
While Python runs inside MLIR's driver, the IR being rewritten changes structurally only through
the ``PatternRewriter`` (erasing, detaching or moving its operations with tether's own methods,
making other IR use its values, or running passes or patterns on it raise ``RuntimeError``);
operations built at ``rewriter.ip``, attributes and operands change freely. An exception in a
pattern or function stops the set's Python callbacks and comes out of the application. Every
application runs first in a child process (as for PDL patterns), Python callbacks included: their
output there is discarded, but side effects outside the process (files written) happen twice.
"""

from tether._mlir_version import MLIR_VERSION as _MLIR_VERSION
from tether._tether import _rewrite as _cext

PDLModule = _cext.PDLModule
FrozenRewritePatternSet = _cext.FrozenRewritePatternSet
apply_patterns_and_fold_greedily = _cext.apply_patterns_and_fold_greedily

__all__ = ["PDLModule", "FrozenRewritePatternSet", "apply_patterns_and_fold_greedily"]

if _MLIR_VERSION >= 22:
    from tether.ir import _Enum

    class GreedyRewriteStrictness(_Enum):
        ANY_OP = 0
        EXISTING_AND_NEW_OPS = 1
        EXISTING_OPS = 2

    class GreedySimplifyRegionLevel(_Enum):
        DISABLED = 0
        NORMAL = 1
        AGGRESSIVE = 2

    _cext._set_enums(GreedyRewriteStrictness, GreedySimplifyRegionLevel)
    walk_and_apply_patterns = _cext.walk_and_apply_patterns
    GreedyRewriteConfig = _cext.GreedyRewriteConfig
    RewritePatternSet = _cext.RewritePatternSet
    PatternRewriter = _cext.PatternRewriter
    PDLResultList = _cext.PDLResultList
    __all__ += [
        "GreedyRewriteConfig",
        "GreedyRewriteStrictness",
        "GreedySimplifyRegionLevel",
        "PDLResultList",
        "PatternRewriter",
        "RewritePatternSet",
        "walk_and_apply_patterns",
    ]
