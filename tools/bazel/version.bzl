"""tether's version: the Python package's (tether.__version__) and its wheel's."""

TETHER_VERSION = "0.3.0"
