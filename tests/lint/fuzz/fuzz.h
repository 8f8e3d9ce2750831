/* The entry point every fuzz target of tether-lint defines (libFuzzer's signature), declared once
 * for the targets and for replay_main.c, which replays a corpus through it as an ordinary test. */
#ifndef TETHER_LINT_FUZZ_H
#define TETHER_LINT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/// Runs one input; returns 0 (libFuzzer's convention). Aborts when a property fails.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
