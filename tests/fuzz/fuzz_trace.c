/*
 * fuzz_trace.c - libFuzzer driver for the trace reader (src/workload/ds_trace.c through
 * dataset.c): Mooncake JSON Lines or Azure-style CSV, chosen by the file's first
 * character, behind the caps of docs/limits.md. The whole input is the file;
 * fuzz_dataset.h's checks.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=trace` (see the Makefile).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "fuzz_dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_dataset("trace", CB_SHAREGPT_FIRST_TURN, data, size);
  return 0;
}
