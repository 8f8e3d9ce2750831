"""The OpDSL language: ``from tether.dialects.linalg.opdsl.lang import *`` gives the vocabulary
(``linalg_structured_op``, ``TensorDef``, ``ScalarDef``, ``IndexAttrDef``, the ``*FnAttrDef``s,
``D``, ``S``, ``T``/``U``/``V``/``TV``, ``I32``/``I64``/``F32``/``F64``, ``UnaryFn``,
``BinaryFn``, ``TernaryFn``, ``TypeFn``, ``ReduceFn``, ``const``, ``index``, ``domain``,
``implements``, ``defines``, ...)."""

from .affine import *  # noqa: F401,F403
from .comprehension import *  # noqa: F401,F403
from .config import *  # noqa: F401,F403
from .dsl import *  # noqa: F401,F403
from .emitter import *  # noqa: F401,F403
from .scalar_expr import *  # noqa: F401,F403
from .types import *  # noqa: F401,F403
from .yaml_helper import *  # noqa: F401,F403
