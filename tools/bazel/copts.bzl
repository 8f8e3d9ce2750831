"""Compiler flags for the project's own code (never for system or generated code)."""

TETHER_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
]

# POSIX declarations (pthread keys, strdup, ...) under -std=c11.
TETHER_C_DEFINES = ["_POSIX_C_SOURCE=200809L"]
