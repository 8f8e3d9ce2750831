"""What gentest's generated modules import: tether's own support module."""

from tether.dialects._ods_common import *  # noqa: F401,F403
from tether.dialects._ods_common import _cext  # noqa: F401
