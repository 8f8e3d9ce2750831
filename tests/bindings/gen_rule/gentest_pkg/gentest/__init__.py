"""gentest: the op classes and enums tether_dialect_library generates from GenTest.td (no C++)."""

from ._gentest_enum_gen import *  # noqa: F401,F403
from ._gentest_ops_gen import *  # noqa: F401,F403
