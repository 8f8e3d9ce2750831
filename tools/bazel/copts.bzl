"""Compiler flags for the project's own code (never for system or generated code)."""

TETHER_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
]

# The project's own C code (not C++: gcc knows -Wmissing-prototypes for C only): every function
# that is not static is declared in a header first, so cross-file declarations live in one place.
TETHER_C_COPTS = TETHER_COPTS + ["-Wmissing-prototypes"]

# POSIX declarations (pthread keys, strdup, ...) under -std=c11.
TETHER_C_DEFINES = ["_POSIX_C_SOURCE=200809L"]
